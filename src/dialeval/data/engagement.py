"""PredictiveEngagement (Ghazarian et al., 2020): engagement ratings of single-turn replies.

The main benchmark is ``Eng_Scores_queries_gen_gtruth_replies.csv``: 600
(query, reply) pairs, each rated 1-5 by three annotators in three rows. Rater
ids are not in the data: the k-th row of a pair is rater ``"r<k>"``. One
dialogue per distinct query; a reply is ``system="ground-truth"`` when the pair
is listed in ``DailyDialog_groungtruth_annotated.csv`` beside it, else
``"generated"`` (``"unknown"`` for every reply when that file is absent, counted
in ``skipped``). The model-score columns of the file are not loaded.

The ConvAI file ``humanAMT_engscores_utt.csv`` (297 replies, one 0/1 label
each) loads as a second benchmark with the pseudo-annotator ``"amt-label"``.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from dialeval.data._common import number, read_csv_rows
from dialeval.data.benchmark import Benchmark
from dialeval.schema import UNKNOWN_SYSTEM, Candidate, Dialogue, Rating, Turn

GROUND_TRUTH_FILE = "DailyDialog_groungtruth_annotated.csv"


def _ground_truth_pairs(path: Path) -> set[tuple[str, str]]:
    columns = [f"Input.{kind}{k}" for k in range(1, 11) for kind in ("query", "response")]
    col, rows = read_csv_rows(path, required=columns)
    pairs: set[tuple[str, str]] = set()
    for k in range(1, 11):
        qi, ri = col[f"Input.query{k}"], col[f"Input.response{k}"]
        pairs.update((row[qi].strip(), row[ri].strip()) for _, row in rows)
    return pairs


def load_predictive_engagement(path: str | Path) -> Benchmark:
    """Load the 600 replies x 3 engagement ratings (``Eng_Scores_queries_gen_gtruth_replies.csv``).

    Example:
        >>> from dialeval.paths import shared_data_dir
        >>> d = shared_data_dir() / "predictive_engagement"
        >>> b = load_predictive_engagement(d / "Eng_Scores_queries_gen_gtruth_replies.csv")
        >>> b.counts()["items"], b.counts()["ratings"], sorted({c.system for c in b.candidates})
        (600, 1800, ['generated', 'ground-truth'])
    """
    p = Path(path)
    col, rows = read_csv_rows(p, required=("query", "response", "human_score"))
    qi, ri, si = col["query"], col["response"], col["human_score"]
    skipped: Counter[str] = Counter()
    gt_file = p.with_name(GROUND_TRUTH_FILE)
    if not gt_file.exists() and p.name.endswith(".gz"):
        gt_file = p.with_name(GROUND_TRUTH_FILE + ".gz")
    gt_pairs = _ground_truth_pairs(gt_file) if gt_file.exists() else None
    dialogues: dict[str, Dialogue] = {}
    query_ids: dict[str, str] = {}
    candidates: dict[tuple[str, str], Candidate] = {}
    ratings: list[Rating] = []
    raters: Counter[str] = Counter()
    replies: Counter[str] = Counter()
    for where, row in rows:
        query, reply = row[qi].strip(), row[ri].strip()
        if query not in query_ids:
            query_ids[query] = did = f"pe-{len(query_ids):03d}"
            dialogues[did] = Dialogue(id=did, turns=[Turn(speaker="A", text=query)])
        did = query_ids[query]
        if (query, reply) not in candidates:
            if gt_pairs is None:
                system = UNKNOWN_SYSTEM
                skipped[f"predictive-engagement: {GROUND_TRUTH_FILE} not found (system unknown)"] += 1
            else:
                system = "ground-truth" if (query, reply) in gt_pairs else "generated"
            n = replies[did]
            replies[did] += 1
            candidates[(query, reply)] = Candidate(
                id=f"{did}:r{n}", dialogue_id=did, turn_index=1, system=system,
                text=reply, tags={"system": system},
            )  # fmt: skip
        item = candidates[(query, reply)].id
        raters[item] += 1
        ratings.append(
            Rating(
                item_id=item,
                dimension="engagement",
                annotator=f"r{raters[item]}",
                value=number(row[si], where, "human_score"),
                scale="1-5",
            )
        )
    return Benchmark(
        "predictive-engagement", dialogues, list(candidates.values()), ratings, skipped, str(p)
    )


def load_predictive_engagement_convai(path: str | Path) -> Benchmark:
    """Load the ConvAI replies with one 0/1 engagement label each (``humanAMT_engscores_utt.csv``)."""
    p = Path(path)
    col, rows = read_csv_rows(p, required=("id", "query", "reply", "label"))
    ii, qi, ri, li = col["id"], col["query"], col["reply"], col["label"]
    dialogues: dict[str, Dialogue] = {}
    candidates: list[Candidate] = []
    ratings: list[Rating] = []
    for where, row in rows:
        did = f"pe-convai-{row[ii]}"
        if did in dialogues:
            raise where.error(f"duplicate id {row[ii]!r}", field="id")
        dialogues[did] = Dialogue(id=did, turns=[Turn(speaker="A", text=row[qi].strip())])
        candidates.append(
            Candidate(id=f"{did}:reply", dialogue_id=did, turn_index=1, system="convai",
                      text=row[ri].strip(), tags={"system": "convai"})
        )  # fmt: skip
        value = number(row[li], where, "label")
        if value not in (0.0, 1.0):
            raise where.error(f"expected 0 or 1, found {row[li]!r}", field="label")
        ratings.append(
            Rating(item_id=f"{did}:reply", dimension="engagement", annotator="amt-label",
                   value=value, scale="0|1")
        )  # fmt: skip
    return Benchmark("predictive-engagement-convai", dialogues, candidates, ratings, source=str(p))
