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


def make_load_study(folder: Path, n_annotators: int, n_contexts: int = 60) -> dict[str, Any]:
    """Create the study (3 annotators per context, each context 2 systems + ground truth, 4 criteria each)."""
    proto = load_protocol("mousavi-turn")
    dialogues, candidates = dialogues_and_candidates(n_contexts=n_contexts)
    names = tuple(f"w{i:03d}" for i in range(n_annotators))
    config = StudyConfig(proto.name, proto.version, names, per_item=3, batch_size=20, seed=0)
    create_study(folder, proto, dialogues, candidates, config)
    return dict(json.loads((folder / "access.json").read_text()))


@dataclass
class LoadResult:
    acknowledged: dict[tuple[str, str, str], str] = field(default_factory=dict)  # (annotator, item, crit) -> value
    latencies: list[float] = field(default_factory=list)
    failures: int = 0
    reasons: list[str] = field(default_factory=list)  # what each failure was, for the assertion's message

    def fail(self, reason: str) -> None:
        """Count one failed request and keep why (an exception, or a status and the start of its body)."""
        self.failures += 1
        self.reasons.append(reason)


@dataclass
class LeanResponse:
    status_code: int
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


class LeanClient:
    """One keep-alive HTTP/1.1 connection on asyncio streams, for the benchmark's load generator.

    httpx spent 4.4 ms of CPU per answer against the server's 1.9 ms: on two shared cores the
    benchmark measured mostly its own client. This one costs a fraction of that. It speaks just
    enough HTTP for the app (Content-Length bodies, no chunking) and raises ``httpx.ReadError``
    like httpx when the connection fails, so :func:`_annotator` handles both alike.
    """

    def __init__(self, base: str) -> None:
        self.host, port = base.removeprefix("http://").split(":")
        self.port = int(port)
        self.streams: tuple[asyncio.StreamReader, asyncio.StreamWriter] | None = None

    async def request(self, method: str, url: str, headers: dict[str, str], body: bytes = b"") -> LeanResponse:
        path = "/" + url.split("/", 3)[3]
        head = "".join(f"{k}: {v}\r\n" for k, v in headers.items())
        raw = (f"{method} {path} HTTP/1.1\r\nHost: {self.host}\r\n{head}Content-Type: application/json\r\n"
               f"Content-Length: {len(body)}\r\n\r\n").encode() + body  # fmt: skip
        try:
            if self.streams is None:
                self.streams = await asyncio.open_connection(self.host, self.port)
            reader, writer = self.streams
            writer.write(raw)
            status = int((await reader.readuntil(b"\r\n")).split()[1])
            length = 0
            while (line := await reader.readuntil(b"\r\n")) != b"\r\n":
                name, _, value = line.partition(b":")
                if name.strip().lower() == b"content-length":
                    length = int(value)
            return LeanResponse(status, await reader.readexactly(length))
        except (OSError, asyncio.IncompleteReadError, IndexError, ValueError) as exc:
            raise httpx.ReadError(str(exc)) from exc

    async def get(self, url: str, headers: dict[str, str]) -> LeanResponse:
        return await self.request("GET", url, headers)

    async def put(self, url: str, headers: dict[str, str], json: Any) -> LeanResponse:
        import json as _json

        return await self.request("PUT", url, headers, _json.dumps(json).encode())

    async def close(self) -> None:
        if self.streams is not None:
            self.streams[1].close()


async def _annotator(
    client: httpx.AsyncClient | LeanClient, base: str, name: str, token: str, per_annotator: int, result: LoadResult
) -> None:
    headers = {"Authorization": f"Bearer {token}"}
    try:
        tasks = (await client.get(f"{base}/api/tasks", headers=headers)).json()
        me = (await client.get(f"{base}/api/me", headers=headers)).json()
    except httpx.HTTPError as exc:
        result.fail(f"{name} setup: {exc!r}")
        return
    criteria = [c["name"] for c in me["protocol"]["criteria"]]
    pairs = [(it["id"], c) for u in tasks["units"] for c in criteria for it in u["items"]][:per_annotator]
    for i, (item, crit) in enumerate(pairs):
        value = "positive" if (hash(name) + i) % 2 else "negative"
        body = {"item_id": item, "criterion": crit, "value": value, "seconds": 1.0}
        start = time.perf_counter()
        try:
            r = await client.put(f"{base}/api/answers", headers=headers, json=body)
        except httpx.HTTPError as exc:
            result.fail(f"{name} answer after {time.perf_counter() - start:.1f} s: {exc!r}")
            return  # the server is gone (crash test): stop like a closed browser tab would
        if r.status_code == 200:
            result.latencies.append(time.perf_counter() - start)
            result.acknowledged[(name, item, crit)] = value
        else:
            result.fail(f"{name} answer: HTTP {r.status_code} {r.text[:200]}")


async def simulate(
    base: str,
    tokens: dict[str, str],
    per_annotator: int,
    timeout_s: float = 120.0,
    result: LoadResult | None = None,
    lean: bool = False,
) -> LoadResult:
    """Run every annotator concurrently; each answers up to ``per_annotator`` (item, criterion) pairs.

    Pass ``result`` to watch acknowledgements live from another thread; ``lean`` to use
    :class:`LeanClient` (one connection per annotator) instead of one shared httpx client.
    """
    result = result if result is not None else LoadResult()
    if lean:
        clients = [LeanClient(base) for _ in tokens]
        pairs = zip(clients, tokens.items(), strict=True)
        jobs = [_annotator(c, base, n, t, per_annotator, result) for c, (n, t) in pairs]
        try:
            await asyncio.wait_for(asyncio.gather(*jobs), timeout=timeout_s)
        finally:
            for c in clients:
                await c.close()
        return result
    limits = httpx.Limits(max_connections=len(tokens), max_keepalive_connections=len(tokens))
    async with httpx.AsyncClient(timeout=30, limits=limits) as client:
        jobs = [_annotator(client, base, n, t, per_annotator, result) for n, t in tokens.items()]
        await asyncio.wait_for(asyncio.gather(*jobs), timeout=timeout_s)
    return result
