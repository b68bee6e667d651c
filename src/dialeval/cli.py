"""The ``dialeval`` command line.

Sub-commands live beside the code they drive: each module in ``_COMMAND_MODULES``
defines ``register(app)``, which adds its commands. Heavy imports happen inside
the commands, so ``dialeval --help`` stays fast.
"""

from __future__ import annotations

import errno
import importlib
import inspect
import sys
from typing import Any

import typer
from typer.core import TyperGroup

from dialeval import __version__
from dialeval.bulk import fewer_collections
from dialeval.errors import NAME_MAX, PATH_MAX, DialevalError, one_line


class DialevalApp(typer.Typer):
    """The ``dialeval`` app: typer's, with one line (never a traceback) for an interrupt or a dialeval error.

    typer turns a :class:`KeyboardInterrupt` into a silent exit 130; this prints ``interrupted``
    on stderr first (a command that knows what it kept says so itself, and exits 130 at once).
    A :class:`~dialeval.errors.DialevalError` that a command let through (a write that failed
    outside its error handling) is printed as ``error: ...`` with exit 2, as the commands print them;
    so is a path too long for the file system in a value no path check reads (a ``-p`` path, a
    ``--model``). A path option's own check names the option (:func:`~dialeval.errors.given_path`).
    Every command runs with :func:`~dialeval.bulk.fewer_collections`.
    """

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """Run the command line; one line on stderr for an interrupt (exit 130) or a dialeval error (exit 2)."""
        try:
            with fewer_collections():
                return super().__call__(*args, **kwargs)
        except SystemExit as exc:
            if exc.code == 130 and _by_interrupt(exc):
                print("interrupted", file=sys.stderr)
            raise
        except DialevalError as exc:
            print(f"error: {one_line(str(exc))}", file=sys.stderr)
            raise SystemExit(2) from None
        except OSError as exc:  # a path too long, in a -p value or a --model: each was a traceback at its first look
            if exc.errno != errno.ENAMETOOLONG:
                raise
            name = one_line(str(exc.filename or "a path"))
            shown = name if len(name) <= 60 else f"{name[:30]}...{name[-20:]}"
            print(f"error: {shown}: too long a name for the file system (at most {NAME_MAX} bytes a name, "
                  f"{PATH_MAX:,} a path)", file=sys.stderr)  # fmt: skip
            raise SystemExit(2) from None


def _by_interrupt(exc: BaseException) -> bool:
    """Whether an exit came from typer's handling of a :class:`KeyboardInterrupt` (typer's ``Exit(130)`` from it)."""
    seen = exc.__context__
    return seen is not None and isinstance(seen.__cause__, KeyboardInterrupt)


class DialevalGroup(TyperGroup):
    """The root command group: the words of a command line are checked before it starts (:mod:`.commands.argv`)."""

    def resolve_command(self, ctx: Any, args: list[str]) -> Any:
        """Find the sub-command ``args`` name; refuse words that are not UTF-8, an empty path, a deleted folder."""
        from dialeval.commands.argv import check_arguments, check_empty_paths, check_working_folder
        from dialeval.commands.common import fail

        try:
            check_working_folder()
            check_arguments(args)
            name, command, rest = super().resolve_command(ctx, args)
            check_empty_paths(command, rest)
        except DialevalError as exc:
            fail(exc)
        return name, command, rest


app = DialevalApp(
    cls=DialevalGroup,
    name="dialeval",
    help="Evaluate chatbot and dialogue-system responses: metrics, human studies, meta-evaluation.",
    no_args_is_help=True,
    add_completion=False,
)

_COMMAND_MODULES = (
    "dialeval.commands.data",
    "dialeval.commands.score",
    "dialeval.commands.metrics",
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


def reflow(doc: str) -> str:
    r"""Return a command's docstring as its help: each paragraph's lines joined, so the terminal wraps them.

    typer keeps the line breaks of a docstring's later paragraphs, which broke sentences in
    ``--help`` at any terminal width (``stress_subsets.jsonl`` then ``(the same ...`` on the next line).

    >>> reflow("Score responses.\n\nA rerun computes\nnothing.")
    'Score responses.\n\nA rerun computes nothing.'
    """
    return "\n\n".join(" ".join(line.strip() for line in para.splitlines()) for para in doc.split("\n\n"))


def _reflow_help(group: typer.Typer) -> None:
    """Give every command of ``group`` (and of its sub-groups) its docstring reflowed as its help."""
    for command in group.registered_commands:
        doc = command.help or inspect.getdoc(command.callback)
        if doc:
            command.help = reflow(doc)
    for sub in group.registered_groups:
        if sub.typer_instance is not None:
            _reflow_help(sub.typer_instance)


_register_all()
_reflow_help(app)
