"""Gupta et al. DailyDialog multi-reference loader: the join of the two files, checked here."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from dialeval.data.gupta import load_gupta_dailydialog
from dialeval.errors import InputError


@pytest.fixture(scope="module")
def files(shared_data: Path):
    folder = shared_data / "dailydialog_gupta"
    rows = list(csv.DictReader((folder / "mturk_rating_processed_output.csv").open(newline="")))
    multi = [json.loads(line) for line in (folder / "multireftest.json").open() if line.strip()]
    return folder, rows, {d["index"]: d for d in multi}


def test_counts(files) -> None:
    folder, rows, _ = files
    b = load_gupta_dailydialog(folder)
    assert b.counts()["items"] == len(rows) == 500
    assert b.counts()["contexts"] == len({r["context_id"] for r in rows}) == 100
    assert b.counts()["systems"] == 5
    assert [r.value for r in b.ratings] == [float(r["human_average_rating"]) for r in rows]


def test_join_with_multireftest(files) -> None:
    """context_id "D_T": dialogue index D, responses to turn T (the CSV's all_references is a subset)."""
    folder, rows, multi = files
    b = load_gupta_dailydialog(folder / "mturk_rating_processed_output.csv")
    for row, cand in zip(rows, b.candidates, strict=True):
        d, t = (int(x) for x in row["context_id"].split("_"))
        refs = [r.strip() for r in multi[d]["dialogue"][t]["responses"]]
        assert cand.references == refs
        assert set(row["all_references"].split("\t")) <= set(refs)
        assert len(b.dialogues[cand.dialogue_id].turns) == t + 1 == cand.turn_index
    # the context in the CSV is the lower-cased multireftest turns 0..T (checked on one row)
    d, t = (int(x) for x in rows[0]["context_id"].split("_"))
    assert rows[0]["context"].split("||||")[0] == multi[d]["dialogue"][0]["text"].lower()


def _copy(tmp_path: Path, files, csv_text: str) -> Path:
    folder, _, _ = files
    (tmp_path / "multireftest.json").write_bytes((folder / "multireftest.json").read_bytes())
    p = tmp_path / "mturk_rating_processed_output.csv"
    p.write_text(csv_text)
    return p


HEADER = "model,context_id,human_average_rating,response,prevgt,all_references,context\n"


def test_bad_inputs(tmp_path: Path, files) -> None:
    p = _copy(tmp_path, files, HEADER + "human,73_4,4.8,great,x,y,a||||b\nhred,73_4,high,ok,x,y,a||||b\n")
    with pytest.raises(InputError, match=r'mturk_rating_processed_output\.csv:3: field "human_average_rating"'):
        load_gupta_dailydialog(p)
    _copy(tmp_path, files, HEADER + "human,9999_4,4.8,great,x,y,a\n")
    with pytest.raises(InputError, match=r'csv:2: field "context_id"'):
        load_gupta_dailydialog(p)
    _copy(tmp_path, files, HEADER + "human,73_4,4.8\n")
    with pytest.raises(InputError, match=r"csv:2: field \"response\": expected 7 columns, found 3"):
        load_gupta_dailydialog(p)
    (tmp_path / "multireftest.json").write_text('{"index": 0, "dialogue": [}\n')
    with pytest.raises(InputError, match=r"multireftest\.json:1: not valid JSON"):
        load_gupta_dailydialog(p)
    (tmp_path / "multireftest.json").unlink()
    with pytest.raises(InputError, match=r"needs multireftest\.json"):
        load_gupta_dailydialog(p)


def test_repeated_rows_are_refused(tmp_path: Path, files) -> None:
    """A model's second row for one context was a second item of the same id (meta: 'scores item ... twice', naming
    no file); a context_id given another context kept the first row's, silently."""
    p = _copy(tmp_path, files, HEADER + "human,73_4,4.8,great,x,y,a||||b\nhred,73_4,3,ok,x,y,a||||b\n"
              "human,73_4,1.0,great,x,y,a||||b\n")  # fmt: skip
    with pytest.raises(InputError, match=r"csv:4: field \"model\": model 'human' answers context '73_4' again "
                       r"\(first on line 2\)"):  # fmt: skip
        load_gupta_dailydialog(p)
    _copy(tmp_path, files, HEADER + "human,73_4,4.8,great,x,y,a||||b\nhred,73_4,3,ok,x,y,a||||c\n")
    with pytest.raises(InputError, match=r"csv:3: field \"context\": context_id '73_4' was given another context "
                       r"on line 2"):  # fmt: skip
        load_gupta_dailydialog(p)
