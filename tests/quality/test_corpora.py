"""The training sources: only validation/dev splits and Chit-Chat; bad records are located."""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable

import pytest

from dialeval.data.catalog import load_benchmark
from dialeval.errors import InputError
from dialeval.quality.corpora import ALLOWED, read_source, source_path


def test_only_validation_and_dev_files_are_allowed(shared_data):
    files = {v for v in ALLOWED.values() if v}
    assert files == {
        "corpora/dailydialog/valid.json",
        "corpora/blended_skill_talk/val.json",
        "corpora/dailydialog_plusplus/dev.json",
        "corpora/topical_chat/valid_freq.json",
        "corpora/topical_chat/valid_rare.json",
    }
    assert not any("test" in f for f in files)
    with pytest.raises(InputError, match="not a file source"):
        source_path("dailydialog-test", shared_data)


def test_dailydialog_pairs_follow_the_dialogue(shared_data):
    pairs = read_source("dailydialog-valid", shared_data, limit=1)
    # the first valid dialogue has 7 turns (checked by eye in the file): 6 (context, next turn) pairs
    assert len(pairs) == 6
    assert pairs[0].context == ("Good morning , sir . Is there a bank near here ?",)
    assert pairs[0].response == "There is one . 5 blocks away from here ?"
    assert pairs[5].context[-1] == "How much would you like to change ?"


def test_dailydialogpp_gives_five_positives_with_the_adversarial_negatives(shared_data):
    pairs = read_source("dailydialogpp-dev", shared_data, limit=1)
    assert len(pairs) == 5
    assert {len(p.adversarial) for p in pairs} == {5}
    assert pairs[0].response == "So nice of you."


def test_topical_chat_valid_pairs_follow_the_conversation(shared_data):
    pairs = read_source("topical-chat-valid-freq", shared_data, limit=1)
    # the first conversation of valid_freq.json opens "Are you a football fan?" / "yes, I'm. a football fan."
    assert pairs[0].context == ("Are you a football fan?",)
    assert pairs[0].response == "yes, I'm. a football fan."
    assert pairs[1].context[-1] == "yes, I'm. a football fan."
    assert len({p.dialogue for p in pairs}) == 1


def test_a_malformed_line_is_named(tmp_path):
    folder = tmp_path / "corpora" / "dailydialog_plusplus"
    folder.mkdir(parents=True)
    (folder / "dev.json").write_text('{"id": 0, "context": ["a"], "positive_responses": ["b"], '
                                     '"adversarial_negative_responses": []}\n{"id": 1, "context": "oops"}\n')
    with pytest.raises(InputError) as err:
        read_source("dailydialogpp-dev", tmp_path)
    assert "dev.json:2" in str(err.value) and 'field "context"' in str(err.value)


@functools.cache
def _norm(text: str) -> str:
    return " ".join(re.sub(r"[^\w\s]", " ", text.lower()).split())


def _long_turns(texts: Iterable[str]) -> set[str]:
    """Turns of at least 40 characters once lowercased, punctuation dropped and spaces collapsed."""
    return {n for n in map(_norm, texts) if len(n) >= 40}


@pytest.mark.slow
def test_the_turns_training_shares_with_rated_sets_are_the_documented_few(shared_data):
    # The figures of docs/quality.md, "Turns shared with rated sets" (counted by this scan when it was written,
    # 2026-12-02): a few training dialogues share a long turn with a rated set. A new source, or a reader that
    # reads more of a file, changes them: then the docs must be updated with the new figures.
    rated = ["usr-tc", "usr-pc", "predictive-engagement", "holistic-coherence", "gupta-dailydialog",
             "lmstyle-mturk", "predictive-engagement-convai", "dstc9"]
    rated_turns: dict[str, set[str]] = {}
    item_turns: dict[str, list[set[str]]] = {}
    for name in rated:
        bench = load_benchmark(name)
        turns = {d.id: [_norm(t.text) for t in d.turns] for d in bench.dialogues.values()}
        rated_turns[name] = {t for ts in turns.values() for t in ts if len(t) >= 40}
        rated_turns[name] |= _long_turns(c.text for c in bench.candidates)
        item_turns[name] = [
            {t for t in turns[c.dialogue_id][: c.turn_index] if len(t) >= 40} | _long_turns([c.text])
            for c in bench.candidates
        ]
    shared: dict[str, int] = {}
    seen: set[str] = set()
    for source in ALLOWED:
        dialogues: dict[str, set[str]] = {}
        for p in read_source(source, shared_data):
            dialogues.setdefault(p.dialogue, set()).update(_long_turns((*p.context, p.response)))
        shared[source] = sum(any(ts & rated_turns[b] for b in rated) for ts in dialogues.values())
        seen.update(*dialogues.values())
    touched = {b: sum(bool(ts & seen) for ts in item_turns[b]) for b in rated}
    assert shared == {"dailydialog-valid": 7, "bst-val": 5, "dailydialogpp-dev": 10, "chitchat": 2,
                      "topical-chat-valid-freq": 17, "topical-chat-valid-rare": 8}
    assert touched == {"usr-tc": 0, "usr-pc": 0, "predictive-engagement": 14, "holistic-coherence": 3,
                       "gupta-dailydialog": 26, "lmstyle-mturk": 16, "predictive-engagement-convai": 0, "dstc9": 984}
