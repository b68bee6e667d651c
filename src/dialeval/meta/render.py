"""Render correlation rows as a ranked Markdown table or JSON-serialisable dicts.

Example:
    >>> from dialeval.meta.rows import CorrelationRow
    >>> def row(metric, value):
    ...     return CorrelationRow(metric=metric, dimension="Overall", level="turn", method="pearson", value=value,
    ...                           p_value=None, ci_low=None, ci_high=None, n_items=10, n_groups=5, n_skipped=0)
    >>> print(rows_to_markdown([row("a", 0.1), row("b", 0.5)]))
    | group | metric | turn pearson |
    |---|---|---|
    | all | b | 0.500 |
    | all | a | 0.100 |
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from dialeval.meta.rows import CorrelationRow


def _cell(row: CorrelationRow | None, digits: int) -> str:
    if row is None or row.value is None:
        return "n/a"
    text = f"{row.value:.{digits}f}"
    if row.ci_low is not None and row.ci_high is not None:
        text += f" [{row.ci_low:.{digits}f}, {row.ci_high:.{digits}f}]"
    return text


def rows_to_markdown(rows: Sequence[CorrelationRow], rank_by: tuple[str, str] | None = None, digits: int = 3) -> str:
    """One line per (group, dimension, metric), one column per (level, method), ranked within each group.

    Args:
        rows: Correlation rows.
        rank_by: The (level, method) column to rank by, best first (default: the first column).
        digits: Decimals shown.
    """
    columns: list[tuple[str, str]] = []
    cells: dict[tuple[str, str, str], dict[tuple[str, str], CorrelationRow]] = {}
    for r in rows:
        if (r.level, r.method) not in columns:
            columns.append((r.level, r.method))
        cells.setdefault((r.group, r.dimension, r.metric), {})[(r.level, r.method)] = r
    key = rank_by or (columns[0] if columns else ("", ""))
    dims = {d for _, d, _ in cells}

    def order(item: tuple[str, str, str]) -> tuple[bool, str, str, float]:
        ranked = cells[item].get(key)
        v = ranked.value if ranked is not None and ranked.value is not None else -math.inf
        return (item[0] != "all", item[0], item[1], -v)

    head = ["group", *(["dimension"] if len(dims) > 1 else []), "metric", *(f"{lv} {m}" for lv, m in columns)]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for item in sorted(cells, key=order):
        group, dim, metric = item
        vals = [group, *([dim] if len(dims) > 1 else []), metric, *(_cell(cells[item].get(c), digits) for c in columns)]
        lines.append("| " + " | ".join(vals) + " |")
    return "\n".join(lines)


def rows_to_dicts(rows: Sequence[CorrelationRow]) -> list[dict[str, Any]]:
    """Return the rows as JSON-serialisable dicts."""
    return [r.to_dict() for r in rows]
