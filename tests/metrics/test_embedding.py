"""Embedding cosine pinned to sentence_transformers.util.cos_sim on real USR items."""

from __future__ import annotations

import pytest

pytest.importorskip("sentence_transformers")

from sentence_transformers import SentenceTransformer, util

from dialeval.data.usr import load_usr_persona_chat
from dialeval.metrics.base import MetricInput, build_inputs
from dialeval.metrics.embedding import EmbeddingMetric
from dialeval.models.loading import resolve_encoder_dir


@pytest.fixture(scope="module")
def items(shared_data) -> list[MetricInput]:
    bench = load_usr_persona_chat(shared_data / "usr" / "pc_usr_data.json").head(2)
    return build_inputs(bench.candidates, bench.dialogues)


@pytest.fixture(scope="module")
def reference_encoder() -> SentenceTransformer:
    # An independent instance, called the plain way (no normalisation, no dedup).
    return SentenceTransformer(str(resolve_encoder_dir("all-minilm-l6-v2")), device="cpu")


def test_cosines_equal_util_cos_sim(items, reference_encoder):
    values = EmbeddingMetric().compute(items)
    assert len(items) == 10  # 2 contexts x 5 systems
    for j, item in enumerate(items):
        resp = reference_encoder.encode([item.response])
        refs = reference_encoder.encode(list(item.references))
        know = reference_encoder.encode(list(item.knowledge))
        last = reference_encoder.encode([item.context[-1].text])
        assert values["sbert_ref"][j] == pytest.approx(float(util.cos_sim(resp, refs).max()), abs=1e-5)
        assert values["sbert_knowledge"][j] == pytest.approx(float(util.cos_sim(resp, know).max()), abs=1e-5)
        assert values["sbert_context"][j] == pytest.approx(float(util.cos_sim(resp, last)[0, 0]), abs=1e-5)


def test_paraphrase_beats_unrelated_and_missing_parts_are_none():
    m = EmbeddingMetric()
    out = m.compute(
        [
            MetricInput(response="I love playing football.", references=("I enjoy playing soccer.",)),
            MetricInput(response="The stock market fell today.", references=("I enjoy playing soccer.",)),
            MetricInput(response="hello"),
        ]
    )
    assert out["sbert_ref"][0] > 0.6 > 0.2 > out["sbert_ref"][1]
    assert out["sbert_ref"][2] is None and out["sbert_context"][2] is None and out["sbert_knowledge"][2] is None


def test_batch_split_does_not_change_values(items):
    m = EmbeddingMetric()
    whole = m.compute(items)["sbert_ref"]
    parts = list(m.compute(items[:3])["sbert_ref"]) + list(m.compute(items[3:])["sbert_ref"])
    assert parts == pytest.approx(whole, abs=1e-5)
    assert "model_sha:" in m.signature
