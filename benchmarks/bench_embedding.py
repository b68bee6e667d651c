"""Embedding cosine and BERTScore: batched metric vs a naive per-item call, side by side, on USR items.

Usage: .venv/bin/python benchmarks/bench_embedding.py [--contexts 20] [--repeats 3]

Naive embedding: per item, encode the response, the references, the last turn
and the facts with their own ``encode`` calls (no dedup). Naive BERTScore: one
``BERTScorer.score([response], [refs])`` call per item. The metrics batch and
encode each distinct text once; the dedup counts are printed.
"""

from __future__ import annotations

import argparse

from common import POSITIVE, data_file  # benchmarks/ is on sys.path
from sentence_transformers import util
from timing import median_time  # benchmarks/ is on sys.path

from dialeval.data.usr import load_usr_topical_chat
from dialeval.metrics.base import build_inputs
from dialeval.metrics.bertscore import BertScoreMetric, _scorer
from dialeval.metrics.embedding import EmbeddingMetric
from dialeval.models.loading import load_sentence_encoder


def naive_embedding(encoder, items):
    out = []
    for i in items:
        resp = encoder.encode([i.response])
        out.append(float(util.cos_sim(resp, encoder.encode(list(i.references))).max()))
        encoder.encode([i.context[-1].text])
        encoder.encode(list(i.knowledge))
    return out


def naive_bertscore(scorer, items):
    return [float(scorer.score([i.response], [list(i.references)])[2][0]) for i in items]


def parser() -> argparse.ArgumentParser:
    """Return the options of this benchmark."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--contexts", type=POSITIVE, default=20)
    ap.add_argument("--repeats", type=POSITIVE, default=3)
    return ap


def main() -> None:
    args = parser().parse_args()
    bench = load_usr_topical_chat(data_file("usr/usr_topical_chat.json")).head(args.contexts)
    items = build_inputs(bench.candidates, bench.dialogues)
    texts = [t for i in items for t in (i.response, *i.references, i.context[-1].text, *i.knowledge)]
    print(f"{len(items)} USR-TC items; texts to encode {len(texts)}, distinct {len(set(texts))}")
    emb, bs = EmbeddingMetric(), BertScoreMetric(rescale=False)
    encoder, _ = load_sentence_encoder()
    scorer = _scorer("all-minilm-l6-v2", 6, False, "cpu")
    emb.compute(items[:2])
    bs.compute(items[:2])
    rows = []
    t_naive, ref = median_time(lambda: naive_embedding(encoder, items), args.repeats)
    t_fast, got = median_time(lambda: emb.compute(items), args.repeats)
    assert max(abs(a - b) for a, b in zip(ref, got["sbert_ref"], strict=True)) < 1e-4
    rows.append(("embedding", t_naive, t_fast))
    t_naive, ref = median_time(lambda: naive_bertscore(scorer, items), args.repeats)
    t_fast, got = median_time(lambda: bs.compute(items), args.repeats)
    assert max(abs(a - b) for a, b in zip(ref, got["bertscore_f1"], strict=True)) < 1e-4
    rows.append(("bertscore", t_naive, t_fast))
    for name, tn, tf in rows:
        print(
            f"{name:10s} naive {len(items) / tn:7.1f} items/s  batched {len(items) / tf:7.1f} items/s  "
            f"speed-up {tn / tf:5.2f}x (median of {args.repeats})"
        )


if __name__ == "__main__":
    main()
