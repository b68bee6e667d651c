"""The shared response pool gives each perturbation what a list of every other context's responses gave.

perturb_items built that list for every item (n x n per perturbation: 20,000 items took 6 minutes for
``length``; 59 s now, the same stress.jsonl). Here each view is checked against the list built as the
old code built it, and the perturbations that read the pool against the same perturbation on that list.
"""

from __future__ import annotations

import random
from collections.abc import Callable

import pytest

from dialeval.stress.entities import date_swap, entity_swap
from dialeval.stress.perturb import other_context
from dialeval.stress.pool import ResponsePool

BY_CONTEXT = {
    "c1": ["We met Serena in Paris.", "ok", "ok", "  "],
    "c2": ["ok", "Ask Obama about it.", "It was in May 2019."],
    "c3": ["We flew to Paris on Monday.", "Sure thing", ""],
    "c4": ["Sure thing"],
}


def listed(cid: str) -> list[str]:
    """The pool as perturb_items built it before: every other context's responses, in order."""
    return [t for other, texts in BY_CONTEXT.items() if other != cid for t in texts]


@pytest.mark.parametrize("cid", [*BY_CONTEXT, "new"])
def test_a_context_s_view_is_the_list_of_every_other_response(cid: str) -> None:
    view, want = ResponsePool(BY_CONTEXT).besides(cid), listed(cid)
    assert list(view) == want and len(view) == len(want)
    assert [view[i] for i in range(-len(want), len(want))] == want[-len(want) :] + want
    assert list(view[1:4]) == want[1:4]
    with pytest.raises(IndexError):
        view[len(want)]


@pytest.mark.parametrize("cid", list(BY_CONTEXT))
def test_the_distinct_choices_are_the_sorted_set_other_context_built(cid: str) -> None:
    """A response held by another context too stays a choice ("ok" in c1 and c2); one only here does not."""
    view = ResponsePool(BY_CONTEXT).besides(cid)
    for exclude in ["ok", "Sure thing", "nowhere", "", *BY_CONTEXT[cid]]:
        want = sorted({p for p in listed(cid) if p.strip() and p != exclude})
        got = view.distinct_choices(exclude)
        assert list(got) == want and len(got) == len(want)
        assert [got[i] for i in range(len(want))] == want


@pytest.mark.parametrize("perturbation", [other_context, entity_swap, date_swap])
def test_each_perturbation_reading_the_pool_draws_as_from_the_list(perturbation: Callable[..., str | None]) -> None:
    """The same text for every response and seed (real spaCy entities; "Paris" is in two contexts)."""
    pool = ResponsePool(BY_CONTEXT)
    changed = 0
    for cid, texts in BY_CONTEXT.items():
        for text in texts:
            for seed in range(4):
                want = perturbation(text, (), random.Random(seed), listed(cid))
                assert perturbation(text, (), random.Random(seed), pool.besides(cid)) == want, (cid, text, seed)
                changed += want is not None
    assert changed >= 8  # each applies to some responses here (2 dates, 3 names, every non-blank one)
