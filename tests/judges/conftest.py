"""A real llama.cpp server on 127.0.0.1 with the packaged SmolLM2-135M-Instruct, started once."""

from __future__ import annotations

import pytest

from dialeval.backends.llamacpp import local_server


@pytest.fixture(scope="session")
def llama_url() -> str:
    """The ``/v1`` root of the shared in-process llama.cpp HTTP server."""
    _, port = local_server(n_ctx=2048, n_parallel=8)
    return f"http://127.0.0.1:{port}/v1"
