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

import itertools
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
from numpy.typing import NDArray

from dialeval.errors import InputError, check_at_most
from dialeval.meta.bootstrap import MAX_RESAMPLES
from dialeval.schema import Rating

Level = Literal["nominal", "ordinal", "interval"]
Matrix = NDArray[np.float64]

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


def krippendorff_alpha(matrix: Matrix, level: Level = "nominal") -> float:
    """Krippendorff's alpha from the coincidence matrix (Krippendorff 2011, "Computing ...").

    Items with fewer than two ratings are ignored. For ``ordinal``, the distance
    between ranks c < k is ``(sum_{g=c..k} n_g - (n_c + n_k)/2) ** 2``.
    """
    m = pairable(matrix)
    values = np.unique(m[~np.isnan(m)])
    if values.size < 2:
        raise ValueError("alpha is undefined when fewer than two distinct values occur")
    counts = np.stack([(m == v).sum(axis=0) for v in values], axis=1).astype(float)  # items x values
    weight = 1.0 / (counts.sum(axis=1) - 1.0)
    o = (counts * weight[:, None]).T @ counts - np.diag((counts * weight[:, None]).sum(axis=0))
    n_c = o.sum(axis=1)
    n = n_c.sum()
    if level == "nominal":
        delta = 1.0 - np.eye(values.size)
    elif level == "interval":
        delta = (values[:, None] - values[None, :]) ** 2
    elif level == "ordinal":
        cum = np.concatenate([[0.0], np.cumsum(n_c)])
        lo = np.minimum.outer(np.arange(values.size), np.arange(values.size))
        hi = np.maximum.outer(np.arange(values.size), np.arange(values.size))
        delta = (cum[hi + 1] - cum[lo] - (n_c[lo] + n_c[hi]) / 2) ** 2
    else:
        raise ValueError(f"unknown level {level!r}; use nominal, ordinal or interval")
    d_o = float((o * delta).sum())
    d_e = float((np.outer(n_c, n_c) * delta).sum()) / (n - 1)
    if d_e == 0:
        raise ValueError("alpha is undefined: no expected disagreement")
    return float(1.0 - d_o / d_e)


def cohen_kappa(a: Sequence[float] | NDArray[np.float64], b: Sequence[float] | NDArray[np.float64]) -> float:
    """Cohen's kappa of two annotators over the items both rated (``nan`` = not rated)."""
    x, y = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    both = ~np.isnan(x) & ~np.isnan(y)
    x, y = x[both], y[both]
    if x.size == 0:
        raise ValueError("the two annotators share no rated item")
    cats = np.unique(np.concatenate([x, y]))
    p_o = float(np.mean(x == y))
    p_e = float(sum(np.mean(x == c) * np.mean(y == c) for c in cats))
    if p_e == 1.0:
        raise ValueError("kappa is undefined: both annotators always use one and the same label")
    return (p_o - p_e) / (1.0 - p_e)


def pairwise_cohen_kappa(matrix: Matrix, min_shared: int = 2) -> dict[tuple[int, int], float]:
    """Cohen's kappa for every pair of annotators (row indices) sharing ``min_shared`` items.

    Pairs whose kappa is undefined (one constant label) are left out.
    """
    m = np.asarray(matrix, dtype=float)
    out: dict[tuple[int, int], float] = {}
    for i, j in itertools.combinations(range(m.shape[0]), 2):
        if int((~np.isnan(m[i]) & ~np.isnan(m[j])).sum()) < min_shared:
            continue
        try:
            out[(i, j)] = cohen_kappa(m[i], m[j])
        except ValueError:
            continue
    return out


def mean_pairwise_cohen_kappa(matrix: Matrix) -> float:
    """Return the mean of :func:`pairwise_cohen_kappa` over all defined pairs."""
    pairs = pairwise_cohen_kappa(matrix)
    if not pairs:
        raise ValueError("no pair of annotators has a defined kappa")
    return float(np.mean(list(pairs.values())))


def category_counts(matrix: Matrix) -> Matrix:
    """Items x categories table of how many annotators chose each category (Fleiss' input)."""
    m = np.asarray(matrix, dtype=float)
    cats = np.unique(m[~np.isnan(m)])
    return np.stack([(m == c).sum(axis=0) for c in cats], axis=1).astype(float)


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
    table = category_counts(m)
    r = table.sum(axis=1)
    table, r = table[r > 0], r[r > 0]
    pairs = r >= 2
    if not pairs.any():
        raise ValueError("Fleiss' kappa needs an item with at least two ratings")
    p_a = float(((table[pairs] * (table[pairs] - 1)).sum(axis=1) / (r[pairs] * (r[pairs] - 1))).mean())
    p_e = float(((table / r[:, None]).mean(axis=0) ** 2).sum())
    if p_e == 1.0:
        raise ValueError("kappa is undefined: every rating has the same label")
    return (p_a - p_e) / (1.0 - p_e)


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
    statistic: Callable[[Matrix], float],
    matrix: Matrix,
    *,
    n_boot: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
) -> Estimate:
    """Percentile bootstrap CI of ``statistic``, resampling items (columns).

    Resamples where the statistic is undefined are dropped; if more than half are,
    the interval is reported as undefined (``nan`` bounds are never produced: a
    ``ValueError`` is raised instead). Fewer than one resample is an :class:`InputError`.

    Example:
        >>> m = np.array([[0, 1, 0, 1, 1, 0], [0, 1, 0, 1, 0, 0]], dtype=float)
        >>> e = bootstrap(lambda x: krippendorff_alpha(x, "nominal"), m, n_boot=200)
        >>> bool(e.low <= e.value <= e.high)
        True
    """
    check_resamples(n_boot)
    m = pairable(matrix)
    value = statistic(m)
    rng = np.random.default_rng(seed)
    stats: list[float] = []
    for _ in range(n_boot):
        cols = rng.integers(0, m.shape[1], size=m.shape[1])
        try:
            stats.append(statistic(m[:, cols]))
        except ValueError:
            continue
    if len(stats) < n_boot / 2:
        raise ValueError(f"statistic undefined on {n_boot - len(stats)} of {n_boot} resamples")
    tail = (1.0 - confidence) / 2 * 100
    low, high = np.percentile(stats, [tail, 100 - tail])
    return Estimate(value, float(low), float(high), m.shape[1], len(stats))


def agreement_report(
    ratings: Iterable[Rating],
    *,
    level: Level = "nominal",
    strong_only: bool = False,
    n_boot: int = 1000,
    seed: int = 0,
) -> dict[str, Estimate]:
    """Fleiss' kappa, mean pairwise Cohen's kappa and Krippendorff's alpha for one dimension.

    Statistics that are undefined on these ratings are left out of the result.
    Kappas are computed only for ``level="nominal"`` (they ignore order).
    """
    rel = reliability_matrix(ratings, dont_know="drop_item" if strong_only else "missing")
    out: dict[str, Estimate] = {}
    stats: dict[str, Callable[[Matrix], float]] = {
        f"krippendorff_alpha_{level}": lambda x: krippendorff_alpha(x, level)
    }
    if level == "nominal":
        stats["fleiss_kappa"] = fleiss_kappa
        stats["cohen_kappa_mean"] = mean_pairwise_cohen_kappa
    for name, fn in stats.items():
        try:
            out[name] = bootstrap(fn, rel.matrix, n_boot=n_boot, seed=seed)
        except ValueError:
            continue
    return out
