"""The stress run on USR Topical-Chat against an independent computation from the raw scores."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import ClassVar

import numpy as np
import pytest
from sklearn.metrics import roc_auc_score
from tests.commands.cli_runner import invoke
from typer.testing import CliRunner

from dialeval.cli import app
from dialeval.data.catalog import load_benchmark
from dialeval.metrics.base import Metric, MetricInput, MetricValues
from dialeval.metrics.resolve import resolve_metrics
from dialeval.stress.run import run_stress

runner = CliRunner()


class ShortIsWorse(Metric):
    """Negative word count with lower-is-better: oriented, it ranks exactly like ``length``."""

    name = "neglen_test"
    outputs: ClassVar[tuple[str, ...]] = ("neglen_test",)
    higher_is_better = False

    def compute(self, items: Sequence[MetricInput]) -> MetricValues:
        return {"neglen_test": [-float(len(i.response.split())) for i in items]}


def test_fraction_and_auroc_match_sklearn_from_raw_scores(shared_data: Path) -> None:
    bench = load_benchmark("usr-tc").head(10)
    families, _ = resolve_metrics(["f1", "length"], candidates=bench.candidates)
    perts = ["negation", "truncation", "too-long"]
    metrics = [cls() for cls in (*families, ShortIsWorse)]
    res = run_stress(bench.candidates, bench.dialogues, metrics, perts, seed=0, n_boot=200)
    value = {(s.item_id, s.metric): s.value for s in res.scores}
    rows = {(r.metric, r.perturbation): r for r in res.rows}
    assert set(rows) == {(m, p) for m in ("word_f1", "length", "neglen_test") for p in perts}
    for (metric, pert), row in rows.items():
        sign = -1.0 if metric == "neglen_test" else 1.0
        pairs = [
            (value[(c.id, metric)], value[(f"{c.id}~{pert}", metric)])
            for c in bench.candidates
            if (f"{c.id}~{pert}", metric) in value
        ]
        assert row.n_pairs == len(pairs) == res.applied[pert] == len(bench.candidates) - res.skipped[pert]
        o = sign * np.array([a for a, _ in pairs])
        p = sign * np.array([b for _, b in pairs])
        expected_fraction = (np.sum(o > p) + 0.5 * np.sum(o == p)) / len(pairs)
        assert row.fraction == pytest.approx(expected_fraction)
        y = np.r_[np.ones(len(o)), np.zeros(len(p))]
        assert row.auroc == pytest.approx(roc_auc_score(y, np.r_[o, p]))
        assert row.drop == pytest.approx(np.mean(o - p))
        assert row.ci_low <= row.drop <= row.ci_high
    for pert in perts:  # the lower-is-better family is flipped, so it agrees with length
        assert rows[("neglen_test", pert)].fraction == pytest.approx(rows[("length", pert)].fraction)
        assert rows[("neglen_test", pert)].auroc == pytest.approx(rows[("length", pert)].auroc)
    assert rows[("length", "truncation")].fraction == 1.0  # a cut response is always shorter


def test_cli_writes_jsonl_and_markdown(tmp_path: Path, shared_data: Path) -> None:
    out = tmp_path / "s"
    res = runner.invoke(
        app, ["stress", "-m", "length", "--perturb", "truncation,repetition", "--limit", "3", "-o", str(out), "--json"]
    )
    assert res.exit_code == 0, res.output
    payload = json.loads(res.output)
    lines = [json.loads(x) for x in (out / "stress.jsonl").read_text().splitlines()]
    assert lines == payload["rows"]
    assert {(r["metric"], r["perturbation"]) for r in lines} == {("length", "truncation"), ("length", "repetition")}
    assert "| length |" in (out / "stress.md").read_text()
    # the screen's lines: each perturbation's count (usr-tc's first 3 contexts, 6 responses each, every one cut and
    # repeated); 1,000 resamples: no rough-CI warning (the screen prints none either)
    assert payload["notes"] == ["truncation: 18 perturbed", "repetition: 18 perturbed"]
    res = runner.invoke(app, ["stress", "-m", "length", "--perturb", "truncation", "--limit", "3", "--boot", "10",
                              "-o", str(tmp_path / "r"), "--json"])  # fmt: skip
    assert res.exit_code == 0, res.output  # the screen's warning line, which --json dropped
    assert json.loads(res.output)["notes"] == ["truncation: 18 perturbed", "warning: the CIs are rough: 10 resamples "
                                               "only, too few for 95% (40 at least)"]  # fmt: skip


def test_cli_unknown_perturbation_names_the_option(tmp_path: Path) -> None:
    res = runner.invoke(app, ["stress", "--perturb", "negation,shuffle", "-o", str(tmp_path)])
    assert res.exit_code == 2
    assert "--perturb" in res.output and "shuffle" in res.output


#: Runs ``dialeval stress`` in its own process with ``cache_job.SlowOverlap`` registered as a metric; the metric
#: logs every response it computes to $STRESS_LOG, and sleeps $STRESS_DELAY seconds per batch.
STRESS_DRIVER = """
import importlib.util, os, sys, time
spec = importlib.util.spec_from_file_location("cache_job", sys.argv[1])
job = importlib.util.module_from_spec(spec)
spec.loader.exec_module(job)
from dialeval.metrics.base import register_metric

class LoggedOverlap(job.SlowOverlap):
    delay = float(os.environ["STRESS_DELAY"])
    def compute(self, items):
        out = super().compute(items)
        with open(os.environ["STRESS_LOG"], "a") as fh:
            fh.write("".join(i.response.replace("\\n", " ") + "\\n" for i in items))
        return out

register_metric(LoggedOverlap)
from dialeval.cli import app
sys.argv = ["dialeval", *sys.argv[2:]]
app()
"""


def test_killed_stress_run_resumes_from_its_cache(tmp_path: Path, shared_data: Path) -> None:
    """`dialeval stress` killed halfway: the rerun computes only the unfinished items and writes the same table."""
    import os
    import signal
    import subprocess
    import sys
    import time

    from tests.test_cache import rows, rows_so_far

    root = Path(__file__).resolve().parents[2]
    script = tmp_path / "driver.py"
    script.write_text(STRESS_DRIVER)
    cache, log = tmp_path / "stress.sqlite", tmp_path / "computed.txt"
    args = ["stress", "-b", "usr-tc", "--limit", "5", "-m", "slow_overlap", "--perturb", "negation,truncation",
            "--boot", "50", "--subsets", "none", "--json"]  # fmt: skip

    def run(extra: list[str], delay: float, out: str) -> subprocess.Popen[str]:
        env = {**os.environ, "STRESS_DELAY": str(delay), "STRESS_LOG": str(log)}
        cmd = [sys.executable, str(script), str(root / "tests" / "cache_job.py"), *args, "-o", str(tmp_path / out)]
        return subprocess.Popen([*cmd, *extra], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    proc = run(["--cache", str(cache)], 0.3, "killed")
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and rows_so_far(cache) < 16:
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert proc.returncode == -signal.SIGKILL
    saved = rows(cache)
    assert not (tmp_path / "killed" / "stress.jsonl").exists()  # nothing written by the killed run
    log.unlink()
    resumed = run(["--cache", str(cache)], 0.0, "resumed")
    assert resumed.wait(timeout=300) == 0, resumed.stderr.read() if resumed.stderr else ""
    total = rows(cache)
    assert 16 <= saved < total  # killed halfway, after some batches were committed
    assert len(log.read_text().splitlines()) == total - saved  # only the unfinished items were computed
    log.unlink()
    fresh = run(["--no-cache"], 0.0, "fresh")
    assert fresh.wait(timeout=300) == 0, fresh.stderr.read() if fresh.stderr else ""
    assert len(log.read_text().splitlines()) == total  # (a fresh run computes every distinct item)
    got = (tmp_path / "resumed" / "stress.jsonl").read_text()
    assert got == (tmp_path / "fresh" / "stress.jsonl").read_text()
    assert json.loads((tmp_path / "resumed" / "run.json").read_text())["metrics"]["slow_overlap"]["signature"]


def test_the_drop_ci_needs_two_contexts() -> None:
    """Pairs from one context: the bootstrap drew that context every time and printed "0.018 [0.018, 0.018]", a
    zero-width interval (seen on a 4-row table where negation applied to one response)."""
    from dialeval.stress.run import compare

    one = compare([0.9, 0.7], [0.5, 0.6], ["c", "c"], n_boot=100)
    assert one["drop"] == pytest.approx(0.25) and np.isnan(one["ci_low"]) and np.isnan(one["ci_high"])
    two = compare([0.9, 0.7], [0.5, 0.6], ["c", "d"], n_boot=100)
    assert two["ci_low"] == pytest.approx(0.1) and two["ci_high"] == pytest.approx(0.4)  # each context's drop


def test_a_subset_tag_named_all_keeps_one_row_per_metric_and_perturbation() -> None:
    """Items tagged subset "all" (--subsets tags): the rows over every item were written twice to stress.jsonl and
    the subset "all" had no row of its own."""
    from dialeval.schema import Candidate, Dialogue, Turn

    dialogues = {d: Dialogue(id=d, turns=[Turn(speaker="A", text="Do you like music?")]) for d in "abc"}
    texts = {"a": "i like it a lot", "b": "we went to see a great band", "c": "it is so much fun to hear"}
    cands = [Candidate(id=f"{d}:s", dialogue_id=d, turn_index=1, system="s", text=texts[d],
                       tags={"subset": "x" if d == "b" else "all"}) for d in "abc"]  # fmt: skip
    families, _ = resolve_metrics(["length"])
    res = run_stress(cands, dialogues, [cls() for cls in families], ["truncation"], seed=0, n_boot=20)
    assert [(r.subset, r.n_pairs) for r in res.rows] == [("all", 3)]  # every item is truncated (4 words or more)
    assert sorted((r.subset, r.n_pairs) for r in res.subset_rows) == [("all", 2), ("x", 1)]


def test_pairs_a_metric_gives_no_value_are_said_to_be_left_out(tmp_path: Path) -> None:
    """ROUGE gives no value to a response in Cyrillic (rouge-score keeps ASCII letters and digits): its pairs were
    dropped from the rouge rows with no word (speaker-swap "3 perturbed" over 2 pairs; a cell of 0 pairs read n/a),
    and stress.md said nothing of the perturbations that applied to no response (negation: every cell n/a)."""
    data = tmp_path / "rows.csv"
    data.write_text("context,response,reference\nDo you like live music?,we saw a great band,a great band\n"
                    "What did you hear?,это хорошая группа,a great band\n"
                    "How was the concert?,and so we went home,a great band\n")  # fmt: skip
    out = tmp_path / "out"
    res = invoke("stress", "--path", data, "--response-col", "response", "--context-col", "context",
                 "--reference-col", "reference", "-m", "rouge", "--perturb", "negation,speaker-swap,too-long",
                 "--subsets", "none", "--n-boot", "0", "-o", out, "--no-cache")  # fmt: skip
    assert res.exit_code == 0, res.output
    rows = {(r["metric"], r["perturbation"]): r for r in map(json.loads, (out / "stress.jsonl").open())}
    # the Cyrillic response and its speaker-swapped copy have no value; its too-long copy gains English filler
    assert rows[("rouge1", "speaker-swap")]["n_pairs"] == rows[("rouge1", "too-long")]["n_pairs"] == 2
    note = ("note: rouge1, rouge2, rougeL: no value for some responses (no token in the response (rouge-score keeps "
            "ASCII letters and digits)), so their pairs are left out: speaker-swap 1 of 3, too-long 1 of 3")
    md = (out / "stress.md").read_text()
    assert note in " ".join(res.output.split()) and note in md
    assert "negation: 0 perturbed, 3 not applicable (left out)" in md  # no response has a verb to negate


class NothingToRead(Metric):
    """Gives no value to any item, and says why (``lacks``): every pair of its rows is left out."""

    name = "nothing_test"
    outputs: ClassVar[tuple[str, ...]] = ("nothing_test",)

    def compute(self, items: Sequence[MetricInput]) -> MetricValues:
        return {"nothing_test": [None for _ in items]}

    def lacks(self, output: str, item: MetricInput) -> str | None:
        return "nothing to read"


def test_a_cell_without_pairs_says_why() -> None:
    """A subset whose responses a perturbation applied to none of had n/a cells in stress.md with no reason, and so
    had the rows of a metric that gave no value; each such row now has a ``note`` and stress.md says it."""
    from dialeval.schema import Candidate, Dialogue, Turn
    from dialeval.stress.cli import to_markdown

    texts = {"a": "yes indeed", "b": "no way", "c": "we went to see a great band", "d": "it is so much fun to hear"}
    dialogues = {d: Dialogue(id=d, turns=[Turn(speaker="A", text="Do you like music?")]) for d in texts}
    cands = [Candidate(id=f"{d}:s", dialogue_id=d, turn_index=1, system="s", text=text,
                       tags={"subset": "short" if d in "ab" else "long"}) for d, text in texts.items()]  # fmt: skip
    families, _ = resolve_metrics(["length"])
    res = run_stress(cands, dialogues, [families[0](), NothingToRead()], ["truncation"], seed=0, n_boot=20)
    # truncation needs 4 words: it cuts c and d (2 pairs), not a and b (the subset "short")
    no_value = "nothing_test gave no value to the original or the perturbed response of each of the 2 pairs"
    assert [(r.metric, r.n_pairs, r.note) for r in res.rows] == [
        ("length", 2, ""), ("nothing_test", 0, f"{no_value} (nothing to read)")]  # fmt: skip
    none_applied = "truncation applied to none of the 2 responses"
    assert sorted((r.subset, r.metric, r.n_pairs, r.note) for r in res.subset_rows) == [
        ("long", "length", 2, ""), ("long", "nothing_test", 0, f"{no_value} (nothing to read)"),
        ("short", "length", 0, none_applied), ("short", "nothing_test", 0, none_applied)]  # fmt: skip
    md = to_markdown(res, "t")
    short = md.split("## Subset short")[1]
    assert f"n/a: length, nothing_test (truncation): {none_applied}" in short
    assert f"n/a: nothing_test (truncation): {no_value} (nothing to read)" in md.split("## Subset")[0]
    assert res.subset_rows[0].as_dict()["note"] == res.subset_rows[0].note  # stress_subsets.jsonl has it


def test_a_candidate_id_given_twice_or_an_unknown_dialogue_is_refused() -> None:
    """Two candidates with one id (the Python entry point; the CLI's loader refuses them): the scores of the second
    were read for both, and negation, perturbing one response of two, gave "2 pairs" (the second compared with the
    first's copy); a candidate of an unknown dialogue was a bare KeyError."""
    from dialeval.errors import InputError
    from dialeval.schema import Candidate, Dialogue, Turn

    dialogues = {d: Dialogue(id=d, turns=[Turn(speaker="A", text="Do you like music?")]) for d in "xy"}
    texts = {"x": "one two three four five six", "y": "it is fun"}
    twice = [Candidate(id="a", dialogue_id=d, turn_index=1, system="s", text=texts[d]) for d in "xy"]
    families, _ = resolve_metrics(["length"])
    with pytest.raises(InputError, match='field "id": candidate id "a" is given twice'):
        run_stress(twice, dialogues, [cls() for cls in families], ["negation"], n_boot=0)
    lost = [Candidate(id="a", dialogue_id="z", turn_index=1, system="s", text="it is fun")]
    with pytest.raises(InputError, match='field "dialogue_id": candidate "a" names unknown dialogue "z"'):
        run_stress(lost, dialogues, [cls() for cls in families], ["negation"], n_boot=0)


def test_a_run_without_resamples_does_not_blame_the_contexts() -> None:
    """--n-boot 0 over 2 contexts printed "-1.000 [no CI: 2 contexts]" in stress.md and ranking.md, as if 2 contexts
    were too few; the CI is missing because no resample was drawn (one context alone still says so)."""
    from dialeval.stress.run import ci_text

    nan = float("nan")
    assert ci_text(-1.0, nan, nan, 2) == "-1.000 [no CI: no resamples]"
    assert ci_text(0.018, nan, nan, 1) == "0.018 [no CI: 1 context]"
