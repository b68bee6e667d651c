"""Judges on the packaged SmolLM2: score distributions vs k=3 sampling, parse failures, USR-TC correlations.

    .venv/bin/python benchmarks/bench_judge.py --out runs/bench_judge.jsonl                 # in process
    .venv/bin/python benchmarks/bench_judge.py --http --modes distribution --out runs/bench_judge_http.jsonl
    .venv/bin/python benchmarks/bench_judge.py --summary runs/bench_judge.jsonl

Each of the seven turn-level protocols scores the first ``--contexts`` USR-TC
contexts (5: 30 responses) and ``cpdscore-dialogue`` the last system turn of the
first ``--dialogues`` DSTC9 dialogues (5), once per mode:

- ``distribution``: one request per item (and per DialogADV dimension), answer held
  to the protocol's shape, the probability of every allowed score read at the
  score position (the default);
- ``sample``: k=3 seeded samples at temperature 0.7, answer held to the shape;
- ``sample-free``: k=3 samples of free text, parsed, one retry per unparsable
  sample (the judge as it was before structured answers).

Every run is a fresh process with an empty request cache (a fresh temporary
directory) and 8 requests in flight (``--in-flight``); the model is loaded and
answers one tiny warm-up request before the clock starts, so items/s are
comparable between modes on the same items (``--repeats N`` runs each N times;
the summary quotes medians). One
JSON line per protocol, mode and repeat: items, seconds, items/s, calls, parse failures,
and the Pearson/Spearman (scipy) of the score (and, in distribution mode, of the
expected score) with the mean human Overall rating (USR-TC ``Overall``, DSTC9
``human (overall)``), and the machine it ran on. ``--http`` sends the same requests to the real llama.cpp
HTTP server started by ``dialeval serve-model`` (OpenAI-compatible backend: JSON
schema ``response_format``, top-20 log-probabilities). ``--summary`` prints the
markdown table of docs/judges.md and the median items/s ratio from such a file.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from common import POSITIVE  # benchmarks/ is on sys.path

TURN_LEVEL = [
    "lmstyle-appropriateness", "cpdscore-simple", "cpdscore-simple-ref", "cpdscore-detail",
    "cpdscore-detail-ref", "diqad-holistic", "dialogadv",
]
MODES = {
    "distribution": {"mode": "distribution"},
    "sample": {"mode": "sample", "k": 3, "temperature": 0.7},
    "sample-free": {"mode": "sample", "k": 3, "temperature": 0.7, "structured": False},
}


def items_for(name: str, contexts: int, dialogues: int) -> tuple[list[Any], dict[str, float]]:
    """Return the inputs and the mean human overall rating per input (same order)."""
    from dialeval.data.catalog import load_benchmark
    from dialeval.metrics.base import build_inputs

    if name == "cpdscore-dialogue":
        bench = load_benchmark("dstc9")
        last: dict[str, Any] = {}
        for c in bench.candidates:
            if c.dialogue_id not in last and len(last) == dialogues:
                continue
            last[c.dialogue_id] = c  # the last system turn: the judged dialogue is everything up to it
        cands, dim, key = list(last.values()), "human (overall)", "dialogue_id"
    else:
        bench = load_benchmark("usr-tc").head(contexts)
        cands, dim, key = list(bench.candidates), "Overall", "id"
    human: dict[str, list[float]] = {}
    for r in bench.ratings:
        if r.dimension == dim and isinstance(r.value, (int, float)):
            human.setdefault(r.item_id, []).append(float(r.value))
    wanted = {getattr(c, key) for c in cands}
    means = {k: statistics.mean(v) for k, v in human.items() if k in wanted}
    return [build_inputs([c], bench.dialogues)[0] for c in cands], {
        str(i): means[getattr(c, key)] for i, c in enumerate(cands)
    }


def correlate(xs: list[float | None], ys: list[float]) -> dict[str, float | int | None]:
    from scipy.stats import pearsonr, spearmanr

    pairs = [(x, y) for x, y in zip(xs, ys, strict=True) if x is not None]
    if len(pairs) < 3 or len({p[0] for p in pairs}) < 2:
        return {"n": len(pairs), "pearson": None, "spearman": None}
    a, b = zip(*pairs, strict=True)
    return {"n": len(pairs), "pearson": float(pearsonr(a, b)[0]), "spearman": float(spearmanr(a, b)[0])}


def run_one(name: str, mode: str, backend: dict[str, Any], contexts: int, dialogues: int) -> dict[str, Any]:
    import dialeval.judges  # noqa: F401  (registers judge:<protocol>)
    from dialeval.backends.base import ChatRequest
    from dialeval.metrics.base import METRICS
    from dialeval.quality.recipes import machine

    inputs, human = items_for(name, contexts, dialogues)
    ys = [human[str(i)] for i in range(len(inputs))]
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["DIALEVAL_CACHE"] = tmp  # an empty request cache: every request is a real call
        m = METRICS.get(f"judge:{name}")(**MODES[mode], **backend)
        m.backend.chat(ChatRequest(messages=(("user", "Hello"),), max_tokens=1))  # load the model first
        t = time.perf_counter()
        values = m.compute(inputs)
        seconds = time.perf_counter() - t
        s = m.run_summary()
    main = [o for o in m.outputs if not o.endswith((":expected", ":level", ":turn", ":interaction"))]
    row: dict[str, Any] = {
        "protocol": name, "mode": mode, "backend": backend.get("backend", "llamacpp"), "machine": machine(),
        "items": len(inputs),
        "seconds": round(seconds, 1), "items_per_s": round(len(inputs) / seconds, 3),
        "scored": {o: sum(v is not None for v in values[o]) for o in main},
        **{k: s[k] for k in ("calls", "samples", "parse_retries", "parse_failures", "distribution_missing",
                             "structured_fallbacks", "request_failures", "notes")},
        **{k: s.get(k) for k in ("prompt_tokens", "completion_tokens")},  # what a paid API bills
        "corr": {o: correlate(list(values[o]), ys) for o in main},
    }
    if mode == "distribution":
        row["corr_expected"] = {
            o: correlate(list(values[o + ":expected"]), ys) for o in main if o + ":expected" in values
        }
    return row


def run_fresh(name: str, mode: str, contexts: int, dialogues: int, env: dict[str, str]) -> str:
    """Run one protocol and mode in a fresh process; return its JSON line.

    Raises:
        SystemExit: The run failed: its last line of error output (it was a ``CalledProcessError`` traceback, and
            the run's own error, captured, was never shown).
    """
    cmd = [sys.executable, __file__, "--one", name, mode, "--contexts", str(contexts), "--dialogues", str(dialogues)]
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0 or not done.stdout.strip():
        why = (done.stderr.strip().splitlines() or [f"exit status {done.returncode}, no error output"])[-1]
        raise SystemExit(f"error: the run of {name} in mode {mode} failed: {why}")
    return done.stdout.strip().splitlines()[-1]


def serve(port: int) -> subprocess.Popen[bytes]:
    """Start ``dialeval serve-model`` on 127.0.0.1 and wait until it answers."""
    import httpx

    proc = subprocess.Popen(
        [str(Path(sys.executable).parent / "dialeval"), "serve-model", "--port", str(port), "--parallel", "8"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    for _ in range(120):
        try:
            if httpx.get(f"http://127.0.0.1:{port}/health", timeout=2).status_code == 200:
                return proc
        except httpx.HTTPError:
            pass
        time.sleep(1)
    proc.kill()
    raise SystemExit("dialeval serve-model did not start")


def fmt(x: float | None) -> str:
    return "-" if x is None else f"{x:+.3f}"


def read_rows(path: Path) -> list[dict[str, Any]]:
    """Return the rows of an ``--out`` file.

    Raises:
        SystemExit: One line naming the file and line: it is not there, or a line is not a JSON object (it was a
            ``FileNotFoundError`` or ``JSONDecodeError`` traceback).
    """
    from dialeval.errors import InputError
    from dialeval.jsonl import iter_objects

    try:
        return [row for _, row in iter_objects(path)]
    except InputError as exc:
        raise SystemExit(f"error: {exc}") from None


def append_row(path: Path, row: str) -> None:
    """Add the JSON line ``row`` to ``path``, atomically: the file has every earlier line and this one, or is as it was.

    An append cut short (a full disk) left half a line, which ``--summary`` could not read.
    """
    from dialeval.atomic import WriteError, atomic_write

    before = path.read_text(encoding="utf-8") if path.exists() else ""
    try:
        with atomic_write(path) as handle:
            handle.write(before + ("\n" if before and not before.endswith("\n") else "") + row + "\n")
    except WriteError as exc:
        raise SystemExit(f"error: {exc}") from None


def summary(path: Path) -> None:
    rows = read_rows(path)
    machines = sorted({str(r.get("machine", "not recorded")) for r in rows})
    print(f"{len(rows)} runs from {path}; machine{'s' if len(machines) > 1 else ''}: {'; '.join(machines)}\n")
    by: dict[tuple[str, str], dict[str, Any]] = {}
    for r in rows:  # repeats of one (protocol, mode): the first's figures, the median items/s
        key = (r["protocol"], r["mode"])
        if key not in by:
            by[key] = dict(r, rates=[])
        by[key]["rates"].append(r["items_per_s"])
    for r in by.values():
        r["items_per_s"] = statistics.median(r["rates"])
    print("| protocol | scored (dist.) | parse failures dist. / sample / free | Pearson dist. (expected) |"
          " Spearman dist. (expected) | Pearson sample | Spearman sample |")
    print("|---|---|---|---|---|---|---|")
    for name in [*TURN_LEVEL, "cpdscore-dialogue"]:
        d, smp, free = by.get((name, "distribution")), by.get((name, "sample")), by.get((name, "sample-free"))
        if d is None:
            continue
        for out, c in d["corr"].items():
            ce = d.get("corr_expected", {}).get(out, {})
            cs = smp["corr"].get(out, {}) if smp else {}
            fails = [f"{x['parse_failures']}/{x['samples']}" if x else "-" for x in (d, smp, free)]
            label = out.removeprefix("judge:")
            print(f"| {label} | {d['scored'][out]}/{d['items']} | {' / '.join(fails)} |"
                  f" {fmt(c['pearson'])} ({fmt(ce.get('pearson'))}) |"
                  f" {fmt(c['spearman'])} ({fmt(ce.get('spearman'))}) |"
                  f" {fmt(cs.get('pearson'))} | {fmt(cs.get('spearman'))} |")
    print()
    print("| protocol | items/s distribution | items/s sample k=3 | items/s free k=3 | dist./sample | dist./free |"
          " runs | prompt+completion tokens: dist. / sample / free |")
    print("|---|---|---|---|---|---|---|---|")
    ratios: dict[str, list[float]] = {"sample": [], "sample-free": []}
    for name in [*TURN_LEVEL, "cpdscore-dialogue"]:
        d, smp, free = by.get((name, "distribution")), by.get((name, "sample")), by.get((name, "sample-free"))
        if d is None:
            continue
        cells = []
        for other, x in (("sample", smp), ("sample-free", free)):
            ratio = d["items_per_s"] / x["items_per_s"] if x else None
            if ratio:
                ratios[other].append(ratio)
            cells.append("-" if ratio is None else f"{ratio:.1f}x")
        rate = [f"{x['items_per_s']:.3f}" if x else "-" for x in (d, smp, free)]
        runs = "/".join(str(len(x["rates"])) if x else "0" for x in (d, smp, free))
        toks = " / ".join(f"{x['prompt_tokens']}+{x['completion_tokens']}" if x and x.get("prompt_tokens") is not None
                          else "-" for x in (d, smp, free))  # fmt: skip
        print(f"| {name} | {' | '.join(rate)} | {' | '.join(cells)} | {runs} | {toks} |")
    for other, got_ratios in ratios.items():
        if got_ratios:
            print(f"\nmedian over protocols of the items/s ratio, distribution vs {other} k=3: "
                  f"{statistics.median(got_ratios):.1f}x")
    for mode in MODES:
        got = [r for r in by.values() if r["mode"] == mode]
        if got:
            rate = sum(r["parse_failures"] for r in got) / max(1, sum(r["samples"] for r in got))
            med = statistics.median(r["parse_failures"] / max(1, r["samples"]) for r in got)
            print(f"{mode}: parse failures {rate:.1%} of samples (median per protocol {med:.1%})")


def listed(allowed: list[str]) -> Callable[[str], list[str]]:
    """Return an argparse type reading a comma-separated list of names from ``allowed``.

    An unknown name (``--protocols cpdscore-detial``, ``--modes samples``) was found by the first run's process,
    whose error was captured and dropped: the script ended in a ``CalledProcessError`` traceback naming nothing.
    """

    def read(text: str) -> list[str]:
        names = [n.strip() for n in text.split(",") if n.strip()]
        if not names or (unknown := [n for n in names if n not in allowed]):
            got = ", ".join(unknown) if names else "no name"
            raise argparse.ArgumentTypeError(f"{got}: expected a comma-separated list of {', '.join(allowed)}")
        return names

    return read


def parser() -> argparse.ArgumentParser:
    """Return the options of this benchmark."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--contexts", type=POSITIVE, default=5)
    ap.add_argument("--dialogues", type=POSITIVE, default=5)
    ap.add_argument("--protocols", type=listed([*TURN_LEVEL, "cpdscore-dialogue"]),
                    default=",".join([*TURN_LEVEL, "cpdscore-dialogue"]))  # fmt: skip
    ap.add_argument("--modes", type=listed(list(MODES)), default="distribution,sample,sample-free")
    ap.add_argument("--http", action="store_true", help="through the llama.cpp HTTP server of dialeval serve-model")
    ap.add_argument("--port", type=int, default=18391)
    ap.add_argument("--in-flight", type=POSITIVE, default=8, help="requests at once (the same for every mode)")
    ap.add_argument("--out", type=Path, default=Path("runs/bench_judge.jsonl"))
    ap.add_argument("--summary", type=Path)
    ap.add_argument("--repeats", type=POSITIVE, default=1, help="fresh-process runs of each protocol and mode")
    ap.add_argument("--one", nargs=2, metavar=("PROTOCOL", "MODE"), help=argparse.SUPPRESS)
    return ap


def main() -> None:
    a = parser().parse_args()
    if a.summary:
        summary(a.summary)
        return
    if a.one:  # one run in this (fresh) process: print its JSON line
        backend = json.loads(os.environ["BENCH_JUDGE_BACKEND"])
        print(json.dumps(run_one(a.one[0], a.one[1], backend, a.contexts, a.dialogues)), flush=True)
        return
    proc = serve(a.port) if a.http else None
    backend: dict[str, Any] = (
        {"backend": "openai-compatible", "base_url": f"http://127.0.0.1:{a.port}/v1", "model": "smollm2"}
        if a.http else {}
    )
    backend["in_flight"] = a.in_flight
    env = dict(os.environ, BENCH_JUDGE_BACKEND=json.dumps(backend))
    try:
        for _ in range(a.repeats):
            for mode in a.modes:
                for name in a.protocols:
                    row = run_fresh(name, mode, a.contexts, a.dialogues, env)
                    append_row(a.out, row)
                    print(row, flush=True)
    finally:
        if proc is not None:
            proc.terminate()
            proc.wait()


if __name__ == "__main__":
    main()
