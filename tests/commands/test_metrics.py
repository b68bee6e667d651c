"""``dialeval metrics``: every family as a block that fits the terminal, and --json."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from dialeval.metrics.describe import describe_metrics


def _run(*args: str) -> str:
    env = {**os.environ, "COLUMNS": "80"}
    proc = subprocess.run([sys.executable, "-m", "dialeval", "metrics", *args], capture_output=True, text=True,
                          env=env, timeout=300)  # fmt: skip
    assert proc.returncode == 0 and not proc.stderr, proc.stderr
    return proc.stdout


def _families() -> list[dict[str, object]]:
    """The families a fresh process registers: a test that scored with ``trained:PATH`` in this worker registered
    that model's family in this process, and the ``dialeval metrics`` subprocess rightly does not list it."""
    return [e for e in describe_metrics() if not str(e["name"]).startswith("trained:")]


def test_every_family_is_a_block_that_fits_80_columns() -> None:
    text = _run()
    lines = text.splitlines()
    assert all(len(line) <= 80 and line == line.rstrip() for line in lines), [x for x in lines if len(x) > 80]
    entries = _families()
    for e in entries:  # each family heads its block, and each output is there whole
        assert any(line.startswith(f"{e['name']}: ") for line in lines), e["name"]
        assert all(o in " ".join(text.split()) for o in e["outputs"])
    assert sum(line.startswith("bleu: ") for line in lines) == 1
    assert "bleu: needs references, higher is better" in text
    assert "  parameters: smoothing=method1, tokenizer=nltk-word, lowercase=True" in text


def test_json_is_the_list_of_families() -> None:
    assert json.loads(_run("--json")) == json.loads(json.dumps(_families(), default=str))


def test_names_pick_their_families_and_an_unknown_one_is_refused() -> None:
    """`dialeval metrics bleu4 rouge bleu` shows the blocks of bleu (the family of bleu4) and rouge, once each."""
    text = _run("bleu4", "rouge", "bleu")
    heads = [line.split(":")[0] for line in text.splitlines() if line and not line.startswith(" ")]
    assert heads == ["dialeval metrics (-m FAMILY or OUTPUT; -p FAMILY.KEY=VALUE)", "bleu", "rouge"]
    proc = subprocess.run([sys.executable, "-m", "dialeval", "metrics", "lenght"], capture_output=True, text=True,
                          timeout=300)  # fmt: skip
    assert proc.returncode == 2 and proc.stderr.strip() == 'error: unknown metric "lenght"; did you mean "length"?'


def test_names_split_on_commas_as_minus_m_takes_them() -> None:
    """`dialeval metrics bleu4,rouge1` said: unknown metric "bleu4,rouge1"; did you mean "rouge"?"""
    text = _run("bleu4,rouge1", "length")
    heads = [line.split(":")[0] for line in text.splitlines() if line and not line.startswith(" ")]
    assert heads == ["dialeval metrics (-m FAMILY or OUTPUT; -p FAMILY.KEY=VALUE)", "bleu", "rouge", "length"]
    proc = subprocess.run([sys.executable, "-m", "dialeval", "metrics", "bleu4,,rouge1"], capture_output=True,
                          text=True, timeout=300)  # fmt: skip
    assert proc.returncode == 2
    assert proc.stderr.strip() == 'error: field "NAMES": empty metric name in "bleu4,,rouge1" (name 2 of 3)'
