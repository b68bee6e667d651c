"""The responses of the *other* contexts, as every perturbation's ``pool``, without a copy per item.

:func:`dialeval.stress.run.perturb_items` gave each item a new list of every other context's responses:
n items x n responses per perturbation (20,000 items: 6 minutes for ``length`` alone). :class:`ResponsePool`
holds them once; :meth:`ResponsePool.besides` is the pool of one context, a read-only view in the order
the list had. ``other-context`` and the entity swaps read what they need from the shared structure
(:meth:`OtherResponses.distinct_choices`, :func:`dialeval.stress.entities.other_entities`) and give the
draws the list gave: the same sorted choices, the same ``rng`` calls.

Example:
    >>> pool = ResponsePool({"c1": ["hi", "yo"], "c2": ["hey", "hi"], "c3": ["ok"]})
    >>> mine = pool.besides("c1")
    >>> list(mine), len(mine), mine[2]
    (['hey', 'hi', 'ok'], 3, 'ok')
    >>> list(mine.distinct_choices("ok"))  # "yo" is only c1's own; "hi" is c2's too
    ['hey', 'hi']
"""

from __future__ import annotations

import bisect
import itertools
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from functools import cached_property
from typing import overload


class ResponsePool:
    """Every context's responses, in order, with what the views of one context need (computed on first use)."""

    def __init__(self, by_context: Mapping[str, Sequence[str]]) -> None:
        """Hold ``by_context`` (context id -> its responses, in the order the pool lists them)."""
        self.texts: list[str] = []
        self.spans: dict[str, tuple[int, int]] = {}
        #: Per label set: how many contexts hold each entity text of each label (:mod:`dialeval.stress.entities`).
        self.entity_counts: dict[tuple[str, ...], dict[str, Counter[str]]] = {}
        for cid, texts in by_context.items():
            self.spans[cid] = (len(self.texts), len(self.texts) + len(texts))
            self.texts.extend(texts)

    def besides(self, context_id: str) -> OtherResponses:
        """Return the pool of ``context_id``: the responses of every other context (none of it, for a new id)."""
        return OtherResponses(self, self.spans.get(context_id, (0, 0)))

    @cached_property
    def distinct(self) -> list[str]:
        """The distinct responses that are not blank, sorted."""
        return sorted({t for t in self.texts if t.strip()})

    @cached_property
    def contexts_of(self) -> Counter[str]:
        """How many contexts hold each response."""
        return Counter(t for lo, hi in self.spans.values() for t in set(self.texts[lo:hi]))


class _Without(Sequence[str]):
    """``items`` without the positions in ``gaps`` (sorted, disjoint ``(start, end)`` ranges), read in place."""

    def __init__(self, items: Sequence[str], gaps: list[tuple[int, int]]) -> None:
        self.items, self.gaps = items, gaps

    def __len__(self) -> int:
        return len(self.items) - sum(end - start for start, end in self.gaps)

    @overload
    def __getitem__(self, i: int) -> str: ...
    @overload
    def __getitem__(self, i: slice) -> Sequence[str]: ...
    def __getitem__(self, i: int | slice) -> str | Sequence[str]:
        if isinstance(i, slice):
            return list(self)[i]
        if not -len(self) <= i < len(self):
            raise IndexError("index out of range")
        i %= len(self)
        for start, end in self.gaps:  # the i-th kept item: step over each gap that starts at or before it
            if start > i:
                break
            i += end - start
        return self.items[i]

    def __iter__(self) -> Iterator[str]:
        bounds = [0, *(b for gap in self.gaps for b in gap), len(self.items)]
        return itertools.chain.from_iterable(
            itertools.islice(self.items, lo, hi) for lo, hi in zip(bounds[::2], bounds[1::2], strict=True)
        )


class OtherResponses(_Without):
    """The responses of every context but one (:meth:`ResponsePool.besides`), read from the shared pool."""

    def __init__(self, pool: ResponsePool, own: tuple[int, int]) -> None:
        """View ``pool`` without the responses at ``own`` (start, end): one context's."""
        super().__init__(pool.texts, [own])
        self.pool, self.own = pool, own

    def distinct_choices(self, exclude: str) -> Sequence[str]:
        """``sorted({p for p in self if p.strip() and p != exclude})``, as a view of the pool's sorted list."""
        gone = _only_here(self.pool.contexts_of, set(self.own_texts())) | {exclude}
        everything = self.pool.distinct
        skip = sorted(k for t in gone if (k := bisect.bisect_left(everything, t)) < len(everything)
                      and everything[k] == t)  # fmt: skip
        return _Without(everything, [(k, k + 1) for k in skip])

    def own_texts(self) -> list[str]:
        """Return the responses of the context this view leaves out."""
        return self.pool.texts[self.own[0] : self.own[1]]

    def others_only(self, counts: Mapping[str, int], own: set[str]) -> set[str]:
        """Return the keys of ``counts`` (how many contexts hold each) that a context other than this one holds.

        ``own``: those this context holds.
        """
        return set(counts) - _only_here(counts, own)


def _only_here(counts: Mapping[str, int], own: set[str]) -> set[str]:
    """Return the items of ``own`` that no other context holds (``counts``: how many contexts hold each)."""
    return {t for t in own if counts[t] == 1}
