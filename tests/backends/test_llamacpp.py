"""The in-process llama.cpp backend's handling of the answer body, with a scripted server in place of llama.cpp
(the SmolLM2 tests in test_backends.py run the real one)."""

from __future__ import annotations

from typing import Any

import pytest

from dialeval.backends import llamacpp
from dialeval.backends.base import BackendError, ChatRequest
from dialeval.backends.llamacpp import LlamaCppBackend
from dialeval.backends.runner import Runner

REQ = ChatRequest(messages=(("user", "Rate this reply from 1 to 5."),), max_tokens=4, top_logprobs=2, score_probs=True)


def body(prob: float | None) -> dict[str, Any]:
    """A post-sampling chat completion as llama.cpp answers ``post_sampling_probs``: "4", its top probabilities."""
    tops = [{"token": "4", "prob": prob}, {"token": "3", "prob": 0.25}]
    content = [{"token": "4", "prob": 0.75, "top_probs": tops}]
    choice = {"index": 0, "message": {"role": "assistant", "content": "4"}, "finish_reason": "stop",
              "logprobs": {"content": content}}  # fmt: skip
    return {"choices": [choice], "usage": {"prompt_tokens": 9, "completion_tokens": 1}}


class ScriptedServer:
    """Answers the n-th chat request with ``bodies[n - 1]`` (the last after that), as llama.cpp's server does."""

    def __init__(self, *bodies: dict[str, Any]) -> None:
        self.bodies = bodies
        self.calls = 0

    def handle_chat_completions(self, payload: dict[str, Any]) -> dict[str, Any]:
        self.calls += 1
        return self.bodies[min(self.calls, len(self.bodies)) - 1]


def _backend(monkeypatch: pytest.MonkeyPatch, server: ScriptedServer, max_retries: int = 1) -> LlamaCppBackend:
    monkeypatch.setattr(llamacpp, "local_server", lambda *args, **kwargs: (server, 0))
    monkeypatch.setattr(llamacpp, "gguf_sha256", lambda path: "0" * 64)  # the runner's cache key; no file is read
    return LlamaCppBackend("model.gguf", max_retries=max_retries)


@pytest.mark.parametrize("prob", [float("inf"), float("nan"), None])
def test_a_probability_that_is_no_number_is_a_malformed_answer_retried_and_counted(
    monkeypatch: pytest.MonkeyPatch, prob: float | None
) -> None:
    """A probability of inf gave every probability at the score position NaN (the expected score NaN), NaN was
    dropped unseen, and a malformed body (null, llama.cpp's spelling of either) failed the request at once, with
    no retry: the in-process backend retried nothing. Such a body is now retried and counted as the
    openai-compatible backend does, and fails the request, saying why, when every try is malformed."""
    server = ScriptedServer(body(prob))
    backend = _backend(monkeypatch, server)
    with pytest.raises(BackendError, match="malformed chat completion"):
        backend.chat(REQ)
    assert (server.calls, backend.attempts, backend.retries) == (2, 2, 1)  # max_retries=1: one retry

    runner = Runner(_backend(monkeypatch, ScriptedServer(body(prob)), max_retries=0))
    [got] = runner.run([REQ])
    assert isinstance(got, BackendError) and runner.stats.failed == 1


def test_a_malformed_answer_then_a_good_one_is_the_good_one(monkeypatch: pytest.MonkeyPatch) -> None:
    server = ScriptedServer(body(float("inf")), body(0.5))
    backend = _backend(monkeypatch, server, max_retries=5)
    answer = backend.chat(REQ)
    # by hand: 0.5 and 0.25 renormalised over 0.75
    assert answer.score_token_probs(["1", "2", "3", "4", "5"], 0) == pytest.approx({"4": 2 / 3, "3": 1 / 3})
    assert (server.calls, backend.attempts, backend.retries) == (2, 2, 1)


def test_an_error_answer_is_not_retried(monkeypatch: pytest.MonkeyPatch) -> None:
    server = ScriptedServer({"error": {"code": 400, "message": "bad grammar"}})
    backend = _backend(monkeypatch, server, max_retries=5)
    with pytest.raises(BackendError, match=r"llama\.cpp error"):
        backend.chat(REQ)
    assert (server.calls, backend.retries) == (1, 0)
