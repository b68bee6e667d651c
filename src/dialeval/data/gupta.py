"""DailyDialog multi-reference evaluation (Gupta et al., 2019).

``mturk_rating_processed_output.csv`` holds 500 rated responses (100 contexts x 5
systems) with the mean MTurk appropriateness (1-5), loaded as the pseudo-annotator
``"mturk-mean"`` (the per-worker ratings are not published). ``context_id``
``"73_4"`` means: the dialogue whose ``index`` is 73 in ``multireftest.json`` (one
JSON object per line), responses to its turn 4; the context is turns 0..4 (the
CSV's ``||||``-separated context, which the loader keeps as the turns) and the
references are that turn's ``responses`` list in ``multireftest.json`` (the CSV's
``all_references`` is a subset of it; the tests check the join).
"""

from __future__ import annotations

from pathlib import Path

from dialeval.data._common import (
    field,
    iter_nonempty,
    number,
    read_csv_rows,
    read_jsonl_records,
    split_turns,
)
from dialeval.data.benchmark import Benchmark
from dialeval.errors import InputError
from dialeval.schema import Candidate, Dialogue, Rating, Turn

RATINGS_FILE = "mturk_rating_processed_output.csv"
MULTIREF_FILE = "multireftest.json"


def _multi_references(path: Path) -> dict[int, list[list[str]]]:
    """Return dialogue index -> per-turn reference lists from ``multireftest.json``."""
    out: dict[int, list[list[str]]] = {}
    for where, rec in read_jsonl_records(path):
        index = int(number(field(rec, "index", where), where, "index"))
        turns = field(rec, "dialogue", where)
        if not isinstance(turns, list):
            raise where.error("expected a list of turns", field="dialogue")
        refs = []
        for k, turn in enumerate(turns):
            responses = turn.get("responses", []) if isinstance(turn, dict) else None
            if not isinstance(responses, list):
                raise where.error(f"turn {k}: expected a list", field="dialogue.responses")
            refs.append([str(r).strip() for r in responses])
        out[index] = refs
    return out


def load_gupta_dailydialog(path: str | Path) -> Benchmark:
    """Load the 500 rated responses with their multiple references.

    Args:
        path: The ratings CSV or the folder holding it; ``multireftest.json`` must be beside it.

    Example:
        >>> from dialeval.paths import shared_data_dir
        >>> b = load_gupta_dailydialog(shared_data_dir() / "dailydialog_gupta")
        >>> b.counts()["items"], b.counts()["contexts"], len(b.candidates[0].references)
        (500, 100, 5)
    """
    p = Path(path)
    csv_path = p / RATINGS_FILE if p.is_dir() else p
    ref_path = csv_path.with_name(MULTIREF_FILE)
    if not ref_path.exists():
        raise InputError(f"needs {MULTIREF_FILE} beside the ratings file", path=ref_path)
    refs = _multi_references(ref_path)
    needed = ("model", "context_id", "human_average_rating", "response", "context")
    cols, rows = read_csv_rows(csv_path, required=needed)
    dialogues: dict[str, Dialogue] = {}
    candidates: list[Candidate] = []
    ratings: list[Rating] = []
    first: dict[str, int] = {}  # the line of each dialogue's and item's first row
    for where, row in rows:
        cid, system = row[cols["context_id"]].strip(), row[cols["model"]].strip()
        try:
            index, turn = (int(x) for x in cid.split("_"))
            references = refs[index][turn]
        except (ValueError, KeyError, IndexError):
            raise where.error(
                f"{cid!r} does not name a dialogue_turn in {MULTIREF_FILE}", field="context_id"
            ) from None
        did = f"gupta-{cid}"
        lines = list(iter_nonempty(row[cols["context"]], "||||"))
        turns = [Turn(speaker=s, text=t) for s, t in zip(split_turns(lines, "B"), lines, strict=True)]
        if did not in dialogues:
            dialogues[did] = Dialogue(id=did, turns=turns)
        elif dialogues[did].turns != turns:  # the first row's context was kept for both, silently
            raise where.error(f"context_id {cid!r} was given another context on line {first[did]}", field="context")
        item = f"{did}:{system}"
        if item in first:  # a second item of one id: score and meta refused it naming neither file nor line
            raise where.error(f"model {system!r} answers context {cid!r} again (first on line {first[item]})",
                              field="model")  # fmt: skip
        first.setdefault(did, where.line or 0)
        first[item] = where.line or 0
        candidates.append(
            Candidate(id=item, dialogue_id=did, turn_index=len(dialogues[did].turns),
                      system=system, text=row[cols["response"]].strip(),
                      references=references, tags={"system": system})
        )  # fmt: skip
        value = number(row[cols["human_average_rating"]], where, "human_average_rating")
        ratings.append(
            Rating(item_id=item, dimension="appropriateness", annotator="mturk-mean",
                   value=value, scale="1-5")
        )  # fmt: skip
    return Benchmark("gupta-dailydialog", dialogues, candidates, ratings, source=str(csv_path))
