"""The wide correlation table: groups in the order the rows give them, metrics ranked within each group."""

from __future__ import annotations

from types import SimpleNamespace

from dialeval.commands.tables import to_markdown
from dialeval.meta.wide import pivot


def _row(group: str, metric: str, value: float) -> SimpleNamespace:
    return SimpleNamespace(metric=metric, level="turn", method="pearson", value=value, ci_low=None, ci_high=None,
                           group=group)  # fmt: skip


def test_groups_keep_the_rows_order_and_metrics_are_ranked_within_each() -> None:
    """The groups came sorted as text (topic=t1, topic=t10, topic=t2), not in the order meta's breakdown gives."""
    rows = [_row(g, m, v) for g in ("topic=t1", "topic=t2", "all", "topic=t10") for m, v in (("a", 0.1), ("b", 0.5))]
    lines = to_markdown(pivot(rows)).splitlines()[2:]
    assert [line.split(" | ")[0].removeprefix("| ") for line in lines[::2]] == ["all", "topic=t1", "topic=t2",
                                                                              "topic=t10"]  # fmt: skip
    assert [line.split(" | ")[1] for line in lines[:2]] == ["b", "a"]  # the higher figure first
