"""The BYU Chit-Chat corpus (``pip install chitchat-dataset``) as an unrated benchmark for scale-out runs.

7,168 conversations; consecutive messages of one sender form one turn (138,737
turns). Every turn after a conversation's first is a candidate (system
``human``) whose context is the turns before it. There are no ratings and no
references: the corpus is for scoring at scale (``--engine ray``) and for
reference-free metrics; :func:`with_previous_turn_as_reference` adds a
stand-in reference for throughput measurements of reference-based metrics.

Example:
    >>> bench = load_chitchat(limit=2)
    >>> len(bench.dialogues), bench.candidates[0].turn_index
    (2, 1)
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from typing import Any

from dialeval.data.benchmark import Benchmark
from dialeval.errors import DialevalError
from dialeval.schema import Candidate, Dialogue, Turn


def _corpus() -> Any:
    try:
        import chitchat_dataset
    except ImportError as exc:
        raise DialevalError("the chitchat corpus needs its package: pip install chitchat-dataset") from exc
    return chitchat_dataset.Dataset()


def load_chitchat(limit: int | None = None) -> Benchmark:
    """Load the first ``limit`` conversations (all if None) as dialogues and candidates.

    Empty turns (no text after joining a sender's messages) are skipped and counted.
    """
    dialogues: dict[str, Dialogue] = {}
    candidates: list[Candidate] = []
    skipped: Counter[str] = Counter()
    for n, (conv_id, conv) in enumerate(_corpus().items()):
        if limit is not None and n >= limit:
            break
        turns: list[Turn] = []
        for group in conv["messages"]:
            text = " ".join(m["text"].strip() for m in group if m["text"].strip())
            if not text:
                skipped["empty turn"] += 1
                continue
            turns.append(Turn(speaker=group[0]["sender"][:8], text=text))
        dialogues[conv_id] = Dialogue(id=conv_id, turns=turns, domain="chitchat")
        candidates.extend(
            Candidate(id=f"{conv_id}:{i}", dialogue_id=conv_id, turn_index=i, system="human", text=t.text)
            for i, t in enumerate(turns)
            if i > 0
        )
    return Benchmark(
        name="chitchat", dialogues=dialogues, candidates=candidates, ratings=[], skipped=skipped,
        source="chitchat-dataset (BYU PCC lab)",
    )


def with_previous_turn_as_reference(bench: Benchmark) -> Benchmark:
    """Return ``bench`` with each candidate's previous turn as its one reference (for throughput only).

    Example:
        >>> b = with_previous_turn_as_reference(load_chitchat(limit=1))
        >>> b.candidates[0].references == [b.dialogues[b.candidates[0].dialogue_id].turns[0].text]
        True
    """
    cands = [
        c.model_copy(update={"references": [bench.dialogues[c.dialogue_id].turns[c.turn_index - 1].text]})
        for c in bench.candidates
    ]
    return dataclasses.replace(bench, candidates=cands)
