"""Throughput of the Ray engine with 1 and 2 workers against the local engine, on the Chit-Chat corpus.

Usage: .venv/bin/python benchmarks/bench_ray.py [--lexical 10000] [--embedding 1000] [--likelihood 200]
       [--repeats 3] [--ray-address HOST:PORT] [--export DIR]

Chit-Chat (``pip install chitchat-dataset``): 7,168 conversations, 138,737 turns; every turn after the
first of a conversation is scored with its context. The lexical suite (bleu, sacrebleu, chrf, rouge,
f1) needs a reference; the corpus has none, so the previous turn stands in for one (the numbers
mean nothing, the work per item is the real work). Each workload runs on the first N items with
the local engine (this process, torch on every core), then on Ray with 1 and with 2 actors (one CPU
and one torch thread each), interleaved per repeat, all metrics of a workload in one engine run as
``dialeval score`` does. No score cache: every item is computed every time.

Each engine also runs a 10-item job: its wall time is the start-up (for Ray: scheduling, actor
processes, imports and model loads; the local engine's models are loaded before timing), and the
steady rate is (N - 10) / (wall(N) - wall(10)): the rate at which more items cost more time, from
which a large run's time is estimated. Without --ray-address, Ray starts on this machine with 2 CPUs.

``--export DIR`` writes the whole corpus as dialeval records (dialogues.jsonl, candidates.jsonl) for
``dialeval score --engine ray --dialogues ... --candidates ...`` and exits.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from pathlib import Path

from common import COUNT, POSITIVE  # benchmarks/ is on sys.path

from dialeval.atomic import WriteError, all_or_nothing
from dialeval.data.benchmark import Benchmark
from dialeval.data.chitchat import load_chitchat, with_previous_turn_as_reference
from dialeval.engines import Engine, LocalEngine, make_engine
from dialeval.jsonl import write_jsonl
from dialeval.metrics import METRICS, Metric, load_builtin_metrics
from dialeval.scoring import score_metrics

SMALL = 10  # items of the start-up job
WORKLOADS = {
    "lexical": ("bleu", "sacrebleu", "chrf", "rouge", "f1"),
    "embedding": ("embedding",),
    "likelihood": ("likelihood",),
}


def first_items(bench: Benchmark, n: int) -> Benchmark:
    cands = bench.candidates[:n]
    used = {c.dialogue_id for c in cands}
    return Benchmark(bench.name, {k: d for k, d in bench.dialogues.items() if k in used}, cands, [])


def steady_rate(items: int, wall: float, start_up: float) -> float | None:
    """Return the steady items/s, ``(items - SMALL) / (wall - start_up)``, or None where ``wall <= start_up``.

    With a few items more than the start-up job's, noise can make the larger job the quicker: the rate was then
    (items - 10) / 1e-9, printed as 30000000000.0 items/s and 17589008.00x the local engine.

    Example:
        >>> steady_rate(110, 3.0, 1.0), steady_rate(40, 2.2, 2.4)
        (50.0, None)
    """
    return (items - SMALL) / (wall - start_up) if wall > start_up else None


def run_all(families: list[type[Metric]], bench: Benchmark, engine: Engine) -> list[list[float | None]]:
    """Score ``bench`` with every family in one engine run, as ``dialeval score`` does."""
    runs = score_metrics([f() for f in families], bench.candidates, bench.dialogues, engine=engine)
    return [[s.value for s in run.scores] for run in runs]


def parser() -> argparse.ArgumentParser:
    """Return the options of this benchmark."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--lexical", type=COUNT, default=10000)
    ap.add_argument("--embedding", type=COUNT, default=1000)
    ap.add_argument("--likelihood", type=COUNT, default=200)
    ap.add_argument("--repeats", type=POSITIVE, default=3)
    ap.add_argument("--ray-address", default=None)
    ap.add_argument("--export", type=Path, default=None)
    return ap


def main() -> None:
    args = parser().parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")

    t = time.perf_counter()
    corpus = load_chitchat()
    print(
        f"chitchat: {len(corpus.dialogues)} conversations, {len(corpus.candidates) + len(corpus.dialogues)} turns, "
        f"{len(corpus.candidates)} scored items (loaded in {time.perf_counter() - t:.1f} s)"
    )
    if args.export is not None:
        try:  # both files or neither: a failed second write left the new dialogues beside the old candidates
            with all_or_nothing(args.export):
                write_jsonl(args.export / "dialogues.jsonl", corpus.dialogues.values())
                write_jsonl(args.export / "candidates.jsonl", corpus.candidates)
        except WriteError as exc:
            raise SystemExit(f"error: {exc}") from None
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

    sizes = {"lexical": args.lexical, "embedding": args.embedding, "likelihood": args.likelihood}
    columns = ["workload", "items", "engine", "wall items/s", "start-up s", "steady items/s", "steady / local"]
    rows: list[str] = []
    for name, names in WORKLOADS.items():
        n = sizes[name]
        if n <= SMALL:
            continue
        big, small = first_items(corpus, n), first_items(corpus, SMALL)
        families = [METRICS.get(f) for f in names]
        run_all(families, first_items(corpus, 2), engines["local"])  # load models in this process before timing
        seconds: dict[tuple[str, int], list[float]] = {}
        reference: list[list[float | None]] | None = None
        for _ in range(args.repeats):
            for label, engine in engines.items():
                for size, bench in ((SMALL, small), (n, big)):
                    t = time.perf_counter()
                    values = run_all(families, bench, engine)
                    seconds.setdefault((label, size), []).append(time.perf_counter() - t)
                    if size == n:
                        reference = reference or values
                        assert values == reference, f"{label} gave other values than local on {name}"
        steady_local = None
        for label in engines:
            t_big, t_small = statistics.median(seconds[(label, n)]), statistics.median(seconds[(label, SMALL)])
            steady = steady_rate(n, t_big, t_small)
            steady_local = steady if label == "local" else steady_local
            ratio = steady / steady_local if steady is not None and steady_local is not None else None
            rows.append(
                f"| {name} ({', '.join(names)}) | {n} | {label} | {n / t_big:.1f} | {t_small:.2f} "
                f"| {'-' if steady is None else f'{steady:.1f}'} | {'-' if ratio is None else f'{ratio:.2f}'} |"
            )
            print(rows[-1], flush=True)
    print()
    print("| " + " | ".join(columns) + " |")
    print("|---" * len(columns) + "|")
    print("\n".join(rows))
    print(
        f"\nmedians of {args.repeats} runs; start-up = wall time of a {SMALL}-item job (Ray: actors, imports, model "
        f"loads; local: models already loaded); steady = (items - {SMALL}) / (wall - start-up), - where the larger "
        "job took no longer than the start-up one (give more items). Every run's values were identical across engines."
    )


if __name__ == "__main__":
    main()
