"""The generation backend interface: one chat request in, one completion out.

A backend turns a :class:`ChatRequest` into a :class:`Completion`, with the
top log-probabilities of each generated token when asked and supported. Its
``signature`` names everything that changes the output (backend kind, model id
and file hash); the request cache keys on it.

Example:
    >>> req = ChatRequest(messages=(("user", "Rate this."),), max_tokens=4, seed=1)
    >>> req.key_fields()["max_tokens"]
    4
    >>> Completion(text="3").score_token_probs(["1", "2", "3"], 0)
    {}
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dialeval.backends.structure import AnswerShape
from dialeval.errors import DialevalError


def missing_model(kind: str, model: str) -> str | None:
    """Return why the local model of a ``llamacpp`` or ``transformers`` backend is not there, or None.

    The backends refuse to start with it; a command checks it before any work (``lmstyle --judge-model``).

    Example:
        >>> missing_model("llamacpp", "no/such.gguf"), missing_model("llamacpp", ""), missing_model("openai", "x")
        ('model file not found (give a GGUF file)', None, None)
        >>> missing_model("llamacpp", ".")
        'is a folder; the llamacpp backend loads a GGUF file (a transformers folder: -p backend=transformers)'
        >>> import sys
        >>> missing_model("llamacpp", sys.executable)
        'not a GGUF file: it does not begin with the bytes GGUF'
    """
    if kind == "llamacpp" and model and Path(model).is_dir():  # it said "not found" of a folder that is there
        return "is a folder; the llamacpp backend loads a GGUF file (a transformers folder: -p backend=transformers)"
    if kind == "llamacpp" and model and not Path(model).is_file():
        return "model file not found (give a GGUF file)"
    if kind == "llamacpp" and model and not _is_gguf(Path(model)):  # llama.cpp logged 17 lines, then refused
        return "not a GGUF file: it does not begin with the bytes GGUF"
    if kind == "transformers" and not Path(model).is_dir():
        return "not a local model directory (the transformers backend loads no hub name)"
    if kind == "transformers" and not (Path(model) / "config.json").is_file():
        return "no config.json: not a transformers model directory"
    return None


def _is_gguf(path: Path) -> bool:
    """Whether the file begins with GGUF's magic bytes (a file that cannot be read is left to llama.cpp)."""
    try:
        with path.open("rb") as f:
            return f.read(4) == b"GGUF"
    except OSError:
        return True


C_INT = 2**31 - 1
"""The largest C ``int``: llama.cpp's ``max_tokens``, context size and slot count are ones (a larger
``max_tokens`` came back as HTTP 400, a larger context as an ``OverflowError`` traceback)."""
MAX_TOP_LOGPROBS = 20
"""The most alternatives per token a request asks for: the OpenAI API's limit."""
MAX_IN_FLIGHT = 1024
"""The most requests sent at once (llama.cpp serves each in its own slot of the context)."""


class BackendError(DialevalError):
    """A request failed; ``retryable`` says whether trying again may help.

    ``retry_after`` is the seconds the server asked to wait first (its ``Retry-After``; None when it said nothing).
    ``ends_run`` says that every other request would fail the same way: the runner raises it, and the run ends.
    """

    ends_run: bool = False

    def __init__(self, message: str, *, retryable: bool, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retryable = retryable
        self.retry_after = retry_after


class BackendUnreachable(BackendError):
    """A request got no answer from the server (refused, timed out, bad URL): the run ends.

    Its message names the URL and the cause, e.g.
    ``cannot reach http://127.0.0.1:9/v1/chat/completions: connection refused``;
    ``timed_out`` says the server took the connection and did not answer in time.
    """

    ends_run = True

    def __init__(self, url: str, cause: str, *, timed_out: bool = False) -> None:
        super().__init__(f"cannot reach {url}: {cause}", retryable=True)
        self.url = url
        self.cause = cause
        self.timed_out = timed_out


class BackendRefused(BackendError):
    """The server refused the request's credentials (HTTP 401 or 403): every request would be, so the run ends.

    Its message names the URL, what the server said and the key's variable, e.g.
    ``http://127.0.0.1:8080/v1/chat/completions refused the API key in $OPENAI_API_KEY: HTTP 401: ...``.
    """

    ends_run = True

    def __init__(self, url: str, said: str) -> None:
        super().__init__(f"{url} refused {said}", retryable=False)
        self.url = url


class BudgetExceeded(DialevalError):
    """The run's budget of calls or tokens is spent; the run stops cleanly."""


@dataclass(frozen=True)
class ChatRequest:
    """One chat-completion request.

    Attributes:
        messages: ``(role, content)`` pairs, oldest first.
        max_tokens: Most tokens to generate.
        temperature: Sampling temperature.
        seed: Sampling seed (sampled answers are cached only under their seed).
        top_logprobs: Alternatives per generated token to return (0: none).
        stop: Strings that end the generation (not included in the text).
        raw: Send the single message's content as a plain text-completion prompt
            (no chat template), for few-shot prompts written for base models.
        answer: The shape the answer must take (a grammar, a JSON schema or a token
            mask, as the backend supports); None for free text.
        score_probs: Return, at each generated token, the probabilities of the tokens
            the shape allows there (llama.cpp: post-sampling probabilities with no
            truncation; transformers: the masked distribution), not the unconstrained top.
    """

    messages: tuple[tuple[str, str], ...]
    max_tokens: int = 64
    temperature: float = 0.0
    seed: int = 0
    top_logprobs: int = 0
    stop: tuple[str, ...] = ()
    raw: bool = False
    answer: AnswerShape | None = None
    score_probs: bool = False

    @property
    def prompt(self) -> str:
        """The text-completion prompt of a ``raw`` request (its single message's content)."""
        if len(self.messages) != 1:
            raise ValueError(f"a raw request has one message, not {len(self.messages)}")
        return self.messages[0][1]

    def key_fields(self) -> dict[str, Any]:
        """Return the request as a JSON-able dict (the cache key's request part)."""
        return {
            "messages": [list(m) for m in self.messages],
            "max_tokens": self.max_tokens,
            "temperature": self.temperature,
            "seed": self.seed,
            "top_logprobs": self.top_logprobs,
            # absent when unset, so that the keys of requests cached before these fields existed still match
            **({"stop": list(self.stop)} if self.stop else {}),
            **({"raw": True} if self.raw else {}),
            **({"answer": self.answer.key()} if self.answer is not None else {}),
            **({"score_probs": True} if self.score_probs else {}),
        }

    def openai_payload(self, model: str) -> dict[str, Any]:
        """Return the OpenAI body: chat completions, or text completions for a ``raw`` request."""
        body: dict[str, Any] = {"model": model}
        if self.raw:
            body["prompt"] = self.prompt
        else:
            body["messages"] = [{"role": r, "content": c} for r, c in self.messages]
        body.update(max_tokens=self.max_tokens, temperature=self.temperature, seed=self.seed)
        if self.stop:
            body["stop"] = list(self.stop)
        if self.top_logprobs and not self.raw:
            body["logprobs"] = True
            body["top_logprobs"] = self.top_logprobs
        if self.answer is not None:
            body["response_format"] = self.answer.response_format()
        return body


@dataclass(frozen=True)
class Completion:
    """A backend's answer.

    Attributes:
        text: The generated text.
        tokens: The generated tokens, when the backend returned them.
        top_logprobs: Per generated token, ``{token: logprob}`` of the alternatives.
        prompt_tokens: Tokens in the prompt (0 when unknown).
        completion_tokens: Tokens generated (0 when unknown).
        finish_reason: Why the backend ended the answer, as it said (``stop``; ``length``: ``max_tokens`` cut it;
            empty when it did not say).
        unshaped: The backend answered without the request's answer shape (the server refused it): free text,
            kept in the request cache as the answer to the request without its shape (not stored).
    """

    text: str
    tokens: tuple[str, ...] = ()
    top_logprobs: tuple[dict[str, float], ...] = field(default=())
    prompt_tokens: int = 0
    completion_tokens: int = 0
    finish_reason: str = ""
    unshaped: bool = False

    @property
    def cut(self) -> bool:
        """Whether the backend said ``max_tokens`` ended the answer (OpenAI's ``finish_reason: length``)."""
        return self.finish_reason == "length"

    def to_json(self) -> dict[str, Any]:
        """Return a JSON-able dict (what the cache stores)."""
        return {
            "text": self.text,
            "tokens": list(self.tokens),
            "top_logprobs": list(self.top_logprobs),
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "finish_reason": self.finish_reason,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Completion:
        """Rebuild a completion from :meth:`to_json` output."""
        return cls(
            text=str(data["text"]),
            tokens=tuple(data.get("tokens", ())),
            top_logprobs=tuple(dict(d) for d in data.get("top_logprobs", ())),
            prompt_tokens=int(data.get("prompt_tokens", 0)),
            completion_tokens=int(data.get("completion_tokens", 0)),
            finish_reason=str(data.get("finish_reason") or ""),  # answers cached before it was kept: unknown
        )

    @classmethod
    def from_openai(cls, body: dict[str, Any]) -> Completion:
        """Parse an OpenAI chat-completions (or text-completions) response body.

        Raises:
            BackendError: The body lacks the fields of a chat completion (retryable).
        """
        try:
            choices = body["choices"]
            if not isinstance(choices, list) or not choices:  # it said "IndexError('list index out of range')"
                raise ValueError(f"choices is {str(choices)[:100]}, not a list of one or more answers")
            choice = choices[0]
            text = choice["text"] if "message" not in choice else choice["message"]["content"]
            if not isinstance(text, str | None):  # a list of parts was written as its repr, "['a', 'b']"
                raise TypeError(f"the text is no string: {text!r}"[:200])
            content = (choice.get("logprobs") or {}).get("content") or []
            tokens = tuple(whole(str(t["token"])) for t in content)
            tops = tuple(_alternatives(t) for t in content)
            usage = body.get("usage") or {}
            # a count the server leaves null is unknown (0); read here, so that a usage that is no object is malformed
            # (it was an AttributeError traceback out of the run)
            prompt_tokens = _token_count(usage.get("prompt_tokens"))
            completion_tokens = _token_count(usage.get("completion_tokens"))
            if min(prompt_tokens, completion_tokens) < 0:  # generate said "(-3 tokens)"; a token budget gained some
                raise ValueError(f"a negative token count: {prompt_tokens}, {completion_tokens}")
            finish_reason = str(choice.get("finish_reason") or "")
        except (KeyError, IndexError, TypeError, AttributeError, ValueError) as exc:
            raise BackendError(f"malformed chat completion: {exc!r}", retryable=True) from exc
        return cls(
            text=whole(text or ""),
            tokens=tokens,
            top_logprobs=tops,
            prompt_tokens=prompt_tokens,
            completion_tokens=completion_tokens,
            finish_reason=finish_reason,
        )

    def score_token_probs(self, values: list[str], position: int) -> dict[str, float]:
        """Return the renormalised probability of each scale token at a token position.

        Only the alternatives the backend returned count; an empty dict means no
        scale token was among them (or no log-probabilities were returned).
        """
        if position >= len(self.top_logprobs):
            return {}
        tops = self.top_logprobs[position]
        probs: dict[str, float] = {}
        for tok, lp in tops.items():
            key = tok.strip()
            if key in values:
                probs[key] = probs.get(key, 0.0) + math.exp(lp)
        total = sum(probs.values())
        return {k: v / total for k, v in probs.items()} if total > 0 else {}


def _token_count(value: Any) -> int:
    """Return a token count as the server sent it (null: 0, unknown).

    Raises:
        ValueError: A count that is no whole number: Infinity ended the run in an OverflowError, 2.5 was read as 2.
        TypeError: A count that is no number.

    Example:
        >>> _token_count(None), _token_count(7), _token_count(7.0)
        (0, 7, 7)
    """
    if value is None or isinstance(value, int):
        return int(value or 0)
    number = float(value)
    if not number.is_integer():
        raise ValueError(f"a token count that is no whole number: {value!r}")
    return int(number)


def whole(text: str) -> str:
    r"""Return ``text`` with each lone half of a UTF-16 surrogate pair (JSON's ``\ud83d`` of a cut emoji) as U+FFFD.

    Python's json reads a lone half as a character no UTF-8 file can hold: the request cache's write and the
    records' raised UnicodeEncodeError. U+FFFD is what a UTF-8 decoder reads a cut character as.

    Example:
        >>> whole("ok \ud83d") == "ok \ufffd", whole("\U0001f600") == "\U0001f600"
        (True, True)
    """
    return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


def _alternatives(token: dict[str, Any]) -> dict[str, float]:
    """Return ``{token: logprob}`` of one position.

    OpenAI's ``top_logprobs``, or llama.cpp's post-sampling ``top_probs`` (probabilities;
    a token with probability 0 is left out). A log-probability of -inf is a probability of 0.

    Raises:
        ValueError: A log-probability is NaN or +inf, or a probability NaN, infinite or negative
            (:meth:`Completion.from_openai` calls the body malformed).
    """
    if "top_probs" in token:
        out: dict[str, float] = {}
        for a in token["top_probs"] or []:
            prob = float(a["prob"])
            if not 0 <= prob < math.inf:  # inf made every probability there NaN (inf / inf); NaN was dropped unseen
                raise ValueError(f"a probability that is no probability: {a}")
            if prob > 0:
                tok = whole(str(a["token"]))
                out[tok] = max(out.get(tok, -math.inf), math.log(prob))
        return out
    out = {whole(str(a["token"])): float(a["logprob"]) for a in token.get("top_logprobs") or []}
    if any(not lp < math.inf for lp in out.values()):  # NaN or +inf made every probability there NaN: no error
        raise ValueError(f"a log-probability that is no number: {out}")
    return out


@dataclass(frozen=True)
class BackendOptions:
    """What :func:`~dialeval.backends.make_backend` gives a backend kind to build one.

    Attributes:
        model: Model file, directory or server-side name (empty: the kind's default).
        base_url: Server root, for HTTP kinds.
        api_key_env: Environment variable holding the API key, for HTTP kinds.
        timeout: Seconds before a request counts as timed out.
        max_retries: Retries per request after the first attempt.
        in_flight: Requests sent at once.
    """

    model: str = ""
    base_url: str = ""
    api_key_env: str = "OPENAI_API_KEY"
    timeout: float = 60.0
    max_retries: int = 5
    in_flight: int = 1


class Backend(ABC):
    """A model that answers chat requests.

    A backend kind registered in :data:`~dialeval.backends.BACKENDS` is built by
    :meth:`from_options`; a plugin whose ``__init__`` takes the model alone needs nothing more.
    """

    #: Requests this backend may usefully run at once.
    max_in_flight: int = 1

    @classmethod
    def from_options(cls, options: BackendOptions) -> Backend:
        """Build this backend from the run's options (the default passes the model alone)."""
        return cls(options.model)  # type: ignore[call-arg]  # a concrete subclass takes the model

    @property
    @abstractmethod
    def signature(self) -> str:
        """Name everything about the backend that changes its answers."""

    @abstractmethod
    def chat(self, request: ChatRequest) -> Completion:
        """Answer one request (may raise :class:`BackendError`)."""

    def generate(self, prompt: str, **sampling: Any) -> Completion:
        """Answer a plain prompt, sent as one user message."""
        return self.chat(ChatRequest(messages=(("user", prompt),), **sampling))

    #: Transport retries made so far (HTTP backends count them).
    retries: int = 0
    #: Structured requests answered unconstrained because the server refused the structure.
    structured_fallbacks: int = 0
    #: Whether the backend can hold an answer to a shape (grammar, JSON schema or token mask).
    supports_structure: bool = True
    #: Whether the backend returns the probabilities of the allowed tokens (``score_probs``).
    supports_score_probs: bool = True

    def close(self) -> None:  # noqa: B027 - optional hook
        """Release resources (servers, connections)."""
