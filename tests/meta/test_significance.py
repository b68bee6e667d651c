"""Paired cluster bootstrap and Williams' test."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from dialeval.meta.significance import compare_metrics, paired_p_value, williams_test


def test_williams_against_hand_computation():
    # Graham & Baldwin (2014), Eq. 1, worked by hand for r12 = .5, r13 = .3, r23 = .6, n = 50:
    # |R| = 1 - .25 - .09 - .36 + 2(.5)(.3)(.6) = 0.48
    # denominator = 2 * 49/47 * 0.48 + ((.5 + .3)/2)^2 * (1 - .6)^3 = 1.000851064 + 0.01024 = 1.011091064
    # numerator = 0.2 * sqrt(49 * 1.6) = 0.2 * 8.854377448 = 1.770875490
    # t = 1.770875490 / sqrt(1.011091064) = 1.770875490 / 1.005530241 = 1.761135...
    result = williams_test(0.5, 0.3, 0.6, 50)
    assert result.t == pytest.approx(1.761135, abs=1e-5)
    assert result.df == 47
    assert result.p_one_sided == pytest.approx(stats.t.sf(1.761135, 47), abs=1e-6)


def test_williams_is_zero_for_equal_correlations_and_antisymmetric():
    assert williams_test(0.4, 0.4, 0.7, 30).t == 0
    assert williams_test(0.5, 0.3, 0.6, 50).t == pytest.approx(-williams_test(0.3, 0.5, 0.6, 50).t)


def test_metric_against_itself(usr):
    for level, method in (("turn", "pearson"), ("sample", "kendall"), ("system", "spearman")):
        r = compare_metrics(
            usr.scores,
            usr.ratings,
            metric_a="len",
            metric_b="len",
            dimension="Overall",
            level=level,
            method=method,
            n_boot=200,
        )
        assert r.difference == 0 and r.p_value == 1 and (r.ci_low, r.ci_high) == (0, 0)
    assert r.n_items == 360


def test_length_beats_noise_on_usr_overall(usr):
    r = compare_metrics(usr.scores, usr.ratings, metric_a="len", metric_b="noise", dimension="Overall", n_boot=1000)
    x = np.array([s.value for s in usr.scores if s.metric == "len"])
    noise = np.array([s.value for s in usr.scores if s.metric == "noise"])
    human = np.array([np.mean(r["Overall"]) for ctx in usr.contexts for r in ctx["responses"]])
    r12, r13 = stats.pearsonr(x, human).statistic, stats.pearsonr(noise, human).statistic
    assert r.value_a == pytest.approx(r12, abs=1e-12) and r.value_b == pytest.approx(r13, abs=1e-12)
    assert r.difference == pytest.approx(r12 - r13, abs=1e-12)
    assert r.ci_low > 0 and r.p_value < 0.05
    expected = williams_test(r12, r13, stats.pearsonr(x, noise).statistic, 360)
    assert r.williams_t == pytest.approx(expected.t) and r.williams_p < 0.05


def test_paired_p_value_two_sided():
    """Twice the smaller tail with the +1 of sacrebleu's ``_compute_p_value`` (checked against it below). Every
    resample on one side gave p = 0.0, which "bootstrap p = 0.000" printed, whatever the number of resamples."""
    from sacrebleu.significance import _compute_p_value

    assert paired_p_value(np.array([1.0, 2, 3, -1])) == 2 * (1 + 1) / (4 + 1)  # the smaller tail: one at or below 0
    assert paired_p_value(np.full(10, 0.5)) == pytest.approx(2 / 11) and paired_p_value(np.array([0.5])) == 1
    diffs = np.random.default_rng(0).normal(0.3, 0.2, 1000)  # one-sided tails, each counted by sacrebleu's rule
    below = _compute_p_value(-diffs, 0.0)  # (#{-d > 0} + 1) / (n + 1) = (#{d < 0} + 1) / (n + 1)
    assert paired_p_value(diffs) == pytest.approx(2 * below)  # no resample is exactly 0 here
    assert paired_p_value(np.zeros(5)) == 1
    assert math.isnan(paired_p_value(np.array([np.nan])))


@pytest.mark.parametrize(("n_boot", "seed", "message"), [(-1, 0, 'field "n_boot": must be >= 0'),
                                                         (10, -1, 'field "seed": must be >= 0, got -1')])  # fmt: skip
def test_a_negative_resample_count_or_seed_is_refused(usr, n_boot: int, seed: int, message: str) -> None:
    """A negative seed stopped in numpy's ValueError; a negative count ran no test and reported no p-value."""
    from dialeval.errors import InputError

    with pytest.raises(InputError, match=message):
        compare_metrics(usr.scores, usr.ratings, metric_a="len", metric_b="noise", dimension="Overall",
                        n_boot=n_boot, seed=seed)  # fmt: skip


def test_an_undefined_difference_says_which_metric_is_undefined_and_why() -> None:
    """`meta --compare length,distinct1` printed "= n/a [n/a, n/a], bootstrap p = n/a" and nothing else when
    distinct1 was constant; the comparison now carries the reason, and the defined one has no note."""
    from dialeval.schema import Rating, Score

    scores, ratings = [], []
    for i, (x, y) in enumerate([(1.0, 2.0), (2.0, 1.0), (3.0, 5.0), (4.0, 4.0)]):
        scores += [Score(item_id=f"i{i}", metric="m", value=x, context_id=f"c{i}"),
                   Score(item_id=f"i{i}", metric="flat", value=1.0, context_id=f"c{i}")]  # fmt: skip
        ratings.append(Rating(item_id=f"i{i}", dimension="Overall", annotator="w", value=y))
    res = compare_metrics(scores, ratings, metric_a="m", metric_b="flat", dimension="Overall", n_boot=20)
    assert res.difference is None and res.value_a is not None
    assert res.note == "flat: undefined: the metric gives every item the same score"
    both = compare_metrics(scores, ratings, metric_a="m", metric_b="m", dimension="Overall", n_boot=20)
    assert both.difference == 0.0 and both.williams_t is None
    assert both.note.startswith("no Williams test: the two metrics correlate perfectly")  # t was 0/0, printed 0.000
    # every item in one context: no interval and no bootstrap p, and the note says why (it said nothing)
    one = [s.model_copy(update={"context_id": "c"}) for s in scores]
    res = compare_metrics(one, ratings, metric_a="m", metric_b="m", dimension="Overall", n_boot=20)
    assert res.difference == 0.0 and res.ci_low is None and res.p_value is None
    assert res.note.startswith("no CI or bootstrap p: the items come from one context, and the bootstrap resamples "
                               "contexts; no Williams test")  # fmt: skip


def test_three_items_get_the_paired_bootstrap_and_say_why_there_is_no_williams_test() -> None:
    """Williams' t has n - 3 degrees of freedom: on 3 items compare_metrics raised its 'field "n": Williams' test
    needs more than 3 items, got 3', and `meta --compare` printed that error alone, no table and no paired test."""
    from dialeval.schema import Rating, Score

    xa, xb, human = [1.0, 2.0, 4.0], [3.0, 1.0, 2.0], [1.0, 3.0, 4.0]
    scores = [Score(item_id=f"i{i}", metric=m, value=v, context_id=f"c{i}")
              for m, xs in (("a", xa), ("b", xb)) for i, v in enumerate(xs)]  # fmt: skip
    ratings = [Rating(item_id=f"i{i}", dimension="q", annotator="w", value=h) for i, h in enumerate(human)]
    res = compare_metrics(scores, ratings, metric_a="a", metric_b="b", dimension="q", n_boot=50)
    expected = stats.pearsonr(xa, human).statistic - stats.pearsonr(xb, human).statistic
    assert res.difference == pytest.approx(expected, abs=1e-12) and res.p_value is not None
    assert res.williams_t is None and res.note == "no Williams test: 3 items, it needs more than 3"


def test_a_difference_undefined_in_every_resample_says_so_and_has_no_nan_p_value() -> None:
    """Metric "m" is constant within each of 3 contexts, and ``n_boot=1, seed=4`` draws context c2 three times (the
    counts [[0, 0, 3]], tests/meta/test_correlate.py): the difference was undefined in its one resample, the p-value
    was NaN (not None) and `meta --compare` printed "[n/a, n/a], bootstrap p = n/a" with no reason."""
    from dialeval.schema import Rating, Score

    scores, ratings = [], []
    for c in range(3):
        for s, y in enumerate((1, 3, 2)):
            keys = {"item_id": f"c{c}s{s}", "context_id": f"c{c}"}
            scores += [Score(metric="m", value=float(c), **keys), Score(metric="n", value=float(c + s), **keys)]
            ratings.append(Rating(item_id=f"c{c}s{s}", dimension="q", annotator="w", value=y + c))
    res = compare_metrics(scores, ratings, metric_a="m", metric_b="n", dimension="q", n_boot=1, seed=4)
    assert res.difference is not None and (res.ci_low, res.ci_high, res.p_value) == (None, None, None)
    assert res.note == "no CI or bootstrap p: the difference is undefined in its one resample"


def test_no_bootstrap_says_so_where_the_interval_and_p_would_be(usr) -> None:
    """``meta --boot 0 --compare A,B`` printed "[n/a, n/a], bootstrap p = n/a" as if the bootstrap had failed; with no
    resamples asked the comparison's note says the bootstrap was off, and the figures are those of a bootstrap run."""
    from dialeval.meta.significance import paired_line

    off = compare_metrics(usr.scores, usr.ratings, metric_a="len", metric_b="noise", dimension="Overall", n_boot=0)
    on = compare_metrics(usr.scores, usr.ratings, metric_a="len", metric_b="noise", dimension="Overall", n_boot=50)
    assert (off.ci_low, off.ci_high, off.p_value) == (None, None, None)
    assert off.difference == on.difference and off.williams_t == on.williams_t
    assert off.note == "no CI or bootstrap p: the bootstrap is off (--n-boot 0)" and on.note == ""
    assert paired_line(off.to_dict()).endswith(
        "[n/a, n/a], bootstrap p = n/a, Williams t = " f"{off.williams_t:.3f} (p = {off.williams_p:.3f}) "
        "(no CI or bootstrap p: the bootstrap is off (--n-boot 0))"
    )


@pytest.mark.parametrize(("sign", "r23"), [(1.0, "1.000"), (-1.0, "-1.000")])
def test_metrics_correlating_perfectly_with_each_other_get_no_williams_t_and_say_why(sign: float, r23: str) -> None:
    """A metric against itself scaled (r23 = 1) or negated (r23 = -1): Williams' t is 0/0 there (|R| = 0, and
    1 + r23 = 0 or r12 = r13), and it was printed "Williams t = 0.000 (p = 0.500)", also beside a difference of
    -0.471 for a metric against its negation."""
    from dialeval.schema import Rating, Score

    xa, human = [1.0, 2.0, 4.0, 3.0, 6.0], [1.0, 3.0, 4.0, 2.0, 3.0]
    scores = [Score(item_id=f"i{i}", metric=m, value=v, context_id=f"c{i}")
              for m, k in (("a", 1.0), ("b", sign * 3.0)) for i, v in enumerate(k * x + 1 for x in xa)]  # fmt: skip
    ratings = [Rating(item_id=f"i{i}", dimension="q", annotator="w", value=h) for i, h in enumerate(human)]
    res = compare_metrics(scores, ratings, metric_a="a", metric_b="b", dimension="q", n_boot=0)
    r12 = stats.pearsonr(xa, human).statistic
    assert res.difference == pytest.approx(r12 - sign * r12, abs=1e-12)
    assert (res.williams_t, res.williams_p) == (None, None)
    assert res.note.endswith(f"no Williams test: the two metrics correlate perfectly with each other (r = {r23}), "
                             "where its t is 0/0")  # fmt: skip
