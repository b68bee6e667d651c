"""Backends against real llama.cpp (in process and over HTTP on 127.0.0.1), the SQLite cache, the budget."""

from __future__ import annotations

from pathlib import Path

import pytest

from dialeval.backends import BudgetExceeded, ChatRequest, Completion, make_backend
from dialeval.backends.cache import RequestCache
from dialeval.backends.llamacpp import LlamaCppBackend
from dialeval.backends.openai_compat import OpenAICompatBackend
from dialeval.backends.runner import Runner
from dialeval.errors import InputError

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


#: Sampled (temperature 1), so the tokens follow the logits bit for bit; A and B share the template's prefix.
_SAMPLED = "Score the appropriateness of the Response to the Speaker, 0-100. Speaker: [{}] Response: [{}] Score:"
_A = ChatRequest(messages=(("user", _SAMPLED.format("Like jazz?", "Yes, I love Miles Davis.")),),
                 max_tokens=2, temperature=1.0, seed=0, top_logprobs=5)
_B = ChatRequest(messages=(("user", _SAMPLED.format("Do you like rain?", "No, rain makes me sad.")),),
                 max_tokens=2, temperature=1.0, seed=0, top_logprobs=5)


def _answer(c: Completion) -> tuple[str, tuple[dict[str, float], ...]]:
    return c.text, c.top_logprobs


def test_in_process_same_request_same_bits_whatever_ran_before(local: LlamaCppBackend) -> None:
    """With llama.cpp's prompt cache on, A again (its prompt in a slot) and A after B (their shared prefix
    reused) gave other log-probabilities, hence another sampled text and another judge score."""
    first = _answer(local.chat(_A))
    again = _answer(local.chat(_A))
    other = local.chat(_B)
    after = _answer(local.chat(_A))
    assert first[1] and again == first and after == first
    assert _answer(local.chat(_B)) == _answer(other)


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
    again = Runner(local, RequestCache(db), in_flight=2)  # the same run again (in_flight is part of the key)
    again.run(_reqs(4))
    assert (again.stats.calls, again.stats.cache_hits) == (0, 4)
    assert len(RequestCache(db)) == 4


def test_answers_decoded_in_a_batch_never_answer_requests_decoded_alone(tmp_path: Path, local: LlamaCppBackend) -> None:
    """The cache was keyed by the backend and the request only: a run with 4 requests in flight (decoded in one
    batch, whose composition changes the numbers: cpdscore-simple's expected scores on USR-TC's first context were
    2.5952, 2.9682, ... alone and 2.5915, 2.9334, ... with in_flight=4, measured) filled it, and a later run
    with in_flight=1, whose signature says it decodes alone, took those answers as its own."""
    db = tmp_path / "req.sqlite"
    Runner(local, RequestCache(db), in_flight=4).run(_reqs(4))
    alone = Runner(local, RequestCache(db), in_flight=1)
    alone.run(_reqs(4))
    assert (alone.stats.calls, alone.stats.cache_hits) == (4, 0)
    again = Runner(local, RequestCache(db), in_flight=1)
    again.run(_reqs(4))
    assert (again.stats.calls, again.stats.cache_hits) == (0, 4)


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


def test_transformers_backend_greedy_answer_and_logprobs_equal_the_plain_model(tmp_path: Path) -> None:
    """The transformers backend on a local folder (the packaged GGUF converted once) against the model by hand."""
    torch = pytest.importorskip("torch")
    from dialeval.models.loading import _converted_dir, resolve_lm_source

    folder = _converted_dir(resolve_lm_source("smollm2-135m"))
    backend = make_backend("transformers", str(folder))
    a = backend.chat(REQ)
    assert a.completion_tokens == len(a.tokens) == len(a.top_logprobs) >= 1
    assert backend.signature.startswith(f"transformers:{folder.name}:")
    # by hand: greedy decoding, one full forward pass per step, log-softmax of the last position
    tok, model = backend.tokenizer, backend.model  # type: ignore[attr-defined]
    ids = tok.apply_chat_template([{"role": "user", "content": REQ.messages[0][1]}], add_generation_prompt=True,
                                  return_tensors="pt")
    ids = ids if isinstance(ids, torch.Tensor) else ids["input_ids"]
    assert a.prompt_tokens == ids.shape[1]
    with torch.no_grad():
        for step in range(a.completion_tokens):
            logp = torch.log_softmax(model(input_ids=ids).logits[0, -1].float(), dim=-1)
            best = int(logp.argmax())
            assert ("" if best == tok.eos_token_id else tok.decode([best])) == a.tokens[step]
            assert a.top_logprobs[step][a.tokens[step]] == pytest.approx(float(logp[best]), abs=1e-4)
            ids = torch.cat([ids, torch.tensor([[best]])], dim=1)
    assert tok.decode(ids[0, a.prompt_tokens :], skip_special_tokens=True) == a.text


def test_a_model_the_backends_cannot_load_is_an_input_error_naming_it(tmp_path: Path) -> None:
    """Each was a traceback from `dialeval judge run -p backend=... -p model=...`: ValueError, FileNotFoundError,
    transformers' own error from an empty folder, llama.cpp's RuntimeError for a file that is not a GGUF model."""
    pytest.importorskip("torch")
    (tmp_path / "notes.gguf").write_text("not a model\n")
    (tmp_path / "empty").mkdir()
    (tmp_path / "bare").mkdir()
    (tmp_path / "bare" / "config.json").write_text('{"model_type": "no-such-architecture"}')
    cases = {
        ("transformers", ""): 'field "model": the transformers backend needs model=<local model directory>',
        ("transformers", str(tmp_path / "nowhere")): f"{tmp_path / 'nowhere'}: not a local model directory",
        ("transformers", str(tmp_path / "empty")): f"{tmp_path / 'empty'}: no config.json",
        ("transformers", str(tmp_path / "bare")): f"{tmp_path / 'bare'}: not a causal LM that transformers can load",
        ("llamacpp", str(tmp_path / "nowhere.gguf")): f"{tmp_path / 'nowhere.gguf'}: model file not found",
        ("llamacpp", str(tmp_path / "notes.gguf")): f"{tmp_path / 'notes.gguf'}: not a GGUF file: it does not begin",
        # a folder was "model file not found", though it is there
        ("llamacpp", str(tmp_path / "bare")): f"{tmp_path / 'bare'}: is a folder; the llamacpp backend loads a GGUF",
    }
    for (kind, model), message in cases.items():
        with pytest.raises(InputError) as caught:
            make_backend(kind, model)
        assert message in str(caught.value) and "\n" not in str(caught.value)
