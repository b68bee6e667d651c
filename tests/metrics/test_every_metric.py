"""Every registered metric family through the shared tester, and the metadata every family carries.

Each family in the registry (the built-in ones and every ``judge:<protocol>``) runs
:func:`~tests.metrics.metric_tester.check_metric` on the same two tiny items: the
outputs it declares and no other, one finite value per item, and values that do not
depend on the batch size, the order of the items or a duplicate. A family whose extra
is missing here is skipped with the reason it gives. The judges and the LM likelihood
spend seconds per call on a CPU: their full run is ``slow``; the fast twin runs one
judge with its request cache, which answers the repeated requests.
"""

from __future__ import annotations

import importlib.util
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.metrics.metric_tester import check_metric
from typer.testing import CliRunner

from dialeval.cli import app
from dialeval.judges.protocol import protocol_registry
from dialeval.metrics import METRICS, load_builtin_metrics
from dialeval.metrics.base import Metric, MetricInput, needs
from dialeval.schema import Turn

ROOT = Path(__file__).resolve().parents[2]

_spec = importlib.util.spec_from_file_location("tiny_classifier", ROOT / "tests" / "models" / "tiny_classifier.py")
assert _spec is not None and _spec.loader is not None
tiny = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(tiny)

load_builtin_metrics()
FAMILIES = METRICS.names()
#: Seconds per call on a CPU (an LLM judge per request, the LM's load): the full tester run is slow.
SLOW = {n for n in FAMILIES if n.startswith("judge:")} | {"likelihood"}
#: Families without a unit per output. quality.py is the lead's file in this round: its class gains
#: ``units`` when the branches merge, and this entry goes.
WITHOUT_UNITS: set[str] = set()

ITEMS = [
    MetricInput(
        response="Yes, I love Miles Davis.",
        context=(Turn(speaker="A", text="Hi!"), Turn(speaker="B", text="Hello."), Turn(speaker="A", text="Like jazz?")),
        references=("I do, mostly bebop.",),
        knowledge=("Miles Davis was a jazz trumpeter.",),
    ),
    MetricInput(
        response="No, rain makes me sad.",
        context=(Turn(speaker="A", text="Do you like rain?"),),
        references=("Not really, I like sun.",),
        knowledge=("I live in Paris.",),
    ),
]


@pytest.fixture
def private_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A request cache of this test's own (judges keep one under ``$DIALEVAL_CACHE``)."""
    monkeypatch.setenv("DIALEVAL_CACHE", str(tmp_path / "cache"))
    yield tmp_path


def _params(name: str, folder: Path) -> dict[str, Any]:
    """What a family needs beyond its defaults to run here."""
    if name == "nli" and importlib.util.find_spec("transformers"):
        # No NLI model installs offline: a real transformers classifier with random weights (tests/models).
        return {"model": str(tiny.build(folder / "nli", ["entailment", "neutral", "contradiction"]))}
    if name == "judge:custom":
        return {"protocol": str(protocol_registry().get("lmstyle-appropriateness")), "cache": False}
    if name.startswith("judge:"):
        return {"cache": False}  # every call computed: the tester's batches must not be answered by the cache
    return {}


def _built(name: str, folder: Path, **extra: Any) -> Metric:
    cls = METRICS.get(name)
    params = {**_params(name, folder), **extra}
    reason = cls.unavailable_reason(params)
    if reason:
        pytest.skip(f"{name}: {reason}")
    return cls(**params)


def _marks(name: str) -> list[pytest.MarkDecorator]:
    return [pytest.mark.slow] if name in SLOW else []


@pytest.mark.parametrize("name", [pytest.param(n, marks=_marks(n)) for n in FAMILIES])
def test_every_registered_family_passes_the_shared_tester(name: str, private_cache: Path) -> None:
    metric = _built(name, private_cache)
    check_metric(metric, ITEMS, batch_sizes=(1,), atol=1e-4)  # two items: size 1 is the only other split


def test_a_judge_passes_the_shared_tester_fast(private_cache: Path) -> None:
    """The judges' fast twin: one judge, its request cache on, so each distinct request is computed once."""
    metric = _built("judge:lmstyle-appropriateness", private_cache, cache=True)
    values = check_metric(metric, ITEMS, batch_sizes=(1,))
    assert all(0 <= v <= 100 for v in values["judge:lmstyle-appropriateness"])
    assert metric.run_summary()["calls"] == len(ITEMS)  # the tester's repeats came from the cache


@pytest.mark.parametrize("name", FAMILIES)
def test_every_family_names_a_unit_per_output(name: str) -> None:
    cls = METRICS.get(name)
    if name in WITHOUT_UNITS:
        assert not cls.units, f"{name} has units now: take it out of WITHOUT_UNITS"
        return
    assert set(cls.units) == set(cls.outputs)
    assert all(cls.unit(o) and cls.unit(o) != "score" for o in cls.outputs)


def _extras() -> dict[str, set[str]]:
    """``{extra: normalised distribution names}`` from pyproject.toml."""
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["project"]["optional-dependencies"]
    return {extra: {_dist(req) for req in reqs} for extra, reqs in meta.items()}


def _dist(requirement: str) -> str:
    name = requirement.split(";")[0]
    for stop in "<>=![ ":
        name = name.split(stop)[0]
    return name.strip().lower().replace("_", "-")


@pytest.mark.parametrize("name", FAMILIES)
def test_every_requirement_names_an_extra_that_installs_it(name: str) -> None:
    extras = _extras()
    for req in METRICS.get(name).requires:
        assert req.extra in extras, f"{name}: no extra [{req.extra}] in pyproject.toml"
        assert req.module.lower().replace("_", "-") in extras[req.extra], f"{name}: [{req.extra}] lacks {req.module}"


def test_a_missing_module_in_requires_stops_the_metric_with_the_install_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # No module can be uninstalled for a test: the family is given a requirement that no environment has.
    monkeypatch.setattr(METRICS.get("length"), "requires", needs("models", "no_such_module_here"))
    data = tmp_path / "t.csv"
    data.write_text("context,response\nHi!,Hello there.\n", "utf-8")
    out = tmp_path / "s.jsonl"
    res = CliRunner().invoke(app, ["score", "--path", str(data), "--context-col", "context", "--response-col",
                                   "response", "-m", "length", "--no-cache", "-o", str(out)])  # fmt: skip
    assert res.exit_code == 2, res.output
    line = " ".join(res.output.split())  # the console wraps long lines
    assert "metric \"length\" cannot run here: needs no_such_module_here: pip install 'dialeval[models]'" in line
    assert not out.exists()
