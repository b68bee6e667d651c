"""Vectorised correlations for many resamples at once, and the cluster bootstrap.

A cluster bootstrap draws clusters (contexts) with replacement. Drawing cluster
``k`` ``c_k`` times is the same as giving each of its rows the weight ``c_k``, so
every resample is a row of a count matrix ``C`` (resamples x clusters) and each
statistic is computed for all rows of ``C`` with matrix algebra:

* Pearson from per-cluster sums: ``C @ [n, Σx, Σy, Σx², Σy², Σxy]``.
* Spearman as Pearson of average ranks; with weights the average rank of a value
  is ``(weight below) + (weight tied + 1) / 2``, one cumulative sum per resample
  in a sort order fixed once.
* Kendall tau-b from three cluster-by-cluster pair matrices computed once
  (Σ sign(dx)·sign(dy), x ties, y ties, each O(n²) in int8 blocks); a resample is
  then the quadratic form ``cᵀQc``, O(K²) per resample.

All three equal scipy.stats on the expanded (resampled) vectors.

Example:
    >>> import numpy as np
    >>> x, y = np.array([1.0, 2, 3, 4]), np.array([1.0, 3, 2, 4])
    >>> counts = np.array([[1, 1, 1, 1], [2, 0, 1, 1]])
    >>> [round(float(v), 4) for v in weighted_correlation(x, y, np.arange(4), counts, "kendall")]
    [0.6667, 1.0]
"""

from __future__ import annotations

from typing import Literal

import numpy as np
from numpy.typing import NDArray

Method = Literal["pearson", "spearman", "kendall"]
METHODS: tuple[Method, ...] = ("pearson", "spearman", "kendall")
FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]


def draw_counts(n_clusters: int, n_boot: int, seed: int) -> IntArray:
    """Draw ``n_boot`` resamples of ``n_clusters`` clusters with replacement, as counts.

    Example:
        >>> c = draw_counts(5, 3, seed=0)
        >>> c.shape, c.sum(axis=1).tolist()
        ((3, 5), [5, 5, 5])
    """
    rng = np.random.default_rng(seed)
    picks = rng.integers(0, n_clusters, size=(n_boot, n_clusters))
    offsets = (np.arange(n_boot) * n_clusters)[:, None]
    return np.bincount((picks + offsets).ravel(), minlength=n_boot * n_clusters).reshape(n_boot, n_clusters)


def percentile_ci(values: FloatArray, level: float = 0.95) -> tuple[float, float]:
    """Return the percentile interval of the finite ``values`` (NaN, NaN when none are finite)."""
    finite = values[np.isfinite(values)]
    if finite.size == 0:
        return (float("nan"), float("nan"))
    tail = 100 * (1 - level) / 2
    lo, hi = np.percentile(finite, [tail, 100 - tail])
    return (float(lo), float(hi))


def _safe_ratio(num: FloatArray, den: FloatArray) -> FloatArray:
    out = np.full(num.shape, np.nan)
    ok = den > 0
    out[ok] = num[ok] / np.sqrt(den[ok])
    return np.asarray(np.clip(out, -1.0, 1.0), dtype=np.float64)


def _pearson(x: FloatArray, y: FloatArray, codes: IntArray, counts: IntArray) -> FloatArray:
    k = counts.shape[1]
    x = x - x.mean()
    y = y - y.mean()
    sums = np.stack(
        [np.bincount(codes, weights=w, minlength=k) for w in (np.ones_like(x), x, y, x * x, y * y, x * y)], axis=1
    )
    n, sx, sy, sxx, syy, sxy = (counts @ sums).T
    cov = n * sxy - sx * sy
    return _safe_ratio(cov, (n * sxx - sx * sx) * (n * syy - sy * sy))


def _twice_ranks(v: FloatArray, weights: FloatArray) -> tuple[FloatArray, FloatArray]:
    """Per resample (columns): twice the average rank of each row, and Σ weight·(2·rank)²."""
    order = np.argsort(v, kind="stable")
    sv = v[order]
    new_group = np.r_[True, sv[1:] != sv[:-1]]
    group_sorted = np.cumsum(new_group) - 1
    group_of_row = np.empty_like(group_sorted)
    group_of_row[order] = group_sorted
    sorted_w = weights[order]
    group_w = sorted_w if new_group.all() else np.add.reduceat(sorted_w, np.flatnonzero(new_group), axis=0)
    twice = 2 * np.cumsum(group_w, axis=0) - group_w + 1
    sum_sq = np.einsum("gb,gb,gb->b", group_w, twice, twice)
    return twice[group_of_row], sum_sq


def _spearman(x: FloatArray, y: FloatArray, codes: IntArray, counts: IntArray) -> FloatArray:
    weights = np.ascontiguousarray(counts.T.astype(np.float64))[codes]  # rows x resamples
    n = weights.sum(axis=0)
    rx, sxx = _twice_ranks(x, weights)
    ry, syy = _twice_ranks(y, weights)
    sxy = np.einsum("ib,ib,ib->b", weights, rx, ry)
    centre = n * (n + 1) ** 2  # Σ w·(2·mean rank)² with mean rank (n + 1) / 2
    return _safe_ratio(sxy - centre, (sxx - centre) * (syy - centre))


def _squared_tie_weights(codes: IntArray, values: FloatArray, counts: IntArray) -> FloatArray:
    """Per resample: Σ over distinct values of (total weight of rows with that value)²."""
    from scipy import sparse

    distinct, vcodes = np.unique(values, return_inverse=True)
    if len(distinct) == len(values):  # no ties: each row is its own value
        sizes = np.bincount(codes, minlength=counts.shape[1]).astype(np.float64)
        return np.asarray((counts * counts) @ sizes, dtype=np.float64)
    member = sparse.csr_matrix((np.ones(len(codes)), (vcodes, codes)), shape=(int(vcodes.max()) + 1, counts.shape[1]))
    per_value = member @ counts.T.astype(np.float64)
    return np.asarray((per_value * per_value).sum(axis=0), dtype=np.float64)


def _padded_ranks(v: FloatArray, codes: IntArray, k: int, pad: int) -> NDArray[np.int32]:
    """Dense ranks laid out slot-major (slot x cluster), ``pad`` where a cluster has fewer rows."""
    order = np.argsort(codes, kind="stable")
    slot = np.arange(len(codes)) - np.searchsorted(codes[order], codes[order])
    out = np.full((int(slot.max()) + 1, k), pad, dtype=np.int32)
    out[slot, codes[order]] = np.unique(v, return_inverse=True)[1][order]
    return out


def _sign_matrix(x: FloatArray, y: FloatArray, codes: IntArray, k: int) -> NDArray[np.float32]:
    """Σ sign(x_i - x_j)·sign(y_i - y_j) over rows i of cluster a and j of cluster b, as a K x K matrix.

    Counts strictly concordant and discordant directed pairs slot by slot (int8/int16
    comparisons of dense ranks). Padding is below every rank on the left side and
    above every rank on the right, so ``x_i > x_j`` is false whenever a pad is involved.
    """
    n = len(codes)
    left_x, right_x = _padded_ranks(x, codes, k, -1), _padded_ranks(x, codes, k, n)
    left_y, right_y = _padded_ranks(y, codes, k, -1), _padded_ranks(y, codes, k, n)
    size = left_x.shape[0]
    acc = np.int16 if size * size < 2**15 else np.int64
    concordant = np.zeros((k, k), dtype=acc)
    discordant = np.zeros((k, k), dtype=acc)
    for p in range(size):
        for q in range(size):
            gx = left_x[p][:, None] > right_x[q][None, :]
            concordant += gx & (left_y[p][:, None] > right_y[q][None, :])
            discordant += gx & (left_y[p][:, None] < right_y[q][None, :])
    directed = concordant.astype(np.float32) - discordant.astype(np.float32)
    return np.asarray(directed + directed.T, dtype=np.float32)


def _kendall(x: FloatArray, y: FloatArray, codes: IntArray, counts: IntArray) -> FloatArray:
    k = counts.shape[1]
    c32 = counts.astype(np.float32)
    # Entries of c @ Q are integers below 2**24 for any realistic resample, so float32 is exact.
    s = np.einsum("bk,bk->b", (c32 @ _sign_matrix(x, y, codes, k)).astype(np.float64), counts.astype(np.float64))
    n = counts @ np.bincount(codes, minlength=k).astype(np.float64)
    pairs = n * (n - 1) / 2
    x_ties = (_squared_tie_weights(codes, x, counts) - n) / 2
    y_ties = (_squared_tie_weights(codes, y, counts) - n) / 2
    return _safe_ratio(s / 2, (pairs - x_ties) * (pairs - y_ties))


def weighted_correlation(
    x: FloatArray, y: FloatArray, codes: IntArray, counts: IntArray, method: Method, chunk: int = 250
) -> FloatArray:
    """Correlate ``x`` and ``y`` in every resample given by cluster ``counts``.

    Args:
        x: Values per row.
        y: Values per row.
        codes: Cluster index (0..K-1) of each row.
        counts: Resamples x clusters: how often each cluster is drawn.
        method: ``"pearson"``, ``"spearman"`` or ``"kendall"`` (tau-b).
        chunk: Resamples processed together (bounds memory for Spearman).

    Returns:
        One correlation per resample; NaN where one side is constant in that resample.
    """
    x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    codes = np.asarray(codes, dtype=np.int64)
    counts = np.atleast_2d(np.asarray(counts, dtype=np.int64))
    if method == "pearson":
        return _pearson(x, y, codes, counts)
    if method == "kendall":
        return _kendall(x, y, codes, counts)
    if method == "spearman":
        return np.concatenate([_spearman(x, y, codes, counts[i : i + chunk]) for i in range(0, len(counts), chunk)])
    raise ValueError(f"unknown correlation method {method!r}; use one of {', '.join(METHODS)}")


def rowwise_correlation(x: FloatArray, y: FloatArray, method: Method) -> FloatArray:
    """Correlate row ``b`` of ``x`` with row ``b`` of ``y`` for every row (few columns, e.g. systems).

    Example:
        >>> import numpy as np
        >>> x = np.array([[1.0, 2, 3], [1, 2, 3]]); y = np.array([[1.0, 3, 2], [3, 2, 1]])
        >>> rowwise_correlation(x, y, "spearman").round(3).tolist()
        [0.5, -1.0]
    """
    from scipy.stats import rankdata

    x, y = np.atleast_2d(x).astype(np.float64), np.atleast_2d(y).astype(np.float64)
    if method == "kendall":
        sx = np.sign(x[:, :, None] - x[:, None, :])
        sy = np.sign(y[:, :, None] - y[:, None, :])
        s = (sx * sy).sum(axis=(1, 2))
        return _safe_ratio(s, (sx * sx).sum(axis=(1, 2)) * (sy * sy).sum(axis=(1, 2)))
    if method == "spearman":
        x, y = rankdata(x, axis=1), rankdata(y, axis=1)
    elif method != "pearson":
        raise ValueError(f"unknown correlation method {method!r}; use one of {', '.join(METHODS)}")
    xc = x - x.mean(axis=1, keepdims=True)
    yc = y - y.mean(axis=1, keepdims=True)
    return _safe_ratio((xc * yc).sum(axis=1), (xc * xc).sum(axis=1) * (yc * yc).sum(axis=1))
