"""Aggregation: majority votes with ties, means, the Table 3 and Figure 1 analogues (hand-computed)."""

from __future__ import annotations

import pytest

from dialeval.human.analysis import majority_table, majority_votes, mean_scores, reason_table
from dialeval.schema import Rating


def r(item: str, ann: str, value: float | str | None, reasons: list[str] | None = None) -> Rating:
    return Rating(
        item_id=item, dimension="A", annotator=ann, value=value, dont_know=value is None, reasons=reasons or []
    )


RATINGS = [
    r("x1", "a", "positive"), r("x1", "b", "negative", ["Incoherence"]), r("x1", "c", "positive"),
    r("x2", "a", "negative", ["Incoherence"]), r("x2", "b", None), r("x2", "c", "positive"), r("x2", "d", "negative"),
    r("y1", "a", "positive"), r("y1", "b", None),
]  # fmt: skip
SYSTEMS = {"x1": "sx", "x2": "sx", "y1": "sy"}


def test_majority_with_ties() -> None:
    votes = majority_votes(RATINGS)
    assert votes[("x1", "A")] == ("positive", False)
    assert votes[("x2", "A")] == ("negative", False)  # 2 negative vs 1 positive vs 1 don't know
    assert votes[("y1", "A")] == ("tie", True)  # 1 positive vs 1 don't know


def test_table3_and_figure1_percentages() -> None:
    # sx: x1 -> positive, x2 -> negative: 50% / 50%; sy: y1 tie: 100% tie
    assert majority_table(RATINGS, SYSTEMS) == {"A": {"sx": {"negative": 50.0, "positive": 50.0}, "sy": {"tie": 100.0}}}
    # sx has 7 votes, 2 of which chose Incoherence: 28.57%
    assert reason_table(RATINGS, SYSTEMS) == {"A": {"sx": {"Incoherence": pytest.approx(200 / 7)}}}


def test_mean_scores_leave_out_dont_know() -> None:
    rs = [r("i", "a", 4.0), r("i", "b", 5.0), r("i", "c", None)]
    assert mean_scores(rs) == {("i", "A"): 4.5}
