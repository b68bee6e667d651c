"""Options that every scoring command shares and that are not about inputs (progress)."""

from __future__ import annotations

import typer

quiet_option = typer.Option(
    False, "--quiet", "-q", help="No progress bars (they are off anyway when stderr is not a terminal)."
)
allow_failures_option = typer.Option(
    False, "--allow-failures",
    help="Exit 0 even when judge requests failed (their items keep null scores whose error says why).",
)
