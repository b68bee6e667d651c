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
import os
import sqlite3
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path

from dialeval.atomic import WriteError, missing_dirs, remove_dirs, special_kind
from dialeval.errors import InputError
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
#: The columns of the ``scores`` table the cache reads.
_COLUMNS = ("signature", "input_hash", "outputs")
#: The option that names the cache, for errors.
CACHE_FIELD = "--cache"
#: Bytes in the smallest SQLite database file that is not empty (one page of the smallest size).
_SMALLEST_DATABASE = 512
_NOT_SQLITE = "is not a score cache (SQLite) file; give another file, or delete it if it is a damaged cache"


def cache_field(given: str | Path | None) -> str:
    """Return what named the cache, for its errors: ``--cache`` when given, else the variable that gave the default.

    That is ``$DIALEVAL_SCORE_CACHE`` when set, else ``$DIALEVAL_CACHE`` (whose folder, ``~/.cache/dialeval`` when
    unset, holds the default ``scores.sqlite``): a bad default was an error of ``--cache``, an option not given.

    Example:
        >>> saved = os.environ.pop("DIALEVAL_SCORE_CACHE", None)
        >>> cache_field(None)
        '$DIALEVAL_CACHE'
        >>> os.environ["DIALEVAL_SCORE_CACHE"] = "s.sqlite"
        >>> cache_field("mine.sqlite"), cache_field(None)
        ('--cache', '$DIALEVAL_SCORE_CACHE')
        >>> del os.environ["DIALEVAL_SCORE_CACHE"]
        >>> os.environ.update({} if saved is None else {"DIALEVAL_SCORE_CACHE": saved})
    """
    if given is not None:
        return CACHE_FIELD
    return "$DIALEVAL_SCORE_CACHE" if os.environ.get("DIALEVAL_SCORE_CACHE") else "$DIALEVAL_CACHE"


def check_cache_path(path: Path, field: str = CACHE_FIELD) -> None:
    """Refuse, before any work, a cache path that is a folder, a device or pipe, not SQLite, or not writable.

    Raises:
        InputError: Of ``field`` (``--cache``, or what gave the path: :func:`cache_field`), naming the path and
            the reason.

    Example:
        >>> import tempfile
        >>> check_cache_path(Path(tempfile.mkdtemp()))
        Traceback (most recent call last):
        ...
        dialeval.errors.InputError: /...: field "--cache": is a folder; give the score cache's file (SQLite)
    """
    if path.is_dir():
        raise InputError("is a folder; give the score cache's file (SQLite)", path=path, field=field)
    if kind := special_kind(path):  # SQLite would wait on a pipe forever, or fail on a device at the first write
        raise InputError(f"is {kind}, not a file; give the score cache's file (SQLite)", path=path, field=field)
    if path.exists():
        if not os.access(path, os.R_OK | os.W_OK):
            raise InputError("cannot be written: no permission to read and write it", path=path, field=field)
        size = path.stat().st_size
        if 0 < size < _SMALLEST_DATABASE:  # SQLite would take a 1-byte file for an empty database and overwrite it
            raise InputError(_NOT_SQLITE, path=path, field=field)
        if size:  # SQLite reads the header: a file of our own, once closed, would drop this process's locks on it
            _check_existing(path, field)
        return
    start = path.absolute().parent
    above = next(p for p in (start, *start.parents) if p.exists())
    if not above.is_dir():
        raise InputError(f"cannot be created: {above} is a file, not a folder", path=path, field=field)
    if not os.access(above, os.W_OK | os.X_OK):
        raise InputError(f"cannot be created: no permission to write in {above}", path=path, field=field)


def _check_existing(path: Path, field: str) -> None:
    """Refuse an existing SQLite file that is damaged or holds another program's tables (opened read-only)."""
    try:
        db = sqlite3.connect(f"{path.absolute().as_uri()}?mode=ro", uri=True)
    except sqlite3.Error as exc:
        raise InputError(_why_not(exc), path=path, field=field) from None
    try:
        _check_tables(db, path, field)
    except sqlite3.Error as exc:
        raise InputError(_why_not(exc), path=path, field=field) from None
    finally:
        db.close()


def _check_tables(db: sqlite3.Connection, path: Path, field: str) -> None:
    """Refuse an SQLite database that holds tables but no score cache (another program's data).

    Its own table named ``scores`` is refused by its columns (the lookups failed with "no such column").
    """
    tables = [str(row[0]) for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
    if tables and "scores" not in tables:
        raise InputError(
            f"is an SQLite database but not a score cache (its tables: {', '.join(sorted(tables)[:5])}); "
            "give another file",
            path=path,
            field=field,
        )
    info = list(db.execute("PRAGMA table_info(scores)"))
    columns = [str(row[1]) for row in info]
    if tables and not set(_COLUMNS) <= set(columns):
        raise InputError(f"is an SQLite database but not a score cache (its table scores has the columns "
                         f"{', '.join(columns)}, not {', '.join(_COLUMNS)}); give another file",
                         path=path, field=field)  # fmt: skip
    # cid, name, type, notnull, default, pk: a column the cache does not write must take NULL or have a default
    required = [str(row[1]) for row in info if row[1] not in _COLUMNS and row[3] and row[4] is None]
    if required:
        raise InputError(f'is a score cache of another dialeval version: its column "{required[0]}" is NOT NULL '
                         "without a default, and this version does not write it; move it aside (its scores are "
                         "computed again), or give another file with --cache, or run with --no-cache",
                         path=path, field=field)  # fmt: skip


def _why_not(exc: sqlite3.Error) -> str:
    """Say in words why SQLite could not open a cache file."""
    text = str(exc)
    if "not a database" in text:
        return _NOT_SQLITE
    if "malformed" in text:
        return f"is damaged ({text}); give another file, or delete it (its scores are computed again)"
    if "readonly" in text or "unable to open" in text:
        return f"cannot be written ({text}); check the permissions of the file and its folder"
    return f"cannot be used as the score cache: {text}"


def _values(text: object) -> CachedValues | None:
    """Return a row's outputs, or None when they are not a JSON object of finite numbers and nulls.

    Example:
        >>> _values('{"len": 2.0, "f1": null}'), _values('{"len": "2"}'), _values("{"), _values('{"len": NaN}')
        ({'len': 2.0, 'f1': None}, None, None, None)
        >>> _values('{"len": 2}'), _values('{"len": true}'), _values('{"len": 1%s}' % ("0" * 400))
        ({'len': 2}, None, None)
    """
    try:
        values = json.loads(text) if isinstance(text, str | bytes) else None
    except ValueError:
        return None
    if not isinstance(values, dict):
        return None
    numbers = all(v is None or (type(v) in (int, float) and abs(v) <= sys.float_info.max) for v in values.values())
    return values if numbers else None


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

    def __init__(self, path: str | Path, field: str = CACHE_FIELD) -> None:
        """Open (or create) the cache file ``path``; ``field`` is what named it, for errors (:func:`cache_field`).

        Raises:
            InputError: Of ``field``, naming the path: it is a folder, a file that is not an
                SQLite database, a database of something else, or a place this user cannot write.
        """
        self.path = Path(path)
        self.field = field
        check_cache_path(self.path, field)
        created = missing_dirs(self.path.parent)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(self.path, timeout=60)
        except (OSError, sqlite3.Error) as exc:
            remove_dirs(created)
            raise InputError(f"cannot be opened: {exc}", path=self.path, field=self.field) from None
        try:  # check_cache_path has refused another program's database, read-only, before WAL changes the file
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.execute(_SCHEMA)
            self._db.commit()
        except sqlite3.Error as exc:
            self._db.close()
            raise InputError(_why_not(exc), path=self.path, field=self.field) from None

    def get_many(self, signature: str, keys: Iterable[str]) -> dict[str, CachedValues]:
        """Return the cached outputs of the keys that are present.

        A row that does not hold a JSON object of finite numbers and nulls (damaged, or written by another tool)
        is left out: its item is computed again and :meth:`put_many` replaces the row.

        Raises:
            InputError: Of the cache's field, naming the path: SQLite cannot read it (a page damaged past the
                header, which opening the file does not read).
        """
        wanted = list(dict.fromkeys(keys))
        found: dict[str, CachedValues] = {}
        try:
            for start in range(0, len(wanted), 500):
                chunk = wanted[start : start + 500]
                marks = ",".join("?" * len(chunk))
                rows = self._db.execute(
                    f"SELECT input_hash, outputs FROM scores WHERE signature = ? AND input_hash IN ({marks})",
                    [signature, *chunk],
                )
                found.update((key, values) for key, text in rows if (values := _values(text)) is not None)
        except sqlite3.Error as exc:
            raise InputError(_why_not(exc), path=self.path, field=self.field) from None
        return found

    def put_many(self, signature: str, values: Mapping[str, CachedValues]) -> None:
        """Store the outputs of several items in one committed transaction."""
        try:
            with self._db:
                self._db.executemany(
                    "INSERT OR REPLACE INTO scores (signature, input_hash, outputs) VALUES (?, ?, ?)",
                    [(signature, k, json.dumps(v)) for k, v in values.items()],
                )
        except sqlite3.DatabaseError as exc:  # a full disk, an I/O error, a file made read-only or damaged meanwhile
            raise WriteError(self.path, str(exc), field=self.field) from None

    def __len__(self) -> int:
        return int(self._db.execute("SELECT COUNT(*) FROM scores").fetchone()[0])

    def close(self) -> None:
        """Close the database connection."""
        self._db.close()
