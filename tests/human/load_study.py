"""Load simulation shared by tests/human/test_load.py and benchmarks/bench_annotation_load.py.

A study big enough for the load and crash tests (60 contexts, 2 systems + ground truth, N annotators)
and N simulated annotators answering concurrently over real HTTP.
"""

from __future__ import annotations

import asyncio
import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
from tests.human.conftest import dialogues_and_candidates

from dialeval.human.design import StudyConfig, create_study
from dialeval.human.protocol import load_protocol


def make_load_study(folder: Path, n_annotators: int) -> dict[str, Any]:
    proto = load_protocol("mousavi-turn")
    dialogues, candidates = dialogues_and_candidates(n_contexts=60)
    names = tuple(f"w{i:03d}" for i in range(n_annotators))
    config = StudyConfig(proto.name, proto.version, names, per_item=3, batch_size=20, seed=0)
    create_study(folder, proto, dialogues, candidates, config)
    return dict(json.loads((folder / "access.json").read_text()))


@dataclass
class LoadResult:
    acknowledged: dict[tuple[str, str, str], str] = field(default_factory=dict)  # (annotator, item, crit) -> value
    latencies: list[float] = field(default_factory=list)
    failures: int = 0


async def _annotator(
    client: httpx.AsyncClient, base: str, name: str, token: str, per_annotator: int, result: LoadResult
) -> None:
    headers = {"Authorization": f"Bearer {token}"}
    try:
        tasks = (await client.get(f"{base}/api/tasks", headers=headers)).json()
        me = (await client.get(f"{base}/api/me", headers=headers)).json()
    except httpx.HTTPError:
        result.failures += 1
        return
    criteria = [c["name"] for c in me["protocol"]["criteria"]]
    pairs = [(it["id"], c) for u in tasks["units"] for c in criteria for it in u["items"]][:per_annotator]
    for i, (item, crit) in enumerate(pairs):
        value = "positive" if (hash(name) + i) % 2 else "negative"
        body = {"item_id": item, "criterion": crit, "value": value, "seconds": 1.0}
        start = time.perf_counter()
        try:
            r = await client.put(f"{base}/api/answers", headers=headers, json=body)
        except httpx.HTTPError:
            result.failures += 1
            return  # the server is gone (crash test): stop like a closed browser tab would
        if r.status_code == 200:
            result.latencies.append(time.perf_counter() - start)
            result.acknowledged[(name, item, crit)] = value
        else:
            result.failures += 1


async def simulate(
    base: str, tokens: dict[str, str], per_annotator: int, timeout_s: float = 120.0, result: LoadResult | None = None
) -> LoadResult:
    """Run every annotator concurrently; each answers up to ``per_annotator`` (item, criterion) pairs.

    Pass ``result`` to watch acknowledgements live from another thread.
    """
    result = result if result is not None else LoadResult()
    limits = httpx.Limits(max_connections=len(tokens), max_keepalive_connections=len(tokens))
    async with httpx.AsyncClient(timeout=30, limits=limits) as client:
        jobs = [_annotator(client, base, n, t, per_annotator, result) for n, t in tokens.items()]
        await asyncio.wait_for(asyncio.gather(*jobs), timeout=timeout_s)
    return result
