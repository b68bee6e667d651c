"""Where metric batches run: in this process (``local``, the default) or on a Ray cluster (``ray``).

An engine takes metrics and their work, already cut into batches by the scorer
(:func:`dialeval.scoring.plan_job`), and yields each finished batch's values.
Both engines call the same :meth:`Metric.compute` on the same batches, so they
give the same numbers and the same signatures; the scorer keeps the cache, the
deduplication and the assembly of :class:`~dialeval.schema.Score` records for
both.

Example:
    >>> engine = make_engine("local")
    >>> engine.name
    'local'
    >>> make_engine("spark")
    Traceback (most recent call last):
    ...
    dialeval.errors.InputError: field "--engine": unknown engine "spark"; known: local, ray
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dialeval.engines.base import BatchResult, Engine, Job, LocalEngine, WorkBatch
from dialeval.errors import InputError, UnknownNameError
from dialeval.registry import Registry

if TYPE_CHECKING:
    from dialeval.cache import ScoreCache


def _local(**_options: Any) -> Engine:
    return LocalEngine()


def _ray(**options: Any) -> Engine:
    from dialeval.engines.ray_engine import RayEngine

    return RayEngine(**options)


#: Engine name -> factory taking ``address``, ``workers`` and ``cpus_per_worker``; plugins: ``dialeval.engines``.
ENGINES: Registry[Callable[..., Engine]] = Registry("engine")
ENGINES.register("local", _local)
ENGINES.register("ray", _ray)


def make_engine(
    name: str, *, address: str | None = None, workers: int | None = None, cpus_per_worker: float = 1.0
) -> Engine:
    """Build the engine called ``name``.

    Args:
        name: ``local`` or ``ray``.
        address: Ray cluster address (``host:port`` or ``auto``); None starts a local Ray instance.
        workers: Ray actors per metric (default: as many as the cluster's CPUs allow).
        cpus_per_worker: CPUs each Ray actor reserves (its torch threads).
    """
    try:
        factory = ENGINES.get(name)
    except UnknownNameError as exc:
        raise InputError(str(exc), field="--engine") from None
    return factory(address=address, workers=workers, cpus_per_worker=cpus_per_worker)


def run_context(
    engine: str = "local",
    *,
    address: str | None = None,
    workers: int | None = None,
    cpus_per_worker: float | None = None,
    cache: str | Path | None = None,
    no_cache: bool = False,
) -> tuple[Engine, ScoreCache | None]:
    """Build the engine and the score cache of a run (``--engine``, ``--ray-*``, ``--cache``, ``--no-cache``).

    Every front end that scores (the commands, :func:`dialeval.score`) builds them here, so they
    share the options' meaning and the default cache (:func:`dialeval.paths.score_cache_path`).

    Raises:
        InputError: An unknown engine, ``cache`` with ``no_cache``, or Ray options without ``ray``
            (``cpus_per_worker`` None: 1 on Ray).

    Example:
        >>> engine, cache = run_context(no_cache=True)
        >>> engine.name, cache
        ('local', None)
    """
    from dialeval.cache import ScoreCache, cache_field
    from dialeval.paths import score_cache_path

    if no_cache and cache is not None:
        raise InputError("--cache and --no-cache contradict each other", field="--no-cache")
    if engine != "ray" and (address is not None or workers is not None or cpus_per_worker is not None):
        raise InputError("--ray-address, --ray-workers and --ray-cpus-per-worker need --engine ray", field="--engine")
    runner = make_engine(engine, address=address, workers=workers,
                         cpus_per_worker=1.0 if cpus_per_worker is None else cpus_per_worker)  # fmt: skip
    return runner, None if no_cache else ScoreCache(cache or score_cache_path(), cache_field(cache))


__all__ = ["ENGINES", "BatchResult", "Engine", "Job", "LocalEngine", "WorkBatch", "make_engine", "run_context"]
