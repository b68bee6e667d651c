"""Your own ratings file from the CLI: ``--path my.csv`` with a mapping, and ``data import``.

Through the real CLI in a subprocess. Expected correlations come from scipy on the
numbers the test wrote; the LMStyle and USR checks compare with the catalog loaders.
"""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from scipy import stats

from dialeval.data.catalog import load_benchmark
from dialeval.data.lmstyle import load_lmstyle_mturk
from dialeval.jsonl import read_jsonl
from dialeval.schema import Rating

DIALEVAL = str(Path(sys.executable).parent / "dialeval")


def run(*args: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "COLUMNS": "200"}
    return subprocess.run([DIALEVAL, *map(str, args)], cwd=cwd, env=env, capture_output=True, text=True, timeout=300)


def ok(res: subprocess.CompletedProcess[str]) -> subprocess.CompletedProcess[str]:
    assert res.returncode == 0, (res.stdout, res.stderr)
    assert "Traceback" not in res.stderr
    return res


# Six contexts, two bots; the quality rating grows with the response's length except for one pair.
ROWS = [
    ("Hi! How are you?", "I am fine, thanks for asking. And you?", "mybot", 5),
    ("Hi! How are you?", "ok", "otherbot", 2),
    ("What is the capital of France?", "Paris, of course.", "mybot", 4),
    ("What is the capital of France?", "cats", "otherbot", 1),
    ("Any plans for the weekend?", "Hiking in the hills with my sister, if it does not rain.", "mybot", 5),
    ("Any plans for the weekend?", "no", "otherbot", 3),
    ("Do you like jazz?", "Yes, especially Coltrane.", "mybot", 3),
    ("Do you like jazz?", "I never listen to music at all, sorry.", "otherbot", 4),
]


def write_csv(path: Path) -> Path:
    with path.open("w", newline="") as handle:
        w = csv.writer(handle)
        w.writerow(["context", "response", "system", "quality"])
        w.writerows(ROWS)
    return path


COLS = ["--response-col", "response", "--context-col", "context", "--system-col", "system"]


def test_benchmark_on_your_own_csv_prints_the_table(tmp_path: Path) -> None:
    write_csv(tmp_path / "my.csv")
    args = ["--rating-col", "quality=Overall", "--scale", "1-5", "-m", "length", "--level", "turn"]
    res = ok(run("benchmark", "--path", "my.csv", *COLS, *args, "--method", "spearman", "--boot", "0", "-o", "out",
                 cwd=tmp_path))  # fmt: skip
    assert "length" in res.stdout and "Overall" in res.stdout
    # what was understood, as `data show` prints it
    assert "Overall (1-5)" in res.stderr and "items" in res.stderr and " 8 " in res.stderr
    rows = [json.loads(line) for line in (tmp_path / "out" / "table.jsonl").read_text().splitlines()]
    (row,) = [r for r in rows if r["metric"] == "length" and r["level"] == "turn"]
    words = [len(r[1].split()) for r in ROWS]
    expected = stats.spearmanr(words, [r[3] for r in ROWS]).statistic
    assert row["value"] == pytest.approx(expected, abs=1e-12)
    assert f"{expected:.3f}" in res.stdout


def test_one_rated_dimension_is_the_default(tmp_path: Path) -> None:
    write_csv(tmp_path / "my.csv")
    res = ok(run("benchmark", "--path", "my.csv", *COLS, "--rating-col", "quality", "-m", "length", "--level", "turn",
                 "--method", "spearman", "--boot", "0", "-o", "out", "--json", cwd=tmp_path))  # fmt: skip
    assert json.loads(res.stdout)["rows"][0]["dimension"] == "quality"
    (tmp_path / "two.csv").write_text("response,a,b\nx,1,2\ny,2,1\n")
    res = run("benchmark", "--path", "two.csv", "--response-col", "response", "--rating-col", "a", "--rating-col", "b",
              "-m", "length", "-o", "out", cwd=tmp_path)  # fmt: skip
    assert res.returncode == 2 and "Traceback" not in res.stderr
    assert 'none "Overall": choose one with -d: a, b' in " ".join(res.stderr.split())


def test_a_table_without_mapping_and_a_bad_mapping_file_are_clear_errors(tmp_path: Path) -> None:
    write_csv(tmp_path / "my.csv")
    res = run("score", "--path", "my.csv", "-m", "length", "-o", "s.jsonl", cwd=tmp_path)
    assert res.returncode == 2 and "my.csv: a table needs a mapping" in " ".join(res.stderr.split())
    (tmp_path / "my.json").write_text(json.dumps([{"context": "Hi", "response": "Hello"}]))  # read as USR's file
    res = run("score", "--path", "my.json", "-m", "length", "-o", "s.jsonl", cwd=tmp_path)
    assert res.returncode == 2 and "my.json: a table needs a mapping" in " ".join(res.stderr.split())
    (tmp_path / "m.yaml").write_text("response: response\nratings: {quality: Overall}\ncolumn_of_scores: quality\n")
    res = run("score", "--path", "my.csv", "--mapping", "m.yaml", "-m", "length", "-o", "s.jsonl", cwd=tmp_path)
    assert res.returncode == 2 and "Traceback" not in res.stderr
    assert 'm.yaml:3: field "column_of_scores": unknown field' in " ".join(res.stderr.split())
    (tmp_path / "m.yaml").write_text("response: response\nratings: {quality: Overall\n")
    res = run("score", "--path", "my.csv", "--mapping", "m.yaml", "-m", "length", "-o", "s.jsonl", cwd=tmp_path)
    assert res.returncode == 2 and "Traceback" not in res.stderr and "m.yaml:2: not valid YAML" in res.stderr


LMSTYLE_MAPPING = {
    "name": "lmstyle",
    "dialogue_id": "Input.HIT",
    "context": "Input.Speaker",
    "annotator": "WorkerId",
    "tags": ["Input.task"],
    "systems": ["llama7b", "llama13b", "vicuna7b", "vicuna13b"],
    "response": "Input.{system}",
    "ratings": {"Answer.Appropriateness_{system}": "appropriateness", "Answer.Style_{system}": "style"},
    "scale": "0-100",
    "pseudonymise": True,
    "keep_empty_responses": True,  # two vicuna13b answers are empty, and people rated them
}


def test_lmstyle_mturk_csv_through_a_mapping_file(tmp_path: Path, shared_data: Path) -> None:
    source = shared_data / "lmstyle" / "Batch_results_develop.csv"
    (tmp_path / "lm.yaml").write_text(yaml.safe_dump(LMSTYLE_MAPPING))
    ok(run("data", "import", "--path", source, "--mapping", "lm.yaml", "-o", "recs", cwd=tmp_path))
    mine = read_jsonl(tmp_path / "recs" / "ratings.jsonl", Rating)
    ref = load_lmstyle_mturk(source, include_rejected=True)  # the mapping keeps rejected assignments too

    def values(ratings: list[Rating], prefix: str) -> list[tuple[str, str, str, float]]:
        return sorted((r.item_id.removeprefix(prefix), r.dimension, r.annotator, float(r.value or 0)) for r in ratings)

    assert values(mine, "") == values(ref.ratings, "lmstyle-")
    res = ok(run("benchmark", "--path", source, "--mapping", "lm.yaml", "-d", "appropriateness", "-m", "length",
                 "--level", "turn", "--method", "spearman", "--boot", "0", "-o", "out", cwd=tmp_path))  # fmt: skip
    assert "length" in res.stdout and "1588" in res.stdout


def test_data_import_round_trips_data_export_for_usr_tc(tmp_path: Path) -> None:
    ok(run("data", "export", "-b", "usr-tc", "-o", "exported", cwd=tmp_path))
    bench = load_benchmark("usr-tc")
    ratings: dict[str, dict[str, dict[str, float]]] = {}
    for r in bench.ratings:
        ratings.setdefault(r.item_id, {}).setdefault(r.annotator, {})[r.dimension] = float(r.value or 0)
    sep = " ||| "
    with (tmp_path / "table.jsonl").open("w") as handle:
        for c in bench.candidates:
            d = bench.dialogues[c.dialogue_id]
            for annotator, given in ratings[c.id].items():
                row = {"item": c.id, "dialogue": d.id, "context": sep.join(t.text for t in d.turns),
                       "facts": d.knowledge, "domain": d.domain, "response": c.text, "system": c.system,
                       "refs": c.references, "annotator": annotator,
                       **{f"rating {k}": v for k, v in given.items()}}  # fmt: skip
                handle.write(json.dumps(row) + "\n")
    dims = bench.dimensions()
    mapping = {"name": "usr-tc", "item_id": "item", "dialogue_id": "dialogue", "context": "context",
               "turn_separator": sep, "knowledge": "facts", "domain": "domain", "response": "response",
               "system": "system", "references": ["refs"], "annotator": "annotator",
               "ratings": {f"rating {k}": k for k in dims}, "scales": dims}  # fmt: skip
    (tmp_path / "m.yaml").write_text(yaml.safe_dump(mapping))
    res = ok(run("data", "import", "--path", "table.jsonl", "--mapping", "m.yaml", "-o", "imported", cwd=tmp_path))
    assert "wrote 60 dialogues, 360 candidates, 6480 ratings" in res.stderr
    for name in ("dialogues.jsonl", "candidates.jsonl"):
        assert (tmp_path / "imported" / name).read_text() == (tmp_path / "exported" / name).read_text()
    mine = sorted((tmp_path / "imported" / "ratings.jsonl").read_text().splitlines())
    assert mine == sorted((tmp_path / "exported" / "ratings.jsonl").read_text().splitlines())
    # the imported folder is an input of every command (--path DIR)
    res = ok(run("score", "--path", "imported", "-m", "length", "-o", "s.jsonl", "--no-cache", "--json", cwd=tmp_path))
    assert json.loads(res.stdout)["scores"] == 360


def test_study_create_from_your_own_csv(tmp_path: Path) -> None:
    write_csv(tmp_path / "my.csv")
    res = ok(run("study", "create", "study", "--path", "my.csv", *COLS, "--annotators", "2", "--per-item", "1",
                 "--json", cwd=tmp_path))  # fmt: skip
    summary = json.loads(res.stdout.splitlines()[0])
    assert summary["items"] == 8 and summary["units"] == 4  # 8 responses to 4 contexts
    (tmp_path / "bad.csv").write_bytes(b"context,response,system\nhi,caf\xe9,bot\n")
    res = run("study", "create", "study2", "--path", "bad.csv", *COLS, cwd=tmp_path)
    assert res.returncode == 2 and "Traceback" not in res.stderr
    assert "bad.csv:2: not UTF-8 text: byte 0xe9 at column 7" in res.stderr
    assert not (tmp_path / "study2" / "study.db").exists()


def test_train_on_your_own_csv(tmp_path: Path) -> None:
    with (tmp_path / "mine.csv").open("w", newline="") as handle:
        w = csv.writer(handle)
        w.writerow(["context", "response", "system", "quality"])
        for i in range(20):  # 20 contexts x 2 systems; quality follows the response length
            for system, n in (("a", i % 12 + 1), ("b", 3)):
                w.writerow([f"context {i}", " ".join(["word"] * n), system, 1 + n // 3])
    args = ["--rating-col", "quality=Overall", "--scale", "1-5", "--train", "mine", "--folds", "2"]
    ok(run("train", "--path", "mine.csv", *COLS, *args, "--model", "tfidf-lr", "--n-boot", "20", "--no-save",
           "-o", "out", cwd=tmp_path))  # fmt: skip
    rows = [json.loads(line) for line in (tmp_path / "out" / "results.jsonl").read_text().splitlines()]
    folds = [r for r in rows if r["split"].startswith("fold")]
    assert [r["train"] for r in folds] == ["mine", "mine"]
    assert sorted(r["n_train_contexts"] for r in folds) == [10, 10]  # split by context: 10 of the 20 each
    assert sum(r["n"] for r in folds) == 40  # every response tested once


def test_score_then_meta_on_your_own_csv(tmp_path: Path) -> None:
    write_csv(tmp_path / "my.csv")
    ok(run("score", "--path", "my.csv", *COLS, "-m", "length", "-o", "s.jsonl", "--no-cache", cwd=tmp_path))
    res = ok(run("meta", "s.jsonl", "--path", "my.csv", *COLS, "--rating-col", "quality", "--level", "turn",
                 "--method", "spearman", "--boot", "0", "--json", cwd=tmp_path))  # fmt: skip
    (row,) = json.loads(res.stdout)["rows"]
    words = [len(r[1].split()) for r in ROWS]
    assert row["dimension"] == "quality"  # the only rated dimension is the default
    assert row["value"] == pytest.approx(stats.spearmanr(words, [r[3] for r in ROWS]).statistic, abs=1e-12)


def test_the_system_level_is_reported_by_default_only_where_the_data_names_systems(tmp_path: Path) -> None:
    """A table read without --system-col has one system, "unknown": the default levels gave three n/a system
    columns ("fewer than 2 systems") that nobody asked for. Two systems gave +1 or -1 whatever the metric, with a
    warning saying so: the default now starts at 3 (MIN_POINTS), as the warning does; --level system still asks."""
    write_csv(tmp_path / "my.csv")
    with (tmp_path / "three.csv").open("w", newline="") as handle:  # the last response by a third bot
        csv.writer(handle).writerows([["context", "response", "system", "quality"], *ROWS[:-1],
                                      (*ROWS[-1][:2], "thirdbot", ROWS[-1][3])])  # fmt: skip
    args = ["--rating-col", "quality", "-m", "length", "--method", "spearman", "--boot", "0", "--json"]
    levels = {}
    for name, table, cols in (("none", "my.csv", COLS[:4]), ("two", "my.csv", COLS), ("three", "three.csv", COLS)):
        res = ok(run("benchmark", "--path", table, *cols, *args, "-o", name, cwd=tmp_path))
        levels[name] = [r["level"] for r in json.loads(res.stdout)["rows"]]
    assert levels == {"none": ["turn"], "two": ["turn"], "three": ["turn", "system"]}
    res = ok(run("meta", "none/scores.jsonl", "--path", "my.csv", *COLS[:4], *args, cwd=tmp_path))
    assert [r["level"] for r in json.loads(res.stdout)["rows"]] == ["turn"]


def test_the_system_level_asked_of_data_that_names_no_system_is_refused(tmp_path: Path) -> None:
    """--level system on a table read without --system-col gave an undefined column ("fewer than 2 systems");
    benchmark (before any scoring) and meta now say the data names no system and how to name them, as
    correlate(level="system") does."""
    from tests.commands.cli_runner import invoke, refused

    table = write_csv(tmp_path / "my.csv")
    args = ["--rating-col", "quality", "-m", "length", "--boot", "0", "--no-cache"]
    said = 'field "--level": the system level needs the system of each response, and the data names none'
    res = invoke("benchmark", "--path", table, *COLS[:4], *args, "--level", "turn,system", "-o", tmp_path / "b")
    assert "--system-col COLUMN" in refused(res, said) and not (tmp_path / "b").exists()
    ok = invoke("benchmark", "--path", table, *COLS[:4], *args, "--level", "turn", "-o", tmp_path / "b")
    assert ok.exit_code == 0, ok.output
    res = invoke("meta", tmp_path / "b" / "scores.jsonl", "--path", table, *COLS[:4], "--rating-col", "quality",
                 "--level", "system")  # fmt: skip
    refused(res, said)
    named = invoke("benchmark", "--path", table, *COLS, *args, "--level", "system", "-o", tmp_path / "n")
    assert named.exit_code == 0, named.output  # two named systems: asked, it is given (with its warning)


def test_benchmark_grade_uses_its_only_dimension(tmp_path: Path, shared_data: Path) -> None:
    sample = shared_data / "samples" / "grade_human_judgement.sample.json"  # GRADE rates only "coherence"
    res = ok(run("benchmark", "-b", "grade", "--path", sample, "-m", "length", "--level", "turn", "--method",
                 "spearman", "--boot", "0", "--no-cache", "-o", "out", "--json", cwd=tmp_path))  # fmt: skip
    assert json.loads(res.stdout)["rows"][0]["dimension"] == "coherence"


def test_a_column_given_twice_is_refused(tmp_path: Path) -> None:
    """--rating-col refused a column given twice; --reference-col took it as a second reference."""
    from tests.commands.cli_runner import invoke, refused

    (tmp_path / "t.csv").write_text("response,ref,q\nyo there,yo here,3\nfine,good,4\n")
    base = ["score", "--path", tmp_path / "t.csv", "--response-col", "response", "-m", "bleu", "--no-cache"]
    for option, column in (("--reference-col", "ref"), ("--rating-col", "q")):
        res = invoke(*base, option, column, option, column, "-o", tmp_path / "s.jsonl")
        refused(res, f'field "{option}": column "{column}" is given twice')
    assert not (tmp_path / "s.jsonl").exists()


def test_two_rating_columns_of_one_dimension_are_refused_at_the_option(tmp_path: Path) -> None:
    """``--rating-col q1=Overall --rating-col q2=Overall`` (or ``q1=q2 --rating-col q2``) failed at the table's
    first row: 'annotator "annotator" rates item ... twice', naming an annotator column the table does not have."""
    from tests.commands.cli_runner import invoke, refused

    from dialeval.data.generic import ColumnMapping
    from dialeval.errors import InputError

    (tmp_path / "t.csv").write_text("response,q1,q2\nyo there,3,4\nfine,4,5\n")
    base = ["data", "show", "--path", tmp_path / "t.csv", "--response-col", "response"]
    for pair in (("q1=Overall", "q2=Overall"), ("q1=q2", "q2")):
        dim = pair[0].partition("=")[2]
        refused(invoke(*base, "--rating-col", pair[0], "--rating-col", pair[1]),
                f'field "--rating-col": columns "q1" and "q2" both give the dimension "{dim}": one column per')
    with pytest.raises(InputError, match=r'field "ratings\.q2": columns "q1" and "q2" both give the dimension "O"'):
        ColumnMapping(response="response", ratings={"q1": "O", "q2": "O"})


def test_an_option_nothing_reads_is_refused_not_dropped(tmp_path: Path) -> None:
    """Each was accepted and did nothing: --scale or --annotator-col without --rating-col, --turn-sep without
    --context-col, beside --mapping (the file's turn_separator was read) or beside -b."""
    from tests.commands.cli_runner import invoke, refused

    (tmp_path / "t.csv").write_text("response,worker\nyo there,w1\n")
    (tmp_path / "m.yaml").write_text("response: response\n")
    base = ["score", "-m", "length", "--no-cache", "-o", tmp_path / "s.jsonl"]
    own = ["--path", tmp_path / "t.csv", "--response-col", "response"]
    cases = {
        (*own, "--scale", "1-5"): 'field "--scale": is the scale of the ratings, and no --rating-col is given: add '
                                  "it, or leave --scale out",
        (*own, "--annotator-col", "worker"): 'field "--annotator-col": names the annotator of each rating, and no '
                                             "--rating-col is given",
        (*own, "--turn-sep", "|"): 'field "--turn-sep": splits the context (and knowledge) into turns, and no '
                                   "--context-col is given",
        ("--path", tmp_path / "t.csv", "--mapping", tmp_path / "m.yaml", "--turn-sep", "|"):
            'field "--mapping": give --mapping or the --*-col options (and --scale, --turn-sep, --labels), not both',
        ("--path", tmp_path / "t.csv", "--mapping", tmp_path / "m.yaml", "--labels", "Good=3"):
            'field "--mapping": give --mapping or the --*-col options (and --scale, --turn-sep, --labels), not both',
        ("-b", "usr-tc", "--labels", "Good=3"): "--mapping and the --*-col options read your own table",
        ("-b", "usr-tc", "--turn-sep", "|"): "--mapping and the --*-col options read your own table",
    }  # fmt: skip
    for args, message in cases.items():
        refused(invoke(*base, *args), message)
        assert not (tmp_path / "s.jsonl").exists()


def test_the_response_column_as_its_own_context_or_reference_is_refused(tmp_path: Path) -> None:
    """--reference-col response scored each response against itself (BLEU 1.0) and --context-col response gave
    each response itself as its context, with no word: a copy-paste slip that made every figure meaningless.
    The context column may be the response column only where it holds chat logs (their last message the reply):
    text there is refused at its first row."""
    from tests.commands.cli_runner import invoke, refused

    (tmp_path / "t.csv").write_text("response,ref\nyo there,yo here\n")
    base = ["score", "--path", tmp_path / "t.csv", "--response-col", "response", "-m", "bleu", "--no-cache"]
    res = invoke(*base, "--reference-col", "response", "-o", tmp_path / "s.jsonl")
    refused(res, 'field "--reference-col": column "response" is the response column: each response would be its own '
                 "reference")
    res = invoke(*base, "--context-col", "response", "-o", tmp_path / "s.jsonl")
    refused(res, f'{tmp_path / "t.csv"}:2: field "response": the context column is the response column, which reads a '
                 "chat log's messages (the last, the assistant's, the reply scored); this cell is a str, not "
                 "messages: give the response in a column of its own")
    assert not (tmp_path / "s.jsonl").exists()


def test_data_import_takes_the_first_n_contexts_and_limit_is_checked_first(tmp_path: Path) -> None:
    """data import had no --limit (data export and every scoring command have it); a --limit 0 was refused only
    after the table was read and its reading printed."""
    write_csv(tmp_path / "my.csv")
    ok(run("data", "import", "--path", "my.csv", *COLS, "--limit", "2", "-o", "rec", cwd=tmp_path))
    cands = [json.loads(line) for line in (tmp_path / "rec" / "candidates.jsonl").read_text().splitlines()]
    assert [c["text"] for c in cands] == [r[1] for r in ROWS[:4]]  # the first 2 contexts, 2 bots each
    for args in (["data", "import", "--path", "my.csv", *COLS, "-o", "rec2"],
                 ["score", "--path", "my.csv", *COLS, "-m", "length", "-o", "s.jsonl"]):  # fmt: skip
        res = run(*args, "--limit", "0", cwd=tmp_path)
        assert res.returncode == 2 and res.stderr.strip().endswith(
            'field "--limit": must be at least 1 (the first N contexts), got 0'
        )
        assert "items" not in res.stderr  # the table's reading (on stderr) was not shown
    assert not (tmp_path / "rec2").exists() and not (tmp_path / "s.jsonl").exists()


def test_score_counts_the_scores_without_a_value(tmp_path: Path) -> None:
    """A table without references or knowledge: sbert_ref and sbert_knowledge are null for all 8 rows. The summary
    said "embedding 24 scores" and no more; it now counts the nulls per output, on screen and in --json."""
    write_csv(tmp_path / "my.csv")
    res = ok(run("score", "--path", "my.csv", *COLS, "-m", "embedding,length", "-o", "s.jsonl", cwd=tmp_path))
    assert ("  without a value (null): sbert_ref 8 (no reference to compare with), sbert_knowledge 8 (no fact or "
            "persona line to compare with)") in res.stderr
    assert res.stderr.count("without a value") == 1  # length has a value for every row
    records = [json.loads(line) for line in (tmp_path / "s.jsonl").read_text().splitlines()]
    errors = {(r["metric"], r["extras"].get("error")) for r in records}
    # each null says what its item lacks (it said "metric could not score this item")
    assert errors == {("sbert_ref", "no reference to compare with"), ("sbert_context", None), ("length", None),
                      ("sbert_knowledge", "no fact or persona line to compare with")}
    res = ok(run("score", "--path", "my.csv", *COLS, "-m", "embedding,length", "-o", "s.jsonl", "--json",
                 cwd=tmp_path))  # fmt: skip
    metrics = json.loads(res.stdout)["metrics"]
    assert metrics["embedding"]["null"] == {"sbert_ref": 8, "sbert_knowledge": 8} and metrics["length"]["null"] == {}


def test_one_of_a_kind_is_counted_in_the_singular(tmp_path: Path) -> None:
    """It said "wrote 1 dialogues, 2 candidates, 0 ratings" and "wrote 1 scores for 1 items"."""
    (tmp_path / "t.csv").write_text("context,response\nHi,Hello\n")
    res = ok(run("data", "import", "--path", "t.csv", "--response-col", "response", "--context-col", "context",
                 "-o", "rec", cwd=tmp_path))  # fmt: skip
    assert "wrote 1 dialogue, 1 candidate, 0 ratings to rec" in res.stderr
    res = ok(run("score", "--path", "t.csv", "--response-col", "response", "-m", "length", "-o", "s.jsonl",
                 "--no-cache", cwd=tmp_path))  # fmt: skip
    assert "wrote 1 score for 1 item to s.jsonl" in res.stderr


def test_a_context_column_empty_in_every_row_is_refused_naming_the_option_or_key(tmp_path: Path) -> None:
    """--context-col (or a mapping file's context:) of a column empty in every row was read as "no context" for every
    row (the summary said "(no context)"): each response was scored with no context, silently."""
    from tests.commands.cli_runner import invoke, refused

    table, mapping, out = tmp_path / "t.csv", tmp_path / "m.yaml", tmp_path / "s.jsonl"
    table.write_text("ctx,r\n,Hello there\n,Yo\n")
    mapping.write_text("response: r\ncontext: ctx\n")
    base = ["score", "-m", "length", "--no-cache", "-o", out, "--path", table]
    refused(invoke(*base, "--response-col", "r", "--context-col", "ctx"),
            f'error: {table}: field "--context-col": --context-col "ctx" names a column with no context in any row: '
            "give the column of the contexts, or leave --context-col out to score without one")
    refused(invoke(*base, "--mapping", mapping),
            f'error: {table}: field "context": context: "ctx" of {mapping} names a column with no context in any row: '
            f"give the column of the contexts, or leave context out of {mapping} to score without one")
    assert not out.exists()
    table.write_text("ctx,r\n,Hello there\nHi,Yo\n")  # blank in some rows: those responses open their dialogue
    assert invoke(*base, "--response-col", "r", "--context-col", "ctx").exit_code == 0
    assert [json.loads(line)["value"] for line in out.read_text().splitlines()] == [2.0, 1.0]  # whitespace tokens
