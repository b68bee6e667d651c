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
from typing import Any

from dialeval.engines.base import BatchResult, Engine, Job, LocalEngine, WorkBatch
from dialeval.errors import InputError, UnknownNameError
from dialeval.registry import Registry


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


__all__ = ["ENGINES", "BatchResult", "Engine", "Job", "LocalEngine", "WorkBatch", "make_engine"]
