"""The in-process CLI runner and the one-line refusal check the command tests share."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner, Result

from dialeval.cli import app

#: A small rated table, and the options that read it.
ROWS = "context,response,system,rating\nHi there,Hello!,a,4\nHow are you?,Fine thanks,b,5\nYo,Hey you,c,2\n"
COLS = ["--response-col", "response", "--context-col", "context"]
RATED = [*COLS, "--system-col", "system", "--rating-col", "rating=Overall", "--scale", "1-5"]


def invoke(*args: str | Path, env: dict[str, str] | None = None) -> Result:
    """Run ``dialeval ARGS`` in process (typer's runner) on a wide terminal, so lines are not wrapped."""
    return CliRunner().invoke(app, [str(a) for a in args], terminal_width=300, env=env)


def refused(res: Result, *words: str) -> str:
    """Assert exit 2 with exactly one error line holding ``words``, and no traceback; return the line."""
    assert res.exit_code == 2, res.output
    errors = [line for line in res.output.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and all(w in errors[0] for w in words), res.output
    assert "Traceback" not in res.output
    return errors[0]
