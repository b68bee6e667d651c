"""A real two-node Ray cluster on 127.0.0.1 for the engine tests, and the judges' llama.cpp server.

The cluster is started with ``ray start`` as a user would (a head node and a worker node, two
raylets, one CPU each) in a temp dir of its own, once per test session (all Ray tests are in one
xdist group, so one worker runs them). It is stopped by killing the processes that belong to that
temp dir, never with ``ray stop`` (which would kill every Ray process on the machine).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from tests.judges.conftest import llama_url

__all__ = ["RAY_ENV", "cluster", "llama_url"]


#: No usage reports, and no token auth: a stray ~/.ray/auth_token (left by any earlier ``ray.init()``)
#: otherwise makes the worker node's ``ray start`` fail with InvalidAuthToken.
RAY_ENV = {"RAY_USAGE_STATS_ENABLED": "0", "RAY_AUTH_MODE": "disabled"}


@dataclass(frozen=True)
class Cluster:
    """Where the test cluster listens."""

    address: str
    temp_dir: str


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _pids_of(temp_dir: str) -> set[int]:
    """Processes whose command line names ``temp_dir``, and their descendants."""
    parents: dict[int, int] = {}
    owned: set[int] = set()
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            cmdline = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            parents[int(proc.name)] = int((proc / "stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        if temp_dir in cmdline:
            owned.add(int(proc.name))
    grew = True
    while grew:
        extra = {pid for pid, ppid in parents.items() if ppid in owned and pid not in owned}
        owned |= extra
        grew = bool(extra)
    return owned


def _stop(temp_dir: str) -> None:
    for sig in (signal.SIGTERM, signal.SIGKILL):
        for pid in _pids_of(temp_dir):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, sig)
        time.sleep(1)


@pytest.fixture(scope="session")
def cluster() -> Iterator[Cluster]:
    """A Ray head node and a worker node on 127.0.0.1, one CPU each."""
    ray_cli = str(Path(sys.executable).parent / "ray")
    env = {**os.environ, **RAY_ENV}
    port = _free_port()
    temp = tempfile.mkdtemp(prefix="dr-", dir="/tmp")  # short: Ray's socket paths must stay under 107 chars
    common = ["--node-ip-address=127.0.0.1", "--num-cpus=1", "--object-store-memory=300000000", "--disable-usage-stats",
              f"--temp-dir={temp}"]
    head = [ray_cli, "start", "--head", f"--port={port}", "--include-dashboard=false", *common]
    worker = [ray_cli, "start", f"--address=127.0.0.1:{port}", *common]
    try:
        for cmd in (head, worker):
            proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120)
            assert proc.returncode == 0, f"{' '.join(cmd)} failed:\n{proc.stderr[-3000:]}"
        yield Cluster(f"127.0.0.1:{port}", temp)
    finally:
        _stop(temp)
        shutil.rmtree(temp, ignore_errors=True)  # its logs and sockets (2.4 MB a run) stayed in /tmp
