"""Fixtures for the human-study tests: a small study on disk and a real uvicorn server on 127.0.0.1."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from dialeval.human.design import StudyConfig, create_study
from dialeval.human.protocol import load_protocol
from dialeval.schema import Candidate, Dialogue, Rating, Turn

ROOT_ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"
HOSTILE = '<script>window.__pwned=1</script> <img src=x onerror="window.__pwned=2"> <b>unclosed <i>tags </div>'


def dialogues_and_candidates(n_contexts: int = 6, hostile: bool = False) -> tuple[dict[str, Dialogue], list[Candidate]]:
    dialogues = {}
    candidates = []
    for i in range(n_contexts):
        first = HOSTILE if hostile and i == 0 else f"I went hiking on trail {i} yesterday."
        d = Dialogue(
            id=f"d{i}",
            turns=[
                Turn(speaker="A", text=first),
                Turn(speaker="B", text="Nice, how was it?"),
                Turn(speaker="A", text="Tiring."),
            ],
        )
        dialogues[d.id] = d
        for s in ("m1", "m2"):
            text = HOSTILE if hostile and i == 0 and s == "m1" else f"{s}: rest well after trail {i}."
            candidates.append(
                Candidate(id=f"d{i}:{s}", dialogue_id=d.id, turn_index=2, system=s, text=text, references=[f"ref {i}"])
            )
    return dialogues, candidates


def make_study(folder: Path, *, qualification: bool = False, hostile: bool = False, **kw: object) -> dict[str, object]:
    proto = load_protocol("mousavi-turn")
    dialogues, candidates = dialogues_and_candidates(hostile=hostile)
    qual = None
    if qualification:
        q_cands = [c for c in candidates if c.dialogue_id == "d5"]
        main = [c for c in candidates if c.dialogue_id != "d5"]
        gold = [
            Rating(
                item_id=c.id, dimension=crit.name, annotator=ref, value=("positive" if c.system == "m1" else "negative")
            )
            for c in q_cands
            for crit in proto.criteria
            for ref in ("ref1", "ref2")
        ]
        qual = (q_cands, gold)
        candidates = main
    config = StudyConfig(
        protocol=proto.name,
        protocol_version=proto.version,
        annotators=tuple(kw.pop("annotators", ("a01", "a02", "a03"))),  # type: ignore[arg-type]
        per_item=int(kw.pop("per_item", 2)),  # type: ignore[call-overload]
        batch_size=int(kw.pop("batch_size", 2)),  # type: ignore[call-overload]
        seed=0,
    )
    create_study(folder, proto, dialogues, candidates, config, qualification=qual)
    return dict(json.loads((folder / "access.json").read_text()))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Server:
    folder: Path
    port: int
    proc: subprocess.Popen[bytes]

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def kill(self) -> None:
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(timeout=10)


def start_server(folder: Path, port: int | None = None) -> Server:
    """Run `dialeval study serve` in a child process and wait until it answers."""
    port = port or free_port()
    cmd = [sys.executable, "-m", "dialeval.cli", "study", "serve", str(folder), "--port", str(port)]
    code = "from dialeval.cli import app; app()"
    proc = subprocess.Popen(
        [sys.executable, "-c", code, *cmd[3:]],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={**os.environ},
        start_new_session=True,
    )
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"http://127.0.0.1:{port}/", timeout=1).status_code == 200:
                return Server(folder, port, proc)
        except httpx.HTTPError:
            time.sleep(0.1)
    proc.kill()
    raise RuntimeError("server did not start")


@pytest.fixture
def study(tmp_path: Path) -> dict[str, object]:
    return {"folder": tmp_path / "study", "access": make_study(tmp_path / "study")}


@pytest.fixture
def server(study: dict[str, object]) -> Iterator[Server]:
    s = start_server(study["folder"])  # type: ignore[arg-type]
    yield s
    if s.proc.poll() is None:
        s.proc.terminate()
        s.proc.wait(timeout=10)
