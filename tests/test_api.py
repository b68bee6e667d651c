"""The Python API (``dialeval.score``, ``correlate``, ``load_benchmark``) gives the CLI's numbers and errors."""

from __future__ import annotations

import csv
import doctest
import json
import re
import subprocess
import sys
import warnings
from collections.abc import Callable
from decimal import Decimal
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from typer.testing import CliRunner

import dialeval
from dialeval.cli import app
from dialeval.errors import DialevalError, InputError
from dialeval.jsonl import read_jsonl
from dialeval.schema import Score

runner = CliRunner()
REPO = Path(__file__).resolve().parents[1]
CHEAP = ["length", "distinct", "bleu"]  # lexical: fast, and bleu needs the references carried through
ROWS = [
    {"context": "Hi!\n\nHow are you?", "response": "Fine, thanks. And you?", "reference": "Good, you?", "system": "a"},
    {"context": "Hi!\n\nHow are you?", "response": "I am a teapot", "reference": "Good, you?", "system": "b"},
    {"context": "What is 2+2?", "response": "four, I think", "reference": "It is 4.", "system": "a"},
]

#: One metric column and one human column, four items (each its own context).
RATED = pd.DataFrame({"m": [1.0, 2.0, 3.0, 4.0], "h": [1.0, 3.0, 2.0, 4.0]})


def cli(*args: str | Path) -> str:
    """Run the CLI in process; return its stdout (it must succeed)."""
    res = runner.invoke(app, [str(a) for a in args])
    assert res.exit_code == 0, res.output
    return res.output


def cli_values(path: Path, out: Path) -> dict[str, list[float | None]]:
    """``dialeval score --path`` on a CSV: each output's values in candidate order."""
    cli("score", "--path", path, "--context-col", "context", "--response-col", "response",
        "--reference-col", "reference", "--system-col", "system", "-m", ",".join(CHEAP), "-o", out,
        "--no-cache", "--json")  # fmt: skip
    values: dict[str, list[float | None]] = {}
    for s in read_jsonl(out, Score):
        values.setdefault(s.metric, []).append(s.value)
    return values


def test_score_gives_the_cli_numbers_from_a_frame_a_list_of_dicts_and_a_path(tmp_path: Path) -> None:
    path = tmp_path / "mine.csv"
    with path.open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(ROWS[0]))
        writer.writeheader()
        writer.writerows(ROWS)
    expected = cli_values(path, tmp_path / "scores.jsonl")
    assert set(expected) == {"length", "distinct1", "distinct2", "bleu1", "bleu2", "bleu3", "bleu4"}
    # a context given as a list of turns reads as the string split on newlines
    listed = [{**r, "context": [t for t in r["context"].split("\n") if t]} for r in ROWS]
    pd.DataFrame(ROWS).to_json(tmp_path / "mine.json", orient="records")  # a frame saved as JSON reads back
    for data in (pd.DataFrame(ROWS), ROWS, listed, path, str(path), tmp_path / "mine.json"):
        got = dialeval.score(data, metrics=CHEAP, cache=False, progress=False)  # type: ignore[arg-type]
        assert list(got.columns) == [*ROWS[0], *expected]  # input columns, then the outputs
        assert got["response"].tolist() == [r["response"] for r in ROWS]  # input order
        assert {k: got[k].tolist() for k in expected} == expected
        assert got.attrs["signatures"]["bleu4"].startswith("bleu|")
        assert got.attrs["request"]["metrics"] == list(CHEAP) and got.attrs["request"]["no_cache"] is True


def test_a_csv_paths_numbers_read_as_numbers_as_pandas_reads_them(tmp_path: Path) -> None:
    """``score("my.csv")`` gave its rating column as text, which correlate then refused ('5'); pd.read_csv's frame
    worked. The text columns (context, response, system) stay as read: "1" is a system's name."""
    path = tmp_path / "rated.csv"
    path.write_text("context,response,system,rating,note\nHi,Hello there,1,4,a\nHi,Yo,2,,2\nBye,Ciao my friend,1,"
                    "3.5,\nBye,ok,2,1,x\n")  # fmt: skip
    got = dialeval.score(path, metrics=["length"], cache=False, progress=False)
    read = dialeval.score(pd.read_csv(path, dtype={"system": str}), metrics=["length"], cache=False, progress=False)
    assert got["rating"].tolist()[::2] == [4.0, 3.5] and pd.isna(got["rating"][1])  # numbers, the empty cell NaN
    assert got["system"].tolist() == ["1", "2", "1", "2"] and got["note"].tolist() == ["a", "2", "", "x"]
    pd.testing.assert_frame_equal(dialeval.correlate(got, "rating", n_boot=50),
                                  dialeval.correlate(read, "rating", n_boot=50))  # fmt: skip


def test_a_csv_paths_missing_markers_empty_columns_and_unnamed_columns_read_as_pandas_reads_them(
    tmp_path: Path,
) -> None:
    """``NA`` and ``null`` kept a rating column text (``'4'``, which correlate refused, and pd.to_numeric, which its
    hint named, failed on ``'NA'``); a column with no value was ``''``; a column with an empty header was dropped."""
    path = tmp_path / "rated.csv"
    path.write_text("context,response,rating,none,\nHi,Hello there,4,,n1\nHow are you?,Fine thanks,NA,,n2\n"
                    "Bye,See you later friend,2,,\nWhat?,Nothing,null,,n4\n")  # fmt: skip
    got = dialeval.score(path, metrics=["length"], cache=False, progress=False)
    pandas = pd.read_csv(path)  # the reference: what the docs promise (numbers, missing cells NaN)
    assert got.columns.tolist() == [*pandas.columns, "length"]
    pd.testing.assert_series_equal(got["rating"], pandas["rating"])
    pd.testing.assert_series_equal(got["none"], pandas["none"])
    assert got["Unnamed: 4"].tolist() == ["n1", "n2", "", "n4"]  # a text column stays as read ("" where empty)


def test_the_missing_markers_are_those_pd_read_csv_reads_as_missing() -> None:
    """api._NA_TEXT is written out; pandas keeps its default na_values in a private module: the two must agree."""
    from pandas._libs.parsers import STR_NA_VALUES

    from dialeval.api import _NA_TEXT

    assert STR_NA_VALUES - {""} == _NA_TEXT


def test_score_keeps_every_row_and_the_frames_index(tmp_path: Path) -> None:
    frame = pd.DataFrame([ROWS[2], ROWS[0], ROWS[2]], index=[7, 3, 5])  # a duplicated row stays two rows
    got = dialeval.score(frame, metrics=["length"], cache=tmp_path / "c.sqlite", progress=False)
    assert got.index.tolist() == [7, 3, 5]
    assert got["length"].tolist() == [3.0, 4.0, 3.0]
    assert (tmp_path / "c.sqlite").is_file()
    again = dialeval.score(frame, metrics=["length"], cache=tmp_path / "c.sqlite", progress=False)
    pd.testing.assert_frame_equal(got, again)
    assert frame.columns.tolist() == list(ROWS[0])  # the caller's frame is not changed


def test_a_bad_parameter_leaves_no_new_cache(tmp_path: Path) -> None:
    """The cache (and its folder) was made before the metric was built, and stayed after the error."""
    with pytest.raises(InputError, match=r"chrf\.char_order=0: must be between 1"):
        dialeval.score(pd.DataFrame(ROWS), metrics=["chrf"], params={"chrf.char_order": 0},
                       cache=tmp_path / "new" / "c.sqlite", progress=False)  # fmt: skip
    assert not (tmp_path / "new").exists()


def test_rows_with_one_response_and_other_references_are_each_scored_against_their_own() -> None:
    """The second row got the first's chrF++ (100.0): both were one item, scored against the first reference.
    The expected value is sacrebleu's own chrF++ of the pair (word_order=2)."""
    import sacrebleu

    frame = pd.DataFrame({"response": ["I don't know.", "I don't know."],
                          "reference": ["I don't know.", "The capital of France is Paris."]})  # fmt: skip
    got = dialeval.score(frame, metrics=["chrf"], context_col=None, cache=False, progress=False)["chrfpp"].tolist()
    own = sacrebleu.sentence_chrf("I don't know.", ["The capital of France is Paris."], word_order=2).score
    assert got == [100.0, own] and round(own, 3) == 4.136


def test_score_plus_correlate_reproduce_the_benchmark_command(tmp_path: Path, shared_data: Path) -> None:
    payload = json.loads(cli(
        "benchmark", "-b", "usr-tc", "-m", ",".join(CHEAP), "--level", "turn,system",
        "--method", "spearman,pearson", "--boot", "200", "-o", tmp_path, "--json", "--no-cache",
    ))  # fmt: skip
    expected = {(r["metric"], r["level"], r["method"]): r for r in payload["rows"]}
    bench = dialeval.load_benchmark("usr-tc")
    assert len(bench) == 360 and {"context", "response", "reference", "system", "Overall"} <= set(bench.columns)
    scored = dialeval.score(bench, metrics=CHEAP, cache=False, progress=False)
    table = dialeval.correlate(scored, "Overall", level=["turn", "system"], method=["spearman", "pearson"], n_boot=200)
    assert len(table) == len(expected) == 7 * 2 * 2
    for row in table.to_dict("records"):
        want = expected[(row["metric"], row["level"], row["method"])]
        got = (row["value"], row["ci_low"], row["ci_high"], row["n"], row["n_groups"])
        assert got == (want["value"], want["ci_low"], want["ci_high"], want["n_items"], want["n_groups"])


def test_correlate_defaults_to_the_scored_outputs_and_breaks_down_by_a_column() -> None:
    frame = pd.DataFrame({
        "context": [f"c{n // 3}" for n in range(12)], "system": ["a", "b", "c"] * 4,
        "m": [1.0, 2, 3, 1, 3, 2, 1, 2, 3, 3, 2, 1], "human": [1.0, 2, 3, 2, 3, 1, 1, 2, 3, 3, 1, 2],
        "split": ["x"] * 6 + ["y"] * 6,
    })  # fmt: skip
    frame.attrs["signatures"] = {"m": "m|version:0"}
    table = dialeval.correlate(frame, "human", by="split", n_boot=0)
    assert table["group"].tolist() == ["all", "split=x", "split=y"]
    assert table["n"].tolist() == [12, 6, 6]
    assert table["ci_low"].isna().all()  # no bootstrap asked for
    # A row with no value in the --by column makes the last group, "no split", as `meta --by` groups the scores
    # without the tag (it was "split=nan" once, then left out of every group unsaid).
    frame.loc[11, "split"] = None
    table = dialeval.correlate(frame, "human", by="split", n_boot=0)
    assert table["group"].tolist() == ["all", "split=x", "split=y", "no split"]
    assert table["n"].tolist() == [12, 6, 5, 1]


@pytest.mark.parametrize("by", ["split", "system"])
def test_a_by_column_whose_values_of_two_types_print_alike_is_refused(by: str) -> None:
    """by= made its groups of the values as text: 1 and "1" were one group "split=1", silently. They are refused,
    naming the column, the row and both values; 1 and "2" (two groups either way) are not."""
    frame = pd.DataFrame({"context": [f"c{n // 3}" for n in range(12)], "system": ["a", "b", "c"] * 4,
                          "m": [1.0, 2, 3, 1, 3, 2, 1, 2, 3, 3, 2, 1], "h": [1.0, 2, 3, 2, 3, 1, 1, 2, 3, 3, 1, 2]})
    frame[by] = pd.Series([1, 2, 3] * 2 + ["1", "2", "3"] * 2, dtype=object)
    with pytest.raises(InputError) as err:
        dialeval.correlate(frame, "h", ["m"], by=by, n_boot=0)
    assert str(err.value) == (f'data:7: field "{by}": the value \'1\' (text) prints as the value 1 (a number) '
                              "of row 1, and the two would make one group: give the column one type")
    frame[by] = pd.Series([1, 2, 3] * 2 + ["4", "5", "6"] * 2, dtype=object)
    assert len(dialeval.correlate(frame, "h", ["m"], by=by, n_boot=0, level="turn")) == 7


@pytest.mark.parametrize("name", ["human", "n_annotators", "system", "context_id", "dialogue_id"])
def test_a_metric_column_named_like_a_column_of_the_table_is_refused(name: str) -> None:
    """As meta refuses such a metric: "human" and "n_annotators" were a pandas ValueError ("columns overlap"), and
    "system", "context_id" and "dialogue_id" a figure (the column taken as the metric and as the group key too)."""
    frame = pd.DataFrame({"context": list("aabbcc"), "q": [1.0, 2, 3, 4, 5, 3], name: [1.0, 3, 2, 5, 4, 1]})
    with pytest.raises(InputError, match=f'field "metrics": metric name "{name}" is taken by'):
        dialeval.correlate(frame, "q", [name], n_boot=0)


def test_a_metric_column_with_no_value_gives_an_undefined_row() -> None:
    """It was pandas' KeyError 'context_id', a traceback: a metric that could score no row (NaN throughout)."""
    table = dialeval.correlate(RATED.assign(m=float("nan")), "h", ["m"], n_boot=0)
    assert table["value"].isna().all() and table["n"].eq(0).all()
    assert table["note"].str.startswith("undefined").all()
    assert table["note"].str.contains("4 scores without value").all()
    assert not table["note"].str.contains("rated items without score").any()  # the same four rows, counted once


def test_why_a_value_is_nan_is_in_attrs_as_score_prints_it() -> None:
    """A NaN said nothing from Python; `dialeval score` prints each output's reasons, counted."""
    rows = [{"context": "Hi", "response": "Hello there", "reference": "Hi there"},
            {"context": "Yo", "response": "Sup", "reference": None}]  # fmt: skip
    scored = dialeval.score(rows, metrics=["embedding", "length"], cache=False)
    assert scored["sbert_ref"].isna().tolist() == [False, True]
    assert scored.attrs["without_value"] == {"sbert_ref": {"no reference to compare with": 1},
                                             "sbert_knowledge": {"no fact or persona line to compare with": 2}}


def test_scoring_a_scored_frame_with_other_metrics_keeps_the_first_outputs_attrs() -> None:
    """score(score(df, ["embedding"]), ["length"]) kept length's signatures alone: correlate's default metrics left
    the embedding outputs out, and why sbert_knowledge is NaN was lost, nothing said. An output's column dropped
    before the second call takes its attrs with it."""
    rated = [{**r, "h": h} for r, h in zip(ROWS, [1.0, 3.0, 2.0], strict=True)]
    first = dialeval.score(rated, ["embedding"], cache=False, progress=False)
    again = dialeval.score(first, ["length"], cache=False, progress=False)
    both = ["sbert_ref", "sbert_context", "sbert_knowledge", "length"]
    assert list(again.attrs["signatures"]) == both
    assert again.attrs["signatures"]["sbert_ref"] == first.attrs["signatures"]["sbert_ref"]
    assert again.attrs["without_value"] == {"sbert_knowledge": {"no fact or persona line to compare with": 3}}
    assert dialeval.correlate(again, "h", n_boot=0)["metric"].tolist() == both
    dropped = dialeval.score(first.drop(columns="sbert_ref"), ["length"], cache=False, progress=False)
    assert list(dropped.attrs["signatures"]) == ["sbert_context", "sbert_knowledge", "length"]


def test_an_undefined_correlation_says_which_side_is_constant() -> None:
    """Each said "constant input or fewer than 2 values" (the system level: "fewer than 2 systems or constant
    system means"), whichever side it was."""
    frame = pd.DataFrame({"context": list("abcd"), "system": ["s", "t", "s", "t"], "m": [1.0, 2.0, 3.0, 4.0],
                          "h": [1.0, 3.0, 3.0, 1.0]})  # fmt: skip
    table = dialeval.correlate(frame, "h", ["m"], level=["turn", "system"], n_boot=0).set_index("level")
    assert table.loc["system", "note"] == "undefined: people give every system the same rating"  # both mean 2
    flat = dialeval.correlate(frame.assign(m=5.0), "h", ["m"], n_boot=0)
    assert flat["note"].tolist() == ["undefined: the metric gives every item the same score"]


def test_correlate_groups_by_the_context_and_system_columns_score_read() -> None:
    """Scored with context_col= and system_col=, the frame was correlated as if each row were its own context
    (18 groups, not 6) and of no system (the system level undefined); now as with the standard names."""
    rows = [{"ctx": f"context {c}", "response": "w " * (k + c % 2 + 1), "human": k + (c % 3) * 0.5, "sys": system}
            for c in range(6) for k, system in enumerate("abc")]  # fmt: skip
    scored = dialeval.score(pd.DataFrame(rows), ["length"], context_col="ctx", system_col="sys", cache=False,
                            progress=False)  # fmt: skip
    assert scored.attrs["columns"] == {"context": "ctx", "system": "sys"}
    table = dialeval.correlate(scored, "human", level=["turn", "system"], n_boot=50)
    assert table["n_groups"].tolist() == [6, 3]
    # by hand: the systems' mean lengths 1.5, 2.5, 3.5 and human means 0.5, 1.5, 2.5 rank alike
    assert table["value"].tolist()[1] == 1.0
    standard = scored.rename(columns={"ctx": "context", "sys": "system"})
    standard.attrs = {"signatures": scored.attrs["signatures"]}
    expected = dialeval.correlate(standard, "human", level=["turn", "system"], n_boot=50)
    pd.testing.assert_frame_equal(table, expected)


def test_the_system_level_without_a_system_column_is_refused_and_undefined_figures_are_floats() -> None:
    """It gave one undefined row ("fewer than 2 systems"), in a column of None that arithmetic refuses."""
    for kwargs, field in (({"level": "system"}, "level"), ({"by": "system"}, "by")):
        with pytest.raises(InputError) as caught:
            dialeval.correlate(RATED, "h", ["m"], n_boot=0, **kwargs)
        assert str(caught.value).startswith(f'field "{field}": ') and 'a column "system"' in str(caught.value)
    with pytest.raises(InputError, match='field "by": by="system" needs the system of each row'):
        dialeval.correlate(RATED.assign(system=None), "h", ["m"], n_boot=0, by="system")  # a column, no system named
    table = dialeval.correlate(RATED.assign(m=float("nan"), system=["a", "a", "b", "b"]), "h", ["m"],
                               level="system", n_boot=0)  # fmt: skip
    assert table[["value", "ci_low", "ci_high", "p_value"]].dtypes.eq("float64").all()


def test_a_row_with_no_system_beside_named_ones_is_refused_as_score_refuses_it() -> None:
    """A NaN system was a system named "nan" (a group "system=nan"), then one more system, "unknown", beside the
    named ones (its rows averaged as one system's); score() refuses such a row, and so does correlate."""
    frame = RATED.assign(system=["a", None, "a", float("nan")], context=["c1", "c1", "c2", "c2"],
                         response=["yes", "no", "maybe so", "ok"])  # fmt: skip
    for call in (lambda: dialeval.correlate(frame, "h", ["m"], by="system", n_boot=0),
                 lambda: dialeval.score(frame, ["length"])):  # fmt: skip
        with pytest.raises(InputError, match=r'data:2: field "system": no system \(2 such rows\), where other rows '
                           r"name theirs \(a\)"):  # fmt: skip
            call()
    table = dialeval.correlate(frame.assign(system=None), "h", ["m"], n_boot=0)  # no system named: all "unknown"
    assert table["n"].tolist() == [4]


def test_systems_numbered_in_an_int_column_are_scored_and_correlated_per_system() -> None:
    """score() refused a DataFrame whose system column holds ints ("expected a string, found int")."""
    frame = pd.DataFrame({"context": ["a", "a", "b", "b"], "response": ["Hey there", "x y z", "hello", "no"],
                          "system": [1, 2, 1, 2], "h": [1.0, 2.0, 3.0, 1.0]})  # fmt: skip
    scored = dialeval.score(frame, metrics=["length"], cache=False)
    assert scored["system"].tolist() == [1, 2, 1, 2]  # the input column as given
    table = dialeval.correlate(scored, "h", level="system", n_boot=0)
    assert table["n_groups"].tolist() == [2]  # two systems: length means 1.5 and 2, human means 2 and 1.5
    assert table["value"].tolist() == [pytest.approx(-1.0)]


def test_a_benchmark_rated_per_dialogue_is_correlated_per_dialogue_by_default(shared_data: Path) -> None:
    """score() dropped load_benchmark's attrs, so DSTC9's dialogue ratings were read as each turn's own."""
    bench = dialeval.load_benchmark("dstc9")
    bench = bench[bench["dialogue_id"].isin(bench["dialogue_id"].unique()[:40])]
    scored = dialeval.score(bench, ["length"], cache=False, progress=False)
    assert scored.attrs["dialogue_ratings"] == bench.attrs["dialogue_ratings"]
    table = dialeval.correlate(scored, "human (overall)", n_boot=0)
    assert table["level"].tolist() == ["dialogue"] and table["n_groups"].tolist() == [40]
    assert table["note"].tolist() == [""]
    by_hand = bench.assign(length=scored["length"]).groupby("dialogue_id")[["length", "human (overall)"]].mean()
    by_hand = by_hand.round(12)  # as dialeval rounds means (levels.MEAN_DECIMALS): equal means tie, not 1 ulp apart
    expected = stats.spearmanr(by_hand["length"], by_hand["human (overall)"]).statistic
    assert table["value"].iloc[0] == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: dialeval.score([{"response": "hi"}], ["length"]), 'data: field "context": no column "context"'),
        (
            lambda: dialeval.score(
                [{"context": "a", "response": None}, {"context": "b", "response": None}], ["length"]
            ),
            'data:1: field "response": no value (2 such rows)',
        ),
        (
            lambda: dialeval.score([{"context": "a", "response": "hi"}, {"context": "b", "response": " "}], ["length"]),
            'data:2: field "response": no value (1 such row)',  # said "(1 such rows)"
        ),
        (
            lambda: dialeval.score(pd.DataFrame({"context": ["a", "b"], "response": ["hi", ""]}), ["length"]),
            'data:2: field "response": no value (1 such row)',  # said "(1 such rows)"
        ),
        (
            lambda: dialeval.score([{"context": "a", "response": 42}], ["length"]),
            'data:1: field "response": expected a string, found a number',
        ),
        (
            lambda: dialeval.score([{**ROWS[0], "reference": ["Good", 3]}], ["bleu"]),
            'data:1: field "reference": expected a string, found a number',
        ),
        (lambda: dialeval.score([], ["length"]), "data: no rows to score"),
        (lambda: dialeval.score(ROWS, ["lenght"], cache=False), 'did you mean "length"'),
        # each names the argument; they named the command line's option (--engine, --device, ...)
        (lambda: dialeval.score(ROWS, ["length"], engine="spark"), 'field "engine": unknown engine "spark"'),
        # checked before any work, as --device is, though length loads no model that would check it
        (lambda: dialeval.score(ROWS, ["length"], device="gpu"), 'field "device": "gpu" is not a device'),
        (lambda: dialeval.score(Path("nowhere.csv"), ["length"]), "nowhere.csv"),
        (
            lambda: dialeval.score(ROWS, ["length"], params={"length.colour": "red"}, cache=False),
            'field "params": metric "length" has no parameter "colour"',
        ),
        (lambda: dialeval.score(ROWS, [], cache=False), 'field "metrics": an empty list names no metric'),
        (lambda: dialeval.score(ROWS, ["length", "length"], cache=False),
         'field "metrics": metric "length" is given twice'),
        # it said "no metric of this run has the parameter length"
        (lambda: dialeval.score(ROWS, ["length"], params={"length": {"x": 1}}, cache=False),
         'field "params": "length" is given a mapping: name one parameter per key, e.g. {"length.x": ...}'),
        # each was passed on as its Python text: "None" where a parameter takes any text (a turn separator)
        (lambda: dialeval.score(ROWS, ["length"], params={"turn_separator": None}, cache=False),
         'field "params": "turn_separator" is given None: leave the key out for the parameter\'s default'),
        (lambda: dialeval.score(ROWS, ["bleu"], params={"bleu.smoothing": ["method1"]}, cache=False),
         'field "params": "bleu.smoothing" is given a list: give a string, a number or True/False'),
        # -p's text "key=value" was split at the key's "=": likelihood.turn_separator got "|=x", silently
        (lambda: dialeval.score(ROWS, ["likelihood"], params={"likelihood.turn_separator=|": "x"}, cache=False),
         'field "params": "likelihood.turn_separator=|" is no parameter name (it holds "="): give '
         '{"likelihood.turn_separator": "|"}'),
        (lambda: dialeval.score(ROWS, ["length"], cache=Path("/")), '/: field "cache": is a folder'),
        # it said field "model"
        (lambda: dialeval.score(ROWS, ["embedding"], params={"embedding.model": "nowhere"}, cache=False),
         'field "params": embedding.model: "nowhere" is neither a packaged encoder'),
        (lambda: dialeval.correlate(pd.DataFrame({"m": [1.0]}), "Overall", ["m"]), 'no column "Overall"'),
        # it said 'no scores for metric m; the scores hold: nothing'
        (lambda: dialeval.correlate(pd.DataFrame({"m": [], "h": []}), "h", ["m"]), "data: no rows to correlate"),
        (lambda: dialeval.correlate(pd.DataFrame({"m": [1.0]}), "m"), "give them with metrics="),
        (
            lambda: dialeval.correlate(pd.DataFrame({"m": [1.0], "h": [1.0]}), "h", ["m"], level="word"),
            "unknown level word",
        ),
        # each of these was pandas' KeyError on an empty table, numpy's ValueError, or (by="") a
        # breakdown by item with groups named "=0", "=1", ...
        (lambda: dialeval.correlate(RATED, "h", ["m"], level=[]), 'field "level": no level given'),
        (lambda: dialeval.correlate(RATED, "h", ["m"], method=()), 'field "method": no method given'),
        (lambda: dialeval.correlate(RATED, [], ["m"]), 'field "human": no human column to correlate'),
        (lambda: dialeval.correlate(RATED, "h", ["m"], level=""), 'field "level": empty level name'),  # as --level ""
        (lambda: dialeval.correlate(RATED, "h", ["m"], seed=-1), 'field "seed": must be >= 0, got -1'),
        # an argument of another type: each was pydantic's ValidationError of several lines, an AttributeError
        # ('int' object has no attribute 'strip') or a TypeError, naming no argument
        (lambda: dialeval.score(ROWS, [1], cache=False), 'field "metrics": expected a name or a list of names'),
        (lambda: dialeval.score(ROWS, ["length"], device=3, cache=False), 'field "device": expected cpu, cuda'),
        (lambda: dialeval.score(ROWS, ["length"], engine=None, cache=False), 'field "engine": expected local or ray'),
        (lambda: dialeval.score(ROWS, ["length"], params=["a=1"], cache=False), 'field "params": expected a dict'),
        (lambda: dialeval.score(ROWS, ["length"], cache=0), 'field "cache": expected True, False or a path, got 0'),
        # it made a cache file named "no" in the notebook's folder
        (lambda: dialeval.score(ROWS, ["length"], cache="no"),
         "field \"cache\": 'no' would be a file of that name: give True or False (or a path)"),
        (lambda: dialeval.correlate(RATED, 1, ["m"]), 'field "human": expected a name or a list of names, got 1 (int)'),
        (lambda: dialeval.score(ROWS, ["length"], response_col=None, cache=False), 'field "response_col": expected'),
        (lambda: dialeval.score(ROWS, ["length"], system_col=["a"], cache=False), 'field "system_col": expected a'),
        (lambda: dialeval.score(ROWS, ["length"], progress=None, cache=False), 'field "progress": expected True or'),
        (lambda: dialeval.load_benchmark(3), 'field "name": expected a benchmark name, got 3 (int)'),
        (lambda: dialeval.correlate(RATED, "h", ["m"], by=3), 'field "by": expected a column name or None, got 3'),
        (lambda: dialeval.correlate([{"m": 1.0, "h": 1.0}], "h", ["m"]), 'field "df": expected a DataFrame'),
        # each was a TypeError from deep in numpy ("'<' not supported between instances of 'str' and 'int'")
        (lambda: dialeval.correlate(RATED, "h", ["m"], seed="1"), "field \"seed\": must be a whole number, got '1'"),
        (lambda: dialeval.correlate(RATED, "h", ["m"], n_boot=10.5),
         'field "n_boot": must be a whole number, got 10.5'),
        (lambda: dialeval.correlate(RATED, "h", ["m"], by=""), 'no column ""'),
        # it said 'field "dimension": no ratings for dimension "h"; found: ', and a misspelt column had no hint
        (lambda: dialeval.correlate(RATED.assign(h=float("nan")), "h", ["m"]),
         'field "h": no value in any row: nothing to correlate with'),
        (lambda: dialeval.correlate(RATED, "h", ["mm"]), 'field "mm": no column "mm" (did you mean "m"?)'),
        (lambda: dialeval.load_benchmark("usr-tx"), 'field "name": unknown benchmark "usr-tx"; did you mean "usr-tc"'),
        # it said '"" names a folder, not a catalog benchmark' (Path("") is the current folder)
        (lambda: dialeval.load_benchmark(""), 'field "name": unknown benchmark ""; known: dstc9, '),
        # it said "not a numeric column", naming no row and no value
        (lambda: dialeval.correlate(RATED.assign(h=[1.0, 2.0, "n/a", 4.0]), "h", ["m"]),
         "data:3: field \"h\": expected a number (None or NaN for no value), found str 'n/a'"),
        # numbers read as text (a CSV column with one "n/a" row, or dtype=str): it named no way to mend them
        (lambda: dialeval.correlate(RATED.assign(h=["1", "2", "3", "4"]), "h", ["m"]),
         "data:1: field \"h\": expected a number (None or NaN for no value), found str '1'; numbers as text: "
         'pd.to_numeric(df["h"]) makes them numbers'),
        (lambda: dialeval.correlate(RATED.assign(h=["1", "2,5", "3", "4"]), "h", ["m"]),  # a European sheet's 2.5
         'data:1: field "h": expected a number (None or NaN for no value), found str \'1\'; numbers as text: '),
        (lambda: dialeval.correlate(RATED.assign(h=[1.0, "2,5", 3.0, 4.0]), "h", ["m"]),
         'data:2: field "h": expected a number (None or NaN for no value), found str \'2,5\'; a decimal comma: read '
         'the file with pd.read_csv(..., decimal=",")'),
        # each was a UnicodeEncodeError traceback, from pandas (a list of dicts) or when the score cache was written
        (lambda: dialeval.score([ROWS[0], {"context": ["Hi", "x\udfff"], "response": "Yo"}], ["length"], cache=False),
         'data:2: field "context.1": \\udfff is half of a UTF-16 surrogate pair, no character'),
        (lambda: dialeval.score(pd.DataFrame(ROWS).assign(response=pd.Series(["a\ud800"] * len(ROWS), dtype=object)),
                                ["length"], cache=False), 'data:1: field "response": \\ud800 is half'),
        # a column moved to the index by set_index was "no column" and nothing more
        (lambda: dialeval.score(pd.DataFrame(ROWS).set_index("context"), ["length"], cache=False),
         'field "context": no column "context" (it is the frame\'s index: pass df.reset_index())'),
        (lambda: dialeval.correlate(RATED.set_index("h"), "h", ["m"]), "(it is the frame's index"),
        # each was "expected a DataFrame, a list of dicts or a path, got list/dict", naming neither the row nor the fix
        (lambda: dialeval.score([ROWS[0], ("Hi", "Hello")], ["length"], cache=False),
         "data:2: row is a tuple, not a dict (a list is read as one dict per row)"),
        (lambda: dialeval.score({"context": ["Hi"], "response": ["Hello"]}, ["length"], cache=False),
         "got dict (a dict of columns: pass pd.DataFrame(data))"),
        # responses alone: a Series was "got Series", and a frame without "context" named no way to do without it
        (lambda: dialeval.score(pd.Series(["Hello"]), ["length"], cache=False),
         'got Series (responses alone: pass data.to_frame("response") with context_col=None)'),
        (lambda: dialeval.score(pd.DataFrame({"response": ["Hello"]}), ["length"], cache=False),
         'data: field "context": no column "context" (context_col=None scores without one); the columns: response'),
        # the CLI refuses Infinity in a scores file; the API used it as a number
        (lambda: dialeval.correlate(RATED.assign(m=[1.0, float("inf"), 3.0, 4.0]), "h", ["m"]),
         'data:2: field "m": inf is not a finite number'),
        # a frame with two columns of one name: score kept one of them (pandas' to_dict, with a warning only),
        # correlate was an AttributeError ('DataFrame' object has no attribute 'tolist'); a table's header is refused
        (lambda: dialeval.score(pd.DataFrame([["Hi", "a", "b"]], columns=["context", "response", "response"]),
                                ["length"], cache=False),
         'data: field "response": appears twice in the header (columns 2 and 3)'),
        (lambda: dialeval.correlate(pd.concat([RATED, RATED[["h"]]], axis=1), "h", ["m"]),
         'data: field "h": appears twice in the header (columns 2 and 3)'),
        # a response that is its own reference: BLEU 1.0 against itself, with no word
        (lambda: dialeval.score(ROWS, ["bleu"], reference_col="response", cache=False),
         'field "reference_col": column "response" is the response column: each response would be its own reference'),
        # the context column as the response column reads a chat log's messages only: text there is refused
        (lambda: dialeval.score(ROWS, ["length"], context_col="response", cache=False),
         'data:1: field "response": the context column is the response column, which reads a chat log\'s messages'),
        # a missing id was the id "nan": the rows without a context_id made one context, silently, and two without
        # an item_id were "item_id names the same item twice", naming no row
        (lambda: dialeval.correlate(RATED.assign(context_id=["c1", None, float("nan"), "c2"]), "h", ["m"]),
         'data:2: field "context_id": no value (2 such rows)'),
        (lambda: dialeval.correlate(RATED.assign(dialogue_id=["d1", "d1", pd.NA, "d2"]), "h", ["m"]),
         'data:3: field "dialogue_id": no value (1 such row)'),
        (lambda: dialeval.correlate(RATED.assign(item_id=[None, "a", None, "b"]), "h", ["m"]),
         'data:1: field "item_id": no value (2 such rows)'),
        (lambda: dialeval.correlate(RATED.assign(item_id=["a", "b", "c", "b"]), "h", ["m"]),
         'data:4: field "item_id": item "b" of row 2 again'),
        # a pandas Series shown in the error made it several lines; an Index or Series of names said no way to mend it
        (lambda: dialeval.correlate(RATED["m"], "h", ["m"]),
         'field "df": expected a DataFrame, got 0 1.0 1 ...dtype: float64 (Series)'),
        (lambda: dialeval.correlate(RATED, "h", RATED.columns[:1]),
         "field \"metrics\": expected a name or a list of names, got Index(['m'], dtype="),
        (lambda: dialeval.score(ROWS, pd.Series(["length"]), cache=False),
         'field "metrics": expected a name or a list of names, got 0 length dtype: '),
        (lambda: dialeval.score(ROWS, pd.Series(["length"]), cache=False), "(Series); pass it as a list (list(...))"),
        # a column's values, not its name: "pass it as a list (list(...))" was refused again, as a list of numbers
        (lambda: dialeval.correlate(RATED, RATED["h"], ["m"]),
         '(Series); give the column\'s name, "h", not its values'),
        (lambda: dialeval.correlate(RATED, "h", RATED["m"].to_numpy()), "(ndarray); give column names, not values"),
        # a human column named as a metric too: it was correlated with itself, 1.0
        (lambda: dialeval.correlate(RATED, "h", ["m", "h"]),
         'field "metrics": "h" is a human column too: a column agrees with itself'),
    ],
)
def test_bad_input_is_one_line_dialeval_error(call: object, message: str) -> None:
    with pytest.raises(DialevalError) as caught:
        call()  # type: ignore[operator]
    assert message in str(caught.value)
    assert "\n" not in str(caught.value)


def test_a_column_name_that_is_no_string_is_named_with_the_fix() -> None:
    """A frame with a year as a header (pd.read_excel's 2021) or an unnamed Series concatenated (0) was refused with
    "the data's column names must be strings", naming neither the column nor a way to mend it."""
    years = pd.DataFrame({"context": ["Hi"], "response": ["Hello there"], 2021: [4.0]})
    with pytest.raises(InputError) as caught:
        dialeval.score(years, ["length"], cache=False, progress=False)
    assert str(caught.value) == ('data: field "2021": the column name 2021 (int) is not a string: name the columns '
                                 "with strings (df.columns = df.columns.astype(str))")  # fmt: skip
    years.columns = years.columns.astype(str)  # the fix it names
    assert dialeval.score(years, ["length"], cache=False, progress=False)["length"].tolist() == [2.0]
    grouped = pd.concat({"a": years}, axis=1)  # a MultiIndex of columns, as groupby().agg([...]) makes
    with pytest.raises(InputError) as caught:
        dialeval.score(grouped, ["length"], cache=False, progress=False)
    assert str(caught.value) == ("data: field \"('a', 'context')\": the column name ('a', 'context') (tuple) is "
                                 "not a string: name the columns with strings (df.columns = "
                                 'df.columns.to_flat_index().map("_".join))')  # fmt: skip
    grouped.columns = grouped.columns.to_flat_index().map("_".join)  # the fix it names
    scored = dialeval.score(grouped, ["length"], context_col="a_context", response_col="a_response", cache=False,
                            progress=False)  # fmt: skip
    assert scored["length"].tolist() == [2.0]


def test_a_column_argument_naming_a_frames_number_label_is_told_to_name_the_columns_with_strings() -> None:
    """pd.DataFrame([[...]]) labels its columns 0, 1, 2: response_col=2 was refused as "expected a column name, got 2
    (int)", and response_col="2" then as no column. The error names the fix, and the name to give after it."""
    frame = pd.DataFrame([["Hi", "Hello there"]])
    with pytest.raises(InputError) as caught:
        dialeval.score(frame, ["length"], context_col=0, response_col=1, cache=False, progress=False)  # type: ignore[arg-type]
    assert str(caught.value) == ('field "response_col": expected a column name, got 1 (int); the frame\'s columns '
                                 'are not named with strings: df.columns = df.columns.astype(str), then '
                                 'response_col="1"')  # fmt: skip
    frame.columns = frame.columns.astype(str)  # the fix it names
    scored = dialeval.score(frame, ["length"], context_col="0", response_col="1", cache=False, progress=False)
    assert scored["length"].tolist() == [2.0]
    with pytest.raises(InputError) as caught:  # a frame named with strings: no such hint
        dialeval.score(frame, ["length"], context_col="0", system_col=1, cache=False, progress=False)  # type: ignore[arg-type]
    assert str(caught.value) == 'field "system_col": expected a column name or None, got 1 (int)'


def test_a_path_is_checked_as_the_cli_checks_it(tmp_path: Path) -> None:
    p = tmp_path / "t.csv"
    p.write_text("context,response\nHi,Hello\nYo,\n")
    with pytest.raises(InputError) as caught:
        dialeval.score(p, ["length"], cache=False, progress=False)
    assert str(caught.value) == f'{p}:3: field "response": no value (1 such row)'
    p.write_text("context,response,response\nHi,Hello,one two\n")
    with pytest.raises(InputError) as caught:
        dialeval.score(p, ["length"], cache=False, progress=False)
    assert str(caught.value) == f'{p}:1: field "response": appears twice in the header (columns 2 and 3)'
    j = tmp_path / "t.jsonl"
    j.write_text('{"context": "Hi", "response": "Hello"}\n{"context": "Yo", "response": true}\n')
    with pytest.raises(InputError) as caught:
        dialeval.score(j, ["length"], cache=False, progress=False)
    assert str(caught.value) == f'{j}:2: field "response": expected a string, found true'


@pytest.mark.parametrize(
    ("name", "text", "line", "message"),
    [
        # each named "data" (the frame read from the file), not the file: "data: no rows to score", "data: field
        # "d": no column "d"", "data:2" for the JSONL's third line, and a mend of a DataFrame the user never made
        ("t.csv", "context,response\n", "", "no rows to score"),
        ("t.jsonl", "", "", "no rows to score"),
        ("t.csv", "context,response\nHi,Hello\n", ":1", 'field "d": missing column in the header; there are: '
         "context, response"),
        ("t.jsonl", '{"context": "Hi", "response": "Yo", "d": "a"}\n\n{"context": "Ho", "response": "Ya", "d": null}\n',
         ":3", 'field "d": no value (1 such row)'),
        ("t.csv", "context,response,length\nHi,Hello,3\n", "",
         'a column is named like a metric output: "length"; scored already? drop it from the file first'),
    ],
)
def test_an_error_in_a_file_names_the_file_and_its_line(
    tmp_path: Path, name: str, text: str, line: str, message: str
) -> None:
    path = tmp_path / name
    path.write_text(text)
    dialogue = "d" if 'field "d"' in message else None
    with pytest.raises(InputError) as caught:
        dialeval.score(path, ["length"], dialogue_col=dialogue, cache=False, progress=False)
    assert str(caught.value) == f"{path}{line}: {message}"


def test_a_path_argument_reads_a_tilde_as_the_home_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # cache="~/c.sqlite" made a folder named "~" in the current folder, and data="~/t.csv" was "file not found";
    # pandas' readers expand "~" (pd.read_csv("~/t.csv") reads), and so does a shell, for the CLI
    home, work = tmp_path / "home", tmp_path / "work"
    home.mkdir()
    work.mkdir()
    monkeypatch.setenv("HOME", str(home))  # Path.home() reads it
    monkeypatch.chdir(work)
    (home / "t.csv").write_text("context,response\nHi,Hello there\n")
    scored = dialeval.score("~/t.csv", ["length"], cache="~/c.sqlite", progress=False)
    assert scored["length"].tolist() == [2.0]  # "Hello there": two words
    assert (home / "c.sqlite").is_file()
    assert list(work.iterdir()) == []


def test_a_csv_separated_by_another_delimiter_is_told_the_pandas_call_that_reads_it(tmp_path: Path) -> None:
    # it said to pass --delimiter ";", an option score() has no argument for
    p = tmp_path / "semi.csv"
    p.write_text("context;response;rating\nHi;Hello there;4\n")
    with pytest.raises(InputError) as caught:
        dialeval.score(p, ["length"], cache=False, progress=False)
    assert str(caught.value).endswith('(3 columns: context, response, rating), not ",": read it with '
                                      'pd.read_csv(path, sep=";") and pass the DataFrame')  # fmt: skip
    assert pd.read_csv(p, sep=";").columns.tolist() == ["context", "response", "rating"]  # the call it names works


def test_a_column_argument_beside_a_folder_of_records_is_refused(tmp_path: Path) -> None:
    """A folder of records names its fields: system_col="bot" (any column argument) was ignored, silently."""
    from dialeval.jsonl import write_jsonl
    from dialeval.schema import Candidate, Dialogue, Rating, Turn

    write_jsonl(tmp_path / "dialogues.jsonl", [Dialogue(id="d1", turns=[Turn(speaker="A", text="Hi")])])
    write_jsonl(tmp_path / "candidates.jsonl", [Candidate(id="c1", dialogue_id="d1", turn_index=1, system="s",
                                                                text="Hey you")])  # fmt: skip
    write_jsonl(tmp_path / "ratings.jsonl", [Rating(item_id="c1", dimension="Overall", annotator="a", value=3.0)])
    assert dialeval.score(tmp_path, ["length"], cache=False)["length"].tolist() == [2.0]  # the defaults read it
    for argument, value in (("system_col", "bot"), ("context_col", None), ("response_col", "reply")):
        with pytest.raises(InputError) as caught:
            dialeval.score(tmp_path, ["length"], cache=False, **{argument: value})
        assert str(caught.value) == (f'field "{argument}": names a table\'s column, and {tmp_path} is a folder of '
                                     "dialeval records, whose fields are named: leave it out")


def test_an_empty_path_is_refused_not_read_as_the_current_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``Path("")`` is ``.``: ``score("")`` scored the records in the notebook's folder, ``cache=""`` took it
    for the cache, and ``load_benchmark(name, path="")`` said ". is a folder"."""
    (tmp_path / "candidates.jsonl").write_text("", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    for call, field in [(lambda: dialeval.score("", ["length"], cache=False), "data"),
                        (lambda: dialeval.score(ROWS, ["length"], cache=""), "cache"),
                        (lambda: dialeval.load_benchmark("usr-tc", path=""), "path")]:  # fmt: skip
        with pytest.raises(InputError) as caught:
            call()
        assert str(caught.value) == f'field "{field}": is empty; give a path (. for the current folder)'


def test_a_name_given_twice_is_refused() -> None:
    """correlate gave a column named twice its rows once; score and every option of the CLI refuse a repeat."""
    df = pd.DataFrame({"m": [1.0, 2.0, 3.0, 5.0], "h": [1.0, 3.0, 2.0, 4.0], "context": ["a", "b", "c", "d"]})
    once = dialeval.correlate(df, "h", ["m"], n_boot=0)
    assert len(once) == 1 and once["value"][0] == pytest.approx(0.8)  # ranks 1,2,3,4 and 1,3,2,4: 1 - 6*2/(4*15)
    for args, message in ((dict(human=["h", "h"], metrics=["m"]), 'field "human": column "h" is given twice'),
                          (dict(human="h", metrics=["m", "m"]), 'field "metrics": column "m" is given twice'),
                          (dict(human="h", metrics=["m"], method=["spearman", "spearman"]),
                           'field "method": method "spearman" is given twice')):  # fmt: skip
        with pytest.raises(InputError) as caught:
            dialeval.correlate(df, n_boot=0, **args)  # type: ignore[arg-type]
        assert str(caught.value) == message


def test_the_default_metrics_leave_out_the_human_column() -> None:
    """A metric output used as the human score (e.g. quality, to see which cheap metric tracks it) was also a
    metric of the default list, and its row read 1.0: it agreed with itself."""
    scored = dialeval.score(ROWS, ["length", "distinct"], cache=False, progress=False)
    table = dialeval.correlate(scored, "length", n_boot=0)
    assert list(table["metric"]) == ["distinct1", "distinct2"]


def test_none_is_a_missing_value_as_an_empty_csv_cell_is() -> None:
    # a None reference is no reference (not the text "None"): bleu cannot run, as with an empty CSV cell
    with pytest.raises(InputError, match="1 of 2 items has no reference") as caught:
        dialeval.score([ROWS[2], {**ROWS[0], "reference": None}], ["bleu"], cache=False, progress=False)
    # it named none: which one? Its row (data:2, the second, as every error of the API names a row; its id,
    # "data-0001:a", is in no column), and its response, which a table's user can search for
    assert str(caught.value).endswith(f'(the first: data:2, response "{ROWS[0]["response"]}")')
    # a None system is the default system where no row names one, as an empty CSV cell is (not an error); beside
    # a named system it is refused, as an empty CSV cell is
    rows = [{**ROWS[0], "system": None}, {**ROWS[2], "system": None}]
    got = dialeval.score(rows, ["length"], cache=False, progress=False)
    assert got["length"].tolist() == [4.0, 3.0]
    with pytest.raises(InputError, match=r'data:1: field "system": no system \(1 such row\)'):
        dialeval.score([rows[0], ROWS[2]], ["length"], cache=False, progress=False)


def test_a_metric_output_named_like_an_input_column_is_refused() -> None:
    scored = dialeval.score([ROWS[0]], ["length", "distinct"], cache=False, progress=False)
    with pytest.raises(InputError) as caught:  # a notebook cell run twice; the message named no way out
        dialeval.score(scored, ["length", "distinct"], cache=False, progress=False)
    assert str(caught.value) == ('data: a column is named like a metric output: "distinct1", "distinct2", '
                                 '"length"; scored already? drop them first '
                                 '(df.drop(columns=["distinct1", "distinct2", "length"]))')
    # a column read as input that is named like an output: "drop it" told the user to drop their responses
    rows = [{"context": r["context"], "length": r["response"]} for r in ROWS[:2]]
    with pytest.raises(InputError) as caught:
        dialeval.score(rows, ["length"], response_col="length", cache=False, progress=False)
    assert str(caught.value) == ('data: the column "length" is read as input and named like a metric output, which '
                                 'would replace it: rename it first (df.rename(columns={"length": "length_text"}))')
    renamed = [{"context": r["context"], "length_text": r["length"]} for r in rows]  # the mend works
    assert len(dialeval.score(renamed, ["length"], response_col="length_text", cache=False, progress=False)) == 2
    # the dialogue_col column too: it was told "drop it first", which drops the dialogue ids it is read for
    rows = [{**r, "length": f"d{n}"} for n, r in enumerate(ROWS[:2])]
    with pytest.raises(InputError) as caught:
        dialeval.score(rows, ["length"], dialogue_col="length", cache=False, progress=False)
    assert str(caught.value) == ('data: the column "length" is read as input and named like a metric output, which '
                                 'would replace it: rename it first (df.rename(columns={"length": "length_text"}))')


def test_import_dialeval_loads_neither_pandas_nor_torch() -> None:
    code = "import sys, dialeval; print(sorted(m for m in ('pandas', 'torch', 'numpy') if m in sys.modules))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"
    assert callable(dialeval.score) and "score" in dir(dialeval)
    # what a notebook's completion offers: the API, not the module's own imports (Any, TYPE_CHECKING, version)
    assert dir(dialeval) == sorted(dialeval.__all__)


def test_docs_python_md_runs() -> None:
    flags = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
    result = doctest.testfile(str(REPO / "docs" / "python.md"), module_relative=False, optionflags=flags)
    assert result.attempted >= 5
    assert result.failed == 0


def test_load_benchmark_takes_the_published_file(
    tmp_path: Path, shared_data: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As `-b usr-tc --path FILE`; the error for data that is not here named --path, which the API did not take."""
    from_file = dialeval.load_benchmark("usr-tc", shared_data / "usr" / "usr_topical_chat.json")
    pd.testing.assert_frame_equal(from_file, dialeval.load_benchmark("usr-tc"))
    two = tmp_path / "t.json"  # two of usr-pc's 60 contexts of 5 rated turns: the CLI warns, the API said nothing
    two.write_text(json.dumps(json.loads((shared_data / "usr" / "pc_usr_data.json").read_text())[:2]))
    with pytest.warns(UserWarning) as said:
        assert len(dialeval.load_benchmark("usr-pc", two)) == 10
    assert [str(w.message) for w in said] == [
        f"{two}: sha256 differs from the catalog's (a different release?)",
        f"{two}: 10 items where usr-pc's published file has 300; it is read as that file (ids and tags are usr-pc's)",
    ]
    assert {w.filename for w in said} == {__file__}
    monkeypatch.setenv("DIALEVAL_DATA", str(tmp_path))  # an empty shared data folder: FED is not here
    with pytest.raises(InputError) as caught:
        dialeval.load_benchmark("fed-turn")
    assert str(caught.value).endswith("it needs fed/fed_data.json (or pass the file with path=)")


def test_pandas_missing_values_and_numbers_of_any_dtype_read_as_float_columns_do() -> None:
    """A nullable Int64 column's pd.NA was a TypeError ("float() argument must be ... not 'NAType'"), and an
    object column of numbers was "not a numeric column"; each now gives the float column's figures."""
    with_nan = RATED.assign(h=[1.0, None, 2.0, 4.0])
    expected = dialeval.correlate(with_nan, "h", ["m"], n_boot=20)
    assert expected["n"].tolist() == [3]
    for h in (pd.array([1, None, 2, 4], dtype="Int64"), pd.Series([1, pd.NA, 2.0, 4], dtype=object)):
        got = dialeval.correlate(RATED.assign(h=h), "h", ["m"], n_boot=20)
        pd.testing.assert_frame_equal(got, expected)


def _pyarrow_decimals() -> pd.Series:
    pa = pytest.importorskip("pyarrow")  # pandas' optional dependency
    cents = pd.ArrowDtype(pa.decimal128(3, 2))
    return pd.Series([Decimal("1.00"), None, Decimal("2.00"), Decimal("4.00")], dtype=cents)


@pytest.mark.parametrize(
    "decimals",
    [_pyarrow_decimals, lambda: pd.Series([Decimal(1), Decimal("NaN"), Decimal(2), Decimal(4)], dtype=object)],
    ids=["pyarrow-decimal128", "object-Decimal"],
)
def test_a_decimal_human_or_metric_column_gives_the_float_column_figures(decimals: Callable[[], pd.Series]) -> None:
    """A decimal column (pyarrow's decimal128, as a database's NUMERIC reads; or Decimal objects) was refused as
    "expected a number ..., found Decimal Decimal('1.00')": a Decimal is a number, though no numbers.Real. It is
    read as its float, a missing cell (or a Decimal NaN) as no value, and gives the float column's figures."""
    with_nan = RATED.assign(h=[1.0, None, 2.0, 4.0])
    expected = dialeval.correlate(with_nan, "h", ["m"], n_boot=20)
    pd.testing.assert_frame_equal(dialeval.correlate(RATED.assign(h=decimals()), "h", ["m"], n_boot=20), expected)
    as_metric = with_nan.assign(m=pd.Series([Decimal(n) for n in range(1, 5)], dtype=object))
    pd.testing.assert_frame_equal(dialeval.correlate(as_metric, "h", ["m"], n_boot=20), expected)


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        (np.datetime64("2024-01-01T00:00:00.000000000"), "Timestamp"),
        (np.timedelta64(5, "ns"), "Timedelta"),
    ],
)
def test_a_numpy_date_or_duration_in_a_human_column_is_refused_not_read_as_nanoseconds(value: object,
                                                                                         shown: str) -> None:
    """A numpy datetime64 or timedelta64 of nanoseconds in an object column (``[np.datetime64(...), 4.0]``) became
    its count of nanoseconds (numpy's ``tolist``), 1704067200000000000, correlated as a rating, silently; it is
    refused as the same date in a datetime64 column is (a pandas Timestamp), naming the row and column."""
    frame = RATED.assign(h=pd.Series([1.0, value, 2.0, 4.0], dtype=object))
    with pytest.raises(InputError) as caught:
        dialeval.correlate(frame, "h", ["m"], n_boot=0)
    said = str(caught.value)
    assert said.startswith(f'data:2: field "h": expected a number (None or NaN for no value), found {shown} ')


def test_a_context_column_of_any_values_groups_the_rows() -> None:
    """A context column holding a date (any value JSON cannot write) was a TypeError ("Object of type Timestamp is
    not JSON serializable"); it groups rows by its text, as strings and lists do."""
    stamp = pd.Timestamp("2020-01-01")
    frame = RATED.assign(context=pd.Series([stamp, stamp, "b", "b"], dtype=object))
    table = dialeval.correlate(frame, "h", ["m"], n_boot=0)
    assert table["n_groups"].tolist() == [2]


def test_responses_without_a_context_are_scored_with_context_col_none() -> None:
    # what the two errors above point to: lengths counted by hand (whitespace tokens)
    scored = dialeval.score(pd.Series(["Hello there", "Yo"]).to_frame("response"), ["length"], context_col=None,
                            cache=False)  # fmt: skip
    assert scored["length"].tolist() == [2.0, 1.0]


@pytest.mark.parametrize("missing", [None, float("nan"), np.float32("nan"), pd.NA, pd.NaT])
def test_a_missing_turn_in_a_list_is_an_empty_turn_in_its_place_as_a_jsonl_null_is(missing: object,
                                                                                    tmp_path: Path) -> None:
    """A frame's list ["Hi", None, "Yo"] was read with an empty turn, as the JSONL list ["Hi", null, "Yo"] is, but
    ["Hi", nan, "Yo"] was refused as "expected a string, found a number" (pd.NA: "found NAType"). Every missing
    value is the empty turn: the rows below share a dialogue id, which holds one context, so each reads as
    ["Hi", "", "Yo"] (a turn dropped, ["Hi", "Yo"], is another context and refused)."""
    frame = pd.DataFrame({"d": ["d1", "d1"], "context": [["Hi", "", "Yo"], ["Hi", missing, "Yo"]],
                          "response": ["Fine", "Sure thing"]})  # fmt: skip
    scored = dialeval.score(frame, ["length"], dialogue_col="d", cache=False, progress=False)
    assert scored["length"].tolist() == [1.0, 2.0]  # words counted by hand
    with pytest.raises(InputError, match='data:2: field "context": dialogue "d1" differs from its first row'):
        dialeval.score(frame.assign(context=[["Hi", "", "Yo"], ["Hi", "Yo"]]), ["length"], dialogue_col="d",
                       cache=False, progress=False)  # fmt: skip
    j = tmp_path / "t.jsonl"  # the file reader's rule: null is the empty turn
    j.write_text('{"d": "d1", "context": ["Hi", "", "Yo"], "response": "Fine"}\n'
                 '{"d": "d1", "context": ["Hi", null, "Yo"], "response": "Sure thing"}\n')  # fmt: skip
    assert dialeval.score(j, ["length"], dialogue_col="d", cache=False, progress=False)["length"].tolist() == [1.0, 2.0]
    # in a list of references a missing one is refused as JSON null is, naming its place (it was "found a number")
    refs = frame.assign(reference=[["Good"], ["Good", missing]])
    with pytest.raises(InputError, match=r'data:2: field "reference\.1": an empty reference in the list'):
        dialeval.score(refs, ["length"], dialogue_col="d", cache=False, progress=False)


def test_dates_as_dialogue_or_system_ids_are_read_by_their_text_as_correlate_reads_them(tmp_path: Path) -> None:
    """A datetime64 column as dialogue_col= (or system_col=) was refused, 'field "d": expected a string, found
    Timestamp', naming neither the keyword nor a fix, while correlate(..., by="d") took each date by its text. score
    reads a date (or a duration) as its text too, as correlate does; a date beside that same text is refused."""
    days = pd.to_datetime(["2024-01-01", "2024-01-01", "2024-01-02"])
    frame = pd.DataFrame({"context": [["Hi"], ["Hi"], ["Yo"]], "response": ["a b", "c", "d e f"], "d": days,
                          "h": [1.0, 2.0, 3.0]})  # fmt: skip
    scored = dialeval.score(frame, ["length"], dialogue_col="d", system_col="d", cache=False, progress=False)
    assert scored["length"].tolist() == [2.0, 1.0, 3.0]  # words counted by hand
    table = dialeval.correlate(scored, "h", level=["dialogue", "system"], method="pearson", n_boot=0)
    assert table["n_groups"].tolist() == [2, 2]  # two days: two dialogues, two systems
    with pytest.raises(InputError, match='data:3: field "context": dialogue "2024-01-01 00:00:00" differs from'):
        dialeval.score(frame.assign(d=days[[0, 0, 0]]), ["length"], dialogue_col="d", cache=False, progress=False)
    mixed = frame.assign(d=pd.Series([days[0], "2024-01-01 00:00:00", days[2]], dtype=object))
    with pytest.raises(InputError, match=r'data:2: field "d": the value .* prints as the value Timestamp'):
        dialeval.score(mixed, ["length"], dialogue_col="d", cache=False, progress=False)
    p = tmp_path / "t.csv"  # a file's dates are text already
    frame.to_csv(p, index=False, columns=["context", "response", "d"])
    from_file = dialeval.score(p, ["length"], dialogue_col="d", system_col="d", cache=False, progress=False)
    assert from_file["length"].tolist() == [2.0, 1.0, 3.0]


def test_a_context_with_backslash_n_as_text_gets_a_warning() -> None:
    """A column of JSON-dumped contexts ("Hi!\\nHow are you?" as text) was read as one turn each, silently; the
    warning says how to split them, and the split frame scores without one."""
    rows = [{"context": "Hi!\\nHow are you?", "response": "Fine."}, {"context": "Yo", "response": "Sup"}]
    with pytest.warns(UserWarning) as caught:
        dialeval.score(rows, ["length"], cache=False, progress=False)
    assert str(caught[0].message) == ('1 of 2 contexts holds "\\n" as text (a backslash and an n), not as a line '
                                      'break, so no turn is split there: if it separates turns, split there first: '
                                      'df["context"] = df["context"].str.split(r"\\n", regex=False)')
    assert caught[0].filename == __file__  # the caller's line, not dialeval's
    df = pd.DataFrame(rows)
    df["context"] = df["context"].str.split(r"\n", regex=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert dialeval.score(df, ["length"], cache=False, progress=False)["length"].tolist() == [1.0, 1.0]


def test_a_context_of_chat_messages_scores_as_its_turns() -> None:
    """The messages form of chat APIs was 'expected a string, found dict'; it scores as the same turns given as text."""
    messages = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi! How are you?"}]
    as_messages = dialeval.score([{"context": messages, "response": "Fine, thanks."}], ["embedding"], cache=False,
                                 progress=False)  # fmt: skip
    as_text = dialeval.score([{"context": "Hi! How are you?", "response": "Fine, thanks."}], ["embedding"],
                             cache=False, progress=False)  # fmt: skip
    assert as_messages["sbert_context"].tolist() == as_text["sbert_context"].tolist()


def test_a_chat_log_named_as_context_and_response_scores_its_last_message() -> None:
    """A log whose last message is the reply (no response column) had no reading; naming its column as both
    scores that message against the messages before it, as the same turns given apart do."""
    log = [{"role": "user", "content": "Hi! How are you?"}, {"role": "assistant", "content": "Fine, thanks."}]
    as_log = dialeval.score(pd.DataFrame({"messages": [log]}), ["embedding"], context_col="messages",
                            response_col="messages", cache=False, progress=False)  # fmt: skip
    apart = dialeval.score([{"context": "Hi! How are you?", "response": "Fine, thanks."}], ["embedding"],
                           cache=False, progress=False)  # fmt: skip
    assert as_log["sbert_context"].tolist() == apart["sbert_context"].tolist()
    assert as_log["messages"].tolist() == [log]  # the input's column is kept as given
    # two bots' logs of one context are one context to correlate (each log, reply included, was its own)
    other = [log[0], {"role": "assistant", "content": "Not great."}]
    rated = dialeval.score(pd.DataFrame({"messages": [log, other, [{"role": "user", "content": "Yo"}, log[1]]],
                                         "h": [4.0, 1.0, 3.0]}), ["length"], context_col="messages",
                           response_col="messages", cache=False, progress=False)  # fmt: skip
    assert dialeval.correlate(rated, "h", ["length"])["n_groups"].tolist() == [2]  # was 3


def test_a_table_file_pandas_reads_names_its_reader(tmp_path: Path) -> None:
    """A Parquet or Excel path said only what score reads; the pandas reader is the way (and needs no export)."""
    for name, reader in (("chats.parquet", "read_parquet"), ("Book.XLSX", "read_excel")):
        (tmp_path / name).write_bytes(b"PAR1")
        with pytest.raises(InputError) as caught:
            dialeval.score(tmp_path / name, ["length"], cache=False, progress=False)
        assert str(caught.value) == (f"{tmp_path / name}: expected a CSV, TSV, JSONL or JSON table or a folder of "
                                     f"dialeval records: read it with pd.{reader}(path) and pass the DataFrame")


def test_a_frame_read_back_from_csv_with_list_contexts_scores_as_the_lists(tmp_path: Path) -> None:
    """df.to_csv then pd.read_csv turns a list of turns into its repr, "['Hi!', 'How are you?']"; it was scored as
    one turn (the whole repr), silently; it scores as the turns it was."""
    rows = pd.DataFrame({"context": [["Hello there.", "Hi! How are you?"]], "response": ["Fine, thanks."]})
    rows.to_csv(tmp_path / "t.csv", index=False)
    back = pd.read_csv(tmp_path / "t.csv")
    assert back["context"][0] == "['Hello there.', 'Hi! How are you?']"
    scored = [dialeval.score(df, ["embedding"], cache=False, progress=False)["sbert_context"][0] for df in (rows, back)]
    assert scored[0] == scored[1]


def test_what_the_cli_summary_warns_of_is_a_python_warning_too() -> None:
    """Systems that differ only in case, and a response that is its context's last turn, were said by the CLI's
    summary only; a notebook got no word of them."""
    rows = [{"context": "Hi!\nFine.", "response": "Fine.", "system": "Bot"},
            {"context": "Yo", "response": "Sup", "system": "bot"}]  # fmt: skip
    with pytest.warns(UserWarning) as caught:
        dialeval.score(rows, ["length"], cache=False, progress=False)
    assert [str(w.message) for w in caught] == [
        'the systems "Bot" and "bot" differ only in letter case: one system written two ways? (kept apart)',
        "1 of 2 responses is the same as the last turn of its context: does the context column hold the reply too?"]
    assert {w.filename for w in caught} == {__file__}


@pytest.mark.parametrize("name", ["predictive-engagement-convai", "lmstyle-mturk"])
def test_a_catalog_frame_with_empty_responses_scores_as_the_cli_scores_it(name: str, shared_data: Path) -> None:
    """load_benchmark's frame of a set whose systems sometimes said nothing (3 and 2 rows) was refused by score:
    'data:5: field "response": no value (3 such rows)'. Those are data; a table's are still refused. No warning:
    the few responses that repeat the user's turn (bots that parrot) are no column mistake."""
    with warnings.catch_warnings(record=True) as loading:  # the data's own warnings, as -b NAME says them
        warnings.simplefilter("always")
        frame = dialeval.load_benchmark(name)
    # lmstyle-mturk's published files repeat 4 queries with other references (its loader's note, data/lmstyle.py)
    said = ["lmstyle: 4 queries are on several lines with different references (all kept)"] * (name == "lmstyle-mturk")
    assert [str(w.message) for w in loading] == said
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        scored = dialeval.score(frame, ["length"], cache=False, progress=False)
    empty = scored["response"] == ""
    assert empty.sum() in (2, 3) and scored.loc[empty, "length"].tolist() == [0.0] * int(empty.sum())
    with pytest.raises(InputError, match='field "response": no value'):
        dialeval.score(frame.to_dict("records"), ["length"], cache=False, progress=False)


def test_a_by_column_holding_one_number_written_two_ways_is_refused() -> None:
    """by= made its groups of the values as text: 1 and 1.0 (a JSONL file's "g": 1 and "g": 1.0, in a column of
    object dtype beside text) were two groups, "g=1" and "g=1.0", of one number, silently. They are refused, naming
    the column, the row and both values; 1 and 2.0 (two numbers) are not."""
    frame = pd.DataFrame({"m": [1.0, 2, 3, 4, 5, 6], "h": [1.0, 3, 2, 5, 4, 6]})
    frame["g"] = pd.Series([1, 1, 1.0, 2, "x", 2], dtype=object)
    with pytest.raises(InputError) as err:
        dialeval.correlate(frame, "h", ["m"], by="g", n_boot=0)
    assert str(err.value) == ('data:3: field "g": the value 1.0 is the number 1 of row 1 written another way, and '
                              "the two would make two groups: give the column one type")
    frame["g"] = pd.Series([1, 1, 2.0, 2.0, "x", "x"], dtype=object)
    # all, g=1, g=2.0, g=x
    assert dialeval.correlate(frame, "h", ["m"], by="g", n_boot=0)["group"].tolist() == ["all", "g=1", "g=2.0", "g=x"]


def test_an_integer_beyond_a_float_is_refused_as_not_finite() -> None:
    """A JSON file's integer past a float's range (10**400, as Python's json reads it) was an OverflowError traceback
    ("int too large to convert to float"); it is refused as an infinite value is, naming the row and the column."""
    with pytest.raises(InputError) as err:
        dialeval.correlate(RATED.assign(h=pd.Series([1, 10**400, 2, 3], dtype=object)), "h", ["m"])
    assert str(err.value).startswith('data:2: field "h": ')
    assert "is beyond a float's range" in str(err.value)


def test_a_column_rated_per_dialogue_with_two_values_in_one_dialogue_is_refused() -> None:
    """The first row's value of each dialogue was taken and the other silently dropped (d1's 5 here: rho 1.0)."""
    frame = pd.DataFrame({"dialogue_id": ["d1", "d1", "d2", "d2", "d3", "d3"], "m": [1.0, 2, 3, 4, 5, 6],
                          "q": [1.0, 5, 2, 2, None, 3]})  # fmt: skip
    frame.attrs["dialogue_ratings"] = ["q"]
    with pytest.raises(InputError) as err:
        dialeval.correlate(frame, "q", ["m"], n_boot=0)
    assert str(err.value) == (
        'data:2: field "q": dialogue "d1" is rated 5.0 here and 1.0 in row 1: a column rated per dialogue holds '
        "one value per dialogue (the same in each of its rows)"
    )
    frame.loc[1, "q"] = 1.0  # agreeing rows (and a row with no value, d3's first) make one rating per dialogue
    table = dialeval.correlate(frame, "q", ["m"], n_boot=0)
    assert table["n_groups"].tolist() == [3] and table["value"].tolist() == [pytest.approx(1.0)]


def test_spearman_p_value_on_a_few_items_is_the_exact_permutation_p() -> None:
    """scipy's t-approximation gave 3 items in order p 0.0 (and 2 items NaN, where pearson and kendall said 1.0).

    By hand: of the 3! = 6 orders of three ranks, two have |rho| = 1 (1,2,3 and 3,2,1): p = 2/6; of the 2! = 2
    orders of two ranks, both have |rho| = 1: p = 1.
    """
    three = dialeval.correlate(pd.DataFrame({"m": [1.0, 2, 3], "h": [1.0, 2, 3]}), "h", ["m"], n_boot=0)
    assert three["p_value"].tolist() == [pytest.approx(1 / 3)]
    two = dialeval.correlate(pd.DataFrame({"m": [1.0, 2], "h": [2.0, 1]}), "h", ["m"], n_boot=0)
    assert (two["value"].tolist(), two["p_value"].tolist()) == ([pytest.approx(-1.0)], [1.0])


def test_metrics_levels_and_methods_in_one_comma_separated_string_are_split_as_the_cli_splits_them() -> None:
    """``metrics="length, distinct"`` was one name: 'unknown metric "length, distinct"; did you mean "distinct"?',
    where ``-m "length, distinct"`` scores both (and the errors' own example is ``bleu,length``); ``level=`` and
    ``method=`` likewise. Column names (``human=``, correlate's ``metrics=``) may hold a comma and are not split."""
    listed = dialeval.score(ROWS, ["length", "distinct"], cache=False, progress=False)
    joined = dialeval.score(ROWS, "length, distinct", cache=False, progress=False)
    assert joined.equals(listed) and joined.attrs["request"]["metrics"] == ["length", "distinct"]
    rated = RATED.assign(system=["a", "b", "c", "a"])
    both = dialeval.correlate(rated, "h", ["m"], level=["turn", "system"], method=["pearson", "kendall"], n_boot=0)
    assert dialeval.correlate(rated, "h", ["m"], level="turn,system", method=" pearson ,kendall", n_boot=0).equals(both)
    with pytest.raises(InputError, match=r'field "metrics": empty metric name'):
        dialeval.score(ROWS, "length,,distinct", cache=False, progress=False)
    with pytest.raises(InputError, match=r'no column "h,m"'):
        dialeval.correlate(rated, "h,m", ["m"], n_boot=0)


@pytest.mark.parametrize("column", ["context_id", "dialogue_id", "item_id"])
@pytest.mark.parametrize(("ids", "message"), [
    ([1, 1.0, 2, 3], "the value 1.0 is the number 1 of row 1 written another way, and the two would make two groups"),
    ([1, "1", 2, 3], "the value '1' (text) prints as the value 1 (a number) of row 1, and the two would make one "
                     "group"),
])  # fmt: skip
def test_an_id_column_holding_one_id_written_two_ways_is_refused_as_a_by_column_is(
    column: str, ids: list[object], message: str
) -> None:
    """An object column of ids (concatenated frames, a JSON file's) was read as text: 1 and 1.0 two contexts (or
    dialogues), 1 and "1" one, silently; the sample level then had 2 groups of 2 rows where 3 were meant, or 1."""
    frame = RATED.assign(**{column: pd.Series(ids, dtype=object)})
    expected = f'data:2: field "{column}": {message}: give the column one type'
    with pytest.raises(InputError, match="^" + re.escape(expected)):
        dialeval.correlate(frame, "h", ["m"], level="sample", n_boot=0)


def test_spaces_around_the_engine_and_device_names_are_dropped_as_the_command_line_drops_them() -> None:
    """engine=" local" was 'unknown engine " local"' where device=" cpu" ran and the command line's --engine " local"
    runs: names are stripped, one rule for both entry points."""
    from dialeval.api import request_of

    request = request_of("length", " local ", False, None, " cpu", False)
    assert (request.engine, request.device) == ("local", "cpu")
    frame = dialeval.score(ROWS, ["length"], engine=" local", cache=False)
    assert frame.attrs["request"]["engine"] == "local" and frame["length"].notna().all()


@pytest.mark.parametrize(
    ("call", "expected"),
    [(lambda: dialeval.score(ROWS, "length,,distinct", cache=False, progress=False),
      'field "metrics": empty metric name in "length,,distinct" (name 2 of 3)'),
     (lambda: dialeval.correlate(RATED, "h", ["m"], level="turn,", n_boot=0),
      'field "level": empty level name in "turn," (name 2 of 2)'),
     (lambda: dialeval.correlate(RATED, "h", ["m"], method=",pearson", n_boot=0),
      'field "method": empty method name in ",pearson" (name 1 of 2)')],
)  # fmt: skip
def test_an_empty_name_in_a_comma_separated_string_is_refused_as_the_cli_refuses_it(call: Callable[[], object],
                                                                                     expected: str) -> None:
    """The API split "a,,b" into a name "", refused later, and differently per keyword ("empty metric name; name
    families ..." for metrics=, an unknown level or method for the others); the CLI says which name of how many
    (``dialeval.words.split_names``, the one splitter both use; messages as ``-m "length,,distinct"`` gives them)."""
    with pytest.raises(InputError) as caught:
        call()
    assert str(caught.value) == expected


@pytest.mark.parametrize("column", ["d", "system"])
def test_score_refuses_an_id_column_with_one_id_written_two_ways(column: str) -> None:
    """score(dialogue_col=) and the system column took 1 and 1.0 (an object column's) as two dialogues or systems,
    and 1 and "1" as one, silently, where correlate refuses such an id column."""
    kwargs = {"dialogue_col": "d"} if column == "d" else {}
    for ids, message in (([1, 1.0], "the value 1.0 is the number 1 of row 1 written another way"),
                         ([1, "1"], "the value '1' (text) prints as the value 1 (a number) of row 1")):  # fmt: skip
        frame = pd.DataFrame({"context": ["Hi", "Hi"], "response": ["Yo", "Hey"],
                              column: pd.Series(ids, dtype=object)})  # fmt: skip
        with pytest.raises(InputError) as caught:
            dialeval.score(frame, ["length"], cache=False, progress=False, **kwargs)
        assert str(caught.value).startswith(f'data:2: field "{column}": {message}')


def test_score_names_the_file_line_of_an_id_written_two_ways(tmp_path: Path) -> None:
    """A JSONL file's dialogue ids 1 and 1.0 made two dialogues; the error names the file's line."""
    path = tmp_path / "rows.jsonl"
    path.write_text('{"context": "Hi", "response": "Yo", "d": 1}\n{"context": "Hi", "response": "Hey", "d": 1.0}\n')
    with pytest.raises(InputError, match=r'rows\.jsonl:2: field "d": the value 1\.0 is the number 1 of line 1 '):
        dialeval.score(path, ["length"], dialogue_col="d", cache=False, progress=False)


def test_correlate_refuses_a_system_written_two_ways() -> None:
    """correlate's system level took 1 and 1.0 (an object column's) as two systems, silently, where by="system"
    refused them."""
    frame = RATED.assign(system=pd.Series([1, 1.0, 2, 2], dtype=object))
    with pytest.raises(InputError) as caught:
        dialeval.correlate(frame, "h", ["m"], level="system", n_boot=0)
    assert str(caught.value).startswith('data:2: field "system": the value 1.0 is the number 1 of row 1 written ')


def test_correlate_names_a_column_name_that_is_no_string() -> None:
    """correlate on a frame whose columns are ints said 'no column "1" (did you mean "1"?)' for human="1"."""
    frame = pd.DataFrame({0: [1.0, 2.0, 3.0], 1: [3.0, 1.0, 2.0]})
    with pytest.raises(InputError) as caught:
        dialeval.correlate(frame, "1", ["0"], n_boot=0)
    assert str(caught.value) == ('data: field "0": the column name 0 (int) is not a string: name the columns with '
                                 "strings (df.columns = df.columns.astype(str))")  # fmt: skip
    frame.columns = frame.columns.astype(str)  # the fix it names
    assert dialeval.correlate(frame, "1", ["0"], n_boot=0)["value"].tolist() == [pytest.approx(-0.5)]  # scipy's rho


@pytest.mark.parametrize("blank", [[None, None], [float("nan"), ""], ["", " "], [[], []]])
def test_a_context_column_empty_in_every_row_is_refused_naming_the_keyword(blank: list[object]) -> None:
    """context_col="ctx" of a column with no value in any row scored every response with no context, silently: a
    reference-free metric then had nothing to compare the response with."""
    frame = pd.DataFrame({"ctx": blank, "response": ["Hello there", "Yo"]})
    with pytest.raises(InputError) as caught:
        dialeval.score(frame, ["length"], context_col="ctx", cache=False, progress=False)
    assert str(caught.value) == ('data: field "ctx": context_col="ctx" names a column with no context in any row: '
                                 "give the column of the contexts, or context_col=None to score without one")
    # the fix it names; lengths counted by hand (whitespace tokens)
    scored = dialeval.score(frame, ["length"], context_col=None, cache=False, progress=False)
    assert scored["length"].tolist() == [2.0, 1.0]


def test_a_context_column_empty_in_a_csv_file_is_refused_naming_the_file(tmp_path: Path) -> None:
    path = tmp_path / "t.csv"
    path.write_text("context,response\n,Hello there\n,Yo\n")
    with pytest.raises(InputError) as caught:
        dialeval.score(path, ["length"], cache=False, progress=False)
    assert str(caught.value).startswith(f'{path}: field "context": context_col="context" names a column with no ')


def test_a_context_column_empty_in_some_rows_scores_those_as_openers() -> None:
    """A row without a context is a response that opens its dialogue (the CLI's --context-col reads it so too)."""
    frame = pd.DataFrame({"ctx": ["Hi", None], "response": ["Hello there", "Yo"]})
    scored = dialeval.score(frame, ["length"], context_col="ctx", cache=False, progress=False)
    assert scored["length"].tolist() == [2.0, 1.0]


def test_a_catalog_frame_rated_without_contexts_scores_with_its_context_column(shared_data: Path) -> None:
    """holistic-fluency rates responses alone: every context is empty, and that is its data, not a wrong column."""
    frame = dialeval.load_benchmark("holistic-fluency")
    assert frame["context"].map(len).eq(0).all()
    scored = dialeval.score(frame.head(3), ["length"], cache=False, progress=False)
    assert scored["length"].notna().all()


def test_a_bool_human_column_is_a_yes_no_judgement_read_as_one_and_zero() -> None:
    """A binary judgement (appropriate or not) is a human column as a rating is: kept, not refused."""
    frame = pd.DataFrame({"m": [1.0, 2.0, 3.0, 4.0, 5.0], "h": [False, True, False, True, True]})
    got = dialeval.correlate(frame, "h", ["m"], method="pearson", n_boot=0)
    expected = stats.pearsonr(frame["m"], frame["h"].astype(float))  # the point-biserial r, computed by scipy
    assert got["value"].tolist() == pytest.approx([expected.statistic])
    assert got["p_value"].tolist() == pytest.approx([expected.pvalue])


@pytest.mark.parametrize(
    ("call", "keyword"),
    [
        (lambda: dialeval.correlate(RATED, "", ["m"]), "human"),
        (lambda: dialeval.correlate(RATED, "h", [""]), "metrics"),
        (lambda: dialeval.correlate(RATED, "h", ["m"], by=""), "by"),
        (lambda: dialeval.score(ROWS, ["length"], response_col="", cache=False, progress=False), "response_col"),
        (lambda: dialeval.score(ROWS, ["length"], context_col="", cache=False, progress=False), "context_col"),
        (lambda: dialeval.score(ROWS, ["length"], dialogue_col="", cache=False, progress=False), "dialogue_col"),
        (lambda: dialeval.score(ROWS, ["length"], system_col="", cache=False, progress=False), "system_col"),
    ],
)
def test_an_empty_column_name_is_refused_naming_the_keyword(call: Callable[[], object], keyword: str) -> None:
    """A column named "" that the frame lacks was 'no column ""; the columns: ...', naming no argument and no field
    (the column's name, the field of such an error, was empty)."""
    with pytest.raises(InputError) as caught:
        call()
    assert f'field "{keyword}": no column ""' in str(caught.value)
