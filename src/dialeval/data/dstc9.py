"""DSTC9 interactive track (Gunasekara et al., 2021), as released with DialoFlow's Flow Score.

Each ``chatbotN.json`` holds one record per rating; records of one file with the
same ``context`` rate the same dialogue, so they become one dialogue
(``dstc9-chatbotN-007``) rated by several raters. The data has no rater ids:
raters are named by their position among that dialogue's records (``"r1"``,
``"r2"``, ...), so ``"r1"`` is not the same person across dialogues.

Ratings are dialogue-level (``level="dialogue"``). Turns come from the
``User: ...`` / ``System: ...`` lines; a line with neither prefix continues the
previous turn. Every non-empty System turn is also a candidate (its preceding
turns are the context) so that turn-level metrics can be averaged per dialogue.
"N/A" values are skipped and counted.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

from dialeval.data._common import Where, number, read_json_records, text_field
from dialeval.data.benchmark import Benchmark
from dialeval.errors import InputError
from dialeval.schema import Candidate, Dialogue, Rating, Turn

DSTC9_SCALES: dict[str, str] = {
    "human (overall)": "1-5",
    "consistent": "0-1",
    **{
        dim: "1-3"
        for dim in (
            "coherent",
            "diverse",
            "error recovery",
            "flexible",
            "informative",
            "inquisitive",
            "likeable",
            "topic depth",
            "understanding",
        )
    },
}
"""The eleven DSTC9 dimensions and their scales."""

_PREFIX = re.compile(r"^(User|System):\s?")


def parse_turns(text: str, skipped: Counter[str]) -> list[Turn]:
    r"""Parse ``User: ...``/``System: ...`` lines; unprefixed lines continue the previous turn.

    Example:
        >>> [(t.speaker, t.text) for t in parse_turns("User: hi\nSystem: hello\nthere", Counter())]
        [('User', 'hi'), ('System', 'hello there')]
    """
    turns: list[tuple[str, str]] = []
    for line in text.split("\n"):
        match = _PREFIX.match(line)
        if match:
            turns.append((match.group(1), line[match.end() :].strip()))
        elif line.strip():
            if not turns:
                skipped["text before the first User/System line (dropped)"] += 1
                continue
            speaker, prev = turns[-1]
            turns[-1] = (speaker, f"{prev} {line.strip()}".strip())
    return [Turn(speaker=s, text=t) for s, t in turns]


def _bot_files(path: Path) -> list[Path]:
    if path.is_file():
        return [path]
    files = sorted(path.glob("chatbot*.json"), key=lambda p: int(re.sub(r"\D", "", p.stem) or 0))
    if not files:
        raise InputError("no chatbot*.json files in this folder", path=path)
    return files


def load_dstc9(path: str | Path) -> Benchmark:
    """Load the DSTC9 interactive ratings from a folder of ``chatbotN.json`` files (or one file).

    Example:
        >>> from dialeval.paths import shared_data_dir
        >>> b = load_dstc9(shared_data_dir() / "dstc9_interactive/chatbot1.json")
        >>> b.counts()["dialogues"], b.ratings[0].annotator, b.ratings[0].level
        (200, 'r1', 'dialogue')
    """
    root = Path(path)
    dialogues: dict[str, Dialogue] = {}
    candidates: list[Candidate] = []
    ratings: list[Rating] = []
    skipped: Counter[str] = Counter()
    for file in _bot_files(root):
        system = file.stem
        ids: dict[str, str] = {}
        raters: Counter[str] = Counter()
        for where, rec in read_json_records(file):
            context = text_field(rec, "context", where)
            if context not in ids:
                ids[context] = did = f"dstc9-{system}-{len(ids):03d}"
                turns = parse_turns(context, skipped)
                dialogues[did] = Dialogue(id=did, turns=turns, tags={"system": system})
                candidates.extend(_system_turns(did, system, turns, skipped))
            did = ids[context]
            raters[did] += 1
            ratings.extend(_ratings(rec, where, did, f"r{raters[did]}", skipped))
    return Benchmark("dstc9", dialogues, candidates, ratings, skipped, source=str(root))


def _system_turns(
    did: str, system: str, turns: list[Turn], skipped: Counter[str]
) -> list[Candidate]:
    out = []
    for i, turn in enumerate(turns):
        if turn.speaker != "System":
            continue
        if not turn.text:
            skipped["dstc9: empty System turn (no candidate)"] += 1
            continue
        out.append(
            Candidate(
                id=f"{did}:t{i:02d}",
                dialogue_id=did,
                turn_index=i,
                system=system,
                text=turn.text,
                tags={"system": system},
            )
        )
    return out


def _ratings(
    rec: dict[str, object], where: Where, did: str, rater: str, skipped: Counter[str]
) -> list[Rating]:
    out = []
    for dim, scale in DSTC9_SCALES.items():
        if dim not in rec:
            raise where.error("missing rating field", field=dim)
        value = rec[dim]
        if value == "N/A":
            skipped[f'dstc9: "N/A" value ({dim})'] += 1
            continue
        out.append(
            Rating(
                item_id=did,
                dimension=dim,
                annotator=rater,
                value=number(value, where, dim),
                scale=scale,
                level="dialogue",
            )
        )
    return out
