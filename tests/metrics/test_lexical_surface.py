"""Word F1, distinct-n and length on hand-computed examples, plus the shared tester."""

from __future__ import annotations

import pytest
from tests.metrics.metric_tester import check_metric

from dialeval.errors import InputError
from dialeval.metrics import functional as F
from dialeval.metrics.base import MetricInput
from dialeval.metrics.lexical import Distinct, Length, WordF1


def test_word_f1_hand_computed() -> None:
    # hyp "The cat sat on the mat!" -> normalised words [cat, sat, on, mat] (articles, "!" dropped)
    # ref1 "a cat is on a mat"      -> [cat, is, on, mat]; overlap {cat, on, mat} = 3
    #   P = 3/4, R = 3/4, F1 = 0.75
    # ref2 "dogs sat"               -> [dogs, sat]; overlap {sat} = 1: P = 1/4, R = 1/2, F1 = 2*(1/8)/(3/4) = 1/3
    # max over references = 0.75
    assert F.word_f1(["The cat sat on the mat!"], [["a cat is on a mat", "dogs sat"]]).tolist() == [0.75]
    # Repeated words count with multiplicity (bag overlap): hyp [yes, yes, yes], ref [yes]
    #   overlap min(3, 1) = 1: P = 1/3, R = 1, F1 = 2*(1/3)/(4/3) = 0.5
    assert F.word_f1(["yes yes yes"], [["Yes."]]).tolist() == [0.5]
    # Nothing in common, and a response of only articles/punctuation: 0.0, not NaN.
    assert F.word_f1(["hello", "the ..."], [["bye"], ["the"]]).tolist() == [0.0, 0.0]
    # ParlAI-style: punctuation becomes a space, so "don't" -> [don, t]
    assert F.normalize_words("I don't know.") == ["i", "don", "t", "know"]


def test_distinct_hand_computed() -> None:
    # "the cat and the dog": unigrams 5, distinct {the, cat, and, dog} = 4 -> 4/5 = 0.8
    #   bigrams (the cat)(cat and)(and the)(the dog): 4 distinct of 4 -> 1.0
    # "no no no": unigrams 1/3; bigrams (no no)(no no): 1 distinct of 2 -> 0.5
    # "ok": one unigram -> 1.0; no bigram -> 0.0 (documented convention)
    hyps = ["the cat and the dog", "no no no", "ok", ""]
    assert F.distinct_n(hyps, 1).tolist() == [0.8, 1 / 3, 1.0, 0.0]
    assert F.distinct_n(hyps, 2).tolist() == [1.0, 0.5, 0.0, 0.0]
    # corpus distinct-1: tokens the,cat,and,the,dog,no,no,no,ok = 9; distinct {the,cat,and,dog,no,ok} = 6
    assert F.corpus_distinct_n(hyps, 1) == pytest.approx(6 / 9)
    # corpus distinct-2: bigrams 4 + 2 + 0 = 6; distinct 4 + 1 = 5
    assert F.corpus_distinct_n(hyps, 2) == pytest.approx(5 / 6)
    assert F.corpus_distinct_n([""], 1) == 0.0


def test_length_counts_whitespace_tokens() -> None:
    assert F.response_length(["i 'm  fine , thanks", "", "one"]) == [5.0, 0.0, 1.0]


ITEMS = [
    MetricInput(response="The cat sat on the mat!", references=("a cat is on a mat", "dogs sat")),
    MetricInput(response="no no no", references=("No.",)),
    MetricInput(response="the cat and the dog", references=("cats and dogs",)),
    MetricInput(response="ok", references=("okay then",)),
    MetricInput(response="I don't know.", references=("i do not know", "no idea")),
]


def test_shared_tester_word_f1() -> None:
    hyps, refs = [i.response for i in ITEMS], [list(i.references) for i in ITEMS]
    values = check_metric(WordF1(), ITEMS, {"word_f1": F.word_f1(hyps, refs)}, batch_sizes=(1, 2))
    assert values["word_f1"][0] == 0.75


def test_shared_tester_distinct_and_length() -> None:
    hyps = [i.response for i in ITEMS]
    check_metric(Distinct(), ITEMS, {"distinct1": F.distinct_n(hyps, 1), "distinct2": F.distinct_n(hyps, 2)},
                 batch_sizes=(1, 3))
    values = check_metric(Length(), ITEMS, {"length": F.response_length(hyps)}, batch_sizes=(1, 3))
    assert values["length"] == [6.0, 3.0, 5.0, 1.0, 3.0]


def test_reference_free_families_ignore_references() -> None:
    bare = [MetricInput(response=i.response) for i in ITEMS]
    assert Distinct().compute(bare) == Distinct().compute(ITEMS)
    assert not Distinct.needs_references and not Length.needs_references


def test_word_f1_rejects_items_without_references() -> None:
    with pytest.raises(InputError, match=r'field "references": item 0: needs a non-empty list'):
        WordF1().compute([MetricInput(response="hi"), MetricInput(response="x", references=("x",))])
    with pytest.raises(InputError, match="2 responses but 1 reference lists"):
        F.word_f1(["a", "b"], [["a"]])
