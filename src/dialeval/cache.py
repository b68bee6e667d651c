"""A persistent score cache in one SQLite file, keyed by metric signature and input hash.

Each finished batch is committed at once, so a job killed halfway keeps every
item it finished; rerunning it computes only the rest.

Example:
    >>> import tempfile, pathlib
    >>> from dialeval.metrics.base import MetricInput
    >>> cache = ScoreCache(pathlib.Path(tempfile.mkdtemp()) / "scores.sqlite")
    >>> key = input_key(MetricInput(response="hi"))
    >>> cache.put_many("sig", {key: {"len": 2.0}})
    >>> list(cache.get_many("sig", [key, "other"]).values())
    [{'len': 2.0}]
    >>> len(cache)
    1
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import Iterable, Mapping
from pathlib import Path

from dialeval.metrics.base import MetricInput

CachedValues = dict[str, float | None]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS scores (
    signature TEXT NOT NULL,
    input_hash TEXT NOT NULL,
    outputs TEXT NOT NULL,
    PRIMARY KEY (signature, input_hash)
) WITHOUT ROWID
"""


def input_key(item: MetricInput) -> str:
    """Return the sha256 of everything a metric sees of one item.

    Example:
        >>> input_key(MetricInput(response="a")) == input_key(MetricInput(response="a"))
        True
        >>> input_key(MetricInput(response="a")) == input_key(MetricInput(response="a "))
        False
    """
    payload = {
        "response": item.response,
        "context": [[t.speaker, t.text] for t in item.context],
        "references": list(item.references),
        "knowledge": list(item.knowledge),
    }
    return hashlib.sha256(json.dumps(payload, ensure_ascii=False).encode("utf-8")).hexdigest()


class ScoreCache:
    """Per-item metric outputs stored in SQLite (WAL mode, one transaction per batch)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(self.path, timeout=60)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.execute(_SCHEMA)
        self._db.commit()

    def get_many(self, signature: str, keys: Iterable[str]) -> dict[str, CachedValues]:
        """Return the cached outputs of the keys that are present."""
        wanted = list(dict.fromkeys(keys))
        found: dict[str, CachedValues] = {}
        for start in range(0, len(wanted), 500):
            chunk = wanted[start : start + 500]
            marks = ",".join("?" * len(chunk))
            rows = self._db.execute(
                f"SELECT input_hash, outputs FROM scores WHERE signature = ? AND input_hash IN ({marks})",
                [signature, *chunk],
            )
            for key, outputs in rows:
                found[key] = json.loads(outputs)
        return found

    def put_many(self, signature: str, values: Mapping[str, CachedValues]) -> None:
        """Store the outputs of several items in one committed transaction."""
        with self._db:
            self._db.executemany(
                "INSERT OR REPLACE INTO scores (signature, input_hash, outputs) VALUES (?, ?, ?)",
                [(signature, k, json.dumps(v)) for k, v in values.items()],
            )

    def __len__(self) -> int:
        return int(self._db.execute("SELECT COUNT(*) FROM scores").fetchone()[0])

    def close(self) -> None:
        """Close the database connection."""
        self._db.close()
