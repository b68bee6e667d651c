"""Vectorised correlations for many resamples at once, and the cluster bootstrap.

A cluster bootstrap draws clusters (contexts) with replacement. Drawing cluster
``k`` ``c_k`` times is the same as giving each of its rows the weight ``c_k``, so
every resample is a row of a count matrix ``C`` (resamples x clusters) and each
statistic is computed for all rows of ``C`` with matrix algebra:

* Pearson from per-cluster sums: ``C @ [n, Σx, Σy, Σx², Σy², Σxy]``.
* Spearman as Pearson of average ranks; with weights the average rank of a value
  is ``(weight below) + (weight tied + 1) / 2``, one cumulative sum per resample
  in a sort order fixed once.
* Kendall tau-b from the cluster-by-cluster matrix Q of Σ sign(dx)·sign(dy),
  computed once (O(n²/2) small-integer products); a resample is then the quadratic
  form ``cᵀQc`` (O(K²)); tied pairs come from sparse per-value weights. With more than
  ``MAX_PAIR_CLUSTERS`` clusters it falls back to a per-resample scipy loop.

All three equal scipy.stats on the expanded (resampled) vectors.

Example:
    >>> import numpy as np
    >>> x, y = np.array([1.0, 2, 3, 4]), np.array([1.0, 3, 2, 4])
    >>> counts = np.array([[1, 1, 1, 1], [2, 0, 1, 1]])
    >>> [round(float(v), 4) for v in weighted_correlation(x, y, np.arange(4), counts, "kendall")]
    [0.6667, 1.0]
"""

from __future__ import annotations

from typing import Any, Literal

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


def _group_ranks(v: FloatArray, codes: IntArray, counts_t: FloatArray) -> tuple[FloatArray, IntArray, FloatArray]:
    """Per distinct value (rows) and resample (columns): total weight and twice the average rank.

    Returns the group weights, each row's group, and twice the ranks (groups in ascending order).
    """
    from scipy import sparse

    distinct, group_of_row = np.unique(v, return_inverse=True)
    if len(distinct) == len(v):
        weights = counts_t[codes[np.argsort(v, kind="stable")]]
    else:
        member = sparse.csr_matrix((np.ones(len(v)), (group_of_row, codes)), shape=(len(distinct), len(counts_t)))
        weights = np.asarray(member @ counts_t)
    twice = np.cumsum(weights, axis=0)
    twice *= 2
    twice -= weights
    twice += 1
    return weights, group_of_row.astype(np.int64), twice


def _spearman(x: FloatArray, y: FloatArray, codes: IntArray, counts: IntArray) -> FloatArray:
    counts_t = np.ascontiguousarray(counts.T, dtype=np.float64)  # clusters x resamples
    wx, gx, rx = _group_ranks(x, codes, counts_t)
    wy, gy, ry = _group_ranks(y, codes, counts_t)
    n = wx.sum(axis=0)
    sxx = np.einsum("gb,gb,gb->b", wx, rx, rx)
    syy = np.einsum("gb,gb,gb->b", wy, ry, ry)
    # Σ_rows w·(2 rank_x)·(2 rank_y), walked in x order: x groups are rows of (wx, rx) when x has no
    # ties, else each row is looked up through its group.
    order = np.argsort(x, kind="stable")
    if len(wx) == len(x):
        sxy = np.einsum("ib,ib,ib->b", wx, rx, ry[gy[order]])
    else:
        sxy = np.einsum("ib,ib,ib->b", counts_t[codes], rx[gx], ry[gy])
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


def _padded_ranks(v: FloatArray, codes: IntArray, k: int, pad: int) -> NDArray[np.signedinteger[Any]]:
    """Dense ranks laid out slot-major (slot x cluster), ``pad`` where a cluster has fewer rows."""
    order = np.argsort(codes, kind="stable")
    slot = np.arange(len(codes)) - np.searchsorted(codes[order], codes[order])
    out = np.full((int(slot.max()) + 1, k), pad, dtype=np.int16 if len(codes) < 2**15 - 1 else np.int32)
    out[slot, codes[order]] = np.unique(v, return_inverse=True)[1][order]
    return out


def _workers(tasks: int) -> int:
    """Threads to use for ``tasks`` independent pieces of numpy work (at most the usable cores)."""
    import os

    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return max(1, min(tasks, cores))


def _threaded(fn: Any, pieces: list[Any]) -> list[Any]:
    """Map ``fn`` over ``pieces`` on a thread pool (in order); one piece runs inline."""
    if len(pieces) == 1:
        return [fn(pieces[0])]
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=len(pieces)) as pool:
        return list(pool.map(fn, pieces))


def _sign_matrix(x: FloatArray, y: FloatArray, codes: IntArray, k: int, block: int = 128) -> NDArray[np.float32]:
    """Σ sign(x_i - x_j)·sign(y_i - y_j) over rows i of cluster a and j of cluster b, as a K x K matrix.

    Works on dense ranks laid out slot x cluster (int16 arithmetic). The matrix is
    symmetric, so each block of ``block`` rows is computed only from its own first
    column on (about half the pairs) and the rest is mirrored; blocks keep the
    temporaries in cache and are spread over the cores. Slots past a cluster's
    size are masked out.
    """
    ranks_x, ranks_y = _padded_ranks(x, codes, k, 0), _padded_ranks(y, codes, k, 0)
    size = ranks_x.shape[0]
    valid = np.arange(size)[:, None] < np.bincount(codes, minlength=k)[None, :]
    padded = not bool(valid.all())
    upper = np.zeros((k, k), dtype=np.int16 if size * size < 2**15 else np.int64)

    def rows(a0: int) -> None:
        out = upper[a0 : a0 + block, a0:]
        for p in range(size):
            xa, ya = ranks_x[p][a0 : a0 + block, None], ranks_y[p][a0 : a0 + block, None]
            for q in range(size):
                prod = np.sign(xa - ranks_x[q][None, a0:])
                prod *= np.sign(ya - ranks_y[q][None, a0:])
                if padded:
                    prod *= valid[p][a0 : a0 + block, None] & valid[q][None, a0:]
                out += prod

    starts = list(range(0, k, block))
    workers = _workers(len(starts))
    # numpy releases the GIL in these element-wise loops; each thread writes its own rows.
    def run(firsts: list[int]) -> None:
        for a0 in firsts:
            rows(a0)

    _threaded(run, [starts[i::workers] for i in range(workers)])
    computed = np.arange(k)[None, :] >= ((np.arange(k) // block) * block)[:, None]
    return np.where(computed, upper, upper.T).astype(np.float32)


MAX_PAIR_CLUSTERS = 6000
"""Above this many clusters (K x K pair matrices) Kendall falls back to a per-resample scipy loop."""


def _kendall_loop(x: FloatArray, y: FloatArray, codes: IntArray, counts: IntArray) -> FloatArray:
    """Per-resample scipy.stats.kendalltau on the expanded rows (bounded memory, slower)."""
    from scipy import stats

    order = np.argsort(codes, kind="stable")
    starts = np.searchsorted(codes[order], np.arange(counts.shape[1] + 1))
    out = np.full(len(counts), np.nan)
    for b, row in enumerate(counts):
        drawn = np.repeat(np.arange(len(row)), row)
        rows = np.concatenate([order[starts[k] : starts[k + 1]] for k in drawn])
        if np.ptp(x[rows]) > 0 and np.ptp(y[rows]) > 0:
            out[b] = stats.kendalltau(x[rows], y[rows]).statistic
    return out


def _kendall(x: FloatArray, y: FloatArray, codes: IntArray, counts: IntArray) -> FloatArray:
    k = counts.shape[1]
    sizes = np.bincount(codes, minlength=k)
    if k > MAX_PAIR_CLUSTERS or int(sizes.max()) ** 2 * k * k > 4 * 10**8:
        return _kendall_loop(x, y, codes, counts)
    n = counts @ sizes.astype(np.float64)
    # |(c @ Q)_k| <= max size * rows drawn: float32 products and sums are exact below 2**24.
    exact32 = int(sizes.max()) * float(n.max()) < 2**24
    dtype = np.float32 if exact32 else np.float64
    c = counts.astype(dtype)
    cq = c @ _sign_matrix(x, y, codes, k).astype(dtype)
    s = np.einsum("bk,bk->b", cq.astype(np.float64), c.astype(np.float64))  # exact values, summed in float64
    pairs = n * (n - 1) / 2
    x_ties = (_squared_tie_weights(codes, x, counts) - n) / 2
    y_ties = (_squared_tie_weights(codes, y, counts) - n) / 2
    return _safe_ratio(s / 2, (pairs - x_ties) * (pairs - y_ties))


def weighted_correlation(
    x: FloatArray, y: FloatArray, codes: IntArray, counts: IntArray, method: Method, chunk: int = 100
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
        chunks = [counts[i : i + chunk] for i in range(0, len(counts), chunk)]
        workers = _workers(len(chunks))
        groups = [chunks[i::workers] for i in range(workers)]
        done = _threaded(lambda group: [_spearman(x, y, codes, c) for c in group], groups)
        ordered = [done[i % workers][i // workers] for i in range(len(chunks))]
        return np.concatenate(ordered)
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
