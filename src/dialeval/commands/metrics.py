"""``dialeval metrics``: every metric family, what it outputs and needs, whether it runs here, its parameters."""

from __future__ import annotations

import json
from typing import Any

import typer


def _parameters(params: dict[str, Any]) -> str:
    """Return ``key=default`` pairs (``""`` for an empty default, ``none`` for a family without parameters).

    Example:
        >>> _parameters({"smoothing": "method1", "lowercase": True, "model": ""}), _parameters({})
        ('smoothing=method1, lowercase=True, model=""', 'none')
    """
    shown = {k: '""' if v == "" else v for k, v in params.items()}
    return ", ".join(f"{k}={v}" for k, v in shown.items()) or "none"


def metrics_command(
    names: list[str] | None = typer.Argument(
        None, help="Only these families, or the families of these outputs (a,b as -m takes them, or a b)."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print the families (every one, or those named) as JSON only."),
) -> None:
    """List every metric family: outputs, whether it needs references and runs here, parameters with defaults.

    A plugin that cannot be loaded is skipped, with why on stderr.

    Name a family or an output with -m (score, benchmark, stress, meta); set a parameter with -p FAMILY.KEY=VALUE.
    """
    from dialeval.commands.common import fail, say, warn
    from dialeval.errors import DialevalError
    from dialeval.metrics.describe import describe_loadable
    from dialeval.words import split_names

    try:  # "bleu4,rouge1", as -m takes it, was one unknown name (did you mean "rouge"?)
        entries, skipped = describe_loadable([n for given in names or [] for n in split_names(given, "NAMES")] or None)
    except DialevalError as exc:
        fail(exc)
        return
    warn(f"skipped {name}: {why}" for name, why in skipped.items())  # a plugin that cannot load: the others listed
    if as_json:
        typer.echo(json.dumps(entries, indent=2, default=str))
        return
    say("dialeval metrics (-m FAMILY or OUTPUT; -p FAMILY.KEY=VALUE)")
    for e in entries:
        needs = "needs references" if e["needs_references"] else "reference-free"
        order = "higher is better" if e["higher_is_better"] else "lower is better"
        here = f"; cannot run here: {e['unavailable']}" if e["unavailable"] else ""
        typer.echo("")
        say(f"{e['name']}: {needs}, {order}{here}")
        for line in (e["description"], f"outputs: {', '.join(e['outputs'])}",
                     f"parameters: {_parameters(e['parameters'])}"):  # fmt: skip
            say(line, "  ")
    if names:
        return
    typer.echo("")
    say("Also trained:PATH, a model saved by dialeval train (docs/trained_evaluators.md). The judge protocols in "
        "detail: dialeval judge list.")  # fmt: skip


def register(app: typer.Typer) -> None:
    """Add ``metrics`` to the CLI."""
    app.command("metrics")(metrics_command)
