"""Leave-one-annotator-out human ceiling on USR Topical-Chat Overall, against a direct computation."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from dialeval.errors import InputError
from dialeval.meta.ceiling import human_ceiling
from dialeval.schema import Rating

SCIPY = {"pearson": stats.pearsonr, "spearman": stats.spearmanr, "kendall": stats.kendalltau}


def direct_ceiling(contexts, method):
    """Each annotator vs the mean of the other two on the items they rated, straight from the JSON lists."""
    own, others = {}, {}
    for ctx in contexts:
        for r in ctx["responses"]:
            for i, annotator in enumerate(ctx["annotators"]):
                own.setdefault(annotator, []).append(r["Overall"][i])
                others.setdefault(annotator, []).append(np.mean([v for j, v in enumerate(r["Overall"]) if j != i]))
    return np.mean([SCIPY[method](own[a], others[a]).statistic for a in own]), len(own)


@pytest.mark.parametrize("method", ["pearson", "spearman", "kendall"])
def test_ceiling_equals_direct_computation_on_usr(usr, method):
    (row,) = human_ceiling(usr.ratings, dimension="Overall", methods=(method,))
    expected, n_annotators = direct_ceiling(usr.contexts, method)
    assert row.value == pytest.approx(expected, abs=1e-12)
    assert (row.n_groups, row.n_skipped, row.n_items) == (n_annotators, 0, 360)
    assert row.metric == "human" and row.level == "turn"
    # no interval: the note says why, and meta prints it under the table (the row stood bare in a CI column)
    assert row.ci_low is None and row.note.endswith("no CI: the ceiling is a mean over annotators, not bootstrapped")


def test_annotator_without_overlap_is_skipped_and_counted():
    ratings = [
        Rating(item_id=f"i{i}", dimension="q", annotator=w, value=v)
        for w, vals in {"a": [1, 2, 3], "b": [1, 3, 2]}.items()
        for i, v in enumerate(vals)
    ]
    ratings.append(Rating(item_id="solo", dimension="q", annotator="c", value=4))
    (row,) = human_ceiling(ratings, dimension="q", methods=("pearson",))
    assert row.value == pytest.approx(stats.pearsonr([1, 2, 3], [1, 3, 2]).statistic)  # a vs b and b vs a: 0.5
    assert (row.n_groups, row.n_skipped, row.n_items) == (2, 1, 3)


def test_ratings_given_as_numbers_in_text_count_as_the_metrics_correlations_count_them():
    """Ratings "1", "2", "3" (text) are correlated with the metrics as numbers, but the ceiling said "no numeric
    turn ratings" (all of them text) or left them out (some of them), silently."""
    values = {"a": [1, 2, 3], "b": [1, 3, 2]}
    for as_text in ({"a", "b"}, {"b"}):
        ratings = [Rating(item_id=f"i{i}", dimension="q", annotator=w, value=str(v) if w in as_text else v)
                   for w, vals in values.items() for i, v in enumerate(vals)]  # fmt: skip
        (row,) = human_ceiling(ratings, dimension="q", methods=("pearson",))
        assert row.value == pytest.approx(stats.pearsonr([1, 2, 3], [1, 3, 2]).statistic)  # a vs b and b vs a: 0.5
        assert (row.n_groups, row.n_items) == (2, 3)


def test_ceiling_errors():
    with pytest.raises(InputError, match="no numeric turn ratings"):
        human_ceiling([Rating(item_id="i", dimension="q", annotator="a", value=1)], dimension="z")
    twice = [Rating(item_id="i", dimension="q", annotator="a", value=v) for v in (1, 2)]
    with pytest.raises(InputError, match='annotator "a" rates item "i" twice'):
        human_ceiling(twice, dimension="q")


def test_an_undefined_ceiling_says_which_reason():
    """Each case said "undefined: no annotator overlaps": one annotator, annotators on disjoint items, and overlap
    on one item only (no correlation of one pair)."""
    def rate(pairs):
        return [Rating(item_id=i, dimension="d", annotator=a, value=v) for i, a, v in pairs]

    cases = {
        "undefined: the ratings have one annotator, and the ceiling compares each with the others":
            rate([("x", "a", 1), ("y", "a", 2)]),
        "undefined: no item is rated by 2 annotators or more": rate([("x", "a", 1), ("y", "b", 2)]),
        "undefined: no annotator shares 2 items or more with the others, with a spread of ratings on both sides":
            rate([("x", "a", 1), ("x", "b", 2), ("y", "a", 3)]),
    }  # fmt: skip
    for note, ratings in cases.items():
        (row,) = human_ceiling(ratings, dimension="d", methods=["pearson"])
        assert row.value is None and row.note == note


def test_the_ceiling_at_another_level_says_it_is_turn_level_only():
    """With --level turn,system --ceiling, the human row's system cells read n/a with no reason given."""
    from dialeval.meta.ceiling import TURN_ONLY

    vals = {"w1": [1, 2, 3, 4], "w2": [1, 2, 4, 3]}
    ratings = [Rating(item_id=f"i{i}", dimension="q", annotator=w, value=v) for w, vs in vals.items()
               for i, v in enumerate(vs)]  # fmt: skip
    turn, system = human_ceiling(ratings, dimension="q", methods=["spearman"], levels=["turn", "system"])
    assert (turn.level, system.level) == ("turn", "system") and turn.value == pytest.approx(0.8)
    assert system.value is None and system.note == TURN_ONLY == (
        "turn level only: the ceiling compares each annotator's ratings with the others' item by item")


def test_the_ceiling_adds_no_turn_row_where_the_turn_level_is_not_asked():
    """With --level system --ceiling, the table got a turn column: the human row's figure, and n/a with no reason for
    every metric (they have no turn row)."""
    from dialeval.meta.ceiling import TURN_ONLY

    ratings = [Rating(item_id=f"i{i}", dimension="q", annotator=w, value=v) for w, vs in
               {"w1": [1, 2, 3], "w2": [1, 3, 2]}.items() for i, v in enumerate(vs)]  # fmt: skip
    (system,) = human_ceiling(ratings, dimension="q", methods=["spearman"], levels=["system"])
    assert (system.level, system.value, system.note) == ("system", None, TURN_ONLY)
