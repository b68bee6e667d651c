"""HolisticEval (Pang et al., 2020): context coherence and fluency, 10 raters each.

Both files are headerless CSV: ``id,query,response,s1..s10`` (context coherence)
and ``id,response,s1..s10`` (fluency). One dialogue per row (the query as its
single turn; no turns for fluency). The files do not say which system wrote a
response, so ``system`` is ``"unknown"``. Raters are named by column
(``"s1"``..``"s10"``); the data does not say whether a column is one person.
"""

from __future__ import annotations

from pathlib import Path

from dialeval.data._common import number, read_csv_rows
from dialeval.data.benchmark import Benchmark
from dialeval.schema import UNKNOWN_SYSTEM, Candidate, Dialogue, Rating, Turn

N_RATERS = 10


def _load(path: str | Path, *, with_query: bool) -> Benchmark:
    p = Path(path)
    name, dim, prefix = (
        ("holistic-coherence", "context coherence", "hc")
        if with_query
        else ("holistic-fluency", "fluency", "hf")
    )
    first_score = 3 if with_query else 2
    _, rows = read_csv_rows(p, ncols=first_score + N_RATERS)
    dialogues: dict[str, Dialogue] = {}
    candidates: list[Candidate] = []
    ratings: list[Rating] = []
    for where, row in rows:
        did = f"{prefix}-{row[0].strip()}"
        if did in dialogues:
            raise where.error(f"duplicate id {row[0]!r}", field="id")
        turns = [Turn(speaker="A", text=row[1].strip())] if with_query else []
        dialogues[did] = Dialogue(id=did, turns=turns)
        item = f"{did}:response"
        candidates.append(
            Candidate(id=item, dialogue_id=did, turn_index=len(turns), system=UNKNOWN_SYSTEM,
                      text=row[first_score - 1].strip())
        )  # fmt: skip
        for k in range(N_RATERS):
            rater = f"s{k + 1}"
            ratings.append(
                Rating(item_id=item, dimension=dim, annotator=rater,
                       value=number(row[first_score + k], where, rater), scale="1-5")
            )  # fmt: skip
    return Benchmark(name, dialogues, candidates, ratings, source=str(p))


def load_holistic_coherence(path: str | Path) -> Benchmark:
    """Load ``context_data_release.csv`` (200 query/response pairs, context coherence 1-5).

    Example:
        >>> from dialeval.paths import shared_data_dir
        >>> b = load_holistic_coherence(shared_data_dir() / "holistic_eval/context_data_release.csv")
        >>> b.counts()["items"], b.counts()["annotators"]
        (200, 10)
    """
    return _load(path, with_query=True)


def load_holistic_fluency(path: str | Path) -> Benchmark:
    """Load ``fluency_data_release.csv`` (200 responses, fluency 1-5)."""
    return _load(path, with_query=False)
