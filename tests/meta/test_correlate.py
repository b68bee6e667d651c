"""Correlation levels against scipy.stats on USR Topical-Chat, and hand-computed sample-level values."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy import stats

from dialeval.errors import InputError
from dialeval.meta.align import align
from dialeval.meta.correlate import correlation_table, default_levels
from dialeval.schema import Rating, Score

SCIPY = {"pearson": stats.pearsonr, "spearman": stats.spearmanr, "kendall": stats.kendalltau}


def usr_vectors(usr, dim="Overall"):
    """Per item: response length in tokens and the mean of the annotators' scores (computed here, not by dialeval)."""
    lengths, humans, systems, contexts = [], [], [], []
    for c, ctx in enumerate(usr.contexts):
        for r in ctx["responses"]:
            lengths.append(len(r["response"].split()))
            humans.append(np.mean(r[dim]))
            systems.append(r["model"])
            contexts.append(c)
    return np.array(lengths, float), np.array(humans), np.array(systems), np.array(contexts)


def by_key(rows):
    return {(r.group, r.level, r.metric, r.method): r for r in rows}


@pytest.mark.parametrize("method", ["pearson", "spearman", "kendall"])
def test_turn_and_system_levels_equal_scipy_on_usr(usr, method):
    x, y, systems, _ = usr_vectors(usr)
    rows = by_key(correlation_table(usr.scores, usr.ratings, dimension="Overall", methods=(method,), n_boot=0))
    turn = rows[("all", "turn", "len", method)]
    expected = SCIPY[method](x, y)
    assert turn.value == pytest.approx(expected.statistic, abs=1e-12)
    assert turn.p_value == pytest.approx(expected.pvalue, rel=1e-9)
    assert (turn.n_items, turn.n_groups) == (360, 60)
    names = sorted(set(systems))
    sx = [x[systems == s].mean() for s in names]
    sy = [y[systems == s].mean() for s in names]
    system = rows[("all", "system", "len", method)]
    expected = SCIPY[method](sx, sy)
    assert system.value == pytest.approx(expected.statistic, abs=1e-12)
    p_value = expected.pvalue
    if method == "spearman":  # six systems: the exact p over the 6! pairings, not scipy's t-approximation (0.0416)
        rhos = [abs(stats.spearmanr(sx, p).statistic) for p in itertools.permutations(sy)]
        p_value = sum(r >= abs(expected.statistic) - 1e-12 for r in rhos) / len(rhos)
        assert p_value == 42 / 720
    assert system.p_value == pytest.approx(p_value, rel=1e-9)
    assert system.n_groups == 6


def test_dialogue_level_from_turn_ratings_equals_scipy(usr):
    x, y, _, contexts = usr_vectors(usr)
    # Means rounded to 12 decimals as dialeval does, so that equal means tie whatever the summation order.
    dx = [round(x[contexts == c].mean(), 12) for c in range(60)]
    dy = [round(y[contexts == c].mean(), 12) for c in range(60)]
    (row,) = correlation_table(
        usr.scores, usr.ratings, dimension="Overall", metrics=["len"], levels=("dialogue",), methods=("spearman",)
    )
    assert row.value == pytest.approx(stats.spearmanr(dx, dy).statistic, abs=1e-12)
    assert row.n_groups == 60 and row.n_items == 360
    assert row.ci_low < row.value < row.ci_high


def test_dialogue_level_uses_native_dialogue_ratings():
    # Turn scores are averaged per dialogue: d1 -> 2, d2 -> 5, d3 -> 3; dialogue ratings (means) 1, 3, 4.
    turns = {"d1": [1.0, 3.0], "d2": [5.0], "d3": [2.0, 4.0]}
    scores = [
        Score(item_id=f"{d}:{i}", metric="m", value=v, dialogue_id=d, context_id=f"{d}#{i}", system="s")
        for d, vs in turns.items()
        for i, v in enumerate(vs)
    ]
    native = {"d1": [1, 1], "d2": [2, 4], "d3": [4, 4], "d9": [5, 5]}  # d9 has no scores: counted
    ratings = [
        Rating(item_id=d, dimension="q", annotator=f"w{k}", value=v, level="dialogue")
        for d, vs in native.items()
        for k, v in enumerate(vs)
    ]
    (row,) = correlation_table(scores, ratings, dimension="q", levels=("dialogue",), methods=("pearson",), n_boot=0)
    assert row.value == pytest.approx(stats.pearsonr([2, 5, 3], [1, 3, 4]).statistic, abs=1e-12)
    assert row.n_groups == 3
    assert align(scores, ratings, dimension="q").counts["dialogue_ratings_without_score"] == 1


def test_system_level_from_dialogue_ratings_averages_each_system_over_its_dialogues():
    """DSTC9-style data: only dialogues are rated, each dialogue is one system's; means computed here by hand."""
    turns = {  # dialogue -> (system, turn scores, the annotators' dialogue ratings)
        "a1": ("A", [1.0, 3.0], [2, 2]), "a2": ("A", [2.0], [1, 3]),
        "b1": ("B", [4.0, 4.0, 1.0], [4, 5]), "b2": ("B", [3.0], [3, 3]),
        "c1": ("C", [5.0], [5, 4]), "c2": ("C", [2.0, 6.0], [4, 4]),
    }  # fmt: skip
    scores, ratings = [], []
    for d, (system, values, rated) in turns.items():
        scores += [Score(item_id=f"{d}:{i}", metric="m", value=v, dialogue_id=d, context_id=f"{d}:{i}",
                         system=system) for i, v in enumerate(values)]  # fmt: skip
        ratings += [Rating(item_id=d, dimension="q", annotator=f"w{k}", value=v, level="dialogue")
                    for k, v in enumerate(rated)]  # fmt: skip
    # per dialogue: metric mean, human mean; per system: the mean over its two dialogues
    metric = {"A": (2.0 + 2.0) / 2, "B": (3.0 + 3.0) / 2, "C": (5.0 + 4.0) / 2}
    human = {"A": (2.0 + 2.0) / 2, "B": (4.5 + 3.0) / 2, "C": (4.5 + 4.0) / 2}
    rows = correlation_table(scores, ratings, dimension="q", levels=("system",), methods=("pearson",), n_boot=50)
    (row,) = rows
    expected = stats.pearsonr([metric[s] for s in "ABC"], [human[s] for s in "ABC"]).statistic
    assert row.value == pytest.approx(expected, abs=1e-12)
    assert row.n_groups == 3 and row.n_items == 10  # three systems; ten scored turns
    assert row.ci_low is not None and row.ci_high is not None


def test_a_dimension_rated_per_dialogue_says_so_at_the_turn_level_and_counts_no_item_unrated():
    """Its turn row said "constant input or fewer than 2 values", and every row "N scored items without
    rating" (31012 of them on DSTC9), though each item's dialogue is rated; an item in no rated dialogue
    still counts."""
    scores = [Score(item_id=f"{d}:{i}", metric="m", value=float(i + n), dialogue_id=d, context_id=f"{d}:{i}",
                    system="s") for n, d in enumerate(["d1", "d2", "d3", "d4"]) for i in range(2)]  # fmt: skip
    ratings = [Rating(item_id=d, dimension="q", annotator="w", value=v, level="dialogue")
               for d, v in (("d1", 1), ("d2", 3), ("d3", 2))]  # fmt: skip
    turn, dialogue = correlation_table(scores, ratings, dimension="q", levels=("turn", "dialogue"),
                                       methods=("pearson",), n_boot=0)  # fmt: skip
    assert turn.value is None
    assert turn.note == (
        'undefined: "q" is rated per dialogue, not per item: use the dialogue level; 2 scored items without rating'
    )
    assert dialogue.value == pytest.approx(stats.pearsonr([0.5, 1.5, 2.5], [1, 3, 2]).statistic, abs=1e-12)
    assert dialogue.note == "2 scored items without rating"  # d4's two items


def test_the_default_levels_follow_how_the_dimension_is_rated():
    turn = Rating(item_id="i", dimension="a", annotator="w", value=1)
    whole = Rating(item_id="d", dimension="b", annotator="w", value=1, level="dialogue")
    assert default_levels([turn, whole], ["a"], also=["system"]) == ["turn", "system"]
    assert default_levels([turn, whole], ["b"], also=["system"]) == ["dialogue", "system"]
    assert default_levels([turn, whole], ["a", "b"]) == ["turn"]  # a turn-rated one among them: turn
    assert default_levels([whole], ["b"], also=["dialogue"]) == ["dialogue"]


def sample_example():
    """Two usable contexts and a constant one, four systems each."""
    metric = {"c1": [1, 2, 3, 4], "c2": [1, 2, 3, 4], "c3": [1, 2, 3, 4]}
    human = {"c1": [2, 4, 6, 8], "c2": [1, 3, 2, 4], "c3": [3, 3, 3, 3]}
    scores, ratings = [], []
    for c in metric:
        for s in range(4):
            item = f"{c}:s{s}"
            scores.append(Score(item_id=item, metric="m", value=metric[c][s], context_id=c, system=f"s{s}"))
            ratings.append(Rating(item_id=item, dimension="q", annotator="w", value=human[c][s]))
    return scores, ratings


def test_sample_level_hand_computed():
    # Hand computation. c1: human = 2 * metric -> every correlation 1.
    # c2: dx = [-1.5, -.5, .5, 1.5], dy = [-1.5, .5, -.5, 1.5]: sum dxdy = 4, sum dx^2 = sum dy^2 = 5 -> r = 0.8;
    #     ranks equal the values -> rho = 0.8; pairs: 5 concordant, 1 discordant -> tau = 4/6.
    # c3: human constant -> skipped and counted.
    scores, ratings = sample_example()
    rows = by_key(correlation_table(scores, ratings, dimension="q", levels=("sample",), n_boot=200))
    expected = {"pearson": (1 + 0.8) / 2, "spearman": (1 + 0.8) / 2, "kendall": (1 + 4 / 6) / 2}
    for method, value in expected.items():
        row = rows[("all", "sample", "m", method)]
        assert row.value == pytest.approx(value, abs=1e-12)
        assert (row.n_groups, row.n_skipped, row.n_items) == (2, 1, 12)
        assert row.p_value is None
        assert min(1.0, 0.8 if method != "kendall" else 4 / 6) - 1e-12 <= row.ci_low <= row.value <= row.ci_high <= 1


def test_breakdown_rows_equal_the_subset_alone(usr):
    rows = by_key(
        correlation_table(
            usr.scores, usr.ratings, dimension="Overall", levels=("turn", "sample", "system"), n_boot=100, by="subset"
        )
    )
    for value in ("even", "odd"):
        sub_scores = [s for s in usr.scores if s.tags["subset"] == value]
        alone = by_key(
            correlation_table(
                sub_scores, usr.ratings, dimension="Overall", levels=("turn", "sample", "system"), n_boot=100
            )
        )
        for (_, level, metric, method), row in alone.items():
            grouped = rows[(f"subset={value}", level, metric, method)]
            assert (grouped.value, grouped.p_value, grouped.ci_low, grouped.ci_high) == (
                row.value,
                row.p_value,
                row.ci_low,
                row.ci_high,
            )
            assert grouped.n_items == row.n_items == 180
    assert {r.group for r in rows.values()} == {"all", "subset=even", "subset=odd"}


def test_groups_come_in_the_order_of_their_numbers(usr):
    """Groups t1, t2, t10 and t11 (by context): sorted as text they came t1, t10, t11, t2."""
    scores = [s.model_copy(update={"tags": {"topic": f"t{(1, 2, 10, 11)[int(s.item_id[2:].split(':')[0]) % 4]}"}})
              for s in usr.scores]  # fmt: skip
    rows = correlation_table(scores, usr.ratings, dimension="Overall", metrics=["len"], levels=("turn",),
                             methods=("pearson",), n_boot=0, by="topic")  # fmt: skip
    assert [r.group for r in rows] == ["all", "topic=t1", "topic=t2", "topic=t10", "topic=t11"]


def test_groups_whose_values_are_decimals_or_negative_come_in_the_order_of_the_values(usr):
    """Values -1, 0.25, 0.5 and 10: read as names they came 0.5, 0.25, 10, -1 (runs of digits; "-" as text)."""
    values = ("0.5", "-1", "10", "0.25")
    scores = [s.model_copy(update={"tags": {"t": values[int(s.item_id[2:].split(":")[0]) % 4]}}) for s in usr.scores]
    rows = correlation_table(scores, usr.ratings, dimension="Overall", metrics=["len"], levels=("turn",),
                             methods=("pearson",), n_boot=0, by="t")  # fmt: skip
    assert [r.group for r in rows] == ["all", "t=-1", "t=0.25", "t=0.5", "t=10"]


def test_items_without_the_tag_make_a_last_group_of_their_own(usr):
    """A third of the items lack the tag: the breakdown showed even 120 and odd 120 of 360, and said nothing."""
    scores = [s if i % 3 else s.model_copy(update={"tags": {}}) for i, s in enumerate(usr.scores)]
    kw = {"dimension": "Overall", "metrics": ["len"], "levels": ("turn",), "methods": ("pearson",), "n_boot": 0}
    rows = correlation_table(scores, usr.ratings, by="subset", **kw)
    assert [(r.group, r.n_items) for r in rows] == [("all", 360), ("subset=even", 120), ("subset=odd", 120),
                                                    ("no subset", 120)]  # fmt: skip
    (alone,) = correlation_table([s for s in scores if not s.tags], usr.ratings, **kw)
    assert rows[-1].value == alone.value


def test_by_system_and_several_dimensions(usr):
    rows = correlation_table(
        usr.scores,
        usr.ratings,
        dimension=["Overall", "Natural"],
        metrics=["len"],
        levels=("turn",),
        methods=("pearson",),
        n_boot=0,
        by="system",
    )
    x, _, systems, _ = usr_vectors(usr)
    _, natural, _, _ = usr_vectors(usr, "Natural")
    row = next(r for r in rows if r.dimension == "Natural" and r.group == "system=Argmax Decoding")
    mask = systems == "Argmax Decoding"
    assert row.value == pytest.approx(stats.pearsonr(x[mask], natural[mask]).statistic, abs=1e-12)
    assert len(rows) == 2 * (1 + 6)


def test_unmatched_items_are_counted_and_reported(usr):
    ratings = [r for r in usr.ratings if not r.item_id.startswith("tc0:")]  # 6 items lose their ratings
    extra = Rating(item_id="ghost", dimension="Overall", annotator="w", value=3)
    dont_know = Rating(item_id="tc1:Argmax Decoding", dimension="Overall", annotator="x", value=None, dont_know=True)
    aligned = align(usr.scores, [*ratings, extra, dont_know], dimension="Overall")
    assert aligned.counts == {"scores_without_rating": 6, "ratings_without_score": 1, "ratings_dont_know": 1}
    assert aligned.items.loc["tc1:Argmax Decoding", "n_annotators"] == 3  # the don't-know is not in the mean
    (row,) = correlation_table(
        usr.scores,
        [*ratings, extra],
        dimension="Overall",
        metrics=["len"],
        levels=("turn",),
        methods=("pearson",),
        n_boot=0,
    )
    assert row.n_items == 354
    assert "6 scored items without rating" in row.note and "1 rated item without score" in row.note  # "1 rated items"


def test_bad_names_raise_input_errors(usr):
    with pytest.raises(InputError, match="unknown level corpus"):
        correlation_table(usr.scores, usr.ratings, dimension="Overall", levels=("corpus",))
    with pytest.raises(InputError, match='no ratings for dimension "Fluency"'):
        correlation_table(usr.scores, usr.ratings, dimension="Fluency")
    with pytest.raises(InputError, match=r'no ratings for dimension "Overall"; found: none$'):  # "found: " and nothing
        correlation_table(usr.scores, [], dimension="Overall")
    with pytest.raises(InputError, match='no tag "task"'):
        correlation_table(usr.scores, usr.ratings, dimension="Overall", by="task")
    with pytest.raises(InputError, match="no scores for metric"):
        correlation_table(usr.scores, usr.ratings, dimension="Overall", metrics=["bleu"])


def test_duplicate_score_is_an_input_error():
    s = Score(item_id="a", metric="m", value=1.0)
    with pytest.raises(InputError, match='scores item "a" twice'):
        align([s, s], [Rating(item_id="a", dimension="q", annotator="w", value=1)], dimension="q")


def test_metric_without_values_gives_undefined_rows_not_nan():
    scores = [
        Score(item_id=f"i{i}", metric="m", value=float(i), context_id=f"c{i // 2}", dialogue_id=f"d{i // 2}",
              system=f"s{i % 2}")  # a dialogue named: an item naming none is left out of the dialogue level
        for i in range(8)
    ]
    scores += [Score(item_id=f"i{i}", metric="dead", value=None, extras={"error": "timeout"}) for i in range(8)]
    ratings = [Rating(item_id=f"i{i}", dimension="q", annotator="a", value=i % 3) for i in range(8)]
    rows = correlation_table(
        scores, ratings, dimension="q", levels=("turn", "sample", "dialogue", "system"), methods=("kendall",), n_boot=20
    )
    dead = [r for r in rows if r.metric == "dead"]
    assert len(dead) == 4 and all(r.value is None and r.n_items == 0 for r in dead)
    assert all("undefined" in r.note and "8 scores without value" in r.note for r in dead)
    alive = [r for r in rows if r.metric == "m"]
    assert all(r.value is not None and "without value" not in r.note for r in alive)


def test_an_undefined_turn_figure_counts_contexts_as_a_defined_one_does():
    # 8 items in 4 contexts; the human is constant for "q", so the turn correlation is undefined
    scores = [Score(item_id=f"i{i}", metric="m", value=float(i), context_id=f"c{i // 2}") for i in range(8)]
    ratings = [Rating(item_id=f"i{i}", dimension="q", annotator="a", value=1.0) for i in range(8)]
    ratings += [Rating(item_id=f"i{i}", dimension="r", annotator="a", value=float(i % 3)) for i in range(8)]
    (flat,) = correlation_table(scores, ratings, dimension="q", levels=("turn",), methods=("kendall",), n_boot=0)
    (fine,) = correlation_table(scores, ratings, dimension="r", levels=("turn",), methods=("kendall",), n_boot=0)
    assert flat.value is None and "undefined" in flat.note
    assert (flat.n_items, flat.n_groups) == (fine.n_items, fine.n_groups) == (8, 4)


@pytest.mark.parametrize(("repeat", "message"), [
    ({"dimension": ["Overall", "Overall"]}, 'field "dimension": dimension "Overall" is given twice'),
    ({"metrics": ["m", "m"]}, 'field "metrics": metric "m" is given twice'),
    ({"levels": ("turn", "system", "turn")}, 'field "level": level "turn" is given twice'),
    ({"methods": ("pearson", "kendall", "pearson")}, 'field "method": method "pearson" is given twice'),
])  # fmt: skip
def test_a_name_given_twice_is_refused(repeat: dict[str, object], message: str) -> None:
    """It gave its rows once (and before that, twice); a repeat is refused as every option refuses one."""
    scores, ratings = _two_systems(3)
    args = {"dimension": "Overall", "metrics": ["m"], "n_boot": 10, **repeat}
    with pytest.raises(InputError) as err:
        correlation_table(scores, ratings, **args)  # type: ignore[arg-type]
    assert str(err.value) == message
    assert len(correlation_table(scores, ratings, dimension="Overall", metrics=["m"], n_boot=10)) == 6


def _two_systems(n_systems: int) -> tuple[list[Score], list[Rating]]:
    """Four contexts, ``n_systems`` systems; metric and human disagree within contexts."""
    scores, ratings = [], []
    for c in range(4):
        for s in range(n_systems):
            item = f"c{c}s{s}"
            scores.append(Score(item_id=item, metric="m", value=float(s + c % 2), context_id=f"c{c}", system=f"s{s}"))
            ratings.append(Rating(item_id=item, dimension="Overall", annotator="w", value=float(s * 2 + (c * s) % 3)))
    return scores, ratings


def test_a_system_level_figure_over_two_systems_keeps_its_value_and_says_why_it_means_little():
    scores, ratings = _two_systems(2)
    rows = correlation_table(scores, ratings, dimension="Overall", levels=("system",), methods=("pearson",), n_boot=50)
    (row,) = rows
    assert row.n_groups == 2 and row.value == pytest.approx(1.0)  # the number is not changed
    assert row.note.startswith("only 2 systems: a correlation of fewer than 3 is +1 or -1")


def test_a_dialogue_level_figure_over_two_dialogues_says_why_it_means_little_as_the_system_one_does():
    """Two dialogues gave 1.000 [1.000, 1.000] at dialogue level with no note (two points always correlate +-1)."""
    scores, ratings = [], []
    for item, dialogue, x, y in (("a1", "d1", 1.0, 2.0), ("a2", "d1", 3.0, 1.0), ("b1", "d2", 5.0, 4.0)):
        scores.append(Score(item_id=item, metric="m", value=x, context_id=item, dialogue_id=dialogue, system="s"))
        ratings.append(Rating(item_id=item, dimension="Overall", annotator="w", value=y))
    (row,) = correlation_table(scores, ratings, dimension="Overall", levels=("dialogue",), methods=("pearson",),
                               n_boot=0)  # fmt: skip
    assert row.n_groups == 2 and row.value == pytest.approx(1.0)  # d1 (2, 1.5) and d2 (5, 4): the number stays
    assert row.note == "only 2 dialogues: a correlation of fewer than 3 is +1 or -1"
    (turn,) = correlation_table(scores, ratings, dimension="Overall", levels=("turn",), methods=("pearson",), n_boot=0)
    assert turn.note == ""  # three items: a figure that can say something


def test_three_systems_get_no_such_note():
    scores, ratings = _two_systems(3)
    (row,) = correlation_table(scores, ratings, dimension="Overall", levels=("system",), methods=("pearson",), n_boot=0)
    assert row.n_groups == 3 and "systems" not in row.note


def test_a_negative_number_of_resamples_is_an_input_error():
    scores, ratings = _two_systems(3)
    with pytest.raises(InputError, match=r'field "n_boot": must be >= 0 \(0: no confidence intervals\), got -5'):
        correlation_table(scores, ratings, dimension="Overall", n_boot=-5)


def test_a_ci_of_too_few_resamples_says_so(usr):
    """``n_boot=1`` gave a "95% CI" of one value, which left out the estimate itself, and no note; 40 resamples
    are the fewest whose 2.5% tail is one resample (below it the interval is bounded by the extremes)."""
    lengths, humans, _, contexts = usr_vectors(usr)
    scores = [Score(item_id=str(i), metric="length", value=float(v), context_id=str(c), dialogue_id=str(c))
              for i, (v, c) in enumerate(zip(lengths, contexts, strict=True))]  # fmt: skip
    ratings = [Rating(item_id=str(i), dimension="Overall", annotator="mean", value=float(h))
               for i, h in enumerate(humans)]  # fmt: skip

    def row(n_boot):
        (r,) = correlation_table(scores, ratings, dimension="Overall", levels=("turn",), methods=("spearman",),
                                 n_boot=n_boot)  # fmt: skip
        return r

    one = row(1)
    assert one.ci_low == one.ci_high  # one value: no interval at all
    assert one.note == "rough CI: 1 resample only, too few for 95% (40 at least)"
    assert row(39).note == "rough CI: 39 resamples only, too few for 95% (40 at least)"
    assert row(40).note == "" and row(0).note == ""


@pytest.mark.parametrize(("contexts", "distinct"), [(2, 3), (3, 10), (4, 35), (5, None)])
def test_a_ci_over_too_few_contexts_says_so_however_many_resamples(contexts, distinct):
    """Three contexts gave 0.921 [0.911, 1.000] from 1,000 resamples, unwarned: k contexts drawn with replacement
    have C(2k - 1, k) distinct resamples (3, 10, 35, 126 for k = 2..5; the count of multisets), below 40 up to 4."""
    scores, ratings = [], []
    for c in range(contexts):
        for j, (x, y) in enumerate(((1.0 + c, 2.0), (3.0, 1.0 + c), (2.0 * c, 4.0))):
            item = f"c{c}-{j}"
            scores.append(Score(item_id=item, metric="m", value=x, context_id=f"c{c}", dialogue_id=f"c{c}"))
            ratings.append(Rating(item_id=item, dimension="Overall", annotator="w", value=y))
    (row,) = correlation_table(scores, ratings, dimension="Overall", levels=("turn",), methods=("pearson",),
                               n_boot=1000)  # fmt: skip
    rough = f"rough CI: {contexts} contexts have {distinct} distinct resamples only, too few for 95% (40 at least)"
    assert row.note == (rough if distinct else "")
    assert row.ci_low is not None  # the interval is kept, as computed: the note says what it is worth


@pytest.mark.parametrize("level", ["dialogue", "system"])
def test_a_metric_of_tiny_values_correlates_as_the_same_metric_scaled_up(level):
    """Means were rounded to 12 decimals as such: a metric of values near 1e-13 averaged to 0 in every dialogue
    ("undefined: the metric gives every dialogue the same score"), though scaling by 1e-13 changes no correlation."""
    # dialogue (= system) d0..d3, two turns each; metric means 1.5, 3.5, 2, 4.5; human means 1.5, 3, 3.5, 4.5
    turns = {"d0": ((1.0, 1), (2.0, 2)), "d1": ((3.0, 3), (4.0, 3)),
             "d2": ((1.0, 4), (3.0, 3)), "d3": ((5.0, 5), (4.0, 4))}  # fmt: skip

    def table(scale):
        scores, ratings = [], []
        for d, pairs in turns.items():
            for i, (x, y) in enumerate(pairs):
                keys = {"context_id": f"{d}#{i}", "dialogue_id": d, "system": d}
                scores.append(Score(item_id=f"{d}:{i}", metric="m", value=x * scale, **keys))
                ratings.append(Rating(item_id=f"{d}:{i}", dimension="q", annotator="w", value=y))
        return correlation_table(scores, ratings, dimension="q", levels=(level,), n_boot=0)

    means, humans = [1.5, 3.5, 2.0, 4.5], [1.5, 3.0, 3.5, 4.5]  # by hand from `turns`
    for method, row in zip(("pearson", "spearman", "kendall"), table(1e-13), strict=True):
        assert row.value == pytest.approx(SCIPY[method](means, humans).statistic, abs=1e-9), method


def test_systems_whose_means_are_equal_but_summed_in_another_order_are_tied():
    """Every system's mean is 0.2 (0.1, 0.2 and 0.3 in some order), but the sums differed by 1 ulp: the system-level
    figures were -0.671 (pearson), -0.866 (spearman) and -0.816 (kendall), where scipy says undefined."""
    values = {"s0": (0.1, 0.2, 0.3), "s1": (0.3, 0.2, 0.1), "s2": (0.2, 0.3, 0.1)}
    humans = {"s0": (1, 2, 3), "s1": (2, 3, 4), "s2": (5, 4, 4)}
    scores = [Score(item_id=f"c{c}{s}", metric="m", value=v, context_id=f"c{c}", system=s)
              for s, vs in values.items() for c, v in enumerate(vs)]  # fmt: skip
    ratings = [Rating(item_id=f"c{c}{s}", dimension="q", annotator="w", value=h)
               for s, hs in humans.items() for c, h in enumerate(hs)]  # fmt: skip
    rows = correlation_table(scores, ratings, dimension="q", levels=("system",), n_boot=200)
    assert [r.value for r in rows] == [None, None, None]
    assert {r.note for r in rows} == {"undefined: the metric gives every system the same score"}


def test_a_sample_level_of_one_item_per_context_says_so_not_constant():
    """Scores naming no context make each item its own context; the sample level said "every context is constant
    on one side", of a metric and ratings that vary."""
    scores = [Score(item_id=f"i{i}", metric="m", value=float(i)) for i in range(4)]
    ratings = [Rating(item_id=f"i{i}", dimension="q", annotator="w", value=h) for i, h in enumerate((1, 3, 2, 4))]
    (row,) = correlation_table(scores, ratings, dimension="q", levels=("sample",), methods=("pearson",), n_boot=0)
    assert row.value is None and row.n_skipped == 4
    assert row.note == ("undefined: every context has one item with a score and a rating "
                        "(do the scores name their context_id?)")  # fmt: skip


@pytest.mark.parametrize("scale", [1e-200, 1e200, 1e307])
def test_a_metric_of_extreme_magnitude_has_the_figures_and_cis_of_the_same_metric_scaled_to_one(scale):
    """A metric of values near 1e-200 (a product of token probabilities) lost every Pearson CI at the turn, dialogue
    and system levels: its squares underflowed to 0, each resample was "undefined", and the table printed the bare
    figure, counted among its "rough" CIs ("4 of 2 CIs are rough"). Values near 1e200 overflowed the same way, and
    near 1e307 scipy's turn-level Pearson itself overflowed to 0.000. A correlation does not change when a metric
    is multiplied by a positive number: the expected rows are those of the same metric at scale 1."""
    scores, ratings = [], []
    for c in range(6):  # 6 contexts (= dialogues) of 3 systems; metric and human vary with both
        for s in range(3):
            keys = {"context_id": f"c{c}", "dialogue_id": f"c{c}", "system": f"s{s}"}
            x, y = float((c * 7 + s * 5) % 9 + 1), (c + 2 * s) % 5 + 1
            scores.append(Score(item_id=f"c{c}s{s}", metric="m", value=x, **keys))
            scores.append(Score(item_id=f"c{c}s{s}", metric="scaled", value=x * scale, **keys))
            ratings.append(Rating(item_id=f"c{c}s{s}", dimension="q", annotator="w", value=y))
    rows = correlation_table(scores, ratings, dimension="q", levels=("turn", "dialogue", "system", "sample"),
                             methods=("pearson",), n_boot=100)  # fmt: skip
    by_metric = {(r.level, r.metric): r for r in rows}
    for level in ("turn", "dialogue", "system", "sample"):
        one, scaled = by_metric[(level, "m")], by_metric[(level, "scaled")]
        assert one.value is not None and one.ci_low is not None, level
        assert scaled.value == pytest.approx(one.value, abs=1e-9), level
        assert (scaled.ci_low, scaled.ci_high) == pytest.approx((one.ci_low, one.ci_high), abs=1e-9), level
        assert scaled.note == one.note, level


def test_a_figure_whose_every_resample_is_undefined_says_it_has_no_ci_and_is_not_counted_rough():
    """A metric constant within each context (of the context alone) is undefined in a resample that draws one
    context only. ``--boot 1 --seed 4`` draws context c2 three times (the counts [[0, 0, 3]], asserted below): the
    figure had no CI, its note said "1/1 resamples undefined (left out of the CI); rough CI: ...", and the table
    printed the bare figure, unexplained, under "warning: 1 of 0 CIs are rough"."""
    from dialeval.meta.bootstrap import draw_counts
    from dialeval.meta.caveats import table_warnings

    assert draw_counts(3, 1, seed=4).tolist() == [[0, 0, 3]]
    scores, ratings = [], []
    for c in range(3):
        for s, y in enumerate((1, 3, 2)):
            scores.append(Score(item_id=f"c{c}s{s}", metric="m", value=float(c), context_id=f"c{c}"))
            ratings.append(Rating(item_id=f"c{c}s{s}", dimension="q", annotator="w", value=y + c))
    (row,) = correlation_table(scores, ratings, dimension="q", levels=("turn",), methods=("pearson",), n_boot=1,
                               seed=4)  # fmt: skip
    # by hand: x = 0,0,0,1,1,1,2,2,2 and y = 1,3,2,2,4,3,3,5,4: Σdx·dy = 6, Σdx² = 6, Σdy² = 12, r = 6 / √72 = 1/√2
    assert row.value == pytest.approx(2**-0.5) and (row.ci_low, row.ci_high) == (None, None)
    assert row.note == "no CI: the correlation is undefined in its one resample"
    assert table_warnings([row]) == ["no CI: m (turn): the correlation is undefined in its one resample"]


@pytest.mark.parametrize("scale", [1e-200, 1e200])
@pytest.mark.parametrize("method", ["pearson", "spearman"])
def test_ratings_of_extreme_magnitude_have_the_figures_and_cis_of_the_ratings_unscaled(scale, method):
    """The metrics were brought to [0.5, 1) before correlating, the human means were not: ratings near 1e200 (or
    1e-200) overflowed (underflowed) the squares the bootstrap's Pearson sums, and every CI was lost. A correlation
    does not change when the ratings are multiplied by a positive number: the turn-level figure is scipy's of the
    unscaled means (computed here), and every level's row equals that of the unscaled ratings."""
    scores, ratings, scaled = [], [], []
    xs, ys = [], []
    for c in range(6):  # 6 contexts (= dialogues) of 3 systems, two annotators per item
        for s in range(3):
            keys = {"context_id": f"c{c}", "dialogue_id": f"c{c}", "system": f"s{s}"}
            x, y = float((c * 7 + s * 5) % 9 + 1), [(c + 2 * s) % 5 + 1, (c * s) % 4 + 1]
            scores.append(Score(item_id=f"c{c}s{s}", metric="m", value=x, **keys))
            for w, v in enumerate(y):
                ratings.append(Rating(item_id=f"c{c}s{s}", dimension="q", annotator=f"w{w}", value=v))
                scaled.append(Rating(item_id=f"c{c}s{s}", dimension="q", annotator=f"w{w}", value=v * scale))
            xs.append(x)
            ys.append(np.mean(y))
    levels = ("turn", "dialogue", "system", "sample")
    one = by_key(correlation_table(scores, ratings, dimension="q", levels=levels, methods=(method,), n_boot=100))
    big = by_key(correlation_table(scores, scaled, dimension="q", levels=levels, methods=(method,), n_boot=100))
    assert big[("all", "turn", "m", method)].value == pytest.approx(SCIPY[method](xs, ys).statistic, abs=1e-12)
    for level in levels:
        a, b = one[("all", level, "m", method)], big[("all", level, "m", method)]
        assert a.value is not None and a.ci_low is not None, level
        assert b.value == pytest.approx(a.value, abs=1e-9), level
        assert (b.ci_low, b.ci_high) == pytest.approx((a.ci_low, a.ci_high), abs=1e-9), level
        assert b.note == a.note, level


def test_equal_mean_ratings_tie_at_the_turn_level():
    """Ratings 0.7 and 0.2 had the mean 0.44999999999999996, and 0.4 and 0.5 the mean 0.45: Spearman ranked the two
    items apart. The expected figure is scipy's on the means written out (0.45 twice: a tie)."""
    pairs = [(0.7, 0.2), (0.4, 0.5), (0.1, 0.1), (0.9, 0.9), (0.3, 0.3)]
    xs = [2.0, 1.0, 3.0, 5.0, 4.0]
    scores = [Score(item_id=f"i{i}", metric="m", value=x) for i, x in enumerate(xs)]
    ratings = [Rating(item_id=f"i{i}", dimension="q", annotator=f"w{w}", value=v)
               for i, pair in enumerate(pairs) for w, v in enumerate(pair)]  # fmt: skip
    [row] = correlation_table(scores, ratings, dimension="q", levels=("turn",), methods=("spearman",), n_boot=0)
    assert row.value == pytest.approx(stats.spearmanr(xs, [0.45, 0.45, 0.1, 0.9, 0.3]).statistic, abs=1e-12)


def _rated(item: str, system: str, metric: float, human: float, context: str) -> tuple[Score, Rating]:
    return (Score(item_id=item, metric="m", value=metric, context_id=context, system=system),
            Rating(item_id=item, dimension="q", annotator="w", value=human))  # fmt: skip


def test_system_level_leaves_out_the_items_naming_no_system_and_says_how_many():
    """Unnamed items ("" and "unknown") were averaged into one more "system" (-0.455 for -1 in a probe, no word).

    Four named systems, one item each in two contexts, metric means 1, 2, 3, 4 and human means 1, 3, 2, 4:
    deviations (-1.5, -0.5, 0.5, 1.5) and (-1.5, 0.5, -0.5, 1.5), so Pearson = (2.25 - 0.25 - 0.25 + 2.25) / 5 = 0.8.
    """
    means = {"a": (1.0, 1.0), "b": (2.0, 3.0), "c": (3.0, 2.0), "d": (4.0, 4.0)}
    pairs = [_rated(f"{c}{s}", s, m + d, h - d, c) for c, d in (("x", 0.5), ("y", -0.5)) for s, (m, h) in means.items()]
    pairs += [_rated("u1", "", 9.0, 0.0, "x"), _rated("u2", "unknown", 8.0, 1.0, "y"), _rated("u3", "", 9.0, 0.0, "z")]
    scores, ratings = [p[0] for p in pairs], [p[1] for p in pairs]
    rows = correlation_table(scores, ratings, dimension="q", levels=("turn", "system"), methods=("pearson",),
                             n_boot=50)  # fmt: skip
    turn, system = rows
    assert system.value == pytest.approx(0.8, abs=1e-12)
    assert system.n_groups == 4 and system.n_items == 8
    assert system.note.startswith("left out of the system level: 3 items naming no system")
    assert system.ci_low is not None
    assert turn.n_items == 11 and "system level" not in turn.note  # the other levels keep them


@pytest.mark.parametrize(
    ("odd", "note"),
    [(("", "", 1), 'left out of the system level: 1 dialogue naming no system (empty or "unknown")'),
     (("A", "D", 5), "left out of the system level: 1 dialogue of several systems")],
    ids=["naming no system", "of several systems"],
)  # fmt: skip
def test_system_level_from_dialogue_ratings_leaves_out_a_dialogue_of_no_one_system(odd: tuple[str, str, int],
                                                                                    note: str) -> None:  # fmt: skip
    """A DSTC9-style dialogue of no system was one more "system"; one whose items name two systems (A and D) took
    its first item's, the other's score counted as it. Either is left out; by hand A (1, 1), B (2, 3), C (3, 2)
    give 0.5."""
    turns = {"a": ("A", "A", 1.0, 1), "b": ("B", "B", 2.0, 3), "c": ("C", "C", 3.0, 2), "u": (*odd[:2], 9.0, odd[2])}
    scores = [Score(item_id=f"{d}:{i}", metric="m", value=v, dialogue_id=d, context_id=f"{d}:{i}", system=s)
              for d, (s0, s1, v, _) in turns.items() for i, s in enumerate((s0, s1))]  # fmt: skip
    ratings = [Rating(item_id=d, dimension="q", annotator="w", value=h, level="dialogue") for d, (*_, h) in
               turns.items()]  # fmt: skip
    (row,) = correlation_table(scores, ratings, dimension="q", levels=("system",), methods=("pearson",), n_boot=0)
    # x = (1, 2, 3), y = (1, 3, 2): deviations (-1, 0, 1) and (-1, 1, 0): Pearson = 1 / sqrt(2 * 2) = 0.5
    assert row.value == pytest.approx(0.5, abs=1e-12)
    assert row.n_groups == 3 and row.n_items == 6
    assert row.note == note


def test_dialogue_level_leaves_out_the_items_naming_no_dialogue_and_says_how_many():
    """An item whose score names no dialogue was a dialogue of its own: -0.673 for 0.5 here, with no word.

    Dialogues d1, d2, d3 of two items each, metric means 1, 2, 3 and human means 1, 3, 2: deviations (-1, 0, 1)
    and (-1, 1, 0), so Pearson = 1 / sqrt(2 * 2) = 0.5. The items u1, u2 name no dialogue.
    """
    named = [(f"{d}:{i}", d, m, h) for d, m, h in (("d1", 1.0, 1.0), ("d2", 2.0, 3.0), ("d3", 3.0, 2.0))
             for i in range(2)]  # fmt: skip
    rows = [*named, ("u1", "", 9.0, 0.0), ("u2", "", 8.0, 1.0)]
    scores = [Score(item_id=i, metric="m", value=m, dialogue_id=d, context_id=i, system="s") for i, d, m, _ in rows]
    ratings = [Rating(item_id=i, dimension="q", annotator="w", value=h) for i, _, _, h in rows]
    turn, dialogue = correlation_table(scores, ratings, dimension="q", levels=("turn", "dialogue"),
                                       methods=("pearson",), n_boot=50)  # fmt: skip
    assert dialogue.value == pytest.approx(0.5, abs=1e-12)
    assert dialogue.n_groups == 3 and dialogue.n_items == 6
    assert dialogue.note.startswith("left out of the dialogue level: 2 items naming no dialogue")
    assert dialogue.ci_low is not None
    assert turn.n_items == 8 and "dialogue level" not in turn.note  # the other levels keep them


def test_by_system_makes_one_group_of_the_items_naming_no_system_as_the_system_level_counts_them():
    """Items of system "" and of "unknown" were two groups, "system=" and "system=unknown", beside the named ones.

    The three unnamed items have metric (9, 8, 9) and human (0, 1, 0): Pearson -1, by hand.
    """
    pairs = [_rated(f"{c}{s}", s, m, h, c) for c in "xy" for s, m, h in (("a", 1.0, 1.0), ("b", 2.0, 3.0))]
    pairs += [_rated("u1", "", 9.0, 0.0, "x"), _rated("u2", "unknown", 8.0, 1.0, "y"), _rated("u3", "", 9.0, 0.0, "z")]
    rows = correlation_table([p[0] for p in pairs], [p[1] for p in pairs], dimension="q", levels=("turn",),
                             methods=("pearson",), n_boot=0, by="system")  # fmt: skip
    assert [(r.group, r.n_items) for r in rows] == [("all", 7), ("system=a", 2), ("system=b", 2), ("no system", 3)]
    assert rows[-1].value == pytest.approx(-1.0, abs=1e-12)


@pytest.mark.parametrize("key", ["dialogue_id", "context_id"])
def test_by_dialogue_or_context_makes_one_group_of_the_items_naming_none(key):
    """Each item whose score names no dialogue (context) was a group of its own ("dialogue_id=u1", ...), one item each.

    The unnamed items u1, u2, u3 have metric (9, 8, 7) and human (0, 1, 3): deviations (1, 0, -1) and
    (-4/3, -1/3, 5/3), so Pearson = -3 / sqrt(2 * 14/3) = -0.982, by hand.
    """
    named = [(f"{d}:{i}", d, m + i, h) for d, m, h in (("d1", 1.0, 1.0), ("d2", 2.0, 3.0)) for i in range(2)]
    items = [*named, ("u1", "", 9.0, 0.0), ("u2", "", 8.0, 1.0), ("u3", "", 7.0, 3.0)]
    own = {"dialogue_id": "context_id", "context_id": "dialogue_id"}[key]  # the other key: each item its own
    scores = [Score(item_id=i, metric="m", value=m, system="s", **{key: d, own: i}) for i, d, m, _ in items]
    ratings = [Rating(item_id=i, dimension="q", annotator="w", value=h) for i, _, _, h in items]
    rows = correlation_table(scores, ratings, dimension="q", levels=("turn",), methods=("pearson",), n_boot=0, by=key)
    assert [(r.group, r.n_items) for r in rows] == [("all", 7), (f"{key}=d1", 2), (f"{key}=d2", 2), (f"no {key}", 3)]
    assert rows[-1].value == pytest.approx(-3 / np.sqrt(2 * 14 / 3), abs=1e-12)


def test_by_dialogue_keeps_the_scores_of_whole_dialogues_rated_per_dialogue_in_their_dialogues_groups():
    """A score of a whole dialogue names none, its item id being the dialogue's: the dialogue level keeps it."""
    scores = [Score(item_id=d, metric="m", value=v, system="s") for d, v in (("d1", 1.0), ("d2", 2.0))]
    ratings = [Rating(item_id=d, dimension="q", annotator="w", value=v, level="dialogue") for d, v in (("d1", 1),
                                                                                                     ("d2", 2))]
    rows = correlation_table(scores, ratings, dimension="q", levels=("dialogue",), methods=("pearson",), n_boot=0,
                             by="dialogue_id")  # fmt: skip
    assert [(r.group, r.n_items) for r in rows] == [("all", 2), ("dialogue_id=d1", 1), ("dialogue_id=d2", 1)]


def test_the_api_by_system_makes_one_group_of_the_rows_naming_no_system():
    """dialeval.correlate(..., by="system") gave the rows of system "unknown" a group "system=unknown"."""
    import pandas as pd

    import dialeval

    frame = pd.DataFrame({"context_id": ["x", "x", "y", "y", "x", "y", "z"],
                          "system": ["a", "b", "a", "b", "unknown", "unknown", "unknown"],
                          "m": [1.0, 2, 1, 2, 9, 8, 9], "h": [1.0, 3, 1, 3, 0, 1, 0]})  # fmt: skip
    table = dialeval.correlate(frame, "h", ["m"], by="system", n_boot=0, level="turn", method="pearson")
    assert list(zip(table["group"], table["n"], strict=True)) == [("all", 7), ("system=a", 2), ("system=b", 2),
                                                                  ("no system", 3)]  # fmt: skip
    assert table["value"].iloc[-1] == pytest.approx(-1.0, abs=1e-12)

