"""USR Topical-Chat and Persona-Chat (Mehri & Eskenazi, 2020), raw and UniEval's averaged copy.

One dialogue per context (the context split on newlines, empty lines dropped,
speakers "A"/"B" alternating so that the response speaker "B" follows the last
turn); ``knowledge`` holds the fact or persona lines. One candidate per response,
id ``<dialogue id>:<model>`` (e.g. ``usr-tc-07:Argmax Decoding``), ``system`` and
``tags["system"]`` the model name.

References: every candidate's reference is the context's "Original Ground
Truth" response, except the Original Ground Truth candidate itself, whose
reference is the context's "New Human Generated" response.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

from dialeval.data._common import (
    Where,
    iter_nonempty,
    number,
    read_json_records,
    score_list,
    split_turns,
    text_field,
)
from dialeval.data.benchmark import Benchmark
from dialeval.schema import Candidate, Dialogue, Rating, Turn

USR_SCALES: dict[str, str] = {
    "Understandable": "0-1",
    "Natural": "1-3",
    "Maintains Context": "1-3",
    "Engaging": "1-3",
    "Uses Knowledge": "0-1",
    "Overall": "1-5",
}
"""The six USR dimensions and their answer scales."""

UNIEVAL_DIMENSIONS: dict[str, str] = {
    "understandability": "Understandable",
    "naturalness": "Natural",
    "coherence": "Maintains Context",
    "engagingness": "Engaging",
    "groundedness": "Uses Knowledge",
    "overall": "Overall",
}
"""UniEval's renamed dimension -> the USR name (checked numerically in the tests)."""

GROUND_TRUTH = "Original Ground Truth"
NEW_HUMAN = "New Human Generated"
UNIEVAL_ANNOTATOR = "unieval-mean"


def _dialogue(did: str, context: str, knowledge: str, domain: str) -> Dialogue:
    lines = list(iter_nonempty(context))
    speakers = split_turns(lines, "B")
    return Dialogue(
        id=did,
        turns=[Turn(speaker=s, text=t) for s, t in zip(speakers, lines, strict=True)],
        knowledge=list(iter_nonempty(knowledge)),
        domain=domain,
    )


def _references(system: str, by_system: dict[str, str]) -> list[str]:
    ref_system = NEW_HUMAN if system == GROUND_TRUTH else GROUND_TRUTH
    return [by_system[ref_system]] if ref_system in by_system else []


def _candidates(
    dialogue: Dialogue, responses: list[tuple[str, str]], skipped: Counter[str]
) -> list[Candidate]:
    by_system = dict(responses)
    out = []
    for system, text in responses:
        refs = _references(system, by_system)
        if not refs:
            skipped["usr: no reference response in this context (candidate kept without one)"] += 1
        out.append(
            Candidate(
                id=f"{dialogue.id}:{system}",
                dialogue_id=dialogue.id,
                turn_index=len(dialogue.turns),
                system=system,
                text=text,
                references=refs,
                tags={"system": system},
            )
        )
    return out


def _repeated(names: list[str]) -> tuple[int, str] | None:
    """Return the place and name of the first name given again in ``names``, or None.

    Example:
        >>> _repeated(["sm", "me", "sm"]), _repeated(["a", "b"])
        ((2, 'sm'), None)
    """
    return next(((k, n) for k, n in enumerate(names) if n in names[:k]), None)


def _load_raw(path: Path, name: str, prefix: str, domain: str) -> Benchmark:
    dialogues: dict[str, Dialogue] = {}
    candidates: list[Candidate] = []
    ratings: list[Rating] = []
    skipped: Counter[str] = Counter()
    for where, rec in read_json_records(path):
        did = f"{prefix}-{where.record:02d}"
        dialogue = _dialogue(
            did, text_field(rec, "context", where), text_field(rec, "fact", where), domain
        )
        annotators = score_list(rec, "annotators", where)
        if again := _repeated([str(a) for a in annotators]):  # each of their ratings was kept twice under one name
            raise where.error(f"annotator {again[1]!r} is listed twice (annotators[{again[0]}])", field="annotators")
        raw_responses = score_list(rec, "responses", where)
        responses: list[tuple[str, str]] = []
        for j, resp in enumerate(raw_responses):
            if not isinstance(resp, dict):
                raise where.error(f"responses[{j}] is not an object", field="responses")
            system = text_field(resp, "model", where)
            responses.append((system, text_field(resp, "response", where).strip()))
            for dim, scale in USR_SCALES.items():
                values = score_list(resp, dim, where)
                if len(values) != len(annotators):
                    raise where.error(
                        f"responses[{j}] has {len(values)} scores for {len(annotators)} annotators",
                        field=dim,
                    )
                ratings.extend(
                    Rating(
                        item_id=f"{did}:{system}",
                        dimension=dim,
                        annotator=str(annotator),
                        value=number(value, where, f"responses[{j}].{dim}"),
                        scale=scale,
                    )
                    for annotator, value in zip(annotators, values, strict=True)
                )
        models = [system for system, _ in responses]
        if again := _repeated(models):  # a second item of one id: score and meta refused it naming no file
            j, system = again
            raise where.error(f"responses[{j}]: model {system!r} answers this context again (first in "
                              f"responses[{models.index(system)}])", field="responses.model")  # fmt: skip
        dialogues[did] = dialogue
        candidates.extend(_candidates(dialogue, responses, skipped))
    return Benchmark(name, dialogues, candidates, ratings, skipped, source=str(path))


def load_usr_topical_chat(path: str | Path) -> Benchmark:
    """Load USR Topical-Chat (``usr_topical_chat.json``): 360 responses, 3 ratings each.

    Example:
        >>> from dialeval.paths import shared_data_dir
        >>> b = load_usr_topical_chat(shared_data_dir() / "usr/usr_topical_chat.json")
        >>> b.candidates[1].id, b.counts()["items"]
        ('usr-tc-00:Argmax Decoding', 360)
    """
    return _load_raw(Path(path), "usr-tc", "usr-tc", "topical-chat")


def load_usr_persona_chat(path: str | Path) -> Benchmark:
    """Load USR Persona-Chat (``pc_usr_data.json``): 300 responses, 3 ratings each."""
    return _load_raw(Path(path), "usr-pc", "usr-pc", "persona-chat")


def load_usr_topical_chat_unieval(path: str | Path) -> Benchmark:
    """Load UniEval's averaged USR Topical-Chat copy into the raw loader's ids and dimensions.

    Contexts are numbered in first-appearance order, as in the raw file; each
    mean score becomes one rating by the pseudo-annotator ``"unieval-mean"``.
    """
    p = Path(path)
    contexts: dict[str, tuple[str, list[tuple[str, str]]]] = {}
    seen: dict[tuple[str, str], Where] = {}  # where each (source, system_id) was first
    ratings: list[Rating] = []
    for where, rec in read_json_records(p):
        source = text_field(rec, "source", where)
        knowledge = text_field(rec, "context", where)
        system = text_field(rec, "system_id", where)
        _, responses = contexts.setdefault(source, (knowledge, []))
        if (first := seen.setdefault((source, system), where)) is not where:  # one item twice, a mean rating each
            raise where.error(f"system_id {system!r} answers this source again (first on line {first.line}, "
                              f"record {first.record})", field="system_id")  # fmt: skip
        responses.append((system, text_field(rec, "system_output", where).strip()))
        did = f"usr-tc-{list(contexts).index(source):02d}"
        scores: Any = rec.get("scores")
        if not isinstance(scores, dict):
            raise where.error("missing or not an object", field="scores")
        for key, dim in UNIEVAL_DIMENSIONS.items():
            value = number(scores.get(key), where, f"scores.{key}")
            ratings.append(
                Rating(
                    item_id=f"{did}:{system}",
                    dimension=dim,
                    annotator=UNIEVAL_ANNOTATOR,
                    value=value,
                    scale=USR_SCALES[dim],
                )
            )
    dialogues: dict[str, Dialogue] = {}
    candidates: list[Candidate] = []
    skipped: Counter[str] = Counter()
    for i, (source, (knowledge, responses)) in enumerate(contexts.items()):
        dialogue = _dialogue(f"usr-tc-{i:02d}", source, knowledge, "topical-chat")
        dialogues[dialogue.id] = dialogue
        candidates.extend(_candidates(dialogue, responses, skipped))
    return Benchmark("usr-tc", dialogues, candidates, ratings, skipped, source=str(p))
