"""A loaded benchmark: dialogues, candidates, per-annotator ratings, and what was skipped.

Example:
    >>> from dialeval.schema import Dialogue, Turn, Candidate, Rating
    >>> b = Benchmark(
    ...     name="toy",
    ...     dialogues={"d": Dialogue(id="d", turns=[Turn(speaker="A", text="hi")])},
    ...     candidates=[Candidate(id="d:s", dialogue_id="d", turn_index=1, system="s", text="yo")],
    ...     ratings=[Rating(item_id="d:s", dimension="Overall", annotator="a1", value=3.0, scale="1-5")],
    ... )
    >>> b.counts()["items"], b.dimensions()
    (1, {'Overall': '1-5'})
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from dialeval.data._common import Where
from dialeval.errors import InputError, closest
from dialeval.schema import Candidate, Dialogue, Rating
from dialeval.words import counted

#: A row of a user's table as read: where it is, its cells, and the ids of the items it gave.
TableRow = tuple[Where, Mapping[str, Any], list[str]]

#: The names of an overall-quality rating, the default dimension: most benchmarks' "Overall", DSTC9's "human (overall)".
OVERALL = ("Overall", "human (overall)")


def choose_dimension(dimensions: Iterable[str], wanted: str | None, what: str) -> str:
    """Return the human dimension to use: ``wanted``, else the overall rating (:data:`OVERALL`), else the only one.

    Raises:
        InputError: ``wanted`` is not rated, there are no ratings, or several
            dimensions and none is "Overall" (the error lists them).

    Example:
        >>> choose_dimension(["Overall", "Engaging"], None, "usr-tc")
        'Overall'
        >>> choose_dimension(["likeable", "human (overall)"], None, "dstc9")
        'human (overall)'
        >>> choose_dimension(["fluency", "coherence"], None, "mine")
        Traceback (most recent call last):
        ...
        dialeval.errors.InputError: ...: choose one with -d: fluency, coherence
    """
    dims = list(dict.fromkeys(dimensions))
    if wanted is not None:
        if wanted not in dims:
            have = ", ".join(dims) if dims else "no ratings"
            close = closest(wanted, dims)
            hint = f' (did you mean "{close}"?)' if close else ""
            raise InputError(f'{what} has no dimension "{wanted}"{hint}; it has: {have}', field="--dimension")
        return wanted
    if overall := next((name for name in OVERALL if name in dims), None):
        return overall
    if len(dims) == 1:
        return dims[0]
    if not dims:
        raise InputError(f"{what} has no ratings to correlate with (a table's rating columns are read with "
                         '--rating-col COLUMN=DIMENSION, or under "ratings" in a mapping file)')
    raise InputError(
        f'{what} rates several dimensions, none "Overall": choose one with -d: {", ".join(dims)}', field="--dimension"
    )


def check_limit(n_contexts: int | None) -> None:
    """Refuse a ``--limit`` below 1 (None: no limit).

    Example:
        >>> check_limit(0)
        Traceback (most recent call last):
        ...
        dialeval.errors.InputError: field "--limit": must be at least 1 (the first N contexts), got 0
    """
    if n_contexts is not None and n_contexts < 1:
        raise InputError(f"must be at least 1 (the first N contexts), got {n_contexts}", field="--limit")


def limit_note(bench: Benchmark, n_contexts: int | None) -> str | None:
    """Say that ``--limit`` asked for more contexts than ``bench`` (cut to them) has, or None.

    Example:
        >>> one = Benchmark(name="x", dialogues={}, ratings=[],
        ...                 candidates=[Candidate(id="a", dialogue_id="d", turn_index=1, system="s", text="Hi")])
        >>> limit_note(one, 500), limit_note(one, 1), limit_note(one, None)
        ('--limit 500 is above the 1 context of x; it is used', None, None)
    """
    have = len({c.context_id for c in bench.candidates})
    if n_contexts is None or n_contexts <= have:
        return None
    used = "it is used" if have == 1 else f"all {have} are used"
    return f"--limit {n_contexts} is above the {counted(have, 'context')} of {bench.name}; {used}"


@dataclass
class Benchmark:
    """Everything a loader read from one published benchmark.

    Attributes:
        name: Catalog name.
        dialogues: Dialogues by id.
        candidates: The responses to score (turn-level items).
        ratings: Human ratings, one per annotator, dimension and item.
        skipped: Reason -> number of values or rows the loader skipped.
        source: Where it was read from.
        warnings: Things the user should know that are not skips (e.g. a file whose
            sha256 differs from the catalog's).
        rows: A user's table's rows as read, in file order, the annotator's cells pseudonymised where
            the mapping says so, when its reader was asked to keep them (``score -o scored.csv`` writes them
            back with the scores); else empty.
        sources: Where each item of a user's table came from, ``"FILE:LINE"`` of its first row, by item id (an
            error about an item names it so: the id is made up by the loader); empty for a published benchmark.
    """

    name: str
    dialogues: dict[str, Dialogue]
    candidates: list[Candidate]
    ratings: list[Rating]
    skipped: Counter[str] = field(default_factory=Counter)
    source: str = ""
    warnings: list[str] = field(default_factory=list)
    rows: list[TableRow] = field(default_factory=list)
    sources: dict[str, str] = field(default_factory=dict)

    def dimensions(self) -> dict[str, str]:
        """Return each rated dimension with its scale, in first-seen order."""
        dims: dict[str, str] = {}
        for r in self.ratings:
            dims.setdefault(r.dimension, r.scale)
        return dims

    def dimension(self, wanted: str | None = None) -> str:
        """Return ``wanted`` if rated, else the default: the overall rating, else the only dimension.

        Example:
            >>> from dialeval.schema import Rating
            >>> b = Benchmark("g", {}, [], [Rating(item_id="x", dimension="coherence", annotator="a", value=1.0)])
            >>> b.dimension()
            'coherence'
        """
        return choose_dimension(self.dimensions(), wanted, f'benchmark "{self.name}"')

    def counts(self) -> dict[str, Any]:
        """Return the headline counts shown by ``dialeval data show``."""
        return {
            "items": len(self.candidates),
            "dialogues": len(self.dialogues),
            "contexts": len({c.context_id for c in self.candidates}),
            "systems": len({c.system for c in self.candidates}),
            "annotators": len({r.annotator for r in self.ratings}),
            "annotators_per_item": self.annotators_per_item(),
            "ratings": len(self.ratings),
            "dimensions": self.dimensions(),
            "levels": sorted({r.level for r in self.ratings}),
            "skipped": dict(self.skipped),
        }

    def annotators_per_item(self) -> str:
        """Return the range of distinct annotators per rated item, e.g. ``"3"`` or ``"1-5"`` (``"0"`` if unrated)."""
        per: dict[tuple[str, str], set[str]] = {}
        for r in self.ratings:
            per.setdefault((r.level, r.item_id), set()).add(r.annotator)
        if not per:
            return "0"
        sizes = [len(v) for v in per.values()]
        lo, hi = min(sizes), max(sizes)
        return str(lo) if lo == hi else f"{lo}-{hi}"

    def head(self, n_contexts: int) -> Benchmark:
        """Return the benchmark restricted to its first ``n_contexts`` contexts (for quick runs).

        Where it has fewer, all of them, warning so (:func:`limit_note`).

        Raises:
            InputError: ``n_contexts`` below 1 (every command's ``--limit`` comes here; none may
                run on nothing and write empty outputs).
        """
        check_limit(n_contexts)
        keep: list[str] = []
        for c in self.candidates:
            if c.context_id not in keep:
                keep.append(c.context_id)
            if len(keep) > n_contexts:
                break
        kept_ctx = set(keep[:n_contexts])
        cands = [c for c in self.candidates if c.context_id in kept_ctx]
        ids = {c.id for c in cands}
        dids = {c.dialogue_id for c in cands}
        ratings = [
            r for r in self.ratings if (r.item_id in ids if r.level == "turn" else r.item_id in dids)
        ]
        cut = Benchmark(
            name=self.name,
            dialogues={k: v for k, v in self.dialogues.items() if k in dids},
            candidates=cands,
            ratings=ratings,
            skipped=Counter(self.skipped),
            source=self.source,
            warnings=list(self.warnings),
            rows=[row for row in self.rows if set(row[2]) <= ids],
            sources={item: place for item, place in self.sources.items() if item in ids},
        )
        if note := limit_note(cut, n_contexts):  # all were kept, silently (lmstyle refuses such a --limit)
            cut.warnings.append(note)
        return cut
