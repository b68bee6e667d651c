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


def coerce_params(cls: type[Metric], params: Mapping[str, str], *, strict: bool = False) -> dict[str, Any]:
    """Convert ``key=value`` strings to the types of ``cls.Config``'s fields.

    Unknown keys are dropped, or with ``strict`` an error naming the valid keys
    (a typo such as ``-p likelihood.modle=PATH`` must not silently run the default).

    Raises:
        InputError: A value of the wrong type, or (``strict``) an unknown key.

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
            if strict:
                raise InputError(
                    f'metric "{cls.name}" has no parameter "{key}"; its parameters: {", ".join(sorted(fields))}',
                    field="--param",
                )
            continue
        default = fields[key].default
        value: Any = raw
        try:
            if isinstance(default, bool):
                if raw.lower() not in _BOOLEANS:
                    raise ValueError(f"not one of {', '.join(sorted(_BOOLEANS))}")
                value = _BOOLEANS[raw.lower()]
            elif isinstance(default, int):
                value = int(raw)
            elif isinstance(default, float):
                value = float(raw)
        except ValueError as exc:
            raise InputError(f'{cls.name}.{key}={raw!r}: {exc}', field="--param") from None
        out[key] = value
    return out


_BOOLEANS = {"1": True, "true": True, "yes": True, "0": False, "false": False, "no": False}


def metric_params(families: Sequence[type[Metric]], parsed: Mapping[str, Mapping[str, str]]) -> dict[str, Any]:
    """Return each family's constructor parameters from ``-p`` (``key=value`` for all, ``family.key=value``).

    A ``family.key`` the family does not have is an error, and so is a ``key`` (for all) that no
    family of the run has.

    Raises:
        InputError: An unknown key or a value of the wrong type.

    Example:
        >>> from dialeval.runner import resolve_metrics
        >>> fams, _ = resolve_metrics(["bleu"])
        >>> metric_params(fams, {"bleu": {"smoothing": "method1"}})
        {'bleu': {'smoothing': 'method1'}}
    """
    shared = dict(parsed.get("*", {}))
    out: dict[str, Any] = {}
    for f in families:
        out[f.name] = {**coerce_params(f, shared), **coerce_params(f, parsed.get(f.name, {}), strict=True)}
    known = {fld.name for f in families for fld in dataclasses.fields(f.Config)}
    unused = sorted(set(shared) - known - {"device"})  # --device is for the model metrics, if any
    if unused:
        raise InputError(
            f'no metric of this run has the parameter{"s" if len(unused) > 1 else ""} {", ".join(unused)}',
            field="--param",
        )
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
    ``engine`` runs the batches (default: in this process). ``style`` with
    ``target=tag:NAME`` scores each candidate for the style in its tag ``NAME`` (one
    metric per style, as the LMStyle data mixes four tasks); its run's signature lists
    each style's signature, and every score carries its own.
    """
    from dialeval.engines import LocalEngine

    engine = engine or LocalEngine()
    given = metric_params(families, params or {})
    cands = list(bench.candidates)
    units: list[tuple[int, Metric, list[int]]] = []  # (family, metric, positions of its candidates)
    for f, cls in enumerate(families):
        if cls.needs_references and any(not c.references for c in cands):
            lacking = sum(1 for c in cands if not c.references)
            raise InputError(
                f'metric "{cls.name}" needs references, but {lacking} of {len(cands)} '
                f'items of "{bench.name}" have none'
            )
        tag = per_item_tag(cls, given[cls.name])
        if tag is None:
            units.append((f, cls(**given[cls.name]), list(range(len(cands)))))
            continue
        for value, positions in _group_by_tag(cands, tag, cls.name).items():
            units.append((f, cls(**{**given[cls.name], "target": value}), positions))
    jobs = [plan_job(m, [cands[j] for j in pos], bench.dialogues, cache) for _, m, pos in units]
    tick = None if progress is None else (lambda n, items: progress(units[n][1].name, items))
    seconds = run_jobs(jobs, cache=cache, engine=engine, progress=tick)
    runs = []
    for f, cls in enumerate(families):
        mine = [(u, job, secs) for u, job, secs in zip(units, jobs, seconds, strict=True) if u[0] == f]
        per_item: dict[int, list[Score]] = {}
        width = len(cls.outputs)
        for (_, _, positions), job, _ in mine:
            scores = job.assemble()
            for n, j in enumerate(positions):
                per_item[j] = scores[n * width : (n + 1) * width]
        signature = "; ".join(dict.fromkeys(u[1].signature for u, _, _ in mine))
        runs.append(
            MetricRun(
                cls.name, signature, [s for j in range(len(cands)) for s in per_item[j]],
                sum(secs for _, _, secs in mine), engine.summary(mine[0][0][1]),
            )
        )
    return runs


TAG_PREFIX = "tag:"


def per_item_tag(cls: type[Metric], params: Mapping[str, Any]) -> str | None:
    """Return the candidate tag that holds each item's requested style (``style`` with ``target=tag:NAME``), if any.

    Example:
        >>> from dialeval.metrics import METRICS, load_builtin_metrics
        >>> load_builtin_metrics()
        >>> per_item_tag(METRICS.get("style"), {"target": "tag:task"}), per_item_tag(METRICS.get("style"), {})
        ('task', None)
    """
    target = params.get("target")
    if cls.name == "style" and isinstance(target, str) and target.startswith(TAG_PREFIX):
        return target[len(TAG_PREFIX) :]
    return None


def _group_by_tag(cands: Sequence[Any], tag: str, family: str) -> dict[str, list[int]]:
    """Candidate positions per (lower-cased) value of ``tag``; a candidate without it is an error."""
    groups: dict[str, list[int]] = {}
    for j, c in enumerate(cands):
        value = c.tags.get(tag)
        if not value:
            raise InputError(
                f'{family}.target={TAG_PREFIX}{tag}: candidate "{c.id}" has no "{tag}" tag', field=f"tags.{tag}"
            )
        groups.setdefault(str(value).strip().lower(), []).append(j)
    return dict(sorted(groups.items()))
