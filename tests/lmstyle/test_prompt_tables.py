"""The Fig. 3 prompt against the paper's text, and the published Tables 2/4/5 against each other."""

from __future__ import annotations

from pathlib import Path

import pytest

from dialeval.errors import InputError
from dialeval.lmstyle.prompt import STYLES, Pair, build_prompt, read_pairs, split_shots
from dialeval.lmstyle.tables import SPECS, aggregate, build_table
from dialeval.published import load_table
from dialeval.schema import Score

PAPER = Path(__file__).resolve().parents[2].parent / "shared" / "papers" / "000_7d31a239bcb79a55.txt"


def paper_lines() -> list[str]:
    if not PAPER.is_file():
        pytest.skip(f"paper text not found at {PAPER}")
    return PAPER.read_text("utf-8").split("\n")


def test_prompt_matches_figure_3(shared_data: Path) -> None:
    fig3 = next(line for line in paper_lines() if line.startswith("###Speaker: Frank"))
    shots, evaluated = split_shots(read_pairs(shared_data, "dd"), 50)
    assert len(shots) == 5 and len(evaluated) == 50
    ours = build_prompt(shots, "{Query}", "formal")
    # the paper's PDF text marks {Query} and Formal in italics/bold, and prints the data's "’ s" as "'s"
    assert ours.replace(" ’ s", " 's") == fig3.replace("*", "")
    for style, word in STYLES.items():  # only the style word changes
        assert build_prompt(shots, "{Query}", style) == ours.replace("###Formal Response:", f"###{word} Response:")


def test_bst_shots_are_its_last_five_lines(shared_data: Path) -> None:
    pairs = read_pairs(shared_data, "bst")
    shots, _ = split_shots(pairs, 3)
    assert shots == pairs[-5:] and len(pairs) == 1000
    assert build_prompt(shots, "Hi", "negative").endswith("###Speaker: Hi ###Negative Response:")


def test_errors_name_the_field_or_file(tmp_path: Path, shared_data: Path) -> None:
    with pytest.raises(InputError, match=r"between 1 and 995"):
        split_shots(read_pairs(shared_data, "dd"), 996)
    with pytest.raises(InputError, match=r"formality_query\.txt"):
        read_pairs(tmp_path, "dd")
    with pytest.raises(InputError, match='unknown style "polite"'):
        build_prompt([], "q", "polite")


def _write_bst(root: Path, queries: bytes, refs: bytes) -> None:
    (root / "lmstyle/BST/ref").mkdir(parents=True, exist_ok=True)
    (root / "lmstyle/BST/query.txt").write_bytes(queries)
    (root / "lmstyle/BST/ref/ref.txt").write_bytes(refs)


def _refused_by_read_pairs_and_generate(tmp_path: Path, queries: bytes, refs: bytes, said: str) -> None:
    """Assert that read_pairs and generate refuse these BST files, saying ``said`` (from the lmstyle folder on)."""
    from tests.commands.cli_runner import invoke, refused

    _write_bst(tmp_path, queries, refs)
    with pytest.raises(InputError) as got:
        read_pairs(tmp_path, "bst")
    assert str(got.value).startswith(str(tmp_path / "lmstyle" / said)), got.value
    res = invoke("generate", "--data", tmp_path, "--limit", "1", "--datasets", "bst", "-o", tmp_path / "g")
    refused(res, said)
    assert not (tmp_path / "g").exists()


def test_query_files_as_editors_save_them(tmp_path: Path) -> None:
    # a query file ending with a line break beside a reference file without one was refused ("3 queries but 2
    # references"), and a BOM (Notepad's UTF-8) stayed in the first query, which the prompt then held
    _write_bst(tmp_path, b"\xef\xbb\xbfHi !\r\nBye\r\n", b"Hello\nCiao")
    assert read_pairs(tmp_path, "bst") == [Pair("Hi !", "Hello"), Pair("Bye", "Ciao")]


def test_query_file_not_utf8_names_file_and_line(tmp_path: Path) -> None:
    # it was Python's "'utf-8' codec can't decode byte 0xe9 in position 4", naming no file
    _write_bst(tmp_path, b"Hi\ncaf\xe9\n", b"a\nb\n")
    with pytest.raises(InputError, match=r"BST/query\.txt:2: "):
        read_pairs(tmp_path, "bst")


def _appendix_rows(header: str) -> dict[tuple[str, str], list[float]]:
    """Rows of Table 6 (header "Formal") or Table 7 ("Positive"): 11 models x 2 datasets, ACC/ChatGPT/NLL."""
    lines = paper_lines()
    # the last such header: Tables 4/5 start the same way but have five columns per style
    start = max(i for i, line in enumerate(lines) if line.startswith(f"Dataset\tModel\t{header}\t\t\t"))
    rows: dict[tuple[str, str], list[float]] = {}
    group = ""
    for line in lines[start + 2 : start + 24]:
        parts = line.split("\t")
        group = parts[0] or group
        rows[(group, parts[1])] = [float(x) for x in parts[2:]]
    return rows


def test_published_tables_agree_with_each_other() -> None:
    t2, t4 = load_table("lmstyle-table2"), load_table("lmstyle-table4")
    t5 = load_table("lmstyle-table5")
    assert len(t2.rows["all"]) == 11 and t4.columns == [c for c, _, _ in SPECS["table4"][2]]
    assert t5.columns == [c for c, _, _ in SPECS["table5"][2]] and t2.columns == [c for c, _, _ in SPECS["table2"][2]]
    for t, header in ((t4, "Formal"), (t5, "Positive")):  # Tables 6/7 repeat ACC/ChatGPT/NLL of Tables 4/5
        appendix = _appendix_rows(header)
        assert len(appendix) == 22
        for group, models in t.rows.items():
            for model, vals in models.items():
                assert [vals[0], vals[4], vals[3], vals[5], vals[9], vals[8]] == appendix[(group, model)]
        # Table 2 is the mean over the two datasets and the two styles of Tables 6/7, for all 11 models
        offset = 0 if header == "Formal" else 3
        for model, vals in t2.rows["all"].items():
            cells = [appendix[(g, model)] for g in ("Daily Dialog", "Blended Skill Talk")]
            for k in range(3):  # ACC%, ChatGPT, NLL
                mean = sum(c[k] + c[k + 3] for c in cells) / 4
                assert abs(mean - vals[offset + k]) <= 0.06, (model, header, k)


def _scores() -> list[Score]:
    out = []
    for ds in ("dd", "bst"):
        for style in ("formal", "informal", "positive", "negative"):
            for i, (match, nll_inv, judge) in enumerate(((1.0, 50.0, 80.0), (0.0, 25.0, None))):
                tags = {"dataset": ds, "style": style}
                for metric, v in (("style_match", match), ("lm_likelihood", nll_inv),
                                  ("judge:lmstyle-appropriateness", judge), ("sbert_ref", 0.25), ("sacrebleu", 4.0)):
                    out.append(Score(item_id=f"{ds}{style}{i}", metric=metric, value=v, system="m", tags=tags))
    return out


def test_layout_of_tables_2_4_5() -> None:
    scores = _scores()
    t4 = build_table("table4", scores)
    assert [r[0] for r in t4.rows] == [("Daily Dialog", "m"), ("Blended Skill Talk", "m")]
    assert t4.rows[0][2][:5] == [50.0, 4.0, 25.0, aggregate("NLL", [50.0, 25.0]), 80.0]
    md = t4.to_markdown().splitlines()
    assert md[2] == "| Dataset | Model | source | " + " | ".join(t4.columns) + " |"
    # the judge scored one of the cell's two responses: the cell says so
    assert md[4].startswith("| Daily Dialog | m | ours | 50.0 | 4.0 | 25.0 | 33.3 | 80.0 (1/2) |")
    assert [r["scored"] for r in t4.records()[:5]] == [None, None, None, None, "1/2"]
    t2 = build_table("table2", scores, compare_paper=True)
    nll = aggregate("NLL", [50.0, 25.0])
    assert t2.rows[0] == (("", "m"), "ours", [50.0, 80.0, nll, 50.0, 80.0, nll])
    assert [r[1] for r in t2.rows].count("paper") == 11
    assert "| Model | source | Formality ACC% |" in t2.to_markdown()
    t5 = build_table("table5", scores, compare_paper=True)
    assert sum(1 for r in t5.rows if r[1] == "paper") == 8 and t5.records()[0]["column"] == "Positive ACC%"


@pytest.mark.parametrize(
    ("queries", "refs", "said"),
    [  # line i of each file is a pair: the first line of the longer file past the shorter one's last has none
        (b"a\nb\nc\n", b"1\n2\n", "BST/query.txt:3: a query with no reference: ref.txt has 2 lines"),
        (b"a\nb", b"1\n2\n3\n4\n", "BST/ref/ref.txt:3: a reference with no query: query.txt has 2 lines"),
        (b"", b"1\n", "BST/ref/ref.txt:1: a reference with no query: query.txt has 0 lines"),
    ],
)
def test_query_and_reference_files_of_different_lengths_name_the_first_line_without_a_partner(
    tmp_path: Path, queries: bytes, refs: bytes, said: str
) -> None:
    """It said "3 queries (in query.txt) but 2 references", naming the reference file and no line: where the two
    files part was left to the reader. The line with no partner is named, as other readers name a line."""
    _refused_by_read_pairs_and_generate(tmp_path, queries, refs, said)


def test_a_blank_query_line_is_refused_naming_its_file_and_line(tmp_path: Path) -> None:
    """A blank line among the queries was read as an empty query: a response was generated to nothing, and scored.
    A blank reference is still kept (that response has none)."""
    from tests.commands.cli_runner import invoke, refused

    folder = tmp_path / "lmstyle" / "daily_dialog"
    (folder / "ref").mkdir(parents=True)
    (folder / "formality_query.txt").write_text("Hi there\n  \nHow are you ?\na\nb\nc\nd\ne\n")
    (folder / "ref" / "formality_ref.txt").write_text("Hello\n\nFine\n1\n2\n3\n4\n5\n")
    line = refused(invoke("generate", "--data", tmp_path, "--limit", "1", "--datasets", "dd", "-o", tmp_path / "g"),
                   "formality_query.txt:2: a blank query")  # fmt: skip
    assert not (tmp_path / "g").exists(), line
    (folder / "formality_query.txt").write_text("Hi there\nYo\nHow are you ?\na\nb\nc\nd\ne\n")
    assert read_pairs(tmp_path, "dd")[1] == Pair("Yo", "")


def test_table_2_over_one_dataset_says_so() -> None:
    """lmstyle --datasets dd titled Table 2 "both datasets", and --compare-paper put the paper's rows, means over
    both datasets, beside ours, means over Daily Dialog only. The title now names the dataset it averages."""
    dd_only = [s for s in _scores() if s.tags["dataset"] == "dd"]
    t2 = build_table("table2", dd_only, compare_paper=True)
    assert t2.title == "Table 2: formality and sentiment tasks, Daily Dialog only (the paper's rows: both datasets)"
    assert t2.to_markdown().startswith(f"### {t2.title}\n")
    assert build_table("table2", _scores()).title == "Table 2: formality and sentiment tasks, both datasets"
    # lmstyle_tables.jsonl carries it, and the report rebuilt from those lines shows it (it said "both datasets")
    from dialeval.report.build import lmstyle_tables

    assert {c.title for c in t2.cells()} == {t2.title}
    assert [t.caption for t in lmstyle_tables(t2.records())] == [f"LMStyle {t2.title}"]
    untitled = [{k: v for k, v in r.items() if k != "title"} for r in t2.records()]  # a file written before
    assert [t.caption for t in lmstyle_tables(untitled)] == ["LMStyle Table 2: formality and sentiment tasks, both "
                                                             "datasets"]


def test_table_2_over_some_styles_says_which() -> None:
    """lmstyle --styles formal,positive titled Table 2 as if it averaged both styles of each task: its Formality
    column was the Formal responses' mean and its Sentiment column the Positive ones', beside the paper's rows over
    all four. The title (table.md and each cell of lmstyle_tables.jsonl) now names the styles it averages."""
    some = [s for s in _scores() if s.tags["style"] in ("formal", "positive")]
    t2 = build_table("table2", some, compare_paper=True)
    assert t2.title == ("Table 2: formality and sentiment tasks, both datasets, the Formal and Positive styles only "
                        "(the paper's rows: all four styles)")
    assert t2.to_markdown().startswith(f"### {t2.title}\n") and {c.title for c in t2.cells()} == {t2.title}
    dd_formal = [s for s in some if s.tags["dataset"] == "dd" and s.tags["style"] == "formal"]
    assert build_table("table2", dd_formal, compare_paper=True).title == (
        "Table 2: formality and sentiment tasks, Daily Dialog only, the Formal style only (the paper's rows: both "
        "datasets, all four styles)")
    assert build_table("table2", some).title.endswith("both datasets, the Formal and Positive styles only")
    # Tables 4 and 5 give each style its own column: an absent style's columns are empty ("-"), their titles as is
    assert build_table("table4", some).title == "Table 4: formality tasks per dataset"


def test_a_cell_counts_the_responses_asked_for_that_were_never_generated() -> None:
    """After failed generations (--allow-failures) a cell averaged the responses that came back and said nothing of
    the others: its "(k/n)" counted only responses a metric could not score. Given the responses asked for, a cell
    now reads how many of them it averages; a model or style with none back gets a row or a "(0/n)" all the same."""
    scores = [s for s in _scores() if s.tags["dataset"] == "dd" and s.tags["style"] in ("formal", "informal")]
    back = [s for s in scores if not (s.tags["style"] == "formal" and s.item_id.endswith("1"))]  # formal's 2nd failed
    asked = {(model, "dd", style): 2 for model in ("m", "gone") for style in ("formal", "informal")}
    t4 = build_table("table4", back, asked=asked)
    # model m: Formal ACC% is the one formal response's 1.0 (1 of 2 asked for); its judge scored it (80): 1 of 2 too
    assert t4.rows[1] == (("Daily Dialog", "m"), "ours", [100.0, 4.0, 25.0, 50.0, 80.0, 50.0, 4.0, 25.0,
                                                          aggregate("NLL", [50.0, 25.0]), 80.0])
    assert t4.scored[1] == ["1/2", "1/2", "1/2", "1/2", "1/2", None, None, None, None, "1/2"]  # the judge's as before
    # model "gone" generated nothing: its row was missing; every column a metric scored now reads "(0/2)"
    assert t4.rows[0] == (("Daily Dialog", "gone"), "ours", [None] * 10) and t4.scored[0] == ["0/2"] * 10
    assert t4.to_markdown().splitlines()[5].startswith("| Daily Dialog | m | ours | 100.0 (1/2) | 4.0 (1/2) |")
    t2 = build_table("table2", back, asked=asked)
    assert t2.scored[1][:3] == ["3/4", "2/4", "3/4"] and t2.scored[1][3:] == [None] * 3  # ACC%, ChatGPT (1 unparsed)
    assert t2.title == "Table 2: formality and sentiment tasks, Daily Dialog only, the Formal and Informal styles only"
    # with every response asked for back, the cells are as without ``asked``
    full = build_table("table4", scores, asked={k: v for k, v in asked.items() if k[0] == "m"})
    assert (full.rows, full.scored) == (build_table("table4", scores).rows, build_table("table4", scores).scored)


def test_a_cell_that_rounds_to_zero_is_no_negative_zero() -> None:
    """Table cells and the system summary printed f"{v:.1f}": a value of -0.04 read "-0.0"."""
    from dialeval.lmstyle.tables import LayoutTable, summary_markdown

    table = LayoutTable("table4", "t", ["c"], [(("Daily Dialog", "m"), "ours", [-0.04])], [[None]])
    assert "| 0.0 |" in table.to_markdown() and "-0.0" not in table.to_markdown()
    assert "| m | 0.0 |" in summary_markdown([{"model": "m", "x": -0.04}])


def test_a_run_whose_every_generation_failed_counts_them_in_its_cells() -> None:
    """A cell read "(0/n)" for a metric that was run only where some model's responses had scores of it: with every
    generation failed (one model, --allow-failures) there were none, and every cell read a bare "-", as a metric
    that -m left out. The metrics that were run (``ran``, from the scoring) now say which columns count them."""
    from dialeval.lmstyle.score import score_generated

    run = score_generated([], {}, metrics=["sacrebleu"])
    assert run.outputs == ["sacrebleu"]
    asked = {("m", "dd", "formal"): 2, ("m", "dd", "informal"): 2}
    t4 = build_table("table4", run.scores, asked=asked, ran=run.outputs)
    # two asked for per style, none back; the columns of BLEU (2nd of each style's five) count them, the rest not run
    assert t4.rows == [(("Daily Dialog", "m"), "ours", [None] * 10)]
    assert t4.scored == [[None, "0/2", None, None, None, None, "0/2", None, None, None]]
    assert "| Daily Dialog | m | ours | - | - (0/2) | - |" in t4.to_markdown()


_SIX = b"a\nb\nc\nd\ne\nf\n"  # one evaluated query; the last five lines are the shots
_MARKER = 'holds "###", the turn marker of the Fig. 3 prompt'


@pytest.mark.parametrize(
    ("queries", "refs", "said"),
    [
        (b"Hi\nWhat ### is it\nc\nd\ne\nf\n", _SIX, f"BST/query.txt:2: {_MARKER}"),
        (_SIX, b"1\n2\n3\n4\n5\nok ###Speaker: go\n", f"BST/ref/ref.txt:6: {_MARKER}"),
        (b"a\nb\nc \x1b[1m\nd\ne\nf\n", _SIX, "BST/query.txt:3: holds a control character (U+001B)"),
        (b"a\nb\x00\nc\nd\ne\nf\n", _SIX, "BST/query.txt:2: not text: a NUL byte at column 2"),  # as before
    ],
)
def test_a_query_that_would_break_the_prompt_is_refused_at_its_line(
    tmp_path: Path, queries: bytes, refs: bytes, said: str
) -> None:
    """A query, or a shot's reference, holding "###" went into the Fig. 3 prompt unchanged: "###Speaker: What ###
    is it ###Formal Response:" shows the model a turn the query does not have, and the paper's template has no
    escape for it. An escape character went in unseen too. Each is refused at its file and line."""
    _refused_by_read_pairs_and_generate(tmp_path, queries, refs, said)


def test_a_reference_that_is_no_shot_may_hold_the_turn_marker(tmp_path: Path) -> None:
    """Only the last five references are shots in the prompt; the others are compared with, never sent."""
    _write_bst(tmp_path, _SIX, b"see ### here\n2\n3\n4\n5\n6\n")
    assert read_pairs(tmp_path, "bst")[0] == Pair("a", "see ### here")
