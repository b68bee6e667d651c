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


def test_scores_with_no_value_give_undefined_figures_not_a_key_error():
    """correlation_table on scores that are all null was pandas' KeyError 'context_id' (in Python: correlate on an
    all-NaN metric column); a metric with no value among metrics with values was already an undefined row."""
    from dialeval.meta.correlate import correlation_table

    scores = [Score(item_id=i, metric="m", value=None, context_id=i, system="xy"[n % 2]) for n, i in enumerate("abcd")]
    ratings = [Rating(item_id=i, dimension="Overall", annotator="w", value=n) for n, i in enumerate("abcd")]
    aligned = align(scores, ratings, dimension="Overall")
    assert len(aligned.items) == 4 and aligned.items["m"].isna().all()  # the four rated items, none scored
    rows = correlation_table(scores, ratings, dimension="Overall", levels=["turn", "system"], methods=["spearman"],
                             n_boot=10)  # fmt: skip
    assert [(r.level, r.value, r.n_items) for r in rows] == [("turn", None, 0), ("system", None, 0)]
    assert all(r.note.startswith("undefined") for r in rows)
    with pytest.raises(InputError, match='no score has a value, so none has a tag "task"'):
        correlation_table(scores, ratings, dimension="Overall", by="task", n_boot=0)


def test_ratings_that_are_all_labels_are_refused_with_what_they_are():
    """A study export of a choice protocol (positive/negative) gave every figure "undefined: constant input or
    fewer than 2 values", and nothing said the ratings were labels. One number among them is correlated as before."""
    scores = [Score(item_id=i, metric="length", value=float(n)) for n, i in enumerate("abc")]
    labels = [Rating(item_id=i, dimension="Listening", annotator=w, value=v, scale="positive|negative")
              for i, v in zip("abc", ("positive", "negative", "positive"), strict=True) for w in ("w1", "w2")]
    dont_know = Rating(item_id="a", dimension="Listening", annotator="w3", value=None, dont_know=True)
    with pytest.raises(InputError) as caught:
        align(scores, [*labels, dont_know], dimension="Listening")
    assert str(caught.value) == ('field "dimension": the ratings of "Listening" are labels (negative, positive), not '
                                 "numbers: a correlation needs a number per rating (a study's: dialeval study export "
                                 "STUDY_DIR --numeric)")
    numbers = [r.model_copy(update={"value": 1.0 if r.value == "positive" else 0.0, "scale": "0-1"}) for r in labels]
    got = align(scores, [*numbers, labels[0]], dimension="Listening")
    assert got.counts["ratings_not_numeric"] == 1 and got.items["human"].tolist() == [1.0, 0.0, 1.0]


def test_a_rated_item_whose_score_has_no_value_is_counted_once() -> None:
    """It was counted twice in the notes, "1 rated item without score; 1 score without value", for one row."""
    scores = [Score(item_id="a", metric="m", value=1.0), Score(item_id="b", metric="m", value=None),
              Score(item_id="c", metric="m", value=2.0)]  # fmt: skip
    ratings = [Rating(item_id=i, dimension="Overall", annotator="w", value=3) for i in "abcd"]  # "d": no score at all
    counts = align(scores, ratings, dimension="Overall").counts
    assert counts["scores_missing_value:m"] == 1 and counts["ratings_without_score"] == 1  # "d" only


@pytest.mark.parametrize("bare_first", [True, False])
def test_an_items_keys_and_tags_come_from_any_of_its_scores_whatever_their_order(bare_first: bool) -> None:
    """The first score of an item gave its keys: scores of another tool (no context, system or tags) read first left
    every item without them (``meta --by task``: 'no tag "task" on the scores'), read after they changed nothing."""
    full = [Score(item_id=i, metric="m", value=1.0, context_id="c", dialogue_id="d", system=f"s{i}",
                  tags={"task": i}) for i in "ab"]  # fmt: skip
    bare = [Score(item_id=i, metric="other", value=2.0) for i in "ab"]
    scores = [*bare, *full] if bare_first else [*full, *bare]
    items = align(scores, [Rating(item_id="a", dimension="q", annotator="w", value=1)], dimension="q").items
    assert items.loc[["a", "b"], ["context_id", "dialogue_id", "system", "tag:task"]].values.tolist() == [
        ["c", "d", "sa", "a"], ["c", "d", "sb", "b"]]  # fmt: skip


@pytest.mark.parametrize("key", ["context_id", "system", "tags"])
def test_two_scores_giving_an_item_two_contexts_systems_or_tag_values_are_refused(key: str) -> None:
    """The first read was kept: the figures changed with the order of the scores (two contexts of "a": sample-level
    r 1.0 one way, undefined the other), silently."""
    first = Score(item_id="a", metric="m", value=1.0, context_id="c1", system="s", tags={"t": "x"})
    other = {"context_id": "c9", "system": "z", "tags": {"t": "y"}}[key]
    second = Score(item_id="a", metric="n", value=1.0, **{key: other})  # type: ignore[arg-type]
    ratings = [Rating(item_id="a", dimension="q", annotator="w", value=1)]
    field = {"context_id": "context_id", "system": "system", "tags": "tags.t"}[key]
    for scores in ([first, second], [second, first]):
        with pytest.raises(InputError, match=f'field "{field}": metric "[mn]" gives item "a" the '):
            align(scores, ratings, dimension="q")
