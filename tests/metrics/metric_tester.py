"""A shared tester for metric families: function == object, batch and split invariance, duplicates.

Use it from any metric test::

    from tests.metrics.metric_tester import check_metric
    check_metric(MyMetric(), items, expected={"out": function_values})
"""

from __future__ import annotations

import math
import random
from collections.abc import Mapping, Sequence

import numpy as np

from dialeval.metrics.base import Metric, MetricInput


def _compute(metric: Metric, items: Sequence[MetricInput]) -> dict[str, list[float]]:
    values = metric.compute(list(items))
    assert set(values) == set(metric.outputs), f"{metric.name}: outputs {sorted(values)} != {metric.outputs}"
    out: dict[str, list[float]] = {}
    for name in metric.outputs:
        column = list(values[name])
        assert len(column) == len(items), f"{metric.name}.{name}: {len(column)} values for {len(items)} items"
        for v in column:
            assert v is not None and math.isfinite(v), f"{metric.name}.{name}: non-finite value {v!r}"
        out[name] = [float(v) for v in column]  # type: ignore[arg-type]
    return out


def _assert_close(a: Mapping[str, Sequence[float]], b: Mapping[str, Sequence[float]], what: str,
                  atol: float) -> None:
    for name in a:
        np.testing.assert_allclose(a[name], b[name], rtol=0, atol=atol, err_msg=f"{what}: {name}")


def check_metric(
    metric: Metric,
    items: Sequence[MetricInput],
    expected: Mapping[str, Sequence[float]] | None = None,
    *,
    batch_sizes: Sequence[int] = (1, 7, 64),
    atol: float = 1e-12,
    seed: int = 0,
) -> dict[str, list[float]]:
    """Run the shared checks and return the full-batch values.

    Checks: the object equals ``expected`` (the pure function's output); values
    do not depend on the batch size, on the order of the items, or on an
    identical item being added (the duplicate gets the original's value and the
    others do not move). Values agree within ``atol`` (a float32 model, or BLAS
    summing a batch in another order, moves the last digits).
    """
    assert len(items) >= 2, "the tester needs at least two items"
    full = _compute(metric, items)
    if expected is not None:
        _assert_close(full, expected, f"{metric.name}: object != function", atol)

    for size in batch_sizes:
        pieces = [_compute(metric, items[i : i + size]) for i in range(0, len(items), size)]
        joined = {k: [v for p in pieces for v in p[k]] for k in full}
        _assert_close(joined, full, f"{metric.name}: batch size {size}", atol)

    rng = random.Random(seed)
    order = list(range(len(items)))
    rng.shuffle(order)
    cut = rng.randrange(1, len(items))
    first, second = [items[i] for i in order[:cut]], [items[i] for i in order[cut:]]
    parts = [_compute(metric, first), _compute(metric, second)]
    shuffled = {k: parts[0][k] + parts[1][k] for k in full}
    unshuffled = {k: [0.0] * len(items) for k in full}
    for pos, original in enumerate(order):
        for k in full:
            unshuffled[k][original] = shuffled[k][pos]
    _assert_close(unshuffled, full, f"{metric.name}: shuffled split at {cut}", atol)

    dup = rng.randrange(len(items))
    with_dup = _compute(metric, [*items, items[dup]])
    _assert_close({k: v[-1:] for k, v in with_dup.items()}, {k: v[dup : dup + 1] for k, v in with_dup.items()},
                  f"{metric.name}: duplicate differs from original", atol)
    _assert_close({k: v[:-1] for k, v in with_dup.items()}, full, f"{metric.name}: with a duplicate", atol)
    return full
