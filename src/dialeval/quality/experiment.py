"""Compare ``quality`` candidates leave-one-benchmark-out on the five visible rated sets (or those of ``--benchmarks``).

``python -m dialeval.quality.experiment VIEWS_DIR [-o OUT]`` computes, for the 1,960 rated
items of :data:`~dialeval.quality.ensemble.BENCHMARKS`, the frozen features of the
current heads (no LM) and the view logits of a trained cross-encoder folder
(:mod:`dialeval.quality.crosstrain`), then scores every candidate of :data:`CANDIDATES`
(fixed before any figure was seen):

* an **unfitted** candidate (one feature, or the mean of z-scored views with the
  centre and scale measured on the cross-encoder's own held-in validation examples)
  never saw a rating, so its figure on each set is already a held-out figure;
* a **ridge** candidate chooses its features by the sign rule and is fitted on four sets,
  then measured on the fifth (:func:`dialeval.quality.ensemble.leave_one_out`).

With ``--encoder-heads DIR``, frozen heads over another encoder (``dialeval quality train
--encoder``; the shipped ``quality`` uses all-mpnet-base-v2's) add their features and candidates.
With ``--lm``, SmolLM2's likelihoods join (candidate (d) of issue 19), normalised against
generic replies in the same context (:func:`lm_rows`), so that a context's difficulty,
which differs by set, drops out.

Each row: turn-level Spearman with 95% context-bootstrap CIs per held-out set, and
the mean over the five folds, by which the winner is chosen. Written to ``OUT/results.json``
and printed as Markdown. ``--never-fitted`` (default :data:`~dialeval.quality.ensemble.NEVER_FITTED`:
replies of present-day LLMs rated for appropriateness, and of ConvAI bots rated for engagement)
names sets that no fold is fitted on: each candidate is also measured there as a set it never
saw, outside the mean.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dialeval.metrics.quality import ENSEMBLE_FILES, LARGE_FEATURES, VIEW_FEATURES, _read
from dialeval.words import with_ci

if TYPE_CHECKING:
    from dialeval.quality.crosstrain import TrainConfig

#: Frozen features of the current heads (the ``quality`` ridge's candidates, LM left out).
FROZEN = ("sensible", "fluent", "sbert_context", "log_words")
#: Every feature whose direction is known before any rating (higher reads better): all but the length.
A_PRIORI = (*VIEW_FEATURES, "sensible", "fluent", "sbert_context")
#: Candidates: name -> (how, features). ``single``: one feature; ``zmean``: mean of z-scored views; ``ridge``;
#: ``signed``: a ridge whose weights keep their features' directions (:func:`dialeval.quality.ensemble.fit_ridge`).
CANDIDATES: dict[str, tuple[str, tuple[str, ...]]] = {
    "cosine (MiniLM context-response)": ("single", ("sbert_context",)),
    "frozen heads ridge (shipped recipe, no LM)": ("ridge", FROZEN),
    "view coherent": ("single", ("view_coherent",)),
    "view fluent": ("single", ("view_fluent",)),
    "view specific": ("single", ("view_specific",)),
    "views z-mean (unfitted)": ("zmean", VIEW_FEATURES),
    "views + frozen ridge": ("ridge", (*VIEW_FEATURES, *FROZEN)),
    # added 2026-11-25 (second session), before its figures were seen: no rating decides anything in it
    "a-priori z-mean (unfitted)": ("zmean", A_PRIORI),
    # added 2026-11-25 (sixth session), before their figures were seen: USL-H's hierarchy (U, S, L), unfitted
    "hierarchy U*S*L, views (unfitted)": ("hierarchy", ("view_fluent", "view_coherent", "view_specific")),
    "hierarchy U*S*L, frozen U and S (unfitted)": ("hierarchy", ("fluent", "sensible", "view_specific")),
    "views + frozen + gated specificity ridge": ("ridge", (*VIEW_FEATURES, *FROZEN, "gated_specific")),
    # added 2026-11-25 (sixth session), before their figures were seen: length relative to the conversation's
    "length fit (unfitted)": ("single", ("length_fit",)),
    "views + frozen + length ridge": ("ridge", (*VIEW_FEATURES, *FROZEN, "length_fit", "relative_length")),
}
#: SmolLM2 features: raw, and normalised against the :data:`PROBES` generic replies in the same context.
LM_RAW = ("lm_nll", "lm_context_gain")
LM_NORMALISED = ("lm_vs_generic", "lm_gain_vs_generic")
#: The candidates that need ``--lm`` (added 2026-11-25, before any of their figures was seen).
LM_CANDIDATES: dict[str, tuple[str, tuple[str, ...]]] = {
    "lm nll, negated (unfitted)": ("single", ("lm_nll_negated",)),
    "lm vs generic (unfitted)": ("single", ("lm_vs_generic",)),
    "lm gain vs generic (unfitted)": ("single", ("lm_gain_vs_generic",)),
    "frozen + lm raw ridge": ("ridge", (*FROZEN, *LM_RAW)),
    "frozen + lm normalised ridge": ("ridge", (*FROZEN, *LM_NORMALISED)),
    "views + frozen + lm normalised ridge": ("ridge", (*VIEW_FEATURES, *FROZEN, *LM_NORMALISED)),
}
#: The candidates of an extra pair head, by its feature name, that need ``--head NAME=PATH`` (added 2026-11-25,
#: sixth session, each before any of its figures was seen): ``engagement`` (:mod:`dialeval.quality.engagement`),
#: ``humanlike`` (:mod:`dialeval.quality.humanlike`).
HEAD_CANDIDATES: dict[str, dict[str, tuple[str, tuple[str, ...]]]] = {
    name: {f"{name} (unfitted)": ("single", (name,)),
           f"views + frozen + {name} ridge": ("ridge", (*VIEW_FEATURES, *FROZEN, name))}
    for name in ("engagement", "humanlike")
}  # fmt: skip
#: Features of frozen heads over another sentence encoder (``--encoder-heads DIR``): its heads' outputs and its
#: cosine (registered as ``enc_*``; named as ``quality`` computes them since it ships them).
ENCODER_FEATURES = LARGE_FEATURES
#: The candidates of ``--encoder-heads`` (added 2026-11-25, seventh session, before any of their figures was seen).
ENCODER_CANDIDATES: dict[str, tuple[str, tuple[str, ...]]] = {
    "cosine (other encoder, unfitted)": ("single", ("large_cosine",)),
    "other-encoder heads ridge": ("ridge", (*ENCODER_FEATURES, "log_words")),
    "views + other-encoder heads ridge": ("ridge", (*VIEW_FEATURES, *ENCODER_FEATURES, "log_words")),
    "views + frozen + other-encoder heads ridge": ("ridge", (*VIEW_FEATURES, *FROZEN, *ENCODER_FEATURES)),
    # added 2026-11-26 (eighth session), before their figures were seen: the shipped features, each weight held
    # to its feature's direction, and the same features unfitted (z-scored on self-supervised held-in examples)
    "views + frozen + other-encoder heads, signed ridge": ("signed", (*VIEW_FEATURES, *FROZEN, *ENCODER_FEATURES)),
    "shipped features z-mean (unfitted)": ("zmean", ("view_coherent", "sensible", "fluent", "sbert_context",
                                                     *ENCODER_FEATURES)),
}
#: Features of frozen heads over a fine-tuned encoder beside the larger one (``--tuned-heads DIR``; issue 19 (a)).
TUNED_FEATURES = ("tuned_sensible", "tuned_fluent", "tuned_cosine")
#: The candidates of ``--tuned-heads`` (added 2026-11-26, ninth session, before any of their figures was seen);
#: the ridge needs ``--encoder-heads`` too. ``quality`` runs no third encoder, so none of them can ship as it is.
TUNED_CANDIDATES: dict[str, tuple[str, tuple[str, ...]]] = {
    "cosine (tuned encoder, unfitted)": ("single", ("tuned_cosine",)),
    "shipped features + tuned heads ridge": ("ridge", (*VIEW_FEATURES, *FROZEN, *ENCODER_FEATURES, *TUNED_FEATURES)),
}
#: The larger heads' features against the :data:`PROBES` generic replies in the same context
#: (:func:`calibrated_rows`; issue 19 (d) applied to the tuned encoder).
CALIBRATED_FEATURES = ("large_sensible_vs_generic", "large_cosine_vs_generic")
#: The candidates of ``--calibrated`` (added 2026-11-26, twelfth session, before any of their figures was seen);
#: they need ``--encoder-heads``.
CALIBRATED_CANDIDATES: dict[str, tuple[str, tuple[str, ...]]] = {
    "sensible vs generic (unfitted)": ("single", ("large_sensible_vs_generic",)),
    "cosine vs generic (unfitted)": ("single", ("large_cosine_vs_generic",)),
    "views + heads vs generic ridge": ("ridge", (*VIEW_FEATURES, "large_sensible_vs_generic", "large_fluent",
                                                 "large_cosine_vs_generic", "log_words")),
    "views + heads + vs generic ridge": ("ridge", (*VIEW_FEATURES, *ENCODER_FEATURES, *CALIBRATED_FEATURES,
                                                   "log_words")),
}
#: How many generic replies the LM scores in each context: the first of ``crosstrain.GENERIC``, one per meaning.
PROBES = 8


def probes() -> list[str]:
    """Return the :data:`PROBES` generic replies (the first of the list that differ beyond punctuation).

    Example:
        >>> probes()[:4]
        ["i don't know", 'ok', 'okay', 'yes']
    """
    from dialeval.quality.crosstrain import GENERIC, generic_key

    seen: dict[str, str] = {}
    for g in GENERIC:
        seen.setdefault(generic_key(g), g)
    return list(seen.values())[:PROBES]


def lm_rows(items: Sequence[Any]) -> list[dict[str, float | None]]:
    """Return SmolLM2's features per item: raw, and normalised against generic replies in its context.

    ``lm_nll`` is the response's mean token loss given the last turn, ``lm_context_gain``
    the loss without it minus with it; ``lm_vs_generic`` is the mean loss of the
    :func:`probes` in the same context minus the response's (how much likelier than a
    generic reply), ``lm_gain_vs_generic`` the response's gain minus the probes' mean gain.
    Scored through the score cache (the 1,960 items' own likelihoods are shared with
    ``dialeval score -m likelihood``).
    """
    from dialeval.cache import ScoreCache, cache_field
    from dialeval.metrics.base import MetricInput
    from dialeval.metrics.likelihood import LikelihoodMetric
    from dialeval.paths import score_cache_path
    from dialeval.scoring import score_inputs

    def nll(v: float | None) -> float | None:
        return None if not v else 100.0 / v

    lm = LikelihoodMetric(device="cpu")
    contexts = {tuple(t.text for t in i.context): i.context for i in items}
    probe_items = [MetricInput(context=c, response=g) for c in contexts.values() for g in probes()]
    cache = ScoreCache(score_cache_path(), cache_field(None))
    own, probed = score_inputs([(lm, items), (lm, probe_items)], cache=cache)
    per_context: dict[tuple[str, ...], list[tuple[float, float]]] = {}
    for item, got in zip(probe_items, probed.values, strict=True):
        c, u = nll(got["lm_likelihood"]), nll(got["lm_likelihood_uncond"])
        if c is not None and u is not None:
            per_context.setdefault(tuple(t.text for t in item.context), []).append((c, u - c))
    rows: list[dict[str, float | None]] = []
    for item, got in zip(items, own.values, strict=True):
        c, gain = nll(got["lm_likelihood"]), got["lm_context_gain"]
        base = per_context.get(tuple(t.text for t in item.context), [])
        probe_nll = sum(p for p, _ in base) / len(base) if base else None
        probe_gain = sum(g for _, g in base) / len(base) if base else None
        rows.append({
            "lm_nll": c, "lm_nll_negated": None if c is None else -c, "lm_context_gain": gain,
            "lm_vs_generic": None if c is None or probe_nll is None else probe_nll - c,
            "lm_gain_vs_generic": None if gain is None or probe_gain is None else gain - probe_gain,
        })  # fmt: skip
    return rows


def rated_rows(views: Path, limit: int | None = None, heads: Path | None = None,
               benchmarks: Sequence[str] | None = None) -> tuple[Any, list[dict[str, float | None]]]:  # fmt: skip
    """Return the rated dataset and, per example, the frozen features and the view logits of ``views``.

    ``heads``: the frozen heads' folder (None: the shipped ones); ``benchmarks``: the rated
    sets (None: :data:`~dialeval.quality.ensemble.BENCHMARKS`).
    """
    from dialeval.metrics.quality import QualityMetric
    from dialeval.quality.ensemble import BENCHMARKS
    from dialeval.trained.experiment import load_dataset

    ds = load_dataset(list(benchmarks or BENCHMARKS), limit=limit)
    metric = QualityMetric(views=str(views), heads=str(heads or ""), device="cpu")
    rows: list[dict[str, float | None]] = []
    for start in range(0, len(ds.examples), 256):
        part = ds.examples[start : start + 256]
        feats = metric.features([e.item for e in part], views=True, large=False, frozen=True)
        rows.extend({k: v[n] for k, v in feats.items()} for n in range(len(part)))
    return ds, rows


def views_training(views: Path) -> tuple[TrainConfig, dict[str, tuple[float, float]]]:
    """Return the views' training config (their ``card.json``) and each view's centre (``heads.json``), checked.

    Read before any work: a missing or corrupt card, or a centre of another length, failed after
    minutes of features, in a traceback.

    Raises:
        InputError: No card, or one without a valid ``config``; a ``heads.json`` without one ``[mean, sd]`` pair
            (sd above 0) per view in ``centre``: naming the file and the field.
    """
    from pydantic import TypeAdapter, ValidationError

    from dialeval.errors import InputError
    from dialeval.jsonl import field_of, pydantic_message
    from dialeval.quality.crosstrain import TrainConfig

    # the card sits in the views folder (shipped), beside it (a run's model/) or two up (a run's steps/NNNNN)
    cards = [d / "card.json" for d in (views, views.parent, views.parent.parent) if (d / "card.json").exists()]
    if not cards:
        raise InputError("no card.json in the views folder or the run folder above it", path=views)
    card = _read(cards[0])[0]
    config = card.get("config") if isinstance(card, dict) else None
    if not isinstance(config, dict):
        raise InputError("no training config (an object): the held-in examples are rebuilt from it", path=cards[0],
                         field="config")  # fmt: skip
    if unknown := sorted(set(config) - set(TrainConfig.__dataclass_fields__)):  # pydantic would drop it unsaid
        said = pydantic_message("extra_forbidden", "", unknown[0], list(TrainConfig.__dataclass_fields__))
        raise InputError(said, path=cards[0], field=f"config.{unknown[0]}")
    try:  # strict, as JSON: text for a number or a number for a flag is a hand edit, not converted
        cfg = TypeAdapter(TrainConfig).validate_json(json.dumps(config), strict=True)
    except ValidationError as exc:
        where, msg = field_of(exc)
        raise InputError(msg, path=cards[0], field=f"config.{where}") from None
    check_config(cfg, cards[0])
    heads = views / "heads.json"
    head = _read(heads)[0]
    centre = head.get("centre") if isinstance(head, dict) else None
    if not (isinstance(centre, list) and len(centre) == len(VIEW_FEATURES) and all(map(_mean_sd, centre))):
        raise InputError(f"must hold one [mean, sd] pair per view ({len(VIEW_FEATURES)}: {', '.join(VIEW_FEATURES)}),"
                         f" each sd above 0; got {json.dumps(centre)[:80]}", path=heads, field="centre")  # fmt: skip
    return cfg, {name: (float(m), float(sd)) for name, (m, sd) in zip(VIEW_FEATURES, centre, strict=True)}


def check_config(cfg: TrainConfig, card: Path) -> None:
    """Refuse a views config whose numbers the training command's own options would have refused.

    Raises:
        InputError: The first such number, naming ``card`` and the field (``config.val_pairs``).

    Example:
        >>> from dialeval.quality.crosstrain import TrainConfig
        >>> check_config(TrainConfig(val_pairs=0), Path("card.json"))
        Traceback (most recent call last):
        ...
        dialeval.errors.InputError: card.json: field "config.val_pairs": must be at least 1, got 0
    """
    from dialeval.errors import InputError
    from dialeval.quality.argtypes import SEED, count, positive, share

    readers = {"seed": SEED, "steps": count(1), "batch_size": count(1), "warmup": count(0), "val_pairs": count(1),
               "per_source": count(1), "lr": positive, "head_lr": positive, "val_share": share}  # fmt: skip
    for name, read in readers.items():
        value = getattr(cfg, name)
        if value is None:  # per_source: the run's caps
            continue
        try:
            read(str(value))
        except argparse.ArgumentTypeError as exc:
            raise InputError(str(exc), path=card, field=f"config.{name}") from None


def _mean_sd(pair: Any) -> bool:
    """Whether ``pair`` is a ``[mean, sd]`` of finite numbers with the sd above 0.

    Example:
        >>> _mean_sd([0.5, 2]), _mean_sd([0.5, 0.0]), _mean_sd([0.5]), _mean_sd([True, 1.0])
        (True, False, False, False)
    """
    import math

    return (isinstance(pair, list) and len(pair) == 2 and all(type(v) in (int, float) and math.isfinite(v)
                                                              for v in pair) and pair[1] > 0)  # fmt: skip


def held_in_centre(cfg: TrainConfig, metric: Any, large: bool = False) -> dict[str, tuple[float, float]]:
    """Return each frozen feature's mean and sd over the cross-encoder's own held-in examples.

    ``large``: also those of ``metric``'s larger encoder (:data:`ENCODER_FEATURES`).

    The examples are rebuilt from the views' training config (:func:`views_training`) and the shared
    corpora: self-supervised pairs and their negatives, never a rating. The views'
    centres come from the same examples (``heads.json``), so :func:`zmean` puts every
    feature on one scale without looking at a rated set.
    """
    import statistics

    from dialeval.errors import InputError
    from dialeval.metrics.base import MetricInput
    from dialeval.paths import shared_data_dir
    from dialeval.quality.crosstrain import build_examples, draw
    from dialeval.schema import Turn

    root = shared_data_dir()
    if root is None:
        raise InputError("no shared data folder ($DIALEVAL_DATA, ../shared/data) to rebuild the held-in examples")
    _, val = build_examples(draw(root, cfg), cfg)
    items = [MetricInput(response=e.response, context=tuple(Turn(speaker="", text=t) for t in e.context)) for e in val]
    feats = metric.features(items, views=False, large=large, frozen=True)
    out = {}
    for name in ("sensible", "fluent", "sbert_context", *(ENCODER_FEATURES if large else ())):
        col = [v for v in feats[name] if v is not None]
        out[name] = (statistics.fmean(col), statistics.stdev(col))
    return out


def zmean(rows: Sequence[Mapping[str, float | None]], names: Sequence[str], centre: Mapping[str, Sequence[float]]
          ) -> list[float | None]:  # fmt: skip
    """Return the mean of the z-scored features (``centre[name] = (mean, sd)``); None where one is missing.

    Example:
        >>> zmean([{"a": 2.0, "b": 0.0}], ["a", "b"], {"a": (0.0, 2.0), "b": (1.0, 1.0)})
        [0.0]
    """
    out: list[float | None] = []
    for r in rows:
        vals = [r.get(n) for n in names]
        zs = [(v - centre[n][0]) / centre[n][1] for v, n in zip(vals, names, strict=True) if v is not None]
        out.append(sum(zs) / len(names) if len(zs) == len(names) else None)
    return out


def prob(value: float | None, centre: Sequence[float]) -> float | None:
    """Return sigmoid of the z-score of ``value`` (``centre = (mean, sd)``); None stays None.

    Example:
        >>> prob(1.0, (1.0, 2.0)), round(prob(3.0, (1.0, 2.0)), 4)
        (0.5, 0.7311)
    """
    import math

    return None if value is None else 1.0 / (1.0 + math.exp(-(value - centre[0]) / centre[1]))


def hierarchy(rows: Sequence[Mapping[str, float | None]], names: Sequence[str],
              centre: Mapping[str, Sequence[float]]) -> list[float | None]:  # fmt: skip
    """Return USL-H's hierarchical score ``(U + U*S + U*S*L) / 3`` of the features ``names = (U, S, L)``.

    Each feature is first a probability by :func:`prob` (centre and scale from self-supervised
    held-in examples, no rating): specificity counts only as far as the response is
    understandable and sensible. None where a feature is missing.

    Example:
        >>> c = {"u": (0.0, 1.0), "s": (0.0, 1.0), "l": (0.0, 1.0)}
        >>> hierarchy([{"u": 0.0, "s": 0.0, "l": 0.0}], ["u", "s", "l"], c)
        [0.2916666666666667]
    """
    out: list[float | None] = []
    for r in rows:
        u, s, spec = (prob(r.get(n), centre[n]) for n in names)
        out.append(None if u is None or s is None or spec is None else (u + u * s + u * s * spec) / 3)
    return out


def with_gated(rows: Sequence[Mapping[str, float | None]], centre: Mapping[str, Sequence[float]]
               ) -> list[dict[str, float | None]]:  # fmt: skip
    """Return the rows with ``gated_specific`` = p(coherent view) * p(specific view) (:func:`prob`).

    Example:
        >>> with_gated([{"view_coherent": 0.0, "view_specific": 0.0}],
        ...            {"view_coherent": (0.0, 1.0), "view_specific": (0.0, 1.0)})[0]["gated_specific"]
        0.25
    """
    out = []
    for r in rows:
        c = prob(r.get("view_coherent"), centre["view_coherent"])
        sp = prob(r.get("view_specific"), centre["view_specific"])
        out.append({**r, "gated_specific": None if c is None or sp is None else c * sp})
    return out


def length_features(items: Sequence[Any]) -> list[dict[str, float | None]]:
    """Return ``relative_length`` and ``length_fit`` per item (None without a context).

    ``relative_length`` = log(1 + words of the response) - log(1 + mean words of the last three
    context turns); ``length_fit`` = -abs(relative_length): 0 for a response as long as the turns before it.

    Example:
        >>> from dialeval.metrics.base import MetricInput
        >>> from dialeval.schema import Turn
        >>> item = MetricInput(response="one two three", context=(Turn(speaker="A", text="a b c"),))
        >>> length_features([item])
        [{'relative_length': 0.0, 'length_fit': -0.0}]
    """
    import math

    out: list[dict[str, float | None]] = []
    for item in items:
        turns = [len(t.text.split()) for t in item.context[-3:]]
        if not turns:
            out.append({"relative_length": None, "length_fit": None})
            continue
        rel = math.log1p(len(item.response.split())) - math.log1p(sum(turns) / len(turns))
        out.append({"relative_length": rel, "length_fit": -abs(rel)})
    return out


def run(examples: Sequence[Any], rows: Sequence[dict[str, float | None]], centre: Mapping[str, Sequence[float]],
        n_boot: int = 1000, seed: int = 0, lm: bool = False, heads: Sequence[str] = (), encoder_heads: bool = False,
        tuned: bool = False, calibrated: bool = False, never_fitted: Sequence[str] = ()
        ) -> list[dict[str, Any]]:  # fmt: skip
    """Return one result per candidate, per held-out set and the mean.

    With ``lm``, also :data:`LM_CANDIDATES`; for each name in ``heads``, also its :data:`HEAD_CANDIDATES`;
    with ``encoder_heads``, also :data:`ENCODER_CANDIDATES`; with ``tuned``, also :data:`TUNED_CANDIDATES`;
    with ``calibrated``, also :data:`CALIBRATED_CANDIDATES`. The sets of ``never_fitted`` are only ever
    held out (a ridge measured on one is fitted on all the others) and are left out of the mean and min.
    """
    from dialeval.quality.ensemble import leave_one_out
    from dialeval.trained.evaluate import correlations

    out = []
    benches = sorted({e.benchmark for e in examples})
    extra = dict(LM_CANDIDATES) if lm else {}
    if encoder_heads:
        extra |= ENCODER_CANDIDATES
    if tuned:
        extra |= TUNED_CANDIDATES
    if calibrated:
        extra |= CALIBRATED_CANDIDATES
    for name in heads:
        extra |= HEAD_CANDIDATES[name]
    for name, (how, feats) in (CANDIDATES | extra).items():
        folds: dict[str, Any] = {}
        if how in ("ridge", "signed"):
            for r in leave_one_out(examples, rows, list(feats), n_boot=n_boot, seed=seed, signed=how == "signed",
                                   never_fitted=never_fitted):  # fmt: skip
                q = r["quality"]
                folds[r["benchmark"]] = {"spearman": q["spearman"], "ci": q["spearman_ci"], "features": r["features"]}
        else:
            if how == "single":
                col = [r.get(feats[0]) for r in rows]
            else:
                col = (zmean if how == "zmean" else hierarchy)(rows, feats, centre)
            for b in benches:
                held = [i for i, e in enumerate(examples) if e.benchmark == b]
                q = correlations([examples[i] for i in held], {"x": [col[i] for i in held]}, n_boot, seed)["x"]
                folds[b] = {"spearman": q["spearman"], "ci": q["spearman_ci"], "features": list(feats)}
        fitted = [f["spearman"] for b, f in folds.items() if b not in never_fitted]
        whole = None not in fitted  # a fold without a figure (too few items, a constant column): no mean to rank by
        out.append({"candidate": name, "how": how, "folds": folds,
                    "mean": round(sum(fitted) / len(fitted), 4) if whole else None,
                    "min": round(min(fitted), 4) if whole else None, "never_fitted": list(never_fitted)})  # fmt: skip
    return out


def _cell(value: float | None, ci: Sequence[float | None] | None = None) -> str:
    """Return a figure for the table, with its CI when given; ``n/a`` where it is None.

    Example:
        >>> _cell(0.5, (0.25, 0.75)), _cell(None, None), _cell(0.5)
        ('0.500 [0.250, 0.750]', 'n/a', '0.500')
    """
    return with_ci(value, *(ci or (None, None)))


def markdown(results: Sequence[Mapping[str, Any]]) -> str:
    """Return the results as a Markdown table (one row per candidate, one column per held-out set).

    A set never fitted on is marked ``(never fitted)``; the mean and min are over the others.
    """
    never = set(results[0].get("never_fitted", ()))
    benches = sorted(results[0]["folds"], key=lambda b: (b in never, b))
    names = [f"{b} (never fitted)" if b in never else b for b in benches]
    lines = ["| candidate | " + " | ".join(names) + " | mean | min |", "|---" * (len(benches) + 3) + "|"]
    for r in results:
        cells = [_cell(r["folds"][b]["spearman"], r["folds"][b]["ci"]) for b in benches]
        lines.append(f"| {r['candidate']} | " + " | ".join(cells) + f" | {_cell(r['mean'])} | {_cell(r['min'])} |")
    return "\n".join(lines)


def rule_check(results: Sequence[Mapping[str, Any]]) -> dict[str, float | None]:
    """Return, per never-fitted set, how well the fold mean ranks the candidates as that set does.

    The Spearman, over the candidates, between the mean of the fitted folds (what decides) and
    the candidate's figure on each never-fitted set; ``"never-fitted mean"`` against the mean of
    those sets. Over the candidates with a mean and a figure on every never-fitted set; None with
    fewer than three of them or a constant column. It checks the
    decision rule, not a candidate: a rule whose order the never-seen sets do not share picks
    what does not transfer.

    Example:
        >>> r = [{"mean": m, "folds": {"x": {"spearman": s}}, "never_fitted": ["x"]}
        ...      for m, s in ((0.5, 0.2), (0.6, 0.1), (0.4, 0.0), (0.3, -0.1))]
        >>> rule_check(r)  # one swap among four: 1 - 6 * 2 / (4 * 15)
        {'x': 0.8, 'never-fitted mean': 0.8}
    """
    from scipy.stats import spearmanr

    never = [b for b in results[0].get("never_fitted", ()) if b in results[0]["folds"]] if results else []
    if not never:
        return {}
    results = [r for r in results if r["mean"] is not None and all(r["folds"][b]["spearman"] is not None
                                                                    for b in never)]  # fmt: skip
    columns = {b: [r["folds"][b]["spearman"] for r in results] for b in never}
    columns["never-fitted mean"] = [sum(r["folds"][b]["spearman"] for b in never) / len(never) for r in results]
    means = [r["mean"] for r in results]
    out: dict[str, float | None] = {}
    for name, col in columns.items():
        if len(col) < 3 or len(set(col)) < 2 or len(set(means)) < 2:
            out[name] = None
        else:
            out[name] = round(float(spearmanr(means, col)[0]), 4)
    return out


def parse_benchmarks(spec: str, minimum: int = 3, field: str = "--benchmarks") -> list[str]:
    """Return the rated sets named in a comma-separated list: catalog names, at least ``minimum``, none twice.

    Example:
        >>> parse_benchmarks("usr-tc, usr-pc,lmstyle-mturk")
        ['usr-tc', 'usr-pc', 'lmstyle-mturk']
        >>> parse_benchmarks("", minimum=0)
        []
    """
    from dialeval.data.catalog import list_benchmarks
    from dialeval.errors import InputError, ensure_unique

    names = [n.strip() for n in spec.split(",") if n.strip()]
    known = [e.name for e in list_benchmarks()]
    unknown = [n for n in names if n not in known]
    if unknown:
        raise InputError(f"unknown benchmark {unknown[0]!r}; known: {', '.join(known)}", field=field)
    ensure_unique(names, field, "benchmark")
    if len(names) < minimum:
        raise InputError(f"give at least {minimum} rated sets (got {', '.join(names) or 'none'}): each fold is "
                         "fitted on all the others", field=field)  # fmt: skip
    return names


def rated_sets(benchmarks: str, never_fitted: str) -> tuple[list[str], list[str]]:
    """Return the sets fitted on (at least three) and those only ever held out, from the two options.

    Example:
        >>> rated_sets("usr-tc,usr-pc,gupta-dailydialog", "lmstyle-mturk")
        (['usr-tc', 'usr-pc', 'gupta-dailydialog'], ['lmstyle-mturk'])
    """
    from dialeval.errors import InputError

    fitted = parse_benchmarks(benchmarks)
    never = parse_benchmarks(never_fitted, minimum=0, field="--never-fitted")
    if both := sorted(set(never) & set(fitted)):
        raise InputError(f"{both[0]} is in --benchmarks too: a set is fitted on or never fitted on, not both",
                         field="--never-fitted")  # fmt: skip
    return fitted, never


def parse_head(spec: str) -> tuple[str, Path]:
    """Return ``(name, path)`` of a ``--head NAME=PATH`` option (the file must be a head, read here: before any work).

    Raises:
        InputError: Not ``NAME=PATH``, or an unknown name, or no such file, or a file that is not a head.
    """
    from dialeval.errors import InputError
    from dialeval.metrics.quality.heads import LogisticHead

    name, sep, path = spec.partition("=")
    if not sep or name not in HEAD_CANDIDATES:
        raise InputError(f'--head takes NAME=PATH with NAME one of {", ".join(HEAD_CANDIDATES)}, not "{spec}"',
                         field="--head")  # fmt: skip
    if not Path(path).is_file():
        raise InputError("no such head file", path=path, field="--head")
    LogisticHead.from_json(_read(Path(path))[0], path)
    return name, Path(path)


def parse_heads(specs: Sequence[str]) -> dict[str, Path]:
    """Return each ``--head NAME=PATH`` option's path by name (:func:`parse_head`).

    Raises:
        InputError: A bad option (:func:`parse_head`), or a name given twice.
    """
    from dialeval.errors import InputError

    heads: dict[str, Path] = {}
    for spec in specs:
        name, path = parse_head(spec)
        if name in heads:
            raise InputError(f'head "{name}" is given twice ({heads[name]} and {path}): give each name once',
                             field="--head")  # fmt: skip
        heads[name] = path
    return heads


def pair_head_scores(head_path: Path, items: Sequence[Any], encoder: Any) -> list[float]:
    """Return a pair-layout head's output for each item (MiniLM pair features from ``encoder``)."""
    from dialeval.metrics.quality.features import embed, pair_matrix, pair_texts
    from dialeval.metrics.quality.heads import LogisticHead

    head = LogisticHead.from_json(_read(head_path)[0], head_path)
    contexts = [[t.text for t in i.context] for i in items]
    responses = [i.response for i in items]
    table = embed(encoder, pair_texts(contexts, responses))
    return [float(v) for v in head.logit(pair_matrix(contexts, responses, table))]


def encoder_heads_metric(folder: Path) -> Any:
    """Return a :class:`~dialeval.metrics.quality.QualityMetric` with ``folder``'s heads as its larger heads.

    The encoder is the one the heads' ``card.json`` names (``dialeval quality train --encoder``), or,
    where ``folder`` holds a fine-tuned encoder's ``adapter.safetensors`` and its card ``encoder.json``
    (as the shipped ``heads-large`` does), that card's base encoder with the adapter merged.

    Raises:
        InputError: No heads or no card in ``folder``, or a card without the encoder's name.
    """
    from dialeval.errors import InputError
    from dialeval.metrics.quality import QualityMetric

    for name in ("sensible.json", "fluent.json", "card.json"):
        if not (folder / name).is_file():
            raise InputError(f"no {name} in the --encoder-heads folder", path=folder, field="--encoder-heads")
    adapted = (folder / "adapter.safetensors").is_file()
    card = folder / ("encoder.json" if adapted else "card.json")
    try:
        data = json.loads(card.read_text(encoding="utf-8"))
        encoder = data["config"]["encoder"] if adapted else data["encoder"]["name"]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        field = "config.encoder" if adapted else "encoder.name"
        raise InputError(f"the card names no encoder ({field})", path=card, field="encoder") from exc
    return QualityMetric(large_heads=str(folder), large_encoder=str(encoder), device="cpu")


def encoder_rows(metric: Any, items: Sequence[Any]) -> list[dict[str, float | None]]:
    """Return :data:`ENCODER_FEATURES` per item: ``metric``'s larger heads (logits) and its larger encoder's cosine."""
    out: list[dict[str, float | None]] = []
    for start in range(0, len(items), 256):
        part = list(items[start : start + 256])
        feats = metric.features(part, views=False, large=True, frozen=False)
        out.extend({k: feats[k][n] for k in ENCODER_FEATURES} for n in range(len(part)))
    return out


def calibrated_rows(metric: Any, items: Sequence[Any], rows: Sequence[Mapping[str, float | None]]
                    ) -> list[dict[str, float | None]]:  # fmt: skip
    """Return :data:`CALIBRATED_FEATURES` per item: ``rows``' larger features minus their mean over the generic probes.

    ``rows`` hold ``large_sensible`` and ``large_cosine`` of the same items (:func:`encoder_rows`); each
    probe is scored after the item's own context, by the same heads over the same encoder.
    """
    import numpy as np

    from dialeval.metrics.quality import frozen_features

    encoder, heads = metric.large()
    gens = probes()
    out: list[dict[str, float | None]] = []
    for start in range(0, len(items), 256):
        part = list(items[start : start + 256])
        contexts = [[t.text for t in i.context] for i in part]
        sens, _, cos = frozen_features([c for c in contexts for _ in gens], [g for _ in contexts for g in gens],
                                       encoder, heads)  # fmt: skip
        sens_mean = np.asarray(sens, dtype=np.float64).reshape(len(part), len(gens)).mean(axis=1)
        for n, row in enumerate(rows[start : start + 256]):
            probe_cos = cos[n * len(gens) : (n + 1) * len(gens)]
            own_sens, own_cos = row["large_sensible"], row["large_cosine"]
            out.append({
                "large_sensible_vs_generic": None if own_sens is None else own_sens - float(sens_mean[n]),
                "large_cosine_vs_generic": None if own_cos is None or None in probe_cos
                else own_cos - sum(c for c in probe_cos if c is not None) / len(gens),
            })  # fmt: skip
    return out


def main(argv: Sequence[str] | None = None, prog: str = "python -m dialeval.quality.experiment") -> None:
    """Command line: ``VIEWS_DIR [-o OUT] [--limit N] [--lm] [--ship BUNDLED]``."""
    from dialeval.metrics.quality import QualityMetric
    from dialeval.quality.argtypes import RESAMPLES, count, folder_for
    from dialeval.quality.ensemble import BENCHMARKS, NEVER_FITTED

    ap = argparse.ArgumentParser(prog=prog)
    ap.add_argument("views", type=Path, help="a trained views folder (adapter.safetensors, heads.json with centre)")
    ap.add_argument("-o", "--out", type=folder_for("results.json"), default=Path("runs/quality-experiment"),
                    help="folder for results.json (default runs/quality-experiment)")
    ap.add_argument("--limit", type=count(1), default=None, help="only the first N contexts of each set (a quick look)")
    ap.add_argument("--n-boot", type=RESAMPLES, default=1000, help="bootstrap resamples over contexts (default 1000)")
    ap.add_argument("--ship", type=folder_for(*ENSEMBLE_FILES), default=None,
                    help="write the winner into this bundled folder")
    ap.add_argument("--lm", action="store_true", help="also the SmolLM2 candidates (likelihoods vs generic replies)")
    ap.add_argument("--head", action="append", default=[], metavar="NAME=PATH",
                    help=f"an extra pair head and its candidates, NAME one of {', '.join(HEAD_CANDIDATES)}; repeatable")
    ap.add_argument("--heads", type=Path, default=None,
                    help="frozen heads folder (sensible.json, fluent.json) instead of the shipped ones")
    ap.add_argument("--encoder-heads", type=Path, default=None, metavar="DIR",
                    help="frozen heads over another encoder (quality train --encoder): their candidates too")
    ap.add_argument("--calibrated", action="store_true",
                    help="also the --encoder-heads features against generic replies in the same context")
    ap.add_argument("--tuned-heads", type=Path, default=None, metavar="DIR",
                    help="frozen heads over a fine-tuned encoder (quality train-encoder), beside --encoder-heads")
    ap.add_argument("--benchmarks", default=",".join(BENCHMARKS),
                    help="the rated sets, comma-separated catalog names (default: the five visible ones)")
    ap.add_argument("--never-fitted", default=",".join(NEVER_FITTED), metavar="NAMES",
                    help=f"rated sets only ever held out, outside the mean (default {','.join(NEVER_FITTED)}; "
                    "'' for none)")
    args = ap.parse_args(argv)
    benchmarks, never = rated_sets(args.benchmarks, args.never_fitted)  # a bad option fails before any work
    extra_heads = parse_heads(args.head)
    other = encoder_heads_metric(args.encoder_heads) if args.encoder_heads else None
    tuned = encoder_heads_metric(args.tuned_heads) if args.tuned_heads else None
    if tuned is not None and other is None:
        from dialeval.errors import InputError

        raise InputError("--tuned-heads goes beside --encoder-heads (its ridge adds to the shipped features)",
                         field="--tuned-heads")  # fmt: skip
    if args.calibrated and other is None:
        from dialeval.errors import InputError

        raise InputError("--calibrated reads the --encoder-heads features (give both)", field="--calibrated")
    cfg, view_centre = views_training(args.views)  # a bad card or centre failed after the features, in a traceback
    t0 = time.perf_counter()
    ds, rows = rated_rows(args.views, args.limit, args.heads, benchmarks + never)
    if args.lm:
        rows = [r | extra for r, extra in zip(rows, lm_rows([e.item for e in ds.examples]), strict=True)]
    for name, path in extra_heads.items():
        col = pair_head_scores(path, [e.item for e in ds.examples], QualityMetric().sentence_encoder())
        rows = [r | {name: v} for r, v in zip(rows, col, strict=True)]
    if other is not None:
        rows = [r | e for r, e in zip(rows, encoder_rows(other, [e.item for e in ds.examples]), strict=True)]
    if other is not None and args.calibrated:
        rows = [r | e for r, e in zip(rows, calibrated_rows(other, [e.item for e in ds.examples], rows), strict=True)]
    if tuned is not None:
        rows = [r | {"tuned_" + k.removeprefix("large_"): v for k, v in e.items()}
                for r, e in zip(rows, encoder_rows(tuned, [e.item for e in ds.examples]), strict=True)]  # fmt: skip
    centre_metric = QualityMetric(heads=str(args.heads or ""), device="cpu", **(
        {"large_heads": other.config.large_heads, "large_encoder": other.config.large_encoder} if other else {}))
    centre = view_centre | held_in_centre(cfg, centre_metric, large=other is not None)
    rows = [r | extra for r, extra in zip(with_gated(rows, centre), length_features([e.item for e in ds.examples]),
                                           strict=True)]  # fmt: skip
    results = run(ds.examples, rows, centre, n_boot=args.n_boot, lm=args.lm, heads=list(extra_heads),
                  encoder_heads=other is not None, tuned=tuned is not None, calibrated=args.calibrated,
                  never_fitted=never)  # fmt: skip
    meta = {"views": str(args.views), "heads": str(args.heads or "shipped"),
            "encoder_heads": str(args.encoder_heads or ""), "tuned_heads": str(args.tuned_heads or ""),
            "benchmarks": benchmarks, "never_fitted": never, "seconds": round(time.perf_counter() - t0, 1)}
    write_report(args.out, results, args.n_boot, meta)
    if args.ship is not None:
        winner = ship(args.ship, args.views, ds, rows, results, n_boot=args.n_boot, heads=args.heads,
                      large_heads=args.encoder_heads, never_fitted=never)  # fmt: skip
        print(f"shipped {winner} into {args.ship}")


def write_report(out: Path, results: Sequence[Mapping[str, Any]], n_boot: int, meta: Mapping[str, Any]) -> None:
    """Write ``OUT/results.json`` (``meta``, the results and :func:`rule_check`) and print the table.

    Under it, a warning where ``n_boot`` resamples are too few for the CIs (as every command with CIs says).
    """
    from dialeval.atomic import atomic_write
    from dialeval.meta.caveats import rough_resamples

    check = rule_check(results)
    with atomic_write(out / "results.json") as handle:  # an interrupt or a full disk kept half a file
        handle.write(json.dumps({**meta, "results": results, "rule_check": check}, indent=1))
    print(markdown(results))
    for name, rho in check.items():
        print(f"fold mean against {name}, Spearman over the candidates with every figure: {_cell(rho)}")
    for line in rough_resamples(n_boot):
        print(line, file=sys.stderr)


def ship(bundled: Path, views: Path, ds: Any, rows: Sequence[dict[str, float | None]],
         results: Sequence[Mapping[str, Any]], n_boot: int = 1000, seed: int = 0, heads: Path | None = None,
         large_heads: Path | None = None, never_fitted: Sequence[str] = ()) -> str:  # fmt: skip
    """Write the candidate with the best mean over the folds into ``bundled`` (``views/``, ``quality/``); return it.

    Only a ridge candidate can ship (an unfitted one would need its own combination file).
    With ``heads``, those frozen heads (their JSON files and card) replace ``bundled/heads``; with
    ``large_heads``, the larger encoder's heads go to ``bundled/heads-large``.
    The ensemble is chosen (sign rule) and fitted on all the sets but ``never_fitted``; its card holds
    the leave-one-benchmark-out rows of that candidate, the whole comparison, and the views' card.
    All or nothing: the copied parts, the ensemble and its card move in together at the end
    (:func:`dialeval.atomic.staged_folder`); a stale adapter of the larger heads is removed after them.
    """
    import hashlib

    from dialeval.atomic import staged_folder
    from dialeval.errors import InputError
    from dialeval.metrics.quality import ENSEMBLE_FEATURES
    from dialeval.quality.ensemble import ALPHA, fit_all, leave_one_out
    from dialeval.trained.data import data_sha256

    ranked = [r for r in results if r["mean"] is not None]
    if not ranked:
        raise InputError("no candidate has a figure on every fold (too few items?); nothing shipped")
    best = max(ranked, key=lambda r: r["mean"])
    winner = best["candidate"]
    if winner in LM_CANDIDATES:  # quality does not compute the normalised likelihoods
        raise InputError(f'the winner "{winner}" needs SmolLM2 features that quality does not compute; nothing shipped')
    if winner in ENCODER_CANDIDATES and large_heads is None:
        raise InputError(f'the winner "{winner}" needs the larger encoder\'s heads (--encoder-heads); nothing shipped')
    if winner in TUNED_CANDIDATES:
        raise InputError(f'the winner "{winner}" needs a fine-tuned third encoder that quality does not run; '
                         "nothing shipped")
    if any(winner in c for c in HEAD_CANDIDATES.values()):
        raise InputError(f'the winner "{winner}" needs a head that quality does not run; nothing shipped')
    how, feats = (CANDIDATES | ENCODER_CANDIDATES)[winner]
    if how not in ("ridge", "signed"):
        raise InputError(f'the winner "{winner}" is not a ridge candidate; nothing shipped')
    signed = how == "signed"
    fit = [i for i, e in enumerate(ds.examples) if e.benchmark not in never_fitted]
    examples = [ds.examples[i] for i in fit]
    head, chosen = fit_all(examples, [rows[i] for i in fit], list(feats), signed=signed)
    if set(chosen) - set(ENSEMBLE_FEATURES):
        raise InputError(f'the winner "{winner}" uses {", ".join(sorted(set(chosen) - set(ENSEMBLE_FEATURES)))}, '
                         "which quality does not compute; nothing shipped")
    # the leave-one-benchmark-out rows (bootstraps: the long part) before anything is written: computed after the
    # views and ensemble.json were, an interrupt or an error there left them beside the last shipped card.json
    loo = leave_one_out(ds.examples, rows, list(feats), n_boot=n_boot, seed=seed, signed=signed,
                        never_fitted=never_fitted)  # fmt: skip
    # every copied part, the ensemble and its card are staged and moved in together at the end: an error or an
    # interrupt between the copies and the card left new views beside the old card (and a truncated adapter)
    with staged_folder(bundled) as stage:
        stale = copy_parts(bundled, stage, views, heads, large_heads if winner in ENCODER_CANDIDATES else None)

        def sha256(rel: str) -> str:  # of the file as it will be shipped (a missing one named as in bundled)
            return hashlib.sha256((stage / rel if (stage / rel).is_file() else bundled / rel).read_bytes()).hexdigest()

        ensemble = json.dumps({"features": chosen, **head.to_json()}) + "\n"  # save_head's file, features named
        card = {
            "model": "ridge, each weight held to its feature's direction" if signed else "ridge", "alpha": ALPHA,
            "target": "per-benchmark percentile rank of the human mean", "candidate": best["candidate"],
            "chosen_by": "the best mean turn Spearman over the leave-one-benchmark-out folds",
            "candidate_features": list(feats), "feature_rule": "same sign of Spearman with the target on every "
            "benchmark", "features": chosen, "benchmarks": sorted({e.benchmark for e in examples}),
            "dimensions": ds.dimensions, "never_fitted": list(never_fitted), "data_sha256": data_sha256(examples),
            "n": len(examples), "heads_card_sha256": sha256("heads/card.json"),
            **({"large_heads_card_sha256": sha256("heads-large/card.json")} if winner in ENCODER_CANDIDATES else {}),
            "views_sha256": {name: sha256(f"views/{name}") for name in shipped(bundled, stage, "views")},
            "leave_one_benchmark_out": loo, "comparison": list(results), "n_boot": n_boot, "seed": seed,
            "files": {"ensemble.json": hashlib.sha256(ensemble.encode()).hexdigest()},
        }  # fmt: skip
        (stage / "quality").mkdir()
        for name, text in (("ensemble.json", ensemble), ("card.json", json.dumps(card, indent=1) + "\n")):
            (stage / "quality" / name).write_text(text, encoding="utf-8")
    for path in stale:  # only once the new parts are in place
        path.unlink(missing_ok=True)
    return str(best["candidate"])


def shipped(bundled: Path, stage: Path, folder: str) -> list[str]:
    """Return the names of the files of ``bundled/folder`` once a staged ship has moved its ``stage`` in, sorted."""
    return sorted({p.name for base in (bundled, stage) for p in (base / folder).glob("*") if p.is_file()})


def copy_parts(bundled: Path, stage: Path, views: Path, heads: Path | None, large_heads: Path | None) -> list[Path]:
    """Copy the views folder, and the frozen heads and larger heads when given, into ``stage`` as into ``bundled``.

    ``stage`` is the :func:`dialeval.atomic.staged_folder` of ``bundled`` that moves the copies into place.
    Larger heads over a fine-tuned encoder bring its ``adapter.safetensors`` and ``encoder.json``;
    larger heads without them make a bundled pair stale: returned, to be removed once the copies are in place.
    A source that is already the target is left alone (nothing staged).
    """
    import shutil

    def copy(src: Path, rel: str) -> None:  # the shipped views may be the ones compared: nothing to copy then
        if not ((bundled / rel).exists() and (bundled / rel).resolve() == src.resolve()):
            (stage / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(src, stage / rel)

    stale = []
    for source, folder in ((heads, "heads"), (large_heads, "heads-large")):
        if source is not None:
            for name in ("sensible.json", "fluent.json", "card.json"):
                copy(source / name, f"{folder}/{name}")
    if large_heads is not None:  # a fine-tuned encoder's adapter goes with its heads; frozen heads drop a stale one
        for name in ("adapter.safetensors", "encoder.json"):
            if (large_heads / name).is_file():
                copy(large_heads / name, f"heads-large/{name}")
            elif (bundled / "heads-large" / name).exists():
                stale.append(bundled / "heads-large" / name)
    for name in ("adapter.safetensors", "heads.json"):
        copy(views / name, f"views/{name}")
    # a run's card sits above its model/ folder; a shipped views folder holds its own
    copy(views / "card.json" if (views / "card.json").exists() else views.parent / "card.json", "views/card.json")
    return stale


if __name__ == "__main__":
    from dialeval.quality.cli import module_main

    module_main("dialeval.quality.experiment")
