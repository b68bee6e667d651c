"""Fit the ``quality`` ensemble on the public rated sets and measure it leave-one-benchmark-out.

The ensemble is a ridge regression (fixed penalty :data:`ALPHA`, not tuned) over the
standardised features that agree in direction on every training benchmark
(:func:`feature_signs`, from the candidates
:data:`~dialeval.metrics.quality.ENSEMBLE_FEATURES`), with each benchmark's
percentile-rank target (:mod:`dialeval.trained.data`) and equal total weight per
benchmark. :func:`leave_one_out` chooses the features and fits on all benchmarks but
one, and reports the held-out benchmark's turn-level Spearman and Pearson with 95%
context-bootstrap CIs (:func:`dialeval.trained.evaluate.correlations`); the shipped
model is chosen and fitted on all.

Example:
    >>> import numpy as np
    >>> head = fit_ridge(np.array([[0.0], [1.0], [2.0]]), np.array([0.0, 0.5, 1.0]), np.ones(3), alpha=0.0)
    >>> [round(float(v), 3) for v in head.logit(np.array([[0.0], [2.0]]))]
    [0.0, 1.0]
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from dialeval.metrics.quality.heads import LogisticHead
from dialeval.trained.data import Example

#: The rated sets the shipped ensemble is fitted on (each is also reported with the model that never saw it).
BENCHMARKS = ("usr-tc", "usr-pc", "predictive-engagement", "holistic-coherence", "gupta-dailydialog")
#: Rated sets the experiment harness only ever holds out (never fitted on): LLM replies (LMStyle's MTurk
#: appropriateness) and ConvAI bots' replies (PredictiveEngagement's ConvAI engagement).
NEVER_FITTED = ("lmstyle-mturk", "predictive-engagement-convai")
#: Ridge penalty on the standardised coefficients (fixed a priori).
ALPHA = 1.0


def fit_ridge(x: NDArray[Any], y: NDArray[Any], weight: NDArray[Any], alpha: float = ALPHA,
              signs: Sequence[float] | None = None) -> LogisticHead:  # fmt: skip
    """Fit a weighted ridge regression on standardised columns (NaN = the column mean); return it as a linear head.

    ``signs``: each coefficient is held to that sign (+1: >= 0, -1: <= 0), solved as a
    non-negative least-squares problem (:func:`scipy.optimize.nnls`, deterministic); None: unconstrained.

    Example:
        >>> x = np.array([[0.0, 0.0], [1.0, 1.0], [2.0, 1.0], [3.0, 3.0]])
        >>> y = np.array([0.0, 1.0, 2.0, 2.0])
        >>> [round(float(c), 3) for c in fit_ridge(x, y, np.ones(4), alpha=0.0).coef]
        [1.358, -0.623]
        >>> [round(float(c), 3) for c in fit_ridge(x, y, np.ones(4), alpha=0.0, signs=[1, 1]).coef]
        [0.783, 0.0]
    """
    xa = np.asarray(x, dtype=np.float64)
    mean = np.nanmean(xa, axis=0)
    xa = np.where(np.isnan(xa), mean, xa)
    scale = xa.std(axis=0)
    scale[scale < 1e-8] = 1.0
    z = (xa - mean) / scale
    w = np.asarray(weight, dtype=np.float64) / np.sum(weight)
    ybar = float(w @ y)
    zc = z - w @ z
    if signs is None:
        a = zc.T @ (zc * w[:, None]) + alpha / len(y) * np.eye(z.shape[1])
        coef = np.linalg.solve(a, zc.T @ (w * (np.asarray(y) - ybar)))
    else:
        from scipy.optimize import nnls

        sign = np.asarray(signs, dtype=np.float64)
        design = np.vstack([zc * sign * np.sqrt(w)[:, None], np.sqrt(alpha / len(y)) * np.eye(z.shape[1])])
        target = np.concatenate([np.sqrt(w) * (np.asarray(y) - ybar), np.zeros(z.shape[1])])
        coef = sign * nnls(design, target)[0]
    bias = ybar - float((w @ z) @ coef)
    return LogisticHead(mean, scale, coef, bias)


def matrix(rows: Sequence[Mapping[str, float | None]], names: Sequence[str]) -> NDArray[np.float64]:
    """Return the features as a float matrix, NaN where missing."""
    return np.asarray(
        [[np.nan if r.get(n) is None else float(r[n]) for n in names] for r in rows]  # type: ignore[arg-type]
    )


def _weights(examples: Sequence[Example]) -> NDArray[np.float64]:
    counts: dict[str, int] = {}
    for e in examples:
        counts[e.benchmark] = counts.get(e.benchmark, 0) + 1
    return np.asarray([1.0 / counts[e.benchmark] for e in examples])


def _predict(head: LogisticHead, x: NDArray[Any]) -> list[float]:
    return [float(v) for v in head.logit(np.where(np.isnan(x), head.mean, x))]


def feature_signs(
    examples: Sequence[Example], rows: Sequence[Mapping[str, float | None]], names: Sequence[str]
) -> dict[str, float]:
    """Return, for each feature whose Spearman with the target has one sign on every benchmark, that sign.

    A feature whose direction differs between rated sets (LM likelihood and length rise
    with quality on USR and fall on the DailyDialog-based sets) has no direction to
    trust on a set it never saw, so it is left out; so is one that is constant or
    missing on a benchmark.

    Example:
        >>> from types import SimpleNamespace as E
        >>> ex = [E(benchmark="a", target=0.0), E(benchmark="a", target=1.0), E(benchmark="a", target=0.5),
        ...       E(benchmark="b", target=0.0), E(benchmark="b", target=1.0), E(benchmark="b", target=0.5)]
        >>> rows = [{"up": 1, "flip": 1, "down": 3}, {"up": 3, "flip": 3, "down": 1}, {"up": 2, "flip": 2, "down": 2},
        ...         {"up": 0, "flip": 5, "down": 9}, {"up": 9, "flip": 1, "down": 0}, {"up": 4, "flip": 3, "down": 4}]
        >>> feature_signs(ex, rows, ["up", "flip", "down"])
        {'up': 1.0, 'down': -1.0}
    """
    from scipy.stats import spearmanr

    x = matrix(rows, names)
    y = np.asarray([e.target for e in examples], dtype=np.float64)
    bench = np.asarray([e.benchmark for e in examples])
    keep = {}
    for j, name in enumerate(names):
        signs = set()
        for b in sorted(set(bench.tolist())):
            m = (bench == b) & ~np.isnan(x[:, j])
            rho = float(spearmanr(x[m, j], y[m])[0]) if m.sum() > 2 and np.ptp(x[m, j]) > 0 else float("nan")
            signs.add(0.0 if np.isnan(rho) else float(np.sign(rho)))
        if signs in ({1.0}, {-1.0}):
            keep[name] = signs.pop()
    return keep


def leave_one_out(
    examples: Sequence[Example], rows: Sequence[Mapping[str, float | None]], names: Sequence[str],
    *, n_boot: int = 1000, seed: int = 0, extra: Sequence[str] = (), signed: bool = False,
    never_fitted: Sequence[str] = (),
) -> list[dict[str, Any]]:
    """Return one row per held-out benchmark: the ensemble and, for comparison, each column of ``extra`` alone.

    ``signed``: each weight is held to its feature's direction on the training sets (:func:`fit_all`).
    ``never_fitted``: benchmarks that are only ever held out: no fold is fitted on them, and each
    is measured with the fit on all the other benchmarks.
    """
    from dialeval.trained.evaluate import correlations

    out = []
    for bench in sorted({e.benchmark for e in examples}):
        held = np.asarray([e.benchmark == bench for e in examples])
        fitted = np.asarray([not h and e.benchmark not in never_fitted for e, h in zip(examples, held, strict=True)])
        train = [e for e, f in zip(examples, fitted, strict=True) if f]
        head, chosen = fit_all(train, [r for r, f in zip(rows, fitted, strict=True) if f], names, signed)
        x = matrix(rows, chosen)
        test = [e for e, h in zip(examples, held, strict=True) if h]
        cols: dict[str, Sequence[float | None]] = {"quality": _predict(head, x[held])}
        for name in extra:
            cols[name] = [r.get(name) for r, h in zip(rows, held, strict=True) if h]
        figs = correlations(test, cols, n_boot=n_boot, seed=seed)
        out.append({"benchmark": bench, "n": len(test), "trained_on": sorted({e.benchmark for e in train}),
                    "features": chosen, **figs})  # fmt: skip
    return out


def fit_all(
    examples: Sequence[Example], rows: Sequence[Mapping[str, float | None]], names: Sequence[str],
    signed: bool = False,
) -> tuple[LogisticHead, list[str]]:
    """Choose the features (:func:`feature_signs`) and fit the shipped ensemble on every example.

    ``signed``: each weight keeps the sign of its feature's Spearman with the target (a feature
    that rises with quality on every set is not given a negative weight to cancel a collinear one).
    """
    signs = feature_signs(examples, rows, names)
    chosen = list(signs)
    y = np.asarray([e.target for e in examples])
    held = [signs[n] for n in chosen] if signed else None
    return fit_ridge(matrix(rows, chosen), y, _weights(examples), signs=held), chosen


def _load_cache(path: Path | None, key: str) -> dict[str, dict[str, float | None]]:
    if path is None or not path.exists():
        return {}
    data = json.loads(path.read_text(encoding="utf-8"))
    return dict(data["rows"]) if data.get("key") == key else {}


def _save_cache(path: Path | None, key: str, rows: dict[str, dict[str, float | None]]) -> None:
    if path is not None:
        from dialeval.atomic import atomic_write

        merged = {**_load_cache(path, key), **rows}  # keep what another run added meanwhile
        with atomic_write(path) as fh:
            fh.write(json.dumps({"key": key, "rows": merged}))


def rated_likelihoods(
    examples: Sequence[Example], metric: Any, cache: Path | None = None, progress: Callable[[int], None] | None = None,
) -> list[dict[str, float | None]]:
    """Return the LM outputs per example, through a JSON cache keyed by the LM's fingerprint and the item ids."""
    from dialeval.models.loading import fingerprint, resolve_lm_source

    key = fingerprint(resolve_lm_source(metric.config.lm))
    known = _load_cache(cache, key)
    ids = [f"{e.benchmark}/{e.item_id}" for e in examples]
    todo = [i for i, k in enumerate(ids) if k not in known]
    for start in range(0, len(todo), metric.batch_size):
        known.update(_load_cache(cache, key))
        part = [i for i in todo[start : start + metric.batch_size] if ids[i] not in known]
        if not part:
            continue
        values = metric.likelihood([examples[i].item for i in part])
        for n, i in enumerate(part):
            known[ids[i]] = {k: v[n] for k, v in values.items()}
        _save_cache(cache, key, known)
        if progress is not None:
            progress(len(part))
    return [known[k] for k in ids]


def rated_features(
    examples: Sequence[Example], metric: Any, cache: Path | None = None, progress: Callable[[int], None] | None = None,
) -> list[dict[str, float | None]]:
    """Return :meth:`~dialeval.metrics.quality.QualityMetric.features` per example (likelihoods cached in ``cache``).

    The encoder features come first, the likelihoods (the slow part) after, through the cache.
    """
    names = ("lm_likelihood", "lm_likelihood_uncond", "lm_context_gain")
    out: list[dict[str, float | None]] = []
    for start in range(0, len(examples), 512):
        part = examples[start : start + 512]
        feats = metric.features([e.item for e in part], {k: [None] * len(part) for k in names}, frozen=True)
        out.extend({k: v[n] for k, v in feats.items()} for n in range(len(part)))
    lm = rated_likelihoods(examples, metric, cache, progress)
    for row, values in zip(out, lm, strict=True):
        row["lm_nll"] = 100.0 / values["lm_likelihood"] if values["lm_likelihood"] else None
        row["lm_nll_uncond"] = 100.0 / values["lm_likelihood_uncond"] if values["lm_likelihood_uncond"] else None
        row["lm_context_gain"] = values["lm_context_gain"]
    return out


def fit_ensemble(
    heads: Path,
    output: Path,
    *,
    benchmarks: Sequence[str] = BENCHMARKS,
    cache: Path | None = None,
    n_boot: int = 1000,
    seed: int = 0,
    limit: int | None = None,
    progress: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """Measure the ensemble over ``heads`` leave-one-benchmark-out, fit it on all, write ``ensemble.json`` and its card.

    Returns:
        The card: features, training benchmarks and their data sha256, the penalty, the
        leave-one-benchmark-out results (each with what the model saw), the heads' card sha256.
    """
    import hashlib

    from dialeval.metrics.quality import ENSEMBLE_FEATURES, QualityMetric
    from dialeval.metrics.quality.heads import save_head
    from dialeval.trained.data import data_sha256
    from dialeval.trained.experiment import load_dataset

    say = progress or (lambda _msg: None)
    ds = load_dataset(list(benchmarks), limit=limit)
    metric = QualityMetric(heads=str(heads), device="cpu")
    done = [0]

    def tick(n: int) -> None:
        done[0] += n
        say(f"features {done[0]}/{len(ds.examples)}")

    rows = rated_features(ds.examples, metric, cache, tick)
    names = list(ENSEMBLE_FEATURES)
    extra = ("sensible_p", "fluent_p", "lm_context_gain", "lm_nll", "sbert_context", "log_words")
    lobo = leave_one_out(ds.examples, rows, names, n_boot=n_boot, seed=seed, extra=extra)
    head, chosen = fit_all(ds.examples, rows, names)
    output.mkdir(parents=True, exist_ok=True)
    save_head(head, output / "ensemble.json", "quality")
    data = json.loads((output / "ensemble.json").read_text(encoding="utf-8"))
    data["features"] = chosen
    (output / "ensemble.json").write_text(json.dumps(data) + "\n", encoding="utf-8")
    card = {
        "model": "ridge", "alpha": ALPHA, "target": "per-benchmark percentile rank of the human mean",
        "candidate_features": names, "feature_rule": "same sign of Spearman with the target on every benchmark",
        "features": chosen, "benchmarks": list(benchmarks), "dimensions": ds.dimensions,
        "data_sha256": data_sha256(ds.examples), "n": len(ds.examples),
        "heads_card_sha256": hashlib.sha256((heads / "card.json").read_bytes()).hexdigest(),
        "leave_one_benchmark_out": lobo, "n_boot": n_boot, "seed": seed,
        "files": {"ensemble.json": hashlib.sha256((output / "ensemble.json").read_bytes()).hexdigest()},
    }
    (output / "card.json").write_text(json.dumps(card, indent=1) + "\n", encoding="utf-8")
    return card
