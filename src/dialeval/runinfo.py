"""``run.json``: what a run did (command, signatures, settings, counts, timings), typed and versioned.

Every command that writes a ``run.json`` (``benchmark``, ``stress``, ``lmstyle``)
builds a :class:`RunInfo` and writes it with :func:`write_run_info`. ``schema_version``
is the version of this format (bumped when a field changes meaning);
``version`` is dialeval's own version. Unknown fields are refused, so a typo in
a command cannot write a field no reader knows.

Example:
    >>> info = RunInfo(kind="benchmark", command="dialeval benchmark", metrics={"bleu": {"signature": "bleu|x"}})
    >>> sorted(info.as_dict())
    ['command', 'kind', 'metrics', 'schema_version', 'version']
    >>> info.as_dict()["schema_version"]
    1
"""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

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


class RunInfo(BaseModel):
    """The contents of ``run.json``; fields a command does not set are left out of the file.

    Attributes:
        schema_version: Version of this format.
        kind: Which command wrote it.
        command: The command line.
        version: dialeval's version.
        metrics: Family (or ``style:<target>``) -> signature, seconds and counters.
        seconds: Wall time of the whole command.
    """

    model_config = ConfigDict(extra="forbid")

    schema_version: int = SCHEMA
    kind: Literal["benchmark", "stress", "ranking", "lmstyle"]
    command: str = Field(default_factory=command_line)
    version: str = __version__
    metrics: dict[str, MetricInfo] = Field(default_factory=dict)
    # what was scored
    benchmark: str | None = None
    source: str | None = None
    counts: dict[str, Any] | None = None
    dimension: str | None = None
    split: str | None = None
    contexts: int | None = None
    n: int | None = None
    # how
    skipped_metrics: dict[str, str] | None = None
    engine: dict[str, Any] | None = None
    cache: str | None = None
    seed: int | None = None
    bootstrap: dict[str, Any] | None = None
    # command-specific results and settings
    subsets: dict[str, Any] | None = None
    applied: dict[str, int] | None = None
    skipped: dict[str, int] | None = None
    ranked: dict[str, int] | None = None
    references_per_context: int | None = None
    warnings: list[str] | None = None
    generation: dict[str, Any] | None = None
    judge: dict[str, Any] | None = None
    seconds: float | None = None

    def as_dict(self) -> dict[str, Any]:
        """Return the JSON-ready dict: ``schema_version``, ``kind``, ``command``, ``version`` and the fields set."""
        always = {"schema_version", "kind", "command", "version", "metrics"}
        return self.model_dump(mode="json", include=always | self.model_fields_set)


def write_run_info(folder: Path, info: RunInfo) -> Path:
    """Write ``info`` to ``folder/run.json`` atomically; return the path."""
    path = folder / "run.json"
    with atomic_write(path) as handle:
        json.dump(info.as_dict(), handle, indent=2, ensure_ascii=False)
        handle.write("\n")
    return path
