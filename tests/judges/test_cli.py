"""``dialeval judge list``, ``dialeval judge run`` and ``dialeval serve-model`` (a real subprocess on 127.0.0.1)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest
from tests.commands.cli_runner import COLS, ROWS, invoke, refused
from typer.testing import CliRunner

from dialeval.backends.llamacpp import free_port
from dialeval.cache import ScoreCache
from dialeval.cli import app
from dialeval.judges import protocol_names

BUILTIN = [
    "cpdscore-detail", "cpdscore-detail-ref", "cpdscore-dialogue", "cpdscore-simple", "cpdscore-simple-ref",
    "dialogadv", "diqad-holistic", "lmstyle-appropriateness",
]


def test_judge_list_shows_every_protocol() -> None:
    assert protocol_names() == BUILTIN
    res = CliRunner().invoke(app, ["judge", "list"], terminal_width=200)
    assert res.exit_code == 0, res.output
    for name in BUILTIN:
        assert name in res.output
    res = CliRunner().invoke(app, ["judge", "list", "--json"])
    assert res.exit_code == 0, res.output
    entries = json.loads(res.output)
    assert [e["name"] for e in entries] == BUILTIN
    dialogadv = entries[BUILTIN.index("dialogadv")]  # four dimensions, each with its level and expected value
    assert dialogadv["scale"] == [0.0, 1.0] and len(dialogadv["outputs"]) == 12
    assert "judge:dialogadv:fluency:expected" in dialogadv["outputs"]


def test_judge_run_names_an_unknown_protocol_as_a_protocol() -> None:
    """It said 'unknown metric "judge:llm-eval"; did you mean "judge:dialogadv"?', a name the user never wrote."""
    res = CliRunner().invoke(app, ["judge", "run", "--protocol", "cpdscore-simpel", "--limit", "1"], terminal_width=300)
    assert res.exit_code == 2
    assert res.output.strip() == ('error: field "--protocol": unknown protocol "cpdscore-simpel"; '
                                  'did you mean "cpdscore-simple"?')


def test_judge_run_takes_the_protocol_as_its_argument_too() -> None:
    """`judge run cpdscore-simple` said "Missing option '--protocol'"; the protocol may now be the argument, once."""
    res = CliRunner().invoke(app, ["judge", "run", "cpdscore-simpel", "--limit", "1"], terminal_width=300)
    assert res.output.strip() == ('error: field "--protocol": unknown protocol "cpdscore-simpel"; '
                                  'did you mean "cpdscore-simple"?')
    refused(invoke("judge", "run", "--limit", "1"), 'field "--protocol": give a protocol: --protocol NAME')
    refused(invoke("judge", "run", "cpdscore-simple", "--protocol", "dialogadv"),
            'field "--protocol": give the protocol once: --protocol or PROTOCOL, not both')  # fmt: skip


def test_judge_run_writes_scores_and_summary(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, llama_url: str) -> None:
    monkeypatch.setenv("DIALEVAL_CACHE", str(tmp_path / "cache"))
    out = tmp_path / "scores.jsonl"
    args = ["judge", "run", "--protocol", "lmstyle-appropriateness", "--benchmark", "usr-tc", "--limit", "1",
            "-p", "k=1", "-p", "max_tokens=8", "-p", "max_calls=3", "-o", str(out), "--no-cache"]
    res = CliRunner().invoke(app, args, terminal_width=160)
    assert res.exit_code == 0, res.output
    name = "judge:lmstyle-appropriateness"
    scores = [json.loads(x) for x in out.read_text().splitlines()]
    assert {s["metric"] for s in scores} == {name, f"{name}:expected"}
    lines = [s for s in scores if s["metric"] == name]
    assert len(lines) == 6  # one context of USR-TC has 6 systems
    summary = json.loads(out.with_suffix(".jsonl.summary.json").read_text())
    # the budget of 3 calls stops the run cleanly: 3 items asked, the rest skipped and counted
    assert summary["calls"] == 3 and summary["budget_skipped"] == 3
    assert summary["items"] == 6
    request = summary["request"]  # the run options as given, the protocol as the one metric
    assert request["metrics"] == [name] and request["params"] == ["k=1", "max_tokens=8", "max_calls=3"]
    assert request["no_cache"] is True
    assert sum(s["value"] is None for s in lines) == summary["items_missing"]
    assert "parse_failures" in res.output and "calls" in res.output
    # it did not say where it wrote, as every other command that writes does
    assert f"wrote 12 scores for 6 items to {out} and the summary to {out}.summary.json" in res.output
    # --json prints the summary file's figures and each output's counts, read here from the scores file (a second
    # run: its answers come from the request cache, so its summary is its own)
    out2 = tmp_path / "again.jsonl"
    res = CliRunner().invoke(app, [*args[:-3], "-o", str(out2), "--no-cache", "--json"])
    assert res.exit_code == 0, res.output
    printed = json.loads(res.output)
    summary = json.loads(out2.with_suffix(".jsonl.summary.json").read_text())
    assert {k: v for k, v in printed.items() if k not in ("seconds", "outputs")} == {
        k: v for k, v in summary.items() if k != "seconds"
    }
    again = [json.loads(x) for x in out2.read_text().splitlines()]
    assert set(printed["outputs"]) == {name, f"{name}:expected"}
    for metric, counts in printed["outputs"].items():
        got = [s["value"] for s in again if s["metric"] == metric and s["value"] is not None]
        assert counts["scored"] == len(got) and counts["missing"] == 6 - len(got)
        assert counts["mean"] == (sum(got) / len(got) if got else None)
    assert printed["items_from_score_cache"] == 0  # --no-cache
    # with a score cache (the request cache answers the first 3 items, so the budget of 3 calls judges all 6): a
    # rerun judges nothing; its counts said "items 0" and nothing of where its 6 scores came from
    cached = [*args[:-3], "--cache", str(tmp_path / "scores.sqlite"), "--json", "-o"]
    first = json.loads(CliRunner().invoke(app, [*cached, str(tmp_path / "c1.jsonl")]).output)
    second = json.loads(CliRunner().invoke(app, [*cached, str(tmp_path / "c2.jsonl")]).output)
    assert (first["items"], first["budget_skipped"], first["items_from_score_cache"]) == (6, 0, 0)
    assert (second["items"], second["items_from_score_cache"]) == (0, 6)



def test_judge_run_reads_your_own_data_as_score_does(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """judge run judged only a catalog benchmark. USR-TC's first context, exported as records and judged from the
    folder, gives the catalog run's items and values: the second run's answers all come from the request cache."""
    monkeypatch.setenv("DIALEVAL_CACHE", str(tmp_path / "cache"))
    assert invoke("data", "export", "-b", "usr-tc", "--limit", "1", "-o", tmp_path / "rec").exit_code == 0
    common = ["judge", "run", "--protocol", "lmstyle-appropriateness", "--limit", "1", "-p", "k=1",
              "-p", "max_tokens=8", "--no-cache"]  # fmt: skip
    runs = {"catalog": ["-b", "usr-tc"], "folder": ["--path", tmp_path / "rec"]}
    got = {}
    for name, args in runs.items():
        out = tmp_path / f"{name}.jsonl"
        res = invoke(*common, *args, "-o", out)
        assert res.exit_code == 0, res.output
        got[name] = [(s["item_id"], s["metric"], s["value"]) for s in map(json.loads, out.read_text().splitlines())]
    assert len(got["catalog"]) == 12 and got["folder"] == got["catalog"]  # 6 systems, score and expected value
    summary = json.loads((tmp_path / "folder.jsonl.summary.json").read_text())
    assert summary["cache_hits"] == 6 and summary["calls"] == 0


def test_judge_run_on_a_full_disk_at_its_summary_leaves_no_scores(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, full_disk_at: Callable[[str], None]
) -> None:
    """The scores were written, then the summary failed: scores without their request were left behind."""
    monkeypatch.setenv("DIALEVAL_CACHE", str(tmp_path / "cache"))
    full_disk_at(".summary.json.")
    out = tmp_path / "j.jsonl"
    res = invoke("judge", "run", "--protocol", "lmstyle-appropriateness", "-b", "usr-tc", "--limit", "1", "-p", "k=1",
                 "-p", "max_tokens=8", "-p", "max_calls=1", "--no-cache", "--allow-failures", "-o", out)  # fmt: skip
    refused(res, f"{out}.summary.json: cannot be written: No space left on device")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cache"]


def test_judge_run_refuses_to_write_over_its_protocol_or_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """--output naming the --protocol file, or a summary (<out>.summary.json) that would land on the --cache, is one
    error line before the benchmark is loaded or a backend is asked (a dead port here); the input is unchanged."""
    monkeypatch.setenv("DIALEVAL_CACHE", str(tmp_path / "cache"))
    from importlib.resources import files

    protocol = tmp_path / "mine.yaml"
    protocol.write_text((files("dialeval.judges") / "protocols" / "cpdscore-simple.yaml").read_text(encoding="utf-8"))
    before = protocol.read_bytes()
    dead = ["-p", "backend=openai-compatible", "-p", f"base_url=http://127.0.0.1:{free_port()}/v1", "-p", "model=m",
            "--limit", "1"]  # fmt: skip
    res = invoke("judge", "run", "--protocol", protocol, *dead, "--out", protocol, "--no-cache")
    line = refused(res, f'{protocol}: field "--output"', "is the file given to --protocol")
    assert "destroy the input" in line
    assert protocol.read_bytes() == before
    out = tmp_path / "scores.jsonl"
    cache = tmp_path / "scores.jsonl.summary.json"
    ScoreCache(cache).close()
    kept = cache.read_bytes()
    res = invoke("judge", "run", "--protocol", "cpdscore-simple", *dead, "--out", out, "--cache", cache)
    refused(res, f'{cache}: field "--output"', "is the file given to --cache")
    assert cache.read_bytes() == kept and not out.exists()


@pytest.mark.parametrize("name", ["mine.YAML", "mine.yml.txt"])
def test_judge_run_reads_a_protocol_file_of_any_suffix(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A --protocol with a suffix is a file (load_protocol read it so), but the run took only .yaml and .yml for one:
    mine.YAML loaded, then failed as 'field "--metrics": unknown metric "judge:mine.YAML"' (no --metrics was given).
    Now it is judge:custom with that file, and the run gets as far as the (dead) backend."""
    monkeypatch.setenv("DIALEVAL_CACHE", str(tmp_path / "cache"))
    from importlib.resources import files

    protocol = tmp_path / name
    protocol.write_text((files("dialeval.judges") / "protocols" / "cpdscore-simple.yaml").read_text(encoding="utf-8"))
    url = f"http://127.0.0.1:{free_port()}/v1"
    res = invoke("judge", "run", "--protocol", protocol, "-p", "backend=openai-compatible", "-p", f"base_url={url}",
                 "-p", "model=m", "-p", "max_retries=0", "--limit", "1", "--no-cache")  # fmt: skip
    errors = [line for line in res.output.splitlines() if line.startswith("error:")]
    assert res.exit_code != 0 and len(errors) == 1, res.output
    assert url in errors[0] and "connection refused" in errors[0], res.output


@pytest.mark.parametrize("param", ["protocol", "judge:custom.protocol"])
def test_judge_run_refuses_a_protocol_given_by_option_and_by_param(
    param: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """--protocol mine.yaml -p protocol=other.yaml judged mine.yaml and said nothing of other.yaml (--protocol won).
    Two protocol files are refused. (A built-in's name with -p protocol is refused as judge:custom's parameter:
    tests/judges/test_http_judge.py.)"""
    monkeypatch.chdir(tmp_path)
    from importlib.resources import files

    for name in ("mine.yaml", "other.yaml"):
        (tmp_path / name).write_text((files("dialeval.judges") / "protocols" / "cpdscore-simple.yaml").read_text())
    dead = ["-p", "backend=openai-compatible", "-p", f"base_url=http://127.0.0.1:{free_port()}/v1", "-p", "model=m"]
    res = invoke("judge", "run", "--protocol", "mine.yaml", "-p", f"{param}=other.yaml", *dead, "--limit", "1",
                 "--no-cache")  # fmt: skip
    refused(res, 'field "--protocol": give the protocol once: --protocol or -p protocol, not both')


@pytest.mark.parametrize("given", [[], ["-p", "judge:custom.protocol="]])
def test_judge_custom_without_a_protocol_says_which_parameter(given: list[str], tmp_path: Path) -> None:
    """-m judge:custom without its protocol file said 'unknown protocol ""; known: cpdscore-detail, ...', naming
    neither the metric nor the parameter that was missing."""
    out = tmp_path / "scores.jsonl"
    dead = ["-p", "backend=openai-compatible", "-p", f"base_url=http://127.0.0.1:{free_port()}/v1", "-p", "model=m"]
    res = invoke("score", "-b", "usr-tc", "--limit", "1", "-m", "judge:custom", *given, *dead, "-o", out, "--no-cache")
    refused(res, 'field "--param": judge:custom.protocol: give a protocol YAML file (-p judge:custom.protocol=')
    assert not out.exists()


def test_a_protocol_file_that_needs_references_is_refused_on_items_without_one(tmp_path: Path) -> None:
    """needs_references: true in a user's file was not read (judge:custom's class says no): items without a
    reference were judged with {{reference}} left empty. The built-in *-ref protocols were refused, as this is now."""
    from importlib.resources import files

    text = (files("dialeval.judges") / "protocols" / "cpdscore-simple-ref.yaml").read_text(encoding="utf-8")
    assert "needs_references: true" in text and "{{reference}}" in text
    protocol = tmp_path / "mine.yaml"
    protocol.write_text(text)
    table = tmp_path / "t.csv"
    table.write_text(ROWS)
    dead = ["-p", "backend=openai-compatible", "-p", f"base_url=http://127.0.0.1:{free_port()}/v1", "-p", "model=m"]
    out = tmp_path / "scores.jsonl"
    res = invoke("judge", "run", "--protocol", protocol, "--path", table, *COLS, *dead, "-o", out, "--no-cache")
    refused(res, 'metric "judge:custom" needs references; 3 of 3 items have none')
    assert not out.exists()


def test_judge_run_refuses_to_write_over_a_step1_protocol_a_model_file_or_the_default_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The files a run reads beyond --protocol and --cache: a protocol file's step1_protocol (by path), a -p value
    that is a file (a local model), and the default score cache ($DIALEVAL_SCORE_CACHE); each is one line."""
    from importlib.resources import files

    monkeypatch.chdir(tmp_path)
    builtin = files("dialeval.judges") / "protocols"
    (tmp_path / "detail.yaml").write_text((builtin / "cpdscore-detail.yaml").read_text(encoding="utf-8"))
    dialogue = (builtin / "cpdscore-dialogue.yaml").read_text(encoding="utf-8")
    assert "step1_protocol: cpdscore-detail\n" in dialogue
    by_path = dialogue.replace("step1_protocol: cpdscore-detail", "step1_protocol: detail.yaml")
    (tmp_path / "mine.yaml").write_text(by_path)
    before = (tmp_path / "detail.yaml").read_bytes()
    dead = ["-p", "backend=openai-compatible", "-p", f"base_url=http://127.0.0.1:{free_port()}/v1", "-p", "model=m",
            "--limit", "1"]  # fmt: skip
    res = invoke("judge", "run", "--protocol", "mine.yaml", *dead, "--out", "detail.yaml", "--no-cache")
    refused(res, 'detail.yaml: field "--output"', "is the step1_protocol of --protocol: writing it would destroy")
    assert (tmp_path / "detail.yaml").read_bytes() == before
    model = tmp_path / "model.gguf"
    model.write_bytes(b"GGUF weights")
    res = invoke("judge", "run", "--protocol", "cpdscore-simple", "-p", "backend=llama-cpp", "-p", f"model={model}",
                 "--limit", "1", "--out", model, "--no-cache")  # fmt: skip
    refused(res, f'{model}: field "--output"', "is the file given to -p model")
    assert model.read_bytes() == b"GGUF weights"
    cache = tmp_path / "default.sqlite"
    ScoreCache(cache).close()
    kept = cache.read_bytes()
    monkeypatch.setenv("DIALEVAL_SCORE_CACHE", str(cache))
    res = invoke("judge", "run", "--protocol", "cpdscore-simple", *dead, "--out", cache)
    refused(res, f'{cache}: field "--output"', "is the default score cache ($DIALEVAL_SCORE_CACHE")
    assert cache.read_bytes() == kept

def test_serve_model_is_an_openai_compatible_server() -> None:
    port = free_port()
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen(
        [sys.executable, "-c", "from dialeval.cli import app; app()", "serve-model", "--port", str(port),
         "--parallel", "1", "--n-ctx", "512"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env,
    )
    try:
        body = {"model": "x", "messages": [{"role": "user", "content": "Say hi."}], "max_tokens": 3, "seed": 1}
        deadline = time.time() + 120
        while True:
            try:
                r = httpx.post(f"http://127.0.0.1:{port}/v1/chat/completions", json=body, timeout=60)
                if r.status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert time.time() < deadline, "serve-model did not answer within 120 s"
            time.sleep(0.5)
        data = r.json()
        assert data["choices"][0]["message"]["content"]
        assert data["usage"]["completion_tokens"] <= 3
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_serve_model_refuses_what_it_cannot_serve_in_one_line(tmp_path: Path, taken_port: int) -> None:
    """Each used to be a traceback (FileNotFoundError, llama.cpp's RuntimeError) or, for the port and
    --parallel 0, a server that said "listening on http://127.0.0.1:99999" and stayed up; a file that is no GGUF
    model came after 17 lines of llama.cpp's log (it is refused before llama.cpp starts now). A subprocess
    with a timeout, as a refusal that does not happen blocks serving."""
    (tmp_path / "notes.gguf").write_text("not a model\n")
    cases = {
        ("--port", "99999"): 'field "--port": must be a TCP port, 1 to 65535, got 99999',
        ("--port", str(taken_port)): f'field "--port": 127.0.0.1:{taken_port} cannot be served',
        ("--parallel", "0"): 'field "--parallel": must be at least 1, got 0',
        ("--n-ctx", "-5"): 'field "--n-ctx": must be at least 1, got -5',
        # an OverflowError traceback: llama.cpp's context, --n-ctx times --parallel, is a C int
        ("--n-ctx", str(10**20)): 'field "--n-ctx": must be at most 536,870,911 (times --parallel 4, llama.cpp',
        ("--parallel", str(10**20)): 'field "--parallel": must be at most 2,147,483,647 (llama.cpp',
        # the model's errors named the file and no option
        ("--model", str(tmp_path / "none.gguf")): f"{tmp_path / 'none.gguf'}: field \"--model\": model file not found",
        ("--model", str(tmp_path / "notes.gguf")): f"{tmp_path / 'notes.gguf'}: field \"--model\": not a GGUF file: "
                                                   "it does not begin",
        ("--model", str(tmp_path)): f'{tmp_path}: field "--model": is a folder; the llamacpp backend loads a GGUF file',
    }
    for args, message in cases.items():
        # a default the case gives again would be an option given twice, which is refused before its own check
        defaults = [w for opt, value in (("--port", str(free_port())), ("--n-ctx", "512")) if opt not in args
                    for w in (opt, value)]  # fmt: skip
        res = subprocess.run(
            [sys.executable, "-c", "from dialeval.cli import app; app()", "serve-model", *defaults, *args],
            capture_output=True, text=True, timeout=60,
        )  # fmt: skip
        errors = [line for line in res.stderr.splitlines() if line.startswith("error:")]
        assert res.returncode == 2 and "Traceback" not in res.stderr, res.stderr
        assert len(errors) == 1 and message in errors[0], res.stderr
        assert res.stderr.strip() == errors[0], res.stderr  # llama.cpp logged 17 lines before a file that is no GGUF


def test_a_judge_with_a_model_file_llama_cpp_cannot_load_is_one_error(tmp_path: Path) -> None:
    """-p model=FILE that is not a GGUF model: llama.cpp's RuntimeError reached the user as a traceback."""
    (tmp_path / "notes.gguf").write_text("not a model\n")
    res = invoke("judge", "run", "--protocol", "dialogadv", "--limit", "1", "-p", f"model={tmp_path / 'notes.gguf'}",
                 "--out", tmp_path / "j.jsonl", "--no-cache")  # fmt: skip
    refused(res, f"{tmp_path / 'notes.gguf'}: not a GGUF file: it does not begin with the bytes GGUF")
    assert not (tmp_path / "j.jsonl").exists()


@pytest.mark.parametrize("backend", ["llamacpp", "openai-compatible"])
@pytest.mark.parametrize("protocol", [*BUILTIN, "user-file"])
def test_every_protocol_runs_from_the_cli_on_both_backends(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, llama_url: str, protocol: str, backend: str
) -> None:
    """Each protocol end to end through `dialeval judge run`: in process, and against the real llama.cpp server.

    A budget of 2 calls keeps the 135M model's time bounded; the run must stop cleanly, write every item
    (judged or counted as skipped) and a summary whose counts add up.
    """
    monkeypatch.setenv("DIALEVAL_CACHE", str(tmp_path / "cache"))
    if protocol == "user-file":  # a user's own protocol file, no Python: a renamed copy of a packaged one
        from importlib.resources import files

        packaged = files("dialeval.judges") / "protocols" / "cpdscore-simple.yaml"
        text = packaged.read_text(encoding="utf-8").replace("name: cpdscore-simple", "name: my-judge")
        assert "name: my-judge" in text
        (tmp_path / "my-judge.yaml").write_text(text)
        protocol = str(tmp_path / "my-judge.yaml")
    out = tmp_path / "scores.jsonl"
    args = ["judge", "run", "--protocol", protocol, "--limit", "1", "-p", "k=1", "-p", "max_tokens=16",
            "-p", "max_calls=2", "--out", str(out), "-p", f"backend={backend}", "--no-cache"]
    if backend == "openai-compatible":
        args += ["-p", f"base_url={llama_url}", "-p", "model=smollm2"]
    res = CliRunner().invoke(app, args, terminal_width=160)
    assert res.exit_code == 0, res.output
    summary = json.loads(out.with_suffix(".jsonl.summary.json").read_text())
    scores = [json.loads(x) for x in out.read_text().splitlines()]
    assert summary["calls"] == 2  # real requests (a fresh request cache)
    # the two-step dialogue judge asks step 1 about the context's earlier system turns once per dialogue;
    # the six responses share that context, so (one request at a time) the repeats hit the run's own cache
    if protocol == "cpdscore-dialogue":
        assert summary["cache_hits"] > 0 or backend == "openai-compatible"  # 8 in flight: sent before cached
    else:
        assert summary["cache_hits"] == 0
    assert summary["items"] >= 1 and len(scores) >= summary["items"]
    name = "my-judge" if protocol.endswith(".yaml") else protocol
    assert summary["protocol"] == name and f"protocol:{name}" in summary["signature"]
    expected_backend = f"openai-compatible:smollm2@{llama_url}" if backend != "llamacpp" else "llamacpp:"
    assert expected_backend in summary["signature"]
    assert all(s["signature"] == scores[0]["signature"] for s in scores)
    assert "parse_failures" in res.output


def test_api_key_reaches_the_server_but_no_file_log_or_output(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, llama_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    import logging

    from dialeval.backends import make_backend

    secret = "sk-test-" + "7" * 24
    monkeypatch.setenv("MY_JUDGE_KEY", secret)
    monkeypatch.setenv("DIALEVAL_CACHE", str(tmp_path / "cache"))
    backend = make_backend("openai-compatible", "smollm2", base_url=llama_url, api_key_env="MY_JUDGE_KEY")
    assert backend._client.headers["Authorization"] == f"Bearer {secret}"  # type: ignore[attr-defined]
    out = tmp_path / "out" / "scores.jsonl"
    args = ["judge", "run", "--protocol", "cpdscore-simple", "--limit", "1", "-p", "k=1", "-p", "max_tokens=8",
            "-p", "max_calls=2", "-p", "backend=openai-compatible", "-p", f"base_url={llama_url}",
            "-p", "model=smollm2", "-p", "api_key_env=MY_JUDGE_KEY", "--out", str(out), "--no-cache"]
    with caplog.at_level(logging.DEBUG):
        res = CliRunner().invoke(app, args, terminal_width=160)
    assert res.exit_code == 0, res.output
    assert json.loads(out.with_suffix(".jsonl.summary.json").read_text())["calls"] == 2
    written = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert any(p.suffix == ".sqlite" for p in written)  # the request cache was written too
    for p in written:
        assert secret.encode() not in p.read_bytes(), p
    assert secret not in res.output and secret not in caplog.text


def test_the_run_notes_are_lines_under_the_tables_not_a_list_in_a_cell() -> None:
    """The counts table showed the notes as Python's list: "notes  ['the server refused response_format ...']"."""
    from rich.console import Console

    from dialeval.judges.cli import summary_table

    summary = {"protocol": "p", "items": 2, "notes": ["the protocol declares no answer shape", "requests failed"]}
    console = Console(width=200, record=True)
    console.print(summary_table(summary, {"judge:p": [1.0, None]}))
    shown = console.export_text()
    assert "note: the protocol declares no answer shape\nnote: requests failed\n" in shown
    assert "[" not in shown and "notes" not in shown
    assert "items" in shown  # the other counts stay in the table


def test_judge_run_says_which_contexts_of_your_table_its_limit_left_out(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, llama_url: str
) -> None:
    """The default --limit judged the first 5 contexts of a user's table, and the rest went unsaid: "wrote 10
    scores for 5 items", nothing of the rows never judged. A budget of one call keeps the model's time bounded."""
    monkeypatch.setenv("DIALEVAL_CACHE", str(tmp_path / "cache"))
    table = tmp_path / "t.csv"
    table.write_text(ROWS)  # 3 rows, 3 contexts
    out = tmp_path / "scores.jsonl"
    args = ["judge", "run", "cpdscore-simple", "--path", str(table), *COLS, "--limit", "2", "-p", "max_calls=1",
            "-p", "backend=openai-compatible", "-p", f"base_url={llama_url}",
            "-p", "model=smollm2", "-o", str(out), "--no-cache"]  # fmt: skip
    res = CliRunner().invoke(app, args, terminal_width=200)
    assert res.exit_code == 0, res.output
    note = "judged the first 2 of 3 contexts (--limit, 5 by default), 1 left out: --limit 3 judges all"
    assert f"note: {note}" in " ".join(res.output.split())  # under the tables, wrapped at the terminal's width
    assert note in json.loads(out.with_suffix(".jsonl.summary.json").read_text())["notes"]
    assert len(out.read_text().splitlines()) == 2 * 2  # two items, a score and an expected score each
    args[args.index("--limit") + 1] = "3"  # all of them: no note
    res = CliRunner().invoke(app, args, terminal_width=200)
    assert res.exit_code == 0, res.output
    assert "note: judged the first" not in res.output


def test_an_interrupted_judge_run_says_where_its_answers_are_kept_and_a_rerun_resumes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, llama_url: str
) -> None:
    """A real SIGINT after the first request. It said "the items scored so far are kept in the score cache", which
    keeps only finished batches of 64 items (none here); the answer is in the request cache, and a rerun takes it
    from there. With -p cache=no nothing of this run was kept, though the line said so."""
    from tests.test_cli import SIGINT_AT_SECOND_REQUEST, _run_patched

    monkeypatch.setenv("DIALEVAL_CACHE", str(tmp_path / "cache"))
    patch = SIGINT_AT_SECOND_REQUEST
    args = ["judge", "run", "cpdscore-simple", "--limit", "1", "-p", "backend=openai-compatible", "-p",
            f"base_url={llama_url}", "-p", "model=smollm2", "-p", "in_flight=1", "-o", "s.jsonl"]  # fmt: skip
    res = _run_patched(tmp_path, patch, args)
    assert res.returncode == 130, res.stderr
    assert res.stderr.splitlines()[-1] == (
        "interrupted; nothing written to s.jsonl; the judge's answers so far are kept in the request cache (each "
        "finished batch of 64 items in the score cache), so a rerun resumes")
    res = _run_patched(tmp_path, "", [*args, "-p", "max_calls=1", "--json"])  # the 5 others: one call, 4 skipped
    assert res.returncode == 0, res.stderr
    summary = json.loads(res.stdout)
    assert (summary["cache_hits"], summary["calls"], summary["budget_skipped"]) == (1, 1, 4)
    res = _run_patched(tmp_path, patch, [*args, "-p", "cache=no"])
    assert res.returncode == 130, res.stderr
    assert res.stderr.splitlines()[-1] == ("interrupted; nothing written to s.jsonl; each finished batch of 64 items "
                                           "is kept in the score cache, so a rerun resumes")  # fmt: skip


def test_a_mean_score_that_rounds_to_zero_is_no_negative_zero() -> None:
    """The mean column printed f"{mean:.3f}": a -3..3 judge's mean of -0.0004 read "-0.000"."""
    from rich.console import Console

    from dialeval.judges.cli import summary_table

    console = Console(width=200, record=True)
    console.print(summary_table({"protocol": "p", "items": 2}, {"judge:p": [-0.0008, 0.0]}))
    shown = console.export_text()
    assert "0.000" in shown and "-0.000" not in shown
