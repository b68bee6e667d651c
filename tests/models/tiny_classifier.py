"""Build a tiny randomly initialised sequence classifier in a folder.

No sentiment, formality or NLI classifier installs offline, so the tests of the
"local classifier by path" code paths use a real transformers model with random
weights (seeded): the wiring (loading, label lookup, pairing, softmax) is what is
tested, against the same model called directly.
"""

from __future__ import annotations

from pathlib import Path


def build(folder: Path, labels: list[str]) -> Path:
    import torch
    from transformers import AutoTokenizer, BertConfig, BertForSequenceClassification

    from dialeval.models.loading import resolve_encoder_dir

    torch.manual_seed(0)
    tok = AutoTokenizer.from_pretrained(str(resolve_encoder_dir("all-minilm-l6-v2")))
    cfg = BertConfig(
        vocab_size=tok.vocab_size,
        hidden_size=32,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=64,
        num_labels=len(labels),
        id2label=dict(enumerate(labels)),
        label2id={name: i for i, name in enumerate(labels)},
    )
    BertForSequenceClassification(cfg).save_pretrained(folder)
    tok.save_pretrained(folder)
    return folder


def direct_probs(folder: Path, texts: list[str], pairs: list[str] | None = None) -> list[list[float]]:
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    model = AutoModelForSequenceClassification.from_pretrained(str(folder)).eval()
    tok = AutoTokenizer.from_pretrained(str(folder))
    out = []
    with torch.inference_mode():
        for j, text in enumerate(texts):
            enc = tok(text, pairs[j] if pairs else None, return_tensors="pt")
            out.append(torch.softmax(model(**enc).logits[0], dim=-1).tolist())
    return out
