"""Run metric batches on a Ray cluster: Ray Data over the batches, one actor pool per metric.

Each actor builds the metric once (so a model loads once per worker, not once
per batch) and calls the same :func:`~dialeval.engines.base.compute_batch` the
local engine calls, on the same batches the scorer cut; one Ray Data row is one
batch. Results stream back to the driver as batches finish, and the scorer
commits each to the score cache at once: a driver killed halfway resumes from
the cache, and an actor killed halfway is restarted by Ray, which runs its
unfinished batch again (Ray Data's actor pools restart actors and retry their
tasks).

The actors report the metric signature they built; a worker whose signature
differs from the driver's (another model file, another library version) stops
the run instead of mixing numbers. Judge counters (calls, parse failures,
tokens) come back per batch and are summed, so the run summary counts every
finished batch once, whichever worker ran it.

Example:
    >>> enc = encode_batch([("k", MetricInput(response="hi", context=(Turn(speaker="A", text="yo"),)))])
    >>> decode_batch(enc)[0][1] == MetricInput(response="hi", context=(Turn(speaker="A", text="yo"),))
    True
"""

from __future__ import annotations

import base64
import dataclasses
import json
import logging
import math
import os
import pickle
import socket
import sys
from collections.abc import Iterator, Sequence
from typing import Any

from dialeval.errors import DialevalError, InputError
from dialeval.metrics.base import METRICS, Metric, MetricInput, configured
from dialeval.schema import Turn

from .base import BatchFailed, BatchResult, Job, WorkBatch, compute_batch, failing_key, numeric_summary

INSTALL_HINT = "pip install 'dialeval[ray]'"


def encode_batch(batch: Sequence[tuple[str, MetricInput]]) -> str:
    """Serialise a batch of (key, input) as JSON (what travels to the workers).

    Items of one batch often share context turns (every response to a context, every
    prefix of a dialogue), so distinct turns are sent once and items refer to them.
    """
    table: dict[tuple[str, str], int] = {}
    items = [
        [
            key,
            i.response,
            [table.setdefault((t.speaker, t.text), len(table)) for t in i.context],
            list(i.references),
            list(i.knowledge),
            dict(i.tags),
        ]
        for key, i in batch
    ]
    return json.dumps({"turns": list(table), "items": items}, ensure_ascii=False)


def decode_batch(payload: str) -> WorkBatch:
    """Rebuild the batch :func:`encode_batch` wrote (each distinct turn is built once), tags included.

    Example:
        >>> item = MetricInput(response="r", context=(Turn(speaker="A", text="hi"),), tags={"style": "formal"})
        >>> [(k, i == item, dict(i.tags)) for k, i in decode_batch(encode_batch([("k", item)]))]
        [('k', True, {'style': 'formal'})]
    """
    data = json.loads(payload)
    # the turns were validated records on the driver: rebuild them without validating again
    turns = [Turn.model_construct(speaker=s, text=t) for s, t in data["turns"]]
    return [
        (
            key,
            MetricInput(
                response=response,
                context=tuple(turns[n] for n in context),
                references=tuple(refs),
                knowledge=tuple(knowledge),
                tags=tags,
            ),
        )
        for key, response, context, refs, knowledge, tags in data["items"]
    ]


def encode_error(exc: DialevalError) -> str:
    """Serialise a worker's dialeval error for the driver: its message, and the error itself pickled.

    Raised in the worker, Ray Data wrapped it in a ``UserCodeException`` traceback of some 200 lines
    (exit status 1) where the local engine prints one line; the driver raises it again instead.

    Example:
        >>> raise decode_error(encode_error(InputError("no such model", field="--param")))
        Traceback (most recent call last):
        ...
        dialeval.errors.InputError: field "--param": no such model
    """
    try:
        pickled = base64.b64encode(pickle.dumps(exc)).decode("ascii")
    except Exception:  # an attribute that does not pickle: the message still travels
        pickled = ""
    return json.dumps({"message": str(exc), "pickled": pickled})


def encode_failure(exc: Exception, metric: Metric | None, batch: WorkBatch) -> str:
    """Serialise a metric's ordinary exception (a plugin's KeyError) and the item that raised it alone.

    The worker names the item, where the batch ran: Ray Data wrapped the exception in a ``UserCodeException``
    traceback, and the driver, computing the batch again to find the item, loaded the metric's model there too.

    Example:
        >>> failed = decode_error(encode_failure(KeyError("b"), None, []), job=2)
        >>> failed.job, failed.detail, failed.key
        (2, "KeyError: 'b'", None)
    """
    key = None if metric is None else failing_key(metric, batch)
    return json.dumps({"failed": f"{type(exc).__name__}: {exc}", "key": key})


def decode_error(text: str, job: int = 0) -> DialevalError | BatchFailed:
    """Rebuild the error :func:`encode_error` (or :func:`encode_failure`, for job ``job``) wrote.

    A dialeval error that does not unpickle comes back with its message.
    """
    data = json.loads(text)
    if "failed" in data:
        return BatchFailed(job, data["failed"], data["key"])
    if not data["pickled"]:
        return DialevalError(data["message"])
    try:
        exc = pickle.loads(base64.b64decode(data["pickled"]))
    except Exception:  # a subclass whose constructor takes other arguments than its message
        return DialevalError(data["message"])
    return exc if isinstance(exc, DialevalError) else DialevalError(data["message"])


def model_loads() -> int:
    """Return how many models this process has loaded through :mod:`dialeval.models.loading`."""
    loading = sys.modules.get("dialeval.models.loading")
    if loading is None:
        return 0
    fns = (loading.load_causal_lm, loading.load_sentence_encoder, loading.load_classifier)
    return sum(int(fn.cache_info().misses) for fn in fns)


def metric_spec(metric: Metric) -> dict[str, Any]:
    """Describe ``metric`` so a worker can build the same one.

    Registered families travel by name (the worker resolves it through
    :mod:`dialeval.metrics.resolve` as the CLI does, ``trained:PATH`` included);
    any other class travels as the class itself (pickled by value when it lives
    in a script).
    """
    params = dataclasses.asdict(metric.config)
    cls = type(metric)
    if metric.name in METRICS and METRICS.get(metric.name) is cls:
        return {"family": metric.name, "params": params}
    return {"cls": cls, "params": params}


def build_metric(spec: dict[str, Any]) -> Metric:
    """Build the metric :func:`metric_spec` described (in a worker)."""
    if "family" in spec:
        from dialeval.metrics.resolve import build_metric as by_name

        return by_name(spec["family"], spec["params"])
    cls: type[Metric] = spec["cls"]
    return configured(cls, spec["params"])


class BatchWorker:
    """A Ray Data actor: builds each metric once, on its first batch, then computes whole batches.

    One row is one batch of one metric (``job`` indexes ``specs``).
    """

    def __init__(self, specs: list[dict[str, Any]]) -> None:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        self.specs = specs
        self.metrics: dict[int, Metric] = {}
        self.worker = f"{socket.gethostname()}:{os.getpid()}"

    def _metric(self, job: int) -> Metric:
        if job not in self.metrics:
            self.metrics[job] = build_metric(self.specs[job])
        return self.metrics[job]

    def __call__(self, rows: dict[str, Any]) -> dict[str, Any]:
        """Compute every batch of ``rows``; return values, reasons (unscored), counters, signatures as columns."""
        import numpy as np

        values: list[str] = []
        unscored: list[str] = []
        stats: list[str] = []
        signatures: list[str] = []
        errors: list[str] = []
        for job, payload in zip(rows["job"], rows["payload"], strict=True):
            metric, batch = None, decode_batch(str(payload))
            try:
                metric = self._metric(int(job))
                before = numeric_summary(metric)
                done = compute_batch(metric, batch)
            except MemoryError:  # as the local engine: not a metric's mistake to pin on an item
                raise
            except Exception as exc:  # the driver raises it as the local engine would
                values.append("{}")
                unscored.append("{}")
                stats.append("{}")
                signatures.append("")
                said = encode_error(exc) if isinstance(exc, DialevalError) else encode_failure(exc, metric, batch)
                errors.append(said)
                continue
            after = numeric_summary(metric)
            values.append(json.dumps(done.values))
            unscored.append(json.dumps(done.unscored))
            stats.append(json.dumps({k: v - before.get(k, 0.0) for k, v in after.items()}))
            signatures.append(metric.signature)
            errors.append("")
        n = len(values)
        return {
            "job": np.asarray(rows["job"], dtype=np.int64),
            "values": np.array(values, dtype=object),
            "unscored": np.array(unscored, dtype=object),
            "stats": np.array(stats, dtype=object),
            "signature": np.array(signatures, dtype=object),
            "error": np.array(errors, dtype=object),
            "worker": np.array([self.worker] * n, dtype=object),
            "loads": np.array([model_loads()] * n, dtype=np.int64),
        }


def check_reachable(address: str | None, timeout: float = 5.0) -> None:
    """Refuse a ``host:port`` (or ``ray://host:port``) that takes no TCP connection within ``timeout`` seconds.

    Ray itself waits minutes for a head that is not there (a misspelt host, a stopped cluster),
    logging "Failed to get cluster ID from GCS server" on the way. Other forms (None, ``auto``,
    ``local``) are left to Ray.

    Example:
        >>> check_reachable("auto")
        >>> check_reachable("127.0.0.1:1")
        Traceback (most recent call last):
        ...
        dialeval.errors.DialevalError: cannot reach the Ray cluster at "127.0.0.1:1": Connection refused
    """
    host, _, port = (address or "").removeprefix("ray://").rpartition(":")
    if not host or not port.isdigit():
        return
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=timeout).close()
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__  # a timeout has no strerror
        raise DialevalError(f'cannot reach the Ray cluster at "{address}": {reason}') from None


class RayEngine:
    """Run batches on Ray (``--engine ray``): a local Ray instance, or a cluster at ``address``.

    Args:
        address: ``host:port`` of a running cluster's head, ``auto``, or None to start Ray here.
        workers: Actors per metric (default: the cluster's CPUs divided by ``cpus_per_worker``).
        cpus_per_worker: CPUs each actor reserves; torch in the actor uses that many threads.
    """

    name = "ray"

    def __init__(self, address: str | None = None, workers: int | None = None, cpus_per_worker: float = 1.0) -> None:
        if workers is not None and workers < 1:
            raise InputError("--ray-workers must be at least 1", field="--ray-workers")
        if not (math.isfinite(cpus_per_worker) and cpus_per_worker > 0):  # nan and inf were tracebacks in pool_size
            raise InputError(f"--ray-cpus-per-worker must be a finite number above 0, got {cpus_per_worker}",
                             field="--ray-cpus-per-worker")  # fmt: skip
        self.address = address
        self.workers = workers
        self.cpus_per_worker = cpus_per_worker
        self._stats: dict[str, dict[str, float]] = {}
        self._workers_seen: dict[str, int] = {}
        self._batches = 0

    def _connect(self) -> Any:
        try:
            import ray
        except ImportError as exc:
            raise DialevalError(f"--engine ray needs ray[data]: {INSTALL_HINT}") from exc
        if not ray.is_initialized():
            check_reachable(self.address)
            os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
            try:
                ray.init(
                    address=self.address,
                    include_dashboard=False,
                    logging_level=logging.ERROR,
                    log_to_driver=False,
                    configure_logging=True,
                )
            except ConnectionError as exc:
                raise DialevalError(f'cannot reach the Ray cluster at "{self.address}": {exc}') from exc
            if self.address is None:
                self._check_fits(ray)
        from ray.data import DataContext

        ctx = DataContext.get_current()
        ctx.enable_progress_bars = False
        ctx.print_on_execution_start = False
        logging.getLogger("ray.data").setLevel(logging.WARNING)
        return ray

    def _check_fits(self, ray: Any) -> None:
        """Refuse more CPUs per worker than the Ray instance started here has: its actors would wait for ever.

        Only for that instance: a cluster's autoscaler may add larger nodes.
        """
        cpus = float(ray.cluster_resources().get("CPU", 0.0))
        if self.cpus_per_worker > cpus:
            raise InputError(f"{self.cpus_per_worker:g} CPUs per worker, but the Ray instance started here has "
                             f"{cpus:g}", field="--ray-cpus-per-worker")  # fmt: skip

    def pool_size(self) -> int:
        """Actors per metric: ``workers`` if given, else what the cluster's CPUs allow."""
        ray = self._connect()
        if self.workers is not None:
            return self.workers
        cpus = float(ray.cluster_resources().get("CPU", 1.0))
        return max(1, int(cpus // self.cpus_per_worker))

    def run(self, jobs: Sequence[Job]) -> Iterator[tuple[int, BatchResult]]:
        """Compute every job's batches on one actor pool; yield each batch as it comes back."""
        rows = [{"job": n, "payload": encode_batch(b)} for n, (_, batches) in enumerate(jobs) for b in batches]
        if not rows:
            return
        ray = self._connect()
        ds = ray.data.from_items(rows, override_num_blocks=len(rows))
        out = ds.map_batches(
            BatchWorker,
            fn_constructor_kwargs={"specs": [metric_spec(m) for m, _ in jobs]},
            batch_size=1,
            batch_format="numpy",
            compute=ray.data.ActorPoolStrategy(size=min(self.pool_size(), len(rows))),
            num_cpus=self.cpus_per_worker,
        )
        for row in out.iter_rows():
            if row["error"]:
                raise decode_error(str(row["error"]), int(row["job"])) from None
            n = int(row["job"])
            metric = jobs[n][0]
            if row["signature"] != metric.signature:
                raise DialevalError(
                    f"worker {row['worker']} built {metric.name} with signature\n  {row['signature']}\n"
                    f"but this driver has\n  {metric.signature}\n(another model file or library version on that node?)"
                )
            delta = json.loads(row["stats"])
            stats = self._stats.setdefault(metric.signature, {})
            for key, value in delta.items():
                stats[key] = stats.get(key, 0.0) + value
            self._workers_seen[str(row["worker"])] = int(row["loads"])
            self._batches += 1
            yield n, BatchResult(json.loads(row["values"]), delta, json.loads(row["unscored"]))

    def summary(self, metric: Metric) -> dict[str, Any]:
        """Return the metric's counters summed over every finished batch on every worker."""
        base = dict(metric.run_summary())
        for key, value in self._stats.get(metric.signature, {}).items():
            base[key] = int(value) if float(value).is_integer() else round(value, 6)
        return base

    def describe(self) -> dict[str, Any]:
        """Cluster address, pool size, worker processes seen, model loads and batches run."""
        return {
            "engine": "ray",
            "address": self.address or "local",
            "workers": self.workers or "cluster CPUs / cpus_per_worker",
            "cpus_per_worker": self.cpus_per_worker,
            "worker_processes": len(self._workers_seen),
            "model_loads": sum(self._workers_seen.values()),
            "batches": self._batches,
        }
