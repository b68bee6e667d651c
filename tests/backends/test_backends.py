"""Backends against real llama.cpp (in process and over HTTP on 127.0.0.1), the SQLite cache, the budget."""

from __future__ import annotations

from pathlib import Path

import pytest

from dialeval.backends import BudgetExceeded, ChatRequest, Completion, make_backend
from dialeval.backends.cache import RequestCache
from dialeval.backends.llamacpp import LlamaCppBackend
from dialeval.backends.openai_compat import OpenAICompatBackend
from dialeval.backends.runner import Runner

REQ = ChatRequest(
    messages=(("user", "Rate from 1 to 5 how polite 'Thank you so much!' is. Answer with one digit."),),
    max_tokens=6,
    temperature=0.0,
    seed=7,
    top_logprobs=5,
)


def _reqs(n: int) -> list[ChatRequest]:
    return [ChatRequest(messages=(("user", f"Say the number {i}."),), max_tokens=4, seed=i) for i in range(n)]


@pytest.fixture(scope="module")
def local() -> LlamaCppBackend:
    return LlamaCppBackend(n_ctx=2048, n_parallel=8)


def test_in_process_answers_with_logprobs(local: LlamaCppBackend) -> None:
    a = local.chat(REQ)
    assert a.text.strip()
    assert 1 <= a.completion_tokens <= 6
    # one top-logprob dict per generated token, each with the 5 alternatives asked for
    assert len(a.top_logprobs) == len(a.tokens) == a.completion_tokens
    assert all(len(t) == 5 for t in a.top_logprobs)
    assert "".join(a.tokens) == a.text
    assert local.chat(REQ).text == a.text  # greedy and seeded: reproducible
    assert local.signature.startswith("llamacpp:SmolLM2-135M-Instruct.Q4_1:")


def test_http_server_gives_the_in_process_answer(local: LlamaCppBackend, llama_url: str) -> None:
    http = OpenAICompatBackend(llama_url, "smollm2", timeout=60)
    a = http.chat(REQ)
    assert a.text == local.chat(REQ).text  # same server, same greedy decode
    assert a.prompt_tokens > 20 and a.completion_tokens >= 1
    assert http.retries == 0 and http.attempts == 1


def test_api_key_never_in_signature(llama_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MY_JUDGE_KEY", "sk-secret-123")
    b = make_backend("openai-compatible", "m", base_url=llama_url, api_key_env="MY_JUDGE_KEY")
    assert "sk-secret" not in b.signature
    assert b.chat(REQ).text  # the llama.cpp server ignores the bearer token


def test_cache_rerun_makes_no_calls_and_resume_only_the_rest(tmp_path: Path, local: LlamaCppBackend) -> None:
    db = tmp_path / "req.sqlite"
    first = Runner(local, RequestCache(db), in_flight=2).run(_reqs(2))  # the "killed" run got 2 of 4 done
    full = Runner(local, RequestCache(db), in_flight=2)
    answers = full.run(_reqs(4))
    assert (full.stats.calls, full.stats.cache_hits) == (2, 2)
    assert [a.text for a in answers[:2] if isinstance(a, Completion)] == [
        a.text for a in first if isinstance(a, Completion)
    ]
    again = Runner(local, RequestCache(db))
    again.run(_reqs(4))
    assert (again.stats.calls, again.stats.cache_hits) == (0, 4)
    assert len(RequestCache(db)) == 4


def test_cache_key_includes_sampling_params(tmp_path: Path, local: LlamaCppBackend) -> None:
    cache = RequestCache(tmp_path / "c.sqlite")
    r = Runner(local, cache)
    r.run([REQ, ChatRequest(messages=REQ.messages, max_tokens=6, temperature=0.0, seed=8, top_logprobs=5)])
    assert r.stats.calls == 2  # another seed is another request


def test_budget_stops_cleanly(local: LlamaCppBackend) -> None:
    r = Runner(local, max_calls=3, in_flight=1)
    out = r.run(_reqs(5))
    assert [isinstance(o, Completion) for o in out] == [True, True, True, False, False]
    assert all(isinstance(o, BudgetExceeded) for o in out[3:])
    assert (r.stats.calls, r.stats.budget_stopped) == (3, 2)
    tok = Runner(local, max_tokens=1, in_flight=1)
    tok.run(_reqs(3))
    assert (tok.stats.calls, tok.stats.budget_stopped) == (1, 2)  # the first call spends the token budget
