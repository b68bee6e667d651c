"""Fault injection: a real proxy on 127.0.0.1 between the client and the real llama.cpp server.

The proxy answers scripted requests with HTTP 500, 429, 400, a stall past the client's
timeout, a truncated JSON body, and prose with no score; every other request is
forwarded to the llama.cpp server. Expected counts are derived from the script
and from a fault-free baseline run (greedy decoding, so the model's answers are
the same in both runs).
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx
import pytest

from dialeval.backends.openai_compat import OpenAICompatBackend
from dialeval.backends.runner import Runner
from dialeval.judges.judge import Judge
from dialeval.judges.protocol import load_protocol
from dialeval.metrics.base import MetricInput
from dialeval.schema import Turn

PROSE = "What a lovely conversation! I really enjoyed reading it."
TIMEOUT = 8.0
PROTOCOL = """\
name: test-fewshot
version: 1
citation: written for this test
scale: {min: 1, max: 5, integer: true}
labels: ["Score"]
messages:
  - role: user
    content: "Rate the reply from 1 to 5. Context: How are you? Reply: Fine, thanks, and you?"
  - role: assistant
    content: "Score: 5"
  - role: user
    content: "Rate the reply from 1 to 5. Context: {{last_turn}} Reply: {{response}}"
"""
ITEMS = [
    MetricInput(response=r, context=(Turn(speaker="A", text=c),))
    for c, r in [
        ("Do you like jazz?", "Yes, I love Miles Davis."),
        ("Where do you live?", "Banana keyboard purple."),
        ("What is your job?", "I teach math at a high school."),
    ]
]


class FaultProxy:
    """Forward POSTs to the same path under ``upstream`` except those whose 1-based number is in ``script``."""

    def __init__(self, upstream: str, script: dict[int, str]) -> None:
        self.upstream, self.script, self.seen = upstream, script, 0
        lock = threading.Lock()
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def _send(self, code: int, body: bytes) -> None:
                try:
                    self.send_response(code)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (the stall case)

            def do_POST(self) -> None:
                payload = self.rfile.read(int(self.headers["Content-Length"]))
                with lock:
                    proxy.seen += 1
                    action = proxy.script.get(proxy.seen, "forward")
                if action in ("500", "429", "400"):
                    return self._send(int(action), b'{"error": "injected"}')
                if action == "stall":
                    time.sleep(TIMEOUT + 1.0)
                up = httpx.post(proxy.upstream + self.path.removeprefix("/v1"), content=payload, timeout=120,
                                headers={"Content-Type": "application/json"})
                body = up.content
                if action == "truncated":
                    body = body[: len(body) // 2]
                elif action == "prose":
                    data = up.json()
                    data["choices"][0]["message"]["content"] = PROSE
                    body = json.dumps(data).encode()
                return self._send(up.status_code, body)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def protocol_file(tmp_path: Path) -> Path:
    p = tmp_path / "fewshot.yaml"
    p.write_text(PROTOCOL, encoding="utf-8")
    return p


@pytest.fixture
def proxy(llama_url: str) -> Iterator[FaultProxy]:
    # 1-4: four transport faults on item 1's request; 5: item 1 forwarded; 6: prose for item 2;
    # 7: item 3 forwarded; 8: the first parse retry gets prose again.
    fp = FaultProxy(llama_url, {1: "500", 2: "429", 3: "stall", 4: "truncated", 6: "prose", 8: "prose"})
    yield fp
    fp.close()


def _judge(url: str, protocol_file: Path) -> tuple[Judge, OpenAICompatBackend]:
    backend = OpenAICompatBackend(url, "smollm2", timeout=TIMEOUT, max_retries=5, backoff=0.05)
    judge = Judge(load_protocol(protocol_file), Runner(backend, in_flight=1), k=1, temperature=0.0,
                  seed=3, max_tokens=8, top_logprobs=0)
    return judge, backend


def test_faults_are_retried_and_counted_exactly(llama_url: str, proxy: FaultProxy, protocol_file: Path) -> None:
    base_judge, _ = _judge(llama_url, protocol_file)
    baseline = base_judge.judge(ITEMS)
    base_ok = [b.value is not None for b in baseline]

    judge, backend = _judge(proxy.url, protocol_file)
    result = judge.judge(ITEMS)

    # transport faults: each of 500, 429, stall and truncated JSON cost one retry
    assert backend.retries == 4
    # phase-2 retries: item 2 (prose) and every item the model itself answered without a score
    retried = sorted({1} | {i for i in (0, 2) if not base_ok[i]})
    assert judge.stats.parse_retries == len(retried)
    # request 8 (the first retry) got prose again, so that item keeps no score from it
    prose_twice = retried[0]
    expected_fail = [
        (i == prose_twice) or (not base_ok[i]) for i in range(3)
    ]
    assert judge.stats.parse_failures == sum(expected_fail)
    assert judge.stats.items_missing == sum(expected_fail)
    assert backend.attempts == 7 + len(retried)
    assert proxy.seen == backend.attempts
    # nothing finished is lost: every item not hit by the double prose has the baseline's value
    for i in range(3):
        if expected_fail[i]:
            assert result[i].value is None and "parse failure" in result[i].reason
        else:
            assert result[i].value == baseline[i].value
    assert judge.runner.stats.failed == 0 and judge.runner.stats.calls == 3 + len(retried)
