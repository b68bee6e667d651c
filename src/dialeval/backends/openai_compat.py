"""Any OpenAI-compatible chat server over HTTP (vLLM, llama.cpp server, Ollama, OpenAI).

429, 5xx and malformed or cut-off bodies are retried with exponential backoff, waiting at least what the
server's ``Retry-After`` asks (a server asking for more than :data:`MAX_RETRY_AFTER` seconds fails
the request at once, saying so); every retry is counted. A request that gets no HTTP answer at all (connection refused,
timeout, unknown host) raises :class:`BackendUnreachable`, naming the URL and the
cause: at once while the server has never answered, unless it timed out (a dead or
mistyped server ends the run on its first request), else after the retries. A URL that is not
``http(s)://HOST...`` is refused when the backend is built. The API key is read from an environment variable and
never appears in a signature, a log line or a result.

A request with an answer shape is sent with ``response_format`` (a JSON schema).
A server that refuses it (HTTP 4xx) gets the same request once more without it; when that one
is answered, every later one goes without it too: the answer is then free text, parsed as usual,
and each such request is counted in ``structured_fallbacks``. When it is refused as well (an unknown
model's 404), the server refused the request, not its structure: that error is the request's.
A refused key (HTTP 401 or 403) is :class:`BackendRefused`, naming the URL and the key's variable: the run ends.
"""

from __future__ import annotations

import dataclasses
import email.utils
import math
import os
import threading
import time
from typing import TYPE_CHECKING, Any

from dialeval.backends.base import (
    Backend,
    BackendError,
    BackendOptions,
    BackendRefused,
    BackendUnreachable,
    ChatRequest,
    Completion,
)
from dialeval.errors import InputError, MissingExtraError

if TYPE_CHECKING:
    import httpx

#: The longest ``Retry-After`` a retry waits for; a server asking for longer fails the request at once, saying so.
MAX_RETRY_AFTER = 60.0

#: The longest answer body read, decoded (64 MiB): a chat completion with 20 alternatives per token for
#: 32,000 tokens is about 40 MB; a server sending more (an endless stream, a gzip bomb) filled the memory.
MAX_ANSWER_BYTES = 64 * 2**20

#: Words of a transport error and the cause they name.
_CAUSES = (
    ("refused", "connection refused"),
    ("name or service not known", "unknown host"),
    ("nodename nor servname", "unknown host"),
    ("name resolution", "unknown host"),
    ("reset by peer", "connection reset by the server"),
    ("unreachable", "network unreachable"),
)


def transport_cause(exc: Exception, timeout: float) -> str:
    """Name, in words, why a request got no HTTP answer.

    Example:
        >>> import httpx
        >>> transport_cause(httpx.ConnectError("[Errno 111] Connection refused"), 60)
        'connection refused'
        >>> transport_cause(httpx.ReadTimeout("timed out"), 2.0)
        'timeout after 2 s (no answer)'
    """
    import httpx

    if isinstance(exc, httpx.TimeoutException):
        return f"timeout after {timeout:g} s ({'connecting' if isinstance(exc, httpx.ConnectTimeout) else 'no answer'})"
    text = str(exc)
    cause = next((c for needle, c in _CAUSES if needle in text.lower()), None)
    return cause or f"{type(exc).__name__}: {text}"


def retry_after(value: str | None) -> float | None:
    """Return the seconds a ``Retry-After`` header asks to wait (seconds or an HTTP date), or None.

    Example:
        >>> retry_after("2"), retry_after(" 0.5 "), retry_after("Wed, 21 Oct 2015 07:28:00 GMT")
        (2.0, 0.5, 0.0)
        >>> retry_after(None), retry_after("soon"), retry_after("nan")
        (None, None, None)
    """
    if not value:
        return None
    try:
        seconds = float(value)
    except ValueError:
        try:
            seconds = email.utils.parsedate_to_datetime(value).timestamp() - time.time()
        except (TypeError, ValueError):
            return None
    return max(0.0, seconds) if math.isfinite(seconds) else None


def server_says(resp: httpx.Response) -> str:
    r"""Return what an error answer's body says, as ``": TEXT"`` ("" for an empty body).

    The first 300 characters, with spaces and line breaks folded (an HTML error page stays one line).

    Example:
        >>> import httpx
        >>> server_says(httpx.Response(429, text='{"error":\n  "quota spent"}')), server_says(httpx.Response(502))
        (': {"error": "quota spent"}', '')
    """
    text = " ".join(resp.text.split())[:300]
    return f": {text}" if text else ""


def check_base_url(base_url: str, field: str = "base_url") -> None:
    """Refuse a base URL a request cannot be sent to (not ``http(s)://HOST...``), or one holding a password.

    Example:
        >>> check_base_url("file:///srv/v1")
        Traceback (most recent call last):
        ...
        dialeval.backends.base.BackendUnreachable: cannot reach file:///srv/v1: the URL must start with http:// or https://
        >>> check_base_url("http://me:secret@127.0.0.1:8080/v1")
        Traceback (most recent call last):
        ...
        dialeval.errors.InputError: field "base_url": the URL holds a user name or password (USER:PASSWORD@), ...
    """
    try:
        import httpx
    except ImportError as exc:  # the judge extra: checked before any model loads, so this is the first import
        raise MissingExtraError("httpx", extra="judge") from exc

    try:
        url = httpx.URL(base_url)
    except httpx.InvalidURL as exc:
        raise BackendUnreachable(base_url, f"not a valid URL ({exc})") from None
    if url.scheme not in ("http", "https"):
        raise BackendUnreachable(base_url, "the URL must start with http:// or https://")
    if not url.host:
        raise BackendUnreachable(base_url, "the URL names no host")
    if url.port is not None and not 0 < url.port < 65536:  # it was "connection refused", as if a server were down
        raise BackendUnreachable(base_url, f"{url.port} is not a TCP port (1 to 65535)")
    if url.userinfo:  # the base URL is in every signature: scores.jsonl, run.json and the caches kept the password
        raise InputError("the URL holds a user name or password (USER:PASSWORD@), which every signature would "
                         "record: give the key in $OPENAI_API_KEY instead", field=field)  # fmt: skip


def _header_safe(key: str, variable: str) -> str:
    """Return an API key, refusing one an HTTP header cannot carry; the error never shows the key.

    A key holding an "é" ended the first request in httpx's ``UnicodeEncodeError`` traceback; one
    with a line break (copied with its neighbours) said "cannot reach" the server, and showed the key.

    Example:
        >>> _header_safe("sk-abc", "OPENAI_API_KEY")
        'sk-abc'
        >>> _header_safe("sk-\u00e9", "OPENAI_API_KEY")
        Traceback (most recent call last):
        ...
        dialeval.errors.InputError: field "$OPENAI_API_KEY": character 4 of the key is not printable ASCII, ...
    """
    bad = next((i for i, ch in enumerate(key) if not (ch.isascii() and ch.isprintable())), None)
    if bad is not None:
        raise InputError(f"character {bad + 1} of the key is not printable ASCII, which an HTTP header cannot carry: "
                         "was the key copied whole and alone?", field=f"${variable}")  # fmt: skip
    return key


class OpenAICompatBackend(Backend):
    """Chat through ``POST {base_url}/chat/completions`` (raw requests: ``{base_url}/completions``).

    Args:
        base_url: The API root, e.g. ``http://127.0.0.1:8080/v1``.
        model: The model name the server expects.
        api_key_env: Environment variable that holds the API key (may be unset).
        timeout: Seconds before a request counts as timed out.
        max_retries: Retries per request after the first attempt.
        backoff: First backoff in seconds; doubled after each retry.
        max_in_flight: Requests sent at once by the runner.
    """

    def __init__(
        self,
        base_url: str,
        model: str,
        *,
        api_key_env: str = "OPENAI_API_KEY",
        timeout: float = 60.0,
        max_retries: int = 5,
        backoff: float = 0.5,
        max_in_flight: int = 8,
    ) -> None:
        try:
            import httpx
        except ImportError as exc:
            raise MissingExtraError("httpx", extra="judge") from exc
        check_base_url(base_url)
        self.base_url = base_url.rstrip("/")
        self.timeout = timeout
        self.model = model
        self.max_retries = max_retries
        self.backoff = backoff
        self.max_in_flight = max_in_flight
        headers = {"Content-Type": "application/json"}
        if key := os.environ.get(api_key_env):
            headers["Authorization"] = f"Bearer {_header_safe(key, api_key_env)}"
        self.api_key_env, self.key_sent = api_key_env, bool(key)
        self._client = httpx.Client(timeout=timeout, headers=headers)
        self._lock = threading.Lock()
        self.retries = 0
        self.attempts = 0
        self.structured_fallbacks = 0
        self.structure_refused = ""
        #: Whether the server has answered a request (with any HTTP status).
        self.answered = False

    @classmethod
    def from_options(cls, options: BackendOptions) -> OpenAICompatBackend:
        """Build from ``base_url`` and ``model`` (both needed) and the HTTP settings.

        Raises:
            InputError: ``base_url`` or ``model`` is not given (one line, naming the missing parameter).
        """
        missing = [name for name in ("base_url", "model") if not getattr(options, name)]
        if missing:
            raise InputError(f"the openai-compatible backend needs {' and '.join(missing)} "
                             f"({', '.join(f'-p {n}=...' for n in missing)})", field=missing[0])  # fmt: skip
        return cls(
            options.base_url, options.model, api_key_env=options.api_key_env, timeout=options.timeout,
            max_retries=options.max_retries, max_in_flight=options.in_flight,
        )

    @property
    def signature(self) -> str:
        """``openai-compatible:<model>@<base_url>`` (no key)."""
        return f"openai-compatible:{self.model}@{self.base_url}"

    def _key_said(self) -> str:
        """Say which key a refused request carried: the one in ``$api_key_env``, or none (the variable is unset)."""
        if self.key_sent:
            return f"the API key in ${self.api_key_env}"
        return f"the request: it carried no API key (${self.api_key_env} is not set)"

    def _count(self, retry: bool) -> None:
        with self._lock:
            self.attempts += 1
            self.retries += int(retry)

    def _attempt(self, payload: dict[str, Any]) -> Completion:
        import httpx

        url = f"{self.base_url}/{'completions' if 'prompt' in payload else 'chat/completions'}"
        try:
            resp = self._post(url, payload)
        except httpx.TransportError as exc:
            timed_out = isinstance(exc, httpx.TimeoutException)
            raise BackendUnreachable(url, transport_cause(exc, self.timeout), timed_out=timed_out) from exc
        if resp.status_code == 429 or resp.status_code >= 500:
            wait = retry_after(resp.headers.get("retry-after"))
            said = ""
            if wait is not None and wait > MAX_RETRY_AFTER:
                said = f" (the server asks to wait {wait:g} s; a retry waits at most {MAX_RETRY_AFTER:g} s)"
            # the server's own words were dropped: "HTTP 429" said nothing of a spent quota against a rate limit
            raise BackendError(f"HTTP {resp.status_code}{said}{server_says(resp)}", retryable=True, retry_after=wait)
        if resp.status_code in (401, 403):  # every request would be refused: it failed them one by one, as nulls
            raise BackendRefused(url, f"{self._key_said()}: HTTP {resp.status_code}{server_says(resp)}")
        if resp.status_code >= 400:
            raise BackendError(f"HTTP {resp.status_code}{server_says(resp)}", retryable=False)
        if 300 <= resp.status_code < 400:  # it was "response is not valid JSON (truncated?)", retried
            to = resp.headers.get("location", "")  # not followed: a POST sent on may arrive as a GET
            raise BackendError(f"HTTP {resp.status_code}: {url} redirects to {to or 'no location'}; give the URL "
                               "it should reach as base_url", retryable=False)  # fmt: skip
        try:
            body = resp.json()
        except ValueError as exc:
            raise BackendError("response is not valid JSON (truncated?)", retryable=True) from exc
        return Completion.from_openai(body)

    def _post(self, url: str, payload: dict[str, Any]) -> httpx.Response:
        """POST and read the whole answer, which must come within ``timeout`` seconds (give or take one read).

        httpx's timeout bounds each read: an answer that came a few bytes at a time was waited for as long as
        it took (a byte every half second kept a ``timeout=2`` request waiting 90 s, and the run for hours).

        Raises:
            BackendError: The connection broke in the body, after the server answered: the request is retried (it
                was :class:`BackendUnreachable`, which ended the run at its first request, unretried).
                A body that its ``Content-Encoding`` cannot decode is retried too; one that decodes past
                :data:`MAX_ANSWER_BYTES` is refused (it was read whole, however long).
        """
        import httpx

        deadline = time.monotonic() + self.timeout
        with self._client.stream("POST", url, json=payload) as resp:
            self.answered = True
            body = bytearray()
            try:
                for chunk in resp.iter_bytes():  # decoded, so that a gzip bomb is stopped at the limit too
                    body += chunk
                    if len(body) > MAX_ANSWER_BYTES:
                        raise BackendError(f"the answer is over {MAX_ANSWER_BYTES:,} bytes, more than a chat "
                                           "completion holds: not read further", retryable=False)  # fmt: skip
                    if time.monotonic() > deadline:
                        raise BackendUnreachable(url, f"timeout after {self.timeout:g} s (the answer came too slowly)",
                                                 timed_out=True)  # fmt: skip
            except (httpx.RemoteProtocolError, httpx.ReadError) as exc:
                raise BackendError(f"the answer was cut off ({transport_cause(exc, self.timeout)})",
                                   retryable=True) from exc  # fmt: skip
            except httpx.DecodingError as exc:  # a DecodingError traceback ended the run
                coding = resp.headers.get("content-encoding")
                raise BackendError(f"the answer cannot be decoded as its Content-Encoding {coding} says ({exc})",
                                   retryable=True) from exc  # fmt: skip
        headers = [(k, v) for k, v in resp.headers.multi_items() if k.lower() != "content-encoding"]  # decoded
        return httpx.Response(resp.status_code, headers=headers, content=bytes(body), request=resp.request)

    def chat(self, request: ChatRequest) -> Completion:
        """Send one request, retrying transient failures; without ``response_format`` if the server refuses it."""
        payload = request.openai_payload(self.model)
        if "response_format" not in payload:
            return self._send(payload)
        refused = self.structure_refused
        if not refused:
            try:
                return self._send(payload)
            except BackendError as exc:
                if exc.retryable or exc.ends_run or not str(exc).startswith("HTTP 4"):
                    raise
                refused = str(exc)[:300]
        del payload["response_format"]
        # a server that refuses this too refused the request, not its structure (a wrong key's 401, a wrong model's
        # 404): it was noted as "the server refused response_format" and every later request went out without it
        answer = self._send(payload)
        with self._lock:
            self.structure_refused = self.structure_refused or refused
            self.structured_fallbacks += 1
        return dataclasses.replace(answer, unshaped=True)

    def _send(self, payload: dict[str, Any]) -> Completion:
        for attempt in range(self.max_retries + 1):
            self._count(retry=attempt > 0)
            try:
                return self._attempt(payload)
            except BackendError as exc:
                dead = isinstance(exc, BackendUnreachable) and not (self.answered or exc.timed_out)
                asked = exc.retry_after or 0.0  # the server's Retry-After: retrying sooner was refused again
                if not exc.retryable or dead or attempt == self.max_retries or asked > MAX_RETRY_AFTER:
                    raise
                time.sleep(max(self.backoff * 2**attempt, asked))
        raise AssertionError("unreachable")

    def close(self) -> None:
        """Close the HTTP connection pool."""
        self._client.close()
