"""Every ``dialeval`` command line in a code block of the README and docs/ parses with the real CLI, and the mapping
files of docs/own_data.md load.

Parsing is click's (``make_context``): the command exists, every option is one it takes, with a
value where it needs one, and the required ones are given. Nothing runs. A placeholder in capitals
(``HEAD_IP``, ``NAME``) stands for a value and is parsed as one; lines holding ``...`` or ``<...>``, and lines
indented more than 4 spaces (output), are skipped.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterator
from pathlib import Path

import pytest
import typer

from dialeval.cli import app

REPO = Path(__file__).resolve().parents[1]
FENCE = re.compile(r"^```[a-z]*\n(.*?)^```", re.S | re.M)
START = re.compile(r"^(?:\$ |\.venv/bin/)?dialeval (.*)$")
PLACEHOLDER = re.compile(r"\b[A-Z][A-Z_0-9]{2,}\b")
SHELL = {"&&", "||", "|", ";", "&", "2>&1"}


def command_lines() -> Iterator[tuple[str, str]]:
    """Yield ``(file:line, arguments)`` for each ``dialeval`` line of a fenced block (continuations joined)."""
    for doc in [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]:
        text = doc.read_text(encoding="utf-8")
        for block in FENCE.finditer(text):
            first = text.count("\n", 0, block.start(1)) + 1
            joined = re.sub(r"\\\n\s*", " ", block.group(1))
            for offset, line in enumerate(joined.splitlines()):
                indented = len(line) - len(line.lstrip()) > 4  # output, such as a table's centred title
                if not indented and (m := START.match(line.strip())) and not re.search(r"\.\.\.|<[a-z]", m.group(1)):
                    args = PLACEHOLDER.sub("x", m.group(1).split(" #")[0])  # HEAD_IP, NAME: a value of its own
                    yield f"{doc.relative_to(REPO)}:{first + offset}", args


def test_the_docs_hold_command_lines() -> None:
    assert len(list(command_lines())) >= 40  # the walk finds the code blocks


@pytest.mark.parametrize(("where", "line"), list(command_lines()))
def test_a_documented_command_line_parses(where: str, line: str) -> None:
    args = shlex.split(line)
    cut = next((i for i, a in enumerate(args) if a in SHELL or a.startswith(">")), len(args))
    args, command, words = args[:cut], typer.main.get_command(app), ["dialeval"]
    while args and args[0] in getattr(command, "commands", {}):
        command = command.commands[args[0]]
        words.append(args.pop(0))
    assert not hasattr(command, "commands"), f"{where}: no command in {line!r}"
    command.make_context(" ".join(words), args)


@pytest.mark.parametrize("block", re.findall(r"^```yaml\n(.*?)^```", (REPO / "docs" / "own_data.md").read_text(),
                                              re.S | re.M))  # fmt: skip
def test_a_documented_mapping_file_loads(block: str, tmp_path: Path) -> None:
    """The mapping files of docs/own_data.md load with the reader of --mapping (an unknown key would be refused)."""
    from dialeval.data.generic import load_mapping

    (tmp_path / "m.yaml").write_text(block)
    assert load_mapping(tmp_path / "m.yaml").response


def test_the_tour_shows_what_data_list_prints(shared_data: Path) -> None:
    """docs/tour.md's ``dialeval data list`` block is the command's output (at 140 columns), line for line.

    The block had gone stale: it showed columns "rated items" and "available here" the table no longer has.
    """
    from typer.testing import CliRunner

    text = (REPO / "docs" / "tour.md").read_text(encoding="utf-8")
    block = text.split("$ dialeval data list\n", 1)[1].split("\n\n", 1)[0]
    result = CliRunner().invoke(app, ["data", "list"], env={"COLUMNS": "140"})
    assert result.exit_code == 0, result.output
    assert [line.rstrip() for line in result.output.splitlines()] == block.splitlines()


def test_meta_output_help_names_the_files_the_tour_says_it_writes() -> None:
    """docs/tour.md: ``meta -o DIR`` writes table.md, table.jsonl and, with --compare, compare.json; --help said
    only the first two."""
    meta = typer.main.get_command(app).commands["meta"]  # type: ignore[attr-defined]
    (option,) = [p for p in meta.params if "--output" in p.opts]
    tour = (REPO / "docs" / "tour.md").read_text(encoding="utf-8")
    for name in ("table.md", "table.jsonl", "compare.json"):
        assert name in tour and name in option.help
