"""DailyDialog++: the loader against the raw JSON lines, and the ranking fractions against a hand computation."""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from tests.commands.cli_runner import invoke, refused
from typer.testing import CliRunner

from dialeval.cli import app
from dialeval.data.dailydialog_pp import load_dailydialog_pp
from dialeval.metrics.resolve import resolve_metrics
from dialeval.schema import Candidate
from dialeval.stress.ranking import hold_out_references, rank_fractions, run_ranking

runner = CliRunner()
KEYS = {
    "good": "positive_responses",
    "adversarial": "adversarial_negative_responses",
    "random": "random_negative_responses",
}


def _raw(shared_data: Path, split: str) -> list[dict[str, Any]]:
    path = shared_data / "corpora" / "dailydialog_plusplus" / f"{split}.json"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


@pytest.mark.parametrize("split", ["test", "dev"])
def test_loader_counts_match_the_raw_json(shared_data: Path, split: str) -> None:
    raw = _raw(shared_data, split)
    bench = load_dailydialog_pp(shared_data / "corpora" / "dailydialog_plusplus", split)
    assert len(bench.dialogues) == len(raw) == len({r["id"] for r in raw})
    for label, key in KEYS.items():
        expected = sum(1 for r in raw for t in r[key] if t.strip())
        assert sum(1 for c in bench.candidates if c.tags["label"] == label and c.system == label) == expected
    assert len(bench.candidates) == sum(len(r[k]) for r in raw for k in KEYS.values())
    assert sum(len(d.turns) for d in bench.dialogues.values()) == sum(len(r["context"]) for r in raw)
    assert len({c.id for c in bench.candidates}) == len(bench.candidates)
    overlapping = sum(
        1
        for r in raw
        if set(map(str.strip, r[KEYS["good"]])) & set(map(str.strip, r[KEYS["adversarial"]] + r[KEYS["random"]]))
    )
    assert (overlapping > 0) == bool(bench.warnings) and (
        not overlapping or f" {overlapping} context" in bench.warnings[0]
    )
    # one record in full: context turns in order, the response after them, spoken by B
    rec = raw[len(raw) // 2]
    d = bench.dialogues[f"ddpp-{split}-{rec['id']}"]
    assert [t.text for t in d.turns] == [t.strip() for t in rec["context"]]
    assert d.turns[-1].speaker == "A" and all(
        a.speaker != b.speaker for a, b in zip(d.turns, d.turns[1:], strict=False)
    )
    mine = [c for c in bench.candidates if c.dialogue_id == d.id]
    for label, key in KEYS.items():
        got = sorted((int(c.tags["index"]), c.text) for c in mine if c.tags["label"] == label)
        assert got == [(k, t.strip()) for k, t in enumerate(rec[key])]
    assert all(c.turn_index == len(d.turns) and c.references == [] for c in mine)


def test_hold_out_references(shared_data: Path) -> None:
    bench = load_dailydialog_pp(shared_data / "corpora" / "dailydialog_plusplus" / "test.json").head(30)
    raw = {f"ddpp-test-{r['id']}": r for r in _raw(shared_data, "test")}
    for n_refs in (0, 1, 2):
        held = hold_out_references(bench.candidates, n_refs)
        assert len(held) == len(bench.candidates) - n_refs * len(bench.dialogues)
        ranked_goods: dict[str, list[str]] = {}
        for c in held:
            goods = [t.strip() for t in raw[c.dialogue_id]["positive_responses"]]
            assert c.references == goods[:n_refs]
            if c.tags["label"] == "good":
                ranked_goods.setdefault(c.dialogue_id, []).append(c.text)
        assert all(
            texts == [t.strip() for t in raw[d]["positive_responses"]][n_refs:] for d, texts in ranked_goods.items()
        )


def _hand_fraction(cands: list[Candidate], value: dict[str, float], neg: str) -> tuple[float, int]:
    wins, n = 0.0, 0
    for ctx in {c.context_id for c in cands}:
        goods = [value[c.id] for c in cands if c.context_id == ctx and c.tags["label"] == "good"]
        bads = [value[c.id] for c in cands if c.context_id == ctx and c.tags["label"] == neg]
        for g in goods:
            for b in bads:
                wins += 0.5 if math.isclose(g, b, rel_tol=1e-6, abs_tol=1e-6) else 1.0 if g > b else 0.0
                n += 1
    return wins / n, n


def test_fractions_match_a_hand_computation_on_real_contexts(shared_data: Path) -> None:
    bench = load_dailydialog_pp(shared_data / "corpora" / "dailydialog_plusplus" / "test.json").head(4)
    cands = hold_out_references(bench.candidates, 1)
    families, _ = resolve_metrics(["length", "f1"])
    res = run_ranking(cands, bench.dialogues, [cls() for cls in families], n_boot=200)
    rows = {(r.metric, r.negatives): r for r in res.rows}
    assert set(rows) == {(m, n) for m in ("length", "word_f1") for n in ("adversarial", "random")}
    length = {c.id: float(len(c.text.split())) for c in cands}  # the hand computation of the `length` metric
    assert {s.item_id: s.value for s in res.scores if s.metric == "length"} == length
    word_f1 = {s.item_id: s.value for s in res.scores if s.metric == "word_f1"}
    for neg in ("adversarial", "random"):
        for metric, value in (("length", length), ("word_f1", word_f1)):
            expected, n = _hand_fraction(cands, value, neg)  # type: ignore[arg-type]
            row = rows[(metric, neg)]
            assert row.fraction == pytest.approx(expected) and row.n_pairs == n == 4 * 4 * 5
            assert row.n_contexts == 4 and row.ci_low <= row.fraction <= row.ci_high


def test_ties_count_half_and_lower_is_better_flips() -> None:
    def cand(ctx: str, label: str, k: int) -> Candidate:
        return Candidate(id=f"{ctx}:{label}{k}", dialogue_id=ctx, turn_index=1, system=label, text="x",
                         tags={"label": label, "index": str(k)})  # fmt: skip

    cands = [cand(x, lab, k) for x in "pq" for lab in ("good", "adversarial", "random") for k in range(2)]
    v = {"p:good0": 3.0, "p:good1": 1.0, "p:adversarial0": 1.0, "p:adversarial1": 0.0, "p:random0": 5.0,
         "p:random1": 3.0, "q:good0": 2.0, "q:good1": None, "q:adversarial0": 2.0, "q:adversarial1": 9.0,
         "q:random0": 0.0, "q:random1": 0.0}  # fmt: skip
    r = rank_fractions(v, cands, n_boot=100)
    # p adversarial: 3>1, 3>0, 1=1, 1>0 -> 3.5 of 4; q adversarial (good1 unscored): 2=2, 2<9 -> 0.5 of 2
    assert r["adversarial"]["fraction"] == pytest.approx(4.0 / 6) and r["adversarial"]["n_pairs"] == 6
    # p random: 3<5, 3=3, 1<5, 1<3 -> 0.5 of 4; q random: 2>0, 2>0 -> 2 of 2
    assert r["random"]["fraction"] == pytest.approx(2.5 / 6)
    flipped = rank_fractions(v, cands, higher_is_better=False, n_boot=100)
    assert flipped["adversarial"]["fraction"] == pytest.approx(1 - 4.0 / 6)
    # the bootstrap resamples contexts: its CI spans the two per-context ratios
    assert r["adversarial"]["ci_low"] >= 0.25 - 1e-9 and r["adversarial"]["ci_high"] <= 3.5 / 4 + 1e-9


def test_cli_ranking_and_reference_metrics(tmp_path: Path, shared_data: Path) -> None:
    res = runner.invoke(app, ["stress", "-b", "dailydialog++", "-m", "length,f1", "--limit", "5", "--refs", "0",
                              "-o", str(tmp_path / "a"), "--json"])  # fmt: skip
    assert res.exit_code == 0, res.output
    payload = json.loads(res.output)
    assert {r["metric"] for r in payload["rows"]} == {"length"}
    assert "f1" in payload["run"]["skipped_metrics"] and "references" in payload["run"]["skipped_metrics"]["f1"]
    assert payload["run"]["ranked"] == {"good": 25, "adversarial": 25, "random": 25}
    lines = [json.loads(x) for x in (tmp_path / "a" / "ranking.jsonl").read_text().splitlines()]
    assert lines == payload["rows"] and all(r["n_pairs"] == 5 * 5 * 5 for r in lines)
    assert "Skipped f1" in (tmp_path / "a" / "ranking.md").read_text()
    assert any(n.startswith("skipped f1: ") for n in payload["notes"])  # the screen's line, --json dropped it
    res = runner.invoke(app, ["stress", "-b", "dailydialog++", "-m", "f1", "--limit", "5", "-o", str(tmp_path / "b"),
                              "--json"])  # fmt: skip
    assert res.exit_code == 0, res.output
    rows = json.loads(res.output)["rows"]
    assert {r["metric"] for r in rows} == {"word_f1"} and all(r["n_pairs"] == 5 * 4 * 5 for r in rows)
    res = runner.invoke(app, ["stress", "-b", "dailydialog++", "-m", "length", "--limit", "5", "--n-boot", "20",
                              "-o", str(tmp_path / "r")])  # fmt: skip
    assert res.exit_code == 0, res.output  # 20 resamples: flagged on screen and in ranking.md (they were not)
    rough = "warning: the CIs are rough: 20 resamples only, too few for 95% (40 at least)"
    assert rough in res.output and rough in (tmp_path / "r" / "ranking.md").read_text()
    bad = runner.invoke(app, ["stress", "-b", "dailydialog++", "--perturb", "negation", "-o", str(tmp_path / "c")])
    assert bad.exit_code == 2 and "--perturb" in bad.output


def test_the_ranking_ci_needs_two_contexts() -> None:
    """One context (--limit 1) printed "0.125 [0.125, 0.125]": the bootstrap drew that context every time."""

    def cand(context: str, label: str, k: int) -> Candidate:
        return Candidate(id=f"{context}:{label}{k}", dialogue_id=context, turn_index=0, system="s", text="t",
                         tags={"label": label})  # fmt: skip

    items = [cand(c, label, k) for c in ("c1", "c2") for label in ("good", "adversarial", "random") for k in (0, 1)]
    values = {c.id: (1.0 if c.tags["label"] == "good" else 0.5 if c.id.startswith("c1") else 2.0) for c in items}
    one = rank_fractions(values, [c for c in items if c.dialogue_id == "c1"], n_boot=100)["adversarial"]
    assert one["fraction"] == 1.0 and math.isnan(one["ci_low"]) and math.isnan(one["ci_high"])
    two = rank_fractions(values, items, n_boot=100)["adversarial"]  # c1: good wins every pair, c2: none
    assert two["fraction"] == 0.5 and (two["ci_low"], two["ci_high"]) == (0.0, 1.0)


def test_a_failed_ranking_write_is_one_line_and_keeps_the_earlier_run(
    tmp_path: Path, shared_data: Path, full_disk_at: Callable[[str], None]
) -> None:
    """ranking.md on a full disk was a traceback, leaving this run's ranking.jsonl beside the earlier run's
    ranking.md and run.json: the three files are now written all or none."""
    out = tmp_path / "out"
    args = ("stress", "-b", "dailydialog++", "-m", "length", "--limit", "3", "--n-boot", "0", "-o", out, "--no-cache")
    assert invoke(*args).exit_code == 0
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    assert sorted(before) == ["ranking.jsonl", "ranking.md", "run.json"]
    full_disk_at("ranking.md.")
    refused(invoke(*args[:6], "4", *args[7:]), "ranking.md: cannot be written: No space left on device")
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before
