"""The engine interface and the local engine: batches of (input key, input) in, values out.

Example:
    >>> from dialeval.metrics.base import Metric, MetricInput
    >>> class Words(Metric):
    ...     name = "words_demo"
    ...     outputs = ("words_demo",)
    ...     def compute(self, items):
    ...         return {"words_demo": [float(len(i.response.split())) for i in items]}
    >>> batch = [("k1", MetricInput(response="a b")), ("k2", MetricInput(response="c"))]
    >>> [(n, r.values) for n, r in LocalEngine().run([(Words(), [batch])])]
    [(0, {'k1': {'words_demo': 2.0}, 'k2': {'words_demo': 1.0}})]
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from dialeval.cache import CachedValues
from dialeval.metrics.base import Metric, MetricInput, parameter_errors

WorkBatch = list[tuple[str, MetricInput]]
#: One metric and its batches; an engine run takes several (every metric of a command).
Job = tuple[Metric, Sequence[WorkBatch]]


@dataclass
class BatchResult:
    """One finished batch.

    Attributes:
        values: Output values per input key.
        stats: Numeric run counters this batch added (judge calls, parse failures, tokens, ...).
        unscored: Why an input was left without a value, per input key, where the metric
            knows (:meth:`~dialeval.metrics.base.Metric.why_unscored`): it travels with the
            values, because the metric that knows may live in another process (a Ray worker).
    """

    values: dict[str, CachedValues]
    stats: dict[str, float] = field(default_factory=dict)
    unscored: dict[str, str] = field(default_factory=dict)


def compute_batch(metric: Metric, batch: Sequence[tuple[str, MetricInput]]) -> BatchResult:
    """Run ``metric.compute`` on one batch; key its values, and the reasons of unscored inputs, by input key.

    Raises:
        RuntimeError: The metric returned no column, or one of the wrong length, for one of its outputs, or a value
            that is neither a number nor None (text such as ``"1.5"``, a bool).
    """
    from dialeval.cache import input_key

    with parameter_errors(metric):  # a model a parameter names is loaded here, on the first batch
        values = metric.compute([i for _, i in batch])
    for out_name in metric.outputs:
        if out_name not in values:
            raise RuntimeError(f'{metric.name} returned no values for its output "{out_name}"')
        col = values[out_name]
        if len(col) != len(batch):
            raise RuntimeError(f"{metric.name}.{out_name} returned {len(col)} values for {len(batch)} items")
    done: dict[str, CachedValues] = {
        key: {o: _number(metric, o, values[o][j]) for o in metric.outputs} for j, (key, _) in enumerate(batch)
    }
    unscored = {}
    for key, item in batch:
        if bad := _nonfinite(done[key]):  # a Score refuses NaN: a plugin's NaN was a pydantic traceback
            unscored[key] = f"the metric gave {bad}: not a finite number"
        elif any(v is None for v in done[key].values()) and (why := metric.why_unscored(input_key(item))):
            unscored[key] = why
    return BatchResult(done, unscored=unscored)


def _number(metric: Metric, output: str, value: object) -> float | None:
    """Return ``value`` as a float (None stays None); text (``"1.5"``) or a bool is refused, not converted."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise RuntimeError(f"{metric.name}.{output} returned {value!r} ({type(value).__name__}) for an item: "
                           "give a number or None")  # fmt: skip
    return float(value)


def failing_key(metric: Metric, batch: Sequence[tuple[str, MetricInput]]) -> str | None:
    """Return the key of the first item of ``batch`` that raises when computed alone (None: none does alone).

    A batch of one item names it even when it raises only with its batch's other items (there are none).
    """
    for key, item in batch:
        try:
            compute_batch(metric, [(key, item)])
        except Exception:
            return key
    return batch[0][0] if len(batch) == 1 else None


class BatchFailed(Exception):
    """A metric raised an ordinary exception on a batch in another process (a Ray worker), found there.

    Attributes:
        job: The index of the metric's job in the engine run.
        detail: The exception, as ``TYPE: MESSAGE``.
        key: The input key of the item that raised it alone (None: not found).
    """

    def __init__(self, job: int, detail: str, key: str | None) -> None:
        self.job, self.detail, self.key = job, detail, key
        super().__init__(detail)


def _nonfinite(values: CachedValues) -> str:
    """Set each NaN or infinite value to None in place; return what they were (``"NaN for m"``), or "".

    Example:
        >>> got = {"a": float("nan"), "b": 1.0, "c": float("-inf")}
        >>> _nonfinite(got), got
        ('NaN for a, -inf for c', {'a': None, 'b': 1.0, 'c': None})
    """
    bad = {out: v for out, v in values.items() if v is not None and not math.isfinite(v)}
    values.update(dict.fromkeys(bad))
    return ", ".join(f"{'NaN' if math.isnan(v) else v} for {out}" for out, v in bad.items())


def numeric_summary(metric: Metric) -> dict[str, float]:
    """Return the numeric counters of ``metric.run_summary()`` (empty if the metric keeps none)."""
    return {
        k: float(v) for k, v in metric.run_summary().items() if isinstance(v, (int, float)) and not isinstance(v, bool)
    }


class Engine(Protocol):
    """Runs the batches of several metrics and yields each finished batch (in any order)."""

    name: str

    def run(self, jobs: Sequence[Job]) -> Iterator[tuple[int, BatchResult]]:
        """Compute every job's batches; yield ``(job index, result)`` as batches finish."""
        ...

    def summary(self, metric: Metric) -> dict[str, Any]:
        """Return the metric's run counters after :meth:`run` (judge calls, failures, tokens)."""
        ...

    def describe(self) -> dict[str, Any]:
        """Return what ran where, for ``run.json``."""
        ...


class LocalEngine:
    """Compute batches one after another in this process (the default)."""

    name = "local"

    def run(self, jobs: Sequence[Job]) -> Iterator[tuple[int, BatchResult]]:
        """Compute each job's batches in order, one job after the other."""
        for n, (metric, batches) in enumerate(jobs):
            for batch in batches:
                yield n, compute_batch(metric, batch)

    def summary(self, metric: Metric) -> dict[str, Any]:
        """Return the metric's own counters (it ran here)."""
        return dict(metric.run_summary())

    def describe(self) -> dict[str, Any]:
        """Return ``{"engine": "local"}``: the batches ran in this process."""
        return {"engine": "local"}
