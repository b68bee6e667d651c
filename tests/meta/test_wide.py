"""The one rank rule of ``benchmark`` (screen, table.md) and ``report``: :func:`dialeval.meta.wide.rank_column`."""

from types import SimpleNamespace as R

from dialeval.meta.wide import pivot, rank_column


def test_rank_column_takes_the_first_levels_spearman_else_the_first_column() -> None:
    # hand-built column lists: Spearman at the first level wins over Pearson before it and over other levels
    assert rank_column([("turn", "pearson"), ("turn", "spearman"), ("system", "spearman")]) == ("turn", "spearman")
    # Spearman only at a later level is not the first level's: the first column ranks
    assert rank_column([("turn", "pearson"), ("system", "spearman")]) == ("turn", "pearson")
    assert rank_column([]) is None


def test_pivot_ranked_by_the_rule_orders_by_spearman_not_the_first_column() -> None:
    # a beats b on Pearson, b beats a on Spearman: the rule puts b first, the first column would put a first
    rows = [R(metric="a", level="turn", method="pearson", value=0.9), R(metric="a", level="turn", method="spearman",
            value=0.1), R(metric="b", level="turn", method="pearson", value=0.2),
            R(metric="b", level="turn", method="spearman", value=0.8)]  # fmt: skip
    columns = list(dict.fromkeys((r.level, r.method) for r in rows))
    assert [m for _, m, _ in pivot(rows, rank_by=rank_column(columns)).rows] == ["b", "a"]
    assert [m for _, m, _ in pivot(rows).rows] == ["a", "b"]
