"""Where dialeval keeps its caches: a cache folder that cannot be made is one clear error, not a traceback."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.commands.cli_runner import COLS, ROWS, invoke, refused

from dialeval.errors import InputError
from dialeval.paths import cache_dir


def test_cache_dir_is_made_where_dialeval_cache_says(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DIALEVAL_CACHE", str(tmp_path / "a" / "b"))
    assert cache_dir() == tmp_path / "a" / "b" and (tmp_path / "a" / "b").is_dir()


def test_a_cache_folder_below_a_file_is_one_error_naming_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "notes.txt").write_text("x")
    below = tmp_path / "notes.txt" / "cache"
    monkeypatch.setenv("DIALEVAL_CACHE", str(below))
    with pytest.raises(InputError, match=r"the cache folder cannot be created \(Not a directory\)") as err:
        cache_dir()
    assert err.value.field == "$DIALEVAL_CACHE"
    # through a command: the default score cache lives there, so score stops in one line before writing
    monkeypatch.delenv("DIALEVAL_SCORE_CACHE")
    rows = tmp_path / "rows.csv"
    rows.write_text(ROWS, encoding="utf-8")
    res = invoke("score", "--path", rows, *COLS, "-m", "length", "-o", tmp_path / "s.jsonl")
    refused(res, f'{below}: field "$DIALEVAL_CACHE"', "set $DIALEVAL_CACHE to a folder you can write")
    assert not (tmp_path / "s.jsonl").exists()


def test_a_shared_data_folder_that_is_not_there_is_one_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A mistyped $DIALEVAL_DATA went on, silently, with ../shared/data (or the bundled USR-TC) in its place."""
    from dialeval.paths import shared_data_dir

    monkeypatch.setenv("DIALEVAL_DATA", str(tmp_path))
    assert shared_data_dir() == tmp_path
    monkeypatch.setenv("DIALEVAL_DATA", str(tmp_path / "nope"))
    with pytest.raises(InputError) as err:
        shared_data_dir()
    assert err.value.field == "$DIALEVAL_DATA"
    refused(invoke("benchmark", "-m", "length", "--limit", "1", "-o", tmp_path / "b"),
            f'{tmp_path / "nope"}: field "$DIALEVAL_DATA": is not a folder')  # fmt: skip
    assert not (tmp_path / "b").exists()


@pytest.mark.parametrize("variable", ["DIALEVAL_CACHE", "DIALEVAL_SCORE_CACHE", "DIALEVAL_DATA", "HOME"])
def test_a_path_variable_that_is_not_utf8_is_one_error(tmp_path: Path, shared_data: Path, variable: str) -> None:
    """A Latin-1 "é" in $DIALEVAL_CACHE (or in $HOME, where the cache goes by default): benchmark scored, then
    ended in a UnicodeEncodeError traceback writing run.json, which holds the cache's path. A real process with
    the variable's raw bytes; the error names the variable to change."""
    import os
    import subprocess
    import sys

    env = {k.encode(): v.encode() for k, v in os.environ.items() if not k.startswith("DIALEVAL_")}
    env[b"DIALEVAL_DATA"] = bytes(shared_data)
    env[b"DIALEVAL_CACHE"] = bytes(tmp_path / "cache")
    raw = bytes(tmp_path) + b"/caf\xe9"
    if variable == "HOME":
        del env[b"DIALEVAL_CACHE"]
    env[variable.encode()] = raw
    out = tmp_path / "run"
    args = ["benchmark", "-b", "usr-tc", "--limit", "4", "-m", "length", "-o", str(out)]
    res = subprocess.run([sys.executable, "-m", "dialeval", *args], env=env, capture_output=True, text=True,
                         cwd=tmp_path, timeout=300)  # fmt: skip
    shown = f"{tmp_path}/caf\\udce9" + ("/.cache/dialeval" if variable == "HOME" else "")
    named = "$DIALEVAL_CACHE" if variable == "HOME" else f"${variable}"
    assert res.returncode == 2, res.stderr
    assert res.stderr.strip() == (f"error: field \"{named}\": '{shown}' is not UTF-8 text: byte 0xe9 at character "
                                  f"{len(str(tmp_path)) + 5}: set {named} to a path that is")  # fmt: skip
    assert not out.exists()


@pytest.mark.parametrize("variable", ["DIALEVAL_CACHE", "DIALEVAL_SCORE_CACHE", "DIALEVAL_DATA"])
def test_a_tilde_kept_by_quotes_in_a_path_variable_is_the_home_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, shared_data: Path, variable: str
) -> None:
    """``DIALEVAL_CACHE="~/x"`` (quoted, or from an env file that no shell reads) made a folder named "~" in the
    working folder and kept the caches there, silently; the home folder is here a temporary one."""
    from dialeval.paths import score_cache_path, shared_data_dir

    home = tmp_path / "home"
    home.mkdir()
    (home / "data").symlink_to(shared_data, target_is_directory=True)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv(variable, {"DIALEVAL_SCORE_CACHE": "~/s.sqlite", "DIALEVAL_DATA": "~/data"}.get(variable, "~/c"))
    got = {"DIALEVAL_CACHE": cache_dir, "DIALEVAL_SCORE_CACHE": score_cache_path, "DIALEVAL_DATA": shared_data_dir}
    assert got[variable]() == home / {"DIALEVAL_SCORE_CACHE": "s.sqlite", "DIALEVAL_DATA": "data"}.get(variable, "c")
    assert not (tmp_path / "~").exists()
    monkeypatch.setenv(variable, "~no-such-user-here/c")
    with pytest.raises(InputError, match=r"^field \"\$DIALEVAL_[A-Z_]+\": '~no-such-user-here/c' starts with a ~ whose "
                                         r"home folder cannot be found: give the full path$"):  # fmt: skip
        got[variable]()
