"""PredictiveEngagement loaders against the raw CSVs read here with the csv module."""

from __future__ import annotations

import csv
from collections import defaultdict
from pathlib import Path

import pytest

from dialeval.data.engagement import load_predictive_engagement, load_predictive_engagement_convai
from dialeval.errors import InputError

MAIN = "predictive_engagement/Eng_Scores_queries_gen_gtruth_replies.csv"
CONVAI = "predictive_engagement/humanAMT_engscores_utt.csv"


def test_main_counts_and_ratings(shared_data: Path) -> None:
    with (shared_data / MAIN).open(newline="") as f:
        rows = list(csv.DictReader(f))
    scores = defaultdict(list)
    for r in rows:
        scores[(r["query"].strip(), r["response"].strip())].append(float(r["human_score"]))
    b = load_predictive_engagement(shared_data / MAIN)
    assert len(rows) == b.counts()["ratings"] == 1800
    assert b.counts()["items"] == len(scores) == 600
    assert b.counts()["dialogues"] == len({q for q, _ in scores})
    by_item = defaultdict(list)
    for r in b.ratings:
        by_item[r.item_id].append(r.value)
    for c in b.candidates:
        assert by_item[c.id] == scores[(b.dialogues[c.dialogue_id].turns[0].text, c.text)]
    # system labels: the ground-truth file lists 300 of the 600 pairs
    assert sum(c.system == "ground-truth" for c in b.candidates) == 300


def test_main_without_ground_truth_file_says_so(tmp_path: Path, shared_data: Path) -> None:
    p = tmp_path / "eng.csv"
    p.write_bytes((shared_data / MAIN).read_bytes())
    b = load_predictive_engagement(p)
    assert {c.system for c in b.candidates} == {"unknown"}
    assert sum(b.skipped.values()) == 600


def test_convai_counts_and_labels(shared_data: Path) -> None:
    with (shared_data / CONVAI).open(newline="") as f:
        rows = list(csv.DictReader(f))
    b = load_predictive_engagement_convai(shared_data / CONVAI)
    assert b.counts()["items"] == len(rows) == 297
    assert sum(r.value for r in b.ratings) == sum(int(r["label"]) for r in rows) == 95


def test_bad_inputs(tmp_path: Path) -> None:
    p = tmp_path / "eng.csv"
    p.write_text("query,response,human_score\nhi,hello,3\nhow,fine,lots\n")
    with pytest.raises(InputError) as err:
        load_predictive_engagement(p)
    assert str(err.value).startswith(f"{p}:3:") and err.value.field == "human_score"
    p.write_text("query,response\nhi,hello\n")
    with pytest.raises(InputError, match=r'field "human_score": missing column'):
        load_predictive_engagement(p)
    p.write_text("query,response,human_score\nhi,hello,3\nhow,fine\n")
    with pytest.raises(InputError) as err:
        load_predictive_engagement(p)
    assert f"{p}:3:" in str(err.value) and "expected 3 columns, found 2" in str(err.value)
    q = tmp_path / "convai.csv"
    q.write_text('id,query,reply,label\n0,"hi,there\n')
    with pytest.raises(InputError, match=r"convai\.csv:2"):
        load_predictive_engagement_convai(q)
    q.write_text("id,query,reply,label\n0,hi,yo,2\n")
    with pytest.raises(InputError, match=r'convai\.csv:2: field "label": expected 0 or 1'):
        load_predictive_engagement_convai(q)
