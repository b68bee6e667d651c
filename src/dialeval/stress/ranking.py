"""DailyDialog++ ranking: how often a metric scores each good response above the negatives of its context.

For every context, every (good, negative) pair of the same context is one
comparison; it counts 1 if the metric prefers the good response, 0.5 on a tie
(within :data:`~dialeval.stress.run.TIE_TOLERANCE`) and 0 otherwise, oriented
by the metric's ``higher_is_better``. Adversarial and random negatives are
counted separately. The fraction pools all pairs (with
five goods and five negatives of each kind that is the mean of the per-context
fractions); its 95% CI is a percentile bootstrap resampling *contexts*.

DailyDialog++ has no separate reference. :func:`hold_out_references` makes the
first ``n_refs`` good responses of each context (their published order) the
references of every other response of that context; they are not ranked. With
``n_refs=0`` reference-based metrics are skipped with that reason.

Example:
    >>> from dialeval.schema import Candidate
    >>> def cand(label, k):
    ...     return Candidate(id=f"d:{label}{k}", dialogue_id="d", turn_index=1, system=label, text="x",
    ...                      tags={"label": label, "index": str(k)})
    >>> cands = [cand("good", 0), cand("adversarial", 0), cand("random", 0), cand("random", 1)]
    >>> values = {"d:good0": 0.5, "d:adversarial0": 0.9, "d:random0": 0.1, "d:random1": 0.5}
    >>> r = rank_fractions(values, cands, n_boot=10)
    >>> r["adversarial"]["fraction"], r["random"]["fraction"], r["random"]["n_pairs"]
    (0.0, 0.75, 2.0)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from dialeval.jsonl import nan_as_none
from dialeval.metrics.base import Metric
from dialeval.schema import Candidate, Dialogue, Score
from dialeval.scoring import ProgressFn, score_metrics
from dialeval.stress.run import ci_text, context_ci, pair_outcomes
from dialeval.words import some_of

if TYPE_CHECKING:
    from dialeval.cache import ScoreCache
    from dialeval.engines import Engine

GOOD = "good"
NEGATIVES = ("adversarial", "random")


@dataclass
class RankingRow:
    """How often one metric output ranks good responses above one kind of negative.

    Attributes:
        metric: Output name.
        family: Metric family.
        negatives: ``"adversarial"`` or ``"random"``.
        n_contexts: Contexts with at least one scored pair.
        n_pairs: Scored (good, negative) pairs.
        fraction: Share of pairs where the good response scores better (ties count 0.5).
        ci_low: Lower end of the bootstrap 95% CI (resampling contexts).
        ci_high: Upper end of that CI.
        higher_is_better: Whether larger scores are better for this metric.
    """

    metric: str
    family: str
    negatives: str
    n_contexts: int
    n_pairs: int
    fraction: float
    ci_low: float
    ci_high: float
    higher_is_better: bool

    def as_dict(self) -> dict[str, Any]:
        """Return the row as a JSON-ready dict (NaN as None)."""
        return nan_as_none(asdict(self))


@dataclass
class RankingResult:
    """Everything a ranking run produced.

    Attributes:
        rows: One row per (metric output, negative kind).
        skipped: Family -> why it was not run.
        scores: Every score.
    """

    rows: list[RankingRow]
    skipped: dict[str, str] = field(default_factory=dict)
    scores: list[Score] = field(default_factory=list)


def hold_out_references(candidates: Sequence[Candidate], n_refs: int) -> list[Candidate]:
    """Make the first ``n_refs`` good responses of each context its references; return the rest with them.

    Example:
        >>> from dialeval.schema import Candidate
        >>> cs = [Candidate(id=f"d:{l}{k}", dialogue_id="d", turn_index=1, system=l, text=f"{l}{k}",
        ...                 tags={"label": l, "index": str(k)}) for l, k in [("good", 1), ("good", 0), ("random", 0)]]
        >>> [(c.id, c.references) for c in hold_out_references(cs, 1)]
        [('d:good1', ['good0']), ('d:random0', ['good0'])]
        >>> hold_out_references(cs, 2)
        Traceback (most recent call last):
        ...
        dialeval.errors.InputError: field "--refs": 2 would hold out every good response of 1 of the 1 contexts, \
leaving none to rank: give at most 1
    """
    from dialeval.errors import InputError

    if n_refs < 0:
        raise InputError("--refs must be 0 or more", field="--refs")
    goods: dict[str, list[Candidate]] = {}
    for c in candidates:
        if c.tags.get("label") == GOOD:
            goods.setdefault(c.context_id, []).append(c)
    if goods and n_refs >= (fewest := min(map(len, goods.values()))):  # it ranked nothing, and said "no knowledge"
        emptied = sum(len(cs) <= n_refs for cs in goods.values())
        raise InputError(f"{n_refs} would hold out every good response of {emptied} of the {len(goods)} contexts, "
                         f"leaving none to rank: give at most {fewest - 1}", field="--refs")  # fmt: skip
    refs = {ctx: sorted(cs, key=lambda c: int(c.tags.get("index", "0")))[:n_refs] for ctx, cs in goods.items()}
    held = {c.id for cs in refs.values() for c in cs}
    return [
        c.model_copy(update={"references": [r.text for r in refs.get(c.context_id, [])]})
        for c in candidates
        if c.id not in held
    ]


def rank_fractions(
    values: Mapping[str, float | None],
    candidates: Sequence[Candidate],
    *,
    higher_is_better: bool = True,
    n_boot: int = 1000,
    seed: int = 0,
) -> dict[str, dict[str, float]]:
    """Return, per negative kind, the fraction of (good, negative) pairs won by the good response, with its CI.

    Args:
        values: Item id -> score (None or missing: the item's pairs are left out).
        candidates: The ranked items, tagged ``label`` = good / adversarial / random.
        higher_is_better: Orientation of the scores.
        n_boot: Bootstrap resamples over contexts.
        seed: Bootstrap seed.
    """
    sign = 1.0 if higher_is_better else -1.0
    by_ctx: dict[str, dict[str, list[float]]] = {}
    for c in candidates:
        v = values.get(c.id)
        label = c.tags.get("label")
        if v is None or label not in (GOOD, *NEGATIVES):
            continue
        by_ctx.setdefault(c.context_id, {}).setdefault(str(label), []).append(sign * v)
    out: dict[str, dict[str, float]] = {}
    for neg in NEGATIVES:
        sums, ns = [], []
        for groups in by_ctx.values():
            good = np.asarray(groups.get(GOOD, []))
            bad = np.asarray(groups.get(neg, []))
            if good.size == 0 or bad.size == 0:
                continue
            outcome = pair_outcomes(good[:, None], bad[None, :])
            sums.append(float(outcome.sum()))
            ns.append(float(outcome.size))
        if not ns:
            nan = float("nan")
            out[neg] = {"fraction": nan, "ci_low": nan, "ci_high": nan, "n_pairs": 0.0, "n_contexts": 0.0}
            continue
        lo, hi = context_ci(sums, ns, n_boot, seed)  # none from one context
        out[neg] = {
            "fraction": sum(sums) / sum(ns),
            "ci_low": lo,
            "ci_high": hi,
            "n_pairs": float(sum(ns)),
            "n_contexts": float(len(ns)),
        }
    return out


def run_ranking(
    candidates: Sequence[Candidate],
    dialogues: Mapping[str, Dialogue],
    metrics: Sequence[Metric],
    *,
    n_boot: int = 1000,
    seed: int = 0,
    cache: ScoreCache | None = None,
    engine: Engine | None = None,
    progress: ProgressFn | None = None,
) -> RankingResult:
    """Score every response with every metric (built) and compute the ranking fractions.

    A metric that needs references is skipped (with the reason) when some item has none.
    Scoring goes through the scoring service (``cache``, ``engine``, ``progress`` as there).
    """
    result = RankingResult(rows=[])
    lacking = sum(1 for c in candidates if not c.references)
    ready = []
    for metric in metrics:
        if metric.needs_references and lacking:
            result.skipped[metric.name] = (
                f"needs references; {some_of(lacking, len(candidates), 'item')} none "
                "(DailyDialog++ has no separate reference: hold some good responses out with --refs)"
            )
            continue
        ready.append(metric)
    runs = score_metrics(ready, candidates, dialogues, cache=cache, engine=engine, progress=progress)
    for metric, run in zip(ready, runs, strict=True):
        scores = run.scores
        result.scores.extend(scores)
        for out_name in metric.outputs:
            values = {s.item_id: s.value for s in scores if s.metric == out_name}
            stats = rank_fractions(values, candidates, higher_is_better=metric.higher_is_better, n_boot=n_boot,
                                   seed=seed)
            for neg in NEGATIVES:
                st = stats[neg]
                result.rows.append(
                    RankingRow(
                        metric=out_name,
                        family=metric.name,
                        negatives=neg,
                        n_contexts=int(st["n_contexts"]),
                        n_pairs=int(st["n_pairs"]),
                        fraction=st["fraction"],
                        ci_low=st["ci_low"],
                        ci_high=st["ci_high"],
                        higher_is_better=metric.higher_is_better,
                    )
                )
    return result


def ranking_markdown(result: RankingResult, title: str) -> str:
    """Render the ranking table (metrics as rows, the two negative kinds as columns) as Markdown.

    Example:
        >>> row = RankingRow("f1", "f1", "random", 4, 20, 0.9, 0.8, 0.95, True)
        >>> none = RankingRow("sbert_knowledge", "embedding", "random", 0, 0, *[float("nan")] * 3, True)
        >>> md = ranking_markdown(RankingResult(rows=[row, none]), "t").splitlines()
        >>> print(md[4])
        | f1 | n/a | 0.900 [0.800, 0.950] | 20 |
        >>> print(md[-1])
        No item could be scored by sbert_knowledge (e.g. no knowledge in DailyDialog++).
    """
    cell = {(r.metric, r.negatives): r for r in result.rows}
    lines = [
        f"# {title}",
        "",
        "| metric | good > adversarial [95% CI] | good > random [95% CI] | pairs per kind |",
        "|---|---|---|---|",
    ]
    outputs = list(dict.fromkeys(r.metric for r in result.rows))
    unscored = [m for m in outputs if all(r.n_pairs == 0 for r in result.rows if r.metric == m)]
    for m in (m for m in outputs if m not in unscored):
        cells = []
        for neg in NEGATIVES:
            r = cell.get((m, neg))
            cells.append("n/a" if r is None else ci_text(r.fraction, r.ci_low, r.ci_high, r.n_contexts))
        n = max(r.n_pairs for r in result.rows if r.metric == m)
        lines.append(f"| {m} | {cells[0]} | {cells[1]} | {n} |")
    lines += [
        "",
        "Cell: fraction of (good, negative) pairs of the same context where the metric scores the good "
        "response higher (ties 0.5); CI: percentile bootstrap over contexts.",
    ]
    for fam, why in result.skipped.items():
        lines.append(f"Skipped {fam}: {why}.")
    if unscored:
        lines.append(f"No item could be scored by {', '.join(unscored)} (e.g. no knowledge in DailyDialog++).")
    return "\n".join(lines) + "\n"
