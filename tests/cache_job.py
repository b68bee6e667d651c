"""A scoring job for the kill-and-restart test: USR items, a slow pure-Python metric, a SQLite cache.

Run as ``python tests/cache_job.py DATA_DIR CACHE_FILE``. The metric (share of
response words found in the last context turn) is defined here because the test
is about the cache, not about a metric; it sleeps per batch so the parent can
kill the job halfway.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from dialeval.cache import ScoreCache
from dialeval.data.usr import load_usr_topical_chat
from dialeval.metrics.base import Metric, MetricInput, MetricValues


class SlowOverlap(Metric):
    name = "slow_overlap"
    outputs = ("slow_overlap",)
    batch_size = 8
    delay = 0.15

    def __init__(self) -> None:
        super().__init__()
        self.computed: list[str] = []

    def compute(self, items: list[MetricInput]) -> MetricValues:  # type: ignore[override]
        time.sleep(self.delay)
        self.computed.extend(i.response for i in items)
        out: list[float | None] = []
        for i in items:
            words = i.response.lower().split()
            last = set(i.context[-1].text.lower().split()) if i.context else set()
            out.append(sum(w in last for w in words) / len(words) if words else None)
        return {"slow_overlap": out}


def load(data_dir: Path):
    return load_usr_topical_chat(data_dir / "usr" / "usr_topical_chat.json").head(20)


if __name__ == "__main__":
    from dialeval.scoring import score_candidates

    bench = load(Path(sys.argv[1]))
    score_candidates(SlowOverlap(), bench.candidates, bench.dialogues, cache=ScoreCache(sys.argv[2]))
    print("finished")
