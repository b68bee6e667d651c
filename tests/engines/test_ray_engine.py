"""The Ray engine on a real local Ray cluster: same numbers and signatures as the local engine, resume, worker loss.

The cluster is real: a head node and a second worker node (separate raylet processes) on 127.0.0.1,
one CPU each, started with ``ray start`` as a user would, not ``local_mode``. Drivers run as separate
processes (``dialeval score --engine ray`` or ``tests/engines/ray_job.py``) so they can be killed.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest
from tests.engines.conftest import RAY_ENV
from typer.testing import CliRunner

from dialeval.cache import ScoreCache, input_key
from dialeval.cli import app
from dialeval.metrics.base import build_inputs
from dialeval.scoring import score_candidates

ROOT = Path(__file__).resolve().parents[2]
JOB = ROOT / "tests" / "engines" / "ray_job.py"

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("ray")]


def _env(tmp: Path) -> dict[str, str]:
    env = dict(os.environ)
    env.update(HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", **RAY_ENV)
    return env


def _cli(args: list[str], env: dict[str, str]) -> dict:
    proc = subprocess.run(
        [str(Path(sys.executable).parent / "dialeval"), *args, "--json"],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout)


def _driver(cluster, tmp_path: Path, source: str) -> subprocess.CompletedProcess[str]:
    """Run ``source`` as a Ray driver script: argv[1] is the USR-TC file, argv[2] the cluster's address."""
    script = tmp_path / "driver.py"
    script.write_text(source)
    data = ROOT.parent / "shared" / "data" / "usr" / "usr_topical_chat.json"
    return subprocess.run(
        [sys.executable, str(script), str(data), cluster.address],
        env=_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=600,
    )


def _lines(path: Path) -> list[str]:
    return path.read_text().splitlines()


def test_ray_gives_the_local_scores_and_signatures_on_real_data(cluster, tmp_path: Path) -> None:
    metrics = "bleu,sacrebleu,chrf,rouge,f1,embedding,likelihood"
    common = ["score", "-b", "usr-tc", "--limit", "4", "-m", metrics, "--no-cache"]
    env = _env(tmp_path)
    ray_args = ["-o", str(tmp_path / "ray.jsonl"), "--engine", "ray", "--ray-address", cluster.address]
    ray_run = _cli([*common, *ray_args], env)
    local = CliRunner().invoke(app, [*common, "-o", str(tmp_path / "local.jsonl"), "--json"])
    assert local.exit_code == 0, local.output
    ray_rows = [json.loads(x) for x in _lines(tmp_path / "ray.jsonl")]
    local_rows = [json.loads(x) for x in _lines(tmp_path / "local.jsonl")]
    assert len(ray_rows) == len(local_rows) == 24 * 16  # 4 contexts x 6 systems x 16 outputs
    # the same values, bit for bit, and the same signatures, row by row
    assert ray_rows == local_rows
    assert ray_run["engine"]["engine"] == "ray"
    assert ray_run["engine"]["batches"] == 7  # one batch per family: 24 items fit one batch of each


def test_models_load_once_per_worker_not_once_per_batch(cluster, tmp_path: Path) -> None:
    # 120 items in batches of 120 (likelihood's batch size) would be one batch: a script subclass with
    # batch size 8 gives 15 batches over two workers, each worker loading SmolLM2 once.
    proc = _driver(
        cluster,
        tmp_path,
        "import sys, json\n"
        "from dialeval.data.usr import load_usr_topical_chat\n"
        "from dialeval.engines import make_engine\n"
        "from dialeval.metrics.likelihood import LikelihoodMetric\n"
        "from dialeval.scoring import score_candidates\n"
        "class SmallBatches(LikelihoodMetric):\n"
        "    batch_size = 8\n"
        "bench = load_usr_topical_chat(sys.argv[1]).head(20)\n"
        "engine = make_engine('ray', address=sys.argv[2], workers=2)\n"
        "scores = score_candidates(SmallBatches(), bench.candidates, bench.dialogues, engine=engine)\n"
        "print(json.dumps({**engine.describe(), 'scored': sum(s.value is not None for s in scores)}))\n",
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    info = json.loads(proc.stdout.strip().splitlines()[-1])
    assert info["batches"] == 15  # 120 items / 8
    assert info["worker_processes"] == 2
    assert info["model_loads"] == 2  # once per worker
    assert info["scored"] == 360  # three outputs per item, all scored


def _rows(path: Path) -> int:
    if not path.exists():
        return 0
    try:
        with sqlite3.connect(path) as db:
            return int(db.execute("SELECT COUNT(*) FROM scores").fetchone()[0])
    except sqlite3.OperationalError:  # the job has not created the table yet
        return 0


def _job(shared_data: Path, cache: Path, log: Path, address: str, env: dict[str, str]) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, str(JOB), str(shared_data), str(cache), str(log), address],
        env=env,
        text=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


def _expected(shared_data: Path) -> tuple[str, dict[str, float | None]]:
    """The job's metric run locally: its signature and the value of every distinct input."""
    from tests.engines.ray_job import SlowLoggedOverlap, load

    bench = load(shared_data)
    metric = SlowLoggedOverlap()
    metric.delay = 0
    scores = score_candidates(metric, bench.candidates, bench.dialogues)
    inputs = build_inputs(bench.candidates, bench.dialogues)
    return metric.signature, {input_key(i): s.value for i, s in zip(inputs, scores, strict=True)}


def _cached(cache: Path, signature: str, keys: set[str]) -> dict[str, float | None]:
    return {k: v["slow_logged_overlap"] for k, v in ScoreCache(cache).get_many(signature, keys).items()}


def test_killed_driver_resumes_without_recomputing_or_losing_items(cluster, tmp_path: Path, shared_data: Path) -> None:
    cache, env = tmp_path / "scores.sqlite", _env(tmp_path)
    first = _job(shared_data, cache, tmp_path / "first.log", cluster.address, env)
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and _rows(cache) < 24 and first.poll() is None:
        time.sleep(0.05)
    first.send_signal(signal.SIGKILL)
    first.wait()
    saved = _rows(cache)
    signature, expected = _expected(shared_data)
    keys = set(expected)
    assert 24 <= saved < len(keys), "the driver was not killed halfway"
    cached_before = set(_cached(cache, signature, keys))
    assert len(cached_before) == saved

    second = _job(shared_data, cache, tmp_path / "second.log", cluster.address, env)
    out, err = second.communicate(timeout=300)
    (tmp_path / "second.out").write_text(out + "\n----\n" + err)
    assert second.returncode == 0, f"see {tmp_path / 'second.out'}"
    computed = [k for line in _lines(tmp_path / "second.log") if line.startswith("end ") for k in line.split()[2:]]
    # the restart computed exactly the items that were not in the cache, each once
    assert Counter(computed) == Counter(keys - cached_before)
    assert _rows(cache) == len(keys)
    assert _cached(cache, signature, keys) == expected


def test_killed_worker_is_replaced_and_only_its_unfinished_batch_is_redone(
    cluster, tmp_path: Path, shared_data: Path
) -> None:
    cache, log, env = tmp_path / "scores.sqlite", tmp_path / "job.log", _env(tmp_path)
    job = _job(shared_data, cache, log, cluster.address, env)
    deadline = time.monotonic() + 300
    victim = None
    while time.monotonic() < deadline and victim is None and job.poll() is None:
        # kill a worker in the middle of a batch, once a few batches have finished
        lines = _lines(log) if log.exists() else []
        if sum(x.startswith("end ") for x in lines) >= 3:
            started = {(x.split()[1], tuple(x.split()[2:])) for x in lines if x.startswith("start ")}
            ended = {(x.split()[1], tuple(x.split()[2:])) for x in lines if x.startswith("end ")}
            running = started - ended
            if running:
                victim = sorted(running)[0]
                os.kill(int(victim[0]), signal.SIGKILL)
        time.sleep(0.02)
    assert victim is not None, "no batch was running to kill"
    out, err = job.communicate(timeout=300)
    assert job.returncode == 0, err[-3000:]
    assert "finished 120" in out.splitlines()

    signature, expected = _expected(shared_data)
    keys = set(expected)
    lines = _lines(log)
    finished = Counter(k for x in lines if x.startswith("end ") for k in x.split()[2:])
    assert set(finished) == keys  # every item finished
    redone = {k for k, n in finished.items() if n > 1}
    assert redone <= set(victim[1])  # nothing but the killed worker's batch ran twice
    assert all(not x.startswith("end " + victim[0] + " ") or tuple(x.split()[2:]) != victim[1] for x in lines)
    pids = {x.split()[1] for x in lines}
    assert len(pids) >= 3  # two workers, and the one Ray started in place of the killed one
    assert _cached(cache, signature, keys) == expected


def test_judge_on_ray_matches_local_against_the_llama_cpp_server(cluster, tmp_path: Path, llama_url: str) -> None:
    params = [
        "-p",
        "judge:cpdscore-simple.backend=openai-compatible",
        "-p",
        f"judge:cpdscore-simple.base_url={llama_url}",
        "-p",
        "judge:cpdscore-simple.k=1",
        "-p",
        "judge:cpdscore-simple.temperature=0",
        "-p",
        "judge:cpdscore-simple.in_flight=1",
        "-p",
        "judge:cpdscore-simple.cache=false",
        "-p",
        "judge:cpdscore-simple.max_tokens=8",
        "-p",
        "judge:cpdscore-simple.model=smollm2",
    ]
    common = ["score", "-b", "usr-tc", "--limit", "1", "-m", "judge:cpdscore-simple", "--no-cache", *params]
    env = _env(tmp_path)
    ray_run = _cli(
        [
            *common,
            "-o",
            str(tmp_path / "ray.jsonl"),
            "--engine",
            "ray",
            "--ray-address",
            cluster.address,
            "--ray-workers",
            "1",
        ],
        env,
    )
    local = CliRunner().invoke(app, [*common, "-o", str(tmp_path / "local.jsonl"), "--json"])
    assert local.exit_code == 0, local.output
    local_run = json.loads(local.stdout)
    assert [json.loads(x) for x in _lines(tmp_path / "ray.jsonl")] == [
        json.loads(x) for x in _lines(tmp_path / "local.jsonl")
    ]
    ray_sum, local_sum = ray_run["metrics"]["judge:cpdscore-simple"], local_run["metrics"]["judge:cpdscore-simple"]
    # counters summed over the worker's batches equal the local run's
    for key in ("calls", "parse_failures", "parse_retries", "prompt_tokens", "completion_tokens"):
        assert ray_sum[key] == local_sum[key], key
    assert ray_sum["calls"] >= 6  # six responses, one call each at least


def test_benchmark_and_judge_run_on_ray_match_local(cluster, tmp_path: Path, llama_url: str) -> None:
    env = _env(tmp_path)
    ray = ["--engine", "ray", "--ray-address", cluster.address, "--ray-workers", "1"]
    bench = ["benchmark", "--metrics", "length,sacrebleu,chrf", "--limit", "3", "--boot", "0", "--no-cache"]
    on_ray = _cli([*bench, "-o", str(tmp_path / "bray"), *ray], env)
    local = CliRunner().invoke(app, [*bench, "-o", str(tmp_path / "blocal"), "--json"])
    assert local.exit_code == 0, local.output
    assert on_ray["rows"] == json.loads(local.output)["rows"]
    assert _lines(tmp_path / "bray" / "scores.jsonl") == _lines(tmp_path / "blocal" / "scores.jsonl")
    judge = ["judge", "run", "--protocol", "cpdscore-simple", "-p", "backend=openai-compatible", "-p",
             f"base_url={llama_url}", "-p", "model=smollm2", "-p", "k=1", "-p", "temperature=0", "-p", "max_tokens=8",
             "--limit", "1", "-p", "cache=no", "-p", "in_flight=1", "--no-cache"]  # fmt: skip
    dialeval = str(Path(sys.executable).parent / "dialeval")
    proc = subprocess.run([dialeval, *judge, "--out", str(tmp_path / "jray.jsonl"), *ray], env=env,
                          capture_output=True, text=True, timeout=600)  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    res = CliRunner().invoke(app, [*judge, "--out", str(tmp_path / "jlocal.jsonl")])
    assert res.exit_code == 0, res.output
    assert _lines(tmp_path / "jray.jsonl") == _lines(tmp_path / "jlocal.jsonl")
    ray_sum = json.loads((tmp_path / "jray.jsonl.summary.json").read_text())
    local_sum = json.loads((tmp_path / "jlocal.jsonl.summary.json").read_text())
    assert ray_sum["engine"] == "ray" and local_sum["engine"] == "local"
    for key in ("calls", "items", "parse_failures", "prompt_tokens", "completion_tokens"):
        assert ray_sum[key] == local_sum[key], key


def test_stress_on_ray_matches_local(cluster, tmp_path: Path) -> None:
    """`dialeval stress --engine ray`: the same rows (fractions, drops, CIs, AUROC) as the local engine."""
    env = _env(tmp_path)
    ray = ["--engine", "ray", "--ray-address", cluster.address, "--ray-workers", "1"]
    args = ["stress", "-b", "usr-tc", "-m", "length,sacrebleu,f1", "--limit", "3", "--boot", "50",
            "--perturb", "negation,truncation,speaker-swap", "--no-cache"]  # fmt: skip
    on_ray = _cli([*args, "-o", str(tmp_path / "sray"), *ray], env)
    local = CliRunner().invoke(app, [*args, "-o", str(tmp_path / "slocal"), "--json"])
    assert local.exit_code == 0, local.output
    assert on_ray["run"]["engine"]["engine"] == "ray" and on_ray["run"]["engine"]["batches"] > 0
    assert on_ray["rows"] == json.loads(local.output)["rows"]
    assert on_ray["run"]["metrics"] == json.loads(local.output)["run"]["metrics"]  # the same signatures
    assert _lines(tmp_path / "sray" / "stress.jsonl") == _lines(tmp_path / "slocal" / "stress.jsonl")


def test_a_worker_with_another_signature_stops_the_run(cluster, tmp_path: Path) -> None:
    """A worker whose metric signature differs from the driver's (here: it names its process) must not mix numbers."""
    proc = _driver(
        cluster,
        tmp_path,
        "import os, sys\n"
        "from dialeval.data.usr import load_usr_topical_chat\n"
        "from dialeval.engines import make_engine\n"
        "from dialeval.errors import DialevalError\n"
        "from dialeval.metrics.lexical import Length\n"
        "class PerProcess(Length):\n"
        "    name = 'per_process'\n"
        "    def signature_extra(self):\n"
        "        return {'pid': os.getpid()}\n"
        "bench = load_usr_topical_chat(sys.argv[1]).head(2)\n"
        "engine = make_engine('ray', address=sys.argv[2], workers=1)\n"
        "from dialeval.scoring import score_candidates\n"
        "try:\n"
        "    score_candidates(PerProcess(), bench.candidates, bench.dialogues, engine=engine)\n"
        "except DialevalError as exc:\n"
        "    print('REFUSED', exc)\n"
        "    sys.exit(3)\n",
    )
    assert proc.returncode == 3, proc.stdout[-2000:] + proc.stderr[-3000:]
    assert "REFUSED worker" in proc.stdout and "but this driver has" in proc.stdout


@pytest.mark.parametrize(("address", "reason"), [("127.0.0.1:{port}", "Connection refused"),
                                                 ("no-such-host.invalid:6379", "")])  # fmt: skip
def test_a_cluster_address_that_takes_no_connection_is_one_error_in_seconds(
    tmp_path: Path, address: str, reason: str
) -> None:
    """Ray waited minutes for a head that is not there, logging "Failed to get cluster ID from GCS server"
    every second (over 200 s for a misspelt host). A closed port on this machine, and a name that cannot resolve."""
    from dialeval.backends.llamacpp import free_port

    address = address.format(port=free_port())
    args = ["score", "-b", "usr-tc", "--limit", "1", "-m", "length", "--engine", "ray", "--ray-address", address]
    res = CliRunner().invoke(app, [*args, "-o", str(tmp_path / "s.jsonl"), "--no-cache"])
    assert res.exit_code == 2 and f'error: cannot reach the Ray cluster at "{address}": {reason}' in res.output
    assert not (tmp_path / "s.jsonl").exists()


def test_a_workers_input_error_is_the_local_engines_one_line(cluster, tmp_path: Path) -> None:
    """A model folder that holds no model fails in the worker, where the model loads: Ray Data wrapped the
    InputError in a UserCodeException traceback of some 200 lines (exit 1); locally it is one line (exit 2)."""
    (tmp_path / "empty").mkdir()
    args = ["score", "-b", "usr-tc", "--limit", "1", "-m", "embedding", "-p", f"embedding.model={tmp_path / 'empty'}",
            "--no-cache"]  # fmt: skip
    ray = ["--engine", "ray", "--ray-address", cluster.address, "--ray-workers", "1"]
    proc = subprocess.run([str(Path(sys.executable).parent / "dialeval"), *args, "-o", str(tmp_path / "r.jsonl"), *ray],
                          env=_env(tmp_path), capture_output=True, text=True, timeout=600)  # fmt: skip
    local = CliRunner().invoke(app, [*args, "-o", str(tmp_path / "l.jsonl")])
    said = [x for x in local.output.splitlines() if x.startswith("error:")]
    assert local.exit_code == 2 and len(said) == 1 and "cannot be loaded" in said[0], local.output
    assert proc.returncode == 2, proc.stdout[-2000:] + proc.stderr[-3000:]
    assert said[0] in proc.stderr.splitlines()  # the same line, word for word
    assert "Traceback" not in proc.stdout + proc.stderr
    assert not (tmp_path / "r.jsonl").exists()


def test_more_cpus_per_worker_than_the_local_ray_instance_has_is_refused(tmp_path: Path) -> None:
    """With no --ray-address Ray starts here; an actor asking more CPUs than this machine has never started,
    and the run waited for ever, silently (the driver hides Ray's "cannot be scheduled" log)."""
    cpus = str(10 * (os.cpu_count() or 1))
    args = ["score", "-b", "usr-tc", "--limit", "1", "-m", "length", "--no-cache", "-o", str(tmp_path / "s.jsonl"),
            "--engine", "ray", "--ray-cpus-per-worker", cpus]  # fmt: skip
    try:
        proc = subprocess.run([str(Path(sys.executable).parent / "dialeval"), *args], env=_env(tmp_path),
                              capture_output=True, text=True, timeout=300)  # fmt: skip
    except subprocess.TimeoutExpired:
        pytest.fail("the run waited for an actor that cannot start")
    assert proc.returncode == 2, proc.stderr[-3000:]
    assert f'error: field "--ray-cpus-per-worker": {cpus} CPUs per worker, but the Ray instance started here has' \
        in proc.stderr
    assert not (tmp_path / "s.jsonl").exists()


def test_a_plugin_metrics_exception_in_a_worker_is_the_local_engines_one_line(cluster, tmp_path: Path) -> None:
    """A script metric raising ZeroDivisionError on one item of a batch of four, in a Ray worker: the driver must
    say what the local engine says (the metric, the candidate, the exception), not Ray's wrapped traceback."""
    proc = _driver(
        cluster,
        tmp_path,
        "import sys\n"
        "from dialeval.data.usr import load_usr_topical_chat\n"
        "from dialeval.engines import make_engine\n"
        "from dialeval.errors import DialevalError\n"
        "from dialeval.metrics.base import Metric\n"
        "from dialeval.scoring import score_candidates\n"
        "bench = load_usr_topical_chat(sys.argv[1]).head(2)\n"
        "class Boom(Metric):\n"
        "    name = 'boom_demo'\n"
        "    outputs = ('boom_demo',)\n"
        "    batch_size = 4\n"
        "    bad = bench.candidates[5].text\n"
        "    def compute(self, items):\n"
        "        return {'boom_demo': [1 / (i.response != self.bad) for i in items]}\n"
        "for engine in (make_engine('local'), make_engine('ray', address=sys.argv[2], workers=1)):\n"
        "    try:\n"
        "        score_candidates(Boom(), bench.candidates, bench.dialogues, engine=engine)\n"
        "    except DialevalError as exc:\n"
        "        print('REFUSED', exc)\n",
    )
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
    said = [x for x in proc.stdout.splitlines() if x.startswith("REFUSED")]
    # the sixth candidate of USR-TC's first context, in the second batch of four
    local = f'REFUSED metric "boom_demo" failed on candidate "{_usr_id(5)}": ZeroDivisionError: division by zero'
    assert said == [local, local], proc.stdout[-3000:]


def _usr_id(n: int) -> str:
    from dialeval.data.usr import load_usr_topical_chat

    return load_usr_topical_chat(ROOT.parent / "shared" / "data" / "usr" / "usr_topical_chat.json").candidates[n].id
