"""The lexical metric families: thin registered objects over :mod:`dialeval.metrics.functional`.

Families and outputs: ``bleu`` (bleu1..bleu4, NLTK), ``sacrebleu``, ``chrf``
(chrfpp), ``rouge`` (rouge1, rouge2, rougeL), ``meteor``, ``f1`` (word_f1),
``distinct`` (distinct1, distinct2) and ``length``. Importing this module is
cheap: sacrebleu, rouge-score and NLTK are imported when a metric computes.

Example:
    >>> from dialeval.metrics.base import MetricInput
    >>> items = [MetricInput(response="the cat sat", references=("a cat sat",))]
    >>> WordF1().compute(items)
    {'word_f1': [1.0]}
    >>> Rouge().signature.split("|")[:3]
    ['rouge', 'use_stemmer:no', 'multiref:max']
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from functools import cache
from importlib.metadata import version
from typing import Any, ClassVar

import numpy as np

from dialeval.errors import InputError
from dialeval.metrics import functional as F
from dialeval.metrics.base import Metric, MetricInput, MetricValues, NoConfig, register_metric
from dialeval.metrics.functional._batch import TOKENIZERS
from dialeval.metrics.functional.bleu import SMOOTHING_METHODS
from dialeval.metrics.functional.rouge import has_tokens, rouge_scorer
from dialeval.metrics.functional.sacre import (
    bleu_scorer,
    sacrebleu_signature,
    sacrebleu_smooth_methods,
    sacrebleu_tokenizers,
)
from dialeval.metrics.rules import rule
from dialeval.metrics.wordnet import wordnet_fingerprint, wordnet_unavailable


def _split(items: Sequence[MetricInput]) -> tuple[list[str], list[tuple[str, ...]]]:
    return [i.response for i in items], [i.references for i in items]


def _columns(values: Mapping[str, Any]) -> dict[str, list[float | None]]:
    return {k: v.tolist() if isinstance(v, np.ndarray) else list(v) for k, v in values.items()}


@cache
def _lib(name: str) -> str:
    return f"{name}=={version(name)}"


@dataclass(frozen=True)
class BleuConfig:
    """NLTK BLEU-n settings (see :mod:`dialeval.metrics.functional.bleu`)."""

    smoothing: str = field(default="method1", metadata=rule(choices=SMOOTHING_METHODS))
    tokenizer: str = field(default="nltk-word", metadata=rule(choices=TOKENIZERS))
    lowercase: bool = True


@register_metric
class Bleu(Metric):
    """Sentence BLEU-1..4 (cumulative weights) with NLTK, all references at once."""

    name = "bleu"
    outputs = ("bleu1", "bleu2", "bleu3", "bleu4")
    units = dict.fromkeys(outputs, "0-1")
    Config = BleuConfig
    needs_references = True

    def signature_extra(self) -> Mapping[str, Any]:
        """Weights and the NLTK version."""
        return {"weights": "cumulative-uniform", "lib": _lib("nltk")}

    def compute(self, items: Sequence[MetricInput]) -> MetricValues:
        """Return BLEU-1..4 per item."""
        c = self.config
        return _columns(F.sentence_bleu(*_split(items), smoothing=c.smoothing,
                                        tokenizer_name=c.tokenizer, lowercase=c.lowercase))


@dataclass(frozen=True)
class SacreBleuConfig:
    """sacrebleu BLEU settings; sentence scores use ``effective_order=True``.

    ``tokenize`` and ``smooth_method`` may be what the installed sacrebleu offers (read from it).
    """

    tokenize: str = field(default="13a", metadata=rule(choices=sacrebleu_tokenizers))
    lowercase: bool = False
    smooth_method: str = field(default="exp", metadata=rule(choices=sacrebleu_smooth_methods))


@register_metric
class SacreBleu(Metric):
    """Sentence SacreBLEU (0-100); corpus BLEU is :func:`dialeval.metrics.functional.corpus_sacrebleu`."""

    name = "sacrebleu"
    outputs = ("sacrebleu",)
    units: ClassVar[Mapping[str, str]] = {"sacrebleu": "BLEU, 0-100"}
    Config = SacreBleuConfig
    needs_references = True
    config: SacreBleuConfig

    def __init__(self, **params: Any) -> None:
        """Check the parameters, and that sacrebleu can build the tokenizer here (some need extra packages).

        Raises:
            InputError: A bad parameter, or a tokenizer that cannot run here (with sacrebleu's install hint).
        """
        super().__init__(**params)
        c = self.config
        try:
            bleu_scorer(c.tokenize, c.lowercase, c.smooth_method, True)
        except (ImportError, RuntimeError, OSError) as exc:
            why = " ".join(str(exc).split())
            raise InputError(f"{self.name}.tokenize={c.tokenize!r}: cannot run here: {why}", field="--param") from None

    def signature_extra(self) -> Mapping[str, Any]:
        """Sacrebleu's own signature, its ``|`` turned into ``,``."""
        sig = sacrebleu_signature("bleu", effective_order=True, **asdict(self.config))
        return {"sacrebleu": sig.replace("|", ",")}

    def compute(self, items: Sequence[MetricInput]) -> MetricValues:
        """Return sentence BLEU per item."""
        return _columns({"sacrebleu": F.sentence_sacrebleu(*_split(items), **asdict(self.config))})


@dataclass(frozen=True)
class ChrfConfig:
    """chrF settings; ``word_order=2`` makes it chrF++ (0: plain chrF); ``beta=0`` weighs precision only."""

    # sacrebleu counts every order up to these: char_order=10**20 never ended
    char_order: int = field(default=6, metadata=rule(minimum=1, maximum=100))
    word_order: int = field(default=2, metadata=rule(minimum=0, maximum=100, note="0 = chrF without word n-grams"))
    beta: int = field(default=2, metadata=rule(minimum=0))
    lowercase: bool = False


@register_metric
class Chrf(Metric):
    """Sentence chrF++ (0-100) via sacrebleu; the best reference counts."""

    name = "chrf"
    outputs = ("chrfpp",)
    units: ClassVar[Mapping[str, str]] = {"chrfpp": "chrF++, 0-100"}
    Config = ChrfConfig
    needs_references = True

    def signature_extra(self) -> Mapping[str, Any]:
        """Sacrebleu's own chrF signature, its ``|`` turned into ``,``."""
        return {"sacrebleu": sacrebleu_signature("chrf", **asdict(self.config)).replace("|", ",")}

    def compute(self, items: Sequence[MetricInput]) -> MetricValues:
        """Return chrF++ per item."""
        return _columns({"chrfpp": F.sentence_chrf(*_split(items), **asdict(self.config))})


@dataclass(frozen=True)
class RougeConfig:
    """rouge-score settings (its default tokenizer; Porter stemming off by default)."""

    use_stemmer: bool = False


@register_metric
class Rouge(Metric):
    """ROUGE-1/2/L F-measure of ASCII words (rouge-score's tokenizer); with several references, the best per type.

    rouge-score's tokenizer keeps ASCII letters and digits only: a response, or every reference, written in
    another script gets no value (:meth:`lacks` says why), where it scored 0.0.
    """

    name = "rouge"
    outputs = ("rouge1", "rouge2", "rougeL")
    units = dict.fromkeys(outputs, "F1, 0-1")
    Config = RougeConfig
    needs_references = True

    def signature_extra(self) -> Mapping[str, Any]:
        """Multi-reference rule, the rouge-score version and that a text with no token gets no value."""
        # no_token: a response (or every reference) in a script that rouge-score's tokenizer drops scored 0.0
        return {"multiref": "max", "measure": "f", "no_token": "null", "lib": _lib("rouge-score")}

    def lacks(self, output: str, item: MetricInput) -> str | None:
        """Say so when the response, or every reference, has no token (rouge-score keeps ASCII letters and digits).

        Example:
            >>> Rouge().lacks("rouge1", MetricInput(response="привет", references=("привет",)))
            'no token in the response (rouge-score keeps ASCII letters and digits)'
        """
        tokenize = rouge_scorer(self.config.use_stemmer)._tokenizer.tokenize
        if not has_tokens(item.response, tokenize(item.response)):
            return "no token in the response (rouge-score keeps ASCII letters and digits)"
        if not any(has_tokens(r, tokenize(r)) for r in item.references):
            return "no token in any reference (rouge-score keeps ASCII letters and digits)"
        return None

    def compute(self, items: Sequence[MetricInput]) -> MetricValues:
        """Return ROUGE F-measures per item (None where :meth:`lacks` says why)."""
        values = F.sentence_rouge(*_split(items), use_stemmer=self.config.use_stemmer)
        return {k: [None if math.isnan(v) else v for v in column.tolist()] for k, column in values.items()}


@dataclass(frozen=True)
class MeteorConfig:
    """NLTK METEOR parameters and the word tokenizer.

    ``alpha`` weighs precision against recall and ``gamma`` is the largest fragmentation penalty,
    both in [0, 1] (a ``gamma`` above 1 makes scores negative); ``beta`` shapes the penalty.
    """

    alpha: float = field(default=0.9, metadata=rule(minimum=0, maximum=1))
    beta: float = field(default=3.0, metadata=rule(minimum=0))
    gamma: float = field(default=0.5, metadata=rule(minimum=0, maximum=1))
    tokenizer: str = field(default="nltk-word", metadata=rule(choices=TOKENIZERS))


@register_metric
class Meteor(Metric):
    """NLTK METEOR with WordNet 3.0 synonyms (Debian packages); the best reference counts."""

    name = "meteor"
    outputs = ("meteor",)
    units: ClassVar[Mapping[str, str]] = {"meteor": "0-1"}
    Config = MeteorConfig
    needs_references = True

    @classmethod
    def unavailable_reason(cls, params: Mapping[str, Any] | None = None) -> str | None:
        """Say how to install WordNet when its files are missing."""
        return wordnet_unavailable()

    def signature_extra(self) -> Mapping[str, Any]:
        """WordNet version and file hash, and the NLTK version."""
        return {"wordnet": "3.0", "wordnet_sha256": wordnet_fingerprint(), "multiref": "max",
                "lib": _lib("nltk")}

    def compute(self, items: Sequence[MetricInput]) -> MetricValues:
        """Return METEOR per item (raises with the apt-get command if WordNet is missing)."""
        c = self.config
        return _columns({"meteor": F.sentence_meteor(*_split(items), alpha=c.alpha, beta=c.beta,
                                            gamma=c.gamma, tokenizer_name=c.tokenizer)})


@register_metric
class WordF1(Metric):
    """ParlAI-style word-overlap F1, the best reference counts."""

    name = "f1"
    outputs = ("word_f1",)
    units: ClassVar[Mapping[str, str]] = {"word_f1": "0-1"}
    needs_references = True

    def signature_extra(self) -> Mapping[str, Any]:
        """Normalisation and multi-reference rule."""
        return {"normalize": "lower,punct,articles", "tok": "whitespace", "multiref": "max"}

    def compute(self, items: Sequence[MetricInput]) -> MetricValues:
        """Return word F1 per item."""
        return _columns({"word_f1": F.word_f1(*_split(items))})


@register_metric
class Distinct(Metric):
    """Per-response distinct-1/2 over whitespace tokens (reference-free)."""

    name = "distinct"
    outputs = ("distinct1", "distinct2")
    units = dict.fromkeys(outputs, "distinct/total, 0-1")
    Config = NoConfig

    def signature_extra(self) -> Mapping[str, Any]:
        """Tokenization and case handling."""
        return {"tok": "whitespace", "case": "mixed", "empty": 0}

    def compute(self, items: Sequence[MetricInput]) -> MetricValues:
        """Return distinct-1 and distinct-2 per item."""
        values = F.distinct_orders([i.response for i in items], (1, 2))
        return _columns({"distinct1": values[1], "distinct2": values[2]})


@register_metric
class Length(Metric):
    """Response length in whitespace tokens (reference-free)."""

    name = "length"
    outputs = ("length",)
    units: ClassVar[Mapping[str, str]] = {"length": "whitespace tokens"}

    def signature_extra(self) -> Mapping[str, Any]:
        """Name the unit."""
        return {"unit": "whitespace-tokens"}

    def compute(self, items: Sequence[MetricInput]) -> MetricValues:
        """Return the length per item."""
        return _columns({"length": F.response_length([i.response for i in items])})
