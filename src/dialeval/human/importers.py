"""Agreement on published annotations (USR, DSTC9, LMStyle MTurk) read through the data catalog.

The loaders of :mod:`dialeval.data.catalog` keep ratings per annotator, which is
all agreement needs. LMStyle's MTurk batch gives each HIT to one worker; only 29
HITs were assigned twice (the requester rejected one of the two assignments), so
its alpha is computed on those HITs with the rejected assignments included and is
reported with that caveat.
"""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import Any

from dialeval.data.benchmark import Benchmark, choose_dimension
from dialeval.errors import InputError, unknown_name
from dialeval.meta.agreement import Level, bootstrap, krippendorff_alpha, reliability_matrix
from dialeval.schema import Rating

SOURCES = ("usr-tc", "usr-pc", "dstc9", "lmstyle-mturk")
NOTES = {
    "lmstyle-mturk": "only HITs with two assignments (29 of 397; one assignment of each was rejected by the requester)",
}


def load_source(source: str, path: str | Path | None = None) -> Benchmark:
    """Load a published benchmark with every annotator's ratings kept."""
    if source not in SOURCES:
        raise unknown_name("source", source, SOURCES)
    if source == "lmstyle-mturk":
        from dialeval.data.lmstyle import load_lmstyle_mturk
        from dialeval.paths import shared_data_dir

        root = shared_data_dir()
        if path is None and root is None:
            raise InputError("no shared data folder found; pass the LMStyle CSV path")
        return load_lmstyle_mturk(
            path or Path(str(root)) / "lmstyle" / "Batch_results_develop.csv", include_rejected=True
        )
    from dialeval.data.catalog import load_benchmark

    return load_benchmark(source, path)


def multiply_rated(ratings: list[Rating]) -> list[Rating]:
    """Keep ratings of items that at least two annotators rated on that dimension."""
    raters: dict[tuple[str, str], set[str]] = {}
    for r in ratings:
        raters.setdefault((r.item_id, r.dimension), set()).add(r.annotator)
    return [r for r in ratings if len(raters[(r.item_id, r.dimension)]) >= 2]


def import_agreement(
    source: str,
    path: str | Path | None = None,
    *,
    dimension: str | None = None,
    levels: tuple[Level, ...] = ("ordinal", "interval"),
    n_boot: int = 1000,
    seed: int = 0,
) -> list[dict[str, Any]]:
    """Krippendorff's alpha with a bootstrap CI per dimension and level on a published benchmark."""
    bench = load_source(source, path)
    dims = [choose_dimension(bench.dimensions(), dimension, source)] if dimension else list(bench.dimensions())
    rows = []
    for dim in dims:
        rated = multiply_rated([r for r in bench.ratings if r.dimension == dim])
        rel = reliability_matrix(rated)
        for level in levels:
            est = bootstrap(partial(krippendorff_alpha, level=level), rel.matrix, n_boot=n_boot, seed=seed)
            rows.append(
                {
                    "source": source,
                    "dimension": dim,
                    "level": level,
                    "alpha": round(est.value, 4),
                    "ci95": [round(est.low, 4), round(est.high, 4)],
                    "items": est.n_items,
                    "annotators": len(rel.annotators),
                    "note": NOTES.get(source, ""),
                }
            )
    return rows
