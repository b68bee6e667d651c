"""The report's content in HTML, Markdown and LaTeX, and its errors."""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from tests.commands.cli_runner import invoke as run_cli
from tests.commands.cli_runner import refused
from tests.report.conftest import HOSTILE, invoke
from typer.testing import CliRunner

from dialeval.cli import app
from dialeval.errors import InputError
from dialeval.jsonl import write_jsonl
from dialeval.report.load import load_results
from dialeval.runinfo import BenchmarkRun, LmstyleRun, RankingRun, StressRun, TrainRun
from dialeval.schema import Rating, Score


def test_html_is_self_contained_and_shows_every_part(results: dict[str, Path], tmp_path: Path) -> None:
    out = tmp_path / "report.html"
    invoke(["report", str(results["bench"]), str(results["lmstyle"]), "--study", str(results["study"]), "-o", str(out)])
    page = out.read_text()
    assert not re.search(r"(src|href)=['\"]?(https?:)?//", page)  # nothing to fetch
    assert page.count("src='data:image/png;base64,") == 6  # corr, scatter, distributions x2, heat map, agreement
    assert "LMStyle Table 4: formality tasks per dataset" in page and "Vicuna-13B" in page
    assert "correlation of each metric with human Overall" in page and "[95% CI]" in page
    run = json.loads((results["bench"] / "run.json").read_text())
    assert run["command"] in page.replace("&#x27;", "'")
    assert run["metrics"]["sacrebleu"]["signature"].replace("|", "|") in page
    assert "generate|temperature:0.7|max_tokens:10" in page
    assert "Krippendorff alpha" in page and "Stress test" in page
    assert HOSTILE not in page and "&lt;script&gt;" in page


def test_markdown_and_latex_carry_the_tables(results: dict[str, Path], tmp_path: Path) -> None:
    md, tex = tmp_path / "r.md", tmp_path / "r.tex"
    invoke(["report", str(results["lmstyle"]), str(results["bench"]), "-o", str(md), "--format", "md"])
    invoke(["report", str(results["lmstyle"]), "-o", str(tex), "--format", "tex"])
    text = md.read_text()
    assert "| Dataset | Model | source | Formal ACC% | Formal BLEU |" in text
    assert "| metric | turn pearson [95% CI] |" in text and "*Figure (in the HTML report):" in text
    latex = tex.read_text()
    assert "\\begin{tabular}" in latex and "Formal ACC\\%" in latex and "\\toprule" in latex
    assert latex.count("\\begin{table}") == latex.count("\\end{table}") >= 4


def test_errors_name_the_file_line_and_field(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no results here"):
        load_results(tmp_path)
    (tmp_path / "stress.jsonl").write_text('{"metric": "m", "value": 1}\n')
    with pytest.raises(InputError, match=r'stress\.jsonl:1: field "perturbation"'):
        load_results(tmp_path)
    (tmp_path / "stress.jsonl").write_text("{oops\n")
    with pytest.raises(InputError, match=r"stress\.jsonl:1: not valid JSON"):
        load_results(tmp_path)
    res = CliRunner().invoke(app, ["report", str(tmp_path / "missing"), "-o", str(tmp_path / "r.html")])
    assert res.exit_code == 2 and "missing: not found: give a results folder (the --output of" in res.output
    (tmp_path / "scores.csv").write_text("a\n")  # a file given for a folder said "not a results folder" too
    res = CliRunner().invoke(app, ["report", str(tmp_path / "scores.csv")])
    assert res.exit_code == 2 and "scores.csv: a file: give a results folder" in res.output
    res = CliRunner().invoke(app, ["report", str(tmp_path), "--format", "pdf"])
    assert res.exit_code == 2 and 'unknown format "pdf"' in res.output


@pytest.mark.parametrize(("change", "said"), [({"metric": ["bleu"]}, 'field "metric": Input should be a valid string'),
                                              ({"value": {}}, 'field "value": Input should be a valid number'),
                                              ({"value": "\u0000"}, 'field "value": Input should be a valid number'),
                                              ({"n_items": None}, 'field "n_items": Input should be a valid integer')])
def test_a_correlation_row_of_the_wrong_type_names_its_line_and_field(
    results: dict[str, Path], tmp_path: Path, change: dict[str, object], said: str
) -> None:
    """Each was a traceback while the report was drawn (a TypeError, a ValueError, an AttributeError)."""
    folder = tmp_path / "bench"
    folder.mkdir()
    rows = (results["bench"] / "table.jsonl").read_text(encoding="utf-8").splitlines()
    (folder / "table.jsonl").write_text("\n".join([rows[0], json.dumps({**json.loads(rows[1]), **change})]) + "\n")
    refused(run_cli("report", folder, "-o", tmp_path / "r.html"), f"table.jsonl:2: {said}")
    assert not (tmp_path / "r.html").exists()


@pytest.mark.parametrize(("name", "row", "said"), [
    ("stress.jsonl", {"metric": "bleu", "perturbation": "negation", "value": "high"},
     'field "value": Input should be a valid number'),  # a ValueError traceback from the heat map
    ("stress.jsonl", {"metric": ["bleu"], "perturbation": "negation", "value": 0.5},
     'field "metric": Input should be a valid string'),  # the table's row was named "['bleu']"
    ("ranking.jsonl", {"metric": "bleu", "negatives": "random", "fraction": 0.5, "ci_low": "a", "ci_high": 0.9},
     'field "ci_low": Input should be a valid number'),  # printed as "0.500 [a, 0.900]"
    ("lmstyle_tables.jsonl", {"table": "table2", "model": "m", "source": "ours", "column": "ACC", "value": "x"},
     'field "value": Input should be a valid number'),  # printed as the cell's figure
    ("results.jsonl", {"model": "m", "split": "test=b", "spearman": "x"},
     'field "spearman": Input should be a valid number'),  # a ValueError traceback from the table
    ("results.jsonl", {"model": "m", "split": "test=b", "n": 3, "one_label": 7},
     'field "one_label": Input should be less than or equal to 2'),  # an IndexError traceback from its note
    # a share of pairs (0 to 1) out of its range was printed and shaded as one
    ("stress.jsonl", {"metric": "bleu", "perturbation": "negation", "value": 1.5},
     'field "value": Input should be less than or equal to 1'),
    ("stress.jsonl", {"metric": "bleu", "perturbation": "negation", "value": -0.5},
     'field "value": Input should be greater than or equal to 0'),
    ("ranking.jsonl", {"metric": "bleu", "negatives": "random", "fraction": 0.5, "ci_low": 0.2, "ci_high": 1.2},
     'field "ci_high": Input should be less than or equal to 1'),
])  # fmt: skip
def test_a_result_row_of_the_wrong_type_names_its_line_and_field(
    tmp_path: Path, name: str, row: dict[str, object], said: str
) -> None:
    """A word where a figure goes, or a list where a name goes, in a results file other than table.jsonl."""
    folder = tmp_path / "run"
    folder.mkdir()
    (folder / name).write_text(json.dumps(row) + "\n")
    refused(run_cli("report", folder, "-o", tmp_path / "r.html"), f"{name}:1: {said}")
    assert not (tmp_path / "r.html").exists()


@pytest.mark.parametrize("name", ["stress.jsonl", "table.jsonl", "ranking.jsonl", "scores.jsonl"])
def test_an_empty_results_file_is_refused(results: dict[str, Path], tmp_path: Path, name: str) -> None:
    """An empty table.jsonl beside a benchmark's run.json (or an empty stress.jsonl) was reported as a folder of kind
    "scores" with no table, no figure and no word why."""
    folder = tmp_path / "cut"
    shutil.copytree(results["bench"], folder)
    (folder / name).write_text("")
    refused(run_cli("report", folder, "-o", tmp_path / "r.html"), f"{name}: holds no rows: nothing to report")
    assert not (tmp_path / "r.html").exists()


@pytest.mark.parametrize(("kind", "lacks"), [("bench", ["table.jsonl"]), ("bench", ["scores.jsonl", "table.md"]),
                                            ("lmstyle", ["summary.jsonl"]), ("stress", ["stress.md"])])
def test_a_run_folder_lacking_a_file_its_command_writes_is_refused(
    results: dict[str, Path], tmp_path: Path, kind: str, lacks: list[str]
) -> None:
    """A benchmark folder without its table.jsonl was reported as a folder of kind "scores" (distributions, no table),
    one without its scores.jsonl or table.md as a benchmark missing its scatter plots, with no word of the lost file;
    each folder whose run.json is of a command is now refused, naming the folder and each file that command writes
    (runinfo's FILES) that is not there."""
    folder = tmp_path / kind
    if kind == "stress":  # a stress run writes stress.jsonl, stress.md and run.json
        folder.mkdir()
        (folder / "run.json").write_text(json.dumps(StressRun(benchmark="usr-tc").as_dict()))
        (folder / "stress.jsonl").write_text('{"metric": "bleu", "perturbation": "shuffle", "value": 0.5}\n')
    else:
        shutil.copytree(results[kind], folder)
        for name in lacks:
            (folder / name).unlink()
    refused(run_cli("report", folder, "-o", tmp_path / "r.html"),
            f"{folder}: lacks {', '.join(lacks)}, which dialeval {kind.replace('bench', 'benchmark')} writes beside "
            "its run.json")  # fmt: skip
    assert not (tmp_path / "r.html").exists()


@pytest.mark.parametrize(("run", "name", "row", "caption"), [
    (RankingRun(benchmark="dailydialog++"), "ranking.jsonl", {"metric": "bleu", "negatives": "random", "fraction": 0.6},
     "DailyDialog++: share of pairs where a good response outranks a negative of its context (ties 0.5; no CI; "
     "ranking.jsonl)"),
    (TrainRun(), "results.jsonl", {"model": "tfidf-lr", "split": "test=usr-tc", "n": 30, "spearman": 0.5,
                                       "spearman_ci": [None, None]},
     "dialeval train: each model on each split (no CI; results.jsonl)"),
])  # fmt: skip
def test_a_table_without_cis_says_so_in_its_caption(
    tmp_path: Path, run: RankingRun | TrainRun, name: str, row: dict[str, object], caption: str
) -> None:
    """`stress -b dailydialog++ --boot 0` and `train --n-boot 0`: the table's caption said "95% CI over contexts"
    above figures with none."""
    folder = tmp_path / "run"
    folder.mkdir()
    for file in run.FILES:
        (folder / file).write_text(json.dumps(run.as_dict()) if file == "run.json" else "")
    (folder / name).write_text(json.dumps(row) + "\n")
    invoke(["report", str(folder), "-o", str(tmp_path / "r.md")])
    assert f"**{caption}**" in (tmp_path / "r.md").read_text()


def test_two_lines_of_one_figure_are_refused(results: dict[str, Path], tmp_path: Path) -> None:
    """Two runs' stress.jsonl joined into one: the table showed the second line's 0.800, the heat map the mean of the
    two (0.50); two tables in one table.jsonl: the table showed the last, the chart both."""
    folder = tmp_path / "joined"
    folder.mkdir()
    lines = [{"metric": "bleu", "perturbation": "negation", "value": v} for v in (0.2, 0.8)]
    (folder / "stress.jsonl").write_text("".join(json.dumps(r) + "\n" for r in lines))
    refused(run_cli("report", folder, "-o", tmp_path / "r.html"),
            'stress.jsonl:2: field "perturbation": a second line of metric "bleu", perturbation "negation" (the first '
            "is line 1)")  # fmt: skip
    (folder / "stress.jsonl").unlink()
    table = (results["bench"] / "table.jsonl").read_text(encoding="utf-8")
    (folder / "table.jsonl").write_text(table + table)
    n = len(table.splitlines())
    refused(run_cli("report", folder, "-o", tmp_path / "r.html"), f"table.jsonl:{n + 1}: ", "(the first is line 1)")
    assert not (tmp_path / "r.html").exists()


def test_a_results_file_of_another_run_in_the_folder_is_named(results: dict[str, Path], tmp_path: Path) -> None:
    """The fixture's benchmark folder holds a stress.jsonl that the benchmark command (its run.json) did not write,
    as `stress -o` into a benchmark's folder leaves it; the report gave that command as the one that produced it."""
    out = tmp_path / "r.md"
    invoke(["report", str(results["bench"]), "-o", str(out)])
    text = out.read_text()
    assert ("stress.jsonl is not from run.json's command (a benchmark run, which does not write it): it is from "
            "another run that wrote into this folder.") in text
    assert "table.jsonl is not from" not in text


def test_a_table_row_whose_metric_scores_jsonl_lacks_is_named_and_left_out_of_the_charts(
    results: dict[str, Path], tmp_path: Path
) -> None:
    """table.jsonl and scores.jsonl from two runs (a metric renamed in one): the scatter plot looked the metric up
    in the scores and ended in pandas' KeyError traceback. The report now says so and draws the others."""
    import shutil

    folder = tmp_path / "bench"
    shutil.copytree(results["bench"], folder)
    rows = [json.loads(x) for x in (folder / "table.jsonl").read_text(encoding="utf-8").splitlines()]
    renamed = [{**r, "metric": HOSTILE if "chrf" in r["metric"] else r["metric"]} for r in rows]
    (folder / "table.jsonl").write_text("".join(json.dumps(r) + "\n" for r in renamed))
    res = run_cli("report", folder, "-o", tmp_path / "r.html")
    assert res.exit_code == 0, res.output
    page = (tmp_path / "r.html").read_text(encoding="utf-8")
    assert ("table.jsonl names metrics that scores.jsonl does not hold (&lt;script&gt;alert(1)&lt;/script&gt; &amp; | "
            "_ % $): are the two files from one run? The charts below leave them out.") in page
    assert "<script>alert" not in page


def test_a_table_row_outside_the_ranked_column_whose_metric_scores_jsonl_lacks_is_named(
    results: dict[str, Path], tmp_path: Path
) -> None:
    """A table.jsonl row of a metric that scores.jsonl lacks was named only if it was in the column the table is
    ranked by (turn spearman): one in another column (turn pearson) was shown in the table without a word."""
    folder = tmp_path / "bench"
    shutil.copytree(results["bench"], folder)
    rows = [json.loads(x) for x in (folder / "table.jsonl").read_text(encoding="utf-8").splitlines()]
    renamed = [{**r, "metric": "bogus" if (r["metric"], r["level"], r["method"]) == ("length", "turn", "pearson")
                else r["metric"]} for r in rows]  # fmt: skip
    (folder / "table.jsonl").write_text("".join(json.dumps(r) + "\n" for r in renamed))
    invoke(["report", str(folder), "-o", str(tmp_path / "r.md")])
    assert ("table.jsonl names metrics that scores.jsonl does not hold (bogus): are the two files from one run? "
            "The charts below leave them out.") in (tmp_path / "r.md").read_text(encoding="utf-8")


def test_an_empty_study_export_is_refused_not_reported_as_scores(results: dict[str, Path], tmp_path: Path) -> None:
    """A study exported before anyone answered (0 ratings) was read as a results file of kind "scores"."""
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    res = run_cli("report", results["bench"], "--study", empty, "-o", tmp_path / "r.html")
    refused(res, f"{empty}: no ratings in this study export")


def test_a_study_folder_or_a_scores_file_given_as_study_says_what_to_give(
    results: dict[str, Path], tmp_path: Path
) -> None:
    """A study's folder was "study export not found" (it is there), a scores file 'field "dimension": Field
    required', a pipe "study export not found"; each now says what it is and what --study reads."""
    folder = tmp_path / "study"
    folder.mkdir()
    (folder / "access.json").write_text("{}")
    scores = results["bench"] / "scores.jsonl"
    pipe = tmp_path / "ratings.jsonl"
    os.mkfifo(pipe)
    for given, said in ((folder, f'{folder}: field "--study": is a study folder: give the ratings JSONL that '
                                 f"dialeval study export writes (dialeval study export {folder} -o ratings.jsonl)"),
                        (tmp_path, f'{tmp_path}: field "--study": is a folder: give the ratings JSONL'),
                        (scores, f'{scores}:1: field "metric": unknown field; the line holds a Score record'),
                        # a pipe (it is there) and a file that is not there were both "study export not found"
                        (pipe, f'{pipe}: field "--study": not a regular file: give the ratings JSONL'),
                        (tmp_path / "no.jsonl", f'{tmp_path / "no.jsonl"}: field "--study": not found: give the')):
        refused(run_cli("report", results["bench"], "--study", given, "-o", tmp_path / "r.html"), said)
    assert not (tmp_path / "r.html").exists()
    assert not (tmp_path / "r.html").exists()


def test_a_study_export_is_reported_without_a_results_folder(results: dict[str, Path], tmp_path: Path) -> None:
    """`report --study ratings.jsonl` alone was typer's "Missing argument 'FOLDERS...'": a study needed a folder."""
    out = tmp_path / "study.md"
    invoke(["report", "--study", str(results["study"]), "-o", str(out)])
    assert "| dimension | level | Krippendorff alpha | 95% CI | items |" in out.read_text()
    refused(run_cli("report", "-o", out), 'field "FOLDERS": give a results folder, or a study export with --study')


def test_a_folder_or_study_given_twice_is_refused(results: dict[str, Path], tmp_path: Path) -> None:
    """A folder given twice (by any name) had its sections written twice; a study export too."""
    bench, out, link = results["bench"], tmp_path / "r.html", tmp_path / "link"
    link.symlink_to(bench)
    refused(run_cli("report", bench, link, "-o", out),
            f'{link}: field "FOLDERS": is given twice (as {bench}): folders 1 and 2')  # fmt: skip
    study = results["study"]
    refused(run_cli("report", bench, "--study", study, "--study", study, "-o", out),
            f'{study}: field "--study": is given twice: study exports 1 and 2')  # fmt: skip
    assert not out.exists()


def test_a_folder_and_its_copy_are_refused(results: dict[str, Path], tmp_path: Path) -> None:
    """A results folder and a copy of it (cp -r) were reported as two runs: the same sections twice, each giving the
    command that wrote the first. A folder whose results files are those of another given one is now refused."""
    copy, out = tmp_path / "copy ü", tmp_path / "r.html"
    shutil.copytree(results["bench"], copy)
    refused(run_cli("report", results["bench"], copy, "-o", out),
            f'{copy}: field "FOLDERS": holds the same results files as {results["bench"]} (folders 1 and 2): is one a '
            "copy of the other? Give it once")  # fmt: skip
    assert not out.exists()
    with (copy / "run.json").open("a") as f:  # another run's folder of the same files but one is reported
        f.write("\n")
    invoke(["report", str(results["bench"]), str(copy), "-o", str(out)])


def test_real_stress_and_ranking_folders_render(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`dialeval stress` outputs (USR-TC perturbations with a subset plot, DailyDialog++ ranking) in the report."""
    monkeypatch.setenv("DIALEVAL_CACHE", str(tmp_path / "cache"))
    stress, ranking = tmp_path / "stress", tmp_path / "ranking"
    invoke(["stress", "-b", "usr-tc", "--limit", "4", "-m", "length,sacrebleu", "--perturb", "negation,repetition",
            "--plot", "negation", "--boot", "20", "-o", str(stress)])  # fmt: skip
    invoke(["stress", "-b", "dailydialog++", "--limit", "6", "-m", "length", "--boot", "20", "-o", str(ranking)])
    assert load_results(stress).kind == "stress" and load_results(ranking).kind == "ranking"
    assert isinstance(load_results(stress).run, StressRun) and isinstance(load_results(ranking).run, RankingRun)
    out = tmp_path / "report.md"
    invoke(["report", str(stress), str(ranking), "-o", str(out), "--format", "md"])
    text = out.read_text()
    rows = [json.loads(x) for x in (stress / "stress.jsonl").read_text().splitlines()]
    length_neg = next(r for r in rows if (r["metric"], r["perturbation"]) == ("length", "negation"))
    assert "| metric | negation | repetition |" in text
    assert f"| length | {length_neg['value']:.3f} |" in text
    assert "stress_subsets_negation.png" in text  # the per-subset figure of the real run
    ranked = [json.loads(x) for x in (ranking / "ranking.jsonl").read_text().splitlines()]
    adv = next(r for r in ranked if r["negatives"] == "adversarial")
    assert "| metric | good > adversarial | good > random |" in text
    assert f"| length | {adv['fraction']:.3f} [{adv['ci_low']:.3f}, {adv['ci_high']:.3f}] |" in text


def test_a_benchmark_rated_per_dialogue_is_plotted_per_dialogue(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """DSTC9's scatter plot was empty ("n=0", "one point per item": its items have no rating of their own), and
    its title read "human human (overall)". The plot is spied on: the points are checked, then drawn as usual."""
    from dialeval.report import charts

    folder = tmp_path / "dstc9"
    invoke(["benchmark", "-b", "dstc9", "--limit", "300", "-m", "length,distinct", "--boot", "0", "-o", str(folder),
            "--no-cache"])  # fmt: skip
    drawn = []
    real = charts.scatter_chart
    monkeypatch.setattr(charts, "scatter_chart", lambda points, dim, per: drawn.append((points, per)) or
                        real(points, dim, per))  # fmt: skip
    out = tmp_path / "report.md"
    invoke(["report", str(folder), "-o", str(out)])
    text = out.read_text()
    assert "correlation of each metric with human (overall) (ranked by dialogue spearman)**" in text
    assert "against human (overall), one point per dialogue" in text
    rows = [json.loads(x) for x in (folder / "table.jsonl").read_text().splitlines()]
    dialogues = {r["n_groups"] for r in rows if r["level"] == "dialogue"}
    ((points, per),) = drawn
    assert per == "dialogue" and dialogues == {len(x) for x, _, _ in points.values()} and dialogues != {0}
    # each point is a dialogue's mean length in words; the meta step's scaling to [0.5, 1) is for correlating only
    scores = [json.loads(x) for x in (folder / "scores.jsonl").read_text().splitlines()]
    words = [s["value"] for s in scores if s["metric"] == "length"]
    means = points["length"][0]
    assert min(words) <= min(means) and max(means) <= max(words) and max(means) > 1


def test_a_meta_output_folder_says_what_it_lacks_and_names_its_dimension(tmp_path: Path) -> None:
    """`meta -o` writes table.md and table.jsonl only: the report said "dialeval ?.", "with human human score" and
    "No scatter plots: no scores or correlations" beside the correlations it had just shown."""
    folder = tmp_path / "bench"
    invoke(["benchmark", "-b", "usr-tc", "--limit", "5", "-m", "length", "--boot", "0", "-o", str(folder),
            "--no-cache"])  # fmt: skip
    invoke(["meta", str(folder / "scores.jsonl"), "-b", "usr-tc", "--boot", "0", "-o", str(tmp_path / "meta")])
    out = tmp_path / "report.md"
    invoke(["report", str(tmp_path / "meta"), "-o", str(out)])
    text = out.read_text()
    assert "no run.json: version and command not recorded." in text
    assert "correlation of each metric with human Overall**" in text
    assert "No scatter plots: no scores.jsonl." in text


@pytest.mark.parametrize(("meta", "of", "theirs"), [
    # the report headed the Engaging figures "with human Overall" (run.json's) and plotted the Overall ratings
    # against metrics picked from the Engaging rows
    (["-d", "Engaging", "--boot", "0"], "human Engaging", "human Overall"),
    # the report showed the meta table's CIs under the benchmark's command, headed and ranked as that run's table
    (["--boot", "20", "--seed", "3"], "20 bootstrap resamples (seed 3)", "0 bootstrap resamples (seed 0)"),
])  # fmt: skip
def test_a_meta_table_of_another_dimension_or_resamples_in_a_benchmark_folder_is_named_as_another_runs(
    tmp_path: Path, meta: list[str], of: str, theirs: str
) -> None:
    """`meta -o` into the folder of a `benchmark --boot 0`: its table is reported as its own, of its dimension, and
    named as another run's (its signatures' resamples and seed, or its dimension, differ from run.json's)."""
    folder = tmp_path / "bench"
    invoke(["benchmark", "-b", "usr-tc", "--limit", "5", "-m", "length,f1", "--boot", "0", "-o", str(folder),
            "--no-cache"])  # fmt: skip
    invoke(["meta", str(folder / "scores.jsonl"), "-b", "usr-tc", *meta, "-o", str(folder)])
    out = tmp_path / "report.md"
    invoke(["report", str(folder), "-o", str(out)])
    text = out.read_text()
    dim = "human Engaging" if "Engaging" in meta else "human Overall"
    assert f"**usr-tc, another run's table: correlation of each metric with {dim}**" in text  # meta's order
    assert f"against {dim}, one point per item" in text
    assert f"usr-tc, another run's table: metric-human correlation {'with 95%' if '20' in meta else '(no CIs'}" in text
    assert (f"table.jsonl is of {of}, run.json's command of {theirs}: the table comes from another run (dialeval "
            "meta -o into this folder?), not from that command.") in text  # fmt: skip


def test_a_benchmark_table_is_ranked_as_table_md_and_says_it_has_no_cis(tmp_path: Path) -> None:
    """The report ranked a benchmark's table by its first column (turn Pearson: length first), table.md by turn
    Spearman (word_f1 first), and picked the scatter's best metric by Pearson; with --boot 0 its headers and chart
    caption still said "[95% CI]" and "with 95% bootstrap CIs"."""
    folder = tmp_path / "bench"
    invoke(["benchmark", "-b", "usr-tc", "--limit", "30", "-m", "bleu,length,f1", "--boot", "0", "-o", str(folder),
            "--no-cache"])  # fmt: skip
    out = tmp_path / "report.md"
    invoke(["report", str(folder), "-o", str(out)])

    def metrics(table: str) -> list[str]:
        return [line.split(" | ")[0].removeprefix("| ") for line in table.split("\n\n")[1].splitlines()[2:]]

    text = out.read_text()
    expected = metrics((folder / "table.md").read_text())
    assert "ranked by turn spearman)" in (folder / "table.md").read_text()
    assert metrics(text.split("(ranked by turn spearman)**")[1]) == expected
    rows = [json.loads(line) for line in (folder / "table.jsonl").read_text().splitlines()]
    pearson = {r["metric"]: r["value"] for r in rows if (r["level"], r["method"]) == ("turn", "pearson")}
    assert max(pearson, key=pearson.__getitem__) != expected[0]  # the two orders differ on this set
    assert "| metric | turn pearson | turn spearman |" in text and "[95% CI]" not in text
    assert "metric-human correlation (no CIs: the run drew no resamples)" in text


def test_a_meta_breakdown_is_reported_per_group(tmp_path: Path) -> None:
    """`meta --by system`: the report showed the overall table only, under warnings naming groups it did not show."""
    folder = tmp_path / "bench"
    invoke(["benchmark", "-b", "usr-tc", "--limit", "5", "-m", "length", "--boot", "0", "-o", str(folder),
            "--no-cache"])  # fmt: skip
    invoke(["meta", str(folder / "scores.jsonl"), "-b", "usr-tc", "--by", "system", "--boot", "0", "-m", "length",
            "-o", str(tmp_path / "meta")])  # fmt: skip
    out = tmp_path / "report.md"
    invoke(["report", str(tmp_path / "meta"), "-o", str(out)])
    rows = [json.loads(line) for line in (tmp_path / "meta" / "table.jsonl").read_text().splitlines()]
    groups = list(dict.fromkeys(r["group"] for r in rows if r["group"] != "all"))
    assert len(groups) == 6  # USR-TC's six systems
    table = out.read_text().split("the same, per group**")[1].split("\n\n")[1].splitlines()
    assert table[0].startswith("| group | metric | turn pearson | turn spearman |")  # --boot 0: no CIs
    assert [line.split(" | ")[0].removeprefix("| ") for line in table[2:]] == groups  # one metric: a row each
    first = next(r for r in rows if r["group"] == groups[0] and r["level"] == "turn" and r["method"] == "pearson")
    assert f"| {groups[0]} | length | {first['value']:.3f} |" in table[2]


def test_a_real_train_folder_renders_its_results(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`dialeval train`'s folder: its rows with CIs, what it trained on, and the saved model's card sha256. It was
    rendered as an empty "scores" section: the command, and an empty signatures table."""
    monkeypatch.setenv("DIALEVAL_SCORE_CACHE", str(tmp_path / "scores.sqlite"))
    run = tmp_path / "train"
    invoke(["train", "--model", "tfidf-lr", "--train", "usr-pc", "--test", "usr-tc", "--limit", "4",
            "--n-boot", "50", "-o", str(run)])  # fmt: skip
    assert load_results(run).kind == "train"
    out = tmp_path / "report.md"
    invoke(["report", str(run), "-o", str(out), "--format", "md"])
    text = out.read_text()
    row = json.loads((run / "results.jsonl").read_text().splitlines()[0])
    lo, hi = row["spearman_ci"]
    assert "## train: train" in text
    assert "Trained: mode test on usr-tc; train usr-pc; test usr-tc; task regression; seed 0; dimensions " \
           "usr-pc=Overall, usr-tc=Overall." in text  # fmt: skip
    assert "| model | split | n | accuracy | uar | kappa | spearman | pearson | precision | recall | f1 |" in text
    assert f"| tfidf-lr | test=usr-tc | {row['n']} | {row['accuracy']:.3f} |" in text
    assert f" {row['spearman']:.3f} [{lo:.3f}, {hi:.3f}] |" in text
    card = hashlib.sha256((run / "model-tfidf-lr" / "card.json").read_bytes()).hexdigest()
    assert f"| model-tfidf-lr card sha256 | {card} |" in text


def test_a_train_report_lists_the_cards_of_the_models_it_reports_only(tmp_path: Path) -> None:
    """`train --model tfidf-lr -o run` after `train --model ridge -o run`: the report listed model-ridge's card sha256
    under the signatures of a folder whose results.jsonl has no ridge row (the earlier run's saved model)."""
    folder = tmp_path / "run"
    folder.mkdir()
    for file in TrainRun.FILES:
        (folder / file).write_text(json.dumps(TrainRun().as_dict()) if file == "run.json" else "")
    (folder / "results.jsonl").write_text(json.dumps({"model": "tfidf-lr", "split": "test=usr-tc", "n": 3}) + "\n")
    for model in ("tfidf-lr", "ridge"):
        (folder / f"model-{model}").mkdir()
        (folder / f"model-{model}" / "card.json").write_text(json.dumps({"model": model}))
    invoke(["report", str(folder), "-o", str(tmp_path / "r.md")])
    text = (tmp_path / "r.md").read_text()
    card = hashlib.sha256((folder / "model-tfidf-lr" / "card.json").read_bytes()).hexdigest()
    assert f"| model-tfidf-lr card sha256 | {card} |" in text and "model-ridge" not in text


def test_run_json_reads_back_as_the_model_of_its_kind(results: dict[str, Path], tmp_path: Path) -> None:
    bench = load_results(results["bench"]).run
    assert isinstance(bench, BenchmarkRun) and bench.dimension == "Overall"
    assert bench.as_dict() == json.loads((results["bench"] / "run.json").read_text())  # nothing lost or added
    assert bench.metrics["sacrebleu"].signature.startswith("sacrebleu|")
    lm = load_results(results["lmstyle"]).run
    assert isinstance(lm, LmstyleRun) and lm.n == 1 and lm.judge
    for change, field in (({"dimenson": "Overall"}, "dimenson"), ({"kind": "nope"}, "kind"),
                          ({"metrics": {"bleu": {"seconds": 1.0}}}, "metrics.bleu.signature")):  # fmt: skip
        folder = tmp_path / field
        folder.mkdir()
        written = json.loads((results["bench"] / "run.json").read_text())
        (folder / "run.json").write_text(json.dumps({**written, **change}))
        res = CliRunner().invoke(app, ["report", str(folder), "-o", str(tmp_path / "r.html")])
        assert res.exit_code == 2, res.output
        line = " ".join(res.output.split())
        assert f'run.json: field "{field}"' in line and "Traceback" not in line
        assert not (tmp_path / "r.html").exists()


def test_report_refuses_to_write_over_a_file_it_reads(tmp_path: Path) -> None:
    """-o naming a results file of a FOLDERS argument, or a --study export (here by a hard link), is one error
    line before anything is read; the file is left as it was. A report beside the results is fine."""
    folder = tmp_path / "results"
    folder.mkdir()
    stress = folder / "stress.jsonl"
    stress.write_text('{"metric": "bleu", "perturbation": "shuffle", "value": 0.5}\n')
    before = stress.read_bytes()
    res = run_cli("report", folder, "-o", stress, "--format", "md")
    line = refused(res, f"{stress}: field \"--output\"", f"is read from the folder given to FOLDERS ({folder})")
    assert "destroy the input" in line
    assert stress.read_bytes() == before
    study = tmp_path / "study.jsonl"
    write_jsonl(study, [Rating(item_id="i", dimension="Overall", annotator="a", value=3.0)])
    kept = study.read_bytes()
    link = tmp_path / "report.md"
    link.hardlink_to(study)
    res = run_cli("report", folder, "--study", study, "-o", link, "--format", "md")
    refused(res, f"{link}: field \"--output\"", f"is the file given to --study ({study})")
    assert study.read_bytes() == kept
    beside = folder / "report.md"
    assert run_cli("report", folder, "-o", beside, "--format", "md").exit_code == 0
    again = run_cli("report", folder, "-o", beside, "--format", "md")
    assert again.exit_code == 0, again.output
    assert f"wrote {beside} (replaced the existing {beside})" in again.output
    assert stress.read_bytes() == before


def test_the_format_follows_the_output_suffix(results: dict[str, Path], tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """-o report.md without --format wrote HTML into report.md, and -f md -o report.html Markdown into report.html;
    -f tex without -o wrote LaTeX into report.html."""
    bench = str(results["bench"])
    invoke(["report", bench, "-o", str(tmp_path / "r.md")])
    assert (tmp_path / "r.md").read_text().startswith("# dialeval report\n")
    res = CliRunner().invoke(app, ["report", bench, "-f", "md", "-o", str(tmp_path / "r.html")])
    assert res.exit_code == 2 and not (tmp_path / "r.html").exists()
    assert f'field "--format": md does not go in {tmp_path / "r.html"} (a html file): name the file ' \
           f"{tmp_path / 'r.md'}, or leave --format out" in " ".join(res.output.split())  # fmt: skip
    monkeypatch.chdir(tmp_path)
    invoke(["report", bench, "-f", "tex"])
    assert (tmp_path / "report.tex").read_text().startswith("% dialeval report (needs \\usepackage{booktabs})")
    assert not (tmp_path / "report.html").exists()
    # -o r.pdf wrote HTML into r.pdf, which a PDF viewer then could not open
    res = CliRunner().invoke(app, ["report", bench, "-o", "r.pdf"])
    assert res.exit_code == 2 and not (tmp_path / "r.pdf").exists()
    assert 'r.pdf: field "--output": names a .pdf file, and the report is HTML, Markdown or LaTeX: name it r.html ' \
           "(or .md, .tex)" in " ".join(res.output.split())  # fmt: skip


def test_a_benchmark_whose_every_figure_is_undefined_reports_why(tmp_path: Path) -> None:
    """One rated response: every correlation is undefined. The HTML report was matplotlib's traceback ("number
    sections must be larger than 0", a legend of no method), and the Markdown table said "-" with no reason."""
    (tmp_path / "one.csv").write_text("context,response,q\nHi,Hello there,4\n")
    bench = tmp_path / "bench"
    res = run_cli("benchmark", "--path", tmp_path / "one.csv", "--response-col", "response", "--context-col",
                  "context", "--rating-col", "q", "--scale", "1-5", "-m", "length", "--boot", "10", "--no-cache",
                  "-o", bench)  # fmt: skip
    assert res.exit_code == 0, res.output
    for out in (tmp_path / "r.html", tmp_path / "r.md"):
        res = CliRunner().invoke(app, ["report", str(bench), "-o", str(out)])
        assert res.exit_code == 0, res.output
    text = (tmp_path / "r.md").read_text()
    assert "| length | n/a | n/a | n/a |" in text
    assert "n/a: length (turn): undefined: one item only" in text  # as meta prints it
    assert "No correlation chart: every figure is undefined (n/a)." in text


def test_a_folder_of_results_folders_names_them(tmp_path: Path) -> None:
    """`dialeval report runs/` said only "no results here", though runs/ held a results folder per run."""
    for name in ("b", "a"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "run.json").write_text("{}")
    (tmp_path / "empty").mkdir()
    with pytest.raises(InputError, match=r"no results here \(looked for .*\); its folders a, b hold results: name"):
        load_results(tmp_path)
    with pytest.raises(InputError) as caught:  # no such folder inside: no hint
        load_results(tmp_path / "empty")
    assert "its folders" not in str(caught.value)


def test_report_refuses_to_replace_a_file_of_another_results_folder(results: dict[str, Path], tmp_path: Path) -> None:
    """-o runs/b/table.md (b not among FOLDERS, so not read) replaced b's table with the report, saying only
    "replaced the existing"; a report of b's own in its folder may still be written again."""
    other = tmp_path / "b"
    shutil.copytree(results["bench"], other)
    table = other / "table.md"
    kept = table.read_bytes()
    res = run_cli("report", results["lmstyle"], "-o", table)
    refused(res, f'{table}: field "--output": is the table.md of the results folder {other}: name another file')
    assert table.read_bytes() == kept
    for _ in range(2):
        assert run_cli("report", results["lmstyle"], "-o", other / "report.md").exit_code == 0


@pytest.mark.parametrize(("name", "rows", "said"), [
    # two train runs' results.jsonl joined (cat): both rows of tfidf-lr on test=b were printed, as two results
    ("results.jsonl", [{"model": "tfidf-lr", "split": "test=b", "n": 3, "spearman": s} for s in (0.2, 0.9)],
     'results.jsonl:2: field "split": a second line of model "tfidf-lr", split "test=b" (the first is line 1)'),
    # two lmstyle runs' summary.jsonl joined: system_summary writes one row per model, the report printed both
    ("summary.jsonl", [{"model": "smollm2", "responses": r} for r in (2, 4)],
     'summary.jsonl:2: field "model": a second line of model "smollm2" (the first is line 1)'),
])  # fmt: skip
def test_two_result_rows_of_one_model_and_split_are_refused(
    tmp_path: Path, name: str, rows: list[dict[str, object]], said: str
) -> None:
    """results.jsonl and summary.jsonl took a second row of what an earlier row is the figure of, which every other
    results file refuses: the report printed both rows (0.200 and 0.900 for one model on one split), no word why."""
    folder = tmp_path / "run"
    folder.mkdir()
    (folder / name).write_text("".join(json.dumps(r) + "\n" for r in rows))
    if name == "summary.jsonl":  # a summary goes with the tables
        cell = {"table": "table2", "model": "smollm2", "source": "ours", "column": "ACC%", "value": 1.0}
        (folder / "lmstyle_tables.jsonl").write_text(json.dumps(cell) + "\n")
    refused(run_cli("report", folder, "-o", tmp_path / "r.md"), said)
    assert not (tmp_path / "r.md").exists()


def test_a_result_row_whose_note_reads_a_field_of_the_wrong_type_or_none_is_reported(tmp_path: Path) -> None:
    """results.jsonl's notes read fields the row check let through: "undefined_why" of any type (a string was an
    AttributeError traceback, ``str.items``) and "one_label" without "n" (a KeyError traceback: the note says of how
    many items). A wrong type is now refused, naming line and field; a row without n says "all its items"."""
    folder = tmp_path / "run"
    folder.mkdir()
    row = {"model": "m", "split": "fold1/2", "undefined_why": "oops"}
    (folder / "results.jsonl").write_text(json.dumps(row) + "\n")
    refused(run_cli("report", folder, "-o", tmp_path / "r.md"),
            'results.jsonl:1: field "undefined_why": Input should be a valid dictionary')  # fmt: skip
    assert not (tmp_path / "r.md").exists()
    (folder / "results.jsonl").write_text(json.dumps({"model": "m", "split": "fold1/2", "one_label": 2}) + "\n")
    invoke(["report", str(folder), "-o", str(tmp_path / "r.md")])
    assert ("note: m on fold1/2 predicted label 2 (the highest third of the scale) for all its items: its accuracy"
            in (tmp_path / "r.md").read_text())  # fmt: skip


def test_an_lmstyle_run_without_the_judge_says_it_was_not_run(results: dict[str, Path], tmp_path: Path) -> None:
    """run.json's judge holds the judge's settings on every run, its counters only when -m ran it: a run of
    -m style,sacrebleu (the fixture's) was reported as "Appropriateness judge: model smollm2, k 1", as if judged,
    where its table.md says "judge: not run"."""
    out = tmp_path / "r.md"
    invoke(["report", str(results["lmstyle"]), "-o", str(out)])
    text = out.read_text()
    assert "judge: not run" in (results["lmstyle"] / "table.md").read_text()
    assert "Appropriateness judge: not run (-m left it out)." in text and "Appropriateness judge: model" not in text
    folder = tmp_path / "judged"  # one the judge ran in: its settings and counters, as lmstyle writes them
    shutil.copytree(results["lmstyle"], folder)
    run = json.loads((folder / "run.json").read_text())
    run["judge"] = {**run["judge"], "responses": 2, "scored": 1, "parse_failures": 1}
    (folder / "run.json").write_text(json.dumps(run))
    invoke(["report", str(folder), "-o", str(out)])
    assert "Appropriateness judge: model smollm2, k 1, responses 2, scored 1, parse_failures 1" in out.read_text()


def test_the_lmstyle_summary_prints_its_counts_as_whole_numbers(tmp_path: Path) -> None:
    """The summary's counts (responses, empty) were printed "2.0" and "0.0", where lmstyle's table.md prints 2 and 0."""
    folder = tmp_path / "lm"
    folder.mkdir()
    summary = {"model": "m", "responses": 2, "empty": 0, "ACC%": 50.0, "ACC% scored": "2/2", "style strength": None}
    (folder / "summary.jsonl").write_text(json.dumps(summary) + "\n")
    cell = {"table": "table2", "model": "m", "source": "ours", "column": "ACC", "value": 50.0}
    (folder / "lmstyle_tables.jsonl").write_text(json.dumps(cell) + "\n")
    invoke(["report", str(folder), "-o", str(tmp_path / "r.md")])
    # lmstyle.tables.summary_markdown's row of the same summary (what table.md holds)
    assert "| m | 2 | 0 | 50.0 | 2/2 | - |" in (tmp_path / "r.md").read_text()


def test_a_run_json_without_its_command_or_version_says_they_are_not_recorded(tmp_path: Path) -> None:
    """run.json read back filled a missing command with the report's own command line and a missing version with
    this dialeval's: the report said "dialeval report ..." was the command that produced the folder."""
    folder = tmp_path / "stress"
    folder.mkdir()
    (folder / "stress.jsonl").write_text('{"metric": "bleu", "perturbation": "shuffle", "value": 0.5}\n')
    (folder / "stress.md").write_text("| metric | shuffle |\n")
    (folder / "run.json").write_text('{"kind": "stress", "benchmark": "usr-tc"}')
    invoke(["report", str(folder), "-o", str(tmp_path / "r.md")])
    text = (tmp_path / "r.md").read_text()
    assert "Command that produced it" not in text
    assert f"Folder: {folder} (stress); run.json records no version and no command." in text


@pytest.mark.parametrize(("make", "said"), [
    (lambda p: p.mkdir(), "is a folder, expected a file"),  # an IsADirectoryError traceback
    (lambda p: p.write_text("not a figure\n"), "not a PNG figure"),  # inlined as an image/png that shows nothing
])  # fmt: skip
def test_a_per_subset_figure_that_is_not_a_png_is_refused(
    tmp_path: Path, make: Callable[[Path], object], said: str
) -> None:
    folder = tmp_path / "stress"
    folder.mkdir()
    (folder / "stress.jsonl").write_text('{"metric": "bleu", "perturbation": "negation", "value": 0.5}\n')
    figure = folder / "stress_subsets_negation.png"
    make(figure)
    refused(run_cli("report", folder, "-o", tmp_path / "r.html"), f"{figure}: {said}")
    assert not (tmp_path / "r.html").exists()


def test_a_folder_of_an_lmstyle_summary_alone_reports_it(tmp_path: Path) -> None:
    """A folder holding summary.jsonl and no lmstyle_tables.jsonl was reported as an empty folder of scores: the
    summary's rows were left out without a word."""
    folder = tmp_path / "lm"
    folder.mkdir()
    (folder / "summary.jsonl").write_text(json.dumps({"model": "m", "responses": 2, "ACC%": 50.0}) + "\n")
    assert load_results(folder).kind == "lmstyle"
    invoke(["report", str(folder), "-o", str(tmp_path / "r.md")])
    assert "| m | 2 | 50.0 |" in (tmp_path / "r.md").read_text()


@pytest.mark.parametrize(("text", "kind"), [("null", "null"), ("[1]", "a JSON array"), ('"run"', "a string")])
def test_a_run_json_that_is_no_object_names_its_kind_in_json_words(text: str, kind: str, tmp_path: Path) -> None:
    """It said "expected a JSON object, found NoneType" (Python's name for null; "found list" for an array)."""
    (tmp_path / "run.json").write_text(text + "\n")
    refused(run_cli("report", tmp_path, "-o", tmp_path / "r.html"),
            f"{tmp_path / 'run.json'}: expected a JSON object, found {kind}")  # fmt: skip


def test_a_per_subset_figure_of_a_perturbation_not_in_stress_jsonl_is_left_out_and_said(tmp_path: Path) -> None:
    """A stress_subsets_truncation.png left from an earlier run beside a stress.jsonl of negation only was shown as this
    run's figure; it is left out now, with a line naming it."""
    from dialeval.report.charts import heatmap

    folder = tmp_path / "stress"
    folder.mkdir()
    (folder / "stress.jsonl").write_text('{"metric": "bleu", "perturbation": "negation", "value": 0.5}\n')
    png = heatmap([{"metric": "bleu", "perturbation": "negation", "value": 0.5}])  # any real PNG
    (folder / "stress_subsets_negation.png").write_bytes(png)
    (folder / "stress_subsets_truncation.png").write_bytes(png)
    res = run_cli("report", folder, "-o", tmp_path / "r.md", "--format", "md")
    assert res.exit_code == 0, res.output
    text = (tmp_path / "r.md").read_text()
    assert "original vs negation (stress_subsets_negation.png)" in text
    assert "original vs truncation" not in text
    assert ("Left out stress_subsets_truncation.png: truncation is not a perturbation of stress.jsonl "
            "(a figure of an earlier run in this folder)") in text


def test_a_table_joining_rows_of_two_bootstrap_settings_is_refused(tmp_path: Path) -> None:
    """`meta --boot 50 -o` and `meta --boot 0 -o` of other metrics, their table.jsonl joined (`cat`): no line repeats
    a cell, and the report showed one table of CIs for one metric and none for the other, with no word."""
    folder = tmp_path / "joined"
    folder.mkdir()
    row = {"dimension": "Overall", "level": "turn", "method": "pearson", "value": 0.5, "p_value": None,
           "ci_low": None, "ci_high": None, "n_items": 9, "n_groups": 3, "n_skipped": 0}  # fmt: skip
    sig = "corr|level:turn|method:pearson|n_boot:{}|seed:{}|resample:context|ci:0.95|version:0.1.0"
    lines = [{**row, "metric": "a", "ci_low": 0.1, "ci_high": 0.9, "signature": sig.format(50, 0)},
             {**row, "metric": "human", "signature": "ceiling|method:pearson|scheme:loo-annotator|version:0.1.0"},
             {**row, "metric": "b", "signature": sig.format(0, 0)}]  # fmt: skip
    (folder / "table.jsonl").write_text("".join(json.dumps(r) + "\n" for r in lines))
    refused(run_cli("report", folder, "-o", tmp_path / "r.md"),
            'table.jsonl:3: field "signature": a row of 0 bootstrap resamples (seed 0), line 1 of 50 (seed 0): are '
            "two runs' files joined in this one?")  # fmt: skip
    assert not (tmp_path / "r.md").exists()
    (folder / "table.jsonl").write_text("".join(json.dumps(r) + "\n" for r in lines[:2]))
    assert run_cli("report", folder, "-o", tmp_path / "r.md").exit_code == 0


_ROW = {"metric": "length", "dimension": "Overall", "level": "turn", "method": "pearson", "value": 0.5, "p_value": None,
        "ci_low": None, "ci_high": None, "n_items": 9, "n_groups": 3, "n_skipped": 0}  # fmt: skip
_CORR = "corr|level:turn|method:pearson|n_boot:0|seed:0|resample:context|ci:0.95|version:0.1.0"


def _write(path: Path, rows: list[dict[str, object]]) -> None:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))


def _report_md(folder: Path, tmp_path: Path) -> str:
    res = run_cli("report", folder, "-o", tmp_path / "r.md")
    assert res.exit_code == 0, res.output
    return (tmp_path / "r.md").read_text()


def test_the_signatures_line_says_what_the_folder_lacks_and_lists_the_tables_signatures(tmp_path: Path) -> None:
    """The report said "none in this folder (run.json names no metric, and there are no scores)" of a folder with
    no run.json, and of one whose scores.jsonl holds unsigned scores; a `meta -o` folder's table.jsonl rows carry
    signatures (written by meta), and it listed none of them."""
    meta = tmp_path / "meta"
    meta.mkdir()
    _write(meta / "table.jsonl", [{**_ROW, "signature": _CORR}, {**_ROW, "method": "spearman", "signature": ""}])
    text = _report_md(meta, tmp_path)
    assert "Signatures: none" not in text
    escaped = _CORR.replace("|", "\\|")  # as a Markdown cell holds it
    assert f"| table.jsonl | {escaped} |" in text and text.count("| table.jsonl |") == 1  # the unsigned row: none
    scores = tmp_path / "scores"
    scores.mkdir()
    write_jsonl(scores / "scores.jsonl", [Score(item_id="i1", metric="length", value=3.0)])
    assert ("Signatures: none in this folder (there is no run.json, and its scores carry no signature)."
            in _report_md(scores, tmp_path))  # fmt: skip
    _write(meta / "table.jsonl", [_ROW])  # a hand-made table: its rows carry none either
    assert ("Signatures: none in this folder (there is no run.json, there are no scores, and its table.jsonl rows "
            "carry no signature).") in _report_md(meta, tmp_path)  # fmt: skip


def test_a_benchmark_folders_report_lists_how_each_correlation_was_computed(results: dict[str, Path],
                                                                            tmp_path: Path) -> None:
    """A folder with run.json listed its metrics' signatures but none of table.jsonl's ``corr|...`` ones (level,
    method, resamples, seed, CI level): what a paper must state about its CIs was in no report. Each is listed once."""
    rows = [json.loads(x) for x in (results["bench"] / "table.jsonl").read_text(encoding="utf-8").splitlines()]
    wanted = list(dict.fromkeys(str(r["signature"]) for r in rows))
    assert wanted and all(sig.startswith("corr|") for sig in wanted)
    text = _report_md(results["bench"], tmp_path)
    for sig in wanted:
        escaped = sig.replace("|", "\\|")  # as a Markdown cell holds it
        assert text.count(f"| table.jsonl | {escaped} |") == 1
    assert text.count("| table.jsonl |") == len(wanted)


def test_a_folder_without_run_json_says_why_it_has_no_scatter_plots(tmp_path: Path) -> None:
    """table.jsonl and scores.jsonl without a run.json: the report said "run.json names no benchmark" of the
    run.json that is not there."""
    folder = tmp_path / "norun"
    folder.mkdir()
    _write(folder / "table.jsonl", [{**_ROW, "signature": _CORR}])
    write_jsonl(folder / "scores.jsonl", [Score(item_id=f"i{i}", metric="length", value=float(i)) for i in range(3)])
    text = _report_md(folder, tmp_path)
    assert "run.json names no benchmark" not in text
    assert "No scatter plots: there is no run.json to name the benchmark whose human ratings they plot." in text


def test_a_compare_json_without_its_table_is_refused_naming_what_is_missing(tmp_path: Path) -> None:
    """compare.json alone was "no results here (looked for run.json, ...)", naming neither it nor the table.jsonl
    it is reported beside; beside scores.jsonl only, its paired test was left out of the report with no word."""
    folder = tmp_path / "cmp"
    folder.mkdir()
    paired = {"metric_a": "length", "metric_b": "f1", "dimension": "Overall", "level": "turn", "method": "pearson",
              "value_a": 0.5, "value_b": 0.3, "difference": 0.2, "ci_low": None, "ci_high": None, "p_value": None,
              "n_items": 30, "n_boot": 0, "williams_t": 0.9, "williams_p": 0.2, "note": ""}  # fmt: skip
    (folder / "compare.json").write_text(json.dumps(paired))
    said = "compare.json: lacks the table.jsonl that dialeval meta --compare -o writes beside it"
    refused(run_cli("report", folder, "-o", tmp_path / "r.md"), said)
    write_jsonl(folder / "scores.jsonl", [Score(item_id="i1", metric="length", value=3.0)])
    refused(run_cli("report", folder, "-o", tmp_path / "r.md"), said)
    assert not (tmp_path / "r.md").exists()
    _write(folder / "table.jsonl", [{**_ROW, "signature": _CORR}])
    assert "paired test (turn pearson, 30 items): length - f1 = 0.200" in _report_md(folder, tmp_path)


@pytest.mark.parametrize("ci", [(0.1, 0.9), (0.1, None)])
def test_a_table_row_of_no_value_with_a_ci_is_refused_on_its_line(tmp_path: Path, ci: tuple[float, ...]) -> None:
    """A row with "value": null and a CI (meta writes none of an undefined figure) was shown as n/a, its CI dropped,
    and the table headed "[95% CI]", with no word that the row contradicts itself."""
    folder = tmp_path / "edited"
    folder.mkdir()
    _write(folder / "table.jsonl", [{**_ROW, "signature": _CORR},
                                    {**_ROW, "metric": "f1", "value": None, "ci_low": ci[0], "ci_high": ci[1]}])
    refused(run_cli("report", folder, "-o", tmp_path / "r.md"),
            'table.jsonl:2: field "value": null (an undefined figure), and the row has a CI: meta writes none for an '
            "undefined figure; was the row edited?")  # fmt: skip
    assert not (tmp_path / "r.md").exists()
