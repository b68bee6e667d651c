"""The ``dialeval`` command line.

Sub-commands live beside the code they drive: each module in ``_COMMAND_MODULES``
defines ``register(app)``, which adds its commands. Heavy imports happen inside
the commands, so ``dialeval --help`` stays fast.
"""

from __future__ import annotations

import importlib

import typer

from dialeval import __version__

app = typer.Typer(
    name="dialeval",
    help="Evaluate chatbot and dialogue-system responses: metrics, human studies, meta-evaluation.",
    no_args_is_help=True,
    add_completion=False,
)

_COMMAND_MODULES = (
    "dialeval.commands.data",
    "dialeval.commands.score",
    "dialeval.commands.meta",
    "dialeval.commands.benchmark",
    "dialeval.judges.cli",
    "dialeval.human.cli",
    "dialeval.trained.cli",
    "dialeval.lmstyle.cli",
    "dialeval.stress.cli",
    "dialeval.report.cli",
    "dialeval.quality.cli",
)


def _version(value: bool) -> None:
    if value:
        typer.echo(__version__)
        raise typer.Exit()


@app.callback()
def main(
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True, help="Print the version."),
) -> None:
    """Evaluate chatbot and dialogue-system responses."""


def _register_all() -> None:
    for name in _COMMAND_MODULES:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name and name.startswith(exc.name):  # that part is not built yet
                continue
            raise
        module.register(app)


_register_all()
