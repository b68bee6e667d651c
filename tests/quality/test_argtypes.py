"""The research commands' numeric options: a value their run cannot use is argparse's one usage line, before any work.

Before these types, ``--steps 0`` ended in a FileNotFoundError after the data was drawn, ``--layers 0``
trained an encoder with no layer, ``--per-system -1`` dropped each bot's last dialogue, ``--threads 0``
and ``--per-source 0`` were tracebacks, and ``--per-conversation 0`` blamed ``limit``.
"""

from __future__ import annotations

import importlib
import os

import pytest

from dialeval.quality.argtypes import count, positive, share


@pytest.mark.parametrize(("module", "args", "message"), [
    ("crosstrain", ["RUN", "--steps", "0"], "argument --steps: must be at least 1, got 0"),
    ("crosstrain", ["RUN", "--layers", "0"], "argument --layers: must be at least 1, got 0"),
    ("crosstrain", ["RUN", "--lr", "nan"], "argument --lr: must be a finite number above 0, got nan"),
    ("crosstrain", ["RUN", "--threads", "0"], "argument --threads: must be at least 1, got 0"),
    ("crosstrain", ["RUN", "--seed", "-1"], "argument --seed: must be at least 0, got -1"),
    ("bitrain", ["RUN", "--weight", "2"], "argument --weight: must be above 0 and at most 1, got 2"),
    ("bitrain", ["RUN", "--minutes", "0"], "argument --minutes: must be a finite number above 0, got 0"),
    ("bitrain", ["RUN", "--batch-size", "x"], "argument --batch-size: not an integer: 'x'"),
    ("engagement", ["RUN", "--per-conversation", "0"], "argument --per-conversation: must be at least 1, got 0"),
    ("humanlike", ["RUN", "--per-source", "0"], "argument --per-source: must be at least 1, got 0"),
    ("measure", ["dialogue", "--per-system", "-1"], "argument --per-system: must be at least 1, got -1"),
    ("measure", ["stress", "--contexts", "0"], "argument --contexts: must be at least 1, got 0"),
    ("experiment", ["VIEWS", "--n-boot", "0"], "argument --n-boot: must be at least 1, got 0"),
    # each was a traceback: torch's set_num_threads and manual_seed overflowed, numpy's bootstrap exceeded a dimension
    ("crosstrain", ["RUN", "--threads", str(10**20)],
     f"argument --threads: must be at most {os.cpu_count():,} (this machine's cores), got {10**20:,}"),
    ("bitrain", ["RUN", "--seed", str(2**64)],
     "argument --seed: must be at most 4,294,967,295 (seeds are 32-bit), got 18,446,744,073,709,551,616"),
    ("experiment", ["VIEWS", "--n-boot", "100001"],
     "argument --n-boot: must be at most 100,000 (the resamples are held at once), got 100,001"),
])  # fmt: skip
def test_a_number_the_run_cannot_use_is_one_usage_error_naming_its_option(tmp_path, capsys, module, args, message):
    args = [str(tmp_path / "run") if a in {"RUN", "VIEWS"} else a for a in args]
    with pytest.raises(SystemExit) as exc:
        importlib.import_module(f"dialeval.quality.{module}").main(args, "prog")
    assert exc.value.code == 2
    assert capsys.readouterr().err.strip().splitlines()[-1] == f"prog: error: {message}"
    assert not (tmp_path / "run").exists()


def test_the_types_accept_what_the_runs_take():
    assert count(1)("4000") == 4000 and count(0)("0") == 0
    assert positive("8.5") == 8.5 and positive("5e-4") == 5e-4
    assert share("1") == 1.0 and share("0.5") == 0.5
