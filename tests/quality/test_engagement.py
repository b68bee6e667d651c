"""The engagement head: each Chit-Chat turn labelled with its conversation's mean rating, a ridge over pair features."""

from __future__ import annotations

import json

import numpy as np
import pytest

pytest.importorskip("sentence_transformers")
pytest.importorskip("chitchat_dataset")

from scipy.stats import spearmanr
from tests.quality.test_experiment import synthetic

from dialeval.errors import InputError
from dialeval.quality import engagement as eng
from dialeval.quality import experiment as ex


def test_each_example_is_a_turn_of_a_rated_conversation_with_its_mean_rating():
    import chitchat_dataset

    raw = chitchat_dataset.Dataset()  # read here independently of dialeval's loader
    got = eng.examples(seed=0, per_conversation=3, limit=60)
    assert got and all(len(e.context) >= 1 for e in got)
    per_conv: dict[str, int] = {}
    for e in got:
        did = e.group.removeprefix("chitchat/")
        r = raw[did]["ratings"]
        assert e.target == pytest.approx((r["witty"] + r["upbeat"] + r["interesting"]) / 3)
        per_conv[did] = per_conv.get(did, 0) + 1
    assert max(per_conv.values()) <= 3
    unrated = [k for k, v in list(raw.items())[:60] if not v.get("ratings")]
    assert unrated and not set(unrated) & set(per_conv)  # conversations without ratings give nothing
    assert eng.examples(seed=0, per_conversation=3, limit=60) == got  # the seed fixes the draw


def test_bad_ratings_give_no_target():
    assert eng.conversation_target({"witty": 0, "upbeat": 5, "interesting": 5}) is None
    assert eng.conversation_target({"witty": True, "upbeat": 5, "interesting": 5}) is None
    assert eng.conversation_target(None) is None


def test_train_writes_a_head_that_reproduces_its_held_in_figure(tmp_path):
    card = eng.train(tmp_path, seed=0, per_conversation=4, limit=120, say=lambda _m: None)
    head = json.loads((tmp_path / "engagement.json").read_text())
    assert head["features"] == "pair" and len(head["coef"]) == 4 * 384 + 2
    assert json.loads((tmp_path / "card.json").read_text()) == card
    # the held-in turn Spearman again, from the written head and scipy
    from dialeval.metrics.base import MetricInput
    from dialeval.models.loading import load_sentence_encoder
    from dialeval.quality.recipes import is_validation
    from dialeval.schema import Turn

    held = [e for e in eng.examples(0, 4, 120) if is_validation(e.group, 0, eng.VAL_SHARE)]
    items = [MetricInput(response=e.response, context=tuple(Turn(speaker="", text=t) for t in e.context)) for e in held]
    got = ex.pair_head_scores(tmp_path / "engagement.json", items, load_sentence_encoder("all-minilm-l6-v2", "cpu")[0])
    want = spearmanr(got, [e.target for e in held])[0]
    assert card["held_in"]["turns"] == len(held)
    assert card["held_in"]["turn_spearman"] == pytest.approx(want, abs=1e-4)


def test_no_rated_conversation_is_one_clear_error(tmp_path):
    with pytest.raises(InputError, match="no rated Chit-Chat conversation"):
        eng.train(tmp_path, limit=0, say=lambda _m: None)
    assert not (tmp_path / "engagement.json").exists()


def test_too_few_held_in_turns_give_null_figures_not_nan_in_the_card(tmp_path):
    """--limit 3 holds no turn out (the seeded split): the card said "turn_spearman": NaN, which is not JSON."""

    def no_nan(name: str) -> None:
        raise AssertionError(f"{name} in card.json")

    card = eng.train(tmp_path, seed=0, limit=3, say=lambda _m: None)
    saved = json.loads((tmp_path / "card.json").read_text(), parse_constant=no_nan)
    assert saved == card and card["held_in"]["turns"] < 2
    assert card["held_in"]["turn_spearman"] is None and card["held_in"]["conversation_spearman"] is None


def test_the_engagement_candidates_run_only_when_asked_and_cannot_ship(tmp_path):
    rng = np.random.default_rng(0)
    examples, rows = synthetic()
    rows = [r | {"engagement": float(rng.normal())} for r in rows]
    centre = {n: (0.0, 1.0) for n in ("view_coherent", "view_fluent", "view_specific", "sensible", "fluent",
                                      "sbert_context")}  # fmt: skip
    names = {r["candidate"] for r in ex.run(examples, rows, centre, n_boot=20, heads=["engagement"])}
    assert set(ex.HEAD_CANDIDATES["engagement"]) <= names
    plain = {r["candidate"] for r in ex.run(examples, rows, centre, n_boot=20)}
    assert not set(ex.HEAD_CANDIDATES["engagement"]) & plain
    results = [{"candidate": "engagement (unfitted)", "mean": 0.9}]
    with pytest.raises(InputError, match="needs a head that quality does not run; nothing shipped"):
        ex.ship(tmp_path / "bundled", tmp_path / "views", None, [], results)
    assert not (tmp_path / "bundled").exists()


def test_a_rated_conversation_without_two_turns_gives_nothing(monkeypatch):
    # stand-in corpus (the real one has no rated conversation with zero turns): one empty, one of two turns
    from dialeval.data.benchmark import Benchmark
    from dialeval.schema import Dialogue, Turn

    rated = {"witty": 5, "upbeat": 5, "interesting": 8}
    monkeypatch.setattr("dialeval.data.chitchat._corpus", lambda: {"e": {"ratings": rated}, "t": {"ratings": rated}})
    dialogues = {"e": Dialogue(id="e", turns=[]),
                 "t": Dialogue(id="t", turns=[Turn(speaker="a", text="hi"), Turn(speaker="b", text="hello")])}
    monkeypatch.setattr("dialeval.data.chitchat.load_chitchat",
                        lambda limit=None: Benchmark(name="chitchat", dialogues=dialogues, candidates=[], ratings=[]))
    got = eng.examples(seed=0)
    assert [(e.group, e.context, e.response, e.target) for e in got] == [("chitchat/t", ("hi",), "hello", 6.0)]
