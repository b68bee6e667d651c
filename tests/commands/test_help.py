"""Every command's ``--help`` reads as plain text: no Sphinx markup from the docstrings it is made of."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import typer

from dialeval.cli import app

#: reST that typer prints as it is: ``literal`` and :role:`target`.
MARKUP = re.compile(r"``|:(func|class|mod|data|meth|attr):`")


def commands(command: Any, name: str) -> Iterator[tuple[str, Any]]:
    """Yield every command and group under ``command``, with its words on the command line."""
    yield name, command
    for word, sub in getattr(command, "commands", {}).items():
        yield from commands(sub, f"{name} {word}")


def test_no_help_text_holds_sphinx_markup() -> None:
    """``data import``, ``generate`` and six ``quality`` commands showed double backquotes in their help."""
    found = list(commands(typer.main.get_command(app), "dialeval"))
    assert len(found) > 30  # the walk reached the subcommands
    marked = [
        f"{name} ({where})"
        for name, command in found
        for where, text in [("help", command.help), *((p.name, getattr(p, "help", None)) for p in command.params)]
        if text and MARKUP.search(text)
    ]
    assert not marked
