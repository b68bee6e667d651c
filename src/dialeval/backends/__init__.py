"""Generation backends: llama.cpp in process, OpenAI-compatible HTTP, transformers by path.

Importing this package imports no model library; :func:`make_backend` does, lazily.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import cast

from dialeval.backends.base import (
    Backend,
    BackendError,
    BackendOptions,
    BackendRefused,
    BackendUnreachable,
    BudgetExceeded,
    ChatRequest,
    Completion,
)
from dialeval.registry import Registry

__all__ = [
    "BACKENDS",
    "Backend",
    "BackendError",
    "BackendOptions",
    "BackendRefused",
    "BackendUnreachable",
    "BudgetExceeded",
    "ChatRequest",
    "Completion",
    "default_in_flight",
    "make_backend",
]

#: Backend kinds: a :class:`Backend` subclass (built by its ``from_options``) or a factory given the
#: :class:`BackendOptions`, as ``"module:object"`` so that no model library is imported before one is built.
#: Plugins: the ``dialeval.backends`` entry points, or ``BACKENDS.register``.
BACKENDS: Registry[type[Backend] | Callable[[BackendOptions], Backend]] = Registry("backend", base=Backend)
BACKENDS.register("llamacpp", "dialeval.backends.llamacpp:LlamaCppBackend")
BACKENDS.register("openai-compatible", "dialeval.backends.openai_compat:OpenAICompatBackend")
BACKENDS.register("transformers", "dialeval.backends.transformers_backend:TransformersBackend")


def default_in_flight(kind: str) -> int:
    """Return the requests a backend kind answers at once by default.

    In process it is 1: llama.cpp decodes concurrent requests in one batch, and the
    batch's composition changes the numbers (measured: two fresh 8-in-flight runs of
    the same seeded judge differed, two 1-in-flight runs were identical). Over HTTP it
    is 8; the server decides how to batch.

    Example:
        >>> default_in_flight("llamacpp"), default_in_flight("openai-compatible")
        (1, 8)
    """
    return 8 if kind == "openai-compatible" else 1


def make_backend(
    kind: str = "llamacpp",
    model: str = "",
    *,
    base_url: str = "",
    api_key_env: str = "OPENAI_API_KEY",
    timeout: float = 60.0,
    max_retries: int = 5,
    in_flight: int = 0,
) -> Backend:
    """Build a backend by kind name, through :data:`BACKENDS` (a plugin kind is built as registered).

    ``in_flight=0`` is the kind's default (:func:`default_in_flight`).

    Example:
        >>> make_backend("lamacpp")
        Traceback (most recent call last):
        ...
        dialeval.errors.UnknownNameError: unknown backend "lamacpp"; did you mean "llamacpp"?
    """
    options = BackendOptions(
        model=model, base_url=base_url, api_key_env=api_key_env, timeout=timeout, max_retries=max_retries,
        in_flight=in_flight or default_in_flight(kind),
    )
    entry = BACKENDS.get(kind)
    if isinstance(entry, type):
        return cast("type[Backend]", entry).from_options(options)  # the registry checked the base class
    return entry(options)
