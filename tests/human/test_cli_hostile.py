"""`dialeval study create` and `serve` given broken input, run as a user runs it: a subprocess, exit code and stderr."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from tests.human.conftest import dialogues_and_candidates

from dialeval.jsonl import write_jsonl
from dialeval.schema import Rating


def dialeval(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    code = "from dialeval.cli import app; app()"
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, env=env, timeout=120)


@pytest.fixture
def inputs(tmp_path: Path) -> dict[str, Path]:
    dialogues, candidates = dialogues_and_candidates(n_contexts=3)
    write_jsonl(tmp_path / "dialogues.jsonl", dialogues.values())
    write_jsonl(tmp_path / "candidates.jsonl", [c for c in candidates if c.dialogue_id != "d2"])
    write_jsonl(tmp_path / "qual.jsonl", [c for c in candidates if c.dialogue_id == "d2"])
    return {"dialogues": tmp_path / "dialogues.jsonl", "candidates": tmp_path / "candidates.jsonl",
            "qual": tmp_path / "qual.jsonl"}  # fmt: skip


def create(study: Path, inputs: dict[str, Path], *extra: str) -> subprocess.CompletedProcess[str]:
    args = ["study", "create", str(study), "--dialogues", str(inputs["dialogues"])]
    # a default that extra gives again would be an option given twice, which is refused
    given = [("--annotators", "2"), ("--per-item", "1")]
    defaults = [w for opt, value in given if opt not in extra for w in (opt, value)]
    return dialeval(*args, "--candidates", str(inputs["candidates"]), *defaults, *extra)


def test_a_create_that_fails_half_way_leaves_nothing_and_the_retry_succeeds(
    tmp_path: Path, inputs: dict[str, Path]
) -> None:
    """The qualification ratings were checked after the tables were written: that failure used to leave a study.db
    that made every retry answer "a study already exists here". They are now checked before anything is written.
    One reference annotator: the threshold is a fixed one (the default needs two references)."""
    study = tmp_path / "study"
    gold = [
        Rating(item_id=f"d2:{s}", dimension="Appropriateness", annotator="ref1", value="positive") for s in ("m1", "m2")
    ]
    write_jsonl(tmp_path / "bad_gold.jsonl", [*gold, Rating(item_id="d9:m1", dimension="Appropriateness",
                                                            annotator="ref1", value="positive")])  # fmt: skip
    bad = create(study, inputs, "--qualification", str(inputs["qual"]), "--qualification-ratings",
                 str(tmp_path / "bad_gold.jsonl"), "--threshold", "0.21")  # fmt: skip
    assert bad.returncode == 2, bad.stderr
    assert "Traceback" not in bad.stderr
    assert f'bad_gold.jsonl:3: field "item_id": no candidate of --qualification ({inputs["qual"]}) has the id "d9:m1"' \
        in bad.stderr  # it named neither the file nor the line
    assert not study.exists()  # no folder, no study.db, no temporary file, no access.json
    write_jsonl(tmp_path / "gold.jsonl", gold)
    good = create(study, inputs, "--qualification", str(inputs["qual"]), "--qualification-ratings",
                  str(tmp_path / "gold.jsonl"), "--threshold", "0.21", "--json")  # fmt: skip
    assert good.returncode == 0, good.stderr
    assert json.loads(good.stdout.splitlines()[0])["qualification_units"] == 1
    assert sorted(p.name for p in study.iterdir()) == ["access.json", "study.db"]
    assert {stat.S_IMODE((study / n).stat().st_mode) for n in ("access.json", "study.db")} == {0o600}
    again = create(study, inputs)
    assert again.returncode == 2 and "a study already exists here" in again.stderr and "Traceback" not in again.stderr


@pytest.mark.parametrize(
    ("change", "said"),
    [({"dimension": "Appropriatenes"}, 'field "dimension": protocol mousavi-turn has no dimension "Appropriatenes" '
      '(did you mean "Appropriateness"?); its dimensions: Appropriateness, Contextualization, Listening, Correctness'),
     ({"value": "3"}, "field \"value\": attention rating value '3' is not an answer of Appropriateness (positive, "
      "negative, dont_know)")],
)  # fmt: skip
def test_a_gold_rating_the_protocol_cannot_hold_names_its_file_and_line(
    tmp_path: Path, inputs: dict[str, Path], change: dict[str, str], said: str
) -> None:
    """A qualification or attention rating with a dimension or a value the protocol lacks said only
    "attention rating has unknown dimension 'X'", with neither the file, nor the line, nor what the protocol has."""
    ok = Rating(item_id="d2:m1", dimension="Appropriateness", annotator="ref1", value="positive")
    write_jsonl(tmp_path / "gold.jsonl", [ok, ok.model_copy(update={"item_id": "d2:m2", **change})])  # not a twin
    res = create(tmp_path / "study", inputs, "--attention", str(inputs["qual"]), "--attention-ratings",
                 str(tmp_path / "gold.jsonl"), "--attention-per-batch", "1")  # fmt: skip
    assert res.returncode == 2 and "Traceback" not in res.stderr, res.stderr
    assert res.stderr.strip() == f"error: {tmp_path / 'gold.jsonl'}:2: {said}"
    assert not (tmp_path / "study").exists()


@pytest.mark.parametrize("what", ["qualification", "attention"])
def test_a_gold_rating_given_twice_names_both_lines(tmp_path: Path, inputs: dict[str, Path], what: str) -> None:
    """One reference rating an item on one dimension twice (a pasted line, a changed mind) was SQLAlchemy's
    IntegrityError traceback from the gold table's primary key, after every file had been read. Its field is the one
    read_ratings names for the same mistake ("annotator"; it was "dimension")."""
    ok = Rating(item_id="d2:m1", dimension="Appropriateness", annotator="ref1", value="positive")
    other = ok.model_copy(update={"item_id": "d2:m2"})
    write_jsonl(tmp_path / "gold.jsonl", [ok, other, ok.model_copy(update={"value": "negative"})])
    extra = ["--threshold", "0.21"] if what == "qualification" else ["--attention-per-batch", "1"]
    res = create(tmp_path / "study", inputs, f"--{what}", str(inputs["qual"]), f"--{what}-ratings",
                 str(tmp_path / "gold.jsonl"), *extra)  # fmt: skip
    assert res.returncode == 2 and "Traceback" not in res.stderr, res.stderr
    assert res.stderr.strip() == (f'error: {tmp_path / "gold.jsonl"}:3: field "annotator": annotator "ref1" rates '
                                  'item "d2:m1" on "Appropriateness" twice (first on line 1)')  # fmt: skip
    assert not (tmp_path / "study").exists()


def test_a_gold_rating_at_the_dialogue_level_is_refused(tmp_path: Path, inputs: dict[str, Path]) -> None:
    """A batch's items are candidates (turn level). read_ratings, which now reads the file, keys a rating by its level
    too: one item rated at both levels would pass as two ratings, two gold rows of one primary key (a traceback)."""
    ok = Rating(item_id="d2:m1", dimension="Appropriateness", annotator="ref1", value="positive")
    write_jsonl(tmp_path / "gold.jsonl", [ok, ok.model_copy(update={"level": "dialogue"})])
    res = create(tmp_path / "study", inputs, "--qualification", str(inputs["qual"]), "--qualification-ratings",
                 str(tmp_path / "gold.jsonl"), "--threshold", "0.21")  # fmt: skip
    assert _one_error(res) == (f'error: {tmp_path / "gold.jsonl"}:2: field "level": a qualification batch rates its '
                               'candidates: level "turn" (or none), not "dialogue"')  # fmt: skip
    assert not (tmp_path / "study").exists()


@pytest.mark.parametrize(("annotators", "said"), [
    (("", "ref2"), 'gold.jsonl:1: field "annotator": empty annotator: each rating names who gave it'),
    (("ref1", "ref1 "), 'gold.jsonl:2: field "annotator": annotator "ref1" rates item "d2:m1" on "Appropriateness" '
                        "twice (first on line 1)"),
])  # fmt: skip
def test_a_gold_rating_s_annotator_is_read_as_a_ratings_file_reads_it(
    tmp_path: Path, inputs: dict[str, Path], annotators: tuple[str, str], said: str
) -> None:
    """Gold ratings were read without read_ratings' rules: an annotator "" was stored as a reference of no name,
    and "ref1 " as a second reference beside "ref1" (its answer a second reference's, raising the default threshold)."""
    rows = [Rating(item_id="d2:m1", dimension="Appropriateness", annotator=a, value=v)
            for a, v in zip(annotators, ("positive", "negative"), strict=True)]  # fmt: skip
    write_jsonl(tmp_path / "gold.jsonl", rows)
    res = create(tmp_path / "study", inputs, "--qualification", str(inputs["qual"]), "--qualification-ratings",
                 str(tmp_path / "gold.jsonl"))  # fmt: skip
    assert _one_error(res) == f"error: {tmp_path}/{said}"
    assert not (tmp_path / "study").exists()


def test_a_gold_rating_s_dimension_is_read_stripped(tmp_path: Path, inputs: dict[str, Path]) -> None:
    """A dimension "Appropriateness " was refused as one the protocol lacks, "did you mean "Appropriateness"?";
    a ratings file's dimension is read stripped, and so is a gold one now."""
    import sqlite3

    ok = Rating(item_id="d2:m1", dimension="Appropriateness ", annotator="ref1", value="positive")
    write_jsonl(tmp_path / "gold.jsonl", [ok])
    res = create(tmp_path / "study", inputs, "--attention", str(inputs["qual"]), "--attention-ratings",
                 str(tmp_path / "gold.jsonl"), "--attention-per-batch", "1")  # fmt: skip
    assert res.returncode == 0, res.stderr
    db = sqlite3.connect(tmp_path / "study" / "study.db")
    stored = db.execute("SELECT annotator, criterion, value FROM gold").fetchall()
    db.close()
    assert stored == [("ref1", "Appropriateness", "positive")]


@pytest.mark.parametrize(("what", "why"), [
    ("qualification", "a worker is decided once they have answered the questions the reference annotators rated, "
                      "so with none no worker would ever reach the main batches"),
    ("attention", "an attention check is passed by giving its expected answer, and none would be given"),
])  # fmt: skip
def test_gold_ratings_without_a_rating_are_refused(
    tmp_path: Path, inputs: dict[str, Path], what: str, why: str
) -> None:
    """An empty ratings file (or one of blank lines) made a study: with a fixed threshold, a qualification batch
    whose workers were never decided (decide_qualification waits for the rated questions: there were none), so
    every worker saw only that batch, for ever; attention units that checked nothing."""
    (tmp_path / "gold.jsonl").write_text("\n\n", encoding="utf-8")
    extra = ["--threshold", "0.21"] if what == "qualification" else ["--attention-per-batch", "1"]
    res = create(tmp_path / "study", inputs, f"--{what}", str(inputs["qual"]), f"--{what}-ratings",
                 str(tmp_path / "gold.jsonl"), *extra)  # fmt: skip
    assert res.returncode == 2 and "Traceback" not in res.stderr, res.stderr
    assert res.stderr.strip() == f"error: {tmp_path / 'gold.jsonl'}: no ratings in this file: {why}"
    assert not (tmp_path / "study").exists()


def test_a_dialogue_without_turns_in_a_dialogue_level_study_names_its_line(tmp_path: Path) -> None:
    """A dialogue-level study (every dialogue one unit) took a dialogue with no turns: a page with nothing to rate.
    A turn-level protocol without candidates keeps its own error (nothing to annotate)."""
    dialogues, _ = dialogues_and_candidates(n_contexts=2)
    path = tmp_path / "dialogues.jsonl"
    write_jsonl(path, [dialogues["d0"], dialogues["d1"].model_copy(update={"turns": []})])
    args = ["study", "create", str(tmp_path / "s"), "--dialogues", str(path), "--annotators", "1", "--per-item", "1"]
    res = dialeval(*args, "--protocol", "comperdial-dialogue")
    assert res.returncode == 2 and "Traceback" not in res.stderr, res.stderr
    assert res.stderr.strip() == f'error: {path}:2: field "turns": has no turns: a dialogue-level study rates whole ' \
                                 "dialogues"  # fmt: skip
    assert not (tmp_path / "s").exists()
    res = dialeval(*args, "--protocol", "comperdial")
    assert res.returncode == 2 and "nothing to annotate" in res.stderr, res.stderr
    assert dialeval(*args, "--protocol", "comperdial-dialogue", "--limit", "1").returncode == 0


@pytest.mark.parametrize("which", ["dialogues", "candidates", "qualification-ratings", "protocol"])
@pytest.mark.parametrize("content", ["latin-1", "binary", "directory"])
def test_unreadable_files_get_one_clear_error_naming_the_file(
    tmp_path: Path, inputs: dict[str, Path], which: str, content: str
) -> None:
    bad = tmp_path / ("bad.yaml" if which == "protocol" else "bad.jsonl")
    if content == "directory":
        bad.mkdir()
    else:
        bad.write_bytes(b'{"id": "caf\xe9"}\n' if content == "latin-1" else bytes(range(256)) * 4)
    files = {**inputs, which: bad}
    args = ["study", "create", str(tmp_path / "study"), "--dialogues", str(files["dialogues"]),
            "--candidates", str(files["candidates"]), "--annotators", "2", "--per-item", "1"]  # fmt: skip
    if which == "qualification-ratings":
        args += ["--qualification", str(inputs["qual"]), "--qualification-ratings", str(bad)]
    if which == "protocol":
        args += ["--protocol", str(bad)]
    result = dialeval(*args)
    assert result.returncode == 2, (result.stdout, result.stderr)
    assert "Traceback" not in result.stderr
    errors = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(errors) == 1 and errors[0].startswith("error: ") and str(bad) in errors[0], result.stderr
    assert not (tmp_path / "study" / "study.db").exists()


def test_a_protocol_with_a_javascript_guidelines_link_is_refused(tmp_path: Path, inputs: dict[str, Path]) -> None:
    from importlib import resources

    text = (resources.files("dialeval.human") / "protocols" / "mousavi-turn.yaml").read_text("utf-8")
    assert "full_guidelines_url: https://" in text
    bad = tmp_path / "evil.yaml"
    bad.write_text(text.replace("full_guidelines_url: https://", "full_guidelines_url: JavaScript:alert(1)//"))
    result = create(tmp_path / "study", inputs, "--protocol", str(bad))
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert str(bad) in result.stderr and "full_guidelines_url" in result.stderr and "http" in result.stderr


def _append(path: Path, line: str) -> list[str]:
    with path.open("a", encoding="utf-8") as handle:
        handle.write(line + "\n")
    return []


def _gold(tmp_path: Path, inputs: dict[str, Path], *refs: str) -> list[str]:
    ratings = [Rating(item_id=f"d2:{s}", dimension="Appropriateness", annotator=r, value="positive")
               for s in ("m1", "m2") for r in refs]  # fmt: skip
    write_jsonl(tmp_path / "gold.jsonl", ratings)
    return ["--qualification", str(inputs["qual"]), "--qualification-ratings", str(tmp_path / "gold.jsonl")]


D0 = '{"id": "d0", "turns": [{"speaker": "A", "text": "again"}]}'
C0 = '{"id": "d0:m1", "dialogue_id": "d0", "turn_index": 2, "system": "m3", "text": "twice"}'
Setup = Callable[[Path, dict[str, Path]], list[str]]  # writes the bad input; returns extra options
REFUSALS: dict[str, tuple[Setup, str]] = {
    # issue 21, item 3: study create reads its inputs through the validation `score` uses
    "duplicate dialogue id": (lambda t, i: _append(i["dialogues"], D0),
                              '{dialogues}:4: field "id": duplicate id "d0" (first on line 1)'),
    "turn_index past the end": (
        lambda t, i: _append(i["candidates"], C0.replace('"d0:m1"', '"d0:m9"').replace(": 2,", ": 9,")),
        '{candidates}:5: field "turn_index": turn_index 9 is past the end of dialogue "d0" (3 turns)'),
    "turn_index past the end, qualification": (
        lambda t, i: _append(i["qual"], C0.replace('"d0:m1"', '"d0:m9"').replace(": 2,", ": 4,"))
        + _gold(t, i, "ref1", "ref2"),
        '{qual}:3: field "turn_index": turn_index 4 is past the end of dialogue "d0" (3 turns)'),
    # item 4
    "duplicate candidate id": (lambda t, i: _append(i["candidates"], C0),
                               '{candidates}:5: field "id": duplicate id "d0:m1" (first on line 1)'),
    "empty candidates file": (lambda t, i: [] if i["candidates"].write_text("") == 0 else ["?"],
                              "{candidates}: no candidates in this file"),
    # --dialogues and --candidates were left unread, silently
    "--path with --dialogues": (lambda t, i: ["--path", str(i["candidates"])],
                                'field "--dialogues": give --dialogues/--candidates or --path, not both'),
    "-b with --dialogues": (lambda t, i: ["-b", "usr-pc"], 'field "--dialogues": give --dialogues/--candidates or -b'),
    "no annotators": (lambda t, i: ["--annotators", "0", "--per-item", "0"],
                      'field "--annotators": needs at least 1 annotator, got 0'),
    "batch size 0": (lambda t, i: ["--batch-size", "0"], 'field "--batch-size": must be at least 1, got 0'),
    "reference named like a worker": (lambda t, i: _gold(t, i, "a01", "ref2"),
                                      'field "annotator": reference annotator "a01" has the name of a worker'),
    "reference named admin": (lambda t, i: _gold(t, i, "admin", "ref2"),
                              'field "annotator": reference annotator "admin" has the name of the admin'),
    "qualification without its ratings": (lambda t, i: ["--qualification", str(i["qual"])],
                                          "--qualification and --qualification-ratings go together"),
    "one reference, default threshold": (lambda t, i: _gold(t, i, "ref1"),
                                         "needs two or more of them (found 1); add references or give a fixed"),
    # item 5: every numeric option's range
    "per item -1": (lambda t, i: ["--per-item", "-1"],
                    'field "--per-item": must be between 1 and the number of annotators (2), got -1'),
    "per item over annotators": (lambda t, i: ["--per-item", "3"], 'field "--per-item": must be between 1'),
    "threshold nan": (lambda t, i: [*_gold(t, i, "r1", "r2"), "--threshold", "nan"],
                      "field \"--threshold\": must be a Fleiss' kappa between -1 and 1, got nan"),
    "threshold 1.5": (lambda t, i: ["--threshold", "1.5"], "between -1 and 1, got 1.5"),
    "threshold -inf": (lambda t, i: ["--threshold", "-inf"], "between -1 and 1, got -inf"),
    # a study was made, and the threshold held nobody to anything
    "threshold without a qualification batch": (lambda t, i: ["--threshold", "0.3"],
                                                'field "--threshold": a qualification threshold (0.3) needs a '
                                                "qualification batch to hold workers to: give --qualification"),
    "attention per batch -1": (lambda t, i: ["--attention-per-batch", "-1"],
                               'field "--attention-per-batch": must be 0 or more, got -1'),
    # the next three were: "attention_per_batch > 0 needs attention-check items" (no option named), a study
    # whose attention items no annotator saw, and a study made with a seed the others refuse
    "checks per batch without items": (lambda t, i: ["--attention-per-batch", "2"],
                                       'field "--attention-per-batch": 2 attention checks per batch need their items'),
    "check items never shown": (lambda t, i: ["--attention", str(i["candidates"])],
                                'field "--attention": attention-check items are given, but --attention-per-batch is 0'),
    "seed -1": (lambda t, i: ["--seed", "-1"], 'field "--seed": must be >= 0, got -1'),
    "a protocol misspelt": (lambda t, i: ["--protocol", "mousavi"],
                            'field "--protocol": unknown protocol "mousavi"; did you mean "mousavi-turn"?'),
}  # fmt: skip


@pytest.mark.parametrize("case", list(REFUSALS))
def test_study_create_refuses_in_one_line_and_writes_nothing(
    tmp_path: Path, inputs: dict[str, Path], case: str
) -> None:
    """Issue 21, items 3-5: each used to be a traceback, a silently wrong study (the last of two dialogues
    with one id; a context cut at the dialogue's end; 8 assignments for --per-item -1) or a study nobody
    can qualify in (--threshold nan). Now: exit 2, one line naming the file and line or the option."""
    setup, expected = REFUSALS[case]
    result = create(tmp_path / "study", inputs, *setup(tmp_path, inputs))
    assert result.returncode == 2, (result.stdout, result.stderr)
    assert "Traceback" not in result.stderr
    errors = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(errors) == 1 and errors[0].startswith("error: "), result.stderr
    assert expected.format(**inputs) in errors[0], errors[0]
    assert not (tmp_path / "study").exists()


def _one_error(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 2 and "Traceback" not in result.stderr, (result.stdout, result.stderr)
    errors = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(errors) == 1 and errors[0].startswith("error: "), result.stderr
    return errors[0]


def test_a_folder_that_is_not_a_whole_study_is_one_error_and_no_new_database(
    tmp_path: Path, inputs: dict[str, Path]
) -> None:
    """A missing access.json was typer's boxed usage error; a damaged one, or a study.db that is gone, a
    traceback (json's, SQLAlchemy's) after SQLite had created an empty study.db in its place."""
    study = tmp_path / "study"
    assert create(study, inputs).returncode == 0
    out = str(tmp_path / "r.jsonl")
    for command in (["export", str(tmp_path / "nowhere"), out], ["links", str(tmp_path / "nowhere")]):
        assert "nowhere/access.json: not found: not a study folder" in _one_error(dialeval("study", *command))
    (tmp_path / "t.csv").write_text("a,b\n")  # it said "t.csv/access.json: not found"
    assert f"{tmp_path / 't.csv'}: is a file, not a study folder" in _one_error(dialeval("study", "links",
                                                                                       str(tmp_path / "t.csv")))
    (study / "study.db").rename(tmp_path / "aside.db")
    for command in (["export", str(study), out], ["reassign", str(study)], ["report", str(study), "--output", out]):
        message = _one_error(dialeval("study", *command))
        assert f"the study's database {study.resolve() / 'study.db'} is not there" in message
    assert sorted(p.name for p in study.iterdir()) == ["access.json"] and not (tmp_path / "r.jsonl").exists()
    (study / "access.json").write_text('{"admin": "x",\n "annotators": {oops}}\n')
    error = _one_error(dialeval("study", "links", str(study)))
    assert "access.json:2: not valid JSON (Expecting property name enclosed in double quotes at column 17)" in error


def test_a_moved_or_copied_study_uses_its_own_database(tmp_path: Path, inputs: dict[str, Path]) -> None:
    """access.json named the database by its absolute path: a moved study failed, a copy wrote into the original."""
    assert create(tmp_path / "first", inputs).returncode == 0
    assert "db_url" not in json.loads((tmp_path / "first" / "access.json").read_text())
    shutil.copytree(tmp_path / "first", tmp_path / "copy")
    (tmp_path / "first").rename(tmp_path / "moved")
    for folder in ("moved", "copy"):
        result = dialeval("study", "export", str(tmp_path / folder), str(tmp_path / f"{folder}.jsonl"))
        assert result.returncode == 0 and "0 ratings" in result.stdout, result.stderr
    assert not (tmp_path / "first").exists()


def test_export_refuses_to_write_over_the_study_it_reads(tmp_path: Path, inputs: dict[str, Path]) -> None:
    """`study export STUDY STUDY/study.db` replaced the database, every answer in it, with the (empty) export."""
    study = tmp_path / "study"
    assert create(study, inputs).returncode == 0
    before = {name: (study / name).read_bytes() for name in ("study.db", "access.json")}
    for name in before:
        message = _one_error(dialeval("study", "export", str(study), "-o", str(study / name)))
        assert message == (f'error: {study / name}: field "--output": is read from the folder given to STUDY_DIR '
                           f"({study}): writing it would destroy the input; give another name")  # fmt: skip
    assert {name: (study / name).read_bytes() for name in before} == before
    done = dialeval("study", "export", str(study), "-o", str(tmp_path / "r.jsonl"))  # the study still reads
    assert done.returncode == 0
    assert done.stdout.strip() == (f"wrote 0 ratings to {tmp_path / 'r.jsonl'} (no answer yet: annotators answer "
                                   "through `dialeval study serve`)")  # fmt: skip
    # -o as every other command writes; OUTPUT, its earlier form, once: both, or neither, is one error
    both = dialeval("study", "export", str(study), str(tmp_path / "a.jsonl"), "-o", str(tmp_path / "b.jsonl"))
    assert _one_error(both) == 'error: field "--output": give the rating records to write once: --output or OUTPUT, ' \
                               "not both"  # fmt: skip
    assert _one_error(dialeval("study", "export", str(study))) == \
        'error: field "--output": give the rating records to write: -o ratings.jsonl'
    assert not list(tmp_path.glob("[ab].jsonl"))


def test_a_database_that_is_not_a_study_is_one_error(tmp_path: Path, inputs: dict[str, Path]) -> None:
    """An emptied or overwritten study.db was SQLAlchemy's traceback ("no such table: study_meta")."""
    study = tmp_path / "study"
    assert create(study, inputs).returncode == 0
    db, rep = study.resolve() / "study.db", str(tmp_path / "rep")
    cases = {b"": "is not a study's database (it has no study_meta table)",
             b'{"item_id": "x"}\n': "is not a study's database: file is not a database"}  # fmt: skip
    for content, why in cases.items():
        db.write_bytes(content)
        for command in (["export", str(study), str(tmp_path / "r.jsonl")], ["report", str(study), "-o", rep]):
            assert _one_error(dialeval("study", *command)) == f"error: {db}: {why}"
        assert db.read_bytes() == content
    assert not (tmp_path / "r.jsonl").exists()


def test_report_takes_o_and_refuses_a_negative_seed(tmp_path: Path, inputs: dict[str, Path]) -> None:
    """`study report` alone had no -o; a negative --seed was numpy's traceback."""
    study = tmp_path / "study"
    assert create(study, inputs).returncode == 0
    assert 'field "--seed": must be >= 0, got -1' in _one_error(
        dialeval("study", "report", str(study), "-o", str(tmp_path / "rep"), "--seed", "-1")
    )
    assert not list(tmp_path.glob("rep*"))
    result = dialeval("study", "report", str(study), "-o", str(tmp_path / "rep"), "--n-boot", "10")
    assert result.returncode == 0, result.stderr
    assert sorted(p.name for p in tmp_path.glob("rep*")) == ["rep.html", "rep.md"]
    # "x/.." has no name to put .md after: it was pathlib's ValueError traceback after the statistics were computed
    assert "give the report's file name, without suffix" in _one_error(
        dialeval("study", "report", str(study), "-o", str(tmp_path / ".."))
    )


@pytest.mark.parametrize(("command", "words"), [
    (["report", "{study}", "--output", "{tmp}/rep", "--n-boot", "0"], "must be at least 1"),
    (["import-agreement", "-b", "usr-tc", "--n-boot", "-5"], "must be at least 1"),
    # each resample is one Krippendorff's alpha in a loop: 10**20 of them never ended
    (["report", "{study}", "--output", "{tmp}/rep", "--n-boot", "100001"], "must be at most 100,000 resamples"),
    (["import-agreement", "-b", "usr-tc", "--n-boot", str(10**20)], "must be at most 100,000 resamples"),
])  # fmt: skip
def test_a_bootstrap_resample_count_out_of_range_is_refused_before_any_work(
    tmp_path: Path, inputs: dict[str, Path], command: list[str], words: str
) -> None:
    """import-agreement gave numpy's IndexError; a report of a study without answers said "0 resamples"."""
    assert create(tmp_path / "study", inputs).returncode == 0
    args = [a.format(study=tmp_path / "study", tmp=tmp_path) for a in command]
    assert 'field "--n-boot": ' + words in _one_error(dialeval("study", *args))
    assert not list(tmp_path.glob("rep*"))


def test_study_serve_refuses_what_it_cannot_serve_in_one_line(
    tmp_path: Path, inputs: dict[str, Path], taken_port: int
) -> None:
    """--port 99999 was uvicorn's OverflowError traceback; --workers 0 served anyway, --workers 10**20 forked
    without end; an address not on this machine was a traceback. A subprocess with a timeout, as a refusal
    that does not happen serves forever."""
    study = tmp_path / "study"
    assert create(study, inputs).returncode == 0
    cases = {
        ("--port", "99999"): 'field "--port": must be a TCP port, 1 to 65535, got 99999',
        ("--port", str(taken_port)): f'field "--port": 127.0.0.1:{taken_port} cannot be served: Address already in use',
        ("--workers", "0"): 'field "--workers": must be at least 1, got 0',
        # uvicorn forked one worker process after another for this one
        ("--workers", str(10**20)): f'field "--workers": must be at most {4 * (os.cpu_count() or 1)} (4 per core',
        ("--host", "192.0.2.1"): 'field "--host": 192.0.2.1:8000 cannot be served',  # TEST-NET-1: not here
    }
    for args, message in cases.items():
        assert message in _one_error(dialeval("study", "serve", str(study), *args)), args


def test_an_export_named_as_another_format_is_refused(tmp_path: Path, inputs: dict[str, Path]) -> None:
    """study export STUDY out.csv wrote JSON lines into out.csv."""
    study = tmp_path / "study"
    assert create(study, inputs).returncode == 0
    res = dialeval("study", "export", str(study), "--output", str(tmp_path / "out.csv"))
    assert res.returncode == 2 and "Traceback" not in res.stderr
    assert f'{tmp_path / "out.csv"}: field "--output": names a CSV file, but Rating records are written as JSON ' \
           "lines: name it out.jsonl" in res.stderr  # fmt: skip
    assert not (tmp_path / "out.csv").exists()


def test_annotators_given_no_unit_are_noted_and_too_many_are_refused(tmp_path: Path, inputs: dict[str, Path]) -> None:
    """Two units at one annotator each leave three of five annotators idle: it was silent (their links led to an
    empty page). ``--annotators 10**20`` made ids without end (killed after 5 minutes)."""
    idle = create(tmp_path / "idle", inputs, "--annotators", "5")
    assert idle.returncode == 0, idle.stderr
    assert "note: 3 of 5 annotators get no unit (2 units to rate, 2 assignments); lower --annotators or raise " \
        "--per-item" in idle.stderr
    write_jsonl(tmp_path / "gold.jsonl", [Rating(item_id=f"d2:{s}", dimension="Appropriateness", annotator="ref1",
                                                 value="positive") for s in ("m1", "m2")])  # fmt: skip
    qualified = create(tmp_path / "qual", inputs, "--annotators", "5", "--qualification", str(inputs["qual"]),
                       "--qualification-ratings", str(tmp_path / "gold.jsonl"), "--threshold", "0.21", "--json")
    assert qualified.returncode == 0, qualified.stderr
    assert json.loads(qualified.stdout)["annotators_without_main_units"] == 3
    assert "note: 3 of 5 annotators get no main unit, only the qualification batch; `dialeval study reassign` " \
        "gives them the units of workers who fail it" in qualified.stderr
    assert 'field "--annotators": must be at most 10,000, got 100,000,000,000,000,000,000' in _one_error(
        create(tmp_path / "many", inputs, "--annotators", str(10**20))
    )
    assert not (tmp_path / "many").exists()


@pytest.mark.parametrize(("case", "expected"), [
    ("folder below a file", '{t}/notes.txt/study: field "STUDY_DIR": cannot be created: {t}/notes.txt is a file, not '
                            "a folder"),
    ("folder is a file", '{t}/notes.txt: field "STUDY_DIR": is an existing file; give a folder to write the '
                         "outputs in"),
    ("--db below a file", '{t}/notes.txt/x.db: field "--db": cannot be created: {t}/notes.txt is a file, not a folder'),
])  # fmt: skip
def test_a_study_folder_or_database_that_cannot_be_made_is_refused_before_anything_is_written(
    tmp_path: Path, inputs: dict[str, Path], case: str, expected: str
) -> None:
    """Each was a NotADirectoryError or FileExistsError traceback after the inputs were read; with --db, the study
    folder was left behind, empty. The words are check_output's, which every command's outputs go through."""
    (tmp_path / "notes.txt").write_text("x")
    study = {"folder below a file": tmp_path / "notes.txt" / "study", "folder is a file": tmp_path / "notes.txt"}
    db = ["--db", f"sqlite:///{tmp_path / 'notes.txt' / 'x.db'}"] if case == "--db below a file" else []
    result = create(study.get(case, tmp_path / "study"), inputs, *db)
    assert _one_error(result) == "error: " + expected.format(t=tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["candidates.jsonl", "dialogues.jsonl", "notes.txt",
                                                          "qual.jsonl"]  # fmt: skip
    assert (tmp_path / "notes.txt").read_text() == "x"


@pytest.mark.parametrize("where", ["STUDY_DIR", "--db"])
def test_a_study_in_a_folder_that_cannot_be_written_is_refused_before_anything_is_written(
    tmp_path: Path, inputs: dict[str, Path], monkeypatch: pytest.MonkeyPatch, where: str
) -> None:
    """A read-only folder (here one os.access says is, as root writes anywhere): making the study folder, or the
    database's temporary file, raised PermissionError, a traceback; with --db there, the study folder was made
    first and left empty. Unpatched, the study was created here: nothing looked before writing."""
    from tests.commands.cli_runner import invoke, refused

    ro = tmp_path / "ro"
    ro.mkdir()
    real = os.access
    monkeypatch.setattr(os, "access", lambda p, mode: False if Path(p) == ro else real(p, mode))
    study, db = (ro / "study", []) if where == "STUDY_DIR" else (tmp_path / "study", ["--db", f"sqlite:///{ro}/x.db"])
    named = ro / "study" if where == "STUDY_DIR" else ro / "x.db"
    res = invoke("study", "create", study, "--dialogues", inputs["dialogues"], "--candidates", inputs["candidates"],
                 "--annotators", "2", "--per-item", "1", *db)  # fmt: skip
    refused(res, f'{named}: field "{where}": cannot be written: no permission to write in {ro}')
    assert not any(ro.iterdir()) and not (tmp_path / "study").exists()


def test_import_agreement_on_an_export_with_no_answer_yet_says_so(tmp_path: Path, inputs: dict[str, Path]) -> None:
    """`study export` of a study with no answer writes an empty file ("wrote 0 ratings"); `import-agreement --path` on
    it answered "a table needs a mapping: --mapping m.yaml, or the --*-col options", as if it were no export at all."""
    assert create(tmp_path / "s", inputs).returncode == 0
    export = dialeval("study", "export", str(tmp_path / "s"), "-o", str(tmp_path / "r.jsonl"))
    assert export.returncode == 0 and "wrote 0 ratings" in export.stdout, export.stderr
    got = dialeval("study", "import-agreement", "--path", str(tmp_path / "r.jsonl"), "--n-boot", "10")
    assert got.returncode == 2 and "Traceback" not in got.stderr, got.stderr
    assert f"{tmp_path / 'r.jsonl'}: holds no ratings" in got.stderr and "mapping" not in got.stderr, got.stderr
