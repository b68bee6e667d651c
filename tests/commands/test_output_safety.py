"""Outputs never destroy inputs or read-only files, and a failed write is one line that leaves nothing behind.

Through the real CLI (typer's runner, in process): ``-o`` naming an input (directly, by a symbolic or a hard
link), a read-only existing output, ``-o -``, the success line saying what it replaced, and a full disk
(simulated: every write of the output fails with ENOSPC, as on a full tmpfs) for ``score``, ``benchmark``,
``meta`` and ``data import``.
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import pytest
from tests.commands.cli_runner import COLS, RATED, ROWS, invoke, refused
from typer.testing import Result

from dialeval.schema import Rating, Score


def score(csv: Path, out: Path | str, *extra: str) -> Result:
    return invoke("score", "--path", csv, *COLS, "-m", "length", "-o", out, "--no-cache", *extra)


def cached_items(cache: Path) -> int:
    """Return how many items the score cache ``cache`` holds (the connection may checkpoint the WAL: compare this)."""
    with sqlite3.connect(cache) as db:
        return int(db.execute("SELECT COUNT(*) FROM scores").fetchone()[0])


# --- -o naming an input ---


def test_score_refuses_to_write_over_its_input_file(rows: Path) -> None:
    line = refused(score(rows, rows), str(rows), 'field "--output"', "is the file given to --path")
    assert "destroy the input" in line
    assert rows.read_text(encoding="utf-8") == ROWS


@pytest.mark.parametrize("link", ["symlink", "hardlink"])
def test_an_output_that_is_the_input_through_a_link_is_refused(link: str, rows: Path, tmp_path: Path) -> None:
    out = tmp_path / "scores.jsonl"
    (os.symlink if link == "symlink" else os.link)(rows, out)
    refused(score(rows, out), str(out), 'field "--output"', f"is the file given to --path ({rows})")
    assert rows.read_text(encoding="utf-8") == ROWS


@pytest.mark.parametrize("name", ["rows.csv", "rec/candidates.jsonl", "c.sqlite"])
def test_an_output_that_is_an_input_through_a_missing_folder_and_dotdot_is_refused(
    name: str, rows: Path, tmp_path: Path
) -> None:
    """`-o new/../rows.csv` replaced rows.csv, the input, and exited 0: the checks looked only at paths that exist,
    and new/../rows.csv does not until new/ is made (by the write). Likewise a records file and the score cache."""
    rec, cache = tmp_path / "rec", tmp_path / "c.sqlite"
    assert invoke("data", "import", "--path", rows, *COLS, "-o", rec).exit_code == 0
    assert invoke("score", "--path", rows, *COLS, "-m", "length", "-o", tmp_path / "s.jsonl", "--cache",
                  cache).exit_code == 0  # fmt: skip
    before = {p: p.read_bytes() for p in (rows, rec / "candidates.jsonl")}
    out = tmp_path / "new" / ".." / name
    source = ["--dialogues", rec / "dialogues.jsonl", "--candidates", rec / "candidates.jsonl"]
    res = invoke("score", *(source if name.startswith("rec/") else ["--path", rows, *COLS]), "-m", "length",
                 "-o", out, "--cache", cache)  # fmt: skip
    what = {"rows.csv": "--path", "rec/candidates.jsonl": "--candidates", "c.sqlite": "--cache"}[name]
    refused(res, f'{out}: field "--output": is the file given to {what}', "writing it would destroy the input")
    assert {p: p.read_bytes() for p in before} == before
    assert cached_items(cache) == 3
    assert not (tmp_path / "new").exists()


def test_a_cache_given_through_a_missing_folder_and_dotdot_is_an_input(rows: Path, tmp_path: Path) -> None:
    """`--cache new/../c.sqlite -o c.sqlite`: the cache opens c.sqlite (making new/), and the scores replaced it."""
    cache = tmp_path / "c.sqlite"
    assert invoke("score", "--path", rows, *COLS, "-m", "length", "-o", tmp_path / "s.jsonl", "--cache",
                  cache).exit_code == 0  # fmt: skip
    res = invoke("score", "--path", rows, *COLS, "-m", "length", "-o", cache, "--cache", tmp_path / "new" / ".." /
                 "c.sqlite")  # fmt: skip
    refused(res, f'{cache}: field "--output": is the file given to --cache', "writing it would destroy the input")
    assert cached_items(cache) == 3


def test_the_mapping_file_is_an_input_too(rows: Path, tmp_path: Path) -> None:
    mapping = tmp_path / "m.yaml"
    mapping.write_text("response: response\ncontext: context\n", encoding="utf-8")
    res = invoke("score", "--path", rows, "--mapping", mapping, "-m", "length", "-o", mapping, "--no-cache")
    refused(res, str(mapping), "is the file given to --mapping")
    assert mapping.read_text(encoding="utf-8") == "response: response\ncontext: context\n"


def test_score_refuses_to_write_over_its_candidates(rows: Path, tmp_path: Path) -> None:
    assert invoke("data", "import", "--path", rows, *COLS, "-o", tmp_path / "rec").exit_code == 0
    cands = tmp_path / "rec" / "candidates.jsonl"
    before = cands.read_text(encoding="utf-8")
    res = invoke("score", "--dialogues", tmp_path / "rec" / "dialogues.jsonl", "--candidates", cands,
                 "-m", "length", "-o", cands, "--no-cache")  # fmt: skip
    refused(res, "is the file given to --candidates")
    assert cands.read_text(encoding="utf-8") == before


def test_meta_refuses_an_output_folder_whose_table_is_its_scores_file(tmp_path: Path) -> None:
    folder = tmp_path / "out"
    folder.mkdir()
    scores = folder / "table.jsonl"  # a scores file that happens to sit where meta writes its table
    scores.write_text(Score(item_id="i", metric="m", value=1.0).model_dump_json() + "\n")
    ratings = tmp_path / "r.jsonl"
    ratings.write_text(Rating(item_id="i", dimension="Overall", annotator="a", value=3).model_dump_json() + "\n")
    before = scores.read_text()
    refused(invoke("meta", scores, "-r", ratings, "-o", folder), str(scores), "is the file given to SCORES")
    assert scores.read_text() == before


def test_a_records_folder_given_to_path_stands_for_its_record_files(tmp_path: Path, rows: Path) -> None:
    rec = tmp_path / "rec"
    assert invoke("data", "import", "--path", rows, *COLS, "-o", rec).exit_code == 0
    before = (rec / "candidates.jsonl").read_text(encoding="utf-8")
    res = invoke("score", "--path", rec, "-m", "length", "-o", rec / "candidates.jsonl", "--no-cache")
    refused(res, f"{rec / 'candidates.jsonl'}: field", f"is read from the folder given to --path ({rec})")
    assert (rec / "candidates.jsonl").read_text(encoding="utf-8") == before
    res = invoke("score", "--path", rec, "-m", "length", "-o", rec / "scores.jsonl", "--no-cache")
    assert res.exit_code == 0, res.output  # beside the records is fine


# --- existing outputs: read-only refused, an ordinary one replaced and said so ---


def test_a_read_only_output_is_refused_not_replaced(rows: Path, tmp_path: Path) -> None:
    out = tmp_path / "kept.jsonl"
    out.write_text("PRECIOUS\n")
    out.chmod(0o444)
    refused(score(rows, out), str(out), 'field "--output"', "is read-only")
    assert out.read_text() == "PRECIOUS\n"


def test_benchmark_refuses_a_folder_whose_table_is_read_only(rows: Path, tmp_path: Path) -> None:
    folder = tmp_path / "bench"
    folder.mkdir()
    (folder / "table.md").write_text("# mine\n")
    (folder / "table.md").chmod(0o444)
    res = invoke("benchmark", "--path", rows, *RATED, "-m", "length", "--boot", "0", "-o", folder, "--no-cache")
    refused(res, str(folder / "table.md"), "is read-only")
    assert sorted(p.name for p in folder.iterdir()) == ["table.md"]


def test_replacing_an_ordinary_output_works_and_says_so(rows: Path, tmp_path: Path) -> None:
    out = tmp_path / "scores.jsonl"
    first = score(rows, out)
    assert first.exit_code == 0, first.output
    assert "replaced" not in first.output
    again = score(rows, out)
    assert again.exit_code == 0, again.output
    assert f"wrote 3 scores for 3 items to {out} (replaced the existing {out})" in again.output


def test_benchmark_says_which_files_it_replaced(rows: Path, tmp_path: Path) -> None:
    args = ["benchmark", "--path", rows, *RATED, "-m", "length", "--boot", "0", "-o", tmp_path / "b", "--no-cache"]
    assert "replaced" not in invoke(*args).output
    res = invoke(*args)
    assert res.exit_code == 0, res.output
    assert "(replaced the existing scores.jsonl, table.md, table.jsonl, run.json)" in res.output


@pytest.mark.parametrize("command", ["score", "benchmark", "meta"])
def test_dash_as_output_is_refused_and_no_file_named_dash_appears(
    command: str, rows: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    if command == "score":
        res = score(rows, "-")
    elif command == "benchmark":
        res = invoke("benchmark", "--path", rows, *RATED, "-m", "length", "-o", "-", "--no-cache")
    else:
        res = invoke("meta", "scores.jsonl", "--path", rows, *RATED, "-o", "-")
    refused(res, 'field "--output"', '"-" is not standard output here')
    assert not (tmp_path / "-").exists()


@pytest.mark.parametrize("args", [["score", "--path", "-", "--response-col", "response", "-m", "length", "-o", "x"],
                                  ["meta", "-", "-b", "usr-tc"]])  # fmt: skip
def test_dash_as_an_input_says_it_is_not_standard_input(args: list[str], tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    """`--path -` (a shell user's standard input) said "-: file not found"."""
    monkeypatch.chdir(tmp_path)
    refused(invoke(*args), '-: is not standard input here: give the file to read')


def test_a_pipe_or_a_link_to_one_is_refused_not_replaced(rows: Path, tmp_path: Path) -> None:
    """`-o /dev/stdout` (a link to the pipe of standard output) renamed a file over the machine's /dev/stdout.

    A pipe made here stands for it, and a link to the pipe for /dev/stdout, so that a regression
    replaces nothing outside tmp_path. `benchmark` meets the link as its folder's scores.jsonl.
    """
    pipe, link = tmp_path / "pipe", tmp_path / "stdout"
    os.mkfifo(pipe)
    link.symlink_to(pipe)
    for out in (pipe, link):
        refused(score(rows, out), f'{out}: field "--output": is a pipe, not a file; give the name of a file to write')
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "scores.jsonl").symlink_to(link)
    res = invoke("benchmark", "--path", rows, *RATED, "-m", "length", "-o", tmp_path / "run", "--no-cache")
    refused(res, f'{tmp_path / "run" / "scores.jsonl"}: field "--output": is a pipe, not a file')
    assert pipe.is_fifo() and link.is_symlink() and (tmp_path / "run" / "scores.jsonl").is_symlink()


def test_a_link_to_a_file_is_written_through_and_kept(rows: Path, tmp_path: Path) -> None:
    """`-o /dev/stdout` with standard output a file: the rename replaced the link /dev/stdout machine-wide.

    A link made here to /proc/self/fd/N of a file opened here stands for /dev/stdout (the runner is in
    process, so /proc/self is this test's process).
    """
    real = tmp_path / "real.jsonl"
    with real.open("w") as opened:
        link = tmp_path / "stdout"
        link.symlink_to(f"/proc/self/fd/{opened.fileno()}")
        res = score(rows, link)
        assert res.exit_code == 0, res.output
        assert link.is_symlink() and os.readlink(link) == f"/proc/self/fd/{opened.fileno()}"
    assert score(rows, tmp_path / "plain.jsonl").exit_code == 0
    assert real.read_text() == (tmp_path / "plain.jsonl").read_text()  # the scores, as a plain -o writes them


# --- a full disk ---


def test_score_on_a_full_disk_is_one_line_and_keeps_the_old_output(rows: Path, tmp_path: Path, full_disk: None) -> None:
    out = tmp_path / "out.jsonl"
    out.write_text("old\n")
    refused(score(rows, out), f"{out}: cannot be written: No space left on device")
    assert out.read_text() == "old\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.jsonl", "rows.csv"]


def test_benchmark_on_a_full_disk_leaves_no_new_folder(rows: Path, tmp_path: Path, full_disk: None) -> None:
    folder = tmp_path / "runs" / "bench"
    res = invoke("benchmark", "--path", rows, *RATED, "-m", "length", "--boot", "0", "-o", folder, "--no-cache")
    refused(res, str(folder / "scores.jsonl"), "No space left on device")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["rows.csv"]


def test_data_import_on_a_full_disk_leaves_no_new_folder(rows: Path, tmp_path: Path, full_disk: None) -> None:
    res = invoke("data", "import", "--path", rows, *COLS, "-o", tmp_path / "rec")
    refused(res, "dialogues.jsonl", "No space left on device")
    assert not (tmp_path / "rec").exists()


def test_score_refuses_to_write_its_scores_over_its_cache(rows: Path, tmp_path: Path) -> None:
    cache = tmp_path / "c.sqlite"
    first = invoke("score", "--path", rows, *COLS, "-m", "length", "-o", tmp_path / "s.jsonl", "--cache", cache)
    assert first.exit_code == 0, first.output
    res = invoke("score", "--path", rows, *COLS, "-m", "length", "-o", cache, "--cache", cache)
    refused(res, str(cache), "is the file given to --cache")
    with sqlite3.connect(cache) as db:  # still the cache, with its 3 items (the connection may checkpoint the WAL)
        assert db.execute("SELECT COUNT(*) FROM scores").fetchone()[0] == 3


@pytest.mark.parametrize(("command", "out", "cache"), [
    (["score", "-m", "length"], "c.sqlite", "c.sqlite"),
    (["benchmark", "-m", "length", "--boot", "0"], "b", "b/scores.jsonl"),
    (["stress", "-m", "length", "--boot", "0", "--plot", "none"], "st", "st/stress.jsonl"),
    (["judge", "run", "--protocol", "cpdscore-simple"], "j.jsonl", "j.jsonl.summary.json"),
])  # fmt: skip
def test_an_output_that_is_the_cache_not_made_yet_is_refused(
    command: list[str], out: str, cache: str, tmp_path: Path
) -> None:
    """The cache did not exist, so it was no input to keep: the run made it, filled it, then wrote its outputs over
    it (the cache's items lost, and the next run refused the file as no score cache)."""
    res = invoke(*command, "-b", "usr-tc", "--limit", "1", "-o", tmp_path / out, "--cache", tmp_path / cache)
    refused(res, f'{tmp_path / cache}: field "--output": is the path given to --cache too')
    assert not (tmp_path / cache).exists() and not (tmp_path / out).exists()


@pytest.mark.parametrize(("command", "name", "what", "option"), [
    (["score", "-b", "usr-tc", "--limit", "1", "-m", "length", "-o"], "s.json", "Score records", "--output"),
    (["judge", "run", "--protocol", "cpdscore-simple", "--limit", "1", "-o"], "j.json", "Score records", "--output"),
])  # fmt: skip
def test_a_jsonl_output_named_as_another_format_is_refused(command: list[str], name: str, what: str, option: str,
                                                          tmp_path: Path) -> None:
    """score -o scores.json wrote JSON lines into scores.json, which a JSON reader then refused.

    (``-o scores.csv`` writes the table back: tests/commands/test_scored_table.py.)
    """
    out = tmp_path / name
    line = refused(invoke(*command, out), f'{out}: field "{option}": names a')
    assert line.endswith(f"but {what} are written as JSON lines: name it {out.with_suffix('.jsonl').name}")
    assert not out.exists()


@pytest.mark.parametrize(("command", "name", "plain"), [
    (["score", "-b", "usr-tc", "--limit", "1", "-m", "length", "-o"], "s.jsonl.gz", "s.jsonl"),
    (["score", "-b", "usr-tc", "--limit", "1", "-m", "length", "-o"], "s.csv.gz", "s.csv"),
    (["judge", "run", "--protocol", "cpdscore-simple", "--limit", "1", "-o"], "j.jsonl.gz", "j.jsonl"),
])  # fmt: skip
def test_a_gzipped_output_name_is_refused(command: list[str], name: str, plain: str, tmp_path: Path) -> None:
    """score -o s.jsonl.gz wrote plain JSON lines under the .gz name, which meta then refused ("Not a gzipped file");
    -o s.csv.gz wrote them too, where the table was asked for."""
    out = tmp_path / name
    line = refused(invoke(*command, out), f'{out}: field "--output": names a gzipped file')
    assert line.endswith(f"name it {plain} (and gzip it afterwards)")
    assert not out.exists()


@pytest.mark.parametrize(("command", "name"), [
    (["benchmark", "-b", "usr-tc", "--limit", "1", "-m", "length", "-o"], "x.jsonl"),
    (["data", "export", "-b", "usr-tc", "-o"], "usr-tc.csv"),
    (["stress", "-b", "usr-tc", "--limit", "1", "-m", "length", "-o"], "stress.md"),
])  # fmt: skip
def test_a_new_output_folder_named_as_a_file_is_refused(command: list[str], name: str, tmp_path: Path) -> None:
    """benchmark -o runs/x.jsonl made a folder named x.jsonl and put scores.jsonl, table.md, ... in it."""
    out = tmp_path / name
    line = refused(invoke(*command, out), f'{out}: field "--output": names a file ("{name}"), and this option takes')
    assert line.endswith("give a folder name")
    assert not out.exists()
    out.mkdir()  # a folder that already has such a name is the user's choice, and is used
    res = invoke(*command, out)
    assert res.exit_code == 0, res.output
    assert any(out.iterdir())


@pytest.mark.parametrize("name", ["runs/", "runs.jsonl/", "new/runs//"])
def test_a_file_output_given_as_a_folder_is_refused_and_no_file_appears(name: str, rows: Path, tmp_path: Path) -> None:
    """``score -o runs/`` wrote the scores to a file named ``runs`` (``Path`` drops the ``/``): a later ``-o runs/x``
    then found a file where the folder was to be."""
    out = f"{tmp_path}/{name}"
    refused(score(rows, out), f'{out.rstrip("/")}: field "--output": ends in "/", naming a folder, and this option '
            "writes a file")  # fmt: skip
    assert sorted(p.name for p in tmp_path.iterdir()) == ["rows.csv"]
    assert score(rows, f"{tmp_path}/runs.jsonl").exit_code == 0  # the same name without the "/" is written


@pytest.mark.parametrize("name", ["runs.jsonl", "new.jsonl"])
def test_a_file_output_ending_in_slash_dot_is_refused_and_no_file_is_written(
    name: str, rows: Path, tmp_path: Path
) -> None:
    """``-o "$DIR/."`` names the folder DIR (the system refuses to open runs.jsonl/. as a file: "Not a directory"), but
    Path drops the "/." as it drops a "/": score wrote a file named new.jsonl, or replaced runs.jsonl."""
    (tmp_path / "runs.jsonl").write_text("kept\n")
    refused(score(rows, f"{tmp_path}/{name}/."), f'{tmp_path / name}: field "--output": ends in "/.", naming a '
            "folder, and this option writes a file")  # fmt: skip
    assert sorted(p.name for p in tmp_path.iterdir()) == ["rows.csv", "runs.jsonl"]
    assert (tmp_path / "runs.jsonl").read_text() == "kept\n"


@pytest.mark.parametrize(("command", "name"), [("score", ".csv"), ("score", ".JSONL"), ("benchmark", ".csv")])
def test_an_output_named_by_a_suffix_alone_is_refused(command: str, name: str, rows: Path, tmp_path: Path) -> None:
    """-o "$NAME.csv" with NAME unset: score wrote JSON lines into a hidden file ".csv" (Python sees no suffix in
    such a name, so the format check passed it), and benchmark made a hidden folder ".csv"."""
    out = tmp_path / name
    refused(invoke(command, "--path", rows, *RATED, "-m", "length", "-o", out),
            f'{out}: field "--output": is a suffix with no name before it ("{name}" would be hidden)')  # fmt: skip
    assert not out.exists()


@pytest.mark.parametrize(("command", "below"), [("score", "s.jsonl"), ("benchmark", ""), ("benchmark", "run"),
                                                ("data import", "recs")])  # fmt: skip
def test_an_output_below_a_dangling_link_is_refused_before_the_run(
    command: str, below: str, rows: Path, tmp_path: Path
) -> None:
    """A folder named by a symbolic link to nothing (a moved runs/ disk): the checks passed it, every command did
    all its work, then failed "cannot be written: File exists" naming no option (data import: "[Errno 17]")."""
    link = tmp_path / "runs"
    link.symlink_to(tmp_path / "gone")
    out = link / below if below else link
    run = ["-m", "length", "--no-cache"] if command != "data import" else []
    res = invoke(*command.split(), "--path", rows, *RATED, *run, "-o", out)
    line = refused(res, f'{out}: field "--output": cannot be created: {link} is a symbolic link to '
                   f"{tmp_path / 'gone'}, which does not exist")  # fmt: skip
    assert "scored" not in res.output and "length" not in res.output.replace(line, "")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["rows.csv", "runs"]


@pytest.mark.parametrize(("command", "below"), [("score", ""), ("score", "s.jsonl"), ("benchmark", ""),
                                                ("benchmark", "run")])  # fmt: skip
def test_a_loop_of_links_as_the_output_is_refused_naming_the_loop(
    command: str, below: str, rows: Path, tmp_path: Path
) -> None:
    """`ln -s loop loop`: score -o loop renamed its file over the link after the work, and an output below the loop
    was "a symbolic link to loop, which does not exist" (os.stat says ELOOP: it is a loop, not a missing file)."""
    loop = tmp_path / "loop"
    loop.symlink_to("loop")
    out = loop / below if below else loop
    res = invoke(command, "--path", rows, *RATED, "-m", "length", "--no-cache", "-o", out)
    if command == "score" and not below:
        line = refused(res, f'{loop}: field "--output": is a loop of symbolic links, not a file; give the name of a '
                       "file to write")  # fmt: skip
    else:
        line = refused(res, f'{out}: field "--output": cannot be created: {loop} is a loop of symbolic links, which '
                       "leads to no folder")  # fmt: skip
    assert "length" not in res.output.replace(line, "")
    assert loop.is_symlink() and os.readlink(loop) == "loop" and sorted(p.name for p in tmp_path.iterdir()) == [
        "loop", "rows.csv"]


def test_a_loop_of_links_in_the_output_folder_is_refused(rows: Path, tmp_path: Path) -> None:
    """benchmark -o run with run/scores.jsonl a link to a link back to it: the loop was replaced by a file."""
    run = tmp_path / "run"
    run.mkdir()
    (run / "scores.jsonl").symlink_to("other")
    (run / "other").symlink_to("scores.jsonl")
    res = invoke("benchmark", "--path", rows, *RATED, "-m", "length", "--no-cache", "-o", run)
    refused(res, f'{run / "scores.jsonl"}: field "--output": is a loop of symbolic links, not a file')
    assert sorted(p.name for p in run.iterdir()) == ["other", "scores.jsonl"]
    assert (run / "scores.jsonl").is_symlink()


@pytest.mark.parametrize("command", ["score", "benchmark"])
def test_an_output_that_is_a_link_into_a_missing_folder_is_refused_before_the_run(
    command: str, rows: Path, tmp_path: Path
) -> None:
    """benchmark -o run with run/table.md a link to /nonexist/x made the folder /nonexist at the machine's root,
    wrote the table there and said "wrote run/... table.md"; score -o a link so did the same."""
    run = tmp_path / "run"
    run.mkdir()
    link = run / ("table.md" if command == "benchmark" else "s.jsonl")
    gone = tmp_path / "gone" / "x"
    link.symlink_to(gone)
    res = invoke(command, "--path", rows, *RATED, "-m", "length", "--no-cache", "-o", run if command == "benchmark"
                 else link)  # fmt: skip
    line = refused(res, f'{link}: field "--output": is a symbolic link to {gone}, whose folder does not exist; '
                   "give another name")  # fmt: skip
    assert "length" not in res.output.replace(line, "")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["rows.csv", "run"] and [p.name for p in run.iterdir()] == [
        link.name]


def test_a_table_output_whose_summary_name_is_too_long_is_refused_naming_the_option(
    rows: Path, tmp_path: Path
) -> None:
    """-o NAME.csv of 251 bytes (a valid name): NAME.csv.summary.json beside it is 264, and the error was the
    top-level "too long a name for the file system", naming no option."""
    out = tmp_path / ("b" * 247 + ".csv")
    refused(score(rows, out), 'field "--output": names a file of 264 bytes (...bbbbbbb.csv.summary.json); file '
            "systems take 255 at most: give a shorter name")  # fmt: skip
    assert sorted(p.name for p in tmp_path.iterdir()) == ["rows.csv"]
