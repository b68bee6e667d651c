"""``dialeval data list``, ``data show [-b NAME]``, ``data export -b NAME`` and ``data import --path FILE``.

The catalog name and the table were positional arguments first (``data show usr-tc``, ``data import my.csv``);
they are still read, as every command reads ``-b`` and ``--path``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import typer

from dialeval.commands.common import (
    TableOptions,
    catalog_benchmark,
    check_output,
    fail,
    given_once,
    interrupted_says,
    replaced_note,
    table_options,
)
from dialeval.data.show import entry_json_of, print_report, report_of
from dialeval.errors import DialevalError, InputError
from dialeval.words import counted

data_app = typer.Typer(help="List and inspect the benchmark catalog.", no_args_is_help=True)


@data_app.command("list")
def list_command(
    as_json: bool = typer.Option(False, "--json", help="Print every entry (files, sha256, citation) as JSON."),
) -> None:
    """Show every benchmark: name, level, rated items, license, whether it can be loaded here."""
    from rich.console import Console
    from rich.table import Table

    from dialeval.data.catalog import list_benchmarks

    if as_json:
        typer.echo(json.dumps([entry_json_of(e) for e in list_benchmarks()], indent=2))
        return
    entries = list_benchmarks()
    table = Table(title="dialeval benchmarks")
    # Names and numbers are never cut: they keep their width and the license wraps into the rest.
    table.add_column("name", no_wrap=True, min_width=max(len(e.name) for e in entries))
    table.add_column("level", no_wrap=True)
    table.add_column("items", justify="right", no_wrap=True)
    table.add_column("here", no_wrap=True)
    table.add_column("license", overflow="fold", ratio=1)
    for entry in entries:
        table.add_row(
            entry.name,
            entry.level,
            "?" if entry.items is None else str(entry.items),
            "yes" if entry.available() else "no",
            entry.license,
        )
    Console(emoji=False).print(table)  # made here: COLUMNS is read when a console is made


@data_app.command("show")
@table_options
def show_command(
    positional: str | None = typer.Argument(None, metavar="NAME", help="The same as --benchmark (its earlier form)."),
    benchmark: str | None = typer.Option(
        None, "--benchmark", "-b", help="Catalog name, e.g. usr-tc; none: your own --path."
    ),
    path: Path | None = typer.Option(
        None, "--path", help="With -b, that benchmark's published file or folder; without, your own table (with "
        "--mapping or the --*-col options) or a folder of dialeval records."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print machine-readable JSON only."),
    table: TableOptions = TableOptions(),
) -> None:
    """Load a benchmark or your own data and print its counts (items, dialogues, systems, dimensions, skips).

    Without -b, --path is read as score, benchmark and meta read it, and shown as they show it first.
    """
    from rich.console import Console

    from dialeval.commands.common import load_inputs
    from dialeval.data.catalog import DATASETS
    from dialeval.data.generic import RECORD_FILES, is_table

    try:
        name = given_once(benchmark, positional, ("--benchmark", "NAME"), "the catalog benchmark")
        if name is None:  # `data show --path my.csv --response-col ...`: said "Missing argument 'name'"
            if path is None:
                raise InputError("give a catalog benchmark, -b NAME (dialeval data list), or your own data with --path",
                                 field="--benchmark")  # fmt: skip
            if not table.given() and not is_table(path) and not (path / RECORD_FILES[1]).is_file():
                if not path.exists():
                    raise InputError("not found", path=path)
                raise InputError("not your own table (.csv, .tsv, .jsonl, .json) or a folder of dialeval records: "
                                 "for a catalog benchmark's published file give -b NAME too", path=path)  # fmt: skip
            bench = load_inputs(None, path, None, None, None, table=table, show=False)
        elif table.given():
            raise InputError(f"{name} is a catalog benchmark; --mapping and the --*-col options read your own "
                             "table: give it with --path and no -b", field="--mapping")  # fmt: skip
        else:
            bench = catalog_benchmark(name, path)
    except DialevalError as exc:
        fail(exc)
    report = report_of(bench, None if name is None else DATASETS.get(name.strip()))  # as catalog_benchmark reads it
    if as_json:
        typer.echo(json.dumps(report, indent=2))
        return
    print_report(report, Console(emoji=False))


@data_app.command("export")
def export_command(
    positional: str | None = typer.Argument(None, metavar="NAME", help="The same as --benchmark (its earlier form)."),
    benchmark: str | None = typer.Option(None, "--benchmark", "-b", help="Catalog name, e.g. usr-tc."),
    output: Path = typer.Option(..., "--output", "-o", help="Folder for dialogues/candidates/ratings.jsonl."),
    path: Path | None = typer.Option(None, "--path", help="Read this file (or folder) of the published format."),
    limit: int | None = typer.Option(None, "--limit", help="Only the first N contexts."),
) -> None:
    """Write a benchmark as dialeval records: dialogues.jsonl, candidates.jsonl, ratings.jsonl."""
    from dialeval.commands.common import load_inputs
    from dialeval.data.generic import RECORD_FILES

    try:
        with interrupted_says(f"nothing written to {output}"):
            name = given_once(benchmark, positional, ("--benchmark", "NAME"), "the catalog benchmark")
            if name is None:
                raise InputError("give the catalog benchmark to write: -b NAME (dialeval data list)",
                                 field="--benchmark")  # fmt: skip
            replaced = check_output(output, "folder", inputs=[("--path", path)], files=RECORD_FILES)
            bench = load_inputs(name, path, None, None, limit)
            counts = _write_records(bench, output)
    except (DialevalError, OSError) as exc:
        fail(exc)
    typer.echo(f"wrote {counts} to {output}{replaced_note(replaced)}")


@data_app.command("import")
@table_options
def import_command(
    positional: Path | None = typer.Argument(None, metavar="FILE", help="The same as --path (its earlier form)."),
    path: Path | None = typer.Option(
        None, "--path", help="Your table: .csv, .tsv, .jsonl or .json (a CSV or TSV names its columns in a header row)."
    ),
    output: Path = typer.Option(..., "--output", "-o", help="Folder for dialogues/candidates/ratings.jsonl."),
    limit: int | None = typer.Option(None, "--limit", help="Only the first N contexts."),
    table: TableOptions = TableOptions(),
) -> None:
    """Read your own table with a mapping and write it as dialeval records (as data export writes them).

    The folder can then be given to any command as --path DIR.
    """
    from dialeval.commands.common import console, load_inputs
    from dialeval.data.generic import RECORD_FILES

    try:
        with interrupted_says(f"nothing written to {output}"):
            file = given_once(path, positional, ("--path", "FILE"), "your table")
            if file is None:
                raise InputError("give your table: --path my.csv", field="--path")
            inputs = [("--path", file), ("--mapping", table.mapping)]
            replaced = check_output(output, "folder", inputs=inputs, files=RECORD_FILES)
            if not table.given():
                raise InputError("give --mapping m.yaml, or --response-col (and the other --*-col options)",
                                 field="--mapping")  # fmt: skip
            bench = load_inputs(None, file, None, None, limit, table=table)
            counts = _write_records(bench, output)
    except (DialevalError, OSError) as exc:
        fail(exc)
    console.print(f"wrote {counts} to {output}{replaced_note(replaced)}", highlight=False, markup=False)


def _write_records(bench: Any, output: Path) -> str:
    """Write a benchmark's dialogues, candidates and ratings, all three or none; return what was written, in words."""
    from dialeval.atomic import all_or_nothing
    from dialeval.data.generic import RECORD_FILES
    from dialeval.jsonl import write_jsonl

    dialogues, candidates, ratings = RECORD_FILES
    with all_or_nothing(output):
        output.mkdir(parents=True, exist_ok=True)
        n_d = write_jsonl(output / dialogues, bench.dialogues.values())
        n_c = write_jsonl(output / candidates, bench.candidates)
        n_r = write_jsonl(output / ratings, bench.ratings)
    return f"{counted(n_d, 'dialogue')}, {counted(n_c, 'candidate')}, {counted(n_r, 'rating')}"


def register(app: typer.Typer) -> None:
    """Add the ``data`` command group to the main app."""
    app.add_typer(data_app, name="data")
