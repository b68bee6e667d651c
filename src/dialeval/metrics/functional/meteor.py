"""METEOR with NLTK's ``meteor_score`` and WordNet 3.0 synonyms.

Multiple references: NLTK scores the hypothesis against each reference and
keeps the best. Texts are tokenized once per batch (the same tokenizers as
BLEU; NLTK lowercases inside). The WordNet lookups and Porter stems NLTK asks
for are memoised per word, which changes nothing in the result: both are pure
functions of the word.

Example:
    >>> round(float(sentence_meteor(["he is fast"], [["he is quick"]])[0]), 4)
    0.9815
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache, lru_cache
from typing import Any

from dialeval.metrics.functional._batch import (
    FloatArray,
    check_pairs,
    dedupe,
    distinct_texts,
    scatter,
    tokenizer,
)


class _MemoWordNet:
    """The one WordNet method METEOR calls (``synsets``), memoised per word."""

    def __init__(self, reader: Any) -> None:
        self.synsets = lru_cache(maxsize=200_000)(reader.synsets)


class _MemoStemmer:
    """A Porter stemmer whose ``stem`` is memoised per word."""

    def __init__(self) -> None:
        from nltk.stem.porter import PorterStemmer

        self.stem = lru_cache(maxsize=200_000)(PorterStemmer().stem)


@cache
def _memo_tools(reader: Any) -> tuple[_MemoWordNet, _MemoStemmer]:
    return _MemoWordNet(reader), _MemoStemmer()


def sentence_meteor(
    hyps: Sequence[str],
    refs: Sequence[Sequence[str]],
    *,
    alpha: float = 0.9,
    beta: float = 3.0,
    gamma: float = 0.5,
    tokenizer_name: str = "nltk-word",
    wordnet: Any = None,
) -> FloatArray:
    """Return NLTK METEOR per hypothesis (best reference).

    Args:
        hyps: Hypotheses.
        refs: One or more references per hypothesis.
        alpha: NLTK's precision/recall weight.
        beta: NLTK's fragmentation penalty shape.
        gamma: NLTK's fragmentation penalty weight.
        tokenizer_name: See :data:`dialeval.metrics.functional._batch.TOKENIZERS`.
        wordnet: A WordNet reader; default the packaged one from
            :func:`dialeval.metrics.wordnet.load_wordnet` (raises with the
            ``apt-get`` command when WordNet is not installed).
    """
    from nltk.translate.meteor_score import meteor_score

    from dialeval.metrics.wordnet import load_wordnet

    check_pairs(hyps, refs)
    memo_wordnet, stemmer = _memo_tools(wordnet if wordnet is not None else load_wordnet())
    tok = tokenizer(tokenizer_name, False)
    pairs, inverse = dedupe(hyps, refs)
    tokens = {t: tok(t) for t in distinct_texts(pairs)}
    values = [
        float(meteor_score([tokens[r] for r in item_refs], tokens[hyp], stemmer=stemmer,
                           wordnet=memo_wordnet, alpha=alpha, beta=beta, gamma=gamma))
        for hyp, item_refs in pairs
    ]
    return scatter(values, inverse)
