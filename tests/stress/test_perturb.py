"""Perturbations on real USR Topical-Chat responses: what they change and what they must not."""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest

from dialeval.data.benchmark import Benchmark
from dialeval.data.catalog import load_benchmark
from dialeval.schema import Candidate, Turn
from dialeval.stress.perturb import (
    PERTURBATIONS,
    negation,
    number_swap,
    other_context,
    repetition,
    too_long,
    truncation,
)
from dialeval.stress.run import perturb_items

DOUBLE_NEGATION = re.compile(r"\b(?:not|never|no|n't)\s+not\b|\bnot\s+not\b", re.IGNORECASE)


@pytest.fixture(scope="module")
def bench(shared_data: Path) -> Benchmark:
    return load_benchmark("usr-tc")


def _ctx(bench: Benchmark, c: Candidate) -> tuple[Turn, ...]:
    return tuple(bench.dialogues[c.dialogue_id].context(c.turn_index))


def _not_count(text: str) -> int:
    return len(re.findall(r"\bnot\b", text, re.IGNORECASE))


def test_negation_inserts_exactly_one_not_and_nothing_else(bench: Benchmark) -> None:
    applied = 0
    for c in bench.candidates:
        out = negation(c.text, _ctx(bench, c), random.Random(0), [])
        if out is None:
            continue
        applied += 1
        assert _not_count(out) == _not_count(c.text) + 1
        assert len(DOUBLE_NEGATION.findall(out)) == len(DOUBLE_NEGATION.findall(c.text))
        words, orig = out.split(), c.text.split()
        i = next(k for k, (a, b) in enumerate(zip(words, [*orig, ""], strict=False)) if a != b)
        assert words[i].lower() == "not"
        assert words[:i] + words[i + 1 :] == orig  # removing the inserted word gives the original back
        prev, nxt = (words[i - 1].lower() if i else ""), (words[i + 1].lower() if i + 1 < len(words) else "")
        assert nxt == "only" or prev in {"is", "are", "was", "were", "am", "can", "could", "will", "would"} | {
            "should",
            "do",
            "does",
            "did",
        }
    assert applied > len(bench.candidates) // 2


def test_negation_never_doubles_on_already_negated_responses(bench: Benchmark) -> None:
    negated = [c.text for c in bench.candidates if re.search(r"\b(?:is|do|are|can) (?:not|n't)\b", c.text)]
    assert negated, "USR-TC has responses with an existing negation"
    for text in negated:
        out = negation(text, (), random.Random(0), [])
        if out is not None:
            assert len(DOUBLE_NEGATION.findall(out)) == len(DOUBLE_NEGATION.findall(text))
            assert _not_count(out) == _not_count(text) + 1
    # applying it again to its own output moves on to the next verb (or stops), never "not not"
    for c in bench.candidates[:60]:
        once = negation(c.text, (), random.Random(0), [])
        twice = negation(once, (), random.Random(0), []) if once else None
        if twice is not None:
            assert not DOUBLE_NEGATION.search(twice.replace(c.text, "")) or DOUBLE_NEGATION.search(c.text)
            assert _not_count(twice) == _not_count(c.text) + 2


def test_negation_keeps_case(bench: Benchmark) -> None:
    for c in bench.candidates[:60]:
        low = negation(c.text, (), random.Random(0), [])
        if low is None:
            continue
        assert negation(c.text.upper(), (), random.Random(0), []) == low.upper()
        first = c.text[:1].upper() + c.text[1:]
        cap = negation(first, (), random.Random(0), [])
        assert cap is not None and cap.lower() == low.lower() and cap[:1].isupper()


def test_number_swap_changes_only_one_number(bench: Benchmark) -> None:
    with_digits = [c for c in bench.candidates if re.search(r"\d", c.text)]
    assert with_digits
    for c in with_digits:
        out = number_swap(c.text, _ctx(bench, c), random.Random(3), [])
        if out is None:
            continue
        assert out != c.text and len(out) == len(c.text)
        diff = [i for i, (a, b) in enumerate(zip(c.text, out, strict=True)) if a != b]
        assert all(c.text[i].isdigit() and out[i].isdigit() for i in diff)
        assert re.sub(r"\d", "#", out) == re.sub(r"\d", "#", c.text)
    no_digits = next(c for c in bench.candidates if not re.search(r"\d", c.text))
    assert number_swap(no_digits.text, (), random.Random(0), []) is None


def test_number_swap_leaves_a_run_of_thousands_of_digits_alone() -> None:
    """A run of 5,000 digits was a ValueError traceback (Python reads at most 4,300 digits as an int)."""
    digits = "1" * 5000
    assert number_swap(digits, (), random.Random(0), []) is None
    text = f"{digits} and 7 cats"
    out = number_swap(text, (), random.Random(0), [])  # the number it can swap is swapped
    assert out is not None and out != text and out.startswith(f"{digits} and ") and out.endswith(" cats")


@pytest.mark.parametrize(
    ("text", "zero"),
    [("he has \u0661\u0662\u0663 cats", 0x660), ("he has \uff11\uff12 cats", 0xFF10), ("x \u06f3 y", 0x6F0)],
)
def test_number_swap_keeps_the_digits_script(text: str, zero: int) -> None:
    """Arabic-Indic, full-width and Persian digits came back as ASCII digits (876, 63, 6 here)."""
    out = number_swap(text, (), random.Random(0), [])
    assert out is not None and out != text and len(out) == len(text)
    changed = [ch for a, ch in zip(text, out, strict=True) if a != ch]
    assert changed and all(zero <= ord(ch) <= zero + 9 for ch in out if ch.isdigit())
    # the same draws as for ASCII digits of the same length (the value of "123", "12", "3" swapped with seed 0)
    ascii_out = number_swap(re.sub(r"\d", lambda m: str(int(m.group())), text), (), random.Random(0), [])
    assert ascii_out is not None
    assert re.sub(r"\d", lambda m: str(int(m.group())), out) == ascii_out


def test_number_swap_keeps_each_digit_s_script_in_a_mixed_run() -> None:
    out = number_swap("a 1\u0662 b", (), random.Random(0), [])
    assert out is not None and out[2].isascii() and 0x660 <= ord(out[3]) <= 0x669


def test_other_context_draws_from_other_contexts_only(bench: Benchmark) -> None:
    sub = bench.head(5)
    items = perturb_items(sub.candidates, sub.dialogues, ["other-context"], seed=0)
    copies = items.copies
    assert items.skipped["other-context"] == 0
    by_ctx: dict[str, set[str]] = {}
    for c in sub.candidates:
        by_ctx.setdefault(c.context_id, set()).add(c.text)
    for p in copies["other-context"]:
        assert p.text not in by_ctx[p.context_id]
        assert any(p.text in texts for cid, texts in by_ctx.items() if cid != p.context_id)
    assert other_context("x", (), random.Random(0), []) is None


def test_repetition_repeats_one_phrase(bench: Benchmark) -> None:
    for c in bench.candidates[:100]:
        out = repetition(c.text, (), random.Random(1), [])
        assert out is not None
        words, orig = out.split(), c.text.split()
        k = len(words) - len(orig)
        assert 2 <= k <= 6
        assert any(words == orig[: s + k] + orig[s : s + k] + orig[s + k :] for s in range(len(orig) - k + 1)), (
            c.text,
            out,
        )


def test_truncation_is_a_prefix_cut_between_30_and_70_percent(bench: Benchmark) -> None:
    for c in bench.candidates:
        out = truncation(c.text, (), random.Random(2), [])
        orig = c.text.split()
        if len(orig) < 4:
            assert out is None
            continue
        assert out is not None
        words = out.split()
        assert words == orig[: len(words)]
        assert 0.3 * len(orig) <= len(words) <= 0.7 * len(orig)


def test_too_long_appends_on_topic_filler_only(bench: Benchmark) -> None:
    for c in bench.candidates[:60]:
        ctx = _ctx(bench, c)
        out = too_long(c.text, ctx, random.Random(4), [])
        assert out is not None and out.startswith(c.text.rstrip() + " ")
        added = out[len(c.text.rstrip()) + 1 :].split()
        assert len(added) >= max(40, 2 * len(c.text.split()))
        context_words = {w for t in ctx for w in re.findall(r"[a-z]+", t.text.lower())}
        long_added = {w for w in added if len(w) > 3 and w.isalpha()}
        template_words = {"speaking", "also", "worth", "mentioning", "have", "been", "thinking", "about"}
        template_words |= {"lately", "there", "much", "more", "reminds", "which", "interesting", "think"}
        assert long_added - template_words <= context_words
        assert long_added & context_words


@pytest.mark.parametrize("response", ["", "   "])
def test_too_long_on_an_empty_response_is_the_filler_alone(response: str) -> None:
    """An empty (or blank) response gave the filler after a space: " i have been thinking ..."."""
    ctx = (Turn(speaker="A", text="I went to a jazz concert downtown"),)
    out = too_long(response, ctx, random.Random(0), [])
    assert out is not None and out == out.strip() and len(out.split()) >= 40
    assert out == too_long("", ctx, random.Random(0), [])  # the same draws: the filler itself


def test_too_long_takes_accented_words_whole() -> None:
    """"München" and "Zürich" gave the filler the fragments "nchen" and "rich", words of no turn."""
    ctx = (Turn(speaker="A", text="I visited München and Zürich, a naïve café"),)
    out = too_long("ok", ctx, random.Random(0), [])
    assert out is not None
    filler = set(out.split()[1:])
    # the content words of the context, by hand: "visited", "münchen", "zürich", "naïve", "café"
    assert filler & {"münchen", "zürich", "naïve", "café"}
    assert not filler & {"nchen", "rich", "caf", "na", "ve"}
    decomposed = too_long("ok", (Turn(speaker="A", text="Mu\u0308nchen İstanbul"),), random.Random(0), [])
    assert decomposed is not None and set(decomposed.split()) & {"mu\u0308nchen", "i\u0307stanbul"}
    assert not set(decomposed.split()) & {"nchen", "stanbul"}
    assert too_long("ok", (Turn(speaker="A", text="Я люблю джаз"),), random.Random(0), []) is None


def test_seeded_determinism_and_context_untouched(bench: Benchmark) -> None:
    sub = bench.head(8)
    before = {k: d.model_dump() for k, d in sub.dialogues.items()}
    a = perturb_items(sub.candidates, sub.dialogues, list(PERTURBATIONS), seed=7)
    b = perturb_items(sub.candidates, sub.dialogues, list(PERTURBATIONS), seed=7)
    c = perturb_items(sub.candidates, sub.dialogues, list(PERTURBATIONS), seed=8)
    assert {k: d.model_dump() for k, d in sub.dialogues.items()} == before
    assert a.skipped == b.skipped
    for name in PERTURBATIONS:
        assert [x.text for x in a.copies[name]] == [x.text for x in b.copies[name]]
        # every response is either perturbed or counted as skipped, never dropped
        assert len(a.copies[name]) + a.skipped[name] == len(sub.candidates)
    assert any([x.text for x in a.copies[n]] != [x.text for x in c.copies[n]]
               for n in ("repetition", "truncation", "too-long"))  # fmt: skip
    originals = {x.id: x for x in sub.candidates}
    for name, copies in a.copies.items():
        for p in copies:
            src = originals[p.id.removesuffix(f"~{name}")]
            assert (p.dialogue_id, p.turn_index, p.references, p.system) == (
                src.dialogue_id,
                src.turn_index,
                src.references,
                src.system,
            )
            assert p.text != src.text
