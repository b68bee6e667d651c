"""``dialeval score``: records in, scores out."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer
from rich.markup import escape

from dialeval.commands.common import (
    TABLE_RULE,
    TableOptions,
    check_jsonl_name,
    check_output,
    check_request_failures,
    console,
    fail,
    interrupted_run,
    load_inputs,
    out,
    replaced_note,
    summary_path,
    table_options,
)
from dialeval.commands.options import allow_failures_option, run_options
from dialeval.commands.scored_table import is_table_output, table_rows, write_scored_table
from dialeval.errors import DialevalError
from dialeval.jsonl import write_jsonl
from dialeval.scoring import ScoringRequest, score_request
from dialeval.words import counted

if TYPE_CHECKING:
    from dialeval.data.benchmark import Benchmark
    from dialeval.scoring import MetricRun, ScoringContext


@run_options
@table_options
def score(
    output: Path = typer.Option(..., "--output", "-o", help="Score records (JSONL) to write; a .csv or .tsv name "
                                "writes the table back, one column per output, and the summary beside it "
                                "(NAME.summary.json)."),
    benchmark: str | None = typer.Option(None, "--benchmark", "-b", help="Catalog benchmark (default usr-tc)."),
    path: Path | None = typer.Option(None, "--path", help=TABLE_RULE),
    dialogues: Path | None = typer.Option(None, "--dialogues", help="Dialogue records (JSONL)."),
    candidates: Path | None = typer.Option(None, "--candidates", help="Candidate records (JSONL)."),
    limit: int | None = typer.Option(None, "--limit", help="Only the first N contexts."),
    as_json: bool = typer.Option(False, "--json", help="Print a JSON summary only."),
    allow_failures: bool = allow_failures_option,
    table: TableOptions = TableOptions(),
    request: ScoringRequest = ScoringRequest(),
) -> None:
    """Score candidate responses with metrics and write Score records (JSONL), or the table scored (CSV, TSV).

    Finished items are kept in the score cache: a rerun computes nothing and a killed run resumes.
    """
    inputs = [("--path", path), ("--dialogues", dialogues), ("--candidates", candidates),
              ("--mapping", table.mapping), *request.inputs()]  # fmt: skip
    as_table = is_table_output(output)
    try:
        with interrupted_run(output, request.no_cache):
            replaced = check_output(output, inputs=inputs)
            if as_table:  # the summary beside the table: signatures, request, counts
                replaced += check_output(summary_path(output), inputs=inputs)
            else:
                check_jsonl_name(output, "Score records")  # after: writing over an input is the worse news
            bench = load_inputs(benchmark, path, dialogues, candidates, limit, table=table, show=not as_json,
                                rows=as_table)  # fmt: skip
            built = request.build(bench.candidates, bench.sources)  # before the cache is made: a bad -p left a new one
            if as_table:  # before any work: a column named like an output
                to_write = table_rows(bench, (name for metric in built[0] for name in type(metric).outputs))
            run = request.open(quiet=as_json)
            runs, skipped = score_request(run, bench.candidates, bench.dialogues, built)
            summary = _summary(bench, runs, skipped, run, request, output)
            if as_table:
                written = counted(write_scored_table(output, to_write, runs, summary), "row")
            else:
                written = counted(write_jsonl(output, (s for r in runs for s in r.scores)), "score")
    except DialevalError as exc:
        fail(exc)
    nulls = {r.family: r.nulls() for r in runs}
    if as_json:
        out.print_json(json.dumps(summary))
    else:
        for r in runs:
            # as text, not rich markup: a parameter's "[/INST]" (a Llama prompt) was a MarkupError, "[red]" gone;
            # on one line, to be copied whole (rich broke it at 80 columns)
            line = f"{r.family:<12} {len(r.scores):>7} scores  {r.seconds:7.2f}s  {r.signature}"
            console.print(line, highlight=False, markup=False, soft_wrap=True)
            if nulls[r.family]:  # e.g. sbert_ref on items without a reference
                console.print(f"  without a value (null): {_null_line(nulls[r.family])}", highlight=False, markup=False)
            if cuts := r.cuts():  # e.g. sbert_ref of a response longer than the encoder reads
                console.print(f"  read in part (cut): {_null_line(cuts)}", highlight=False, markup=False)
        for name, why in skipped.items():  # why may quote a response of the data
            console.print(f"[yellow]skipped[/] {name}: {escape(why)}", highlight=False)
        items = counted(len(bench.candidates), "item")
        beside = f" (signatures and request in {summary_path(output)})" if as_table else ""
        wrote = f"wrote {written} for {items} to {output}{beside}{replaced_note(replaced)}"
        console.print(wrote, highlight=False, markup=False, soft_wrap=True)
    check_request_failures((s for r in runs for s in r.scores), allow_failures)


def _summary(
    bench: Benchmark, runs: Sequence[MetricRun], skipped: Mapping[str, str], run: ScoringContext,
    request: ScoringRequest, output: Path,
) -> dict[str, Any]:
    """Return what the run did, as ``--json`` prints it and a scored table's ``.summary.json`` holds it."""
    return {
        "benchmark": bench.name,
        "items": len(bench.candidates),
        "scores": sum(len(r.scores) for r in runs),
        "output": str(output),
        "engine": run.engine.describe(),
        "cache": run.cache_path(),
        "request": request.record(),
        "metrics": {r.family: {"signature": r.signature, "seconds": round(r.seconds, 3),
                               "null": {k: c.total() for k, c in r.nulls().items()},
                               "cut": {k: c.total() for k, c in r.cuts().items()}, **r.summary}
                    for r in runs},
        "skipped_metrics": dict(skipped),
        "warnings": list(bench.warnings),  # what the data summary on stderr warns of (--json showed no summary)
    }


def _null_line(nulls: dict[str, Counter[str]]) -> str:
    """Say, per output, how many scores have no value and why.

    Example:
        >>> _null_line({"sbert_ref": Counter({"no reference": 2}), "x": Counter({"timeout": 2, "refused": 1})})
        'sbert_ref 2 (no reference), x 3 (2: timeout; 1: refused)'
    """
    parts = []
    for name, reasons in nulls.items():
        told = "; ".join(r if len(reasons) == 1 else f"{n}: {r}" for r, n in reasons.most_common())
        parts.append(f"{name} {reasons.total()} ({told})")
    return ", ".join(parts)


def register(app: typer.Typer) -> None:
    """Add ``score`` to the CLI."""
    app.command("score")(score)
