"""Agreement on published annotations, checked against the krippendorff package on the raw files."""

from __future__ import annotations

import json
from pathlib import Path

import krippendorff
import numpy as np
import pandas as pd
import pytest

from dialeval.human.importers import import_agreement


def test_usr_topical_chat_overall_alpha(shared_data: Path) -> None:
    raw = json.loads((shared_data / "usr" / "usr_topical_chat.json").read_text())
    # Independent: the raw per-annotator lists as a 3 x 360 matrix (alpha does not depend on who is who).
    matrix = np.array([v for ctx in raw for r in ctx["responses"] for v in [r["Overall"]]], dtype=float).T
    rows = {r["level"]: r for r in import_agreement("usr-tc", dimension="Overall", n_boot=200)}
    for level in ("ordinal", "interval"):
        expected = krippendorff.alpha(reliability_data=matrix, level_of_measurement=level)
        assert rows[level]["alpha"] == pytest.approx(expected, abs=1e-4)
        low, high = rows[level]["ci95"]
        assert low < rows[level]["alpha"] < high
        assert rows[level]["items"] == 360
    assert rows["ordinal"]["alpha"] == pytest.approx(0.6647, abs=1e-4)  # printed by `dialeval study import-agreement`


def test_lmstyle_appropriateness_alpha(shared_data: Path) -> None:
    df = pd.read_csv(shared_data / "lmstyle" / "Batch_results_develop.csv")
    twice = df[df.groupby("HITId")["HITId"].transform("size") == 2].sort_values(["HITId", "AssignmentId"])
    cols = [c for c in df.columns if c.startswith("Answer.Appropriateness_")]
    first = twice.groupby("HITId").nth(0)[cols].to_numpy(dtype=float).ravel()
    second = twice.groupby("HITId").nth(1)[cols].to_numpy(dtype=float).ravel()
    matrix = np.vstack([first, second])
    assert matrix.shape == (2, 29 * 4)
    rows = {r["level"]: r for r in import_agreement("lmstyle-mturk", dimension="appropriateness", n_boot=200)}
    for level in ("ordinal", "interval"):
        expected = krippendorff.alpha(reliability_data=matrix, level_of_measurement=level)
        assert rows[level]["alpha"] == pytest.approx(expected, abs=1e-4)
        assert rows[level]["items"] == 116
        assert "29 of 397" in rows[level]["note"]


def test_the_command_prints_a_table_and_json_on_request(shared_data: Path) -> None:
    """It printed JSON lines only. The table holds the alpha of the test above (krippendorff's 0.665 on USR-TC
    Overall, ordinal) with its CI; --json gives the rows; --seed moves the CI, not the alpha."""
    from typer.testing import CliRunner

    from dialeval.cli import app

    args = ["study", "import-agreement", "-b", "usr-tc", "--dimension", "Overall", "--n-boot", "50"]
    table = CliRunner().invoke(app, args, terminal_width=100)
    assert table.exit_code == 0, table.output
    rows = [json.loads(line) for line in CliRunner().invoke(app, [*args, "--json"]).output.splitlines()]
    ordinal = next(r for r in rows if r["level"] == "ordinal")
    low, high = ordinal["ci95"]
    assert f"│ Overall   │ ordinal  │ 0.665 [{low:.3f}, {high:.3f}] │   360 │          5 │" in table.output
    assert "alpha reads" not in table.output  # every item and annotator read is read by alpha
    other = [json.loads(line) for line in CliRunner().invoke(app, [*args, "--json", "--seed", "1"]).output.splitlines()]
    assert [r["alpha"] for r in other] == [r["alpha"] for r in rows] and other != rows
    refused = CliRunner().invoke(app, [*args, "--seed", "-1"])
    assert refused.exit_code == 2 and 'field "--seed": must be >= 0, got -1' in refused.output


@pytest.mark.parametrize(("args", "message"), [
    # each was Python's repr: "unknown source 'usr_tc'; choose one of ['usr-tc', ...]", "has no dimension 'overall';
    # it has ['Understandable', ...]", naming no option and no close name
    (["usr_tc"], 'field "--benchmark": unknown benchmark with per-annotator ratings "usr_tc"; did you mean "usr-tc"?'),
    (["usr-tc", "--dimension", "overall"], 'field "--dimension": usr-tc has no dimension "overall" (did you mean'),
])  # fmt: skip
def test_a_name_not_known_gets_the_closest(shared_data: Path, args: list[str], message: str) -> None:
    from typer.testing import CliRunner

    from dialeval.cli import app

    res = CliRunner().invoke(app, ["study", "import-agreement", *args, "--n-boot", "10"], terminal_width=200)
    assert res.exit_code == 2 and message in res.output, res.output


def test_a_benchmark_name_with_spaces_around_it_is_read(shared_data: Path) -> None:
    """`-b " usr-tc"` was "unknown benchmark ... did you mean "usr-tc"?" where every other command's -b strips the
    name; it reads usr-tc, and the title names it without the spaces."""
    from typer.testing import CliRunner

    from dialeval.cli import app

    args = ["study", "import-agreement", "--dimension", "Overall", "--n-boot", "10", "--json"]
    spaced = CliRunner().invoke(app, [*args, "-b", " usr-tc "])
    assert spaced.exit_code == 0, spaced.output
    assert spaced.output == CliRunner().invoke(app, [*args, "-b", "usr-tc"]).output
    assert {json.loads(line)["source"] for line in spaced.output.splitlines()} == {"usr-tc"}


def _long_table(tmp_path: Path) -> tuple[Path, np.ndarray]:
    """A long-form CSV: 3 workers rate 10 responses on quality (worker w3 skips every third), fluency always 3;
    and the workers x items matrix of quality, built from the rows written (NaN where w3 skipped)."""
    rng = np.random.default_rng(0)
    matrix = np.full((3, 10), np.nan)
    lines = ["context,response,worker,q,f"]
    for i in range(10):
        base = int(rng.integers(1, 6))
        for a in range(3):
            if a == 2 and i % 3 == 0:
                continue
            matrix[a, i] = min(5, max(1, base + int(rng.integers(-1, 2))))
            lines.append(f"ctx {i},resp {i},w{a + 1},{int(matrix[a, i])},3")
    path = tmp_path / "long.csv"
    path.write_text("\n".join(lines) + "\n")
    return path, matrix


def test_own_ratings_alpha_matches_krippendorff_and_undefined_is_said(tmp_path: Path) -> None:
    """`study import-agreement` read only the four published sources: a study run elsewhere (a crowd CSV) had no
    way to its agreement. --path with the table options reads your own; the alpha is the krippendorff package's
    on the matrix built while writing the file. A dimension with one value throughout has no alpha: n/a, and why."""
    from typer.testing import CliRunner

    from dialeval.cli import app

    path, matrix = _long_table(tmp_path)
    args = ["study", "import-agreement", "--path", str(path), "--response-col", "response", "--context-col",
            "context", "--annotator-col", "worker", "--rating-col", "q=quality", "--rating-col", "f=fluency",
            "--n-boot", "100"]  # fmt: skip
    res = CliRunner().invoke(app, [*args, "--json"])
    assert res.exit_code == 0, res.output
    rows = {(r["dimension"], r["level"]): r for r in map(json.loads, res.output.splitlines())}
    for level in ("ordinal", "interval"):
        expected = krippendorff.alpha(reliability_data=matrix, level_of_measurement=level)
        assert rows[("quality", level)]["alpha"] == pytest.approx(expected, abs=1e-4)
        assert rows[("quality", level)]["items"] == 10 and rows[("quality", level)]["annotators"] == 3
        assert rows[("fluency", level)]["alpha"] is None and rows[("fluency", level)]["ci95"] is None
    undefined = "fluency: alpha is undefined when fewer than two distinct values occur"
    assert rows[("fluency", "ordinal")]["note"] == undefined
    table = CliRunner().invoke(app, args, terminal_width=120)
    assert table.exit_code == 0, table.output
    assert "Krippendorff's alpha of the ratings of long" in table.output
    cells = [[c.strip() for c in line.split("│")[1:-1]] for line in table.output.splitlines() if "fluency" in line]
    assert ["fluency", "ordinal", "n/a", "10", "3"] in cells
    assert f"note: {undefined}" in table.output


def test_own_ratings_of_one_annotator_and_a_source_with_a_table_are_one_error(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from dialeval.cli import app

    one = tmp_path / "one.csv"
    one.write_text("response,q\nhi,3\nyo,4\n")
    res = CliRunner().invoke(app, ["study", "import-agreement", "--path", str(one), "--response-col", "response",
                                   "--rating-col", "q=quality", "--json", "--n-boot", "10"])  # fmt: skip
    assert res.exit_code == 0, res.output
    rows = [json.loads(line) for line in res.output.splitlines()]
    said = "quality: no item is rated by 2 annotators or more; read: 2 items, 1 annotator"
    assert {r["note"] for r in rows} == {said}
    for args, message in [
        (["-b", "usr-tc", "--path", str(one), "--response-col", "response"], 'field "--benchmark": usr-tc is a'),
        ([], "give -b usr-tc, usr-pc, dstc9 or lmstyle-mturk, or --path with your own ratings"),
        (["usr-tc", "-b", "usr-pc"], 'field "--benchmark": give the published benchmark once: --benchmark or SOURCE'),
        (["--path", str(one), "--response-col", "response"], "one.csv has no ratings"),
    ]:
        res = CliRunner().invoke(app, ["study", "import-agreement", *args], terminal_width=200)
        assert res.exit_code == 2 and message in res.output and "Traceback" not in res.output, res.output


def test_the_alpha_is_kept_whole_and_the_table_rounds_it_once(tmp_path: Path) -> None:
    """alpha was stored rounded to 4 decimals and printed rounded again to 3: -0.0535117 became -0.0535, then
    "-0.053" on screen. The row now holds the krippendorff package's value and the table rounds once."""
    from tests.commands.cli_runner import invoke

    from dialeval.data.benchmark import Benchmark
    from dialeval.human.importers import agreement_rows
    from dialeval.schema import Rating

    # 3 annotators x 4 items, one missing: alpha -0.0535... is no 4-decimal number (checked below)
    values = [[1, 0, 1, 1], [0, 0, 1, None], [1, 1, 0, 1]]
    ratings = [Rating(item_id=f"i{j}", dimension="q", annotator=f"a{i}", value=float(v))
               for i, row in enumerate(values) for j, v in enumerate(row) if v is not None]  # fmt: skip
    matrix = np.array([[np.nan if v is None else v for v in row] for row in values], dtype=float)
    expected = krippendorff.alpha(reliability_data=matrix, level_of_measurement="interval")
    (row,) = agreement_rows(Benchmark("mine", {}, [], ratings), "mine", levels=("interval",), n_boot=20)
    assert row["alpha"] == pytest.approx(expected, abs=1e-12) and round(expected, 4) != expected
    table = tmp_path / "t.csv"
    table.write_text("item,ann,resp,q\n" + "".join(f"i{r.item_id[1:]},{r.annotator},x{r.item_id},{r.value}\n"
                                                     for r in ratings), encoding="utf-8")  # fmt: skip
    res = invoke("study", "import-agreement", "--path", table, "--response-col", "resp", "--annotator-col", "ann",
                 "--rating-col", "q", "--n-boot", "20")  # fmt: skip
    assert res.exit_code == 0, res.output
    assert f"{expected:.3f} [" in res.output
    assert "warning: the CIs are rough: 20 resamples only, too few for 95% (40 at least)" in res.output


@pytest.mark.parametrize("numeric", [False, True])
def test_a_study_export_is_imported_as_it_is(tmp_path: Path, numeric: bool) -> None:
    """`study import-agreement --path ratings.jsonl` on the file `study export` writes said "a table needs a
    mapping": the study's own ratings needed --response-col, --annotator-col and --rating-col for each criterion,
    and no column names the export's fields. The export is read as the Rating records it is: the same ratings, and
    the alpha is the krippendorff package's on the votes given below (None: "I don't know", missing)."""
    from tests.human.conftest import make_study
    from typer.testing import CliRunner

    from dialeval.cli import app
    from dialeval.human import store
    from dialeval.human.importers import exported_ratings
    from dialeval.jsonl import read_jsonl
    from dialeval.schema import Rating

    make_study(tmp_path / "s")
    votes = {"a01": ["positive", "positive", "negative", "positive"],
             "a02": ["positive", "negative", "negative", "dont_know"],
             "a03": ["negative", "positive", "negative", "positive"]}  # fmt: skip
    items = ["d0:m1", "d1:m1", "d2:m1", "d0:m2"]
    with store.connect(store.db_url(tmp_path / "s")).begin() as conn:
        for ann, values in votes.items():
            for item, value in zip(items, values, strict=True):
                store.upsert_answer(conn, {"annotator": ann, "item_id": item, "criterion": "Appropriateness",
                                           "value": value, "reasons": [], "seconds": 1.0,
                                           "free_text": "unsure" if value == "dont_know" else ""})  # fmt: skip
    out = tmp_path / "ratings.jsonl"
    res = CliRunner().invoke(app, ["study", "export", str(tmp_path / "s"), "-o", str(out), *["--numeric"] * numeric])
    assert res.exit_code == 0 and res.output.startswith("wrote 12 ratings"), res.output
    exported = read_jsonl(out, Rating)
    bench = exported_ratings(out)
    assert bench is not None and bench.ratings == exported
    assert {(r.annotator, r.item_id): r.dont_know for r in bench.ratings}[("a02", "d0:m2")]

    res = CliRunner().invoke(app, ["study", "import-agreement", "--path", str(out), "--json", "--n-boot", "20"])
    assert res.exit_code == 0, res.output
    rows = {r["level"]: r for r in map(json.loads, res.output.splitlines())}
    code = {"positive": 1.0, "negative": 0.0, "dont_know": np.nan}  # labels: sorted, negative 0 and positive 1
    matrix = [[code[v] for v in values] for values in votes.values()]
    levels = ("ordinal", "interval") if numeric else ("nominal",)  # labels: nominal only
    assert tuple(rows) == levels
    for level in levels:
        assert rows[level]["dimension"] == "Appropriateness"
        assert rows[level]["items"] == 4 and rows[level]["annotators"] == 3
        expected = krippendorff.alpha(reliability_data=matrix, level_of_measurement=level)
        assert rows[level]["alpha"] == pytest.approx(expected)
    # a JSONL table of your own is still read by its columns: no mapping is said as before
    (mine := tmp_path / "mine.jsonl").write_text('{"response": "hi", "q": 3}\n')
    assert exported_ratings(mine) is None
    res = CliRunner().invoke(app, ["study", "import-agreement", "--path", str(mine)], terminal_width=200)
    assert res.exit_code == 2 and "a table needs a mapping" in res.output, res.output


def test_label_ratings_get_nominal_alpha_only(tmp_path: Path) -> None:
    """Label ratings were scored at ordinal and interval level on their alphabetical codes (bad 0, good 1, ok 2),
    which is no scale's order once there are three labels. They now get nominal alpha only, and the output says why
    the other levels are absent. Expected: the krippendorff package's nominal alpha on the same matrix, coded by
    hand (any coding gives the same nominal alpha)."""
    from typer.testing import CliRunner

    from dialeval.cli import app
    from dialeval.data.benchmark import Benchmark
    from dialeval.human.importers import agreement_rows
    from dialeval.schema import Rating

    votes = [["bad", "ok", "good", "good", "ok"], ["ok", "ok", "good", "bad", "ok"],
             ["bad", "good", "good", None, "bad"]]  # fmt: skip
    ratings = [Rating(item_id=f"i{j}", dimension="q", annotator=f"a{i}", value=v)
               for i, row in enumerate(votes) for j, v in enumerate(row) if v is not None]  # fmt: skip
    code = {"bad": 0.0, "ok": 1.0, "good": 2.0, None: np.nan}
    matrix = np.array([[code[v] for v in row] for row in votes])
    expected = krippendorff.alpha(reliability_data=matrix, level_of_measurement="nominal")
    ordinal = krippendorff.alpha(reliability_data=matrix, level_of_measurement="ordinal")
    assert abs(expected - ordinal) > 0.01  # the levels do differ here, so a wrong level would show
    rows = agreement_rows(Benchmark("mine", {}, [], ratings), "mine", n_boot=20)
    assert [r["level"] for r in rows] == ["nominal"]
    assert rows[0]["alpha"] == pytest.approx(expected, abs=1e-12)
    assert "q: labels, not numbers: nominal alpha only" in rows[0]["note"]
    # numbers keep the levels asked for
    numbers = [r.model_copy(update={"value": code[str(r.value)]}) for r in ratings]
    assert [r["level"] for r in agreement_rows(Benchmark("m", {}, [], numbers), "m", n_boot=20)] == [
        "ordinal", "interval"]  # fmt: skip

    records = tmp_path / "ratings.jsonl"  # what `study export` writes: a table's words need numbers (--labels)
    records.write_text("".join(r.model_dump_json() + "\n" for r in ratings), encoding="utf-8")
    res = CliRunner().invoke(app, ["study", "import-agreement", "--path", str(records), "--n-boot", "20"],
                             terminal_width=300)  # fmt: skip
    assert res.exit_code == 0, res.output
    assert "nominal" in res.output and "ordinal" not in res.output.split("note:")[0], res.output
    assert f"{expected:.3f} [" in res.output
    assert "ordinal and interval would read the labels' alphabetical order as their scale" in res.output


def test_annotators_count_only_those_whose_ratings_agreement_reads() -> None:
    """An "I don't know" (value null) counted its annotator: a3 said it on z and a4 gave no rating, and the table
    read 4 annotators where alpha reads a1's and a2's ratings only. Alpha: krippendorff.alpha on [[3, 2, 5],
    [4, 2, 4]] (items x, y, z; w has no rating), 0.7727 at both levels."""
    from dialeval.data.benchmark import Benchmark
    from dialeval.human.importers import agreement_rows
    from dialeval.schema import Rating

    given = [("x", "a1", 3), ("x", "a2", 4), ("y", "a1", 2), ("y", "a2", 2), ("z", "a1", 5), ("z", "a2", 4),
             ("z", "a3", None), ("w", "a3", None), ("w", "a4", None)]  # fmt: skip
    ratings = [Rating(item_id=i, dimension="q", annotator=a, value=v, dont_know=v is None) for i, a, v in given]
    rows = agreement_rows(Benchmark("mine", {}, [], ratings), "mine", n_boot=20)
    expected = krippendorff.alpha(reliability_data=[[3, 2, 5], [4, 2, 4]], level_of_measurement="ordinal")
    assert [(r["alpha"], r["items"], r["annotators"]) for r in rows] == [(pytest.approx(expected), 3, 2)] * 2


def test_a_study_export_saved_with_a_bom_and_crlf_is_read_as_ratings(tmp_path: Path) -> None:
    """An export re-saved by an editor that writes a byte-order mark was "a table needs a mapping" (its first line
    was not read as JSON, so not as Rating records) where the rating reader drops the mark. Read as the same file
    without the mark; mixed line endings change nothing. Alpha: krippendorff.alpha on [[4, 4], [3, 2]] (a, b x i1,
    i2)."""
    from typer.testing import CliRunner

    from dialeval.cli import app
    from dialeval.human.importers import exported_ratings

    lines = [json.dumps({"item_id": i, "dimension": "q", "annotator": a, "value": v})
             for i, a, v in [("i1", "a", 4), ("i1", "b", 3), ("i2", "a", 4), ("i2", "b", 2)]]  # fmt: skip
    plain = tmp_path / "plain.jsonl"
    plain.write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")
    marked = tmp_path / "marked.jsonl"
    ends = ["\r\n", "\n", "\r\n", "\n"]
    marked.write_bytes(b"\xef\xbb\xbf" + "".join(map(str.__add__, lines, ends)).encode())
    got, want = exported_ratings(marked), exported_ratings(plain)
    assert got is not None and want is not None and got.ratings == want.ratings and len(got.ratings) == 4
    res = CliRunner().invoke(app, ["study", "import-agreement", "--path", str(marked), "--json", "--n-boot", "20"])
    assert res.exit_code == 0, res.output
    expected = krippendorff.alpha(reliability_data=[[4, 4], [3, 2]], level_of_measurement="ordinal")
    assert json.loads(res.output.splitlines()[0])["alpha"] == pytest.approx(expected)


def test_a_gzipped_study_export_is_read_as_ratings(tmp_path: Path) -> None:
    """`study export -o r.jsonl.gz` says "name it r.jsonl (and gzip it afterwards)"; the gzipped export was then
    "a table needs a mapping" in import-agreement, though every record reader unzips a .gz. It is read as the same
    file unzipped."""
    import gzip

    from dialeval.human.importers import exported_ratings

    text = "".join(json.dumps({"item_id": i, "dimension": "q", "annotator": a, "value": v}) + "\n"
                   for i, a, v in [("i1", "a", 4), ("i1", "b", 3), ("i2", "a", 4), ("i2", "b", 2)])  # fmt: skip
    (tmp_path / "r.jsonl").write_text(text, encoding="utf-8")
    (tmp_path / "r.jsonl.gz").write_bytes(gzip.compress(text.encode()))
    got, want = exported_ratings(tmp_path / "r.jsonl.gz"), exported_ratings(tmp_path / "r.jsonl")
    assert got is not None and want is not None and got.ratings == want.ratings and len(got.ratings) == 4


def test_one_annotator_is_read_and_counted_apart_from_the_pairs(tmp_path: Path) -> None:
    """One annotator's ratings printed "items 0, annotators 0": the columns count what alpha reads (items rated
    by 2+, their annotators), read as "my annotator was not read". The note says how many were read: 2 items and 1
    annotator in the file (counted by hand), none of them paired; alpha stays undefined."""
    from typer.testing import CliRunner

    from dialeval.cli import app

    path = tmp_path / "one.jsonl"
    path.write_text("".join(json.dumps({"item_id": i, "dimension": "q", "annotator": "a1", "value": v}) + "\n"
                            for i, v in [("i1", 4), ("i2", 3)]))  # fmt: skip
    args = ["study", "import-agreement", "--path", str(path), "--n-boot", "50"]
    res = CliRunner().invoke(app, args, terminal_width=120)
    assert res.exit_code == 0, res.output
    assert "│ q         │ ordinal  │            n/a │     0 │          0 │" in res.output
    assert "note: q: no item is rated by 2 annotators or more; read: 2 items, 1 annotator" in res.output
    rows = [json.loads(line) for line in CliRunner().invoke(app, [*args, "--json"]).output.splitlines()]
    assert [(r["alpha"], r["items"], r["items_read"], r["annotators"], r["annotators_read"]) for r in rows] == [
        (None, 0, 2, 0, 1)] * 2


def test_alpha_read_off_one_item_has_no_ci(tmp_path: Path) -> None:
    """Two annotators on one item (4 and 2): every resample is that item, so the CI was "0.000 [0.000, 0.000]", a
    certainty one item cannot give. Alpha is the krippendorff package's on [[4], [2]] (0.0), kept with no CI."""
    path = tmp_path / "one_item.jsonl"
    path.write_text("".join(json.dumps({"item_id": "i1", "dimension": "q", "annotator": a, "value": v}) + "\n"
                            for a, v in [("a1", 4), ("a2", 2)]))  # fmt: skip
    from dialeval.human.importers import agreement_rows, exported_ratings

    bench = exported_ratings(path)
    assert bench is not None
    rows = agreement_rows(bench, "one_item", n_boot=50)
    for r in rows:
        expected = krippendorff.alpha(reliability_data=[[4], [2]], level_of_measurement=r["level"])
        assert (r["alpha"], r["ci95"]) == (pytest.approx(expected), None)
        assert r["note"] == "q: no CI: one item only, which every resample draws"
