"""Test whether metric A is closer to the humans than metric B on the same items.

Two tests: a paired cluster bootstrap of the difference in correlation (any level and
method; both metrics see the same resamples), and Williams' test for dependent
correlations sharing one variable (turn level, Pearson), as recommended for MT metrics
by Graham & Baldwin (2014), "Testing for Significance of Increased Correlation with
Human Judgment", EMNLP 2014.

Example:
    >>> r = williams_test(r12=0.6, r13=0.4, r23=0.5, n=100)
    >>> round(r.t, 4), r.df
    (2.4487, 97)
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from dialeval.errors import InputError
from dialeval.meta.align import Aligned, align
from dialeval.meta.bootstrap import draw_counts, percentile_ci
from dialeval.meta.correlate import check_boot, check_names, one_cluster_note, undefined_resamples_note
from dialeval.meta.levels import RowLevel, prepare
from dialeval.schema import Rating, Score
from dialeval.words import figure


@dataclass(frozen=True)
class WilliamsResult:
    """Williams' t for H1: corr(human, A) > corr(human, B)."""

    t: float
    df: int
    p_one_sided: float


#: Williams' t has ``n - 3`` degrees of freedom: it needs more items than this.
WILLIAMS_FEWEST = 3


def williams_test(r12: float, r13: float, r23: float, n: int) -> WilliamsResult:
    """Williams' test (Williams 1959; Graham & Baldwin 2014, Eq. 1) of r12 > r13 given r23.

    Args:
        r12: Correlation of the humans (1) with metric A (2).
        r13: Correlation of the humans with metric B (3).
        r23: Correlation between the two metrics.
        n: Number of items.

    Returns:
        t with ``n - 3`` degrees of freedom and the one-sided p-value of A > B.
    """
    from scipy import stats

    if n <= WILLIAMS_FEWEST:
        raise InputError(f"Williams' test needs more than {WILLIAMS_FEWEST} items, got {n}", field="n")
    det = 1 - r12**2 - r13**2 - r23**2 + 2 * r12 * r13 * r23
    mean = (r12 + r13) / 2
    denom = 2 * (n - 1) / (n - 3) * det + mean**2 * (1 - r23) ** 3
    t = (r12 - r13) * math.sqrt((n - 1) * (1 + r23)) / math.sqrt(denom) if denom > 0 else 0.0
    return WilliamsResult(t=t, df=n - 3, p_one_sided=float(stats.t.sf(t, n - 3)))


@dataclass(frozen=True)
class ComparisonResult:
    """A paired comparison of two metrics' correlation with the humans.

    Attributes:
        difference: value_a - value_b on the same items.
        ci_low: 95% paired cluster-bootstrap interval of the difference.
        p_value: Two-sided bootstrap p-value, 2·min(P(d ≤ 0), P(d ≥ 0)), at most 1.
        williams_t: Williams' t (turn level, Pearson only; else None).
        williams_p: Its one-sided p-value for A > B.
        note: Why the difference is undefined, where it is ("" elsewhere).
    """

    metric_a: str
    metric_b: str
    dimension: str
    level: str
    method: str
    value_a: float | None
    value_b: float | None
    difference: float | None
    ci_low: float | None
    ci_high: float | None
    p_value: float | None
    n_items: int
    n_boot: int
    williams_t: float | None = None
    williams_p: float | None = None
    note: str = ""

    def to_dict(self) -> dict[str, Any]:
        """Return a JSON-serialisable dict."""
        return dict(self.__dict__)


#: The note of a paired comparison asked for no resamples (``n_boot=0``, ``meta --n-boot 0``).
NO_BOOTSTRAP = "no CI or bootstrap p: the bootstrap is off (--n-boot 0)"


def paired_p_value(diffs: np.ndarray) -> float:
    """Two-sided bootstrap p-value of a zero difference from the resampled differences.

    Twice the smaller tail, counted with the +1 of a Monte Carlo p-value, as sacrebleu's paired tests count
    theirs (``(c + 1) / (n + 1)``, from MultEval): B resamples on one side of zero give 2 / (B + 1), not 0,
    which no finite number of resamples can show.

    Example:
        >>> paired_p_value(np.array([0.1, 0.2, -0.1, 0.3]))  # 2 * (1 + 1) / (4 + 1)
        0.8
        >>> round(paired_p_value(np.full(999, 0.1)), 6)  # 2 / 1000, where it said 0.0
        0.002
    """
    d = diffs[np.isfinite(diffs)]
    if d.size == 0:
        return float("nan")
    tail = min(int((d <= 0).sum()), int((d >= 0).sum()))
    return float(min(1.0, 2 * (tail + 1) / (d.size + 1)))


def _undefined_note(points: dict[str, Any]) -> str:
    """Name each metric whose correlation is undefined, with the reason (the first part of its note)."""
    return "; ".join(f"{m}: {pt.note.split('; ')[0]}" for m, pt in points.items() if pt.value is None)


def _nothing_paired(aligned: Aligned, metric_a: str, metric_b: str) -> str:
    """Say why no item has a score of both metrics and a rating: a metric with no value at all, or no item in common.

    Each metric's note said "undefined: no item with both a score and a rating", also of a metric with such items:
    the test is over the items both score.
    """
    why = f'no item rated on "{aligned.dimension}" has a score of both'
    for metric in (metric_a, metric_b):
        if not aligned.items[metric].notna().any():
            null = aligned.counts[f"scores_missing_value:{metric}"]
            why = f"{metric} has no score with a value (its {null} are null)"
            break
    return f"{metric_a} and {metric_b} are not compared: {why}"


def compare_metrics(
    scores: Sequence[Score],
    ratings: Sequence[Rating],
    *,
    metric_a: str,
    metric_b: str,
    dimension: str,
    level: str = "turn",
    method: str = "pearson",
    n_boot: int = 1000,
    seed: int = 0,
) -> ComparisonResult:
    """Test whether ``metric_a`` correlates better with the humans than ``metric_b`` on the same items."""
    check_boot(n_boot, seed=seed, seed_field="seed")
    (typed_method,) = check_names([level], [method])
    aligned = align(scores, ratings, dimension=dimension, metrics=[metric_a, metric_b])
    data = prepare(aligned.items, aligned.dialogue_human, level, [metric_a, metric_b])
    a, b = data.point(metric_a, typed_method), data.point(metric_b, typed_method)
    diff = a.value - b.value if a.value is not None and b.value is not None else None
    lo = hi = p = None
    no_ci = NO_BOOTSTRAP if diff is not None and n_boot == 0 else ""  # it read "[n/a, n/a]" as if the bootstrap failed
    if diff is not None and n_boot > 0 and data.n_clusters < 2:  # "[n/a, n/a], bootstrap p = n/a", unexplained
        no_ci = one_cluster_note(level, "CI or bootstrap p")
    if diff is not None and n_boot > 0 and data.n_clusters > 1:
        counts = draw_counts(data.n_clusters, n_boot, seed)
        diffs = data.resample(metric_a, typed_method, counts) - data.resample(metric_b, typed_method, counts)
        if np.isfinite(diffs).any():
            lo, hi = percentile_ci(diffs)
            p = paired_p_value(diffs)
        else:  # p was NaN, and "[n/a, n/a], bootstrap p = n/a" said nothing more
            no_ci = undefined_resamples_note(n_boot, "the difference", "CI or bootstrap p")
    wt, wp, no_williams = _williams(data, metric_a, metric_b, a.value, b.value, level, method)
    return ComparisonResult(
        metric_a=metric_a,
        metric_b=metric_b,
        dimension=dimension,
        level=level,
        method=method,
        value_a=a.value,
        value_b=b.value,
        difference=diff,
        ci_low=lo,
        ci_high=hi,
        p_value=p,
        n_items=data.n_items,
        n_boot=n_boot,
        williams_t=wt,
        williams_p=wp,
        note=_nothing_paired(aligned, metric_a, metric_b) if data.n_items == 0 else
        "; ".join(filter(None, [_undefined_note({metric_a: a, metric_b: b}), no_ci, no_williams])),
    )


def _williams(
    data: Any, metric_a: str, metric_b: str, r12: float | None, r13: float | None, level: str, method: str
) -> tuple[float | None, float | None, str]:
    """Return Williams' t and p of the turn-level Pearson correlations ``r12`` and ``r13`` (else None), and a note.

    The note says why there is none where both correlations are defined on 3 items or fewer: it was Williams'
    error ('field "n": ... needs more than 3 items'), and ``meta --compare`` printed nothing else; or where the two
    metrics correlate perfectly with each other, where its t is 0/0.
    """
    if level != "turn" or method != "pearson" or not isinstance(data, RowLevel) or r12 is None or r13 is None:
        return None, None, ""
    n = len(data.y)
    if n <= WILLIAMS_FEWEST:
        return None, None, f"no Williams test: {n} items, it needs more than {WILLIAMS_FEWEST}"
    r23 = float(np.corrcoef(data.x[metric_a], data.x[metric_b])[0, 1])
    if not np.isfinite(r23):
        return None, None, ""
    if abs(r23) > 1 - 1e-9:  # |R| = 0 and 1 + r23 = 0 or r12 = r13: it printed t = 0.000 (p = 0.500)
        perfectly = f"the two metrics correlate perfectly with each other (r = {figure(r23)})"
        return None, None, f"no Williams test: {perfectly}, where its t is 0/0"
    w = williams_test(r12, r13, r23, n)
    return w.t, w.p_one_sided, ""


def paired_line(p: dict[str, Any]) -> str:
    """One line for the paired test (``meta --compare``; ``report`` shows it from compare.json).

    Example:
        >>> print(paired_line({"level": "turn", "method": "pearson", "n_items": 5, "metric_a": "a", "metric_b": "b",
        ...                     "difference": -1e-17, "ci_low": 0.0, "ci_high": 0.0, "p_value": 1.0}))
        paired test (turn pearson, 5 items): a - b = 0.000 [0.000, 0.000], bootstrap p = 1.000
    """
    if p["n_items"] == 0 and p.get("note"):  # "a - b = n/a [n/a, n/a], bootstrap p = n/a" over no item
        return f"paired test ({p['level']} {p['method']}): {p['note']}"
    return (  # figure: a difference of two equal correlations printed "-0.000"
        f"paired test ({p['level']} {p['method']}, {p['n_items']} items): {p['metric_a']} - {p['metric_b']} = "
        f"{figure(p['difference'])} [{figure(p['ci_low'])}, {figure(p['ci_high'])}], "
        f"bootstrap p = {figure(p['p_value'])}"
        + (f", Williams t = {figure(p['williams_t'])} (p = {figure(p['williams_p'])})"
           if p.get("williams_t") is not None else "")
        + (f" ({p['note']})" if p.get("note") else "")
    )
