"""ROUGE-1/2/L F-measure with Google's ``rouge-score``, maximised over references.

Multiple references: for each ROUGE type the best F-measure over the
references counts, which is what ``RougeScorer.score_multi`` returns. Each
distinct text is tokenized (and its n-grams counted) once per batch with the
scorer's own tokenizer, then scored with rouge-score's own n-gram and LCS
routines.

rouge-score's tokenizer keeps ASCII letters and digits only, so a text in another script has no token: such a
response, or an item whose every reference is such a text, gets NaN (it was 0.0, also for two identical texts).
A reference with no token is left out beside others; an empty response scores 0.0 as rouge-score gives it.

Example:
    >>> s = sentence_rouge(["the cat sat"], [["a dog ran", "the cat sat down"]])
    >>> [round(float(s[k][0]), 4) for k in ("rouge1", "rouge2", "rougeL")]
    [0.8571, 0.8, 0.8571]
    >>> sentence_rouge(["привет как дела", "the cat"], [["привет как дела"], ["привет", "the cat"]])["rouge1"]
    array([nan,  1.])
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from functools import cache
from typing import Any

from dialeval.metrics.functional._batch import FloatArray, check_pairs, dedupe, distinct_texts, scatter

ROUGE_TYPES = ("rouge1", "rouge2", "rougeL")


@cache
def rouge_scorer(use_stemmer: bool = False) -> Any:
    """Return a ``rouge_score.rouge_scorer.RougeScorer`` for ROUGE-1/2/L, built once."""
    from rouge_score.rouge_scorer import RougeScorer

    return RougeScorer(list(ROUGE_TYPES), use_stemmer=use_stemmer)


def has_tokens(text: str, tokens: Sequence[str]) -> bool:
    """Whether the tokenizer kept a token of ``text``, or ``text`` is empty (an empty text is no other script).

    Example:
        >>> has_tokens("", []), has_tokens("こんにちは", []), has_tokens("hi", ["hi"])
        (True, False, True)
    """
    return bool(tokens) or not text.strip()


def sentence_rouge(
    hyps: Sequence[str], refs: Sequence[Sequence[str]], *, use_stemmer: bool = False
) -> dict[str, FloatArray]:
    """Return ``{"rouge1", "rouge2", "rougeL"}`` F-measures, best reference per type."""
    from rouge_score.rouge_scorer import _create_ngrams, _score_lcs, _score_ngrams

    check_pairs(hyps, refs)
    tokenize = rouge_scorer(use_stemmer)._tokenizer.tokenize
    pairs, inverse = dedupe(hyps, refs)
    prepared: dict[str, tuple[list[str], Counter[Any], Counter[Any]]] = {}
    for text in distinct_texts(pairs):
        tokens = tokenize(text)
        prepared[text] = (tokens, _create_ngrams(tokens, 1), _create_ngrams(tokens, 2))
    columns: dict[str, list[float]] = {k: [] for k in ROUGE_TYPES}
    for hyp, item_refs in pairs:
        h_tokens, h_uni, h_bi = prepared[hyp]
        usable = [r for r in item_refs if has_tokens(r, prepared[r][0])]
        if not has_tokens(hyp, h_tokens) or not usable:
            for k in ROUGE_TYPES:
                columns[k].append(math.nan)
            continue
        best = dict.fromkeys(ROUGE_TYPES, -1.0)
        for ref in usable:
            r_tokens, r_uni, r_bi = prepared[ref]
            found = {
                "rouge1": _score_ngrams(r_uni, h_uni).fmeasure,
                "rouge2": _score_ngrams(r_bi, h_bi).fmeasure,
                "rougeL": _score_lcs(r_tokens, h_tokens).fmeasure,
            }
            for k, v in found.items():
                best[k] = max(best[k], float(v))
        for k in ROUGE_TYPES:
            columns[k].append(best[k])
    return {k: scatter(v, inverse) for k, v in columns.items()}
