"""A judge whose backend is dead or failing, through the CLI, against real sockets on 127.0.0.1.

A closed port, a listener that accepts and never answers, a ``file://`` URL: the run ends at
the first request with one line naming the URL and the cause, and writes nothing. A server
that answers HTTP 500 leaves null scores whose reason says so, and the exit is 1 unless
``--allow-failures``. With the real llama.cpp server behind the fault proxy, items scored
before the failures are kept and the failed ones are tried again on the next run.
"""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.backends.test_openai_compat import Reply, Scripted
from tests.judges.test_fault_injection import FaultProxy
from typer.testing import CliRunner, Result

from dialeval.backends.llamacpp import free_port
from dialeval.cli import app

NAME = "judge:lmstyle-appropriateness"


@pytest.fixture(autouse=True)
def _own_caches(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DIALEVAL_CACHE", str(tmp_path / "cache"))


@pytest.fixture
def silent_url() -> Iterator[str]:
    """A listener on 127.0.0.1 that accepts connections (the kernel's backlog) and never answers."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen(64)
        yield f"http://127.0.0.1:{s.getsockname()[1]}/v1"


@pytest.fixture
def http500() -> Iterator[FaultProxy]:
    """A real HTTP server on 127.0.0.1 that answers every request with HTTP 500."""
    proxy = FaultProxy("http://127.0.0.1:9/v1", dict.fromkeys(range(1, 1000), "500"))
    yield proxy
    proxy.close()


def _judge(url: str, out: Path, *extra: str) -> list[str]:
    return ["judge", "run", "--protocol", "lmstyle-appropriateness", "--limit", "1", "--out", str(out),
            "-p", "backend=openai-compatible", "-p", f"base_url={url}", "-p", "model=m",
            "-p", "max_retries=0", *extra]  # fmt: skip


def _errors(output: str) -> list[str]:
    return [line for line in output.splitlines() if line.startswith("error:")]


@pytest.mark.parametrize("kind", ["refused", "silent", "file", "port"])
def test_an_unreachable_backend_ends_the_run_with_one_line(
    kind: str, tmp_path: Path, silent_url: str
) -> None:
    url, cause = {
        "refused": (f"http://127.0.0.1:{free_port()}/v1", "connection refused"),
        "silent": (silent_url, "timeout after 1 s"),
        "file": ("file:///tmp/v1", "must start with http:// or https://"),
        "port": ("http://127.0.0.1:99999/v1", "99999 is not a TCP port (1 to 65535)"),  # was "connection refused"
    }[kind]
    out = tmp_path / "scores.jsonl"
    res = CliRunner().invoke(app, _judge(url, out, "-p", "timeout=1"), terminal_width=300)
    assert res.exit_code != 0, res.output
    errors = _errors(res.output)
    assert len(errors) == 1 and url in errors[0] and cause in errors[0], res.output
    assert "Traceback" not in res.output
    assert not list(tmp_path.glob("scores.jsonl*"))


@pytest.mark.parametrize("command", ["score", "benchmark", "stress"])
def test_every_command_with_a_judge_stops_on_an_unreachable_backend(command: str, tmp_path: Path) -> None:
    url = f"http://127.0.0.1:{free_port()}/v1"
    out = tmp_path / ("scores.jsonl" if command == "score" else "run")
    args = [command, "-b", "usr-tc", "--limit", "1", "-m", NAME, "-o", str(out), "--no-cache",
            "-p", "backend=openai-compatible", "-p", f"base_url={url}", "-p", "model=m", "-p", "max_retries=0"]
    if command == "stress":
        args += ["--perturb", "negation", "--boot", "10", "--plot", "none"]
    res = CliRunner().invoke(app, args, terminal_width=300)
    assert res.exit_code != 0, res.output
    errors = _errors(res.output)
    assert len(errors) == 1 and url in errors[0] and "connection refused" in errors[0], res.output
    assert not out.exists()


def test_http_500_gives_null_scores_that_say_why_and_exit_1(tmp_path: Path, http500: FaultProxy) -> None:
    out = tmp_path / "scores.jsonl"
    args = _judge(http500.url, out, "--cache", str(tmp_path / "scores.sqlite"))
    res = CliRunner().invoke(app, args, terminal_width=300)
    assert res.exit_code == 1, res.output
    assert "6 item(s) got no score because judge requests failed" in res.output
    scores = [json.loads(x) for x in out.read_text().splitlines()]
    assert scores and all(s["value"] is None for s in scores)
    assert all("HTTP 500" in s["extras"]["error"] for s in scores)
    summary = json.loads(out.with_suffix(".jsonl.summary.json").read_text())
    assert summary["request_failures"] == 6

    # the failed items are not kept as nulls in the score cache: the next run asks again
    seen = http500.seen
    res = CliRunner().invoke(app, [*args, "--allow-failures"])
    assert res.exit_code == 0, res.output
    assert http500.seen == seen + 6


def test_a_refused_api_key_ends_the_run_at_the_first_request_with_one_line(tmp_path: Path) -> None:
    """A wrong key's HTTP 401 was a null score per item, each asked twice (with and without response_format),
    then exit 1 "6 item(s) got no score": a run of thousands of items sent thousands of refused requests and
    wrote a file of nulls. It ends at the first request (in_flight=1), like an unreachable server: one line
    naming the URL and the key's variable, exit 2, nothing written."""
    server = Scripted([Reply(401, b'{"error": {"message": "Incorrect API key provided"}}')])
    try:
        out = tmp_path / "scores.jsonl"
        args = [*_judge(server.url, out, "-p", "in_flight=1"), "-p", "api_key_env=MY_KEY"]
        res = CliRunner().invoke(app, args, env={"MY_KEY": "sk-wrong"}, terminal_width=300)
    finally:
        server.close()
    assert res.exit_code == 2, res.output
    assert _errors(res.output) == [f"error: {server.url}/chat/completions refused the API key in $MY_KEY: HTTP 401: "
                                   '{"error": {"message": "Incorrect API key provided"}}'], res.output
    assert len(server.seen) == 1 and not list(tmp_path.glob("scores.jsonl*"))


def _behind_proxy(llama_url: str, script: dict[int, str], out: Path, cache: Path) -> tuple[Result, int]:
    """Judge through a fault proxy in front of the real server; return the result and the requests it saw."""
    proxy = FaultProxy(llama_url, script)
    try:
        args = [*_judge(proxy.url, out, "-p", "in_flight=1", "-p", "max_tokens=8", "--cache", str(cache))]
        return CliRunner().invoke(app, args, terminal_width=300), proxy.seen
    finally:
        proxy.close()


def _main_scores(out: Path) -> dict[str, dict[str, Any]]:
    return {s["item_id"]: s for s in map(json.loads, out.read_text().splitlines()) if s["metric"] == NAME}


@pytest.mark.slow
def test_failures_after_scored_items_are_counted_and_tried_again(tmp_path: Path, llama_url: str) -> None:
    out, cache = tmp_path / "scores.jsonl", tmp_path / "scores.sqlite"
    # in_flight=1: requests 1-6 are the six items in order; items 5 and 6 get HTTP 500
    res, _ = _behind_proxy(llama_url, {5: "500", 6: "500"}, out, cache)
    assert res.exit_code == 1, res.output
    assert ('2 item(s) got no score because judge requests failed (2 x request failed: HTTP 500: {"error": '
            '"injected"})') in res.output
    scores = _main_scores(out)
    failed = [i for i, s in scores.items() if "HTTP 500" in s["extras"].get("error", "")]
    assert len(scores) == 6 and len(failed) == 2 and all(scores[i]["value"] is None for i in failed)
    assert json.loads(out.with_suffix(".jsonl.summary.json").read_text())["request_failures"] == 2

    # the server is healthy again: the failed items are not stuck as nulls in the score cache
    res, seen = _behind_proxy(llama_url, {}, out, cache)
    assert res.exit_code == 0, res.output
    assert all("HTTP 500" not in s["extras"].get("error", "") for s in _main_scores(out).values())
    assert seen >= 2  # the two failed items were asked again; the four scored ones came from the cache


@pytest.mark.parametrize(("key", "at"), [("clé", 3), ("sk-1\nsk-2", 5), ("\tsk-1", 1)])
def test_an_api_key_no_http_header_can_carry_is_one_line_that_does_not_show_it(
    tmp_path: Path, key: str, at: int
) -> None:
    """A key with an "é" ended the first request in httpx's UnicodeEncodeError traceback; one with a line break
    was "cannot reach URL: Illegal header value b'Bearer sk-1\\nsk-2'" from a live server (the key in the error);
    a tab went to the server, which would answer 401. The line names the variable, never the key."""
    out = tmp_path / "scores.jsonl"
    args = [*_judge(f"http://127.0.0.1:{free_port()}/v1", out), "-p", "api_key_env=MY_KEY"]
    res = CliRunner().invoke(app, args, env={"MY_KEY": key}, terminal_width=300)
    assert res.exit_code == 2, res.output
    assert _errors(res.output) == [f'error: field "$MY_KEY": character {at} of the key is not printable ASCII, which '
                                   "an HTTP header cannot carry: was the key copied whole and alone?"], res.output
    assert all(part not in res.output for part in key.split())
    assert not out.exists()


@pytest.mark.parametrize("command", ["judge", "generate"])
def test_a_base_url_with_a_password_is_refused_before_it_reaches_a_signature(tmp_path: Path, command: str) -> None:
    """http://me:secret@host/v1 was sent, and written into the signature of every score, run.json and the caches;
    the API key's own variable is never recorded. The line does not show the password."""
    url = f"http://me:secret@127.0.0.1:{free_port()}/v1"
    out = tmp_path / "out"
    args = {"judge": _judge(url, out), "generate": ["generate", "--limit", "1", "--model", f"m@{url}", "-o", str(out)]}
    res = CliRunner().invoke(app, args[command], terminal_width=300)
    assert res.exit_code == 2, res.output
    # judge run names the parameter as its other -p errors do (it said field "base_url" before the signature was
    # made under parameter_errors, which names no option)
    field = '"--param": judge:lmstyle-appropriateness.base_url:' if command == "judge" else '"--model":'
    assert _errors(res.output) == [f"error: field {field} the URL holds a user name or password (USER:PASSWORD@), "
                                   "which every signature would record: give the key in $OPENAI_API_KEY instead"]
    assert "secret" not in res.output and not out.exists()
