"""``dialeval data list|show`` through the real typer app."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from dialeval.cli import app

runner = CliRunner()


def test_list() -> None:
    result = runner.invoke(app, ["data", "list"])
    assert result.exit_code == 0, result.output
    lines = {line.split("│")[1].strip(): line for line in result.output.splitlines() if line.count("│") >= 5}
    assert "usr-tc" in lines and "360" in lines["usr-tc"] and "yes" in lines["usr-tc"]
    assert "no" in lines["fed-turn"].split("│")[4]


def test_show_json() -> None:
    result = runner.invoke(app, ["data", "show", "-b", "usr-tc", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["items"] == 360 and data["systems"] == 6 and data["dialogues"] == 60
    assert data["dimensions"]["Overall"] == "1-5" and data["skipped"] == {}
    assert data["source"].startswith("shared data")


def test_list_json_and_show_name_files_sha256_and_citation(shared_data: Path) -> None:
    import hashlib

    result = runner.invoke(app, ["data", "list", "--json"])
    assert result.exit_code == 0, result.output
    entries = {e["name"]: e for e in json.loads(result.output)}
    usr = entries["usr-tc"]
    assert usr["items"] == 360 and usr["available"] and "Mehri" in usr["citation"]
    (f,) = [f for f in usr["files"] if f["path"].endswith("usr_topical_chat.json")]
    assert f["sha256"] == hashlib.sha256((shared_data / f["path"]).read_bytes()).hexdigest()  # checked independently
    shown = json.loads(runner.invoke(app, ["data", "show", "-b", "usr-tc", "--json"]).output)["catalog"]
    assert shown["files"] == usr["files"] and shown["license"] == usr["license"]
    table = runner.invoke(app, ["data", "show", "-b", "usr-tc"], terminal_width=200).output
    assert "cite" in table and f["sha256"][:16] in table


def test_show_table_with_skips() -> None:
    result = runner.invoke(app, ["data", "show", "-b", "dstc9"])
    assert result.exit_code == 0, result.output
    assert "2200" in result.output and '182  dstc9: "N/A" value (error recovery)' in result.output


def test_show_path_and_errors(shared_data: Path) -> None:
    sample = shared_data / "samples/grade_human_judgement.sample.json"
    result = runner.invoke(app, ["data", "show", "-b", "grade", "--path", str(sample), "--json"])
    assert result.exit_code == 0 and json.loads(result.output)["ratings"] == 50
    result = runner.invoke(app, ["data", "show", "-b", "usr_tc"])
    assert result.exit_code == 2 and 'did you mean "usr-tc"' in result.output
    result = runner.invoke(app, ["data", "show", "-b", "fed-turn"])
    assert result.exit_code == 2 and "fed/fed_data.json" in result.output


def test_lmstyle_worker_ids_never_printed(shared_data: Path) -> None:
    path = shared_data / "lmstyle/Batch_results_develop.csv"
    workers = {r["WorkerId"] for r in csv.DictReader(path.open(newline=""))}
    for args in (["data", "show", "-b", "lmstyle-mturk"], ["data", "show", "-b", "lmstyle-mturk", "--json"]):
        result = runner.invoke(app, args)
        assert result.exit_code == 0
        assert not any(w in result.output for w in workers)
    assert json.loads(result.output)["annotators"] == 4


def test_export_round_trips_through_the_generic_records(tmp_path: Path) -> None:
    from dialeval.data.catalog import load_benchmark
    from dialeval.jsonl import read_jsonl
    from dialeval.schema import Candidate, Dialogue, Rating

    result = runner.invoke(app, ["data", "export", "-b", "usr-tc", "--limit", "4", "-o", str(tmp_path)])
    assert result.exit_code == 0, result.output
    bench = load_benchmark("usr-tc").head(4)
    cands = read_jsonl(tmp_path / "candidates.jsonl", Candidate)
    assert [c.model_dump() for c in cands] == [c.model_dump() for c in bench.candidates]
    assert len(cands) == 4 * 6  # 4 contexts x 6 systems
    assert len(read_jsonl(tmp_path / "dialogues.jsonl", Dialogue)) == 4
    assert len(read_jsonl(tmp_path / "ratings.jsonl", Rating)) == 4 * 6 * 3 * 6  # x 3 annotators x 6 dimensions
    bad = runner.invoke(app, ["data", "export", "-b", "no-such", "-o", str(tmp_path / "x")])
    assert bad.exit_code == 2 and "no-such" in bad.output


def test_data_export_and_import_say_a_limit_above_the_contexts_once(tmp_path: Path) -> None:
    """--limit above the contexts of the data took them all silently; one line says so (not a refusal)."""
    from tests.commands.cli_runner import COLS, ROWS, invoke

    from dialeval.jsonl import read_jsonl
    from dialeval.schema import Candidate

    res = invoke("data", "export", "-b", "usr-tc", "--limit", "100000", "-o", tmp_path / "e")
    assert res.exit_code == 0, res.output
    # usr-tc's contexts counted from the candidates written (4 contexts x 6 systems above: one per context and turn)
    n = len({(c.dialogue_id, c.turn_index) for c in read_jsonl(tmp_path / "e" / "candidates.jsonl", Candidate)})
    assert res.output.count(f"--limit 100000 is above the {n} contexts of usr-tc; all {n} are used") == 1
    (tmp_path / "t.csv").write_text(ROWS, encoding="utf-8")  # three contexts
    res = invoke("data", "import", "--path", tmp_path / "t.csv", *COLS, "--limit", "7", "-o", tmp_path / "i")
    assert res.exit_code == 0, res.output
    assert res.output.count("--limit 7 is above the 3 contexts of t; all 3 are used") == 1
    res = invoke("data", "import", "--path", tmp_path / "t.csv", *COLS, "--limit", "2", "-o", tmp_path / "j")
    assert res.exit_code == 0 and "--limit" not in res.output, res.output


def test_data_export_prints_the_datas_warnings_as_the_other_commands_do(tmp_path: Path, shared_data: Path) -> None:
    """export said only its own --limit note: a file whose sha256 is not the catalog's went unsaid (data show, score
    and the rest say it), and the --limit note came from a second computation of its own."""
    from tests.commands.cli_runner import invoke

    given = tmp_path / "usr_topical_chat.json"  # the catalog's file name, its bytes changed: a space at the end
    given.write_bytes((shared_data / "usr/usr_topical_chat.json").read_bytes() + b" ")
    res = invoke("data", "export", "-b", "usr-tc", "--path", given, "--limit", "100000", "-o", tmp_path / "e")
    assert res.exit_code == 0, res.output
    assert res.output.count(f"{given}: sha256 differs from the catalog's (a different release?)") == 1, res.output
    assert res.output.count("--limit 100000 is above the 60 contexts of usr-tc; all 60 are used") == 1  # 60: its entry


def test_score_refuses_record_files_with_a_key_given_twice(tmp_path: Path) -> None:
    """One error line naming the file, the line and the field, exit 2, before anything is scored or written."""
    from tests.commands.cli_runner import invoke, refused

    from dialeval.jsonl import write_jsonl
    from dialeval.schema import Dialogue, Turn

    write_jsonl(tmp_path / "dialogues.jsonl", [Dialogue(id="d1", turns=[Turn(speaker="A", text="Hi there")])])
    (tmp_path / "ratings.jsonl").write_text("")
    (tmp_path / "candidates.jsonl").write_text(
        '{"id": "c1", "dialogue_id": "d1", "turn_index": 1, "system": "s", "text": "Hello!", "text": ""}\n'
    )
    out = tmp_path / "scores.jsonl"
    res = invoke("score", "--path", tmp_path, "-m", "length", "-o", out, "--no-cache")
    refused(res, f'{tmp_path / "candidates.jsonl"}:1: field "text": appears twice in one JSON object')
    assert not out.exists()


def test_a_limit_below_one_is_refused_by_every_command_before_it_writes(tmp_path: Path) -> None:
    """``data export`` and ``judge run`` took --limit 0 (or -3) and wrote empty outputs with exit 0;
    ``score`` and ``stress`` each had their own check. Now Benchmark.head refuses it for all."""
    commands = {
        "export": ["data", "export", "-b", "usr-tc", "--limit", "0", "-o", str(tmp_path / "export")],
        "judge": ["judge", "run", "-b", "usr-tc", "--protocol", "dialogadv", "--limit", "-3",
                  "--out", str(tmp_path / "judge")],
        "score": ["score", "-b", "usr-tc", "-m", "length", "--limit", "0", "-o", str(tmp_path / "score.jsonl")],
    }  # fmt: skip
    for name, args in commands.items():
        result = runner.invoke(app, args)
        assert result.exit_code == 2, (name, result.output)
        assert 'field "--limit": must be at least 1 (the first N contexts), got' in result.output, name
    assert list(tmp_path.iterdir()) == []


def test_a_file_given_as_a_benchmark_name_says_how_a_table_is_read() -> None:
    """`data show my.csv` (the README's own-data section points at `data show`) and `-b my.csv` said only
    'unknown benchmark "my.csv"; known: dstc9, ...'."""
    for args in (["data", "show", "-b", "my.csv"], ["benchmark", "-b", "my.csv", "-m", "length"]):
        result = runner.invoke(app, args, terminal_width=300)
        assert result.exit_code == 2
        assert result.output.strip().startswith('error: field "--benchmark": "my.csv" names a file, not a catalog '
                                                "benchmark: read your own table with --path FILE and --response-col "
                                                "(or --mapping)")  # fmt: skip
    import dialeval

    with pytest.raises(KeyError, match=r"give your own table to dialeval\.score as its data$"):  # UnknownNameError
        dialeval.load_benchmark("my.csv")


def test_a_folder_given_as_a_benchmark_name_says_how_records_are_read(tmp_path: Path) -> None:
    """`data show rec` on the folder `data import` had just written said 'unknown benchmark "rec"; did you mean
    "grade"?'. And data import without --mapping asked for --response-col *and* --rating-col, though it reads a
    table with responses only (0 ratings) as well."""
    table = tmp_path / "my.csv"
    table.write_text("context,response\nHi,Hello\n", encoding="utf-8")
    rec = tmp_path / "rec"
    result = runner.invoke(app, ["data", "import", "--path", str(table), "-o", str(rec)], terminal_width=300)
    assert result.exit_code == 2
    assert 'give --mapping m.yaml, or --response-col (and the other --*-col options)' in result.output
    result = runner.invoke(app, ["data", "import", "--path", str(table), "--response-col", "response", "-o", str(rec)])
    assert result.exit_code == 0 and "1 candidate" in result.output, result.output
    result = runner.invoke(app, ["data", "show", "-b", str(rec)], terminal_width=300)
    assert result.exit_code == 2
    assert result.output.strip().startswith(f'error: field "--benchmark": "{rec}" names a folder, not a catalog '
                                            "benchmark: read a folder of dialeval records "
                                            "(dialogues/candidates/ratings.jsonl) with --path DIR")  # fmt: skip
    import dialeval

    with pytest.raises(KeyError, match=r"give a folder of dialeval records to dialeval\.score as its data$"):
        dialeval.load_benchmark(str(rec))
    assert len(dialeval.score(str(rec), metrics=["length"])) == 1  # what the hint says works


def test_data_show_shows_your_own_table_or_records_as_the_commands_read_them(tmp_path: Path) -> None:
    """The README points at `data show` for what a command understood of your table, but `data show --path my.csv
    --response-col ...` said "Missing argument 'name'"."""
    table = tmp_path / "my.csv"
    table.write_text("context,response,system,rating\nHi,Hello,a,5\nHi,ok,b,2\nYo,Hey,a,4\n", encoding="utf-8")
    cols = ["--response-col", "response", "--context-col", "context", "--system-col", "system",
            "--rating-col", "rating=Overall", "--scale", "1-5"]  # fmt: skip
    result = runner.invoke(app, ["data", "show", "--path", str(table), *cols, "--json"])
    assert result.exit_code == 0, result.output
    got = json.loads(result.output)
    assert (got["name"], got["items"], got["contexts"], got["systems"], got["ratings"]) == ("my", 3, 2, 2, 3)
    assert got["dimensions"] == {"Overall": "1-5"} and "catalog" not in got
    rec = tmp_path / "rec"
    assert runner.invoke(app, ["data", "import", "--path", str(table), *cols, "-o", str(rec)]).exit_code == 0
    shown = runner.invoke(app, ["data", "show", "--path", str(rec)], terminal_width=200)
    assert shown.exit_code == 0 and "│ items               │ 3" in shown.output, shown.output
    cases = {
        ("data", "show"): 'field "--benchmark": give a catalog benchmark, -b NAME (dialeval data list), or your own',
        ("data", "show", "-b", "usr-tc", "--response-col", "response"): "usr-tc is a catalog benchmark; --mapping and",
        ("data", "show", "usr-tc", "-b", "usr-pc"): "give the catalog benchmark once: --benchmark or NAME, not both",
        ("data", "show", "--path", str(tmp_path / "notes.md")): "notes.md: not found",
        ("data", "show", "--path", str(tmp_path)): "not your own table (.csv, .tsv, .jsonl, .json) or a folder of",
    }
    for args, words in cases.items():
        result = runner.invoke(app, list(args), terminal_width=300)
        assert result.exit_code == 2 and words in result.output, (args, result.output)


def test_show_fits_the_terminal() -> None:
    """It printed 160 columns whatever the terminal: at 80 each line was wrapped by the terminal, mid-border."""
    result = runner.invoke(app, ["data", "show", "-b", "dstc9"], terminal_width=80, env={"COLUMNS": "80"})
    assert result.exit_code == 0, result.output
    assert max(map(len, result.output.splitlines())) <= 80
    assert '182  dstc9: "N/A" value (error recovery)' in result.output  # a skip line stays whole


def test_the_earlier_positional_forms_read_as_the_options(tmp_path: Path) -> None:
    """`data show NAME`, `data export NAME` and `data import FILE` came before -b and --path, which every other
    command takes (`data show -b usr-tc` was "No such option: -b"). Both forms give the same; both at once, or
    neither where one is needed, is one error."""
    assert runner.invoke(app, ["data", "show", "usr-tc", "--json"]).output == \
        runner.invoke(app, ["data", "show", "-b", "usr-tc", "--json"]).output
    for form in (["usr-tc"], ["-b", "usr-tc"]):
        out = tmp_path / "-".join(form)
        assert runner.invoke(app, ["data", "export", *form, "--limit", "1", "-o", str(out)]).exit_code == 0
    ratings = [(tmp_path / name / "ratings.jsonl").read_bytes() for name in ("usr-tc", "-b-usr-tc")]
    assert ratings[0] == ratings[1] and ratings[0]
    table = tmp_path / "t.csv"
    table.write_text("context,response\nHi,Hello\n")
    for form in ([str(table)], ["--path", str(table)]):
        res = runner.invoke(app, ["data", "import", *form, "--response-col", "response", "-o", str(tmp_path / "i")])
        assert res.exit_code == 0 and "wrote 1 dialogue, 1 candidate, 0 ratings" in res.output, res.output
    for args, words in [
        (["export", "usr-tc", "-b", "usr-pc", "-o", "x"], "give the catalog benchmark once: --benchmark or NAME"),
        (["export", "-o", "x"], 'field "--benchmark": give the catalog benchmark to write: -b NAME'),
        (["import", str(table), "--path", str(table), "--response-col", "r", "-o", "x"], "give your table once"),
        (["import", "--response-col", "r", "-o", "x"], 'field "--path": give your table: --path my.csv'),
    ]:
        res = runner.invoke(app, ["data", *args], terminal_width=300)
        assert res.exit_code == 2 and words in res.output, (args, res.output)


def test_show_prints_the_first_item_as_it_was_read(tmp_path: Path) -> None:
    """What a reader made of a table shows on one item: here a separator that splits nothing would show one turn."""
    p = tmp_path / "t.csv"
    p.write_text('context,response\n"Hi!\nHow are you doing today, after that long and tiring trip?",Fine.\n')
    result = runner.invoke(app, ["data", "show", "--path", str(p), "--response-col", "response", "--context-col",
                                 "context", "--json"])  # fmt: skip
    assert json.loads(result.output)["example"] == {
        "item_id": "t-0000:unknown", "earlier_turns": 0, "response": "Fine.",
        "turns": [["B", "Hi!"], ["A", "How are you doing today, after that long and tiring trip?"]]}  # fmt: skip
    shown = runner.invoke(app, ["data", "show", "--path", str(p), "--response-col", "response", "--context-col",
                                "context"], env={"COLUMNS": "100"})  # fmt: skip
    rows = [line.split("│")[2].strip() for line in shown.output.splitlines() if line.count("│") == 3]
    start = rows.index("item t-0000:unknown")
    cut = "A: How are you doing today, after that long and tiri…"  # each turn cut to 50 characters
    assert rows[start : start + 4] == ["item t-0000:unknown", "B: Hi!", cut, "response: Fine."]
