"""Vectorised correlations for many resamples at once, and the cluster bootstrap.

A cluster bootstrap draws clusters (contexts) with replacement. Drawing cluster
``k`` ``c_k`` times is the same as giving each of its rows the weight ``c_k``, so
every resample is a row of a count matrix ``C`` (resamples x clusters) and each
statistic is computed for all rows of ``C`` with matrix algebra:

* Pearson from per-cluster sums: ``C @ [n, Σx, Σy, Σx², Σy², Σxy]``.
* Spearman and Kendall tau-b from a layout of the rows fixed once (rows sorted by x and cut
  into blocks of about ``BLOCK_WIDTH`` rows, y values as levels): a resample is a sparse product
  for the block x level histogram plus small per-block comparison matrices, so the cost grows
  with rows x resamples, not with rows² (see :mod:`dialeval.meta._rankblocks`).

All three equal scipy.stats on the expanded (resampled) vectors.

Example:
    >>> import numpy as np
    >>> x, y = np.array([1.0, 2, 3, 4]), np.array([1.0, 3, 2, 4])
    >>> counts = np.array([[1, 1, 1, 1], [2, 0, 1, 1]])
    >>> [round(float(v), 4) for v in weighted_correlation(x, y, np.arange(4), counts, "kendall")]
    [0.6667, 1.0]
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Literal

import numpy as np
from numpy.typing import NDArray

Method = Literal["pearson", "spearman", "kendall"]
METHODS: tuple[Method, ...] = ("pearson", "spearman", "kendall")
FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]
Counts = NDArray[np.integer[Any]]
"""Resamples x clusters: how often each resample draws each cluster (:func:`draw_counts` holds them in one byte)."""

MAX_RESAMPLES = 100_000
"""The most bootstrap resamples a command takes: the counts are held at once (resamples x clusters).
At 10,000 the Monte-Carlo error of a 95% interval's end is already about 0.03 of the statistic's
standard error (for a normal statistic: sqrt(0.025 * 0.975 / 10,000) / 0.0584, 0.0584 the normal
density at 1.96)."""


#: How many counts (resamples x clusters) are drawn at once: 16 MB.
DRAWS_PER_BLOCK = 2**21


def draw_counts(n_clusters: int, n_boot: int, seed: int) -> Counts:
    """Draw ``n_boot`` resamples of ``n_clusters`` clusters with replacement, as counts.

    The counts are held in one byte each: 1,000 resamples of 100,000 contexts take 0.1 GB, not the 0.8 GB of
    64-bit integers. Should a count pass 255 (one cluster drawn 256 times, which no realistic resample does), the
    array is widened to the narrowest unsigned type that holds ``n_clusters``, the largest count possible. Every
    product with them casts a block of resamples to floats (:func:`weighted_sums`).

    Example:
        >>> c = draw_counts(5, 3, seed=0)
        >>> c.shape, c.sum(axis=1).tolist(), c.dtype.name
        ((3, 5), [5, 5, 5], 'uint8')
    """
    out: Counts = np.empty((n_boot, n_clusters), dtype=np.uint8)
    rows = max(1, DRAWS_PER_BLOCK // max(n_clusters, 1))  # drawn at once, the picks and their offsets took 3x out
    for start, block in zip(range(0, n_boot, rows), draw_count_blocks(n_clusters, n_boot, seed, rows), strict=True):
        if block.max(initial=0) > np.iinfo(out.dtype).max:  # no count exceeds the number of clusters
            out = out.astype(np.min_scalar_type(n_clusters))
        out[start : start + len(block)] = block
    return out


def weighted_sums(counts: Counts, values: FloatArray) -> FloatArray:
    """Return ``counts @ values``, a block of resamples at a time: the product casts each block to floats.

    Example:
        >>> counts = draw_counts(3, 2, seed=0)
        >>> counts.tolist(), weighted_sums(counts, np.array([1.0, 10.0, 100.0])).tolist()
        ([[0, 2, 1], [3, 0, 0]], [120.0, 3.0])
    """
    rows = max(1, DRAWS_PER_BLOCK // max(counts.shape[1], 1))
    if len(counts) <= rows:
        return np.asarray(counts @ values, dtype=np.float64)
    return np.concatenate([counts[i : i + rows] @ values for i in range(0, len(counts), rows)])


def draw_count_blocks(n_clusters: int, n_boot: int, seed: int, rows: int) -> Iterator[IntArray]:
    """Yield the resamples of :func:`draw_counts` (the same ones) in blocks of at most ``rows``, one held at a time.

    Example:
        >>> blocks = list(draw_count_blocks(5, 3, seed=0, rows=2))
        >>> [b.shape for b in blocks], bool((np.vstack(blocks) == draw_counts(5, 3, seed=0)).all())
        ([(2, 5), (1, 5)], True)
    """
    rng = np.random.default_rng(seed)
    for start in range(0, n_boot, rows):
        size = min(rows, n_boot - start)
        picks = rng.integers(0, n_clusters, size=(size, n_clusters))
        offsets = (np.arange(size) * n_clusters)[:, None]
        yield np.bincount((picks + offsets).ravel(), minlength=size * n_clusters).reshape(size, n_clusters)


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


def _pearson(x: FloatArray, y: FloatArray, codes: IntArray, counts: Counts) -> FloatArray:
    k = counts.shape[1]
    x = x - x.mean()
    y = y - y.mean()
    sums = np.stack(
        [np.bincount(codes, weights=w, minlength=k) for w in (np.ones_like(x), x, y, x * x, y * y, x * y)],
        axis=1,
        dtype=np.float64,
    )
    n, sx, sy, sxx, syy, sxy = weighted_sums(counts, sums).T
    cov = n * sxy - sx * sy
    vx, vy = n * sxx - sx * sx, n * syy - sy * sy
    out = _safe_ratio(cov, vx * vy)
    # a resample of one x (or y) value has a spread of rounding noise, not 0: it gave +-1 or anything between
    doubt = np.flatnonzero((vx <= SPREAD_DOUBT * n * sxx) | (vy <= SPREAD_DOUBT * n * syy))
    if len(doubt):
        drawn = counts[doubt]
        out[doubt[_one_value(x, codes, drawn) | _one_value(y, codes, drawn)]] = np.nan
    return out


#: A resample whose spread (n Σw x² - (Σw x)², centred) is at most this part of n Σw x² is checked for one value
#: exactly (:func:`_one_value`); the others have a spread far above rounding noise (about 1e-16 of it).
SPREAD_DOUBT = 1e-8


def _one_value(values: FloatArray, codes: IntArray, counts: Counts) -> NDArray[np.bool_]:
    """Per resample (row of ``counts``): whether every row it draws holds one and the same value.

    Example:
        >>> _one_value(np.array([1.0, 1.0, 2.0]), np.array([0, 1, 2]), np.array([[2, 1, 0], [1, 0, 2], [0, 0, 3]]))
        array([ True, False,  True])
    """
    k = counts.shape[1]
    low, high = np.full(k, np.inf), np.full(k, -np.inf)  # per cluster (a cluster without rows changes nothing)
    np.minimum.at(low, codes, values)
    np.maximum.at(high, codes, values)
    drawn = counts > 0
    return np.asarray(np.where(drawn, high, -np.inf).max(axis=1) <= np.where(drawn, low, np.inf).min(axis=1))


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


BLOCK_WIDTH = 32
"""Rows per block of the rank layout (:mod:`dialeval.meta._rankblocks`); 32 measured best on 10k items."""
FENWICK_BLOCK_WIDTH = 128
"""Rows per block for Kendall over more than :data:`~dialeval.meta._rankblocks.DENSE_LEVELS` levels (its Fenwick
path, a tree walk per block): 1,000 resamples, every value distinct, medians of 3 (thirty-seventh session),
1,800 items 0.25 s at 32, 0.20 s at 128, 0.19 s at 256; 10,200 items 1.59, 1.02, 0.94 s (2.02 s at 2,048);
30,000 items 5.29, 2.77, 2.84 s (3.81 s at 512). Spearman there is slower above 64 (0.17 s at 32, 0.26 s at 128)."""


def _ranked(x: FloatArray, y: FloatArray, codes: IntArray, counts: Counts, method: Method, chunk: int) -> FloatArray:
    """Spearman or Kendall for every resample from the block layout, ``chunk`` resamples at a time over the cores."""
    from dialeval.meta import _rankblocks

    n_x, n_y = len(np.unique(x)), len(np.unique(y))
    if n_y > n_x:  # both are symmetric: the side with fewer values gives the levels
        x, y = y, x
    fenwick = method == "kendall" and min(n_x, n_y) > _rankblocks.DENSE_LEVELS
    blocks = _rankblocks.build(x, y, codes, counts.shape[1], FENWICK_BLOCK_WIDTH if fenwick else BLOCK_WIDTH, method)
    exact32 = _rankblocks.slots_exact_in_float32(blocks, int(counts.max(initial=0)))
    fn = _rankblocks.spearman if method == "spearman" else _rankblocks.kendall

    def part(c: Counts) -> FloatArray:
        counts_t = np.ascontiguousarray(c.T, dtype=np.float64)  # clusters x resamples
        slot_counts = np.vstack([counts_t, np.zeros((1, counts_t.shape[1]))])  # the empty slot weighs 0
        num, den = fn(blocks, counts_t, slot_counts.astype(np.float32) if exact32 else slot_counts)
        return _safe_ratio(num, den)

    chunks = [counts[i : i + chunk] for i in range(0, len(counts), chunk)]
    if not chunks:
        return np.empty(0)
    workers = _workers(len(chunks))
    done = _threaded(lambda group: [part(c) for c in group], [chunks[i::workers] for i in range(workers)])
    return np.concatenate([done[i % workers][i // workers] for i in range(len(chunks))])


def weighted_correlation(
    x: FloatArray, y: FloatArray, codes: IntArray, counts: Counts, method: Method, chunk: int = 100
) -> FloatArray:
    """Correlate ``x`` and ``y`` in every resample given by cluster ``counts``.

    Args:
        x: Values per row.
        y: Values per row.
        codes: Cluster index (0..K-1) of each row.
        counts: Resamples x clusters: how often each cluster is drawn (integers).
        method: ``"pearson"``, ``"spearman"`` or ``"kendall"`` (tau-b).
        chunk: Resamples processed together (bounds memory).

    Returns:
        One correlation per resample; NaN where one side is constant in that resample.
    """
    x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    codes = np.asarray(codes, dtype=np.int64)
    counts = np.atleast_2d(np.asarray(counts))
    if method == "pearson":
        return _pearson(x, y, codes, counts)
    if method in ("spearman", "kendall"):
        return _ranked(x, y, codes, counts, method, chunk)
    raise ValueError(f"unknown correlation method {method!r}; use one of {', '.join(METHODS)}")


def rowwise_correlation(x: FloatArray, y: FloatArray, method: Method) -> FloatArray:
    """Correlate row ``b`` of ``x`` with row ``b`` of ``y`` for every row (few columns, e.g. systems).

    NaN where a row of either side is constant (exactly: Pearson's centred values of equal means were rounding
    noise, and correlated as such).

    Example:
        >>> import numpy as np
        >>> x = np.array([[1.0, 2, 3], [1, 2, 3]]); y = np.array([[1.0, 3, 2], [3, 2, 1]])
        >>> rowwise_correlation(x, y, "spearman").round(3).tolist()
        [0.5, -1.0]
    """
    x, y = np.atleast_2d(x).astype(np.float64), np.atleast_2d(y).astype(np.float64)
    if x.shape[1] < 2:
        return np.full(len(x), np.nan)
    constant = (np.ptp(x, axis=1) == 0) | (np.ptp(y, axis=1) == 0)
    out = _rowwise(x, y, method)
    out[constant] = np.nan
    return out


def _rowwise(x: FloatArray, y: FloatArray, method: Method) -> FloatArray:
    """:func:`rowwise_correlation` before its constant rows are set to NaN."""
    from scipy.stats import rankdata

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


EXACT_SPEARMAN_MAX = 8
"""Up to this many pairs, Spearman's p-value is exact (:func:`spearman_exact_p`: 8! = 40,320 pairings, 0.03 s; 9 took
0.4 s); above it, scipy's t-approximation, which gave three pairs in order p 0.0 (exactly 1/3) and two pairs NaN."""


def spearman_exact_p(x: FloatArray, y: FloatArray) -> float:
    """Return the two-sided permutation p-value of Spearman's rho.

    The share of the n! pairings of ``y`` with ``x`` whose rho is at least as far from 0 as the observed one (ties:
    average ranks, as scipy's). It is never 0: the observed pairing is one of them.

    Example:
        >>> spearman_exact_p(np.array([1.0, 2, 3]), np.array([1.0, 2, 3]))  # 2 of the 6 orders have |rho| = 1
        0.3333333333333333
    """
    from itertools import chain, permutations
    from math import factorial

    from scipy.stats import rankdata

    rx, ry = rankdata(x), rankdata(y)
    rx, ry = rx - rx.mean(), ry - ry.mean()
    n = len(ry)
    orders = np.fromiter(chain.from_iterable(permutations(range(n))), dtype=np.int64, count=factorial(n) * n)
    sums = np.abs(ry[orders.reshape(-1, n)] @ rx)  # rho times a constant, for every pairing (the observed one first)
    return float(np.mean(sums >= sums[0] * (1 - 1e-9)))
