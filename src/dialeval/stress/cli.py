"""``dialeval stress``: perturb responses and measure whether each metric notices."""

from __future__ import annotations

import json
import shlex
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from dialeval.commands.common import console, fail, out, split_list
from dialeval.errors import DialevalError, InputError

if TYPE_CHECKING:
    from dialeval.stress.run import StressResult

LEXICAL = "bleu,sacrebleu,chrf,rouge,meteor,f1,length"


def to_markdown(result: StressResult, title: str) -> str:
    """Render the fraction table (outputs as rows, perturbations as columns) and the long rows as Markdown.

    Example:
        >>> from dialeval.stress.run import StressResult, StressRow
        >>> row = StressRow("f1", "f1", "negation", 3, 1.0, 0.2, 0.1, 0.3, 0.9, True, 3)
        >>> print(to_markdown(StressResult(rows=[row]), "t").splitlines()[4])
        | f1 | 1.000 |
    """
    perts = list(dict.fromkeys(r.perturbation for r in result.rows))
    metrics = list(dict.fromkeys(r.metric for r in result.rows))
    cell = {(r.metric, r.perturbation): r for r in result.rows}
    lines = [f"# {title}", "", "| metric | " + " | ".join(perts) + " |", "|---|" + "---|" * len(perts)]
    for m in metrics:
        lines.append(f"| {m} | " + " | ".join(_fmt(cell[(m, p)].fraction) for p in perts) + " |")
    lines += [
        "",
        "Cell: fraction of pairs where the metric scores the original above the perturbed response (ties 0.5).",
        "",
        "| metric | perturbation | pairs | fraction | mean drop [95% CI] | AUROC |",
        "|---|---|---|---|---|---|",
    ]
    for r in result.rows:
        lines.append(
            f"| {r.metric} | {r.perturbation} | {r.n_pairs} | {_fmt(r.fraction)} | "
            f"{_fmt(r.drop)} [{_fmt(r.ci_low)}, {_fmt(r.ci_high)}] | {_fmt(r.auroc)} |"
        )
    return "\n".join(lines) + "\n"


def _fmt(v: float) -> str:
    return "n/a" if v != v else f"{v:.3f}"


def stress(
    benchmark: str = typer.Option("usr-tc", "--benchmark", "-b", help="Catalog benchmark."),
    path: Path | None = typer.Option(None, "--path", help="Read the benchmark from this file."),
    metrics: str = typer.Option(LEXICAL, "--metrics", "-m", help="Comma-separated metric families or outputs."),
    perturb: str | None = typer.Option(None, "--perturb", help="Comma-separated perturbations (default: all)."),
    limit: int | None = typer.Option(None, "--limit", help="Only the first N contexts."),
    seed: int = typer.Option(0, "--seed", help="Seed of the perturbations and the bootstrap."),
    n_boot: int = typer.Option(1000, "--boot", help="Bootstrap resamples (over contexts)."),
    output: Path = typer.Option(Path("runs/stress"), "--output", "-o", help="Output folder."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON only."),
) -> None:
    """Perturb every response (negation, number swap, ...) and report how often each metric prefers the original.

    Writes stress.jsonl (one row per metric output and perturbation) and stress.md to OUTPUT.
    """
    from dialeval.commands.common import load_inputs, write_text
    from dialeval.runner import resolve_metrics
    from dialeval.stress.perturb import PERTURBATIONS
    from dialeval.stress.run import run_stress

    started = time.perf_counter()
    try:
        names = split_list(perturb) or list(PERTURBATIONS)
        for p in names:
            if p not in PERTURBATIONS:
                raise InputError(f'--perturb: unknown perturbation "{p}"; known: {", ".join(PERTURBATIONS)}')
        bench = load_inputs(benchmark, path, None, None, None, limit)
        families, _ = resolve_metrics(split_list(metrics) or LEXICAL.split(","), bench=bench)
        result = run_stress(bench.candidates, bench.dialogues, families, names, seed=seed, n_boot=n_boot)
    except DialevalError as exc:
        fail(exc)
        return
    n_ctx = len({c.context_id for c in bench.candidates})
    title = (
        f"{bench.name}: fraction of pairs where the metric prefers the original "
        f"({len(bench.candidates)} items, {n_ctx} contexts)"
    )
    run_info = {
        "command": "dialeval " + " ".join(shlex.quote(a) for a in sys.argv[1:]),
        "benchmark": bench.name,
        "source": bench.source,
        "seed": seed,
        "bootstrap": {"resamples": n_boot, "unit": "context"},
        "applied": result.applied,
        "skipped": result.skipped,
        "seconds": round(time.perf_counter() - started, 2),
    }
    rows = [{**r.as_dict(), "skipped": result.skipped[r.perturbation]} for r in result.rows]
    write_text(output / "stress.jsonl", "".join(json.dumps(r) + "\n" for r in rows))
    write_text(output / "stress.md", to_markdown(result, title))
    if as_json:
        out.print_json(json.dumps({"run": run_info, "rows": rows}))
        return
    from rich.table import Table

    table = Table(title=title)
    table.add_column("metric")
    for p in names:
        table.add_column(p, justify="right")
    cell = {(r.metric, r.perturbation): r for r in result.rows}
    for m in dict.fromkeys(r.metric for r in result.rows):
        table.add_row(m, *(_fmt(cell[(m, p)].fraction) for p in names))
    out.print(table)
    for p in names:
        console.print(
            f"{p}: {result.applied[p]} perturbed, {result.skipped[p]} skipped (not applicable)", highlight=False
        )
    console.print(f"wrote {output}/stress.jsonl, stress.md", highlight=False)


def register(app: typer.Typer) -> None:
    """Add ``stress`` to the CLI."""
    app.command("stress")(stress)
