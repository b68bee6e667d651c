"""Context perturbations on real USR Topical-Chat dialogues: the response stays, the dialogue around it changes."""

from __future__ import annotations

import random
from collections.abc import Sequence
from pathlib import Path
from typing import ClassVar

import pytest

from dialeval.data.benchmark import Benchmark
from dialeval.data.usr import load_usr_topical_chat
from dialeval.metrics.base import Metric, MetricInput, MetricValues, build_inputs
from dialeval.metrics.resolve import resolve_metrics
from dialeval.stress.context import sentiment_tail_negative, sentiment_tail_positive, speaker_swap
from dialeval.stress.perturb import CONTEXT_PERTURBATIONS, apply_perturbation
from dialeval.stress.run import perturb_items, run_stress

TAILS = {
    "sentiment-tail-positive": ["ok thanks!", "you are welcome!"],  # DiQAD, paper 003, Sec. 5 and footnote 5
    "sentiment-tail-negative": ["I don't think so."],  # footnote 6
}


@pytest.fixture(scope="module")
def bench(shared_data: Path) -> Benchmark:
    return load_usr_topical_chat(shared_data / "usr" / "usr_topical_chat.json")


class TurnsByA(Metric):
    """Number of context turns labelled "A": a metric that reads speakers, to show the scorer sees the new context."""

    name = "turns_by_a_test"
    outputs: ClassVar[tuple[str, ...]] = ("turns_by_a_test",)

    def compute(self, items: Sequence[MetricInput]) -> MetricValues:
        return {"turns_by_a_test": [float(sum(t.speaker == "A" for t in i.context)) for i in items]}


class NoisyLength(Metric):
    """Word count plus float noise of 1e-9, as a neural metric gives one input in differently padded batches."""

    name = "noisy_length_test"
    outputs: ClassVar[tuple[str, ...]] = ("noisy_length_test",)
    noise = random.Random(0)

    def compute(self, items: Sequence[MetricInput]) -> MetricValues:
        return {"noisy_length_test": [len(i.response.split()) + 1e-9 * self.noise.random() for i in items]}


def test_speaker_swap_exchanges_labels_and_keeps_texts_and_response(bench: Benchmark) -> None:
    for c in bench.candidates:
        ctx = tuple(bench.dialogues[c.dialogue_id].context(c.turn_index))
        out = speaker_swap(c.text, ctx, random.Random(0), [])
        assert out is not None and out.response == c.text and out.after == ()
        assert [t.text for t in out.context] == [t.text for t in ctx]
        speakers = {t.speaker for t in ctx}
        if speakers == {"A", "B"}:
            assert [t.speaker for t in out.context] == [{"A": "B", "B": "A"}[t.speaker] for t in ctx]
        else:  # a one-turn context of A: A now speaks as the responder, B
            assert speakers == {"A"} and {t.speaker for t in out.context} == {"B"}
        # the responder (the other party) now speaks the turn the response follows
        assert out.context[-1].speaker != ctx[-1].speaker
        assert speaker_swap(c.text, ctx, random.Random(9), ["x"]) == out  # deterministic
    assert speaker_swap("hi", (), random.Random(0), []) is None


def test_context_perturbations_give_new_dialogues_and_never_touch_the_originals(bench: Benchmark) -> None:
    sub = bench.head(6)
    before = {k: d.model_dump() for k, d in sub.dialogues.items()}
    names = list(CONTEXT_PERTURBATIONS)
    items = perturb_items(sub.candidates, sub.dialogues, names, seed=1)
    assert items == perturb_items(sub.candidates, sub.dialogues, names, seed=1)
    assert {k: d.model_dump() for k, d in sub.dialogues.items()} == before
    originals = {c.id: c for c in sub.candidates}
    for name in names:
        assert items.skipped[name] == 0 and len(items.copies[name]) == len(sub.candidates)
        copies = items.copies[name]
        merged = {**sub.dialogues, **items.dialogues}
        new_inputs = build_inputs(copies, merged)
        for p, new_in in zip(copies, new_inputs, strict=True):
            src = originals[p.id.removesuffix(f"~{name}")]
            old_in = build_inputs([src], sub.dialogues)[0]
            dialogue = items.dialogues[p.dialogue_id]
            old_ctx = sub.dialogues[src.dialogue_id].context(src.turn_index)
            assert p.text == src.text and new_in.response == old_in.response  # response untouched
            assert new_in.references == old_in.references and new_in.knowledge == old_in.knowledge
            assert dialogue.turns[p.turn_index].text == src.text  # the response sits right after the context
            if name == "speaker-swap":
                assert [t.text for t in new_in.context] == [t.text for t in old_in.context]
                assert [t.speaker for t in new_in.context] != [t.speaker for t in old_in.context]
                # the responder keeps its label and now follows a turn of its own
                assert dialogue.turns[p.turn_index].speaker != old_ctx[-1].speaker
                assert dialogue.turns[p.turn_index].speaker == dialogue.turns[p.turn_index - 1].speaker
                assert len(dialogue.turns) == p.turn_index + 1
            else:
                # the tail is after the response: the context the metrics see is the original one
                assert new_in.context == old_in.context
                tail = dialogue.turns[p.turn_index + 1 :]
                assert [t.text for t in tail] == TAILS[name]
                user = old_ctx[-1].speaker
                assert tail[0].speaker == user and dialogue.turns[p.turn_index].speaker != user
                assert all(
                    t.speaker == (user if k % 2 == 0 else "B" if user == "A" else "A") for k, t in enumerate(tail)
                )


def test_tails_match_diqad_templates_directly(bench: Benchmark) -> None:
    c = bench.candidates[7]
    ctx = tuple(bench.dialogues[c.dialogue_id].context(c.turn_index))
    for fn, name in (
        (sentiment_tail_positive, "sentiment-tail-positive"),
        (sentiment_tail_negative, "sentiment-tail-negative"),
    ):
        out = fn(c.text, ctx, random.Random(0), [])
        assert out is not None and out.response == c.text and out.context == ctx
        assert [t.text for t in out.after] == TAILS[name]
        assert apply_perturbation(name, c.text, ctx, random.Random(3), []) == out


def test_run_stress_scores_the_perturbed_context(bench: Benchmark) -> None:
    sub = bench.head(10)
    families, _ = resolve_metrics(["f1"])
    metrics = [cls() for cls in (*families, TurnsByA, NoisyLength)]
    res = run_stress(sub.candidates, sub.dialogues, metrics, list(CONTEXT_PERTURBATIONS), n_boot=50)
    rows = {(r.metric, r.perturbation): r for r in res.rows}
    value = {(s.item_id, s.metric): s.value for s in res.scores}
    # a metric that reads speakers sees the swap: the hand count of "A" turns before and after
    wins = 0.0
    for c in sub.candidates:
        ctx = sub.dialogues[c.dialogue_id].context(c.turn_index)
        n_a = sum(t.speaker == "A" for t in ctx)
        n_b = len(ctx) - n_a
        assert value[(c.id, "turns_by_a_test")] == n_a
        assert value[(f"{c.id}~speaker-swap", "turns_by_a_test")] == n_b
        wins += 1.0 if n_a > n_b else 0.5 if n_a == n_b else 0.0
    assert rows[("turns_by_a_test", "speaker-swap")].fraction == pytest.approx(wins / len(sub.candidates))
    assert rows[("turns_by_a_test", "speaker-swap")].fraction != 0.5
    # no metric reads the turns after the response: the tails are ties (float noise of 1e-9 included)
    noisy = {(s.item_id, s.value) for s in res.scores if s.metric == "noisy_length_test"}
    assert len({v for _, v in noisy}) > len({len(c.text.split()) for c in sub.candidates})  # the noise is there
    for name in TAILS:
        for metric in ("word_f1", "turns_by_a_test", "noisy_length_test"):
            row = rows[(metric, name)]
            assert (
                row.n_pairs == len(sub.candidates) and row.fraction == 0.5 and row.drop == pytest.approx(0.0, abs=1e-8)
            )
    # word F1 ignores speakers: the swap is a tie for it too
    assert rows[("word_f1", "speaker-swap")].fraction == 0.5
