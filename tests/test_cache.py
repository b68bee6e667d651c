"""The SQLite score cache: persistence, no recomputation, and a killed job that resumes losing nothing."""

from __future__ import annotations

import importlib.util
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from dialeval.atomic import WriteError
from dialeval.cache import ScoreCache, input_key
from dialeval.errors import InputError
from dialeval.metrics.base import MetricInput
from dialeval.scoring import score_candidates

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("cache_job", ROOT / "tests" / "cache_job.py")
assert _spec is not None and _spec.loader is not None
cache_job = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(cache_job)
SlowOverlap, load = cache_job.SlowOverlap, cache_job.load


def rows(path: Path) -> int:
    with sqlite3.connect(path) as db:
        return int(db.execute("SELECT COUNT(*) FROM scores").fetchone()[0])


def rows_so_far(path: Path) -> int:
    """Rows committed so far; 0 while the job has created the file but not yet the table."""
    if not path.exists():
        return 0
    try:
        return rows(path)
    except sqlite3.OperationalError:  # "no such table" or a lock during schema creation
        return 0


def test_values_survive_reopening_and_signatures_do_not_mix(tmp_path):
    path = tmp_path / "c.sqlite"
    key = input_key(MetricInput(response="hello"))
    ScoreCache(path).put_many("sig-a", {key: {"x": 1.5, "y": None}})
    again = ScoreCache(path)
    assert again.get_many("sig-a", [key]) == {key: {"x": 1.5, "y": None}}
    assert again.get_many("sig-b", [key]) == {}


def test_second_run_computes_nothing_and_duplicates_compute_once(tmp_path, shared_data):
    bench = load(shared_data).head(3)
    cache = ScoreCache(tmp_path / "c.sqlite")
    first = SlowOverlap()
    first.delay = 0
    a = score_candidates(first, bench.candidates, bench.dialogues, cache=cache)
    # 18 candidates; identical (context, response) inputs are computed once
    distinct = len({input_key(i) for i in _inputs(bench)})
    assert len(first.computed) == distinct
    second = SlowOverlap()
    ticks: list[int] = []
    b = score_candidates(second, bench.candidates, bench.dialogues, progress=ticks.append, cache=cache)
    assert second.computed == []
    assert sum(ticks) == len(bench.candidates)
    assert [s.model_dump() for s in a] == [s.model_dump() for s in b]
    plain = SlowOverlap()
    plain.delay = 0
    c = score_candidates(plain, bench.candidates, bench.dialogues)
    assert [s.model_dump() for s in c] == [s.model_dump() for s in a]


def _inputs(bench):
    from dialeval.metrics.base import build_inputs

    return build_inputs(bench.candidates, bench.dialogues)


def test_killed_job_resumes_and_loses_no_finished_item(tmp_path, shared_data):
    path = tmp_path / "job.sqlite"
    env = dict(os.environ)
    proc = subprocess.Popen(
        [sys.executable, str(ROOT / "tests" / "cache_job.py"), str(shared_data), str(path)], env=env
    )
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and rows_so_far(path) < 24:
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert proc.returncode == -signal.SIGKILL
    saved = rows(path)
    bench = load(shared_data)
    total = len({input_key(i) for i in _inputs(bench)})
    assert 24 <= saved < total  # killed halfway, after some batches were committed
    resumed = SlowOverlap()
    resumed.delay = 0
    scores = score_candidates(resumed, bench.candidates, bench.dialogues, cache=ScoreCache(path))
    assert len(resumed.computed) == total - saved  # only the unfinished items were computed
    fresh = SlowOverlap()
    fresh.delay = 0
    expected = score_candidates(fresh, bench.candidates, bench.dialogues)
    assert [s.value for s in scores] == [s.value for s in expected]
    assert rows(path) == total


# --- a cache path that cannot be a score cache: one InputError naming --cache and the path, nothing changed ---


def _refused(path: Path, *words: str) -> None:
    with pytest.raises(InputError) as caught:
        ScoreCache(path)
    text = str(caught.value)
    assert text.startswith(f'{path}: field "--cache": '), text
    assert all(w in text for w in words), text


def test_a_text_file_is_refused_and_left_as_it_was(tmp_path):
    junk = tmp_path / "junk.sqlite"
    junk.write_text("not a database at all\n" * 20)
    _refused(junk, "not a score cache (SQLite) file")
    assert junk.read_text() == "not a database at all\n" * 20


def test_a_one_byte_file_is_refused_and_left_as_it_was(tmp_path):
    """SQLite itself takes a 1-byte file for an empty database (and would write over it): checked by size."""
    tiny = tmp_path / "tiny.sqlite"
    tiny.write_bytes(b"x")
    _refused(tiny, "not a score cache (SQLite) file")
    assert tiny.read_bytes() == b"x"


def test_checking_an_open_cache_keeps_its_locks_for_another_process(tmp_path):
    """A second cache opened in a process (as a second command does) checked the file by opening and closing
    it in Python, which drops every POSIX lock the process holds on it: another process closing its own
    connection then took itself for the last, deleted the WAL under the first, and the first one's next
    batch was lost ("disk I/O error"; the likely cause of "database disk image is malformed", seen once in CI)."""
    path = tmp_path / "c.sqlite"
    first = ScoreCache(path)
    first.put_many("sig", {"k1": {"x": 1.0}})
    ScoreCache(path).close()
    other = ["from dialeval.cache import ScoreCache", f"c = ScoreCache(r'{path}')",
             "c.put_many('sig', {'k2': {'x': 2.0}})", "c.close()"]  # fmt: skip
    subprocess.run([sys.executable, "-c", "\n".join(other)], check=True, timeout=120)
    first.put_many("sig", {"k3": {"x": 3.0}})
    fresh = ScoreCache(path)
    assert fresh.get_many("sig", ["k1", "k2", "k3"]) == {"k1": {"x": 1.0}, "k2": {"x": 2.0}, "k3": {"x": 3.0}}
    assert fresh._db.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
    for cache in (first, fresh):
        cache.close()


def test_a_file_with_a_damaged_body_is_refused(tmp_path):
    bad = tmp_path / "damaged.sqlite"
    bad.write_bytes(b"SQLite format 3\x00" + b"\xff" * 200)  # the header, then garbage
    _refused(bad, "not a score cache (SQLite) file")
    assert bad.read_bytes().startswith(b"SQLite format 3\x00")


def test_a_folder_is_refused(tmp_path):
    _refused(tmp_path, "is a folder")


def test_a_pipe_or_a_device_is_refused(tmp_path):
    """A pipe given as --cache waited forever (SQLite read it); /dev/null failed only as "disk I/O error"."""
    pipe = tmp_path / "pipe"
    os.mkfifo(pipe)
    # A writer held open with bytes in the pipe: code that opens and reads it gets them at once (no hang in a
    # regression), and the check must not read them.
    fd = os.open(pipe, os.O_RDWR)
    try:
        os.write(fd, b"bytes in the pipe\n")
        _refused(pipe, "is a pipe, not a file; give the score cache's file (SQLite)")
        assert os.read(fd, 100) == b"bytes in the pipe\n"
    finally:
        os.close(fd)
    _refused(Path("/dev/null"), "is a character device, not a file")


def test_another_programs_database_is_refused_and_not_changed(tmp_path):
    other = tmp_path / "app.db"
    with sqlite3.connect(other) as db:
        db.execute("CREATE TABLE users (name TEXT)")
    before = other.read_bytes()
    _refused(other, "not a score cache", "users")
    assert other.read_bytes() == before  # no scores table added, no WAL switch


def test_a_path_below_a_file_is_refused(tmp_path):
    (tmp_path / "plain").write_text("x")
    _refused(tmp_path / "plain" / "c.sqlite", "is a file, not a folder")


def test_an_unwritable_folder_is_refused(tmp_path, monkeypatch):
    folder = tmp_path / "ro"
    folder.mkdir()
    real_access = os.access
    monkeypatch.setattr(os, "access", lambda p, mode: False if Path(p) == folder else real_access(p, mode))
    _refused(folder / "c.sqlite", "no permission to write in", str(folder))
    assert list(folder.iterdir()) == []


def test_an_empty_file_becomes_a_cache(tmp_path):
    empty = tmp_path / "new.sqlite"
    empty.touch()
    ScoreCache(empty).put_many("sig", {"k": {"x": 1.0}})
    assert rows(empty) == 1


def test_a_full_disk_while_caching_is_one_write_error(tmp_path):
    cache = ScoreCache(tmp_path / "c.sqlite")
    cache._db.close()
    cache._db = _FailingDb()
    with pytest.raises(WriteError) as caught:
        cache.put_many("sig", {"k": {"x": 1.0}})
    assert str(caught.value) == f'{tmp_path / "c.sqlite"}: field "--cache": cannot be written: database or disk is full'


class _FailingDb:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def executemany(self, *args):
        raise sqlite3.OperationalError("database or disk is full")


def test_a_cache_damaged_past_its_first_page_is_one_input_error(tmp_path):
    """Opening reads page 1 only (the schema); a page damaged further in surfaced at the first lookup as
    SQLite's traceback ("DatabaseError: database disk image is malformed")."""
    path = tmp_path / "c.sqlite"
    cache = ScoreCache(path)
    keys = [f"{n:064x}" for n in range(2000)]  # enough rows for many pages past the first two
    cache.put_many("sig", {k: {"x": 1.0} for k in keys})
    cache.close()
    data = bytearray(path.read_bytes())
    assert len(data) > 16384
    for i in range(8192, len(data), 7):  # every page after the first two (4096 bytes each, SQLite's default)
        data[i] = 0xAB
    path.write_bytes(bytes(data))
    damaged = ScoreCache(path)
    with pytest.raises(InputError) as caught:
        damaged.get_many("sig", keys)
    assert str(caught.value).startswith(f'{path}: field "--cache": is damaged (database disk image is malformed)')
    damaged.close()


def test_another_programs_scores_table_is_refused_and_not_changed(tmp_path):
    """A database whose own table is named "scores" passed the check and failed at the first lookup with
    SQLite's traceback ("OperationalError: no such column: input_hash")."""
    other = tmp_path / "app.db"
    with sqlite3.connect(other) as db:
        db.execute("CREATE TABLE scores (player TEXT, points INTEGER)")
    before = other.read_bytes()
    _refused(other, "not a score cache", "player, points")
    assert other.read_bytes() == before


@pytest.mark.parametrize("stored", ["not json", "null", "[1, 2]", '{"x": "high"}', '{"x": true}', '{"x": [1]}',
                                    '{"x": NaN}', '{"x": Infinity}', '{"x": -Infinity}', '{"x": 1e999}'])
def test_a_row_whose_outputs_are_unreadable_is_computed_again(tmp_path, stored):
    """A row that does not hold a JSON object of finite numbers or nulls (written by hand, by another tool, or
    damaged) ended the run in a traceback: json's JSONDecodeError, "TypeError: 'NoneType' object is not iterable"
    for null, or pydantic's float_parsing error for a text; NaN or an infinity (which Python's json reads, and
    which the engine never caches) was pydantic's "NaN is not a score" traceback. It is now left out of the
    answer, so the item is computed again and its new values replace the row."""
    path = tmp_path / "c.sqlite"
    cache = ScoreCache(path)
    good, bad = input_key(MetricInput(response="a")), input_key(MetricInput(response="b"))
    cache.put_many("sig", {good: {"x": 1.0, "y": None}, bad: {"x": 2.0}})
    cache._db.execute("UPDATE scores SET outputs = ? WHERE input_hash = ?", (stored, bad))
    cache._db.commit()
    assert cache.get_many("sig", [good, bad]) == {good: {"x": 1.0, "y": None}}
    cache.put_many("sig", {bad: {"x": 3.0}})
    assert cache.get_many("sig", [bad]) == {bad: {"x": 3.0}}
    cache.close()


def test_a_cache_with_a_required_column_this_version_does_not_write_is_refused_before_scoring(tmp_path):
    """A scores table with an extra NOT NULL column (an older or newer dialeval's) was opened, and the first
    batch ended in "cannot be written: NOT NULL constraint failed: scores.created", naming no remedy."""
    old = tmp_path / "old.sqlite"
    with sqlite3.connect(old) as db:
        db.execute("CREATE TABLE scores (signature TEXT NOT NULL, input_hash TEXT NOT NULL, outputs TEXT NOT NULL, "
                   "created REAL NOT NULL, PRIMARY KEY (signature, input_hash)) WITHOUT ROWID")  # fmt: skip
    before = old.read_bytes()
    _refused(old, 'column "created"', "NOT NULL", "move it aside", "--no-cache")
    assert old.read_bytes() == before


def test_an_extra_column_that_may_be_left_empty_is_kept_and_the_cache_works(tmp_path):
    old = tmp_path / "old.sqlite"
    with sqlite3.connect(old) as db:
        db.execute("CREATE TABLE scores (signature TEXT NOT NULL, input_hash TEXT NOT NULL, outputs TEXT NOT NULL, "
                   "created REAL NOT NULL DEFAULT 0, note TEXT, PRIMARY KEY (signature, input_hash)) WITHOUT ROWID")
    cache = ScoreCache(old)
    cache.put_many("sig", {"k": {"x": 1.0}})
    assert cache.get_many("sig", ["k"]) == {"k": {"x": 1.0}}
