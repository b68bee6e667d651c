"""Helpers shared by the commands: loading inputs, console output, writing results."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer
from rich.console import Console

from dialeval.atomic import atomic_write
from dialeval.data.benchmark import Benchmark
from dialeval.errors import DialevalError, InputError
from dialeval.jsonl import read_jsonl
from dialeval.schema import Candidate, Dialogue, Rating

if TYPE_CHECKING:
    from dialeval.cache import ScoreCache
    from dialeval.engines import Engine

console = Console(stderr=True)
out = Console()


def split_list(value: str | None) -> list[str] | None:
    """Split a comma-separated option into names (None stays None)."""
    if value is None:
        return None
    names = [v.strip() for v in value.split(",") if v.strip()]
    return names or None


def load_inputs(
    benchmark: str | None,
    path: Path | None,
    dialogues: Path | None,
    candidates: Path | None,
    ratings: Path | None,
    limit: int | None,
) -> Benchmark:
    """Load a catalog benchmark, or dialeval record files, optionally cut to the first ``limit`` contexts."""
    if candidates is not None:
        if dialogues is None:
            raise InputError("--candidates needs --dialogues (the contexts the candidates answer)")
        bench = Benchmark(
            name=candidates.stem,
            dialogues={d.id: d for d in read_jsonl(dialogues, Dialogue)},
            candidates=read_jsonl(candidates, Candidate),
            ratings=read_jsonl(ratings, Rating) if ratings else [],
            source=str(candidates),
        )
    else:
        from dialeval.data.catalog import load_benchmark

        bench = load_benchmark(benchmark or "usr-tc", path)
        if ratings is not None:
            bench.ratings = read_jsonl(ratings, Rating)
    if limit is not None:
        if limit < 1:
            raise InputError("--limit must be at least 1", field="--limit")
        bench = bench.head(limit)
    return bench


def write_json(path: Path, payload: Any) -> None:
    """Write JSON atomically."""
    with atomic_write(path) as handle:
        json.dump(payload, handle, indent=2, ensure_ascii=False)
        handle.write("\n")


def write_text(path: Path, text: str) -> None:
    """Write text atomically."""
    with atomic_write(path) as handle:
        handle.write(text)


def fail(exc: DialevalError) -> None:
    """Print a dialeval error without a traceback and exit with status 2."""
    from rich.markup import escape

    console.print(f"[bold red]error:[/] {escape(str(exc))}", highlight=False)
    raise typer.Exit(2)


def ensure_unique(names: Sequence[str]) -> None:
    """Reject duplicated names in a list option."""
    seen = set()
    for n in names:
        if n in seen:
            raise InputError(f'"{n}" is listed twice')
        seen.add(n)


ENGINE_HELP = "Where metrics run: local (this process) or ray (a Ray cluster; pip install 'dialeval[ray]')."
engine_option = typer.Option("local", "--engine", help=ENGINE_HELP)
ray_address_option = typer.Option(
    None, "--ray-address", help="Ray cluster to join (host:port or auto); default: start Ray on this machine."
)
ray_workers_option = typer.Option(None, "--ray-workers", help="Ray actors per metric (default: cluster CPUs).")
ray_cpus_option = typer.Option(1.0, "--ray-cpus-per-worker", help="CPUs (torch threads) per Ray actor.")
cache_option = typer.Option(
    None, "--cache", help="Score cache (SQLite); default $DIALEVAL_SCORE_CACHE or ~/.cache/dialeval/scores.sqlite."
)
no_cache_option = typer.Option(False, "--no-cache", help="Compute every item; read and write no score cache.")


def make_run_context(
    engine: str, ray_address: str | None, ray_workers: int | None, ray_cpus: float, cache: Path | None, no_cache: bool
) -> tuple[Engine, ScoreCache | None]:
    """Build the engine and the score cache that ``score``, ``benchmark`` and ``judge run`` share."""
    from dialeval.cache import ScoreCache
    from dialeval.engines import make_engine
    from dialeval.paths import score_cache_path

    if no_cache and cache is not None:
        raise InputError("--cache and --no-cache contradict each other", field="--no-cache")
    if engine != "ray" and (ray_address is not None or ray_workers is not None):
        raise InputError("--ray-address and --ray-workers need --engine ray", field="--engine")
    runner = make_engine(engine, address=ray_address, workers=ray_workers, cpus_per_worker=ray_cpus)
    return runner, None if no_cache else ScoreCache(cache or score_cache_path())
