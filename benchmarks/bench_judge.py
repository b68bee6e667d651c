"""Judge throughput and cache speed against a local llama.cpp HTTP server, and USR-TC correlations.

    .venv/bin/python benchmarks/bench_judge.py --requests 16 --repeats 3
    .venv/bin/python benchmarks/bench_judge.py --correlation --contexts 2 --protocols lmstyle-appropriateness

Throughput: the same N short requests (no cache, distinct seeds) sent with 1 and
with 8 in flight, in the same process against the same server; medians of the
repeats and their ratio. Cached rerun: a judge run through a fresh SQLite cache,
then the identical run again (0 calls). Correlation: turn-level Pearson and
Spearman (scipy) of each protocol's score with the mean USR Overall rating on
the first contexts, with the parse-failure rate.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from dialeval.backends.base import ChatRequest
from dialeval.backends.cache import RequestCache
from dialeval.backends.llamacpp import local_server
from dialeval.backends.openai_compat import OpenAICompatBackend
from dialeval.backends.runner import Runner


def throughput(url: str, n: int, repeats: int, max_tokens: int) -> None:
    backend = OpenAICompatBackend(url, "smollm2", timeout=300)
    rates: dict[int, list[float]] = {1: [], 8: []}
    for rep in range(repeats):
        for flight in (1, 8):
            reqs = [
                ChatRequest(messages=(("user", f"Rate 1-5: 'Nice to meet you!' (#{rep}-{i})"),),
                            max_tokens=max_tokens, temperature=0.7, seed=1000 * rep + i)
                for i in range(n)
            ]
            t = time.perf_counter()
            Runner(backend, in_flight=flight).run(reqs)
            rates[flight].append(n / (time.perf_counter() - t))
    m1, m8 = statistics.median(rates[1]), statistics.median(rates[8])
    print(f"throughput, {n} requests x {repeats} repeats, max_tokens={max_tokens}:")
    print(f"  1 in flight: median {m1:.2f} req/s  {[round(r, 2) for r in rates[1]]}")
    print(f"  8 in flight: median {m8:.2f} req/s  {[round(r, 2) for r in rates[8]]}")
    print(f"  ratio 8/1: {m8 / m1:.2f}")
    with tempfile.TemporaryDirectory() as tmp:
        cache = RequestCache(Path(tmp) / "c.sqlite")
        reqs = [ChatRequest(messages=(("user", f"Say {i}."),), max_tokens=max_tokens, seed=i) for i in range(n)]
        times = []
        for _ in range(2):
            r = Runner(backend, cache, in_flight=8)
            t = time.perf_counter()
            r.run(reqs)
            times.append(time.perf_counter() - t)
            print(f"  run with cache: {times[-1]:.3f} s, calls={r.stats.calls}, cache hits={r.stats.cache_hits}")
        print(f"  cached rerun speed-up: {times[0] / times[1]:.0f}x")


def correlation(contexts: int, protocols: list[str], k: int, max_tokens: int) -> None:
    from scipy.stats import pearsonr, spearmanr

    import dialeval.judges  # noqa: F401  (registers judge:<protocol>)
    from dialeval.data.catalog import load_benchmark
    from dialeval.metrics.base import METRICS
    from dialeval.scoring import score_candidates

    bench = load_benchmark("usr-tc").head(contexts)
    human: dict[str, list[float]] = {}
    for r in bench.ratings:
        if r.dimension == "Overall" and isinstance(r.value, (int, float)):
            human.setdefault(r.item_id, []).append(float(r.value))
    print(f"USR-TC, {contexts} contexts, {len(bench.candidates)} turns, k={k}, max_tokens={max_tokens}:")
    for name in protocols:
        m = METRICS.get(f"judge:{name}")(k=k, max_tokens=max_tokens, cache=True)
        t = time.perf_counter()
        scores = score_candidates(m, bench.candidates, bench.dialogues)
        main = m.outputs[0]
        pairs = [
            (x.value, statistics.mean(human[x.item_id])) for x in scores if x.metric == main and x.value is not None
        ]
        s = m.run_summary()
        rate = s["parse_failures"] / max(1, s["samples"])
        if len(pairs) > 2 and len({p[0] for p in pairs}) > 1:
            xs, ys = zip(*pairs, strict=True)
            pr, sr = pearsonr(xs, ys)[0], spearmanr(xs, ys)[0]
            corr = f"pearson {pr:+.3f} spearman {sr:+.3f}"
        else:
            corr = "no correlation (constant or too few scores)"
        print(f"  {main}: n={len(pairs)} {corr}; parse failures {rate:.0%}; calls {s['calls']};"
              f" {time.perf_counter() - t:.0f} s")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--requests", type=int, default=16)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--max-tokens", type=int, default=8)
    ap.add_argument("--correlation", action="store_true")
    ap.add_argument("--contexts", type=int, default=2)
    ap.add_argument("--k", type=int, default=1)
    ap.add_argument("--protocols", default="lmstyle-appropriateness,cpdscore-detail,diqad-holistic")
    a = ap.parse_args()
    if a.correlation:
        correlation(a.contexts, a.protocols.split(","), a.k, a.max_tokens)
        return
    _, port = local_server(n_ctx=2048, n_parallel=8)
    throughput(f"http://127.0.0.1:{port}/v1", a.requests, a.repeats, a.max_tokens)


if __name__ == "__main__":
    main()
