"""The four levels at which a metric is correlated with humans, each with its cluster bootstrap.

* turn: across items; resample contexts.
* sample: per context, the correlation across the systems' responses, averaged over
  contexts (LMStyle, Sec. 4); contexts where either side is constant are skipped and
  counted; resample contexts.
* dialogue: the metric averaged per dialogue against the dialogue's human score
  (native dialogue ratings, else the turn human means averaged); resample dialogues.
  Means are rounded to 12 decimals of their column's scale (:func:`tie_means`), so that equal means tie; so are
  the human means of the items at the turn and sample levels.
* system: per-system means (rounded as the dialogue level's), correlated across systems; resample contexts and
  recompute the means.
  With dialogue ratings only (DSTC9 interactive), a system's means are over its dialogues
  (the metric averaged per dialogue first, as at dialogue level); resample dialogues.
  Items (or dialogues) that name no system (system empty or ``"unknown"``) are left out of the system level alone,
  and its note says how many (:data:`LEFT_OUT`): they were averaged into one more "system" (a Pearson of -1 over
  three named systems read -0.455 with two unnamed items added, with no word).

Likewise items whose scores name no dialogue (``dialogue_named`` false) are left out of the dialogue level from turn
ratings, with a note: each was a dialogue of its own (0.5 over three dialogues read -0.673 with two such items). With
dialogue ratings they are kept: a score of a whole dialogue names none, its item id being the dialogue's.

Example:
    >>> import pandas as pd
    >>> items = pd.DataFrame({"context_id": ["c1"] * 3 + ["c2"] * 3, "dialogue_id": ["d1"] * 3 + ["d2"] * 3,
    ...                       "system": ["a", "b", "c"] * 2, "m": [1.0, 2, 3, 1, 2, 3],
    ...                       "human": [1.0, 2, 3, 3, 2, 1]})
    >>> prepare(items, None, "sample", ["m"]).point("m", "pearson").value
    0.0
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from dialeval.meta.bootstrap import (
    Counts,
    FloatArray,
    IntArray,
    Method,
    rowwise_correlation,
    weighted_correlation,
    weighted_sums,
)
from dialeval.schema import UNKNOWN_SYSTEM
from dialeval.words import counted

LEVELS = ("turn", "sample", "dialogue", "system")
MEAN_DECIMALS = 12
"""Means are rounded to this many decimals of their column's leading digit (:func:`tie_means`), so that equal
means tie whatever the summation order."""
MIN_POINTS = 3
"""Fewer points than this (systems, dialogues, items) make a correlation say nothing (two always give +1 or -1)."""
LEFT_OUT = "left out of the {} level: "
"""How the note of a figure starts (the level in the braces) that says how many items (or dialogues) it left out for
naming no system (system level) or no dialogue (dialogue level)."""


@dataclass(frozen=True)
class Point:
    """A point estimate with what it was computed on."""

    value: float | None
    p_value: float | None
    n_groups: int
    n_skipped: int = 0
    note: str = ""


def scipy_correlation(x: FloatArray, y: FloatArray, method: Method) -> tuple[float, float] | None:
    """Return scipy's (statistic, p-value), or None when a side is constant or has fewer than 2 values."""
    from scipy import stats

    if len(x) < 2 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return None
    fn = {"pearson": stats.pearsonr, "spearman": stats.spearmanr, "kendall": stats.kendalltau}[method]
    result = fn(x, y)
    return float(result.statistic), float(result.pvalue)


def undefined_why(x: FloatArray, y: FloatArray, unit: str = "item") -> str:
    """Say why :func:`scipy_correlation` of ``x`` (scores) and ``y`` (ratings) is undefined.

    ``unit``: what a pair is (``item``, ``dialogue``, ``system``). It said "constant input or fewer than 2
    values" of each case alike.

    Example:
        >>> undefined_why(np.array([]), np.array([]))
        'undefined: no item with both a score and a rating'
        >>> undefined_why(np.array([1.0, 1.0]), np.array([2.0, 3.0]))
        'undefined: the metric gives every item the same score'
        >>> undefined_why(np.array([1.0, 2.0]), np.array([3.0, 3.0]), "system")
        'undefined: people give every system the same rating'
    """
    if len(x) == 0:
        return f"undefined: no {unit} with both a score and a rating"
    if len(x) < 2:
        return f"undefined: one {unit} only"
    if np.ptp(x) == 0:
        return f"undefined: the metric gives every {unit} the same score"
    return f"undefined: people give every {unit} the same rating"


def tie_means(values: FloatArray) -> FloatArray:
    """Round ``values`` to :data:`MEAN_DECIMALS` decimals of their largest magnitude: equal means tie, not 1 ulp apart.

    Relative to the values' scale: rounded to 12 decimals as such, every mean of a metric of values near 1e-13 was 0
    (every dialogue-level figure "undefined: the metric gives every dialogue the same score"), although a
    correlation does not change when a metric is multiplied by a positive number.

    Example:
        >>> tie_means(np.array([0.1 + 0.2, 0.3, 1.0])).tolist()
        [0.3, 0.3, 1.0]
        >>> tie_means(np.array([(0.1 + 0.2) * 1e-13, 3e-14, 1e-13])).tolist()
        [3e-14, 3e-14, 1e-13]
    """
    finite = np.abs(values[np.isfinite(values)])
    top = float(finite.max(initial=0.0))
    if top == 0.0:
        return values
    scale = 10.0 ** np.floor(np.log10(top))  # values / scale is below 10: 12 decimals of it neither overflow nor vanish
    return np.asarray(np.round(values / scale, MEAN_DECIMALS) * scale, dtype=np.float64)


def unit_scale(values: FloatArray) -> FloatArray:
    """Return ``values`` times the power of two that brings their largest finite magnitude into [0.5, 1).

    Exact (a power of two changes the exponent alone), and no correlation changes when a metric is multiplied by a
    positive number; but the squares the bootstrap's Pearson sums underflowed to 0 for values near 1e-200 (a product
    of token probabilities: every CI was lost) and overflowed near 1e200, and scipy's Pearson gave NaN near 1e307.

    Example:
        >>> unit_scale(np.array([3.0, -6.0, np.nan])).tolist(), unit_scale(np.array([1e-200, -3e-200])).round(3)
        ([0.375, -0.75, nan], array([ 0.191, -0.574]))
    """
    finite = np.abs(values[np.isfinite(values)])
    top = float(finite.max(initial=0.0))
    return values if top == 0.0 else np.ldexp(values, -int(np.frexp(top)[1]))


def _tie_columns(frame: pd.DataFrame, cols: Sequence[str]) -> pd.DataFrame:
    """Return ``frame`` with each of ``cols`` (means) passed through :func:`tie_means`, column by column."""
    return frame.assign(**{c: tie_means(frame[c].to_numpy(np.float64)) for c in cols})


def _codes(keys: pd.Series) -> tuple[IntArray, int]:
    codes, uniques = pd.factorize(keys)
    return codes.astype(np.int64), len(uniques)


@dataclass(frozen=True)
class RowLevel:
    """Turn or dialogue level: one vector per metric against one human vector, with cluster codes."""

    level: str
    x: dict[str, FloatArray]
    y: FloatArray
    codes: IntArray
    n_clusters: int
    n_items: int
    left_out: str = ""
    """The note that says how many items were left out for naming no dialogue (:data:`LEFT_OUT`), or ""."""

    def point(self, metric: str, method: Method) -> Point:
        """Correlate with scipy."""
        result = scipy_correlation(self.x[metric], self.y, method)
        groups = len(self.y) if self.level == "dialogue" else self.n_clusters  # dialogues, or the turns' contexts
        unit = "dialogue" if self.level == "dialogue" else "item"
        if result is None:
            return Point(None, None, groups, note=_joined(undefined_why(self.x[metric], self.y, unit), self.left_out))
        few = (f"only {len(self.y)} {unit}s: a correlation of fewer than {MIN_POINTS} is +1 or -1"
               if len(self.y) < MIN_POINTS else "")  # fmt: skip
        return Point(result[0], result[1], groups, note=_joined(few, self.left_out))

    def resample(self, metric: str, method: Method, counts: Counts) -> FloatArray:
        """Correlate in every resample."""
        return weighted_correlation(self.x[metric], self.y, self.codes, counts, method)


@dataclass(frozen=True)
class SampleLevel:
    """Per-context correlations averaged over contexts."""

    x: dict[str, list[FloatArray]]
    y: list[FloatArray]
    n_clusters: int
    n_items: int
    level: str = "sample"
    _done: dict[tuple[str, str], FloatArray] = field(default_factory=dict, compare=False, repr=False)

    def _per_context(self, metric: str, method: Method) -> FloatArray:
        """Each context's correlation (NaN where undefined), computed once for :meth:`point` and :meth:`resample`."""
        if (metric, method) not in self._done:
            out = np.full(len(self.y), np.nan)
            for k, (xs, ys) in enumerate(zip(self.x[metric], self.y, strict=True)):
                result = scipy_correlation(xs, ys, method)
                if result is not None:
                    out[k] = result[0]
            self._done[(metric, method)] = out
        return self._done[(metric, method)]

    def point(self, metric: str, method: Method) -> Point:
        """Average the defined per-context correlations."""
        r = self._per_context(metric, method)
        used = np.isfinite(r)
        skipped = int((~used).sum())
        if not used.any():
            return Point(None, None, 0, skipped, f"undefined: {self._none_defined_why()}")
        return Point(float(r[used].mean()), None, int(used.sum()), skipped)

    def _none_defined_why(self) -> str:
        """Say why no context's correlation is defined (items each in a context of their own said "constant")."""
        if not self.y:
            return "no context has both scores and ratings"
        if all(len(ys) < 2 for ys in self.y):
            return "every context has one item with a score and a rating (do the scores name their context_id?)"
        return "every context is constant on one side"

    def resample(self, metric: str, method: Method, counts: Counts) -> FloatArray:
        """Average over the resampled contexts (a context drawn twice counts twice)."""
        r = self._per_context(metric, method)
        used = np.isfinite(r)
        drawn = counts[:, used]
        total = weighted_sums(drawn, r[used])
        n = drawn.sum(axis=1).astype(np.float64)
        out = np.full(len(counts), np.nan)
        np.divide(total, n, out=out, where=n > 0)
        return out


@dataclass(frozen=True)
class SystemLevel:
    """Per-system means from per-(context, system) sums, so resampled means are matrix products."""

    x_sums: dict[str, FloatArray]
    y_sums: FloatArray
    n: FloatArray
    n_items: int
    level: str = "system"
    left_out: str = ""
    """The note that says how many items (or dialogues) were left out for naming no system, or ""."""

    @property
    def n_clusters(self) -> int:
        """Number of contexts."""
        return int(self.n.shape[0])

    def means(self, metric: str) -> tuple[np.ndarray, np.ndarray]:
        """Return the (metric, human) system means, tied.

        Untied, they gave -0.671 where every system's mean was 0.2, 1 ulp apart.
        """
        total = self.n.sum(axis=0)
        return tie_means(self.x_sums[metric].sum(axis=0) / total), tie_means(self.y_sums.sum(axis=0) / total)

    def point(self, metric: str, method: Method) -> Point:
        """Correlate the system means with scipy."""
        x, y = self.means(metric)
        result = scipy_correlation(x, y, method)
        if result is None:
            return Point(None, None, len(x), note=_joined(undefined_why(x, y, "system"), self.left_out))
        few = (f"only {len(x)} systems: a correlation of fewer than {MIN_POINTS} is +1 or -1"
               if len(x) < MIN_POINTS else "")  # fmt: skip
        return Point(result[0], result[1], len(x), note=_joined(few, self.left_out))

    def resample(self, metric: str, method: Method, counts: Counts) -> FloatArray:
        """Recompute the system means in every resample; NaN where a system was not drawn."""
        n = weighted_sums(counts, self.n)
        with np.errstate(invalid="ignore", divide="ignore"):
            x, y = weighted_sums(counts, self.x_sums[metric]) / n, weighted_sums(counts, self.y_sums) / n
        out = rowwise_correlation(np.nan_to_num(tie_means(x)), np.nan_to_num(tie_means(y)), method)
        out[(n == 0).any(axis=1)] = np.nan
        return out


Level = RowLevel | SampleLevel | SystemLevel


def prepare(items: pd.DataFrame, dialogue_human: pd.DataFrame | None, level: str, metrics: Sequence[str],
            *, scaled: bool = True) -> Level:  # fmt: skip
    """Restrict to items with every metric in ``metrics`` and a human value, and build ``level``'s data.

    ``dialogue_human`` (native dialogue ratings) is used at dialogue level when given. ``scaled``: each metric, and
    the human means, are brought to [0.5, 1) by :func:`unit_scale` (for correlating); False keeps their units (for
    a chart's axis). The human means were left as they were: ratings near 1e200 lost every Pearson CI.
    """
    cols = list(dict.fromkeys(metrics))
    if scaled:
        items = items.assign(**{c: unit_scale(items[c].to_numpy(np.float64)) for c in [*cols, "human"]})
        if dialogue_human is not None:
            dialogue_human = dialogue_human.assign(human=unit_scale(dialogue_human["human"].to_numpy(np.float64)))
    if level == "dialogue" and dialogue_human is not None:
        per_dialogue, n_items = _native_dialogues(items, dialogue_human, cols)
        return _row_level("dialogue", per_dialogue, cols, np.arange(len(per_dialogue)), len(per_dialogue), n_items)
    both = items.dropna(subset=[*cols, "human"])
    if level in ("turn", "sample"):  # the human means tie, as the dialogue and system levels' do (Spearman ranked
        both = _tie_columns(both, ["human"])  # the means 0.44999999999999996 of 0.7 and 0.2 and 0.45 apart)
    if level == "system" and both.empty and dialogue_human is not None:
        per_dialogue = _native_dialogues(items, dialogue_human, cols)[0].reset_index()
        mixed = per_dialogue["dialogue_id"].isin(_mixed_dialogues(items.dropna(subset=cols)))
        named, left_out = _named(per_dialogue[~mixed], "dialogue")
        several = (f"{LEFT_OUT.format('system')}{counted(int(mixed.sum()), 'dialogue')} of several systems"
                   if mixed.any() else "")  # fmt: skip
        left_out = _joined(left_out, several)
        n_items = int(items.dropna(subset=cols)["dialogue_id"].isin(named["dialogue_id"]).sum())
        return _system_level(named.assign(context_id=lambda f: f["dialogue_id"]), cols, n_items, left_out)
    if level == "turn":
        codes, k = _codes(both["context_id"])
        return _row_level("turn", both, cols, codes, k, len(both))
    if level == "dialogue":
        named = both[~names_no_dialogue(both, None)]
        left_out = (f"{LEFT_OUT.format('dialogue')}{counted(len(both) - len(named), 'item')} naming no dialogue"
                    if len(named) < len(both) else "")  # fmt: skip
        per_dialogue = _tie_columns(named.groupby("dialogue_id")[[*cols, "human"]].mean(), [*cols, "human"])
        return _row_level("dialogue", per_dialogue, cols, np.arange(len(per_dialogue)), len(per_dialogue), len(named),
                          left_out)  # fmt: skip
    if level == "sample":
        codes, k = _codes(both["context_id"])
        kept = codes >= 0  # a missing context id: in no context, as groupby leaves it out
        order = np.flatnonzero(kept)[np.argsort(codes[kept], kind="stable")]  # contexts in first-seen order
        cuts = np.flatnonzero(np.diff(codes[order])) + 1

        def per_context(col: str) -> list[FloatArray]:  # 100,000 groupby sub-frames took most of a 2-minute run
            return np.split(both[col].to_numpy(np.float64)[order], cuts) if k else []

        return SampleLevel(x={m: per_context(m) for m in cols}, y=per_context("human"), n_clusters=k,
                           n_items=len(both))  # fmt: skip
    if level == "system":
        named, left_out = _named(both, "item")
        return _system_level(named, cols, len(named), left_out)
    raise ValueError(f"unknown level {level!r}; use one of {', '.join(LEVELS)}")


def _native_dialogues(items: pd.DataFrame, dialogue_human: pd.DataFrame, cols: list[str]) -> tuple[pd.DataFrame, int]:
    """Per rated dialogue: the metrics' mean over its scored items, its system and its human mean; items used."""
    scored = items.dropna(subset=cols)
    per_dialogue = scored.groupby("dialogue_id").agg({**dict.fromkeys(cols, "mean"), "system": "first"})
    per_dialogue = _tie_columns(per_dialogue, cols).join(dialogue_human["human"], how="inner")
    return per_dialogue, int(scored["dialogue_id"].isin(per_dialogue.index).sum())


def _mixed_dialogues(scored: pd.DataFrame) -> list[str]:
    """Return the dialogues whose scored items name more than one system (a dialogue's rating is of one system).

    They were given the system of their first item, and their other items' scores were counted as its.
    """
    named = scored[~names_no_system(scored["system"])]
    per_dialogue = named.groupby("dialogue_id")["system"].nunique()
    return list(per_dialogue.index[per_dialogue > 1])


def _joined(*notes: str) -> str:
    return "; ".join(n for n in notes if n)


def names_no_system(systems: pd.Series) -> pd.Series:
    """Return which of ``systems`` name no system: empty, missing or :data:`~dialeval.schema.UNKNOWN_SYSTEM`.

    Example:
        >>> names_no_system(pd.Series(["a", "", "unknown", None])).tolist()
        [False, True, True, True]
    """
    return systems.fillna("").isin(["", UNKNOWN_SYSTEM])


def names_no_dialogue(items: pd.DataFrame, dialogue_human: pd.DataFrame | None) -> pd.Series:
    """Return which aligned ``items`` name no dialogue: their scores name none, and they are no rated dialogue.

    The dialogue level leaves them out (from turn ratings); a score of a whole dialogue rated per dialogue names
    none, its item id being the dialogue's, and is kept.
    """
    named = items["dialogue_named"].fillna(False).astype(bool)
    if dialogue_human is not None:
        named |= items["dialogue_id"].isin(dialogue_human.index)
    return ~named


def _named(frame: pd.DataFrame, unit: str) -> tuple[pd.DataFrame, str]:
    """Return the rows of ``frame`` that name their system, and the :data:`LEFT_OUT` note of the others (or "")."""
    unnamed = names_no_system(frame["system"])
    n = int(unnamed.sum())
    note = f'{LEFT_OUT.format("system")}{counted(n, unit)} naming no system (empty or "{UNKNOWN_SYSTEM}")'
    return frame[~unnamed], note if n else ""


def _system_level(both: pd.DataFrame, cols: list[str], n_items: int, left_out: str = "") -> SystemLevel:
    """Per-(cluster, system) sums and counts of the rows of ``both`` (clusters: its ``context_id``)."""
    if both.empty:
        empty = np.zeros((0, 0))
        return SystemLevel(x_sums=dict.fromkeys(cols, empty), y_sums=empty, n=empty, n_items=0, left_out=left_out)
    sums = both.pivot_table(index="context_id", columns="system", values=[*cols, "human"], aggfunc="sum")
    counts = both.pivot_table(index="context_id", columns="system", values="human", aggfunc="size")
    order = pd.unique(both["context_id"])  # clusters in first-appearance order, as at the other levels
    sums, counts = sums.reindex(order), counts.reindex(order)
    return SystemLevel(
        x_sums={m: sums[m].fillna(0).to_numpy(np.float64) for m in cols},
        y_sums=sums["human"].fillna(0).to_numpy(np.float64),
        n=counts.fillna(0).to_numpy(np.float64),
        n_items=n_items,
        left_out=left_out,
    )


def _row_level(level: str, frame: pd.DataFrame, cols: list[str], codes: IntArray, k: int, n_items: int,
               left_out: str = "") -> RowLevel:  # fmt: skip
    return RowLevel(
        level=level,
        x={m: frame[m].to_numpy(np.float64) for m in cols},
        y=frame["human"].to_numpy(np.float64),
        codes=np.asarray(codes, dtype=np.int64),
        n_clusters=k,
        n_items=n_items,
        left_out=left_out,
    )
