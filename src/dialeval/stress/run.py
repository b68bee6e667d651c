"""Run metrics on original and perturbed responses and measure how often they notice.

For each (metric output, perturbation) the result has: the number of
(original, perturbed) pairs both scored, the fraction of pairs where the metric
prefers the original (ties count one half), the mean score drop (oriented so
that a positive drop means the metric penalised the perturbation) with a
bootstrap 95% CI over contexts, and the AUROC of the scores separating originals
(label 1) from perturbed responses (label 0), again oriented so that 1.0 means
perfect separation in the metric's preferred direction.

Example:
    >>> from dialeval.schema import Candidate, Dialogue, Turn
    >>> from dialeval.runner import resolve_metrics
    >>> dialogues = {d: Dialogue(id=d, turns=[Turn(speaker="A", text="Do you like music?")]) for d in "xy"}
    >>> cands = [Candidate(id=f"{d}:s", dialogue_id=d, turn_index=1, system="s",
    ...                    text="yes it is a great band and i love it", references=["it is a great band"])
    ...          for d in "xy"]
    >>> families, _ = resolve_metrics(["f1"])
    >>> res = run_stress(cands, dialogues, families, ["truncation", "negation"], seed=0, n_boot=50)
    >>> [(r.metric, r.perturbation, r.n_pairs) for r in res.rows]
    [('word_f1', 'truncation', 2), ('word_f1', 'negation', 2)]
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from dialeval.errors import InputError
from dialeval.meta.bootstrap import draw_counts, percentile_ci
from dialeval.metrics.base import Metric
from dialeval.schema import Candidate, Dialogue, Score
from dialeval.scoring import score_candidates
from dialeval.stress.perturb import PERTURBATIONS


@dataclass
class StressRow:
    """How one metric output reacts to one perturbation.

    Attributes:
        metric: Output name (e.g. ``rougeL``).
        family: Metric family (e.g. ``rouge``).
        perturbation: Perturbation name.
        n_pairs: Pairs where both the original and the perturbed response were scored.
        fraction: Share of pairs where the original scores better (ties count 0.5).
        drop: Mean oriented score drop (original minus perturbed; sign flipped when lower is better).
        ci_low: Lower end of the bootstrap 95% CI of ``drop`` (resampling contexts).
        ci_high: Upper end of that CI.
        auroc: Area under the ROC curve of scores, originals labelled 1.
        higher_is_better: Whether larger scores are better for this metric.
        n_contexts: Contexts contributing pairs.
    """

    metric: str
    family: str
    perturbation: str
    n_pairs: int
    fraction: float
    drop: float
    ci_low: float
    ci_high: float
    auroc: float
    higher_is_better: bool
    n_contexts: int

    def as_dict(self) -> dict[str, Any]:
        """Return the row as a JSON-ready dict (NaN as None)."""
        return {k: (None if isinstance(v, float) and np.isnan(v) else v) for k, v in asdict(self).items()}


@dataclass
class StressResult:
    """Everything a stress run produced.

    Attributes:
        rows: One row per (metric output, perturbation), outputs in family order.
        skipped: Perturbation -> responses it did not apply to (or left unchanged).
        applied: Perturbation -> perturbed responses scored.
        scores: Every score, originals and perturbed (perturbed ids end in ``~name``).
    """

    rows: list[StressRow]
    skipped: dict[str, int] = field(default_factory=dict)
    applied: dict[str, int] = field(default_factory=dict)
    scores: list[Score] = field(default_factory=list)


def perturbed_id(candidate_id: str, perturbation: str) -> str:
    """Return the item id of a perturbed copy.

    Example:
        >>> perturbed_id("usr-tc-00:Argmax", "negation")
        'usr-tc-00:Argmax~negation'
    """
    return f"{candidate_id}~{perturbation}"


def perturb_candidates(
    candidates: Sequence[Candidate],
    dialogues: Mapping[str, Dialogue],
    perturbations: Sequence[str],
    seed: int,
) -> tuple[dict[str, list[Candidate]], dict[str, int]]:
    """Return perturbed copies of ``candidates`` per perturbation, and how many were skipped.

    Each copy is seeded by ``(seed, perturbation, candidate id)``, so it does not
    depend on the order or subset of candidates. ``other-context`` draws from the
    responses of every other context. A perturbation that does not apply (None)
    or leaves the response unchanged is counted as skipped.
    """
    unknown = [p for p in perturbations if p not in PERTURBATIONS]
    if unknown:
        raise InputError(f'unknown perturbation "{unknown[0]}"; known: {", ".join(PERTURBATIONS)}', field="--perturb")
    by_context: dict[str, list[str]] = {}
    for c in candidates:
        by_context.setdefault(c.context_id, []).append(c.text)
    out: dict[str, list[Candidate]] = {}
    skipped: dict[str, int] = {}
    for name in perturbations:
        fn = PERTURBATIONS[name]
        out[name], skipped[name] = [], 0
        for c in candidates:
            context = tuple(dialogues[c.dialogue_id].context(c.turn_index))
            pool = [t for cid, texts in by_context.items() if cid != c.context_id for t in texts]
            new = fn(c.text, context, random.Random(f"{seed}:{name}:{c.id}"), pool)
            if new is None or new == c.text:
                skipped[name] += 1
                continue
            out[name].append(c.model_copy(update={"id": perturbed_id(c.id, name), "text": new}))
    return out, skipped


def compare(
    original: Sequence[float],
    perturbed: Sequence[float],
    contexts: Sequence[str],
    *,
    higher_is_better: bool = True,
    n_boot: int = 1000,
    seed: int = 0,
) -> dict[str, float]:
    """Compare paired scores: fraction original better, mean drop with a context bootstrap CI, AUROC.

    Example:
        >>> r = compare([0.9, 0.5, 0.4], [0.1, 0.5, 0.6], ["a", "b", "c"], n_boot=20)
        >>> round(r["fraction"], 3), round(r["drop"], 3), round(r["auroc"], 3)
        (0.5, 0.2, 0.611)
    """
    from sklearn.metrics import roc_auc_score

    sign = 1.0 if higher_is_better else -1.0
    v0 = sign * np.asarray(original, dtype=np.float64)
    v1 = sign * np.asarray(perturbed, dtype=np.float64)
    if v0.size == 0:
        nan = float("nan")
        return {"fraction": nan, "drop": nan, "ci_low": nan, "ci_high": nan, "auroc": nan}
    d = v0 - v1
    fraction = float(np.mean(np.where(d > 0, 1.0, np.where(d == 0, 0.5, 0.0))))
    labels = np.concatenate([np.ones(v0.size), np.zeros(v1.size)])
    auroc = float(roc_auc_score(labels, np.concatenate([v0, v1])))
    names, codes = np.unique(np.asarray(contexts), return_inverse=True)
    sums = np.bincount(codes, weights=d, minlength=names.size)
    ns = np.bincount(codes, minlength=names.size).astype(np.float64)
    counts = draw_counts(names.size, n_boot, seed).astype(np.float64)
    boot = (counts @ sums) / (counts @ ns)
    lo, hi = percentile_ci(boot)
    return {"fraction": fraction, "drop": float(d.mean()), "ci_low": lo, "ci_high": hi, "auroc": auroc}


def run_stress(
    candidates: Sequence[Candidate],
    dialogues: Mapping[str, Dialogue],
    families: Sequence[type[Metric]],
    perturbations: Sequence[str],
    *,
    seed: int = 0,
    n_boot: int = 1000,
    params: Mapping[str, Mapping[str, Any]] | None = None,
) -> StressResult:
    """Score originals and their perturbed copies with every family and compare them.

    Args:
        candidates: The original responses.
        dialogues: Their dialogues (contexts are never perturbed).
        families: Metric families (from :func:`dialeval.runner.resolve_metrics`).
        perturbations: Names in :data:`~dialeval.stress.perturb.PERTURBATIONS`.
        seed: Seed of the perturbations and of the bootstrap.
        n_boot: Bootstrap resamples for the CI of the mean drop.
        params: Family name -> constructor parameters.
    """
    copies, skipped = perturb_candidates(candidates, dialogues, perturbations, seed)
    everything = list(candidates) + [c for name in perturbations for c in copies[name]]
    rows: list[StressRow] = []
    all_scores: list[Score] = []
    for cls in families:
        metric = cls(**dict((params or {}).get(cls.name, {})))
        scores = score_candidates(metric, everything, dialogues)
        all_scores.extend(scores)
        value = {(s.item_id, s.metric): s.value for s in scores}
        for out_name in cls.outputs:
            for name in perturbations:
                v0: list[float] = []
                v1: list[float] = []
                ctx: list[str] = []
                for c in candidates:
                    a = value.get((c.id, out_name))
                    b = value.get((perturbed_id(c.id, name), out_name))
                    if a is None or b is None:
                        continue
                    v0.append(a)
                    v1.append(b)
                    ctx.append(c.context_id)
                stats = compare(v0, v1, ctx, higher_is_better=cls.higher_is_better, n_boot=n_boot, seed=seed)
                rows.append(
                    StressRow(
                        metric=out_name,
                        family=cls.name,
                        perturbation=name,
                        n_pairs=len(v0),
                        higher_is_better=cls.higher_is_better,
                        n_contexts=len(set(ctx)),
                        **stats,
                    )
                )
    applied = {name: len(copies[name]) for name in perturbations}
    return StressResult(rows=rows, skipped=skipped, applied=applied, scores=all_scores)
