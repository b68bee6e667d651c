"""Pure batch functions behind the lexical metrics: lists in, numpy arrays out.

Every function validates its input, scores each distinct (response, references)
pair once and tokenizes each distinct text once per call.
"""

from dialeval.metrics.functional.bleu import sentence_bleu
from dialeval.metrics.functional.meteor import sentence_meteor
from dialeval.metrics.functional.rouge import sentence_rouge
from dialeval.metrics.functional.sacre import (
    corpus_sacrebleu,
    corpus_sacrebleu_from_stats,
    segment_statistics,
    sentence_chrf,
    sentence_sacrebleu,
)
from dialeval.metrics.functional.surface import (
    corpus_distinct_n,
    distinct_n,
    distinct_orders,
    normalize_words,
    response_length,
    word_f1,
)

__all__ = [
    "corpus_distinct_n",
    "corpus_sacrebleu",
    "corpus_sacrebleu_from_stats",
    "distinct_n",
    "distinct_orders",
    "normalize_words",
    "response_length",
    "segment_statistics",
    "sentence_bleu",
    "sentence_chrf",
    "sentence_meteor",
    "sentence_rouge",
    "sentence_sacrebleu",
    "word_f1",
]
