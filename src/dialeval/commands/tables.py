"""Wide metric-by-(level, method) tables for the console and Markdown.

Example:
    >>> from types import SimpleNamespace as R
    >>> rows = [R(metric="m", level="turn", method="pearson", value=0.5, ci_low=0.4, ci_high=0.6,
    ...           p_value=0.01, group="all", n_items=10, n_groups=5)]
    >>> print(to_markdown(pivot(rows)))
    | metric | turn pearson |
    |---|---|
    | m | 0.500 [0.400, 0.600] |
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from rich.table import Table


@dataclass
class Wide:
    """A ranked wide table: one row per (group, metric), one column per (level, method)."""

    columns: list[tuple[str, str]]
    rows: list[tuple[str, str, dict[tuple[str, str], Any]]]


def _cell(row: Any) -> str:
    if row is None or row.value is None or (isinstance(row.value, float) and math.isnan(row.value)):
        return "n/a"
    text = f"{row.value:.3f}"
    lo, hi = getattr(row, "ci_low", None), getattr(row, "ci_high", None)
    if lo is not None and hi is not None and not (math.isnan(lo) or math.isnan(hi)):
        text += f" [{lo:.3f}, {hi:.3f}]"
    return text


def pivot(rows: Sequence[Any], rank_by: tuple[str, str] | None = None) -> Wide:
    """Pivot correlation rows; rank metrics within each group by ``rank_by`` (default: first column)."""
    columns: list[tuple[str, str]] = []
    table: dict[tuple[str, str], dict[tuple[str, str], Any]] = {}
    for r in rows:
        col = (r.level, r.method)
        if col not in columns:
            columns.append(col)
        table.setdefault((str(getattr(r, "group", "all")), r.metric), {})[col] = r
    key_col = rank_by or (columns[0] if columns else None)

    def rank_key(item: tuple[tuple[str, str], dict[tuple[str, str], Any]]) -> tuple[str, float]:
        (group, _), cells = item
        cell = cells.get(key_col) if key_col else None
        v = cell.value if cell is not None and cell.value is not None else -math.inf
        return (group if group != "all" else "", -v if not math.isnan(v) else math.inf)

    ordered = sorted(table.items(), key=rank_key)
    return Wide(columns=columns, rows=[(g, m, cells) for (g, m), cells in ordered])


def to_markdown(wide: Wide) -> str:
    """Render a pivoted table as Markdown (a group column appears when there are several groups)."""
    groups = {g for g, _, _ in wide.rows}
    show_group = groups != {"all"}
    head = (["group"] if show_group else []) + ["metric"] + [f"{lv} {m}" for lv, m in wide.columns]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for g, metric, cells in wide.rows:
        vals = ([g] if show_group else []) + [metric] + [_cell(cells.get(c)) for c in wide.columns]
        lines.append("| " + " | ".join(vals) + " |")
    return "\n".join(lines)


def to_rich(wide: Wide, title: str) -> Table:
    """Render a pivoted table for the console."""
    t = Table(title=title, title_justify="left")
    groups = {g for g, _, _ in wide.rows}
    show_group = groups != {"all"}
    if show_group:
        t.add_column("group")
    t.add_column("metric", style="bold")
    for lv, m in wide.columns:
        t.add_column(f"{lv}\n{m} [95% CI]", justify="right")
    for g, metric, cells in wide.rows:
        t.add_row(*(([g] if show_group else []) + [metric] + [_cell(cells.get(c)) for c in wide.columns]))
    return t
