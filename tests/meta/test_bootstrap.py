"""The vectorised cluster bootstrap equals scipy.stats on explicitly resampled vectors; CI behaviour on USR-TC."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from dialeval.meta import bootstrap
from dialeval.meta.bootstrap import (
    draw_counts,
    percentile_ci,
    rowwise_correlation,
    weighted_correlation,
    weighted_sums,
)
from dialeval.meta.correlate import correlation_table

SCIPY = {"pearson": stats.pearsonr, "spearman": stats.spearmanr, "kendall": stats.kendalltau}


def clustered_data(seed=3, k=40, ties=True):
    """Unequal cluster sizes, rows shuffled; with ``ties`` both sides are rounded (heavy ties), else x is continuous."""
    rng = np.random.default_rng(seed)
    codes = np.repeat(np.arange(k), rng.integers(1, 8, size=k))
    rng.shuffle(codes)
    x = rng.normal(size=len(codes))
    y = np.round(x + rng.normal(size=len(codes)))
    return (np.round(x, 1) if ties else x), y, codes


def expand(codes, drawn):
    """The rows of a resample, cluster by cluster, as a loop calling scipy would build them."""
    return np.concatenate([np.flatnonzero(codes == k) for k in drawn])


@pytest.mark.parametrize("method", ["pearson", "spearman", "kendall"])
def test_every_kind_equals_scipy_on_hand_built_resamples(method):
    x, y, codes = clustered_data()
    k = codes.max() + 1
    resamples = [
        list(range(k)),  # the original data
        [0] * k,  # one cluster repeated: duplicated rows only
        [3, 3, 3, 7, 7, 1, 2, 2, 9, 30, 31, 31, 5, 5, 5, 5, 0, 11, 12, 13],
        list(np.random.default_rng(11).integers(0, k, size=k)),
    ]
    counts = np.stack([np.bincount(r, minlength=k) for r in resamples])
    got = weighted_correlation(x, y, codes, counts, method)
    for b, drawn in enumerate(resamples):
        rows = expand(codes, drawn)
        if np.ptp(x[rows]) == 0 or np.ptp(y[rows]) == 0:
            assert np.isnan(got[b])  # undefined correlation is NaN, not a number
            continue
        assert got[b] == pytest.approx(SCIPY[method](x[rows], y[rows]).statistic, abs=1e-10)


@pytest.mark.parametrize("ties", [True, False])
@pytest.mark.parametrize("method", ["pearson", "spearman", "kendall"])
def test_random_resamples_equal_scipy(method, ties):
    x, y, codes = clustered_data(seed=5, k=25, ties=ties)
    counts = draw_counts(25, 30, seed=1)
    got = weighted_correlation(x, y, codes, counts, method, chunk=7)
    for b in range(30):
        rows = expand(codes, np.repeat(np.arange(25), counts[b]))
        assert got[b] == pytest.approx(SCIPY[method](x[rows], y[rows]).statistic, abs=1e-10)


@pytest.mark.parametrize("method", ["pearson", "spearman", "kendall"])
def test_rowwise_equals_scipy(method):
    rng = np.random.default_rng(0)
    x = rng.integers(0, 4, size=(20, 6)).astype(float)
    y = x + rng.integers(0, 3, size=(20, 6))
    got = rowwise_correlation(x, y, method)
    for b in range(20):
        if np.ptp(x[b]) == 0 or np.ptp(y[b]) == 0:
            assert np.isnan(got[b])
        else:
            assert got[b] == pytest.approx(SCIPY[method](x[b], y[b]).statistic, abs=1e-12)


@pytest.mark.parametrize("method", ["pearson", "spearman", "kendall"])
def test_rowwise_of_a_constant_row_is_undefined_as_in_scipy(method):
    """Pearson of three systems all at 0.1 was 1.2e-16, not undefined: their mean is not exactly 0.1, so the
    centred values were rounding noise, correlated as such (a resample counted as defined, near 0, in the CI)."""
    x = np.array([[0.1, 0.1, 0.1], [0.7, 0.7, 0.7], [1.0, 2.0, 4.0]])
    y = np.array([[1.0, 2.0, 4.0], [1.0, 2.0, 4.0], [0.2, 0.2, 0.2]])
    assert np.isnan(rowwise_correlation(x, y, method)).all()  # scipy: every row has a constant side


def test_draw_counts_is_seeded_and_resamples_every_cluster_count():
    a, b = draw_counts(50, 20, seed=4), draw_counts(50, 20, seed=4)
    assert (a == b).all() and (a.sum(axis=1) == 50).all()
    assert not (a == draw_counts(50, 20, seed=5)).all()


def test_percentile_ci_ignores_undefined_resamples():
    assert percentile_ci(np.array([np.nan, *np.arange(101.0)])) == pytest.approx((2.5, 97.5), abs=1e-12)


def ci_width(rows, level="turn", method="pearson"):
    row = next(r for r in rows if r.level == level and r.method == method and r.metric == "len")
    return row, row.ci_high - row.ci_low


def test_ci_contains_estimate_shrinks_with_more_contexts_and_is_reproducible(make_usr):
    small, large = make_usr(20), make_usr(60)
    kwargs = {"dimension": "Overall", "metrics": ["len"], "levels": ("turn", "system"), "n_boot": 500, "seed": 1}
    rows_small = correlation_table(small.scores, small.ratings, **kwargs)
    rows_large = correlation_table(large.scores, large.ratings, **kwargs)
    for method in ("pearson", "spearman", "kendall"):
        row_s, width_s = ci_width(rows_small, method=method)
        row_l, width_l = ci_width(rows_large, method=method)
        assert row_s.ci_low <= row_s.value <= row_s.ci_high and row_l.ci_low <= row_l.value <= row_l.ci_high
        assert width_l < width_s  # three times the contexts: about 1/sqrt(3) of the width
    again = correlation_table(large.scores, large.ratings, **kwargs)
    assert [(r.ci_low, r.ci_high) for r in again] == [(r.ci_low, r.ci_high) for r in rows_large]
    other = correlation_table(large.scores, large.ratings, **{**kwargs, "seed": 2})
    assert [(r.ci_low, r.ci_high) for r in other] != [(r.ci_low, r.ci_high) for r in rows_large]


def test_system_level_bootstrap_recomputes_system_means_from_resampled_contexts(usr):
    (row,) = correlation_table(
        usr.scores,
        usr.ratings,
        dimension="Overall",
        metrics=["len"],
        levels=("system",),
        methods=("pearson",),
        n_boot=50,
        seed=3,
    )
    # Independent check of the whole distribution: rebuild each resample by hand from the same counts.
    counts = draw_counts(60, 50, seed=3)
    models = sorted({r["model"] for ctx in usr.contexts for r in ctx["responses"]})
    boot = []
    for b in range(50):
        xs, ys = {m: [] for m in models}, {m: [] for m in models}
        for c, ctx in enumerate(usr.contexts):  # context order = first appearance, as in the scores
            for _ in range(counts[b, c]):
                for r in ctx["responses"]:
                    xs[r["model"]].append(len(r["response"].split()))
                    ys[r["model"]].append(np.mean(r["Overall"]))
        boot.append(stats.pearsonr([np.mean(xs[m]) for m in models], [np.mean(ys[m]) for m in models]).statistic)
    assert (row.ci_low, row.ci_high) == pytest.approx(tuple(np.percentile(boot, [2.5, 97.5])), abs=1e-10)


@pytest.mark.parametrize("width", [1, 2, 5, 1000])
@pytest.mark.parametrize("method", ["spearman", "kendall", "kendall-fenwick"])
def test_any_block_width_equals_scipy(monkeypatch, method, width):
    """Blocks of one row (all cross-block), tiny blocks, and one block holding every row (all in-block slots).

    Kendall's Fenwick path (forced with DENSE_LEVELS = 0) takes its own width, FENWICK_BLOCK_WIDTH."""
    import dialeval.meta.bootstrap as bs
    from dialeval.meta import _rankblocks

    monkeypatch.setattr(bs, "BLOCK_WIDTH", width)
    monkeypatch.setattr(bs, "FENWICK_BLOCK_WIDTH", width)
    if method == "kendall-fenwick":
        monkeypatch.setattr(_rankblocks, "DENSE_LEVELS", 0)
        method = "kendall"
    x, y, codes = clustered_data(seed=9, k=30)
    counts = draw_counts(30, 20, seed=2)
    got = weighted_correlation(x, y, codes, counts, method)
    for b in range(20):
        rows = expand(codes, np.repeat(np.arange(30), counts[b]))
        assert got[b] == pytest.approx(SCIPY[method](x[rows], y[rows]).statistic, abs=1e-10)


def test_sample_level_bootstrap_averages_resampled_context_correlations(usr):
    (row,) = correlation_table(
        usr.scores,
        usr.ratings,
        dimension="Overall",
        metrics=["len"],
        levels=("sample",),
        methods=("kendall",),
        n_boot=50,
        seed=4,
    )
    # Independent: per-context tau straight from the JSON, then the mean over each resample's drawn contexts
    # (a context drawn twice counts twice; constant contexts are left out).
    per_context = []
    for ctx in usr.contexts:
        x = [len(r["response"].split()) for r in ctx["responses"]]
        y = [np.mean(r["Overall"]) for r in ctx["responses"]]
        per_context.append(stats.kendalltau(x, y).statistic if np.ptp(x) and np.ptp(y) else np.nan)
    per_context = np.array(per_context)
    counts = draw_counts(60, 50, seed=4)
    used = np.isfinite(per_context)
    boot = [np.repeat(per_context[used], counts[b, used]).mean() for b in range(50)]
    assert row.value == pytest.approx(np.nanmean(per_context), abs=1e-12)
    assert row.n_groups + row.n_skipped == 60 and row.n_skipped == int((~used).sum())
    assert (row.ci_low, row.ci_high) == pytest.approx(tuple(np.percentile(boot, [2.5, 97.5])), abs=1e-12)


@pytest.mark.parametrize("method", ["spearman", "kendall"])
def test_many_clusters_over_several_blocks_and_threads_equal_scipy(method):
    # 300 clusters (about 1,200 rows): many blocks of the rank layout, 5 chunks of resamples over the threads.
    x, y, codes = clustered_data(seed=8, k=300, ties=True)
    counts = draw_counts(300, 40, seed=2)
    got = weighted_correlation(x, y, codes, counts, method, chunk=8)
    for b in range(0, 40, 3):
        rows = expand(codes, np.repeat(np.arange(300), counts[b]))
        assert got[b] == pytest.approx(SCIPY[method](x[rows], y[rows]).statistic, abs=1e-10)


@pytest.mark.parametrize("layout", ["swapped", "fenwick", "fenwick-ties", "one-resample-at-a-time"])
@pytest.mark.parametrize("method", ["spearman", "kendall"])
def test_every_rank_layout_equals_scipy(monkeypatch, method, layout):
    """Each way the ranks are laid out gives scipy's figure. With both sides continuous the layout built a
    levels x levels matrix and Kendall a blocks x levels x resamples array: 8,000 such items took 97 s and 7 GB
    of memory for 200 resamples, 16,000 ran out of memory. Now the side with fewer values gives the levels
    ("swapped": y continuous, x rounded), Kendall over many levels runs a Fenwick tree block by block (forced
    here with DENSE_LEVELS = 0), and the dense array takes as few resamples at a time as its byte cap asks."""
    from dialeval.meta import _rankblocks

    x, y, codes = clustered_data(seed=12, k=60, ties=layout != "fenwick")
    if layout == "swapped":
        x, y = y + 0.01 * np.random.default_rng(1).normal(size=len(y)), np.round(x)  # y continuous, x few values
    if layout.startswith("fenwick"):
        monkeypatch.setattr(_rankblocks, "DENSE_LEVELS", 0)
    if layout == "one-resample-at-a-time":
        monkeypatch.setattr(_rankblocks, "KENDALL_BYTES", 1)
    counts = draw_counts(60, 25, seed=3)
    got = weighted_correlation(x, y, codes, counts, method, chunk=10)
    for b in range(25):
        rows = expand(codes, np.repeat(np.arange(60), counts[b]))
        assert got[b] == pytest.approx(SCIPY[method](x[rows], y[rows]).statistic, abs=1e-10)


@pytest.mark.parametrize("n_clusters", [7, 3_000])
def test_counts_drawn_block_by_block_are_the_resamples_drawn_at_once(n_clusters: int) -> None:
    """Reference: the one-shot draw draw_counts made before it went block by block (3,000 clusters x 1,000 resamples
    is two blocks of 699 and 301 rows); every CI since is over these resamples."""
    rng = np.random.default_rng(4)
    once = np.stack([np.bincount(row, minlength=n_clusters) for row in rng.integers(0, n_clusters, (1000, n_clusters))])
    assert (draw_counts(n_clusters, 1000, seed=4) == once).all()
    assert draw_counts(n_clusters, 0, seed=4).shape == (0, n_clusters)


def test_counts_take_one_byte_and_widen_when_a_cluster_is_drawn_256_times(monkeypatch: pytest.MonkeyPatch) -> None:
    """One byte each (1,000 x 100,000 counts in 0.1 GB); a count past 255 widens the array rather than wrapping.
    No seed draws one cluster 256 times in a realistic run, so the second block (every pick on cluster 0, a draw
    of probability 300^-299) is handed in by replacing the block generator: a stand-in for the random draw."""
    assert draw_counts(100_000, 3, seed=0).dtype == np.uint8
    blocks = [np.ones((1, 300), dtype=np.int64), np.eye(1, 300, dtype=np.int64) * 300]
    monkeypatch.setattr(bootstrap, "draw_count_blocks", lambda *args: iter(blocks))
    monkeypatch.setattr(bootstrap, "DRAWS_PER_BLOCK", 300)  # one resample per block
    counts = draw_counts(300, 2, seed=0)
    assert counts.dtype == np.uint16 and counts[1, 0] == 300 and (counts.sum(axis=1) == 300).all()


def test_weighted_sums_block_by_block_are_the_float_product(monkeypatch: pytest.MonkeyPatch) -> None:
    """Reference: the product of the counts cast to floats at once, as the bootstrap computed it before (to rounding:
    BLAS may sum a 5-row product in another order than a 23-row one)."""
    counts = draw_counts(40, 23, seed=1)
    values = np.random.default_rng(2).normal(size=(40, 3))
    monkeypatch.setattr(bootstrap, "DRAWS_PER_BLOCK", 40 * 5)  # five resamples per block: 5 blocks, the last of 3
    floats = counts.astype(np.float64)
    np.testing.assert_allclose(weighted_sums(counts, values), floats @ values, rtol=1e-13)
    np.testing.assert_allclose(weighted_sums(counts, values[:, 0]), floats @ values[:, 0], rtol=1e-13)
    assert weighted_sums(counts[:0], values).shape == (0, 3)


def test_a_pearson_resample_of_one_value_is_undefined_as_in_scipy():
    """Three dialogues (one row each: dialogue level), human means 7/3, 14/3, 5/3: a resample drawing one dialogue
    three times has one value on each side, undefined for scipy, but its spread was rounding noise and the figure
    -1.0 (0.707 and 0 elsewhere), counted in the CI as a defined resample."""
    x, y = np.array([4.8, 4.5, 6.7]), np.array([7, 14, 5]) / 3
    counts = np.array([[3, 0, 0], [0, 3, 0], [0, 0, 3], [1, 2, 0]])
    got = weighted_correlation(x, y, np.arange(3), counts, "pearson")
    assert np.isnan(got[:3]).all()
    assert got[3] == pytest.approx(stats.pearsonr([4.8, 4.5, 4.5], y[[0, 1, 1]]).statistic, abs=1e-12)  # kept


def test_exact_spearman_p_counts_the_pairings_at_least_as_strong() -> None:
    """Independent: every one of the 6! pairings of y with x, rho by scipy (average ranks for the ties)."""
    import itertools

    x, y = np.array([1.0, 2, 2, 3, 5, 4]), np.array([2.0, 1, 3, 3, 5, 4])
    observed = abs(stats.spearmanr(x, y).statistic)
    rhos = [abs(stats.spearmanr(x, np.array(p)).statistic) for p in itertools.permutations(y)]
    expected = sum(r >= observed - 1e-12 for r in rhos) / len(rhos)
    assert expected == 32 / 720  # 0.0444, where scipy's t-approximation says 0.0251
    assert bootstrap.spearman_exact_p(x, y) == pytest.approx(expected, abs=1e-15)
    assert bootstrap.spearman_exact_p(np.array([1.0, 2, 3]), np.array([3.0, 2, 1])) == pytest.approx(1 / 3)
