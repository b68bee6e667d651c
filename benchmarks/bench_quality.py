"""The ``quality`` metric's speed on USR-TC items with the models loaded, and its share of the matmul peak.

Usage: .venv/bin/python benchmarks/bench_quality.py [--contexts 20] [--repeats 3] [--threads 0]

``quality`` as users get it (``runtime=auto``: both encoders in ONNX Runtime when it is
installed, except on Intel CPUs, where torch is faster) and, side by side in the same
process, in ONNX Runtime (``runtime=onnx``), in torch eager (``runtime=torch``, the baseline)
and with ``precision=bf16`` (torch's bfloat16 autocast, against a bf16 matmul peak); the four
calls alternate in each repeat. The encoders alone are timed in ONNX Runtime against torch eager, after
the four calls of each repeat (a part and its whole in the same minutes).

Times ``QualityMetric.compute`` (MiniLM embeddings of every distinct text and the two heads, where
the ensemble names their features or runs no larger encoder; the same over the larger encoder
(all-mpnet-base-v2, in ONNX Runtime too under ``runtime=onnx``) when the ensemble uses it, the cross-encoder's
views when the ensemble uses them, the SmolLM2 likelihoods when it uses them, the ensemble)
after a warm-up call, and the MiniLM encoding, the larger encoder and the cross-encoder alone (each where the
ensemble runs it), each also in torch eager side by side (the baseline). Nominal
FLOPs are 2 x params x tokens processed (the embedding tables, which are looked up, not
counted; attention's own products neither): MiniLM and mpnet over the distinct texts'
tokens, the cross-encoder over every pair's tokens (and, with the LM, SmolLM2 over the
distinct prompts plus every continuation, as the packed scorer runs them; see
bench_likelihood.py); the peak is a 2048^3 fp32 matmul, best of the interleaved
measurements, in torch and (when installed) in ONNX Runtime, whichever is faster: on an
AVX-512 machine ONNX Runtime's kernels multiply about twice as fast as torch's, and a share of
torch's peak would overstate how close to the machine's peak we run.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

import torch
from bench_likelihood import matmul_peak  # the same peak measurement (benchmarks/ is on sys.path)
from common import COUNT, POSITIVE, data_file  # benchmarks/ is on sys.path

from dialeval.data.usr import load_usr_topical_chat
from dialeval.metrics.base import build_inputs
from dialeval.metrics.likelihood import LikelihoodMetric
from dialeval.metrics.quality import QualityMetric
from dialeval.metrics.quality.crossenc import TURNS, score_batches
from dialeval.metrics.quality.features import embed, pair_texts
from dialeval.models.loading import load_sentence_encoder


def ort_matmul_peak(n: int = 2048, repeats: int = 5) -> float:
    """Return ONNX Runtime's FLOP/s on an ``n``^3 fp32 matmul with torch's thread count (0.0 if not installed)."""
    try:
        import onnxruntime as ort
        from onnx import TensorProto, helper
    except ImportError:
        return 0.0
    spec = [helper.make_tensor_value_info(x, TensorProto.FLOAT, [n, n]) for x in "ABC"]
    graph = helper.make_graph([helper.make_node("MatMul", ["A", "B"], ["C"])], "peak", spec[:2], spec[2:])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8  # what every ONNX Runtime release reads
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = torch.get_num_threads()
    session = ort.InferenceSession(model.SerializeToString(), opts, providers=["CPUExecutionProvider"])
    feed = {"A": torch.randn(n, n).numpy(), "B": torch.randn(n, n).numpy()}
    session.run(None, feed)
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        session.run(None, feed)
        times.append(time.perf_counter() - t)
    return 2 * n**3 / statistics.median(times)


def parser() -> argparse.ArgumentParser:
    """Return the options of this benchmark."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--contexts", type=POSITIVE, default=20)
    ap.add_argument("--repeats", type=POSITIVE, default=3)
    ap.add_argument("--threads", type=COUNT, default=0, help="torch threads (0 = torch's default)")
    return ap


def breakdown(peak: float, parts: dict[str, tuple[list[float], list[float], int]]) -> str:
    """Return ``"; of which NAME about S s (P% of peak; in torch eager E s, Rx), ..."`` for each part timed.

    ``parts``: name -> (its times in its runtime, in torch eager, its nominal FLOPs); a part with no times did not
    run in ``quality`` and is left out. MiniLM's encoding was timed and printed as part of ``quality`` where the
    ensemble does not run it (with the larger encoder and no MiniLM feature), and a missing cross-encoder as "about
    0.00 s".

    Example:
        >>> breakdown(1e11, {"MiniLM encoding": ([], [], 10**9), "the cross-encoder": ([1.0, 3.0], [4.0], 5 * 10**10)})
        '; of which the cross-encoder about 2.00 s (25.0% of peak; in torch eager 4.00 s, 2.00x)'
    """
    out = []
    for name, (times, eager, flops) in parts.items():
        if times:
            t, te = statistics.median(times), statistics.median(eager)
            out.append(f"{name} about {t:.2f} s ({100 * flops / t / peak:.1f}% of peak; in torch eager {te:.2f} s, "
                       f"{te / t:.2f}x)")  # fmt: skip
    return "; of which " + ", ".join(out) if out else ""


def main() -> None:
    args = parser().parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    bench = load_usr_topical_chat(data_file("usr/usr_topical_chat.json")).head(args.contexts)
    items = build_inputs(bench.candidates, bench.dialogues)
    metric = QualityMetric(device="cpu")
    ort = QualityMetric(device="cpu", runtime="onnx")
    eager = QualityMetric(device="cpu", runtime="torch")
    bf16 = QualityMetric(device="cpu", precision="bf16")
    encoder, _ = load_sentence_encoder("all-minilm-l6-v2", "cpu")
    metric.compute(items[:6])  # warm-up: loads the models (and exports the ONNX model once)
    ort.compute(items[:6])
    eager.compute(items[:6])
    bf16.compute(items[:6])
    texts = sorted(set(pair_texts([[t.text for t in i.context] for i in items], [i.response for i in items])))
    ids = encoder.tokenizer(texts, truncation=True, max_length=encoder.max_seq_length)["input_ids"]
    enc_tokens = sum(len(i) for i in ids)
    # the token, position and type embedding tables are looked up, not multiplied: not in the FLOPs
    enc_params = sum(p.numel() for n, p in encoder.named_parameters() if ".embeddings." not in f".{n}")
    lm_params = lm_tokens = 0
    if metric.uses_lm():
        lm = LikelihoodMetric(device="cpu")
        model, _, _ = lm._loaded()
        cond, uncond = lm.requests(items)
        pairs = set(cond) | set(uncond)
        lm_tokens = sum(len(p) for p in {p for p, _ in pairs}) + sum(len(c) for _, c in pairs)
        lm_params = sum(p.numel() for p in model.parameters())
    pairs_x: list[tuple[list[int], list[int]]] = []
    x_params = 0
    if metric.uses_views():
        views, tokens = ort.views()
        views_eager = eager.views()[0]
        pairs_x = tokens.pairs([[t.text for t in i.context][-TURNS:] for i in items], [i.response for i in items])
        # the cross-encoder's own count: a views folder may keep fewer layers than the bi-encoder
        x_params = sum(p.numel() for n, p in views_eager.named_parameters() if ".embeddings." not in f".{n}")
    x_tokens = sum(len(ids) for ids, _ in pairs_x)
    large_params = large_tokens = 0
    if metric.uses_large():  # the larger encoder (mpnet) over the same distinct texts, with its own tokenizer
        large = eager.large()[0]  # the torch model, to count its parameters (ONNX Runtime's has none to list)
        ids = large.tokenizer(texts, truncation=True, max_length=large.max_seq_length)["input_ids"]
        large_tokens = sum(len(i) for i in ids)
        large_params = sum(p.numel() for n, p in large.named_parameters() if ".embeddings." not in f".{n}")
    # MiniLM's bi-encoder pass counts only where it runs (an ensemble naming its heads' features, or no larger encoder)
    frozen_flops = enc_params * enc_tokens if metric.uses_frozen() else 0
    flops = 2 * (frozen_flops + x_params * x_tokens + lm_params * lm_tokens + large_params * large_tokens)
    calls = {"bf16": bf16, "onnx": ort, "auto": metric, "eager": eager}  # alternated in this order each repeat
    took: dict[str, list[float]] = {name: [] for name in calls}
    # the encoders alone, where quality runs them: name -> (in quality's runtime, in torch eager)
    parts: dict[str, tuple[Callable[[], object], Callable[[], object]]] = {}
    if metric.uses_frozen():
        runner = ort.sentence_encoder()
        parts["MiniLM encoding"] = (lambda: embed(runner, texts), lambda: embed(encoder, texts))
    if pairs_x:
        parts["the cross-encoder"] = (lambda: score_batches(views, pairs_x),
                                      lambda: score_batches(views_eager, pairs_x))  # fmt: skip
    if metric.uses_large():
        large_ort = ort.large()[0]
        parts["the larger encoder"] = (lambda: embed(large_ort, texts), lambda: embed(large, texts))
    part_times: dict[str, tuple[list[float], list[float]]] = {name: ([], []) for name in parts}
    peaks, peaks_bf16 = [], []
    for _ in range(args.repeats):
        peaks.append(max(matmul_peak(), ort_matmul_peak()))
        peaks_bf16.append(matmul_peak(dtype=torch.bfloat16))
        for name, m in calls.items():
            t = time.perf_counter()
            m.compute(items)
            took[name].append(time.perf_counter() - t)
        for name, pair in parts.items():  # in the same minutes as the whole they are a part of
            for fn, times in zip(pair, part_times[name], strict=True):
                t = time.perf_counter()
                fn()
                times.append(time.perf_counter() - t)
    t_all, t_ort, t_eager, t_bf16 = (statistics.median(took[n]) for n in ("auto", "onnx", "eager", "bf16"))
    peak = max(peaks)
    part_flops = {"MiniLM encoding": 2 * enc_params * enc_tokens, "the cross-encoder": 2 * x_params * x_tokens,
                  "the larger encoder": 2 * large_params * large_tokens}  # fmt: skip
    runtime = metric.runtime()
    print(f"torch threads {torch.get_num_threads()}; {len(items)} USR-TC items, {args.contexts} contexts; "
          f"encoders' runtime {runtime}")
    print(
        f"MiniLM {enc_params / 1e6:.1f}M params outside the embedding tables, {len(texts)} distinct texts, "
        f"{enc_tokens} tokens ({'' if metric.uses_frozen() else 'not '}run as a bi-encoder); "
        f"cross-encoder {len(pairs_x)} pairs, {x_tokens} tokens; "
        f"larger encoder {large_params / 1e6:.1f}M params, {large_tokens} tokens; "
        f"SmolLM2 {lm_params / 1e6:.1f}M params, {lm_tokens} tokens (0: the ensemble does not use it)"
    )
    print(f"matmul peak (2048^3 fp32, the faster of torch and ONNX Runtime): {peak / 1e9:.1f} GFLOP/s")
    print(
        f"quality as users get it (runtime auto -> {runtime}): {t_all:.2f} s, {len(items) / t_all:.1f} items/s, "
        f"nominal {100 * flops / t_all / peak:.1f}% of peak (median of {args.repeats}), "
        f"{t_eager / t_all:.2f}x the eager baseline"
    )
    print(
        f"in ONNX Runtime: {t_ort:.2f} s, {len(items) / t_ort:.1f} items/s "
        f"({100 * flops / t_ort / peak:.1f}% of peak), "
        f"{t_eager / t_ort:.2f}x the eager baseline"
        + breakdown(peak, {name: (*times, part_flops[name]) for name, times in part_times.items()})
    )
    print(
        f"baseline, both encoders in torch eager: {t_eager:.2f} s, {len(items) / t_eager:.1f} items/s "
        f"({100 * flops / t_eager / peak:.1f}% of peak)"
    )
    peak_bf16 = max(peaks_bf16)
    print(
        f"precision bf16 (torch autocast): {t_bf16:.2f} s, {len(items) / t_bf16:.1f} items/s, "
        f"{t_eager / t_bf16:.2f}x the eager baseline; {100 * flops / t_bf16 / peak_bf16:.1f}% of the bf16 "
        f"matmul peak ({peak_bf16 / 1e9:.1f} GFLOP/s)"
    )


if __name__ == "__main__":
    main()
