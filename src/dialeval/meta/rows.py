"""The result rows every meta-evaluation function returns.

Example:
    >>> row = CorrelationRow(metric="len", dimension="Overall", level="turn", method="pearson", value=0.5,
    ...                      p_value=0.01, ci_low=0.4, ci_high=0.6, n_items=10, n_groups=5, n_skipped=0)
    >>> row.to_dict()["group"]
    'all'
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

#: The file ``meta --compare A,B -o`` writes its paired test to (a
#: :class:`~dialeval.meta.significance.ComparisonResult`), which ``report`` reads.
COMPARE_FILE = "compare.json"


@dataclass(frozen=True)
class CorrelationRow:
    """One figure: a metric's agreement with humans at one level, by one method, on one group.

    Attributes:
        metric: Metric name (``"human"`` for the human ceiling).
        dimension: Human dimension.
        level: ``"turn"``, ``"sample"``, ``"dialogue"`` or ``"system"``.
        method: ``"pearson"``, ``"spearman"`` or ``"kendall"``.
        value: The correlation, or None where it is undefined (see ``note``).
        p_value: scipy's p-value where one exists (None for averages of correlations); for Spearman on at most 8
            pairs the exact two-sided permutation p over every pairing (scipy's t-approximation said 0.0 for 3).
        ci_low: Lower end of the 95% cluster-bootstrap interval (None without a bootstrap).
        ci_high: Upper end.
        n_items: Items with both a score and a human value.
        n_groups: Units correlated or averaged: contexts (turn, sample), dialogues,
            systems, or annotators (ceiling).
        n_skipped: Units left out (constant contexts at sample level, annotators without overlap).
        group: The breakdown, ``"key=value"``, or ``"all"``.
        note: Why a value is missing or what the bootstrap could not use.
        signature: How the figure was computed (methods, resamples, seed, version).
    """

    metric: str
    dimension: str
    level: str
    method: str
    value: float | None
    p_value: float | None
    ci_low: float | None
    ci_high: float | None
    n_items: int
    n_groups: int
    n_skipped: int
    group: str = "all"
    note: str = ""
    signature: str = ""

    def to_dict(self) -> dict[str, Any]:
        """Return a JSON-serialisable dict."""
        return dataclasses.asdict(self)
