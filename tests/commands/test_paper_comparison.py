"""The --compare-paper table's cells: a value that rounds to zero prints unsigned (or +0.0 for a difference)."""

from __future__ import annotations

from types import SimpleNamespace

from dialeval.commands.meta import paper_comparison
from dialeval.published import PublishedTable


def test_a_value_or_difference_that_rounds_to_zero_prints_no_minus() -> None:
    """``:.1f`` and ``:+.1f`` printed "-0.0" for -0.04 (ours) and for a difference of -0.04: a negative sign on a
    figure that is zero at the table's precision."""
    table = PublishedTable(
        name="t", title="T", citation="C", notes="", columns=["a", "b", "c", "overall"],
        rows={"pearson": {"P": [0.0, 0.1, 3.0, 0.2]}}, metric_map={"m": "P"}, dimension_of={},
    )  # fmt: skip
    rows = [
        SimpleNamespace(level="sample", group=f"task={task}", method="pearson", metric="m", value=value)
        for task, value in (("a", -0.0004), ("b", 0.0006), ("c", 0.02))
    ]
    lines = paper_comparison(rows, table).splitlines()
    # x100: -0.04, 0.06, 2.0; overall (mean) 2.02 / 3 = 0.6733
    assert "| pearson | P (m) | dialeval | 0.0 | 0.1 | 2.0 | 0.7 |" in lines
    assert "| | | paper | 0 | 0.1 | 3 | 0.2 |" in lines
    # ours - paper: -0.04, 0.06 - 0.1 = -0.04, 2.0 - 3.0 = -1.0, 0.6733 - 0.2 = 0.4733
    assert "| | | difference | +0.0 | +0.0 | -1.0 | +0.5 |" in lines
