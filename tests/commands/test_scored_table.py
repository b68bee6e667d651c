"""``dialeval score -o scored.csv``: the table back, a column per output, and its run beside it.

Through the real CLI (typer's runner, in process). Expected values: ``length`` counted by hand (whitespace
tokens), the embedding scores compared with the Score records of a JSONL run of the same command and with
the Python API's frame, bit for bit.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Callable
from pathlib import Path

import pytest
from tests.commands.cli_runner import COLS, invoke, refused

import dialeval
from dialeval.data.catalog import load_benchmark
from dialeval.jsonl import read_jsonl
from dialeval.schema import Score

#: A table with a column of its own (``note``, with a comma and a line break) and a reference missing in one row.
TABLE = ('context,response,reference,note\nHi there,Hello!,Hello you,"first, and\nsecond"\n'
         "How are you?,Fine thanks,,\nYo,Hey you,Hey,x\n")  # fmt: skip


def read_table(path: Path, delimiter: str = ",") -> list[dict[str, str]]:
    with path.open(newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle, delimiter=delimiter))


@pytest.fixture
def table(tmp_path: Path) -> Path:
    path = tmp_path / "my.csv"
    path.write_text(TABLE, encoding="utf-8")
    return path


def test_the_table_comes_back_in_its_order_with_a_column_per_output(table: Path, tmp_path: Path) -> None:
    out = tmp_path / "scored.csv"
    res = invoke("score", "--path", table, *COLS, "--reference-col", "reference", "-m", "length,embedding", "-o", out,
                 "--no-cache")  # fmt: skip
    assert res.exit_code == 0, res.output
    assert f"wrote 3 rows for 3 items to {out} (signatures and request in {out}.summary.json)" in res.output
    rows = read_table(out)
    assert list(rows[0]) == ["context", "response", "reference", "note", "length", "sbert_ref", "sbert_context",
                             "sbert_knowledge"]  # fmt: skip
    given = read_table(table)
    assert [{k: r[k] for k in given[0]} for r in rows] == given  # every cell as read, in the file's order
    assert [r["length"] for r in rows] == ["1.0", "2.0", "2.0"]  # by hand: "Hello!", "Fine thanks", "Hey you"
    assert rows[1]["sbert_ref"] == "" and rows[0]["sbert_knowledge"] == ""  # no reference, no fact: an empty cell
    records = tmp_path / "scored.jsonl"
    assert invoke("score", "--path", table, *COLS, "--reference-col", "reference", "-m", "length,embedding", "-o",
                  records, "--no-cache").exit_code == 0  # fmt: skip
    scores = list(read_jsonl(records, Score))
    items = list(dict.fromkeys(s.item_id for s in scores))  # one item per row here, in the file's order
    for s in scores:
        cell = rows[items.index(s.item_id)][s.metric]
        assert (float(cell) if cell else None) == s.value  # the same float, bit for bit
    run = json.loads(Path(f"{out}.summary.json").read_text(encoding="utf-8"))
    assert run["signatures"] == {s.metric: s.signature for s in scores}
    assert run["request"]["metrics"] == ["length", "embedding"] and run["items"] == 3 and run["scores"] == 12
    assert run["metrics"]["embedding"]["null"] == {"sbert_ref": 1, "sbert_knowledge": 3}


def test_the_table_equals_the_python_apis_frame(table: Path, tmp_path: Path) -> None:
    out = tmp_path / "scored.csv"
    assert invoke("score", "--path", table, *COLS, "-m", "embedding", "-o", out, "--no-cache").exit_code == 0
    frame = dialeval.score(table, metrics=["embedding"], cache=False, progress=False)
    rows = read_table(out)
    assert [float(r["sbert_context"]) for r in rows] == frame["sbert_context"].tolist()
    assert json.loads(Path(f"{out}.summary.json").read_text())["signatures"]["sbert_context"] == \
        frame.attrs["signatures"]["sbert_context"]  # fmt: skip


def test_the_long_form_gives_each_annotators_row_its_items_scores(tmp_path: Path) -> None:
    path = tmp_path / "long.csv"
    path.write_text("context,response,annotator,rating\nHi,Hello,w1,4\nHi,Hello,w2,5\nHi,Yo there you,w1,2\n")
    out = tmp_path / "s.csv"
    res = invoke("score", "--path", path, *COLS, "--annotator-col", "annotator", "--rating-col", "rating", "-m",
                 "length", "-o", out, "--no-cache")  # fmt: skip
    assert "wrote 3 rows for 2 items" in res.output, res.output
    assert [(r["annotator"], r["length"]) for r in read_table(out)] == [("w1", "1.0"), ("w2", "1.0"), ("w1", "3.0")]


def test_a_jsonl_tables_lists_are_written_as_json_in_a_tsv(tmp_path: Path) -> None:
    path = tmp_path / "chats.jsonl"
    lines = [{"context": ["Hi", "Hey, how are you?"], "response": "Good, thanks!", "meta": {"m": "x"}},
             {"context": ["Yo"], "response": "Sup", "extra": 1}]  # fmt: skip
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    out = tmp_path / "s.tsv"
    assert invoke("score", "--path", path, *COLS, "-m", "length", "-o", out, "--no-cache").exit_code == 0
    rows = read_table(out, "\t")
    assert list(rows[0]) == ["context", "response", "meta", "extra", "length"]  # every key, in first-seen order
    assert [json.loads(r["context"]) for r in rows] == [line["context"] for line in lines]
    assert (rows[0]["meta"], rows[0]["extra"], rows[1]["meta"], rows[1]["extra"]) == ('{"m": "x"}', "", "", "1")


def test_a_column_with_an_empty_header_comes_back_named_as_pandas_names_it(tmp_path: Path) -> None:
    # its cells were dropped from the table written back, and two empty headers were not even noticed
    path = tmp_path / "notes.csv"
    path.write_text("context,,response,\nHi,a,hello,note one\nBye,b,see ya,note two\n")
    out = tmp_path / "s.csv"
    assert invoke("score", "--path", path, *COLS, "-m", "length", "-o", out, "--no-cache").exit_code == 0
    rows = read_table(out)
    assert list(rows[0]) == ["context", "Unnamed: 1", "response", "Unnamed: 3", "length"]  # pd.read_csv's names
    assert [(r["Unnamed: 1"], r["Unnamed: 3"]) for r in rows] == [("a", "note one"), ("b", "note two")]


def test_limit_keeps_the_rows_of_the_first_contexts(tmp_path: Path) -> None:
    path = tmp_path / "t.csv"
    path.write_text("context,response\nHi,Hello\nHi,Yo\nBye,Ciao\n")
    out = tmp_path / "s.csv"
    res = invoke("score", "--path", path, *COLS, "--limit", "1", "-m", "length", "-o", out, "--no-cache")
    assert res.exit_code == 0, res.output
    assert [r["response"] for r in read_table(out)] == ["Hello", "Yo"]


def test_a_catalog_benchmark_gives_a_row_per_item(tmp_path: Path) -> None:
    out = tmp_path / "u.csv"
    assert invoke("score", "-b", "usr-tc", "--limit", "1", "-m", "length", "-o", out, "--no-cache").exit_code == 0
    rows = read_table(out)
    bench = load_benchmark("usr-tc").head(1)
    first = bench.candidates[0]
    assert list(rows[0]) == ["item_id", "dialogue_id", "system", "context", "response", "length"]
    assert [r["item_id"] for r in rows] == [c.id for c in bench.candidates]
    turns = bench.dialogues[first.dialogue_id].context(first.turn_index)
    assert rows[0]["context"].split("\n") == [t.text for t in turns] and rows[0]["response"] == first.text


def test_a_column_named_like_an_output_is_refused_before_any_work(tmp_path: Path) -> None:
    """A rating column named "length" would be written twice, and which is which lost."""
    path = tmp_path / "t.csv"
    path.write_text("context,response,length\nHi,Hello,4\n")
    out, cache = tmp_path / "s.csv", tmp_path / "c.sqlite"
    res = invoke("score", "--path", path, *COLS, "-m", "length", "-o", out, "--cache", cache)
    refused(res, f'{path}: field "--output": has a column named like a metric output ("length")')
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.csv"]  # no output, no run, not even the cache


def test_rows_of_one_response_per_system_get_a_column_per_output_and_system(tmp_path: Path) -> None:
    """A row of several responses (a mapping's systems) was refused; each output now has a column per system."""
    path, mapping = tmp_path / "t.csv", tmp_path / "m.yaml"
    path.write_text("context,bot_a,bot_b\nHi,Hello,Yo there you\nBye,See you,Ciao\n")
    mapping.write_text('context: context\nsystems: [a, b]\nresponse: "bot_{system}"\n')
    out = tmp_path / "s.csv"
    res = invoke("score", "--path", path, "--mapping", mapping, "-m", "length", "-o", out, "--no-cache")
    assert "wrote 2 rows for 4 items" in res.output, res.output
    rows = read_table(out)
    assert list(rows[0]) == ["context", "bot_a", "bot_b", "length_a", "length_b"]
    assert [(r["length_a"], r["length_b"]) for r in rows] == [("1.0", "3.0"), ("2.0", "1.0")]  # tokens, by hand
    signatures = json.loads(Path(f"{out}.summary.json").read_text())["signatures"]
    assert set(signatures) == {"length_a", "length_b"} and signatures["length_a"].startswith("length|")
    path.write_text("context,bot_a,bot_b,length_b\nHi,Hello,Yo,4\n")  # a rating column named like a column written
    refused(invoke("score", "--path", path, "--mapping", mapping, "-m", "length", "-o", out, "--no-cache"),
            'has a column named like a metric output ("length_b")')  # fmt: skip


def test_a_metric_split_by_a_tag_gives_its_columns_every_parts_signature(tmp_path: Path) -> None:
    """style with target=tag:NAME runs one part per style; each column's signature in the summary was the last
    scored item's part alone (here target:negative for every row, the positive one's too)."""
    path, mapping = tmp_path / "t.csv", tmp_path / "m.yaml"
    path.write_text("context,response,task\nHi,What a lovely day,positive\nBye,This is awful,negative\n")
    mapping.write_text("context: context\nresponse: response\ntags: [task]\n")
    out = tmp_path / "s.csv"
    res = invoke("score", "--path", path, "--mapping", mapping, "-m", "style", "-p", "style.target=tag:task",
                 "-o", out, "--no-cache")  # fmt: skip
    assert res.exit_code == 0, res.output
    run = json.loads(Path(f"{out}.summary.json").read_text())
    whole = run["metrics"]["style"]["signature"]  # the run's: both parts', "; "-joined
    assert "target:positive" in whole and "target:negative" in whole
    assert run["signatures"] == {"style_match": whole, "style_strength": whole}  # as the Python API's attrs


def test_a_pseudonymised_annotator_is_written_as_its_pseudonym(tmp_path: Path) -> None:
    """With pseudonymise the records never hold the crowd workers' ids; the table written back held them."""
    path, mapping = tmp_path / "t.csv", tmp_path / "m.yaml"
    path.write_text("context,response,WorkerId,q\nHi,Hello,A3ILMM7F,4\nHi,Hello,A37QOIT2,5\nBye,Ciao,A3ILMM7F,2\n")
    mapping.write_text("context: context\nresponse: response\nannotator: WorkerId\npseudonymise: true\n"
                       "ratings: {q: Overall}\n")  # fmt: skip
    out = tmp_path / "s.csv"
    assert invoke("score", "--path", path, "--mapping", mapping, "-m", "length", "-o", out, "--no-cache").exit_code == 0
    assert [r["WorkerId"] for r in read_table(out)] == ["annotator-001", "annotator-002", "annotator-001"]
    assert "A3ILMM7F" not in out.read_text() + Path(f"{out}.summary.json").read_text()


def test_a_full_disk_at_the_summary_leaves_neither_file(table: Path, tmp_path: Path,
                                                        full_disk_at: Callable[[str], None]) -> None:  # fmt: skip
    """The table is written first; a failure at its summary must not leave a table without its signatures."""
    full_disk_at(".summary.json.")
    out = tmp_path / "s.csv"
    out.write_text("old\n")
    refused(invoke("score", "--path", table, *COLS, "-m", "length", "-o", out, "--no-cache"),
            f"{out}.summary.json: cannot be written: No space left on device")  # fmt: skip
    assert out.read_text() == "old\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["my.csv", "s.csv"]


def test_meta_given_the_table_says_to_write_score_records(table: Path, tmp_path: Path) -> None:
    """``meta scored.csv`` said 'not valid JSON (Expecting value at column 1)', after reading the ratings."""
    out = tmp_path / "scored.csv"
    assert invoke("score", "--path", table, *COLS, "-m", "length", "-o", out, "--no-cache").exit_code == 0
    line = refused(invoke("meta", out, "-r", table), f'{out}: field "SCORES": names a table (what score -o NAME.csv')
    assert line.endswith("write them with score -o NAME.jsonl")


def test_the_summary_and_json_carry_the_datas_warnings(tmp_path: Path) -> None:
    """A context holding "\\n" as text is warned of in the data summary on stderr, which --json does not print:
    neither --json nor the table's .summary.json said it."""
    path = tmp_path / "t.csv"
    path.write_text('context,response\n"Hi there\\nHow are you?",I am fine.\n')
    res = invoke("score", "--path", path, *COLS, "-m", "length", "-o", tmp_path / "s.csv", "--no-cache", "--json")
    assert res.exit_code == 0, res.output
    (warning,) = json.loads(res.stdout)["warnings"]
    assert warning.startswith('1 of 1 context holds "\\n" as text (a backslash and an n)')
    assert json.loads(Path(f"{tmp_path / 's.csv'}.summary.json").read_text())["warnings"] == [warning]
