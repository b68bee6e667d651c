"""An empty path on the command line is one error line, and nothing is written in the current folder.

``Path("")`` is ``.``: before, ``meta -o ""`` (a ``-o "$OUT"`` with ``OUT`` unset) replaced the ``table.md``
of the folder the shell was in, ``benchmark`` and ``data export`` wrote their files there, and
``study create ""`` made a study there. Through the real CLI (typer's runner, in process). A name too long
for the file system is one line too (it was an OSError traceback).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, ClassVar

import pytest
from tests.commands.cli_runner import RATED, invoke, refused

from dialeval.commands.argv import check_empty_paths
from dialeval.errors import InputError


@pytest.mark.parametrize(
    ("args", "field"),
    [
        (["meta", "{none}", "--path", "{rows}", *RATED, "-m", "length", "-o", ""], "--output"),
        (["benchmark", "--path", "{rows}", *RATED, "-m", "length", "--no-cache", "--output="], "--output"),
        (["stress", "-m", "length", "--no-cache", "-o", "", "--limit", "1"], "--output"),
        (["data", "export", "-b", "usr-tc", "--limit", "1", "-o", ""], "--output"),
        (["score", "--path", "", *RATED, "-o", "{tmp}/s.jsonl"], "--path"),
        (["study", "create", "", "--path", "{rows}", *RATED], "STUDY_DIR"),
        (["meta", "{none}", "", "--path", "{rows}", *RATED], "SCORES"),  # the second of a variadic argument
        (["report", "{tmp}", "--study", ""], "--study"),
    ],
)
def test_an_empty_path_is_refused_before_any_work(
    args: list[str], field: str, rows: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    here = tmp_path / "here"
    here.mkdir()
    (here / "table.md").write_text("mine\n", encoding="utf-8")
    monkeypatch.chdir(here)
    words = [a.format(rows=rows, none=tmp_path / "none.jsonl", tmp=tmp_path) for a in args]
    refused(invoke(*words), f'field "{field}": is empty; give a path (. for the current folder)')
    assert [p.name for p in here.iterdir()] == ["table.md"]
    assert (here / "table.md").read_text(encoding="utf-8") == "mine\n"


@pytest.mark.parametrize(
    ("args", "field"),
    [
        (["score", "--path", "{rows}", *RATED, "-m", "length", "--no-cache", "-o", " "], "--output"),
        (["meta", "{none}", "--path", "{rows}", *RATED, "-m", "length", "-o", "\t"], "--output"),
        (["study", "create", "  ", "--path", "{rows}", *RATED], "STUDY_DIR"),
    ],
)
def test_a_path_of_only_whitespace_is_refused_as_an_empty_one(
    args: list[str], field: str, rows: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Only "" was refused: score -o " " wrote a file named " " in the current folder."""
    monkeypatch.chdir(tmp_path)
    words = [a.format(rows=rows, none=tmp_path / "none.jsonl") for a in args]
    refused(invoke(*words), f'field "{field}": is only whitespace; give a path (. for the current folder)')
    assert sorted(p.name for p in tmp_path.iterdir()) == ["rows.csv"]


def test_a_dot_is_still_the_current_folder_and_empty_text_elsewhere_keeps_its_own_error(
    rows: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    res = invoke("benchmark", "--path", rows, *RATED, "-m", "length", "--no-cache", "--n-boot", "0", "-o", ".")
    assert res.exit_code == 0, res.output
    assert (tmp_path / "table.md").is_file()
    refused(invoke("score", "--path", rows, *RATED, "-m", "", "-o", "s.jsonl"), 'field "--metrics": empty metric name')


def test_a_command_without_a_callback_or_words_is_left_alone() -> None:
    """A group with no sub-command named, and no words at all: nothing to check (typer prints the help)."""

    class Group:
        commands: ClassVar[dict[str, object]] = {}
        callback = None

    check_empty_paths(Group(), [])
    check_empty_paths(Group(), ["", "--output", ""])


def test_every_command_s_signature_is_read_and_its_path_options_found() -> None:
    """Each command's annotations are read (a name only imported for type checking would fail every run of it)."""
    import typer.main

    from dialeval.cli import app

    root = typer.main.get_command(app)
    found: dict[str, list[str]] = {}

    def walk(command: Any, words: list[str]) -> None:
        for name, sub in getattr(command, "commands", {}).items():
            walk(sub, [*words, name])
        if not getattr(command, "commands", None):
            check_empty_paths(root, words)
            found[" ".join(words)] = [o for p in command.params if p.param_type_name == "option" for o in p.opts
                                      if o.startswith("--") and _refuses(root, [*words, f"{o}="])]  # fmt: skip

    walk(root, [])
    assert len(found) >= 25, sorted(found)
    assert found["meta"] == ["--ratings", "--path", "--output", "--mapping"]
    assert found["study create"] == ["--dialogues", "--path", "--candidates", "--qualification",
                                     "--qualification-ratings", "--attention", "--attention-ratings", "--mapping"]


def _refuses(root: Any, words: list[str]) -> bool:
    try:
        check_empty_paths(root, words)
    except InputError:
        return True
    return False


LONG = "a" * 300  # a name of 300 bytes: Linux file systems take 255


@pytest.mark.parametrize(
    ("args", "field"),
    [
        (["score", "--path", "{rows}", *RATED, "-m", "length", "-o", "{tmp}/" + LONG + ".jsonl"], "--output"),
        (["benchmark", "--path", "{rows}", *RATED, "-m", "length", "--no-cache", "-o", "{tmp}/" + LONG], "--output"),
        (["score", "--path", "{rows}", *RATED, "-m", "length", "--cache", "{tmp}/" + LONG, "-o", "{tmp}/s.jsonl"],
         "--cache"),
        (["study", "create", "{tmp}/" + LONG, "--path", "{rows}", *RATED], "STUDY_DIR"),
        (["meta", "{tmp}/" + LONG], "SCORES"),
    ],
)
def test_a_name_too_long_for_the_file_system_is_refused_naming_the_option(
    args: list[str], field: str, rows: Path, tmp_path: Path
) -> None:
    """Each was an OSError traceback ("File name too long") from the first look at the path (Path.is_dir)."""
    words = [a.format(rows=rows, tmp=tmp_path) for a in args]
    refused(invoke(*words), f'field "{field}": the name "aaaaaaaaaaaaaaaaaaaa..." is 30', "file systems take 255")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["rows.csv"]


def test_a_name_too_long_in_a_value_no_path_check_reads_is_one_line(rows: Path, tmp_path: Path) -> None:
    """A trained model's path and a -p path are not path options: they ended in the same OSError traceback. The
    CLI's entry prints it as one line (a real process: typer's in-process runner does not pass that entry). The
    protocol's name ends in .yaml, so the judge reads it as a file (without a suffix it is a protocol's name)."""
    import subprocess
    import sys

    for words, name in ((["-m", f"trained:{tmp_path}/{LONG}"], LONG),
                        (["-m", "judge:custom", "-p", f"protocol={tmp_path}/{LONG}.yaml"], f"{LONG}.yaml")):
        args = ["score", "--path", str(rows), *RATED, *words, "-o", str(tmp_path / "s.jsonl")]
        res = subprocess.run([sys.executable, "-m", "dialeval", *args], capture_output=True, text=True, timeout=120)
        assert res.returncode == 2, res.stderr
        assert res.stderr.splitlines()[-1] == (f"error: {str(tmp_path / name)[:30]}...{name[-20:]}: too long a name "
                                               "for the file system (at most 255 bytes a name, 4,095 a path)")
        assert "Traceback" not in res.stderr
    assert not (tmp_path / "s.jsonl").exists()


@pytest.mark.parametrize("given", [["-o{out}/"], ["-qo", "{out}/"], ["-qo{out}/"]])
def test_a_short_option_s_value_in_the_same_word_is_checked_too(rows: Path, tmp_path: Path, given: list[str]) -> None:
    """click reads "-oruns/" and "-qo runs/" as -o runs/, and check_empty_paths read neither as -o: "runs/" was not
    seen to end in "/", and score wrote a file named runs (as "-o runs/" no longer does)."""
    out = tmp_path / "runs"
    words = [g.format(out=out) for g in given]
    refused(invoke("score", "--path", rows, *RATED, "-m", "length", "--no-cache", *words),
            f'{out}: field "--output": ends in "/", naming a folder, and this option writes a file')  # fmt: skip
    assert not out.exists()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["score", "--path", "{rows}", *RATED, "-m", "length", "--no-cache", "-o", "{tmp}/a.jsonl", "-o",
          "{tmp}/b.jsonl"], 'field "--output": given twice ("{tmp}/a.jsonl", then "{tmp}/b.jsonl"); it takes one '
                           "value: give it once"),
        # the long and the short form are one option, and "-ovalue", "--opt=value" give it too
        (["score", "--path", "{rows}", *RATED, "-m", "length", "--no-cache", "--output={tmp}/a.jsonl",
          "-o{tmp}/b.jsonl"], 'field "--output": given twice ("{tmp}/a.jsonl", then "{tmp}/b.jsonl")'),
        (["benchmark", "-b", "usr-tc", "-b", "usr-pc", "-m", "length", "--no-cache", "-o", "{tmp}/out"],
         'field "--benchmark": given twice ("usr-tc", then "usr-pc"); it takes one value: give it once'),
        # --method reads a comma list (its default is one): the fix says how to give both
        (["benchmark", "--path", "{rows}", *RATED, "-m", "length", "--method", "pearson", "--method", "kendall",
          "-o", "{tmp}/out"], 'field "--method": given twice ("pearson", then "kendall"); it takes one value: give '
                              "it once, or both as one list: --method pearson,kendall"),
        (["lmstyle", "--datasets", "dd", "--datasets", "bst", "--limit", "1", "-o", "{tmp}/out"],
         'field "--datasets": given twice ("dd", then "bst"); it takes one value: give it once, or both as one '
         "list: --datasets dd,bst"),
        (["generate", "--limit", "1", "--n", "2", "-o", "{tmp}/out"],
         'field "--limit": given twice ("1", then "2"); it takes one value: give it once'),
        (["study", "create", "{tmp}/out", "--path", "{rows}", *RATED, "--annotators", "2", "--annotators", "3"],
         'field "--annotators": given twice ("2", then "3"); it takes one value: give it once'),
        (["judge", "run", "--limit", "1", "-o", "{tmp}/a.jsonl", "--out", "{tmp}/b.jsonl"],
         'field "--output": given twice ("{tmp}/a.jsonl", then "{tmp}/b.jsonl")'),
    ],
)
def test_a_one_value_option_given_twice_with_different_values_is_refused_before_any_work(
    args: list[str], message: str, rows: Path, tmp_path: Path
) -> None:
    """click kept the last value, silently: ``lmstyle --datasets dd --datasets bst`` ran bst only, ``score -o a.jsonl
    -o b.jsonl`` wrote b.jsonl only, ``benchmark -b usr-tc -b usr-pc`` ran usr-pc only."""
    words = [a.format(rows=rows, tmp=tmp_path) for a in args]
    refused(invoke(*words), message.format(tmp=tmp_path))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["rows.csv"]


def test_the_same_value_twice_and_a_repeatable_option_repeated_are_run(
    rows: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same value given twice means one thing (RATED gives --scale 1-5 too); -m is repeatable, each kept."""
    monkeypatch.chdir(tmp_path)
    res = invoke("score", "--path", rows, *RATED, "--scale", "1-5", "-m", "length", "-m", "distinct", "--no-cache",
                 "-o", "s.jsonl", "--output=s.jsonl", "--json")  # fmt: skip
    assert res.exit_code == 0, res.output
    assert json.loads(res.output[res.output.index("{") :])["request"]["metrics"] == ["length", "distinct"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["rows.csv", "s.jsonl"]


def test_a_count_option_repeated_takes_no_value() -> None:
    """A count option (none of dialeval's yet) is given again and again, as a flag is: its next word is no value."""
    import click

    command = click.Command("c", callback=lambda **_: None, params=[
        click.Option(["-v"], count=True), click.Option(["-n", "--number"]), click.Argument(["words"], nargs=-1)])
    check_empty_paths(command, ["-v", "-v", "-vn", "1", "--number=1", "-vv", "word"])
    with pytest.raises(InputError, match=r'^field "--number": given twice \("1", then "2"\); it takes one value: '
                                         "give it once$"):  # fmt: skip
        check_empty_paths(command, ["-v", "-n", "1", "-v", "-n2"])
