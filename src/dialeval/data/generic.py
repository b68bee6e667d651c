r"""Load your own data: a JSONL/CSV file with a column mapping, or dialeval's record files.

Example:
    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "mine.csv"
    >>> _ = p.write_text("ctx,resp,sys,q_ann1,q_ann2\nhi|how are you?,fine,bot,4,5\n")
    >>> m = ColumnMapping(response="resp", context="ctx", turn_separator="|", system="sys",
    ...                   annotator_columns={"q_ann1": "ann1", "q_ann2": "ann2"},
    ...                   dimension="quality", scale="1-5")
    >>> b = load_table(p, m)
    >>> b.candidates[0].id, [(r.annotator, r.value) for r in b.ratings]
    ('mine-0000:bot', [('ann1', 4.0), ('ann2', 5.0)])
"""

from __future__ import annotations

import ast
import datetime
import json
import math
import numbers
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from dialeval.data._common import (
    DECIMAL_COMMA,
    PASS_DELIMITER,
    Where,
    iter_nonempty,
    names_hint,
    number,
    read_csv_rows,
    read_json_table,
    read_jsonl_records,
    scale_range,
    split_turns,
)
from dialeval.data.benchmark import Benchmark
from dialeval.errors import InputError, closest, ensure_unique
from dialeval.jsonl import (
    check_file,
    first_problem,
    iter_records,
    json_kind,
    load_yaml,
    lone_surrogate,
    pydantic_message,
    read_text,
    read_unique,
    yaml_line,
)
from dialeval.schema import UNKNOWN_SYSTEM, Candidate, Dialogue, Rating, Turn
from dialeval.words import counted, some_of


@dataclass(frozen=True)
class ColumnMapping:
    """Which column holds what.

    Attributes:
        response: The response column. It may be the context column where that holds a chat log's messages
            ending with the assistant's: that last message is the response, the messages before it the context.
        context: The context column (empty contexts give zero-turn dialogues).
        turn_separator: Splits the context into turns (speakers alternate "A"/"B",
            the response speaker "B" following the last turn).
        system: The system column (``"unknown"`` without one).
        references: Reference columns; a JSONL value may be a list of references.
        ratings: Long or single-annotator form: rating column -> dimension.
        annotator: Long form: the column naming the annotator of ``ratings``
            (without it the annotator is ``"annotator"``).
        annotator_columns: Wide form: one column per annotator -> annotator name,
            all rating ``dimension``.
        dimension: The dimension of ``annotator_columns``.
        scale: The answer scale of every rating, ``LOW-HIGH`` with LOW below HIGH, e.g. ``"1-5"``
            (a rating outside it is an error; empty: no scale).
        scales: Per-dimension scales that override ``scale``.
        item_id: The column holding each response's id (default ``<dialogue>:<system>``, a system's second
            response in a dialogue ``#2`` after it, and so on; an id another row's took, as dialogue ``a`` system
            ``b:c`` and dialogue ``a:b`` system ``c`` would share, takes the next free ``#n``).
        dialogue_id: The column holding each dialogue's id (default: one per distinct context).
        knowledge: The column holding grounding facts (split on ``turn_separator``; a JSONL list).
        domain: The column holding the dialogue's domain.
        tags: Columns copied onto each response's tags (for ``--by``).
        systems: Several responses per row, one per system: every column name may
            contain ``{system}``, replaced by each of these names in turn.
        pseudonymise: Store annotators as ``annotator-001``, ``annotator-002``, ... in
            order of first appearance (for crowd worker ids), never the ids themselves.
        delimiter: The field separator of a CSV file (default: tab for ``.tsv``, else comma).
        keep_empty_responses: Keep responses that are empty (or null, or only whitespace) as
            empty texts, for data where a system answered nothing and people rated that;
            without it they are an error.
        labels: Ratings given as words: each word's number (``{"Poor": 1, "Good": 3}``); a rating cell
            holds a number or one of these words.
    """

    response: str
    context: str | None = None
    turn_separator: str = "\n"
    system: str | None = None
    references: tuple[str, ...] = ()
    ratings: Mapping[str, str] = field(default_factory=dict)
    annotator: str | None = None
    annotator_columns: Mapping[str, str] = field(default_factory=dict)
    dimension: str = "rating"
    scale: str = ""
    scales: Mapping[str, str] = field(default_factory=dict)
    item_id: str | None = None
    dialogue_id: str | None = None
    knowledge: str | None = None
    domain: str | None = None
    tags: tuple[str, ...] = ()
    systems: tuple[str, ...] = ()
    pseudonymise: bool = False
    delimiter: str | None = None
    keep_empty_responses: bool = False
    labels: Mapping[str, float] = field(default_factory=dict)

    def __post_init__(self) -> None:
        """Refuse a scale that is not ``LOW-HIGH`` (``scale`` is ``--scale`` on the command line), and bad separators.

        The command line and mapping files refuse them first, naming the option or the file's line.
        """
        check_scale(self.scale, field="--scale")
        for dim, scale in self.scales.items():
            check_scale(scale, field=f"scales.{dim}")
        check_separators(self.turn_separator, self.delimiter, fields=("turn_separator", "delimiter"))
        check_response_roles(self.response, {"context": self.context, "references": self.references,
                                             "knowledge": self.knowledge})  # fmt: skip
        check_dimensions(self.ratings)

    def columns(self) -> list[str]:
        """Return every column this mapping reads (``{system}`` expanded)."""
        optional = [self.context, self.annotator, self.dialogue_id, self.knowledge, self.domain]
        shared = [c for c in optional if c] + list(self.tags)
        per_response = [
            self.response,
            *(c for c in (self.system, self.item_id) if c and not self.systems),
            *self.references,
            *self.ratings,
            *self.annotator_columns,
        ]
        names = list(shared)
        for system in self.systems or ("",):
            names += [_expand(c, system) for c in per_response]
        return list(dict.fromkeys(names))

    def scale_of(self, dimension: str) -> str:
        """Return the scale of ``dimension``."""
        return self.scales.get(dimension, self.scale)


#: What a role would be if it read the response column (:func:`check_response_roles`).
_OWN = {"references": "its own reference", "knowledge": "its own grounding"}


def check_response_roles(
    response: str, roles: Mapping[str, str | Sequence[str] | None], *, path: Path | None = None,
    lines: Mapping[str, int | None] | None = None,
) -> None:  # fmt: skip
    """Refuse a reference or knowledge column that is the response column: each response would be its own.

    ``roles`` maps each field (an option, a mapping key or an argument, as the caller names it) to its column(s);
    the fields end in ``context``, ``reference(s)`` or ``knowledge`` (with ``_col`` or ``--...-col`` around them).
    A context column may be the response column: it then holds a chat log's messages, the last of them the
    response (:func:`_messages`, which refuses any other cell there).

    Example:
        >>> check_response_roles("reply", {"--context-col": "history", "--reference-col": ["gold", "reply"]})
        Traceback (most recent call last):
        ...
        dialeval.errors.InputError: field "--reference-col": column "reply" is the response column: each response \
would be its own reference
    """
    for key, columns in roles.items():
        given = [columns] if isinstance(columns, str) else list(columns or ())
        if response in given and "context" not in key:
            own = next(why for role, why in _OWN.items() if role.rstrip("s") in key)
            raise InputError(f'column "{response}" is the response column: each response would be {own}',
                             path=path, line=(lines or {}).get(key), field=key)  # fmt: skip


def check_dimensions(
    ratings: Mapping[str, str], *, field: str | None = None, path: Path | None = None,
    lines: Mapping[str, int | None] | None = None,
) -> None:  # fmt: skip
    """Refuse two rating columns that give one dimension: each row would rate its item twice on it.

    The error named an annotator (``"annotator"`` where the table has no annotator column) rating an item twice.
    ``field`` is the option that gave ``ratings`` (default: the mapping key ``ratings.COLUMN``); ``lines`` the
    mapping file's line of each column.

    Example:
        >>> check_dimensions({"q1": "Overall", "q2": "Overall"}, field="--rating-col")
        Traceback (most recent call last):
        ...
        dialeval.errors.InputError: field "--rating-col": columns "q1" and "q2" both give the dimension "Overall": \
one column per dimension (one column per annotator: a mapping file's annotator_columns, with dimension: Overall)
    """
    first: dict[str, str] = {}
    for column, dim in ratings.items():
        if dim in first:
            raise InputError(f'columns "{first[dim]}" and "{column}" both give the dimension "{dim}": one column per '
                             f"dimension (one column per annotator: a mapping file's annotator_columns, with "
                             f"dimension: {dim})", path=path, line=(lines or {}).get(column),
                             field=field or f"ratings.{column}")  # fmt: skip
        first[dim] = column


#: A mapping key that is read only beside one of the keys it names, and what it does there.
READ_BESIDE: dict[str, tuple[tuple[str, ...], str]] = {
    "turn_separator": (("context", "knowledge"), "splits the context (and knowledge) into turns"),
    "scale": (("ratings", "annotator_columns"), "is the scale of the ratings"),
    "labels": (("ratings", "annotator_columns"), "turns the words of the ratings into numbers"),
    "annotator": (("ratings",), "names the annotator of each rating"),
    "dimension": (("annotator_columns",), "names the dimension of the annotators' columns"),
    "pseudonymise": (("annotator", "annotator_columns"), "renames the annotators"),
}


def unread_key(given: Iterable[str]) -> tuple[str, tuple[str, ...], str] | None:
    """Return the first key of ``given`` that nothing reads (none of its partners given): key, partners, its use.

    ``--scale 1-5`` without ratings, ``--turn-sep`` without a context column and their mapping-file keys were
    accepted and did nothing, silently.

    Example:
        >>> unread_key(["response", "scale"])
        ('scale', ('ratings', 'annotator_columns'), 'is the scale of the ratings')
        >>> unread_key(["response", "scale", "ratings"]) is None
        True
    """
    keys = set(given)
    return next(((k, needs, use) for k, (needs, use) in READ_BESIDE.items() if k in keys and not keys & set(needs)),
                None)  # fmt: skip


def _expand(column: str, system: str) -> str:
    return column.replace("{system}", system) if system else column


SCALE_FORM = "expected LOW-HIGH with LOW below HIGH, e.g. 1-5"


def check_scale(scale: str, *, field: str, path: str | Path | None = None, line: int | None = None) -> None:
    """Refuse a rating scale that is not empty (no scale) and not ``LOW-HIGH`` numbers with LOW below HIGH.

    Example:
        >>> check_scale("5-1", field="--scale")
        Traceback (most recent call last):
        ...
        dialeval.errors.InputError: field "--scale": expected LOW-HIGH with LOW below HIGH, e.g. 1-5; found "5-1"
    """
    if scale and scale_range(scale) is None:
        raise InputError(f'{SCALE_FORM}; found "{scale}"', path=path, line=line, field=field)


def check_separators(turn_separator: str, delimiter: str | None, *, fields: tuple[str, str],
                     path: str | Path | None = None, lines: tuple[int | None, int | None] = (None, None)) -> None:
    r"""Refuse an empty turn separator (Python's split raised "empty separator") and a delimiter not one character.

    ``fields`` name the two where they were given (options or mapping keys), ``lines`` their lines in ``path``.

    Example:
        >>> check_separators("", None, fields=("--turn-sep", "--delimiter"))
        Traceback (most recent call last):
        ...
        dialeval.errors.InputError: field "--turn-sep": is empty; give the text between turns, e.g. "\n" or " | "
    """
    if turn_separator == "":
        raise InputError('is empty; give the text between turns, e.g. "\\n" or " | "', path=path, line=lines[0],
                         field=fields[0])
    if delimiter is not None and len(delimiter) != 1:
        raise InputError(f'must be one character, not "{delimiter}"', path=path, line=lines[1], field=fields[1])


#: The tables read as JSON (lines, or an array); any other is CSV (TSV for ``.tsv``), whose fields ``delimiter`` splits.
JSON_SUFFIXES = (".jsonl", ".jsonl.gz", ".json", ".json.gz")


def table_records(
    path: Path, mapping: ColumnMapping, delimiter_fix: str = PASS_DELIMITER
) -> list[tuple[Where, dict[str, Any]]]:
    """Read the rows of a CSV, TSV, JSONL or JSON table, each with its place; a column of ``mapping`` missing errs.

    ``delimiter_fix`` says what to do when a CSV's header looks separated by another delimiter (:func:`read_csv_rows`).
    """
    lower = path.name.lower()  # MY.JSONL, as a Windows tool names it, is JSON lines too
    if lower.endswith(JSON_SUFFIXES):
        records = read_jsonl_records(path) if lower.endswith((".jsonl", ".jsonl.gz")) else read_json_table(path)
        columns = mapping.columns()
        for where, rec in records:
            for col in columns:
                if col not in rec:
                    rec[col] = _nested(rec, col, where)
        return records
    delimiter = mapping.delimiter or ("\t" if lower.endswith((".tsv", ".tsv.gz")) else ",")
    index, rows = read_csv_rows(path, required=mapping.columns(), delimiter=delimiter, delimiter_fix=delimiter_fix)
    return [(where, {name: row[i] for name, i in index.items() if i < len(row)}) for where, row in rows]


def _nested(rec: Mapping[str, Any], col: str, where: Where) -> Any:
    """Return the value a dotted column names in a JSON record's objects (``meta.model``); refuse one it lacks.

    Example:
        >>> _nested({"meta": {"model": "gpt"}}, "meta.model", Where("t.jsonl", 1))
        'gpt'
        >>> _nested({"context": "Hi", "respons": "Yo"}, "response", Where("t.jsonl", 1))
        Traceback (most recent call last):
        ...
        dialeval.errors.InputError: t.jsonl:1: field "response": missing field; did you mean "respons"?
    """
    value: Any = rec
    for n, key in enumerate(col.split(".")):
        if not isinstance(value, dict) or key not in value:
            parent = ".".join(col.split(".")[:n])
            keys = list(value) if isinstance(value, dict) else []
            inside = f' (in "{parent}")' if parent else ""
            raise where.error(f"missing field{inside}{names_hint(keys, key)}", field=col)
        value = value[key]
    return value


def before_reply(value: Any) -> Any:
    """Return a chat log's messages but the last (its reply, where the log is read as context and response too).

    Its context, as :class:`_TableBuilder` reads it; a log written out as text is read as its list first; a cell
    that is no list is returned as it is.

    Example:
        >>> before_reply([{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Yo"}])
        [{'role': 'user', 'content': 'Hi'}]
        >>> before_reply("[{'role': 'user', 'content': 'Hi'}]"), before_reply("Hi")
        ([], 'Hi')
    """
    log = _as_list(value, _TURN_KINDS)
    return log[:-1] if isinstance(log, list) else log


def _text(value: Any, where: Where, col: str) -> str:
    """Return a text cell, stripped; a missing value (JSON null, NaN in a frame) is "", as an empty CSV cell is.

    A number, bool, list or object where text is expected is an error naming the place and the column.
    """
    if value is None:
        return ""
    if not isinstance(value, str):
        raise where.error(f"expected a string, found {json_kind(value)}", field=col)
    return value.strip()


def _empty(value: Any) -> bool:
    """Whether a cell holds nothing: JSON null, or text that is empty or only whitespace."""
    return value is None or (isinstance(value, str) and not value.strip())


def _name(value: Any, where: Where, col: str) -> str:
    """Return an id, annotator or tag cell as text: like :func:`_text`, but a number is taken as written.

    A date, time or duration (a frame's datetime64 column gives pandas' Timestamp) is its text too, as
    ``dialeval.correlate`` takes it; it was refused, "expected a string, found Timestamp".

    Example:
        >>> _name(3, Where("t"), "id"), _name(datetime.date(2024, 1, 2), Where("t"), "id")
        ('3', '2024-01-02')
    """
    if isinstance(value, (int, float, datetime.date, datetime.time, datetime.timedelta)) and not isinstance(
        value, bool
    ):
        return str(value)
    return _text(value, where, col)


def _as_list(value: Any, kinds: tuple[type, ...] = (str,)) -> Any:
    r"""Return a text cell that holds a list of texts (of ``kinds``) written out as that list; any other value as it is.

    pandas writes a list column to CSV as Python's repr (``"['Hi!', 'Hello.']"``), a JSON dump as JSON; read as
    text, each such context was one turn that began with a bracket, silently.

    Example:
        >>> _as_list("['Hi!', \"How's it going?\"]"), _as_list('["a", "b"]'), _as_list("[laughs]"), _as_list([1])
        (['Hi!', "How's it going?"], ['a', 'b'], '[laughs]', [1])
        >>> _as_list("[4, 5, None]", RATING_KINDS), _as_list("[4, 5]"), _as_list("['Hi', nan]", _TURN_KINDS)
        ([4, 5, None], '[4, 5]', ['Hi', None])
    """
    text = value.strip() if isinstance(value, str) else ""
    if not (text.startswith("[") and text.endswith("]")):
        return value
    try:
        parsed = json.loads(text)
    except ValueError:
        try:
            parsed = ast.literal_eval(_NanAsNone().visit(ast.parse(text, mode="eval")))
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            return value
    return parsed if isinstance(parsed, list) and all(isinstance(x, kinds) for x in parsed) else value


class _NanAsNone(ast.NodeTransformer):
    """Read pandas' ``nan`` (its repr of a missing float in a list, ``"['Hi', nan]"``) as None, the missing value."""

    def visit_Name(self, node: ast.Name) -> ast.AST:
        return ast.Constant(None) if node.id == "nan" else node


#: What a context's list may hold: turns, or a chat log's messages (a list of them written out as text, as pandas
#: writes a column of message lists to CSV, is read as the messages); a missing turn (pandas' None or nan, JSON's
#: null) is an empty one, as in a JSONL list (such a list was one turn, its text the list's, silently).
_TURN_KINDS = (str, dict, type(None))

#: What a list of references or knowledge may hold, for :func:`_as_list`: a missing one is read, so as to be refused.
_MAYBE_TEXTS = (str, type(None))

#: What a list of ratings in a cell may hold (a word of ``labels``, a number, or nothing), for :func:`_as_list`.
RATING_KINDS = (str, int, float, type(None))


def _entries(value: list[Any], where: Where, col: str, what: str, none: str) -> list[str]:
    """Return the texts of a list cell; refuse a null or blank entry, naming its place in the list.

    Such an entry was left out, silently (a list of blanks only: an item with no reference, a dialogue with no
    grounding). ``what`` names an entry (``"reference in the list"``), ``none`` what an empty list is
    (``"no reference"``).
    """
    texts = [_text(v, where, col) for v in value]
    if "" in texts:
        raise where.error(f"an empty {what}: remove it (an empty list is {none})",
                          field=f"{col}.{texts.index('')}")  # fmt: skip
    return texts


def _references(value: Any, where: Where, col: str) -> list[str]:
    """Return a reference cell's texts: one text (an empty cell is no reference), or a list of them (none blank)."""
    if isinstance(value, list):
        return _entries(value, where, col, "reference in the list", "no reference")
    return [text] if (text := _text(value, where, col)) else []


def _text_list(value: Any, sep: str, where: Where, col: str, *, turns: bool = False) -> list[str]:
    """Return the parts of a text cell split on ``sep`` (empty ones left out), or the texts of a list.

    ``turns``: the list is a context, whose empty turns are kept: each turn's place says who spoke it (a blank
    line in a text cell is still left out, as the spacing between turns). Else a blank entry of the list (of
    knowledge) is refused, as a blank reference is.
    """
    if isinstance(value, list):
        if turns:
            return [_text(v, where, col) for v in value]
        return _entries(value, where, col, "fact in the list of knowledge", "no knowledge")
    return list(iter_nonempty(_text(value, where, col), sep))


#: The skip counted for a system message of a context in the messages form: a system prompt is no speaker's turn.
SYSTEM_MESSAGE = 'system message (a "system" or "developer" role\'s prompt is no turn of either speaker)'
#: The roles of a prompt (OpenAI's newer models call it the developer's), left out of the turns.
_PROMPT_ROLES = ("system", "developer")
#: ShareGPT's speakers (its messages are ``{"from": ..., "value": ...}``) as the chat APIs' roles.
_SHAREGPT_ROLES = {"human": "user", "gpt": "assistant"}
#: The roles of a tool's output: no speaker's turn, and no turn can stand in for it.
_TOOL_ROLES = ("tool", "function", "ipython")


def _messages(value: list[Any], where: Where, col: str, *, reply: bool = False) -> tuple[list[str], int]:
    """Return the turns of a context in a chat log's messages form, and how many system messages it left out.

    The form of chat APIs and their logs: ``[{"role": "user", "content": "Hi"}, {"role": "assistant", ...}]``, or
    ShareGPT's ``[{"from": "human", "value": "Hi"}, {"from": "gpt", ...}]``.
    The roles must alternate, as the speakers of every context do, and the last message must not be the
    assistant's: the response answers the last turn. With ``reply`` (the column is the response column too)
    the last message must be the assistant's: it is the response, the last of the turns returned.

    Example:
        >>> _messages([{"role": "system", "content": "Be kind."}, {"role": "user", "content": "Hi!"}], Where("c"), "x")
        (['Hi!'], 1)
        >>> _messages([{"role": "user", "content": "Hi!"}, {"role": "user", "content": "Hello?"}], Where("c"), "x")
        Traceback (most recent call last):
        ...
        dialeval.errors.InputError: c: field "x.1": two "user" messages in a row: the turns of a context alternate ...
        >>> _messages([{"role": "user", "content": "Hi!"}, {"role": "assistant", "content": "Hello."}], Where("c"), "x",
        ...           reply=True)
        (['Hi!', 'Hello.'], 0)
        >>> _messages([{"from": "human", "value": "Hi!"}, {"from": "gpt", "value": "Hello."}], Where("c"), "x",
        ...           reply=True)
        (['Hi!', 'Hello.'], 0)
    """
    turns: list[str] = []
    roles: list[str] = []
    for n, message in enumerate(value):
        place = f"{col}.{n}"
        if isinstance(message, dict) and "role" not in message and {"from", "value"} <= message.keys():
            speaker = message["from"]  # ShareGPT's form: {"from": "human", "value": ...}
            role = _SHAREGPT_ROLES.get(speaker, speaker) if isinstance(speaker, str) else speaker
            message = {"role": role, "content": message["value"]}
        if not isinstance(message, dict) or "role" not in message or "content" not in message:
            found = f"the keys {', '.join(map(str, message))}" if isinstance(message, dict) else type(message).__name__
            raise where.error(f'expected a message {{"role": ..., "content": ...}}, found {found}', field=place)
        if not (role := _name(message["role"], where, f"{place}.role").lower()):  # "System" is a system prompt too
            raise where.error("no role: a message says who wrote it (user, assistant, system)", field=f"{place}.role")
        if role in _PROMPT_ROLES:
            continue
        if role in _TOOL_ROLES or message.get("tool_calls") or message.get("function_call"):
            what = f'a "{role}" message (a tool\'s output)' if role in _TOOL_ROLES else "a tool call"
            raise where.error(f"{what} is no turn of either speaker: leave tool calls and their outputs out, keeping "
                              "what the assistant said to the user", field=place)  # fmt: skip
        if roles and roles[-1] == role:
            raise where.error(f'two "{role}" messages in a row: the turns of a context alternate between two '
                              "speakers; join them into one message", field=place)  # fmt: skip
        turns.append(_content(message["content"], where, f"{place}.content"))
        roles.append(role)
    last = f"{col}.{len(value) - 1}"
    if reply and (not roles or roles[-1] != "assistant"):
        found = f'the last message is the "{roles[-1]}" role\'s' if roles else "no message but a system prompt"
        raise where.error(f"{found}: the column is the response column too, so its last message is the reply scored, "
                          "the assistant's", field=last if roles else col)  # fmt: skip
    if roles and roles[-1] == "assistant" and not reply:
        raise where.error("the last message is the assistant's: the response answers the last turn, so the context "
                          "ends with the user's; to score that message, name this column as the response column too",
                          field=last)  # fmt: skip
    return turns, len(value) - len(turns)


#: The types of a content part that hold text, in the chat APIs' parts form (the last two: OpenAI's Responses API).
_TEXT_PARTS = ("text", "input_text", "output_text")


def _content(value: Any, where: Where, col: str) -> str:
    r"""Return a message's content: a string, or the text of its parts (``[{"type": "text", "text": ...}]``).

    Parts are joined by a line break; a part that is not text (an image, a tool call) is refused, since only
    text is scored.

    Example:
        >>> _content([{"type": "text", "text": "Hi!"}, {"type": "text", "text": "Anyone?"}], Where("c"), "x")
        'Hi!\nAnyone?'
        >>> _content([{"type": "image_url", "image_url": {"url": "cat.png"}}], Where("c"), "x")
        Traceback (most recent call last):
        ...
        dialeval.errors.InputError: c: field "x.0": a part of type "image_url": only text is scored; ...
    """
    if not isinstance(value, list):
        return _text(value, where, col)
    texts = []
    for n, part in enumerate(value):
        kind = part.get("type") if isinstance(part, dict) else None
        if kind not in _TEXT_PARTS:
            what = f'of type "{kind}"' if isinstance(kind, str) else 'that is not {"type": "text", "text": ...}'
            raise where.error(f"a part {what}: only text is scored; leave it out, or say what it showed in a text "
                              "part", field=f"{col}.{n}")  # fmt: skip
        texts.append(_text(part.get("text"), where, f"{col}.{n}.text"))
    return "\n".join(t for t in texts if t)


#: A number in a cell, and a cell that holds several (``4;5;3``, ``4 5 3``, ``4,5,3``; not ``4,5``, a decimal comma,
#: nor ``4/5``).
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")
_SEVERAL_CELL = re.compile(r"\s*-?\d+(?:\.\d+)?(?:\s*[;|]\s*-?\d+(?:\.\d+)?|\s+-?\d+(?:\.\d+)?)+\s*"
                           r"|\s*\d+(?:\s*,\s*\d+){2,}\s*")
#: A rating written with its scale's top (``4/5``, ``7 / 10``).
_OUT_OF = re.compile(r"\s*(\d+(?:\.\d+)?)\s*/\s*(\d+)\s*")
#: What crowd exports write in a rating cell for no rating (the cell is to be left empty instead), and what pandas
#: writes for an infinity (a mean of nothing, a division by 0): "inf" was told to become a label, --labels inf=3.
_NO_RATING = {"n/a", "na", "none", "null", "nan", "-", "?", "--", *(f"{s}{w}" for s in ("", "-", "+")
                                                                    for w in ("inf", "infinity"))}  # fmt: skip


def _rating(value: Any, where: Where, col: str, labels: Mapping[str, float]) -> float:
    """Return a rating cell's number: a number, or a word of ``labels``; an error says how to mend anything else.

    Example:
        >>> _rating(" Good ", Where("r.csv", 2), "q", {"Poor": 1, "Good": 3}), _rating("4", Where("r.csv", 2), "q", {})
        (3.0, 4.0)
        >>> _rating("Good", Where("r.csv", 2), "q", {})
        Traceback (most recent call last):
        ...
        dialeval.errors.InputError: r.csv:2: field "q": expected a number, found 'Good': ratings as words need ...
        >>> _rating("4; 5; 3", Where("r.csv", 2), "q", {})
        Traceback (most recent call last):
        ...
        dialeval.errors.InputError: r.csv:2: field "q": ... several ratings in one cell? write them as a list, ...
    """
    if labels and isinstance(value, str) and value.strip() in labels:
        return float(labels[value.strip()])
    try:
        return number(value, Where(where.path, where.line), col)  # its message is said again below, with the record
    except InputError as exc:
        text = value.strip() if isinstance(value, str) else str(value) if isinstance(value, int) else ""
        if isinstance(value, bool):  # JSON's true/false for a yes/no question
            fix = "a yes/no rating: write it as 1 or 0"
        elif isinstance(value, dict):  # it was told to be left empty, as "N/A" is
            fix = (f"an object: give the number itself (of a JSON table, a dotted column reads inside an object, "
                   f'e.g. "{col}.{next(iter(value), "KEY")}")')
        elif isinstance(value, list):
            fix = "a list inside a list of ratings: give one number per annotator"
        elif re.search(r"\d", text) and _float_or_none(text) in (math.inf, -math.inf):  # "1e400": float reads inf
            fix = "past the largest a float holds (about 1.8e308)"
        elif labels:
            fix = f"give a number or one of the labels ({', '.join(labels)})"
        elif DECIMAL_COMMA.fullmatch(text):
            fix = f"a decimal comma: write {text.replace(',', '.')} (or export the sheet with a decimal point)"
        elif _SEVERAL_CELL.fullmatch(text):  # "4;5;3", "4 5 3": it holds two numbers or more
            fix = f"several ratings in one cell? write them as a list, [{', '.join(_NUMBER.findall(text))}]: one per " \
                  "annotator"  # fmt: skip
        elif out_of := _OUT_OF.fullmatch(text):  # "4/5": a rating and its scale's top
            fix = f"a rating out of {out_of[2]}? write {out_of[1]}, and give its scale (--scale, e.g. 1-{out_of[2]})"
        elif text.casefold() in _NO_RATING or not re.search(r"[^\W\d_]", text):  # "N/A", "-": no rating
            fix = "leave the cell empty where there is no rating (it is skipped and counted)"
        else:  # "Good", "Very poor": a scale of words
            fix = (f"ratings as words need a number each: --labels {text}=3,... (in a mapping file, labels: "
                   f"{{{text}: 3, ...}}), or leave the cell empty where there is no rating")
        raise where.error(f"{exc.message}: {fix}", field=col) from None


def _float_or_none(text: str) -> float | None:
    """Return ``float(text)``, or None where it is no number."""
    try:
        return float(text)
    except ValueError:
        return None


def _differing(first: BaseModel, again: BaseModel, columns: Sequence[tuple[str, str | None]]) -> str | None:
    """Return the column of the first attribute in which ``again`` differs from ``first``, or None.

    ``columns`` pairs each attribute compared with the column it was read from, in the order compared.

    Example:
        >>> from dialeval.schema import Dialogue
        >>> a, b = Dialogue(id="d", turns=[], knowledge=["sky"]), Dialogue(id="d", turns=[], knowledge=["sea"])
        >>> _differing(a, b, [("turns", "context"), ("knowledge", "fact")])
        'fact'
    """
    return next((col for name, col in columns if getattr(first, name) != getattr(again, name)), None)


@dataclass
class _TableBuilder:
    """Accumulates dialogues, candidates and ratings from the rows of one table."""

    bench: str
    mapping: ColumnMapping
    dialogues: dict[str, Dialogue] = field(default_factory=dict)
    dialogue_lines: dict[str, Where] = field(default_factory=dict)
    context_ids: dict[str, str] = field(default_factory=dict)
    items: dict[tuple[str, str, str, str], Candidate] = field(default_factory=dict)
    item_lines: dict[str, tuple[Where, Candidate]] = field(default_factory=dict)
    ratings: list[Rating] = field(default_factory=list)
    rated: dict[tuple[str, str, str], Where] = field(default_factory=dict)
    skipped: Counter[str] = field(default_factory=Counter)
    lists: Counter[str] = field(default_factory=Counter)  # cells of each column read as a list written as text
    rating_lists: Counter[str] = field(default_factory=Counter)  # rating cells of each column holding a list
    per_system: Counter[tuple[str, str]] = field(default_factory=Counter)
    pseudonyms: dict[str, str] = field(default_factory=dict)

    def counts(self) -> tuple[int, int, int]:
        """Return how many items, ratings and skipped values the rows so far gave."""
        return len(self.item_lines), len(self.ratings), sum(self.skipped.values())

    def listed(self, rec: Mapping[str, Any], col: str | None, kinds: tuple[type, ...] = (str,)) -> Any:
        """Return the cell of ``col`` (None without one), a list (of ``kinds``) written as text read as it, counted."""
        if col is None:
            return None
        value = _as_list(rec[col], kinds)
        if value is not rec[col]:
            self.lists[col] += 1
        return value

    def dialogue(self, where: Where, rec: Mapping[str, Any]) -> str:
        m = self.mapping
        raw = self.listed(rec, m.context, _TURN_KINDS)
        system = 0
        reply = m.context == m.response  # a chat log's messages, the last the response (:class:`ColumnMapping`)
        if isinstance(raw, list) and any(isinstance(v, dict) for v in raw):  # a chat log's [{"role", "content"}]
            lines, system = _messages(raw, where, m.context or "", reply=reply)
            lines = lines[:-1] if reply else lines
        elif reply:
            kind = "empty" if raw is None or raw == "" or raw == [] else f"a {type(raw).__name__}, not messages"
            raise where.error(f"the context column is the response column, which reads a chat log's messages (the "
                              f"last, the assistant's, the reply scored); this cell is {kind}: give the response in "
                              "a column of its own", field=m.context)  # fmt: skip
        else:
            lines = _text_list(raw, m.turn_separator, where, m.context or "", turns=True)
        knowledge = _text_list(self.listed(rec, m.knowledge, _MAYBE_TEXTS), m.turn_separator, where, m.knowledge or "")
        domain = _text(rec[m.domain], where, m.domain) or None if m.domain else None
        # the turns (a string split on the separator, or a list already split) and their grounding: rows with the
        # same context but other knowledge were one dialogue, grounded by the first row's (silently)
        context = json.dumps([lines, knowledge, domain])
        if m.dialogue_id:
            did = _name(rec[m.dialogue_id], where, m.dialogue_id)
            if not did:
                raise where.error("empty dialogue id", field=m.dialogue_id)
        elif context in self.context_ids:
            return self.context_ids[context]
        else:
            did = self.context_ids[context] = f"{self.bench}-{len(self.context_ids):04d}"
        turns = [Turn(speaker=s, text=t) for s, t in zip(split_turns(lines, "B"), lines, strict=True)]
        dialogue = Dialogue(id=did, turns=turns, knowledge=knowledge, domain=domain)
        if did in self.dialogues:
            if self.dialogues[did] != dialogue:
                first = self.dialogue_lines[did].line
                column = _differing(self.dialogues[did], dialogue, [("turns", m.context), ("knowledge", m.knowledge),
                                                                    ("domain", m.domain)])  # fmt: skip
                raise where.error(f'dialogue "{did}" differs from its first row (line {first})', field=column)
        else:
            self.dialogues[did], self.dialogue_lines[did] = dialogue, where
            if system:
                self.skipped[SYSTEM_MESSAGE] += system
        return did

    def candidate(self, where: Where, rec: Mapping[str, Any], did: str, system_name: str) -> str:
        m = self.mapping

        def col(name: str) -> str:
            return _expand(name, system_name)

        # a system numbered 3 is "3", as an id, annotator or tag is (it was "expected a string, found int")
        system = system_name or (_name(rec[m.system], where, m.system) if m.system else "") or UNKNOWN_SYSTEM
        if col(m.response) == m.context:  # the last of a chat log's messages (:meth:`dialogue` checked the cell)
            log = _as_list(rec[m.context], _TURN_KINDS)
            response = _messages(log, where, m.context, reply=True)[0][-1]
            if not response.strip() and not m.keep_empty_responses:
                raise where.error("no value: the last message, the reply scored, is empty",
                                  field=f"{m.context}.{len(log) - 1}.content")  # fmt: skip
        else:
            response = _text(rec[col(m.response)], where, col(m.response))
        refs = [r for c in m.references for r in _references(self.listed(rec, col(c), _MAYBE_TEXTS), where, col(c))]
        tags = {"system": system, **{t: _name(rec[t], where, t) for t in m.tags}}
        # rows of one response (one per annotator) share an item; a row with another reference or tag is an item
        # of its own (it was scored against the first row's reference)
        key = (did, system, response, json.dumps([refs, tags]))
        if m.item_id and not system_name:
            item = _name(rec[m.item_id], where, m.item_id)
            if not item:
                raise where.error("empty item id", field=m.item_id)
        elif key in self.items:
            return self.items[key].id
        else:
            n = self.per_system[key[:2]]
            item = f"{did}:{system}" + (f"#{n + 1}" if n else "")
            while item in self.item_lines:  # another's id: dialogue "a" system "b:c" and "a:b" "c"; "x#2" and "x"
                n += 1
                item = f"{did}:{system}#{n + 1}"
            self.per_system[key[:2]] = n + 1
        cand = Candidate(
            id=item, dialogue_id=did, turn_index=len(self.dialogues[did].turns), system=system, text=response,
            references=refs, tags=tags,
        )  # fmt: skip
        if item in self.item_lines:
            first, seen = self.item_lines[item]
            if seen != cand:
                raise where.error(f'item "{item}" differs from its first row (line {first.line})',
                                  field=self.differing_column(seen, cand, system_name))  # fmt: skip
            return item
        self.item_lines[item] = (where, cand)
        self.items[key] = cand
        return item

    def differing_column(self, first: Candidate, again: Candidate, system_name: str) -> str | None:
        """Return the column in which a row's item differs from the item of the same id read first.

        It was always the response column: a row whose context or system differed sent the user to a column that
        held the same text as the first row's.
        """
        m = self.mapping
        tags = [(m.system if key == "system" else key) for key in {**first.tags, **again.tags}
                if first.tags.get(key) != again.tags.get(key)]  # fmt: skip
        columns = [("dialogue_id", m.dialogue_id or m.context), ("turn_index", m.context), ("system", m.system),
                   ("text", _expand(m.response, system_name)),
                   ("references", _expand(m.references[0], system_name) if m.references else None),
                   ("tags", tags[0] if tags else None)]  # fmt: skip
        return _differing(first, again, columns) or _expand(m.response, system_name)

    def rate(self, where: Where, rec: Mapping[str, Any], item: str, system_name: str) -> None:
        m = self.mapping
        annotator = _name(rec[m.annotator], where, m.annotator) if m.annotator else "annotator"
        if m.annotator and not annotator and not all(_empty(rec[_expand(c, system_name)]) for c in m.ratings):
            # its ratings were an annotator "" (with pseudonymise, one more annotator-NNN), silently
            raise where.error("empty annotator: each rating names who gave it (a row without one rates nothing: "
                              "leave its rating cells empty)", field=m.annotator)  # fmt: skip
        if m.pseudonymise:
            annotator = self.pseudonyms.setdefault(annotator, f"annotator-{len(self.pseudonyms) + 1:03d}")
        cells = [(c, d, annotator, bool(m.annotator)) for c, d in m.ratings.items()]
        cells += [(c, m.dimension, a, True) for c, a in m.annotator_columns.items()]
        for template, dim, who, named in cells:
            col = _expand(template, system_name)
            value = _as_list(rec[col], RATING_KINDS)
            if not isinstance(value, list):
                self.rate_one(where, col, value, (item, dim, who))
                continue
            if named:  # one annotator per row (or per column), and a list of several
                by = f'the column "{m.annotator}"' if m.annotator else f'annotator_columns ("{who}")'
                raise where.error(f"a list of ratings, where {by} names the one annotator of this rating: give one "
                                  "number per cell, or a list (one rating per annotator) without naming them",
                                  field=col)  # fmt: skip
            self.rating_lists[col] += 1
            for k, one in enumerate(value):  # no annotator ids: named by place, as FED's annotations are
                self.rate_one(where, col, one, (item, dim, f"r{k + 1}"))
            if not value:
                self.skipped[f"empty rating ({col})"] += 1

    def rate_one(self, where: Where, col: str, value: Any, key: tuple[str, str, str]) -> None:
        """Keep one rating ``value`` of the cell ``col`` as ``key`` (item, dimension, annotator); skip an empty one."""
        if _empty(value):
            self.skipped[f"empty rating ({col})"] += 1
            return
        item, dim, who = key
        scale = self.mapping.scale_of(dim)
        number_value = _rating(value, where, col, self.mapping.labels)
        bounds = scale_range(scale)
        if bounds is not None and not bounds[0] <= number_value <= bounds[1]:
            raise where.error(f"{number_value:g} is outside the scale {scale}", field=col)
        if key in self.rated:
            raise where.error(
                f'annotator "{who}" rates item "{item}" on "{dim}" twice (first on line {self.rated[key].line})',
                field=col,
            )
        self.rated[key] = where
        self.ratings.append(Rating(item_id=item, dimension=dim, annotator=who, value=number_value, scale=scale))


class ContextOption(NamedTuple):
    """How a front end names the option that chose a table's context column, for :func:`build_table`'s error.

    ``field``: the error's field; ``said``: the option with the column it names; ``without``: how to score
    without a context.
    """

    field: str
    said: str
    without: str


def load_table(
    path: str | Path, mapping: ColumnMapping, *, name: str | None = None, keep_rows: bool = False,
    context_option: ContextOption | None = None,
) -> Benchmark:
    """Load a CSV/TSV (header row), JSONL or JSON (objects) file of rated responses described by ``mapping``.

    Rows with the same context (or ``dialogue_id``) share a dialogue; rows with the
    same context, system and response (or ``item_id``) share a candidate (so the
    long form gives one row per annotator). Empty rating cells are skipped and
    counted; an annotator rating the same item and dimension twice is an error
    naming both lines. A column of :data:`NAMED_COLUMNS` (``context``, ``reference``, ``system``, ...) that
    the mapping does not read (the Python API reads them by name) gets a warning. ``keep_rows``: the
    benchmark keeps the rows as read (:attr:`Benchmark.rows`), for ``score -o scored.csv``. A context column
    empty in every row is refused, named by ``context_option`` (default: the mapping's key, ``context="ctx"``).
    """
    p = Path(path)
    records = table_records(p, mapping)
    if not records:
        is_json = p.name.lower().endswith(JSON_SUFFIXES)
        why = "no record: an empty array, or nothing" if is_json else "only a header, or nothing"
        raise InputError(f"no rows to read ({why})", path=p)
    named = context_option or ContextOption("context", f'context="{mapping.context}"', "context=None")
    bench = build_table(records, mapping, name=name or p.name.split(".")[0], source=str(p), keep_rows=keep_rows,
                        context_option=named)[0]  # fmt: skip
    bench.warnings += unread_columns(dict.fromkeys(k for _, rec in records for k in rec), mapping)
    bench.warnings += reading_warnings(records, mapping, bench, "pass --turn-sep '\\\\n' (in a mapping file, "
                                       "turn_separator: '\\n')")  # fmt: skip
    if _separator_unused(records, mapping):
        bench.warnings.append(f"no context holds the turn separator {mapping.turn_separator!r}, so each was read as "
                              "one turn: give the one that separates their turns (--turn-sep; in a mapping file, "
                              "turn_separator)")  # fmt: skip
    return bench


def _separator_unused(rows: Iterable[tuple[Where, Mapping[str, Any]]], mapping: ColumnMapping) -> bool:
    r"""Whether a turn separator other than the default is in no context written as text (each was one turn).

    Example:
        >>> _separator_unused([(None, {"x": "Hi!\nYo"})], ColumnMapping(response="r", context="x", turn_separator="|"))
        True
    """
    col = mapping.context
    if col is None or col == mapping.response or mapping.turn_separator == "\n":
        return False
    texts = [v for _, rec in rows if isinstance(v := rec.get(col), str) and v.strip() and _as_list(v) is v]
    return bool(texts) and not any(mapping.turn_separator in v for v in texts)


def _pseudonymised(
    rows: Sequence[tuple[Where, Mapping[str, Any]]], mapping: ColumnMapping, pseudonyms: Mapping[str, str]
) -> Sequence[tuple[Where, Mapping[str, Any]]]:
    """Return the rows with each annotator cell as its pseudonym where the mapping pseudonymises, else as they are.

    ``score -o scored.csv`` writes the rows back: with ``pseudonymise`` the crowd workers' ids must not be in it.
    """
    col = mapping.annotator
    if not (mapping.pseudonymise and col):
        return rows
    return [(where, {**rec, col: pseudonyms.get(_name(rec[col], where, col), "")}) for where, rec in rows]


def reading_warnings(
    rows: Iterable[tuple[Where, Mapping[str, Any]]], mapping: ColumnMapping, bench: Benchmark, split: str
) -> list[str]:
    """Return what a table's reading may have got wrong: case twins, echoed replies, escaped line breaks.

    ``split`` says how to split the contexts at an escaped line break: ``load_table`` names the option, the
    Python API the pandas call. Both front ends say the same warnings, each in its own way.
    """
    said = case_twins({c.system for c in bench.candidates}) + echoed(bench)
    if held := escaped_breaks(rows, mapping):
        said.append(f"{escaped_words(held, len(bench.dialogues))}: if it separates turns, {split}")
    return said


def echoed(bench: Benchmark) -> list[str]:
    """Warn when most responses are the last turn of their context (a column of whole conversations, reply included).

    Then every metric of context and response compares the reply with itself, silently. A few are a bot that
    repeats its user (2 of 297 in PredictiveEngagement's ConvAI, 12 of 1,377 in LMStyle's): no warning under half.

    Example:
        >>> from dialeval.schema import Candidate, Dialogue, Turn
        >>> d = Dialogue(id="d", turns=[Turn(speaker="A", text="Hi!"), Turn(speaker="B", text="Fine.")])
        >>> echoed(Benchmark("t", {"d": d}, [Candidate(id="c", dialogue_id="d", turn_index=2, system="s",
        ...                                                      text="Fine.")], []))
        ['1 of 1 response is the same as the last turn of its context: does the context column hold the reply too?']
    """
    same = sum(1 for c in bench.candidates if c.text.strip() and c.turn_index > 0 and c.dialogue_id in bench.dialogues
               and bench.dialogues[c.dialogue_id].turns[c.turn_index - 1].text.strip() == c.text.strip())  # fmt: skip
    if not same or same < len(bench.candidates) / 2:
        return []
    return [f"{some_of(same, len(bench.candidates), 'response', ('is', 'are'))} the same as the last turn of its "
            "context: does the context column hold the reply too?"]


def case_twins(systems: Iterable[str]) -> list[str]:
    """Return a warning for each group of system names that differ only in letter case (one system typed two ways?).

    Example:
        >>> case_twins(["MyBot", "mybot", "other"])
        ['the systems "MyBot" and "mybot" differ only in letter case: one system written two ways? (kept apart)']
    """
    groups: dict[str, list[str]] = {}
    for name in sorted(systems):
        groups.setdefault(name.casefold(), []).append(name)
    said = [" and ".join(f'"{n}"' for n in group) for group in groups.values() if len(group) > 1]
    return [f"the systems {names} differ only in letter case: one system written two ways? (kept apart)"
            for names in said]  # fmt: skip


def escaped_breaks(rows: Iterable[tuple[Where, Mapping[str, Any]]], mapping: ColumnMapping) -> int:
    r"""Return how many contexts hold ``\n`` as text (a backslash and an n, as a JSON dump writes a line break).

    With the default separator (a line break) they are not split there: each such context is read as one turn,
    silently, and a metric of the last turn reads the whole conversation (:func:`escaped_words` says so). A
    context given as a list of turns is split already.

    Example:
        >>> rows = [(None, {"x": "Hi!\\nHow are you?"}), (None, {"x": "Hi!\\nHow are you?"}), (None, {"x": ["a\\nb"]})]
        >>> escaped_breaks(rows, ColumnMapping(response="r", context="x"))
        1
        >>> escaped_words(1, 2)
        '1 of 2 contexts holds "\\n" as text (a backslash and an n), not as a line break, so no turn is split there'
    """
    if mapping.context is None or mapping.turn_separator != "\n":
        return 0
    col = mapping.context
    texts = {rec[col] for _, rec in rows if isinstance(rec[col], str) and "\\n" in rec[col]}
    return sum(1 for text in texts if _as_list(text) is text)  # a list's repr escapes its line breaks: it is read


def escaped_words(held: int, contexts: int) -> str:
    """Say that ``held`` of ``contexts`` contexts hold an escaped line break (:func:`escaped_breaks`)."""
    return (f'{some_of(held, contexts, "context", ("holds", "hold"))} "\\n" as text (a backslash and an n), not as a '
            "line break, so no turn is split there")


#: Columns read by name when present (as the Python API reads them): the option (None: only a mapping file reads
#: it), and the mapping file's key.
NAMED_COLUMNS: dict[str, tuple[str | None, str]] = {
    "context": ("--context-col", "context"), "reference": ("--reference-col", "references"),
    "references": ("--reference-col", "references"), "system": ("--system-col", "system"),
    "knowledge": (None, "knowledge"),
}  # fmt: skip


def unread_columns(columns: Iterable[str], mapping: ColumnMapping) -> list[str]:
    """Return a warning for each column of :data:`NAMED_COLUMNS` in ``columns`` that ``mapping`` does not read.

    Example:
        >>> unread_columns(["context", "response", "reference"], ColumnMapping(response="response", context="context"))
        ['the file has a column "reference" that is not read: pass --reference-col reference, or name it under ...']
    """
    read = set(mapping.columns())
    warnings = []
    for column in columns:
        if column in NAMED_COLUMNS and column not in read:
            option, key = NAMED_COLUMNS[column]
            give = f"pass {option} {column}, or name it" if option else "name it"
            warnings.append(f'the file has a column "{column}" that is not read: {give} under "{key}" in a mapping '
                            "file")
    return warnings


def _check_responses(rows: Sequence[tuple[Where, Mapping[str, Any]]], mapping: ColumnMapping) -> None:
    """Refuse responses that are missing, empty or only whitespace (one error at the first, counting the rows).

    Unless ``mapping.keep_empty_responses``; a response that is not a string is an error either way.
    """
    for system in mapping.systems or ("",):
        col = _expand(mapping.response, system)
        if col == mapping.context:  # a chat log's last message: checked as it is read (:meth:`_TableBuilder.candidate`)
            continue
        empty = [(where, rec) for where, rec in rows if not _text(rec[col], where, col)]
        if empty and not mapping.keep_empty_responses:
            where, rec = empty[0]
            blank = all(v is None or (isinstance(v, str) and not v.strip()) for v in rec.values())
            hint = "; the row is empty in every column (a sheet's trailing rows?): delete it" if blank else ""
            raise where.error(f"no value ({counted(len(empty), 'such row')}){hint}", field=col)


def check_systems_named(systems: Sequence[tuple[Where, str]], col: str) -> None:
    """Refuse rows without a system (``""``) beside rows that name theirs (one error at the first, counting them).

    Such a row was of the system "unknown", one more beside the named ones: the items of every such row were one
    system's at the system level, and a group of ``--by system``, silently. A column empty in every row names no
    system (each item's is "unknown", as without the column).

    Example:
        >>> check_systems_named([(Where("t.csv", line=2), "a"), (Where("t.csv", line=3), "")], "model")
        Traceback (most recent call last):
        ...
        dialeval.errors.InputError: t.csv:3: field "model": no system (1 such row), where other rows name theirs ...
    """
    empty = [where for where, name in systems if not name]
    if empty and len(empty) < len(systems):
        names = sorted({name for _, name in systems} - {""})
        shown = ", ".join(names[:5]) + (", ..." if len(names) > 5 else "")
        raise empty[0].error(f"no system ({counted(len(empty), 'such row')}), where other rows name theirs ({shown}): "
                             f'an empty cell would be one more system, "{UNKNOWN_SYSTEM}": give each row its system',
                             field=col)  # fmt: skip


def _check_systems(rows: Sequence[tuple[Where, Mapping[str, Any]]], mapping: ColumnMapping) -> None:
    """Refuse an empty system cell where other rows name their system (:func:`check_systems_named`)."""
    col = mapping.system
    if col and not mapping.systems:  # one response per system in each row: the systems are the mapping's names
        check_systems_named([(where, _name(rec[col], where, col)) for where, rec in rows], col)


def _check_id_types(rows: Sequence[tuple[Where, Mapping[str, Any]]], mapping: ColumnMapping, unit: str) -> None:
    """Refuse an id, system, annotator or tag column holding one value written two ways (:func:`one_group_per_text`)."""
    m = mapping
    for col in dict.fromkeys(c for c in (m.dialogue_id, m.item_id, m.system, m.annotator, *m.tags) if c):
        one_group_per_text([(where, rec[col]) for where, rec in rows], col, unit)


def one_group_per_text(cells: Sequence[tuple[Where, Any]], column: str, unit: str = "line") -> None:
    """Refuse two cells of a column of names that print alike but are of two types, or one number written two ways.

    A JSON table's (or a frame's) 1 and 1.0 were two dialogues (or systems, annotators, ...), 1 and "1" one, silently.
    ``cells``: each cell with its place (None, blank text, lists and mappings are left to the reader); ``unit``: what
    a place's number counts in the message (``"row"`` for a frame's).

    Example:
        >>> one_group_per_text([(Where("t.jsonl", 1), 1), (Where("t.jsonl", 2), 1.0)], "id")
        Traceback (most recent call last):
        ...
        dialeval.errors.InputError: t.jsonl:2: field "id": the value 1.0 is the number 1 of line 1 written another ...
        >>> one_group_per_text([(Where("data", 1), 1), (Where("data", 2), "1")], "t", unit="row")
        Traceback (most recent call last):
        ...
        dialeval.errors.InputError: data:2: field "t": the value '1' (text) prints as the value 1 (a number) of row ...
    """
    first: dict[str, tuple[Where, Any]] = {}
    number: dict[Any, tuple[Where, Any]] = {}  # 1 and 1.0: one number, two texts, so two groups
    for where, value in cells:
        if _empty(value) or isinstance(value, (list, dict)):
            continue
        seen, earlier = first.setdefault(str(value).strip(), (where, value))
        if type(earlier) is not type(value):
            kinds = [("text" if isinstance(v, str) else "a number" if isinstance(v, (int, float)) else type(v).__name__)
                     for v in (value, earlier)]  # fmt: skip
            raise where.error(f"the value {value!r} ({kinds[0]}) prints as the value {earlier!r} ({kinds[1]}) of "
                              f"{unit} {seen.line}, and the two would make one group: give the column one type",
                              field=column)  # fmt: skip
        if isinstance(value, numbers.Real) and not isinstance(value, bool):  # True == 1, but prints apart from it
            seen, earlier = number.setdefault(value, (where, value))
            if str(earlier) != str(value):
                raise where.error(f"the value {value!r} is the number {earlier!r} of {unit} {seen.line} written "
                                  "another way, and the two would make two groups: give the column one type",
                                  field=column)  # fmt: skip


#: The skip counted for a row that repeats an earlier row's item (context, system and response) and adds no rating.
REPEATED_ROW = "repeated row (the same context, system and response as an earlier row, and no rating of its own)"


def build_table(
    rows: Sequence[tuple[Where, Mapping[str, Any]]], mapping: ColumnMapping, *, name: str, source: str,
    keep_rows: bool = False, context_option: ContextOption | None = None, unit: str = "line",
) -> tuple[Benchmark, list[list[str]]]:
    """Build the benchmark of :func:`load_table` from rows already read; also return each row's item ids.

    ``keep_rows``: the benchmark keeps the rows with their item ids (:attr:`Benchmark.rows`). It always keeps
    each item's first row, ``"FILE:LINE"`` (:attr:`Benchmark.sources`).

    A context may be a string (split on ``mapping.turn_separator``) or a list of turns. A text
    value that is None (JSON null) is read as an empty cell; one that is not a string is an
    error, and so is a response that is missing, empty or only whitespace (naming the first
    such row and counting them), and so is an empty system cell where other rows name theirs. A row that adds
    neither an item nor a rating is counted as a :data:`REPEATED_ROW` skip.

    With ``context_option`` (None: no check), a context column with no context in any row is refused, named by it
    (each response was scored with no context, silently); a row without one is a response that opens its dialogue.
    A chat log column read as both context and response is not checked: a log of the reply alone has no context.
    ``unit``: what a place's number counts in an error that names another place (``"row"`` for a frame's).
    """
    _check_responses(rows, mapping)
    _check_id_types(rows, mapping, unit)
    _check_systems(rows, mapping)
    build = _TableBuilder(name, mapping)
    row_items: list[list[str]] = []
    for where, rec in rows:
        before = build.counts()
        did = build.dialogue(where, rec)
        row_items.append([])
        for system_name in mapping.systems or ("",):
            item = build.candidate(where, rec, did, system_name)
            build.rate(where, rec, item, system_name)
            row_items[-1].append(item)
        if build.counts() == before:  # it was read as the earlier row's item, silently: one row fewer, unsaid
            build.skipped[REPEATED_ROW] += 1
    if context_option is not None and rows and mapping.context not in (None, mapping.response) and not any(
        t.text.strip() for d in build.dialogues.values() for t in d.turns
    ):  # a list of empty turns ([""], [null]) holds no context either
        raise InputError(f"{context_option.said} names a column with no context in any row: give the column of the "
                         f"contexts, or {context_option.without} to score without one", path=rows[0][0].path,
                         field=context_option.field)  # fmt: skip
    candidates = [c for _, c in build.item_lines.values()]
    bench = Benchmark(build.bench, build.dialogues, candidates, build.ratings, build.skipped, source=source,
                      sources={item: f"{where.path}:{where.line}" for item, (where, _) in build.item_lines.items()})
    if keep_rows:  # for score -o scored.csv; held through a run they cost more than the table's text
        bench.rows = [(where, rec, ids) for (where, rec), ids in zip(_pseudonymised(rows, mapping, build.pseudonyms),
                                                                     row_items, strict=True)]  # fmt: skip
    bench.warnings += [f'{counted(n, "cell")} of the column "{col}" held a list written as text (as pandas writes a '
                       "list column to CSV): read as the list" for col, n in build.lists.items()]  # fmt: skip
    bench.warnings += [f'{counted(n, "cell")} of the column "{col}" held a list of ratings: each is one annotator\'s, '
                       "named by its place in the list (r1, r2, ...), so r1 of two rows need not be one person"
                       for col, n in build.rating_lists.items()]  # fmt: skip
    return bench, row_items


TABLE_SUFFIXES = (".csv", ".tsv", ".jsonl", ".json", ".csv.gz", ".tsv.gz", ".jsonl.gz", ".json.gz")


def is_table(path: str | Path) -> bool:
    """Whether ``path`` names a table file (CSV, TSV, JSONL or JSON) rather than a folder.

    Example:
        >>> is_table("my.csv"), is_table("runs/usr")
        (True, False)
    """
    return Path(path).name.lower().endswith(TABLE_SUFFIXES)


class MappingFile(BaseModel):
    """The YAML form of :class:`ColumnMapping` (``--mapping m.yaml``); unknown keys are refused.

    ``ratings`` maps a column to a dimension; ``scale`` is every dimension's scale
    and ``scales`` overrides it per dimension. ``name`` names the benchmark
    (default: the table's file name).

    Example:
        >>> MappingFile.model_validate({"response": "r", "ratings": {"q": "Overall"}}).to_mapping().ratings
        {'q': 'Overall'}
    """

    model_config = ConfigDict(extra="forbid")

    name: str | None = None
    response: str
    context: str | None = None
    turn_separator: str = "\n"
    system: str | None = None
    references: list[str] = Field(default_factory=list)
    ratings: dict[str, str] = Field(default_factory=dict)
    annotator: str | None = None
    annotator_columns: dict[str, str] = Field(default_factory=dict)
    dimension: str = "rating"
    scale: str = ""
    scales: dict[str, str] = Field(default_factory=dict)
    item_id: str | None = None
    dialogue_id: str | None = None
    knowledge: str | None = None
    domain: str | None = None
    tags: list[str] = Field(default_factory=list)
    systems: list[str] = Field(default_factory=list)
    pseudonymise: bool = False
    delimiter: str | None = None
    keep_empty_responses: bool = False
    labels: dict[str, float] = Field(default_factory=dict)

    def to_mapping(self) -> ColumnMapping:
        """Return the :class:`ColumnMapping` this file describes."""
        raw = self.model_dump(exclude={"name"})
        for key in ("references", "tags", "systems"):
            raw[key] = tuple(raw[key])
        return ColumnMapping(**raw)


def load_mapping(path: str | Path) -> MappingFile:
    r"""Read a YAML mapping file; an error names the file, the line and the key.

    A key that is not a mapping key is refused with the closest one, and a ``scale`` (or a
    ``scales`` value) must be ``LOW-HIGH``.

    Example:
        >>> import tempfile, pathlib
        >>> p = pathlib.Path(tempfile.mkdtemp()) / "m.yaml"
        >>> _ = p.write_text("response: reply\nratings: {q: Overall}\ncontxt: history\n")
        >>> load_mapping(p)
        Traceback (most recent call last):
        ...
        dialeval.errors.InputError: ...m.yaml:3: field "contxt": unknown field; did you mean "context"?
    """
    p = check_file(path)
    text = read_text(p)
    raw = load_yaml(text, p)
    if not isinstance(raw, dict):
        raise InputError("expected a YAML mapping of keys (response:, ratings:, ...)", path=p)
    if (half := lone_surrogate(raw, p, None)) is not None:  # YAML's "\ud800" too: a name failed when written
        field = half.field or ""
        raise InputError(half.message, path=p, line=yaml_line(text, field.split(".")), field=field)
    try:
        spec = MappingFile.model_validate(raw)
    except ValidationError as exc:
        first = first_problem(exc)  # a misspelt key first: "respones" also made "response" missing
        loc = [str(x) for x in first["loc"]]
        at = [*loc[:1], "[key]"] if "[key]" in loc else loc  # ("labels", 1, "[key]"): the key yes, read as true
        loc = loc[:1] if "[key]" in loc else loc
        fields = list(MappingFile.model_fields) if len(loc) == 1 else []
        message = _how_to_write(loc, first["type"], first["input"]) or pydantic_message(
            first["type"], first["msg"], loc[-1] if loc else "", fields)
        raise InputError(message, path=p, line=yaml_line(text, at), field=".".join(loc) or None) from None
    for key, scale in [("scale", spec.scale), *((f"scales.{d}", v) for d, v in spec.scales.items())]:
        check_scale(scale, field=key, path=p, line=yaml_line(text, key.split(".", 1)))
    for word, value in spec.labels.items():
        if not math.isfinite(value):
            raise InputError(f"expected a finite number, found {value}", path=p, line=yaml_line(text, ["labels", word]),
                             field=f"labels.{word}")  # fmt: skip
    keys = ("turn_separator", "delimiter")
    check_separators(spec.turn_separator, spec.delimiter, fields=keys, path=p,
                     lines=(yaml_line(text, [keys[0]]), yaml_line(text, [keys[1]])))
    roles = {"context": spec.context, "references": spec.references, "knowledge": spec.knowledge}
    check_response_roles(spec.response, roles, path=p, lines={k: yaml_line(text, [k]) for k in roles})
    if idle := unread_key(k for k, v in raw.items() if v):
        key, needs, use = idle
        raise InputError(f"{key} {use}, and no {' or '.join(needs)} is given: add one, or leave {key} out", path=p,
                         line=yaml_line(text, [key]), field=key)  # fmt: skip
    _check_per_system(spec, p, text)
    _check_names(spec, p, text)
    return spec


#: Each key of pairs: how a pair is written, and the mapping file's example (docs/own_data.md).
_PAIRS = {"ratings": ("column: dimension", "{q: Overall}"), "annotator_columns": ("column: annotator",
          "{r1: alice, r2: bob}"), "scales": ("dimension: scale", "{fluency: 1-3}"),
          "labels": ("word: number", "{Poor: 1, Good: 3}")}  # fmt: skip


def _how_to_write(loc: Sequence[str], kind: str, given: Any) -> str | None:
    """Say how to write a key (or a value of it) given as another kind of value; None for other errors.

    ``references: gold``, ``ratings: q``, ``response: [a]`` said pydantic's "Input should be a valid list" (dictionary,
    string). A pair written as ``--rating-col`` and ``--labels`` write it (``q=Overall``) is written back as YAML.

    Example:
        >>> _how_to_write(["references"], "list_type", "gold, silver")
        'expected a list of column names: write [gold, silver]'
        >>> _how_to_write(["labels"], "dict_type", "Poor=1,Good=3")
        'expected pairs "word: number": write {Poor: 1, Good: 3}'
    """
    key = loc[0] if loc else ""
    if kind == "list_type" and len(loc) == 1:
        what = "system" if key == "systems" else "column"
        if isinstance(given, str):
            return f"expected a list of {what} names: write [{given}]"
        return f"expected a list of {what} names, e.g. [{'a' if what == 'system' else 'gold'}]"
    if kind == "dict_type" and key in _PAIRS:
        form, example = _PAIRS[key]
        pairs = [p.partition("=") for p in given.split(",")] if isinstance(given, str) else []
        if pairs and all(a.strip() and eq for a, eq, _ in pairs):
            return f'expected pairs "{form}": write {{{", ".join(f"{a.strip()}: {b.strip()}" for a, _, b in pairs)}}}'
        return f'expected pairs "{form}", e.g. {example}'
    if kind.startswith("float") and key == "labels":
        return f'expected the number of "{loc[-1]}", e.g. {loc[-1]}: 3'
    if kind.startswith("bool"):
        return "expected true or false"
    if kind != "string_type":
        return None
    if key in ("scale", "scales"):
        return f"{SCALE_FORM}; found {given}"
    if given is None:
        return "is empty: give a name"
    if isinstance(given, dict):
        return "expected one name, not pairs"
    if isinstance(given, list):
        return "expected one name, not a list" + (f": write {given[0]}" if len(given) == 1 else "")
    if isinstance(given, bool):
        return ('expected a name, not true or false (YAML reads yes, no, on, off, true and false so): write it in '
                'quotes, e.g. "yes"')  # fmt: skip
    if isinstance(given, int | float):
        return f'expected a name, not a number: write it in quotes, "{given}"'
    return None


def _check_names(spec: MappingFile, path: Path, text: str) -> None:
    """Refuse a name given twice in a list, a blank column, a rating column with no dimension or annotator, and more.

    A rating or annotator column named "" or " " is refused as other blank columns are (--rating-col
    refuses ``=Fl``).

    ``--reference-col g --reference-col g`` was refused and ``references: [g, g]`` (or ``systems: [x, x]``) taken;
    ``scales: {Overal: 1-5}`` beside a dimension Overall was never applied.
    """
    for key, what in (("references", "column"), ("tags", "column"), ("systems", "system")):
        try:
            ensure_unique(getattr(spec, key), key, what)
        except InputError as exc:
            raise InputError(exc.message, path=path, line=yaml_line(text, [key]), field=key) from None
    named = "a rating column needs a dimension name"
    blanks = [(f"ratings.{c}", named) for c, d in spec.ratings.items() if not d.strip()]
    blanks += [(f"annotator_columns.{c}", "an annotator column needs an annotator name")
               for c, a in spec.annotator_columns.items() if not a.strip()]  # fmt: skip
    if spec.annotator_columns and not spec.dimension.strip():
        blanks.append(("dimension", named))
    column = "is empty: give the name of a column of the table"  # response: "" was "missing column in the header"
    single = ("response", "context", "system", "annotator", "item_id", "dialogue_id", "knowledge", "domain")
    blanks += [(key, column) for key in single if getattr(spec, key) is not None and not getattr(spec, key).strip()]
    blanks += [(key, column) for key in ("references", "tags") if any(not c.strip() for c in getattr(spec, key))]
    blanks += [(f"{key}.{c}", column) for key in ("ratings", "annotator_columns") for c in getattr(spec, key)
               if not c.strip()]  # fmt: skip
    if blanks:
        key, why = blanks[0]
        loc = key.split(".", 1)  # a column "" under ratings is named by its key, ratings
        raise InputError(why, path=path, line=yaml_line(text, loc), field=key if loc[-1].strip() else loc[0])
    check_dimensions(spec.ratings, path=path, lines={c: yaml_line(text, ["ratings", c]) for c in spec.ratings})
    _check_wide_dimension(spec, path, text)
    dims = [*spec.ratings.values(), *([spec.dimension] if spec.annotator_columns else [])]
    for dim in spec.scales:
        if dim not in dims:
            close = closest(dim, dims)
            known = ", ".join(dict.fromkeys(dims)) or "none"
            hint = f'did you mean "{close}"?' if close else f"the dimensions: {known}"
            raise InputError(f'no rating column gives the dimension "{dim}"; {hint}', path=path,
                             line=yaml_line(text, ["scales", dim]), field=f"scales.{dim}")  # fmt: skip


def _check_wide_dimension(spec: MappingFile, path: Path, text: str) -> None:
    """Refuse a column under both ``ratings`` and ``annotator_columns``, or rating the annotators' ``dimension``.

    Each row rated its item twice on it, once as an unnamed annotator (four items read as eight ratings by two
    people), which inflated agreement and the human ceiling.
    """
    for column in spec.annotator_columns:
        if column in spec.ratings:
            raise InputError(f'the column "{column}" is also under ratings: one column is read once, as an annotator\'s'
                             " (here) or as a dimension's (there)", path=path,
                             line=yaml_line(text, ["annotator_columns", column]),
                             field=f"annotator_columns.{column}")  # fmt: skip
    if spec.annotator_columns and (same := [c for c, d in spec.ratings.items() if d == spec.dimension]):
        raise InputError(f'the column "{same[0]}" under ratings gives the dimension "{spec.dimension}" too, which the '
                         "annotators' columns rate: each item would be rated on it once more, by an unnamed annotator;"
                         " leave it out, or give it another dimension", path=path,
                         line=yaml_line(text, ["ratings", same[0]]), field=f"ratings.{same[0]}")  # fmt: skip


def _check_per_system(spec: MappingFile, path: Path, text: str) -> None:
    """Refuse, with several ``systems``, a response or rating column without ``{system}``.

    Each row's one column was read once per system: the same response (or rating) under every system's name.
    A ``system`` or ``item_id`` beside ``systems`` is refused: nothing read it (its column need not exist).
    """
    if spec.systems and spec.system:
        raise InputError(f"with systems, the system of each response is its name in systems "
                         f"({', '.join(spec.systems)}), and no column is read: leave system out", path=path,
                         line=yaml_line(text, ["system"]), field="system")  # fmt: skip
    if spec.systems and spec.item_id:
        raise InputError("with systems, each row holds one response per system and its id is <dialogue>:<system>; no "
                         "column is read: leave item_id out (give dialogue_id to name the rows' dialogues)",
                         path=path, line=yaml_line(text, ["item_id"]), field="item_id")  # fmt: skip
    if len(spec.systems) < 2:
        return
    for key, columns in (("response", [spec.response]), ("ratings", list(spec.ratings)),
                         ("annotator_columns", list(spec.annotator_columns))):  # fmt: skip
        for column in columns:
            if "{system}" not in column:
                field = key if key == "response" else f"{key}.{column}"
                raise InputError(f'"{column}" has no {{system}}: with {len(spec.systems)} systems, each row\'s one '
                                 f'column would be read as every system\'s; name one per system, e.g. '
                                 f'"{column}_{{system}}"', path=path, line=yaml_line(text, field.split(".", 1)),
                                 field=field)  # fmt: skip


RECORD_FILES = ("dialogues.jsonl", "candidates.jsonl", "ratings.jsonl")


def read_records(
    dialogues: str | Path, candidates: str | Path, ratings: str | Path | None = None, *, name: str | None = None
) -> Benchmark:
    """Read dialeval record files: dialogues and candidates (ids unique), and optionally ratings.

    Record files are dialeval's own format, written after a mapping's decisions, so they are read
    as they are: a candidate's text may be empty (kept by ``keep_empty_responses`` at import, as
    ``data export -b lmstyle-mturk`` writes two), a dialogue may have no turns (the response opens
    the conversation) and a turn may be empty (published logs have turns where a user sent nothing).

    Raises:
        InputError: Naming the file, line and field: a duplicate dialogue or candidate id (with the
            line of the first), a candidate whose dialogue is unknown or whose ``turn_index`` is past
            the dialogue's end, a rating of no candidate (of no dialogue, ``level="dialogue"``), an empty
            candidates file, or any malformed record.
    """
    dials = {k: d for k, (_, d) in read_unique(dialogues, Dialogue).items()}
    cands = read_candidates(candidates, dials, str(dialogues))
    rated = rating_lines(ratings) if ratings is not None else []
    known = {"turn": ({c.id for c in cands}, "candidate", candidates), "dialogue": (set(dials), "dialogue", dialogues)}
    for line, rating in rated:  # `data show` counted it, every join of ratings to scores dropped it, unsaid
        ids, kind, where = known[rating.level]
        if rating.item_id not in ids:
            raise InputError(f'no {kind} has the id "{rating.item_id}" (not in {where})', path=ratings, line=line,
                             field="item_id")  # fmt: skip
    return Benchmark(
        name=name or Path(candidates).stem,
        dialogues=dials,
        candidates=cands,
        ratings=[r for _, r in rated],
        source=str(candidates),
    )


def read_ratings(path: str | Path) -> list[Rating]:
    r"""Read rating records; an annotator's second rating of one item on one dimension is refused, naming both lines.

    An annotator or dimension is read without spaces around it (a blank one is refused), as a table's are. A number
    outside its record's ``LOW-HIGH`` scale is refused too (meta averaged it with the rest, silently), and
    a dimension rated on two scales, and a dimension rated with numbers and text (:func:`_check_kind`).

    meta averaged both into the item's mean (that annotator counted twice), silently; the table reader refuses the
    same (:meth:`_TableBuilder.rate_one`).

    Example:
        >>> import tempfile, pathlib
        >>> p = pathlib.Path(tempfile.mkdtemp()) / "r.jsonl"
        >>> _ = p.write_text('{"item_id": "i", "dimension": "q", "annotator": "a", "value": 4}\n' * 2)
        >>> read_ratings(p)
        Traceback (most recent call last):
        ...
        dialeval.errors.InputError: ...r.jsonl:2: field "annotator": annotator "a" rates item "i" on "q" twice ...
    """
    return [rating for _, rating in rating_lines(path)]


def rating_lines(path: str | Path) -> list[tuple[int, Rating]]:
    """Read rating records with their lines, as :func:`read_ratings` reads them."""
    seen: dict[tuple[str, str, str, str], int] = {}
    scales: dict[tuple[str, str], tuple[str, int]] = {}
    kinds: dict[tuple[str, str], tuple[bool, int]] = {}
    ratings = []
    for line, record in iter_records(path, Rating):
        rating = named_rating(record, path, line)
        _check_kind(rating, kinds, path, line)
        first = seen.setdefault((rating.level, rating.item_id, rating.dimension, rating.annotator), line)
        if first != line:
            raise InputError(f'annotator "{rating.annotator}" rates item "{rating.item_id}" on "{rating.dimension}" '
                             f"twice (first on line {first})", path=path, line=line, field="annotator")  # fmt: skip
        scale_line = scales.setdefault((rating.level, rating.dimension), (rating.scale, line))
        if scale_line[0] != rating.scale:  # `data show` named the first, meta averaged a 3 of 3 with a 3 of 5
            raise InputError(f'the dimension "{rating.dimension}" is rated on "{rating.scale}" here and on '
                             f'"{scale_line[0]}" on line {scale_line[1]}: one scale per dimension', path=path,
                             line=line, field="scale")  # fmt: skip
        bounds = scale_range(rating.scale)  # the table reader refuses the same (:meth:`_TableBuilder.rate_one`)
        if bounds and isinstance(rating.value, float) and not bounds[0] <= rating.value <= bounds[1]:
            raise InputError(f"{rating.value:g} is outside the scale {rating.scale}", path=path, line=line,
                             field="value")  # fmt: skip
        ratings.append((line, rating))
    return ratings


def named_rating(rating: Rating, path: str | Path, line: int) -> Rating:
    """Return ``rating`` with its annotator and dimension stripped (as a table's annotator cell is); refuse a blank one.

    An annotator "" (or " ") was one more rater, and "a " a second rater beside "a"; a dimension "q " a second
    dimension beside "q" (two rows "q" in import-agreement's table), and "" a dimension of no name.
    """
    names = {"annotator": rating.annotator.strip(), "dimension": rating.dimension.strip()}
    for key, what in (("annotator", "who gave it"), ("dimension", "what it judges")):
        if not names[key]:
            raise InputError(f"empty {key}: each rating names {what}", path=path, line=line, field=key)
    return rating.model_copy(update=names)


def _check_kind(rating: Rating, kinds: dict[tuple[str, str], tuple[bool, int]], path: str | Path, line: int) -> None:
    """Refuse a value of the other kind (text among numbers, a number among text) than its dimension's first.

    ``kinds`` holds each (level, dimension)'s first kind (text or not) and its line. One ``"4"`` among numbers made
    the dimension labels, 4 and "4" two answers to agreement; meta left a label among numbers out, silently.
    """
    value = rating.value
    if value is None or rating.dont_know:
        return
    first, at = kinds.setdefault((rating.level, rating.dimension), (isinstance(value, str), line))
    if first == isinstance(value, str):
        return
    if isinstance(value, str):
        found = f'text ("{value}")'
        fix = f"write {value.strip()} as a number" if _float_or_none(value) is not None else _ONE_KIND
    else:
        found, fix = f"numbers ({value:g})", _ONE_KIND
    raise InputError(f'the dimension "{rating.dimension}" is rated with {"text" if first else "numbers"} (line {at}) '
                     f"and here with {found}: one kind per dimension: {fix}", path=path, line=line,
                     field="value")  # fmt: skip


_ONE_KIND = 'give each answer as a number, or each as text (for "I don\'t know", null with dont_know: true)'


def read_candidates(path: str | Path, dialogues: Mapping[str, Dialogue], source: str) -> list[Candidate]:
    """Read candidate records (ids unique) that must each fit a dialogue of ``dialogues`` (read from ``source``).

    Raises:
        InputError: Naming the file, line and field: a duplicate id, an unknown dialogue, a
            ``turn_index`` past the dialogue's end, a blank reference (scored as a reference of nothing), or any
            malformed record.
    """
    cands = read_unique(path, Candidate)
    if not cands:
        raise InputError("no candidates in this file", path=path)
    for lineno, cand in cands.values():
        if (blank := next((k for k, ref in enumerate(cand.references) if not ref.strip()), None)) is not None:
            raise InputError("an empty reference: remove it (a candidate with no reference has references [])",
                             path=path, line=lineno, field=f"references.{blank}")  # fmt: skip
        if cand.dialogue_id not in dialogues:
            raise InputError(
                f'unknown dialogue "{cand.dialogue_id}" (not in {source})', path=path, line=lineno, field="dialogue_id"
            )
        n_turns = len(dialogues[cand.dialogue_id].turns)
        if cand.turn_index > n_turns:
            raise InputError(
                f'turn_index {cand.turn_index} is past the end of dialogue "{cand.dialogue_id}" ({n_turns} turns)',
                path=path, line=lineno, field="turn_index",
            )  # fmt: skip
    return [c for _, c in cands.values()]


def load_records(folder: str | Path, *, name: str | None = None) -> Benchmark:
    """Load dialeval's own record files: ``dialogues.jsonl``, ``candidates.jsonl``, ``ratings.jsonl``.

    Checked as :func:`read_records` checks them.
    """
    root = Path(folder)
    missing = [f for f in RECORD_FILES if not (root / f).is_file()]
    if missing:
        raise InputError(f"missing {', '.join(missing)} (needs {', '.join(RECORD_FILES)})", path=root)
    bench = read_records(*(root / f for f in RECORD_FILES), name=name or root.name)
    bench.source = str(root)
    return bench
