"""Helpers of the resume tests: count what a real metric computes, and cut a score cache short.

A run killed after some batches were committed leaves a partial score cache; deleting committed
rows of one metric makes the same state without a timing race.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest


def count_computed(monkeypatch: pytest.MonkeyPatch, cls: type[Any]) -> list[str]:
    """Return the list that every response ``cls.compute`` is asked for is appended to (the real compute runs)."""
    computed: list[str] = []
    real = cls.compute

    def spy(self: Any, items: Any) -> Any:
        computed.extend(i.response for i in items)
        return real(self, items)

    monkeypatch.setattr(cls, "compute", spy)
    return computed


def drop_cached(path: Path, family: str, n: int) -> int:
    """Delete ``n`` cached items of the metric ``family`` from the score cache at ``path``; return how many went."""
    like = f"{family}|%"
    with sqlite3.connect(path) as db:
        query = ("DELETE FROM scores WHERE signature LIKE ? AND input_hash IN "
                 "(SELECT input_hash FROM scores WHERE signature LIKE ? ORDER BY input_hash LIMIT ?)")  # fmt: skip
        return int(db.execute(query, (like, like, n)).rowcount)
