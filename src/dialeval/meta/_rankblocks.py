"""Weighted Spearman and Kendall for many resamples at once, from rows sorted by x and cut into blocks.

Used by :mod:`dialeval.meta.bootstrap`. Row ``i`` belongs to cluster ``a(i)``; a resample draws
cluster ``a`` ``c_a`` times, so row ``i`` stands for ``c_a(i)`` identical rows (all tied with each
other). A layout fixed once turns every resample into small matrix products:

* rows are sorted by (x, y) and cut into *blocks* of consecutive distinct x values, about ``width``
  rows each (a value is never split; a value with ``width`` rows or more is a block of its own), so
  two rows in different blocks are ordered by their blocks and only pairs inside a block need a
  comparison of x;
* y values are *levels* ``0..G-1`` (tied values share one);
* ``hist`` counts each cluster's rows per (block, level) pair, so ``hist @ c`` is the weighted
  block x level histogram ``H`` of a resample: one sparse product for a batch of resamples;
* the rows of blocks with two or more x values sit in padded *slots* with a small matrix of x (and
  y) comparisons per block, applied to the slot weights in one batched float32 matmul.

Kendall: pairs across blocks give ``Σ_t Σ_g H[t,g] Σ_{s<t} Σ_h sign(g-h) H[s,h]`` (prefix sums over the
histogram, dense over blocks x levels; over more than :data:`DENSE_LEVELS` levels a Fenwick tree over the
levels takes the blocks in order instead), pairs inside block ``t`` give ``w_tᵀ S_t w_t`` with
``S_t = sign(dx)·sign(dy)``. Both correlations are symmetric, so the caller makes the side with fewer
distinct values ``y``: the levels.

Spearman: twice the average x rank of a row is ``2 (weight of earlier blocks) + 1`` plus its part
inside the block, ``Σ_q (1 + sign(x_p - x_q)) w_q`` (or the block's whole weight when the block is
one x value); twice the y rank of a level comes from the level weights; ``Σ w·rank_x·rank_y`` is
then gathered per (block, level). The rank variances have closed forms in the tie weights W:
``Σ w (rank - mean)² = (n³ - Σ W³) / 12``.

Everything sums integers: exact in float64, and in float32 for the slot products (checked by the
caller with :func:`slots_exact_in_float32`), so the results equal scipy on the expanded vectors up to
the final division.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray
from scipy import sparse

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]
SlotArray = NDArray[np.float32] | NDArray[np.float64]


@dataclass(frozen=True)
class Blocks:
    """The fixed layout of the rows (see the module docstring); built by :func:`build`."""

    k: int
    n_levels: int
    n_blocks: int
    hist: Any  # sparse: present (block, level) pairs (sorted by block, then level) x clusters
    levels: Any  # sparse: y levels x clusters (rows per level and cluster)
    pair_block: IntArray
    pair_level: IntArray
    block_starts: IntArray  # first pair of each block
    single: FloatArray  # 1.0 where the block is a single x value
    slots: IntArray  # multi-value blocks x span: cluster per slot (k for an empty slot)
    runs: Any  # sparse float32: pairs x flat slots, 1 where the slot's row is in that (block, level) pair
    span: int  # slots per multi-value block
    compare: NDArray[np.float32]  # per multi-value block, span x span: see build()
    x_lone: FloatArray  # per cluster: how many of its rows have an x value no other row has
    x_tied: Any  # sparse: x values held by two rows or more x clusters


def build(x: FloatArray, y: FloatArray, codes: IntArray, k: int, width: int, method: str) -> Blocks:
    """Lay the rows out (see the module docstring).

    ``compare`` holds, per slot pair (p, q) of a block, ``1 + sign(x_p - x_q)`` for Spearman and
    ``sign(x_p - x_q)·sign(y_p - y_q)`` for Kendall (0 off the filled slots).
    """
    n = len(x)
    x_values, rx = np.unique(x, return_inverse=True)
    y_values, gy = np.unique(y, return_inverse=True)
    rx, gy = rx.astype(np.int64).ravel(), gy.astype(np.int64).ravel()
    n_levels = len(y_values)
    order = np.lexsort((gy, rx))
    rxs, gys, cs = rx[order], gy[order], codes[order]

    size = np.bincount(rxs, minlength=len(x_values))
    first_row = np.cumsum(size) - size
    big = size >= width
    new = np.ones(len(size), dtype=bool)
    new[1:] = big[1:] | big[:-1] | (first_row[1:] // width != first_row[:-1] // width)
    block_of_value = np.cumsum(new) - 1
    n_blocks = int(block_of_value[-1]) + 1
    block = block_of_value[rxs]

    pairs, pair_of_row = np.unique(block * n_levels + gys, return_inverse=True)
    pair_of_row = pair_of_row.astype(np.int64).ravel()
    hist = sparse.csr_matrix((np.ones(n), (pair_of_row, cs)), shape=(len(pairs), k))
    levels = sparse.csr_matrix((np.ones(n), (gy, codes)), shape=(n_levels, k))
    pair_block, pair_level = pairs // n_levels, pairs % n_levels

    single = np.bincount(block_of_value, minlength=n_blocks) == 1
    block_size = np.bincount(block, minlength=n_blocks)
    multi = np.flatnonzero(~single)
    span = int(block_size[multi].max()) if len(multi) else 1
    slot = np.arange(span)
    filled = slot[None, :] < block_size[multi][:, None]
    pos = np.where(filled, (np.cumsum(block_size) - block_size)[multi][:, None] + slot[None, :], 0)
    slots = np.where(filled, cs[pos], k)
    both = filled[:, :, None] & filled[:, None, :]
    dx = np.sign(rxs[pos][:, :, None] - rxs[pos][:, None, :])
    if method == "spearman":
        compare = (1 + dx) * both
    else:
        compare = dx * np.sign(gys[pos][:, :, None] - gys[pos][:, None, :]) * both
    flat = np.flatnonzero(filled.ravel())
    runs = sparse.csr_matrix(
        (np.ones(len(flat), dtype=np.float32), (pair_of_row[pos].ravel()[flat], flat)), shape=(len(pairs), filled.size)
    )

    lone = size[rx] == 1
    tied_values, tied_code = np.unique(rx[~lone], return_inverse=True)
    x_tied = sparse.csr_matrix(
        (np.ones(int((~lone).sum())), (tied_code.ravel(), codes[~lone])), shape=(len(tied_values), k)
    )
    return Blocks(
        k=k,
        n_levels=n_levels,
        n_blocks=n_blocks,
        hist=hist,
        levels=levels,
        pair_block=pair_block.astype(np.int64),
        pair_level=pair_level.astype(np.int64),
        block_starts=np.searchsorted(pair_block, np.arange(n_blocks)).astype(np.int64),
        single=single.astype(np.float64),
        slots=slots.astype(np.int64),
        runs=runs,
        span=span,
        compare=compare.astype(np.float32),
        x_lone=np.bincount(codes[lone], minlength=k).astype(np.float64),
        x_tied=x_tied,
    )


def slots_exact_in_float32(blocks: Blocks, max_count: int) -> bool:
    """Whether every slot product and per-block sum stays an integer below 2**24 (exact in float32).

    A block weighs at most ``span * max_count``; a slot's compared weight is at most twice that, and a
    run's (or block's) sum of weight x compared weight at most ``2 * (span * max_count)**2``.
    """
    return 2 * (blocks.span * max_count) ** 2 < 2**24


def _exclusive_cumsum(a: FloatArray) -> FloatArray:
    """Sum the rows before each row (row by row: numpy's cumsum along axis 0 is slow on short arrays)."""
    out = np.empty_like(a)
    if len(a) > 4096:
        out[0] = 0
        np.cumsum(a[:-1], axis=0, out=out[1:])
        return out
    out[0] = 0
    for i in range(1, len(a)):
        np.add(out[i - 1], a[i - 1], out=out[i])
    return out


def _x_tie_power(blocks: Blocks, counts_t: FloatArray, power: int) -> FloatArray:
    """Per resample: Σ over distinct x values of (their total weight) ** power."""
    lone = counts_t**2 if power == 2 else counts_t**2 * counts_t
    out = np.asarray(blocks.x_lone @ lone, dtype=np.float64)
    if blocks.x_tied.shape[0]:
        tied = np.asarray(blocks.x_tied @ counts_t)
        out += (tied**2 if power == 2 else tied**2 * tied).sum(axis=0)
    return out


def _slot_products(blocks: Blocks, slot_counts: SlotArray) -> SlotArray:
    """Per slot and resample: weight x (comparison matrix @ block weights), shape (multi blocks, span, b)."""
    weights = slot_counts[blocks.slots]
    compare = blocks.compare if slot_counts.dtype == np.float32 else blocks.compare.astype(np.float64)
    out: SlotArray = np.matmul(compare, weights)
    out *= weights
    return out


def spearman(blocks: Blocks, counts_t: FloatArray, slot_counts: SlotArray) -> tuple[FloatArray, FloatArray]:
    """Numerator and squared denominator of Spearman's rho for each column of ``counts_t`` (clusters x b).

    ``slot_counts`` is ``counts_t`` with a zero row appended (for empty slots), in float32 where exact.
    """
    hc = np.asarray(blocks.hist @ counts_t)  # (block, level) pairs x b
    weight = np.add.reduceat(hc, blocks.block_starts, axis=0)  # blocks x b
    wy = np.asarray(blocks.levels @ counts_t)  # levels x b
    n = wy.sum(axis=0)
    twice_y = 2 * _exclusive_cumsum(wy) + wy + 1  # twice the average rank of each level
    twice_x = 2 * _exclusive_cumsum(weight) + 1 + blocks.single[:, None] * weight  # before the in-block part
    per_pair = hc * twice_x[blocks.pair_block]
    if len(blocks.slots):
        runs = blocks.runs if slot_counts.dtype == np.float32 else blocks.runs.astype(np.float64)
        per_pair += runs @ _slot_products(blocks, slot_counts).reshape(-1, hc.shape[1])
    sxy = np.einsum("pb,pb->b", per_pair, twice_y[blocks.pair_level])
    n3 = n**3
    return sxy - n * (n + 1) ** 2, (n3 - _x_tie_power(blocks, counts_t, 3)) * (n3 - (wy**2 * wy).sum(axis=0)) / 9


#: The most bytes of one dense block x level x resample array of :func:`_cross_dense`, which takes fewer
#: resamples at a time to stay below it (8,000 distinct values over 100 resamples held 1.6 GB per array).
KENDALL_BYTES = 2**27
#: The most y levels for :func:`_cross_dense`; above, :func:`_cross_fenwick` (about n log n, not n² / 32): with
#: every value distinct, 8,000 items took 10.1 s dense and 0.13 s so per 100 resamples, 13 levels 0.008 and 0.032 s.
DENSE_LEVELS = 512


def kendall(blocks: Blocks, counts_t: FloatArray, slot_counts: SlotArray) -> tuple[FloatArray, FloatArray]:
    """Numerator (concordant - discordant pairs) and squared denominator of tau-b per column of ``counts_t``."""
    hc = np.asarray(blocks.hist @ counts_t)
    if blocks.n_levels > DENSE_LEVELS:
        cross = _cross_fenwick(blocks, hc)
    else:
        step = max(1, KENDALL_BYTES // (8 * blocks.n_blocks * blocks.n_levels))
        cross = np.concatenate([_cross_dense(blocks, hc[:, i : i + step]) for i in range(0, hc.shape[1], step)])
    s = 2 * cross
    if len(blocks.slots):
        inside = _slot_products(blocks, slot_counts).sum(axis=1)  # multi blocks x b, exact per block
        s += inside.sum(axis=0, dtype=np.float64)
    wy = np.asarray(blocks.levels @ counts_t)
    n = wy.sum(axis=0)
    pairs = n * (n - 1) / 2
    x_ties = (_x_tie_power(blocks, counts_t, 2) - n) / 2
    y_ties = ((wy * wy).sum(axis=0) - n) / 2
    return s / 2, (pairs - x_ties) * (pairs - y_ties)


def _cross_dense(blocks: Blocks, hc: FloatArray) -> FloatArray:
    """Per resample: Σ over pairs of rows in two blocks of sign(dy), the later block's row first (its dx is +1)."""
    hist = np.zeros((blocks.n_blocks, blocks.n_levels, hc.shape[1]))
    hist[blocks.pair_block, blocks.pair_level] = hc
    # signed[t, g] = Σ_h sign(g - h) hist[t, h]: the weight of block t below level g minus the weight above it,
    # 2 * (inclusive cumsum) - hist - total; built in place, then summed over the earlier blocks (two arrays)
    signed = np.cumsum(hist, axis=1)
    signed *= 2
    signed -= hist
    signed -= hist.sum(axis=1, keepdims=True)
    np.cumsum(signed, axis=0, out=signed)  # row t: blocks 0..t; block t pairs with blocks before it: row t - 1
    return np.asarray(np.einsum("tgb,tgb->b", hist[1:], signed[:-1]), dtype=np.float64)


def _cross_fenwick(blocks: Blocks, hc: FloatArray) -> FloatArray:
    """:func:`_cross_dense` block by block, the earlier blocks' weight per level in a Fenwick tree (levels x b)."""
    tree = np.zeros((blocks.n_levels + 1, hc.shape[1]))
    total, cross = np.zeros(hc.shape[1]), np.zeros(hc.shape[1])
    ends = np.append(blocks.block_starts[1:], len(hc))
    for lo, hi in zip(blocks.block_starts, ends, strict=True):
        level, weight = blocks.pair_level[lo:hi], hc[lo:hi]
        below, upto = _prefix(tree, level), _prefix(tree, level + 1)  # earlier weight at levels < g, <= g
        cross += np.einsum("pb,pb->b", weight, below + upto - total)  # below - above, above = total - upto
        i = level + 1
        while (live := i < len(tree)).any():
            np.add.at(tree, i[live], weight[live])  # two pairs' paths can meet at one node
            i = np.where(live, i + (i & -i), len(tree))
        total += weight.sum(axis=0)
    return cross


def _prefix(tree: FloatArray, ends: IntArray) -> FloatArray:
    """Per index ``e`` of ``ends``: the sum of the first ``e`` levels in the Fenwick ``tree`` (one row per index)."""
    out = np.zeros((len(ends), tree.shape[1]))
    i = ends.copy()
    while (live := i > 0).any():
        out[live] += tree[i[live]]
        i = np.where(live, i - (i & -i), 0)
    return out
