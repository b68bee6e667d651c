"""The human ceiling: how well one annotator agrees with the others, leave-one-annotator-out.

For each annotator, their ratings are correlated (turn level) with the mean of the
other annotators on the same items; the reported figure is the mean over annotators.
A metric that reaches it agrees with the humans as well as a human does.

Example:
    >>> from dialeval.schema import Rating
    >>> vals = {"w1": [1, 2, 3, 4], "w2": [1, 2, 4, 3], "w3": [2, 1, 3, 4]}
    >>> ratings = [Rating(item_id=f"i{i}", dimension="q", annotator=w, value=v)
    ...            for w, vs in vals.items() for i, v in enumerate(vs)]
    >>> row = human_ceiling(ratings, dimension="q", methods=("spearman",))[0]
    >>> round(row.value, 4), row.n_groups
    (0.7901, 3)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import numpy as np
import pandas as pd

from dialeval.errors import InputError
from dialeval.meta.agreement import NO_ITEM_RATED_TWICE
from dialeval.meta.align import numeric_rating
from dialeval.meta.bootstrap import METHODS
from dialeval.meta.correlate import check_names
from dialeval.meta.levels import scipy_correlation
from dialeval.meta.rows import CorrelationRow
from dialeval.schema import Rating
from dialeval.signature import make_signature


def _matrix(ratings: Sequence[Rating], dimension: str) -> pd.DataFrame:
    rows = [  # a number as text counts, as the metrics' correlations read it (it said "no numeric turn ratings")
        (r.item_id, r.annotator, value)
        for r in ratings
        if r.dimension == dimension and r.level == "turn" and (value := numeric_rating(r)) is not None
    ]
    if not rows:
        raise InputError(f'no numeric turn ratings for dimension "{dimension}"', field="dimension")
    frame = pd.DataFrame(rows, columns=["item_id", "annotator", "value"])
    if frame.duplicated(["item_id", "annotator"]).any():
        dup = frame[frame.duplicated(["item_id", "annotator"])].iloc[0]
        raise InputError(f'annotator "{dup.annotator}" rates item "{dup.item_id}" twice', field="annotator")
    return frame.pivot(index="item_id", columns="annotator", values="value")


#: The ceiling's note: the figure is a mean over annotators, with no interval (printed under the table as a reason).
_MEAN = "leave-one-annotator-out mean; no CI: the ceiling is a mean over annotators, not bootstrapped"


def _undefined(n_annotators: int, n_items: int) -> str:
    """Say why no annotator's agreement with the others is defined ("no annotator overlaps" said it of all three).

    Example:
        >>> _undefined(1, 0)
        'undefined: the ratings have one annotator, and the ceiling compares each with the others'
    """
    if n_annotators < 2:
        return "undefined: the ratings have one annotator, and the ceiling compares each with the others"
    if n_items == 0:
        return f"undefined: {NO_ITEM_RATED_TWICE}"
    return "undefined: no annotator shares 2 items or more with the others, with a spread of ratings on both sides"


#: The note of the ceiling's row at a level other than turn (its cells read n/a with no reason).
TURN_ONLY = "turn level only: the ceiling compares each annotator's ratings with the others' item by item"


def human_ceiling(
    ratings: Sequence[Rating], *, dimension: str, methods: Sequence[str] = METHODS, levels: Sequence[str] = ("turn",)
) -> list[CorrelationRow]:
    """Leave-one-annotator-out agreement at turn level, one row per method (``metric="human"``).

    An annotator is skipped (and counted in ``n_skipped``) when fewer than two of their
    items have another annotator's rating, or when either side is constant. Each other level of
    ``levels`` gets an undefined row per method whose note says why (:data:`TURN_ONLY`); the turn rows come only
    where ``levels`` has the turn level (``--level system --ceiling`` got a turn column, every metric's cell n/a).
    """
    typed = check_names(["turn"], methods)
    matrix = _matrix(ratings, dimension)
    n_items = int((matrix.notna().sum(axis=1) >= 2).sum())  # items some other annotator also rated
    # each annotator's ratings and the others' mean on those items only: the mean of every item, taken again for
    # each annotator, cost annotators x items x annotators (benchmarks/bench_ceiling.py: 6.5x at 200 annotators)
    pairs = []
    for annotator in matrix.columns:
        own = matrix[annotator].dropna()
        others = matrix.loc[own.index].drop(columns=annotator).mean(axis=1)  # NaN where no other annotator
        mask = others.notna()
        pairs.append((own[mask].to_numpy(), others[mask].to_numpy()))
    rows = []
    for method in typed:
        per_annotator = []
        for own_values, others_mean in pairs:
            result = scipy_correlation(own_values, others_mean, method)
            if result is not None:
                per_annotator.append(result[0])
        skipped = len(matrix.columns) - len(per_annotator)
        rows.append(
            CorrelationRow(
                metric="human",
                dimension=dimension,
                level="turn",
                method=method,
                value=float(np.mean(per_annotator)) if per_annotator else None,
                p_value=None,
                ci_low=None,
                ci_high=None,
                n_items=n_items,
                n_groups=len(per_annotator),
                n_skipped=skipped,
                note=_MEAN if per_annotator else _undefined(len(matrix.columns), n_items),
                signature=make_signature("ceiling", extra={"method": method, "scheme": "loo-annotator"}),
            )
        )
    elsewhere = [replace(r, level=level, value=None, n_groups=0, n_skipped=0, note=TURN_ONLY)
                 for level in dict.fromkeys(levels) if level != "turn" for r in rows]  # fmt: skip
    return [*(rows if "turn" in levels else []), *elsewhere]
