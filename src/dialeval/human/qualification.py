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
    kappa = qualification_kappa(
        [(g.annotator, g.item_id, g.criterion, g.value) for g in gold], {k: mine[k] for k in needed}
    )
    passed = kappa > threshold
    conn.execute(
        store.annotators.update()
        .where(store.annotators.c.id == annotator)
        .values(qualified=passed, qualification_kappa=kappa)
    )
    return passed
