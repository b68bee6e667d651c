"""The unrated dialogues self-supervised training may read: only validation/dev splits and Chit-Chat.

Rated benchmarks are built on DailyDialog test, Blended Skill Talk test,
DailyDialog++ test and Topical-Chat test (USR-TC), so those files are never read here (:data:`ALLOWED` names the
only files; :func:`read_source` refuses anything else). Each source gives
:class:`Pair` records: a context (oldest turn first), its true next turn, and, for
DailyDialog++, its human-written adversarial negatives.

Example:
    >>> sorted(ALLOWED)[:4]
    ['bst-val', 'chitchat', 'dailydialog-valid', 'dailydialogpp-dev']
    >>> sorted(ALLOWED)[4:]
    ['topical-chat-valid-freq', 'topical-chat-valid-rare']
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from dialeval.errors import InputError
from dialeval.jsonl import iter_objects

#: Source name -> file under the shared data folder (``chitchat`` comes from its package).
ALLOWED: dict[str, str] = {
    "dailydialog-valid": "corpora/dailydialog/valid.json",
    "bst-val": "corpora/blended_skill_talk/val.json",
    "dailydialogpp-dev": "corpora/dailydialog_plusplus/dev.json",
    "chitchat": "",
    # Topical-Chat validation (the shared copy drops the 13 conversations that share a turn with USR-TC).
    "topical-chat-valid-freq": "corpora/topical_chat/valid_freq.json",
    "topical-chat-valid-rare": "corpora/topical_chat/valid_rare.json",
}


@dataclass(frozen=True)
class Pair:
    """One true (context, next turn) pair.

    Attributes:
        source: The :data:`ALLOWED` source name.
        dialogue: The dialogue id within the source.
        context: The turns before the response, oldest first (at least one).
        response: The true next turn.
        adversarial: Human-written negatives for this context (DailyDialog++ only).
    """

    source: str
    dialogue: str
    context: tuple[str, ...]
    response: str
    adversarial: tuple[str, ...] = ()


def source_path(name: str, data_dir: Path) -> Path:
    """Return the file of an allowed source.

    Raises:
        InputError: ``name`` is not an allowed training source.
    """
    if name not in ALLOWED or not ALLOWED[name]:
        raise InputError(f'"{name}" is not a file source for self-supervised training; allowed: {", ".join(ALLOWED)}')
    return data_dir / ALLOWED[name]


def _lines(path: Path) -> Iterator[tuple[int, dict[str, object]]]:
    return iter_objects(path)


def _texts(value: object, path: Path, line: int, key: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise InputError("expected a list of strings", path=path, line=line, field=key)
    return tuple(v.strip() for v in value)


def _dialogue_pairs(source: str, did: str, turns: list[str]) -> Iterator[Pair]:
    turns = [t for t in turns if t]
    for k in range(1, len(turns)):
        yield Pair(source, did, tuple(turns[:k]), turns[k])


def read_source(name: str, data_dir: Path, limit: int | None = None) -> list[Pair]:
    """Read the pairs of one allowed source (the first ``limit`` dialogues or contexts; None = all).

    Raises:
        InputError: An unknown source, or a malformed record (file, line and field named).
    """
    if name == "chitchat":
        from dialeval.data.chitchat import load_chitchat

        bench = load_chitchat(limit=limit)
        out: list[Pair] = []
        for did, d in bench.dialogues.items():
            out.extend(_dialogue_pairs(name, did, [t.text.strip() for t in d.turns]))
        return out
    path = source_path(name, data_dir)
    out = []
    if name.startswith("topical-chat"):
        return _topical_chat(name, path, limit)
    if name == "bst-val":
        with path.open(encoding="utf-8") as fh:
            records = json.load(fh)
        for n, rec in enumerate(records[:limit] if limit is not None else records):
            ctx = _texts(rec.get("dialogue"), path, n + 1, "dialogue")
            resp = rec.get("response")
            if not isinstance(resp, str) or not ctx:
                raise InputError("expected a non-empty dialogue and a response string", path=path, field=f"[{n}]")
            out.append(Pair(name, str(n), ctx, resp.strip()))
        return out
    for n, (line, rec) in enumerate(_lines(path)):
        if limit is not None and n >= limit:
            break
        if name == "dailydialog-valid":
            turns = rec.get("dialogue")
            if not isinstance(turns, list):
                raise InputError("expected a list of turns", path=path, line=line, field="dialogue")
            out.extend(_dialogue_pairs(name, str(n), [str(t.get("text", "")).strip() for t in turns]))
        else:
            ctx = _texts(rec.get("context"), path, line, "context")
            adv = _texts(rec.get("adversarial_negative_responses"), path, line, "adversarial_negative_responses")
            for r in _texts(rec.get("positive_responses"), path, line, "positive_responses"):
                out.append(Pair(name, str(rec.get("id", n)), ctx, r, adv))
    return out


def _topical_chat(name: str, path: Path, limit: int | None) -> list[Pair]:
    with path.open(encoding="utf-8") as fh:
        records = json.load(fh)
    if not isinstance(records, dict):
        raise InputError("expected an object of conversations by id", path=path)
    out: list[Pair] = []
    for n, (did, rec) in enumerate(records.items()):
        if limit is not None and n >= limit:
            break
        content = rec.get("content") if isinstance(rec, dict) else None
        if not isinstance(content, list) or not all(isinstance(t, dict) for t in content):
            raise InputError("expected a list of messages", path=path, field=f"{did}.content")
        out.extend(_dialogue_pairs(name, did, [str(t.get("message", "")).strip() for t in content]))
    return out
