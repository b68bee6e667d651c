"""``dialeval score``: records in, scores out."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from dialeval.commands.common import (
    TABLE_RULE,
    TableOptions,
    cache_option,
    check_output,
    check_request_failures,
    console,
    engine_option,
    fail,
    load_inputs,
    make_run_context,
    no_cache_option,
    out,
    ray_address_option,
    ray_cpus_option,
    ray_workers_option,
    split_list,
    table_options,
)
from dialeval.commands.options import allow_failures_option, quiet_option
from dialeval.errors import DialevalError
from dialeval.jsonl import write_jsonl
from dialeval.scoring import score_names


@table_options
def score(
    output: Path = typer.Option(..., "--output", "-o", help="Scores JSONL to write."),
    benchmark: str | None = typer.Option(None, "--benchmark", "-b", help="Catalog benchmark (default usr-tc)."),
    path: Path | None = typer.Option(None, "--path", help=TABLE_RULE),
    dialogues: Path | None = typer.Option(None, "--dialogues", help="Dialogue records (JSONL)."),
    candidates: Path | None = typer.Option(None, "--candidates", help="Candidate records (JSONL)."),
    metrics: str | None = typer.Option(
        None, "--metrics", "-m", help="Comma-separated metrics (default: all that run here)."
    ),
    param: list[str] = typer.Option([], "--param", "-p", help="Metric parameter, [metric.]key=value; repeatable."),
    device: str | None = typer.Option(None, "--device", help="cpu or cuda (default: cuda if torch sees a GPU)."),
    limit: int | None = typer.Option(None, "--limit", help="Only the first N contexts."),
    engine: str = engine_option,
    ray_address: str | None = ray_address_option,
    ray_workers: int | None = ray_workers_option,
    ray_cpus: float = ray_cpus_option,
    cache: Path | None = cache_option,
    no_cache: bool = no_cache_option,
    as_json: bool = typer.Option(False, "--json", help="Print a JSON summary only."),
    quiet: bool = quiet_option,
    allow_failures: bool = allow_failures_option,
    table: TableOptions = TableOptions(),
) -> None:
    """Score candidate responses with metrics and write Score records (JSONL).

    Finished items are kept in the score cache: a rerun computes nothing and a killed run resumes.
    """
    try:
        check_output(output)
        bench = load_inputs(benchmark, path, dialogues, candidates, None, limit, table=table, show=not as_json)
        run_engine, score_cache = make_run_context(engine, ray_address, ray_workers, ray_cpus, cache, no_cache)
        runs, skipped = score_names(
            split_list(metrics), bench.candidates, bench.dialogues, param,
            defaults={"device": device} if device else None,
            cache=score_cache, engine=run_engine, quiet=as_json or quiet,
        )
        n = write_jsonl(output, (s for r in runs for s in r.scores))
    except DialevalError as exc:
        fail(exc)
        return
    summary = {
        "benchmark": bench.name,
        "items": len(bench.candidates),
        "scores": n,
        "output": str(output),
        "engine": run_engine.describe(),
        "cache": None if score_cache is None else str(score_cache.path),
        "metrics": {r.family: {"signature": r.signature, "seconds": round(r.seconds, 3), **r.summary} for r in runs},
        "skipped_metrics": skipped,
    }
    if as_json:
        out.print_json(json.dumps(summary))
    else:
        for r in runs:
            line = f"{r.family:<12} {len(r.scores):>7} scores  {r.seconds:7.2f}s  {r.signature}"
            console.print(line, highlight=False)
        for name, why in skipped.items():
            console.print(f"[yellow]skipped[/] {name}: {why}", highlight=False)
        console.print(f"wrote {n} scores for {len(bench.candidates)} items to {output}")
    check_request_failures((s for r in runs for s in r.scores), allow_failures)


def register(app: typer.Typer) -> None:
    """Add ``score`` to the CLI."""
    app.command("score")(score)
