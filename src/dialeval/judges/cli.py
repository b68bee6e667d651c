"""``dialeval judge list``, ``dialeval judge run`` and ``dialeval serve-model``."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import typer

from dialeval.commands.common import (
    engine_option,
    fail,
    make_run_context,
    ray_address_option,
    ray_cpus_option,
    ray_workers_option,
)
from dialeval.errors import DialevalError

judge_app = typer.Typer(help="LLM-as-a-judge protocols.", no_args_is_help=True)


@judge_app.command("list")
def list_command() -> None:
    """Show every built-in protocol: name, version, scale, outputs, citation."""
    from rich.console import Console
    from rich.table import Table

    from dialeval.judges import load_protocol, protocol_names
    from dialeval.metrics.base import METRICS

    table = Table(title="dialeval judge protocols (metric family judge:<name>)")
    for column in ("name", "version", "scale", "outputs", "citation"):
        table.add_column(column, overflow="fold")
    for name in protocol_names():
        p = load_protocol(name)
        table.add_row(
            name, str(p.version), f"{p.scale.min:g}-{p.scale.max:g}",
            ", ".join(METRICS.get(f"judge:{name}").outputs), p.citation,
        )
    Console(width=200).print(table)


def summary_table(summary: dict[str, Any], values: dict[str, list[float | None]]) -> Any:
    """Return a rich table of a judge run: mean score per output, parse failures, calls, tokens."""
    from rich.table import Table

    table = Table(title=f"judge run: {summary['protocol']}")
    for column in ("output", "scored", "missing", "mean"):
        table.add_column(column)
    for out, vals in values.items():
        got = [v for v in vals if v is not None]
        table.add_row(out, str(len(got)), str(len(vals) - len(got)), f"{sum(got) / len(got):.3f}" if got else "-")
    counts = Table(title="counts")
    counts.add_column("count")
    counts.add_column("value")
    for key, val in summary.items():
        if key != "protocol":
            counts.add_row(key, str(val))
    outer = Table.grid()
    outer.add_row(table)
    outer.add_row(counts)
    return outer


@judge_app.command("run")
def run_command(
    protocol: str = typer.Option(..., "--protocol", help="Protocol name (see `judge list`) or a protocol YAML path."),
    benchmark: str = typer.Option("usr-tc", help="Catalog benchmark to judge."),
    limit: int = typer.Option(5, help="Contexts to judge (all systems of each)."),
    backend: str = typer.Option("llamacpp", help="llamacpp | openai-compatible | transformers."),
    model: str = typer.Option("", help="GGUF path, server model name, or model directory."),
    base_url: str = typer.Option("", help="API root of an openai-compatible server."),
    api_key_env: str = typer.Option("OPENAI_API_KEY", help="Environment variable with the API key."),
    k: int = typer.Option(3, help="Samples per item."),
    temperature: float = typer.Option(0.7),
    seed: int = typer.Option(0),
    max_tokens: int = typer.Option(64),
    in_flight: int = typer.Option(0, help="Requests at once (0: 1 in process, 8 over HTTP)."),
    max_calls: int = typer.Option(0, help="Budget of calls (0: none)."),
    no_cache: bool = typer.Option(False, "--no-cache", help="Do not use the request cache."),
    out: Path | None = typer.Option(None, help="Write scores (JSONL) and the summary (<out>.summary.json)."),
    engine: str = engine_option,
    ray_address: str | None = ray_address_option,
    ray_workers: int | None = ray_workers_option,
    ray_cpus: float = ray_cpus_option,
    score_cache: Path | None = typer.Option(
        None, "--score-cache", help="Keep finished items in this score cache (a killed run resumes from it)."
    ),
) -> None:
    """Judge a benchmark's first contexts and print the summary table.

    Every request is cached (--no-cache turns that off); with --engine ray the items are judged on a Ray cluster.
    """
    from rich.console import Console

    from dialeval.atomic import atomic_write
    from dialeval.data.catalog import load_benchmark
    from dialeval.jsonl import write_jsonl
    from dialeval.judges.metric import CustomJudge
    from dialeval.metrics.base import METRICS
    from dialeval.scoring import score_candidates

    params: dict[str, Any] = {
        "backend": backend, "model": model, "base_url": base_url, "api_key_env": api_key_env, "k": k,
        "temperature": temperature, "seed": seed, "max_tokens": max_tokens, "in_flight": in_flight,
        "max_calls": max_calls, "cache": not no_cache,
    }
    if protocol.endswith((".yaml", ".yml")):
        metric: Any = CustomJudge(protocol=protocol, **params)
    else:
        metric = METRICS.get(f"judge:{protocol}")(**params)
    bench = load_benchmark(benchmark).head(limit)
    try:
        runner, cache = make_run_context(engine, ray_address, ray_workers, ray_cpus, score_cache, score_cache is None)
        start = time.perf_counter()
        scores = score_candidates(metric, bench.candidates, bench.dialogues, cache=cache, engine=runner)
    except DialevalError as exc:
        fail(exc)
        return
    seconds = time.perf_counter() - start
    summary = {
        **runner.summary(metric), "seconds": round(seconds, 2), "signature": metric.signature,
        "engine": runner.describe()["engine"],
    }
    values: dict[str, list[float | None]] = {}
    for s in scores:
        values.setdefault(s.metric, []).append(s.value)
    Console(width=160).print(summary_table({k: v for k, v in summary.items() if k != "signature"}, values))
    if out is not None:
        write_jsonl(out, scores)
        with atomic_write(out.with_suffix(out.suffix + ".summary.json")) as fh:
            fh.write(json.dumps(summary, indent=1) + "\n")


def serve_model(
    model: str = typer.Option("", help="GGUF file (default: the packaged SmolLM2-135M-Instruct)."),
    port: int = typer.Option(8080, help="Port on 127.0.0.1."),
    n_ctx: int = typer.Option(4096, help="Context tokens per slot."),
    parallel: int = typer.Option(4, help="Requests served at once."),
) -> None:
    """Serve a GGUF model as an OpenAI-compatible server on 127.0.0.1 until Ctrl-C."""
    from dialeval.backends.llamacpp import local_server

    local_server(model or None, n_ctx=n_ctx, n_parallel=parallel, port=port, verbose=True)
    typer.echo(f"serving on http://127.0.0.1:{port}/v1 (POST /v1/chat/completions); Ctrl-C to stop", err=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        pass


def register(app: typer.Typer) -> None:
    """Add ``judge`` and ``serve-model`` to the main app."""
    app.add_typer(judge_app, name="judge")
    app.command("serve-model")(serve_model)
