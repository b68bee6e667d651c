"""Agreement on published annotations (USR, DSTC9, LMStyle MTurk) read through the data catalog, or on yours.

The loaders of :mod:`dialeval.data.catalog` keep ratings per annotator, which is
all agreement needs. LMStyle's MTurk batch gives each HIT to one worker; only 29
HITs were assigned twice (the requester rejected one of the two assignments), so
its alpha is computed on those HITs with the rejected assignments included and is
reported with that caveat.
"""

from __future__ import annotations

import json
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from dialeval.data.benchmark import Benchmark, choose_dimension
from dialeval.errors import InputError, unknown_name
from dialeval.human.analysis import one_item_ci
from dialeval.meta.agreement import (
    NO_ITEM_RATED_TWICE,
    Level,
    figure,
    krippendorff_alpha,
    krippendorff_alpha_over_draws,
    pairable,
    reliability_matrix,
)
from dialeval.schema import Rating
from dialeval.words import counted

SOURCES = ("usr-tc", "usr-pc", "dstc9", "lmstyle-mturk")
NOTES = {
    "lmstyle-mturk": "only HITs with two assignments (29 of 397; one assignment of each was rejected by the requester)",
}
#: Why label ratings get no ordinal or interval alpha: their codes are alphabetical, not the scale's order.
LABELS_NOMINAL = ("labels, not numbers: nominal alpha only (ordinal and interval would read the labels' alphabetical "
                  "order as their scale)")  # fmt: skip


def load_source(source: str, path: str | Path | None = None) -> Benchmark:
    """Load a published benchmark with every annotator's ratings kept."""
    if source not in SOURCES:
        raise unknown_name("benchmark with per-annotator ratings", source, SOURCES)
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


def exported_ratings(path: Path) -> Benchmark | None:
    r"""Return the ratings of a file of Rating records (what `study export` writes), or None where it is no such file.

    A JSONL file (or a gzipped one) whose first record has an item, a dimension and an annotator and no key a Rating
    lacks is read as Rating records (checked as :func:`~dialeval.data.generic.read_ratings` checks them); anything
    else is a table, read by its columns.

    Example:
        >>> import tempfile
        >>> p = Path(tempfile.mkdtemp()) / "ratings.jsonl"
        >>> _ = p.write_text('{"item_id": "i", "dimension": "q", "annotator": "a", "value": 4}\n')
        >>> [(r.item_id, r.value) for r in exported_ratings(p).ratings]
        [('i', 4.0)]
    """
    from dialeval.data.generic import read_ratings
    from dialeval.jsonl import read_text

    if not path.name.lower().endswith((".jsonl", ".jsonl.gz")) or not path.is_file():
        return None
    try:  # gunzipped and a leading BOM dropped, as the rating reader reads it
        first = next((line for line in read_text(path).splitlines() if line.strip()), None)
        record = json.loads(first or "null")
    except (ValueError, InputError):  # not UTF-8, gzip or JSON: the table reader says what is wrong with it
        return None
    if first is None:  # what `study export` writes before any answer: it was "a table needs a mapping"
        raise InputError("holds no ratings (an empty file; `study export` writes one until annotators answer)",
                         path=path)  # fmt: skip
    keys = set(record) if isinstance(record, dict) else set()
    if not {"item_id", "dimension", "annotator"} <= keys <= set(Rating.model_fields):
        return None
    return Benchmark(path.stem, {}, [], read_ratings(path), source=str(path))


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
    return agreement_rows(bench, source, dimension=dimension, levels=levels, n_boot=n_boot, seed=seed,
                          note=NOTES.get(source, ""))  # fmt: skip


def agreement_rows(
    bench: Benchmark,
    source: str,
    *,
    dimension: str | None = None,
    levels: tuple[Level, ...] = ("ordinal", "interval"),
    n_boot: int = 1000,
    seed: int = 0,
    note: str = "",
) -> list[dict[str, Any]]:
    """Krippendorff's alpha with a bootstrap CI per dimension and level on the ratings of ``bench``.

    Only items rated by two annotators or more count (``items``), and only annotators with a rating on one
    (``annotators``; "I don't know" is no rating); ``items_read`` and ``annotators_read`` count every item and
    annotator with a rating on the dimension, and ``note`` says them where they differ (one annotator's ratings:
    alpha reads 0 of the 1 annotator read, not "no annotator was read"). An alpha
    that is undefined (no such item, or one value throughout) is None, and so is an interval undefined on most
    resamples, each with the reason in ``note``. Label ratings (text, not numbers) get nominal
    alpha only, whatever ``levels`` says: their order is not known, and their alphabetical one is no scale's; the
    note says so.

    Example:
        >>> from dialeval.schema import Rating
        >>> b = Benchmark("mine", {}, [], [Rating(item_id=i, dimension="q", annotator=a, value=3)
        ...                                for i in ("x", "y") for a in ("a1", "a2")])
        >>> [(r["alpha"], r["note"]) for r in agreement_rows(b, "mine", levels=("ordinal",))]
        [(None, 'q: alpha is undefined when fewer than two distinct values occur')]
    """
    dims = [choose_dimension(bench.dimensions(), dimension, source)] if dimension else list(bench.dimensions())
    if not dims:
        raise InputError(f"{bench.source or source} has no ratings (a table's are read with --rating-col "
                         "COLUMN=DIMENSION, and --annotator-col names who gave each)")  # fmt: skip
    rows = []
    for dim in dims:
        given = [r for r in bench.ratings if r.dimension == dim]
        valued = [r for r in given if r.value is not None and not r.dont_know]
        rated = multiply_rated(given)
        rel = reliability_matrix(rated) if rated else None
        labelled = bool(rel and rel.labels) and set(levels) != {"nominal"}
        read = pairable(rel.matrix) if rel else np.empty((0, 0))
        raters = int((~np.isnan(read)).any(axis=1).sum())  # who gave only "I don't know" (null) rated nothing
        for level in ("nominal",) if labelled else levels:
            row: dict[str, Any] = {"source": source, "dimension": dim, "level": level, "alpha": None, "ci95": None,
                                   "items": read.shape[1], "annotators": raters, "items_read": len({r.item_id for r in
                                   valued}), "annotators_read": len({r.annotator for r in valued})}  # fmt: skip
            why = _estimate(row, rel.matrix, level, n_boot, seed) if rel else NO_ITEM_RATED_TWICE
            whys = [w for w in (LABELS_NOMINAL * labelled, why, _counts_read(row)) if w]
            row["note"] = "; ".join(n for n in (note, whys and f"{dim}: {'; '.join(whys)}") if n)
            rows.append(row)
    return rows


def _counts_read(row: dict[str, Any]) -> str:
    """Say how many items and annotators were read where alpha reads none, or not every annotator ("" elsewhere).

    Items rated once are left out of alpha on most data (DSTC9's 2 of 2,200): that needs no note on each dimension.

    Example:
        >>> _counts_read({"items": 0, "items_read": 2, "annotators": 0, "annotators_read": 1})
        'read: 2 items, 1 annotator'
        >>> _counts_read({"items": 3, "items_read": 5, "annotators": 2, "annotators_read": 3})
        'alpha reads 3 of the 5 items read (those rated by 2 annotators or more) and 2 of the 3 annotators read'
        >>> _counts_read({"items": 3, "items_read": 5, "annotators": 3, "annotators_read": 3})
        ''
    """
    if row["items"] and row["annotators"] == row["annotators_read"]:
        return ""
    if not row["items"]:  # said beside NO_ITEM_RATED_TWICE
        return f"read: {counted(row['items_read'], 'item')}, {counted(row['annotators_read'], 'annotator')}"
    return (f"alpha reads {row['items']} of the {counted(row['items_read'], 'item')} read (those rated by 2 "
            f"annotators or more) and {row['annotators']} of the {counted(row['annotators_read'], 'annotator')} read")


def _estimate(row: dict[str, Any], matrix: Any, level: Level, n_boot: int, seed: int) -> str:
    """Fill ``row``'s alpha and CI; return why either is undefined ("" when neither is)."""
    got = figure(partial(krippendorff_alpha, level=level), partial(krippendorff_alpha_over_draws, level=level),
                 matrix, n_boot=n_boot, seed=seed)  # fmt: skip
    got = one_item_ci(got, row["items"])  # the pairable items, counted by the caller
    row["alpha"] = got.value  # unrounded: the table rounds once (0.0535117 was stored as 0.0535, then printed 0.053)
    row["ci95"] = list(got.ci) if got.ci else None
    return got.why
