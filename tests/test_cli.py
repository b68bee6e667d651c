"""Ctrl-C (SIGINT): one line on stderr saying what was kept, exit 130, and no output written.

``score``, ``benchmark``, ``judge run``, ``stress`` and ``train`` say that nothing was written and that the
score cache keeps the items finished (``generate`` and ``lmstyle``: the request cache, the responses generated;
their tests are in tests/lmstyle); any other command says ``interrupted``. In process (the scoring raises
KeyboardInterrupt) and through a real SIGINT delivered to a ``dialeval`` process.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

import dialeval.commands.benchmark as benchmark_command
import dialeval.commands.score as score_command
from dialeval.cli import app

ROWS = "context,response,system,rating\nHi there,Hello!,a,4\nHow are you?,Fine thanks,b,5\nYo,Hey you,c,2\n"
COLS = ["--response-col", "response", "--context-col", "context"]


def _interrupt(*args: object, **kwargs: object) -> None:
    raise KeyboardInterrupt


@pytest.fixture
def rows(tmp_path: Path) -> Path:
    path = tmp_path / "rows.csv"
    path.write_text(ROWS, encoding="utf-8")
    return path


def test_score_interrupted_says_nothing_was_written_and_the_cache_keeps_the_rest(
    rows: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(score_command, "score_request", _interrupt)
    out = tmp_path / "out.jsonl"
    res = CliRunner().invoke(app, ["score", "--path", str(rows), *COLS, "-m", "length", "-o", str(out),
                                   "--cache", str(tmp_path / "c.sqlite")])  # fmt: skip
    assert res.exit_code == 130
    kept = "the items scored so far are kept in the score cache, so a rerun resumes"
    assert res.output.splitlines()[-1] == f"interrupted; nothing written to {out}; {kept}"
    assert not out.exists()


def test_benchmark_interrupted_without_a_cache_says_only_that_nothing_was_written(
    rows: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(benchmark_command, "score_request", _interrupt)
    out = tmp_path / "bench"
    res = CliRunner().invoke(app, ["benchmark", "--path", str(rows), *COLS, "--rating-col", "rating=Overall",
                                   "-m", "length", "-o", str(out), "--no-cache"])  # fmt: skip
    assert res.exit_code == 130
    assert res.output.splitlines()[-1] == f"interrupted; nothing written to {out}"
    assert not out.exists()


SIGINT_AT_SECOND_REQUEST = ("import dialeval.backends.runner as r; one = r.Runner.one; seen = []\n"
                            "def first_then_sigint(self, request):\n"
                            "    if seen: sigint()\n"
                            "    seen.append(1)\n"
                            "    return one(self, request)\n"
                            "r.Runner.one = first_then_sigint").replace("\n", "\n        ")  # fmt: skip
"""A patch for :func:`_run_patched`: the runner's first request is answered, its second gets SIGINT first."""


def _run_patched(tmp_path: Path, patch: str, args: list[str]) -> subprocess.CompletedProcess[str]:
    """Run ``dialeval ARGS`` in a child process after ``patch`` (statements; ``sigint`` makes a call SIGINT it)."""
    script = textwrap.dedent(f"""
        import os, signal, sys, time
        from dialeval.cli import app

        def sigint(*args, **kwargs):
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(5)
            raise SystemExit("the SIGINT did not arrive")

        {patch}
        sys.argv = ["dialeval", *{args!r}]
        app()
    """)
    return subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, cwd=tmp_path, timeout=120,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),  # a background shell ignores SIGINT
        env={**os.environ, "DIALEVAL_SCORE_CACHE": str(tmp_path / "c.sqlite")},
    )  # fmt: skip


def test_a_real_sigint_during_score_prints_one_line_and_exits_130(rows: Path, tmp_path: Path) -> None:
    patch = "import dialeval.commands.score as s; s.score_request = sigint"
    res = _run_patched(tmp_path, patch, ["score", "--path", str(rows), *COLS, "-m", "length", "-o", "out.jsonl"])
    assert res.returncode == 130, res.stderr
    assert res.stderr.splitlines()[-1].startswith("interrupted; nothing written to out.jsonl; the items scored")
    assert "Traceback" not in res.stderr
    assert not (tmp_path / "out.jsonl").exists()


def test_a_real_sigint_in_any_other_command_says_interrupted(tmp_path: Path) -> None:
    patch = "import dialeval.data.catalog as c; c.list_benchmarks = sigint"
    res = _run_patched(tmp_path, patch, ["data", "list"])
    assert res.returncode == 130, res.stderr
    assert res.stderr.strip() == "interrupted"


def test_a_dialeval_error_a_command_lets_through_is_one_line_exit_2(tmp_path: Path) -> None:
    """A failed write outside a command's error handling (here: data list's table) is still one line."""
    patch = textwrap.dedent("""
        import dialeval.data.catalog as c
        from dialeval.atomic import WriteError
        def full(*args, **kwargs):
            raise WriteError("somewhere.jsonl", "No space left on device")
        c.list_benchmarks = full
    """).replace("\n", "\n        ")
    res = _run_patched(tmp_path, patch, ["data", "list"])
    assert res.returncode == 2, res.stderr
    assert res.stderr.strip() == "error: somewhere.jsonl: cannot be written: No space left on device"


def test_a_line_break_in_a_file_name_stays_one_line_written_as_its_escape(tmp_path: Path) -> None:
    """A file named with a line break split the error in two lines, the second without "error:" and the break
    itself invisible; each door that prints an error (a command's, data's, the app's net) writes it as \\n."""
    bad = tmp_path / "bad\nname.csv"
    bad.write_text("context,response\nhi\n", encoding="utf-8")
    runs = {
        "score": [sys.executable, "-m", "dialeval", "score", "--path", str(bad), *COLS, "-m", "length", "-o",
                  str(tmp_path / "s.jsonl"), "--no-cache"],
        "data": [sys.executable, "-m", "dialeval", "data", "show", "--path", str(tmp_path / "gone\tnone.csv")],
    }  # fmt: skip
    said = {k: subprocess.run(c, capture_output=True, text=True, cwd=tmp_path, timeout=120) for k, c in runs.items()}
    assert said["score"].stderr == f'error: {bad.parent}/bad\\nname.csv:2: field "response": expected 2 columns, ' \
                                   "found 1\n"
    assert said["data"].stderr == f"error: {tmp_path}/gone\\tnone.csv: file not found\n"
    patch = textwrap.dedent("""
        import dialeval.data.catalog as c
        from dialeval.atomic import WriteError
        def full(*args, **kwargs):
            raise WriteError("some\\nwhere.jsonl", "No space left on device")
        c.list_benchmarks = full
    """).replace("\n", "\n        ")
    res = _run_patched(tmp_path, patch, ["data", "list"])
    assert res.returncode == 2
    assert res.stderr == "error: some\\nwhere.jsonl: cannot be written: No space left on device\n"
    assert not (tmp_path / "s.jsonl").exists()


def test_an_argument_that_is_not_utf8_is_one_line_naming_it(tmp_path: Path) -> None:
    """A Latin-1 terminal's "é" reaches Python as a lone surrogate, which no output file can hold: --rating-col
    q=café was read, and data import failed when it wrote the records (pydantic's UnicodeEncodeError traceback)."""
    table = tmp_path / "t.csv"
    table.write_text("resp,q\nHello,3\n", encoding="utf-8")
    args = [b"data", b"import", b"--path", bytes(table), b"--response-col", b"resp", b"--rating-col", b"q=caf\xe9",
            b"-o", bytes(tmp_path / "out")]  # fmt: skip
    res = subprocess.run([sys.executable, "-m", "dialeval", *args], capture_output=True, text=True, cwd=tmp_path,
                         timeout=120)  # fmt: skip
    assert res.returncode == 2, res.stderr
    assert res.stderr.strip() == ("error: argument 8 ('q=caf\\udce9') is not UTF-8 text: byte 0xe9 at character 6 "
                                  "(is the terminal's encoding UTF-8?)")
    assert not (tmp_path / "out").exists()


def test_a_deleted_working_folder_is_one_line(tmp_path: Path) -> None:
    """A shell left in a folder that was then deleted: score ended in Path.cwd()'s FileNotFoundError traceback
    (the default shared data folder is ../shared/data from there). The installed script, as a user runs it."""
    script = Path(sys.executable).with_name("dialeval")
    gone = tmp_path / "gone"
    gone.mkdir()
    score = f'"{script}" score -b usr-tc --limit 1 -m length -o "{tmp_path}/s.jsonl"'
    line = f'cd "{gone}" && rmdir "{gone}" && exec {score}'
    res = subprocess.run(["bash", "-c", line], capture_output=True, text=True, timeout=120)
    assert res.returncode == 2, res.stderr
    assert res.stderr.strip() == ("error: the current folder no longer exists (it was deleted after the shell "
                                  "entered it): cd to a folder that exists and run the command again")
    assert not (tmp_path / "s.jsonl").exists()


def test_python_m_dialeval_is_the_command_line(tmp_path: Path) -> None:
    """`python -m dialeval` said "No module named dialeval.__main__"; it runs the CLI, under the script's name."""
    import dialeval

    env = {**os.environ, "COLUMNS": "80"}
    version = subprocess.run([sys.executable, "-m", "dialeval", "--version"], capture_output=True, text=True, env=env,
                             cwd=tmp_path, timeout=120)  # fmt: skip
    assert version.returncode == 0 and version.stdout == f"{dialeval.__version__}\n", version.stderr
    usage = subprocess.run([sys.executable, "-m", "dialeval", "score"], capture_output=True, text=True, env=env,
                           cwd=tmp_path, timeout=120)  # fmt: skip
    assert usage.returncode == 2 and "Usage: dialeval score" in usage.stderr


def test_the_command_line_starts_without_pandas_numpy_or_torch() -> None:
    """Every command, `--version` and `--help` included, loaded pandas to start (a constant imported from a module
    that imports it): 0.75 s to print the version on 2 cores, 0.42 s without (the median of five)."""
    code = "import sys, dialeval.cli; print(sorted(m for m in ('pandas', 'numpy', 'torch') if m in sys.modules))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120)
    assert done.stdout.strip() == "[]"


def test_help_wraps_whole_sentences_at_the_terminal_width() -> None:
    """typer kept a docstring's line breaks in --help: at 80 columns `stress --help` printed
    "stress_subsets.jsonl" alone on a line and "(the same per open/closed-ended subset)" on the next.
    Every command's help is now its docstring with each paragraph's lines joined, so the terminal wraps it."""
    import typer.main

    def commands(group: Any) -> list[Any]:  # typer's own click (typer._click): its groups have .commands
        out: list[Any] = []
        for cmd in group.commands.values():
            out.extend(commands(cmd) if hasattr(cmd, "commands") else [cmd])
        return out

    every = commands(typer.main.get_command(app))
    assert len(every) > 20
    broken = [c.name for c in every if any("\n" in para for para in (c.help or "").split("\n\n"))]
    assert broken == []
    shown = CliRunner().invoke(app, ["stress", "--help"], env={"COLUMNS": "80"}, terminal_width=80).output
    assert "stress_subsets.jsonl (the same per open/closed-ended subset)" in " ".join(shown.split())
    assert "stress_subsets.jsonl (the same" in shown  # on one line, as the terminal wraps it


@pytest.mark.parametrize("command", ["judge", "stress", "train"])
def test_judge_run_stress_and_train_interrupted_say_what_was_kept(
    rows: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, command: str
) -> None:
    """They said only "interrupted", as if they kept nothing; the score cache keeps their finished items."""
    out = tmp_path / ("j.jsonl" if command == "judge" else command)
    if command == "judge":
        monkeypatch.setattr("dialeval.scoring.score_metrics", _interrupt)
        args = ["judge", "run", "--protocol", "cpdscore-simple", "--path", str(rows), *COLS, "--out", str(out)]
    elif command == "stress":
        monkeypatch.setattr("dialeval.stress.cli._run_perturbations", _interrupt)
        args = ["stress", "--path", str(rows), *COLS, "-m", "length", "--perturb", "negation", "-o", str(out)]
    else:
        monkeypatch.setattr("dialeval.trained.cli._evaluate", _interrupt)
        args = ["train", "--model", "tfidf-lr", "--train", "usr-pc", "--test", "usr-tc", "--dimension", "Overall",
                "--limit", "8", "--output", str(out)]  # fmt: skip
    res = CliRunner().invoke(app, [*args, "--cache", str(tmp_path / "c.sqlite")])
    assert res.exit_code == 130, res.output
    kept = "the items scored so far are kept in the score cache, so a rerun resumes"
    if command == "judge":  # the judge's answers are in the request cache; the score cache keeps whole batches
        kept = ("the judge's answers so far are kept in the request cache (each finished batch of 64 items in the "
                "score cache), so a rerun resumes")  # fmt: skip
    assert res.output.splitlines()[-1] == f"interrupted; nothing written to {out}; {kept}"
    assert not out.exists()
