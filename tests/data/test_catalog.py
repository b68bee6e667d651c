"""The catalog: hashes of the real files, shared -> bundled fallback, errors, warnings."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path
from typing import NoReturn

import pytest

from dialeval.data import catalog
from dialeval.data.catalog import DATASETS, list_benchmarks, load_benchmark
from dialeval.errors import InputError, UnknownNameError

EXPECTED_NAMES = {
    "usr-tc", "usr-pc", "dstc9", "predictive-engagement", "holistic-coherence", "holistic-fluency",
    "gupta-dailydialog", "lmstyle-mturk", "fed-turn", "fed-dialogue", "grade",
}  # fmt: skip


@pytest.fixture()
def no_shared_data(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    # The source checkout always finds ../shared/data, so the "not found" case is simulated by
    # pointing the lookup at an empty folder (the only stand-in in these tests).
    monkeypatch.setattr(catalog, "shared_data_dir", lambda: tmp_path)
    return tmp_path


def test_names_and_metadata() -> None:
    entries = list_benchmarks()
    assert {e.name for e in entries} >= EXPECTED_NAMES
    for e in entries:
        assert e.description and e.license and e.citation and e.level in ("turn", "dialogue") and e.files


def test_catalog_hashes_are_the_real_files(shared_data: Path) -> None:
    checked = 0
    for e in list_benchmarks():
        for f in e.files:
            if f.sha256 is None:
                assert not (shared_data / f.path).exists()  # FED/GRADE: only samples exist here
                continue
            assert hashlib.sha256((shared_data / f.path).read_bytes()).hexdigest() == f.sha256, f.path
            checked += 1
    assert checked == 26  # usr 3, dstc9 11, predictive_engagement 3, holistic 2, gupta 2, lmstyle 5


def test_available_here() -> None:
    avail = {e.name: e.available() for e in list_benchmarks()}
    assert avail["usr-tc"] and avail["dstc9"] and avail["lmstyle-mturk"]
    assert not avail["fed-turn"] and not avail["grade"]


def test_load_from_shared_data_says_so() -> None:
    b = load_benchmark("usr-tc")
    assert b.source.startswith("shared data ") and len({r.annotator for r in b.ratings}) == 5
    assert b.warnings == []


def test_bundled_fallback(no_shared_data: Path, shared_data: Path) -> None:
    assert DATASETS.get("usr-tc").available() and not DATASETS.get("usr-pc").available()
    bundled = load_benchmark("usr-tc")
    assert bundled.source.startswith("bundled copy ")
    assert {r.annotator for r in bundled.ratings} == {"unieval-mean"}
    raw = catalog.usr.load_usr_topical_chat(shared_data / "usr/usr_topical_chat.json")
    assert bundled.candidates == raw.candidates and bundled.dialogues == raw.dialogues
    pe = load_benchmark("predictive-engagement")
    shared_pe = catalog.engagement.load_predictive_engagement(
        shared_data / "predictive_engagement/Eng_Scores_queries_gen_gtruth_replies.csv"
    )
    assert pe.source.startswith("bundled copy ")
    assert pe.candidates == shared_pe.candidates and pe.ratings == shared_pe.ratings
    assert load_benchmark("predictive-engagement-convai").counts()["items"] == 297


def test_not_available_says_where_and_what(no_shared_data: Path) -> None:
    with pytest.raises(InputError) as err:
        load_benchmark("usr-pc")
    assert str(no_shared_data) in str(err.value) and "usr/pc_usr_data.json" in str(err.value)
    with pytest.raises(InputError, match=r"fed/fed_data\.json"):
        load_benchmark("fed-turn")


def test_typo_gets_did_you_mean() -> None:
    with pytest.raises(UnknownNameError, match=r'did you mean "dstc9"'):
        load_benchmark("dstc-9")
    # the start of one name only: it listed every benchmark ("gupta" is too short beside "gupta-dailydialog"
    # for difflib's ratio, 0.45)
    with pytest.raises(UnknownNameError, match=r'did you mean "gupta-dailydialog"'):
        load_benchmark("gupta")


def test_given_path_and_hash_warning(tmp_path: Path, shared_data: Path) -> None:
    raw = json.loads((shared_data / "usr/pc_usr_data.json").read_text())
    raw[0]["responses"][0]["Overall"] = [1, 1, 1]
    p = tmp_path / "pc_usr_data.json"
    p.write_text(json.dumps(raw))
    b = load_benchmark("usr-pc", p)
    assert b.source == f"given path {p}"
    assert b.warnings == [f"{p}: sha256 differs from the catalog's (a different release?)"]
    same = load_benchmark("usr-pc", shared_data / "usr/pc_usr_data.json")
    assert same.warnings == []
    fed = load_benchmark("fed-turn", shared_data / "samples/fed_data.sample.json")
    assert fed.counts()["items"] == 4
    with pytest.raises(InputError, match=r"file not found"):
        load_benchmark("grade", tmp_path / "nope.json")


def test_hash_warning_for_a_file_in_a_folder_beside_the_given_one(tmp_path: Path, shared_data: Path) -> None:
    """lmstyle-mturk reads BST/ref/ref.txt beside its CSV; an edited copy there was read without a warning
    (the files were looked for only directly beside the CSV)."""
    copy = tmp_path / "lmstyle"
    shutil.copytree(shared_data / "lmstyle", copy)
    ref = copy / "BST/ref/ref.txt"
    ref.write_text("an edited reference\n" + ref.read_text().split("\n", 1)[1])
    b = load_benchmark("lmstyle-mturk", copy / "Batch_results_develop.csv")
    hashes = [w for w in b.warnings if "sha256" in w]
    assert hashes == [f"{ref}: sha256 differs from the catalog's (a different release?)"]


def test_a_given_file_with_no_items_is_one_error_not_an_empty_run(tmp_path: Path) -> None:
    """`score --path x.json` on `[]` wrote 0 scores and `stress` a table of n/a, both with exit 0."""
    p = tmp_path / "usr.json"
    p.write_text("[]")
    with pytest.raises(InputError) as caught:
        load_benchmark("usr-tc", p)
    assert str(caught.value) == f"{p}: no usr-tc items in it: nothing to score"


@pytest.mark.parametrize(
    ("name", "text", "error"),
    [
        ("t.csv", "context,response\nhi,yo\n", "t.csv:1: not valid JSON (Expecting value at column 1)"),
        ("t.jsonl", '{"context": "hi", "response": "yo"}\n', "t.jsonl: expected a JSON array of records"),
        # the published file's suffix: its first record lacks a field every published record has
        ("t.json", '[{"context": "hi", "response": "yo"}]',
         't.json:1: field "fact": missing field (record 0 of the JSON array, counting from 0)'),
    ],
)  # fmt: skip
def test_your_own_table_given_as_a_catalog_benchmarks_file_says_how_to_read_it(
    tmp_path: Path, name: str, text: str, error: str
) -> None:
    """`score -b usr-tc --path t.csv` said only 'not valid JSON': nothing said that -b reads --path as its
    published file, nor how to read your own table."""
    p = tmp_path / name
    p.write_text(text)
    with pytest.raises(InputError) as caught:
        load_benchmark("usr-tc", p)
    assert str(caught.value) == (
        f"{tmp_path}/{error}; -b usr-tc reads --path as its published file (usr_topical_chat.json): for your own "
        "table leave out -b and give --mapping or --response-col"
    )
    with pytest.raises(InputError, match=r'; benchmark "usr-tc" reads path= as its published file \(usr_topical_'):
        load_benchmark("usr-tc", p, path_option="path=")


def test_a_table_of_the_published_suffix_lacking_a_published_column_says_how_to_read_your_own(
    tmp_path: Path, shared_data: Path
) -> None:
    """`-b predictive-engagement --path t.csv` said only 'missing column in the header'; a published file missing a
    field past its first record is no table of yours, and keeps the plain error."""
    p = tmp_path / "t.csv"
    p.write_text("context,response,q\nhi,yo,3\n")
    with pytest.raises(InputError) as caught:
        load_benchmark("predictive-engagement", p)
    assert str(caught.value) == (
        f'{p}:1: field "query": missing column in the header; there are: context, response, q; -b '
        "predictive-engagement reads --path as its published file (Eng_Scores_queries_gen_gtruth_replies.csv): for "
        "your own table leave out -b and give --mapping or --response-col"
    )
    raw = json.loads((shared_data / "usr/usr_topical_chat.json").read_text())
    del raw[1]["fact"]
    p = tmp_path / "usr.json"
    p.write_text(json.dumps(raw))
    with pytest.raises(InputError) as caught:
        load_benchmark("usr-tc", p)
    assert str(caught.value) == f'{p}:1: field "fact": missing field (record 1 of the JSON array, counting from 0)'


def test_whether_a_given_file_is_of_another_format_is_the_readers_flag_not_their_wording(tmp_path: Path) -> None:
    """The hint was given where the loader's message began "missing column in the header" or "missing field (record 0
    of the JSON array": a reworded message lost it, silently, and any error worded so got it. The readers flag the
    error (``OtherFormatError``): a header or first record lacking a column or field every record has."""
    from dialeval.data._common import OtherFormatError, Where, field
    from dialeval.data.catalog import CatalogEntry

    def failing(error: InputError) -> CatalogEntry:
        def loader(path: Path) -> NoReturn:
            raise error

        return CatalogEntry(name="x", description="", files=(), target="x/x.json", license="", citation="",
                            level="turn", items=None, loader=loader)  # fmt: skip

    p = tmp_path / "mine.json"
    p.write_text("[]")
    hint = "; -b x reads --path as its published file (x.json): for your own table leave out -b and give --mapping"
    with pytest.raises(InputError) as caught:
        failing(OtherFormatError("lacks the key every record has", path=p)).load(p)
    assert str(caught.value).startswith(f"{p}: lacks the key every record has{hint}")
    with pytest.raises(InputError) as caught:
        failing(InputError("missing column in the header", path=p)).load(p)
    assert str(caught.value) == f"{p}: missing column in the header"
    # the flag is the readers': a record's missing field is the format's only in the first record of an array
    for record, flagged in ((0, True), (1, False), (None, False)):
        with pytest.raises(InputError) as caught:
            field({}, "k", Where(p, record=record))
        assert isinstance(caught.value, OtherFormatError) is flagged


def test_a_table_of_your_own_in_the_published_format_is_said(tmp_path: Path, shared_data: Path) -> None:
    """`-b usr-pc --path t.json`, t.json two of the published contexts under another name, was scored as usr-pc
    with no word (the sha256 was checked only for a file of the published name): its ids and tags read as usr-pc's.
    Expected counts: the published file has 60 contexts of 5 rated responses (catalog items=300); 2 contexts = 10."""
    raw = json.loads((shared_data / "usr/pc_usr_data.json").read_text())
    p = tmp_path / "t.json"
    p.write_text(json.dumps(raw[:2]))
    b = load_benchmark("usr-pc", p)
    assert b.warnings == [
        f"{p}: sha256 differs from the catalog's (a different release?)",
        f"{p}: 10 items where usr-pc's published file has 300; it is read as that file (ids and tags are usr-pc's)",
    ]
    whole = tmp_path / "whole.json"
    whole.write_bytes((shared_data / "usr/pc_usr_data.json").read_bytes())  # the published file renamed: no word
    assert load_benchmark("usr-pc", whole).warnings == []


def test_another_benchmarks_published_file_is_refused(tmp_path: Path, shared_data: Path) -> None:
    """`-b usr-tc --path pc_usr_data.json` read usr-pc's 300 turns as usr-tc's, its ids, tags and results, with a
    warning of a changed file only; both files have the one USR format. The file's sha256 is usr-pc's catalog hash."""
    pc = tmp_path / "renamed.json"
    pc.write_bytes((shared_data / "usr/pc_usr_data.json").read_bytes())
    with pytest.raises(InputError) as caught:
        load_benchmark("usr-tc", pc)
    assert str(caught.value) == f"{pc}: this is usr-pc's published file, not usr-tc's: name the benchmark usr-pc"
    assert len(load_benchmark("usr-pc", pc).candidates) == 300
