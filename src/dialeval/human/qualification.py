"""Qualification: a worker passes when Fleiss' kappa with the reference annotators exceeds a threshold.

Mousavi et al. (2022) accept workers whose agreement with the reference
annotators on the qualification batch is above 0.21 (Fleiss' kappa; "fair" on
Landis & Koch's scale). Kappa is computed over every (item, criterion) pair of
the qualification batch, with the references and the worker as raters and
"I don't know" as its own category.
"""

from __future__ import annotations

import sqlalchemy as sa

from dialeval.human import store
from dialeval.human.protocol import Protocol
from dialeval.meta.agreement import fleiss_kappa, reliability_matrix
from dialeval.schema import Rating


def qualification_kappa(reference: list[tuple[str, str, str, str]], worker: dict[tuple[str, str], str]) -> float:
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
    rows = [Rating(item_id=f"{i}|{c}", dimension="q", annotator=f"ref:{a}", value=v) for a, i, c, v in reference]
    rows += [Rating(item_id=f"{i}|{c}", dimension="q", annotator="worker", value=v) for (i, c), v in worker.items()]
    rel = reliability_matrix(rows)
    try:
        return fleiss_kappa(rel.matrix)
    except ValueError:
        labels = {v for *_, v in reference}
        return 1.0 if len(labels) == 1 and set(worker.values()) == labels else 0.0


def decide_qualification(conn: sa.Connection, annotator: str, threshold: float) -> bool:
    """Return whether ``annotator`` may work on main batches, deciding it once they finish qualifying."""
    row = conn.execute(sa.select(store.annotators).where(store.annotators.c.id == annotator)).one()
    if row.qualified is not None:
        return bool(row.qualified)
    q_items = [
        r.id
        for r in conn.execute(
            sa.select(store.items.c.id)
            .join(store.assignments, store.assignments.c.unit_id == store.items.c.unit_id)
            .where(store.assignments.c.annotator == annotator, store.assignments.c.kind == "qualification")
        )
    ]
    gold = conn.execute(sa.select(store.gold).where(store.gold.c.item_id.in_(q_items))).all()
    needed = {(g.item_id, g.criterion) for g in gold}
    mine = {
        (a.item_id, a.criterion): a.value
        for a in conn.execute(
            sa.select(store.answers).where(store.answers.c.annotator == annotator, store.answers.c.item_id.in_(q_items))
        )
    }
    if not needed or not needed <= set(mine):
        return False
    # compare the stored spellings of the answers ("3.0" and "3" are one answer; see Answer.canonical)
    protocol = Protocol.model_validate(store.get_meta(conn, "protocol"))
    answer_of = {c.name: c.answer for c in protocol.criteria}

    def same(criterion: str, value: str) -> str:
        if criterion not in answer_of:
            return value
        return answer_of[criterion].canonical(value) or value

    kappa = qualification_kappa(
        [(g.annotator, g.item_id, g.criterion, same(g.criterion, g.value)) for g in gold],
        {k: same(k[1], mine[k]) for k in needed},
    )
    passed = kappa > threshold
    conn.execute(
        store.annotators.update()
        .where(store.annotators.c.id == annotator)
        .values(qualified=passed, qualification_kappa=kappa)
    )
    return passed


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
