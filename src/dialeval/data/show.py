"""What ``dialeval data show`` prints about a loaded benchmark; also shown when a command reads your own table.

Example:
    >>> from dialeval.data.catalog import DATASETS, load_benchmark
    >>> r = report_of(load_benchmark("usr-tc"), DATASETS.get("usr-tc"))
    >>> r["items"], r["dimensions"]["Overall"], "MIT" in r["catalog"]["license"]
    (360, '1-5', True)
"""

from __future__ import annotations

from typing import Any

from dialeval.data.benchmark import Benchmark
from dialeval.words import one_line


def entry_json_of(entry: Any) -> dict[str, Any]:
    """Return a catalog entry as JSON: what it is, its files with sha256, license, citation, availability."""
    return {
        "name": entry.name, "description": entry.description, "level": entry.level, "items": entry.items,
        "license": entry.license, "citation": entry.citation,
        "files": [{"path": f.path, "sha256": f.sha256} for f in entry.files],
        "bundled": entry.bundled, "available": entry.available(),
    }  # fmt: skip


#: The turns of the example's context that ``data show`` prints (the last ones), and the characters of each.
EXAMPLE_TURNS, EXAMPLE_CHARS = 3, 50


def example_of(bench: Benchmark) -> dict[str, Any] | None:
    """Return the first item as it was read: its context's turns with their speakers, and its response.

    What a reader made of a table (a separator that split nothing, a list written as text) shows here first.

    Example:
        >>> from dialeval.data.catalog import load_benchmark
        >>> ex = example_of(load_benchmark("usr-tc"))
        >>> ex["item_id"], len(ex["turns"]), ex["turns"][-1][0], ex["earlier_turns"] > 0
        ('usr-tc-00:Original Ground Truth', 3, 'A', True)
    """
    if not bench.candidates:
        return None
    first = bench.candidates[0]
    turns = bench.dialogues[first.dialogue_id].turns[: first.turn_index] if first.dialogue_id in bench.dialogues else []
    shown = turns[-EXAMPLE_TURNS:]
    return {"item_id": first.id, "earlier_turns": len(turns) - len(shown),
            "turns": [(t.speaker, t.text) for t in shown], "response": first.text}  # fmt: skip


def report_of(bench: Benchmark, entry: Any = None) -> dict[str, Any]:
    """Return what ``data show`` prints: the counts, skips and warnings, the first item, the catalog's license."""
    report: dict[str, Any] = {"name": bench.name, "source": bench.source, **bench.counts()}
    report["warnings"] = list(bench.warnings)
    report["example"] = example_of(bench)
    if entry is not None:
        entry_json = entry_json_of(entry)
        report["catalog"] = {k: entry_json[k] for k in ("license", "citation", "files")}
    return report


def print_report(report: dict[str, Any], console: Any) -> None:
    """Print a :func:`report_of` report as a two-column table on ``console``."""
    from rich.markup import escape
    from rich.table import Table

    console.print(f"[bold]{escape(report['name'])}[/bold]  ({escape(report['source'])})", highlight=False)
    table = Table(show_header=False)
    for key in ("items", "dialogues", "contexts", "systems", "annotators", "annotators_per_item", "ratings"):
        table.add_row(key, str(report[key]))
    table.add_row("levels", ", ".join(report["levels"]))
    table.add_row("dimensions", "\n".join(f"{d} ({s or 'scale ?'})" for d, s in report["dimensions"].items()))
    skipped = report["skipped"]
    table.add_row("skipped", "\n".join(f"{n}  {why}" for why, n in skipped.items()) if skipped else "nothing")
    for warning in report["warnings"]:
        table.add_row("warning", warning)
    if (ex := report.get("example")) is not None:
        earlier = [f"({ex['earlier_turns']} earlier turns)"] if ex["earlier_turns"] else []
        turns = [f"{speaker}: {one_line(text, EXAMPLE_CHARS)}" for speaker, text in ex["turns"]] or ["(no context)"]
        lines = [f"item {ex['item_id']}", *earlier, *turns, f"response: {one_line(ex['response'], EXAMPLE_CHARS - 7)}"]
        table.add_row("first item", escape("\n".join(lines)))
    cat = report.get("catalog")
    if cat is not None:
        table.add_row("license", cat["license"])
        table.add_row("cite", cat["citation"])
        files = [f"{f['path']}  sha256 {(f['sha256'] or 'not recorded')[:16]}" for f in cat["files"]]
        table.add_row("files", "\n".join(files))
    console.print(table)
