"""Names in the order people read them (:func:`dialeval.words.in_order`); figures as the tables print them."""

from __future__ import annotations

import pytest

from dialeval.report.build import fmt
from dialeval.words import figure, in_order


def test_names_that_are_numbers_come_in_the_order_of_their_values():
    """It read only runs of digits: 0.25 as 0 and 25 (after 0.5), -1 as "-" and 1 (after 10), 1e-05 after 2."""
    values = ["10", "0.5", "-1", "0.25", "2", "1e-05", "+3", "-0.5"]
    assert sorted(values, key=in_order) == ["-1", "-0.5", "1e-05", "0.25", "0.5", "2", "+3", "10"]
    # the numbers inside other names are still runs of digits, after the values: v-2 is v and 2, not v and -2
    names = ["sys10", "sys2", "v-10", "v-2", "run 1.5", "run 1.10", "t01", "t1", "0.5"]
    assert sorted(names, key=in_order) == ["0.5", "run 1.5", "run 1.10", "sys2", "sys10", "t01", "t1", "v-2", "v-10"]


@pytest.mark.parametrize(
    ("value", "digits", "expected"),
    [(-0.0004, 3, "0.000"), (-0.0, 3, "0.000"), (-0.0005, 3, "-0.001"), (-10.0, 3, "-10.000"), (-0.04, 1, "0.0"),
     (None, 3, "n/a"), (float("nan"), 1, "n/a")],
)  # fmt: skip
def test_a_figure_that_rounds_to_zero_has_no_sign(value: float | None, digits: int, expected: str) -> None:
    """Every table (meta, benchmark, report) printed a kappa or correlation of -0.0004 as "-0.000", which reads as a
    negative figure; Python's own format gives the sign (f"{-0.0004:.3f}" == "-0.000")."""
    assert figure(value, digits) == expected
    assert fmt(value, digits) == ("-" if expected == "n/a" else expected)  # the report's cells
