"""Inter-annotator agreement: Fleiss' kappa, pairwise Cohen's kappa, Krippendorff's alpha.

All statistics take a *reliability matrix*: one row per annotator, one column per
item, ``nan`` where an annotator did not rate an item (Krippendorff's layout).
Labels are integer codes; :func:`reliability_matrix` builds the matrix from
:class:`~dialeval.schema.Rating` records. Bootstrap intervals resample items.

Example:
    >>> import numpy as np
    >>> m = np.array([[1, 2, 3, 3], [1, 2, 3, 4]], dtype=float)
    >>> round(krippendorff_alpha(m, "nominal"), 4)
    0.6957
    >>> round(cohen_kappa(m[0], m[1]), 4)
    0.6667
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Literal

import numpy as np
from numpy.typing import NDArray

from dialeval.errors import InputError, check_at_most
from dialeval.meta.bootstrap import DRAWS_PER_BLOCK, MAX_RESAMPLES, draw_count_blocks, percentile_ci
from dialeval.schema import Rating

Level = Literal["nominal", "ordinal", "interval"]
Matrix = NDArray[np.float64]
#: Resamples x items: how many times each bootstrap resample drew each item (one row of ones is the sample itself).
Draws = NDArray[np.float64]

DONT_KNOW = "I don't know"


@dataclass(frozen=True)
class Reliability:
    """A reliability matrix with its row and column names and the label codes.

    Attributes:
        matrix: Annotators x items, ``nan`` where missing.
        annotators: Row names.
        items: Column names.
        labels: For label-valued ratings, ``labels[code]`` is the label; empty for numbers.
    """

    matrix: Matrix
    annotators: tuple[str, ...]
    items: tuple[str, ...]
    labels: tuple[str, ...] = ()


def reliability_matrix(
    ratings: Iterable[Rating],
    *,
    dont_know: Literal["missing", "category", "drop_item"] = "missing",
    labels: Sequence[str] | None = None,
) -> Reliability:
    """Arrange ratings of one dimension as an annotators x items matrix.

    Args:
        ratings: Ratings of a single dimension (mixing dimensions is an error).
        dont_know: What an "I don't know" answer becomes: a missing value, its own
            category, or ``"drop_item"`` to keep only *strong judgements* (items
            where no annotator said "I don't know").
        labels: Label order for label-valued ratings (default: sorted labels seen).

    Example:
        >>> rs = [Rating(item_id=i, dimension="A", annotator=a, value=v)
        ...       for i, a, v in [("x", "a1", "pos"), ("x", "a2", "neg"), ("y", "a1", "pos")]]
        >>> r = reliability_matrix(rs)
        >>> r.labels, r.annotators, r.matrix.tolist()
        (('neg', 'pos'), ('a1', 'a2'), [[1.0, 1.0], [0.0, nan]])
    """
    rows = list(ratings)
    dims = {r.dimension for r in rows}
    if len(dims) > 1:
        raise ValueError(f"ratings of one dimension expected, got {sorted(dims)}")
    if dont_know == "drop_item":
        unsure = {r.item_id for r in rows if r.dont_know or r.value is None}
        rows = [r for r in rows if r.item_id not in unsure]

    def value_of(r: Rating) -> float | str | None:
        if r.dont_know or r.value is None:
            return DONT_KNOW if dont_know == "category" else None
        return r.value

    values = [value_of(r) for r in rows]
    is_label = any(isinstance(v, str) for v in values)
    codes: dict[str, int] = {}
    if is_label:
        order = list(labels) if labels else sorted({str(v) for v in values if v is not None} - {DONT_KNOW})
        if dont_know == "category" and DONT_KNOW not in order:
            order.append(DONT_KNOW)
        codes = {lab: i for i, lab in enumerate(order)}
    annotators = tuple(sorted({r.annotator for r in rows}))
    items = tuple(dict.fromkeys(r.item_id for r in rows))
    a_index = {a: i for i, a in enumerate(annotators)}
    i_index = {it: j for j, it in enumerate(items)}
    m = np.full((len(annotators), len(items)), np.nan)
    for r, v in zip(rows, values, strict=True):
        if v is None:
            continue
        if is_label:
            if str(v) not in codes:
                raise ValueError(f"label {v!r} of item {r.item_id!r} is not in {list(codes)}")
            m[a_index[r.annotator], i_index[r.item_id]] = codes[str(v)]
        else:
            m[a_index[r.annotator], i_index[r.item_id]] = float(v)
    return Reliability(m, annotators, items, tuple(codes))


#: Why agreement is undefined when no item has two ratings (Krippendorff's alpha, the human ceiling).
NO_ITEM_RATED_TWICE = "no item is rated by 2 annotators or more"


def pairable(matrix: Matrix) -> Matrix:
    """Return the items (columns) with two values or more: the ones agreement reads ("I don't know" is no value).

    Example:
        >>> pairable([[1, 2, np.nan], [1, np.nan, 3]]).tolist()
        [[1.0], [1.0]]
    """
    m = np.asarray(matrix, dtype=float)
    return m[:, (~np.isnan(m)).sum(axis=0) >= 2]


def rated(matrix: Matrix) -> Matrix:
    """Return the items (columns) with a value: the ones Fleiss' kappa reads (chance agreement counts them all).

    Example:
        >>> rated([[1, 2, np.nan], [1, np.nan, np.nan]]).tolist()
        [[1.0, 2.0], [1.0, nan]]
    """
    m = np.asarray(matrix, dtype=float)
    return m[:, (~np.isnan(m)).any(axis=0)]


def resample_once(n_items: int) -> Draws:
    """Return the draws of the sample itself: every item once.

    Example:
        >>> resample_once(3).tolist()
        [[1.0, 1.0, 1.0]]
    """
    return np.ones((1, n_items))


def _ratio(num: NDArray[np.float64], den: NDArray[np.float64]) -> NDArray[np.float64]:
    """``num / den``, ``nan`` where ``den`` is 0 (an undefined statistic), without numpy's warning."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(den != 0, num / den, np.nan)


def _one_value(m: Matrix, draws: Draws) -> NDArray[np.bool_]:
    """Whether each resample drew one value only (its alpha is undefined)."""
    drawn = draws > 0
    low = np.where(drawn, np.nanmin(m, axis=0, initial=np.inf), np.inf).min(axis=1, initial=np.inf)
    high = np.where(drawn, np.nanmax(m, axis=0, initial=-np.inf), -np.inf).max(axis=1, initial=-np.inf)
    return np.asarray(low >= high)


def _undefined(value: float, why: str) -> float:
    """Return ``value``, or raise ``ValueError(why)`` where it is ``nan``."""
    if np.isnan(value):
        raise ValueError(why)
    return value


def krippendorff_alpha(matrix: Matrix, level: Level = "nominal") -> float:
    """Krippendorff's alpha from the coincidence matrix (Krippendorff 2011, "Computing ...").

    Items with fewer than two ratings are ignored. For ``ordinal``, the distance
    between ranks c < k is ``(sum_{g=c..k} n_g - (n_c + n_k)/2) ** 2``.
    """
    m = pairable(matrix)
    if not m.shape[1]:  # one annotator, or one each: it said "fewer than two distinct values" of Yes and No
        raise ValueError(f"alpha is undefined: {NO_ITEM_RATED_TWICE}")
    if np.unique(m[~np.isnan(m)]).size < 2:
        raise ValueError("alpha is undefined when fewer than two distinct values occur")
    alpha = krippendorff_alpha_over_draws(m, resample_once(m.shape[1]), level)[0]
    return _undefined(float(alpha), "alpha is undefined: no expected disagreement")


def krippendorff_alpha_over_draws(matrix: Matrix, draws: Draws, level: Level = "nominal") -> NDArray[np.float64]:
    """Krippendorff's alpha of each resample in ``draws`` (``nan`` where undefined), without copying items.

    The coincidence matrix of a resample is the sum of its items' coincidences, each counted as often as drawn, so
    the observed disagreement is one product of the draws with a per-item figure (nominal, interval); ordinal
    distances depend on each resample's value counts, so it takes one small product per resample.

    Example (the module's example, and the same items drawn twice each):
        >>> m = np.array([[1, 2, 3, 3], [1, 2, 3, 4]], dtype=float)
        >>> krippendorff_alpha_over_draws(m, np.array([[1, 1, 1, 1], [2, 2, 2, 2.0]])).round(4).tolist()
        [0.6957, 0.6739]
    """
    if level not in ("nominal", "ordinal", "interval"):
        raise ValueError(f"unknown level {level!r}; use nominal, ordinal or interval")
    m = np.asarray(matrix, dtype=float)
    r = (~np.isnan(m)).sum(axis=0).astype(float)
    m, r, draws = m[:, r >= 2], r[r >= 2], draws[:, r >= 2]
    per_item = draws / (r - 1.0)  # each item's pairs weigh 1 / (m_u - 1) in the coincidence matrix
    if level == "interval":
        x = m - np.nanmean(m) if m.size else m  # centred: the squares below lose nothing to a large offset
        spread = np.nansum((x - np.nansum(x, axis=0) / r) ** 2, axis=0)
        d_o = per_item @ (2.0 * r * spread)
        n, s1, s2 = draws @ r, draws @ np.nansum(x, axis=0), draws @ np.nansum(x**2, axis=0)
        d_e = np.where(_one_value(m, draws), 0.0, 2.0 * (n * s2 - s1**2))  # exactly 0 where it is, not a rounding
        return 1.0 - _ratio(d_o * (n - 1.0), d_e)
    counts = category_counts(m)
    n_c = draws @ counts
    n = n_c.sum(axis=1)
    if level == "nominal":
        d_o = per_item @ (r**2 - (counts**2).sum(axis=1))
        return 1.0 - _ratio(d_o * (n - 1.0), n**2 - (n_c**2).sum(axis=1))
    out = np.empty(draws.shape[0])
    lo = np.minimum.outer(np.arange(counts.shape[1]), np.arange(counts.shape[1]))
    hi = np.maximum.outer(np.arange(counts.shape[1]), np.arange(counts.shape[1]))
    for b in range(draws.shape[0]):
        cum = np.concatenate([[0.0], np.cumsum(n_c[b])])
        delta = (cum[hi + 1] - cum[lo] - (n_c[b][lo] + n_c[b][hi]) / 2) ** 2
        d_o = float(((counts.T * per_item[b]) @ counts * delta).sum())
        out[b] = 1.0 - _ratio(np.array(d_o * (n[b] - 1.0)), np.array((np.outer(n_c[b], n_c[b]) * delta).sum()))
    return out


def cohen_kappa(a: Sequence[float] | NDArray[np.float64], b: Sequence[float] | NDArray[np.float64]) -> float:
    """Cohen's kappa of two annotators over the items both rated (``nan`` = not rated)."""
    x, y = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    both = ~np.isnan(x) & ~np.isnan(y)
    if not both.any():
        raise ValueError("the two annotators share no rated item")
    kappa = _kappa_over_draws(x[both], y[both], resample_once(int(both.sum())))[0]
    return _undefined(float(kappa), "kappa is undefined: both annotators always use one and the same label")


def _kappa_over_draws(x: NDArray[np.float64], y: NDArray[np.float64], draws: Draws) -> NDArray[np.float64]:
    """Cohen's kappa of labels ``x`` and ``y`` (items both rated) in each resample; ``nan`` where undefined."""
    cats = np.unique(np.concatenate([x, y]))
    x_counts, y_counts = draws @ (x[:, None] == cats), draws @ (y[:, None] == cats)
    return _kappa(draws @ (x == y), draws.sum(axis=1), (x_counts * y_counts).sum(axis=1))


def _kappa(agree: NDArray[np.float64], n: NDArray[np.float64], chance: NDArray[np.float64]) -> NDArray[np.float64]:
    """Cohen's kappa from drawn counts; ``nan`` where undefined (no item, or one label only).

    ``agree`` of ``n`` items agree; ``chance`` is the sum over labels of the two annotators' counts multiplied.
    """
    p_o, p_e = _ratio(agree, n), _ratio(chance, n**2)
    return np.where(p_e < 1.0, _ratio(p_o - p_e, 1.0 - p_e), np.nan)


def mean_pairwise_cohen_kappa(matrix: Matrix) -> float:
    """Return the mean of :func:`cohen_kappa` over the pairs of annotators sharing two items or more, where defined.

    It is :func:`mean_pairwise_cohen_kappa_over_draws` of the sample itself.
    """
    m = np.asarray(matrix, dtype=float)
    kappa = mean_pairwise_cohen_kappa_over_draws(m, resample_once(m.shape[1]))[0]
    return _undefined(float(kappa), "no pair of annotators has a defined kappa")


def _shared_ratings(m: Matrix) -> tuple[NDArray[np.intp], int, NDArray[np.intp], NDArray[np.intp], NDArray[np.intp]]:
    """Every rating two annotators share: its pair, the number of pairs, the two label codes and the item.

    Pairs are numbered in ``itertools.combinations`` order, counting the pairs that share an item only.
    """
    rated = ~np.isnan(m)
    cats = np.unique(m[rated])
    found = [(np.zeros(0, np.intp),) * 3]
    for i in range(m.shape[0] - 1):  # the items i rated, against the annotators after i: small where few rate each
        cols = np.flatnonzero(rated[i])
        j, t = np.nonzero(rated[i + 1 :, cols])
        found.append((np.full(j.size, i), j + i + 1, cols[t]))
    first, second, item = (np.concatenate(v).astype(np.intp) for v in zip(*found, strict=True))
    keys, pair = np.unique(first * m.shape[0] + second, return_inverse=True)
    codes = np.searchsorted(cats, m[first, item]), np.searchsorted(cats, m[second, item])
    return pair.astype(np.intp), keys.size, *codes, item


def mean_pairwise_cohen_kappa_over_draws(matrix: Matrix, draws: Draws) -> NDArray[np.float64]:
    """:func:`mean_pairwise_cohen_kappa` of each resample in ``draws`` (``nan`` where no pair's kappa is defined).

    A pair counts in a resample where it shares two distinct drawn items or more, as in the sample: one item drawn
    twice gives a kappa of 0 (two labels) or none (one), and where annotators share few items such pairs pulled
    every resample's mean down (200 annotators, 3 per item: the 95% CI was [0.066, 0.088] around 0.196). Every
    pair's counts come from one sparse product of the draws with the (pair, count) x items incidence, so the cost
    follows the ratings pairs share, not the number of pairs (200 annotators, 30,000 items: 2.4 s per 1,000
    resamples, where a loop over the pairs took 138 s).

    Example:
        >>> m = np.array([[0, 1, 0, 1], [0, 1, 1, 1]], dtype=float)
        >>> mean_pairwise_cohen_kappa_over_draws(m, np.array([[1, 1, 1, 1], [2, 0, 0, 2.0]])).round(4).tolist()
        [0.5, 1.0]
    """
    from scipy import sparse

    m = np.asarray(matrix, dtype=float)
    pair, n_pairs, x, y, item = _shared_ratings(m)
    n_cats = int(max(x.max(initial=-1), y.max(initial=-1))) + 1
    same = x == y  # the counts, n_pairs each: [shared, agreeing, x's label c for each c, y's label c for each c]
    count = np.concatenate([pair, n_pairs + pair[same], (2 + x) * n_pairs + pair, (2 + n_cats + y) * n_pairs + pair])
    counted = np.concatenate([item, item[same], item, item])
    width = (2 + 2 * n_cats) * n_pairs
    incidence = sparse.csr_matrix((np.ones(count.size), (count, counted)), shape=(width, m.shape[1]))
    shared = incidence[:n_pairs]  # pairs x items: which items each pair shares
    total, defined = np.zeros(draws.shape[0]), np.zeros(draws.shape[0])
    step = max(1, DRAWS_PER_BLOCK // max(width, 1))  # resamples whose counts fill a block
    for s in range(0, draws.shape[0], step):
        d = draws[s : s + step]
        sums = (incidence @ d.T).T.reshape(len(d), 2 + 2 * n_cats, n_pairs)
        chance = (sums[:, 2 : 2 + n_cats] * sums[:, 2 + n_cats :]).sum(axis=1)
        kappa = _kappa(sums[:, 1], sums[:, 0], chance)
        kappa[(shared @ (d > 0).T.astype(float)).T < 2] = np.nan  # two items, not one drawn twice
        total[s : s + step] = np.nan_to_num(kappa).sum(axis=1)
        defined[s : s + step] = (~np.isnan(kappa)).sum(axis=1)
    return _ratio(total, defined)


def category_counts(matrix: Matrix) -> Matrix:
    """Items x categories table of how many annotators chose each category (Fleiss' input).

    Example:
        >>> category_counts([[0, 1, 2], [0, 2, np.nan]]).tolist()
        [[2.0, 0.0, 0.0], [0.0, 1.0, 1.0], [0.0, 0.0, 1.0]]
    """
    m = np.asarray(matrix, dtype=float)
    rated = ~np.isnan(m)
    cats, codes = np.unique(m[rated], return_inverse=True)
    item = np.broadcast_to(np.arange(m.shape[1]), m.shape)[rated]
    counts = np.bincount(item * cats.size + codes, minlength=m.shape[1] * cats.size)
    return counts.reshape(m.shape[1], cats.size).astype(float)


def fleiss_kappa(matrix: Matrix) -> float:
    """Fleiss' kappa (Fleiss 1971), over items rated by any number of annotators (Gwet 2014).

    With the same number of ratings on every item it is Fleiss' formula. Otherwise it is Gwet's
    generalisation (*Handbook of Inter-Rater Reliability*, 4th ed., 2014; irrCAC's ``fleiss``): the
    observed agreement averages each item's share of agreeing rater pairs over the items rated twice
    or more, and the chance agreement takes each category's share of every item's ratings. Items with
    fewer ratings than the most-rated one were left out before, silently: one item rated once more than
    the others left kappa to that item, and an "I don't know" (a missing rating) left its item out.

    Example (by hand: observed 0.75 over the four items, the third 0 of its one pair; chance
    0.375² + 0.625²; left out, the third item made it 1.0):
        >>> round(fleiss_kappa(np.array([[0, 1, 0, 1], [0, 1, 1, 1], [0, 1, np.nan, 1]])), 4)
        0.4667
    """
    m = np.asarray(matrix, dtype=float)
    if np.isnan(m).all():
        raise ValueError("Fleiss' kappa needs ratings")
    if not ((~np.isnan(m)).sum(axis=0) >= 2).any():
        raise ValueError("Fleiss' kappa needs an item with at least two ratings")
    kappa = fleiss_kappa_over_draws(m, resample_once(m.shape[1]))[0]
    return _undefined(float(kappa), "kappa is undefined: every rating has the same label")


def fleiss_kappa_over_draws(matrix: Matrix, draws: Draws) -> NDArray[np.float64]:
    """:func:`fleiss_kappa` of each resample in ``draws`` (``nan`` where undefined).

    Example (the example of :func:`fleiss_kappa`, then its second and fourth items only):
        >>> m = np.array([[0, 1, 0, 1], [0, 1, 1, 1], [0, 1, np.nan, 1]])
        >>> fleiss_kappa_over_draws(m, np.array([[1, 1, 1, 1], [0, 1, 0, 1.0]])).round(4).tolist()
        [0.4667, nan]
    """
    table = category_counts(matrix)
    r = table.sum(axis=1)
    pairs = r >= 2
    agree = np.where(pairs, (table * (table - 1)).sum(axis=1) / np.where(pairs, r * (r - 1), 1), 0.0)
    p_a = _ratio(draws @ agree, draws @ pairs)
    p_e = (_ratio(draws @ (table / np.where(r > 0, r, 1)[:, None]), (draws @ (r > 0))[:, None]) ** 2).sum(axis=1)
    return np.where(p_e < 1.0, _ratio(p_a - p_e, 1.0 - p_e), np.nan)


@dataclass(frozen=True)
class Estimate:
    """A statistic with a percentile bootstrap interval over items."""

    value: float
    low: float
    high: float
    n_items: int
    n_boot: int


def check_resamples(n_boot: int, field: str = "n_boot") -> None:
    """Refuse fewer than one bootstrap resample (a CI is made of them), or more than the most we take.

    The most is :data:`~dialeval.meta.bootstrap.MAX_RESAMPLES`.

    Example:
        >>> check_resamples(0, field="--n-boot")
        Traceback (most recent call last):
        ...
        dialeval.errors.InputError: field "--n-boot": must be at least 1 (the bootstrap resamples of the CIs), got 0
    """
    if n_boot < 1:
        raise InputError(f"must be at least 1 (the bootstrap resamples of the CIs), got {n_boot}", field=field)
    check_at_most(n_boot, MAX_RESAMPLES, field, unit="resamples")


def bootstrap(
    statistic: Callable[[Matrix, Draws], NDArray[np.float64]],
    matrix: Matrix,
    *,
    n_boot: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
    items: Callable[[Matrix], Matrix] = pairable,
) -> Estimate:
    """Percentile bootstrap CI of ``statistic``, resampling items (columns).

    ``items`` keeps the columns the statistic reads, and the resamples draw those: :func:`pairable` (two values
    or more) for alpha and Cohen's kappa, :func:`rated` for Fleiss' kappa, whose chance agreement counts an item
    with one value too. Every statistic was given the pairable items before, so the report's Fleiss' kappa left
    such items out (0.067 where the live figure and irrCAC say 0.040).

    ``statistic`` takes the matrix and draws (one of the ``*_over_draws`` functions): a block of resamples is one
    call, where copying each resample's columns made a call each. The resamples are those of the metric CIs
    (:func:`~dialeval.meta.bootstrap.draw_counts`), drawn block by block. Resamples where the statistic is undefined are
    dropped; if more than half are, the interval is reported as undefined (``nan`` bounds are never produced: a
    ``ValueError`` is raised instead), as is a statistic undefined on the sample. Fewer than one resample is an
    :class:`InputError`.

    Example:
        >>> m = np.array([[0, 1, 0, 1, 1, 0], [0, 1, 0, 1, 0, 0]], dtype=float)
        >>> e = bootstrap(krippendorff_alpha_over_draws, m, n_boot=200)
        >>> bool(e.low <= e.value <= e.high)
        True
    """
    check_resamples(n_boot)
    m = items(matrix)
    value = _undefined(float(statistic(m, resample_once(m.shape[1]))[0]), "the statistic is undefined on these ratings")
    blocks = draw_count_blocks(m.shape[1], n_boot, seed, rows=max(1, DRAWS_PER_BLOCK // m.shape[1]))
    got = np.concatenate([statistic(m, block.astype(float)) for block in blocks])
    defined = int(np.isfinite(got).sum())
    if defined < n_boot / 2:
        raise ValueError(f"statistic undefined on {n_boot - defined} of {n_boot} resamples")
    low, high = percentile_ci(got, confidence)
    return Estimate(value, low, high, m.shape[1], defined)


#: A statistic of agreement: its value on a matrix, its values over blocks of resamples, and the items (columns)
#: both read (see :func:`bootstrap`).
Statistic = tuple[Callable[[Matrix], float], Callable[[Matrix, Draws], NDArray[np.float64]], Callable[[Matrix], Matrix]]


def _statistics(level: Level) -> dict[str, Statistic]:
    """Return the statistics of one dimension by name: alpha at ``level``; for ``nominal`` the kappas too.

    Fleiss' kappa reads every item with a value (its chance agreement counts an item with one), the others the
    items with two values or more. :func:`agreement_figures` and :func:`agreement_report` each wrote this out.

    Example:
        >>> list(_statistics("nominal")), list(_statistics("interval"))
        (['krippendorff_alpha_nominal', 'fleiss_kappa', 'cohen_kappa_mean'], ['krippendorff_alpha_interval'])
    """
    out: dict[str, Statistic] = {f"krippendorff_alpha_{level}": (
        partial(krippendorff_alpha, level=level), partial(krippendorff_alpha_over_draws, level=level), pairable)}
    if level == "nominal":  # kappas ignore order
        out["fleiss_kappa"] = (fleiss_kappa, fleiss_kappa_over_draws, rated)
        out["cohen_kappa_mean"] = (mean_pairwise_cohen_kappa, mean_pairwise_cohen_kappa_over_draws, pairable)
    return out


@dataclass(frozen=True)
class Figure:
    """A statistic on the sample and its CI, or why either is undefined.

    Attributes:
        value: The statistic (None where undefined on these ratings).
        ci: The percentile CI (None where undefined on more than half of the resamples, or where ``value`` is).
        why: Why ``value`` or ``ci`` is undefined ("" when neither is); ``no CI: ...`` where only the CI is.
    """

    value: float | None
    ci: tuple[float, float] | None
    why: str = ""


def figure(
    point: Callable[[Matrix], float],
    statistic: Callable[[Matrix, Draws], NDArray[np.float64]],
    matrix: Matrix,
    *,
    n_boot: int = 1000,
    seed: int = 0,
    items: Callable[[Matrix], Matrix] = pairable,
) -> Figure:
    """Return ``point(matrix)`` with the :func:`bootstrap` CI of ``statistic``; a figure without a CI is kept.

    Example (two items, alpha 1, but half the resamples draw one item twice: no CI):
        >>> f = figure(krippendorff_alpha, krippendorff_alpha_over_draws, np.array([[0, 1.0], [0, 1]]), n_boot=20)
        >>> f.value, f.ci, f.why
        (1.0, None, 'no CI: statistic undefined on 11 of 20 resamples')
    """
    try:
        value = point(matrix)
    except ValueError as exc:  # "alpha is undefined when ..."
        return Figure(None, None, str(exc))
    try:
        est = bootstrap(statistic, matrix, n_boot=n_boot, seed=seed, items=items)
    except ValueError as exc:
        return Figure(value, None, f"no CI: {exc}")
    return Figure(value, (est.low, est.high))


def agreement_figures(
    matrix: Matrix, level: Level = "nominal", *, n_boot: int = 1000, seed: int = 0
) -> tuple[int, dict[str, Figure]]:
    """Krippendorff's alpha, and for ``nominal`` Fleiss' and mean pairwise Cohen's kappa, each a :class:`Figure`.

    Returns the number of items with two values or more, and the figures by name (as :func:`agreement_report`),
    each kept where its CI is undefined (a report drops no defined figure) and where it is undefined itself.
    """
    out = {name: figure(point, over_draws, matrix, n_boot=n_boot, seed=seed, items=items)
           for name, (point, over_draws, items) in _statistics(level).items()}  # fmt: skip
    return pairable(matrix).shape[1], out


def agreement_report(
    ratings: Iterable[Rating],
    *,
    level: Level = "nominal",
    strong_only: bool = False,
    n_boot: int = 1000,
    seed: int = 0,
) -> dict[str, Estimate]:
    """Fleiss' kappa, mean pairwise Cohen's kappa and Krippendorff's alpha for one dimension.

    Statistics that are undefined on these ratings, or whose CI is, are left out of the result
    (:func:`agreement_figures` keeps a figure without a CI).
    Kappas are computed only for ``level="nominal"`` (they ignore order).
    """
    rel = reliability_matrix(ratings, dont_know="drop_item" if strong_only else "missing")
    out: dict[str, Estimate] = {}
    for name, (_, over_draws, items) in _statistics(level).items():
        try:
            out[name] = bootstrap(over_draws, rel.matrix, n_boot=n_boot, seed=seed, items=items)
        except ValueError:
            continue
    return out
