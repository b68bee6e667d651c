"""Throughput of the Ray engine with 1 and 2 workers against the local engine, on the Chit-Chat corpus.

Usage: .venv/bin/python benchmarks/bench_ray.py [--lexical 20000] [--embedding 2000] [--likelihood 300]
       [--repeats 3] [--ray-address HOST:PORT] [--export DIR]

Chit-Chat (``pip install chitchat-dataset``): 7,168 conversations, 138,737 turns; every turn after the
first of a conversation is scored with its context. The lexical suite (bleu, sacrebleu, chrf, rouge,
f1) needs a reference; the corpus has none, so the previous turn stands in for one (the numbers
mean nothing, the work per item is the real work). Each workload runs on the first N items with
the local engine (this process, torch on every core), then on Ray with 1 and with 2 actors (one CPU
and one torch thread each), interleaved per repeat; medians are printed with their ratios. No score
cache: every item is computed every time.

The local engine's model loads once before timing; a Ray run's time includes starting its actors and
loading the model in each (that is what a user waits for), and the fixed cost of a Ray job is measured
separately on a one-batch job. Without --ray-address, Ray starts on this machine with 2 CPUs.

``--export DIR`` writes the whole corpus as dialeval records (dialogues.jsonl, candidates.jsonl) for
``dialeval score --engine ray --dialogues ... --candidates ...`` and exits.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from collections.abc import Callable
from pathlib import Path

from dialeval.data.benchmark import Benchmark
from dialeval.data.chitchat import load_chitchat, with_previous_turn_as_reference
from dialeval.engines import Engine, LocalEngine, make_engine
from dialeval.jsonl import write_jsonl
from dialeval.metrics import METRICS, Metric, load_builtin_metrics
from dialeval.runner import run_metrics

WORKLOADS = {
    "lexical": ("bleu", "sacrebleu", "chrf", "rouge", "f1"),
    "embedding": ("embedding",),
    "likelihood": ("likelihood",),
}


def first_items(bench: Benchmark, n: int) -> Benchmark:
    cands = bench.candidates[:n]
    used = {c.dialogue_id for c in cands}
    return Benchmark(bench.name, {k: d for k, d in bench.dialogues.items() if k in used}, cands, [])


def timed(fn: Callable[[], object]) -> float:
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


def run_all(families: list[type[Metric]], bench: Benchmark, engine: Engine) -> list[list[float | None]]:
    """Score ``bench`` with every family in one engine run, as ``dialeval score`` does."""
    return [[s.value for s in run.scores] for run in run_metrics(bench, families, engine=engine)]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--lexical", type=int, default=20000)
    ap.add_argument("--embedding", type=int, default=2000)
    ap.add_argument("--likelihood", type=int, default=300)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--ray-address", default=None)
    ap.add_argument("--export", type=Path, default=None)
    args = ap.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")

    t = time.perf_counter()
    corpus = load_chitchat()
    print(
        f"chitchat: {len(corpus.dialogues)} conversations, {len(corpus.candidates) + len(corpus.dialogues)} turns, "
        f"{len(corpus.candidates)} scored items (loaded in {time.perf_counter() - t:.1f} s)"
    )
    if args.export is not None:
        write_jsonl(args.export / "dialogues.jsonl", corpus.dialogues.values())
        write_jsonl(args.export / "candidates.jsonl", corpus.candidates)
        print(f"wrote {args.export}/dialogues.jsonl, candidates.jsonl")
        return
    corpus = with_previous_turn_as_reference(corpus)

    import ray

    if args.ray_address:
        ray.init(address=args.ray_address, include_dashboard=False, log_to_driver=False)
    else:
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    load_builtin_metrics()
    engines: dict[str, Engine] = {
        "local": LocalEngine(), "ray-1": make_engine("ray", workers=1), "ray-2": make_engine("ray", workers=2)
    }

    tiny = first_items(corpus, 10)
    length = [METRICS.get("length")]
    fixed = [timed(lambda: run_all(length, tiny, engines["ray-1"])) for _ in range(args.repeats)]
    print(f"fixed cost of a Ray job (one batch of 10 items, one actor): median {statistics.median(fixed):.2f} s")

    sizes = {"lexical": args.lexical, "embedding": args.embedding, "likelihood": args.likelihood}
    print()
    columns = ["workload", "items", "local items/s", "ray 1 worker", "ray 2 workers"]
    columns += ["ray-1 / local", "ray-2 / local", "ray-2 / ray-1"]
    print("| " + " | ".join(columns) + " |")
    print("|---" * len(columns) + "|")
    for name, names in WORKLOADS.items():
        n = sizes[name]
        if n <= 0:
            continue
        bench = first_items(corpus, n)
        families = [METRICS.get(f) for f in names]
        run_all(families, first_items(corpus, 2), engines["local"])  # load models in this process before timing
        seconds: dict[str, list[float]] = {k: [] for k in engines}
        reference: list[list[float | None]] | None = None
        for _ in range(args.repeats):
            for label, engine in engines.items():
                t = time.perf_counter()
                values = run_all(families, bench, engine)
                seconds[label].append(time.perf_counter() - t)
                reference = reference or values
                assert values == reference, f"{label} gave other values than local on {name}"
        rate = {k: n / statistics.median(v) for k, v in seconds.items()}
        print(
            f"| {name} ({', '.join(names)}) | {n} | {rate['local']:.1f} | {rate['ray-1']:.1f} | {rate['ray-2']:.1f} "
            f"| {rate['ray-1'] / rate['local']:.2f} | {rate['ray-2'] / rate['local']:.2f} "
            f"| {rate['ray-2'] / rate['ray-1']:.2f} |",
            flush=True,
        )
    print(f"\n(medians of {args.repeats} runs; every run's values were identical across engines)")


if __name__ == "__main__":
    main()
