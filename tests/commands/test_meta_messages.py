"""``meta`` and ``benchmark`` say what is wrong and where: metrics missing from the scores (with the list and a
"did you mean"), a scores file given twice or an item scored twice (file and line), and system-level figures over
fewer than three systems (a warning under the table and in table.md; the numbers unchanged).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.commands.cli_runner import invoke, refused

from dialeval.schema import Rating, Score


@pytest.fixture
def files(tmp_path: Path) -> tuple[Path, Path]:
    """A scores file (bleu1, bleu2, length on six items of three systems) and its ratings."""
    items = [f"c{c}:s{s}" for c in range(2) for s in range(3)]
    scores = [Score(item_id=i, metric=m, value=float(n % 4) + k, context_id=i[:2], system=i[3:])
              for n, i in enumerate(items) for k, m in enumerate(("bleu1", "bleu2", "length"))]  # fmt: skip
    ratings = [Rating(item_id=i, dimension="Overall", annotator="a", value=n % 3) for n, i in enumerate(items)]
    (tmp_path / "s.jsonl").write_text("".join(s.model_dump_json() + "\n" for s in scores))
    (tmp_path / "r.jsonl").write_text("".join(r.model_dump_json() + "\n" for r in ratings))
    return tmp_path / "s.jsonl", tmp_path / "r.jsonl"


def test_a_missing_metric_lists_what_the_scores_hold_and_the_closest(files: tuple[Path, Path]) -> None:
    s, r = files
    refused(invoke("meta", s, "-r", r, "-m", "bleu9", "--boot", "0"),
            'no scores for metric bleu9 (did you mean "bleu', "the scores hold: bleu1, bleu2, length")  # fmt: skip
    refused(invoke("meta", s, "-r", r, "-m", "bleu1,lenght", "--boot", "0"),
            'lenght (did you mean "length"?)', "the scores hold: bleu1, bleu2, length")  # fmt: skip


def test_a_family_name_stands_for_its_outputs_in_the_scores(files: tuple[Path, Path]) -> None:
    """As score -m reads it: -m bleu said "no scores for metric bleu (did you mean "bleu2"?)" on bleu1, bleu2."""
    s, r = files
    for names in ("bleu,length", "bleu,bleu2,length"):  # an output of a family also named is taken once
        res = invoke("meta", s, "-r", r, "-m", names, "--boot", "0", "--level", "turn", "--method", "pearson",
                     "--json")  # fmt: skip
        assert res.exit_code == 0, res.output
        assert [row["metric"] for row in json.loads(res.stdout)["rows"]] == ["bleu1", "bleu2", "length"]
    refused(invoke("meta", s, "-r", r, "-m", "rouge", "--boot", "0"),
            'field "--metrics": no scores for metric rouge; the scores hold: bleu1, bleu2, length')  # fmt: skip


def test_the_same_scores_file_twice_is_named(files: tuple[Path, Path], tmp_path: Path) -> None:
    s, r = files
    refused(invoke("meta", s, s, "-r", r, "--boot", "0"), f'{s}: field "SCORES": is given twice')
    link = tmp_path / "again.jsonl"
    link.symlink_to(s)
    refused(invoke("meta", s, link, "-r", r, "--boot", "0"), f"{link}", f"is given twice (as {s})")


def test_an_item_scored_in_two_files_names_both_lines(files: tuple[Path, Path], tmp_path: Path) -> None:
    s, r = files
    copy = tmp_path / "copy.jsonl"
    copy.write_text(s.read_text().splitlines()[4] + "\n")  # line 5 of s again, as line 1 of copy
    refused(invoke("meta", s, copy, "-r", r, "--boot", "0"),
            f'{copy}:1: field "item_id": metric "bleu2" scores item "c0:s1" twice: first at {s}:5')  # fmt: skip


def test_two_scores_files_giving_an_item_two_contexts_name_both_lines(files: tuple[Path, Path], tmp_path: Path) -> None:
    """Scores of one item by two files (two tools, or two benchmarks whose item ids meet) that differ on its context,
    dialogue, system or a tag: the first file read gave it, so the figures changed with the order of the files."""
    s, r = files
    other = tmp_path / "other.jsonl"
    other.write_text(Score(item_id="c0:s1", metric="f1", value=1.0, context_id="c9", system="s1").model_dump_json())
    refused(invoke("meta", s, other, "-r", r, "--boot", "0"),
            f'{other}:1: field "context_id": metric "f1" gives item "c0:s1" the context_id "c9", where {s}:4 gave '
            'it "c0"')  # fmt: skip
    refused(invoke("meta", other, s, "-r", r, "--boot", "0"),
            f'{s}:4: field "context_id": metric "bleu1" gives item "c0:s1" the context_id "c0", where {other}:1 gave '
            'it "c9"')  # fmt: skip


def test_an_item_scored_twice_in_one_file_names_the_lines(files: tuple[Path, Path]) -> None:
    s, r = files
    lines = s.read_text().splitlines()
    s.write_text("\n".join([*lines, lines[0]]) + "\n")
    refused(invoke("meta", s, "-r", r, "--boot", "0"), f"{s}:{len(lines) + 1}:", f"first at {s}:1")


def test_two_systems_or_two_dialogues_get_a_warning_under_the_table_and_in_table_md(tmp_path: Path) -> None:
    csv = tmp_path / "two.csv"
    csv.write_text("context,response,system,rating\nHi,Hello there friend,a,5\nHi,ok,b,2\n"
                   "Yo,Hey how are you,a,4\nYo,no,b,1\nSup,Not much really,a,4\n", encoding="utf-8")  # fmt: skip
    out = tmp_path / "b"
    res = invoke("benchmark", "--path", csv, "--response-col", "response", "--context-col", "context",
                 "--system-col", "system", "--rating-col", "rating=Overall", "-m", "length", "--boot", "20",
                 "--level", "turn,system", "-o", out, "--no-cache")  # fmt: skip
    assert res.exit_code == 0, res.output
    warning = "warning: the system-level correlations are over 2 systems only"
    assert warning in res.output
    assert warning in (out / "table.md").read_text()
    rows = [json.loads(x) for x in (out / "table.jsonl").read_text().splitlines()]
    system = [x for x in rows if x["level"] == "system"]
    assert system and all(x["value"] == pytest.approx(1.0) for x in system)  # the numbers as computed
    assert all(x["note"].startswith("only 2 systems") for x in system)
    again = invoke("meta", out / "scores.jsonl", "--path", csv, "--response-col", "response", "--context-col",
                   "context", "--system-col", "system", "--rating-col", "rating=Overall", "--boot", "0",
                   "--level", "turn,system")  # fmt: skip
    assert again.exit_code == 0, again.output
    assert warning in again.output
    pair = tmp_path / "pair.csv"  # two contexts, so two dialogues
    pair.write_text("context,response,rating\nHi,Hello there friend,5\nHi,ok,2\nYo,Hey how are you,4\nYo,no,1\n",
                    encoding="utf-8")  # fmt: skip
    own = ["--path", pair, "--response-col", "response", "--context-col", "context", "--rating-col", "rating=Overall"]
    assert invoke("score", *own, "-m", "length", "-o", tmp_path / "s.jsonl").exit_code == 0
    dialogues = invoke("meta", tmp_path / "s.jsonl", *own, "--level", "dialogue", "--boot", "0")
    assert dialogues.exit_code == 0, dialogues.output  # two dialogues gave 1.000 with no warning
    assert "warning: the dialogue-level correlations are over 2 dialogues only" in dialogues.output


def test_three_systems_get_no_warning(files: tuple[Path, Path]) -> None:
    s, r = files
    res = invoke("meta", s, "-r", r, "--boot", "0")
    assert res.exit_code == 0, res.output
    assert "system-level correlations are over" not in res.output


def test_rated_items_without_a_score_are_counted_under_the_table(files: tuple[Path, Path], tmp_path: Path) -> None:
    """Scores for 2 of the 6 rated items: the table is over those 2, and it said so only in --json's notes."""
    s, r = files
    full = invoke("meta", s, "-r", r, "--boot", "0", "-l", "turn")
    assert full.exit_code == 0 and "note:" not in full.output
    part = tmp_path / "part.jsonl"
    part.write_text("".join(line + "\n" for line in s.read_text().splitlines()
                            if json.loads(line)["item_id"] in ("c0:s0", "c1:s1")))  # fmt: skip
    res = invoke("meta", part, "-r", r, "--boot", "0", "-l", "turn", "-o", tmp_path / "out")
    note = 'note: the table is over 2 of the 6 items rated on "Overall": 4 have no score'
    assert res.exit_code == 0 and note in " ".join(res.output.split())
    assert note in (tmp_path / "out" / "table.md").read_text()


def test_an_n_a_figure_says_why_under_the_table(files: tuple[Path, Path], tmp_path: Path) -> None:
    """A constant metric and a ceiling with one annotator per item were "n/a" in the table, with the reason only in
    --json's notes; now one line per reason under the table and in table.md."""
    s, r = files
    const = tmp_path / "const.jsonl"
    const.write_text("".join(json.dumps({**json.loads(x), "metric": "k", "value": 1.0}) + "\n"
                             for x in s.read_text().splitlines() if json.loads(x)["metric"] == "length"))  # fmt: skip
    res = invoke("meta", s, const, "-r", r, "--boot", "0", "-l", "turn", "--ceiling", "-o", tmp_path / "out")
    assert res.exit_code == 0, res.output
    lines = ["n/a: k (turn): undefined: the metric gives every item the same score",
             "n/a: human (turn): undefined: the ratings have one annotator, and the ceiling compares each with the "
             "others"]  # fmt: skip (it said "no annotator overlaps")
    table_md = (tmp_path / "out" / "table.md").read_text()
    for line in lines:
        assert line in res.output.splitlines() and line in table_md.splitlines()
    full = invoke("meta", s, "-r", r, "--boot", "0", "-l", "turn")
    assert "n/a" not in full.output


def test_cis_of_too_few_resamples_get_one_warning_under_the_table(files: tuple[Path, Path], tmp_path: Path) -> None:
    """``--boot 1`` printed a "95% CI" of one value for each figure (the estimate itself outside it), with no word;
    40 resamples are the fewest whose 2.5% tail is one (tests/meta/test_correlate.py)."""
    s, r = files
    res = invoke("meta", s, "-r", r, "--boot", "1", "-l", "turn", "--method", "spearman", "-o", tmp_path / "out")
    line = "warning: 3 of 3 CIs are rough: 1 resample only, too few for 95% (40 at least)"
    assert res.exit_code == 0 and line in res.output.splitlines(), res.output
    assert line in (tmp_path / "out" / "table.md").read_text().splitlines()
    enough = invoke("meta", s, "-r", r, "--boot", "40", "-l", "turn", "--method", "spearman")
    assert enough.exit_code == 0 and "resample only" not in enough.output, enough.output
    # these files have 2 contexts, whose resamples are 3 whatever their number (tests/meta/test_correlate.py)
    line = "warning: 3 of 3 CIs are rough: 2 contexts have 3 distinct resamples only, too few for 95% (40 at least)"
    assert line in enough.output.splitlines(), enough.output


@pytest.mark.parametrize(("option", "value", "message"), [
    ("-m", "bleu2,bleu2", 'field "--metrics": metric "bleu2" is given twice'),
    ("--level", "turn,turn", 'field "--level": level "turn" is given twice'),
    ("--method", "spearman,kendall,spearman", 'field "--method": method "spearman" is given twice'),
])  # fmt: skip
def test_a_name_given_twice_is_refused(files: tuple[Path, Path], option: str, value: str, message: str) -> None:
    """Each gave its rows once, silently, where --perturb, --reference-col and the others refuse a repeat."""
    s, r = files
    refused(invoke("meta", s, "-r", r, "--boot", "0", option, value), message)


def test_metrics_given_twice_are_both_correlated(files: tuple[Path, Path]) -> None:
    """`-m bleu1 -m length` correlated length alone, silently (the last -m won): -m is repeatable, as score's."""
    s, r = files
    res = invoke("meta", s, "-r", r, "-m", "bleu1", "-m", "length", "--boot", "0", "--level", "turn", "--method",
                 "pearson", "--json")  # fmt: skip
    assert res.exit_code == 0, res.output
    assert [row["metric"] for row in json.loads(res.stdout)["rows"]] == ["bleu1", "length"]
    refused(invoke("meta", s, "-r", r, "--boot", "0", "-m", "bleu2", "-m", "bleu1,bleu2"),
            'field "--metrics": metric "bleu2" is given twice')  # fmt: skip
    refused(invoke("meta", s, "-r", r, "--boot", "0", "-m", "bleu2", "-m", ""), 'field "--metrics": empty metric name')
    assert "repeatable" in invoke("meta", "--help").output


def test_a_compare_metric_the_scores_lack_is_named_as_compare(files: tuple[Path, Path]) -> None:
    """It blamed --metrics, which was not given, and only after the table's bootstrap had run."""
    s, r = files
    refused(invoke("meta", s, "-r", r, "--boot", "0", "--compare", "bleu1,lenght"),
            'field "--compare": no scores for metric lenght (did you mean "length"?)')  # fmt: skip


def test_a_dimension_not_rated_gets_the_closest_name(files: tuple[Path, Path]) -> None:
    """It listed the dimensions; a case slip now points at the one meant."""
    s, r = files
    refused(invoke("meta", s, "-r", r, "--boot", "0", "-d", "overall"),
            'field "--dimension": ', 'no dimension "overall" (did you mean "Overall"?); it has: Overall')  # fmt: skip


def test_by_system_on_scores_that_name_no_system_is_refused(files: tuple[Path, Path], tmp_path: Path) -> None:
    """It gave one group, "system=unknown", the same figures as "all" (a table read without --system-col)."""
    s, r = files
    unnamed = tmp_path / "unnamed.jsonl"
    unnamed.write_text(s.read_text().replace('"system":"s0"', '"system":"unknown"')
                       .replace('"system":"s1"', '"system":"unknown"').replace('"system":"s2"', '"system":"unknown"'))
    assert '"system":"s' not in unnamed.read_text()
    refused(invoke("meta", unnamed, "--ratings", r, "--by", "system", "--boot", "0"),
            'field "--by": the scores name no system (each is "unknown"): score a table read with --system-col')
    res = invoke("meta", s, "--ratings", r, "--by", "system", "--boot", "0", "--json")
    assert res.exit_code == 0, res.output
    assert {row["group"] for row in json.loads(res.output)["rows"]} == {"all", "system=s0", "system=s1", "system=s2"}


def test_by_system_makes_one_group_of_the_items_naming_no_system_and_says_so(files: tuple[Path, Path],
                                                                          tmp_path: Path) -> None:
    """Items of system "" and of "unknown" were two groups, "system=" and "system=unknown", with no word."""
    s, r = files
    mixed = tmp_path / "mixed.jsonl"
    mixed.write_text(s.read_text().replace('"system":"s1"', '"system":""')
                     .replace('"system":"s2"', '"system":"unknown"'))
    res = invoke("meta", mixed, "--ratings", r, "--by", "system", "--boot", "0", "--level", "turn", "--json")
    assert res.exit_code == 0, res.output
    out = json.loads(res.output)
    assert [(row["group"], row["n_items"]) for row in out["rows"] if row["metric"] == "length"][::3] == [
        ("all", 6), ("system=s0", 2), ("no system", 4)]  # fmt: skip
    said = 'note: the group "no system" holds the items naming no system (empty or "unknown"), which the system level'
    assert any(line.startswith(said) for line in out["notes"])


def test_a_group_named_with_a_pipe_stays_one_cell_of_the_markdown_table(files: tuple[Path, Path],
                                                                           tmp_path: Path) -> None:
    """A system named "s|0" split its row of table.md into one cell more than the header (the pipe unescaped)."""
    s, r = files
    piped = tmp_path / "piped.jsonl"
    piped.write_text(s.read_text().replace('"system":"s0"', '"system":"s|0"'))
    res = invoke("meta", piped, "--ratings", r, "--by", "system", "--boot", "0", "-o", tmp_path / "out")
    assert res.exit_code == 0, res.output
    lines = [x for x in (tmp_path / "out" / "table.md").read_text().splitlines() if x.startswith("|")]
    cells = [len(x.replace("\\|", "").split("|")) for x in lines]
    assert len(lines) == 2 + 3 * 4 and set(cells) == {cells[0]}  # header, rule, 3 metrics x 4 groups
    assert sum("| system=s\\|0 |" in x for x in lines) == 3


def test_a_figure_without_ci_says_why(tmp_path: Path) -> None:
    """Five responses to one context: the bootstrap resamples contexts, so no CI, and the table showed the bare
    figure under "[95% CI]" with nothing said (table.jsonl's note was empty)."""
    csv = tmp_path / "one.csv"
    csv.write_text("context,response,q\nHi,Hello there friend,5\nHi,ok,2\nHi,Hey how are you doing,4\nHi,no,1\n"
                   "Hi,Not much really,3\n", encoding="utf-8")  # fmt: skip
    out = tmp_path / "b"
    res = invoke("benchmark", "--path", csv, "--response-col", "response", "--context-col", "context",
                 "--rating-col", "q", "--scale", "1-5", "-m", "length", "--boot", "20", "-o", out,
                 "--no-cache")  # fmt: skip
    assert res.exit_code == 0, res.output
    line = "no CI: length (turn): the items come from one context, and the bootstrap resamples contexts"
    assert line in res.output and line in (out / "table.md").read_text()
    assert "[95% CI]" not in res.output  # the column's header said it over bare figures, as if their CIs were lost
    rows = [json.loads(x) for x in (out / "table.jsonl").read_text().splitlines()]
    assert all(r["ci_low"] is None and r["value"] is not None and r["note"].startswith("no CI: ") for r in rows)


def test_a_table_without_rating_columns_says_how_to_read_them(files: tuple[Path, Path], tmp_path: Path) -> None:
    """A table read without --rating-col has no ratings: the error was 'field "--dimension": the ratings of
    own.csv has no ratings', naming an option that cannot help and not the one that does."""
    s, _ = files
    table = tmp_path / "own.csv"
    table.write_text("context,response,rating\nhi,hello,4\nbye,see you,3\n")
    line = refused(invoke("meta", s, "--path", table, "--response-col", "response", "--context-col", "context",
                          "--boot", "0"), f"{table} has no ratings to correlate with", "--rating-col COLUMN=DIMENSION")
    assert "--dimension" not in line
    empty = tmp_path / "r.jsonl"
    empty.write_text("")
    refused(invoke("meta", s, "-r", empty, "--boot", "0"), f"error: {empty} has no ratings to correlate with")


@pytest.mark.parametrize("name", ["human", "n_annotators", "system", "context_id", "dialogue_id", "tag:task"])
def test_a_metric_named_like_a_column_of_the_table_is_refused_on_its_line(files: tuple[Path, Path], name: str) -> None:
    """It was a pandas traceback ("columns overlap", "Grouper ... not 1-dimensional"); "dialogue_id" changed every
    other metric's dialogue-level figures, silently, and "tag:task" was taken as the tag task by --by."""
    s, r = files
    lines = s.read_text().splitlines()
    lines[2] = lines[2].replace('"metric":"length"', json.dumps({"metric": name})[1:-1])
    s.write_text("\n".join(lines) + "\n")
    refused(invoke("meta", s, "-r", r, "--boot", "0"), f'{s}:3: field "metric": metric name "{name}" is taken by')


def test_scores_without_context_or_system_take_them_from_the_candidates_rated(tmp_path: Path) -> None:
    """Scores of only item_id, metric and value (another tool's) were correlated as if each item were its own
    context (12 groups, not 4: other CIs) and of no system (no system row), though the candidates knew both."""
    from scipy import stats

    folder = tmp_path / "bench"
    folder.mkdir()
    values = {(c, s): float((c * 7 + s * 3) % 5 + s) for c in range(4) for s in range(3)}
    human = {(c, s): float((c + 2 * s) % 4 + (0, 3, 1)[s]) for c in range(4) for s in range(3)}
    dialogues = [{"id": f"d{c}", "turns": [{"speaker": "A", "text": f"hi {c}"}]} for c in range(4)]
    cands = [{"id": f"d{c}:s{s}", "dialogue_id": f"d{c}", "turn_index": 1, "system": f"s{s}", "text": "w " * (s + 1)}
             for c in range(4) for s in range(3)]  # fmt: skip
    ratings = [Rating(item_id=f"d{c}:s{s}", dimension="Overall", annotator="a", value=v) for (c, s), v in human.items()]
    for name, rows in (("dialogues", dialogues), ("candidates", cands)):
        (folder / f"{name}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (folder / "ratings.jsonl").write_text("".join(r.model_dump_json() + "\n" for r in ratings))
    bare = tmp_path / "bare.jsonl"
    bare.write_text("".join(json.dumps({"item_id": f"d{c}:s{s}", "metric": "m", "value": v}) + "\n"
                            for (c, s), v in values.items()))  # fmt: skip
    res = invoke("meta", bare, "--path", folder, "--method", "kendall", "--boot", "0", "--json")
    assert res.exit_code == 0, res.output
    rows = {r["level"]: r for r in json.loads(res.stdout)["rows"]}
    assert rows["turn"]["n_groups"] == 4  # the four contexts, as the bootstrap resamples them (it was 12)
    means = [(sum(values[(c, s)] for c in range(4)) / 4, sum(human[(c, s)] for c in range(4)) / 4) for s in range(3)]
    expected = stats.kendalltau([m for m, _ in means], [h for _, h in means]).statistic
    assert rows["system"]["n_groups"] == 3 and rows["system"]["value"] == pytest.approx(expected)  # 1/3, by scipy


def test_bare_scores_take_their_candidates_tags_for_by(tmp_path: Path) -> None:
    """Scores of only item_id, metric and value had no tags: `--by topic` said 'no tag "topic" on the scores',
    though the candidates (their dialogue's domain, their own tags) carried it, as dialeval's own scores do."""
    from scipy import stats

    folder = tmp_path / "bench"
    folder.mkdir()
    dialogues = [{"id": f"d{c}", "domain": "odd" if c % 2 else "even", "turns": [{"speaker": "A", "text": "hi"}]}
                 for c in range(6)]  # fmt: skip
    cands = [{"id": f"d{c}", "dialogue_id": f"d{c}", "turn_index": 1, "system": "s", "text": "w",
              "tags": {"topic": "a" if c < 3 else "b"}} for c in range(6)]  # fmt: skip
    values, human = [1.0, 2.0, 4.0, 3.0, 5.0, 6.0], [1.0, 3.0, 2.0, 4.0, 6.0, 5.0]
    ratings = [Rating(item_id=f"d{c}", dimension="Overall", annotator="a", value=v) for c, v in enumerate(human)]
    for name, rows in (("dialogues", dialogues), ("candidates", cands)):
        (folder / f"{name}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (folder / "ratings.jsonl").write_text("".join(r.model_dump_json() + "\n" for r in ratings))
    bare = tmp_path / "bare.jsonl"
    bare.write_text("".join(json.dumps({"item_id": f"d{c}", "metric": "m", "value": v}) + "\n"
                            for c, v in enumerate(values)))  # fmt: skip
    for by, groups in (("topic", {"a": [0, 1, 2], "b": [3, 4, 5]}), ("domain", {"even": [0, 2, 4], "odd": [1, 3, 5]})):
        res = invoke("meta", bare, "--path", folder, "--method", "pearson", "--level", "turn", "--boot", "0",
                     "--by", by, "--json")  # fmt: skip
        assert res.exit_code == 0, res.output
        rows = {r["group"]: r["value"] for r in json.loads(res.stdout)["rows"]}
        for group, ids in groups.items():  # each subset's Pearson r, by scipy on its three items
            expected = stats.pearsonr([values[i] for i in ids], [human[i] for i in ids]).statistic
            assert rows[f"{by}={group}"] == pytest.approx(expected)


def test_meta_compare_saves_the_paired_test_and_the_left_out_note_for_report(files: tuple[Path, Path],
                                                                            tmp_path: Path) -> None:
    """The paired test and "left out N of M scores" were on the screen only: table.md had neither, and
    dialeval report could not show the paired test."""
    from scipy import stats

    s, r = files
    recs = [json.loads(line) for line in s.read_text().splitlines()]
    for rec, value in zip((x for x in recs if x["metric"] == "length"), (0, 2, 3, 1, 1, 4), strict=True):
        rec["value"] = float(value)  # not bleu1's values shifted by 2: a difference of 0
    null = {"item_id": "c9:s0", "metric": "bleu1", "value": None, "extras": {"error": "HTTP 500"}}
    s.write_text("".join(json.dumps(x) + "\n" for x in [*recs, null]))
    out = tmp_path / "out"
    res = invoke("meta", s, "-r", r, "--compare", "bleu1,length", "--level", "turn", "--method", "pearson",
                 "--boot", "50", "-o", out)  # fmt: skip
    assert res.exit_code == 0, res.output
    table_md = (out / "table.md").read_text()
    assert "left out 1 of 19 scores: 1 null (1 x HTTP 500)" in table_md
    assert "paired test (turn pearson, 6 items): bleu1 - length = " in table_md
    human = {json.loads(line)["item_id"]: json.loads(line)["value"] for line in r.read_text().splitlines()}
    by = {m: [(x["value"], human[x["item_id"]]) for x in recs if x["metric"] == m] for m in ("bleu1", "length")}
    want = {m: stats.pearsonr(*zip(*pairs, strict=True)).statistic for m, pairs in by.items()}
    paired = json.loads((out / "compare.json").read_text())
    assert paired["difference"] == pytest.approx(want["bleu1"] - want["length"])
    assert (paired["metric_a"], paired["metric_b"], paired["n_items"]) == ("bleu1", "length", 6)
    report = tmp_path / "report.md"
    assert invoke("report", out, "-o", report).exit_code == 0
    assert "paired test (turn pearson, 6 items): bleu1 - length" in report.read_text()
    again = invoke("meta", s, "-r", r, "--level", "turn", "--method", "pearson", "--boot", "0", "-o", out)
    assert again.exit_code == 0 and "removed" in again.output, again.output
    assert not (out / "compare.json").exists()  # report showed an earlier run's paired test as this run's


def test_json_carries_the_lines_under_the_table(files: tuple[Path, Path], tmp_path: Path) -> None:
    """--json dropped every line the screen prints under the table: 10 resamples' "the CIs are rough" (the screen and
    table.md say it) reached a script reading the JSON as CIs like any other."""
    s, r = files
    screen = invoke("meta", s, "-r", r, "--boot", "10", "-l", "turn", "--method", "pearson", "-o", tmp_path / "t")
    assert screen.exit_code == 0, screen.output
    res = invoke("meta", s, "-r", r, "--boot", "10", "-l", "turn", "--method", "pearson", "--json")
    assert res.exit_code == 0, res.output
    notes = json.loads(res.stdout)["notes"]
    # 3 metrics, 1 level, 1 method: each CI on 10 resamples, fewer than the 40 a 95% CI needs (rough_reason)
    assert "warning: 3 of 3 CIs are rough: 10 resamples only, too few for 95% (40 at least)" in notes
    assert all(line in (tmp_path / "t" / "table.md").read_text() for line in notes)  # table.md's own lines
    bench = invoke("benchmark", "-m", "length", "--limit", "3", "--boot", "10", "-l", "turn", "--method", "pearson",
                   "--no-cache", "-o", tmp_path / "b", "--json")  # fmt: skip
    assert bench.exit_code == 0, bench.output
    said = json.loads(bench.stdout)["notes"]
    assert "warning: 1 of 1 CI is rough: 10 resamples only, too few for 95% (40 at least)" in said
    assert all(line in (tmp_path / "b" / "table.md").read_text() for line in said)


def test_the_dialogue_level_on_scores_that_name_no_dialogue_is_refused(files: tuple[Path, Path],
                                                                       tmp_path: Path) -> None:
    """Scores naming no dialogue (another tool's) make each item its own dialogue: ``--level dialogue`` printed the
    turn-level figures, with the turn level's p-values, as dialogue-level ones. Scores of whole dialogues rated per
    dialogue (their item ids the dialogues') name none either, and still correlate."""
    s, r = files
    refused(invoke("meta", s, "-r", r, "--boot", "0", "-l", "turn,dialogue"),
            'field "--level": the dialogue level needs the dialogue of each item, and the scores name none')
    named = tmp_path / "named.jsonl"  # dialogue = context (c0, c1): the level runs
    named.write_text("".join(json.dumps({**json.loads(x), "dialogue_id": json.loads(x)["context_id"]}) + "\n"
                             for x in s.read_text().splitlines()))  # fmt: skip
    assert invoke("meta", named, "-r", r, "--boot", "0", "-l", "dialogue").exit_code == 0
    whole = tmp_path / "whole.jsonl"
    whole.write_text("".join(Score(item_id=f"d{i}", metric="m", value=float(i)).model_dump_json() + "\n"
                             for i in range(4)))  # fmt: skip
    rated = tmp_path / "rated.jsonl"
    rated.write_text("".join(Rating(item_id=f"d{i}", dimension="Overall", annotator="a", value=v, level="dialogue")
                             .model_dump_json() + "\n" for i, v in enumerate((1, 3, 2, 4))))  # fmt: skip
    res = invoke("meta", whole, "-r", rated, "--boot", "0", "-l", "dialogue", "--method", "spearman", "--json")
    assert res.exit_code == 0, res.output
    (row,) = json.loads(res.output)["rows"]
    assert row["value"] == pytest.approx(0.8)  # Spearman of 0,1,2,3 and 1,3,2,4: 1 - 6 * 2 / (4 * 15) = 0.8


def test_compare_without_resamples_says_the_bootstrap_is_off(files: tuple[Path, Path]) -> None:
    """`meta --boot 0 --compare A,B` printed "[n/a, n/a], bootstrap p = n/a" with no word of why."""
    s, r = files
    res = invoke("meta", s, "-r", r, "--compare", "bleu1,length", "--level", "turn", "--method", "pearson",
                 "--boot", "0")  # fmt: skip
    assert res.exit_code == 0, res.output
    assert "bootstrap p = n/a" in res.output
    # bleu1 and length are one another plus 2, so Williams' t is 0/0 (it printed "Williams t = 0.000 (p = 0.500)")
    assert ("(no CI or bootstrap p: the bootstrap is off (--n-boot 0); no Williams test: the two metrics correlate "
            "perfectly with each other (r = 1.000), where its t is 0/0)") in " ".join(res.output.split())


def test_a_metric_whose_name_has_a_comma_is_refused_by_name_where_an_option_would_split_it(
    files: tuple[Path, Path],
) -> None:
    """-m and --compare split at commas: -m "rouge,l" said "no scores for metrics l, rouge" of scores that hold
    "rouge,l", with no way to pick it. One error names the metric and the way on; -m of the other metrics, or none,
    still reads the scores (the comma name is correlated with the others when -m is left out)."""
    s, r = files
    recs = [json.loads(line) for line in s.read_text().splitlines()]
    s.write_text(s.read_text() + "".join(json.dumps({**x, "metric": "rouge,l"}) + "\n"
                                         for x in recs if x["metric"] == "length"))  # fmt: skip
    fix = ('field "--metrics": metric "rouge,l" has a comma in its name, and --metrics splits names at commas: '
           'rename it in the scores (e.g. "rouge_l") to pick it, or leave out --metrics to correlate every metric')
    refused(invoke("meta", s, "-r", r, "-m", "rouge,l", "--boot", "0"), fix)
    refused(invoke("meta", s, "-r", r, "-m", "bleu1, rouge ,l", "--boot", "0"), fix)
    refused(invoke("meta", s, "-r", r, "--compare", "rouge,l", "--boot", "0"),
            fix.replace("--metrics", "--compare"))  # fmt: skip
    for asked, want in ((("-m", "bleu1,length"), ["bleu1", "length"]), ((), ["bleu1", "bleu2", "length", "rouge,l"])):
        res = invoke("meta", s, "-r", r, *asked, "--boot", "0", "--level", "turn", "--method", "pearson", "--json")
        assert res.exit_code == 0, res.output
        assert sorted(row["metric"] for row in json.loads(res.stdout)["rows"]) == want


def test_scores_of_items_rated_only_i_dont_know_are_counted_as_left_out(files: tuple[Path, Path],
                                                                       tmp_path: Path) -> None:
    """Two of the six items rated "I don't know" by their only annotator: their 6 scores (2 items x 3 metrics) were
    left out of the table (4 items in each row) while the lines under it said nothing was; the row notes alone, in
    --json, said so."""
    s, r = files
    lines = [json.loads(x) for x in r.read_text().splitlines()]
    for rating in lines:
        if rating["item_id"] in ("c0:s0", "c1:s1"):
            rating.update(value=None, dont_know=True)
    r.write_text("".join(json.dumps(x) + "\n" for x in lines))
    res = invoke("meta", s, "-r", r, "--boot", "0", "-l", "turn", "--method", "pearson", "-o", tmp_path / "out")
    assert res.exit_code == 0, res.output
    note = 'left out 6 of 18 scores: 6 of items rated on "Overall" with no number ("I don\'t know" or a label)'
    assert note in " ".join(res.output.split())
    assert note in (tmp_path / "out" / "table.md").read_text()
    rows = [json.loads(x) for x in (tmp_path / "out" / "table.jsonl").read_text().splitlines()]
    assert {row["n_items"] for row in rows} == {4}  # the 6 - 2 items with a number: the note counts what they lack


def test_a_metric_of_two_signatures_is_refused_naming_both_lines(files: tuple[Path, Path], tmp_path: Path) -> None:
    """bleu1 of two runs concatenated (lowercase:yes for some items, lowercase:no for the rest) was correlated as one
    metric, silently. The parts of one split metric (style with target=tag:NAME signs each style) are kept."""
    s, r = files
    records = [json.loads(x) for x in s.read_text().splitlines()]
    for n, rec in enumerate(records):
        rec["signature"] = f"{rec['metric']}|lowercase:{'yes' if n < 9 else 'no'}|version:0.1.0"
    mixed = tmp_path / "mixed.jsonl"
    mixed.write_text("".join(json.dumps(x) + "\n" for x in records))
    # line 10 is the first of lowercase:no, bleu1 of item c1:s0; bleu1's first line is line 1
    refused(invoke("meta", mixed, "-r", r, "--boot", "0"),
            f'{mixed}:10: field "signature": metric "bleu1" was computed here by "bleu1|lowercase:no|version:0.1.0", '
            f'at {mixed}:1 by "bleu1|lowercase:yes|version:0.1.0"')  # fmt: skip
    for n, rec in enumerate(records):  # style's parts: one signature per target, each on its own items
        rec["signature"] = f"{rec['metric']}|target:{'positive|vader:3' if n < 9 else 'formal|spacy:3.8'}"
    mixed.write_text("".join(json.dumps(x) + "\n" for x in records))
    assert invoke("meta", mixed, "-r", r, "--boot", "0").exit_code == 0


@pytest.mark.parametrize("value", [True, False])
@pytest.mark.parametrize(("which", "line", "why"), [(0, 4, "a score's value is"), (1, 2, "a rating is a number")])
def test_a_boolean_value_is_refused_on_its_line(files: tuple[Path, Path], value: bool, which: int, line: int,
                                                 why: str) -> None:  # fmt: skip
    """A JSON true or false, in a scores or a ratings file, was read as 1.0 or 0.0 (pydantic's float takes a bool) and
    correlated, silently."""
    path = files[which]
    lines = path.read_text().splitlines()
    lines[line - 1] = json.dumps({**json.loads(lines[line - 1]), "value": value})
    path.write_text("\n".join(lines) + "\n")
    refused(invoke("meta", files[0], "-r", files[1], "--boot", "0"),
            f'{path}:{line}: field "value": {json.dumps(value)} is not a number: {why}')  # fmt: skip


def test_compare_with_a_metric_never_scored_says_why_no_comparison_is_made(files: tuple[Path, Path]) -> None:
    """length all null (HTTP 500): it printed "a - b = n/a ... (bleu1: undefined: no item with both a score and a
    rating; ...)" over 0 items, though bleu1 has six such items: the test ran on the items both metrics score."""
    s, r = files
    recs = [json.loads(line) for line in s.read_text().splitlines()]
    for rec in recs:
        if rec["metric"] == "length":
            rec.update(value=None, extras={"error": "HTTP 500"})
    s.write_text("".join(json.dumps(x) + "\n" for x in recs))
    res = invoke("meta", s, "-r", r, "--compare", "bleu1,length", "--level", "turn", "--method", "pearson",
                 "--boot", "20", "--json")  # fmt: skip
    assert res.exit_code == 0, res.output
    paired = json.loads(res.stdout)["paired"]
    assert paired["note"] == "bleu1 and length are not compared: length has no score with a value (its 6 are null)"
    assert paired["n_items"] == 0 and paired["difference"] is None
    screen = invoke("meta", s, "-r", r, "--compare", "bleu1,length", "--level", "turn", "--method", "pearson",
                    "--boot", "20")  # fmt: skip
    assert ("paired test (turn pearson): bleu1 and length are not compared: length has no score with a value (its 6 "
            "are null)") in " ".join(screen.output.split())
    assert "bleu1: undefined" not in screen.output  # bleu1 has six items with both


def test_compare_of_metrics_scoring_no_item_in_common_says_so(files: tuple[Path, Path]) -> None:
    """bleu1 on items c0:*, length on c1:* only: each correlates on its three items, the paired test on none."""
    s, r = files
    recs = [json.loads(line) for line in s.read_text().splitlines()]
    kept = [x for x in recs if (x["metric"], x["item_id"][:2]) in {("bleu1", "c0"), ("length", "c1")}]
    s.write_text("".join(json.dumps(x) + "\n" for x in kept))
    res = invoke("meta", s, "-r", r, "--compare", "bleu1,length", "--level", "turn", "--method", "pearson",
                 "--boot", "0", "--json")  # fmt: skip
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["paired"]["note"] == (
        'bleu1 and length are not compared: no item rated on "Overall" has a score of both')


@pytest.mark.parametrize(("name", "why"), [("", 'metric name "" is empty'),
                                           (" length", 'metric name " length" has spaces at its ends')])  # fmt: skip
def test_a_metric_name_empty_or_with_spaces_at_its_ends_is_refused_on_its_line(files: tuple[Path, Path], name: str,
                                                                               why: str) -> None:
    """It was correlated as a row with a blank name, or a second "length" row: -m (which strips names) reached
    neither ("-m ' length'" picked length)."""
    s, r = files
    lines = s.read_text().splitlines()
    lines[2] = lines[2].replace('"metric":"length"', json.dumps({"metric": name})[1:-1])
    s.write_text("\n".join(lines) + "\n")
    refused(invoke("meta", s, "-r", r, "--boot", "0"), f'{s}:3: field "metric": {why}')


def _named_and_unnamed(tmp_path: Path) -> list[Score]:
    """Six items of systems a, b, c (metric 1, 2, 3; ratings 3, 2, 1) and two of no system, written with ratings."""
    rows = [(f"{c}{s}", s, m, 4 - m) for c in "xy" for s, m in (("a", 1), ("b", 2), ("c", 3))]
    rows += [("u1", "", 3, 3), ("u2", "unknown", 3, 3)]
    scores = [Score(item_id=i, metric="m", value=m, context_id=i[0], system=s) for i, s, m, _ in rows]
    ratings = [Rating(item_id=i, dimension="q", annotator="w", value=h) for i, _, _, h in rows]
    (tmp_path / "s.jsonl").write_text("".join(x.model_dump_json() + "\n" for x in scores))
    (tmp_path / "r.jsonl").write_text("".join(x.model_dump_json() + "\n" for x in ratings))
    return scores


def test_items_naming_no_system_are_left_out_of_the_system_level_and_counted_under_the_table(tmp_path: Path) -> None:
    """They were one more "system": -0.25 where the named ones give -1, with no word."""
    _named_and_unnamed(tmp_path)
    res = invoke("meta", tmp_path / "s.jsonl", "-r", tmp_path / "r.jsonl", "--method", "pearson", "--boot", "0",
                 "--json")  # fmt: skip
    assert res.exit_code == 0, res.output
    out = json.loads(res.output)
    (system,) = [x for x in out["rows"] if x["level"] == "system"]
    assert system["value"] == pytest.approx(-1.0) and system["n_groups"] == 3  # system means (1, 2, 3), (3, 2, 1)
    assert ('note: the system level left out 2 items naming no system (empty or "unknown"); the other '
            "levels use them") in out["notes"]  # fmt: skip


def test_systems_naming_none_do_not_count_toward_the_three_of_the_default_system_level(tmp_path: Path) -> None:
    """Two named systems and items of "" and "unknown" read as four systems: the system level was on by default."""
    scores = _named_and_unnamed(tmp_path)
    two = [x for x in scores if x.system != "c"]  # two named systems and unnamed items: no system level by default
    (tmp_path / "two.jsonl").write_text("".join(x.model_dump_json() + "\n" for x in two))
    res = invoke("meta", tmp_path / "two.jsonl", "-r", tmp_path / "r.jsonl", "--method", "pearson", "--boot", "0",
                 "--json")  # fmt: skip
    assert res.exit_code == 0, res.output
    assert {x["level"] for x in json.loads(res.output)["rows"]} == {"turn"}


def test_items_naming_no_dialogue_are_left_out_of_the_dialogue_level_and_counted_under_the_table(
        tmp_path: Path) -> None:  # fmt: skip
    """Each was a dialogue of its own, with no word: -0.673 where the named dialogues give 0.5.

    Dialogues d1, d2, d3 (metric 1, 2, 3; ratings 1, 3, 2, two items each): deviations (-1, 0, 1) and (-1, 1, 0),
    Pearson 1 / sqrt(2 * 2) = 0.5; u1 and u2 name no dialogue.
    """
    rows = [(f"{d}:{i}", d, m, h) for d, m, h in (("d1", 1, 1), ("d2", 2, 3), ("d3", 3, 2)) for i in range(2)]
    rows += [("u1", "", 9, 0), ("u2", "", 8, 1)]
    scores = [Score(item_id=i, metric="m", value=m, dialogue_id=d, context_id=i) for i, d, m, _ in rows]
    ratings = [Rating(item_id=i, dimension="q", annotator="w", value=h) for i, _, _, h in rows]
    (tmp_path / "s.jsonl").write_text("".join(x.model_dump_json() + "\n" for x in scores))
    (tmp_path / "r.jsonl").write_text("".join(x.model_dump_json() + "\n" for x in ratings))
    res = invoke("meta", tmp_path / "s.jsonl", "-r", tmp_path / "r.jsonl", "--level", "turn,dialogue", "--method",
                 "pearson", "--boot", "0", "--json")  # fmt: skip
    assert res.exit_code == 0, res.output
    out = json.loads(res.output)
    (dialogue,) = [x for x in out["rows"] if x["level"] == "dialogue"]
    assert dialogue["value"] == pytest.approx(0.5, abs=1e-12) and dialogue["n_groups"] == 3
    assert "note: the dialogue level left out 2 items naming no dialogue; the other levels use them" in out["notes"]
    text = invoke("meta", tmp_path / "s.jsonl", "-r", tmp_path / "r.jsonl", "--level", "turn,dialogue", "--boot", "0")
    assert "note: the dialogue level left out 2 items naming no dialogue" in " ".join(text.output.split())


def test_the_ceiling_of_a_dimension_rated_per_dialogue_is_refused_naming_ceiling(tmp_path: Path) -> None:
    """``--ceiling`` on ratings per dialogue said 'field "--dimension": no numeric turn ratings for dimension
    "Overall"', after the bootstrap, blaming a dimension that correlates (the same run without --ceiling does)."""
    whole = tmp_path / "whole.jsonl"
    whole.write_text("".join(Score(item_id=f"d{i}", metric="m", value=float(i)).model_dump_json() + "\n"
                             for i in range(4)))  # fmt: skip
    rated = tmp_path / "rated.jsonl"
    rated.write_text("".join(Rating(item_id=f"d{i}", dimension="Overall", annotator=a, value=(i + n) % 3 + 1,
                                    level="dialogue").model_dump_json() + "\n"
                             for i in range(4) for n, a in enumerate("ab")))  # fmt: skip
    assert invoke("meta", whole, "-r", rated, "--boot", "0").exit_code == 0
    refused(invoke("meta", whole, "-r", rated, "--boot", "0", "--ceiling"),
            'field "--ceiling": "Overall" is rated per dialogue', "leave out --ceiling")
