"""``dialeval benchmark`` and ``dialeval score`` end to end on USR Topical-Chat."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from scipy import stats
from typer.testing import CliRunner

from dialeval.cli import app
from dialeval.jsonl import read_jsonl
from dialeval.schema import Score

runner = CliRunner()


def _raw_length_and_overall(shared_data: Path, n_contexts: int) -> tuple[np.ndarray, np.ndarray]:
    raw = json.loads((shared_data / "usr" / "usr_topical_chat.json").read_text())
    lengths, overall = [], []
    for ctx in raw[:n_contexts]:
        for r in ctx["responses"]:
            lengths.append(len(r["response"].split()))
            overall.append(np.mean(r["Overall"]))
    return np.array(lengths, float), np.array(overall, float)


def test_benchmark_writes_scores_and_a_table_matching_scipy(tmp_path: Path, shared_data: Path) -> None:
    out = tmp_path / "run"
    res = runner.invoke(
        app, ["benchmark", "--metrics", "length,sacrebleu", "--limit", "10", "--boot", "200", "-o", str(out), "--json"]
    )
    assert res.exit_code == 0, res.output
    payload = json.loads(res.output)
    scores = read_jsonl(out / "scores.jsonl", Score)
    assert len(scores) == 60 * 2  # 10 contexts x 6 systems x 2 outputs
    assert {s.metric for s in scores} == {"length", "sacrebleu"}
    assert all(s.signature.startswith(s.metric) for s in scores)
    rows = {(r["metric"], r["level"], r["method"]): r for r in payload["rows"]}
    x, y = _raw_length_and_overall(shared_data, 10)
    row = rows[("length", "turn", "pearson")]
    assert abs(row["value"] - stats.pearsonr(x, y).statistic) < 1e-12
    assert row["n_items"] == 60
    assert row["ci_low"] <= row["value"] <= row["ci_high"]
    run = json.loads((out / "run.json").read_text())
    assert set(run["metrics"]) == {"length", "sacrebleu"}
    assert run["counts"]["contexts"] == 10
    assert "| length |" in (out / "table.md").read_text()


def test_unknown_metric_and_dimension_are_clear_errors(tmp_path: Path) -> None:
    res = runner.invoke(app, ["benchmark", "--metrics", "sacrebelu", "--limit", "2", "-o", str(tmp_path)])
    assert res.exit_code == 2
    assert 'did you mean "sacrebleu"' in res.output
    res = runner.invoke(app, ["benchmark", "--dimension", "Funny", "--metrics", "length", "-o", str(tmp_path)])
    assert res.exit_code == 2
    assert 'no dimension "Funny"' in res.output
    assert not (tmp_path / "scores.jsonl").exists()


def test_reference_metric_on_reference_free_records_is_refused(tmp_path: Path) -> None:
    (tmp_path / "d.jsonl").write_text('{"id": "d", "turns": [{"speaker": "A", "text": "hi"}]}\n')
    (tmp_path / "c.jsonl").write_text('{"id": "c", "dialogue_id": "d", "turn_index": 1, "system": "s", "text": "yo"}\n')
    args = ["score", "--dialogues", str(tmp_path / "d.jsonl"), "--candidates", str(tmp_path / "c.jsonl")]
    res = runner.invoke(app, [*args, "-m", "rouge", "-o", str(tmp_path / "s.jsonl")])
    assert res.exit_code == 2 and "1 of 1 items have no reference" in res.output
    res = runner.invoke(app, [*args, "-m", "length", "-o", str(tmp_path / "s.jsonl")])
    assert res.exit_code == 0, res.output
    assert [s.value for s in read_jsonl(tmp_path / "s.jsonl", Score)] == [1.0]
