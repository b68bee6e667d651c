"""Load on the annotation app: N simulated annotators answering concurrently over real HTTP on 127.0.0.1.

Prints p50/p99 latency of PUT /api/answers for the app as served (uvicorn, SQLite WAL) beside a
baseline measured in the same process: GET / (a static page through the same server and auth-free
path), so the ratio shows what the database write and checks cost.

    .venv/bin/python benchmarks/bench_annotation_load.py --annotators 50 --per-annotator 20
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx


async def _baseline(base: str, n: int, concurrency: int) -> list[float]:
    lat: list[float] = []
    async with httpx.AsyncClient(timeout=30) as client:

        async def one(k: int) -> None:
            for _ in range(k):
                s = time.perf_counter()
                (await client.get(f"{base}/")).raise_for_status()
                lat.append(time.perf_counter() - s)

        await asyncio.gather(*[one(n // concurrency) for _ in range(concurrency)])
    return lat


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q / 100 * len(ordered)))]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--annotators", type=int, default=50)
    parser.add_argument("--per-annotator", type=int, default=20)
    args = parser.parse_args(argv)
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from tests.human.conftest import start_server
    from tests.human.load_study import make_load_study, simulate

    with tempfile.TemporaryDirectory() as tmp:
        access = make_load_study(Path(tmp) / "study", args.annotators)
        server = start_server(Path(tmp) / "study")
        try:
            t0 = time.perf_counter()
            res = asyncio.run(simulate(server.base, access["annotators"], args.per_annotator))
            wall = time.perf_counter() - t0
            base = asyncio.run(_baseline(server.base, len(res.latencies), args.annotators))
        finally:
            server.proc.terminate()
            server.proc.wait(timeout=10)
    ms = lambda x: round(1000 * x, 1)  # noqa: E731
    report: dict[str, Any] = {
        "annotators": args.annotators,
        "answers_acknowledged": len(res.acknowledged),
        "failures": res.failures,
        "wall_s": round(wall, 2),
        "answers_per_s": round(len(res.acknowledged) / wall, 1),
        "put_answer_p50_ms": ms(statistics.median(res.latencies)),
        "put_answer_p99_ms": ms(pct(res.latencies, 99)),
        "baseline_get_page_p50_ms": ms(statistics.median(base)),
        "baseline_get_page_p99_ms": ms(pct(base, 99)),
        "ratio_p50": round(statistics.median(res.latencies) / statistics.median(base), 2),
    }
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
