"""50 simulated annotators on a real server; every acknowledged answer is stored exactly once, also across SIGKILL."""

from __future__ import annotations

import asyncio
import json
import sqlite3
import threading
import time
from pathlib import Path

import pytest
from tests.human.conftest import start_server
from tests.human.load_study import LoadResult, make_load_study, simulate

from dialeval.human.app import public_id

pytestmark = pytest.mark.slow


def stored(folder: Path) -> dict[tuple[str, str, str], list[str]]:
    """Answers in the database, keyed by the opaque item id the annotator saw (the app's keyed hash of the real id)."""
    conn = sqlite3.connect(folder / "study.db")
    try:
        rows = conn.execute("SELECT annotator, item_id, criterion, value FROM answers").fetchall()
        (key,) = conn.execute("SELECT value FROM study_meta WHERE key = 'blind_key'").fetchone()
    finally:
        conn.close()
    out: dict[tuple[str, str, str], list[str]] = {}
    for a, i, c, v in rows:
        out.setdefault((a, public_id(json.loads(key), i), c), []).append(v)
    return out


def test_fifty_concurrent_annotators(tmp_path: Path) -> None:
    access = make_load_study(tmp_path / "s", 50)
    server = start_server(tmp_path / "s")
    try:
        result = asyncio.run(simulate(server.base, access["annotators"], per_annotator=12, timeout_s=240))
    finally:
        server.proc.terminate()
        server.proc.wait(timeout=10)
    assert result.failures == 0, result.reasons[:5]
    assert len(result.acknowledged) == 50 * 12
    db = stored(tmp_path / "s")
    assert len(db) == len(result.acknowledged)
    for key, value in result.acknowledged.items():
        assert db[key] == [value]  # present, exactly once, with the acknowledged value


def test_sigkill_mid_load_loses_no_acknowledged_answer(tmp_path: Path) -> None:
    access = make_load_study(tmp_path / "s", 50)
    server = start_server(tmp_path / "s")
    result = LoadResult()
    done = threading.Event()

    def run() -> None:
        try:
            asyncio.run(simulate(server.base, access["annotators"], per_annotator=40, timeout_s=240, result=result))
        finally:
            done.set()

    worker = threading.Thread(target=run)
    worker.start()
    deadline = time.monotonic() + 120
    while len(result.acknowledged) < 300 and time.monotonic() < deadline and not done.is_set():
        time.sleep(0.02)
    server.kill()  # SIGKILL in the middle of the load
    worker.join(timeout=240)
    assert done.is_set()
    acked = result.acknowledged
    assert 300 <= len(acked) < 1500, "the kill must land in the middle of the load"
    assert result.failures > 0  # requests after the kill were refused, never acknowledged

    restarted = start_server(tmp_path / "s")
    try:
        db = stored(tmp_path / "s")
        for key, value in acked.items():
            assert db[key] == [value]
    finally:
        restarted.proc.terminate()
        restarted.proc.wait(timeout=10)
