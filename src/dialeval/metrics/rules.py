"""Rules on metric parameters: declared once per config field, checked when a metric is built.

A config field states what it may be in its metadata, ``field(default=..., metadata=rule(...))``:
the allowed ``choices`` (a tuple, or a function that reads them from the library at run time),
a ``minimum`` and a ``maximum`` (a number, or a function of the config, such as the layers of
its model), or the ``placeholders`` a format template must use. A float that is NaN or infinite,
and a whole number past 64 bits (where libraries convert it to a float or a C integer), is refused in every
field, with or without a rule. :func:`check_config` (which
:class:`~dialeval.metrics.base.Metric` calls on construction) raises one
:class:`~dialeval.errors.InputError` that names the parameter and what it may be.

Example:
    >>> from dataclasses import dataclass, field
    >>> @dataclass(frozen=True)
    ... class Cfg:
    ...     order: int = field(default=6, metadata=rule(minimum=1))
    ...     tok: str = field(default="a", metadata=rule(choices=("a", "b")))
    ...     alpha: float = 0.5
    >>> check_config("demo", Cfg())
    >>> check_config("demo", Cfg(order=0))
    Traceback (most recent call last):
    ...
    dialeval.errors.InputError: field "--param": demo.order=0: must be at least 1
    >>> check_config("demo", Cfg(tok="c"))
    Traceback (most recent call last):
    ...
    dialeval.errors.InputError: field "--param": demo.tok='c': not one of a, b
    >>> check_config("demo", Cfg(tok="B"))
    Traceback (most recent call last):
    ...
    dialeval.errors.InputError: field "--param": demo.tok='B': not one of a, b; did you mean "b"?
    >>> check_config("demo", Cfg(alpha=float("nan")))
    Traceback (most recent call last):
    ...
    dialeval.errors.InputError: field "--param": demo.alpha=nan: not a finite number
"""

from __future__ import annotations

import dataclasses
import math
import string
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from dialeval.errors import InputError, closest

#: The metadata key of a field's :class:`Rule`.
RULE = "rule"

#: A bound: a number, a function of the config (None: no bound known), or None (no bound).
Bound = int | float | Callable[[Any], int | float | None] | None


@dataclass(frozen=True)
class Rule:
    """What one config field may be.

    Attributes:
        choices: The allowed values, or a function returning them (read at check time).
        minimum: The smallest allowed number, or a function of the config giving it.
        maximum: The largest allowed number, or a function of the config giving it.
        placeholders: For a format template: the ``{name}`` fields it must use, and the only ones it may.
        note: What the bound means, shown after it (``0 = all turns``).
    """

    choices: Sequence[str] | Callable[[], Iterable[str]] | None = None
    minimum: Bound = None
    maximum: Bound = None
    placeholders: tuple[str, ...] | None = None
    note: str = ""


def rule(
    *,
    choices: Sequence[str] | Callable[[], Iterable[str]] | None = None,
    minimum: Bound = None,
    maximum: Bound = None,
    placeholders: tuple[str, ...] | None = None,
    note: str = "",
) -> Mapping[str, Any]:
    """Return a field's ``metadata`` holding its :class:`Rule` (merge with ``NOT_IN_SIGNATURE`` by ``**``).

    Example:
        >>> rule(minimum=1)[RULE].minimum
        1
    """
    return MappingProxyType({RULE: Rule(choices, minimum, maximum, placeholders, note)})


def check_config(family: str, config: Any) -> None:
    """Check every field of ``config`` (a dataclass instance) against its rule and refuse non-finite floats.

    Raises:
        InputError: ``family.field=value: what it may be`` (field ``--param``), for the first bad field.
    """
    if not dataclasses.is_dataclass(config):
        return
    for f in dataclasses.fields(config):
        value = getattr(config, f.name)
        found = f.metadata.get(RULE)
        # a NaN first (a rule's comparisons pass it); a 64-bit overflow last: a field's own range says more
        problem = _not_finite(value, f.default) or (_problem(value, found, config) if found else None) \
            or _too_large(value)  # fmt: skip
        if problem:
            raise InputError(f"{family}.{f.name}={value!r}: {problem}", field="--param")


#: The largest whole number a parameter may be: a signed 64-bit integer's (beyond, sacrebleu's chrF died with
#: OverflowError "int too large to convert to float").
INT_MAX = 2**63 - 1


def _not_finite(value: Any, default: Any) -> str | None:
    """Say so when ``value`` is a NaN or infinite float (unless the default is one too)."""
    default_finite = not isinstance(default, float) or math.isfinite(default)
    if isinstance(value, float) and not math.isfinite(value) and default_finite:
        return "not a finite number"
    return None


def _too_large(value: Any) -> str | None:
    """Say so when ``value`` is a whole number past 64 bits (a field with no maximum of its own)."""
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) > INT_MAX:
        return f"too large a whole number (at most {INT_MAX})"
    return None


def _problem(value: Any, found: Rule, config: Any) -> str | None:
    """Return what is wrong with ``value`` under ``found`` (None: nothing)."""
    if found.choices is not None:
        allowed = tuple(found.choices() if callable(found.choices) else found.choices)
        if value not in allowed:
            close = closest(value, allowed) if isinstance(value, str) else None
            return f"not one of {', '.join(allowed)}" + (f'; did you mean "{close}"?' if close else "")
    if found.placeholders is not None:
        return template_problem(value, found.placeholders)
    low, high = _bound(found.minimum, config), _bound(found.maximum, config)
    if low is None and high is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        return f"expected a number, found {type(value).__name__}"
    if (low is None or value >= low) and (high is None or value <= high):
        return None
    what = f"between {low} and {high}" if low is not None and high is not None else (
        f"at least {low}" if low is not None else f"at most {high}"
    )
    return f"must be {what}" + (f" ({found.note})" if found.note else "")


def _bound(bound: Bound, config: Any) -> int | float | None:
    return bound(config) if callable(bound) else bound


def template_problem(template: Any, needed: tuple[str, ...]) -> str | None:
    """Return what is wrong with a ``str.format`` template that must use exactly the fields ``needed``.

    Example:
        >>> template_problem("A: {context} B:", ("context",)) is None
        True
        >>> template_problem("no slot", ("context",))
        'has no {context} placeholder (where the context goes)'
        >>> template_problem("{context} {x}", ("context",))
        'unknown placeholder {x}; the template may use only {context} (write a literal brace as {{ or }})'
    """
    if not isinstance(template, str):
        return f"expected a string, found {type(template).__name__}"
    only = ", ".join(f"{{{n}}}" for n in needed)
    brace = "write a literal brace as {{ or }}"
    try:
        names = [name for _, name, _, _ in string.Formatter().parse(template) if name is not None]
    except ValueError as exc:
        return f"not a valid template ({exc}); {brace}"
    unknown = next((n for n in names if n not in needed), None)
    if unknown is not None:
        return f"unknown placeholder {{{unknown}}}; the template may use only {only} ({brace})"
    missing = next((n for n in needed if n not in names), None)
    if missing is not None:
        return f"has no {{{missing}}} placeholder (where the {missing} goes)"
    try:
        template.format(**dict.fromkeys(needed, ""))
    except (ValueError, KeyError, IndexError, AttributeError) as exc:
        return f"not a valid template ({exc}); {brace}"
    return None
