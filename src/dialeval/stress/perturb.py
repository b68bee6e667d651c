"""Perturbations for metric stress tests: of the response, and of the dialogue around it.

A *response* perturbation is a pure function
``(response, context, rng, pool) -> str | None``: ``context`` is the dialogue
turns before the response (never modified), ``rng`` the only source of
randomness (same seed, same output), ``pool`` responses from *other* contexts
(used by ``other-context``, ``date-swap`` and ``entity-swap``). ``None`` means
the perturbation does not apply to this response; callers count it as skipped.

A *context* perturbation (:mod:`dialeval.stress.context`) takes the same
arguments and returns a :class:`~dialeval.stress.context.Perturbed`: the
unchanged response, the context it is scored with, and turns after it.
:func:`apply_perturbation` runs either kind by name and returns a ``Perturbed``.

Example:
    >>> import random
    >>> from dialeval.schema import Turn
    >>> ctx = (Turn(speaker="A", text="Do you like jazz music?"),)
    >>> negation("It is a great show.", ctx, random.Random(0), [])
    'It is not a great show.'
    >>> negation("It is not a great show.", ctx, random.Random(0), []) is None
    True
    >>> list(PERTURBATIONS)[:3], list(CONTEXT_PERTURBATIONS)[0]
    (['negation', 'number-swap', 'date-swap'], 'speaker-swap')
    >>> apply_perturbation("speaker-swap", "I do.", ctx, random.Random(0), []).context[0].speaker
    'B'
"""

from __future__ import annotations

import math
import random
import re
import unicodedata
from collections.abc import Callable, Sequence

from dialeval.schema import Turn
from dialeval.stress.context import Perturbed, sentiment_tail_negative, sentiment_tail_positive, speaker_swap
from dialeval.stress.entities import date_swap, entity_swap
from dialeval.stress.pool import OtherResponses

Perturbation = Callable[[str, tuple[Turn, ...], random.Random, Sequence[str]], str | None]
ContextPerturbation = Callable[[str, tuple[Turn, ...], random.Random, Sequence[str]], Perturbed | None]

#: Verbs that take a following "not" (the paper's "is" -> "is not", "can" -> "can not").
NEGATABLE_VERBS = ("is", "are", "was", "were", "am", "can", "could", "will", "would", "should", "do", "does", "did")
_WORD = r"(?<![\w'’])({})(?![\w'’])"
_VERB_RE = re.compile(_WORD.format("|".join((*NEGATABLE_VERBS, "only"))), re.IGNORECASE)
_NEG_AFTER = re.compile(r"\s*(?:n['’]t\b|(?:not|never|no)\b)", re.IGNORECASE)
_NEG_BEFORE = re.compile(r"\b(?:not|never|no|n['’]t)\s*$", re.IGNORECASE)
_NUMBER_RE = re.compile(r"(?<![\w.])\d+(?![\w])")
#: The longest run of digits ``number-swap`` takes for a number: Python reads no more than 640 to 4,300 digits
#: (``sys.set_int_max_str_digits``) as an int, and a run of 5,000 was a ValueError traceback.
_MAX_DIGITS = 600
#: A word: letters and the combining accents that follow them ("mu\u0308nchen" decomposed, "i\u0307stanbul").
_TOKEN_RE = re.compile(r"(?:[^\W\d_]|[\u0300-\u036f])+")
_STOPWORDS = frozenset(
    [
        "about",
        "above",
        "after",
        "again",
        "against",
        "also",
        "although",
        "because",
        "been",
        "before",
        "being",
        "between",
        "both",
        "could",
        "does",
        "doing",
        "down",
        "during",
        "each",
        "from",
        "further",
        "have",
        "having",
        "here",
        "hers",
        "herself",
        "himself",
        "into",
        "itself",
        "just",
        "like",
        "more",
        "most",
        "much",
        "myself",
        "only",
        "other",
        "ours",
        "over",
        "same",
        "should",
        "some",
        "such",
        "than",
        "that",
        "their",
        "theirs",
        "them",
        "then",
        "there",
        "these",
        "they",
        "this",
        "those",
        "through",
        "under",
        "until",
        "very",
        "what",
        "when",
        "where",
        "which",
        "while",
        "will",
        "with",
        "would",
        "your",
        "yours",
        "yeah",
        "really",
        "think",
        "know",
        "well",
        "actually",
        "going",
        "pretty",
        "thing",
        "things",
        "something",
        "anything",
        "dunno",
        "sure",
        "okay",
        "cool",
        "that's",
    ]
)


def _like_case(word: str, template: str) -> str:
    """Return ``word`` in the case of ``template`` (UPPER, Title or lower)."""
    if template.isupper() and len(template) > 1:
        return word.upper()
    if template[:1].isupper():
        return word[:1].upper() + word[1:]
    return word


def negation(response: str, context: tuple[Turn, ...], rng: random.Random, pool: Sequence[str]) -> str | None:
    """Negate the first negatable verb: "is" -> "is not", "can" -> "can not", "only" -> "not only".

    The rewrites of DialogADV (paper 002): one negation is inserted, at the first
    applicable word, keeping its case. A verb already followed by a negation
    ("is not", "do n't", "is never") or an "only" already preceded by "not" is
    skipped, so no double negation is ever produced; a response with no
    applicable word gives None. ``rng`` and ``pool`` are unused (deterministic).

    Example:
        >>> import random
        >>> negation("Only one person is here", (), random.Random(0), [])
        'Not only one person is here'
        >>> negation("i do n't know , it is fun", (), random.Random(0), [])
        "i do n't know , it is not fun"
        >>> negation("hello there", (), random.Random(0), []) is None
        True
    """
    for m in _VERB_RE.finditer(response):
        word = m.group(1)
        if word.lower() == "only":
            if _NEG_BEFORE.search(response[: m.start()]):
                continue
            return response[: m.start()] + _like_case("not", word) + " " + word.lower() + response[m.end() :]
        if _NEG_AFTER.match(response, m.end()):
            continue
        neg = "NOT" if word.isupper() and len(word) > 1 else "not"
        return response[: m.end()] + " " + neg + response[m.end() :]
    return None


def number_swap(response: str, context: tuple[Turn, ...], rng: random.Random, pool: Sequence[str]) -> str | None:
    """Replace one whole digit number (chosen by ``rng``) with a different number of similar size.

    Each new digit is written in the script of the digit it replaces (Arabic-Indic, full-width, ...), so only
    the value changes. A run of more than :data:`_MAX_DIGITS` digits is no number to swap; a response with no
    other gives None.

    Example:
        >>> import random
        >>> out = number_swap("he scored 12 goals in 2019", (), random.Random(1), [])
        >>> out != "he scored 12 goals in 2019" and out.startswith("he scored")
        True
        >>> number_swap("no digits here", (), random.Random(1), []) is None
        True
    """
    matches = [m for m in _NUMBER_RE.finditer(response) if len(m.group(0)) <= _MAX_DIGITS]
    if not matches:
        return None
    m = rng.choice(matches)
    old = m.group(0)
    value = int(old)
    lo, hi = (0, 9) if len(old) == 1 else (10 ** (len(old) - 1), 10 ** len(old) - 1)
    new = value
    while new == value:
        new = rng.randint(lo, hi)
    digits = "".join(chr(ord(ch) - int(ch) + int(d)) for ch, d in zip(old, str(new), strict=True))
    return response[: m.start()] + digits + response[m.end() :]


def other_context(response: str, context: tuple[Turn, ...], rng: random.Random, pool: Sequence[str]) -> str | None:
    """Return a response, chosen by ``rng``, from ``pool`` (responses to other contexts).

    Example:
        >>> import random
        >>> other_context("mine", (), random.Random(0), ["theirs", "mine"])
        'theirs'
        >>> other_context("mine", (), random.Random(0), []) is None
        True
    """
    if isinstance(pool, OtherResponses):  # the same sorted choices, read from the shared pool
        choices: Sequence[str] = pool.distinct_choices(response)
    else:
        choices = sorted({p for p in pool if p.strip() and p != response})
    if not choices:
        return None
    return rng.choice(choices)


def repetition(response: str, context: tuple[Turn, ...], rng: random.Random, pool: Sequence[str]) -> str | None:
    """Repeat a phrase of the response (2-6 words, chosen by ``rng``) right after itself.

    Example:
        >>> import random
        >>> out = repetition("i love the jazz concert", (), random.Random(0), [])
        >>> len(out.split()) > 5 and out != "i love the jazz concert"
        True
        >>> repetition("hi", (), random.Random(0), []) is None
        True
    """
    words = response.split()
    if len(words) < 2:
        return None
    size = rng.randint(2, min(6, len(words)))
    start = rng.randint(0, len(words) - size)
    phrase = words[start : start + size]
    return " ".join(words[: start + size] + phrase + words[start + size :])


def truncation(response: str, context: tuple[Turn, ...], rng: random.Random, pool: Sequence[str]) -> str | None:
    """Cut the response after a word chosen by ``rng`` between 30% and 70% of its length.

    Responses of fewer than 4 words give None (nothing to cut mid-sentence).

    Example:
        >>> import random
        >>> truncation("i have heard that the concert was great fun", (), random.Random(0), [])
        'i have heard that the concert'
    """
    words = response.split()
    if len(words) < 4:
        return None
    lo = max(1, math.ceil(0.3 * len(words)))
    hi = min(len(words) - 1, math.floor(0.7 * len(words)))
    return " ".join(words[: rng.randint(lo, max(lo, hi))])


def _latin(word: str) -> bool:
    return all(unicodedata.name(ch, "").startswith(("LATIN", "COMBINING")) for ch in word)


def _topic_words(context: tuple[Turn, ...]) -> list[str]:
    """Return the context's content words: whole words of Latin letters ("münchen", not "nchen"), in order."""
    seen: dict[str, None] = {}
    for turn in context:
        for w in _TOKEN_RE.findall(turn.text.lower()):
            if len(w) > 3 and w not in _STOPWORDS and _latin(w):
                seen.setdefault(w, None)
    return list(seen)


def too_long(response: str, context: tuple[Turn, ...], rng: random.Random, pool: Sequence[str]) -> str | None:
    """Append on-topic filler built from the context's content words (the ComperDial "too long" trait).

    The filler adds at least 40 words and at least twice the response's length (an empty or blank response
    becomes the filler alone); a context without content words gives None.

    Example:
        >>> import random
        >>> from dialeval.schema import Turn
        >>> ctx = (Turn(speaker="A", text="I went to a jazz concert downtown"),)
        >>> out = too_long("nice", ctx, random.Random(0), [])
        >>> out.startswith("nice ") and len(out.split()) >= 41 and "jazz" in out
        True
    """
    topic = _topic_words(context)
    if not topic:
        return None
    templates = (
        "and speaking of {a} , i think {b} is also worth mentioning .",
        "i have been thinking a lot about {a} and {b} lately .",
        "as for {a} , there is so much more to say about {b} .",
        "{a} reminds me of {b} , which is interesting too .",
    )
    target = max(40, 2 * len(response.split()))
    filler: list[str] = []
    while len(filler) < target:
        sentence = rng.choice(templates).format(a=rng.choice(topic), b=rng.choice(topic))
        filler.extend(sentence.split())
    return " ".join([response.rstrip(), *filler] if response.strip() else filler)


#: Response perturbations by name, in table order.
PERTURBATIONS: dict[str, Perturbation] = {
    "negation": negation,
    "number-swap": number_swap,
    "date-swap": date_swap,
    "entity-swap": entity_swap,
    "other-context": other_context,
    "repetition": repetition,
    "truncation": truncation,
    "too-long": too_long,
}

#: Context perturbations by name, in table order (the response is kept).
CONTEXT_PERTURBATIONS: dict[str, ContextPerturbation] = {
    "speaker-swap": speaker_swap,
    "sentiment-tail-positive": sentiment_tail_positive,
    "sentiment-tail-negative": sentiment_tail_negative,
}

#: Every perturbation name, response perturbations first.
ALL_PERTURBATIONS: tuple[str, ...] = (*PERTURBATIONS, *CONTEXT_PERTURBATIONS)


def apply_perturbation(
    name: str, response: str, context: tuple[Turn, ...], rng: random.Random, pool: Sequence[str]
) -> Perturbed | None:
    """Run the perturbation ``name`` and return what it produced, or None if it did not apply or changed nothing.

    A response perturbation's string becomes ``Perturbed(new_response, context)``.

    Example:
        >>> import random
        >>> apply_perturbation("truncation", "one two three four five", (), random.Random(0), [])
        Perturbed(response='one two three', context=(), after=())
        >>> apply_perturbation("negation", "hello", (), random.Random(0), []) is None
        True
    """
    if name in CONTEXT_PERTURBATIONS:
        out = CONTEXT_PERTURBATIONS[name](response, context, rng, pool)
    elif name in PERTURBATIONS:
        text = PERTURBATIONS[name](response, context, rng, pool)
        out = None if text is None else Perturbed(response=text, context=context)
    else:
        raise KeyError(name)
    if out is None or out == Perturbed(response=response, context=context):
        return None
    return out
