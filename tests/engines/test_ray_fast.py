"""The Ray engine's fast twin: a short run on the real local cluster gives the local engine's rows, bit for bit.

The other Ray tests (model metrics on real data, models loaded once per worker, a killed driver or worker,
judges, stress) are ``slow``: ``bash scripts/test.sh -m slow`` runs them. This one keeps the engine in the
default run, on the same two-node cluster (the ``ray`` group: one xdist worker starts it once).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.engines.test_ray_engine import _cli, _env, _lines
from typer.testing import CliRunner

from dialeval.cli import app

pytestmark = pytest.mark.xdist_group("ray")


def test_a_short_run_on_ray_gives_the_local_rows_and_signatures(cluster, tmp_path: Path) -> None:
    common = ["score", "-b", "usr-tc", "--limit", "2", "-m", "length,f1,sacrebleu", "--no-cache"]
    on_ray = _cli([*common, "-o", str(tmp_path / "ray.jsonl"), "--engine", "ray", "--ray-address", cluster.address,
                   "--ray-workers", "1"], _env(tmp_path))  # fmt: skip
    local = CliRunner().invoke(app, [*common, "-o", str(tmp_path / "local.jsonl"), "--json"])
    assert local.exit_code == 0, local.output
    ray_rows = [json.loads(x) for x in _lines(tmp_path / "ray.jsonl")]
    assert ray_rows == [json.loads(x) for x in _lines(tmp_path / "local.jsonl")]  # values and signatures
    assert len({r["item_id"] for r in ray_rows}) == 2 * 6  # USR-TC: 6 rated responses per context
    assert on_ray["engine"]["engine"] == "ray" and on_ray["engine"]["batches"] == 3  # one per family: 12 items fit
