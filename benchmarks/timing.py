"""The timing the benchmarks share: the median of repeated runs."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def median_time(fn: Callable[[], T], repeats: int) -> tuple[float, T]:
    """Run ``fn`` ``repeats`` times; return the median seconds and the last result."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times), result
