r"""Load your own data: a JSONL/CSV file with a column mapping, or dialeval's record files.

Example:
    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "mine.csv"
    >>> _ = p.write_text("ctx,resp,sys,q_ann1,q_ann2\nhi|how are you?,fine,bot,4,5\n")
    >>> m = ColumnMapping(response="resp", context="ctx", turn_separator="|", system="sys",
    ...                   annotator_columns={"q_ann1": "ann1", "q_ann2": "ann2"},
    ...                   dimension="quality", scale="1-5")
    >>> b = load_table(p, m)
    >>> b.candidates[0].id, [(r.annotator, r.value) for r in b.ratings]
    ('mine-0000:bot', [('ann1', 4.0), ('ann2', 5.0)])
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dialeval.data._common import (
    Where,
    iter_nonempty,
    number,
    read_csv_rows,
    read_jsonl_records,
    split_turns,
)
from dialeval.data.benchmark import Benchmark
from dialeval.errors import InputError
from dialeval.jsonl import read_jsonl
from dialeval.schema import Candidate, Dialogue, Rating, Turn


@dataclass(frozen=True)
class ColumnMapping:
    """Which column holds what.

    Attributes:
        response: The response column.
        context: The context column (empty contexts give zero-turn dialogues).
        turn_separator: Splits the context into turns (speakers alternate "A"/"B",
            the response speaker "B" following the last turn).
        system: The system column (``"unknown"`` without one).
        references: Reference columns; a JSONL value may be a list of references.
        ratings: Long or single-annotator form: rating column -> dimension.
        annotator: Long form: the column naming the annotator of ``ratings``
            (without it the annotator is ``"annotator"``).
        annotator_columns: Wide form: one column per annotator -> annotator name,
            all rating ``dimension``.
        dimension: The dimension of ``annotator_columns``.
        scale: The answer scale of every rating, e.g. ``"1-5"``.
    """

    response: str
    context: str | None = None
    turn_separator: str = "\n"
    system: str | None = None
    references: tuple[str, ...] = ()
    ratings: Mapping[str, str] = field(default_factory=dict)
    annotator: str | None = None
    annotator_columns: Mapping[str, str] = field(default_factory=dict)
    dimension: str = "rating"
    scale: str = ""

    def columns(self) -> list[str]:
        """Return every column this mapping reads."""
        optional = [self.context, self.system, self.annotator]
        return [
            self.response,
            *(c for c in optional if c),
            *self.references,
            *self.ratings,
            *self.annotator_columns,
        ]


def _records(path: Path, mapping: ColumnMapping) -> list[tuple[Where, dict[str, Any]]]:
    if path.name.endswith((".jsonl", ".jsonl.gz")):
        records = read_jsonl_records(path)
        for where, rec in records:
            for col in mapping.columns():
                if col not in rec:
                    raise where.error("missing field", field=col)
        return records
    index, rows = read_csv_rows(path, required=mapping.columns())
    return [(where, {name: row[i] for name, i in index.items() if i < len(row)}) for where, row in rows]


def load_table(path: str | Path, mapping: ColumnMapping, *, name: str | None = None) -> Benchmark:
    """Load a CSV (header row) or JSONL file of rated responses described by ``mapping``.

    Rows with the same context share a dialogue; rows with the same context,
    system and response share a candidate (so the long form gives one row per
    annotator). Empty rating cells are skipped and counted.
    """
    p = Path(path)
    bench = name or p.name.split(".")[0]
    dialogues: dict[str, Dialogue] = {}
    context_ids: dict[str, str] = {}
    items: dict[tuple[str, str, str], Candidate] = {}
    ratings: list[Rating] = []
    skipped: Counter[str] = Counter()
    per_system: Counter[tuple[str, str]] = Counter()
    for where, rec in _records(p, mapping):
        context = str(rec[mapping.context]) if mapping.context else ""
        if context not in context_ids:
            context_ids[context] = did = f"{bench}-{len(context_ids):04d}"
            lines = list(iter_nonempty(context, mapping.turn_separator))
            turns = [Turn(speaker=s, text=t) for s, t in zip(split_turns(lines, "B"), lines, strict=True)]
            dialogues[did] = Dialogue(id=did, turns=turns)
        did = context_ids[context]
        system = str(rec[mapping.system]).strip() if mapping.system else "unknown"
        response = str(rec[mapping.response]).strip()
        key = (did, system, response)
        if key not in items:
            n = per_system[key[:2]]
            per_system[key[:2]] += 1
            refs: list[str] = []
            for col in mapping.references:
                value = rec[col]
                refs += [str(v).strip() for v in value] if isinstance(value, list) else [str(value).strip()]
            items[key] = Candidate(
                id=f"{did}:{system}" + (f"#{n + 1}" if n else ""), dialogue_id=did,
                turn_index=len(dialogues[did].turns), system=system, text=response,
                references=[r for r in refs if r], tags={"system": system},
            )  # fmt: skip
        item = items[key].id
        annotator = str(rec[mapping.annotator]).strip() if mapping.annotator else "annotator"
        cells = [(c, d, annotator) for c, d in mapping.ratings.items()]
        cells += [(c, mapping.dimension, a) for c, a in mapping.annotator_columns.items()]
        for col, dim, who in cells:
            value = rec[col]
            if value is None or (isinstance(value, str) and not value.strip()):
                skipped[f"empty rating ({col})"] += 1
                continue
            ratings.append(
                Rating(item_id=item, dimension=dim, annotator=who,
                       value=number(value, where, col), scale=mapping.scale)
            )  # fmt: skip
    return Benchmark(bench, dialogues, list(items.values()), ratings, skipped, source=str(p))


RECORD_FILES = ("dialogues.jsonl", "candidates.jsonl", "ratings.jsonl")


def load_records(folder: str | Path, *, name: str | None = None) -> Benchmark:
    """Load dialeval's own record files: ``dialogues.jsonl``, ``candidates.jsonl``, ``ratings.jsonl``.

    Candidates must name a known dialogue; an error names the file, line and field.
    """
    root = Path(folder)
    missing = [f for f in RECORD_FILES if not (root / f).is_file()]
    if missing:
        raise InputError(f"missing {', '.join(missing)} (needs {', '.join(RECORD_FILES)})", path=root)
    dialogues = {d.id: d for d in read_jsonl(root / "dialogues.jsonl", Dialogue)}
    candidates = read_jsonl(root / "candidates.jsonl", Candidate)
    for lineno, cand in enumerate(candidates, start=1):
        if cand.dialogue_id not in dialogues:
            raise InputError(
                f"unknown dialogue {cand.dialogue_id!r} (record {lineno}; blank lines not counted)",
                path=root / "candidates.jsonl",
                field="dialogue_id",
            )
    ratings = read_jsonl(root / "ratings.jsonl", Rating)
    return Benchmark(name or root.name, dialogues, candidates, ratings, source=str(root))
