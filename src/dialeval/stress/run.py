"""Run metrics on original and perturbed responses and measure how often they notice.

For each (metric output, perturbation) the result has: the number of
(original, perturbed) pairs both scored, the fraction of pairs where the metric
prefers the original (ties, within :data:`TIE_TOLERANCE`, count one half), the mean score drop (oriented so
that a positive drop means the metric penalised the perturbation) with a
bootstrap 95% CI over contexts, and the AUROC of the scores separating originals
(label 1) from perturbed responses (label 0), again oriented so that 1.0 means
perfect separation in the metric's preferred direction.

A context perturbation (``speaker-swap``, the sentiment tails) keeps the
response and gives each perturbed item its own dialogue (id
``<candidate id>~<perturbation>``): the perturbed context, the response, then
any turns after it; the item is scored with that context. Items tagged with a
``subset`` (e.g. by :func:`dialeval.stress.subsets.tag_subsets`) also get the
statistics per subset (:attr:`StressResult.subset_rows`).

Example:
    >>> from dialeval.schema import Candidate, Dialogue, Turn
    >>> from dialeval.metrics.resolve import resolve_metrics
    >>> dialogues = {d: Dialogue(id=d, turns=[Turn(speaker="A", text="Do you like music?")]) for d in "xy"}
    >>> cands = [Candidate(id=f"{d}:s", dialogue_id=d, turn_index=1, system="s",
    ...                    text="yes it is a great band and i love it", references=["it is a great band"])
    ...          for d in "xy"]
    >>> families, _ = resolve_metrics(["f1"])
    >>> res = run_stress(cands, dialogues, [cls() for cls in families], ["truncation", "negation"], seed=0, n_boot=50)
    >>> [(r.metric, r.perturbation, r.n_pairs) for r in res.rows]
    [('word_f1', 'truncation', 2), ('word_f1', 'negation', 2)]
"""

from __future__ import annotations

import math
import random
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from dialeval.errors import InputError, ensure_unique, unknown_name
from dialeval.jsonl import nan_as_none
from dialeval.meta.bootstrap import draw_counts, percentile_ci, weighted_sums
from dialeval.metrics.base import Metric
from dialeval.schema import Candidate, Dialogue, Score, Turn
from dialeval.scoring import ProgressFn, score_metrics
from dialeval.stress.context import responder
from dialeval.stress.perturb import ALL_PERTURBATIONS, apply_perturbation
from dialeval.stress.pool import ResponsePool
from dialeval.words import counted, with_ci

if TYPE_CHECKING:
    from dialeval.cache import ScoreCache
    from dialeval.engines import Engine


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
        subset: ``"all"``, or the ``subset`` tag the row is restricted to.
        note: Why the row has no pair (its figures are n/a); empty when it has some (:func:`no_pairs_note`).
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
    subset: str = "all"
    note: str = ""

    def as_dict(self) -> dict[str, Any]:
        """Return the row as a JSON-ready dict (NaN as None)."""
        return nan_as_none(asdict(self))


@dataclass
class StressLine(StressRow):
    """A line of ``stress.jsonl``: the row, its fraction again as ``value`` and the responses skipped.

    Attributes:
        value: ``fraction`` again: the figure a report shows for every result file.
        skipped: Responses the perturbation did not apply to (or left unchanged).
    """

    value: float = math.nan
    skipped: int = 0

    @classmethod
    def of(cls, row: StressRow, skipped: int) -> StressLine:
        """Return the line of ``row``, whose perturbation skipped ``skipped`` responses."""
        return cls(**asdict(row), value=row.fraction, skipped=skipped)


@dataclass
class StressResult:
    """Everything a stress run produced.

    Attributes:
        rows: One row per (metric output, perturbation), outputs in family order.
        skipped: Perturbation -> responses it did not apply to (or left unchanged).
        applied: Perturbation -> perturbed responses scored.
        scores: Every score, originals and perturbed (perturbed ids end in ``~name``).
        subset_rows: The rows again per ``subset`` tag (empty when no item has one).
    """

    rows: list[StressRow]
    skipped: dict[str, int] = field(default_factory=dict)
    applied: dict[str, int] = field(default_factory=dict)
    scores: list[Score] = field(default_factory=list)
    subset_rows: list[StressRow] = field(default_factory=list)


@dataclass
class PerturbedItems:
    """The perturbed copies of a set of candidates.

    Attributes:
        copies: Perturbation -> perturbed candidates (ids ``<original id>~<perturbation>``).
        dialogues: The dialogues of context-perturbed copies, by id (response perturbations
            keep the original dialogue).
        skipped: Perturbation -> candidates it did not apply to or left unchanged.
    """

    copies: dict[str, list[Candidate]]
    dialogues: dict[str, Dialogue]
    skipped: dict[str, int]


def perturbed_id(candidate_id: str, perturbation: str) -> str:
    """Return the item id of a perturbed copy.

    Example:
        >>> perturbed_id("usr-tc-00:Argmax", "negation")
        'usr-tc-00:Argmax~negation'
    """
    return f"{candidate_id}~{perturbation}"


def perturbation_of(item_id: str) -> str | None:
    """Return the perturbation whose copy ``item_id`` is (it ends in ``~<perturbation>``), or None for an original.

    An original's id may hold a "~" elsewhere (:func:`check_ids` refuses only the endings of copies).

    Example:
        >>> perturbation_of("a~b~negation"), perturbation_of("a~b")
        ('negation', None)
    """
    return next((name for name in ALL_PERTURBATIONS if item_id.endswith(f"~{name}")), None)


def check_ids(candidates: Sequence[Candidate], dialogues: Mapping[str, Dialogue], source: str = "") -> None:
    """Refuse a candidate or dialogue id that ends in ``~<perturbation>``: the ids of the perturbed copies do.

    Such an id (``x~negation``) met the perturbed copy of ``x`` under one id, and the copy's scores were taken
    for the original's, or the original's for the copy's; ``source`` names the file the ids come from.

    Example:
        >>> d = {"x": Dialogue(id="x", turns=[Turn(speaker="A", text="hi")])}
        >>> check_ids([Candidate(id="x~negation", dialogue_id="x", turn_index=1, system="s", text="no")], d, "c.jsonl")
        Traceback (most recent call last):
        ...
        dialeval.errors.InputError: c.jsonl: field "id": candidate id "x~negation" ends in "~negation", as ...
    """
    for what, ids in (("candidate", [c.id for c in candidates]), ("dialogue", list(dialogues))):
        for item_id in ids:
            if (end := perturbation_of(item_id)) is not None:
                raise InputError(f'{what} id "{item_id}" ends in "~{end}", as the id of a perturbed copy does '
                                 "(<id>~<perturbation>): rename it", path=source or None, field="id")  # fmt: skip


def check_perturbations(names: Sequence[str], field: str = "--perturb") -> list[str]:
    """Return ``names``; an unknown one, or one given twice, is an :class:`InputError` naming ``field``.

    Example:
        >>> check_perturbations(["negation", "truncation"])
        ['negation', 'truncation']
        >>> check_perturbations(["negation", "truncation", "negation"])
        Traceback (most recent call last):
        ...
        dialeval.errors.InputError: field "--perturb": perturbation "negation" is given twice
    """
    for name in names:
        if name not in ALL_PERTURBATIONS:
            raise InputError(str(unknown_name("perturbation", name, ALL_PERTURBATIONS)), field=field)
    ensure_unique(names, field, "perturbation")
    return list(names)


def perturb_items(
    candidates: Sequence[Candidate],
    dialogues: Mapping[str, Dialogue],
    perturbations: Sequence[str],
    seed: int,
) -> PerturbedItems:
    """Return perturbed copies of ``candidates`` per perturbation, the new dialogues, and the skip counts.

    Each copy is seeded by ``(seed, perturbation, candidate id)``, so it does not
    depend on the order or subset of candidates. ``pool`` (for ``other-context``
    and the entity swaps) holds the responses of every other context. A
    perturbation that does not apply (None) or changes nothing is counted as
    skipped. A response perturbation's copy keeps the dialogue; a context
    perturbation's copy gets a new dialogue: the perturbed context, the response
    (spoken by the original responder), then the perturbation's ``after`` turns;
    knowledge, domain and tags are copied. The input dialogues are never modified. A candidate id given twice,
    or a candidate of an unknown dialogue, is an :class:`InputError`.

    Example:
        >>> from dialeval.schema import Candidate, Dialogue, Turn
        >>> d = {"x": Dialogue(id="x", turns=[Turn(speaker="A", text="hi")])}
        >>> c = [Candidate(id="x:s", dialogue_id="x", turn_index=1, system="s", text="hello")]
        >>> got = perturb_items(c, d, ["sentiment-tail-negative"], seed=0)
        >>> new = got.copies["sentiment-tail-negative"][0]
        >>> new.id, new.text, [t.text for t in got.dialogues[new.dialogue_id].turns]
        ('x:s~sentiment-tail-negative', 'hello', ['hi', 'hello', "I don't think so."])
    """
    check_perturbations(perturbations)
    check_ids(candidates, dialogues)
    ensure_unique([c.id for c in candidates], "id", "candidate id")  # the second's scores were read for both
    for c in candidates:
        if c.dialogue_id not in dialogues:  # a bare KeyError
            raise InputError(f'candidate "{c.id}" names unknown dialogue "{c.dialogue_id}"', field="dialogue_id")
    by_context: dict[str, list[str]] = {}
    for c in candidates:
        by_context.setdefault(c.context_id, []).append(c.text)
    out = PerturbedItems(copies={}, dialogues={}, skipped={})
    pool = ResponsePool(by_context)
    for name in perturbations:
        out.copies[name], out.skipped[name] = [], 0
        for c in candidates:
            dialogue = dialogues[c.dialogue_id]
            context = tuple(dialogue.context(c.turn_index))
            rng = random.Random(f"{seed}:{name}:{c.id}")
            new = apply_perturbation(name, c.text, context, rng, pool.besides(c.context_id))
            if new is None:
                out.skipped[name] += 1
                continue
            pid = perturbed_id(c.id, name)
            if new.context == context and not new.after:
                out.copies[name].append(c.model_copy(update={"id": pid, "text": new.response}))
                continue
            speaker = dialogue.turns[c.turn_index].speaker if c.turn_index < len(dialogue.turns) else None
            turns = [*new.context, Turn(speaker=speaker or responder(context), text=new.response), *new.after]
            out.dialogues[pid] = dialogue.model_copy(update={"id": pid, "turns": turns})
            update = {"id": pid, "text": new.response, "dialogue_id": pid, "turn_index": len(new.context)}
            out.copies[name].append(c.model_copy(update=update))
    return out


#: Score differences within this (absolute, or relative to the score) count as ties: neural metrics give the
#: same input slightly different floats (about 1e-7) depending on the padding of its batch.
TIE_TOLERANCE = 1e-6


def pair_outcomes(better: Any, worse: Any) -> Any:
    """Return 1 where ``better`` > ``worse``, 0.5 on a tie (within :data:`TIE_TOLERANCE`), else 0 (oriented arrays).

    Example:
        >>> pair_outcomes(np.array([0.3, 0.2, 0.5]), np.array([0.1, 0.2 + 1e-9, 0.6])).tolist()
        [1.0, 0.5, 0.0]
    """
    a, b = np.asarray(better, dtype=np.float64), np.asarray(worse, dtype=np.float64)
    tie = np.isclose(a, b, rtol=TIE_TOLERANCE, atol=TIE_TOLERANCE)
    return np.where(tie, 0.5, np.where(a > b, 1.0, 0.0))


def context_ci(sums: Any, ns: Any, n_boot: int, seed: int) -> tuple[float, float]:
    """Return the percentile 95% CI of ``sum(sums) / sum(ns)`` with contexts resampled (one entry per context).

    NaN, NaN with fewer than 2 contexts: resampling one context gives the same figure every time, an interval of
    zero width that says nothing about the uncertainty.

    Example:
        >>> context_ci([0.4, 0.1], [1.0, 1.0], 100, 0), context_ci([0.4], [1.0], 100, 0)
        ((0.1, 0.4), (nan, nan))
    """
    s, n = np.asarray(sums, dtype=np.float64), np.asarray(ns, dtype=np.float64)
    if s.size < 2:
        return float("nan"), float("nan")
    counts = draw_counts(s.size, n_boot, seed)
    return percentile_ci(weighted_sums(counts, s) / weighted_sums(counts, n))


def ci_text(value: float, low: float, high: float, n_contexts: int) -> str:
    """Return ``value [low, high]``; "n/a" for no value, and the reason where the CI is undefined.

    The reason is too few contexts (:func:`context_ci`), else no resample drawn (``--n-boot 0``).

    Example:
        >>> nan = float("nan")
        >>> ci_text(0.25, 0.1, 0.4, 3), ci_text(0.018, nan, nan, 1), ci_text(nan, nan, nan, 0)
        ('0.250 [0.100, 0.400]', '0.018 [no CI: 1 context]', 'n/a')
    """
    why = counted(n_contexts, "context") if n_contexts < 2 else "no resamples"
    return with_ci(value, low, high, no_ci=f"no CI: {why}")


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

    The CI is NaN when the pairs come from fewer than 2 contexts (:func:`context_ci`).

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
    fraction = float(np.mean(pair_outcomes(v0, v1)))
    labels = np.concatenate([np.ones(v0.size), np.zeros(v1.size)])
    auroc = float(roc_auc_score(labels, np.concatenate([v0, v1])))
    names, codes = np.unique(np.asarray(contexts), return_inverse=True)
    sums = np.bincount(codes, weights=d, minlength=names.size)
    ns = np.bincount(codes, minlength=names.size).astype(np.float64)
    lo, hi = context_ci(sums, ns, n_boot, seed)
    return {"fraction": fraction, "drop": float(d.mean()), "ci_low": lo, "ci_high": hi, "auroc": auroc}


def perturbed_lines(result: StressResult) -> list[str]:
    """Say, per perturbation, how many responses it perturbed and how many it left out (a cell of none reads n/a).

    Example:
        >>> perturbed_lines(StressResult(rows=[], applied={"negation": 0, "truncation": 2},
        ...                              skipped={"negation": 2, "truncation": 0}))
        ['negation: 0 perturbed, 2 not applicable (left out)', 'truncation: 2 perturbed']
    """
    return [f"{p}: {n} perturbed" + (f", {result.skipped[p]} not applicable (left out)" if result.skipped[p] else "")
            for p, n in result.applied.items()]  # fmt: skip


def left_out_notes(result: StressResult) -> list[str]:
    """Say which outputs gave no value to some responses, why, and how many pairs each perturbation lost by it.

    A pair needs a value on both sides: the rows of such an output stand on fewer pairs than were perturbed
    (none: n/a). Outputs with the same reason and losses share a note.

    Example:
        >>> rows = [StressRow(m, "rouge", "negation", 1, 1.0, 0.1, 0.0, 0.2, 1.0, True, 1) for m in ("r1", "r2")]
        >>> gone = [Score(item_id="x", metric=m, value=None, extras={"error": "no token"}) for m in ("r1", "r2")]
        >>> left_out_notes(StressResult(rows=rows, applied={"negation": 2}, scores=gone))
        ['note: r1, r2: no value for some responses (no token), so their pairs are left out: negation 1 of 2']
    """
    reasons: dict[str, Counter[str]] = {}
    for s in result.scores:
        if s.value is None:
            reasons.setdefault(s.metric, Counter())[str(s.extras.get("error") or "no reason given")] += 1
    notes: dict[str, list[str]] = {}
    for output in dict.fromkeys(r.metric for r in result.rows):
        lost = [f"{r.perturbation} {n - r.n_pairs} of {n}" for r in result.rows
                if r.metric == output and r.n_pairs < (n := result.applied.get(r.perturbation, r.n_pairs))]  # fmt: skip
        if lost:
            why = "; ".join(w for w, _ in reasons.get(output, Counter()).most_common(2)) or "no reason given"
            notes.setdefault(f"no value for some responses ({why}), so their pairs are left out: {', '.join(lost)}",
                             []).append(output)  # fmt: skip
    return [f"note: {', '.join(outputs)}: {text}" for text, outputs in notes.items()]


def no_pairs_note(
    output: str, perturbation: str, originals: Sequence[Candidate], copied: set[str], errors: Mapping[str, str]
) -> str:
    """Say why a row of ``output`` and ``perturbation`` over ``originals`` has no pair (its figures read n/a).

    Either the perturbation made a copy (an id in ``copied``) of none of them, or the output gave no value to
    one side of every pair: ``errors`` holds the reason of each item id it gave none.

    Example:
        >>> c = [Candidate(id=i, dialogue_id=i, turn_index=1, system="s", text="hi") for i in "xy"]
        >>> no_pairs_note("f1", "negation", c, set(), {})
        'negation applied to none of the 2 responses'
        >>> no_pairs_note("f1", "negation", c, {"x~negation"}, {"x": "no reference"})
        'f1 gave no value to the original or the perturbed response of each of the 1 pair (no reference)'
    """
    pairs = [(c.id, pid) for c in originals if (pid := perturbed_id(c.id, perturbation)) in copied]
    if not pairs:
        return f"{perturbation} applied to none of the {counted(len(originals), 'response')}"
    why = Counter(errors[i] for pair in pairs for i in pair if i in errors)
    reason = "; ".join(w for w, _ in why.most_common(2)) or "no reason given"
    return (f"{output} gave no value to the original or the perturbed response of each of the "
            f"{counted(len(pairs), 'pair')} ({reason})")  # fmt: skip


def na_lines(rows: Sequence[StressRow]) -> list[str]:
    """Return one line per perturbation and reason a cell of a fraction table is n/a, naming the outputs.

    Example:
        >>> rows = [StressRow(m, "rouge", "negation", 0, *[math.nan] * 5, True, 0, note="none applied")
        ...         for m in ("r1", "r2")]
        >>> na_lines(rows)
        ['n/a: r1, r2 (negation): none applied']
    """
    by_reason: dict[tuple[str, str], list[str]] = {}
    for r in rows:
        if not r.n_pairs:
            by_reason.setdefault((r.perturbation, r.note or "no pair"), []).append(r.metric)
    return [f"n/a: {', '.join(outputs)} ({pert}): {why}" for (pert, why), outputs in by_reason.items()]


def run_stress(
    candidates: Sequence[Candidate],
    dialogues: Mapping[str, Dialogue],
    metrics: Sequence[Metric],
    perturbations: Sequence[str],
    *,
    seed: int = 0,
    n_boot: int = 1000,
    cache: ScoreCache | None = None,
    engine: Engine | None = None,
    progress: ProgressFn | None = None,
) -> StressResult:
    """Score originals and their perturbed copies with every metric and compare them.

    Scoring goes through the scoring service (:func:`dialeval.scoring.score_metrics`):
    all families in one engine run, through the score cache when one is given (a
    killed run resumes from it).

    Args:
        candidates: The original responses (a ``subset`` tag adds per-subset rows).
        dialogues: Their dialogues (never modified; context perturbations get new ones).
        metrics: The metrics, built (:meth:`dialeval.scoring.ScoringRequest.build`; a bad parameter is refused
            before the run, and its score cache, are opened).
        perturbations: Names in :data:`~dialeval.stress.perturb.ALL_PERTURBATIONS`.
        seed: Seed of the perturbations and of the bootstrap.
        n_boot: Bootstrap resamples for the CI of the mean drop.
        cache: The score cache (None: compute everything).
        engine: Where batches run (default: this process).
        progress: Called with (family, items finished).
    """
    items = perturb_items(candidates, dialogues, perturbations, seed)
    everything = list(candidates) + [c for name in perturbations for c in items.copies[name]]
    scored_dialogues = {**dialogues, **items.dialogues}
    subsets = sorted({c.tags["subset"] for c in candidates if "subset" in c.tags})
    # None: every original (a tag "all" wrote the rows of all twice); a subset's originals name why a row has no pair
    members = {t: [c for c in candidates if t is None or c.tags.get("subset") == t] for t in [None, *subsets]}
    rows: list[StressRow] = []
    subset_rows: list[StressRow] = []
    all_scores: list[Score] = []
    copied = {name: {c.id for c in items.copies[name]} for name in perturbations}
    runs = score_metrics(metrics, everything, scored_dialogues, cache=cache, engine=engine, progress=progress)
    for metric, run in zip(metrics, runs, strict=True):
        scores = run.scores
        all_scores.extend(scores)
        value = {(s.item_id, s.metric): s.value for s in scores}
        for out_name in metric.outputs:
            errors = {s.item_id: str(s.extras.get("error") or "no reason given")
                      for s in scores if s.metric == out_name and s.value is None}  # fmt: skip
            for name in perturbations:
                pairs: list[tuple[float, float, str, str | None]] = []
                for c in candidates:
                    a = value.get((c.id, out_name))
                    b = value.get((perturbed_id(c.id, name), out_name))
                    if a is not None and b is not None:
                        pairs.append((a, b, c.context_id, c.tags.get("subset")))
                for subset, originals in members.items():
                    mine = [p for p in pairs if subset is None or p[3] == subset]
                    stats = compare(
                        [p[0] for p in mine],
                        [p[1] for p in mine],
                        [p[2] for p in mine],
                        higher_is_better=metric.higher_is_better,
                        n_boot=n_boot,
                        seed=seed,
                    )
                    (rows if subset is None else subset_rows).append(
                        StressRow(
                            metric=out_name,
                            family=metric.name,
                            perturbation=name,
                            n_pairs=len(mine),
                            higher_is_better=metric.higher_is_better,
                            n_contexts=len({p[2] for p in mine}),
                            subset="all" if subset is None else subset,
                            note="" if mine else no_pairs_note(out_name, name, originals, copied[name], errors),
                            **stats,
                        )
                    )
    applied = {name: len(items.copies[name]) for name in perturbations}
    return StressResult(rows=rows, skipped=items.skipped, applied=applied, scores=all_scores, subset_rows=subset_rows)
