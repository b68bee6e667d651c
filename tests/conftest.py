"""Shared fixtures: the real benchmark data beside the project root."""

from __future__ import annotations

import atexit
import errno
import os
import shutil
import socket
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

# The CLI keeps a score cache by default; tests start with an empty one of their own (one per
# xdist worker), never the user's ~/.cache/dialeval/scores.sqlite, and remove it when the process ends.
_SCORES = tempfile.mkdtemp(prefix="dialeval-test-scores-")
atexit.register(shutil.rmtree, _SCORES, ignore_errors=True)
os.environ["DIALEVAL_SCORE_CACHE"] = str(Path(_SCORES) / "scores.sqlite")

ROOT = Path(__file__).resolve().parents[1]
SHARED_DATA = ROOT.parent / "shared" / "data"


@pytest.fixture
def serve() -> Iterator[Callable[..., Any]]:
    """Start scripted OpenAI-compatible servers (tests/backends/test_openai_compat.py's ``Scripted``); each is
    closed after the test."""
    from tests.backends.test_openai_compat import Scripted

    started: list[Scripted] = []

    def start(*script: Any) -> Scripted:
        started.append(Scripted(list(script)))
        return started[-1]

    yield start
    for s in started:
        s.close()


@pytest.fixture
def taken_port() -> Iterator[int]:
    """A port on 127.0.0.1 that a listening socket holds for the test (a server there must refuse it)."""
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        yield int(taken.getsockname()[1])


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """The ``../shared/data`` folder; the tests need it (CI runs with it beside the checkout)."""
    assert SHARED_DATA.is_dir(), f"expected the shared data at {SHARED_DATA}"
    return SHARED_DATA


class FullDisk:
    """A text file whose writes fail with ENOSPC, and whose close fails again (as a buffered flush would)."""

    def __init__(self, real: Any) -> None:
        self.real = real

    def write(self, text: str) -> int:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    def flush(self) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    def fileno(self) -> int:
        return int(self.real.fileno())

    def close(self) -> None:
        self.real.close()
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    def __enter__(self) -> FullDisk:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


@pytest.fixture
def full_disk(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every file :func:`dialeval.atomic.atomic_write` opens is on a full disk (a mock: no real disk fills up)."""
    import dialeval.atomic as atomic

    real_fdopen = os.fdopen
    monkeypatch.setattr(atomic.os, "fdopen", lambda fd, *a, **k: FullDisk(real_fdopen(fd, *a, **k)))


@pytest.fixture
def full_disk_at(monkeypatch: pytest.MonkeyPatch) -> Callable[[str], None]:
    """Return a switch: after ``full_disk_at(".summary.json")`` the files :func:`dialeval.atomic.atomic_write` opens
    whose name holds those words are on a full disk, the others are written (a mock, as :func:`full_disk`)."""
    import dialeval.atomic as atomic

    real_fdopen = os.fdopen

    def switch(words: str) -> None:
        def fdopen(fd: int, *args: Any, **kwargs: Any) -> Any:
            handle = real_fdopen(fd, *args, **kwargs)
            return FullDisk(handle) if words in os.readlink(f"/proc/self/fd/{fd}") else handle

        monkeypatch.setattr(atomic.os, "fdopen", fdopen)

    return switch
