"""Correlation rows pivoted wide: one row per (group, metric), one column per (level, method), ranked in each group.

The console and Markdown tables of ``meta`` and ``benchmark`` (:mod:`dialeval.commands.tables`) and the report's
correlation tables (:mod:`dialeval.report.build`) are drawn from it.

Example:
    >>> from types import SimpleNamespace as R
    >>> rows = [R(metric=m, level="turn", method="pearson", value=v, group=g)
    ...         for g in ("all", "t2", "t10") for m, v in (("a", 0.1), ("b", 0.5))]
    >>> [(g, m) for g, m, _ in pivot(rows).rows][:4]
    [('all', 'b'), ('all', 'a'), ('t2', 'b'), ('t2', 'a')]
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from dialeval.words import with_ci


@dataclass
class Wide:
    """A ranked wide table: one row per (group, metric), one column per (level, method)."""

    columns: list[tuple[str, str]]
    rows: list[tuple[str, str, dict[tuple[str, str], Any]]]


def rank_column(columns: Sequence[tuple[str, str]]) -> tuple[str, str] | None:
    """Return the (level, method) column a benchmark's table is ranked by: Spearman at the first level, if it has one.

    Else its first column. ``dialeval benchmark`` (its screen and table.md) and the report rank by this one rule.

    Example:
        >>> rank_column([("turn", "pearson"), ("turn", "spearman"), ("system", "spearman")])
        ('turn', 'spearman')
        >>> rank_column([("turn", "kendall"), ("system", "kendall")]), rank_column([])
        (('turn', 'kendall'), None)
    """
    if not columns:
        return None
    first = (columns[0][0], "spearman")
    return first if first in columns else columns[0]


def pivot(rows: Sequence[Any], rank_by: tuple[str, str] | None = None) -> Wide:
    """Pivot correlation rows; rank metrics within each group by ``rank_by`` (default: first column).

    The groups keep the order of the rows (``all`` first), which :func:`~dialeval.meta.correlate.breakdown` gives.
    """
    columns: list[tuple[str, str]] = []
    table: dict[tuple[str, str], dict[tuple[str, str], Any]] = {}
    for r in rows:
        col = (r.level, r.method)
        if col not in columns:
            columns.append(col)
        table.setdefault((str(getattr(r, "group", "all")), r.metric), {})[col] = r
    key_col = rank_by or (columns[0] if columns else None)
    place = {g: i for i, g in enumerate(dict.fromkeys(g for g, _ in table))}  # the rows' order: t2 before t10

    def rank_key(item: tuple[tuple[str, str], dict[tuple[str, str], Any]]) -> tuple[bool, int, float]:
        (group, _), cells = item
        cell = cells.get(key_col) if key_col else None
        v = cell.value if cell is not None and cell.value is not None else -math.inf
        return (group != "all", place[group], -v if not math.isnan(v) else math.inf)

    ordered = sorted(table.items(), key=rank_key)
    return Wide(columns=columns, rows=[(g, m, cells) for (g, m), cells in ordered])


def cell_text(cell: Any, missing: str = "n/a") -> str:
    """Return a cell's figure with its CI (:func:`~dialeval.words.with_ci`); ``missing`` where the table has none.

    Example:
        >>> from types import SimpleNamespace as R
        >>> cell_text(R(value=0.5, ci_low=0.4, ci_high=0.6)), cell_text(R(value=0.5)), cell_text(None, missing="-")
        ('0.500 [0.400, 0.600]', '0.500', '-')
    """
    if cell is None:
        return missing
    return with_ci(cell.value, getattr(cell, "ci_low", None), getattr(cell, "ci_high", None))
