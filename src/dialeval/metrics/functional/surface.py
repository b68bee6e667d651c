"""Word F1 (ParlAI / ConvAI2 style), distinct-n and response length.

Word F1 normalises as ParlAI's ``normalize_answer`` does for ConvAI2: lowercase,
punctuation replaced by spaces, the articles a/an/the removed, whitespace
tokens; the F1 of the bag-of-words overlap, maximised over references.

Distinct-n (Li et al. 2016) counts whitespace tokens as they are (no
lowercasing): distinct n-grams / total n-grams. A response with no n-gram of
that order (empty, or shorter than n) gets 0.0.

Example:
    >>> [round(float(x), 4) for x in word_f1(["The cat sat."], [["a cat sat down", "dogs"]])]
    [0.8]
    >>> [float(x) for x in distinct_n(["a a b"], 1)]
    [0.6666666666666666]
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence

from dialeval.metrics.functional._batch import FloatArray, check_pairs, dedupe, scatter

_PUNCTUATION = re.compile(r"[!\"#$%&()*+,\-./:;<=>?@\[\]\\^`{|}~_']")
_ARTICLES = re.compile(r"\b(a|an|the)\b")


def normalize_words(text: str) -> list[str]:
    """Lowercase, punctuation to spaces, drop a/an/the, split on whitespace.

    Example:
        >>> normalize_words("The dog's toy, an apple!")
        ['dog', 's', 'toy', 'apple']
    """
    return _ARTICLES.sub(" ", _PUNCTUATION.sub(" ", text.lower())).split()


def _f1(pred: Counter[str], pred_len: int, gold: Counter[str], gold_len: int) -> float:
    same = sum((pred & gold).values())
    if same == 0:
        return 0.0
    precision, recall = same / pred_len, same / gold_len
    return 2 * precision * recall / (precision + recall)


def word_f1(hyps: Sequence[str], refs: Sequence[Sequence[str]]) -> FloatArray:
    """Return the best word-overlap F1 over the references, per hypothesis."""
    check_pairs(hyps, refs)
    pairs, inverse = dedupe(hyps, refs)
    bags: dict[str, tuple[Counter[str], int]] = {}

    def bag(text: str) -> tuple[Counter[str], int]:
        if (found := bags.get(text)) is None:
            words = normalize_words(text)
            found = bags[text] = (Counter(words), len(words))
        return found

    values = [max(_f1(*bag(hyp), *bag(r)) for r in item_refs) for hyp, item_refs in pairs]
    return scatter(values, inverse)


def _ngrams(tokens: list[str], n: int) -> Iterable[tuple[str, ...]]:
    return zip(*(tokens[i:] for i in range(n)), strict=False)


def distinct_n(hyps: Sequence[str], n: int) -> FloatArray:
    """Per response: distinct n-grams / total n-grams (0.0 when it has none)."""
    return distinct_orders(hyps, (n,))[n]


def distinct_orders(hyps: Sequence[str], orders: Sequence[int]) -> dict[int, FloatArray]:
    """Distinct-n for several orders at once, splitting each distinct response once.

    Example:
        >>> {n: v.tolist() for n, v in distinct_orders(["a a b"], (1, 2)).items()}
        {1: [0.6666666666666666], 2: [1.0]}
    """
    index: dict[str, int] = {}
    inverse = [index.setdefault(h, len(index)) for h in hyps]
    columns: dict[int, list[float]] = {n: [] for n in orders}
    for text in index:
        tokens = text.split()
        for n in orders:
            total = len(tokens) - n + 1
            columns[n].append(len(set(_ngrams(tokens, n))) / total if total > 0 else 0.0)
    return {n: scatter(col, inverse) for n, col in columns.items()}


def corpus_distinct_n(hyps: Sequence[str], n: int) -> float:
    """Distinct n-grams / total n-grams over all responses together (0.0 when there are none).

    Example:
        >>> corpus_distinct_n(["a b", "a c"], 1)
        0.75
    """
    seen: set[tuple[str, ...]] = set()
    total = 0
    for hyp in hyps:
        grams = list(_ngrams(hyp.split(), n))
        seen.update(grams)
        total += len(grams)
    return len(seen) / total if total else 0.0


def response_length(hyps: Sequence[str]) -> list[float]:
    """Return the number of whitespace tokens per response."""
    return [float(len(h.split())) for h in hyps]
