"""Run many requests against a backend: cache first, then the budget, then concurrency.

Example:
    >>> from dialeval.backends.base import Backend, ChatRequest, Completion
    >>> class Echo(Backend):
    ...     signature = "echo"
    ...     def chat(self, request):
    ...         return Completion(text=request.messages[-1][1], completion_tokens=1)
    >>> run = Runner(Echo(), max_calls=1)
    >>> reqs = [ChatRequest(messages=(("user", t),)) for t in "ab"]
    >>> [type(r).__name__ for r in run.run(reqs)]
    ['Completion', 'BudgetExceeded']
    >>> run.stats.calls, run.stats.budget_stopped
    (1, 1)
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass

from dialeval.backends.base import (
    Backend,
    BackendError,
    BudgetExceeded,
    ChatRequest,
    Completion,
)
from dialeval.backends.cache import RequestCache


@dataclass
class RunStats:
    """Counts of one run.

    Attributes:
        calls: Requests answered by the backend (cache hits excluded).
        cache_hits: Requests answered from the cache.
        failed: Requests that failed after all retries.
        budget_stopped: Requests not sent because the budget was spent.
        prompt_tokens: Prompt tokens of the calls made.
        completion_tokens: Generated tokens of the calls made.
    """

    calls: int = 0
    cache_hits: int = 0
    failed: int = 0
    budget_stopped: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0

    def as_dict(self) -> dict[str, int]:
        """Return the counts as a dict."""
        return asdict(self)


class Runner:
    """Send requests through an optional cache, a budget and a pool of in-flight requests.

    Args:
        backend: The model.
        cache: Where answers are kept; None to call every time.
        in_flight: Requests sent at once (default: the backend's ``max_in_flight``).
        max_calls: Stop sending after this many calls (None: no limit).
        max_tokens: Stop sending once this many tokens (prompt + completion) were used.
    """

    def __init__(
        self,
        backend: Backend,
        cache: RequestCache | None = None,
        *,
        in_flight: int | None = None,
        max_calls: int | None = None,
        max_tokens: int | None = None,
    ) -> None:
        self.backend = backend
        self.cache = cache
        self.in_flight = max(1, in_flight or backend.max_in_flight)
        self.max_calls = max_calls
        self.max_tokens = max_tokens
        self.stats = RunStats()
        self._lock = threading.Lock()

    @property
    def cache_signature(self) -> str:
        """The backend's signature, and the requests in flight when more than one: the request cache's key.

        Requests decoded together differ from those decoded alone (llama.cpp decodes concurrent requests in one
        batch, and its composition changes the numbers), so a run with ``in_flight=4`` filled the cache with answers
        that a later ``in_flight=1`` run, whose signature says it decodes alone, took as its own.
        """
        sig = self.backend.signature
        return sig if self.in_flight == 1 else f"{sig}|in_flight:{self.in_flight}"

    def _reserve(self) -> bool:
        with self._lock:
            used = self.stats.prompt_tokens + self.stats.completion_tokens
            if (self.max_calls is not None and self.stats.calls >= self.max_calls) or (
                self.max_tokens is not None and used >= self.max_tokens
            ):
                self.stats.budget_stopped += 1
                return False
            self.stats.calls += 1
            return True

    def one(self, request: ChatRequest) -> Completion | BackendError | BudgetExceeded:
        """Answer one request, or return (not raise) why it could not be answered.

        Raises:
            BackendError: One that ends the run (``ends_run``): the server could not be reached, or it refused the
                API key; every other request would fail the same way.
        """
        sig = self.cache_signature
        if self.cache is not None and (hit := self.cache.get(sig, request)) is not None:
            with self._lock:
                self.stats.cache_hits += 1
            return hit
        if not self._reserve():
            return BudgetExceeded("budget spent")
        try:
            answer = self.backend.chat(request)
        except BackendError as exc:
            with self._lock:
                self.stats.failed += 1
            if exc.ends_run:
                raise
            return exc
        with self._lock:
            self.stats.prompt_tokens += answer.prompt_tokens
            self.stats.completion_tokens += answer.completion_tokens
        if self.cache is not None:
            # free text the server gave in place of the shape answers the request without it: kept under the
            # shaped request's key, it was served to later shaped runs, with no fallback counted or noted
            self.cache.put(sig, dataclasses.replace(request, answer=None) if answer.unshaped else request, answer)
        return answer

    def run(self, requests: Sequence[ChatRequest]) -> list[Completion | BackendError | BudgetExceeded]:
        """Answer requests in order of the input, ``in_flight`` at a time."""
        if self.in_flight == 1 or len(requests) <= 1:
            return [self.one(r) for r in requests]
        with ThreadPoolExecutor(max_workers=self.in_flight) as pool:
            return list(pool.map(self.one, requests))
