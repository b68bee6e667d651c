"""The training sources: only validation/dev splits and Chit-Chat; bad records are located."""

from __future__ import annotations

import pytest

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
