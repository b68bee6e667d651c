"""Load on the annotation app: N simulated annotators answering concurrently over real HTTP on 127.0.0.1.

Each annotator loads its tasks, then sends ``--per-annotator`` answers back to back (no think
time: a closed loop, so the latency is what the server's throughput allows at N requests in
flight), over its own keep-alive connection (``--client lean``: a minimal asyncio HTTP/1.1
client, so that the load generator does not take the CPU the server needs; ``--client httpx``
is the shared httpx client the tests use). The study is sized so that every annotator has that
many questions. Prints, per N, p50/p99 latency of PUT /api/answers for the app as served
(``dialeval study serve``: uvicorn, SQLite WAL), the server's CPU time per answer (user +
system, all its threads: the figure least moved by other load on the machine), and a baseline
measured in the same conditions: GET / (a static page through the same server), so the ratio
shows what the answer's checks and write cost.

    .venv/bin/python benchmarks/bench_annotation_load.py --annotators 10 50 200 --per-annotator 40
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx
from common import POSITIVE  # benchmarks/ is on sys.path


async def _baseline(base: str, n: int, concurrency: int, lean: bool) -> list[float]:
    """Return latencies of GET / from ``concurrency`` clients sending ``n`` requests in all."""
    from tests.human.load_study import LeanClient

    lat: list[float] = []

    async def one(client: Any, k: int) -> None:
        for _ in range(k):
            s = time.perf_counter()
            r = await client.get(f"{base}/", headers={})
            assert r.status_code == 200, r.status_code
            lat.append(time.perf_counter() - s)

    if lean:
        clients = [LeanClient(base) for _ in range(concurrency)]
        await asyncio.gather(*[one(c, max(1, n // concurrency)) for c in clients])
        for c in clients:
            await c.close()
        return lat
    async with httpx.AsyncClient(timeout=30) as client:
        await asyncio.gather(*[one(client, max(1, n // concurrency)) for _ in range(concurrency)])
    return lat


def pct(values: list[float], q: float) -> float:
    """Return the ``q``-th percentile (nearest rank) of ``values``."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q / 100 * len(ordered)))]


def cpu_seconds(pid: int) -> float:
    """Return the user + system CPU seconds of process ``pid`` so far (all its threads; Linux)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def run(n_annotators: int, per_annotator: int, lean: bool = True) -> dict[str, Any]:
    """Serve a fresh study to ``n_annotators`` concurrent annotators; return the figures of one run."""
    from tests.human.conftest import start_server
    from tests.human.load_study import make_load_study, simulate

    # each annotator gets >= per_annotator questions: units x 3 candidates x 4 criteria, 3 annotators per unit
    n_contexts = max(60, math.ceil(n_annotators * math.ceil(per_annotator / 12) / 3) + 1)
    with tempfile.TemporaryDirectory() as tmp:
        access = make_load_study(Path(tmp) / "study", n_annotators, n_contexts)
        server = start_server(Path(tmp) / "study")
        try:
            cpu0, own0, t0 = cpu_seconds(server.proc.pid), time.process_time(), time.perf_counter()
            res = asyncio.run(simulate(server.base, access["annotators"], per_annotator, lean=lean))
            wall, cpu = time.perf_counter() - t0, cpu_seconds(server.proc.pid) - cpu0
            client_cpu = time.process_time() - own0
            base = asyncio.run(_baseline(server.base, len(res.latencies), n_annotators, lean))
        finally:
            server.proc.terminate()
            server.proc.wait(timeout=10)
    ms = lambda x: round(1000 * x, 1)  # noqa: E731
    return {
        "annotators": n_annotators,
        "client": "lean" if lean else "httpx",
        "answers_acknowledged": len(res.acknowledged),
        "failures": res.failures,
        "wall_s": round(wall, 2),
        "answers_per_s": round(len(res.acknowledged) / wall, 1),
        "put_answer_p50_ms": ms(statistics.median(res.latencies)),
        "put_answer_p99_ms": ms(pct(res.latencies, 99)),
        "server_cpu_ms_per_answer": round(1000 * cpu / max(1, len(res.acknowledged)), 2),
        "client_cpu_ms_per_answer": round(1000 * client_cpu / max(1, len(res.acknowledged)), 2),
        "baseline_get_page_p50_ms": ms(statistics.median(base)),
        "baseline_get_page_p99_ms": ms(pct(base, 99)),
        "ratio_p50": round(statistics.median(res.latencies) / statistics.median(base), 2),
    }


def parser() -> argparse.ArgumentParser:
    """Return the options of this benchmark."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--annotators", type=POSITIVE, nargs="+", default=[50])
    parser.add_argument("--per-annotator", type=POSITIVE, default=40)
    parser.add_argument("--repeats", type=POSITIVE, default=1)
    parser.add_argument("--client", choices=["lean", "httpx"], default="lean",
                        help="load generator: lean (asyncio streams, cheap) or httpx (4.4 ms CPU per answer)")
    return parser


def main(argv: list[str] | None = None) -> None:
    """Run the benchmark for each number of annotators; print one JSON object per run."""
    args = parser().parse_args(argv)
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    for n in args.annotators:
        for _ in range(args.repeats):
            print(json.dumps(run(n, args.per_annotator, args.client == "lean")), flush=True)


if __name__ == "__main__":
    main()
