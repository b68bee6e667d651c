"""Positives and negatives for the self-supervised heads, deterministic for a seed.

*Sensible* examples are (context, response, label): the true next turn (1) against
a random response from another dialogue and one harder negative per pair (0),
drawn by the seed among those that apply: the context's DailyDialog++ adversarial
negatives, and the stress perturbations of :mod:`dialeval.stress.perturb`
(negation, truncation, repetition) plus a shuffled context (``every_hard``: one of each
kind that applies instead). *Fluent* examples are (utterance, label): a real turn (1)
against one corruption of it (0): words dropped, shuffled or repeated
(:data:`DEFAULT_CORRUPTIONS`), or, when a recipe names it, cut mid-sentence.

Speaker swap is not used: the heads read the texts only, so it changes nothing they see.

Example:
    >>> import random
    >>> word_shuffle("one two three four five", random.Random(0))
    'three two one five four'
    >>> word_drop("one two three four five", random.Random(0)) is not None
    True
    >>> word_shuffle("too short", random.Random(0)) is None
    True
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from dialeval.quality.corpora import Pair
from dialeval.schema import Turn
from dialeval.stress.perturb import negation, repetition, truncation


@dataclass(frozen=True)
class SensibleExample:
    """A (context, response) pair labelled 1 (the true next turn) or 0, with the kind of negative."""

    group: str
    context: tuple[str, ...]
    response: str
    label: int
    kind: str


@dataclass(frozen=True)
class FluentExample:
    """An utterance labelled 1 (as written) or 0 (corrupted), with the corruption."""

    group: str
    text: str
    label: int
    kind: str


def word_drop(text: str, rng: random.Random) -> str | None:
    """Drop about a third of the words (at least one); None under 4 words."""
    words = text.split()
    if len(words) < 4:
        return None
    k = max(1, round(len(words) / 3))
    drop = set(rng.sample(range(len(words)), k))
    return " ".join(w for i, w in enumerate(words) if i not in drop)


def word_shuffle(text: str, rng: random.Random) -> str | None:
    """Shuffle the words; None under 4 words or when the order did not change."""
    words = text.split()
    if len(words) < 4:
        return None
    new = words[:]
    rng.shuffle(new)
    return None if new == words else " ".join(new)


def word_repeat(text: str, rng: random.Random) -> str | None:
    """Repeat one to three words in place (``I I like like it``); None under 2 words."""
    words = text.split()
    if len(words) < 2:
        return None
    picks = set(rng.sample(range(len(words)), min(len(words), rng.randint(1, 3))))
    out: list[str] = []
    for i, w in enumerate(words):
        out.extend([w, w] if i in picks else [w])
    return " ".join(out)


def cut(text: str, rng: random.Random) -> str | None:
    """Cut the text mid-sentence as the stress test's truncation does (:func:`dialeval.stress.perturb.truncation`)."""
    return truncation(text, (), rng, [])


#: Utterance corruptions for the fluent head, by name.
CORRUPTIONS: dict[str, Callable[[str, random.Random], str | None]] = {
    "word-drop": word_drop, "word-shuffle": word_shuffle, "word-repeat": word_repeat, "truncation": cut,
}
#: The corruptions of the recipes that predate ``truncation`` (their heads rebuild as they were).
DEFAULT_CORRUPTIONS = ("word-drop", "word-shuffle", "word-repeat")

_RESPONSE_NEGATIVES = {"negation": negation, "truncation": truncation, "repetition": repetition}


def _turns(context: Sequence[str]) -> tuple[Turn, ...]:
    n = len(context)
    return tuple(Turn(speaker="A" if (n - i) % 2 == 1 else "B", text=t) for i, t in enumerate(context))


def _hard_negatives(pair: Pair, rng: random.Random, every: bool) -> list[tuple[tuple[str, ...], str, str]]:
    kinds = ["adversarial", "negation", "truncation", "repetition", "shuffled-context"]
    rng.shuffle(kinds)
    out: list[tuple[tuple[str, ...], str, str]] = []
    for kind in kinds:
        got = _hard_negative(pair, rng, kind)
        if got is not None:
            out.append(got)
            if not every:
                break
    return out


def _hard_negative(pair: Pair, rng: random.Random, kind: str) -> tuple[tuple[str, ...], str, str] | None:
    if kind == "adversarial" and pair.adversarial:
        return pair.context, rng.choice(pair.adversarial), kind
    if kind == "shuffled-context" and len(pair.context) >= 3 and len(set(pair.context[-4:])) > 1:
        ctx = list(pair.context[-4:])
        while ctx[-1] == pair.context[-1]:
            rng.shuffle(ctx)
        return (*pair.context[:-4], *ctx), pair.response, kind
    if kind in _RESPONSE_NEGATIVES:
        got = _RESPONSE_NEGATIVES[kind](pair.response, _turns(pair.context), rng, [])
        if got and got != pair.response:
            return pair.context, got, kind
    return None


def sensible_examples(pairs: Sequence[Pair], seed: int, every_hard: bool = False) -> list[SensibleExample]:
    """Return, per pair: the positive, a random other-dialogue response, and one hard negative if any applies.

    ``every_hard``: one hard negative of every kind that applies instead of one in all.
    """
    rng = random.Random(seed)
    out: list[SensibleExample] = []
    for p in pairs:
        group = f"{p.source}/{p.dialogue}"
        out.append(SensibleExample(group, p.context, p.response, 1, "true"))
        for _ in range(20):
            other = pairs[rng.randrange(len(pairs))]
            if (other.source, other.dialogue) != (p.source, p.dialogue):
                out.append(SensibleExample(group, p.context, other.response, 0, "random"))
                break
        for ctx, response, kind in _hard_negatives(p, rng, every_hard):
            out.append(SensibleExample(group, ctx, response, 0, kind))
    return out


def fluent_examples(pairs: Sequence[Pair], seed: int,
                    corruptions: Sequence[str] = DEFAULT_CORRUPTIONS) -> list[FluentExample]:  # fmt: skip
    """Return, per distinct response: it as written, and one of ``corruptions`` (chosen by the seed) if one applies."""
    rng = random.Random(seed)
    names = list(corruptions)
    out: list[FluentExample] = []
    seen: set[str] = set()
    for p in pairs:
        if p.response in seen:
            continue
        seen.add(p.response)
        group = f"{p.source}/{p.dialogue}"
        out.append(FluentExample(group, p.response, 1, "real"))
        for name in rng.sample(names, len(names)):
            bad = CORRUPTIONS[name](p.response, rng)
            if bad is not None and bad != p.response:
                out.append(FluentExample(group, bad, 0, name))
                break
    return out
