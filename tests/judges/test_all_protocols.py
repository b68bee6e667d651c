"""Every registered judge family runs end to end on one short item with the packaged model."""

from __future__ import annotations

from pathlib import Path

import pytest

from dialeval.judges import JudgeMetric, load_protocol, protocol_names
from dialeval.metrics.base import METRICS, MetricInput
from dialeval.schema import Turn

ITEM = MetricInput(
    response="Yes, I love Miles Davis.",
    context=(Turn(speaker="A", text="Hi!"), Turn(speaker="B", text="Hello."), Turn(speaker="A", text="Like jazz?")),
    references=("I do, mostly bebop.",),
    knowledge=("Miles Davis was a jazz trumpeter.",),
)


@pytest.mark.slow
@pytest.mark.parametrize("name", protocol_names())
def test_protocol_runs_end_to_end(name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, llama_url: str) -> None:
    monkeypatch.setenv("DIALEVAL_CACHE", str(tmp_path))
    metric = METRICS.get(f"judge:{name}")(in_flight=8)  # the defaults: distribution mode, structured answers
    assert isinstance(metric, JudgeMetric)
    values = metric.compute([ITEM])
    assert set(values) == set(metric.outputs)
    p = load_protocol(name)
    lo, hi = p.scale.min, p.scale.max
    for out, col in values.items():
        assert len(col) == 1
        v = col[0]
        if out.endswith(":level"):
            assert v is None or 1 <= v <= 10
        else:
            assert v is None or lo <= v <= hi, (out, v)
    s = metric.run_summary()
    assert s["parse_failures"] == s["parse_retries"] == s["items_missing"] == 0  # structure: every answer parses
    # one call per dimension (two-step: one per system turn (2) plus one), plus counted retries
    first_step = 2 if p.step1_protocol else len(p.dimension_names)
    assert s["calls"] == first_step + (1 if p.step1_protocol else 0) + s["parse_retries"]
    scored = [o for o in metric.outputs if not o.endswith((":level", ":expected", ":turn", ":interaction"))]
    assert s["items_missing"] == any(values[o][0] is None for o in scored)  # the item, once, whatever its dimensions


@pytest.mark.parametrize("name", protocol_names())
def test_citations_name_the_paper_not_a_file_the_user_lacks(name: str) -> None:
    """`judge list` showed "../shared/papers/004." after each citation: a folder of the developers' machine."""
    citation = load_protocol(name).citation
    assert "shared/papers" not in citation and "../" not in citation
    assert "Appendix" in citation or "Section" in citation  # where in the paper, still
