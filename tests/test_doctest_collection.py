"""The package's doctests pass in any order in one process (see the root conftest.py).

``metrics/base.py``'s doctests collected before ``metrics/resolve.py``'s made pytest execute ``base.py`` a
second time, with a second, empty ``METRICS`` registry: the resolver's doctests then failed with
``unknown metric "bleu"; known:``. CI passed only because it collected them in another order.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def test_base_doctests_first_leave_one_metric_registry(tmp_path: Path) -> None:
    metrics = REPO / "src" / "dialeval" / "metrics"
    env = {**os.environ, "DIALEVAL_SCORE_CACHE": str(tmp_path / "scores.sqlite")}  # not this worker's cache
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist",
         str(metrics / "base.py"), str(metrics / "resolve.py")],
        capture_output=True, text=True, cwd=REPO, env=env, timeout=300,
    )  # fmt: skip
    assert run.returncode == 0, run.stdout[-3000:]
    assert " passed" in run.stdout and "failed" not in run.stdout
