"""LMStyle MTurk loader: counts, pseudonyms, and the query -> reference mapping."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from dialeval.data.lmstyle import MODELS, load_lmstyle_mturk
from dialeval.errors import InputError


@pytest.fixture(scope="module")
def raw(shared_data: Path):
    path = shared_data / "lmstyle/Batch_results_develop.csv"
    return path, list(csv.DictReader(path.open(newline="")))


def test_counts(raw) -> None:
    path, rows = raw
    kept = [r for r in rows if r["AssignmentStatus"] != "Rejected"]
    b = load_lmstyle_mturk(path)
    assert b.counts()["contexts"] == len({r["HITId"] for r in rows}) == 397
    assert b.counts()["items"] == 397 * 4 and b.counts()["systems"] == 4
    assert b.counts()["ratings"] == len(kept) * 4 * 2
    assert b.skipped["lmstyle: rejected MTurk assignment"] == len(rows) - len(kept) == 29
    assert b.counts()["annotators"] == len({r["WorkerId"] for r in kept})
    everything = load_lmstyle_mturk(path, include_rejected=True)
    assert everything.counts()["ratings"] == len(rows) * 8
    # several assignments of one HIT rate the same 4 candidates
    assert everything.counts()["items"] == 397 * 4


def test_spot_check_and_tags(raw) -> None:
    path, rows = raw
    b = load_lmstyle_mturk(path)
    row = rows[10]
    did = f"lmstyle-{row['Input.HIT']}"
    cand = next(c for c in b.candidates if c.id == f"{did}:vicuna13b")
    assert cand.text == row["Input.vicuna13b"].strip()
    assert cand.tags == {"task": row["Input.task"], "dataset": row["Input.dataset"], "system": "vicuna13b"}
    got = [r.value for r in b.ratings if r.item_id == cand.id and r.dimension == "style"]
    assert got == [float(row["Answer.Style_vicuna13b"])]


def test_worker_ids_never_stored(raw) -> None:
    path, rows = raw
    b = load_lmstyle_mturk(path, include_rejected=True)
    workers = {r["WorkerId"] for r in rows}
    annotators = {r.annotator for r in b.ratings}
    assert not workers & annotators
    assert annotators == {f"annotator-{i:03d}" for i in range(1, len(workers) + 1)}
    dump = repr(b.ratings) + repr(b.candidates) + repr(b.dialogues)
    assert not any(w in dump for w in workers)


def test_references_match_query_text(raw, shared_data: Path) -> None:
    path, _ = raw
    files = {
        "BST": ("lmstyle/BST/query.txt", "lmstyle/BST/ref/ref.txt"),
        "DD": ("lmstyle/daily_dialog/formality_query.txt", "lmstyle/daily_dialog/ref/formality_ref.txt"),
    }
    lines = {k: [(shared_data / f).read_text().split("\n") for f in v] for k, v in files.items()}
    b = load_lmstyle_mturk(path)
    unmatched = 0
    for c in b.candidates:
        if c.system != MODELS[0]:
            continue
        query = b.dialogues[c.dialogue_id].turns[0].text
        queries, refs = lines[c.tags["dataset"]]
        expected = list(dict.fromkeys(refs[i].strip() for i, q in enumerate(queries) if q.strip() == query))
        assert c.references == expected
        unmatched += not expected
    assert unmatched == 0 and "lmstyle: query not found in the query file (no reference)" not in b.skipped
    assert b.warnings == ["lmstyle: 4 queries are on several lines with different references (all kept)"]


def test_unmatched_query_is_counted(tmp_path: Path, raw, shared_data: Path) -> None:
    path, _ = raw
    text = path.read_text()
    p = tmp_path / "batch.csv"
    p.write_text(text)
    b = load_lmstyle_mturk(p)  # no query files beside it
    assert sum(n for why, n in b.skipped.items() if "no query/reference files" in why) == 397
    assert all(c.references == [] for c in b.candidates)


def test_bad_inputs(tmp_path: Path, raw) -> None:
    path, _ = raw
    lines = path.read_text().splitlines(keepends=True)
    header = lines[0]
    cols = next(csv.reader([header]))
    p = tmp_path / "batch.csv"
    row = next(csv.reader([lines[1]]))
    bad = list(row)
    bad[cols.index("Answer.Appropriateness_llama7b")] = "very"
    bad[cols.index("WorkerId")] = "another worker"  # a second assignment of the HIT
    with p.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(cols)
        w.writerow(row)
        w.writerow(bad)
    with pytest.raises(InputError, match=r'batch\.csv:3: field "Answer\.Appropriateness_llama7b": expected a number'):
        load_lmstyle_mturk(p)
    with p.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow([c for c in cols if c != "Input.task"])
    with pytest.raises(InputError, match=r'batch\.csv:1: field "Input\.task": missing column'):
        load_lmstyle_mturk(p)
    with p.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(cols)
        w.writerow(row[:30])
    with pytest.raises(InputError, match=r"batch\.csv:2: .*expected 45 columns, found 30"):
        load_lmstyle_mturk(p)


def test_a_row_read_as_another_rows_hit_is_refused(tmp_path: Path, raw) -> None:
    """A second row of an Input.HIT with another query was rated as the first row's items (its query dropped),
    and one assignment given twice (an export appended to itself) rated each item twice under one annotator;
    both loaded without a word (3192 ratings instead of 3176 + 8)."""
    path, _ = raw
    header, *rows = list(csv.reader(path.open(newline="")))
    first = rows[0]
    other = list(first)
    other[header.index("Input.Speaker")] = "a different query"
    other[header.index("WorkerId")] = "another worker"
    p = tmp_path / "batch.csv"
    for extra, message in ((other, r'batch\.csv:3: field "Input\.Speaker": differs from line 2, an earlier row of '
                                   r"Input\.HIT 200"),
                           (first, r'batch\.csv:3: field "WorkerId": the worker of line 2 \(annotator-001\) rates '
                                   r"Input\.HIT 200 again")):  # fmt: skip
        with p.open("w", newline="") as f:
            csv.writer(f).writerows([header, first, extra])
        with pytest.raises(InputError, match=message):
            load_lmstyle_mturk(p)
