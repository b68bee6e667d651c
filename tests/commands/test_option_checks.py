"""Bad option values are one error line naming the option, exit 2, before any work (no cache, no output).

Through the real CLI (typer's runner, in process): ``--device``, ``-p FAMILY.device``, ``--turn-sep ""``,
``--cache`` (and ``$DIALEVAL_SCORE_CACHE``, and the default cache in ``$DIALEVAL_CACHE``) naming a text file, a
folder, another program's database or an unwritable place, ``-m ""`` and ``-m bleu,,length``, ``--n-boot -5``, and
empty or unknown levels and methods.
"""

from __future__ import annotations

import json
import re
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from tests.commands.cli_runner import COLS, RATED, invoke, refused
from typer.testing import Result

from dialeval.errors import InputError

#: The views shipped until the forty-eighth session: a cross-encoder over MiniLM (quality's ``encoder``).
MINILM_VIEWS = Path(__file__).resolve().parents[2] / "candidates" / "quality-minilm-views" / "views"


@pytest.fixture
def no_gpu(monkeypatch: pytest.MonkeyPatch) -> None:
    """torch sees no GPU, whatever this machine has."""
    torch = pytest.importorskip("torch")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 0)


def score(csv: Path, out: Path, *extra: str | Path) -> Result:
    return invoke("score", "--path", csv, *COLS, "-o", out, *extra)


@pytest.mark.parametrize("command", ["score", "benchmark"])
@pytest.mark.parametrize("metric", ["length", "embedding"])
def test_a_device_that_is_not_one_is_refused(command: str, metric: str, rows: Path, tmp_path: Path) -> None:
    out = tmp_path / ("x.jsonl" if command == "score" else "b")
    extra = RATED if command == "benchmark" else COLS
    res = invoke(command, "--path", rows, *extra, "-m", metric, "--device", "gpu", "-o", out, "--no-cache")
    refused(res, 'field "--device": "gpu" is not a device; use cpu, cuda, cuda:N, mps or auto')
    assert not out.exists()


def test_cuda_without_a_gpu_is_refused(rows: Path, tmp_path: Path, no_gpu: None) -> None:
    out = tmp_path / "x.jsonl"
    refused(score(rows, out, "-m", "embedding", "--device", "cuda", "--no-cache"), 'field "--device"',
            "torch sees no CUDA device")  # fmt: skip
    assert not out.exists()


def test_a_device_parameter_is_checked_as_the_option_is(rows: Path, tmp_path: Path) -> None:
    out = tmp_path / "x.jsonl"
    res = score(rows, out, "-m", "embedding", "-p", "embedding.device=gpu", "--no-cache")
    refused(res, 'field "--param": embedding.device="gpu" is not a device')
    assert not out.exists()


@pytest.mark.parametrize(("param", "words"), [
    # refused as the model loads, on the first batch
    ("nli.model=nowhere", 'nli.model: "nowhere" is not a transformers model folder'),
    ("embedding.model=nowhere", 'embedding.model: "nowhere" is neither a packaged encoder'),
    # refused as the metric is built
    ("style.target=rude", 'style.target: unknown style "rude"'),
    ("quality.runtime=fast", 'quality.runtime: runtime "fast" is not one of auto, torch, onnx'),
    # each named a file under the one given ("x.csv/sensible.json: ... Not a directory"), or said "not found"
    ("quality.views={rows}", 'quality.views: "{rows}" is a file, not a folder: give a folder that dialeval '
                             "quality train-views wrote"),
    ("quality.large_heads={tmp}/none", 'quality.large_heads: "{tmp}/none" is not found'),
    # it said field "model", which names no option (the encoder runs for views over MiniLM, not for the shipped
    # ones over mpnet: there -p quality.encoder is refused as changing no score)
    ("quality.views={minilm} quality.encoder={tmp}/none",
     'quality.encoder: "{tmp}/none" is neither a packaged encoder'),
])  # fmt: skip
def test_a_parameter_refused_by_its_metric_is_named_as_p_names_it(
    param: str, words: str, rows: Path, tmp_path: Path
) -> None:
    """Each said field "model" (or "target", "runtime"), which names no option; now the -p key, as a value its
    rule refuses already was."""
    out = tmp_path / "x.jsonl"
    param, words = (x.format(rows=rows, tmp=tmp_path, minilm=MINILM_VIEWS) for x in (param, words))
    params = [x for one in param.split(" ") for x in ("-p", one)]
    refused(score(rows, out, "-m", param.split(".")[0], *params, "--no-cache"), f'field "--param": {words}')
    assert not out.exists()


@pytest.mark.parametrize("param", ["embedding.model=nowhere", "likelihood.model=nowhere", "embedding.model= "])
def test_a_model_parameter_refused_as_the_signature_is_made_is_named_as_p_names_it(
    param: str, rows: Path, tmp_path: Path
) -> None:
    """With the score cache on (the default), the signature (the model's hash) is made before any batch: the model
    was refused there as field "model", which names no option (the test above runs --no-cache)."""
    out = tmp_path / "x.jsonl"
    res = score(rows, out, "-m", param.split(".")[0], "-p", param, "--cache", tmp_path / "c.sqlite")
    refused(res, f'field "--param": {param.split("=")[0]}: "{param.split("=")[1]}" is neither')
    assert not out.exists()


def test_a_folder_the_shipped_ensemble_never_reads_is_refused_before_any_scoring(rows: Path, tmp_path: Path) -> None:
    """MiniLM's heads give the shipped quality nothing (tests/quality/test_metric.py says which parts run): a heads
    folder was read, hashed into the signature and changed no score."""
    out = tmp_path / "x.jsonl"
    refused(score(rows, out, "-m", "quality", "-p", f"quality.heads={tmp_path}", "--no-cache"),
            f'field "--param": quality.heads="{tmp_path}" changes no score: the shipped ensemble uses no feature of '
            "MiniLM's heads, and the larger encoder's heads give the sub-scores: drop it")  # fmt: skip
    assert not out.exists()


def test_cpu_is_fine(rows: Path, tmp_path: Path) -> None:
    res = score(rows, tmp_path / "x.jsonl", "-m", "length", "--device", "cpu", "--no-cache")
    assert res.exit_code == 0, res.output


def test_an_empty_turn_separator_is_refused(tmp_path: Path) -> None:
    csv = tmp_path / "multi.csv"
    csv.write_text('context,response\n"Hi\nthere",Hello!\n', encoding="utf-8")
    refused(score(csv, tmp_path / "x.jsonl", "-m", "length", "--turn-sep", "", "--no-cache"),
            'field "--turn-sep": is empty')  # fmt: skip
    assert not (tmp_path / "x.jsonl").exists()
    refused(score(csv, tmp_path / "x.jsonl", "-m", "length", "--delimiter", ";;", "--no-cache"),
            'field "--delimiter": must be one character, not ";;"')  # fmt: skip
    tabbed = tmp_path / "tabbed.csv"  # "\t" as typed in a shell is one character: a tab
    tabbed.write_text("context\tresponse\nHi\tHello!\n", encoding="utf-8")
    assert score(tabbed, tmp_path / "x.jsonl", "-m", "length", "--delimiter", "\\t", "--no-cache").exit_code == 0


def test_a_delimiter_for_a_json_table_is_refused_not_ignored(tmp_path: Path) -> None:
    for name in ("rows.jsonl", "rows.json"):
        table = tmp_path / name
        table.write_text('{"context": "Hi", "response": "Hello!"}\n', encoding="utf-8")
        refused(score(table, tmp_path / "x.jsonl", "-m", "length", "--delimiter", ";", "--no-cache"),
                f'{name}: field "--delimiter": splits the fields of a CSV or TSV table, and this file is JSON')
        assert not (tmp_path / "x.jsonl").exists()


def test_a_mapping_files_delimiter_for_a_json_table_is_refused_at_its_line(tmp_path: Path) -> None:
    table = tmp_path / "rows.jsonl"  # the mapping's delimiter did nothing with a JSON table, silently
    table.write_text('{"context": "Hi", "response": "Hello!"}\n', encoding="utf-8")
    mapping = tmp_path / "m.yaml"
    mapping.write_text('response: response\ncontext: context\ndelimiter: ";"\n', encoding="utf-8")
    out = tmp_path / "x.jsonl"
    refused(invoke("score", "--path", table, "--mapping", mapping, "-m", "length", "-o", out, "--no-cache"),
            'm.yaml:3: field "delimiter": splits the fields of a CSV or TSV table, and rows.jsonl is JSON')
    assert not out.exists()


@pytest.mark.parametrize("what", ["text", "folder", "other-db", "below-a-file"])
@pytest.mark.parametrize("given", ["option", "env"])
def test_a_cache_that_cannot_be_one_is_refused_before_any_scoring(
    what: str, given: str, rows: Path, tmp_path: Path
) -> None:
    cache = tmp_path / "c.sqlite"
    words = {"text": "not a score cache (SQLite) file", "folder": "is a folder",
             "other-db": "not a score cache (its tables: t)", "below-a-file": "is a file, not a folder"}  # fmt: skip
    if what == "text":
        cache.write_text("junk\n")
    elif what == "folder":
        cache.mkdir()
    elif what == "other-db":
        with sqlite3.connect(cache) as db:
            db.execute("CREATE TABLE t (x)")
    else:
        cache = rows / "c.sqlite"
    out = tmp_path / "x.jsonl"
    if given == "option":
        res = score(rows, out, "-m", "length", "--cache", cache)
    else:
        env = {"DIALEVAL_SCORE_CACHE": str(cache)}
        res = invoke("score", "--path", rows, *COLS, "-m", "length", "-o", out, env=env)
    field = "--cache" if given == "option" else "$DIALEVAL_SCORE_CACHE"  # it said --cache, which was not given
    refused(res, f'{cache}: field "{field}"', words[what])
    assert not out.exists()
    assert "items" not in res.output  # refused before the table was read


def test_an_unwritable_cache_folder_is_refused(rows: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    ro = tmp_path / "ro"
    ro.mkdir()
    real = os.access
    monkeypatch.setattr(os, "access", lambda p, mode: False if Path(p) == ro else real(p, mode))
    refused(score(rows, tmp_path / "x.jsonl", "-m", "length", "--cache", ro / "c.sqlite"),
            f'{ro / "c.sqlite"}: field "--cache": cannot be created: no permission to write in {ro}')  # fmt: skip


@pytest.mark.parametrize(("what", "words"), [
    ("a file", "the cache folder cannot be created (File exists): set $DIALEVAL_CACHE to a folder you can write"),
    ("below a file", "the cache folder cannot be created (Not a directory)"),
    ("read-only", "cannot be created: no permission to write in {cache}"),
    ("scores a folder", "is a folder; give the score cache's file (SQLite)"),
    ("scores not sqlite", "is not a score cache (SQLite) file"),
])  # fmt: skip
def test_a_default_cache_that_cannot_be_one_is_refused_before_any_scoring(
    what: str, words: str, rows: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The default score cache ($DIALEVAL_CACHE/scores.sqlite) was checked only when the run opened it: the table
    was read and shown first, and a bad one was named "--cache", an option not given. The words are the checks'
    own (paths.cache_dir, cache.check_cache_path); the path named is the cache folder or the file in it."""
    import os

    monkeypatch.delenv("DIALEVAL_SCORE_CACHE")  # tests/conftest.py sets it; the default is what is checked here
    cache = tmp_path / "cache"
    named = cache / "scores.sqlite"
    if what == "a file":
        cache.write_text("x")
        named = cache
    elif what == "below a file":
        (tmp_path / "notes.txt").write_text("x")
        cache = named = tmp_path / "notes.txt" / "cache"
    elif what == "read-only":
        cache.mkdir()
        real = os.access
        monkeypatch.setattr(os, "access", lambda p, mode: False if Path(p) == cache else real(p, mode))
    else:
        (cache / "scores.sqlite").mkdir(parents=True)
        if what == "scores not sqlite":
            (cache / "scores.sqlite").rmdir()
            (cache / "scores.sqlite").write_text("junk\n")
    monkeypatch.setenv("DIALEVAL_CACHE", str(cache))
    out = tmp_path / "x.jsonl"
    res = score(rows, out, "-m", "length")
    refused(res, f'{named}: field "$DIALEVAL_CACHE": {words.format(cache=cache)}')
    assert not out.exists()
    assert "items" not in res.output  # refused before the table was read


@pytest.mark.parametrize(("value", "words"), [("", "empty metric name"), (" ", "empty metric name"),
                                              ("bleu,,length", 'empty metric name in "bleu,,length" (name 2 of 3)'),
                                              ("length,", "(name 2 of 2)")])  # fmt: skip
@pytest.mark.parametrize("command", ["score", "benchmark", "meta"])
def test_an_empty_metric_name_is_refused(command: str, value: str, words: str, rows: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    if command == "meta":
        res = invoke("meta", tmp_path / "none.jsonl", "--path", rows, *RATED, "-m", value, "-o", out)
    else:
        res = invoke(command, "--path", rows, *RATED, "-m", value, "-o", out, "--no-cache")
    refused(res, 'field "--metrics"', words)
    assert not out.exists()


@pytest.mark.parametrize(("value", "words"), [("-5", "must be >= 0"),
                                              # numpy's "Maximum allowed dimension exceeded" traceback
                                              ("99999999999999999999", "must be at most 100,000 resamples")])
@pytest.mark.parametrize("flag", ["--n-boot", "--boot"])  # --boot: its earlier name, still read
@pytest.mark.parametrize("command", ["benchmark", "meta", "stress"])
def test_a_boot_out_of_range_is_refused(
    command: str, flag: str, value: str, words: str, rows: Path, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    scores = tmp_path / "none.jsonl"
    if command == "stress":
        res = invoke("stress", "--no-cache", "-m", "length", flag, value, "-o", out)
    else:
        args = ["meta", scores] if command == "meta" else ["benchmark", "--no-cache"]
        res = invoke(*args, "--path", rows, *RATED, "-m", "length", flag, value, "-o", out)
    refused(res, 'field "--n-boot": ' + words, f"got {int(value):,}")
    assert not out.exists()


def test_every_bootstrap_count_is_spelled_n_boot() -> None:
    """One name on every command that resamples (``--boot`` is still read where it was the name)."""
    for command in ("benchmark", "meta", "stress", "train", "quality train", "study report", "study import-agreement"):
        res = invoke(*command.split(), "--help")
        assert res.exit_code == 0 and "--n-boot" in res.output, (command, res.output)


LEVEL_CASES = [("--level", "", "empty level name"),
               ("--level", "turn,,system", 'empty level name in "turn,,system" (name 2 of 3)'),
               ("--level", "turns", 'unknown level turns (did you mean "turn"?); use turn, sample, dialogue, system'),
               ("--method", " ", "empty method name"),
               ("--method", "spearmann", 'unknown method spearmann (did you mean "spearman"?); use pearson, '
                'spearman, kendall'),
               ("--method", "rho", "unknown method rho; use pearson, spearman, kendall")]  # fmt: skip


@pytest.mark.parametrize(("option", "value", "words"), LEVEL_CASES)
@pytest.mark.parametrize("command", ["benchmark", "meta"])
def test_an_empty_or_unknown_level_or_method_is_refused_before_any_scoring(
    command: str, option: str, value: str, words: str, rows: Path, tmp_path: Path
) -> None:
    """``--level ''`` fell back to turn level silently; ``benchmark --level turns`` was refused after the scoring."""
    out, cache = tmp_path / "out", tmp_path / "cache.sqlite"
    first = ["meta", tmp_path / "none.jsonl"] if command == "meta" else ["benchmark", "-m", "length", "--cache", cache]
    refused(invoke(*first, "--path", rows, *RATED, option, value, "-o", out), f'field "{option}": {words}')
    assert not out.exists() and not cache.exists()


@pytest.mark.parametrize(("option", "value", "words"), [
    ("-m", "bogus", 'field "--metrics": no scores for metric bogus; the scores hold: length'),
    ("--by", "", 'field "--by": no tag "" on the scores; break down by one of: system, context_id, dialogue_id'),
    ("--by", "task",
     'field "--by": no tag "task" on the scores; break down by one of: system, context_id, dialogue_id'),
])  # fmt: skip
def test_meta_names_the_option_a_library_check_refused(
    option: str, value: str, words: str, rows: Path, tmp_path: Path
) -> None:
    """The library's checks name ``metrics`` and ``by``; ``meta`` says ``--metrics`` and ``--by``.

    ``--by ''`` was read as no breakdown.
    """
    bench = invoke("benchmark", "--path", rows, *RATED, "-m", "length", "--no-cache", "-o", tmp_path / "b")
    assert bench.exit_code == 0, bench.output
    refused(invoke("meta", tmp_path / "b" / "scores.jsonl", "--path", rows, *RATED, option, value), words)


@pytest.mark.parametrize(("args", "words"), [
    (["score", "-m", "lenght"], 'field "--metrics": unknown metric "lenght"; did you mean "length"?'),
    (["score", "-m", "length", "-p", "lenght.x=1"], 'field "--param": unknown metric "lenght"; did you mean'),
    (["score", "-b", "usr", "-m", "length"], 'field "--benchmark": unknown benchmark "usr"; did you mean "usr-tc"?'),
    # -b "" scored the default usr-tc, all of it, silently (an empty name was read as no -b)
    (["score", "-b", "", "-m", "length"], 'field "--benchmark": unknown benchmark ""; known: dstc9,'),
    (["data", "show", "-b", "usr"], 'field "--benchmark": unknown benchmark "usr"; did you mean "usr-tc"?'),
    (["train", "--train", "usr-tc", "--test", "usr"], 'field "--test": unknown benchmark "usr"; did you mean'),
    (["judge", "run", "--protocol", "cpdscore-simpl"], 'field "--protocol": unknown protocol "cpdscore-simpl"'),
    (["study", "import-agreement", "-b", "usr"], 'field "--benchmark": unknown benchmark with per-annotator'),
])  # fmt: skip
def test_an_unknown_name_is_refused_naming_the_option_that_gave_it(args: list[str], words: str,
                                                                   tmp_path: Path) -> None:
    """Each said 'unknown metric "lenght"; did you mean ...' and no option, where every other bad value names its."""
    out = ["-o", tmp_path / "out"] if args[0] in ("score", "train", "judge") else []
    refused(invoke(*args, *out), words)
    assert not (tmp_path / "out").exists()


def test_spaces_around_a_benchmark_name_are_dropped_as_around_the_other_run_names(tmp_path: Path) -> None:
    """``-b ' usr-tc'`` was 'unknown benchmark " usr-tc"; did you mean "usr-tc"?' while ``-m ' length'`` ran, and
    stress's ``-b ' dailydialog++'`` was no ranking test: 'unknown benchmark ...; did you mean "gupta-dailydialog"?'."""
    res = invoke("score", "-b", " usr-tc ", "-m", "length", "--limit", "1", "--no-cache", "-o", tmp_path / "s.jsonl")
    assert res.exit_code == 0, res.output
    shown = invoke("data", "show", "-b", " usr-tc", "--json")
    assert shown.exit_code == 0, shown.output
    assert json.loads(shown.output)["name"] == "usr-tc"
    refused(invoke("stress", "-b", " dailydialog++", "--perturb", "negation", "-o", tmp_path / "st"),
            'field "--perturb": --perturb does not apply to dailydialog++')  # fmt: skip


def test_a_missing_table_is_not_found_before_it_needs_a_mapping(tmp_path: Path) -> None:
    res = invoke("score", "--path", tmp_path / "missing.csv", "-m", "length", "-o", tmp_path / "s.jsonl")
    refused(res, f"{tmp_path / 'missing.csv'}: file not found")


def test_a_turn_separator_of_backslash_n_as_text_is_said_with_two_backslashes(tmp_path: Path) -> None:
    r"""``--turn-sep '\n'`` is a line break (as ever); ``'\\n'`` is the two characters a JSON dump writes for one,
    which no value could name before (both were read as a line break), and the warning says to pass it."""
    csv = tmp_path / "dump.csv"
    csv.write_text("context,response\nHi!\\nHow are you?,Fine\n", encoding="utf-8")
    shown = invoke("data", "show", "--path", csv, *COLS[:4], "--json")
    assert json.loads(shown.output)["warnings"][0].endswith("pass --turn-sep '\\\\n' (in a mapping file, "
                                                            "turn_separator: '\\n')")  # fmt: skip
    out = tmp_path / "records"
    assert invoke("data", "import", "--path", csv, *COLS[:4], "--turn-sep", "\\\\n", "-o", out).exit_code == 0
    turns = json.loads((out / "dialogues.jsonl").read_text(encoding="utf-8"))["turns"]
    assert [t["text"] for t in turns] == ["Hi!", "How are you?"]


def test_the_help_of_mapping_names_every_key_a_mapping_file_takes() -> None:
    """--mapping's help listed 17 of the 22 keys (annotator_columns, dimension, delimiter, keep_empty_responses were
    missing before labels was added)."""
    from dialeval.commands.common import _TABLE_PARAMS
    from dialeval.data.generic import MappingFile

    help_text = next(p.default.help for p in _TABLE_PARAMS if p.name == "mapping")
    assert [k for k in MappingFile.model_fields if k not in re.findall(r"\w+", help_text)] == []


def test_labels_give_words_their_numbers_as_a_mapping_files_labels_do(tmp_path: Path) -> None:
    """Ratings written as words were readable only with a mapping file; --labels gives the same records."""
    table, mapping = tmp_path / "v.csv", tmp_path / "m.yaml"
    table.write_text("context,response,verdict\nHi,Hello,Good\nHi,Yo,Poor\nBye,Ciao,Fair\n")
    mapping.write_text("context: context\nresponse: response\nratings: {verdict: Overall}\nlabels: {Poor: 1, Fair: 2, "
                       "Good: 3}\n")  # fmt: skip
    shown = invoke("data", "show", "--path", table, *COLS, "--rating-col", "verdict=Overall", "--labels",
                   "Poor=1, Fair=2", "--labels", "Good=3", "--json")  # fmt: skip
    from_file = invoke("data", "show", "--path", table, "--mapping", mapping, "--json")
    assert shown.exit_code == 0 and from_file.exit_code == 0, (shown.output, from_file.output)
    assert json.loads(shown.output) == json.loads(from_file.output)
    for out in ("a", "b"):
        args = ["data", "import", "--path", table, "-o", tmp_path / out]
        extra = ["--mapping", mapping] if out == "b" else [*COLS, "--rating-col", "verdict=Overall", "--labels",
                                                           "Poor=1,Fair=2,Good=3"]  # fmt: skip
        assert invoke(*args, *extra).exit_code == 0
    ratings = [[json.loads(x)["value"] for x in (tmp_path / out / "ratings.jsonl").read_text().splitlines()]
               for out in ("a", "b")]  # fmt: skip
    assert ratings[0] == ratings[1] == [3.0, 1.0, 2.0]


@pytest.mark.parametrize(("labels", "words"), [
    (["Good"], 'field "--labels": expected WORD=NUMBER, e.g. Good=3, got "Good"'),
    (["Good=three"], 'field "--labels": expected WORD=NUMBER, e.g. Good=3, got "Good=three"'),
    (["=3"], 'field "--labels": expected WORD=NUMBER, e.g. Good=3, got "=3"'),
    (["Good=nan"], 'field "--labels": expected WORD=NUMBER, e.g. Good=3, got "Good=nan"'),
    (["Good=3", "Good=2"], 'field "--labels": the word "Good" is given twice'),
])  # fmt: skip
def test_a_bad_label_is_refused(labels: list[str], words: str, tmp_path: Path) -> None:
    table = tmp_path / "v.csv"
    table.write_text("context,response,verdict\nHi,Hello,Good\n")
    given = [x for label in labels for x in ("--labels", label)]
    refused(invoke("data", "show", "--path", table, *COLS, "--rating-col", "verdict", *given), words)
    alone = invoke("data", "show", "--path", table, *COLS, "--labels", "Good=3")
    refused(alone, 'field "--labels": turns the words of the ratings into numbers, and no --rating-col is given')


REFS = "context,response,ref\nHi there,Hello!,Hello there\nHow are you?,Fine thanks,Good\nYo,Hey you,Hey there\n"


@pytest.mark.parametrize(("args", "words"), [
    # refused as the parameters are read (no such key), as the metric is built (its rule), and as the metrics are
    # resolved (bleu needs a reference: a table without --reference-col has none)
    (["-m", "length", "-p", "length.foo=1"], 'metric "length" has no parameter "foo"'),
    (["-m", "chrf", "-p", "chrf.char_order=0", "--reference-col", "ref"], "chrf.char_order=0: must be between 1"),
    (["-m", "bleu"], 'metric "bleu" cannot run here: 3 of 3 items have no reference'),
])  # fmt: skip
@pytest.mark.parametrize("command", ["score", "benchmark"])
def test_a_bad_parameter_or_metric_leaves_no_new_cache(command: str, args: list[str], words: str,
                                                       tmp_path: Path) -> None:
    """The score cache was made (with its folder) before the metrics were built: each refusal left an empty
    new/c.sqlite behind."""
    rows = tmp_path / "refs.csv"
    rows.write_text(REFS, encoding="utf-8")
    cache, out = tmp_path / "new" / "c.sqlite", tmp_path / ("x.jsonl" if command == "score" else "b")
    rated = ["--rating-col", "ref=Overall", "--labels", "Hello there=1,Good=2,Hey there=3"] if command == "benchmark" \
        else []  # fmt: skip
    refused(invoke(command, "--path", rows, *COLS, *rated, *args, "--cache", cache, "-o", out), words)
    assert not (tmp_path / "new").exists() and not out.exists()


@pytest.mark.parametrize("end", ["/", "/."])
def test_a_cache_given_as_a_folder_is_refused_and_no_file_appears(rows: Path, tmp_path: Path, end: str) -> None:
    """``--cache new/`` made the SQLite file ``new`` (``Path`` drops the ``/``), where a folder was meant; ``new/.``
    was refused saying it ends in "/", which it does not."""
    out = tmp_path / "x.jsonl"
    refused(score(rows, out, "-m", "length", "--cache", f"{tmp_path}/new{end}"),
            f'{tmp_path}/new: field "--cache": ends in "{end}", naming a folder; give the score cache\'s file')
    assert not (tmp_path / "new").exists() and not out.exists()


@pytest.mark.parametrize("given, option", [
    ({"response_col": ""}, "--response-col"),
    ({"response_col": "resp", "context_col": " "}, "--context-col"),
    ({"response_col": "resp", "system_col": ""}, "--system-col"),
    ({"response_col": "resp", "reference_col": ("gold", "")}, "--reference-col"),
    ({"response_col": "resp", "rating_col": ("q",), "annotator_col": ""}, "--annotator-col"),
])  # fmt: skip
def test_an_empty_column_option_is_refused_naming_it(given: dict[str, Any], option: str) -> None:
    """--response-col "" (an unset shell variable) said only "missing column in the header; there are: ...", with no
    option named; each column option given no name is now refused as that option's error."""
    from dialeval.commands.common import TableOptions

    with pytest.raises(InputError) as caught:
        TableOptions(**given).read()
    assert str(caught.value) == f'field "{option}": is empty: give the name of a column of the table'
