"""Resolve metric names and run them over a benchmark: the engine behind ``score`` and ``benchmark``.

Example:
    >>> parse_params(["bleu.smoothing=method1", "device=cpu"])
    {'bleu': {'smoothing': 'method1'}, '*': {'device': 'cpu'}}
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from dialeval.data.benchmark import Benchmark
from dialeval.errors import InputError
from dialeval.metrics import METRICS, Metric, load_builtin_metrics
from dialeval.metrics.base import metric_by_output
from dialeval.schema import Score
from dialeval.scoring import plan_job, run_jobs

if TYPE_CHECKING:
    from dialeval.cache import ScoreCache
    from dialeval.engines import Engine


@dataclass
class MetricRun:
    """What running one metric family produced."""

    family: str
    signature: str
    scores: list[Score]
    seconds: float
    summary: dict[str, Any] = field(default_factory=dict)


def parse_params(pairs: Sequence[str]) -> dict[str, dict[str, str]]:
    """Parse ``family.key=value`` (or ``key=value`` for every family) into nested dicts."""
    out: dict[str, dict[str, str]] = {}
    for pair in pairs:
        if "=" not in pair:
            raise InputError(f'parameter "{pair}" is not of the form [metric.]key=value', field="--param")
        key, value = pair.split("=", 1)
        fam, _, name = key.rpartition(".")
        out.setdefault(fam or "*", {})[name] = value
    return out


def coerce_params(cls: type[Metric], params: Mapping[str, str]) -> dict[str, Any]:
    """Convert ``key=value`` strings to the types of ``cls.Config``'s fields; unknown keys are dropped.

    Example:
        >>> from dialeval.metrics import METRICS, load_builtin_metrics
        >>> load_builtin_metrics()
        >>> coerce_params(METRICS.get("judge:custom"), {"k": "1", "cache": "no", "nope": "x"})
        {'k': 1, 'cache': False}
    """
    fields = {f.name: f for f in dataclasses.fields(cls.Config)}
    out: dict[str, Any] = {}
    for key, raw in params.items():
        if key not in fields:
            continue
        default = fields[key].default
        value: Any = raw
        if isinstance(default, bool):
            value = raw.lower() in {"1", "true", "yes"}
        elif isinstance(default, int):
            value = int(raw)
        elif isinstance(default, float):
            value = float(raw)
        out[key] = value
    return out


def resolve_metrics(
    names: Sequence[str] | None,
    *,
    bench: Benchmark | None = None,
    params: Mapping[str, Mapping[str, str]] | None = None,
) -> tuple[list[type[Metric]], dict[str, str]]:
    """Return metric families for ``names`` (families or output names).

    ``names=None`` means every registered metric that can run here (judges
    excluded: they call a model per item and are asked for by name); the ones
    that cannot run (a missing extra, or references that ``bench`` lacks) are
    returned in the second value with the reason. A family asked for by name
    that cannot run is an error. ``params`` are the ``parse_params`` result
    (a ``model=PATH`` can make a metric runnable).
    """
    skip_unavailable = names is None
    load_builtin_metrics()
    by_output = metric_by_output()
    chosen: list[type[Metric]] = []
    for name in names or [n for n in METRICS.names() if not n.startswith("judge:")]:
        if name.startswith("trained:") and name not in METRICS:  # a saved trained evaluator's folder
            from dialeval.trained.metric import register_trained

            register_trained(name)
        cls = by_output[name] if name in by_output and name not in METRICS else METRICS.get(name)
        if cls not in chosen:
            chosen.append(cls)
    ready: list[type[Metric]] = []
    missing: dict[str, str] = {}
    for cls in chosen:
        given = {**(params or {}).get("*", {}), **(params or {}).get(cls.name, {})}
        reason = cls.unavailable_reason(given)
        if reason is None and bench is not None and cls.needs_references:
            lacking = sum(1 for c in bench.candidates if not c.references)
            if lacking:
                reason = f"{lacking} of {len(bench.candidates)} items have no reference"
        if reason is None:
            ready.append(cls)
        elif skip_unavailable:
            missing[cls.name] = reason
        else:
            raise InputError(f'metric "{cls.name}" cannot run here: {reason}')
    return ready, missing


def run_metrics(
    bench: Benchmark,
    families: Sequence[type[Metric]],
    params: Mapping[str, Mapping[str, str]] | None = None,
    progress: Callable[[str, int], None] | None = None,
    *,
    cache: ScoreCache | None = None,
    engine: Engine | None = None,
) -> list[MetricRun]:
    """Score every candidate of ``bench`` with each family; reference-based ones need references.

    ``cache`` keeps finished items (a rerun computes nothing, a killed run resumes);
    ``engine`` runs the batches (default: in this process).
    """
    from dialeval.engines import LocalEngine

    engine = engine or LocalEngine()
    params = params or {}
    metrics: list[Metric] = []
    for cls in families:
        if cls.needs_references and any(not c.references for c in bench.candidates):
            lacking = sum(1 for c in bench.candidates if not c.references)
            raise InputError(
                f'metric "{cls.name}" needs references, but {lacking} of {len(bench.candidates)} '
                f'items of "{bench.name}" have none'
            )
        merged = {**params.get("*", {}), **params.get(cls.name, {})}
        metrics.append(cls(**coerce_params(cls, merged)))
    jobs = [plan_job(m, bench.candidates, bench.dialogues, cache) for m in metrics]
    tick = None if progress is None else (lambda n, items: progress(metrics[n].name, items))
    seconds = run_jobs(jobs, cache=cache, engine=engine, progress=tick)
    return [
        MetricRun(m.name, m.signature, job.assemble(), secs, engine.summary(m))
        for m, job, secs in zip(metrics, jobs, seconds, strict=True)
    ]
