"""align: a metric asked for that the scores do not hold is named with its closest match and every metric held."""

from __future__ import annotations

import pytest

from dialeval.errors import InputError
from dialeval.meta.align import align
from dialeval.schema import Rating, Score

SCORES = [Score(item_id="a", metric=m, value=1.0) for m in ("bleu1", "bleu2", "length")]
RATINGS = [Rating(item_id="a", dimension="Overall", annotator="w", value=3)]


def test_a_missing_metric_lists_every_metric_of_the_scores_and_the_closest():
    with pytest.raises(InputError) as caught:
        align(SCORES, RATINGS, dimension="Overall", metrics=["bleu9"])
    assert str(caught.value) == (
        'field "metrics": no scores for metric bleu9 (did you mean "bleu2"?); the scores hold: bleu1, bleu2, length'
    )


def test_the_list_holds_the_metrics_not_asked_for_too():
    with pytest.raises(InputError) as caught:
        align(SCORES, RATINGS, dimension="Overall", metrics=["bleu1", "zzz"])
    assert str(caught.value).endswith("no scores for metric zzz; the scores hold: bleu1, bleu2, length")
