"""Batch plumbing shared by the lexical functions: validation, deduplication, tokenization.

Example:
    >>> keys, inverse = dedupe(["a", "b", "a"], [["x"], ["y"], ["x"]])
    >>> keys, inverse
    ([('a', ('x',)), ('b', ('y',))], [0, 1, 0])
    >>> tokenizer("whitespace", lowercase=True)("Hi THERE")
    ['hi', 'there']
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from functools import cache

import numpy as np
from numpy.typing import NDArray

from dialeval.errors import InputError

Pair = tuple[str, tuple[str, ...]]
FloatArray = NDArray[np.float64]

#: Word tokenizers for the NLTK-based metrics (BLEU-n, METEOR).
#: ``nltk-word``: NLTK's Treebank-style ``NLTKWordTokenizer`` (what ``word_tokenize``
#: applies per sentence, without the Punkt sentence splitter); ``whitespace``: ``str.split``.
TOKENIZERS = ("nltk-word", "whitespace")


def check_pairs(hyps: Sequence[str], refs: Sequence[Sequence[str]]) -> None:
    """Raise :class:`InputError` unless every hypothesis has one or more string references."""
    if len(hyps) != len(refs):
        raise InputError(f"{len(hyps)} responses but {len(refs)} reference lists", field="references")
    for i, (hyp, item_refs) in enumerate(zip(hyps, refs, strict=True)):
        if not isinstance(hyp, str):
            raise InputError(f"item {i}: response is {type(hyp).__name__}, not str", field="response")
        if isinstance(item_refs, str) or not item_refs:
            raise InputError(f"item {i}: needs a non-empty list of references", field="references")
        if not all(isinstance(r, str) for r in item_refs):
            raise InputError(f"item {i}: every reference must be a str", field="references")


def dedupe(hyps: Sequence[str], refs: Sequence[Sequence[str]]) -> tuple[list[Pair], list[int]]:
    """Return the distinct ``(hyp, refs)`` pairs and, per input, the index of its pair."""
    index: dict[Pair, int] = {}
    inverse = [index.setdefault((h, tuple(r)), len(index)) for h, r in zip(hyps, refs, strict=True)]
    return list(index), inverse


def scatter(values: Sequence[float], inverse: Sequence[int]) -> FloatArray:
    """Expand per-distinct-pair values back to one value per input item."""
    return np.asarray(values, dtype=np.float64)[np.asarray(inverse, dtype=np.intp)].reshape(-1)


def distinct_texts(pairs: Iterable[Pair]) -> set[str]:
    """Every hypothesis and reference text that occurs in ``pairs``."""
    out: set[str] = set()
    for hyp, refs in pairs:
        out.add(hyp)
        out.update(refs)
    return out


@cache
def tokenizer(name: str, lowercase: bool) -> Callable[[str], list[str]]:
    """Return the word tokenizer ``name`` (one of :data:`TOKENIZERS`), built once."""
    if name == "whitespace":
        split: Callable[[str], list[str]] = str.split
    elif name == "nltk-word":
        from nltk.tokenize import NLTKWordTokenizer

        split = NLTKWordTokenizer().tokenize
    else:
        raise ValueError(f'unknown tokenizer "{name}"; choose one of {", ".join(TOKENIZERS)}')
    if lowercase:
        return lambda text: split(text.lower())
    return split
