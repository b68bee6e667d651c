"""``dialeval stress`` refuses, before any work, an output folder over one of its inputs, and empty or unknown names."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from tests.commands.cli_runner import invoke, refused


@pytest.mark.parametrize(("benchmark", "written"), [("usr-tc", "stress.jsonl"), ("dailydialog++", "ranking.jsonl")])
def test_stress_refuses_an_output_folder_that_holds_its_path(tmp_path: Path, benchmark: str, written: str) -> None:
    """The --path file sits in OUTPUT under a name the run writes (the perturbation run, the DailyDialog++ ranking)."""
    folder = tmp_path / "out"
    folder.mkdir()
    data = folder / written
    data.write_text('{"not": "a benchmark"}\n')
    before = data.read_bytes()
    res = invoke("stress", "-b", benchmark, "--path", data, "-m", "length", "--limit", "1", "-o", folder, "--no-cache")
    line = refused(res, f'{data}: field "--output"', "is the file given to --path")
    assert "destroy the input" in line
    assert data.read_bytes() == before
    assert sorted(p.name for p in folder.iterdir()) == [written]


def test_stress_refuses_a_figure_that_is_its_path_through_a_link(tmp_path: Path) -> None:
    """The per-subset figure (--plot) is one of the files it writes: a symbolic link there to --path is refused."""
    data = tmp_path / "usr.json"
    data.write_text("[]\n")
    folder = tmp_path / "out"
    folder.mkdir()
    (folder / "stress_subsets_negation.png").symlink_to(data)
    res = invoke("stress", "--path", data, "--plot", "negation", "-m", "length", "-o", folder, "--no-cache")
    refused(res, f"{folder / 'stress_subsets_negation.png'}: field", f"is the file given to --path ({data})")
    assert data.read_text() == "[]\n"


def test_stress_refuses_a_folder_where_a_figure_goes_before_scoring(tmp_path: Path) -> None:
    """A folder named like the figure --plot draws (stress_subsets_truncation.png) gave a traceback (IsADirectoryError)
    after the scoring; a folder named stress.md failed after it too, leaving stress.jsonl and the figure written."""
    data = tmp_path / "rows.csv"
    data.write_text("context,response\nHi,hello there\nBye,see you\n")
    for name in ("stress_subsets_truncation.png", "stress.md"):
        folder = tmp_path / name.split(".")[0]
        (folder / name).mkdir(parents=True)
        res = invoke("stress", "--path", data, "--response-col", "response", "--perturb", "negation,truncation",
                     "--plot", "truncation", "-m", "length", "--n-boot", "0", "-o", folder, "--cache",
                     tmp_path / "c.sqlite")  # fmt: skip
        refused(res, f'{folder / name}: field "--output": is an existing folder')
        assert [p.name for p in folder.iterdir()] == [name]
        assert not (tmp_path / "c.sqlite").exists()  # before the scoring


def test_a_failed_write_is_one_line_and_leaves_no_file(tmp_path: Path, full_disk_at: Callable[[str], None]) -> None:
    """stress.md on a full disk was a traceback, and the figure, stress.jsonl and stress_subsets.jsonl were left
    in OUTPUT (the figure not even written atomically): now its files are written all or none."""
    data = tmp_path / "rows.csv"
    data.write_text("context,response\nHi,hello there\nBye,see you\n")
    full_disk_at("stress.md.")
    res = invoke("stress", "--path", data, "--response-col", "response", "-m", "length", "--n-boot", "0",
                 "-o", tmp_path / "out", "--no-cache")  # fmt: skip
    refused(res, "stress.md: cannot be written: No space left on device")
    assert not (tmp_path / "out").exists()


def test_a_rerun_removes_the_per_subset_files_it_does_not_write(tmp_path: Path) -> None:
    """A rerun with --perturb truncation --subsets none left the first run's stress_subsets.jsonl and negation
    figure in OUTPUT, and ``dialeval report`` showed "original vs negation" as this run's."""
    data = tmp_path / "rows.csv"
    # responses negation applies to: it draws no figure where it perturbed none
    data.write_text("context,response\nDo you like dogs?,I do like dogs.\nAre you ok?,I am ok today.\n")
    out = tmp_path / "runs"
    base = ("stress", "--path", data, "--response-col", "response", "--context-col", "context", "-m", "length",
            "--n-boot", "0", "-o", out, "--no-cache")  # fmt: skip
    assert invoke(*base).exit_code == 0
    assert {"stress_subsets.jsonl", "stress_subsets_negation.png"} <= {p.name for p in out.iterdir()}
    res = invoke(*base, "--perturb", "truncation", "--subsets", "none")
    assert res.exit_code == 0, res.output
    assert sorted(p.name for p in out.iterdir()) == ["run.json", "stress.jsonl", "stress.md"]
    assert f"removed {out}/{{stress_subsets.jsonl, stress_subsets_negation.png}}: an earlier run's" in res.output
    assert invoke("report", out, "-o", tmp_path / "r.md").exit_code == 0
    assert "negation" not in (tmp_path / "r.md").read_text()


def test_a_perturbation_named_twice_is_refused(tmp_path: Path) -> None:
    """--perturb negation,negation wrote each negation row twice to stress.jsonl; then it was deduplicated
    silently. A name given twice is now refused, as every command refuses one; so is one --plot gives twice."""
    refused(invoke("stress", "--perturb", "negation,negation", "-m", "length", "--limit", "2", "-o", tmp_path / "b"),
            'field "--perturb": perturbation "negation" is given twice')  # fmt: skip
    refused(invoke("stress", "--plot", "negation,negation", "-m", "length", "--limit", "2", "-o", tmp_path / "b"),
            'field "--plot": perturbation "negation" is given twice')  # fmt: skip
    refused(invoke("stress", "--perturb", "negation,nope", "-o", tmp_path / "c"), 'field "--perturb"', '"nope"')
    assert not (tmp_path / "b").exists() and not (tmp_path / "c").exists()


def test_a_plot_of_a_perturbation_not_run_is_refused(tmp_path: Path) -> None:
    """--perturb truncation --plot negation drew no figure, silently; by default negation is drawn when it runs."""
    refused(invoke("stress", "--perturb", "truncation", "--plot", "negation", "-m", "length", "--limit", "2",
                   "-o", tmp_path / "o"), 'field "--plot": negation is not among the perturbations run (--perturb)')
    assert not (tmp_path / "o").exists()
    res = invoke("stress", "--perturb", "truncation", "-m", "length", "--limit", "2", "-o", tmp_path / "t",
                 "--no-cache", "--n-boot", "0")  # fmt: skip
    assert res.exit_code == 0, res.output
    assert not list((tmp_path / "t").glob("*.png"))
    assert "subsets (rule): " in res.output and "{" not in res.output.split("subsets (rule): ")[1].splitlines()[0]
    refused(invoke("stress", "-b", "dailydialog++", "--plot", "negation", "-o", tmp_path / "d"),
            'field "--plot": --plot does not apply to dailydialog++')  # fmt: skip


@pytest.mark.parametrize(("args", "message"), [
    (["--split", "dev"], 'field "--split": applies to -b dailydialog++ only'),  # both were ignored on usr-tc
    (["--refs", "2"], 'field "--refs": applies to -b dailydialog++ only'),
    # DailyDialog++ has 5 good responses per context: --refs 5 ranked none and said "no knowledge in DailyDialog++"
    (["-b", "dailydialog++", "--refs", "5"],
     'field "--refs": 5 would hold out every good response of 2 of the 2 contexts, leaving none to rank: give at '
     "most 4"),
    # the ranking ran and split nothing, silently
    (["-b", "dailydialog++", "--subsets", "judge"],
     'field "--subsets": --subsets does not apply to dailydialog++ (its ranking is not split into subsets)'),
])  # fmt: skip
def test_a_dailydialogpp_option_that_cannot_apply_is_refused(tmp_path: Path, args: list[str], message: str) -> None:
    refused(invoke("stress", *args, "-m", "length", "--limit", "2", "--no-cache", "-o", tmp_path / "o"), message)
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize(("args", "words"), [
    (["--perturb", ""], 'field "--perturb": empty perturbation name'),  # was: every perturbation
    (["--perturb", "negation,"], 'field "--perturb": empty perturbation name in "negation," (name 2 of 2)'),
    (["--plot", "negaton"], 'field "--plot": unknown perturbation "negaton"; did you mean "negation"?'),  # no figure
    (["--perturb", "trunction"], 'unknown perturbation "trunction"; did you mean "truncation"?'),  # was the list of 11
    (["--plot", ""], 'field "--plot": empty perturbation name'),
])  # fmt: skip
def test_an_empty_or_unknown_perturbation_or_plot_is_refused(args: list[str], words: str, tmp_path: Path) -> None:
    refused(invoke("stress", *args, "-m", "length", "--limit", "2", "-o", tmp_path / "o", "--no-cache"), words)
    assert not (tmp_path / "o").exists()


def test_your_own_data_is_read_as_score_reads_it(tmp_path: Path) -> None:
    """stress read only a catalog benchmark: a records folder was "is a folder", a table "not valid JSON".

    The first two contexts of USR-TC, exported as records, stressed from the folder, from the record files and
    from the catalog: the same rows, value for value (the benchmark's name aside).
    """
    assert invoke("data", "export", "-b", "usr-tc", "--limit", "2", "-o", tmp_path / "rec").exit_code == 0
    rec = tmp_path / "rec"
    common = ["-m", "length,f1", "--perturb", "negation,truncation", "--n-boot", "20", "--plot", "none", "--no-cache"]
    runs = {
        "catalog": ["-b", "usr-tc", "--limit", "2"],
        "folder": ["--path", rec],
        "records": ["--dialogues", rec / "dialogues.jsonl", "--candidates", rec / "candidates.jsonl"],
    }
    rows = {}
    for name, args in runs.items():
        res = invoke("stress", *args, *common, "-o", tmp_path / name)
        assert res.exit_code == 0, res.output
        rows[name] = [
            {k: v for k, v in json.loads(line).items() if k != "benchmark"}
            for line in (tmp_path / name / "stress.jsonl").read_text().splitlines()
        ]
    assert len(rows["catalog"]) == 4 and rows["folder"] == rows["catalog"] == rows["records"]
    # 20 resamples: the CIs are flagged on screen and in stress.md (they were not; only meta's table flagged them)
    rough = "warning: the CIs are rough: 20 resamples only, too few for 95% (40 at least)"
    assert rough in res.output and rough in (tmp_path / "records" / "stress.md").read_text()
    assert {r["perturbation"] for r in rows["catalog"]} == {"negation", "truncation"}
    # the mapping options name your own table; DailyDialog++ reads its own files and refuses them
    refused(invoke("stress", "-b", "dailydialog++", "--response-col", "r", "-o", tmp_path / "dd"), "do not apply")
    assert not (tmp_path / "dd").exists()


def test_the_counts_say_not_applicable_only_where_a_response_was_left_out(tmp_path: Path) -> None:
    """Every line said "N skipped (not applicable)", "0 skipped (not applicable)" included. USR-TC's first three
    contexts: 18 responses, each truncated; a number is swapped only where a response has a digit."""
    import re

    from dialeval.data.catalog import load_benchmark

    texts = [c.text for c in load_benchmark("usr-tc").head(3).candidates]
    digits = sum(bool(re.search(r"\d", t)) for t in texts)  # 2 of 18
    res = invoke("stress", "--perturb", "truncation,number-swap", "-m", "length", "--limit", "3", "--no-cache",
                 "--n-boot", "0", "-o", tmp_path / "o")  # fmt: skip
    assert res.exit_code == 0, res.output
    lines = res.output.splitlines()
    assert f"truncation: {len(texts)} perturbed" in lines
    assert f"number-swap: {digits} perturbed, {len(texts) - digits} not applicable (left out)" in lines


def test_a_table_without_references_hears_that_the_default_metrics_need_them(tmp_path: Path) -> None:
    """Naming no metric on a table without references said only 'metric "bleu" cannot run here', a metric
    the user never asked for; now it says bleu is one of stress's defaults and how to name others."""
    table = tmp_path / "t.csv"
    table.write_text("ctx,resp\nHi there.,Hello!\nHow are you?,Fine.\n", encoding="utf-8")
    res = invoke("stress", "--path", table, "--response-col", "resp", "--context-col", "ctx", "-o", tmp_path / "o")
    refused(res, "2 of 2 items have no reference; it is one of this command's default metrics (bleu,")
    assert "name others with -m" in res.output and not (tmp_path / "o").exists()
    # a metric the user names gets the plain reason
    res = invoke("stress", "--path", table, "--response-col", "resp", "--context-col", "ctx", "-m", "f1",
                 "-o", tmp_path / "o")  # fmt: skip
    refused(res, 'metric "f1" cannot run here: 2 of 2 items have no reference')
    assert "default metrics" not in res.output


def test_the_subsets_lines_are_words(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """--subsets judge printed a Python dict ("subset judge, per context: {'open-ended': 1}"); --subsets tags on
    items without a subset tag printed nothing, and wrote no per-subset file without saying why (then said it on the
    screen only: not in the --json notes nor in stress.md)."""
    monkeypatch.setenv("DIALEVAL_CACHE", str(tmp_path / "cache"))
    table = tmp_path / "t.csv"
    table.write_text("ctx,resp\nWhere do you live?,In Paris.\nWhere do you live?,Nowhere at all.\n", encoding="utf-8")
    base = ["stress", "--path", table, "--response-col", "resp", "--context-col", "ctx", "-m", "length",
            "--perturb", "truncation", "--n-boot", "5", "--plot", "none", "--no-cache", "-o", tmp_path / "o"]
    res = invoke(*base, "--subsets", "tags")
    assert res.exit_code == 0, res.output
    assert 'subsets (tags): no item has a "subset" tag, so there are no per-subset figures' in res.output
    said = 'subsets (tags): no item has a "subset" tag, so there are no per-subset figures'
    assert said in (tmp_path / "o" / "stress.md").read_text()
    notes = json.loads(invoke(*base, "--subsets", "tags", "--json").stdout)["notes"]
    assert any(n.startswith(said) for n in notes)
    res = invoke(*base, "--subsets", "judge", "--subset-param", "max_tokens=16", "--subset-param", "temperature=0")
    assert res.exit_code == 0, res.output
    line = next(x for x in res.output.splitlines() if x.startswith("subsets (judge), per context: "))
    assert "{" not in line and line.removeprefix("subsets (judge), per context: ").split()[-1] == "1"  # one context


def test_a_figure_asked_for_with_no_subsets_is_refused(tmp_path: Path) -> None:
    """--plot negation --subsets none ran, drew no figure and said nothing of it (the figure is per subset)."""
    data = tmp_path / "rows.csv"
    data.write_text("context,response\nDo you like dogs?,I do like dogs.\nAre you ok?,I am ok today.\n")
    res = invoke("stress", "--path", data, "--response-col", "response", "--context-col", "context", "-m", "length",
                 "--subsets", "none", "--plot", "negation", "--n-boot", "0", "-o", tmp_path / "out", "--no-cache")
    refused(res, 'field "--plot"', "--subsets none")
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(("args", "words"), [
    # refused as the parameters are read (no such key), and as the metric is built (its rule)
    (["-m", "length", "-p", "length.foo=1"], 'metric "length" has no parameter "foo"'),
    (["-m", "chrf", "-p", "chrf.char_order=0"], "chrf.char_order=0: must be between 1"),
])  # fmt: skip
@pytest.mark.parametrize("benchmark", ["usr-tc", "dailydialog++"])
def test_a_bad_parameter_leaves_no_new_cache(benchmark: str, args: list[str], words: str, tmp_path: Path) -> None:
    """The score cache was made before the metrics were built (as score and benchmark made it, until they built
    them first): each refusal left an empty new/c.sqlite, and its folder, behind."""
    cache = tmp_path / "new" / "c.sqlite"
    res = invoke("stress", "-b", benchmark, "--limit", "2", *args, "--cache", cache, "-o", tmp_path / "o")
    refused(res, words)
    assert not (tmp_path / "new").exists() and not (tmp_path / "o").exists()


def test_a_dailydialogpp_refusal_leaves_no_new_cache(tmp_path: Path) -> None:
    """-b dailydialog++ --perturb negation was refused after the score cache was made."""
    cache = tmp_path / "new" / "c.sqlite"
    res = invoke("stress", "-b", "dailydialog++", "--perturb", "negation", "-m", "length", "--cache", cache,
                 "-o", tmp_path / "o")  # fmt: skip
    refused(res, 'field "--perturb": --perturb does not apply to dailydialog++')
    assert not (tmp_path / "new").exists()


def test_a_candidate_id_like_a_perturbed_copys_is_refused(tmp_path: Path) -> None:
    """A candidate "<id>~negation" beside "<id>" met the negated copy of "<id>" under one id: the copy's scores
    were taken for the original's. Such an id is now refused, naming the file and the id, before any scoring."""
    assert invoke("data", "export", "-b", "usr-tc", "--limit", "1", "-o", tmp_path / "rec").exit_code == 0
    cands = tmp_path / "rec" / "candidates.jsonl"
    lines = [json.loads(line) for line in cands.read_text().splitlines()]
    lines[1]["id"] = f"{lines[0]['id']}~negation"
    cands.write_text("".join(json.dumps(x) + "\n" for x in lines))
    res = invoke("stress", "--dialogues", tmp_path / "rec" / "dialogues.jsonl", "--candidates", cands, "-m", "length",
                 "--cache", tmp_path / "new" / "c.sqlite", "-o", tmp_path / "o")  # fmt: skip
    refused(res, f'{cands}: field "id": candidate id "{lines[1]["id"]}" ends in "~negation"')
    assert not (tmp_path / "new").exists() and not (tmp_path / "o").exists()


def test_json_notes_hold_every_line_said_under_the_table(tmp_path: Path) -> None:
    """--json's notes held the left-out pairs and rough resamples only: the perturbed counts, the n/a cells' reasons
    and the data's warnings (here --limit above the contexts) were on the screen and nowhere in the JSON."""
    assert invoke("data", "export", "-b", "usr-tc", "--limit", "1", "-o", tmp_path / "rec").exit_code == 0
    argv = ["stress", "--dialogues", tmp_path / "rec" / "dialogues.jsonl", "--candidates",
            tmp_path / "rec" / "candidates.jsonl", "-m", "length", "--perturb", "number-swap,negation", "--limit", "5",
            "--subsets", "none", "--n-boot", "10", "--no-cache"]  # fmt: skip
    screen = invoke(*argv, "-o", tmp_path / "a")
    assert screen.exit_code == 0, screen.output
    res = invoke(*argv, "-o", tmp_path / "b", "--json")
    assert res.exit_code == 0, res.output
    notes = json.loads(res.stdout)["notes"]
    # the first usr-tc context's 6 responses hold no digit: number swap applies to none (its n/a cell's reason)
    assert "n/a: length (number-swap): number-swap applied to none of the 6 responses" in notes
    assert "--limit 5 is above the 1 context of candidates; it is used" in notes  # records are named by their file
    assert "number-swap: 0 perturbed, 6 not applicable (left out)" in notes
    assert "negation: 4 perturbed, 2 not applicable (left out)" in notes  # 4 of the 6 responses have a verb to negate
    flat = screen.output.replace("\n", "")
    assert all(n in flat for n in notes)  # every note was said on the screen too


def test_no_figure_for_a_perturbation_that_changed_nothing(tmp_path: Path) -> None:
    """The default negation figure was drawn when negation applied to no response: it showed originals only. No
    figure is drawn now, and the screen, stress.md and the JSON notes say why."""
    data = tmp_path / "rows.csv"
    data.write_text("context,response\nDo you like dogs?,hello there friend\nAre you ok?,see you soon then\n")
    base = ["stress", "--path", data, "--response-col", "response", "--context-col", "context", "-m", "length",
            "--perturb", "negation,truncation", "--n-boot", "0", "--no-cache"]  # fmt: skip
    said = "no figure for negation: it applied to none of the 2 responses"
    res = invoke(*base, "-o", tmp_path / "out")
    assert res.exit_code == 0, res.output
    assert said in res.output
    assert not (tmp_path / "out" / "stress_subsets_negation.png").exists()
    md = (tmp_path / "out" / "stress.md").read_text()
    assert said in md and "stress_subsets_negation.png" not in md
    res = invoke(*base, "--plot", "negation,truncation", "--json", "-o", tmp_path / "json")
    assert res.exit_code == 0, res.output
    assert said in json.loads(res.output)["notes"]
    assert sorted(p.name for p in (tmp_path / "json").glob("*.png")) == ["stress_subsets_truncation.png"]


def test_a_subset_judge_whose_every_request_fails_says_why_there_are_no_subsets(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """--subsets judge against a server that answers HTTP 500: no per-subset table, file or figure, and nothing said
    but "per context: unparsed 2" (not why, nor that there are no subsets); the JSON notes said nothing of it. And it
    exited 0, where a failed request of a scoring judge exits 1 unless --allow-failures."""
    from tests.backends.test_openai_compat import Reply, Scripted

    monkeypatch.setenv("DIALEVAL_CACHE", str(tmp_path / "cache"))
    server = Scripted([Reply(500, b'{"error": {"message": "overloaded"}}')])
    table = tmp_path / "t.csv"
    table.write_text("ctx,resp\nWhere do you live?,I live in Paris with my family and two cats.\n"
                     "Why so?,Because the weather there is nice and the food great.\n", encoding="utf-8")  # fmt: skip
    base = ["stress", "--path", table, "--response-col", "resp", "--context-col", "ctx", "-m", "length",
            "--perturb", "truncation", "--plot", "truncation", "--n-boot", "0", "--no-cache", "--subsets", "judge",
            "--subset-param", "backend=openai-compatible", "--subset-param", f"base_url={server.url}",
            "--subset-param", "model=m", "--subset-param", "max_retries=0"]  # fmt: skip
    try:
        screen = invoke(*base, "-o", tmp_path / "a")
        res = invoke(*base, "-o", tmp_path / "b", "--json", "--allow-failures")
    finally:
        server.close()
    said = "subsets (judge): the judge classified none of the 2 contexts (2 x request failed: HTTP 500"
    assert screen.exit_code == 1, screen.output
    assert "error: 2 context(s) no subset (--subsets judge) because judge requests failed (2 x request failed: HTTP " \
        "500" in screen.output.replace("\n", "")
    assert said in screen.output.replace("\n", "")
    assert "so there are no per-subset rows or figures" in screen.output.replace("\n", "")
    assert res.exit_code == 0, res.output
    body = json.loads(res.stdout)
    assert body["subset_rows"] == [] and any(n.startswith(said) for n in body["notes"])
    assert said in (tmp_path / "a" / "stress.md").read_text()
    assert sorted(p.name for p in (tmp_path / "a").iterdir()) == ["run.json", "stress.jsonl", "stress.md"]
