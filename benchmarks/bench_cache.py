"""The score cache: first run of a job vs the same job again, side by side in one process.

Usage: .venv/bin/python benchmarks/bench_cache.py [--metric embedding] [--contexts 60]

Runs ``score_candidates`` on USR Topical-Chat with a fresh SQLite cache (first
run: model work), then again (second run: everything from the cache). The model is
loaded before timing, so the ratio is about the work, not the load.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from common import POSITIVE, data_file  # benchmarks/ is on sys.path

from dialeval.cache import ScoreCache
from dialeval.data.usr import load_usr_topical_chat
from dialeval.errors import UnknownNameError
from dialeval.metrics import METRICS, load_builtin_metrics
from dialeval.metrics.base import build_inputs
from dialeval.scoring import score_candidates


def parser() -> argparse.ArgumentParser:
    """Return the options of this benchmark."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--metric", default="embedding")
    ap.add_argument("--contexts", type=POSITIVE, default=60)
    return ap


def main() -> None:
    options = parser()
    args = options.parse_args()
    load_builtin_metrics()
    try:
        family = METRICS.get(args.metric)
    except UnknownNameError as exc:  # it was a traceback, after the data was read
        options.error(f"argument --metric: {exc}")
    bench = load_usr_topical_chat(data_file("usr/usr_topical_chat.json")).head(args.contexts)
    metric = family()
    metric.compute(build_inputs(bench.candidates[:2], bench.dialogues))  # load the model outside the timing
    with tempfile.TemporaryDirectory() as tmp:
        cache = ScoreCache(Path(tmp) / "scores.sqlite")
        t = time.perf_counter()
        first = score_candidates(metric, bench.candidates, bench.dialogues, cache=cache)
        t_first = time.perf_counter() - t
        t = time.perf_counter()
        second = score_candidates(metric, bench.candidates, bench.dialogues, cache=cache)
        t_second = time.perf_counter() - t
        assert [s.value for s in first] == [s.value for s in second]
        rows = len(cache)
    n = len(bench.candidates)
    print(f"{args.metric} on {n} USR-TC items ({rows} distinct inputs cached)")
    print(f"first run  {t_first:8.3f} s  {n / t_first:9.1f} items/s")
    print(f"second run {t_second:8.3f} s  {n / t_second:9.1f} items/s")
    print(f"second run is {t_first / t_second:.0f}x faster")


if __name__ == "__main__":
    main()
