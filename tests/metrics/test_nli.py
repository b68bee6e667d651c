"""NLI contradiction: a clear error without a model; the by-path wiring against the model called directly."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from dialeval.errors import InputError
from dialeval.metrics.base import MetricInput
from dialeval.metrics.nli import NliMetric
from dialeval.metrics.resolve import parse_params, resolve_metrics
from dialeval.metrics.style import StyleMetric
from dialeval.schema import Turn

_spec = importlib.util.spec_from_file_location(
    "tiny_classifier", Path(__file__).resolve().parents[1] / "models" / "tiny_classifier.py"
)
assert _spec is not None and _spec.loader is not None
tiny = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(tiny)


def test_no_model_is_a_clear_error(monkeypatch, tmp_path):
    monkeypatch.delenv("DIALEVAL_NLI_MODEL", raising=False)
    with pytest.raises(InputError, match="needs a local NLI model folder"):
        NliMetric()
    assert "DIALEVAL_NLI_MODEL" in (NliMetric.unavailable_reason() or "")
    # A model given as a parameter makes it runnable without the variable.
    assert NliMetric.unavailable_reason({"model": str(tmp_path)}) is None
    families, _ = resolve_metrics(["nli"], params=parse_params([f"nli.model={tmp_path}"]))
    assert families == [NliMetric]
    with pytest.raises(InputError, match="cannot run here"):
        resolve_metrics(["nli"], params=parse_params(["bleu.model=x"]))
    with pytest.raises(InputError, match="not a transformers model folder"):
        NliMetric(model=str(tmp_path)).compute([MetricInput(response="x", context=(Turn(speaker="A", text="y"),))])


def test_max_contradiction_over_context_and_facts(tmp_path):
    pytest.importorskip("transformers")
    # A real transformers classifier with random weights: no NLI model installs offline (see tiny_classifier).
    folder = tiny.build(tmp_path / "nli", ["entailment", "neutral", "contradiction"])
    items = [
        MetricInput(
            response="I have two dogs.",
            context=(Turn(speaker="A", text="Old turn."), Turn(speaker="A", text="Do you have pets?")),
            knowledge=("I am allergic to dogs.", "I live in Paris."),
        ),
        MetricInput(response="Hello!"),
    ]
    out = NliMetric(model=str(folder)).compute(items)["nli_contradiction"]
    premises = ["Do you have pets?", "I am allergic to dogs.", "I live in Paris."]
    direct = tiny.direct_probs(folder, premises, ["I have two dogs."] * 3)
    assert out[0] == pytest.approx(max(p[2] for p in direct), abs=1e-5)
    assert out[1] is None
    no_facts = NliMetric(model=str(folder), use_knowledge=False).compute(items[:1])["nli_contradiction"]
    assert no_facts[0] == pytest.approx(direct[0][2], abs=1e-5)


def test_model_without_contradiction_label_is_refused(tmp_path):
    pytest.importorskip("transformers")
    folder = tiny.build(tmp_path / "sent", ["NEGATIVE", "POSITIVE"])
    with pytest.raises(InputError, match="contradiction"):
        NliMetric(model=str(folder)).compute([MetricInput(response="x", context=(Turn(speaker="A", text="y"),))])


def test_a_negative_context_turns_is_refused_and_zero_keeps_only_the_knowledge(tmp_path):
    with pytest.raises(InputError) as err:
        NliMetric(model=str(tmp_path), context_turns=-1)
    assert err.value.field == "--param"
    assert err.value.message == "nli.context_turns=-1: must be at least 0 (0 = no context turn, only the knowledge)"
    item = MetricInput(response="r", context=(Turn(speaker="A", text="turn"),), knowledge=("fact",))
    assert NliMetric(model=str(tmp_path), context_turns=0)._premises(item) == ["fact"]
    assert NliMetric(model=str(tmp_path), context_turns=1)._premises(item) == ["turn", "fact"]


def test_a_model_given_with_a_tilde_is_hashed_into_the_signature(monkeypatch, tmp_path):
    """``model=~/NAME`` (as ``-p`` and an env file keep it) signed the hash of no file: a model changed in place
    between two runs kept its signature, and the score cache served the old model's scores."""
    import hashlib

    monkeypatch.setenv("HOME", str(tmp_path))
    folder = tmp_path / tmp_path.name  # a name no other test hashes (fingerprints are kept per process and path)
    folder.mkdir()
    config = b'{"id2label": {"0": "contradiction"}}'
    (folder / "config.json").write_bytes(config)
    # computed here as fingerprint's rule says: sha256 over each file's relative name and its sha256, first 12 digits
    expected = hashlib.sha256(b"config.json" + hashlib.sha256(config).hexdigest().encode()).hexdigest()[:12]
    empty = hashlib.sha256(b"").hexdigest()[:12]  # what it signed: the hash of no file
    assert expected != empty
    model = f"~/{folder.name}"
    assert f"|model_sha:{expected}|" in NliMetric(model=model, device="cpu").signature
    assert f"|model_sha:{expected}|" in StyleMetric(sentiment_model=model, device="cpu").signature


LONG = " ".join(["I really like walking my dog in the park every morning."] * 60)


def test_a_pair_longer_than_the_classifier_reads_is_said_on_its_score(tmp_path):
    """classify() cuts a (premise, response) pair to the tokenizer's 512 word pieces (truncation=True) with nothing
    said: two responses that differ only past it got the same score. The items now say which text was cut."""
    pytest.importorskip("transformers")
    from dataclasses import replace

    from transformers import AutoTokenizer

    folder = tiny.build(tmp_path / "nli", ["entailment", "neutral", "contradiction"])
    tok = AutoTokenizer.from_pretrained(str(folder))
    # the tokenizer's own counts: the pair passes its 512 word pieces; "longest_first" cuts the longer text alone
    assert tok.model_max_length == 512 and len(tok("Do you have pets?", LONG, verbose=False)["input_ids"]) > 512
    short = MetricInput(response="I have two dogs.", context=(Turn(speaker="A", text="Do you have pets?"),))
    items = [
        short,
        replace(short, response=LONG),
        replace(short, response=LONG + " But I never want to see a cat again!"),
        replace(short, knowledge=(LONG,)),  # a long fact, a short response: the fact is cut
        replace(short, context=(Turn(speaker="A", text=LONG),), response=LONG),  # both cut
        MetricInput(response=LONG),  # no premise: no pair, no value, nothing to say
    ]
    metric = NliMetric(model=str(folder), device="cpu")
    scores = metric.compute(items)["nli_contradiction"]
    assert scores[1] == scores[2]  # the end past the limit is not read
    read = "read in part (the classifier reads a premise and the response together to their first 512 word pieces)"
    assert metric.cut(items) == [{}, *[{"nli_contradiction": f"{who} {read}"} for who in (
        "response", "response", "a fact or persona line", "response and a context turn")], {}]  # fmt: skip
    assert NliMetric(model=str(folder), device="cpu", use_knowledge=False).cut(items[3:4]) == [{}]


def test_the_cut_notes_reach_the_scores_and_the_score_command(tmp_path):
    import json

    from tests.commands.cli_runner import invoke

    from dialeval.schema import Candidate, Dialogue
    from dialeval.scoring import score_metrics

    pytest.importorskip("transformers")
    folder = tiny.build(tmp_path / "nli", ["entailment", "neutral", "contradiction"])
    dialogues = {"d": Dialogue(id="d", turns=[Turn(speaker="A", text="What do you do?")])}
    cands = [Candidate(id=k, dialogue_id="d", turn_index=1, system=k, text=t)
             for k, t in {"short": "I walk my dog.", "long": LONG}.items()]  # fmt: skip
    (run,) = score_metrics([NliMetric(model=str(folder), device="cpu")], cands, dialogues)
    said = "response read in part (the classifier reads a premise and the response together to their first 512 word " \
           "pieces)"  # fmt: skip
    assert {s.item_id: s.extras for s in run.scores} == {"short": {}, "long": {"cut": said}}
    rows = tmp_path / "rows.csv"
    rows.write_text(f"context,response\nWhat do you do?,I walk my dog.\nWhat do you do?,{LONG}\n")
    cols = ("--response-col", "response", "--context-col", "context", "-p", f"nli.model={folder}", "--no-cache")
    res = invoke("score", "--path", rows, *cols, "-m", "nli", "-o", tmp_path / "s.jsonl")
    assert res.exit_code == 0, res.output
    assert f"read in part (cut): nli_contradiction 1 ({said})" in " ".join(res.output.split())
    res = invoke("score", "--path", rows, *cols, "-m", "nli", "-o", tmp_path / "t.jsonl", "--json")
    assert json.loads(res.stdout)["metrics"]["nli"]["cut"] == {"nli_contradiction": 1}


def test_the_cut_on_a_cold_cache_loads_no_weights(tmp_path, monkeypatch):
    """NliMetric.cut ran for every run, its scores all from the cache too, and loaded the whole classifier (a
    RoBERTa-large MNLI is ~1.4 GB) to tokenize the pairs; it now reads the tokenizer alone, and says the same."""
    pytest.importorskip("transformers")
    from transformers import AutoModelForSequenceClassification

    from dialeval.models import loading

    folder = tiny.build(tmp_path / "nli", ["entailment", "neutral", "contradiction"])

    def weights(*args: object, **kwargs: object) -> None:
        raise AssertionError("cut loaded the classifier's weights")

    monkeypatch.setattr(AutoModelForSequenceClassification, "from_pretrained", weights)
    loading.load_classifier.cache_clear()
    items = [MetricInput(response=r, context=(Turn(speaker="A", text="Do you have pets?"),)) for r in ("Yes.", LONG)]
    # as test_a_pair_longer_than_the_classifier_reads_is_said_on_its_score: LONG and a short premise pass the 512
    read = "read in part (the classifier reads a premise and the response together to their first 512 word pieces)"
    assert NliMetric(model=str(folder), device="cpu").cut(items) == [{}, {"nli_contradiction": f"response {read}"}]
    assert loading.load_classifier.cache_info().misses == 0


def test_an_item_without_a_premise_says_why_it_has_no_value(tmp_path):
    """An item with no context turn or fact to check got None and the scorer's 'metric could not score this item'."""
    metric = NliMetric(model=str(tmp_path))
    no_premise = MetricInput(response="r", context=(Turn(speaker="A", text="  "),))
    assert metric.lacks("nli_contradiction", no_premise) == (
        "no premise to check the response against (no context turn with text, no fact or persona line)"
    )
    only_turn = MetricInput(response="r", context=(Turn(speaker="A", text="turn"),))
    assert metric.lacks("nli_contradiction", only_turn) is None
    assert NliMetric(model=str(tmp_path), context_turns=0).lacks("nli_contradiction", only_turn) == (
        "no premise to check the response against (context_turns=0, no fact or persona line)"
    )


def test_an_empty_response_gets_no_value_and_says_why(tmp_path):
    """A blank response was classified against each premise as a hypothesis of no word, and got that made-up P."""
    pytest.importorskip("transformers")
    folder = tiny.build(tmp_path / "nli", ["entailment", "neutral", "contradiction"])
    metric = NliMetric(model=str(folder), device="cpu")
    context = (Turn(speaker="A", text="Do you have pets?"),)
    items = [MetricInput(response="   ", context=context, knowledge=("I am allergic to dogs.",)),
             MetricInput(response="", context=context),
             MetricInput(response="I have two dogs.", context=context)]  # fmt: skip
    out = metric.compute(items)["nli_contradiction"]
    assert out[:2] == [None, None]
    assert [metric.lacks("nli_contradiction", i) for i in items] == ["empty response", "empty response", None]
    # the other item of the batch keeps its value: the classifier called directly (tiny_classifier.direct_probs)
    ((_, _, contradiction),) = tiny.direct_probs(folder, ["Do you have pets?"], ["I have two dogs."])
    assert out[2] == pytest.approx(contradiction, abs=1e-5)
    assert metric.cut(items) == [{}, {}, {}]
    assert "|empty:null|" in metric.signature
