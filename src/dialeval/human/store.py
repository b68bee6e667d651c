"""Study storage: SQLAlchemy Core tables in SQLite (WAL) or any SQLAlchemy URL.

An answer is acknowledged only after its transaction commits; in WAL mode a
committed transaction survives the server process being killed.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import os
import sqlite3
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from dialeval.errors import InputError, MissingExtraError
from dialeval.human.protocol import MAX_KEY_CHARS

try:
    import sqlalchemy as sa
except ImportError as exc:  # pragma: no cover - sqlalchemy is in the human extra
    raise MissingExtraError("sqlalchemy", extra="human") from exc

metadata = sa.MetaData()

study_meta = sa.Table(
    "study_meta",
    metadata,
    sa.Column("key", sa.String(64), primary_key=True),
    sa.Column("value", sa.JSON, nullable=False),
)

annotators = sa.Table(
    "annotators",
    metadata,
    sa.Column("id", sa.String(64), primary_key=True),
    sa.Column("token_sha256", sa.String(64), unique=True, nullable=False),
    sa.Column("role", sa.String(16), nullable=False),  # annotator | admin | reference
    sa.Column("qualified", sa.Boolean, nullable=True),  # None: not decided yet
    sa.Column("qualification_kappa", sa.Float, nullable=True),
)

items = sa.Table(
    "items",
    metadata,
    sa.Column("id", sa.String(200), primary_key=True),
    sa.Column("unit_id", sa.String(200), nullable=False, index=True),
    sa.Column("kind", sa.String(16), nullable=False),  # main | qualification | attention
    sa.Column("batch", sa.Integer, nullable=False),
    sa.Column("position", sa.Integer, nullable=False),
    sa.Column("system", sa.String(200), nullable=False),
    sa.Column("dialogue_id", sa.String(200), nullable=False),
    sa.Column("context", sa.JSON, nullable=False),  # [{"speaker":..., "text":...}]
    sa.Column("knowledge", sa.JSON, nullable=False),
    sa.Column("text", sa.Text, nullable=False),
)

assignments = sa.Table(
    "assignments",
    metadata,
    sa.Column("annotator", sa.String(64), sa.ForeignKey("annotators.id"), primary_key=True),
    sa.Column("unit_id", sa.String(200), primary_key=True),
    sa.Column("batch", sa.Integer, nullable=False),
    sa.Column("kind", sa.String(16), nullable=False),
    sa.Column("position", sa.Integer, nullable=False),
)

gold = sa.Table(
    "gold",
    metadata,
    sa.Column("annotator", sa.String(64), primary_key=True),
    sa.Column("item_id", sa.String(200), sa.ForeignKey("items.id"), primary_key=True),
    sa.Column("criterion", sa.String(MAX_KEY_CHARS), primary_key=True),
    sa.Column("value", sa.String(MAX_KEY_CHARS), nullable=False),
)

verdicts = sa.Table(
    "qualification_verdicts",  # why each worker passed or failed qualification (added after the first studies)
    metadata,
    sa.Column("annotator", sa.String(64), sa.ForeignKey("annotators.id"), primary_key=True),
    sa.Column("threshold", sa.Float, nullable=False),
    sa.Column("reason", sa.Text, nullable=False),
)

answers = sa.Table(
    "answers",
    metadata,
    sa.Column("annotator", sa.String(64), sa.ForeignKey("annotators.id"), primary_key=True),
    sa.Column("item_id", sa.String(200), sa.ForeignKey("items.id"), primary_key=True),
    sa.Column("criterion", sa.String(MAX_KEY_CHARS), primary_key=True),
    sa.Column("value", sa.String(MAX_KEY_CHARS), nullable=False),
    sa.Column("reasons", sa.JSON, nullable=False),
    sa.Column("free_text", sa.Text, nullable=False),
    sa.Column("seconds", sa.Float, nullable=False),
    sa.Column("request_id", sa.String(64), nullable=True),
    sa.Column("updated_at", sa.DateTime, nullable=False, server_default=sa.func.now()),
)


def token_hash(token: str) -> str:
    """Return the sha256 of a token; only hashes are stored.

    Example:
        >>> token_hash("abc")[:12]
        'ba7816bf8f01'
    """
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def db_url(study_dir: str | Path) -> str:
    """Return the SQLite URL of a study folder's database."""
    return f"sqlite:///{Path(study_dir).resolve() / 'study.db'}"


def sqlite_file(url: str) -> Path | None:
    """Return the database file of a SQLite URL; None for other databases and in-memory SQLite.

    Example:
        >>> sqlite_file("sqlite:////tmp/s/study.db"), sqlite_file("sqlite://"), sqlite_file("postgresql://h/db")
        (PosixPath('/tmp/s/study.db'), None, None)
    """
    parsed = sa.engine.make_url(url)
    if parsed.get_backend_name() != "sqlite" or parsed.database in (None, "", ":memory:"):
        return None
    return Path(str(parsed.database))


def resolve_db_url(url: str) -> str:
    """Return a ``--db`` URL with a SQLite file's path made absolute, as ``access.json`` keeps it.

    A relative path was kept as given, so the study's other commands, run from another folder, did not find it.

    Raises:
        InputError: SQLAlchemy cannot open the URL here, or its study would not outlive the command (in-memory).

    Example:
        >>> resolve_db_url("sqlite:////tmp/s/study.db")
        'sqlite:////tmp/s/study.db'
        >>> resolve_db_url("postgres://h/db")
        Traceback (most recent call last):
        ...
        dialeval.errors.InputError: field "--db": SQLAlchemy knows no database "postgres"; e.g. sqlite:///PATH or \
postgresql://USER@HOST/DB
    """
    example = "e.g. sqlite:///PATH or postgresql://USER@HOST/DB"
    try:
        parsed = sa.engine.make_url(url)
        sa.create_engine(parsed).dispose()  # loads the dialect and its driver; connects to nothing
    except sa.exc.NoSuchModuleError:
        raise InputError(f'SQLAlchemy knows no database "{parsed.drivername}"; {example}', field="--db") from None
    except sa.exc.ArgumentError:
        raise InputError(f'"{url}" is not a database URL; {example}', field="--db") from None
    except ImportError as exc:
        raise InputError(f'the driver of "{parsed.drivername}" is not installed here (no module "{exc.name}"); '
                         "pip install it, or give a sqlite:/// URL", field="--db") from None  # fmt: skip
    if parsed.get_backend_name() != "sqlite":
        return url
    if (path := sqlite_file(url)) is None:
        raise InputError("an in-memory database would be lost when the command ends; give a file: sqlite:///PATH",
                         field="--db")  # fmt: skip
    return parsed.set(database=str(path.resolve())).render_as_string(hide_password=False)


def not_a_study(db: Path) -> str | None:
    """Say why the SQLite file ``db`` is not a study's database (None when it is one); nothing is written.

    Example:
        >>> import tempfile
        >>> empty = Path(tempfile.mkdtemp()) / "study.db"
        >>> _ = empty.write_bytes(b"")
        >>> not_a_study(empty)
        "is not a study's database (it has no study_meta table)"
    """
    try:  # read-only: closing the last plain connection to a WAL database would checkpoint it, a write
        with contextlib.closing(sqlite3.connect(f"{db.absolute().as_uri()}?mode=ro", uri=True)) as con:
            tables = {row[0] for row in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    except sqlite3.Error as exc:
        return f"is not a study's database: {exc}"
    return None if study_meta.name in tables else f"is not a study's database (it has no {study_meta.name} table)"


@contextlib.contextmanager
def all_or_nothing(url: str) -> Iterator[sa.Engine]:
    """Yield an engine to build a new database at ``url`` that exists afterwards only if the block succeeds.

    A SQLite file is built in an owner-only (0600) temporary file beside it and renamed into
    place at the end, so a failure half-way leaves nothing that blocks a retry, and the
    database (and the -wal and -shm files SQLite later creates with the database's mode) is
    never readable by other users. Any other database is the caller's to fill in one
    transaction (tables included), which rolls back as a whole.
    """
    path = sqlite_file(url)
    if path is None:
        engine = connect(url)
        try:
            yield engine
        finally:
            engine.dispose()
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)  # mode 0600
    os.close(fd)
    engine = connect(f"sqlite:///{tmp}")
    try:
        yield engine
        engine.dispose()  # the last connection checkpoints the WAL into the file and removes it
        if os.path.exists(f"{tmp}-wal"):
            raise OSError(f"SQLite left {tmp}-wal behind; the study was not created")
        os.replace(tmp, path)
    finally:
        engine.dispose()
        for suffix in ("", "-wal", "-shm", "-journal"):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(f"{tmp}{suffix}")


def connect(url: str) -> sa.Engine:
    """Create an engine; SQLite gets WAL, a busy timeout and foreign keys."""
    if url.startswith("sqlite"):
        # connections are kept for the app's threads (40 in the pool that runs sync endpoints), not
        # opened per request: each new one runs the pragmas below
        engine = sa.create_engine(
            url, connect_args={"timeout": 30, "check_same_thread": False}, pool_size=20, max_overflow=30
        )

        @sa.event.listens_for(engine, "connect")
        def _pragmas(dbapi_conn: Any, _record: Any) -> None:
            cur = dbapi_conn.cursor()
            cur.execute("PRAGMA journal_mode=WAL")
            cur.execute("PRAGMA synchronous=NORMAL")
            cur.execute("PRAGMA foreign_keys=ON")
            cur.execute("PRAGMA busy_timeout=30000")
            cur.close()

        return engine
    return sa.create_engine(url, pool_pre_ping=True)


_KEYS = ("annotator", "item_id", "criterion")


@functools.cache
def _upsert(dialect: str) -> sa.Insert:
    """Return the insert-or-update of one answer for ``dialect`` (built once: building it cost more than running it)."""
    if dialect == "postgresql":
        from sqlalchemy.dialects.postgresql import insert as upsert_insert
    else:
        from sqlalchemy.dialects.sqlite import insert as upsert_insert  # type: ignore[assignment]
    stmt = upsert_insert(answers)
    update = {c.name: stmt.excluded[c.name] for c in answers.c if c.name not in _KEYS and c.name != "updated_at"}
    return stmt.on_conflict_do_update(index_elements=_KEYS, set_={**update, "updated_at": sa.func.now()})


def upsert_answer(conn: sa.Connection, row: dict[str, Any]) -> None:
    """Insert or replace one answer (one row per annotator, item and criterion)."""
    if conn.dialect.name in ("sqlite", "postgresql"):
        conn.execute(_upsert(conn.dialect.name), row)
        return
    # any other SQLAlchemy database: update, else insert, in the caller's transaction
    update = {k: v for k, v in row.items() if k not in _KEYS}
    match = [answers.c[k] == row[k] for k in _KEYS]
    if conn.execute(answers.update().where(*match).values(**update)).rowcount == 0:
        conn.execute(answers.insert().values(**row))


_MISSING = object()


def get_meta(conn: sa.Connection, key: str, default: Any = _MISSING) -> Any:
    """Return one study_meta value (``default``, or KeyError, if missing)."""
    value = conn.execute(sa.select(study_meta.c.value).where(study_meta.c.key == key)).scalar_one_or_none()
    if value is None:
        if default is _MISSING:
            raise KeyError(key)
        return default
    return value
