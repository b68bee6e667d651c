"""Train-and-test runs behind ``dialeval train``: cross-benchmark transfer, leave-one-group-out, context folds.

Example:
    >>> parse_dimensions(["usr-tc=Overall", "gupta-dailydialog=appropriateness"])
    {'usr-tc': 'Overall', 'gupta-dailydialog': 'appropriateness'}
"""

from __future__ import annotations

import time
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from dialeval.errors import InputError, UnknownNameError, ensure_unique
from dialeval.trained.data import Example, dimension_for, examples_from
from dialeval.trained.evaluate import correlations, evaluate
from dialeval.trained.evaluator import Evaluator
from dialeval.trained.models import make_evaluator
from dialeval.trained.splits import Split

if TYPE_CHECKING:
    from dialeval.data.benchmark import Benchmark


@dataclass
class Dataset:
    """The examples of several benchmarks and the dimension used for each."""

    examples: list[Example] = field(default_factory=list)
    dimensions: dict[str, str] = field(default_factory=dict)


def parse_dimensions(pairs: Sequence[str]) -> dict[str, str]:
    """Parse ``benchmark=dimension`` overrides; a benchmark given twice is refused (the last one won).

    Example:
        >>> parse_dimensions(["usr-pc=Engaging", "usr-tc = Overall"])
        {'usr-pc': 'Engaging', 'usr-tc': 'Overall'}
    """
    out: dict[str, str] = {}
    for p in pairs:
        bench, sep, dim = p.partition("=")
        if not sep or not bench.strip() or not dim.strip():
            raise InputError(f'"{p}" is not of the form benchmark=dimension', field="--dim")
        if bench.strip() in out:
            raise InputError(f'benchmark "{bench.strip()}" is given twice', field="--dim")
        out[bench.strip()] = dim.strip()
    return out


def load_dataset(
    names: Sequence[str],
    *,
    dimension: str | None = None,
    overrides: dict[str, str] | None = None,
    target_norm: str = "rank",
    limit: int | None = None,
    own: Mapping[str, Benchmark] | None = None,
) -> Dataset:
    """Load catalog benchmarks (or the user's ``own`` tables, by name) into examples.

    Each benchmark's dimension is, in order: its ``overrides`` entry; ``dimension``
    when the benchmark rates it; the default of :func:`~dialeval.trained.data.dimension_for`.

    Raises:
        InputError: An unknown benchmark, or a dimension it does not rate.
    """
    from dialeval.data.catalog import load_benchmark

    ds = Dataset()
    for name in names:
        bench = (own or {})[name] if name in (own or {}) else load_benchmark(name)
        if limit is not None:
            bench = bench.head(limit)
        wanted = (overrides or {}).get(name)
        if wanted is None and dimension is not None and dimension in bench.dimensions():
            wanted = dimension
        dim = dimension_for(bench, wanted)
        ds.dimensions[name] = dim
        ds.examples.extend(examples_from(bench, dim, target_norm))
    return ds


def run_split(
    kind: str,
    split: Split,
    *,
    task: str = "regression",
    params: dict[str, Any] | None = None,
    seed: int = 0,
    n_boot: int = 1000,
) -> tuple[Evaluator, dict[str, Any], list[float]]:
    """Fit ``kind`` on the split's train side and evaluate it on the test side.

    Returns:
        The fitted model, a result row, and the test predictions.
    """
    ev = make_evaluator(kind, task, seed, **(params or {}))
    start = time.perf_counter()
    try:
        info = ev.fit(split.train)
    except InputError as exc:  # which of the splits could not be fitted: the error named none
        message = f'split "{split.name}": {exc.message}'
        raise InputError(message, field=exc.field, path=exc.path, line=exc.line) from None
    scores = ev.predict([e.item for e in split.test])
    result = evaluate(split.test, scores, ev.predict_labels(scores), n_boot=n_boot, seed=seed)
    row = {
        "model": kind,
        "split": split.name,
        "task": ev.task,
        "train": "+".join(sorted({e.benchmark for e in split.train})),
        "n_train": len(split.train),
        "n_train_contexts": len({e.group_context for e in split.train}),
        **result,
        "seconds": round(time.perf_counter() - start, 2),
        "fit": {k: v for k, v in info.items() if k != "step_losses"},
    }
    return ev, row, scores


def baseline_rows(
    split: Split,
    predictions: dict[str, list[float]],
    families: Sequence[str] | None = None,
    n_boot: int = 1000,
    seed: int = 0,
) -> list[dict[str, Any]]:
    """Return the turn-level Spearman/Pearson (with CIs) of every offline metric on the test side.

    These are the single metrics the trained evaluators must beat, measured on the
    same items with the same bootstrap resamples. Each model of ``predictions``
    (``{model: test scores}``) is then compared with the best of them by a paired
    cluster bootstrap of the Spearman difference
    (:func:`dialeval.meta.significance.compare_metrics`); the comparison is added
    to the returned model rows (``vs_metric``, ``spearman_diff``, ``spearman_diff_ci``, ``p_paired``).

    Returns:
        One row per model with its comparison, then one row per metric, best first.
    """
    from dialeval.meta.significance import compare_metrics
    from dialeval.trained.evaluate import as_records
    from dialeval.trained.features import compute_features, feature_families

    fams = feature_families(families)
    rows, _ = compute_features([e.item for e in split.test], fams)
    columns = {o: [r.get(o) for r in rows] for f in fams for o in f.outputs}
    columns = {k: v for k, v in columns.items() if sum(x is not None for x in v) >= 3}
    corr = correlations(split.test, columns, n_boot, seed)
    out = []
    for metric, c in corr.items():
        if c.get("spearman") is None:
            continue
        out.append({"model": f"metric:{metric}", "split": split.name, "task": "none", "train": "", "n_train": 0,
                    "n": len(split.test), **c})
    out.sort(key=lambda r: -(r["spearman"] or -2))
    if not out or not predictions:
        return out
    best = out[0]["model"].removeprefix("metric:")
    scores, ratings = as_records(split.test, columns[best], best)
    compared = []
    for model, preds in predictions.items():
        mine, _ = as_records(split.test, preds, f"model:{model}")
        cmp = compare_metrics([*mine, *scores], ratings, metric_a=f"model:{model}", metric_b=best,
                              dimension="human", method="spearman", n_boot=n_boot, seed=seed)
        compared.append({"model": model, "vs_metric": best, "spearman_diff": cmp.difference,
                         "spearman_diff_ci": [cmp.ci_low, cmp.ci_high], "p_paired": cmp.p_value})
    return compared + out


def run_all(
    kinds: Sequence[str],
    splits: Sequence[Split],
    *,
    task: str = "regression",
    params: dict[str, dict[str, Any]] | None = None,
    seed: int = 0,
    n_boot: int = 1000,
    on_row: Callable[[dict[str, Any]], None] | None = None,
) -> tuple[list[dict[str, Any]], dict[tuple[str, str], tuple[Evaluator, list[float]]]]:
    """Run every model on every split; return the rows and ``{(kind, split): (fitted model, test predictions)}``."""
    rows = []
    models: dict[tuple[str, str], tuple[Evaluator, list[float]]] = {}
    for split in splits:
        for kind in kinds:
            ev, row, preds = run_split(
                kind, split, task=task, params=(params or {}).get(kind), seed=seed, n_boot=n_boot
            )
            rows.append(row)
            models[(kind, split.name)] = (ev, preds)
            if on_row is not None:
                on_row(row)
    return rows, models


def summarise_folds(rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Return one mean row per model over several splits (folds or held-out groups).

    Example:
        >>> summarise_folds([{"model": "m", "spearman": 0.2, "n": 2}, {"model": "m", "spearman": 0.4, "n": 2}])
        [{'model': 'm', 'split': 'mean of 2', 'spearman': 0.30000000000000004}]

    A measure undefined on some split is undefined in the mean (None, named in ``undefined``).
    """
    keys = ("accuracy", "uar", "kappa", "spearman", "pearson", "precision", "recall", "f1")
    out = []
    for model in dict.fromkeys(r["model"] for r in rows):
        mine = [r for r in rows if r["model"] == model]
        row: dict[str, Any] = {"model": model, "split": f"mean of {len(mine)}"}
        for k in keys:
            vals = [r[k] for r in mine if r.get(k) is not None]
            if len(vals) == len(mine):
                row[k] = sum(vals) / len(vals)
            elif vals or any(k in r.get("undefined", ()) for r in mine):  # a mean of the defined folds only
                row[k] = None  # would be a mean of fewer splits than its name says
                row.setdefault("undefined", []).append(k)
        out.append(row)
    return out


def check_names(train: Sequence[str], test: Sequence[str], own: Collection[str] = ()) -> None:
    """Reject a benchmark on both sides or listed twice, and unknown names (with a did-you-mean).

    ``own`` names the user's own tables (``--path``), allowed beside the catalog's names.
    """
    from dialeval.data.catalog import DATASETS

    for option, names in (("--train", train), ("--test", test)):
        for n in (n for n in names if n not in own):
            try:
                DATASETS.get(n)
            except UnknownNameError as exc:
                raise exc.given_by(option) from None
    both = set(train) & set(test)
    if both:
        raise InputError(f"benchmark(s) {', '.join(sorted(both))} both in --train and --test", field="--test")
    for option, names in (("--train", train), ("--test", test)):
        ensure_unique(names, option, "benchmark")


__all__ = ["Dataset", "baseline_rows", "check_names", "dimension_for", "load_dataset", "run_all", "run_split"]
