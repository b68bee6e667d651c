"""Parity of the lexical families with the reference libraries on real benchmark text.

Single reference: USR Topical-Chat, each system response against the "Original
Ground Truth" response of the same context. Multiple references: Gupta et al.'s
DailyDialog multi-reference test set, one listed response as the hypothesis and
the other listed responses to the same turn as its references.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest
import sacrebleu
from nltk.tokenize import NLTKWordTokenizer
from nltk.translate.bleu_score import SmoothingFunction
from nltk.translate.bleu_score import sentence_bleu as nltk_sentence_bleu
from nltk.translate.meteor_score import meteor_score
from rouge_score.rouge_scorer import RougeScorer
from tests.metrics.metric_tester import check_metric

from dialeval.metrics import functional as F
from dialeval.metrics.base import METRICS, MetricInput
from dialeval.metrics.lexical import Bleu, Chrf, Meteor, Rouge, SacreBleu
from dialeval.metrics.wordnet import DEBIAN_WORDNET, REQUIRED_FILES, load_wordnet
from dialeval.signature import file_sha256

Pairs = tuple[list[str], list[list[str]]]


def usr_pairs(shared_data: Path) -> Pairs:
    contexts = json.loads((shared_data / "usr" / "usr_topical_chat.json").read_text())
    hyps, refs = [], []
    for ctx in contexts:
        truth = next(r["response"] for r in ctx["responses"] if r["model"] == "Original Ground Truth")
        for r in ctx["responses"]:
            if r["model"] != "Original Ground Truth":
                hyps.append(r["response"])
                refs.append([truth])
    return hyps, refs


def multiref_pairs(shared_data: Path, dialogues: int = 40) -> Pairs:
    lines = (shared_data / "dailydialog_gupta" / "multireftest.json").read_text().splitlines()
    hyps, refs = [], []
    for line in lines[:dialogues]:
        for turn in json.loads(line)["dialogue"]:
            responses = [r for r in turn.get("responses", []) if r.strip()]
            if len(responses) >= 2:
                hyps.append(responses[0])
                refs.append(responses[1:])
    return hyps, refs


@pytest.fixture(scope="module", params=["usr", "multiref"])
def pairs(request: pytest.FixtureRequest, shared_data: Path) -> Pairs:
    hyps, refs = usr_pairs(shared_data) if request.param == "usr" else multiref_pairs(shared_data)
    assert len(hyps) >= 200
    if request.param == "multiref":
        assert max(len(r) for r in refs) >= 4
    return hyps, refs


def items_of(pairs: Pairs) -> list[MetricInput]:
    return [MetricInput(response=h, references=tuple(r)) for h, r in zip(*pairs, strict=True)]


def test_sentence_sacrebleu_equals_sacrebleu(pairs: Pairs) -> None:
    hyps, refs = pairs
    ours = F.sentence_sacrebleu(hyps, refs)
    theirs = [sacrebleu.sentence_bleu(h, r).score for h, r in zip(hyps, refs, strict=True)]
    np.testing.assert_allclose(ours, theirs, rtol=0, atol=1e-9)
    assert np.ptp(ours) > 10  # real spread, not a constant


def test_corpus_sacrebleu_equals_sacrebleu(pairs: Pairs) -> None:
    hyps, refs = pairs
    width = max(len(r) for r in refs)
    streams = [[r[k] if k < len(r) else None for r in refs] for k in range(width)]
    expected = sacrebleu.corpus_bleu(hyps, streams).score
    assert F.corpus_sacrebleu(hyps, refs) == pytest.approx(expected, abs=1e-9)
    stats = F.segment_statistics(F.sacre.bleu_scorer(), hyps, refs)
    assert F.corpus_sacrebleu_from_stats(stats) == pytest.approx(expected, abs=1e-9)


def test_chrfpp_equals_sacrebleu(pairs: Pairs) -> None:
    hyps, refs = pairs
    ours = F.sentence_chrf(hyps, refs)
    theirs = [sacrebleu.sentence_chrf(h, r, word_order=2).score for h, r in zip(hyps, refs, strict=True)]
    np.testing.assert_allclose(ours, theirs, rtol=0, atol=1e-9)


def test_rouge_equals_rouge_score(pairs: Pairs) -> None:
    hyps, refs = pairs
    ours = F.sentence_rouge(hyps, refs)
    scorer = RougeScorer(["rouge1", "rouge2", "rougeL"])
    theirs = [scorer.score_multi(r, h) for h, r in zip(hyps, refs, strict=True)]
    for key in ("rouge1", "rouge2", "rougeL"):
        np.testing.assert_allclose(ours[key], [t[key].fmeasure for t in theirs], rtol=0, atol=1e-12)


def test_rouge_of_a_text_its_tokenizer_drops_is_null_with_why() -> None:
    """rouge-score keeps [a-z0-9] only: two identical Russian (or Japanese) texts scored 0.0, silently."""
    assert RougeScorer(["rouge1"]).score("привет как дела", "привет как дела")["rouge1"].fmeasure == 0  # the library
    items = [MetricInput(response="привет как дела", references=("привет как дела",)),
             MetricInput(response="hello there", references=("こんにちは",)),
             MetricInput(response="hello there", references=("こんにちは", "hello you"))]  # fmt: skip
    got = Rouge().compute(items)
    assert got["rouge1"][:2] == [None, None] and got["rougeL"][:2] == [None, None]
    # the reference with no token is left out beside another: rouge-score's F of "hello there" vs "hello you"
    assert got["rouge1"][2] == RougeScorer(["rouge1"]).score("hello you", "hello there")["rouge1"].fmeasure == 0.5
    assert [Rouge().lacks("rouge1", i) for i in items] == [
        "no token in the response (rouge-score keeps ASCII letters and digits)",
        "no token in any reference (rouge-score keeps ASCII letters and digits)", None]  # fmt: skip


@pytest.mark.filterwarnings("ignore:\\nThe hypothesis contains 0 counts:UserWarning")
@pytest.mark.parametrize("smoothing", ["method1", "none", "method3", "method5", "method7", "comperdial"])
def test_nltk_bleu_equals_nltk(pairs: Pairs, smoothing: str) -> None:
    hyps, refs = pairs[0][:120], pairs[1][:120]
    ours = F.sentence_bleu(hyps, refs, smoothing=smoothing)
    tok = NLTKWordTokenizer()
    if smoothing == "comperdial":  # ComperDial App. C.2: SmoothingFunction(epsilon=1e-12).method1
        fn = SmoothingFunction(epsilon=1e-12).method1
    else:
        fn = getattr(SmoothingFunction(), "method0" if smoothing == "none" else smoothing)
    for n in (1, 2, 3, 4):
        theirs = [
            nltk_sentence_bleu([tok.tokenize(x.lower()) for x in r], tok.tokenize(h.lower()),
                               weights=(1 / n,) * n, smoothing_function=fn)
            for h, r in zip(hyps, refs, strict=True)
        ]
        np.testing.assert_allclose(ours[f"bleu{n}"], theirs, rtol=0, atol=1e-12, err_msg=f"bleu{n}")


def test_meteor_equals_nltk(pairs: Pairs) -> None:
    hyps, refs = pairs[0][:60], pairs[1][:60]  # NLTK METEOR, unmemoised, is slow on long texts
    load_wordnet()  # puts the packaged WordNet first on nltk.data.path
    ours = F.sentence_meteor(hyps, refs)
    tok = NLTKWordTokenizer()
    # nltk's default arguments: its module-level PorterStemmer and the nltk.corpus.wordnet loader.
    theirs = [meteor_score([tok.tokenize(x) for x in r], tok.tokenize(h)) for h, r in zip(hyps, refs, strict=True)]
    np.testing.assert_allclose(ours, theirs, rtol=0, atol=1e-12)


@pytest.mark.parametrize("family", [Bleu, SacreBleu, Chrf, Rouge, Meteor])
def test_shared_tester_reference_families(pairs: Pairs, family: type) -> None:
    hyps, refs = pairs[0][:60], pairs[1][:60]
    metric = family()
    function = {
        "bleu": lambda: F.sentence_bleu(hyps, refs),
        "sacrebleu": lambda: {"sacrebleu": F.sentence_sacrebleu(hyps, refs)},
        "chrf": lambda: {"chrfpp": F.sentence_chrf(hyps, refs)},
        "rouge": lambda: F.sentence_rouge(hyps, refs),
        "meteor": lambda: {"meteor": F.sentence_meteor(hyps, refs)},
    }[metric.name]()
    check_metric(metric, items_of((hyps, refs)), function)


def test_registry_names_and_outputs() -> None:
    expected = {
        "bleu": ("bleu1", "bleu2", "bleu3", "bleu4"), "sacrebleu": ("sacrebleu",), "chrf": ("chrfpp",),
        "rouge": ("rouge1", "rouge2", "rougeL"), "meteor": ("meteor",), "f1": ("word_f1",),
        "distinct": ("distinct1", "distinct2"), "length": ("length",),
    }
    for name, outputs in expected.items():
        cls = METRICS.get(name)
        assert cls.outputs == outputs
        assert cls.needs_references == (name not in {"distinct", "length"})


def test_signatures_name_parameters_and_versions() -> None:
    from importlib.metadata import version

    bleu = Bleu().signature
    assert "smoothing:method1" in bleu and "tokenizer:nltk-word" in bleu and "lowercase:yes" in bleu
    assert f"nltk=={version('nltk')}" in bleu
    assert Bleu(smoothing="method4").signature != bleu
    sacre = SacreBleu().signature
    assert f"version:{sacrebleu.__version__}" in sacre and "tok:13a" in sacre and "eff:yes" in sacre
    assert SacreBleu(tokenize="intl").signature != sacre and "tok:intl" in SacreBleu(tokenize="intl").signature
    assert "nw:2" in Chrf().signature and "nw:0" in Chrf(word_order=0).signature
    assert f"rouge-score=={version('rouge-score')}" in Rouge().signature
    assert Rouge(use_stemmer=True).signature != Rouge().signature
    assert "wordnet:3.0" in Meteor().signature and Meteor(alpha=0.8).signature != Meteor().signature
    # The WordNet hash, recomputed here from the Debian files: sha256 over the files' sha256s.
    expected = hashlib.sha256("".join(file_sha256(DEBIAN_WORDNET / n) for n in REQUIRED_FILES).encode())
    assert f"wordnet_sha256:{expected.hexdigest()[:16]}" in Meteor().signature


def test_bad_smoothing_and_missing_references_are_clear_errors() -> None:
    from dialeval.errors import InputError

    with pytest.raises(InputError, match=r"bleu\.smoothing='method8': not one of none, comperdial, method0") as err:
        Bleu(smoothing="method8")
    assert err.value.field == "--param"
    with pytest.raises(InputError, match=r'item 1: needs a non-empty list of references'):
        SacreBleu().compute([MetricInput("a", references=("a",)), MetricInput("b")])


def test_nltk_smoothing_method6_is_refused_as_a_parameter_it_cannot_compute_bleu1_with() -> None:
    """-p bleu.smoothing=method6 was an IndexError traceback on the first item, whatever the text."""
    from dialeval.errors import InputError

    # NLTK itself: method6 reads p_n[2], which BLEU-1's and BLEU-2's weights never give.
    tok = NLTKWordTokenizer().tokenize
    with pytest.raises(IndexError):
        nltk_sentence_bleu([tok("i am fine thanks")], tok("fine thanks"), weights=(1.0,),
                           smoothing_function=SmoothingFunction().method6)
    with pytest.raises(InputError) as err:
        Bleu(smoothing="method6")
    assert err.value.field == "--param" and err.value.message.startswith("bleu.smoothing='method6': not one of")


@pytest.mark.parametrize(
    ("family", "given", "message"),
    [
        (Bleu, {"tokenizer": "spacy"}, "bleu.tokenizer='spacy': not one of nltk-word, whitespace"),
        (Meteor, {"tokenizer": "bad"}, "meteor.tokenizer='bad': not one of nltk-word, whitespace"),
        (Meteor, {"alpha": float("nan")}, "meteor.alpha=nan: not a finite number"),
        (Meteor, {"gamma": float("inf")}, "meteor.gamma=inf: not a finite number"),
        (Chrf, {"char_order": -1}, "chrf.char_order=-1: must be between 1 and 100"),
        (Chrf, {"word_order": -1}, "chrf.word_order=-1: must be between 0 and 100"),
        # sacrebleu counts every order up to the given one: 10**20 never ended
        (Chrf, {"char_order": 10**20}, "chrf.char_order=100000000000000000000: must be between 1 and 100"),
        (Chrf, {"word_order": 101}, "chrf.word_order=101: must be between 0 and 100"),
        (Chrf, {"beta": -1}, "chrf.beta=-1: must be at least 0"),
    ],
)
def test_a_bad_value_is_refused_when_the_metric_is_built(family: type, given: dict, message: str) -> None:
    from dialeval.errors import InputError

    with pytest.raises(InputError) as err:
        family(**given)
    assert err.value.field == "--param" and err.value.message.startswith(message), err.value.message


def test_sacrebleus_choices_are_read_from_sacrebleu(monkeypatch: pytest.MonkeyPatch) -> None:
    from sacrebleu.metrics.bleu import BLEU

    from dialeval.errors import InputError

    with pytest.raises(InputError) as err:
        SacreBleu(tokenize="zzzz")
    assert err.value.message == f"sacrebleu.tokenize='zzzz': not one of {', '.join(BLEU.TOKENIZERS)}"
    with pytest.raises(InputError) as err:
        SacreBleu(smooth_method="zzzz")
    assert err.value.message == f"sacrebleu.smooth_method='zzzz': not one of {', '.join(BLEU.SMOOTH_DEFAULTS)}"
    for method in BLEU.SMOOTH_DEFAULTS:
        assert f"smooth_method:{method}" in SacreBleu(smooth_method=method).signature
    # A method that sacrebleu gains is accepted without a change here.
    monkeypatch.setattr(BLEU, "SMOOTH_DEFAULTS", {**BLEU.SMOOTH_DEFAULTS, "newer": None})
    assert SacreBleu(smooth_method="newer").config.smooth_method == "newer"


def test_a_sacrebleu_tokenizer_that_cannot_load_here_is_one_error_with_its_install_hint(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from dialeval.errors import InputError
    from dialeval.metrics import lexical

    def missing(*args: object) -> None:
        raise RuntimeError("\nJapanese tokenization requires extra dependencies.\n\n    pip install sacrebleu[ja]\n")

    monkeypatch.setattr(lexical, "bleu_scorer", missing)
    with pytest.raises(InputError) as err:
        SacreBleu(tokenize="ja-mecab")
    assert err.value.field == "--param"
    assert err.value.message == (
        "sacrebleu.tokenize='ja-mecab': cannot run here: Japanese tokenization requires extra dependencies. "
        "pip install sacrebleu[ja]"
    )


@pytest.mark.skipif(importlib.util.find_spec("sentencepiece") is not None, reason="sentencepiece is installed")
def test_a_sacrebleu_tokenizer_without_its_package_is_refused_for_real() -> None:
    from dialeval.errors import InputError

    with pytest.raises(InputError, match=r"tokenize='flores200': cannot run here: .*pip install sentencepiece"):
        SacreBleu(tokenize="flores200")


def test_empty_response_scores_like_the_libraries_and_never_nan() -> None:
    items = [MetricInput(response="", references=("hi there",)), MetricInput(response="hi", references=("",))]
    # The libraries on the same inputs: sacrebleu and chrF give 0.0, rouge-score F = 0 for empty text.
    assert sacrebleu.sentence_bleu("", ["hi there"]).score == 0.0
    assert RougeScorer(["rouge1"]).score("", "hi")["rouge1"].fmeasure == 0
    for family in (Bleu, SacreBleu, Chrf, Rouge, Meteor):
        values = family().compute(items)
        for name, column in values.items():
            assert column[0] == 0.0, f"{name}: {column}"
            assert all(v is not None and np.isfinite(v) for v in column), name
    assert F.sentence_chrf([""], [["hi there"]]).tolist() == [sacrebleu.sentence_chrf("", ["hi there"]).score]


def test_importing_the_lexical_metrics_imports_no_heavy_library() -> None:
    import subprocess
    import sys

    code = (
        "import sys, dialeval.metrics.lexical; "
        "print(sorted(m for m in ('torch', 'nltk', 'sacrebleu', 'rouge_score') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_comperdial_smoothing_is_nearly_unsmoothed() -> None:
    # Hand computation for "the cat sat" vs "the cat ran": p1 = 2/3, p2 = 1/2, and p3 = 0/1 matched trigrams,
    # which method1 replaces by epsilon/1; brevity penalty 1. BLEU-3 is the geometric mean of the three.
    hyp, ref = ["the cat sat"], [["the cat ran"]]
    paper = F.sentence_bleu(hyp, ref, smoothing="comperdial")["bleu3"][0]
    default = F.sentence_bleu(hyp, ref, smoothing="method1")["bleu3"][0]
    assert paper == pytest.approx((2 / 3 * 1 / 2 * 1e-12) ** (1 / 3), rel=1e-6)
    assert default == pytest.approx((2 / 3 * 1 / 2 * 0.1) ** (1 / 3), rel=1e-6)
