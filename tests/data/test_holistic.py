"""HolisticEval loaders against the raw headerless CSVs."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from dialeval.data.holistic import load_holistic_coherence, load_holistic_fluency
from dialeval.errors import InputError


def test_coherence(shared_data: Path) -> None:
    path = shared_data / "holistic_eval/context_data_release.csv"
    rows = list(csv.reader(path.open(newline="")))
    b = load_holistic_coherence(path)
    assert b.counts()["items"] == len(rows) == 200
    assert b.counts()["ratings"] == 200 * 10 and b.counts()["annotators"] == 10
    row = rows[17]
    did = f"hc-{row[0]}"
    assert b.dialogues[did].turns[0].text == row[1].strip()
    got = [r.value for r in b.ratings if r.item_id == f"{did}:response" and r.annotator == "s7"]
    assert got == [float(row[3 + 6])]


def test_fluency(shared_data: Path) -> None:
    path = shared_data / "holistic_eval/fluency_data_release.csv"
    rows = list(csv.reader(path.open(newline="")))
    b = load_holistic_fluency(path)
    assert b.counts()["items"] == len(rows) == 200
    item = f"hf-{rows[0][0]}:response"
    assert [r.value for r in b.ratings if r.item_id == item] == [float(v) for v in rows[0][2:]]
    assert b.dialogues[f"hf-{rows[0][0]}"].turns == []


def test_bad_inputs(tmp_path: Path) -> None:
    p = tmp_path / "ctx.csv"
    p.write_text("0,hi,hello,1,2,3,4,5,1,2,3,4,5\n1,hi,hello,1,2,3,4,5,1,2,3,4\n")
    with pytest.raises(InputError, match=r"ctx\.csv:2: expected 13 columns, found 12"):
        load_holistic_coherence(p)
    p.write_text("0,hi,hello,1,2,3,4,5,1,2,3,4,5\n1,hi,hello,1,2,x,4,5,1,2,3,4,5\n")
    with pytest.raises(InputError, match=r'ctx\.csv:2: field "s3": expected a number'):
        load_holistic_coherence(p)
    p.write_text('0,"hi\n')
    with pytest.raises(InputError, match=r"ctx\.csv:1"):
        load_holistic_fluency(p)
