"""``dialeval benchmark``: score a human-rated benchmark with every metric and rank them against people."""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from dialeval.atomic import all_or_nothing
from dialeval.commands.common import (
    DEFAULT_LEVELS,
    LEVEL_HELP,
    N_BOOT_FLAGS,
    TABLE_RULE,
    TableOptions,
    check_output,
    check_request_failures,
    console,
    fail,
    interrupted_run,
    levels_to_report,
    load_inputs,
    out,
    remove_earlier,
    replaced_note,
    say_removed,
    split_levels,
    table_options,
    warn,
    warned,
    write_text,
)
from dialeval.commands.meta import row_dict
from dialeval.commands.options import allow_failures_option, run_options
from dialeval.commands.tables import to_markdown, to_rich
from dialeval.errors import DialevalError
from dialeval.jsonl import write_jsonl
from dialeval.meta.caveats import table_warnings
from dialeval.meta.rows import COMPARE_FILE
from dialeval.meta.wide import Wide, pivot, rank_column
from dialeval.runinfo import BenchmarkRun, MetricInfo, write_run_info
from dialeval.scoring import MetricRun, ScoringContext, ScoringRequest, score_request
from dialeval.words import human_rating

if TYPE_CHECKING:
    from dialeval.data.benchmark import Benchmark
    from dialeval.meta.rows import CorrelationRow
    from dialeval.schema import Score

#: The files ``benchmark`` writes in its output folder, all of them or none.
OUTPUT_FILES = BenchmarkRun.FILES


@run_options
@table_options
def benchmark(
    benchmark: str | None = typer.Option(None, "--benchmark", "-b", help="Catalog benchmark (default usr-tc)."),
    path: Path | None = typer.Option(None, "--path", help=TABLE_RULE),
    dimension: str | None = typer.Option(
        None, "--dimension", "-d", help="Human dimension (default: the overall rating, else the only one)."
    ),
    limit: int | None = typer.Option(None, "--limit", help="Only the first N contexts."),
    level: str | None = typer.Option(None, "--level", "-l", help=LEVEL_HELP),
    method: str = typer.Option("pearson,spearman,kendall", "--method", help="Correlation methods."),
    n_boot: int = typer.Option(1000, *N_BOOT_FLAGS, help="Bootstrap resamples."),
    seed: int = typer.Option(0, "--seed", help="Bootstrap seed."),
    output: Path = typer.Option(Path("runs/benchmark"), "--output", "-o", help="Output folder."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON only."),
    allow_failures: bool = allow_failures_option,
    table: TableOptions = TableOptions(),
    request: ScoringRequest = ScoringRequest(),
) -> None:
    """Run metrics on a human-rated benchmark and print a ranked metric-human correlation table.

    Writes scores.jsonl, table.md, table.jsonl and run.json (command, signatures, timings) to OUTPUT.
    """
    from dialeval.meta.correlate import check_boot, correlation_table

    started = time.perf_counter()
    inputs = [("--path", path), ("--mapping", table.mapping), *request.inputs()]
    try:
        with interrupted_run(output, request.no_cache):
            check_boot(n_boot, field="--n-boot", seed=seed)
            levels, methods = split_levels(DEFAULT_LEVELS if level is None else level, method)  # before the scoring
            replaced = check_output(output, "folder", inputs=inputs, files=OUTPUT_FILES)
            bench = load_inputs(benchmark, path, None, None, limit, table=table, show=not as_json)
            dimension = bench.dimension(dimension)
            levels = levels_to_report(levels, level, bench.ratings, dimension, (c.system for c in bench.candidates))
            built = request.build(bench.candidates, bench.sources)  # before the cache is made: a bad -p left a new one
            run = request.open(quiet=as_json)
            runs, skipped = score_request(run, bench.candidates, bench.dialogues, built)
            notes = list(dict.fromkeys(n for r in runs for m, _ in r.parts if (n := m.fitted_note(bench.name))))
            notes += cut_notes(runs)  # in-sample figures, then values that read a text in part
            scores = [s for r in runs for s in r.scores]
            rows = correlation_table(
                scores, bench.ratings, dimension=dimension, levels=levels, methods=methods, n_boot=n_boot, seed=seed
            )
            rank_by = rank_column([(lv, m) for lv in levels for m in methods]) or (levels[0], methods[0])
            wide = pivot(rows, rank_by=rank_by)
            title = (
                f"{bench.name}: correlation with {human_rating(dimension)} ({len(bench.candidates)} items, "
                f"ranked by {' '.join(rank_by)})"
            )
            warnings = table_warnings(rows)
            # the lines under the table, in table.md and run.json too (they were on the screen only, but warnings)
            said = [*(f"not run {name}: {why}" for name, why in skipped.items()), *notes, *warnings]
            said += bench.warnings  # the data's (a changed catalog file, --limit above it): on the screen before
            run_info = _run_info(bench, dimension, runs, skipped, run, n_boot, seed, started, said)
            removed = _write_outputs(output, title, wide, rows, scores, run_info)
    except DialevalError as exc:
        fail(exc)
    if as_json:
        out.print_json(json.dumps({"run": run_info.as_dict(), "rows": [row_dict(r) for r in rows], "notes": said}))
    else:
        out.print(to_rich(wide, title))
        _print_notes(skipped, notes, bench.source, output, replaced, warnings)
        say_removed(output, removed)
    check_request_failures(scores, allow_failures)


def _write_outputs(
    output: Path, title: str, wide: Wide, rows: list[CorrelationRow], scores: list[Score], run_info: BenchmarkRun
) -> list[str]:  # fmt: skip
    """Write the :data:`OUTPUT_FILES` of ``output``: all of them, or none (and no new empty folder) on a failure.

    table.md has the table and, under it, the lines of ``run_info.notes`` (metrics not run, notes, warnings).

    An earlier ``meta --compare -o``'s compare.json there is removed (``dialeval report`` showed its paired test
    beside this run's table, of metrics this run may not have); return what was removed.
    """
    with all_or_nothing(output):
        write_jsonl(output / "scores.jsonl", scores)
        write_text(output / "table.md", f"# {title}\n\n{to_markdown(wide)}\n{warned(run_info.notes or [])}")
        write_jsonl(output / "table.jsonl", rows)
        write_run_info(output, run_info)
    return remove_earlier(output, [COMPARE_FILE])


def _run_info(
    bench: Benchmark, dimension: str, runs: list[MetricRun], skipped: dict[str, str], run: ScoringContext,
    n_boot: int, seed: int, started: float, notes: list[str],
) -> BenchmarkRun:
    """Return what ``run.json`` records: inputs, counts, metric signatures and timings, the request, engine, cache.

    And the ``notes``: the lines under the table.
    """
    return BenchmarkRun(
        benchmark=bench.name,
        source=bench.source,
        counts=bench.counts(),
        dimension=dimension,
        metrics={
            r.family: MetricInfo(signature=r.signature, seconds=round(r.seconds, 3), **r.summary) for r in runs
        },
        skipped_metrics=skipped,
        request=run.request.record(),
        engine=run.engine.describe(),
        cache=run.cache_path(),
        bootstrap={"resamples": n_boot, "seed": seed, "unit": "context"},
        notes=notes,
        seconds=round(time.perf_counter() - started, 2),
    )


def cut_notes(runs: Sequence[MetricRun]) -> list[str]:
    """Say, per output, how many of its values read a text in part and why (:meth:`MetricRun.cuts`).

    Example:
        >>> from dialeval.schema import Score
        >>> run = MetricRun("m", "m|v", [Score(item_id="a", metric="m", value=0.5, extras={"cut": "a fact cut"}),
        ...                              Score(item_id="b", metric="m", value=0.7)], 0.0)
        >>> cut_notes([run])
        ['m: 1 of 2 values read a text in part (a fact cut)']
    """
    notes = []
    for r in runs:
        valued = Counter(s.metric for s in r.scores if s.value is not None)
        for name, why in r.cuts().items():
            said = "; ".join(f"{n}: {w}" if len(why) > 1 else w for w, n in why.items())
            notes.append(f"{name}: {why.total()} of {valued[name]} values read a text in part ({said})")
    return notes


def _print_notes(
    skipped: dict[str, str], notes: list[str], source: str, output: Path, replaced: list[Path], warnings: list[str]
) -> None:
    """Print, under the table, the metrics not run, the notes (in-sample, cut), the warnings, the source, the files."""
    from rich.markup import escape

    for name, why in skipped.items():
        console.print(f"[yellow]not run[/] {name}: {escape(why)}", highlight=False)
    for note in notes:
        console.print(f"[yellow]note[/] {escape(note)}", highlight=False)
    warn(warnings)
    console.print(f"source: {source}", highlight=False, markup=False, soft_wrap=True)
    wrote = f"wrote {output}/{', '.join(OUTPUT_FILES)}{replaced_note(replaced)}"
    console.print(wrote, highlight=False, markup=False, soft_wrap=True)

def register(app: typer.Typer) -> None:
    """Add ``benchmark`` to the CLI."""
    app.command("benchmark")(benchmark)
