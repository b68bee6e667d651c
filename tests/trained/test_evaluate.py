"""DiQAD's metrics, pinned to scikit-learn and SciPy computed here independently."""

from __future__ import annotations

import dataclasses
import random

import pytest
from scipy.stats import pearsonr, rankdata, spearmanr
from sklearn.metrics import (
    accuracy_score,
    balanced_accuracy_score,
    cohen_kappa_score,
    precision_recall_fscore_support,
)

from dialeval.errors import InputError
from dialeval.metrics.base import MetricInput
from dialeval.schema import Turn
from dialeval.trained.data import Example, normalise, to_label
from dialeval.trained.evaluate import evaluate
from dialeval.trained.features import format_input


def _examples(n: int, seed: int) -> tuple[list[Example], list[float], list[int]]:
    rng = random.Random(seed)
    ex, scores, labels = [], [], []
    for i in range(n):
        human = rng.choice([1.0, 1.5, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5.0])
        ex.append(Example(f"i{i}", "b", f"c{i // 3}", f"d{i // 3}", f"s{i % 3}", "b", "t", MetricInput("t"),
                          human, 0.0, to_label((human - 1) / 4)))
        scores.append(human + rng.gauss(0, 1.5))
        labels.append(rng.choice([0, 1, 2]))
    return ex, scores, labels


def test_metrics_match_sklearn_and_scipy() -> None:
    ex, scores, labels = _examples(90, seed=3)
    got = evaluate(ex, scores, labels, n_boot=200, seed=1)
    truth = [e.label for e in ex]
    human = [e.human for e in ex]
    p, r, f, _ = precision_recall_fscore_support(truth, labels, labels=[0, 1, 2], average="macro", zero_division=0)
    assert got["accuracy"] == pytest.approx(accuracy_score(truth, labels))
    assert got["uar"] == pytest.approx(balanced_accuracy_score(truth, labels))
    assert got["kappa"] == pytest.approx(cohen_kappa_score(truth, labels))
    assert (got["precision"], got["recall"], got["f1"]) == pytest.approx((p, r, f))
    assert got["spearman"] == pytest.approx(spearmanr(scores, human).statistic)
    assert got["pearson"] == pytest.approx(pearsonr(scores, human).statistic)
    lo, hi = got["spearman_ci"]
    assert lo < got["spearman"] < hi
    assert got["n"] == 90


def test_correlations_and_kappas_of_constant_predictions_are_undefined_not_nan() -> None:
    """A model predicting one score and one label for a whole fold (a small table does it): SciPy's and
    scikit-learn's nan (with their warnings) went into results.jsonl as NaN, which is not JSON. Now None, named."""
    import json
    import warnings

    ex = [dataclasses.replace(e, label=1) for e in _examples(6, seed=0)[0]]  # one true label, as predicted: 0/0
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # and no warning reaches the user
        got = evaluate(ex, [0.5] * 6, [1] * 6, n_boot=0)
    assert got["spearman"] is None and got["pearson"] is None and got["kappa"] is None
    assert got["undefined"] == ["kappa", "kappa_quadratic", "spearman", "pearson"]
    assert got["accuracy"] == 1.0  # the defined measures stay
    json.dumps(got, allow_nan=False)  # raised "Out of range float values are not JSON compliant"


def test_one_predicted_label_is_named_so_kappa_0_is_read_as_a_constant() -> None:
    """A regression model whose scores all fall in the middle third: kappa 0 and UAR 1/3 came with no word of why
    (seen on train --train usr-tc-unieval --test usr-pc --model tfidf-lr)."""
    from dialeval.report.build import result_notes

    ex, scores, _ = _examples(30, seed=2)
    got = evaluate(ex, scores, [1] * 30, n_boot=0)
    truth = [e.label for e in ex]
    assert len(set(truth)) == 3  # the ratings vary: kappa is defined, and 0 (scikit-learn's p_o = p_e)
    assert got["kappa"] == pytest.approx(cohen_kappa_score(truth, [1] * 30)) == 0.0
    assert got["uar"] == pytest.approx(1 / 3)
    assert got["one_label"] == 1
    assert "one_label" not in evaluate(ex, scores, [1] * 29 + [2], n_boot=0)
    (note,) = result_notes([{"model": "m", "split": "test=b", **got}])
    assert note.startswith("note: m on test=b predicted label 1 (the middle third of the scale) for all 30 items")


def test_one_test_item_has_undefined_correlations_not_scipys_traceback() -> None:
    """2 folds of a 2-context table test on one item each: SciPy's pearsonr raised "`x` and `y` must have length at
    least 2" through `dialeval train`."""
    ex, scores, labels = _examples(1, seed=0)
    got = evaluate(ex, scores, labels, n_boot=20)
    assert got["spearman"] is None and got["pearson"] is None and got["n"] == 1
    assert got["undefined"] == ["spearman", "pearson"]
    assert "one_label" not in got  # one item has one label: nothing to say


def test_evaluate_rejects_misaligned_input() -> None:
    ex, scores, labels = _examples(6, seed=0)
    with pytest.raises(InputError, match="6 examples but 5 scores"):
        evaluate(ex, scores[:5], labels, n_boot=0)


def test_rank_normalisation_is_scipy_average_rank() -> None:
    values = [3.0, 1.0, 4.0, 1.0, 5.0, 2.5]
    expected = [(r - 1) / (len(values) - 1) for r in rankdata(values)]  # scipy's average ranks, scaled to [0, 1]
    assert normalise(values, "rank", "1-5") == pytest.approx(expected)
    with pytest.raises(InputError, match="unknown target normalisation"):
        normalise(values, "zscore", "1-5")


def test_format_marks_the_responder_on_real_turns(small_examples: list[Example]) -> None:
    e = small_examples[0]
    assert e.text.endswith("response: " + e.item.response.strip())
    last_question = e.text.rsplit(" response: ", 1)[0].rsplit("question: ", 1)[1]
    assert last_question == e.item.context[-1].text.strip()
    turns = (Turn(speaker="A", text="a"), Turn(speaker="B", text="b"))
    assert format_input(turns, "c", max_turns=1) == "question: b response: c"


def test_correlations_of_one_context_say_why_they_have_no_ci() -> None:
    """A fold of one context (train --folds 2 --limit 2) showed its Spearman with no CI and no word of why."""
    from dialeval.report.build import result_notes

    ex, scores, labels = _examples(3, seed=4)  # items i0-i2 share context c0
    got = evaluate(ex, scores, labels, n_boot=50)
    assert got["spearman"] is not None and got["spearman_ci"] == [None, None]
    assert got["no_ci"] == "the items come from one context, and the bootstrap resamples contexts"
    assert result_notes([{"model": "m", "split": "fold1/2", **got}])[-1] == f"note: m on fold1/2: no CI: {got['no_ci']}"
    assert "no_ci" not in evaluate(ex, scores, labels, n_boot=0)  # none asked for: nothing to explain
    assert "no_ci" not in evaluate(*_examples(30, seed=4), n_boot=50)  # ten contexts: a CI


def test_an_undefined_measure_says_why() -> None:
    """A test side whose people gave every response one rating (a table rated 3 throughout): results.md read
    "undefined" for Spearman, Pearson and kappa with no word of why, beside a note that "its Spearman and Pearson
    read the scores"."""
    from dialeval.report.build import result_notes

    ex = [dataclasses.replace(e, human=3.0, label=1) for e in _examples(6, seed=0)[0]]
    got = evaluate(ex, [0.1, 0.2, 0.3, 0.4, 0.5, 0.6], [1] * 6, n_boot=0)  # the scores vary, the ratings do not
    notes = result_notes([{"model": "m", "split": "test=b", **got}])
    assert "note: m on test=b: spearman, pearson undefined: people give every item the same rating" in notes
    assert ("note: m on test=b: kappa, kappa_quadratic undefined: the human and the predicted labels are all one "
            "and the same label") in notes  # fmt: skip
    got = evaluate(ex, [0.5] * 6, [0] * 6, n_boot=0)  # scikit-learn's kappa of two constants that differ: 0
    assert got["kappa"] == pytest.approx(cohen_kappa_score([1] * 6, [0] * 6)) == 0.0
    assert got["undefined_why"] == {
        "spearman, pearson": "the model gives every item the same score and people give every item the same rating"}
    got = evaluate(_examples(6, seed=0)[0], [0.5] * 6, [1] * 6, n_boot=0)  # the ratings vary
    assert got["undefined_why"]["spearman, pearson"] == "the model gives every item the same score"
    (one,) = _examples(1, seed=0)[0]
    assert evaluate([one], [0.5], [1], n_boot=0)["undefined_why"] == {"spearman, pearson": "one item only"}
