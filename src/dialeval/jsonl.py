r"""JSONL in and out for every record type, validated at the boundary: dialeval's one JSONL reader.

Every JSONL file dialeval reads goes through :func:`iter_objects`, so every bad
input gets the same kind of error: an :class:`~dialeval.errors.InputError` naming
the file, the line and (where there is one) the field. That covers a missing
file, a folder given as a file, bytes that are not UTF-8 (a binary file), a line
that is not JSON or not an object, a key given twice in one object (JSON would
keep the last value silently), and a non-finite number (``NaN``, ``Infinity``,
``1e999``: not JSON, and never a valid score or rating).
:func:`read_yaml_model` reads a YAML file of one record (a judge or human
protocol) through the same checks.

Example:
    >>> import tempfile, pathlib
    >>> from dialeval.schema import Rating
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "r.jsonl"
    >>> write_jsonl(p, [Rating(item_id="x", dimension="Overall", annotator="a1", value=4.0)])
    1
    >>> [r.value for r in read_jsonl(p, Rating)]
    [4.0]
    >>> _ = p.write_bytes(b'{"a": 1}\n{"a": Infinity}\n')
    >>> list(iter_objects(p))
    Traceback (most recent call last):
    ...
    dialeval.errors.InputError: ...r.jsonl:2: field "a": Infinity is not a finite number
"""

from __future__ import annotations

import gzip
import json
import math
import re
import zlib
from collections.abc import Iterable, Iterator, Mapping, Sequence
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO, TypeVar

from pydantic import BaseModel, TypeAdapter, ValidationError

from dialeval.atomic import atomic_write
from dialeval.errors import InputError, MissingExtraError, closest

if TYPE_CHECKING:
    from _typeshed import DataclassInstance
    from pydantic_core import ErrorDetails

M = TypeVar("M", bound=BaseModel)

_BOM = b"\xef\xbb\xbf"
_MAYBE_NONFINITE = re.compile(r"NaN|Infinity|\d[eE]\+?\d{3}")
#: A ``\\uD800``-``\\uDFFF`` escape: JSON may spell half of a surrogate pair, which is no character (UTF-8 has none).
_MAYBE_SURROGATE = re.compile(r"\\u[dD][89a-fA-F]")
_SURROGATE = re.compile("[\ud800-\udfff]")


def check_file(path: str | Path) -> Path:
    """Return ``path`` if it is a readable file, else raise an :class:`InputError` saying what it is.

    Example:
        >>> import tempfile
        >>> check_file(tempfile.mkdtemp())
        Traceback (most recent call last):
        ...
        dialeval.errors.InputError: ...: is a folder, expected a file
    """
    p = Path(path)
    if p.is_dir():
        raise InputError("is a folder, expected a file", path=p)
    if not p.exists():
        std = str(path) == "-"  # a shell user's "read standard input"
        raise InputError("is not standard input here: give the file to read" if std else "file not found", path=p)
    if not p.is_file():
        raise InputError("not a regular file", path=p)
    return p


def _open_binary(p: Path) -> BinaryIO:
    check_file(p)
    try:
        return gzip.open(p, "rb") if p.suffix.lower() == ".gz" else p.open("rb")  # type: ignore[return-value]
    except OSError as exc:
        raise InputError(f"cannot read ({exc.strerror or exc})", path=p) from None


#: The byte-order marks of UTF-16 (and UTF-32), which Excel's "Unicode Text" and Windows' Notepad write.
_WIDE_BOMS = (b"\xff\xfe", b"\xfe\xff", b"\x00\x00\xfe\xff")
WIDE_TEXT = 'UTF-16 or UTF-32 text, and this reads UTF-8: save it as UTF-8 (in Excel: "CSV UTF-8", not "Unicode Text")'
#: The start of UTF-16 or UTF-32 text without a byte-order mark (pandas' ``encoding="utf-16-le"``): an ASCII character
#: and NUL bytes, little- or big-endian. UTF-8 text has no NUL byte.
_WIDE_NO_BOM = re.compile(rb"[^\0]\0[^\0]\0|\0[^\0]\0[^\0]|[^\0]\0\0\0|\0\0\0[^\0]")


#: How to make a file UTF-8 text, where nothing more fitting is known.
_AS_TEXT = 'save it as UTF-8 text (a sheet as "CSV UTF-8")'
#: The first bytes of binary files given where text is read, what each is, and how to make it text.
_BINARY = (
    (b"PK\x03\x04", "a ZIP archive (an Excel .xlsx or OpenDocument workbook?)", _AS_TEXT),
    (b"\xd0\xcf\x11\xe0", "an Excel 97-2003 workbook (.xls)", _AS_TEXT),
    (b"PAR1", "a Parquet file", 'write it as JSON lines, pd.read_parquet(path).to_json("my.jsonl", orient="records", '
     'lines=True), or give dialeval.score the DataFrame'),
    (b"\x1f\x8b", "gzipped (only a name ending in .gz is unzipped)", "end its name with .gz, or unzip it"),
    (b"SQLite format 3\x00", "an SQLite database", _AS_TEXT),
)


def _not_text(head: bytes, p: Path) -> None:
    """Refuse a file that starts as UTF-16/32 text or a known binary format, naming what it is.

    They said "not text: a NUL byte at column 2" (UTF-16) or "... column 5" (an .xlsx).

    Example:
        >>> _not_text(b"PAR1 and more", Path("r.parquet"))  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        dialeval.errors.InputError: r.parquet:1: not text but a Parquet file: write it as JSON lines, pd.read_parquet...
    """
    if head.startswith(_WIDE_BOMS):
        raise InputError(WIDE_TEXT, path=p, line=1)
    for magic, kind, fix in _BINARY:
        if head.startswith(magic):
            raise InputError(f"not text but {kind}: {fix}", path=p, line=1)
    if _WIDE_NO_BOM.match(head):  # it said "not text: a NUL byte at column 2", naming no encoding
        raise InputError(WIDE_TEXT, path=p, line=1)


def _not_utf8(byte: int, column: int) -> str:
    """Say where a file stops being UTF-8 text, and the character the byte is in Windows-1252, the likely encoding.

    Example:
        >>> _not_utf8(0xE9, 7)
        'not UTF-8 text: byte 0xe9 at column 7 ("é" in Windows-1252 or Latin-1?): save the file as UTF-8'
        >>> _not_utf8(0, 2)
        'not text: a NUL byte at column 2 (a binary file, or another encoding?)'
    """
    try:
        char = bytes([byte]).decode("cp1252") if byte >= 0x80 else ""
    except UnicodeDecodeError:  # 0x81, 0x8d, 0x8f, 0x90, 0x9d are no character there
        char = ""
    if char:
        return f'not UTF-8 text: byte 0x{byte:02x} at column {column} ("{char}" in Windows-1252 or Latin-1?): save ' \
               "the file as UTF-8"  # fmt: skip
    kind = "not text: a NUL byte" if byte == 0 else f"not UTF-8 text: byte 0x{byte:02x}"
    return f"{kind} at column {column} (a binary file, or another encoding?)"


def _decode(raw: bytes, p: Path, line: int) -> str:
    if line == 1:
        _not_text(raw, p)
    if b"\0" in raw:
        raise InputError(_not_utf8(0, raw.index(b"\0") + 1), path=p, line=line)
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(_not_utf8(raw[exc.start], exc.start + 1), path=p, line=line) from None


def _unreadable(exc: Exception) -> str:
    """Say why the bytes of an open file could not be read: a .gz that is not gzip-compressed, or a damaged one.

    Plain text named .gz said "cannot read (Not a gzipped file (b'co'))".
    """
    if isinstance(exc, gzip.BadGzipFile):
        return "not gzip-compressed, though its name ends in .gz: gzip it, or take .gz off its name"
    if isinstance(exc, zlib.error):  # no OSError: it was a traceback
        return f"damaged gzip data ({exc})"
    return f"cannot read ({exc})"


def read_text(path: str | Path) -> str:
    """Return a whole UTF-8 text file (``*.gz`` gunzipped, a leading BOM dropped).

    Bytes that are not UTF-8, a folder or a missing file raise an :class:`InputError`
    naming the file (and the line of the first bad byte).
    """
    p = Path(path)
    with _open_binary(p) as handle:
        try:
            data = handle.read()
        except (OSError, EOFError, zlib.error) as exc:
            raise InputError(_unreadable(exc), path=p) from None
    data = data.removeprefix(_BOM)
    _not_text(data, p)
    if b"\0" in data:
        at = data.index(b"\0")
        column = at - data.rfind(b"\n", 0, at)
        raise InputError(_not_utf8(0, column), path=p, line=data.count(b"\n", 0, at) + 1)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        column = exc.start - data.rfind(b"\n", 0, exc.start)
        raise InputError(_not_utf8(data[exc.start], column), path=p, line=line) from None


def _walk(value: Any, where: str = "") -> Iterator[tuple[str, Any]]:
    """Yield ``(field path, node)`` for a parsed JSON value and every value inside it, depth first."""
    yield where, value
    items: Iterable[tuple[Any, Any]] = ()
    if isinstance(value, _Pairs):
        items = value
    elif isinstance(value, dict):
        items = value.items()
    elif isinstance(value, list):
        items = enumerate(value)
    for key, sub in items:
        yield from _walk(sub, f"{where}.{key}" if where else str(key))


def lone_surrogate(value: Any, path: str | Path, line: int | None) -> InputError | None:
    r"""Return the error for the first key or string in ``value`` that holds half of a surrogate pair, or None.

    JSON can spell one (``"\ud800"``), and so can a Python string; UTF-8 cannot, so it failed only when
    written (a ``UnicodeEncodeError`` traceback, with nothing to say where it came from).

    Example:
        >>> print(lone_surrogate(json.loads('{"turns": [{"text": "a\\ud800"}], "ok": "\\ud83d\\ude00"}'), "d", 3))
        d:3: field "turns.0.text": \ud800 is half of a UTF-16 surrogate pair, no character (text must be valid Unicode)
    """
    if (half := _surrogate_in(value)) is None:
        return None
    return InputError(f"{half[1]} is half of a UTF-16 surrogate pair, no character (text must be valid Unicode)",
                      path=path, line=line, field=half[0])  # fmt: skip


def _surrogate_in(value: Any) -> tuple[str, str] | None:
    """Return (field path, the escape) of the first key or string in ``value`` that holds half of a surrogate pair."""
    for where, node in _walk(value):
        keys = [k for k in node if isinstance(k, str)] if isinstance(node, dict) else []
        for text, field in [*((k, f"{where}.{k}" if where else k) for k in keys), (node, where)]:
            if isinstance(text, str) and (found := _SURROGATE.search(text)):
                return field or "<record>", f"\\u{ord(found.group()):04x}"
    return None


def json_kind(value: Any) -> str:
    """Name a parsed JSON value's kind in JSON's words (Python's said "found NoneType" for null).

    Example:
        >>> [json_kind(v) for v in (None, True, 3, "x", [1], {"a": 1})]
        ['null', 'true', 'a number', 'a string', 'a JSON array', 'a JSON object']
    """
    if value is None or isinstance(value, bool):
        return json.dumps(value)
    kinds = {str: "a string", list: "a JSON array", dict: "a JSON object", int: "a number", float: "a number"}
    return next((word for kind, word in kinds.items() if isinstance(value, kind)), type(value).__name__)


def nonfinite_field(value: Any) -> tuple[str, float] | None:
    """Return (field path, value) of the first non-finite float in a parsed JSON value.

    Example:
        >>> nonfinite_field({"a": [1.0, float("nan")]}), nonfinite_field({"a": 1.0})
        (('a.1', nan), None)
    """
    for where, node in _walk(value):
        if isinstance(node, float) and not math.isfinite(node):
            return where or "<record>", node
    return None


class _DuplicateKey(Exception):
    """Raised by :func:`_unique_keys` while a line is parsed: an object names a key twice."""


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """Build a parsed object from its pairs, refusing a key given twice (``json`` would keep the last silently)."""
    obj = dict(pairs)
    if len(obj) != len(pairs):
        raise _DuplicateKey
    return obj


#: One decoder built once: ``json.loads(line, object_pairs_hook=...)`` would build a decoder for every line.
_DECODER = json.JSONDecoder(object_pairs_hook=_unique_keys)


class _Pairs(list[tuple[str, Any]]):
    """A JSON object kept as its ``(key, value)`` pairs, duplicates included (to find a duplicate's path)."""


def _duplicate_path(value: Any) -> str | None:
    """Return the field path (``tags.system``, ``turns.0.text``) of the first key given twice in one object."""
    for where, node in _walk(value):
        if isinstance(node, _Pairs):
            keys = [key for key, _ in node]
            twice = next((k for i, k in enumerate(keys) if k in keys[:i]), None)
            if twice is not None:
                return f"{where}.{twice}" if where else twice
    return None


#: The tokens of JSON text: a string, a punctuation mark, or a number, true, false or null.
_JSON_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[{}\[\]:,]|[^\s{}\[\]:,"]+')


def _key_line(text: str, field: str) -> int | None:
    r"""Return the line of the second of a key given twice in one object, at ``field`` (as :func:`_duplicate_path`).

    Example:
        >>> _key_line('{"a": [1,\n  {"b": 2,\n   "b": 3}]}', "a.1.b")
        3
    """
    top: tuple[str, set[str] | None, list[Any]] = ("", None, ["", False])  # path, keys seen (None: an array), ...
    frames = [top]  # ... and [its slot now, whether a key comes next]
    for token in _JSON_TOKEN.finditer(text):
        tok = token.group()
        path, keys, state = frames[-1]
        if tok in ("{", "["):
            here = f"{path}.{state[0]}" if path else str(state[0])
            frames.append((here, set(), ["", True]) if tok == "{" else (here, None, [0, False]))
        elif tok in ("}", "]"):
            frames.pop()
        elif tok == ",":
            state[0], state[1] = ("", True) if keys is not None else (state[0] + 1, False)
        elif keys is not None and state[1] and tok.startswith('"'):
            key = json.loads(tok)
            if key in keys and (f"{path}.{key}" if path else key) == field:
                return text.count("\n", 0, token.start()) + 1
            keys.add(key)
            state[:] = [key, False]
    return None


class DuplicateKeyError(ValueError):
    """A JSON object names a key twice; ``field`` is the key's path in the parsed value (``3.turns.0.text``).

    ``line`` is the line of its second time in the text parsed, counted from 1.
    """

    def __init__(self, field: str, line: int | None = None) -> None:
        super().__init__(field)
        self.field = field
        self.line = line


#: What a key given twice is told, after the file, line and field.
DUPLICATE_KEY = "appears twice in one JSON object (only the last value would be kept)"


def loads(text: str) -> Any:
    """Parse JSON text as :func:`json.loads` does, except that a key given twice in one object is refused.

    Raises:
        json.JSONDecodeError: The text is not JSON.
        DuplicateKeyError: An object names a key twice (``json`` would keep the last value silently).

    Example:
        >>> loads('{"a": [1, {"b": 2}]}')
        {'a': [1, {'b': 2}]}
        >>> loads('{"a": [1, {"b": 2, "b": 3}]}')
        Traceback (most recent call last):
        ...
        dialeval.jsonl.DuplicateKeyError: a.1.b
    """
    try:
        return _DECODER.decode(text)
    except _DuplicateKey:
        field = _duplicate_path(json.loads(text, object_pairs_hook=_Pairs)) or ""
        raise DuplicateKeyError(field, _key_line(text, field)) from None


#: Suffixes of formats other than JSON lines, and the format each names: a JSONL output named so would be read as
#: that format by other programs, and a JSONL input named so is likely that format.
NOT_JSONL = {".csv": "a CSV", ".tsv": "a TSV", ".json": "a JSON", ".txt": "a plain text", ".md": "a Markdown",
             ".html": "an HTML", ".parquet": "a Parquet", ".xlsx": "an Excel", ".xls": "an Excel", ".yaml": "a YAML",
             ".yml": "a YAML"}  # fmt: skip


def _named_as(p: Path) -> str:
    """Return what a file that is not JSON lines is named as, for its syntax error ("" for a JSONL name or JSON).

    Example:
        >>> _named_as(Path("my.csv.gz")), _named_as(Path("s.jsonl")), _named_as(Path("d.json"))
        ('; the file is named as a CSV file, and this reads JSON lines (one record per line)', '', '')
    """
    suffix = Path(p.name.removesuffix(".gz")).suffix.lower()
    fmt = NOT_JSONL.get(suffix) if suffix != ".json" else None  # published ".json" files may be JSON lines
    return f"; the file is named as {fmt} file, and this reads JSON lines (one record per line)" if fmt else ""


def json_problem(exc: json.JSONDecodeError) -> str:
    """Return what ``json`` found wrong and at which column, as one phrase.

    Example:
        >>> try:
        ...     json.loads('{"a')
        ... except json.JSONDecodeError as exc:
        ...     print(json_problem(exc))
        Unterminated string starting at column 2
    """
    return f"{exc.msg.removesuffix(' at')} at column {exc.colno}"  # "starting at", "control character at"


def _parse(line: str, p: Path, lineno: int) -> Any:
    """Parse one JSONL line; a syntax error or a key given twice in one object is an error naming the line."""
    try:
        return loads(line)
    except json.JSONDecodeError as exc:
        bom = line.startswith("\ufeff")  # a byte-order mark inside the file: said as json.loads says it
        problem = "Unexpected UTF-8 BOM (decode using utf-8-sig) at column 1" if bom else json_problem(exc)
        # '{"context": "Hi",' then more lines: pretty-printed JSON said only "Expecting property name"
        cut = exc.pos >= len(line.rstrip()) and line.lstrip().startswith(("{", "[")) and not _named_as(p)
        hint = "; the value goes on past the line's end: JSON lines hold one object per line (pretty-printed?)"
        raise InputError(f"not valid JSON ({problem}){_named_as(p)}{hint if cut else ''}", path=p,
                         line=lineno) from None  # fmt: skip
    except DuplicateKeyError as exc:
        raise InputError(DUPLICATE_KEY, path=p, line=lineno, field=exc.field) from None


def iter_objects(path: str | Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield ``(line number, object)`` for each non-blank line of a JSONL file (``*.gz`` allowed).

    Raises:
        InputError: Naming the file, line and field: a missing file or a folder, bytes that are
            not UTF-8, a line that is not a JSON object, a key given twice in one object, or a
            non-finite number.
    """
    p = Path(path)
    with _open_binary(p) as handle:
        lineno = 0
        try:
            for lineno, raw in enumerate(handle, start=1):
                line = _decode(raw.removeprefix(_BOM) if lineno == 1 else raw, p, lineno)
                if not line.strip():
                    continue
                obj = _parse(line.rstrip("\r\n"), p, lineno)  # with its line ending, an error was "at column 1"
                if isinstance(obj, list):
                    raise InputError("expected a JSON object, found list (a JSON array: JSON lines hold one object "
                                     "per line)", path=p, line=lineno)  # fmt: skip
                if not isinstance(obj, dict):  # it said "found NoneType" for a line "null"
                    raise InputError(f"a line holds {json_kind(obj)}, expected a JSON object", path=p, line=lineno)
                if _MAYBE_NONFINITE.search(line) and (bad := nonfinite_field(obj)) is not None:
                    literal = "NaN" if math.isnan(bad[1]) else ("-" if bad[1] < 0 else "") + "Infinity"
                    raise InputError(f"{literal} is not a finite number", path=p, line=lineno, field=bad[0])
                if _MAYBE_SURROGATE.search(line) and (half := lone_surrogate(obj, p, lineno)) is not None:
                    raise half
                yield lineno, obj
        except (OSError, EOFError, zlib.error) as exc:  # a damaged .gz
            raise InputError(_unreadable(exc), path=p, line=lineno + 1) from None


def field_of(err: ValidationError, model: type[BaseModel] | None = None) -> tuple[str, str]:
    """Return the field (dotted path) and message of a validation error's first problem.

    A validator's own message is kept as it wrote it (pydantic puts "Value error, " before it); a missing or
    unknown field is said in words (:func:`pydantic_message`), an unknown one first (a misspelt key also makes
    the key it stands for missing).
    """
    first = first_problem(err)
    loc = ".".join(str(x) for x in first["loc"]) or "<record>"
    fields = list(model.model_fields) if model is not None and len(first["loc"]) == 1 else []
    return loc, pydantic_message(first["type"], first["msg"], str(first["loc"][-1]) if first["loc"] else "", fields)


def first_problem(err: ValidationError) -> ErrorDetails:
    """Return the problem of ``err`` to report: an unknown key first (a misspelt key also makes its key missing)."""
    errors = err.errors()
    return next((e for e in errors if e["type"] == "extra_forbidden"), errors[0])


def pydantic_message(kind: str, msg: str, key: str, fields: Sequence[str] = ()) -> str:
    """Say a pydantic error in words: a missing field, or an unknown one with the closest of ``fields`` (else all).

    Example:
        >>> pydantic_message("extra_forbidden", "Extra inputs are not permitted", "temprature", ["temperature"])
        'unknown field; did you mean "temperature"?'
        >>> pydantic_message("extra_forbidden", "Extra inputs are not permitted", "colour", ["name", "response"])
        'unknown field; the fields: name, response'
        >>> pydantic_message("missing", "Field required", "value")
        'missing field'
    """
    if kind == "missing":  # pydantic: "Field required"
        return "missing field"
    if kind == "extra_forbidden":  # pydantic: "Extra inputs are not permitted"
        close = closest(key, fields, cutoff=0.6)
        hint = f'; did you mean "{close}"?' if close else f"; the fields: {', '.join(fields)}" if fields else ""
        return "unknown field" + hint
    return msg.removeprefix("Value error, ")


#: The keys that only one kind of dialeval record has, to say which kind a record of the wrong file is.
_KINDS = {"Score": ("metric", "item_id"), "Rating": ("dimension", "annotator"),
          "Candidate": ("dialogue_id", "turn_index"), "Dialogue": ("turns",)}  # fmt: skip


def _other_kind(model: type[BaseModel], obj: dict[str, Any]) -> str:
    """Return a hint when ``obj`` is plainly another kind of record than ``model`` (a file given for another).

    Example:
        >>> from dialeval.schema import Rating
        >>> _other_kind(Rating, {"item_id": "i", "metric": "length", "value": 3})
        '; the line holds a Score record, not a Rating: is this the right file?'
    """
    kind = next((k for k, keys in _KINDS.items() if all(key in obj for key in keys)), model.__name__)
    if kind == model.__name__:
        return ""
    return f"; the line holds a {kind} record, not a {model.__name__}: is this the right file?"


def validate(model: type[M], obj: dict[str, Any], path: str | Path, line: int | None = None) -> M:
    """Validate one parsed object as ``model``; an error names the file, line and field.

    A record of another kind (a scores file given for ratings) says so: it said only 'field "dimension": Field
    required'.
    """
    try:
        return model.model_validate(obj)
    except ValidationError as exc:
        other = _other_kind(model, obj)  # then its keys are no misspelling of this model's: no hint, no list
        field, msg = field_of(exc, None if other else model)
        raise InputError(msg + other, path=path, line=line, field=field) from None


def iter_records(path: str | Path, model: type[M]) -> Iterator[tuple[int, M]]:
    """Yield ``(line number, record)`` for each record of a JSONL file of ``model`` records."""
    for lineno, obj in iter_objects(path):
        yield lineno, validate(model, obj, path, lineno)


def iter_jsonl(path: str | Path, model: type[M]) -> Iterator[M]:
    """Yield validated records from a JSONL file.

    Blank lines are allowed. The first malformed line raises :class:`InputError`
    naming the file, the line number and the field.
    """
    for _, rec in iter_records(path, model):
        yield rec


def read_jsonl(path: str | Path, model: type[M]) -> list[M]:
    """Read a whole JSONL file of ``model`` records (see :func:`iter_jsonl`)."""
    return list(iter_jsonl(path, model))


def read_unique(path: str | Path, model: type[M], key: str = "id") -> dict[str, tuple[int, M]]:
    r"""Read records that must have distinct ``key`` values: ``{key: (line, record)}`` in file order.

    Example:
        >>> import tempfile, pathlib
        >>> from dialeval.schema import Dialogue
        >>> p = pathlib.Path(tempfile.mkdtemp()) / "d.jsonl"
        >>> _ = p.write_text('{"id": "a", "turns": []}\n{"id": "b", "turns": []}\n{"id": "a", "turns": []}\n')
        >>> read_unique(p, Dialogue)
        Traceback (most recent call last):
        ...
        dialeval.errors.InputError: ...d.jsonl:3: field "id": duplicate id "a" (first on line 1)
    """
    out: dict[str, tuple[int, M]] = {}
    for lineno, rec in iter_records(path, model):
        value = str(getattr(rec, key))
        if value in out:
            raise InputError(
                f'duplicate {key} "{value}" (first on line {out[value][0]})', path=path, line=lineno, field=key
            )
        out[value] = (lineno, rec)
    return out


class _KeyTwice(Exception):
    """A key given twice in one YAML mapping: its name, its line and the line of the first."""

    def __init__(self, key: str, line: int, first: int) -> None:
        super().__init__(key)
        self.key, self.line, self.first = key, line, first


@cache
def _unique_key_loader() -> Any:
    """Return a ``yaml.SafeLoader`` that refuses a key given twice in one mapping (PyYAML keeps the last one)."""
    import yaml  # type: ignore[import-untyped]

    class UniqueKeyLoader(yaml.SafeLoader):  # type: ignore[misc]
        def construct_document(self, node: Any) -> Any:
            self.paths: dict[int, str] = {}  # a mapping node's place (``ratings``, ``criteria.0``), for the error
            stack = [(node, "")]
            while stack:
                at, path = stack.pop()
                if id(at) in self.paths:  # an alias: its node is placed where it was first written
                    continue
                self.paths[id(at)] = path
                if isinstance(at, yaml.MappingNode):
                    stack += [(v, f"{path}.{k.value}".lstrip(".")) for k, v in at.value if isinstance(k.value, str)]
                elif isinstance(at, yaml.SequenceNode):
                    stack += [(v, f"{path}.{n}".lstrip(".")) for n, v in enumerate(at.value)]
            return super().construct_document(node)

        def construct_mapping(self, node: Any, deep: bool = False) -> Any:
            seen: dict[Any, int] = {}
            for key_node, _ in node.value:
                if key_node.tag == "tag:yaml.org,2002:merge":  # "<<: *defaults" merges; its keys may be set again
                    continue
                key = self.construct_object(key_node, deep=True)
                if not isinstance(key, (str, int, float, bool, type(None))):  # "? [a, b]": PyYAML's own error
                    continue
                line = key_node.start_mark.line + 1
                if key in seen:
                    raise _KeyTwice(f"{self.paths.get(id(node), '')}.{key}".lstrip("."), line, seen[key])
                seen[key] = line
            return super().construct_mapping(node, deep)

    return UniqueKeyLoader


def load_yaml(text: str, path: Path) -> Any:
    r"""Parse the YAML ``text`` of ``path``; bad YAML, or a key given twice in one mapping, is one error with its line.

    A line past the end (an unclosed bracket) is the last line. PyYAML keeps the last of two values of one key,
    silently; a mapping file or protocol that sets a key twice is refused.

    Example:
        >>> load_yaml("response: reply\nratings: {q: Overall}\nresponse: answer\n", Path("m.yaml"))
        Traceback (most recent call last):
        ...
        dialeval.errors.InputError: m.yaml:3: field "response": is given twice in one mapping (first on line 1)
        >>> load_yaml("response: reply\nratings:\n  q: Overall\n  q: Fluency\n", Path("m.yaml"))
        Traceback (most recent call last):
        ...
        dialeval.errors.InputError: m.yaml:4: field "ratings.q": is given twice in one mapping (first on line 3)
    """
    import yaml

    try:
        return yaml.load(text, Loader=_unique_key_loader())  # a SafeLoader
    except _KeyTwice as exc:
        raise InputError(f"is given twice in one mapping (first on line {exc.first})", path=path, line=exc.line,
                         field=exc.key) from None  # fmt: skip
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        problem = " ".join(str(getattr(exc, "problem", None) or exc).split())
        line = min(mark.line + 1, len(text.splitlines()) or 1) if mark else None  # not past the end: at the last line
        raise InputError(f"not valid YAML ({problem})", path=path, line=line) from None


def read_yaml_model(path: str | Path, model: type[M], *, extra: str) -> tuple[M, str]:
    r"""Read a YAML file holding one mapping, validated as ``model``; return the record and the file's text.

    Every error is one line naming the file and the line (not a file, not UTF-8 text, not YAML) or
    the field (a missing, unknown or bad value), as for a JSONL record.

    Args:
        path: The YAML file.
        model: The pydantic model of the mapping.
        extra: The dialeval extra that installs pyyaml, named when it is missing.

    Raises:
        InputError: The file cannot be read or is not a valid ``model`` mapping.
        MissingExtraError: pyyaml is not installed.

    Example:
        >>> import tempfile, pathlib
        >>> from dialeval.schema import Rating
        >>> p = pathlib.Path(tempfile.mkdtemp()) / "r.yaml"
        >>> _ = p.write_text("item_id: x\ndimension: O\nannotator: a\nvalue: [1\n")
        >>> read_yaml_model(p, Rating, extra="human")
        Traceback (most recent call last):
        ...
        dialeval.errors.InputError: ...r.yaml:4: not valid YAML (expected ',' or ']', but got '<stream end>')
    """
    try:
        import yaml  # type: ignore[import-untyped]  # noqa: F401 - only to name the extra that installs it
    except ImportError as exc:  # pragma: no cover - pyyaml comes with the extras that read YAML
        raise MissingExtraError("pyyaml", extra=extra) from exc
    text = read_text(path)  # a folder, a missing file or bytes that are not UTF-8: one InputError naming the file
    raw = load_yaml(text, Path(path))
    if not isinstance(raw, dict):
        raise InputError("expected a mapping at the top level", path=path)
    if (half := lone_surrogate(raw, path, None)) is not None:  # YAML spells "\ud800" too
        raise half
    try:
        return validate(model, raw, path), text
    except InputError as exc:  # the line of the field, as a JSONL record's error names its line
        if exc.field is None or exc.line is not None:
            raise
        raise InputError(exc.message, path=path, line=yaml_line(text, exc.field.split(".")), field=exc.field) from None


#: The tag of a YAML scalar read as text (a plain ``yes``, ``3`` or ``null`` is read as another kind).
_YAML_TEXT = "tag:yaml.org,2002:str"


def yaml_line(text: str, loc: Sequence[str]) -> int | None:
    r"""Return the line (from 1) of the key at ``loc`` in a YAML mapping, e.g. ``["criteria", "0", "answer"]``.

    A number in ``loc`` is a list's item (its first line); ``"[key]"`` (pydantic's place of a key that is no text)
    the first key YAML reads as no text (``yes``, ``3``, ``null``). The line of the deepest key found (None if the
    first is not there).

    Example:
        >>> yaml_line("response: r\nscales:\n  fluency: 5-1\n", ["scales", "fluency"])
        3
        >>> yaml_line("name: x\ncriteria:\n  - name: a\n  - name: b\n    answer: {}\n", ["criteria", "1", "answer"])
        5
        >>> yaml_line("labels:\n  Poor: 1\n  yes: 3\n", ["labels", "[key]"])
        3
    """
    import yaml

    node = yaml.compose(text, Loader=yaml.SafeLoader)
    line = None
    for key in loc:
        if isinstance(node, yaml.SequenceNode) and key.isdigit() and int(key) < len(node.value):
            node = node.value[int(key)]
            line = node.start_mark.line + 1
            continue
        pairs = node.value if isinstance(node, yaml.MappingNode) else []
        found = next(((k, v) for k, v in pairs if (k.tag != _YAML_TEXT if key == "[key]" else k.value == key)), None)
        if found is None:
            break
        line, node = found[0].start_mark.line + 1, found[1]
    return line


def write_jsonl(path: str | Path, records: Iterable[BaseModel | DataclassInstance]) -> int:
    r"""Write records (pydantic models or dataclasses) as JSONL atomically; return how many were written.

    Each record is one line of compact JSON, its fields in declaration order; a NaN or an infinity
    is written as null, so every file written here reads back through :func:`iter_objects`.

    Example:
        >>> import dataclasses, tempfile, pathlib
        >>> @dataclasses.dataclass
        ... class Row:
        ...     metric: str
        ...     value: float
        >>> p = pathlib.Path(tempfile.mkdtemp()) / "rows.jsonl"
        >>> write_jsonl(p, [Row("bleu", 0.5), Row("len", float("nan"))]), p.read_text()
        (2, '{"metric":"bleu","value":0.5}\n{"metric":"len","value":null}\n')
    """
    n = 0
    with atomic_write(path) as handle:
        for rec in records:
            handle.write(rec.model_dump_json() if isinstance(rec, BaseModel) else _dataclass_json(rec))
            handle.write("\n")
            n += 1
    return n


def _dataclass_json(rec: DataclassInstance) -> str:
    return _adapter(type(rec)).dump_json(rec).decode("utf-8")


@cache
def _adapter(cls: type[Any]) -> TypeAdapter[Any]:
    return TypeAdapter(cls)


def nan_as_none(values: Mapping[str, Any]) -> dict[str, Any]:
    """Return ``values`` with each float NaN as None, as :func:`write_jsonl` writes it (null).

    Example:
        >>> nan_as_none({"value": float("nan"), "n": 3, "note": ""})
        {'value': None, 'n': 3, 'note': ''}
    """
    return {k: None if isinstance(v, float) and math.isnan(v) else v for k, v in values.items()}

