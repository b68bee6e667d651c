"""The human ceiling (leave-one-annotator-out) vs the loop it replaced, which took every item's mean per annotator.

Data: a seeded crowd of ``--annotators`` workers rating ``--items`` items, 1 to 4 ratings each on a 0-100 slider
(two decimals). The baseline is the previous ``human_ceiling`` loop (each annotator against the mean of the others
over every item), written out here; both sides give the same figures (checked, exactly), alternating,
``--repeats`` times each, after an untimed warm-up on a small crowd; medians are reported.

Run: .venv/bin/python benchmarks/bench_ceiling.py [--annotators 200] [--items 5000] [--repeats 3]
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np
import pandas as pd
from common import POSITIVE  # benchmarks/ is on sys.path

from dialeval.meta.ceiling import _matrix, human_ceiling
from dialeval.meta.levels import scipy_correlation
from dialeval.schema import Rating


def crowd(n_annotators: int, n_items: int, seed: int = 0) -> list[Rating]:
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n_items):
        for a in rng.choice(n_annotators, min(int(rng.integers(1, 5)), n_annotators), replace=False):
            value = float(np.round(rng.random() * 100, 2))
            out.append(Rating(item_id=f"i{i}", dimension="q", annotator=f"w{a}", value=value))
    return out


def baseline(ratings: list[Rating]) -> list[float | None]:
    """The loop before the fortieth session, one figure per method (pearson, spearman, kendall)."""
    matrix: pd.DataFrame = _matrix(ratings, "q")
    figures: list[float | None] = []
    for method in ("pearson", "spearman", "kendall"):
        values = []
        for annotator in matrix.columns:
            own = matrix[annotator]
            others = matrix.drop(columns=annotator).mean(axis=1)
            mask = own.notna() & others.notna()
            result = scipy_correlation(own[mask].to_numpy(), others[mask].to_numpy(), method)
            if result is not None:
                values.append(result[0])
        figures.append(float(np.mean(values)) if values else None)
    return figures


def parser() -> argparse.ArgumentParser:
    """Return the options of this benchmark."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--annotators", type=POSITIVE, default=200)
    parser.add_argument("--items", type=POSITIVE, default=5000)
    parser.add_argument("--repeats", type=POSITIVE, default=3)
    return parser


def main() -> None:
    args = parser().parse_args()
    ratings = crowd(args.annotators, args.items)
    warm_up = crowd(10, 100, seed=1)  # untimed: pandas' and scipy's first calls (1.3 s against 0.4 s for the loop)
    assert [row.value for row in human_ceiling(warm_up, dimension="q")] == baseline(warm_up)
    times: dict[str, list[float]] = {"loop": [], "now": []}
    for _ in range(args.repeats):
        start = time.perf_counter()
        old = baseline(ratings)
        times["loop"].append(time.perf_counter() - start)
        start = time.perf_counter()
        new = [row.value for row in human_ceiling(ratings, dimension="q")]
        times["now"].append(time.perf_counter() - start)
        assert new == old, (new, old)
    loop, now = statistics.median(times["loop"]), statistics.median(times["now"])
    print(f"{args.annotators} annotators, {args.items} items, {len(ratings)} ratings: ceiling {now:.2f} s, "
          f"the loop {loop:.2f} s ({loop / now:.1f}x), the same figures")  # fmt: skip


if __name__ == "__main__":
    main()
