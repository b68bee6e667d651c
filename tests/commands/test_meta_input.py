"""Bad input to ``score``, ``meta`` and ``--path`` through the real CLI in a subprocess: one clear error, no traceback.

Each case was found by an outside probe (issue 15, part 3); before the fix each one
either printed a Python traceback, exited 0 with a wrong result, or named no line.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

DIALEVAL = str(Path(sys.executable).parent / "dialeval")


def run(*args: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "COLUMNS": "200"}
    return subprocess.run([DIALEVAL, *map(str, args)], cwd=cwd, env=env, capture_output=True, text=True, timeout=300)


def refused(res: subprocess.CompletedProcess[str], *needles: str) -> None:
    """Exit status 2, no traceback, and every needle in the (unwrapped) error message."""
    assert res.returncode == 2, (res.returncode, res.stdout, res.stderr)
    assert "Traceback" not in res.stderr, res.stderr
    message = " ".join(res.stderr.split())
    for needle in needles:
        assert needle in message, (needle, res.stderr)


def jsonl(path: Path, rows: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


DIALOGUES = [{"id": "d1", "turns": [{"speaker": "A", "text": "hi"}]}, {"id": "d2", "turns": []}]
CANDIDATES = [
    {"id": "c1", "dialogue_id": "d1", "turn_index": 1, "system": "s", "text": "hello there"},
    {"id": "c2", "dialogue_id": "d1", "turn_index": 1, "system": "t", "text": "yo"},
]
RATINGS = [
    {"item_id": f"c{i}", "dimension": "Overall", "annotator": "a", "value": v} for i, v in ((1, 4), (2, 2), (3, 3))
]
SCORES = [
    {"item_id": f"c{i}", "metric": "m", "value": float(i), "context_id": "d1#1", "dialogue_id": "d1"}
    for i in (1, 2, 3)
]


@pytest.fixture
def records(tmp_path: Path) -> Path:
    jsonl(tmp_path / "dialogues.jsonl", DIALOGUES)
    jsonl(tmp_path / "ratings.jsonl", RATINGS)
    return tmp_path


def test_score_refuses_duplicate_candidate_and_dialogue_ids(records: Path) -> None:
    jsonl(records / "cands.jsonl", [*CANDIDATES, CANDIDATES[0]])
    res = run("score", "--dialogues", "dialogues.jsonl", "--candidates", "cands.jsonl", "-m", "length", "-o", "s.jsonl",
              "--no-cache", cwd=records)  # fmt: skip
    refused(res, 'cands.jsonl:3: field "id": duplicate id "c1" (first on line 1)')
    assert not (records / "s.jsonl").exists()
    jsonl(records / "cands.jsonl", CANDIDATES)
    jsonl(records / "dups.jsonl", [*DIALOGUES, DIALOGUES[0]])
    res = run("score", "--dialogues", "dups.jsonl", "--candidates", "cands.jsonl", "-m", "length", "-o", "s.jsonl",
              "--no-cache", cwd=records)  # fmt: skip
    refused(res, 'dups.jsonl:3: field "id": duplicate id "d1" (first on line 1)')


@pytest.mark.parametrize(
    ("candidate", "needle"),
    [
        ({"dialogue_id": "nope"}, 'cands.jsonl:2: field "dialogue_id": unknown dialogue "nope"'),
        ({"turn_index": 2}, 'cands.jsonl:2: field "turn_index": turn_index 2 is past the end of dialogue "d1"'),
    ],
)
def test_score_names_the_line_of_a_candidate_that_does_not_fit(
    records: Path, candidate: dict[str, object], needle: str
) -> None:
    jsonl(records / "cands.jsonl", [CANDIDATES[0], {**CANDIDATES[1], **candidate}])
    res = run("score", "--dialogues", "dialogues.jsonl", "--candidates", "cands.jsonl", "-m", "length", "-o", "s.jsonl",
              "--no-cache", cwd=records)  # fmt: skip
    refused(res, needle)


SCORE = ["score", "--dialogues", "dialogues.jsonl", "-m", "length", "-o", "s.jsonl", "--no-cache", "--candidates"]
TABLE = ["--response-col", "text", "--rating-col", "q=Overall"]


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        ([*SCORE, "latin1.jsonl"], "latin1.jsonl:2: not UTF-8 text: byte 0xe9 at column 12"),
        ([*SCORE, "garbage.bin"], "garbage.bin:1: not text: a NUL byte at column 1"),
        ([*SCORE, "folder"], "folder: is a folder, expected a file"),
        (["meta", "scores.jsonl", "-r", "latin1-r.jsonl"], "latin1-r.jsonl:2: not UTF-8 text"),
        (["meta", "scores.jsonl", "-r", "folder"], "folder: is a folder, expected a file"),
        (["meta", "garbage.bin", "-r", "ratings.jsonl"], "garbage.bin:1: not text"),
        (["meta", "scores.jsonl", "--path", "latin1.csv", *TABLE], "latin1.csv:3: not UTF-8 text"),
        (["score", "--path", "folder", *TABLE, "-o", "s.jsonl"], "folder: is a folder"),
        (["score", "--path", "garbage.bin", *TABLE, "-o", "s.jsonl"], "garbage.bin:1: not text"),
        (["score", "--path", "book.xlsx", *TABLE, "-o", "s.jsonl"], 'book.xlsx:1: not text but a ZIP archive (an Excel '
         '.xlsx or OpenDocument workbook?): save it as UTF-8 text (a sheet as "CSV UTF-8")'),
        (["score", "--path", "latin1.csv", *TABLE, "-o", "s.xlsx"], 's.xlsx: field "--output": names an Excel file, '
         "but Score records are written as JSON lines: name it s.jsonl"),
    ],
    ids=["score-latin1", "score-binary", "score-folder", "meta-r-latin1", "meta-r-folder", "meta-binary-scores",
         "meta-path-latin1", "score-path-folder", "score-path-binary", "score-path-xlsx", "score-output-xlsx"],
)  # fmt: skip
def test_non_utf8_binary_and_folders_are_refused_by_score_meta_and_path(
    records: Path, args: list[str], needle: str
) -> None:
    jsonl(records / "cands.jsonl", CANDIDATES)
    jsonl(records / "scores.jsonl", SCORES)
    (records / "latin1.jsonl").write_bytes(json.dumps(CANDIDATES[0]).encode() + b"\n" + b'{"id": "caf\xe9"}\n')
    (records / "latin1-r.jsonl").write_bytes(json.dumps(RATINGS[0]).encode() + b"\n" + b'{"annotator": "Jos\xe9"}\n')
    (records / "latin1.csv").write_bytes(b"text,q\nok,1\ncaf\xe9,2\n")
    (records / "garbage.bin").write_bytes(bytes(range(256)) * 4)
    with zipfile.ZipFile(records / "book.xlsx", "w") as z:  # an .xlsx is a ZIP archive of XML parts
        z.writestr("xl/worksheets/sheet1.xml", "<worksheet/>")
    (records / "folder").mkdir()
    refused(run(*args, cwd=records), needle)


@pytest.mark.parametrize("literal", ["Infinity", "-Infinity", "1e999"])
def test_meta_refuses_infinite_scores(records: Path, literal: str) -> None:
    lines = [json.dumps(s) for s in SCORES]
    lines[1] = lines[1].replace('"value": 2.0', f'"value": {literal}')
    (records / "scores.jsonl").write_text("\n".join(lines) + "\n")
    refused(run("meta", "scores.jsonl", "-r", "ratings.jsonl", cwd=records), 'scores.jsonl:2: field "value"', "finite")


NULLS = [{**s, "value": None, "extras": {"error": "model not installed"}} for s in SCORES]
OTHER = [{**s, "item_id": f"usr-tc-00:{s['item_id']}", "context_id": "x", "dialogue_id": "x"} for s in SCORES]


@pytest.mark.parametrize(
    ("rows", "needle"),
    [
        (NULLS, "scores.jsonl: none of its 3 scores has a value (all null; first reason: model not installed)"),
        ([], "scores.jsonl: no scores in this file"),
        (OTHER, 'scores.jsonl: none of its 3 scored items is rated on "Overall" in ratings.jsonl'),
    ],
    ids=["all-null", "empty", "another-benchmark"],
)
def test_meta_refuses_all_null_empty_and_unrelated_scores(
    records: Path, rows: list[dict[str, object]], needle: str
) -> None:
    jsonl(records / "scores.jsonl", rows)
    refused(run("meta", "scores.jsonl", "-r", "ratings.jsonl", cwd=records), needle)


def test_meta_on_scores_that_fit_gives_the_spearman_of_the_numbers(records: Path) -> None:
    jsonl(records / "scores.jsonl", SCORES)
    ok = run("meta", "scores.jsonl", "-r", "ratings.jsonl", "--boot", "0", "--level", "turn", "--method", "spearman",
             "--json", cwd=records)  # fmt: skip
    assert ok.returncode == 0, ok.stderr
    (row,) = json.loads(ok.stdout)["rows"]
    # Spearman of scores (1, 2, 3) with ratings (4, 2, 3): ranks (1, 2, 3) vs (3, 1, 2), d = (-2, 1, 1), so
    # 1 - 6 * 6 / (3 * (9 - 1)) = -0.5.
    assert row["value"] == pytest.approx(-0.5)


def test_meta_refuses_ratings_from_two_sources(records: Path) -> None:
    """-r with -b (or --path, or a table's options) read -r's ratings and left the others unread, silently."""
    jsonl(records / "scores.jsonl", SCORES)
    for other, name in ((["-b", "usr-tc"], "-b"), (["--path", "t.csv"], "--path"),
                        (["--rating-col", "q=Overall"], "your table's options")):  # fmt: skip
        refused(run("meta", "scores.jsonl", "-r", "ratings.jsonl", *other, cwd=records),
                f'field "--ratings": give --ratings or {name}, not both: each gives the ratings')


@pytest.mark.parametrize(
    ("content", "needle"),
    [(b"name: mine\nprompt: |\n  Rate {response}\noutputs: [\n", "bad.yaml:4: not valid YAML"),
     (b"name: mine\x80\n", "bad.yaml:1: not UTF-8 text: byte 0x80 at column 11"),
     (None, "bad.yaml: is a folder, expected a file")],
    ids=["truncated", "binary", "folder"],
)  # fmt: skip
def test_judge_run_with_a_bad_protocol_file_is_one_clear_error(
    records: Path, content: bytes | None, needle: str
) -> None:
    if content is None:
        (records / "bad.yaml").mkdir()
    else:
        (records / "bad.yaml").write_bytes(content)
    res = run("judge", "run", "--protocol", "bad.yaml", "-b", "usr-tc", "--limit", "1", "--out", "out", cwd=records)
    refused(res, needle)


def test_meta_refuses_an_annotator_rating_an_item_twice_in_a_ratings_file(records: Path) -> None:
    """c1 rated 4 by "a" twice: meta averaged both into c1's mean (annotator "a" counted twice), silently; a table's
    reader refused the same. Both ways to give rating records are checked: -r FILE and --path FOLDER."""
    jsonl(records / "scores.jsonl", SCORES)
    jsonl(records / "ratings.jsonl", [*RATINGS, {**RATINGS[0], "value": 5}])
    needle = 'ratings.jsonl:4: field "annotator": annotator "a" rates item "c1" on "Overall" twice (first on line 1)'
    refused(run("meta", "scores.jsonl", "-r", "ratings.jsonl", "--n-boot", "0", cwd=records), needle)
    jsonl(records / "candidates.jsonl", [*CANDIDATES, {**CANDIDATES[1], "id": "c3"}])
    refused(run("meta", "scores.jsonl", "--path", ".", "--n-boot", "0", cwd=records), needle)
