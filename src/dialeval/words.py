"""Words for messages, notes and tables at every layer: counts, figures, and names in the order people read them.

Example:
    >>> counted(1, "scored item without rating", "scored items without rating"), counted(3, "dialogue")
    ('1 scored item without rating', '3 dialogues')
    >>> some_of(1, 2, "item") + " no reference"
    '1 of 2 items has no reference'
    >>> human_rating("Overall"), human_rating("human (overall)")
    ('human Overall', 'human (overall)')
    >>> figure(0.12345), figure(float("nan")), figure(None)
    ('0.123', 'n/a', 'n/a')
    >>> with_ci(0.5, 0.25, 0.75), with_ci(0.5, None, None, no_ci="no CI"), with_ci(None, 0.1, 0.2)
    ('0.500 [0.250, 0.750]', '0.500 [no CI]', 'n/a')
    >>> sorted(["t10", "t2", "b", "t1"], key=in_order)
    ['b', 't1', 't2', 't10']
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from decimal import Decimal
from typing import overload

from dialeval.errors import InputError


def counted(n: int, noun: str, plural: str | None = None) -> str:
    """Return ``n`` and the noun, in the plural unless ``n`` is 1 (default plural: ``noun`` + s or es).

    Example:
        >>> counted(1, "dialogue"), counted(2, "batch"), counted(0, "rating"), counted(2, "failed worker")
        ('1 dialogue', '2 batches', '0 ratings', '2 failed workers')
    """
    if n == 1:
        return f"{n} {noun}"
    return f"{n} {plural or noun + ('es' if noun.endswith(('ch', 'sh', 's', 'x')) else 's')}"


def some_of(part: int, total: int, noun: str, verbs: tuple[str, str] = ("has", "have")) -> str:
    """Return ``part of total nouns`` with its verb: the first of ``verbs`` for one, the second for several.

    Example:
        >>> some_of(1, 1, "item"), some_of(3, 5, "item"), some_of(1, 2, "response", ("was", "were"))
        ('1 of 1 item has', '3 of 5 items have', '1 of 2 responses was')
    """
    return f"{part} of {counted(total, noun)} {verbs[0] if part == 1 else verbs[1]}"


def one_line(text: str, chars: int) -> str:
    r"""Return ``text`` on one line (runs of whitespace as one space), cut to ``chars`` characters.

    Example:
        >>> one_line("Hi!\n  How are you?", 50), one_line("How are you today?", 8)
        ('Hi! How are you?', 'How are…')
    """
    line = " ".join(text.split())
    return line if len(line) <= chars else line[: chars - 1] + "…"


def human_rating(dimension: str) -> str:
    """Return the human rating of ``dimension`` in words: "human Overall"; DSTC9's "human (overall)" as it is."""
    return dimension if dimension.lower().startswith("human") else f"human {dimension}"


def figure(value: float | None, digits: int = 3) -> str:
    """Return a figure as the tables print it: three decimals, ``n/a`` where it is undefined (None or NaN).

    A value that rounds to zero is ``0.000``, whatever its sign: ``-0.000`` read as a negative correlation.

    Example:
        >>> figure(0.12345), figure(-0.0002), figure(float("nan")), figure(-0.04, 1)
        ('0.123', '0.000', 'n/a', '0.0')
    """
    if value is None or value != value:
        return "n/a"
    text = f"{value:.{digits}f}"
    return text[1:] if text.startswith("-") and not text.strip("-0.") else text


def with_ci(value: float | None, low: float | None, high: float | None, *, no_ci: str = "") -> str:
    """Return a figure with its CI as every table prints it: ``0.500 [0.250, 0.750]``.

    ``n/a`` where the figure is undefined (None or NaN); where the CI is (either bound None or NaN), the figure
    alone, or ``0.500 [NO_CI]`` when ``no_ci`` says why.
    """
    if value is None or value != value:
        return "n/a"
    if low is None or high is None or low != low or high != high:
        return figure(value) + (f" [{no_ci}]" if no_ci else "")
    return f"{figure(value)} [{figure(low)}, {figure(high)}]"


def markdown_table(header: Sequence[str], rows: Iterable[Sequence[str]]) -> list[str]:
    r"""Return a Markdown table's lines: the header, the rule, the rows.

    In a cell, ``|`` is escaped and a line break is a space (a system, tag or metric named ``a|b`` split its row).

    Example:
        >>> markdown_table(["metric", "r"], [["a|b", "0.5"]])
        ['| metric | r |', '|---|---|', '| a\\|b | 0.5 |']
    """
    def line(cells: Sequence[str]) -> str:
        return "| " + " | ".join(c.replace("|", "\\|").replace("\n", " ") for c in cells) + " |"

    return [line(header), "|" + "---|" * len(header), *map(line, rows)]


#: A name that is a number as a whole: a sign, decimals, an exponent (``-1``, ``0.25``, ``1e-05``).
_NUMBER = re.compile(r"[-+]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?")


def in_order(name: str) -> tuple[list[str | int | Decimal], str]:
    """Return a sort key that orders names as people do: the numbers in them by value ("t2" before "t10").

    A name that is a number as a whole (a value: ``-1``, ``0.25``, ``1e3``) is ordered by its value, before the
    names that are not; in other names each run of digits is a number (``v-2`` is v and 2, not v and -2).
    Text and numbers alternate in the same places of every key, so two keys always compare; the name itself
    breaks a tie ("t01" and "t1").

    Example:
        >>> sorted(["batch 10", "batch 9", "Batch 1", "batch 09"], key=in_order)
        ['Batch 1', 'batch 09', 'batch 9', 'batch 10']
        >>> sorted(["10", "0.5", "-1", "0.25", "2", "t2"], key=in_order)
        ['-1', '0.25', '0.5', '2', '10', 't2']
    """
    if _NUMBER.fullmatch(name):  # it read "0.25" as 0 and 25, after "0.5", and "-1" as text "-" and 1, last
        return ["", Decimal(name), ""], name
    return [int(p) if i % 2 else p for i, p in enumerate(re.split(r"([0-9]+)", name))], name


@overload
def split_names(value: str, option: str, what: str = ...) -> list[str]: ...
@overload
def split_names(value: None, option: str, what: str = ...) -> None: ...
@overload
def split_names(value: str | None, option: str, what: str = ...) -> list[str] | None: ...
def split_names(value: str | None, option: str, what: str = "metric") -> list[str] | None:
    """Split a comma-separated list of ``what`` names strictly: None stays None; an empty name is an error.

    The one splitter of the command line's options and the Python API's keywords: ``option`` is the field an error
    names (``--metrics``; ``metrics``). Spaces around each name are dropped.

    Example:
        >>> split_names(" bleu, length ", "--metrics")
        ['bleu', 'length']
        >>> split_names("bleu,,length", "--metrics")
        Traceback (most recent call last):
        ...
        dialeval.errors.InputError: field "--metrics": empty metric name in "bleu,,length" (name 2 of 3)
    """
    if value is None:
        return None
    names = [v.strip() for v in value.split(",")]
    for n, name in enumerate(names, 1):
        if not name:
            where = f' in "{value}" (name {n} of {len(names)})' if len(names) > 1 else ""
            raise InputError(f"empty {what} name{where}", field=option)
    return names
