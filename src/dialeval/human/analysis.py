"""From stored answers to ratings, progress, live agreement, majority votes and the paper's tables.

``study_ratings`` turns answers into :class:`~dialeval.schema.Rating` records
(the file ``dialeval meta`` reads). Aggregation follows Mousavi et al. (2022):
majority vote per item and criterion with ties reported (Table 3: percentage of
items per system and answer), and the share of all votes per system that chose
each explanation sub-dimension (Figure 1).

Example:
    >>> rs = [Rating(item_id="x", dimension="A", annotator=a, value=v) for a, v in
    ...       [("a1", "positive"), ("a2", "positive"), ("a3", "negative")]]
    >>> majority_votes(rs)[("x", "A")]
    ('positive', False)
"""

from __future__ import annotations

import json
import math
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

import numpy as np
import sqlalchemy as sa

from dialeval.errors import InputError
from dialeval.human import store
from dialeval.human.protocol import DONT_KNOW, TIE, Protocol
from dialeval.meta.agreement import Figure, fleiss_kappa, krippendorff_alpha, reliability_matrix
from dialeval.schema import Rating


def study_ratings(
    conn: sa.Connection, protocol: Protocol, kinds: tuple[str, ...] = ("main",), numeric: bool = False
) -> Iterator[Rating]:
    """Yield every stored answer on items of ``kinds`` as a Rating record, one at a time (an export streams them).

    With ``numeric``, labelled answers become their option's ``score`` (e.g. positive 1, negative 0),
    so correlation with metrics can use them; "I don't know" stays ``None`` with ``dont_know=True``.
    """
    a = store.answers.c
    reasons_text = sa.cast(a.reasons, sa.Text).label("reasons")  # decoded below where not "[]", as most are
    query = (
        sa.select(a.item_id, a.criterion, a.annotator, a.value, a.free_text, reasons_text)
        .join(store.items, store.items.c.id == a.item_id)
        .where(store.items.c.kind.in_(kinds))
        .order_by(a.item_id, a.criterion, a.annotator)
    )
    reading: dict[str, tuple[str, str, set[str], dict[str, float | None]]] = {}  # criterion -> how to read its answers
    for r in conn.execute(query):
        if r.criterion not in reading:
            answer = protocol.criterion(r.criterion).answer
            dont_knows = {o.value for o in answer.options if o.dont_know}
            reading[r.criterion] = (answer.type, answer.scale, dont_knows, {o.value: o.score for o in answer.options})
        kind, scale, dont_knows, scores = reading[r.criterion]
        dont_know = r.value in dont_knows
        value: float | str | None = None if dont_know else (r.value if kind == "choice" else float(r.value))
        if numeric and kind == "choice" and not dont_know:
            value = scores[r.value]
        yield Rating(
            item_id=r.item_id,
            dimension=r.criterion,
            annotator=r.annotator,
            value=value,
            scale=scale,
            dont_know=dont_know,
            explanation=r.free_text or None,
            reasons=[] if r.reasons == "[]" else list(json.loads(r.reasons)),
            level=protocol.level,
        )


def check_scored(protocol: Protocol) -> None:
    """Refuse a numeric export of a protocol with a labelled answer that has no ``score`` to write.

    Such an answer was written as ``value: null`` with ``dont_know: false``: every vote for it lost, silently.

    Raises:
        InputError: A choice criterion has an option, other than "I don't know", without a score.

    Example:
        >>> from dialeval.human.protocol import load_protocol
        >>> check_scored(load_protocol("mousavi-turn"))  # positive 1, negative 0
    """
    for c in protocol.criteria:
        if c.answer.type != "choice":
            continue
        if bare := [o.value for o in c.answer.options if o.score is None and not o.dont_know]:
            raise InputError(f'protocol {protocol.name} gives the answer "{bare[0]}" of {c.name} no score, so '
                             "--numeric has no number to write for it: leave --numeric out to export the labels",
                             field="--numeric")  # fmt: skip
        # a study made before protocols were checked for it (unfit_answer): a pydantic traceback at its first vote
        if odd := [o.value for o in c.answer.options if o.score is not None and not math.isfinite(o.score)]:
            raise InputError(f'protocol {protocol.name} scores the answer "{odd[0]}" of {c.name} with no number '
                             "(NaN or an infinity): leave --numeric out to export the labels", field="--numeric")


def item_systems(conn: sa.Connection) -> dict[str, str]:
    """Return item id -> system."""
    return {r.id: r.system for r in conn.execute(sa.select(store.items.c.id, store.items.c.system))}


def item_batches(conn: sa.Connection) -> dict[str, int]:
    """Return item id -> batch number (0 for qualification)."""
    return {r.id: r.batch for r in conn.execute(sa.select(store.items.c.id, store.items.c.batch))}


def progress(conn: sa.Connection, protocol: Protocol) -> list[dict[str, Any]]:
    """Return per annotator: answers given and due, seconds spent, qualification state."""
    due: dict[str, int] = dict(
        conn.execute(
            sa.select(store.assignments.c.annotator, sa.func.count(store.items.c.id))
            .join(store.items, store.items.c.unit_id == store.assignments.c.unit_id)
            .group_by(store.assignments.c.annotator)
        ).all()
    )
    done = {
        r.annotator: (r.n, r.secs)
        for r in conn.execute(
            sa.select(
                store.answers.c.annotator,
                sa.func.count().label("n"),
                sa.func.coalesce(sa.func.sum(store.answers.c.seconds), 0.0).label("secs"),
            ).group_by(store.answers.c.annotator)
        )
    }
    rows = []
    for a in conn.execute(sa.select(store.annotators).where(store.annotators.c.role == "annotator")):
        n, secs = done.get(a.id, (0, 0.0))
        rows.append(
            {
                "annotator": a.id,
                "answered": int(n),
                "due": int(due.get(a.id, 0)) * len(protocol.criteria),
                "seconds": float(secs),
                "qualified": a.qualified,
                "qualification_kappa": a.qualification_kappa,
            }
        )
    return rows


def attention_results(conn: sa.Connection) -> dict[str, tuple[int, int]]:
    """Return annotator -> (attention checks passed, attention checks answered).

    Each answered check (item and criterion) counts once, and passes when the answer is the expected
    answer of any gold annotator: where several experts gave expected answers and disagree, each of
    theirs is right. The check was counted once per gold annotator before (two experts: 4/4 for 2/2,
    and 2/4 where they disagreed).
    """
    a = store.answers.c
    q = (
        sa.select(a.annotator, a.item_id, a.criterion, a.value, store.gold.c.value.label("expected"))
        .join(store.gold, (store.gold.c.item_id == a.item_id) & (store.gold.c.criterion == a.criterion))
        .join(store.items, store.items.c.id == a.item_id)
        .where(store.items.c.kind == "attention")
    )
    checks: dict[tuple[str, str, str], tuple[str, set[str]]] = {}
    for row in conn.execute(q):
        checks.setdefault((row.annotator, row.item_id, row.criterion), (row.value, set()))[1].add(row.expected)
    out: dict[str, tuple[int, int]] = {}
    for (annotator, *_), (value, expected) in checks.items():
        ok, n = out.get(annotator, (0, 0))
        out[annotator] = (ok + (value in expected), n + 1)
    return out


def agreement_level(protocol: Protocol, criterion: str) -> str:
    """Return Krippendorff's level of measurement for a criterion's answers.

    ``nominal`` for labels, ``ordinal`` for rating scales (1-5, 0/1/2, ten levels: ordered,
    but not evenly spaced), ``interval`` for 0-100 sliders.
    """
    kind = protocol.criterion(criterion).answer.type
    return {"choice": "nominal", "scale": "ordinal"}.get(kind, "interval")


def live_agreement(conn: sa.Connection, protocol: Protocol) -> list[dict[str, Any]]:
    """Krippendorff's alpha (and Fleiss' kappa for labels) per batch and criterion, no intervals.

    Each row's ``note`` says why a figure is None (no item rated twice, one value throughout), "" where none is.
    """
    batches = item_batches(conn)
    groups: dict[tuple[int, str], list[Rating]] = defaultdict(list)
    for r in study_ratings(conn, protocol):
        groups[(batches[r.item_id], r.dimension)].append(r)
    out = []
    for (batch, crit), rs in sorted(groups.items(), key=lambda kv: (kv[0][0], protocol.asked(kv[0][1]))):
        level = agreement_level(protocol, crit)
        rel = reliability_matrix(rs)
        row: dict[str, Any] = {"batch": batch, "criterion": crit, "ratings": len(rs), "level": level}
        row["alpha"], why = _safe(krippendorff_alpha, rel.matrix, level)
        whys = [why]
        if level == "nominal":
            row["fleiss_kappa"], why = _safe(fleiss_kappa, rel.matrix)
            whys.append(why)
        row["note"] = "; ".join(w for w in whys if w)  # the dashboard showed "–" and no reason
        out.append(row)
    return out


ONE_ITEM = "no CI: one item only, which every resample draws"


def one_item_ci(f: Figure, n_items: int) -> Figure:
    """Drop the CI of a figure read off ``n_items`` == 1: every resample is that item, so the CI is the figure.

    Example:
        >>> one_item_ci(Figure(0.0, (0.0, 0.0), ""), 1).why, one_item_ci(Figure(0.5, (0.1, 0.8), ""), 9).ci
        ('no CI: one item only, which every resample draws', (0.1, 0.8))
    """
    return Figure(f.value, None, ONE_ITEM) if n_items == 1 and f.ci is not None else f


def _safe(fn: Any, *args: Any) -> tuple[float | None, str]:
    """Return ``fn(*args)`` and "", or None and why the statistic is undefined (too few ratings, one label)."""
    try:
        return float(fn(*args)), ""
    except (ValueError, IndexError) as exc:
        return None, str(exc)


def majority_votes(
    ratings: Iterable[Rating],
    dont_know_keys: Mapping[str, str] | None = None,
    tie_keys: Mapping[str, str] | None = None,
) -> dict[tuple[str, str], tuple[str, bool]]:
    """Return (item, dimension) -> (majority label, was_tie); "I don't know" counts as a label.

    On a tie the label is ``tie_keys[dimension]`` (its criterion's :attr:`~dialeval.human.protocol.Answer.tie_key`),
    else ``"tie"``, and the flag is True. An "I don't know" vote is counted under ``dont_know_keys[dimension]``
    (its criterion's :attr:`~dialeval.human.protocol.Answer.dont_know_key`), else under
    :data:`~dialeval.human.protocol.DONT_KNOW`.
    """
    keys, ties = dont_know_keys or {}, tie_keys or {}
    votes: dict[tuple[str, str], Counter[str]] = defaultdict(Counter)
    for r in ratings:
        votes[(r.item_id, r.dimension)][keys.get(r.dimension, DONT_KNOW) if r.dont_know else str(r.value)] += 1
    out = {}
    for key, counts in votes.items():
        (top, n), *rest = counts.most_common()
        tie = bool(rest) and rest[0][1] == n
        out[key] = (ties.get(key[1], TIE) if tie else top, tie)
    return out


def mean_scores(ratings: Iterable[Rating]) -> dict[tuple[str, str], float]:
    """Return (item, dimension) -> mean of numeric values ("I don't know" left out)."""
    values: dict[tuple[str, str], list[float]] = defaultdict(list)
    for r in ratings:
        if isinstance(r.value, float):
            values[(r.item_id, r.dimension)].append(r.value)
    return {k: float(np.mean(v)) for k, v in values.items()}


def system_means(
    ratings: Iterable[Rating], systems: Mapping[str, str]
) -> dict[tuple[str, str], tuple[int, float, float]]:
    """Return (criterion, system) -> (samples, mean, sd) of the per-sample mean scores.

    Example:
        >>> rs = [Rating(item_id=i, dimension="Overall", annotator=a, value=v)
        ...       for i, a, v in [("x", "a", 1.0), ("x", "b", 3.0), ("y", "a", 4.0)]]
        >>> system_means(rs, {"x": "m1", "y": "m1"})
        {('Overall', 'm1'): (2, 3.0, 1.0)}
    """
    per_system: dict[tuple[str, str], list[float]] = defaultdict(list)
    for (item, crit), mean in mean_scores(ratings).items():
        per_system[(crit, systems[item])].append(mean)
    return {k: (len(v), float(np.mean(v)), float(np.std(v))) for k, v in per_system.items()}


def majority_table(
    ratings: list[Rating],
    systems: Mapping[str, str],
    dont_know_keys: Mapping[str, str] | None = None,
    tie_keys: Mapping[str, str] | None = None,
) -> dict[str, dict[str, dict[str, float]]]:
    """Percentage of items per system whose majority is each answer (the paper's Table 3).

    Returns ``{criterion: {system: {answer: percent}}}``; ties appear as ``"tie"``; ``dont_know_keys`` and
    ``tie_keys`` as :func:`majority_votes` reads them.
    """
    counts: dict[str, dict[str, Counter[str]]] = defaultdict(lambda: defaultdict(Counter))
    for (item, crit), (label, _) in majority_votes(ratings, dont_know_keys, tie_keys).items():
        counts[crit][systems[item]][label] += 1
    return {
        crit: {sys: {lab: 100.0 * n / sum(c.values()) for lab, n in sorted(c.items())} for sys, c in by_sys.items()}
        for crit, by_sys in counts.items()
    }


def reason_table(ratings: list[Rating], systems: Mapping[str, str]) -> dict[str, dict[str, dict[str, float]]]:
    """Percentage of all votes per system and criterion that chose each reason (the paper's Figure 1)."""
    votes: dict[str, Counter[str]] = defaultdict(Counter)
    chosen: dict[str, dict[str, Counter[str]]] = defaultdict(lambda: defaultdict(Counter))
    for r in ratings:
        votes[r.dimension][systems[r.item_id]] += 1
        for code in r.reasons:
            chosen[r.dimension][systems[r.item_id]][code] += 1
    return {
        crit: {sys: {code: 100.0 * n / votes[crit][sys] for code, n in sorted(c.items())} for sys, c in by_sys.items()}
        for crit, by_sys in chosen.items()
    }
