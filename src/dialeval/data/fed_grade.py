"""FED (Mehri & Eskenazi, 2020) turn and dialogue ratings, and GRADE's human judgements.

FED (``fed_data.json``, one JSON array): records with a ``response`` are
turn-level, records without are dialogue-level. Each record becomes its own
dialogue (``fed-t0007`` / ``fed-d0012``, numbered by array index); ``annotations``
maps a dimension to one value per annotator, named by position (``"r1"``...;
the data has no annotator ids). String values starting ``"N/A ("`` are skipped
and counted, never averaged. Dialogue-level System turns become candidates, as
for DSTC9.

GRADE (``human_judgement.json``): ``HumanScores`` is a list stored as a string,
``Context`` is ``|||``-separated; coherence 1-5 per rater (``"r1"``...).
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any, Literal

from dialeval.data._common import (
    Where,
    field,
    iter_nonempty,
    number,
    read_json_records,
    split_turns,
    text_field,
)
from dialeval.data.benchmark import Benchmark
from dialeval.data.dstc9 import _system_turns, parse_turns
from dialeval.schema import Candidate, Dialogue, Rating, Turn

FED_TURN_SCALES = {"Understandable": "0-1", "Overall": "0-4"}
FED_DIALOGUE_SCALES = {"Consistent": "0-1", "Overall": "0-4"}
FED_DEFAULT_SCALE = "0-2"


def _annotations(
    rec: dict[str, Any],
    where: Where,
    item: str,
    scales: dict[str, str],
    level: Literal["turn", "dialogue"],
    skipped: Counter[str],
) -> list[Rating]:
    notes = field(rec, "annotations", where)
    if not isinstance(notes, dict):
        raise where.error("expected an object of dimension -> scores", field="annotations")
    out = []
    for dim, values in notes.items():
        if not isinstance(values, list):
            raise where.error("expected a list of per-annotator scores", field=f"annotations.{dim}")
        for k, value in enumerate(values):
            if isinstance(value, str) and value.startswith("N/A ("):
                skipped[f'fed: "N/A (...)" value ({dim})'] += 1
                continue
            out.append(
                Rating(item_id=item, dimension=dim, annotator=f"r{k + 1}",
                       value=number(value, where, f"annotations.{dim}[{k}]"),
                       scale=scales.get(dim, FED_DEFAULT_SCALE), level=level)
            )  # fmt: skip
    return out


def _fed(path: str | Path, *, turn_level: bool) -> Benchmark:
    p = Path(path)
    dialogues: dict[str, Dialogue] = {}
    candidates: list[Candidate] = []
    ratings: list[Rating] = []
    skipped: Counter[str] = Counter()
    for where, rec in read_json_records(p):
        if ("response" in rec) != turn_level:
            other = "fed-dialogue" if turn_level else "fed-turn"
            skipped[f"fed: record of the other level (loaded by {other})"] += 1
            continue
        turns = parse_turns(text_field(rec, "context", where), skipped)
        system = text_field(rec, "system", where)
        assert where.record is not None
        if turn_level:
            did = f"fed-t{where.record:04d}"
            response = parse_turns(text_field(rec, "response", where), skipped)
            if len(response) != 1:
                raise where.error("expected one 'System: ...' line", field="response")
            item = f"{did}:{system}"
            candidates.append(
                Candidate(id=item, dialogue_id=did, turn_index=len(turns), system=system,
                          text=response[0].text, tags={"system": system})
            )  # fmt: skip
            ratings += _annotations(rec, where, item, FED_TURN_SCALES, "turn", skipped)
        else:
            did = f"fed-d{where.record:04d}"
            candidates += _system_turns(did, system, turns, skipped)
            ratings += _annotations(rec, where, did, FED_DIALOGUE_SCALES, "dialogue", skipped)
        dialogues[did] = Dialogue(id=did, turns=turns, tags={"system": system})
    name = "fed-turn" if turn_level else "fed-dialogue"
    return Benchmark(name, dialogues, candidates, ratings, skipped, source=str(p))


def load_fed_turn(path: str | Path) -> Benchmark:
    """Load FED's turn-level records (those with a ``response``) from ``fed_data.json``.

    Example:
        >>> from dialeval.paths import shared_data_dir
        >>> b = load_fed_turn(shared_data_dir() / "samples/fed_data.sample.json")
        >>> b.counts()["items"], b.candidates[0].text
        (4, "It's probably boring, isn't it?")
    """
    return _fed(path, turn_level=True)


def load_fed_dialogue(path: str | Path) -> Benchmark:
    """Load FED's dialogue-level records (those without a ``response``) from ``fed_data.json``."""
    return _fed(path, turn_level=False)


def _score_list(rec: dict[str, Any], where: Where) -> list[Any]:
    raw = field(rec, "HumanScores", where)
    if isinstance(raw, str):
        try:
            raw = json.loads(raw)
        except json.JSONDecodeError:
            raise where.error(f"not a list of scores: {raw!r}", field="HumanScores") from None
    if not isinstance(raw, list):
        raise where.error(f"not a list of scores: {raw!r}", field="HumanScores")
    return raw


def load_grade(path: str | Path) -> Benchmark:
    """Load GRADE's ``human_judgement.json`` (coherence 1-5, one score per rater).

    Example:
        >>> from dialeval.paths import shared_data_dir
        >>> b = load_grade(shared_data_dir() / "samples/grade_human_judgement.sample.json")
        >>> b.counts()["items"], b.counts()["annotators"], b.candidates[0].id
        (5, 10, 'grade-dailydialog_EVAL-0:transformer_generator')
    """
    p = Path(path)
    dialogues: dict[str, Dialogue] = {}
    candidates: list[Candidate] = []
    ratings: list[Rating] = []
    seen: set[str] = set()
    for where, rec in read_json_records(p):
        raw_id = field(rec, "ID", where)
        dataset = text_field(rec, "Dataset", where)
        system = text_field(rec, "DialogModel", where)
        did = f"grade-{dataset}-{raw_id}"
        item = f"{did}:{system}"
        lines = list(iter_nonempty(text_field(rec, "Context", where), "|||"))
        speakers = split_turns(lines, "B")
        turns = [Turn(speaker=s, text=t) for s, t in zip(speakers, lines, strict=True)]
        if did in dialogues and dialogues[did].turns != turns:
            raise where.error(f"ID {raw_id!r} reused for another context", field="ID")
        if item in seen:
            raise where.error(f"duplicate (Dataset, ID, DialogModel) {item!r}", field="ID")
        seen.add(item)
        dialogues[did] = Dialogue(id=did, turns=turns, domain=dataset)
        candidates.append(
            Candidate(id=item, dialogue_id=did, turn_index=len(turns), system=system,
                      text=text_field(rec, "Response", where).strip(),
                      tags={"system": system, "dataset": dataset})
        )  # fmt: skip
        ratings.extend(
            Rating(item_id=item, dimension="coherence", annotator=f"r{k + 1}",
                   value=number(v, where, f"HumanScores[{k}]"), scale="1-5")
            for k, v in enumerate(_score_list(rec, where))
        )  # fmt: skip
    return Benchmark("grade", dialogues, candidates, ratings, source=str(p))
