"""Rated examples from catalog benchmarks: every catalog scale is read, including labels such as "0|1"."""

from __future__ import annotations

import pytest

from dialeval.data.catalog import load_benchmark
from dialeval.errors import InputError
from dialeval.trained.data import examples_from, parse_scale


@pytest.mark.parametrize(("scale", "bounds"), [("1-5", (1.0, 5.0)), ("0-100", (0.0, 100.0)), ("0|1", (0.0, 1.0)),
                                                ("1|2|3", (1.0, 3.0))])  # fmt: skip
def test_a_scale_is_a_range_or_a_set_of_numeric_labels(scale: str, bounds: tuple[float, float]) -> None:
    assert parse_scale(scale) == bounds


@pytest.mark.parametrize("scale", ["5-1", "abc", "1|1", "a|b", ""])
def test_a_scale_that_cannot_be_read_is_one_error(scale: str) -> None:
    with pytest.raises(InputError, match="cannot read the rating scale") as err:
        parse_scale(scale)
    assert err.value.field == "scale"


def test_predictive_engagement_convai_rated_0_or_1_gives_examples() -> None:
    """Its ratings are labels 0|1 (the loader's scale); before, every train or experiment run on it stopped there."""
    bench = load_benchmark("predictive-engagement-convai")
    examples = examples_from(bench)
    assert len(examples) == 297 == len(bench.candidates)
    # by hand: a 0 is the lowest third of the scale and a 1 the highest
    assert {(e.human, e.label) for e in examples} == {(0.0, 0), (1.0, 2)}


def test_a_benchmark_rated_per_dialogue_is_refused_with_why_without_asking_for_its_dimension() -> None:
    """DSTC9 asked for -d (several dimensions, its overall one "human (overall)"), then refused it all the same."""
    with pytest.raises(InputError) as err:
        examples_from(load_benchmark("dstc9"))
    assert str(err.value) == (
        'field "--dimension": benchmark "dstc9" has no numeric turn-level ratings of "human (overall)": it is rated '
        "per dialogue, and train learns the rating of each response"
    )
