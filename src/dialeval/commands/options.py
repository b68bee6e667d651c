"""The run options every scoring command shares, gathered in one :class:`~dialeval.scoring.ScoringRequest`.

``score``, ``benchmark``, ``stress``, ``judge run``, ``lmstyle`` and ``train`` take them with the
same names and defaults (:func:`run_options`): ``-m``, ``-p``, ``--device``, ``--engine``,
``--ray-*``, ``--cache``, ``--no-cache`` and ``-q``.
"""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import Any

import typer

from dialeval.cache import cache_field, check_cache_path
from dialeval.commands.argv import given_as_folder
from dialeval.commands.common import option_bundle, split_repeated
from dialeval.errors import InputError
from dialeval.models.device import DEVICE_FORMS, check_device
from dialeval.paths import score_cache_path
from dialeval.scoring import ScoringRequest

allow_failures_option = typer.Option(
    False, "--allow-failures",
    help="Exit 0 even when judge requests failed (their items keep null scores whose error says why).",
)  # fmt: skip

_RUN_PARAMS = [
    inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=kind)
    for name, kind, default in [
        ("metrics", list[str], typer.Option(
            [], "--metrics", "-m", help="Comma-separated metric families or outputs, as dialeval metrics lists them; "
            "repeatable (default: the command's set; score and benchmark: all that run here)."
        )),
        ("param", list[str], typer.Option(
            [], "--param", "-p", help="Metric parameter, \\[metric.]key=value; repeatable (dialeval metrics lists each "
            "metric's). Spaces around the metric and the key are dropped (as around the names of -m, --engine, "
            "--device); the value after = is taken as given, spaces included (likelihood.turn_separator=' | ')."
        )),
        ("device", str | None, typer.Option(
            None, "--device", help=f"Torch device: {DEVICE_FORMS} (default: cuda if torch sees a GPU)."
        )),
        ("engine", str, typer.Option(
            "local", "--engine",
            help="Where metrics run: local (this process) or ray (a Ray cluster; pip install 'dialeval\\[ray]').",
        )),
        ("ray_address", str | None, typer.Option(
            None, "--ray-address", help="Ray cluster to join (host:port or auto); default: start Ray on this machine."
        )),
        ("ray_workers", int | None, typer.Option(
            None, "--ray-workers", help="Ray actors per metric (default: cluster CPUs)."
        )),
        ("ray_cpus", float | None, typer.Option(
            None, "--ray-cpus-per-worker", help="CPUs (torch threads) per Ray actor (default: 1)."
        )),
        ("cache", Path | None, typer.Option(
            None, "--cache",
            help="Score cache (SQLite); default $DIALEVAL_SCORE_CACHE, else scores.sqlite in $DIALEVAL_CACHE "
            "(~/.cache/dialeval).",
        )),
        ("no_cache", bool, typer.Option(
            False, "--no-cache", help="Compute every item; read and write no score cache."
        )),
        ("quiet", bool, typer.Option(
            False, "--quiet", "-q", help="No progress bars (they are off anyway when stderr is not a terminal)."
        )),
    ]
]  # fmt: skip


def _key_stripped(pair: str) -> str:
    """Return a ``-p`` pair without the spaces around its metric and key; its value, after "=", as given.

    Example:
        >>> _key_stripped(" bleu . smoothing = method2 "), _key_stripped(" k=1"), _key_stripped(" no pair ")
        ('bleu.smoothing= method2 ', 'k=1', ' no pair ')
    """
    key, eq, value = pair.partition("=")
    if not eq:
        return pair
    metric, dot, name = key.rpartition(".")
    return f"{metric.strip()}{dot}{name.strip()}={value}"


def _request_from(given: dict[str, Any]) -> ScoringRequest:
    """Return the request the run options give, checked here, before any work.

    ``--metrics`` (each one given) is split on commas (an empty name is an error), ``-p`` read by :func:`_key_stripped`,
    the names of ``--engine``, ``--ray-address`` and ``--device`` without spaces around them,
    ``--device`` must be a device torch can use here (a ``-p family.device=...`` is checked where the metric is
    built, :class:`~dialeval.metrics.base.Metric`), the score cache (``--cache``, else the default one,
    :func:`~dialeval.paths.score_cache_path`) a writable SQLite file, ``-q``: no progress.

    Raises:
        InputError: An empty metric name or --ray-address, a device that is not one or that torch cannot see,
            --cache with --no-cache, or a cache path that is a folder (or ends in "/"), not SQLite, or not writable
            (the default one: a ``$DIALEVAL_CACHE`` where no folder can be made).
    """
    names = split_repeated(given.pop("metrics", None) or [], "--metrics")
    given["param"] = [_key_stripped(pair) for pair in given["param"]]
    for name in ("engine", "ray_address"):  # names, as -m's and --device's: " local" was an unknown engine
        if given.get(name) is not None:
            given[name] = given[name].strip()
    if given.get("ray_address") == "":  # Ray's "ValueError: Invalid address format" traceback, once it was imported
        raise InputError("is empty; give host:port or auto, or leave it out to start Ray on this machine",
                         field="--ray-address")  # fmt: skip
    if given.get("device") is not None:
        given["device"] = check_device(given["device"].strip(), field="--device")
    if given.get("no_cache") and given.get("cache") is not None:  # refused where the engine was built, once read
        raise InputError("--cache and --no-cache contradict each other", field="--no-cache")
    if not given.get("no_cache"):  # the default one too: a bad $DIALEVAL_CACHE was found once the table was read
        if (cache := given.get("cache")) is not None and (end := given_as_folder(cache)):  # "new/" made a file new
            raise InputError(f'ends in "{end}", naming a folder; give the score cache\'s file (SQLite), e.g. '
                             f"{cache.name}/scores.sqlite", path=cache, field="--cache")  # fmt: skip
        check_cache_path(given.get("cache") or score_cache_path(), cache_field(given.get("cache")))
    return ScoringRequest(
        metrics=None if names is None else tuple(names), params=tuple(given.pop("param")),
        progress=not given.pop("quiet"), **given,
    )  # fmt: skip


#: Give a typer command the run options; it declares ``request: ScoringRequest`` and receives them in one.
run_options = option_bundle("request", _RUN_PARAMS, _request_from)
#: The run options without ``--metrics``, for ``judge run`` (its ``--protocol`` names the one metric).
judge_run_options = option_bundle("request", [p for p in _RUN_PARAMS if p.name != "metrics"], _request_from)
