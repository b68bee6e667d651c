"""JSONL I/O: validation at the boundary and atomic writes."""

from __future__ import annotations

from pathlib import Path

import pytest

from dialeval.atomic import atomic_write
from dialeval.errors import InputError
from dialeval.jsonl import read_jsonl, write_jsonl
from dialeval.schema import Candidate, Rating, Score


def test_roundtrip_keeps_every_field(tmp_path: Path) -> None:
    recs = [
        Rating(item_id="i1", dimension="Overall", annotator="a1", value=4.0, scale="1-5"),
        Rating(
            item_id="i1",
            dimension="Appropriateness",
            annotator="a2",
            value=None,
            dont_know=True,
            explanation="needs world knowledge",
            reasons=["correctness"],
        ),
    ]
    assert write_jsonl(tmp_path / "r.jsonl", recs) == 2
    assert read_jsonl(tmp_path / "r.jsonl", Rating) == recs


def test_bad_line_names_file_line_and_field(tmp_path: Path) -> None:
    p = tmp_path / "c.jsonl"
    p.write_text(
        '{"id": "a", "dialogue_id": "d", "turn_index": 1, "system": "s", "text": "hi"}\n'
        "\n"
        '{"id": "b", "dialogue_id": "d", "turn_index": -1, "system": "s", "text": "hi"}\n'
    )
    with pytest.raises(InputError) as err:
        read_jsonl(p, Candidate)
    assert err.value.line == 3
    assert err.value.field == "turn_index"
    assert str(err.value).startswith(f"{p}:3: field \"turn_index\"")


def test_invalid_json_and_unknown_field(tmp_path: Path) -> None:
    p = tmp_path / "s.jsonl"
    p.write_text('{"item_id": "x", "metric": "m", "value": 1.0}\n{"item_id": "x",\n')
    with pytest.raises(InputError, match=r"s\.jsonl:2: not valid JSON"):
        read_jsonl(p, Score)
    # The column is where the line broke off (column 17, after the comma), as json.loads says of the line alone:
    # with its line ending, the column was 1 (of the line after it).
    expected = (r"s\.jsonl:1: not valid JSON \(Expecting property name enclosed in double quotes at column 17\); the "
                r"value goes on past the line's end: JSON lines hold one object per line \(pretty-printed\?\)$")
    for ending in ("\n", "\r\n"):
        p.write_text('{"item_id": "x",' + ending)
        with pytest.raises(InputError, match=expected):
            read_jsonl(p, Score)
    p.write_text('{"item_id": "x", "metric": "m", "value": 1.0}\n{"broken\n')  # json's message ends "starting at"
    with pytest.raises(InputError) as caught:
        read_jsonl(p, Score)
    assert str(caught.value).endswith("s.jsonl:2: not valid JSON (Unterminated string starting at column 2)")  # "at at"
    p.write_text('{"item_id": "x", "metric": "m", "value": 1.0, "colour": "red"}\n')
    with pytest.raises(InputError, match='field "colour"'):
        read_jsonl(p, Score)


def test_nan_is_refused(tmp_path: Path) -> None:
    p = tmp_path / "s.jsonl"
    p.write_text('{"item_id": "x", "metric": "m", "value": NaN}\n')
    with pytest.raises(InputError, match=r'field "value": .*NaN'):
        read_jsonl(p, Score)


def test_atomic_write_leaves_old_file_on_error(tmp_path: Path) -> None:
    p = tmp_path / "out.jsonl"
    p.write_text("old\n")
    with pytest.raises(RuntimeError), atomic_write(p) as handle:
        handle.write("half")
        raise RuntimeError("crash")
    assert p.read_text() == "old\n"
    assert list(tmp_path.iterdir()) == [p]  # no temporary file left behind


def test_the_one_reader_refuses_folders_binary_and_non_finite_numbers(tmp_path: Path) -> None:
    from dialeval.jsonl import iter_objects, read_text, read_unique
    from dialeval.schema import Dialogue

    with pytest.raises(InputError, match=r": is a folder, expected a file$"):
        list(iter_objects(tmp_path))
    p = tmp_path / "x.jsonl"
    p.write_bytes(b'{"a": 1}\n{"a": "\xff"}\n')
    with pytest.raises(InputError, match=r"x\.jsonl:2: not UTF-8 text: byte 0xff at column 8"):
        list(iter_objects(p))
    with pytest.raises(InputError, match=r"x\.jsonl:2: not UTF-8 text: byte 0xff at column 8"):
        read_text(p)
    p.write_bytes(b'{"a": 1}\n\x00\x01\x02\n')
    with pytest.raises(InputError, match=r"x\.jsonl:2: not text: a NUL byte at column 1"):
        list(iter_objects(p))
    p.write_text('{"a": 1, "extras": {"b": [1, -Infinity]}}\n')
    with pytest.raises(InputError, match=r'x\.jsonl:1: field "extras\.b\.1": -Infinity is not a finite number'):
        list(iter_objects(p))
    p.write_text('{"a": 1e999}\n')
    with pytest.raises(InputError, match=r'field "a": Infinity is not a finite number'):
        list(iter_objects(p))
    p.write_text("[1, 2]\n")
    with pytest.raises(InputError, match=r"x\.jsonl:1: expected a JSON object, found list"):
        list(iter_objects(p))
    # UTF-16 (Excel's "Unicode Text", Notepad's "Unicode") said "not text: a NUL byte at column 2"
    for encoding in ("utf-16", "utf-16-be", "utf-32"):
        bom = {"utf-16-be": b"\xfe\xff"}.get(encoding, b"")
        p.write_bytes(bom + '{"a": 1}\n'.encode(encoding))
        for read in (lambda: list(iter_objects(p)), lambda: read_text(p)):
            with pytest.raises(InputError) as caught:
                read()
            assert str(caught.value) == (f"{p}:1: UTF-16 or UTF-32 text, and this reads UTF-8: save it as UTF-8 "
                                         '(in Excel: "CSV UTF-8", not "Unicode Text")')  # fmt: skip
    p.write_bytes(b'\xef\xbb\xbf{"id": "d", "turns": []}\n')  # a byte-order mark is not an error
    assert list(read_unique(p, Dialogue)) == ["d"]


@pytest.mark.parametrize("encoding", ["utf-16-le", "utf-16-be", "utf-32-le", "utf-32-be"])
def test_utf16_or_utf32_text_without_a_byte_order_mark_is_named_as_such(tmp_path: Path, encoding: str) -> None:
    """pandas' to_csv(encoding="utf-16-le") (and PowerShell's Unicode output) write no byte-order mark: the error was
    "not text: a NUL byte at column 2 (a binary file, or another encoding?)", naming no encoding."""
    from dialeval.data._common import read_csv_rows
    from dialeval.jsonl import iter_objects, read_text

    p = tmp_path / "x.csv"
    p.write_bytes('context,response\nHi,Yo\n'.encode(encoding))
    j = tmp_path / "x.jsonl"
    j.write_bytes('{"a": 1}\n'.encode(encoding))
    for path, read in ((p, lambda: read_csv_rows(p)), (p, lambda: read_text(p)), (j, lambda: list(iter_objects(j)))):
        with pytest.raises(InputError) as caught:
            read()
        assert str(caught.value) == (f"{path}:1: UTF-16 or UTF-32 text, and this reads UTF-8: save it as UTF-8 "
                                     '(in Excel: "CSV UTF-8", not "Unicode Text")')  # fmt: skip

def test_gzipped_jsonl_is_read_and_a_damaged_one_is_an_error(tmp_path: Path) -> None:
    import gzip

    from dialeval.jsonl import iter_objects

    p = tmp_path / "x.jsonl.gz"
    p.write_bytes(gzip.compress(b'{"a": 1}\n{"a": 2}\n'))
    assert [o["a"] for _, o in iter_objects(p)] == [1, 2]
    p.write_bytes(gzip.compress(b'{"a": 1}\n' * 1000)[:50])
    with pytest.raises(InputError, match=r"x\.jsonl\.gz:\d+: cannot read"):
        list(iter_objects(p))


def test_gz_with_damaged_compressed_bytes_is_an_input_error(tmp_path: Path) -> None:
    """A .gz whose deflate stream is corrupt raised zlib.error ("Error -3 while decompressing data: ..."), which is
    no OSError: data show printed a traceback."""
    import gzip

    from dialeval.jsonl import iter_objects, read_text

    data = bytearray(gzip.compress(b'{"a": 1}\n' * 1000))
    data[20] ^= 0xFF  # a byte inside the deflate stream (the header is 10 bytes)
    for name in ("x.jsonl.gz", "x.csv.gz"):
        p = tmp_path / name
        p.write_bytes(bytes(data))
        for read in (read_text, lambda q: list(iter_objects(q))):
            with pytest.raises(InputError, match=rf"{name.replace('.', '[.]')}(:1)?: damaged gzip data \(Error -3 "):
                read(p)


@pytest.mark.parametrize(("line", "kind"), [("null", "null"), ("true", "true"), ("3.5", "a number"),
                                            ('"hi"', "a string")])  # fmt: skip
def test_a_line_that_is_no_object_is_named_in_json_words(tmp_path: Path, line: str, kind: str) -> None:
    """A line "null" said "expected a JSON object, found NoneType" (Python's name for it; "3.5" found float)."""
    from dialeval.jsonl import iter_objects

    p = tmp_path / "x.jsonl"
    p.write_text(f'{{"a": 1}}\n{line}\n')
    with pytest.raises(InputError) as caught:
        list(iter_objects(p))
    assert str(caught.value) == f"{p}:2: a line holds {kind}, expected a JSON object"


@pytest.mark.parametrize("name", ["x.jsonl.gz", "x.csv.gz"])
def test_a_gz_name_on_plain_text_says_so(tmp_path: Path, name: str) -> None:
    """A file named .gz holding plain text said "cannot read (Not a gzipped file (b'co'))"."""
    from dialeval.jsonl import iter_objects, read_text

    p = tmp_path / name
    p.write_text('{"context": "hi"}\n')
    want = f"{p}: not gzip-compressed, though its name ends in .gz: gzip it, or take .gz off its name"
    with pytest.raises(InputError) as caught:
        read_text(p)
    assert str(caught.value) == want
    with pytest.raises(InputError) as caught:
        list(iter_objects(p))
    assert str(caught.value) == want.replace(": not", ":1: not", 1)


def test_result_rows_that_are_dataclasses_are_written_as_their_json_dicts(tmp_path: Path) -> None:
    """table.jsonl, stress.jsonl, ranking.jsonl and lmstyle_tables.jsonl go through write_jsonl: NaN as null,
    fields in order, and every line reads back through the one reader (which refuses NaN)."""
    import dataclasses
    import math

    from dialeval.commands.meta import row_dict
    from dialeval.jsonl import iter_objects
    from dialeval.lmstyle.tables import TableCell
    from dialeval.meta.rows import CorrelationRow
    from dialeval.stress.run import StressLine, StressRow

    corr = CorrelationRow(metric="bleu", dimension="Overall", level="turn", method="pearson", value=math.nan,
                          p_value=None, ci_low=-0.25, ci_high=1e-05, n_items=3, n_groups=2, n_skipped=1)  # fmt: skip
    stress = StressRow(metric="bleu", family="bleu", perturbation="negation", n_pairs=4, fraction=0.75, drop=0.1,
                       ci_low=0.0, ci_high=0.2, auroc=math.nan, higher_is_better=True, n_contexts=2)  # fmt: skip
    cell = TableCell(table="table4", dataset="dd", model="m", source="ours", column="Formal ACC%", value=math.inf,
                     scored="1/2")  # fmt: skip
    rows = [corr, StressLine.of(stress, skipped=3), cell]
    assert write_jsonl(tmp_path / "rows.jsonl", rows) == 3
    got = [obj for _, obj in iter_objects(tmp_path / "rows.jsonl")]
    assert [list(o) for o in got] == [[f.name for f in dataclasses.fields(r)] for r in rows]
    assert got[0] == row_dict(corr) and got[0]["value"] is None and got[0]["ci_high"] == 1e-05
    assert got[1] == {**row_dict(stress), "value": 0.75, "skipped": 3} and got[1]["auroc"] is None
    assert got[2]["value"] is None and got[2]["scored"] == "1/2"


def test_a_key_given_twice_in_one_object_is_refused_naming_file_line_and_key(tmp_path: Path) -> None:
    from dialeval.jsonl import iter_objects

    p = tmp_path / "c.jsonl"
    p.write_text('{"id": "a", "response": "x"}\n\n{"id": "b", "response": "x", "response": "y"}\n')
    with pytest.raises(InputError) as caught:
        list(iter_objects(p))
    assert str(caught.value) == (
        f'{p}:3: field "response": appears twice in one JSON object (only the last value would be kept)'
    )
    # inside a nested object too, named by its path; the same key in two objects is no duplicate
    p.write_text('{"id": "d", "turns": [{"speaker": "A", "text": "hi"}, {"speaker": "B", "text": "yo", "text": ""}]}\n')
    with pytest.raises(InputError, match=r'c\.jsonl:1: field "turns\.1\.text": appears twice in one JSON object'):
        list(iter_objects(p))
    p.write_text('{"id": "c", "tags": {"id": "x"}, "extras": {"id": "y", "tags": {"id": "z"}}}\n')
    assert [obj for _, obj in iter_objects(p)] == [{"id": "c", "tags": {"id": "x"}, "extras": {"id": "y",
                                                    "tags": {"id": "z"}}}]  # fmt: skip


def test_a_key_given_twice_in_a_record_file_is_refused_by_the_record_reader(tmp_path: Path) -> None:
    p = tmp_path / "c.jsonl"
    p.write_text(
        '{"id": "a", "dialogue_id": "d", "turn_index": 0, "system": "s", "text": "hi"}\n'
        '{"id": "b", "dialogue_id": "d", "turn_index": 0, "system": "s", "text": "hi", "system": "t"}\n'
    )
    with pytest.raises(InputError, match=r'^.*c\.jsonl:2: field "system": appears twice in one JSON object'):
        read_jsonl(p, Candidate)


def test_a_table_given_where_json_lines_go_says_so(tmp_path: Path) -> None:
    """`meta my.csv`, `meta -r my.csv` and `report --study my.csv` said only "not valid JSON (Expecting value at
    column 1)": the file's name says it is a table, and the error now says that this reads JSON lines."""
    p = tmp_path / "my.csv"
    p.write_text("context,response\nhi,hello\n")
    with pytest.raises(InputError, match=r"my\.csv:1: not valid JSON \(Expecting value at column 1\); the file is "
                                         r"named as a CSV file, and this reads JSON lines \(one record per line\)$"):
        read_jsonl(p, Score)
    p = tmp_path / "s.jsonl"  # a JSONL name: the error as it was
    p.write_text("context,response\n")
    with pytest.raises(InputError, match=r"s\.jsonl:1: not valid JSON \(Expecting value at column 1\)$"):
        read_jsonl(p, Score)


def test_half_of_a_surrogate_pair_is_refused_where_it_is_read(tmp_path: Path) -> None:
    """JSON may spell "\\ud800", which is no character: a record holding one was read, scored, and then
    failed when written (a UnicodeEncodeError traceback from pydantic, or pandas building a frame)."""
    from dialeval.jsonl import iter_objects

    p = tmp_path / "x.jsonl"
    p.write_text('{"a": "\\ud83d\\ude00"}\n{"turns": [{"text": "ok \\uDFFF"}]}\n', encoding="utf-8")
    with pytest.raises(InputError) as caught:
        list(iter_objects(p))
    assert str(caught.value) == (f'{p}:2: field "turns.0.text": \\udfff is half of a UTF-16 surrogate pair, no '
                                 "character (text must be valid Unicode)")  # the emoji's whole pair on line 1 is read
    p.write_text('{"a\\ud800": 1}\n', encoding="utf-8")  # a key too
    with pytest.raises(InputError, match=r'x\.jsonl:1: field "a.+": \\ud800 is half'):
        list(iter_objects(p))


def test_a_record_of_another_kind_says_which_kind_it_is(tmp_path: Path) -> None:
    """A scores file given for ratings (meta -r scores.jsonl) said only 'field "dimension": Field required'."""
    p = tmp_path / "s.jsonl"
    write_jsonl(p, [Score(item_id="i", metric="length", value=3.0)])
    with pytest.raises(InputError) as caught:
        read_jsonl(p, Rating)
    assert str(caught.value) == (f'{p}:1: field "metric": unknown field; the line holds a Score record, not a '
                                 "Rating: is this the right file?")
    p.write_text('{"item_id": "i", "metric": "length"}\n')  # a Score missing its own field: no hint
    with pytest.raises(InputError) as caught:
        read_jsonl(p, Score)
    assert str(caught.value) == f'{p}:1: field "value": missing field'


def _binary_files(tmp_path: Path) -> list[tuple[Path, str]]:
    """Real files of the binary formats people give for a table (the .xls one is its header only: no writer here)."""
    import gzip
    import sqlite3
    import zipfile

    import pandas as pd

    book = tmp_path / "ratings.xlsx"  # an .xlsx is a ZIP archive of XML parts
    with zipfile.ZipFile(book, "w") as z:
        z.writestr("xl/worksheets/sheet1.xml", "<worksheet/>")
    pd.DataFrame({"context": ["hi"], "response": ["hello"]}).to_parquet(tmp_path / "ratings.parquet")
    (tmp_path / "ratings.csv").write_bytes(gzip.compress(b"context,response\nhi,hello\n"))  # gzipped, not named .gz
    with sqlite3.connect(tmp_path / "study.db") as db:
        db.execute("create table t (x)")
    (tmp_path / "old.xls").write_bytes(b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + bytes(504))
    text = 'save it as UTF-8 text (a sheet as "CSV UTF-8")'
    parquet = 'write it as JSON lines, pd.read_parquet(path).to_json("my.jsonl", orient="records", lines=True), or ' \
              "give dialeval.score the DataFrame"  # fmt: skip
    return [(book, f"a ZIP archive (an Excel .xlsx or OpenDocument workbook?): {text}"),
            (tmp_path / "ratings.parquet", f"a Parquet file: {parquet}"),
            (tmp_path / "ratings.csv", "gzipped (only a name ending in .gz is unzipped): end its name with .gz, or "
                                       "unzip it"),
            (tmp_path / "study.db", f"an SQLite database: {text}"),
            (tmp_path / "old.xls", f"an Excel 97-2003 workbook (.xls): {text}")]  # fmt: skip


def test_a_binary_file_given_for_text_is_named_for_what_it_is(tmp_path: Path) -> None:
    """They said "not text: a NUL byte at column 5 (a binary file, or another encoding?)" (or "not UTF-8 text: byte
    0x8b at column 2" for the gzipped one); the first bytes say what they are."""
    from dialeval.jsonl import iter_objects, read_text

    for p, kind in _binary_files(tmp_path):
        for read in (lambda p=p: list(iter_objects(p)), lambda p=p: read_text(p)):
            with pytest.raises(InputError) as caught:
                read()
            assert str(caught.value) == f"{p}:1: not text but {kind}"


def test_load_yaml_refuses_a_key_twice_at_any_depth_and_keeps_merges(tmp_path: Path) -> None:
    """PyYAML kept the last of two values of one key, silently; a merge ("<<: *base") may still override."""
    from dialeval.jsonl import load_yaml

    p = tmp_path / "m.yaml"
    with pytest.raises(InputError) as caught:
        load_yaml("a: 1\nb: {c: 1, c: 2}\n", p)
    assert str(caught.value) == f'{p}:2: field "b.c": is given twice in one mapping (first on line 2)'  # was "c"
    with pytest.raises(InputError) as caught:  # in a list, the item's index is in the path, as pydantic names it
        load_yaml("criteria:\n  - name: q\n  - name: r\n    name: s\n", p)
    assert str(caught.value) == f'{p}:4: field "criteria.1.name": is given twice in one mapping (first on line 3)'
    assert load_yaml("base: &b {x: 1, y: 1}\nd:\n  <<: *b\n  x: 2\n", p) == {"base": {"x": 1, "y": 1},
                                                                            "d": {"x": 2, "y": 1}}  # fmt: skip
    with pytest.raises(InputError, match=r"m\.yaml:1: not valid YAML \(found unhashable key\)"):  # not a TypeError
        load_yaml("? [a, b]: x\n", p)


def test_a_misspelt_field_is_named_before_the_field_it_leaves_missing(tmp_path: Path) -> None:
    """'{"item_id": ..., "metic": ...}' said 'field "metric": Field required' (pydantic's order and words); the
    misspelt key comes first now, with the closest field, and a missing one says "missing field"."""
    p = tmp_path / "s.jsonl"
    p.write_text('{"item_id": "i", "metic": "length", "value": 1.0}\n')
    with pytest.raises(InputError) as caught:
        read_jsonl(p, Score)
    assert str(caught.value) == f'{p}:1: field "metic": unknown field; did you mean "metric"?'
    p.write_text('{"item_id": "i", "metric": "length", "value": 1.0, "colour": "red"}\n')  # close to no field
    with pytest.raises(InputError) as caught:
        read_jsonl(p, Score)
    assert str(caught.value) == (f'{p}:1: field "colour": unknown field; the fields: item_id, metric, value, '
                                 "dialogue_id, context_id, system, tags, extras, signature")  # as a mapping file's


def test_a_json_array_or_pretty_printed_json_in_a_jsonl_file_says_what_it_is(tmp_path: Path) -> None:
    """'expected a JSON object, found list' and 'Expecting property name ... at column 2' named neither cause."""
    p = tmp_path / "s.jsonl"
    p.write_text('[{"item_id": "x", "metric": "m", "value": 1}]\n')
    with pytest.raises(InputError) as caught:
        read_jsonl(p, Score)
    assert str(caught.value) == (f"{p}:1: expected a JSON object, found list (a JSON array: JSON lines hold one "
                                 "object per line)")
    p.write_text('{\n  "item_id": "x",\n  "metric": "m",\n  "value": 1\n}\n')  # json.dump(..., indent=2)
    with pytest.raises(InputError) as caught:
        read_jsonl(p, Score)
    assert str(caught.value).endswith("the value goes on past the line's end: JSON lines hold one object per line "
                                      "(pretty-printed?)")  # fmt: skip
    p.write_text('{"item_id": "x",, "metric": "m"}\n')  # broken inside the line: no such hint
    with pytest.raises(InputError) as caught:
        read_jsonl(p, Score)
    assert str(caught.value).endswith("at column 17)")


@pytest.mark.parametrize("value", ['"inf"', '"NaN"', '"-Infinity"', '"1e999"'])
def test_a_rating_written_as_text_that_reads_as_no_finite_number_is_refused(tmp_path: Path, value: str) -> None:
    """meta reads a text rating as its number: "inf" made its item's mean inf (pearson n/a, the rest wrong)."""
    p = tmp_path / "r.jsonl"
    p.write_text('{"item_id": "i", "dimension": "Overall", "annotator": "a", "value": "4"}\n'
                 f'{{"item_id": "j", "dimension": "Overall", "annotator": "a", "value": {value}}}\n')
    with pytest.raises(InputError, match=r'r\.jsonl:2: field "value": .* is not a finite number; use null'):
        read_jsonl(p, Rating)
    with pytest.raises(ValueError, match="is not a finite number"):  # the Python API's record, a float infinity
        Rating(item_id="i", dimension="Overall", annotator="a", value=float("inf"))
    assert Rating(item_id="i", dimension="Overall", annotator="a", value="positive").value == "positive"
