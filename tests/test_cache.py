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

from dialeval.cache import ScoreCache, input_key
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
