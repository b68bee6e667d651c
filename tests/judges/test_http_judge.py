"""Judges over HTTP against a real scripted server on 127.0.0.1 (tests/backends/test_openai_compat.py's
:class:`Scripted`): what the run's counters and notes make of the server's answers. No model is served."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.backends.test_openai_compat import Reply, Scripted
from typer.testing import CliRunner

from dialeval.cli import app
from dialeval.judges import JudgeMetric
from dialeval.metrics.base import METRICS, MetricInput
from dialeval.schema import Turn

ITEMS = [MetricInput(response="Yes, I love Miles Davis.", context=(Turn(speaker="A", text="Do you like jazz?"),))]


@pytest.fixture(autouse=True)
def _own_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DIALEVAL_CACHE", str(tmp_path / "cache"))


@pytest.fixture
def serve() -> Iterator[Callable[..., Scripted]]:
    """Start scripted servers; each is closed after the test."""
    started: list[Scripted] = []

    def start(*script: Reply) -> Scripted:
        started.append(Scripted(list(script)))
        return started[-1]

    yield start
    for s in started:
        s.close()


def answer(text: str, finish_reason: str) -> bytes:
    """A chat-completion body with one choice that ended for ``finish_reason``."""
    choice = {"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": finish_reason}
    return json.dumps({"object": "chat.completion", "choices": [choice]}).encode()


def _metric(url: str, **params: Any) -> JudgeMetric:
    m = METRICS.get("judge:lmstyle-appropriateness")(
        backend="openai-compatible", base_url=url, model="m", max_retries=0, **{"cache": False, **params}
    )
    assert isinstance(m, JudgeMetric)
    return m


@pytest.mark.parametrize(("finish", "cut"), [("stop", 0), ("length", 2)])
def test_an_empty_answer_the_server_ended_is_not_noted_as_cut_by_max_tokens(serve: Any, finish: str, cut: int) -> None:
    """Every unparsable structured answer was noted "cut by max_tokens ... (raise max_tokens)": an empty answer
    with ``finish_reason: stop`` too, where raising max_tokens changes nothing. The server's finish_reason now
    decides: the item's answer and its parse retry are the two unparsable answers of the run. A rerun from the
    request cache says the same (the cache keeps the finish_reason)."""
    url = serve(Reply(body=answer("", finish))).url
    cut_note = "2 answer(s) were cut by max_tokens before the shape was complete (raise max_tokens)"
    other = "an answer ended without the shape's score, and the backend did not say max_tokens cut it: does the " \
            "backend hold answers to the shape?"
    for hits in (0, 2):
        m = _metric(url, cache=True)
        assert m.compute(ITEMS)["judge:lmstyle-appropriateness"] == [None]
        s = m.run_summary()
        assert (s["cache_hits"], s["parse_retries"], s["parse_failures"], s["cut_by_max_tokens"]) == (hits, 1, 1, cut)
        assert s["notes"] == [cut_note if cut else other]


@pytest.mark.parametrize("backend", ["llamacpp", "transformers"])
def test_a_base_url_for_a_backend_in_this_process_is_one_error(tmp_path: Path, backend: str) -> None:
    """``-p base_url=...`` without ``-p backend=openai-compatible`` was ignored: the packaged model answered in
    this process in place of the server, under a signature that named the URL. No request, no model: one line."""
    out = tmp_path / "scores.jsonl"
    args = ["judge", "run", "--protocol", "lmstyle-appropriateness", "--limit", "1", "--out", str(out),
            "-p", f"backend={backend}", "-p", "base_url=http://127.0.0.1:8080/v1"]  # fmt: skip
    res = CliRunner().invoke(app, args, terminal_width=300)
    assert res.exit_code == 2, res.output
    assert [line for line in res.output.splitlines() if line.startswith("error:")] == [
        f'error: field "--param": judge:lmstyle-appropriateness.base_url: is for backend=openai-compatible; '
        f"backend={backend} runs the model in this process (give -p backend=openai-compatible to use the server)"
    ], res.output
    assert not out.exists()
