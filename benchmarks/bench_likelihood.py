"""Likelihood scorer vs a naive one-example-at-a-time transformers loop, side by side, on USR items.

Usage: .venv/bin/python benchmarks/bench_likelihood.py [--contexts 5] [--repeats 3]

The naive loop puts each full sequence (prompt + response) through the model and
takes the loss from the labels, one item at a time. The scorer is
``dialeval.metrics.likelihood.continuation_nll`` (one prompt pass per context,
KV cache reused, vocabulary projection only at response positions). Both compute
the same conditional NLLs (checked). Also times a 2048^3 fp32 matmul for the
machine's peak (best of the interleaved measurements) and reports the fraction of it reached (FLOPs/token ~ 2 x params).
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch
from common import COUNT, POSITIVE, data_file  # benchmarks/ is on sys.path

from dialeval.data.usr import load_usr_topical_chat
from dialeval.metrics.base import build_inputs
from dialeval.metrics.likelihood import LikelihoodMetric, continuation_nll


def matmul_peak(n: int = 2048, repeats: int = 5, dtype: torch.dtype = torch.float32) -> float:
    a, b = torch.randn(n, n, dtype=dtype), torch.randn(n, n, dtype=dtype)
    a @ b
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        a @ b
        times.append(time.perf_counter() - t)
    return 2 * n**3 / statistics.median(times)


def naive(model, requests):
    out = []
    with torch.inference_mode():
        for prefix, cont in requests:
            ids = torch.tensor([list(prefix) + list(cont)])
            labels = ids.clone()
            labels[0, : len(prefix)] = -100
            out.append(float(model(input_ids=ids, labels=labels).loss))
    return out


def parser() -> argparse.ArgumentParser:
    """Return the options of this benchmark."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--contexts", type=POSITIVE, default=5)
    ap.add_argument("--repeats", type=POSITIVE, default=3)
    ap.add_argument("--threads", type=COUNT, default=0, help="torch threads (0 = torch's default)")
    return ap


def main() -> None:
    args = parser().parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    bench = load_usr_topical_chat(data_file("usr/usr_topical_chat.json")).head(args.contexts)
    items = build_inputs(bench.candidates, bench.dialogues)
    metric = LikelihoodMetric()
    model, _, _ = metric._loaded()
    cond, _ = metric.requests(items)
    params = sum(p.numel() for p in model.parameters())
    head = model.get_output_embeddings().weight.numel()
    naive_tokens = sum(len(p) + len(c) for p, c in cond)
    distinct_prefixes = {p for p, _ in cond}
    distinct = set(cond)
    scorer_tokens = sum(len(p) for p in distinct_prefixes) + sum(len(c) for _, c in distinct)
    projected = sum(len(c) for _, c in distinct)
    print(f"torch threads {torch.get_num_threads()}; {len(items)} USR-TC items, {len(distinct_prefixes)} contexts")
    print(f"params {params / 1e6:.1f}M (vocab projection {head / 1e6:.1f}M)")
    naive(model, cond[:2])
    continuation_nll(model, cond[:2])
    t_naive, t_fast, peaks = [], [], []
    for _ in range(args.repeats):
        peaks.append(matmul_peak())
        t = time.perf_counter()
        ref = naive(model, cond)
        t_naive.append(time.perf_counter() - t)
        t = time.perf_counter()
        got = continuation_nll(model, cond)
        t_fast.append(time.perf_counter() - t)
        assert max(abs(a - b) for a, b in zip(ref, got, strict=True)) < 1e-3, "scorer disagrees with the naive loss"
    peak = max(peaks)
    tn, tf = statistics.median(t_naive), statistics.median(t_fast)
    print(f"matmul peak (2048^3 fp32, best of {args.repeats} medians): {peak / 1e9:.1f} GFLOP/s")
    for name, t, toks, flops in (
        ("naive loop", tn, naive_tokens, 2 * params * naive_tokens),
        ("scorer", tf, scorer_tokens, 2 * (params - head) * scorer_tokens + 2 * head * projected),
    ):
        nominal = toks / t * 2 * params / peak
        print(
            f"{name:10s}  {t:7.2f} s  {len(items) / t:7.2f} items/s  {toks / t:8.1f} tokens/s "
            f"({toks} tokens)  nominal {100 * nominal:5.1f}% of peak  counted-FLOPs {100 * flops / t / peak:5.1f}%"
        )
    print(f"speed-up in items/s: {tn / tf:.2f}x (median of {args.repeats} runs, same process, same items)")


if __name__ == "__main__":
    main()
