"""A scoring job run as a Ray driver by the engine tests: USR items, a slow logging metric, a score cache.

Run as ``python tests/engines/ray_job.py DATA_DIR CACHE_FILE LOG_FILE RAY_ADDRESS``. The metric
(share of response words found in the last context turn) lives here, in ``__main__``, so Ray
ships the class to the workers by value. Each batch appends ``start PID KEYS`` and ``end PID KEYS``
lines (the input keys) to LOG_FILE (a class attribute, not a config field, so it is not in the signature and a
restarted job with another log file still finds its cached items).
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

from dialeval.cache import ScoreCache, input_key
from dialeval.data.usr import load_usr_topical_chat
from dialeval.metrics.base import Metric, MetricInput, MetricValues


class SlowLoggedOverlap(Metric):
    name = "slow_logged_overlap"
    outputs = ("slow_logged_overlap",)
    batch_size = 6
    delay = 0.4
    log_file = ""

    def compute(self, items: list[MetricInput]) -> MetricValues:  # type: ignore[override]
        keys = " ".join(input_key(i) for i in items)
        self._log(f"start {os.getpid()} {keys}")
        time.sleep(self.delay)
        out: list[float | None] = []
        for i in items:
            words = i.response.lower().split()
            last = set(i.context[-1].text.lower().split()) if i.context else set()
            out.append(sum(w in last for w in words) / len(words) if words else None)
        self._log(f"end {os.getpid()} {keys}")
        return {"slow_logged_overlap": out}

    def _log(self, line: str) -> None:
        if self.log_file:
            with open(self.log_file, "a", encoding="utf-8") as fh:
                fh.write(line + "\n")
                fh.flush()


def load(data_dir: Path):
    return load_usr_topical_chat(data_dir / "usr" / "usr_topical_chat.json").head(20)


if __name__ == "__main__":
    from dialeval.engines import make_engine
    from dialeval.scoring import score_candidates

    data, cache, log, address = sys.argv[1:5]
    SlowLoggedOverlap.log_file = log
    bench = load(Path(data))
    engine = make_engine("ray", address=address, workers=2)
    metric = SlowLoggedOverlap()
    scores = score_candidates(metric, bench.candidates, bench.dialogues, cache=ScoreCache(cache), engine=engine)
    print("finished", len(scores))
