"""Open/closed-ended subsets: the tagging rule, per-subset stress rows from raw scores, and the grey-scale figure."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from dialeval.cli import app
from dialeval.data.benchmark import Benchmark
from dialeval.data.usr import load_usr_topical_chat
from dialeval.errors import InputError
from dialeval.metrics.resolve import resolve_metrics
from dialeval.stress.run import run_stress
from dialeval.stress.subsets import CLOSED, OPEN, question_subset, tag_subsets

runner = CliRunner()


@pytest.fixture(scope="module")
def bench(shared_data: Path) -> Benchmark:
    return load_usr_topical_chat(shared_data / "usr" / "usr_topical_chat.json")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("do you listen to jazz very often ?", CLOSED),  # yes/no
        ("Who directed it?", CLOSED),  # factual wh-
        ("i read that . how many gallons was it ?", CLOSED),
        ("you like jazz?", CLOSED),  # declarative question
        ("what do you think of tokyo ?", OPEN),  # DialogADV's open-ended example
        ("i love soccer , what about you ?", OPEN),  # reciprocal
        ("why would they do that ?", OPEN),
        ("what is your favorite nfl team ?", OPEN),
        ("i went to a concert yesterday .", OPEN),  # no question
        ("is it far? anyway, i went there. so , how do you feel about it ?", OPEN),  # the last question counts
        ("how do you feel about it ? is it far ?", CLOSED),
    ],
)
def test_rule(text: str, expected: str) -> None:
    assert question_subset(text) == expected


def test_tagging_usr_tc_by_the_last_context_turn(bench: Benchmark) -> None:
    tagged = tag_subsets(bench.candidates, bench.dialogues, "rule")
    assert [c.id for c in tagged] == [c.id for c in bench.candidates]
    per_context: dict[str, set[str]] = {}
    for c, orig in zip(tagged, bench.candidates, strict=True):
        assert c.tags["subset"] in (CLOSED, OPEN)
        assert {k: v for k, v in c.tags.items() if k != "subset"} == orig.tags  # other tags kept
        per_context.setdefault(c.context_id, set()).add(c.tags["subset"])
        last = bench.dialogues[c.dialogue_id].context(c.turn_index)[-1].text
        if "?" not in last:
            assert c.tags["subset"] == OPEN
        if re.search(r"(?:^|[.!?]\s*)(?:do|did|does|is|are|have) you\b[^.!?]*\?\s*$", last):
            assert c.tags["subset"] == CLOSED, last
    assert all(len(v) == 1 for v in per_context.values())  # the six systems of a context share it
    counts = {s: sum(1 for v in per_context.values() if s in v) for s in (CLOSED, OPEN)}
    assert counts[CLOSED] >= 10 and counts[OPEN] >= 10
    assert all("subset" not in c.tags for c in tag_subsets(tagged, bench.dialogues, "none"))
    assert tag_subsets(tagged, bench.dialogues, "tags") == tagged


def test_subset_rows_match_raw_scores(bench: Benchmark) -> None:
    sub = bench.head(20)
    tagged = tag_subsets(sub.candidates, sub.dialogues, "rule")
    families, _ = resolve_metrics(["f1"])
    perts = ["negation", "truncation", "speaker-swap"]
    res = run_stress(tagged, sub.dialogues, [cls() for cls in families], perts, n_boot=100)
    value = {(s.item_id, s.metric): s.value for s in res.scores}
    subset_of = {c.id: c.tags["subset"] for c in tagged}
    assert {r.subset for r in res.rows} == {"all"}
    assert {r.subset for r in res.subset_rows} == set(subset_of.values())
    for r in res.subset_rows:
        pairs = [
            (value[(cid, r.metric)], value[(f"{cid}~{r.perturbation}", r.metric)])
            for cid, s in subset_of.items()
            if s == r.subset and (f"{cid}~{r.perturbation}", r.metric) in value
        ]
        o, p = np.array([a for a, _ in pairs]), np.array([b for _, b in pairs])
        assert r.n_pairs == len(pairs)
        tie = np.isclose(o, p, rtol=1e-6, atol=1e-6)  # float noise (0.20000000000000004 vs 0.2) is a tie
        assert r.fraction == pytest.approx((np.sum((o > p) & ~tie) + 0.5 * np.sum(tie)) / len(pairs))
        assert r.drop == pytest.approx(np.mean(o - p))
    for r in res.rows:  # the subsets partition the pairs
        parts = [x for x in res.subset_rows if (x.metric, x.perturbation) == (r.metric, r.perturbation)]
        assert sum(x.n_pairs for x in parts) == r.n_pairs
        assert sum(x.fraction * x.n_pairs for x in parts) == pytest.approx(r.fraction * r.n_pairs)


def test_cli_writes_subset_rows_and_a_grey_scale_figure(tmp_path: Path, shared_data: Path) -> None:
    import matplotlib.image

    out = tmp_path / "s"
    args = ["stress", "-m", "f1,length", "--perturb", "negation,truncation", "--limit", "12", "-o", str(out), "--json"]
    res = runner.invoke(app, args)
    assert res.exit_code == 0, res.output
    payload = json.loads(res.output)
    sub_lines = [json.loads(x) for x in (out / "stress_subsets.jsonl").read_text().splitlines()]
    assert sub_lines == payload["subset_rows"] and {r["subset"] for r in sub_lines} == {CLOSED, OPEN}
    assert payload["run"]["subsets"]["mode"] == "rule"
    assert sum(payload["run"]["subsets"]["items"].values()) == 72
    lines = [json.loads(x) for x in (out / "stress.jsonl").read_text().splitlines()]
    assert all(r["subset"] == "all" and r["value"] == r["fraction"] for r in lines)  # what `dialeval report` reads
    md = (out / "stress.md").read_text()
    assert f"## Subset {CLOSED}" in md and "(stress_subsets_negation.png)" in md
    png = out / "stress_subsets_negation.png"
    assert png.read_bytes()[:4] == b"\x89PNG"
    pixels = matplotlib.image.imread(str(png))[..., :3]
    assert np.allclose(pixels[..., 0], pixels[..., 1], atol=0.02) and np.allclose(
        pixels[..., 1], pixels[..., 2], atol=0.02
    )
    assert pixels.std() > 0.05  # not blank
    none = runner.invoke(app, [*args[:-3], "-o", str(tmp_path / "n"), "--subsets", "none", "--json"])
    assert none.exit_code == 0 and json.loads(none.output)["subset_rows"] == []
    assert not (tmp_path / "n" / "stress_subsets_negation.png").exists()


@pytest.mark.slow
def test_judge_tags_each_context_once_from_the_judges_own_answers(
    bench: Benchmark, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`--subsets judge` with the packaged SmolLM2 (llama.cpp in process): one verdict per context, never a default."""
    from dialeval.judges.metric import CustomJudge
    from dialeval.scoring import score_candidates
    from dialeval.stress.subsets import SUBSET_PROTOCOL, judge_subsets

    monkeypatch.setenv("DIALEVAL_CACHE", str(tmp_path))
    head = bench.head(4)
    params = {"k": "1", "max_tokens": "16", "temperature": "0"}
    tagged, counts, why = judge_subsets(head.candidates, head.dialogues, params)
    # the judge's raw answers for the first candidate of each context, asked again (served by the request cache)
    judge = CustomJudge(protocol=str(SUBSET_PROTOCOL), k=1, max_tokens=16, temperature=0.0)
    firsts = list({c.context_id: c for c in reversed(head.candidates)}.values())
    raw = {s.context_id: s.value for s in score_candidates(judge, firsts, head.dialogues) if s.metric == "judge:custom"}
    expected = {ctx: None if v is None else (OPEN if v >= 0.5 else CLOSED) for ctx, v in raw.items()}
    assert len(raw) == 4
    for c in tagged:
        assert c.tags.get("subset") == expected[c.context_id]  # untagged (no key) where the answer did not parse
    assert sum(counts.values()) == 4
    assert counts["unparsed"] == sum(v is None for v in raw.values()) == sum(why.values())  # a cause for each
    assert [c.id for c in tagged] == [c.id for c in head.candidates]


def test_the_subset_judge_reports_its_progress(bench: Benchmark, monkeypatch: pytest.MonkeyPatch) -> None:
    """--subsets judge ran a local LM for a minute or more with no progress bar, where the scoring has one: it now
    reports each context judged to the run's bars (here a stand-in judge answers "open-ended" at once)."""
    from dialeval.judges.metric import CustomJudge
    from dialeval.stress.subsets import judge_subsets

    def answer(self: CustomJudge, items: list[object]) -> dict[str, list[float]]:
        return {"judge:custom": [1.0] * len(items), "judge:custom:expected": [1.0] * len(items)}

    monkeypatch.setattr(CustomJudge, "compute", answer)
    head = bench.head(3)
    seen: list[int] = []
    tagged, counts, why = judge_subsets(head.candidates, head.dialogues, {"cache": "no"}, progress=seen.append)
    assert sum(seen) == 3 and counts == {OPEN: 3} and not why  # one item per context (bench.head(3): 3 contexts)
    assert {c.tags["subset"] for c in tagged} == {OPEN}


def test_cli_subsets_judge_reads_its_parameters(bench: Benchmark) -> None:
    res = runner.invoke(app, ["stress", "-b", "usr-tc", "--limit", "1", "-m", "f1", "--subsets", "judge",
                              "--subset-param", "backend=nonesuch", "-o", "/tmp/unused-stress"])  # fmt: skip
    assert res.exit_code == 2  # a dialeval error, reported without a traceback
    # it said 'unknown backend "nonesuch"' when the judge first ran, naming neither the option nor the parameter
    assert ('error: field "--subset-param": judge:custom.backend=\'nonesuch\': not one of llamacpp, '
            "openai-compatible, transformers") in res.output
    # the last one won, silently
    res = runner.invoke(app, ["stress", "-b", "usr-tc", "--limit", "1", "-m", "f1", "--subsets", "judge",
                              "--subset-param", "k=1", "--subset-param", "k=2", "-o", "/tmp/unused"])  # fmt: skip
    assert res.exit_code == 2 and 'error: field "--subset-param": parameter "k" is given twice' in res.output


def test_subset_param_drops_the_spaces_around_its_key() -> None:
    """--subset-param kept the spaces of " k =1" in its key (an unknown parameter " k "), where -p drops them: the
    value after "=" is taken as given (the -p rule, dialeval.commands.options._key_stripped)."""
    from dialeval.stress.cli import _pairs

    assert _pairs([" k =1", "model= a b "]) == {"k": "1", "model": " a b "}
    res = runner.invoke(app, ["stress", "-b", "usr-tc", "--limit", "1", "-m", "f1", "--subsets", "judge",
                              "--subset-param", " k =1", "--subset-param", "k=2", "-o", "/tmp/unused"])  # fmt: skip
    assert res.exit_code == 2 and 'error: field "--subset-param": parameter "k" is given twice' in res.output
    with pytest.raises(InputError, match='" =1" is not of the form key=value'):
        _pairs([" =1"])


def test_the_figure_keeps_originals_whose_id_has_a_tilde(monkeypatch: pytest.MonkeyPatch) -> None:
    """The figure kept a score only if its id had no "~" or ended in ``~<perturbation>``: the original "a~b" was
    dropped from it, silently. Only the copies of another perturbation are left out now."""
    import dialeval.report.charts
    from dialeval.schema import Score
    from dialeval.stress.subsets import distribution_label, subset_distribution_png

    drawn: list[tuple[str, str]] = []

    def chart(scores, names, label):  # type: ignore[no-untyped-def]
        drawn.extend((s.item_id, label(s)) for s in scores)
        return b""

    monkeypatch.setattr(dialeval.report.charts, "distribution_chart", chart)
    ids = ["a~b", "a~b~negation", "a~b~truncation", "c", "c~negation"]
    subset_distribution_png([Score(item_id=i, metric="f1", value=0.5, tags={"subset": OPEN}) for i in ids], "negation")
    assert drawn == [("a~b", f"{OPEN}\noriginal"), ("a~b~negation", f"{OPEN}\nperturbed"),
                     ("c", f"{OPEN}\noriginal"), ("c~negation", f"{OPEN}\nperturbed")]  # fmt: skip
    assert distribution_label(Score(item_id="x~negation", metric="f1", value=0.1), "negation") == "untagged\nperturbed"
