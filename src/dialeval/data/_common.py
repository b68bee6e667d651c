"""Shared helpers for the loaders: located errors, JSON/CSV reading, numbers, hashes.

Every problem in an input file becomes an :class:`~dialeval.errors.InputError`
naming the file, where in it (the line, and for a JSON array also the record's
index) and the field.

Example:
    >>> loc = Where("data.json", record=3)
    >>> str(loc.error("not a number", field="Overall"))
    'data.json: field "Overall": not a number (record 3 of the JSON array, counting from 0)'
    >>> number("2.5", Where("x.csv", line=7), "score")
    2.5
"""

from __future__ import annotations

import contextlib
import csv
import hashlib
import io
import itertools
import json
import math
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from dialeval.errors import InputError, closest
from dialeval.jsonl import DUPLICATE_KEY, DuplicateKeyError, iter_objects, json_kind, json_problem, loads, read_text

_SCALE = re.compile(r"\s*(-?\d+(?:\.\d+)?)\s*-\s*(-?\d+(?:\.\d+)?)\s*")
#: A number written with a decimal comma (``4,5``, a European spreadsheet's), which ``float`` refuses.
DECIMAL_COMMA = re.compile(r"\s*[-+]?\d+,\d+\s*")


class OtherFormatError(InputError):
    """The header, or the first record, lacks a column or field that every record of the format read has.

    The file is likely of another format (your own table given as a catalog benchmark's published file): the catalog
    says how to read it (:meth:`~dialeval.data.catalog.CatalogEntry.load`), whatever the message's words.
    """


@dataclass(frozen=True)
class Where:
    """A place in an input file: a CSV/JSONL line number, and for a JSON array the record index too."""

    path: str | Path
    line: int | None = None
    record: int | None = None

    def error(self, message: str, *, field: str | None = None, kind: type[InputError] = InputError) -> InputError:
        """Return an :class:`InputError` (or ``kind``, a subclass) for ``message`` at this place."""
        if self.record is not None:
            message = f"{message} (record {self.record} of the JSON array, counting from 0)"
        return kind(message, path=self.path, line=self.line, field=field)


def open_text(path: Path) -> io.TextIOBase:
    r"""Return a UTF-8 text file as a text handle (``*.gz`` gunzipped; see :func:`dialeval.jsonl.read_text`).

    Its lines end at ``"\n"`` where the file has one: a lone ``"\r"`` in a field (pasted text) ended a line too, and
    its row was read as two, silently. A file whose lines all end in ``"\r"`` (an old Mac's) is split there.
    """
    text = read_text(path)
    return io.StringIO(text, newline="\n" if "\n" in text else "")


def _read_text(path: Path) -> str:
    return read_text(path)


def array_element_lines(text: str) -> list[int]:
    r"""Return the line (from 1) on which each element of the top-level JSON array in ``text`` starts.

    Example:
        >>> array_element_lines('[\n {"a": 1},\n\n {"b": [2,\n 3]}, 4]')
        [2, 4, 5]
    """
    decoder = json.JSONDecoder()
    pos = text.index("[") + 1
    line, counted = 1, 0
    lines: list[int] = []
    while True:
        while pos < len(text) and text[pos] in " \t\r\n,":
            pos += 1
        if pos >= len(text) or text[pos] == "]":
            return lines
        line += text.count("\n", counted, pos)
        counted = pos
        lines.append(line)
        _, pos = decoder.raw_decode(text, pos)


def read_json_records(path: Path, text: str | None = None) -> list[tuple[Where, dict[str, Any]]]:
    """Read a JSON array of objects, each paired with its location (the line it starts on, its index).

    ``text`` is the file's text where it was read already.

    Raises:
        InputError: Not JSON (naming the line and column), not an array of objects, or a key given
            twice in one object (naming the record's line and the field: JSON would keep the last value).
    """
    text = _read_text(path) if text is None else text
    try:
        data = loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(f"not valid JSON ({json_problem(exc)})", path=path, line=exc.lineno) from None
    except DuplicateKeyError as exc:
        record, _, field = exc.field.partition(".")
        if text.lstrip().startswith("[") and record.isdigit() and field:
            where = Where(path, line=array_element_lines(text)[int(record)], record=int(record))
            raise where.error(DUPLICATE_KEY, field=field) from None
        raise InputError(DUPLICATE_KEY, path=path, field=exc.field) from None
    if not isinstance(data, list):
        raise InputError("expected a JSON array of records", path=path)
    lines = array_element_lines(text)
    out = []
    for i, rec in enumerate(data):
        where = Where(path, line=lines[i], record=i)
        if not isinstance(rec, dict):
            raise where.error("expected a JSON object")
        out.append((where, rec))
    return out


def read_jsonl_records(path: Path) -> list[tuple[Where, dict[str, Any]]]:
    """Read a JSON-lines file of objects (blank lines allowed), each with its line number."""
    return [(Where(path, line=lineno), rec) for lineno, rec in iter_objects(path)]


def read_json_table(path: Path) -> list[tuple[Where, dict[str, Any]]]:
    """Read a ``.json`` table: a JSON array of objects (pandas' ``to_json(orient="records")``), or JSON lines.

    A file whose text starts with ``[`` is an array, each record with its line and index; any other is read as
    JSON lines (``to_json(orient="records", lines=True)`` under a ``.json`` name), each with its line, but for one
    object over several lines (``{"data": [...]}`` pretty-printed), which is refused as no table, and for an object
    of columns (pandas' ``to_json()`` default, ``{"response": {"0": ...}}``), refused the same way (it said "field
    response: expected a string, found dict").
    """
    text = _read_text(path)
    if text.lstrip().startswith("["):
        return read_json_records(path, text)
    if text.lstrip().startswith("{"):
        with contextlib.suppress(json.JSONDecodeError):  # not one value: JSON lines, read (and checked) below
            whole = json.loads(text)
            nested = [isinstance(v, dict) for v in whole.values()] if isinstance(whole, dict) else []
            if nested and all(nested):
                raise InputError('one JSON object of columns (pandas\' to_json() by default), not a table of rows: '
                                 'save it with to_json(orient="records"), one object per response', path=path)
            lines = "\n" in text.strip()
            if lines or (nested and all(isinstance(v, list) for v in whole.values())):
                raise InputError(f"one JSON object{' over several lines' if lines else ''}, not a table: give an "
                                 'array of objects, one per response (pandas: to_json(orient="records")), or one '
                                 "object per line", path=path)  # fmt: skip
    return read_jsonl_records(path)


#: What the error of a header read with another delimiter says to do, the delimiter it looks separated by in ``{}``.
PASS_DELIMITER = 'pass --delimiter "{}"'


def read_csv_rows(
    path: Path, *, ncols: int | None = None, required: Sequence[str] = (), delimiter: str = ",",
    delimiter_fix: str = PASS_DELIMITER,
) -> tuple[dict[str, int], list[tuple[Where, list[str]]]]:
    r"""Read a CSV file; return (column -> index, rows), each row with the line it starts on.

    Args:
        path: The file (``.gz`` allowed).
        ncols: Headerless file: every row must have exactly this many columns.
        required: Header file: the columns that must be in the header and in every row
            (rows may omit trailing columns that are not required, as MTurk exports do;
            a row longer than the header is an error).
        delimiter: The field separator (``"\t"`` for a TSV file); a first line ``sep=;``, which Excel
            writes and reads, sets it.
        delimiter_fix: What to do when the header looks separated by another delimiter (the caller's way to
            give one: the CLI's option, the Python API's pandas call), that delimiter in ``{}``.
    """
    header = ncols is None
    rows: list[tuple[Where, list[str]]] = []
    names: dict[str, int] = {}
    width = header_width = 0
    with open_text(path) as handle:
        first = handle.readline()
        excel = re.fullmatch(r"sep=(.)", first.rstrip("\r\n"))  # Excel's line naming the delimiter: not the header
        lines = handle if excel else itertools.chain([first], handle)
        skipped, delimiter = (1, excel[1]) if excel else (0, delimiter)
        reader = csv.reader(lines, delimiter=delimiter, strict=True)  # a stray quote is an error, not a merged row
        start = 1 + skipped
        try:
            for row in reader:
                where = Where(path, line=start)
                start = reader.line_num + 1 + skipped
                if not row:
                    continue
                if header and not names:
                    names = header_index(row, where)
                    if (missing := next((n for n in required if n not in names), None)) is not None:
                        hint = (_case_hint(row, missing) or _delimiter_hint(row, delimiter, delimiter_fix)
                                or names_hint(row, missing))  # fmt: skip
                        raise where.error(f"missing column in the header{hint}", field=missing, kind=OtherFormatError)
                    width = max((names[n] + 1 for n in required), default=0)
                    header_width = len(row)
                    continue
                if ncols is not None and len(row) != ncols:
                    raise where.error(f"expected {ncols} columns, found {len(row)}")
                if header and not width <= len(row) <= header_width:
                    need = next((n for n in required if names[n] >= len(row)), None)
                    raise where.error(
                        f"expected {header_width} columns, found {len(row)}", field=need
                    )
                rows.append((where, row))
        except csv.Error as exc:
            raise Where(path, line=start).error(_csv_problem(exc)) from None
    if header and not names:
        raise InputError("empty file: expected a header row", path=path)
    return names, rows


def _csv_problem(exc: csv.Error) -> str:
    """Say what a quoting error of the ``csv`` module means for the row it was found in.

    Example:
        >>> _csv_problem(csv.Error("unexpected end of data"))
        'not valid CSV: a quote opened in this row is never closed (the rest of the file would be one field)'
        >>> _csv_problem(csv.Error("field larger than field limit (131072)"))[:58]
        'a field of this row runs past 131,072 characters, the most'
    """
    if str(exc) == "unexpected end of data":
        return "not valid CSV: a quote opened in this row is never closed (the rest of the file would be one field)"
    if str(exc).endswith("expected after '\"'"):
        return 'not valid CSV: a quoted field goes on after its closing quote (inside quotes, write a quote as "")'
    if str(exc).startswith("new-line character seen in unquoted field"):  # it said "open the file with newline=''"
        return 'not valid CSV: a carriage return ("\\r") inside a field that is not quoted: quote the field, or take ' \
               "the carriage return out"  # fmt: skip
    if str(exc).startswith("field larger than field limit"):  # it said "not valid CSV (field larger than ...)"
        return (f"a field of this row runs past {csv.field_size_limit():,} characters, the most the csv module "
                "reads: is a quote left open? (the Python API takes a pandas DataFrame of any size)")
    return f"not valid CSV ({exc})"


def header_index(row: Sequence[str], where: Where) -> dict[str, int]:
    """Return column name -> index of a CSV header row; a name given twice is an error.

    A column with an empty name is ``Unnamed: I`` (``I`` its place from 0), as ``pd.read_csv`` names it; it was left
    out, and the table that ``dialeval score -o`` wrote back lost its cells.

    Example:
        >>> header_index(["context", "response", ""], Where("t.csv", line=1))
        {'context': 0, 'response': 1, 'Unnamed: 2': 2}
        >>> header_index(["context", "response", "response"], Where("t.csv", line=1))
        Traceback (most recent call last):
        ...
        dialeval.errors.InputError: t.csv:1: field "response": appears twice in the header (columns 2 and 3)
    """
    names: dict[str, int] = {}
    for i, name in enumerate(row):
        if name in ("", None):
            name = f"Unnamed: {i}"
        if name in names:
            raise where.error(f"appears twice in the header (columns {names[name] + 1} and {i + 1})", field=name)
        names[name] = i
    return names


def _case_hint(header: Sequence[str], missing: str) -> str:
    """Say so when the header has the missing column spelled with other letter case or spaces around it.

    Example:
        >>> _case_hint(["Context", "Response"], "context")
        '; the header has "Context" (column names are case-sensitive)'
        >>> _case_hint(["context", "response "], "response")
        '; the header has "response " (a space in a column name counts)'
        >>> _case_hint(["context"], "response")
        ''
    """
    near = next((n for n in header if n.strip().casefold() == missing.strip().casefold()), None)
    if near is None:
        return ""
    why = "a space in a column name counts" if near.strip() == missing.strip() else "column names are case-sensitive"
    return f'; the header has "{near}" ({why})'


def names_hint(have: Sequence[str], missing: str) -> str:
    """Say which name of ``have`` (a header, a record's keys) ``missing`` may stand for, else which names there are.

    Example:
        >>> names_hint(["context", "respons"], "response"), names_hint(["q", "a"], "response")
        ('; did you mean "respons"?', '; there are: q, a')
    """
    names = [n for n in have if n]
    if close := closest(missing, names):
        return f'; did you mean "{close}"?'
    return f"; there are: {', '.join(names[:20])}{', ...' if len(names) > 20 else ''}" if names else ""


def _delimiter_hint(header: list[str], delimiter: str, fix: str = PASS_DELIMITER) -> str:
    """Say so when the header looks separated by another delimiter than the one it was read with.

    Example:
        >>> _delimiter_hint(["context;response;score"], ",")
        '; the header looks separated by ";" (3 columns: context, response, score), not ",": pass --delimiter ";"'
        >>> _delimiter_hint(["context", "response"], ",")
        ''
    """
    try:
        found = csv.Sniffer().sniff(delimiter.join(header), delimiters=",;\t|").delimiter
    except csv.Error:
        return ""
    if found == delimiter:
        return ""
    names = next(csv.reader([delimiter.join(header)], delimiter=found))
    shown, used = (d.replace("\t", "\\t") for d in (found, delimiter))
    return (
        f'; the header looks separated by "{shown}" ({len(names)} columns: {", ".join(names)}), '
        f'not "{used}": {fix.format(shown)}'
    )


def field(rec: dict[str, Any], key: str, where: Where) -> Any:
    """Return ``rec[key]`` or raise an error naming the missing field."""
    if key not in rec:
        raise where.error("missing field", field=key, kind=OtherFormatError if where.record == 0 else InputError)
    return rec[key]


def text_field(rec: dict[str, Any], key: str, where: Where) -> str:
    """Return ``rec[key]`` as a string, or raise if it is missing or not a string."""
    value = field(rec, key, where)
    if not isinstance(value, str):
        raise where.error(f"expected a string, found {json_kind(value)}", field=key)
    return value


def number(value: Any, where: Where, field_name: str) -> float:
    """Return ``value`` as a finite float, or raise naming the field.

    Text with an underscore is refused: Python's ``float`` reads ``"1_0"`` (a slip, or a label) as 10. A JSON
    integer too large for a float (``1`` and 400 zeros) is refused as not finite: ``float`` raised OverflowError.

    Example:
        >>> number("1_0", Where("r.csv", line=2), "q")
        Traceback (most recent call last):
        ...
        dialeval.errors.InputError: r.csv:2: field "q": expected a number, found '1_0'
    """
    if isinstance(value, bool) or (isinstance(value, str) and "_" in value):
        raise where.error(f"expected a number, found {value!r}", field=field_name)
    try:
        out = float(value)
    except OverflowError:  # a JSON integer past a float's range
        out = math.inf
    except (TypeError, ValueError):
        raise where.error(f"expected a number, found {value!r}", field=field_name) from None
    if not math.isfinite(out):
        raise where.error(f"expected a finite number, found {value!r}", field=field_name)
    return out


@cache
def scale_range(scale: str) -> tuple[float, float] | None:
    """Return (LOW, HIGH) of a numeric scale written ``LOW-HIGH`` with LOW below HIGH, else None.

    Example:
        >>> scale_range("1-5"), scale_range(" -2 - 2.5 "), scale_range("5-1"), scale_range("abc")
        ((1.0, 5.0), (-2.0, 2.5), None, None)
    """
    found = _SCALE.fullmatch(scale)
    if found is None:
        return None
    low, high = float(found[1]), float(found[2])
    return (low, high) if low < high else None


def score_list(rec: dict[str, Any], key: str, where: Where) -> list[Any]:
    """Return the per-annotator list ``rec[key]`` or raise if it is missing or not a list."""
    value = field(rec, key, where)
    if not isinstance(value, list):
        raise where.error(f"expected a list of per-annotator scores, found {value!r}", field=key)
    return value


def sha256_file(path: Path) -> str:
    """Return the hex sha256 of a file's bytes."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def split_turns(lines: list[str], last_speaker: str, speakers: tuple[str, str] = ("A", "B")) -> list[str]:
    """Return alternating speaker names for ``lines`` so the one after them is ``last_speaker``.

    Example:
        >>> split_turns(["hi", "hello", "how are you"], "B")
        ['A', 'B', 'A']
    """
    other = speakers[1] if last_speaker == speakers[0] else speakers[0]
    n = len(lines)
    return [other if (n - i) % 2 == 1 else last_speaker for i in range(n)]


def iter_nonempty(text: str, sep: str = "\n") -> Iterator[str]:
    """Yield the stripped, non-empty parts of ``text`` split on ``sep``."""
    for part in text.split(sep):
        if part.strip():
            yield part.strip()
