"""Careless inputs get one line and exit 2, checked before any work, and nothing is written.

Through the real CLI (typer's runner, in process): an output path that is an existing
folder where a file is written (or a file where a folder is), an empty candidates file,
a CSV with only a header, a semicolon-separated CSV; and ``meta`` saying under its table
how many scores it left out and why.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.commands.cli_runner import invoke, refused

from dialeval.schema import Dialogue, Rating, Score, Turn


def write_csv(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


ROWS = "context,response,quality\nHi there,Hello!,4\nHow are you?,Fine thanks,5\n"
CACHE = ["--cache", "{tmp}/cache.sqlite"]
# (output kind the command writes, the command); {out} is the path, {tmp} the test's folder
COMMANDS = [
    ("file", ["score", "-b", "usr-tc", "--limit", "1", "-m", "length", "-o", "{out}", *CACHE]),
    ("folder", ["benchmark", "-b", "usr-tc", "--limit", "1", "-m", "length", "-o", "{out}", *CACHE]),
    ("folder", ["meta", "{tmp}/scores.jsonl", "-b", "usr-tc", "-o", "{out}"]),
    ("folder", ["stress", "--limit", "1", "--perturb", "negation", "-o", "{out}", *CACHE]),
    ("file", ["judge", "run", "--protocol", "lmstyle-appropriateness", "--limit", "1", "--out", "{out}", *CACHE]),
    ("file", ["report", "{tmp}", "-o", "{out}"]),
    ("folder", ["data", "import", "--path", "{tmp}/rows.csv", "--response-col", "response", "-o", "{out}"]),
    ("folder", ["data", "export", "-b", "usr-tc", "--limit", "1", "-o", "{out}"]),
    ("folder", ["train", "--train", "usr-tc", "--limit", "2", "-o", "{out}"]),
    ("folder", ["generate", "--n", "1", "-o", "{out}"]),
    ("folder", ["lmstyle", "--n", "1", "-o", "{out}"]),
]


@pytest.mark.parametrize(("kind", "command"), COMMANDS, ids=[" ".join(c[1][:2]) for c in COMMANDS])
def test_an_output_path_of_the_wrong_kind_is_refused_before_any_work(
    kind: str, command: list[str], tmp_path: Path
) -> None:
    write_csv(tmp_path / "rows.csv", ROWS)
    out = tmp_path / "taken"
    if kind == "file":
        out.mkdir()  # a folder where the command writes a file
        (out / "keep.txt").write_text("mine")
    else:
        out.write_text("mine")  # a file where the command writes a folder
    res = invoke(*(a.format(out=out, tmp=tmp_path) for a in command))
    refused(res, str(out), "existing folder" if kind == "file" else "existing file")
    assert not (tmp_path / "cache.sqlite").exists()  # refused before the scoring started
    assert (out / "keep.txt" if kind == "file" else out).read_text() == "mine"


#: A file each folder command writes in OUTPUT, for the test below (in the order of COMMANDS' folder commands).
FOLDER_FILES = ["run.json", "table.md", "stress.md", "ratings.jsonl", "candidates.jsonl", "results.md",
                "generation.json", "table.md"]  # fmt: skip
FOLDER_COMMANDS = [c for kind, c in COMMANDS if kind == "folder"]


@pytest.mark.parametrize(("command", "name"), list(zip(FOLDER_COMMANDS, FOLDER_FILES, strict=True)),
                         ids=[" ".join(c[:2]) for c in FOLDER_COMMANDS])  # fmt: skip
def test_a_folder_where_an_output_file_goes_is_refused_before_any_work(
    command: list[str], name: str, tmp_path: Path
) -> None:
    """A folder named like one of the files: stress, data import/export and meta wrote (and scored) first, then failed
    on it, leaving the other files in OUTPUT (data's all-or-nothing renamed those before it); a figure gave a
    traceback. Every command that writes files into -o now refuses it up front, and writes nothing."""
    write_csv(tmp_path / "rows.csv", ROWS)
    out = tmp_path / "out"
    (out / name).mkdir(parents=True)
    res = invoke(*(a.format(out=out, tmp=tmp_path) for a in command))
    refused(res, f'{out / name}: field "--output": is an existing folder')
    assert not (tmp_path / "cache.sqlite").exists()  # refused before the scoring started
    assert [p.name for p in out.iterdir()] == [name] and not any((out / name).iterdir())


def test_a_path_below_a_file_is_refused(tmp_path: Path) -> None:
    (tmp_path / "plain").write_text("x")
    out = tmp_path / "plain" / "scores.jsonl"
    refused(invoke("score", "-b", "usr-tc", "--limit", "1", "-m", "length", "-o", out), str(out), "is a file")


def test_an_empty_candidates_file_is_refused(tmp_path: Path) -> None:
    dialogue = Dialogue(id="d1", turns=[Turn(speaker="A", text="Hi there")])
    (tmp_path / "dialogues.jsonl").write_text(dialogue.model_dump_json() + "\n")
    (tmp_path / "candidates.jsonl").write_text("")
    out = tmp_path / "scores.jsonl"
    res = invoke("score", "--dialogues", tmp_path / "dialogues.jsonl", "--candidates", tmp_path / "candidates.jsonl",
                 "-m", "length", "-o", out, "--no-cache")  # fmt: skip
    refused(res, "candidates.jsonl", "no candidates")
    assert not out.exists()


@pytest.mark.parametrize(
    ("command", "out"),
    [(["score", "-m", "length", "-o"], "scores.jsonl"), (["stress", "-m", "length", "-o"], "stress"),
     (["judge", "run", "--protocol", "dialogadv", "--out"], "judged.jsonl")],
)  # fmt: skip
def test_record_files_beside_a_benchmark_or_alone_are_refused_not_left_unread(
    command: list[str], out: str, tmp_path: Path
) -> None:
    """score, stress and judge run read -b (or --path) and left --dialogues/--candidates unread, silently; given
    --dialogues alone, they read usr-tc. Neither file exists here: nothing was read to find that out."""
    records = ["--dialogues", tmp_path / "d.jsonl", "--candidates", tmp_path / "c.jsonl"]
    cases = {
        ("-b", "usr-tc", *records): 'field "--dialogues": give --dialogues/--candidates or -b, not both',
        ("--path", tmp_path / "t.csv", *records[2:]): 'field "--dialogues": give --dialogues/--candidates or --path',
        tuple(records[:2]): 'field "--dialogues": --dialogues needs --candidates (the responses, with their dialogue',
        tuple(records[2:]): 'field "--candidates": --candidates needs --dialogues',
    }
    for args, message in cases.items():
        refused(invoke(*command, tmp_path / out, "--no-cache", *args), message)
        assert not (tmp_path / out).exists()


@pytest.mark.parametrize("command", ["score", "import"])
def test_a_csv_with_only_a_header_is_refused(command: str, tmp_path: Path) -> None:
    csv_path = write_csv(tmp_path / "rows.csv", "context,response,quality\n")
    out = tmp_path / "out"
    if command == "score":
        res = invoke("score", "--path", csv_path, "--response-col", "response", "-m", "length", "-o", out,
                     "--no-cache")  # fmt: skip
    else:
        res = invoke("data", "import", "--path", csv_path, "--response-col", "response", "-o", out)
    refused(res, str(csv_path), "no rows")
    assert not out.exists()


def test_a_semicolon_csv_names_its_delimiter_and_delimiter_reads_it(tmp_path: Path) -> None:
    csv_path = write_csv(tmp_path / "rows.csv", ROWS.replace(",", ";"))
    out = tmp_path / "scores.jsonl"
    args = ["score", "--path", csv_path, "--response-col", "response", "--context-col", "context",
            "-m", "length", "-o", out, "--no-cache"]  # fmt: skip
    refused(invoke(*args), 'looks separated by ";"', 'pass --delimiter ";"', 'field "context"')
    assert not out.exists()
    res = invoke(*args, "--delimiter", ";")
    assert res.exit_code == 0, res.output
    assert [json.loads(x)["value"] for x in out.read_text().splitlines()] == [1.0, 2.0]


def test_meta_says_under_the_table_how_many_scores_it_left_out_and_why(tmp_path: Path) -> None:
    items = [f"i{n}" for n in range(6)]
    ratings = [Rating(item_id=i, dimension="Overall", annotator="a", value=n % 4) for n, i in enumerate(items)]
    scores = [Score(item_id=i, metric="m", value=float(n % 3)) for n, i in enumerate(items)]
    scores += [Score(item_id=f"gone{n}", metric="m", value=1.0) for n in range(3)]  # ids nobody rated
    scores[4] = scores[4].model_copy(update={"value": None, "extras": {"error": "request failed: HTTP 500"}})
    scores[5] = scores[5].model_copy(update={"value": None, "extras": {"error": "request failed: HTTP 500"}})
    (tmp_path / "scores.jsonl").write_text("".join(s.model_dump_json() + "\n" for s in scores))
    (tmp_path / "ratings.jsonl").write_text("".join(r.model_dump_json() + "\n" for r in ratings))
    res = invoke("meta", tmp_path / "scores.jsonl", "-r", tmp_path / "ratings.jsonl", "--boot", "0", "-l", "turn")
    assert res.exit_code == 0, res.output
    note = 'left out 5 of 9 scores: 2 null (2 x request failed: HTTP 500); 3 of items not rated on "Overall"'
    assert note in res.output
    assert res.output.index(note) > res.output.index("Correlation with human Overall")


def test_names_with_colons_print_as_written_not_as_emoji(tmp_path: Path) -> None:
    """rich read ":b:" in a name as an emoji code: a column "a:b:c" was named "a🅱c" in the error, and a system
    "llama3:b:8" printed as "llama3🅱8" in data show's table (every console now has emoji off)."""
    rows = write_csv(tmp_path / "s.csv", "context,response,system,rating\nHi there,Hello!,llama3:b:8,4\n")
    refused(invoke("score", "--path", rows, "--response-col", "a:b:c", "-o", tmp_path / "o.jsonl"),
            'field "a:b:c": missing column in the header')  # fmt: skip
    shown = invoke("data", "show", "--path", rows, "--response-col", "response", "--system-col", "system")
    assert shown.exit_code == 0 and "item s-0000:llama3:b:8" in shown.output, shown.output
