"""Sentence-level BLEU-1..4 with NLTK's ``sentence_bleu`` (cumulative n-gram weights).

BLEU-n uses the uniform weights ``(1/n,) * n``, i.e. the geometric mean of the
1..n-gram precisions times the brevity penalty, against all references at once
(clipped counts take the maximum over references, the closest reference length
sets the brevity penalty), exactly as NLTK defines it.

Smoothing: the default is NLTK's ``method1`` (add epsilon=0.1 to zero n-gram
match counts), the usual choice for short dialogue responses. ``comperdial`` is
the setting of ComperDial (Wakaki et al. 2024, App. C.2): ``method1`` with
``SmoothingFunction(epsilon=1e-12)``, i.e. nearly unsmoothed. ``none`` (NLTK's
``method0``) and ``method1``..``method5`` and ``method7`` are selectable too; NLTK's ``method6``
is not: it reads the trigram precision, so BLEU-1 and BLEU-2 cannot be computed with it.

Example:
    >>> s = sentence_bleu(["the cat sat on the mat"], [["the cat sat on the mat"]])
    >>> [round(float(s[k][0]), 4) for k in ("bleu1", "bleu4")]
    [1.0, 1.0]
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from dialeval.metrics.functional._batch import (
    FloatArray,
    check_pairs,
    dedupe,
    distinct_texts,
    scatter,
    tokenizer,
)

#: NLTK's method6 is left out: it reads p_3 (``p_n[2]``), an IndexError for BLEU-1 and BLEU-2.
SMOOTHING_METHODS = ("none", "comperdial", *(f"method{i}" for i in (0, 1, 2, 3, 4, 5, 7)))
#: Methods whose smoothed p_k depends only on p_1..p_k, so BLEU-1..4 can share one call.
_PREFIX_SAFE = {"none", "comperdial", "method0", "method1", "method2", "method3", "method4"}
#: ComperDial App. C.2: ``nltkbleu.SmoothingFunction(epsilon=1e-12).method1``.
COMPERDIAL_EPSILON = 1e-12
BLEU_ORDERS = (1, 2, 3, 4)


def _smoothing_function(name: str) -> Any:
    if name not in SMOOTHING_METHODS:
        raise ValueError(f'unknown smoothing "{name}"; choose one of {", ".join(SMOOTHING_METHODS)}')
    from nltk.translate.bleu_score import SmoothingFunction

    if name == "comperdial":
        return SmoothingFunction(epsilon=COMPERDIAL_EPSILON).method1
    return getattr(SmoothingFunction(), "method0" if name == "none" else name)


def sentence_bleu(
    hyps: Sequence[str],
    refs: Sequence[Sequence[str]],
    *,
    smoothing: str = "method1",
    tokenizer_name: str = "nltk-word",
    lowercase: bool = True,
) -> dict[str, FloatArray]:
    """Return ``{"bleu1": ..., "bleu4": ...}``, one NLTK sentence BLEU per hypothesis.

    Args:
        hyps: Hypotheses (responses).
        refs: One or more references per hypothesis.
        smoothing: ``none``, ``comperdial`` (method1 with epsilon 1e-12) or NLTK ``method1``..``method5``, ``method7``.
        tokenizer_name: See :data:`dialeval.metrics.functional._batch.TOKENIZERS`.
        lowercase: Lowercase before tokenizing.
    """
    import warnings

    from nltk.translate.bleu_score import sentence_bleu as nltk_sentence_bleu

    check_pairs(hyps, refs)
    smooth = _smoothing_function(smoothing)
    tok = tokenizer(tokenizer_name, lowercase)
    pairs, inverse = dedupe(hyps, refs)
    tokens = {t: tok(t) for t in distinct_texts(pairs)}
    weights = [(1.0 / n,) * n for n in BLEU_ORDERS]
    per_order: list[list[float]] = [[] for _ in BLEU_ORDERS]
    with warnings.catch_warnings():
        # method0 warns about zero counts on every short response; the value is still defined.
        warnings.simplefilter("ignore", UserWarning)
        for hyp, item_refs in pairs:
            ref_tokens = [tokens[r] for r in item_refs]
            if smoothing in _PREFIX_SAFE:
                scores = nltk_sentence_bleu(ref_tokens, tokens[hyp], weights, smoothing_function=smooth)
            else:
                scores = [
                    nltk_sentence_bleu(ref_tokens, tokens[hyp], w, smoothing_function=smooth)
                    for w in weights
                ]
            for column, value in zip(per_order, scores, strict=True):
                column.append(float(value))
    return {f"bleu{n}": scatter(col, inverse) for n, col in zip(BLEU_ORDERS, per_order, strict=True)}
