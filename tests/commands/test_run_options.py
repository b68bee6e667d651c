"""One scoring request from the command line and from Python.

Every command that scores takes the same run options (names, short forms, defaults, help),
read by typer from the real CLI app; the request they build is the one the Python API builds
from its keyword arguments, and ``run.json`` stores it as given. ``lmstyle`` and ``train``
refuse the options they cannot honour with one line.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import typer
from tests.commands.cli_runner import invoke, refused

from dialeval.api import request_of
from dialeval.cli import app
from dialeval.runinfo import RunInfo
from dialeval.scoring import ScoringRequest

#: The commands that score, as the CLI's words.
SCORING = [["score"], ["benchmark"], ["stress"], ["judge", "run"], ["lmstyle"], ["train"]]
RUN_OPTIONS = {"--metrics", "--param", "--device", "--engine", "--ray-address", "--ray-workers",
               "--ray-cpus-per-worker", "--cache", "--no-cache", "--quiet"}  # fmt: skip


def _command(words: list[str]) -> Any:
    """The click command typer builds for ``dialeval WORDS``."""
    cmd = typer.main.get_command(app)
    for word in words:
        cmd = cmd.commands[word]  # type: ignore[attr-defined]
    return cmd


def _run_options(words: list[str]) -> dict[str, tuple[tuple[str, ...], object, str | None]]:
    """The command's run options: long name -> (all its names, default, help)."""
    out = {}
    for p in _command(words).params:
        long = max(p.opts, key=len)
        if long in RUN_OPTIONS:
            out[long] = (tuple(sorted(p.opts)), p.default, getattr(p, "help", None))
    return out


def test_every_scoring_command_takes_the_same_run_options() -> None:
    """The same names, short forms, defaults and help; judge run's --protocol stands for --metrics."""
    reference = _run_options(["score"])
    assert set(reference) == RUN_OPTIONS
    assert "repeatable" in str(reference["--metrics"][2]) and "repeatable" in str(reference["--param"][2])
    for words in SCORING:
        got = _run_options(words)
        want = {k: v for k, v in reference.items() if words != ["judge", "run"] or k != "--metrics"}
        assert got == want, words
        assert "--engine" in invoke(*words, "--help").output


def _commands(cmd: Any, words: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...], Any]]:
    """Every leaf command under ``cmd``, with the words that name it."""
    subs = getattr(cmd, "commands", None)
    if not subs:
        return [(words, cmd)]
    return [leaf for name, sub in subs.items() for leaf in _commands(sub, (*words, name))]


def test_every_command_with_bootstrap_resamples_takes_both_their_names() -> None:
    """train and quality train took --n-boot only ("No such option: --boot"), which meta and benchmark also take."""
    names = {words: tuple(sorted(p.opts)) for words, cmd in _commands(typer.main.get_command(app))
             for p in cmd.params if "--n-boot" in p.opts}  # fmt: skip
    assert {("train",), ("quality", "train"), ("meta",), ("benchmark",)} <= set(names)
    assert set(names.values()) == {("--boot", "--n-boot")}, names


def test_the_api_and_score_build_the_same_request(tmp_path: Path) -> None:
    """``dialeval score``'s summary holds its request: the one ``dialeval.score``'s keywords give."""
    table = tmp_path / "t.csv"
    table.write_text("context,response,reference\nHi there,Hello you!,Hello there!\n", encoding="utf-8")
    cache = tmp_path / "scores.sqlite"
    res = invoke("score", "--path", table, "--response-col", "response", "--context-col", "context",
                 "--reference-col", "reference",
                 "-m", "length,bleu", "-p", "bleu.smoothing=method1", "--cache", cache, "--json",
                 "-o", tmp_path / "s.jsonl")  # fmt: skip
    assert res.exit_code == 0, res.output
    got = json.loads(res.output[res.output.index("{") :])["request"]
    api = request_of(["length", "bleu"], "local", cache, {"bleu.smoothing": "method1"}, None, True)
    assert got == api.record()
    assert got["metrics"] == ["length", "bleu"] and got["params"] == ["bleu.smoothing=method1"]
    assert got["cache"] == str(cache) and got["no_cache"] is False


def _score_table(tmp_path: Path, *param: str) -> Any:
    """``dialeval score`` of a one-row table with length and bleu, ``-p`` each of ``param``, ``--json``."""
    table = tmp_path / "t.csv"
    table.write_text("context,response,reference\nHi there,Hello you!,Hello there!\n", encoding="utf-8")
    params = [word for p in param for word in ("-p", p)]
    return invoke("score", "--path", table, "--response-col", "response", "--context-col", "context",
                  "--reference-col", "reference", "-m", "length,bleu", *params, "--no-cache", "--json",
                  "-o", tmp_path / "s.jsonl")  # fmt: skip


@pytest.mark.parametrize(
    "given", ["bleu.smoothing =method2", " bleu.smoothing=method2", "bleu .smoothing=method2",
              "bleu. smoothing=method2", "\tbleu . smoothing \t=method2"],
)  # fmt: skip
def test_spaces_around_the_metric_and_key_of_a_param_are_dropped(tmp_path: Path, given: str) -> None:
    """Spaces in the key of -p were kept: "bleu.smoothing =x" was 'metric "bleu" has no parameter "smoothing "; its
    parameters: ..., smoothing, ...', " bleu.smoothing=x" 'unknown metric " bleu"; did you mean "bleu"?'. The key is
    now read without them (the help says so), as the run records it."""
    res = _score_table(tmp_path, given)
    assert res.exit_code == 0, res.output
    assert json.loads(res.output[res.output.index("{") :])["request"]["params"] == ["bleu.smoothing=method2"]


def _score_metrics(tmp_path: Path, *words: str) -> Any:
    """``dialeval score`` of a one-row table with ``words`` (the -m options), ``--json``."""
    table = tmp_path / "t.csv"
    table.write_text("context,response,reference\nHi there,Hello you!,Hello there!\n", encoding="utf-8")
    return invoke("score", "--path", table, "--response-col", "response", "--context-col", "context",
                  "--reference-col", "reference", *words, "--no-cache", "--json",
                  "-o", tmp_path / "s.jsonl")  # fmt: skip


def test_metrics_given_twice_are_both_scored(tmp_path: Path) -> None:
    """`-m length -m bleu` scored bleu alone, silently (the last -m won, where -p accumulates): -m is repeatable,
    each value split at commas, so it is -m length,bleu."""
    res = _score_metrics(tmp_path, "-m", "length", "-m", "bleu,distinct")
    assert res.exit_code == 0, res.output
    assert json.loads(res.output[res.output.index("{") :])["request"]["metrics"] == ["length", "bleu", "distinct"]
    scored = {json.loads(line)["metric"] for line in (tmp_path / "s.jsonl").read_text().splitlines()}
    assert {"length", "bleu1", "distinct1"} <= scored


@pytest.mark.parametrize(("words", "message"), [
    (["-m", "length", "-m", "length"], 'field "--metrics": metric "length" is given twice'),
    (["-m", "length,bleu", "-m", "bleu"], 'field "--metrics": metric "bleu" is given twice'),
    (["-m", "length", "-m", ""], 'field "--metrics": empty metric name'),
    (["-m", "length", "-m", "bleu,,distinct"], 'field "--metrics": empty metric name in "bleu,,distinct"'),
])  # fmt: skip
def test_repeated_metrics_refuse_what_one_list_refuses(tmp_path: Path, words: list[str], message: str) -> None:
    refused(_score_metrics(tmp_path, *words), message)
    assert not (tmp_path / "s.jsonl").exists()


def test_spaces_around_the_names_of_run_options_are_dropped(tmp_path: Path) -> None:
    """`--engine " local"` was 'unknown engine " local"; did you mean "local"?' where `-m " length"` and
    `--device " cpu"` were read without the spaces: a name's spaces are dropped, in each run option (the help of -p
    says so), as a -p key's are; a -p value is taken as given."""
    res = _score_metrics(tmp_path, "-m", " length", "--engine", " local ", "--device", "cpu ")
    assert res.exit_code == 0, res.output
    request = json.loads(res.output[res.output.index("{") :])["request"]
    assert (request["metrics"], request["engine"], request["device"]) == (["length"], "local", "cpu")
    assert "as around the names of -m, --engine, --device" in str(_run_options(["score"])["--param"][2])


def test_spaces_around_the_ray_address_are_dropped() -> None:
    from dialeval.commands.options import _request_from

    given = {"metrics": [], "param": [], "engine": "ray", "ray_address": " auto ", "no_cache": True, "quiet": True}
    assert _request_from(given).ray_address == "auto"


@pytest.mark.parametrize("address", ["", " "])
def test_an_empty_ray_address_is_refused(tmp_path: Path, address: str) -> None:
    """`--engine ray --ray-address ""` (an unset $RAY_ADDRESS) ended in Ray's "ValueError: Invalid address format"
    traceback once Ray was imported; it is refused before any work, as an empty --cache or --device is."""
    res = _score_metrics(tmp_path, "-m", "length", "--engine", "ray", "--ray-address", address)
    refused(res, 'field "--ray-address": is empty; give host:port or auto')
    assert not (tmp_path / "s.jsonl").exists()


def test_spaces_of_a_param_value_are_kept(tmp_path: Path) -> None:
    """The value after "=" is taken as given (likelihood.turn_separator=" | " means its spaces): a choice with a
    space before it is refused, quoted so the space shows."""
    res = _score_table(tmp_path, "bleu.smoothing = method2")
    assert res.exit_code == 2, res.output
    assert "error: field \"--param\": bleu.smoothing=' method2': not one of " in res.output


def test_spaces_around_a_param_for_every_metric_are_dropped(tmp_path: Path) -> None:
    """`-p " lowercase=no"` (key=value for every metric) said "no metric of this run has the parameter  lowercase"."""
    res = _score_table(tmp_path, " lowercase=no")
    assert res.exit_code == 0, res.output
    assert json.loads(res.output[res.output.index("{") :])["request"]["params"] == ["lowercase=no"]


def test_run_json_stores_the_request_as_given(tmp_path: Path, shared_data: Path) -> None:
    out = tmp_path / "s"
    res = invoke("stress", "-m", "length", "--perturb", "truncation", "--limit", "2", "--boot", "10",
                 "--subsets", "none", "--plot", "none", "--no-cache", "-q", "-o", out)  # fmt: skip
    assert res.exit_code == 0, res.output
    stored = json.loads((out / "run.json").read_text(encoding="utf-8"))
    want = ScoringRequest(metrics=("length",), no_cache=True, progress=False)
    assert stored["request"] == want.record()
    run = RunInfo.model_validate(stored).root
    assert ScoringRequest.model_validate(run.request) == want


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["lmstyle", "-p", "k=1"], ['field "--param"', "lmstyle", "-p"]),
        (["lmstyle", "--device", "cpu"], ['field "--device"', "takes no -p or --device"]),  # it named --param
        (["lmstyle", "-m", "bleu"], ['"bleu"', "paper"]),
        (["train", "--train", "usr-pc", "--folds", "2", "-m", "length"],
         ['field "--metrics"', "train takes no -m", "--model-param"]),  # it named --param, not given
        (["train", "--train", "usr-pc", "--folds", "2", "--device", "cpu"], ['field "--device"', "takes no --device"]),
        (["train", "--train", "usr-pc", "--folds", "2", "-p", "bleu.smoothing=method1"],
         ['field "--param"', "train takes no -p"]),
    ],
)
def test_options_a_command_cannot_honour_are_refused_in_one_line(
    tmp_path: Path, args: list[str], words: list[str]
) -> None:
    out = tmp_path / "out"
    res = invoke(*args, "-o", out, "--no-cache")
    assert res.exit_code == 2, res.output
    errors = [line for line in res.output.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and all(w in errors[0] for w in words), res.output
    assert not out.exists()


@pytest.mark.parametrize("ray_option", [["--ray-address", "auto"], ["--ray-workers", "2"],
                                        ["--ray-cpus-per-worker", "2"]])  # fmt: skip
def test_a_ray_option_without_the_ray_engine_is_refused(tmp_path: Path, ray_option: list[str]) -> None:
    """--ray-cpus-per-worker without --engine ray was ignored, where --ray-address and --ray-workers were refused."""
    out = tmp_path / "s.jsonl"
    res = invoke("score", "-b", "usr-tc", "--limit", "1", "-m", "length", *ray_option, "--no-cache", "-o", out)
    assert res.exit_code == 2, res.output
    assert 'field "--engine": --ray-address, --ray-workers and --ray-cpus-per-worker need --engine ray' in res.output
    assert not out.exists()


@pytest.mark.parametrize("cpus", ["nan", "inf", "0", "-1"])
def test_ray_cpus_per_worker_must_be_a_finite_positive_number(tmp_path: Path, cpus: str) -> None:
    """nan and inf passed the check (nan <= 0 is false) and were a ValueError or OverflowError traceback
    once Ray had started (int(cluster CPUs // cpus)); all four are refused before Ray is imported."""
    out = tmp_path / "s.jsonl"
    res = invoke("score", "-b", "usr-tc", "--limit", "1", "-m", "length", "--engine", "ray",
                 "--ray-cpus-per-worker", cpus, "--no-cache", "-o", out)  # fmt: skip
    assert res.exit_code == 2, res.output
    assert 'error: field "--ray-cpus-per-worker": --ray-cpus-per-worker must be a finite number above 0' in res.output
    assert not out.exists()


def test_a_limit_above_the_contexts_of_the_data_says_all_are_used_once(tmp_path: Path) -> None:
    """--limit 500 on a table of three contexts took all three silently (lmstyle refuses a --limit above its
    queries): a user who meant a quick run learned nothing. One line says it, on the screen once; under --json in the
    command's list of notes (score's warnings); a --limit within the data says nothing."""
    from tests.commands.cli_runner import COLS, RATED, ROWS

    table = tmp_path / "t.csv"
    table.write_text(ROWS, encoding="utf-8")  # three contexts (Hi there, How are you?, Yo), one response each
    note = "--limit 500 is above the 3 contexts of t; all 3 are used"  # t: the table's name, its file's stem
    res = invoke("score", "--path", table, *COLS, "-m", "length", "--limit", "500", "-o", tmp_path / "s.jsonl",
                 "--no-cache")  # fmt: skip
    assert res.exit_code == 0, res.output
    assert res.output.count(note) == 1
    res = invoke("score", "--path", table, *COLS, "-m", "length", "--limit", "500", "-o", tmp_path / "s.jsonl",
                 "--no-cache", "--json")  # fmt: skip
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["warnings"].count(note) == 1  # beside the table's: "system" is not read
    bench = ["benchmark", "--path", table, *RATED, "-m", "length", "--boot", "10", "--no-cache"]
    res = invoke(*bench, "--limit", "500", "-o", tmp_path / "b", "--json")
    assert res.exit_code == 0, res.output
    assert note in json.loads(res.stdout)["notes"]
    assert note in (tmp_path / "b" / "table.md").read_text()  # the lines under the table, as run.json's notes
    res = invoke(*bench, "--limit", "500", "-o", tmp_path / "b2")
    assert res.exit_code == 0, res.output
    assert res.output.count(note) == 1
    res = invoke(*bench, "--limit", "3", "-o", tmp_path / "b3", "--json")  # all three, as asked: nothing to say
    assert res.exit_code == 0, res.output
    assert not [n for n in json.loads(res.stdout)["notes"] if "--limit" in n]


def test_cache_with_no_cache_is_refused_before_any_input_is_read(tmp_path: Path) -> None:
    """--cache with --no-cache was refused only where the engine was built: after the table was read and its
    reading shown. The run options refuse it now, before the command starts."""
    table = tmp_path / "t.csv"
    table.write_text("context,response\nHi there,Hello you!\n", encoding="utf-8")
    res = invoke("score", "--path", table, "--response-col", "response", "--context-col", "context", "-m", "length",
                 "--cache", tmp_path / "c.sqlite", "--no-cache", "-o", tmp_path / "s.jsonl")  # fmt: skip
    assert res.exit_code == 2, res.output
    assert res.output.strip() == 'error: field "--no-cache": --cache and --no-cache contradict each other'


@pytest.mark.parametrize(("metric", "key"), [("bleu", "smoothing"), ("bleu", "tokenizer")])
def test_a_param_value_too_long_for_a_file_name_gets_the_fields_own_check(
    tmp_path: Path, metric: str, key: str
) -> None:
    """A value of 300 characters without a space or a brace was looked up as a file (is it an input of the run?),
    and the OSError "File name too long" ended the run as 'error: aaaa...: too long a name for the file system',
    naming neither -p nor the field. It names no file, so the field's own check refuses it."""
    long = "a" * 300  # a name of 300 bytes: Linux file systems take 255
    res = _score_table(tmp_path, f"{metric}.{key}={long}")
    refused(res, f"error: field \"--param\": {metric}.{key}='{long}': not one of ")
    assert not (tmp_path / "s.jsonl").exists()
