"""Inputs of the trained evaluators: the paper's text format and every offline metric's scores.

DiQAD (Zhao et al. 2023) feeds a dialogue to its models as one string in which
``question:`` marks the user's turns and ``response:`` the system's. For a
turn-level item the response under evaluation is the last ``response:``; the
context turns alternate backwards from it (the turn just before is a question).

Metric features are computed by the scoring service (:func:`dialeval.scoring.score_inputs`)
through the one score cache (:func:`dialeval.paths.score_cache_path`, or ``dialeval train
--cache``), keyed by metric signature and input, so a rerun only computes what is new and a
killed ``train`` resumes.

Example:
    >>> from dialeval.schema import Turn
    >>> ctx = (Turn(speaker="A", text="Hi!"), Turn(speaker="B", text="Hello."), Turn(speaker="A", text="Pizza?"))
    >>> format_input(ctx, "Yes please.")
    'question: Hi! response: Hello. question: Pizza? response: Yes please.'
    >>> format_input((), "Only a response.")
    'response: Only a response.'
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TYPE_CHECKING

from dialeval.metrics.base import Metric, MetricInput
from dialeval.schema import Turn

if TYPE_CHECKING:
    from dialeval.scoring import ScoringContext

#: The opened scoring request of the enclosing :func:`scoring_with` block (the ``train`` command's run options).
_RUN: ContextVar[ScoringContext | None] = ContextVar("dialeval_feature_run", default=None)

#: The offline metric families the ensemble uses by default (judges and NLI are not offline).
DEFAULT_FEATURE_FAMILIES = (
    "length", "distinct", "bleu", "sacrebleu", "rouge", "chrf", "meteor", "f1",
    "embedding", "bertscore", "likelihood", "style",
)


def format_input(context: Sequence[Turn], response: str, max_turns: int | None = None) -> str:
    """Render a context and a response in DiQAD's ``question: ... response: ...`` format.

    Args:
        context: The turns before the response, oldest first.
        response: The response under evaluation.
        max_turns: Keep only the last ``max_turns`` context turns (None: all).

    Returns:
        One string; the turn right before the response is a ``question:``.
    """
    turns = list(context)[-max_turns:] if max_turns else list(context)
    n = len(turns)
    parts = [f"{'question' if (n - i) % 2 == 1 else 'response'}: {t.text.strip()}" for i, t in enumerate(turns)]
    parts.append(f"response: {response.strip()}")
    return " ".join(parts)


@contextmanager
def scoring_with(run: ScoringContext) -> Iterator[None]:
    """Within the block, features are scored on ``run``'s engine through its score cache (None: no cache).

    The ``train`` command wraps its work in one, so its ``--engine`` and ``--cache`` reach the
    features the evaluators compute deep inside.
    """
    token = _RUN.set(run)
    try:
        yield
    finally:
        _RUN.reset(token)


def feature_families(names: Sequence[str] | None = None) -> list[type[Metric]]:
    """Resolve metric families for features (default :data:`DEFAULT_FEATURE_FAMILIES` that can run here).

    Families asked for by name must run; the default skips those that cannot (a missing extra).

    Example:
        >>> [f.name for f in feature_families(["length"])]
        ['length']
    """
    from dialeval.metrics.resolve import resolve_metrics

    if names is not None:
        return resolve_metrics(list(names))[0]
    from dialeval.metrics import METRICS, load_builtin_metrics

    load_builtin_metrics()
    return [
        METRICS.get(n) for n in DEFAULT_FEATURE_FAMILIES if n in METRICS and METRICS.get(n).unavailable_reason() is None
    ]


def compute_features(
    items: Sequence[MetricInput],
    families: Sequence[type[Metric]],
    *,
    progress: Callable[[str, int], None] | None = None,
) -> tuple[list[dict[str, float | None]], dict[str, str]]:
    """Score every item with every family's outputs, through the score cache.

    A reference-based family gives None for items without references (the
    models impute them); a non-finite value is None too. The cache and engine are those of the
    enclosing :func:`scoring_with` block (``train``'s ``--cache`` and ``--engine``), else
    :func:`dialeval.paths.score_cache_path` on this process.

    Args:
        items: Metric inputs.
        families: Metric families (default configs).
        progress: Called with ``(family, n_items_done)``.

    Returns:
        One ``{output: value}`` per item, and ``{family: signature}``.
    """
    from dialeval.cache import ScoreCache, cache_field
    from dialeval.paths import score_cache_path
    from dialeval.scoring import score_inputs

    run = _RUN.get()
    engine, cache = (run.engine, run.cache) if run is not None else (None, None)
    own = run is None  # a cache of its own, opened (and closed) here
    if own:
        cache = ScoreCache(score_cache_path(), cache_field(None))
    rows: list[dict[str, float | None]] = [{} for _ in items]
    work = []
    for cls in families:
        idx = [j for j, it in enumerate(items) if it.references or not cls.needs_references]
        work.append((cls(), idx))
    try:
        scored = score_inputs(
            [(m, [items[j] for j in idx]) for m, idx in work], cache=cache, engine=engine, progress=progress
        )
    finally:
        if own and cache is not None:
            cache.close()
    signatures = {}
    for (metric, idx), got in zip(work, scored, strict=True):
        signatures[metric.name] = got.signature
        for o in metric.outputs:
            for row in rows:
                row[o] = None
        for j, values in zip(idx, got.values, strict=True):
            for o in metric.outputs:
                rows[j][o] = _finite(values.get(o))
    return rows, signatures


def _finite(v: float | None) -> float | None:
    if v is None:
        return None
    f = float(v)
    return f if math.isfinite(f) else None


def feature_matrix(rows: Sequence[Mapping[str, float | None]], columns: Sequence[str]) -> list[list[float]]:
    """Return rows as lists in ``columns`` order, NaN for a missing value.

    Example:
        >>> feature_matrix([{"a": 1.0, "b": None}], ["b", "a"])
        [[nan, 1.0]]
    """
    return [[math.nan if r.get(c) is None else float(r[c]) for c in columns] for r in rows]  # type: ignore[arg-type]
