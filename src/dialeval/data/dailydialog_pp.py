"""DailyDialog++ (Sai et al., 2020): five good, five adversarial and five random responses per context.

The published files (``dev.json``, ``test.json``; copy from royny/SelF-Eval in
``corpora/dailydialog_plusplus/`` of the shared data) are JSON Lines, one object
per context: ``id`` (int), ``context`` (the turns, oldest first),
``positive_responses``, ``adversarial_negative_responses`` and
``random_negative_responses`` (five strings each). There are no human scores:
the labels are by construction. Adversarial negatives were written to overlap
with the context while being inappropriate; random negatives come from other
dialogues.

Every response becomes a :class:`~dialeval.schema.Candidate` of its context with
``system`` and the tag ``label`` set to ``good``, ``adversarial`` or ``random``,
and the tag ``index`` to its position (0-4) in its list. Context turns alternate
speakers so that the response is spoken by ``B``. The candidates have no
references (:func:`dialeval.stress.ranking.hold_out_references` makes some).

This data set is not in the catalog: ``dialeval stress --benchmark dailydialog++``
reads it directly (:func:`default_path`).

Example:
    >>> b = load_dailydialog_pp(default_path("test"))
    >>> b.counts()["contexts"], b.counts()["items"], b.counts()["systems"], b.dialogues["ddpp-test-0"].turns[-1].speaker
    (1142, 17130, 3, 'A')
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

from dialeval.data._common import Where, field, read_jsonl_records, split_turns
from dialeval.data.benchmark import Benchmark
from dialeval.errors import InputError
from dialeval.schema import Candidate, Dialogue, Turn

NAME = "dailydialog++"
SPLITS = ("test", "dev")
FOLDER = "corpora/dailydialog_plusplus"
#: JSON field -> label of its responses.
LABELS = {
    "positive_responses": "good",
    "adversarial_negative_responses": "adversarial",
    "random_negative_responses": "random",
}


def default_path(split: str = "test") -> Path:
    """Return ``<shared data>/corpora/dailydialog_plusplus/<split>.json`` (an error if there is no shared data).

    Example:
        >>> default_path("dev").name
        'dev.json'
    """
    if split not in SPLITS:
        raise InputError(f'unknown DailyDialog++ split "{split}"; use {", ".join(SPLITS)}', field="--split")
    from dialeval.paths import shared_data_dir

    root = shared_data_dir()
    if root is None:
        raise InputError(
            f"DailyDialog++ is not available: no shared data folder ($DIALEVAL_DATA, ../shared/data); "
            f"it needs {FOLDER}/{split}.json (or pass the file with --path)"
        )
    return root / FOLDER / f"{split}.json"


def _strings(rec: dict[str, Any], key: str, where: Where) -> list[str]:
    value = field(rec, key, where)
    if not isinstance(value, list) or not all(isinstance(x, str) for x in value):
        raise where.error("expected a list of strings", field=key)
    return [x.strip() for x in value]


def load_dailydialog_pp(path: str | Path, split: str = "test") -> Benchmark:
    """Load one split of DailyDialog++ from its JSON Lines file (or a folder holding ``<split>.json``).

    Empty responses are skipped and counted in ``skipped``; a context whose good
    and negative lists share a response is kept (as published) and reported in
    ``warnings``.
    """
    p = Path(path)
    file = p / f"{split}.json" if p.is_dir() else p
    if not file.is_file():
        raise InputError("file not found", path=file)
    tag = file.name.split(".")[0]
    dialogues: dict[str, Dialogue] = {}
    candidates: list[Candidate] = []
    skipped: Counter[str] = Counter()
    overlap: list[str] = []
    for where, rec in read_jsonl_records(file):
        raw_id = field(rec, "id", where)
        if isinstance(raw_id, bool) or not isinstance(raw_id, int | str):
            raise where.error(f"expected an id, found {raw_id!r}", field="id")
        did = f"ddpp-{tag}-{raw_id}"
        if did in dialogues:
            raise where.error(f"duplicate id {raw_id!r}", field="id")
        lines = [t for t in _strings(rec, "context", where) if t]
        if not lines:
            raise where.error("empty context", field="context")
        speakers = split_turns(lines, "B")
        dialogues[did] = Dialogue(
            id=did,
            turns=[Turn(speaker=s, text=t) for s, t in zip(speakers, lines, strict=True)],
            domain="dailydialog",
        )
        texts: dict[str, list[str]] = {}
        for key, label in LABELS.items():
            texts[label] = _strings(rec, key, where)
            for k, text in enumerate(texts[label]):
                if not text:
                    skipped[f"empty {label} response"] += 1
                    continue
                candidates.append(
                    Candidate(
                        id=f"{did}:{label}{k}",
                        dialogue_id=did,
                        turn_index=len(lines),
                        system=label,
                        text=text,
                        tags={"label": label, "index": str(k)},
                    )
                )
        if set(texts["good"]) & (set(texts["adversarial"]) | set(texts["random"])):
            overlap.append(str(raw_id))
    warnings = []
    if overlap:
        warnings.append(
            f"{file.name}: {len(overlap)} context(s) list a response as both good and negative "
            f"(ids {', '.join(overlap[:10])}"
            f"{', ...' if len(overlap) > 10 else ''}); kept as published"
        )
    return Benchmark(
        name=NAME,
        dialogues=dialogues,
        candidates=candidates,
        ratings=[],
        skipped=skipped,
        source=str(file),
        warnings=warnings,
    )
