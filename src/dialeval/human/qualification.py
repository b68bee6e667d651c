"""Qualification: a worker passes when adding them does not lower the reference annotators' agreement.

Mousavi et al. (2022, Sec. 4.2) "considered the Inter-Annotator Agreement (IAA) of the internal
non-expert annotators calculated by Fleiss' kappa as the threshold (0.21)" and qualified a worker
when "the agreement level among the internal annotators and the worker" was above it. dialeval
does the same: by default the threshold is the reference annotators' own Fleiss' kappa on the
qualification items, and a worker qualifies when the kappa of the references plus the worker is
not below it; a fixed ``threshold`` (``--threshold``) is kept as given and must be exceeded.
Kappa is computed over every (item, criterion) pair of the qualification batch, with "I don't
know" as its own category. A worker who gives one answer everywhere while the references'
answers vary is never qualified, whatever the kappa.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import sqlalchemy as sa

from dialeval.human import store
from dialeval.human.protocol import Protocol
from dialeval.meta.agreement import fleiss_kappa, reliability_matrix
from dialeval.schema import Rating
from dialeval.words import figure

Reference = list[tuple[str, str, str, str]]
"""``(annotator, item_id, criterion, value)`` reference answers."""

_TOLERANCE = 1e-9  # kappas equal up to rounding count as "not lower"


@dataclass(frozen=True)
class Verdict:
    """A qualification decision: whether the worker passed, their kappa, the threshold and why."""

    passed: bool
    kappa: float
    threshold: float
    reason: str


def _kappa(rows: list[Rating], labels: set[str]) -> float:
    """Fleiss' kappa of ``rows``; 1.0 when every rating has one label (perfect agreement), else 0.0 if undefined."""
    try:
        return fleiss_kappa(reliability_matrix(rows).matrix)
    except ValueError:
        return 1.0 if len(labels) == 1 and {str(r.value) for r in rows} == labels else 0.0


def _ratings(reference: Reference) -> list[Rating]:
    return [Rating(item_id=f"{i}|{c}", dimension="q", annotator=f"ref:{a}", value=v) for a, i, c, v in reference]


def qualification_kappa(reference: Reference, worker: dict[tuple[str, str], str]) -> float:
    """Fleiss' kappa of the reference annotators plus one worker.

    Args:
        reference: ``(annotator, item_id, criterion, value)`` reference answers.
        worker: ``(item_id, criterion) -> value`` of the worker.

    When kappa is undefined (every rater always gave one and the same label), the
    worker gets 1.0 if they gave that label everywhere too, else 0.0.

    Example:
        >>> ref = [("r1", "i1", "A", "positive"), ("r1", "i2", "A", "negative")]
        >>> qualification_kappa(ref, {("i1", "A"): "positive", ("i2", "A"): "negative"})
        1.0
        >>> qualification_kappa(ref, {("i1", "A"): "negative", ("i2", "A"): "positive"})
        -1.0
    """
    rows = _ratings(reference)
    rows += [Rating(item_id=f"{i}|{c}", dimension="q", annotator="worker", value=v) for (i, c), v in worker.items()]
    return _kappa(rows, {v for *_, v in reference})


def reference_kappa(reference: Reference) -> float:
    """Fleiss' kappa of the reference annotators alone: the default qualification threshold.

    1.0 when they gave one and the same label everywhere (they agree perfectly).

    Raises:
        ValueError: Fewer than two reference annotators (their agreement is undefined).

    Example:
        >>> reference_kappa([("r1", "i1", "A", "1"), ("r2", "i1", "A", "1"), ("r1", "i2", "A", "5"),
        ...                  ("r2", "i2", "A", "5")])
        1.0
    """
    if len({a for a, *_ in reference}) < 2:
        raise ValueError("the reference annotators' agreement needs at least two of them")
    return _kappa(_ratings(reference), {v for *_, v in reference})


def judge(reference: Reference, worker: dict[tuple[str, str], str], threshold: float | None) -> Verdict:
    """Decide whether a worker qualifies (see the module docstring for the rule).

    Args:
        reference: ``(annotator, item_id, criterion, value)`` reference answers.
        worker: ``(item_id, criterion) -> value`` of the worker, for every referenced pair.
        threshold: A fixed kappa the worker must exceed; None: the references' own kappa,
            which the worker's must not fall below.

    Example:
        >>> ref = [(r, i, "A", v) for r in ("r1", "r2") for i, v in (("i1", "1"), ("i2", "5"))]
        >>> print(judge(ref, {("i1", "A"): "1", ("i2", "A"): "1"}, None).reason)
        answered "1" to all 2 qualification questions while the reference annotators' answers vary
        >>> judge(ref, {("i1", "A"): "1", ("i2", "A"): "5"}, None).passed
        True
    """
    kappa = qualification_kappa(reference, worker)
    bar = reference_kappa(reference) if threshold is None else threshold
    given = set(worker.values())
    if len(given) == 1 and len({v for *_, v in reference}) > 1:
        reason = (f'answered "{given.pop()}" to all {len(worker)} qualification questions '
                  "while the reference annotators' answers vary")  # fmt: skip
        return Verdict(False, kappa, bar, reason)
    if threshold is None:
        passed = kappa >= bar - _TOLERANCE
        sign = ">=" if passed else "<"
        return Verdict(passed, kappa, bar, f"Fleiss' kappa with the references {figure(kappa)} {sign} "
                                           f"the references' own {figure(bar)}")  # fmt: skip
    passed = kappa > threshold
    sign = ">" if passed else "<="
    return Verdict(passed, kappa, bar, f"Fleiss' kappa with the references {figure(kappa)} {sign} "
                                       f"the fixed threshold {figure(threshold)}")  # fmt: skip


def _same_spelling(conn: sa.Connection) -> Callable[[str, str], str]:
    """Return ``(criterion, value) -> stored spelling`` ("3.0" and "3" are one answer; see Answer.canonical)."""
    protocol = Protocol.model_validate(store.get_meta(conn, "protocol"))
    answer_of = {c.name: c.answer for c in protocol.criteria}

    def same(criterion: str, value: str) -> str:
        if criterion not in answer_of:
            return value
        return answer_of[criterion].canonical(value) or value

    return same


def _qualification_items(conn: sa.Connection, annotator: str) -> list[str]:
    q = (
        sa.select(store.items.c.id)
        .join(store.assignments, store.assignments.c.unit_id == store.items.c.unit_id)
        .where(store.assignments.c.annotator == annotator, store.assignments.c.kind == "qualification")
    )
    return list(conn.execute(q).scalars())


def decide_qualification(conn: sa.Connection, annotator: str, threshold: float | None) -> bool | None:
    """Return whether ``annotator`` may work on main batches, deciding it once they finish qualifying.

    None while they have not answered every referenced question of the qualification batch.

    Args:
        conn: A connection in a write transaction (the decision is stored with its reason).
        annotator: The worker's id.
        threshold: A fixed kappa to exceed; None: the reference annotators' own kappa (see :func:`judge`).
    """
    row = conn.execute(sa.select(store.annotators.c.qualified).where(store.annotators.c.id == annotator)).one()
    if row.qualified is not None:
        return bool(row.qualified)
    q_items = _qualification_items(conn, annotator)
    gold = conn.execute(sa.select(store.gold).where(store.gold.c.item_id.in_(q_items))).all()
    needed = {(g.item_id, g.criterion) for g in gold}
    a = store.answers
    given = conn.execute(sa.select(a).where(a.c.annotator == annotator, a.c.item_id.in_(q_items)))
    mine = {(r.item_id, r.criterion): r.value for r in given}
    if not needed or not needed <= set(mine):
        return None
    same = _same_spelling(conn)
    verdict = judge(
        [(g.annotator, g.item_id, g.criterion, same(g.criterion, g.value)) for g in gold],
        {k: same(k[1], mine[k]) for k in needed},
        threshold,
    )
    conn.execute(
        store.annotators.update()
        .where(store.annotators.c.id == annotator)
        .values(qualified=verdict.passed, qualification_kappa=verdict.kappa)
    )
    why = {"threshold": verdict.threshold, "reason": verdict.reason}
    conn.execute(store.verdicts.insert().values(annotator=annotator, **why))
    return verdict.passed


def reassign_failed(conn: sa.Connection) -> dict[str, int]:
    """Move the unanswered main-batch units of workers who failed qualification to qualified workers.

    Each unit goes to the least-loaded qualified worker who does not have it yet (ties by id),
    appended to the end of their queue, so every unit keeps its planned number of votes. A unit
    no qualified worker can take stays where it is and is counted as ``unplaced``.

    Returns:
        ``{"failed_workers", "moved", "unplaced"}``.
    """
    a = store.assignments
    people = conn.execute(sa.select(store.annotators.c.id, store.annotators.c.qualified)
                          .where(store.annotators.c.role == "annotator")).all()  # fmt: skip
    failed = [p.id for p in people if p.qualified is False]
    qualified = sorted(p.id for p in people if p.qualified is True)
    rows = conn.execute(sa.select(a).where(a.c.kind == "main")).all()
    units_of: dict[str, set[str]] = {w: set() for w in qualified}
    for r in rows:
        if r.annotator in units_of:
            units_of[r.annotator].add(r.unit_id)
    top = sa.select(a.c.annotator, sa.func.max(a.c.position).label("top")).group_by(a.c.annotator)
    last = {r.annotator: r.top for r in conn.execute(top).all()}
    answered = {(r.annotator, r.unit_id) for r in conn.execute(
        sa.select(store.answers.c.annotator, store.items.c.unit_id)
        .join(store.items, store.items.c.id == store.answers.c.item_id))}  # fmt: skip
    moved = unplaced = 0
    for r in sorted((r for r in rows if r.annotator in failed), key=lambda r: (r.annotator, r.position)):
        if (r.annotator, r.unit_id) in answered:
            continue
        takers = [w for w in qualified if r.unit_id not in units_of[w]]
        if not takers:
            unplaced += 1
            continue
        to = min(takers, key=lambda w: (len(units_of[w]), w))
        last[to] = last.get(to, -1) + 1
        conn.execute(a.delete().where(a.c.annotator == r.annotator, a.c.unit_id == r.unit_id))
        conn.execute(a.insert().values(annotator=to, unit_id=r.unit_id, batch=r.batch, kind="main",
                                       position=last[to]))  # fmt: skip
        units_of[to].add(r.unit_id)
        moved += 1
    return {"failed_workers": len(failed), "moved": moved, "unplaced": unplaced}
