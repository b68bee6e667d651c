"""A SQLite cache of requests and answers, so that a rerun makes no calls and a killed run resumes.

The key is the sha256 of the backend signature, the messages (prompt) and the
sampling parameters (temperature, seed, max_tokens, top_logprobs). Each answer
is committed as soon as it arrives.

Example:
    >>> import tempfile, pathlib
    >>> from dialeval.backends.base import ChatRequest, Completion
    >>> c = RequestCache(pathlib.Path(tempfile.mkdtemp()) / "req.sqlite")
    >>> r = ChatRequest(messages=(("user", "hi"),), seed=3)
    >>> c.get("sig", r) is None
    True
    >>> c.put("sig", r, Completion(text="hello"))
    >>> c.get("sig", r).text, c.get("other-sig", r) is None
    ('hello', True)
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
from pathlib import Path

from dialeval.atomic import WriteError
from dialeval.backends.base import ChatRequest, Completion
from dialeval.errors import InputError


def _unusable(exc: sqlite3.Error) -> str:
    """Say in words why SQLite cannot use a request cache file, and what to do.

    Example:
        >>> _unusable(sqlite3.DatabaseError("file is not a database"))
        'is not a request cache (SQLite: file is not a database); delete it (its answers are asked again)'
    """
    return f"is not a request cache (SQLite: {exc}); delete it (its answers are asked again)"


def _answer(text: object) -> Completion | None:
    """Return the completion a row's answer holds, or None when it holds none (damaged, or another tool's).

    Example:
        >>> _answer('{"text": "hi"}').text, _answer('{"text": null}'), _answer("{")
        ('hi', None, None)
    """
    try:
        data = json.loads(text) if isinstance(text, str | bytes) else None
        if not isinstance(data, dict) or not isinstance(data.get("text"), str):
            return None
        return Completion.from_json(data)
    except (ValueError, TypeError):
        return None


def request_key(backend_signature: str, request: ChatRequest) -> str:
    """Return the cache key of a request sent to a backend."""
    blob = json.dumps([backend_signature, request.key_fields()], sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


class RequestCache:
    """Requests and answers in one SQLite file (safe across threads of one process)."""

    def __init__(self, path: str | Path) -> None:
        """Open (or create) the cache file ``path``.

        Raises:
            InputError: Naming the path: it cannot be created or opened, or it is no SQLite database (a damaged
                cache, another program's file). It was a ``sqlite3.DatabaseError`` traceback out of the run.
        """
        self.path = Path(path)
        self._lock = threading.Lock()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(self.path, check_same_thread=False, timeout=30)
        except (OSError, sqlite3.Error) as exc:
            raise InputError(f"the request cache cannot be opened: {exc}", path=self.path) from None
        try:
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute(
                "CREATE TABLE IF NOT EXISTS completions (key TEXT PRIMARY KEY, backend TEXT NOT NULL,"
                " request TEXT NOT NULL, answer TEXT NOT NULL, created REAL DEFAULT (unixepoch('subsec')))"
            )
            self._db.commit()
        except sqlite3.Error as exc:
            self._db.close()
            raise InputError(_unusable(exc), path=self.path) from None

    def get(self, backend_signature: str, request: ChatRequest) -> Completion | None:
        """Return the cached answer, or None: none cached, or a row that holds no answer (asked again, replaced).

        Raises:
            InputError: Naming the path: SQLite cannot read it (a page damaged past the header).
        """
        try:
            with self._lock:
                row = self._db.execute(
                    "SELECT answer FROM completions WHERE key = ?", (request_key(backend_signature, request),)
                ).fetchone()
        except sqlite3.Error as exc:
            raise InputError(_unusable(exc), path=self.path) from None
        return _answer(row[0]) if row else None

    def put(self, backend_signature: str, request: ChatRequest, answer: Completion) -> None:
        """Store an answer (committed at once).

        Raises:
            WriteError: Naming the path: the answer cannot be written (a full disk, a file made read-only).
        """
        try:
            with self._lock, self._db:
                self._db.execute(
                    "INSERT OR REPLACE INTO completions (key, backend, request, answer) VALUES (?, ?, ?, ?)",
                    (
                        request_key(backend_signature, request),
                        backend_signature,
                        json.dumps(request.key_fields(), ensure_ascii=False),
                        json.dumps(answer.to_json(), ensure_ascii=False),
                    ),
                )
        except sqlite3.Error as exc:
            raise WriteError(self.path, str(exc)) from None

    def __len__(self) -> int:
        with self._lock:
            return int(self._db.execute("SELECT COUNT(*) FROM completions").fetchone()[0])

    def close(self) -> None:
        """Close the database."""
        with self._lock:
            self._db.close()
