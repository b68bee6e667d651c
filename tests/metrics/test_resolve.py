"""Metric names and -p parameters -> configured families: did-you-mean, typed values, prefix plugins."""

from __future__ import annotations

from importlib.metadata import EntryPoint, entry_points
from pathlib import Path
from typing import Any

import pytest

from dialeval.errors import InputError, UnknownNameError
from dialeval.metrics import METRICS
from dialeval.metrics.resolve import build_metric, family, family_params, metric_params, parse_params, resolve_metrics
from dialeval.registry import RegistryEntryError


def test_prefixed_families_come_from_the_entry_point_group_not_from_the_resolver():
    names = {ep.name: ep.value for ep in entry_points(group="dialeval.metric_prefixes")}
    assert names["judge"] == "dialeval.judges" and names["trained"].startswith("dialeval.trained.metric:")
    assert family("judge:cpdscore-simple").name == "judge:cpdscore-simple"
    assert "judge:custom" in METRICS


def test_a_typo_gets_the_closest_name_and_an_unknown_prefix_is_a_plain_unknown_metric():
    with pytest.raises(UnknownNameError, match='did you mean "rouge"'):
        resolve_metrics(["rouje"])
    with pytest.raises(UnknownNameError, match='unknown metric "nope:x"'):
        family("nope:x")



@pytest.mark.parametrize(("name", "example"), [("judge", "judge:cpdscore-detail (dialeval metrics lists them)"),
                                               ("trained", "trained:PATH (a model folder dialeval train saved)")])
def test_a_prefix_alone_says_how_its_metrics_are_named(name: str, example: str) -> None:
    """-p judge.k=1 and -m judge said 'did you mean "rouge"?'."""
    with pytest.raises(UnknownNameError) as err:
        family(name)
    assert str(err.value) == f'unknown metric "{name}": its metrics are named "{name}:...", e.g. {example}'


def test_parameters_are_typed_and_unknown_keys_or_families_are_errors():
    fams, _ = resolve_metrics(["bleu", "embedding"])
    pairs = parse_params(["bleu.smoothing=method1", "embedding.model=all-minilm-l6-v2"])
    got = metric_params(fams, pairs, {"device": "cpu"})
    assert got["bleu"] == {"smoothing": "method1"}  # bleu has no device: the default is not forced on it
    assert got["embedding"]["device"] == "cpu"
    with pytest.raises(InputError, match='has no parameter "smoothng"'):
        metric_params(fams, parse_params(["bleu.smoothng=method1"]))
    with pytest.raises(InputError, match="no metric of this run has the parameter device"):
        metric_params(fams[:1], parse_params(["device=cpu"]))  # given with -p (not --device), it must be used
    with pytest.raises(UnknownNameError, match='did you mean "bleu"'):
        metric_params(fams, parse_params(["bleux.smoothing=method1"]))
    for pair in ("=x", "bleu.=x"):  # no key: it was "no metric of this run has the parameter " and no name
        with pytest.raises(InputError, match=r'parameter "[^"]*" is not of the form \[metric\.\]key=value'):
            parse_params([pair])


def _built(names: list[str], pairs: list[str]) -> dict[str, Any]:
    """What ``-m NAMES -p PAIRS`` builds: each family's metric, by family name (the path of every command)."""
    parsed = parse_params(pairs)
    fams, _ = resolve_metrics(names, params=parsed)
    return {name: build_metric(name, p) for name, p in metric_params(fams, parsed).items()}


@pytest.mark.parametrize(("output", "fam"), [("bleu4", "bleu"), ("bleu1", "bleu"), ("rougeL", "rouge")])
def test_a_parameter_under_an_output_name_goes_to_its_family_and_its_signature(output: str, fam: str) -> None:
    key, value = ("smoothing", "comperdial") if fam == "bleu" else ("use_stemmer", "yes")
    metric = _built([output], [f"{output}.{key}={value}"])[fam]
    assert f"|{key}:{value}|" in metric.signature
    assert metric.signature == _built([fam], [f"{fam}.{key}={value}"])[fam].signature
    assert family_params({output: {key: value}}) == {fam: {key: value}}


def test_an_unknown_key_under_an_output_name_is_the_error_of_the_family_name() -> None:
    errors = []
    for name in ("bleu4", "bleu"):
        with pytest.raises(InputError) as err:
            _built(["bleu4"], [f"{name}.zzz=1"])
        errors.append(str(err.value))
    assert errors[0] == errors[1] == (
        'field "--param": metric "bleu" has no parameter "zzz"; its parameters: lowercase, smoothing, tokenizer'
    )


@pytest.mark.parametrize(
    ("names", "pair", "absent"),
    [
        (["sacrebleu"], "bleu.smoothing=comperdial", "bleu"),
        (["length"], "bleu.zzz=1", "bleu"),
        (["length"], "bleu4.smoothing=comperdial", "bleu"),  # an output of a family not in the run
        (["length", "bleu"], "likelihood.context_turns=2", "likelihood"),
    ],
)
def test_a_parameter_for_a_family_not_in_the_run_is_an_error(names: list[str], pair: str, absent: str) -> None:
    with pytest.raises(InputError) as err:
        _built(names, [pair])
    assert err.value.field == "--param"
    assert err.value.message.startswith(f'no metric of this run is "{absent}"')
    assert ", ".join(names) in err.value.message  # and what the run does hold
    with pytest.raises(UnknownNameError, match='unknown metric "bleu9"'):
        _built(names, ["bleu9.smoothing=none"])  # an unknown name stays a did-you-mean error


def test_two_names_of_one_family_may_not_give_one_parameter_two_values() -> None:
    with pytest.raises(InputError) as err:
        _built(["bleu"], ["bleu.smoothing=method2", "bleu4.smoothing=method3"])
    assert err.value.field == "--param"
    assert err.value.message == (
        "bleu.smoothing='method2' and bleu4.smoothing='method3' set the same parameter of \"bleu\""
    )
    same = _built(["bleu"], ["bleu.smoothing=method2", "bleu4.smoothing=method2"])["bleu"]
    assert same.config.smoothing == "method2"


def test_one_parameter_given_twice_is_refused_not_the_last_one_taken() -> None:
    """-p bleu.smoothing=method1 -p bleu.smoothing=method2 ran method2, silently; so did --model-param."""
    for option in ("--param", "--model-param"):
        with pytest.raises(InputError) as err:
            parse_params(["bleu.smoothing=method1", "bleu.smoothing=method2"], option)
        assert (err.value.field, err.value.message) == (option, 'parameter "bleu.smoothing" is given twice')
    with pytest.raises(InputError, match='parameter "k" is given twice'):
        parse_params(["k=1", "k=1"])
    assert parse_params(["k=1", "bleu.k=2"]) == {"*": {"k": "1"}, "bleu": {"k": "2"}}  # the family's own wins later


@pytest.mark.parametrize("pair", [".smoothing=method1", " .smoothing=method1", ".=1"])
def test_a_parameter_with_an_empty_metric_name_is_refused(pair: str) -> None:
    """".smoothing=x" (a dot before the key, no metric) was taken as "smoothing=x", for every metric of the run."""
    with pytest.raises(InputError) as err:
        parse_params([pair])
    assert (err.value.field, err.value.message) == ("--param", f'parameter "{pair}" is not of the form '
                                                               "[metric.]key=value")


def test_an_output_names_parameters_count_when_asking_whether_its_family_can_run(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    with pytest.raises(InputError, match='metric "nli" cannot run here'):
        resolve_metrics(["nli"], params=parse_params(["nli_contradiction.device=cpu"]))
    fams, _ = resolve_metrics(["nli"], params=parse_params([f"nli_contradiction.model={tmp_path}"]))
    assert [f.name for f in fams] == ["nli"]


@pytest.mark.parametrize(("names", "words"), [([""], "empty metric name"), (["  "], "empty metric name"),
                                              (["bleu", "", "length"], "empty metric name"),
                                              # it said "empty metric name" of a list without any name
                                              ([], "an empty list names no metric"),
                                              # a name given twice was scored once, silently, where every other
                                              # option refuses a repeat
                                              (["length", "bleu", "length"], 'metric "length" is given')])  # fmt: skip
def test_an_empty_metric_name_is_an_error_not_the_default_set(names: list[str], words: str) -> None:
    with pytest.raises(InputError) as err:
        resolve_metrics(names)
    assert err.value.field == "--metrics"
    assert err.value.message.startswith(words)
    assert [f.name for f in resolve_metrics(["bleu", "length"])[0]] == ["bleu", "length"]


@pytest.mark.parametrize(
    ("names", "pair", "message"),
    [
        (["bleu"], "bleu.smoothing=bad", "bleu.smoothing='bad': not one of none, comperdial, method0, method1"),
        (["bleu4"], "bleu4.smoothing=bad", "bleu.smoothing='bad': not one of none, comperdial, method0, method1"),
        (["bleu"], "bleu.tokenizer=bad", "bleu.tokenizer='bad': not one of nltk-word, whitespace"),
        (["meteor"], "meteor.tokenizer=bad", "meteor.tokenizer='bad': not one of nltk-word, whitespace"),
        (["sacrebleu"], "sacrebleu.tokenize=bad", "sacrebleu.tokenize='bad': not one of none, zh, 13a, intl"),
        (["sacrebleu"], "sacrebleu.smooth_method=bad", "sacrebleu.smooth_method='bad': not one of none, floor"),
        (["meteor"], "meteor.alpha=nan", "meteor.alpha=nan: not a finite number"),
        (["meteor"], "meteor.beta=inf", "meteor.beta=inf: not a finite number"),
        (["meteor"], "gamma=-inf", "meteor.gamma=-inf: not a finite number"),
        (["meteor"], "meteor.alpha=1.5", "meteor.alpha=1.5: must be between 0 and 1"),
        (["meteor"], "meteor.gamma=2", "meteor.gamma=2.0: must be between 0 and 1"),
        (["meteor"], "meteor.beta=-1", "meteor.beta=-1.0: must be at least 0"),
        (["chrf"], "chrf.char_order=-1", "chrf.char_order=-1: must be between 1 and 100"),
        (["chrf"], "chrf.char_order=0", "chrf.char_order=0: must be between 1 and 100"),
        (["chrfpp"], "chrfpp.word_order=-1", "chrf.word_order=-1: must be between 0 and 100"),
        (["chrf"], "chrf.beta=-2", "chrf.beta=-2: must be at least 0"),
        # Python's words: "invalid literal for int() with base 10: '1.5'", "could not convert string to float: 'x'"
        (["chrf"], "chrf.char_order=1.5", "chrf.char_order='1.5': expected a whole number"),
        (["meteor"], "meteor.alpha=x", "meteor.alpha='x': expected a number"),
        # int(" 5") and float("0.5 ") took the spaces, where "no " and " method2" were refused: one rule, exact
        (["chrf"], "chrf.char_order= 5", "chrf.char_order=' 5': expected a whole number"),
        (["meteor"], "meteor.alpha=0.5 ", "meteor.alpha='0.5 ': expected a number"),
        (["meteor"], "alpha=\t0.5", "meteor.alpha='\\t0.5': expected a number"),
        (["likelihood"], "likelihood.max_response_tokens=0", "likelihood.max_response_tokens=0: must be at least 1"),
        (["likelihood"], "likelihood.max_context_tokens=0", "likelihood.max_context_tokens=0: must be at least 1"),
        (["likelihood"], "likelihood.context_turns=-5", "likelihood.context_turns=-5: must be at least 0 (0 = all"),
        (["likelihood"], "likelihood.template=nobraces", "likelihood.template='nobraces': has no {context}"),
        (["likelihood"], "likelihood.template={context} {x}", "likelihood.template='{context} {x}': unknown place"),
    ],
)
def test_a_bad_parameter_value_is_one_input_error_naming_it(names: list[str], pair: str, message: str) -> None:
    fam = family(names[0]).name
    if fam == "likelihood":
        pytest.importorskip("torch")  # the metric is refused without its extra, before any value is read
    with pytest.raises(InputError) as err:
        _built(names, [pair])
    assert err.value.field == "--param"
    assert err.value.message.startswith(message), err.value.message


@pytest.mark.parametrize(
    ("name", "pairs", "shown"),
    [
        ("bleu", ["bleu.smoothing=none", "bleu.tokenizer=whitespace"], ["smoothing:none", "tokenizer:whitespace"]),
        ("meteor", ["meteor.alpha=0.8", "meteor.tokenizer=whitespace"], ["alpha:0.8", "tokenizer:whitespace"]),
        ("sacrebleu", ["sacrebleu.tokenize=intl", "sacrebleu.smooth_method=floor"], ["tokenize:intl"]),
        ("chrf", ["chrf.char_order=1", "chrf.word_order=0", "chrf.beta=0"], ["char_order:1", "word_order:0"]),
        ("likelihood", ["likelihood.context_turns=0", "likelihood.max_response_tokens=1",
                        "likelihood.template=A {{b}}: {context} B:"], ["context_turns:0", "max_response_tokens:1"]),
    ],
)
def test_valid_parameter_values_still_build_and_are_signed(name: str, pairs: list[str], shown: list[str]) -> None:
    if name == "likelihood":
        pytest.importorskip("torch")
    metric = _built([name], pairs)[name]
    for part in shown:
        assert f"|{part}|" in metric.signature


ROWS = [
    {"context": "Hi! How are you?", "response": "Fine thanks - and you?", "reference": "I am good and you?"},
    {"context": "What is the capital of France?", "response": "Paris.", "reference": "It is Paris."},
]


@pytest.mark.parametrize(
    ("metrics", "params", "field", "message"),
    [
        ([""], {}, "metrics", "empty metric name"),
        (["bleu", "", "length"], {}, "metrics", "empty metric name"),
        (["sacrebleu"], {"bleu.smoothing": "comperdial"}, "params", 'no metric of this run is "bleu"'),
        (["bleu4"], {"bleu4.smoothing": "bad"}, "params", "bleu.smoothing='bad': not one of"),
        (["meteor"], {"meteor.alpha": float("nan")}, "params", "meteor.alpha=nan: not a finite number"),
    ],
)
def test_the_api_raises_the_same_input_errors_naming_its_arguments(
    metrics: list[str], params: dict[str, Any], field: str, message: str
) -> None:
    """The CLI's message, with the argument of dialeval.score where the CLI names its option (--metrics, --param)."""
    import dialeval

    with pytest.raises(InputError) as err:
        dialeval.score(ROWS, metrics, params=params, cache=False, progress=False)
    assert err.value.field == field and err.value.message.startswith(message), str(err.value)


def test_the_api_applies_an_output_names_parameter_to_its_family() -> None:
    import dialeval

    df = dialeval.score(ROWS, ["bleu4"], params={"bleu4.smoothing": "comperdial"}, cache=False, progress=False)
    assert "|smoothing:comperdial|" in df.attrs["signatures"]["bleu4"]
    default = dialeval.score(ROWS, ["bleu4"], cache=False, progress=False)
    assert "|smoothing:method1|" in default.attrs["signatures"]["bleu4"]


@pytest.mark.parametrize(
    ("args", "error"),
    [
        (["-m", "bleu", "-p", "bleu.smoothing=bad"], "bleu.smoothing='bad': not one of none, comperdial"),
        (["-m", "sacrebleu", "-p", "sacrebleu.smooth_method=bad"], "sacrebleu.smooth_method='bad': not one of"),
        (["-m", "meteor", "-p", "meteor.alpha=nan"], "meteor.alpha=nan: not a finite number"),
        (["-m", "sacrebleu", "-p", "bleu.smoothing=comperdial"], 'no metric of this run is "bleu"'),
        (["-m", "bleu4", "-p", "bleu4.zzz=1"], 'metric "bleu" has no parameter "zzz"'),
    ],
)
def test_the_cli_prints_one_error_line_and_exits_2(tmp_path: Path, args: list[str], error: str) -> None:
    from typer.testing import CliRunner

    from dialeval.cli import app

    table = tmp_path / "t.csv"
    table.write_text("context,response,reference\nHi,Hello there,Hello you\n", encoding="utf-8")
    out = tmp_path / "out.jsonl"
    res = CliRunner().invoke(app, ["score", "--path", str(table), "--response-col", "response", "--context-col",
                                   "context", "--reference-col", "reference", "--no-cache", "-o", str(out), *args],
                             terminal_width=300)  # fmt: skip
    assert res.exit_code == 2, res.output
    assert f'error: field "--param": {error}' in res.output
    assert "Traceback" not in res.output and not out.exists()


def test_a_parameter_of_a_metric_without_any_says_it_has_none() -> None:
    with pytest.raises(InputError) as err:
        _built(["length"], ["length.device=gpu"])
    assert err.value.message == 'metric "length" has no parameter "device"; its parameters: none'


def test_a_whole_number_past_64_bits_is_refused_when_the_metric_is_built() -> None:
    """-p chrf.beta=1 followed by 200 zeros was accepted (beta has no maximum) and scoring died in sacrebleu with
    OverflowError "int too large to convert to float" (a traceback, after the inputs were read)."""
    huge = str(10**200)
    fams, _ = resolve_metrics(["chrf"])
    params = metric_params(fams, parse_params([f"chrf.beta={huge}"]))
    with pytest.raises(InputError, match=r"chrf\.beta=10+: too large a whole number \(at most 9223372036854775807\)"):
        build_metric("chrf", params["chrf"])
    # the largest signed 64-bit number (2**63 - 1) is still a number it takes
    assert build_metric("chrf", {"beta": 2**63 - 1}).config.beta == 9223372036854775807


def test_a_metric_plugin_that_cannot_be_imported_stops_only_a_run_that_names_it(monkeypatch) -> None:
    """An installed plugin whose module is gone made every run a ModuleNotFoundError traceback (-m length too):
    the registry imported it at its first look, and the output map read every family."""
    import dialeval.registry as registry

    broken = EntryPoint("broken_w", "no_such_module_w:Thing", "dialeval.metrics")
    monkeypatch.setattr(registry, "entry_points", lambda group: (broken,) if group == "dialeval.metrics" else ())
    monkeypatch.setattr(METRICS, "_items", dict(METRICS._items))
    monkeypatch.setattr(METRICS, "_plugins_loaded", False)
    assert [f.name for f in resolve_metrics(["length", "rougeL"])[0]] == ["length", "rouge"]
    ready, skipped = resolve_metrics(None)
    assert "length" in [f.name for f in ready]
    assert skipped["broken_w"] == (
        "metric \"broken_w\" (no_such_module_w:Thing) cannot be loaded: No module named 'no_such_module_w'"
    )
    with pytest.raises(RegistryEntryError, match=r'^metric "broken_w" \(no_such_module_w:Thing\) cannot be loaded'):
        resolve_metrics(["broken_w"])
