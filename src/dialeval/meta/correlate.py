"""Metric-human correlation tables: four levels, three methods, cluster-bootstrap CIs, breakdowns.

Example:
    >>> from dialeval.schema import Rating, Score
    >>> scores = [Score(item_id=f"c{c}s{s}", metric="m", value=float(s * (c + 1)), context_id=f"c{c}", system=f"s{s}")
    ...           for c in range(4) for s in range(3)]
    >>> ratings = [Rating(item_id=f"c{c}s{s}", dimension="Overall", annotator="w", value=s + (c % 2))
    ...            for c in range(4) for s in range(3)]
    >>> rows = correlation_table(scores, ratings, dimension="Overall", levels=("sample",), methods=("pearson",))
    >>> round(rows[0].value, 6), rows[0].n_groups
    (1.0, 4)
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace

import numpy as np

from dialeval.errors import InputError, check_at_most, check_seed, check_whole, closest, ensure_unique
from dialeval.meta.align import TAG_PREFIX, Aligned, align
from dialeval.meta.bootstrap import (
    EXACT_SPEARMAN_MAX,
    MAX_RESAMPLES,
    METHODS,
    Method,
    draw_counts,
    percentile_ci,
    spearman_exact_p,
)
from dialeval.meta.levels import LEVELS, Level, RowLevel, SystemLevel, names_no_dialogue, names_no_system, prepare
from dialeval.meta.rows import CorrelationRow
from dialeval.schema import Rating, Score
from dialeval.signature import make_signature
from dialeval.words import counted, in_order

BOOT_UNIT = {"turn": "context", "sample": "context", "dialogue": "dialogue", "system": "context"}


def one_cluster_note(level: str, missing: str = "CI") -> str:
    """Say why a figure of ``level`` has no interval: the bootstrap resamples clusters, and there is one.

    Example:
        >>> one_cluster_note("dialogue", "CI or bootstrap p")
        'no CI or bootstrap p: the items come from one dialogue, and the bootstrap resamples dialogues'
    """
    unit = BOOT_UNIT[level]
    return f"no {missing}: the items come from one {unit}, and the bootstrap resamples {unit}s"


def undefined_resamples_note(n: int, what: str = "the correlation", missing: str = "CI") -> str:
    """Say why a figure has no interval: ``what`` is undefined in each of its ``n`` resamples.

    Example:
        >>> undefined_resamples_note(1)
        'no CI: the correlation is undefined in its one resample'
        >>> undefined_resamples_note(2000, "the difference", "CI or bootstrap p")
        'no CI or bootstrap p: the difference is undefined in each of its 2,000 resamples'
    """
    each = "its one resample" if n == 1 else f"each of its {n:,} resamples"
    return f"no {missing}: {what} is undefined in {each}"


#: The levels that correlate items, which a dimension rated only per dialogue does not rate.
_PER_ITEM = ("turn", "sample")


@dataclass(frozen=True)
class CorrelationConfig:
    """What a correlation figure depends on (its signature)."""

    level: str
    method: str
    n_boot: int
    seed: int
    resample: str
    ci: float = 0.95


def check_names(
    levels: Sequence[str], methods: Sequence[str], fields: tuple[str, str] = ("level", "method")
) -> tuple[Method, ...]:
    """Reject unknown levels or methods with a clear error naming ``fields``; return the methods typed.

    Example:
        >>> check_names(["turn"], ["spearman", "pearson"])
        ('spearman', 'pearson')
        >>> check_names(["turns"], ["spearman"], fields=("--level", "--method"))
        Traceback (most recent call last):
        ...
        dialeval.errors.InputError: field "--level": unknown level turns (did you mean "turn"?); use turn, sample, ...
    """
    for name, field, given, known in (("level", fields[0], levels, LEVELS), ("method", fields[1], methods, METHODS)):
        if not given:  # pandas' KeyError on an empty table came next
            raise InputError(f"no {name} given; use {', '.join(known)}", field=field)
        bad = [v if v.strip() else repr(v) for v in given if v not in known]
        if bad:
            close = closest(bad[0], known) if len(bad) == 1 else None
            hint = f' (did you mean "{close}"?)' if close else ""
            raise InputError(f"unknown {name} {', '.join(bad)}{hint}; use {', '.join(known)}", field=field)
        ensure_unique(given, field, name)
    return tuple(m for m in methods if m in METHODS)  # type: ignore[misc]


#: The fewest resamples whose 2.5% tail is one resample: a 95% interval of fewer is bounded by the extremes
#: (one resample gave a "CI" of one value, which left out the estimate itself).
FEWEST_FOR_CI = 40
#: How a note starts that says a CI rests on fewer resamples (:func:`dialeval.meta.caveats.table_warnings`).
ROUGH_CI = "rough CI: "


def rough_reason(resamples: int) -> str:
    """Return why a 95% CI of ``resamples`` defined resamples is rough, or "" (none, or enough of them).

    Example:
        >>> rough_reason(1)
        '1 resample only, too few for 95% (40 at least)'
        >>> rough_reason(40), rough_reason(0)
        ('', '')
    """
    if not 0 < resamples < FEWEST_FOR_CI:
        return ""
    return f"{counted(resamples, 'resample')} only, too few for 95% ({FEWEST_FOR_CI} at least)"


def few_clusters_reason(n_clusters: int, unit: str = "contexts") -> str:
    """Return why a 95% CI is rough when ``n_clusters`` clusters have fewer than :data:`FEWEST_FOR_CI` resamples, or "".

    ``k`` clusters drawn with replacement give ``C(2k - 1, k)`` distinct resamples, however many are drawn:
    three contexts give 10, and 1,000 draws of them gave a "CI" of [0.911, 1.000] around 0.921, unwarned.

    Example:
        >>> few_clusters_reason(3)
        '3 contexts have 10 distinct resamples only, too few for 95% (40 at least)'
        >>> few_clusters_reason(5), few_clusters_reason(1)
        ('', '')
    """
    if n_clusters < 2:  # one cluster: no CI at all, said elsewhere
        return ""
    distinct = math.comb(2 * n_clusters - 1, n_clusters)
    if distinct >= FEWEST_FOR_CI:
        return ""
    return f"{n_clusters} {unit} have {distinct} distinct resamples only, too few for 95% ({FEWEST_FOR_CI} at least)"


def figure(
    data: Level, metric: str, method: Method, counts: np.ndarray | None
) -> tuple[float | None, float | None, tuple[float | None, float | None], int, int, str]:
    """Return value, p-value, CI, n_groups, n_skipped and a note for one metric and method."""
    point = data.point(metric, method)
    if method == "spearman" and point.value is not None and (pairs := _pairs(data, metric)) is not None:
        point = replace(point, p_value=spearman_exact_p(*pairs))
    ci: tuple[float | None, float | None] = (None, None)
    note = point.note
    if point.value is not None and counts is not None:
        boot = data.resample(metric, method, counts)
        undefined = int((~np.isfinite(boot)).sum())
        lo, hi = percentile_ci(boot)
        ci = (lo, hi) if np.isfinite(lo) else (None, None)
        notes = [note] if note else []
        unit = "dialogues" if getattr(data, "level", "") == "dialogue" else "contexts"
        if undefined == len(boot):  # it said "rough CI" of a bare figure: "1 of 0 CIs are rough"
            notes.append(undefined_resamples_note(undefined))
        else:
            if undefined:
                notes.append(f"{undefined}/{len(boot)} resamples undefined (left out of the CI)")
            if why := rough_reason(len(boot) - undefined) or few_clusters_reason(data.n_clusters, unit):
                notes.append(f"{ROUGH_CI}{why}")
        note = "; ".join(notes)
    return point.value, point.p_value, ci, point.n_groups, point.n_skipped, note


def _pairs(data: Level, metric: str) -> tuple[np.ndarray, np.ndarray] | None:
    """Return the (metric, human) pairs of a turn, dialogue or system figure, or None.

    None too when they are more than :data:`~dialeval.meta.bootstrap.EXACT_SPEARMAN_MAX` (no exact Spearman p-value).
    """
    if isinstance(data, RowLevel):
        x, y = data.x[metric], data.y
    elif isinstance(data, SystemLevel):
        x, y = data.means(metric)
    else:
        return None
    return (x, y) if len(y) <= EXACT_SPEARMAN_MAX else None


#: What every aligned table can be broken down by, beside its scores' tags.
_NAMES = ("system", "context_id", "dialogue_id")


def breakdown(aligned: Aligned, by: str) -> list[tuple[str, Aligned]]:
    """Split the aligned table by a tag (or ``system``), one sub-table per value, in :func:`in_order`.

    The items without the tag make a last group, ``no TAG``; so do the items naming no system (empty or
    ``"unknown"``) by ``system``, and no dialogue (or context) by ``dialogue_id`` (``context_id``), as the system and
    dialogue levels count them (:func:`~dialeval.meta.levels.names_no_system`): they were groups "system=" and
    "system=unknown", and by ``dialogue_id`` or ``context_id`` each item naming none was a group of its own.
    """
    column = by if by in _NAMES else f"{TAG_PREFIX}{by}"
    if column not in aligned.items.columns:
        if not aligned.items[list(aligned.metrics)].notna().any(axis=None):  # the tags come with the values
            raise InputError(f'no score has a value, so none has a tag "{by}" to break down by', field="by")
        tags = ", ".join(dict.fromkeys([*(c.removeprefix(TAG_PREFIX) for c in aligned.tag_columns()), *_NAMES]))
        raise InputError(f'no tag "{by}" on the scores; break down by one of: {tags}', field="by")
    keys = aligned.items[column]
    if by == "system":
        keys = keys.mask(names_no_system(keys))
    elif by == "dialogue_id":
        keys = keys.mask(names_no_dialogue(aligned.items, aligned.dialogue_human))
    elif by == "context_id":
        keys = keys.mask(~aligned.items["context_named"].fillna(False).astype(bool))
    parts = []
    untagged = f"no {by}"  # the scored items without the tag: a group of their own, last, not left out unsaid
    for value, sub in aligned.items.groupby(keys, sort=False, dropna=False):
        if value != value:  # NaN: no tag, or no score to carry one (a rated item no metric scored: not a group)
            sub = sub[sub[list(aligned.metrics)].notna().any(axis=1)]
            if sub.empty:
                continue
        dialogues = aligned.dialogue_human
        if dialogues is not None:
            dialogues = dialogues[dialogues.index.isin(sub["dialogue_id"])]
        name = untagged if value != value else by + "=" + str(value)
        parts.append((name, replace(aligned, items=sub, dialogue_human=dialogues)))
    # in the order of the values: "t2" before "t10", -1 before 0.25 (it ordered "by=-1" and "by=0.25" as names:
    # 0.25 as 0 and 25, after 0.5, and -1 as "-" and 1, last)
    return sorted(parts, key=lambda part: (part[0] == untagged, in_order(part[0].removeprefix(f"{by}="))))


def _unmatched_note(aligned: Aligned, metric: str) -> str:
    c = aligned.counts
    parts = [
        counted(c[k], one, many)
        for k, one, many in (
            ("scores_without_rating", "scored item without rating", "scored items without rating"),
            ("ratings_without_score", "rated item without score", "rated items without score"),
            ("ratings_dont_know", "don't-know rating", None),
            ("ratings_not_numeric", "non-numeric rating", None),
            (f"scores_missing_value:{metric}", "score without value", "scores without value"),
        )
        if c.get(k)
    ]
    return "; ".join(parts)


def table_rows(
    aligned: Aligned, group: str, levels: Sequence[str], methods: Sequence[Method], n_boot: int, seed: int
) -> list[CorrelationRow]:
    """Compute every (level, metric, method) row of one aligned table."""
    rows = []
    per_dialogue_only = aligned.dialogue_human is not None and not (aligned.items["n_annotators"] > 0).any()
    per_item = f'undefined: "{aligned.dimension}" is rated per dialogue, not per item: use the dialogue level'
    draws: dict[int, np.ndarray] = {}  # one draw per number of clusters: the same seed gives the same counts
    for level in levels:
        for metric in aligned.metrics:
            data = prepare(aligned.items, aligned.dialogue_human, level, [metric])
            k = data.n_clusters
            if n_boot > 0 and k > 1 and k not in draws:
                draws[k] = draw_counts(k, n_boot, seed)
            counts = draws.get(k)
            for method in methods:
                value, p, (lo, hi), n_groups, n_skipped, note = figure(data, metric, method, counts)
                if level in _PER_ITEM and per_dialogue_only:  # it said "constant input or fewer than 2 values"
                    note = per_item
                elif value is not None and counts is None and n_boot > 0:  # a bare figure under "[95% CI]"
                    one = one_cluster_note(level)
                    note = f"{note}; {one}" if note else one
                cfg = CorrelationConfig(level, method, n_boot, seed, BOOT_UNIT[level])
                rows.append(
                    CorrelationRow(
                        metric=metric,
                        dimension=aligned.dimension,
                        level=level,
                        method=method,
                        value=value,
                        p_value=p,
                        ci_low=lo,
                        ci_high=hi,
                        n_items=data.n_items,
                        n_groups=n_groups,
                        n_skipped=n_skipped,
                        group=group,
                        note="; ".join(n for n in (note, _unmatched_note(aligned, metric)) if n),
                        signature=make_signature("corr", cfg),
                    )
                )
    return rows


def default_levels(ratings: Iterable[Rating], dimensions: Sequence[str], also: Sequence[str] = ()) -> list[str]:
    """Return the levels to report when none is asked: the turn level, or dialogue, then ``also``.

    The dialogue level comes first when every rating of ``dimensions`` is per dialogue: a turn-level figure
    is undefined there.

    Example:
        >>> turn = Rating(item_id="i", dimension="Overall", annotator="w", value=3)
        >>> whole = Rating(item_id="d", dimension="Overall", annotator="w", value=3, level="dialogue")
        >>> default_levels([turn], ["Overall"], also=["system"]), default_levels([whole], ["Overall"])
        (['turn', 'system'], ['dialogue'])
    """
    chosen = [r.level for r in ratings if r.dimension in dimensions]
    first = "dialogue" if chosen and all(level == "dialogue" for level in chosen) else "turn"
    return [first, *(level for level in also if level != first)]


def check_boot(n_boot: int, field: str = "n_boot", *, seed: int = 0, seed_field: str = "--seed") -> None:
    """Refuse a negative number of resamples (0: no confidence intervals), too many, or a negative seed.

    The most resamples taken is :data:`~dialeval.meta.bootstrap.MAX_RESAMPLES`.

    numpy's generator takes no negative seed: it was a ``ValueError`` traceback after the scoring;
    ``--n-boot 99999999999999999999`` was numpy's "Maximum allowed dimension exceeded".

    Example:
        >>> check_boot(-5, field="--boot")
        Traceback (most recent call last):
        ...
        dialeval.errors.InputError: field "--boot": must be >= 0 (0: no confidence intervals), got -5
        >>> check_boot(10, seed=-1)
        Traceback (most recent call last):
        ...
        dialeval.errors.InputError: field "--seed": must be >= 0, got -1
        >>> check_boot(10**6)
        Traceback (most recent call last):
        ...
        dialeval.errors.InputError: field "n_boot": must be at most 100,000 resamples, got 1,000,000
    """
    check_whole(n_boot, field)
    if n_boot < 0:
        raise InputError(f"must be >= 0 (0: no confidence intervals), got {n_boot}", field=field)
    check_at_most(n_boot, MAX_RESAMPLES, field, unit="resamples")
    check_seed(seed, seed_field)


def correlation_table(
    scores: Sequence[Score],
    ratings: Sequence[Rating],
    *,
    dimension: str | Sequence[str],
    metrics: Sequence[str] | None = None,
    levels: Sequence[str] = ("turn", "system"),
    methods: Sequence[str] = METHODS,
    n_boot: int = 1000,
    seed: int = 0,
    by: str | None = None,
) -> list[CorrelationRow]:
    """Correlate every metric with the human mean of ``dimension`` (or each of several dimensions).

    A dimension, metric, level or method named twice is refused (it gave its rows twice, or "scores item twice").

    Args:
        scores: Metric scores.
        ratings: Per-annotator ratings.
        dimension: One human dimension, or several (rows carry the dimension).
        metrics: Only these metrics (default: all scored).
        levels: Any of ``turn``, ``sample``, ``dialogue``, ``system``.
        methods: Any of ``pearson``, ``spearman``, ``kendall`` (tau-b).
        n_boot: Bootstrap resamples for the 95% CIs (0: none).
        seed: Bootstrap seed; the same resamples are used for every metric of a level.
        by: Also break every figure down by this tag (or ``system``); rows get ``group="tag=value"``, and
            ``"no tag"`` for the items without it (by ``system``: naming no system, empty or ``"unknown"``).

    Returns:
        Rows ordered by dimension, group (``"all"`` first), level, metric, method.

    Raises:
        InputError: No level, method or dimension, an unknown level or method, a name given twice, a
            negative ``n_boot`` or ``seed``, a metric the scores do not hold, a dimension nobody rated, or an
            unknown ``by`` tag.
    """
    check_boot(n_boot, seed=seed, seed_field="seed")
    typed_methods = check_names(levels, methods)
    dims = [dimension] if isinstance(dimension, str) else list(dimension)
    if not dims:
        raise InputError("no dimension given", field="dimension")
    ensure_unique(dims, "dimension", "dimension")
    ensure_unique(metrics or [], "metrics", "metric")
    rows: list[CorrelationRow] = []
    for dim in dims:
        aligned = align(scores, ratings, dimension=dim, metrics=metrics)
        groups = [("all", aligned), *(breakdown(aligned, by) if by is not None else [])]
        for group, sub in groups:
            rows.extend(table_rows(sub, group, levels, typed_methods, n_boot, seed))
    return rows
