"""The OpenAI-compatible client against a real, misbehaving HTTP server on 127.0.0.1.

Each test scripts the server's answers (status, body, headers, how fast the body comes) and
checks what the client makes of them: an answer, or one :class:`BackendError` that says why.
No model is served: the answers are written here.
"""

from __future__ import annotations

import dataclasses
import json
import math
import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from dialeval.backends.base import BackendError, BackendRefused, BackendUnreachable, ChatRequest, Completion
from dialeval.backends.cache import RequestCache
from dialeval.backends.openai_compat import OpenAICompatBackend
from dialeval.backends.runner import Runner
from dialeval.backends.structure import AnswerShape

REQ = ChatRequest(messages=(("user", "Rate this reply from 1 to 5."),), max_tokens=8)


def completion(text: str | None, **extra: Any) -> bytes:
    """An OpenAI chat-completion body with one choice (``extra`` goes at the top level, e.g. ``usage``)."""
    choice = {"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}
    return json.dumps({"object": "chat.completion", "choices": [choice], **extra}).encode()


@dataclass(frozen=True)
class Reply:
    """One scripted answer: ``trickle`` seconds between the body's bytes (0: all at once).

    ``cut``: the connection closes after this many bytes of the body (None: the whole body is sent), its
    ``Content-Length`` still that of the whole body.
    """

    status: int = 200
    body: bytes = b""
    headers: tuple[tuple[str, str], ...] = ()
    trickle: float = 0.0
    cut: int | None = None


class Scripted:
    """A real HTTP server that answers the n-th POST with ``script[n - 1]`` (the last reply after that).

    ``seen`` holds each request's arrival time (monotonic) and JSON payload.
    """

    def __init__(self, script: list[Reply]) -> None:
        self.script = script
        self.seen: list[tuple[float, dict[str, Any]]] = []
        lock, server = threading.Lock(), self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_POST(self) -> None:
                payload = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                with lock:
                    server.seen.append((time.monotonic(), payload))
                    reply = server.script[min(len(server.seen), len(server.script)) - 1]
                try:
                    self.send_response(reply.status)
                    for name, value in (("Content-Type", "application/json"), *reply.headers):
                        self.send_header(name, value)
                    self.send_header("Content-Length", str(len(reply.body)))
                    self.end_headers()
                    for i in range(len(reply.body)) if reply.trickle else ():
                        self.wfile.write(reply.body[i : i + 1])
                        self.wfile.flush()
                        time.sleep(reply.trickle)
                    self.wfile.write(b"" if reply.trickle else reply.body[: reply.cut])
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up

        self.http = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.http.daemon_threads = True  # closing does not wait for a reply still trickling to a client gone
        self.url = f"http://127.0.0.1:{self.http.server_address[1]}/v1"
        threading.Thread(target=self.http.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.http.shutdown()
        self.http.server_close()


def _client(server: Scripted, **options: Any) -> OpenAICompatBackend:
    return OpenAICompatBackend(server.url, "m", **{"max_retries": 1, "backoff": 0.01, **options})


def test_a_usage_that_is_no_object_is_a_malformed_answer_and_a_null_count_is_unknown(serve: Any) -> None:
    """``"usage": [1, 2]`` was an AttributeError traceback out of ``judge run``, ``"prompt_tokens": null`` a
    TypeError one: both outside the parse that turns a malformed body into a retried BackendError."""
    bad = _client(serve(Reply(body=completion("Score: 4", usage=[1, 2]))))
    with pytest.raises(BackendError, match="malformed chat completion"):
        bad.chat(REQ)
    assert bad.attempts == 2  # retried once, as every malformed body is

    nulls = _client(serve(Reply(body=completion("Score: 4", usage={"prompt_tokens": None, "completion_tokens": 3}))))
    answer = nulls.chat(REQ)
    assert (answer.text, answer.prompt_tokens, answer.completion_tokens) == ("Score: 4", 0, 3)


@pytest.mark.parametrize("logprob", [float("nan"), float("inf")])
def test_a_log_probability_that_is_no_number_is_a_malformed_answer_not_a_nan_score(serve: Any, logprob: float) -> None:
    """A server sending NaN (or +Infinity, which Python's json writes and reads) among the top log-probabilities
    made every probability at the score position NaN: the expected score was NaN and the score the argmax of NaNs
    (3 where the answer said 4), with no count or note. It is now a malformed body, retried as any other."""
    from dialeval.judges.judge import Judge
    from dialeval.judges.protocol import load_protocol
    from dialeval.metrics.base import MetricInput

    tops = [{"token": "4", "logprob": logprob}, {"token": "3", "logprob": -1.0}]
    body = json.loads(completion("4"))
    body["choices"][0]["logprobs"] = {"content": [{"token": "4", "logprob": logprob, "top_logprobs": tops}]}
    backend = _client(serve(Reply(body=json.dumps(body).encode())))
    with pytest.raises(BackendError, match="malformed chat completion"):
        backend.chat(REQ)
    assert backend.attempts == 2  # retried once, as every malformed body is
    judge = Judge(load_protocol("cpdscore-detail"), Runner(backend), mode="distribution")
    [got] = judge.judge([MetricInput(response="Yes.")])
    assert (got.value, got.expected, judge.stats.request_failures) == (None, None, 1)
    assert got.reason.startswith("request failed: malformed chat completion")


@pytest.mark.parametrize("prob", [float("inf"), float("nan"), None, -0.5])
def test_a_post_sampling_probability_that_is_none_is_a_malformed_answer(serve: Any, prob: float | None) -> None:
    """llama.cpp's post-sampling ``top_probs`` (probabilities, not log-probabilities) were not checked: +Infinity
    became a log-probability of inf and every probability at the position NaN (inf / inf), and NaN or a negative
    value was dropped unseen, as a probability 0. Each is now a malformed body, retried as any other (null: as a
    JSON writer such as llama.cpp's spells a non-finite number; it was malformed already)."""
    tops = [{"token": "4", "prob": prob}, {"token": "3", "prob": 0.25}]
    body = json.loads(completion("4"))
    body["choices"][0]["logprobs"] = {"content": [{"token": "4", "prob": 0.75, "top_probs": tops}]}
    backend = _client(serve(Reply(body=json.dumps(body).encode())))
    with pytest.raises(BackendError, match="malformed chat completion"):
        backend.chat(REQ)
    assert (backend.attempts, backend.retries) == (2, 1)  # retried once, as every malformed body is


def test_a_log_probability_of_minus_infinity_is_a_probability_of_zero(serve: Any) -> None:
    """-inf is a log-probability (of 0), not a malformed one: the others share the position."""
    tops = [{"token": "4", "logprob": math.log(0.6)}, {"token": "3", "logprob": -math.inf},
            {"token": "5", "logprob": math.log(0.2)}]  # fmt: skip
    body = json.loads(completion("4"))
    body["choices"][0]["logprobs"] = {"content": [{"token": "4", "logprob": math.log(0.6), "top_logprobs": tops}]}
    answer = _client(serve(Reply(body=json.dumps(body).encode()))).chat(REQ)
    probs = answer.score_token_probs(["1", "2", "3", "4", "5"], 0)
    # by hand: exp(-inf) = 0; 0.6 and 0.2 renormalised over their sum 0.8
    assert probs == pytest.approx({"3": 0.0, "4": 0.75, "5": 0.25})


def test_a_refusal_of_the_request_itself_is_not_a_refusal_of_its_structure(serve: Any) -> None:
    """An unknown model's HTTP 404 on a structured request was taken as "the server refused response_format": the
    run's note said so, ``structured_fallbacks`` counted every request, and every later request went out
    without the structure. The request without ``response_format`` is refused too, so the structure is not
    the cause."""
    shaped = ChatRequest(messages=REQ.messages, answer=AnswerShape.from_template("{score}", {"score": ("1", "2")}))
    server = serve(Reply(404, b'{"error": {"message": "The model m does not exist"}}'))
    backend = _client(server)
    for _ in range(2):
        with pytest.raises(BackendError, match=r"HTTP 404: .*does not exist"):
            backend.chat(shaped)
    assert (backend.structured_fallbacks, backend.structure_refused) == (0, "")
    # each request was tried with its structure, then without; the second request kept its structure
    assert ["response_format" in payload for _, payload in server.seen] == [True, False, True, False]


@pytest.mark.parametrize(("status", "key"), [(401, "sk-wrong"), (403, "sk-wrong"), (401, None)])
def test_a_refused_key_ends_the_run_naming_the_url_and_the_variable(
    serve: Any, monkeypatch: pytest.MonkeyPatch, status: int, key: str | None
) -> None:
    """A wrong key's 401 (or 403) was an HTTP 4xx like any other: each item failed on its own, as a null score,
    after a second request without ``response_format``. It is one error that ends the run (``ends_run``), naming
    the URL and the key's variable (never the key), sent once; a key that was never set says so."""
    if key is None:
        monkeypatch.delenv("MY_KEY", raising=False)
    else:
        monkeypatch.setenv("MY_KEY", key)
    said = b'{"error": {"message": "Incorrect API key provided"}}'
    server = serve(Reply(status, said))
    shaped = ChatRequest(messages=REQ.messages, answer=AnswerShape.from_template("{score}", {"score": ("1", "2")}))
    with pytest.raises(BackendRefused) as caught:
        _client(server, api_key_env="MY_KEY").chat(shaped)
    whose = "the API key in $MY_KEY" if key else "the request: it carried no API key ($MY_KEY is not set)"
    assert str(caught.value) == f"{server.url}/chat/completions refused {whose}: HTTP {status}: {said.decode()}"
    assert caught.value.ends_run and len(server.seen) == 1 and "sk-wrong" not in str(caught.value)


def test_an_answer_that_trickles_in_is_timed_out_after_timeout_seconds(serve: Any) -> None:
    """httpx's timeout is per read: a body sent a byte every 0.05 s (about 7 s for this one) was waited for whole
    with ``timeout=0.5``, and a judge run against a server that slow never ended. The cause says what happened;
    a timeout is retried like any other."""
    server = serve(Reply(body=completion("Score: 4"), trickle=0.05))
    backend = _client(server, timeout=0.5)
    with pytest.raises(BackendUnreachable) as caught:
        backend.chat(REQ)
    cause = "timeout after 0.5 s (the answer came too slowly)"
    assert str(caught.value) == f"cannot reach {server.url}/chat/completions: {cause}"
    assert caught.value.timed_out and len(server.seen) == 2  # the first attempt and its one retry


def test_a_redirect_is_one_error_naming_where_to_not_a_malformed_body_retried(serve: Any) -> None:
    """An http:// base_url that the server redirects to https:// was "response is not valid JSON (truncated?)",
    retried max_retries times with backoff: the redirect's empty body was read as a chat completion."""
    to = "https://api.example.org/v1/chat/completions"
    server = serve(Reply(307, headers=(("Location", to),)))
    backend = _client(server, max_retries=3)
    with pytest.raises(BackendError) as caught:
        backend.chat(REQ)
    assert str(caught.value) == (f"HTTP 307: {server.url}/chat/completions redirects to {to}; give the URL it should "
                                 "reach as base_url")
    assert not caught.value.retryable and len(server.seen) == 1


def test_a_retry_waits_what_retry_after_asks(serve: Any) -> None:
    """An HTTP 429 with ``Retry-After: 1`` was retried after the backoff alone (0.5 s, 1 s, 2 s ... by default:
    here 0.01 s), so a rate-limited server refused the retries too and the item was lost. The lower bound on
    the gap between the two requests is what the server asked (sleep waits at least that; no upper bound)."""
    server = serve(Reply(429, b'{"error": "slow down"}', (("Retry-After", "1"),)), Reply(body=completion("Score: 4")))
    backend = _client(server)
    assert backend.chat(REQ).text == "Score: 4"
    assert backend.retries == 1 and server.seen[1][0] - server.seen[0][0] >= 1.0


def test_an_error_without_retry_after_is_retried_after_the_backoff(serve: Any) -> None:
    """An HTTP 500 with no Retry-After header ended in a TypeError out of formatting the wait it did not give."""
    server = serve(Reply(500, b'{"error": "boom"}'))
    backend = _client(server, max_retries=2)
    with pytest.raises(BackendError, match=r'^HTTP 500: {"error": "boom"}$'):
        backend.chat(REQ)
    assert len(server.seen) == 3 and backend.retries == 2


def test_a_rate_limit_or_server_error_keeps_what_the_server_said(serve: Any) -> None:
    """An HTTP 429 or 5xx was "HTTP 429" alone after the retries: the server's message (a spent quota, not a rate
    limit to wait out; an overloaded model) was dropped, though a 4xx kept it. An HTML page stays one line."""
    quota = b'{"error": {"message": "You exceeded your current quota"}}'
    backend = _client(serve(Reply(429, quota)))
    with pytest.raises(BackendError) as caught:
        backend.chat(REQ)
    assert str(caught.value) == 'HTTP 429: {"error": {"message": "You exceeded your current quota"}}'
    page = b"<html>\n<body>\n<h1>502 Bad Gateway</h1>\n</body>\n</html>\n"
    with pytest.raises(BackendError) as caught:
        _client(serve(Reply(502, page))).chat(REQ)
    assert str(caught.value) == "HTTP 502: <html> <body> <h1>502 Bad Gateway</h1> </body> </html>"
    with pytest.raises(BackendError) as caught:
        _client(serve(Reply(503))).chat(REQ)
    assert str(caught.value) == "HTTP 503"  # nothing said, nothing added


def test_a_retry_after_longer_than_a_retry_waits_fails_the_request_at_once_saying_so(serve: Any) -> None:
    """A server asking to wait an hour (a spent quota) is not retried early, to be refused again: the request
    fails with the wait in its reason."""
    server = serve(Reply(429, b'{"error": "quota"}', (("Retry-After", "3600"),)))
    backend = _client(server, max_retries=3)
    with pytest.raises(BackendError) as caught:
        backend.chat(REQ)
    assert str(caught.value) == ('HTTP 429 (the server asks to wait 3600 s; a retry waits at most 60 s): '
                                 '{"error": "quota"}')
    assert len(server.seen) == 1


def test_a_free_text_fallback_is_cached_as_the_answer_to_the_request_without_its_shape(
    serve: Any, tmp_path: Path
) -> None:
    """The free text a server gave after refusing ``response_format`` was cached under the shaped request's key:
    a later shaped run (the server now honours it, same URL and model) was served that free text from the cache,
    with no fallback counted or noted. It is the answer to the request without its shape, and kept as that."""
    shape = AnswerShape.from_template("Score: {score}", {"score": ("1", "2")})
    shaped = ChatRequest(messages=REQ.messages, answer=shape)
    server = serve(Reply(400, b'{"error": "response_format is not supported"}'), Reply(body=completion("2, I think")),
                   Reply(body=completion("Score: 1")))  # fmt: skip
    cache = RequestCache(tmp_path / "requests.sqlite")
    first = Runner(_client(server), cache, in_flight=1)
    assert first.one(shaped) == Completion(text="2, I think", finish_reason="stop", unshaped=True)
    later = Runner(_client(server), cache, in_flight=1)  # a new run: the server honours response_format now
    assert later.one(shaped) == Completion(text="Score: 1", finish_reason="stop")
    assert later.stats.cache_hits == 0 and ["response_format" in p for _, p in server.seen] == [True, False, True]
    unshaped = dataclasses.replace(shaped, answer=None)  # the request the free text answered
    assert later.one(unshaped).text == "2, I think" and later.stats.cache_hits == 1


@pytest.mark.parametrize("text", [["a", "b"], {"text": "a"}, 4])
def test_a_text_that_is_no_string_is_a_malformed_answer_not_its_repr(serve: Any, text: Any) -> None:
    """A server answering ``"content": ["a", "b"]`` (a list of parts) had its answer taken as the text
    "['a', 'b']": ``dialeval generate`` wrote it as the response and scored it. It is now a malformed body,
    retried as any other; a null content is still an empty answer."""
    backend = _client(serve(Reply(body=completion(text))))
    with pytest.raises(BackendError, match=r"malformed chat completion: .*no string"):
        backend.chat(REQ)
    assert backend.attempts == 2  # retried once, as every malformed body is
    assert _client(serve(Reply(body=completion(None)))).chat(REQ).text == ""


def test_a_lone_surrogate_in_an_answer_is_a_replacement_character_not_an_error_ending_the_run(
    serve: Any, tmp_path: Path
) -> None:
    r"""A server whose answer was cut inside a character pair (an emoji cut by max_tokens, escaped ``\ud83d``)
    gave a text no UTF-8 file can hold: the request cache's write raised UnicodeEncodeError, and ``dialeval
    generate`` ended with "error: 'utf-8' codec can't encode character '\udcff' ...", naming no file, with nothing
    written. The lone half is now U+FFFD, as a UTF-8 decoder reads a cut character; a whole pair is kept."""
    tops = [{"token": "\ud83d", "logprob": -0.1}]
    body = json.loads(completion("hi \ud83d\ude00 \ud83d"))
    body["choices"][0]["logprobs"] = {"content": [{"token": "\udcff", "logprob": -0.1, "top_logprobs": tops}]}
    cache = RequestCache(tmp_path / "c.sqlite")
    runner = Runner(_client(serve(Reply(body=json.dumps(body).encode()))), cache)
    [answer] = runner.run([REQ])
    assert isinstance(answer, Completion)
    assert (answer.text, answer.tokens) == ("hi \U0001f600 \ufffd", ("\ufffd",))
    assert answer.top_logprobs == ({"\ufffd": -0.1},)
    assert cache.get(runner.cache_signature, REQ) == answer


def test_a_negative_token_count_is_a_malformed_answer(serve: Any) -> None:
    """``"completion_tokens": -3`` was taken as given: generate said "1 generated (-3 tokens)" and a runner's
    token budget counted the call as giving tokens back. It is now a malformed body, retried as any other."""
    backend = _client(serve(Reply(body=completion("Score: 4", usage={"prompt_tokens": 5, "completion_tokens": -3}))))
    with pytest.raises(BackendError, match=r"malformed chat completion: .*negative token count: 5, -3"):
        backend.chat(REQ)
    assert backend.attempts == 2  # retried once, as every malformed body is


@pytest.mark.parametrize("choices", [[], {}, None])
def test_an_answer_with_no_choice_says_so(serve: Any, choices: Any) -> None:
    """``"choices": []`` said "malformed chat completion: IndexError('list index out of range')"; it now names
    choices (retried as every malformed body is)."""
    backend = _client(serve(Reply(body=json.dumps({"choices": choices}).encode())))
    with pytest.raises(BackendError, match=r"malformed chat completion: .*choices is .*, not a list of one or more"):
        backend.chat(REQ)
    assert backend.attempts == 2


@pytest.mark.parametrize("count", [math.inf, 2.5])
def test_a_token_count_that_is_no_whole_number_is_a_malformed_answer(serve: Any, count: float) -> None:
    """``"completion_tokens": Infinity`` (as Python's json writes and reads it; 1e400 reads the same) ended the run in
    an OverflowError traceback, outside the parse that turns a malformed body into a retried BackendError, and 2.5
    was read as 2 tokens. Both are now a malformed body, retried as any other; a runner counts the request failed."""
    body = completion("Score: 4", usage={"prompt_tokens": 5, "completion_tokens": count})
    backend = _client(serve(Reply(body=body)))
    with pytest.raises(BackendError, match=r"malformed chat completion: .*a token count that is no whole number"):
        backend.chat(REQ)
    assert backend.attempts == 2  # retried once, as every malformed body is
    [got] = Runner(backend).run([REQ])
    assert isinstance(got, BackendError) and "no whole number" in str(got)
    whole = _client(serve(Reply(body=completion("Score: 4", usage={"prompt_tokens": 5.0, "completion_tokens": 3}))))
    assert (whole.chat(REQ).prompt_tokens, whole.chat(REQ).completion_tokens) == (5, 3)  # 5.0 is 5 tokens


def test_an_answer_cut_off_mid_body_is_retried_not_an_unreachable_server_ending_the_run(serve: Any) -> None:
    """A connection closed after the status line and 20 bytes of the body was BackendUnreachable, "cannot reach
    ...: RemoteProtocolError: peer closed connection ...": on the run's first request it ended ``judge run`` at
    once, unretried, though the server had answered and its retry would have been answered whole. It is now a
    retried failure of that request alone."""
    whole = completion("Score: 4")
    backend = _client(serve(Reply(body=whole, cut=20), Reply(body=whole)))
    assert backend.chat(REQ).text == "Score: 4" and backend.retries == 1

    backend = _client(serve(Reply(body=whole, cut=20)))
    [got] = Runner(backend).run([REQ])
    assert isinstance(got, BackendError) and not got.ends_run and backend.attempts == 2
    # the byte counts: what the server sent (cut=20) of the whole body, as httpx reports them
    assert str(got) == ("the answer was cut off (RemoteProtocolError: peer closed connection without sending complete "
                        f"message body (received 20 bytes, expected {len(whole)}))")


def test_a_body_its_content_encoding_cannot_decode_is_a_retried_failure_not_an_error_ending_the_run(
    serve: Any,
) -> None:
    """A 200 saying ``Content-Encoding: gzip`` over a body that is no gzip (a proxy that mangles it) raised httpx's
    DecodingError, no BackendError: ``judge run`` ended with 'metric "judge:cpdscore-simple" failed on candidate ...:
    DecodingError: Error -3 while decompressing data: incorrect header check', unretried. It is now a malformed
    answer of that request, retried; a body that is gzip is read as before."""
    import gzip

    gzipped = (("Content-Encoding", "gzip"),)
    backend = _client(serve(Reply(body=b"no gzip", headers=gzipped)))
    [got] = Runner(backend).run([REQ])
    assert isinstance(got, BackendError) and not got.ends_run and backend.attempts == 2
    assert str(got) == ("the answer cannot be decoded as its Content-Encoding gzip says (Error -3 while "
                        "decompressing data: incorrect header check)")  # fmt: skip
    assert _client(serve(Reply(body=gzip.compress(completion("Score: 4")), headers=gzipped))).chat(REQ).text == (
        "Score: 4"
    )


def test_an_answer_longer_than_any_chat_completion_is_refused_before_it_fills_the_memory(
    serve: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The whole body was read into memory, however long: a server streaming spaces without end filled about
    250 MB a second here until the timeout (60 s by default), and a small gzip body decoding to gigabytes (a gzip
    bomb) was decoded whole. A body decoding past MAX_ANSWER_BYTES (lowered here to 1000) is now refused,
    unretried, saying so; one under it is read as before."""
    import gzip

    from dialeval.backends import openai_compat

    monkeypatch.setattr(openai_compat, "MAX_ANSWER_BYTES", 1000)
    said = "the answer is over 1,000 bytes, more than a chat completion holds: not read further"
    long = completion("Score: 4") + b" " * 1000
    bomb = gzip.compress(completion("Score: 4") + b" " * 100_000)
    for reply in (Reply(body=long), Reply(body=bomb, headers=(("Content-Encoding", "gzip"),))):
        backend = _client(serve(reply))
        with pytest.raises(BackendError) as caught:
            backend.chat(REQ)
        assert str(caught.value) == said and not caught.value.retryable and backend.attempts == 1
    assert len(bomb) < 1000 and _client(serve(Reply(body=completion("Score: 4") + b" " * 800))).chat(REQ).text == (
        "Score: 4"
    )
