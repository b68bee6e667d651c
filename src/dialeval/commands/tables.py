"""Wide metric-by-(level, method) tables for the console and Markdown, and a console table that never cuts.

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
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from rich.console import Console, ConsoleOptions
from rich.table import Table
from rich.text import Text


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


def to_rich(wide: Wide, title: str) -> ScreenTable:
    """Render a pivoted table for the console (split into blocks that fit; see :class:`ScreenTable`)."""
    show_group = {g for g, _, _ in wide.rows} != {"all"}
    return ScreenTable(
        title,
        keys=(["group"] if show_group else []) + ["metric"],
        columns=[f"{lv} {m}\n[95% CI]" for lv, m in wide.columns],
        rows=[
            (([g] if show_group else []) + [metric], [_cell(cells.get(c)) for c in wide.columns])
            for g, metric, cells in wide.rows
        ],
    )


def _width(text: str) -> int:
    return max((len(line) for line in text.split("\n")), default=0)


@dataclass
class ScreenTable:
    """A console table that never cuts a name or a number, whatever the width of the terminal or pipe.

    The key columns (the row names) are repeated in every block and the value columns are split
    across as many blocks as the console width needs, each column as wide as its widest cell.
    When the keys and one value column alone do not fit, each cell is printed on a line of its
    own (``keys  column: value``), wrapped only at spaces.

    Example:
        >>> from io import StringIO
        >>> table = ScreenTable("demo", ["metric"], ["turn spearman", "system spearman"],
        ...                     [(["bertscore_r"], ["0.512 [0.401, 0.611]", "0.900 [0.700, 1.000]"])])
        >>> con = Console(file=StringIO(), width=40)
        >>> con.print(table)
        >>> text = con.file.getvalue()
        >>> "bertscore_r" in text and "0.900 [0.700, 1.000]" in text and "…" not in text
        True
        >>> text.count("bertscore_r")  # one block per value column at 40 characters
        2
    """

    title: str
    keys: list[str]
    columns: list[str]
    rows: list[tuple[list[str], list[str]]] = field(default_factory=list)
    justify_values: str = "right"

    def blocks(self, width: int) -> list[list[int]] | None:
        """Return the value columns of each block that fits ``width``; None when not even one column fits."""

        def needed(texts: list[str]) -> int:  # a column's width plus its share of the frame (2 padding, 1 rule)
            return max(_width(t) for t in texts) + 3

        keys = 1 + sum(needed([k, *(r[0][i] for r in self.rows)]) for i, k in enumerate(self.keys))
        out: list[list[int]] = []
        used = keys
        for j, head in enumerate(self.columns):
            w = needed([head, *(r[1][j] for r in self.rows)])
            if keys + w > width:
                return None
            if not out or used + w > width:
                out.append([])
                used = keys
            out[-1].append(j)
            used += w
        return out or [[]]

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> Iterator[Any]:
        """Yield the title and the blocks (or the one-cell-per-line form) for ``options.max_width``."""
        yield Text(self.title, style="bold")
        blocks = self.blocks(options.max_width)
        if blocks is None:
            for keys, values in self.rows:
                for head, value in zip(self.columns, values, strict=True):
                    yield Text(f"{'  '.join(keys)}  {head.replace(chr(10), ' ')}: {value}")
            return
        for block in blocks:
            table = Table()
            for k in self.keys:
                table.add_column(Text(k), no_wrap=True)
            for j in block:
                table.add_column(Text(self.columns[j]), no_wrap=True, justify=self.justify_values)  # type: ignore[arg-type]
            for keys, values in self.rows:
                table.add_row(*(Text(k) for k in keys), *(Text(values[j]) for j in block))
            yield table
