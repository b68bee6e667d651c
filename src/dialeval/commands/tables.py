"""Wide metric-by-(level, method) tables for the console and Markdown, and a console table that never cuts.

Example:
    >>> from types import SimpleNamespace as R
    >>> from dialeval.meta.wide import pivot
    >>> rows = [R(metric="m", level="turn", method="pearson", value=0.5, ci_low=0.4, ci_high=0.6,
    ...           p_value=0.01, group="all", n_items=10, n_groups=5)]
    >>> print(to_markdown(pivot(rows)))
    | metric | turn pearson |
    |---|---|
    | m | 0.500 [0.400, 0.600] |
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from rich.cells import cell_len
from rich.console import Console, ConsoleOptions
from rich.table import Table
from rich.text import Text

from dialeval.meta.wide import Wide, cell_text
from dialeval.words import markdown_table


def to_markdown(wide: Wide) -> str:
    """Render a pivoted table as Markdown (a group column appears when there are several groups)."""
    groups = {g for g, _, _ in wide.rows}
    show_group = groups != {"all"}
    head = (["group"] if show_group else []) + ["metric"] + [f"{lv} {m}" for lv, m in wide.columns]
    body = [[*([g] if show_group else []), metric, *[cell_text(cells.get(c)) for c in wide.columns]]
            for g, metric, cells in wide.rows]  # fmt: skip
    return "\n".join(markdown_table(head, body))


def to_rich(wide: Wide, title: str) -> ScreenTable:
    """Render a pivoted table for the console (split into blocks that fit; see :class:`ScreenTable`)."""
    show_group = {g for g, _, _ in wide.rows} != {"all"}
    # "[95% CI]" over a column of bare figures (--boot 0) read as if their CIs were lost
    cis = {c for _, _, cells in wide.rows for c, cell in cells.items() if getattr(cell, "ci_low", None) is not None}
    return ScreenTable(
        title,
        keys=(["group"] if show_group else []) + ["metric"],
        columns=[f"{lv} {m}" + ("\n[95% CI]" if (lv, m) in cis else "") for lv, m in wide.columns],
        rows=[
            (([g] if show_group else []) + [metric], [cell_text(cells.get(c)) for c in wide.columns])
            for g, metric, cells in wide.rows
        ],
    )


def _width(text: str) -> int:
    r"""Return the terminal columns of the widest line of ``text`` (a CJK character takes two).

    Example:
        >>> _width("turn spearman\n[95% CI]"), _width("日本語")
        (13, 6)
    """
    return max((cell_len(line) for line in text.split("\n")), default=0)


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
