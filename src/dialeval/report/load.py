r"""Read a results folder: what ``dialeval benchmark``, ``dialeval lmstyle`` or ``dialeval stress`` wrote.

Every file is optional except that a folder must hold at least one known file:
``run.json`` (command, signatures), ``scores.jsonl`` (Score records), ``table.jsonl``
(correlation rows), ``lmstyle_tables.jsonl`` and ``summary.jsonl`` (LMStyle tables),
``stress.jsonl`` (rows with ``metric``, ``perturbation``, ``value``), ``ranking.jsonl`` (the
DailyDialog++ ranking: ``metric``, ``negatives``, ``fraction``) and ``ratings.jsonl`` (a human
study's export, Rating records).

Example:
    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (d / "stress.jsonl").write_text('{"metric": "bleu", "perturbation": "shuffle", "value": -0.5}\n')
    >>> r = load_results(d)
    >>> r.kind, r.stress[0]["value"]
    ('stress', -0.5)
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dialeval.errors import InputError
from dialeval.jsonl import iter_objects, read_jsonl, read_text
from dialeval.schema import Rating, Score

KNOWN = ("run.json", "scores.jsonl", "table.jsonl", "lmstyle_tables.jsonl", "summary.jsonl", "stress.jsonl",
         "ranking.jsonl", "ratings.jsonl")  # fmt: skip


@dataclass
class Results:
    """The parsed content of one results folder (empty lists for absent files)."""

    path: Path
    run: dict[str, Any] = field(default_factory=dict)
    scores: list[Score] = field(default_factory=list)
    correlations: list[dict[str, Any]] = field(default_factory=list)
    lmstyle_tables: list[dict[str, Any]] = field(default_factory=list)
    summary: list[dict[str, Any]] = field(default_factory=list)
    stress: list[dict[str, Any]] = field(default_factory=list)
    ranking: list[dict[str, Any]] = field(default_factory=list)
    ratings: list[Rating] = field(default_factory=list)

    @property
    def kind(self) -> str:
        """``lmstyle``, ``benchmark``, ``stress``, ``ranking``, ``study`` or ``scores``."""
        if self.run.get("kind") == "lmstyle" or self.lmstyle_tables:
            return "lmstyle"
        if self.correlations:
            return "benchmark"
        if self.stress:
            return "stress"
        if self.ranking:
            return "ranking"
        return "study" if self.ratings and not self.scores else "scores"


def read_rows(path: Path, required: tuple[str, ...] = ()) -> list[dict[str, Any]]:
    """Read a JSONL file of objects, checking that each has the ``required`` fields."""
    rows: list[dict[str, Any]] = []
    for n, row in iter_objects(path):
        for key in required:
            if key not in row:
                raise InputError("missing", path=path, line=n, field=key)
        rows.append(row)
    return rows


def load_results(path: str | Path) -> Results:
    """Load a results folder.

    Raises:
        InputError: Not a folder, no known file in it, or a malformed file (named with line and field).
    """
    p = Path(path)
    if not p.is_dir():
        raise InputError("not a results folder", path=p)
    if not any((p / name).is_file() for name in KNOWN):
        raise InputError(f"no results here (looked for {', '.join(KNOWN)})", path=p)
    r = Results(path=p)
    if (p / "run.json").is_file():
        try:
            r.run = json.loads(read_text(p / "run.json"))
        except json.JSONDecodeError as exc:
            raise InputError(f"not JSON: {exc.msg}", path=p / "run.json", line=exc.lineno) from exc
    if (p / "scores.jsonl").is_file():
        r.scores = read_jsonl(p / "scores.jsonl", Score)
    if (p / "table.jsonl").is_file():
        r.correlations = read_rows(p / "table.jsonl", ("metric", "level", "method", "value"))
    if (p / "lmstyle_tables.jsonl").is_file():
        r.lmstyle_tables = read_rows(p / "lmstyle_tables.jsonl", ("table", "model", "source", "column", "value"))
    if (p / "summary.jsonl").is_file():
        r.summary = read_rows(p / "summary.jsonl", ("model",))
    if (p / "stress.jsonl").is_file():
        r.stress = read_rows(p / "stress.jsonl", ("metric", "perturbation", "value"))
    if (p / "ranking.jsonl").is_file():
        r.ranking = read_rows(p / "ranking.jsonl", ("metric", "negatives", "fraction"))
    if (p / "ratings.jsonl").is_file():
        r.ratings = read_jsonl(p / "ratings.jsonl", Rating)
    return r


def human_ratings(results: Results) -> tuple[list[Rating], str]:
    """Return the ratings a benchmark run was compared with, reloaded from its catalog entry, and a note.

    The note says why there are none (e.g. the data is not on this machine).
    """
    name, source = results.run.get("benchmark"), results.run.get("source")
    if not name:
        return [], "run.json names no benchmark"
    from dialeval.data.catalog import load_benchmark
    from dialeval.errors import DialevalError

    try:
        bench = load_benchmark(str(name), source if source and Path(str(source)).exists() else None)
    except (DialevalError, OSError) as exc:
        return [], f"human ratings of {name} could not be reloaded: {exc}"
    return bench.ratings, ""
