"""``dialeval data list``, ``dialeval data show NAME`` and ``dialeval data export NAME``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import typer

from dialeval.errors import DialevalError

data_app = typer.Typer(help="List and inspect the benchmark catalog.", no_args_is_help=True)


def _entry_json(entry: Any) -> dict[str, Any]:
    """Return a catalog entry as JSON: what it is, its files with sha256, license, citation, availability."""
    return {
        "name": entry.name, "description": entry.description, "level": entry.level, "items": entry.items,
        "license": entry.license, "citation": entry.citation,
        "files": [{"path": f.path, "sha256": f.sha256} for f in entry.files],
        "bundled": entry.bundled, "available": entry.available(),
    }  # fmt: skip


@data_app.command("list")
def list_command(
    as_json: bool = typer.Option(False, "--json", help="Print every entry (files, sha256, citation) as JSON."),
) -> None:
    """Show every benchmark: name, level, rated items, license, whether it can be loaded here."""
    from rich.console import Console
    from rich.table import Table

    from dialeval.data.catalog import list_benchmarks

    if as_json:
        typer.echo(json.dumps([_entry_json(e) for e in list_benchmarks()], indent=2))
        return
    table = Table(title="dialeval benchmarks")
    for column in ("name", "level", "rated items", "license", "available here"):
        table.add_column(column)
    for entry in list_benchmarks():
        table.add_row(
            entry.name,
            entry.level,
            "?" if entry.items is None else str(entry.items),
            entry.license,
            "yes" if entry.available() else "no",
        )
    Console(width=160).print(table)


@data_app.command("show")
def show_command(
    name: str = typer.Argument(..., help="Catalog name, e.g. usr-tc."),
    path: Path | None = typer.Option(None, "--path", help="Read this file (or folder) of the published format."),
    as_json: bool = typer.Option(False, "--json", help="Print machine-readable JSON only."),
) -> None:
    """Load a benchmark and print its counts (items, dialogues, systems, annotators, dimensions, skips)."""
    from dialeval.data.catalog import DATASETS, load_benchmark

    try:
        bench = load_benchmark(name, path)
    except DialevalError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    report: dict[str, Any] = {"name": bench.name, "source": bench.source, **bench.counts()}
    report["warnings"] = list(bench.warnings)
    entry = _entry_json(DATASETS.get(name))
    report["catalog"] = {k: entry[k] for k in ("license", "citation", "files")}
    if as_json:
        typer.echo(json.dumps(report, indent=2))
        return
    _print_report(report)


@data_app.command("export")
def export_command(
    name: str = typer.Argument(..., help="Catalog name, e.g. usr-tc."),
    output: Path = typer.Option(..., "--output", "-o", help="Folder for dialogues/candidates/ratings.jsonl."),
    path: Path | None = typer.Option(None, "--path", help="Read this file (or folder) of the published format."),
    limit: int | None = typer.Option(None, "--limit", help="Only the first N contexts."),
) -> None:
    """Write a benchmark as dialeval records: dialogues.jsonl, candidates.jsonl, ratings.jsonl."""
    from dialeval.data.catalog import load_benchmark
    from dialeval.jsonl import write_jsonl

    try:
        bench = load_benchmark(name, path)
        if limit is not None:
            bench = bench.head(limit)
        output.mkdir(parents=True, exist_ok=True)
        n_d = write_jsonl(output / "dialogues.jsonl", bench.dialogues.values())
        n_c = write_jsonl(output / "candidates.jsonl", bench.candidates)
        n_r = write_jsonl(output / "ratings.jsonl", bench.ratings)
    except (DialevalError, OSError) as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    typer.echo(f"wrote {n_d} dialogues, {n_c} candidates, {n_r} ratings to {output}")


def _print_report(report: dict[str, Any]) -> None:
    from rich.console import Console
    from rich.table import Table

    console = Console(width=160)
    console.print(f"[bold]{report['name']}[/bold]  ({report['source']})")
    table = Table(show_header=False)
    for key in ("items", "dialogues", "contexts", "systems", "annotators", "annotators_per_item", "ratings"):
        table.add_row(key, str(report[key]))
    table.add_row("levels", ", ".join(report["levels"]))
    table.add_row("dimensions", "\n".join(f"{d} ({s or 'scale ?'})" for d, s in report["dimensions"].items()))
    skipped = report["skipped"]
    table.add_row("skipped", "\n".join(f"{n}  {why}" for why, n in skipped.items()) if skipped else "nothing")
    for warning in report["warnings"]:
        table.add_row("warning", warning)
    cat = report["catalog"]
    table.add_row("license", cat["license"])
    table.add_row("cite", cat["citation"])
    files = [f"{f['path']}  sha256 {(f['sha256'] or 'not recorded')[:16]}" for f in cat["files"]]
    table.add_row("files", "\n".join(files))
    console.print(table)


def register(app: typer.Typer) -> None:
    """Add the ``data`` command group to the main app."""
    app.add_typer(data_app, name="data")
