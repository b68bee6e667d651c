"""Answer shapes: the real llama.cpp server accepts each protocol's grammar and JSON schema; distributions by hand."""

from __future__ import annotations

import json
import math
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import ClassVar

import httpx
import pytest

from dialeval.backends.base import ChatRequest
from dialeval.backends.llamacpp import LlamaCppBackend
from dialeval.backends.openai_compat import OpenAICompatBackend
from dialeval.backends.structure import AnswerShape, value_distribution
from dialeval.judges.protocol import load_protocol, protocol_names

SHORT = (("user", "Rate the reply 'Yes, I love Miles Davis.' to 'Like jazz?'."),)


@pytest.fixture(scope="module")
def local() -> LlamaCppBackend:
    return LlamaCppBackend(n_ctx=2048, n_parallel=8)


@pytest.mark.parametrize("name", protocol_names())
def test_llamacpp_in_process_holds_every_protocol_to_its_grammar(name: str, local: LlamaCppBackend) -> None:
    shape = load_protocol(name).answer
    assert shape is not None
    a = local.chat(ChatRequest(messages=SHORT, max_tokens=64, temperature=0.7, seed=3, answer=shape))
    got = shape.read(a.text)
    assert got is not None, a.text
    assert set(got) == {s.name for s in shape.slots}


@pytest.mark.parametrize("name", protocol_names())
def test_llamacpp_http_server_accepts_every_json_schema(name: str, llama_url: str) -> None:
    """The real llama.cpp HTTP server takes the response_format and answers JSON of the shape."""
    shape = load_protocol(name).answer
    assert shape is not None
    body = ChatRequest(messages=SHORT, max_tokens=96, temperature=0.0, seed=1, answer=shape).openai_payload("m")
    resp = httpx.post(f"{llama_url}/chat/completions", json=body, timeout=600)
    assert resp.status_code == 200, resp.text
    text = resp.json()["choices"][0]["message"]["content"]
    assert shape.read(text) is not None, text
    assert set(json.loads(text[text.index("{") : text.rindex("}") + 1])) == {s.name for s in shape.slots}


def test_value_distribution_single_token_by_hand() -> None:
    # answer "Score: 4"; at the score position the allowed digits have these probabilities, "x" is not allowed
    tokens = ["Score", ":", " ", "4", ""]
    probs = [{}, {}, {}, {"4": 0.4, "3": 0.2, "5": 0.1, "x": 0.3}, {"": 1.0}]
    d = value_distribution(tokens, probs, len("Score: "), ["1", "2", "3", "4", "5"], "")
    assert d is not None and d.exact
    total = 0.4 + 0.2 + 0.1
    assert d.probs == pytest.approx({4.0: 0.4 / total, 3.0: 0.2 / total, 5.0: 0.1 / total})
    assert d.expected == pytest.approx((4 * 0.4 + 3 * 0.2 + 5 * 0.1) / total)
    assert d.argmax == 4.0 and d.decoded == 4.0


def test_value_distribution_multi_token_follows_the_decoded_path() -> None:
    """ "85" on 0-100: first digit, then "end here" (8) or a second digit (80-89); off-path digits are prefixes."""
    values = [str(v) for v in range(101)]
    tokens = ["8", "5", ""]
    probs = [{"8": 0.6, "9": 0.4}, {"5": 0.5, "0": 0.25, "": 0.25}, {"": 1.0}]
    d = value_distribution(tokens, probs, 0, values, "")
    assert d is not None and not d.exact and d.decoded == 85.0
    nine = (9 + sum(range(90, 100))) / 11  # "9" begins 9 and 90..99: it stands for their mean
    assert d.probs == pytest.approx({85.0: 0.6 * 0.5, 80.0: 0.6 * 0.25, 8.0: 0.6 * 0.25, nine: 0.4})
    assert d.expected == pytest.approx(0.3 * 85 + 0.15 * 80 + 0.15 * 8 + 0.4 * nine)


def test_value_distribution_inside_a_longer_answer() -> None:
    """The score slot is followed by a newline: a newline token ends the value."""
    shape = AnswerShape.from_template("a - {a}\nscore - {score}\n", {"a": ("1", "2"), "score": ("1", "2")})
    text = "a - 2\nscore - 1\n"
    tokens = ["a", " -", " ", "2", "\n", "score", " -", " ", "1", "\n"]
    assert "".join(tokens) == text
    probs: list[dict[str, float]] = [{} for _ in tokens]
    probs[8] = {"1": 0.75, "2": 0.25}
    probs[9] = {"\n": 1.0}
    d = value_distribution(tokens, probs, shape.score_offset(text), ["1", "2"], shape.after("score"))
    assert d is not None and d.probs == pytest.approx({1.0: 0.75, 2.0: 0.25})


def test_expected_score_recomputed_by_hand_from_real_probabilities(local: LlamaCppBackend, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """One distribution request to the packaged model; the judge's expected score against the returned numbers."""
    from dialeval.backends.cache import RequestCache
    from dialeval.backends.runner import Runner
    from dialeval.judges.judge import Judge
    from dialeval.metrics.base import MetricInput

    p = load_protocol("diqad-holistic")
    cache = RequestCache(tmp_path / "c.sqlite")
    runner = Runner(local, cache)
    judge = Judge(p, runner, seed=4)
    msgs = p.render(MetricInput(response="Sure, it opens at nine.", context=()))
    [res] = judge.judge_prompts([msgs])
    answer = cache.get(runner.cache_signature, judge._request(msgs, 4))  # the answer the judge read
    assert answer is not None and answer.text.startswith("Score: ")
    at = len("Score: ")
    pos = next(i for i in range(len(answer.tokens)) if sum(map(len, answer.tokens[:i])) == at)
    probs = {t: math.exp(lp) for t, lp in answer.top_logprobs[pos].items() if t in {"0", "1", "2"}}
    assert len(probs) >= 2, answer.top_logprobs[pos]  # a spread over several labels, so the weighting matters
    by_hand = sum(int(t) * q for t, q in probs.items()) / sum(probs.values())
    assert res.expected == pytest.approx(by_hand, abs=1e-9)
    assert res.value == float(max(probs, key=probs.__getitem__))
    assert res.distribution == pytest.approx({float(t): q / sum(probs.values()) for t, q in probs.items()})


class _Refuses(BaseHTTPRequestHandler):
    """An OpenAI-compatible chat endpoint that refuses ``response_format`` with HTTP 400."""

    seen: ClassVar[list[dict[str, object]]] = []

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).seen.append(body)
        if "response_format" in body:
            out, code = {"error": {"message": "response_format is not supported", "code": 400}}, 400
        else:
            out, code = {"choices": [{"message": {"role": "assistant", "content": "Score: 2"}}]}, 200
        data = json.dumps(out).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture()
def refusing_server() -> Iterator[str]:
    _Refuses.seen = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Refuses)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()


def test_a_server_that_refuses_response_format_gets_free_text_and_it_is_counted(refusing_server: str) -> None:
    from dialeval.backends.runner import Runner
    from dialeval.judges.judge import Judge

    backend = OpenAICompatBackend(refusing_server, "m", max_retries=0)
    judge = Judge(load_protocol("diqad-holistic"), Runner(backend, in_flight=1), mode="sample", k=2)
    res = judge.judge_prompts([(("user", "a"),), (("user", "b"),)])
    assert [r.value for r in res] == [2.0, 2.0]  # the free-text answers are parsed
    assert backend.structured_fallbacks == 4  # every request went out without response_format
    # the first request was refused once; later ones are sent without it straight away
    assert ["response_format" in b for b in _Refuses.seen] == [True, False, False, False, False]
    assert judge.stats.parse_failures == 0


def test_transformers_token_mask_equals_greedy_decoding_restricted_by_hand() -> None:
    """The transformers backend under the DiQAD shape against the model decoded greedily over allowed tokens by hand.

    By hand: every allowed answer is the token ids of "Score: " followed by those of "0", "1" or "2";
    at each step only the ids that continue one of these sequences (or the end of sequence once one
    is complete) may be chosen; the best of them by the model's logits is taken. The backend's
    log-probabilities at each step are the model's log-softmax restricted to the allowed ids.
    """
    torch = pytest.importorskip("torch")
    from dialeval.backends import make_backend
    from dialeval.models.loading import _converted_dir, resolve_lm_source

    folder = _converted_dir(resolve_lm_source("smollm2-135m"))
    backend = make_backend("transformers", str(folder))
    shape = load_protocol("diqad-holistic").answer
    assert shape is not None
    req = ChatRequest(messages=SHORT, max_tokens=12, temperature=0.0, seed=0, top_logprobs=8, answer=shape)
    a = backend.chat(req)
    assert shape.read(a.text) is not None, a.text

    tok, model = backend.tokenizer, backend.model  # type: ignore[attr-defined]
    eos = tok.eos_token_id
    allowed_seqs = [tok.encode("Score: ", add_special_tokens=False) + tok.encode(v, add_special_tokens=False)
                    for v in ("0", "1", "2")]
    ids = tok.apply_chat_template([{"role": "user", "content": SHORT[0][1]}], add_generation_prompt=True,
                                  return_tensors="pt")
    ids = ids if isinstance(ids, torch.Tensor) else ids["input_ids"]
    out: list[int] = []
    with torch.no_grad():
        for step in range(req.max_tokens):
            nxt = {s[len(out)] for s in allowed_seqs if s[: len(out)] == out and len(s) > len(out)}
            if any(s == out for s in allowed_seqs) or not nxt:
                nxt.add(eos)
            logits = model(input_ids=ids).logits[0, -1].float()
            allowed = sorted(nxt)
            restricted = torch.log_softmax(logits[allowed], dim=-1)
            best = allowed[int(restricted.argmax())]
            assert a.top_logprobs[step][a.tokens[step]] == pytest.approx(float(restricted.max()), abs=1e-4)
            assert set(a.top_logprobs[step]) == {"" if t == eos else tok.decode([t]) for t in allowed}
            if best == eos:
                break
            out.append(best)
            ids = torch.cat([ids, torch.tensor([[best]])], dim=1)
    assert tok.decode(out) == a.text
