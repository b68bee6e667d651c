"""``run.json``: what a run did (command, signatures, settings, counts, timings), typed and versioned.

Every command that writes a ``run.json`` (``benchmark``, ``stress``, ``lmstyle``, ``train``)
builds its kind's model (:class:`BenchmarkRun`, :class:`StressRun`, :class:`RankingRun`,
:class:`LmstyleRun`, :class:`TrainRun`) and writes it with :func:`write_run_info`; ``RunInfo.model_validate``
reads one back as that kind's model (:class:`RunInfo` is the union of the kinds). ``schema_version``
is the version of this format (bumped when a field changes meaning);
``version`` is dialeval's own version. Unknown fields are refused, so a typo in
a command cannot write a field no reader knows.

Example:
    >>> info = BenchmarkRun(benchmark="usr-tc", command="dialeval benchmark", metrics={"bleu": {"signature": "x"}})
    >>> sorted(info.as_dict())
    ['benchmark', 'command', 'kind', 'metrics', 'schema_version', 'version']
    >>> info.as_dict()["schema_version"]
    1
"""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path
from typing import Annotated, Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, RootModel

from dialeval import __version__
from dialeval.atomic import atomic_write

#: The version of the run.json format.
SCHEMA = 1


def command_line() -> str:
    """Return the command line of this process as ``dialeval ARGS`` (shell-quoted)."""
    return "dialeval " + " ".join(shlex.quote(a) for a in sys.argv[1:])


class MetricInfo(BaseModel):
    """One metric family's signature, and its timing and run counters (judge calls, tokens)."""

    model_config = ConfigDict(extra="allow")

    signature: str
    seconds: float | None = None


class RunBase(BaseModel):
    """What every ``run.json`` holds; fields a command does not set are left out of the file.

    Attributes:
        schema_version: Version of this format.
        kind: Which command wrote it.
        command: The command line.
        version: dialeval's version.
        metrics: Family (or ``style:<target>``) -> signature, seconds and counters.
        skipped_metrics: Family -> why it did not run here.
        request: The scoring request as the command was given it (``ScoringRequest.record()``: metrics,
            parameters, device, engine and Ray options, cache, progress).
        engine: What ran where (the engine's description).
        cache: The score cache's file, or None without one.
        seconds: Wall time of the whole command.
    """

    model_config = ConfigDict(extra="forbid")

    #: The files the command writes in its folder on every run, run.json among them (``dialeval report`` refuses
    #: a folder that lacks one: it was read in part).
    FILES: ClassVar[tuple[str, ...]] = ("run.json",)

    schema_version: int = SCHEMA
    kind: str
    command: str = Field(default_factory=command_line)
    version: str = __version__
    metrics: dict[str, MetricInfo] = Field(default_factory=dict)
    skipped_metrics: dict[str, str] | None = None
    request: dict[str, Any] | None = None
    engine: dict[str, Any] | None = None
    cache: str | None = None
    seconds: float | None = None

    def as_dict(self) -> dict[str, Any]:
        """Return the JSON-ready dict: ``schema_version``, ``kind``, ``command``, ``version`` and the fields set."""
        always = {"schema_version", "kind", "command", "version", "metrics"}
        return self.model_dump(mode="json", include=always | self.model_fields_set)


class OnBenchmark(RunBase):
    """A run over a catalog benchmark, with bootstrap confidence intervals."""

    benchmark: str
    source: str | None = None
    seed: int | None = None
    bootstrap: dict[str, Any] | None = None


class BenchmarkRun(OnBenchmark):
    """``dialeval benchmark``: metric-human correlations (``counts``: the benchmark's sizes).

    ``notes``: the lines under its table, on the screen and in table.md: the metrics not run, the notes (fitted on
    the benchmark, texts read in part) and the warnings.
    """

    FILES = ("scores.jsonl", "table.md", "table.jsonl", "run.json")
    kind: Literal["benchmark"] = "benchmark"
    counts: dict[str, Any] | None = None
    dimension: str | None = None
    notes: list[str] | None = None


class StressRun(OnBenchmark):
    """``dialeval stress``: perturbations applied and skipped per name, and the subsets."""

    FILES = ("stress.jsonl", "stress.md", "run.json")  # stress_subsets.jsonl: with subsets only
    kind: Literal["stress"] = "stress"
    subsets: dict[str, Any] | None = None
    applied: dict[str, int] | None = None
    skipped: dict[str, int] | None = None


class RankingRun(OnBenchmark):
    """``dialeval stress --ranking``: the split, its contexts and the responses ranked per label."""

    FILES = ("ranking.jsonl", "ranking.md", "run.json")
    kind: Literal["ranking"] = "ranking"
    split: str | None = None
    contexts: int | None = None
    ranked: dict[str, int] | None = None
    references_per_context: int | None = None
    warnings: list[str] | None = None


class LmstyleRun(RunBase):
    """``dialeval lmstyle``: responses per dataset and style, the generation and the judge."""

    FILES = ("dialogues.jsonl", "candidates.jsonl", "scores.jsonl", "table.md", "lmstyle_tables.jsonl",
             "summary.jsonl", "run.json")  # fmt: skip
    kind: Literal["lmstyle"] = "lmstyle"
    n: int | None = None
    generation: dict[str, Any] | None = None
    judge: dict[str, Any] | None = None


class TrainRun(RunBase):
    """``dialeval train``: the mode, the benchmarks trained and tested on, their dimensions and the task."""

    FILES = ("results.jsonl", "results.md", "run.json")
    kind: Literal["train"] = "train"
    mode: str | None = None
    train: list[str] | None = None
    test: list[str] | None = None
    dimensions: dict[str, str] | None = None
    task: str | None = None
    seed: int | None = None


AnyRun = BenchmarkRun | StressRun | RankingRun | LmstyleRun | TrainRun


class RunInfo(RootModel[Annotated[AnyRun, Field(discriminator="kind")]]):
    """A ``run.json`` of any kind, read back typed: ``RunInfo.model_validate(data).root`` is that kind's model.

    Example:
        >>> run = RunInfo.model_validate({"kind": "stress", "benchmark": "usr-tc", "applied": {"shuffle": 3}}).root
        >>> type(run).__name__, run.applied
        ('StressRun', {'shuffle': 3})
    """


def write_run_info(folder: Path, info: RunBase) -> Path:
    """Write ``info`` to ``folder/run.json`` atomically; return the path."""
    path = folder / "run.json"
    with atomic_write(path) as handle:
        json.dump(info.as_dict(), handle, indent=2, ensure_ascii=False)
        handle.write("\n")
    return path
