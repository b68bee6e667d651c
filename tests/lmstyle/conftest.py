"""The judges' llama.cpp server on 127.0.0.1, shared with the LMStyle tests (a generator and judge over HTTP)."""

from __future__ import annotations

from tests.judges.conftest import llama_url

__all__ = ["llama_url"]
