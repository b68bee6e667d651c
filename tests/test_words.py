"""Names in the order people read them (:func:`dialeval.words.in_order`)."""

from __future__ import annotations

from dialeval.words import in_order


def test_names_that_are_numbers_come_in_the_order_of_their_values():
    """It read only runs of digits: 0.25 as 0 and 25 (after 0.5), -1 as "-" and 1 (after 10), 1e-05 after 2."""
    values = ["10", "0.5", "-1", "0.25", "2", "1e-05", "+3", "-0.5"]
    assert sorted(values, key=in_order) == ["-1", "-0.5", "1e-05", "0.25", "0.5", "2", "+3", "10"]
    # the numbers inside other names are still runs of digits, after the values: v-2 is v and 2, not v and -2
    names = ["sys10", "sys2", "v-10", "v-2", "run 1.5", "run 1.10", "t01", "t1", "0.5"]
    assert sorted(names, key=in_order) == ["0.5", "run 1.5", "run 1.10", "sys2", "sys10", "t01", "t1", "v-2", "v-10"]
