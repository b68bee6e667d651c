"""``dialeval.metrics.describe``: what ``dialeval metrics`` and ``dialeval.list_metrics`` say of each family."""

from __future__ import annotations

import pytest

from dialeval.metrics.describe import describe_metrics, plain
from dialeval.metrics.resolve import resolve_metrics


def test_each_family_once_with_what_it_needs_and_its_defaults(monkeypatch: pytest.MonkeyPatch) -> None:
    """Pinned from the metrics' own documentation: BLEU's NLTK smoothing method1 on NLTK word tokens, lowercased
    (docs/tour.md); length and distinct take no parameter and no reference; NLI runs only with a local model."""
    monkeypatch.delenv("DIALEVAL_NLI_MODEL", raising=False)
    entries = {e["name"]: e for e in describe_metrics()}
    assert len(entries) == len(describe_metrics())
    assert {"bleu", "sacrebleu", "rouge", "length", "quality", "judge:custom"} <= set(entries)
    bleu = entries["bleu"]
    assert bleu["outputs"] == ["bleu1", "bleu2", "bleu3", "bleu4"] and bleu["needs_references"]
    assert bleu["parameters"] == {"smoothing": "method1", "tokenizer": "nltk-word", "lowercase": True}
    for name in ("length", "distinct"):
        assert entries[name]["parameters"] == {} and not entries[name]["needs_references"]
    assert entries["length"]["unavailable"] is None
    assert "DIALEVAL_NLI_MODEL" in entries["nli"]["unavailable"]
    assert not entries["nli"]["higher_is_better"]  # a contradiction probability


def test_every_listed_name_and_output_is_what_metrics_accept() -> None:
    """Each family and each output listed resolves to that family (what -m and metrics= take)."""
    for e in describe_metrics():
        if e["unavailable"] is None:
            assert [f.name for f in resolve_metrics([e["name"]])[0]] == [e["name"]]
            assert [f.name for f in resolve_metrics([e["outputs"][0]])[0]] == [e["name"]]


def test_the_summary_loses_its_markup() -> None:
    assert plain("see :func:`~dialeval.metrics.functional.corpus_sacrebleu` and ``-p k=v``") == (
        "see corpus_sacrebleu and -p k=v"
    )
