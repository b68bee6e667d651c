"""The benchmarks' command lines: each one the docs and the scripts' docstrings give parses with that script's options.

Parsing is the script's own ``parser()`` (argparse): every option is one it takes, with a value of its type. Nothing
is timed and nothing runs; the scripts are imported from ``benchmarks/`` as ``python benchmarks/bench_*.py`` runs them.
"""

from __future__ import annotations

import importlib
import json
import os
import re
import shlex
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

REPO = Path(__file__).resolve().parents[1]
BENCHMARKS = REPO / "benchmarks"
#: ``benchmarks/bench_x.py ARGS`` up to a comment, the end of inline code or of a table cell; ``[--opt v]`` is optional.
COMMAND = re.compile(r"benchmarks/(bench_\w+)\.py([^`#|\n]*)")


def command_lines() -> Iterator[tuple[str, str, str]]:
    """Yield ``(file:line, script, arguments)`` for each benchmark command line of the docs and the scripts."""
    for doc in [REPO / "README.md", *sorted((REPO / "docs").glob("*.md")), *sorted(BENCHMARKS.glob("bench_*.py"))]:
        for number, line in enumerate(doc.read_text(encoding="utf-8").splitlines(), 1):
            for match in COMMAND.finditer(line):
                args = match.group(2).replace("[", " ").replace("]", " ").split(". ")[0]
                yield f"{doc.relative_to(REPO)}:{number}", match.group(1), args


def script(name: str) -> ModuleType:
    """Import ``benchmarks/<name>.py`` with ``benchmarks/`` on the path, as running it puts it there."""
    if str(BENCHMARKS) not in sys.path:
        sys.path.insert(0, str(BENCHMARKS))
    return importlib.import_module(name)


def test_the_docs_and_scripts_hold_benchmark_command_lines() -> None:
    found = {name for _, name, _ in command_lines()}
    assert found == {p.stem for p in BENCHMARKS.glob("bench_*.py")}  # every script gives its usage


@pytest.mark.parametrize(("where", "name", "line"), list(command_lines()))
def test_a_documented_benchmark_command_line_parses(where: str, name: str, line: str) -> None:
    """bench_lexical.py's docstring gave ``--repeats 5``, an option it does not take (it has ``--slices``)."""
    try:
        script(name).parser().parse_args(shlex.split(line))
    except SystemExit as exc:
        raise AssertionError(f"{where}: {name}.py {line.strip()} does not parse") from exc


@pytest.mark.parametrize(
    ("name", "args", "message"),
    [
        ("bench_lexical", ["--slices", "0"], "argument --slices: must be at least 1, got 0"),  # ZeroDivisionError
        ("bench_bootstrap", ["--loop", "0"], "argument --loop: must be at least 1, got 0"),  # ZeroDivisionError
        ("bench_ceiling", ["--repeats", "0"], "argument --repeats: must be at least 1, got 0"),  # StatisticsError
        ("bench_agreement", ["--annotators", "2"], "argument --annotators: must be at least 3, got 2"),  # 3 per item
        ("bench_quality", ["--threads", "-1"], "argument --threads: must be at least 0, got -1"),
    ],
)
def test_a_count_out_of_range_is_one_usage_line(name: str, args: list[str], message: str, capsys) -> None:
    """A count of 0 ran the setup, then ended in a traceback (a division by zero, the median of no times)."""
    with pytest.raises(SystemExit) as exc:
        script(name).parser().parse_args(args)
    assert exc.value.code == 2 and message in capsys.readouterr().err


def run_script(name: str, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    """Run ``python benchmarks/<name>.py ARGS`` as the docs do, on this checkout's source."""
    environ = {**os.environ, "PYTHONPATH": str(REPO / "src"), **env}
    return subprocess.run([sys.executable, str(BENCHMARKS / f"{name}.py"), *args], capture_output=True, text=True,
                          env=environ, timeout=300, check=False)  # fmt: skip


def test_bench_bootstrap_refuses_a_loop_longer_than_the_resamples() -> None:
    """``--n-boot 100 --loop 200`` looped over the 100 resamples there are and scaled that time by 100/200: the loop's
    time, and the ratio, came out halved, with nothing said."""
    done = run_script("bench_bootstrap", "--n-boot", "100", "--loop", "200")
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.splitlines()[-1].endswith("error: argument --loop: at most --n-boot (100), got 200")


def test_median_time_leaves_the_first_run_out() -> None:
    """The first call paid one-time costs (scipy.sparse's import: Cohen's kappa's bootstrap took 0.12 s against
    0.004 s after it) and with ``--repeats 1`` it was the figure; now it runs untimed before the timed ones."""
    calls: list[int] = []
    seconds, last = script("timing").median_time(lambda: calls.append(len(calls)) or len(calls), 3)
    assert calls == [0, 1, 2, 3] and last == 4 and seconds >= 0


def test_the_shared_data_comes_from_dialeval_data_and_a_missing_file_is_one_line(tmp_path: Path) -> None:
    """bench_lexical.py read ``../shared/data`` beside the checkout whatever ``$DIALEVAL_DATA`` said (here it ran on
    that folder's corpus); the other scripts asserted "needs ../shared/data", and a missing file was a traceback."""
    done = run_script("bench_lexical", "--n", "20", "--slices", "1", DIALEVAL_DATA=str(tmp_path))
    want = f"error: {tmp_path}/corpora/dailydialog_plusplus/test.json is not there: the benchmark reads"
    assert done.returncode == 1 and done.stderr.startswith(want) and len(done.stderr.splitlines()) == 1


def test_a_dialeval_data_that_is_no_folder_is_one_line(tmp_path: Path) -> None:
    """bench_cache.py ended in dialeval's InputError as a traceback."""
    done = run_script("bench_cache", DIALEVAL_DATA=str(tmp_path / "nowhere"))
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert done.stderr.strip() == f'error: {tmp_path}/nowhere: field "$DIALEVAL_DATA": is not a folder: set ' \
        "$DIALEVAL_DATA to the shared data folder, or unset it to read ../shared/data"


@pytest.mark.parametrize(("args", "message"), [
    (["--protocols", "cpdscore-detial"], "argument --protocols: cpdscore-detial: expected a comma-separated list of"),
    (["--modes", "distribution,samples"], "argument --modes: samples: expected a comma-separated list of distribution"),
])  # fmt: skip
def test_bench_judge_refuses_an_unknown_protocol_or_mode(args: list[str], message: str, capsys) -> None:
    """The first run's process found it, and its error was captured and dropped: a CalledProcessError traceback."""
    with pytest.raises(SystemExit):
        script("bench_judge").parser().parse_args(args)
    assert message in capsys.readouterr().err


def test_a_failed_judge_run_is_one_line_with_its_reason(tmp_path: Path) -> None:
    """A run's process that failed (here: its data) ended the script in a CalledProcessError traceback that named
    the command only; its own error, captured, was never shown. Nothing is written to --out."""
    out = tmp_path / "runs" / "judge.jsonl"
    done = run_script("bench_judge", "--protocols", "cpdscore-detail", "--modes", "distribution", "--out", str(out),
                      DIALEVAL_DATA=str(tmp_path / "nowhere"))  # fmt: skip
    assert done.returncode == 1 and "Traceback" not in done.stderr and not out.exists()
    assert done.stderr.startswith("error: the run of cpdscore-detail in mode distribution failed: ")
    assert f'{tmp_path}/nowhere: field "$DIALEVAL_DATA": is not a folder' in done.stderr


def judge_row(mode: str, machine: str | None) -> dict[str, object]:
    """A row of bench_judge's --out file, as a run writes it (cut to what --summary reads)."""
    corr = {"judge:cpdscore-detail": {"n": 6, "pearson": 0.1, "spearman": 0.2}}
    row = {"protocol": "cpdscore-detail", "mode": mode, "items": 6, "items_per_s": 0.5, "corr": corr,
           "scored": {"judge:cpdscore-detail": 6}, "samples": 6, "parse_failures": 0, "prompt_tokens": None}
    return row if machine is None else {**row, "machine": machine}


def test_bench_judge_summary_names_the_machines_of_its_rows(tmp_path: Path, capsys) -> None:
    """The rows did not say where they ran, and --out appends: runs of two machines were summed up as one."""
    judge = script("bench_judge")
    out = tmp_path / "judge.jsonl"
    out.write_text(json.dumps(judge_row("distribution", None)))  # an earlier row, its line not ended
    judge.append_row(out, json.dumps(judge_row("sample", "x86_64, AuthenticAMD, 2 CPUs, torch threads 2")))
    assert [r["mode"] for r in judge.read_rows(out)] == ["distribution", "sample"]
    judge.summary(out)
    assert capsys.readouterr().out.startswith(
        f"2 runs from {out}; machines: not recorded; x86_64, AuthenticAMD, 2 CPUs, torch threads 2\n")


@pytest.mark.parametrize(("text", "message"), [
    (None, "file not found"),  # FileNotFoundError traceback
    ('{"protocol": "cpdscore-detail", "mo\n', "judge.jsonl:1: not valid JSON"),  # cut short: JSONDecodeError
])  # fmt: skip
def test_bench_judge_summary_of_an_unreadable_file_is_one_line(tmp_path: Path, text: str | None, message: str) -> None:
    out = tmp_path / "judge.jsonl"
    if text is not None:
        out.write_text(text)
    done = run_script("bench_judge", "--summary", str(out))
    assert done.returncode == 1 and "Traceback" not in done.stderr and len(done.stderr.splitlines()) == 1
    assert done.stderr.startswith(f"error: {out}") and message in done.stderr


def test_bench_quality_breaks_down_only_the_encoders_quality_runs() -> None:
    """The shipped ensemble runs the mpnet encoders, not MiniLM, yet "of which MiniLM encoding about 1.24 s" was
    printed as a part of ``quality``'s time (and a missing cross-encoder as "about 0.00 s")."""
    breakdown = script("bench_quality").breakdown
    # 2e10 FLOPs in the median 2.0 s on a 1e11 FLOP/s peak: 10.0%; eager 3.0 s against 2.0 s: 1.50x
    parts = {"MiniLM encoding": ([], [], 10**9), "the larger encoder": ([1.0, 2.0, 9.0], [3.0], 2 * 10**10)}
    assert breakdown(1e11, parts) == "; of which the larger encoder about 2.00 s (10.0% of peak; in torch eager " \
        "3.00 s, 1.50x)"
    assert breakdown(1e11, {"the cross-encoder": ([], [], 0)}) == ""


def test_bench_cache_refuses_an_unknown_metric_in_one_usage_line() -> None:
    """``--metric embeding`` was an UnknownNameError traceback, after the data was read."""
    done = run_script("bench_cache", "--metric", "embeding")
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr.splitlines()[-1] == 'bench_cache.py: error: argument --metric: unknown metric "embeding"; did ' \
        'you mean "embedding"?'


def test_bench_ray_exports_both_files_or_neither(tmp_path: Path) -> None:
    """A failed second write (here candidates.jsonl is a folder; a full disk alike) left the new dialogues.jsonl
    beside the earlier export's candidates, and ended in a WriteError traceback."""
    pytest.importorskip("chitchat_dataset")
    (tmp_path / "dialogues.jsonl").write_text("earlier\n")
    (tmp_path / "candidates.jsonl").mkdir()
    done = run_script("bench_ray", "--export", str(tmp_path))
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert done.stderr.startswith(f"error: {tmp_path}/candidates.jsonl: ")
    assert (tmp_path / "dialogues.jsonl").read_text() == "earlier\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["candidates.jsonl", "dialogues.jsonl"]  # no temporary left


def test_bench_ray_gives_no_steady_rate_where_the_larger_job_was_not_slower() -> None:
    """``--lexical 40`` on a noisy machine: the 40-item job on Ray (2.24 s) beat its 10-item start-up job (2.37 s), and
    the steady rate was (40 - 10) / 1e-9: "30000000000.0" items/s, "17589008.00" times the local engine's."""
    steady_rate = script("bench_ray").steady_rate
    assert steady_rate(40, 2.24, 2.37) is None and steady_rate(40, 2.37, 2.37) is None
    assert steady_rate(1010, 12.0, 2.0) == 100.0  # (1010 - 10) / (12 - 2)
