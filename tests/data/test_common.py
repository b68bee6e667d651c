"""The loaders' shared helpers: CSV headers, rating scales and whole JSON files."""

from __future__ import annotations

from pathlib import Path

import pytest

from dialeval.data._common import Where, number, read_csv_rows, scale_range
from dialeval.data.generic import ColumnMapping, load_table
from dialeval.errors import InputError


def test_a_header_naming_a_column_twice_is_refused(tmp_path: Path) -> None:
    p = tmp_path / "t.csv"
    p.write_text("a,b,,,a\n1,2,3,4,5\n")
    with pytest.raises(InputError) as caught:
        read_csv_rows(p)
    assert str(caught.value) == f'{p}:1: field "a": appears twice in the header (columns 1 and 5)'
    p.write_text("a,b,,\n1,2,3,4\n")  # empty names are no duplicates: each is named by its place, as pandas does
    names, rows = read_csv_rows(p, required=["a", "b"])
    assert names == {"a": 0, "b": 1, "Unnamed: 2": 2, "Unnamed: 3": 3}
    assert [r for _, r in rows] == [["1", "2", "3", "4"]]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        # it read one row, Hi / "Hello\nYo,there\nA,B\n": the rows after the stray quote were dropped, silently
        ('context,response\nHi,"Hello\nYo,there\nA,B\n', ":2: not valid CSV: a quote opened in this row is never"),
        # it read "Hello there", dropping the quotes the writer meant to keep
        ('context,response\nHi,"Hello" there\nYo,x\n', ":2: not valid CSV: a quoted field goes on after its"),
        # "not valid CSV (field larger than field limit (131072))": a quote left open, with 200,000 characters after
        ('context,response\nHi,"Hello\n' + "x" * 200_000 + '\nYo,"there"\n',
         ":2: a field of this row runs past 131,072 characters, the most the csv module reads: is a quote left open?"),
    ],
    ids=["never-closed", "after-closing", "past-the-limit"],
)
def test_a_stray_quote_is_refused_naming_the_row_it_opens(tmp_path: Path, text: str, message: str) -> None:
    p = tmp_path / "t.csv"
    p.write_text(text)
    with pytest.raises(InputError) as caught:
        read_csv_rows(p, required=["context", "response"])
    assert str(caught.value).startswith(f"{p}{message}")


def test_quotes_written_as_a_csv_writer_writes_them_are_read_back(tmp_path: Path) -> None:
    p = tmp_path / "t.csv"
    p.write_text('context,response\nHi,"He said ""hi"", then\nleft"\nYo,say "no" twice\n')
    assert read_csv_rows(p, required=["context"])[1][0][1] == ["Hi", 'He said "hi", then\nleft']
    assert read_csv_rows(p, required=["context"])[1][1][1] == ["Yo", 'say "no" twice']  # a quote inside a field


def test_a_missing_column_spelled_in_another_case_is_named(tmp_path: Path) -> None:
    p = tmp_path / "t.csv"
    p.write_text("Context,Response\nHi,Hello\n")
    with pytest.raises(InputError) as caught:
        read_csv_rows(p, required=["context"])
    assert str(caught.value) == (
        f'{p}:1: field "context": missing column in the header; the header has "Context" '
        "(column names are case-sensitive)"
    )
    p.write_text("context,response \nHi,Hello\n")  # a space after a name: "case-sensitive" said nothing of it
    with pytest.raises(InputError) as caught:
        read_csv_rows(p, required=["response"])
    assert str(caught.value).endswith('the header has "response " (a space in a column name counts)')


@pytest.mark.parametrize(
    ("scale", "bounds"),
    [("1-5", (1.0, 5.0)), ("0-100", (0.0, 100.0)), (" -2 - 2.5 ", (-2.0, 2.5)), ("5-1", None), ("3-3", None),
     ("abc", None), ("1-5-7", None), ("", None), ("1 to 5", None)],
)  # fmt: skip
def test_scale_range(scale: str, bounds: tuple[float, float] | None) -> None:
    assert scale_range(scale) == bounds


def test_a_key_given_twice_in_a_published_json_file_names_the_record_line_and_field(
    tmp_path: Path, shared_data: Path
) -> None:
    """JSON keeps the last of a key given twice silently; a catalog file given with --path is refused instead."""
    import json

    from dialeval.data.catalog import load_benchmark

    records = json.loads((shared_data / "usr" / "usr_topical_chat.json").read_text(encoding="utf-8"))[:3]
    text = json.dumps(records, indent=1)  # each record starts on the line of its "{": 2, then after record 0
    second = text.index('\n {\n', text.index('\n {\n') + 1) + 1  # where record 1 starts
    line = text.count("\n", 0, second) + 1
    # the first response of record 1 names "model" twice (a real file would score the second system)
    at = text.index('"model": ', second)
    text = text[:at] + '"model": "other", ' + text[at:]
    p = tmp_path / "usr.json"
    p.write_text(text, encoding="utf-8")
    with pytest.raises(InputError) as caught:
        load_benchmark("usr-tc", path=p)
    assert str(caught.value) == (f'{p}:{line}: field "responses.0.model": appears twice in one JSON object (only the '
                                 "last value would be kept) (record 1 of the JSON array, counting from 0)")  # fmt: skip
    p.write_text(json.dumps(records), encoding="utf-8")  # the same records without the duplicate load
    assert load_benchmark("usr-tc", path=p).counts()["items"] == 3 * len(records[0]["responses"])


@pytest.mark.parametrize(("text", "message"), [
    ('{"a": 1, "a": 2}', 'field "a": appears twice in one JSON object'),  # not an array: no record to name
    ('[{"a": 1}, {"b": {"c": 1, "c": 2}}]', ':1: field "b.c": appears twice .* \\(record 1 of the JSON array'),
])  # fmt: skip
def test_a_key_given_twice_in_a_whole_json_file_is_one_error(tmp_path: Path, text: str, message: str) -> None:
    from dialeval.data._common import read_json_records

    p = tmp_path / "f.json"
    p.write_text(text, encoding="utf-8")
    with pytest.raises(InputError, match=message):
        read_json_records(p)


def test_excel_sep_line_sets_the_delimiter_and_is_no_header(tmp_path: Path) -> None:
    """Excel writes (and reads) "sep=;" as a first line; it was taken as the header ("missing column", and with
    --delimiter ";" still). Lines are counted from the file's first line, the sep line included."""
    p = tmp_path / "t.csv"
    p.write_text("sep=;\r\ncontext;response\r\nHi;Yo\r\nA;B;C\r\n")
    with pytest.raises(InputError) as caught:
        read_csv_rows(p, required=["context", "response"])
    assert str(caught.value) == f"{p}:4: expected 2 columns, found 3"
    p.write_text("sep=;\ncontext;response\nHi;Yo\n")
    names, rows = read_csv_rows(p, required=["context", "response"])
    assert names == {"context": 0, "response": 1} and [(w.line, r) for w, r in rows] == [(3, ["Hi", "Yo"])]


def test_a_latin1_file_names_the_character_and_the_fix(tmp_path: Path) -> None:
    p = tmp_path / "t.csv"
    p.write_bytes(b"context,response\nHi,Caf\xe9\n")  # Excel's "CSV" (not "CSV UTF-8") on Windows
    with pytest.raises(InputError) as caught:
        read_csv_rows(p, required=["context", "response"])
    assert str(caught.value) == (f'{p}:2: not UTF-8 text: byte 0xe9 at column 7 ("é" in Windows-1252 or Latin-1?): '
                                 "save the file as UTF-8")


def test_a_rating_with_an_underscore_is_refused_not_read_as_python_reads_it(tmp_path: Path) -> None:
    """float("1_0") is 10.0 (Python's digit grouping): a rating cell "1_0" loaded as 10, silently."""
    p = tmp_path / "r.csv"
    p.write_text("ctx,resp,q\nhi,yo,1_0\n")
    mapping = ColumnMapping(response="resp", context="ctx", ratings={"q": "Overall"})
    with pytest.raises(InputError, match=r"r\.csv:2: field \"q\": expected a number, found '1_0'"):
        load_table(p, mapping)
    assert number("1.5", Where(p, line=2), "q") == 1.5


def test_a_json_integer_too_large_for_a_float_is_an_error_not_a_traceback(tmp_path: Path) -> None:
    """float() of a 401-digit int raises OverflowError (not ValueError): ``data show`` printed a traceback."""
    p = tmp_path / "r.jsonl"
    p.write_text('{"ctx": "hi", "resp": "yo", "q": 1' + "0" * 400 + "}\n")
    mapping = ColumnMapping(response="resp", context="ctx", ratings={"q": "Overall"})
    with pytest.raises(InputError, match=r"r\.jsonl:1: field \"q\": expected a finite number, found 10{400}"):
        load_table(p, mapping)


def test_a_carriage_return_inside_an_unquoted_field_is_refused_not_read_as_a_row_break(tmp_path: Path) -> None:
    """A lone "\\r" (pasted text) in an unquoted cell of a file whose lines end in "\\n" split its row in two: one
    row became two, silently ("Hi"/"Hello" and "there"/"4"), and every later row's line was one too many."""
    p = tmp_path / "t.csv"
    p.write_bytes(b"context,response,q\nHi,Hello\rthere,4\nYo,x,5\n")
    with pytest.raises(InputError) as caught:
        read_csv_rows(p, required=["context", "response"])
    assert str(caught.value).startswith(f'{p}:2: not valid CSV: a carriage return ("\\r") inside a field that is not '
                                        "quoted")
    # inside quotes it is the field's own character; lines are the file's lines (the quoted "\r" starts none)
    p.write_bytes(b'context,response,q\nHi,"Hello\rthere",4\r\nYo,x,5,6\n')
    with pytest.raises(InputError) as caught:
        read_csv_rows(p, required=["context", "response"])
    assert str(caught.value) == f"{p}:3: expected 3 columns, found 4"
    p.write_bytes(b"context,response\rHi,Hello\rYo,x\r")  # an old Mac file: every line ends in "\r"
    _, rows = read_csv_rows(p, required=["context", "response"])
    assert [(w.line, r) for w, r in rows] == [(2, ["Hi", "Hello"]), (3, ["Yo", "x"])]
