"""SacreBLEU and chrF++ from sacrebleu's own sufficient statistics.

Each distinct reference set is tokenized and counted once, each distinct
hypothesis once, and each distinct (hypothesis, references) pair scored once,
with sacrebleu's own ``Metric`` steps (``_preprocess_segment``,
``_extract_reference_info``, ``_compute_segment_statistics``,
``_compute_score_from_stats``): the same code ``sentence_bleu``/``corpus_bleu``
run, without re-doing the reference side for every hypothesis. Sentence scores
are on sacrebleu's 0-100 scale.

Example:
    >>> hyps = ["the cat sat on the mat", "a dog"]
    >>> refs = [["the cat sat on the mat"], ["the dog barked", "a dog barked"]]
    >>> [round(float(x), 2) for x in sentence_sacrebleu(hyps, refs)]
    [100.0, 60.65]
    >>> round(corpus_sacrebleu(hyps, refs), 2)
    88.25
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from typing import Any

import numpy as np
from numpy.typing import NDArray

from dialeval.metrics.functional._batch import FloatArray, check_pairs, dedupe, scatter


@cache
def bleu_scorer(tokenize: str = "13a", lowercase: bool = False, smooth_method: str = "exp",
                effective_order: bool = True) -> Any:
    """Return a ``sacrebleu.metrics.BLEU`` built once per configuration."""
    from sacrebleu.metrics.bleu import BLEU

    return BLEU(tokenize=tokenize, lowercase=lowercase, smooth_method=smooth_method,
                effective_order=effective_order)


@cache
def chrf_scorer(char_order: int = 6, word_order: int = 2, beta: int = 2, lowercase: bool = False) -> Any:
    """Return a ``sacrebleu.metrics.CHRF`` built once per configuration."""
    from sacrebleu.metrics.chrf import CHRF

    return CHRF(char_order=char_order, word_order=word_order, beta=beta, lowercase=lowercase)


def segment_statistics(scorer: Any, hyps: Sequence[str], refs: Sequence[Sequence[str]]) -> NDArray[np.int64]:
    """Return sacrebleu's per-segment statistics, one row per hypothesis.

    Args:
        scorer: A ``sacrebleu.metrics.BLEU`` or ``CHRF`` object.
        hyps: Hypotheses.
        refs: One or more references per hypothesis.
    """
    check_pairs(hyps, refs)
    pairs, inverse = dedupe(hyps, refs)
    hyp_cache: dict[str, str] = {}
    ref_cache: dict[tuple[str, ...], Any] = {}
    rows: list[list[int]] = []
    for hyp, item_refs in pairs:
        if (pre := hyp_cache.get(hyp)) is None:
            pre = hyp_cache[hyp] = scorer._preprocess_segment(hyp)
        if (info := ref_cache.get(item_refs)) is None:
            info = ref_cache[item_refs] = scorer._extract_reference_info(
                [scorer._preprocess_segment(r) for r in item_refs]
            )
        rows.append(scorer._compute_segment_statistics(pre, info))
    if not rows:
        return np.zeros((0, 0), dtype=np.int64)
    return np.asarray(rows, dtype=np.int64)[np.asarray(inverse, dtype=np.intp)]


def _sentence_scores(scorer: Any, stats: NDArray[np.int64]) -> FloatArray:
    distinct, inverse = np.unique(stats, axis=0, return_inverse=True) if len(stats) else (stats, [])
    values = [float(scorer._compute_score_from_stats(row.tolist()).score) for row in distinct]
    return scatter(values, np.asarray(inverse).reshape(-1).tolist())


def sentence_sacrebleu(
    hyps: Sequence[str],
    refs: Sequence[Sequence[str]],
    *,
    tokenize: str = "13a",
    lowercase: bool = False,
    smooth_method: str = "exp",
) -> FloatArray:
    """Sentence BLEU per hypothesis, as ``sacrebleu.sentence_bleu`` (``effective_order=True``)."""
    scorer = bleu_scorer(tokenize, lowercase, smooth_method, True)
    return _sentence_scores(scorer, segment_statistics(scorer, hyps, refs))


def corpus_sacrebleu_from_stats(
    stats: NDArray[np.int64], *, tokenize: str = "13a", lowercase: bool = False, smooth_method: str = "exp"
) -> float:
    """Corpus BLEU from summed segment statistics, as ``sacrebleu.corpus_bleu`` computes it."""
    scorer = bleu_scorer(tokenize, lowercase, smooth_method, False)
    return float(scorer._compute_score_from_stats(stats.sum(axis=0).tolist()).score)


def corpus_sacrebleu(
    hyps: Sequence[str],
    refs: Sequence[Sequence[str]],
    *,
    tokenize: str = "13a",
    lowercase: bool = False,
    smooth_method: str = "exp",
) -> float:
    """Corpus BLEU over all hypotheses, equal to ``sacrebleu.corpus_bleu`` with per-item references."""
    scorer = bleu_scorer(tokenize, lowercase, smooth_method, False)
    stats = segment_statistics(scorer, hyps, refs)
    if not len(stats):
        raise ValueError("corpus BLEU needs at least one hypothesis")
    return corpus_sacrebleu_from_stats(stats, tokenize=tokenize, lowercase=lowercase, smooth_method=smooth_method)


def sentence_chrf(
    hyps: Sequence[str],
    refs: Sequence[Sequence[str]],
    *,
    char_order: int = 6,
    word_order: int = 2,
    beta: int = 2,
    lowercase: bool = False,
) -> FloatArray:
    """Sentence chrF (chrF++ with the default ``word_order=2``), as ``sacrebleu.sentence_chrf``."""
    scorer = chrf_scorer(char_order, word_order, beta, lowercase)
    return _sentence_scores(scorer, segment_statistics(scorer, hyps, refs))


def sacrebleu_tokenizers() -> tuple[str, ...]:
    """Return the tokenizers the installed sacrebleu offers for BLEU (its ``BLEU.TOKENIZERS``).

    Example:
        >>> "13a" in sacrebleu_tokenizers()
        True
    """
    from sacrebleu.metrics.bleu import BLEU

    return tuple(BLEU.TOKENIZERS)


def sacrebleu_smooth_methods() -> tuple[str, ...]:
    """Return the BLEU smoothing methods the installed sacrebleu offers (its ``BLEU.SMOOTH_DEFAULTS``).

    Example:
        >>> "exp" in sacrebleu_smooth_methods()
        True
    """
    from sacrebleu.metrics.bleu import BLEU

    return tuple(BLEU.SMOOTH_DEFAULTS)


def sacrebleu_signature(metric: str, **params: Any) -> str:
    """Return sacrebleu's own signature for ``metric`` ("bleu" or "chrf") with ``params``.

    The number of references varies per item here, so it reads ``nrefs:var``.

    Example:
        >>> sacrebleu_signature("bleu", tokenize="13a", effective_order=True).split("|")[:3]
        ['nrefs:var', 'case:mixed', 'eff:yes']
    """
    from sacrebleu.metrics.bleu import BLEU
    from sacrebleu.metrics.chrf import CHRF

    scorer = BLEU(**params) if metric == "bleu" else CHRF(**params)
    scorer.num_refs = -1
    return str(scorer.get_signature())
