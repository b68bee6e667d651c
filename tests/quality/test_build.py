"""Negatives and corruptions: deterministic for a seed, each of the kind it says."""

from __future__ import annotations

import random

from dialeval.quality.build import (
    CORRUPTIONS,
    SensibleExample,
    fluent_examples,
    sensible_examples,
    word_drop,
    word_repeat,
)
from dialeval.quality.corpora import Pair

PAIRS = [
    Pair("s", str(i), (f"question number {i} about music ?", f"answer {i} is here", f"so what is {i} then ?"),
         f"it is the {i} best song I have heard this year", ("an adversarial reply",) if i % 2 else ())
    for i in range(30)
]


def test_same_seed_same_examples_other_seed_differs():
    assert sensible_examples(PAIRS, 3) == sensible_examples(PAIRS, 3)
    assert fluent_examples(PAIRS, 3) == fluent_examples(PAIRS, 3)
    assert sensible_examples(PAIRS, 3) != sensible_examples(PAIRS, 4)


def test_negatives_are_what_their_kind_says():
    by_context = {p.context: p for p in PAIRS}
    for e in sensible_examples(PAIRS, 0):
        if e.kind == "true":
            assert e.label == 1 and e.response == by_context[e.context].response
            continue
        assert e.label == 0
        if e.kind == "shuffled-context":
            orig = next(p for p in PAIRS if sorted(p.context) == sorted(e.context))
            assert e.response == orig.response and e.context != orig.context
            continue
        p = by_context[e.context]
        if e.kind == "random":
            assert e.response != p.response  # another dialogue's turn (all turns here differ)
        elif e.kind == "adversarial":
            assert e.response in p.adversarial
        elif e.kind == "negation":
            assert " not " in f" {e.response} " and e.response.replace(" not", "") == p.response
        elif e.kind == "truncation":
            assert p.response.startswith(e.response) and len(e.response) < len(p.response)
        elif e.kind == "repetition":
            assert len(e.response.split()) > len(p.response.split())
    kinds = {e.kind for e in sensible_examples(PAIRS, 0)}
    assert {"true", "random", "adversarial"} <= kinds


def test_corruptions_change_the_words_as_named():
    text = "the quick brown fox jumps over the lazy dog"
    dropped = word_drop(text, random.Random(1))
    assert dropped is not None and len(dropped.split()) == 6  # a third of 9 words dropped
    assert set(dropped.split()) <= set(text.split())
    repeated = word_repeat(text, random.Random(1))
    assert repeated is not None and 10 <= len(repeated.split()) <= 12
    shuffled = CORRUPTIONS["word-shuffle"](text, random.Random(1))
    assert shuffled is not None and sorted(shuffled.split()) == sorted(text.split()) and shuffled != text
    labels = [(e.label, e.kind) for e in fluent_examples(PAIRS, 0)]
    assert labels.count((1, "real")) == 30 and sum(lab == 0 for lab, _ in labels) == 30


def test_every_hard_gives_one_negative_of_each_kind_that_applies():
    one = sensible_examples(PAIRS, 0)
    every = sensible_examples(PAIRS, 0, every_hard=True)
    for p in PAIRS:
        group = f"{p.source}/{p.dialogue}"
        kinds = [e.kind for e in every if e.group == group and e.kind not in ("true", "random")]
        assert len(kinds) == len(set(kinds))  # one of each kind
        # every response negative applies to these 10-word replies, the shuffle to 3-turn contexts
        expected = {"negation", "truncation", "repetition", "shuffled-context"}
        assert set(kinds) == expected | ({"adversarial"} if p.adversarial else set())
        assert sum(e.group == group and e.kind not in ("true", "random") for e in one) == 1
    assert [e.label for e in every].count(1) == len(PAIRS)


def test_truncation_is_a_fluent_corruption_only_when_named():
    assert "truncation" not in {e.kind for e in fluent_examples(PAIRS, 0)}
    cut = [e for e in fluent_examples(PAIRS, 0, ("truncation",)) if e.label == 0]
    assert len(cut) == len(PAIRS) and all(e.kind == "truncation" for e in cut)
    originals = {p.response for p in PAIRS}
    assert all(any(o.startswith(e.text) and len(e.text.split()) < len(o.split()) for o in originals) for e in cut)


def test_a_context_whose_last_turns_are_one_text_gets_no_shuffled_context_negative():
    """The shuffle redrew until another turn came last: with the last turns all one text (an "ok" four times) it
    never could, and training hung. Such a context now gets no shuffled-context negative, and its other ones.
    Run in a daemon thread so that a hang fails the test instead of stopping the suite."""
    import threading

    same = Pair("s", "ok", ("hi there, how are you?", "ok", "ok", "ok", "ok"), "it is the best song I have heard")
    got: list[list[SensibleExample]] = []
    thread = threading.Thread(target=lambda: got.append(sensible_examples([*PAIRS, same], 0, True)), daemon=True)
    thread.start()
    thread.join(timeout=30)
    assert got, "sensible_examples hung on a context whose last four turns are one text"
    kinds = {e.kind for e in got[0] if e.group == "s/ok"}
    assert "shuffled-context" not in kinds and {"true", "negation", "truncation"} <= kinds
