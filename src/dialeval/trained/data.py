"""Training examples from rated benchmarks: one per rated turn, with a per-benchmark normalised target.

Benchmarks rate different dimensions on different scales, so each benchmark
gives one dimension (:func:`dimension_for`: the overall-quality one where there
is one) and the target is normalised within its benchmark:

* ``rank`` (default): the human mean's percentile rank within its benchmark, in [0, 1]
  (ties averaged). Removes differences of scale *and* of where each benchmark's
  ratings sit, which otherwise teach a pooled model "which benchmark is this".
* ``scale``: the human mean mapped linearly from the benchmark's declared scale
  (``"1-5"``) to [0, 1]; keeps absolute levels.

Labels for the classification metrics (Acc, UAR, kappa, P/R/F1) are always three
classes of the scale-normalised human mean: low [0, 1/3), mid [1/3, 2/3), high [2/3, 1]
(DiQAD's 0-2 labels).

Example:
    >>> normalise([1.0, 3.0, 5.0, 5.0], "rank", "1-5")
    [0.0, 0.3333333333333333, 0.8333333333333334, 0.8333333333333334]
    >>> normalise([1.0, 3.0, 5.0], "scale", "1-5")
    [0.0, 0.5, 1.0]
    >>> [to_label(v) for v in (0.0, 0.5, 0.9)]
    [0, 1, 2]
"""

from __future__ import annotations

import hashlib
import json
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from dialeval.data.benchmark import OVERALL, Benchmark
from dialeval.errors import InputError
from dialeval.metrics.base import MetricInput
from dialeval.trained.features import format_input

#: The dimension of the catalog benchmarks that rate several and no overall one (the others: the overall
#: rating, :data:`~dialeval.data.benchmark.OVERALL`, else their only dimension).
DIMENSIONS: dict[str, str] = {"lmstyle-mturk": "appropriateness"}

TARGET_NORMS = ("rank", "scale")


@dataclass(frozen=True)
class Example:
    """One rated turn.

    Attributes:
        item_id: The candidate id.
        benchmark: The benchmark it comes from.
        context_id: The context (``benchmark/context_id`` is unique across benchmarks).
        dialogue_id: The dialogue.
        system: The system that wrote the response.
        domain: The dialogue's domain, else the benchmark name.
        text: The DiQAD-format input.
        item: What a metric sees of it.
        human: The human mean on the benchmark's dimension (native scale).
        target: The normalised target in [0, 1].
        label: 0/1/2 from the scale-normalised human mean.
    """

    item_id: str
    benchmark: str
    context_id: str
    dialogue_id: str
    system: str
    domain: str
    text: str
    item: MetricInput
    human: float
    target: float
    label: int

    @property
    def group_context(self) -> str:
        """The context key that splits must keep on one side."""
        return f"{self.benchmark}/{self.context_id}"


def parse_scale(scale: str) -> tuple[float, float]:
    """Return ``(low, high)`` of a scale such as ``"1-5"`` or ``"0-100"``, or of numeric labels such as ``"0|1"``.

    Example:
        >>> parse_scale("0-100"), parse_scale("0|1")
        ((0.0, 100.0), (0.0, 1.0))
    """
    from dialeval.data._common import scale_range

    found = scale_range(scale)
    if found is None and "|" in scale:  # a set of labels (PredictiveEngagement's ConvAI 0|1)
        try:
            labels = sorted(float(v) for v in scale.split("|"))
        except ValueError:
            labels = []
        found = (labels[0], labels[-1]) if labels and labels[0] < labels[-1] else None
    if found is None:
        raise InputError(f'cannot read the rating scale "{scale}" (expected LOW-HIGH with LOW below HIGH, e.g. '
                         '"1-5", or numeric labels such as "0|1")', field="scale")  # fmt: skip
    return found


def normalise(values: Sequence[float], how: str, scale: str) -> list[float]:
    """Normalise one benchmark's human means to [0, 1] (see the module docstring)."""
    if how == "scale":
        lo, hi = parse_scale(scale)
        return [min(1.0, max(0.0, (v - lo) / (hi - lo))) for v in values]
    if how == "rank":
        from scipy.stats import rankdata

        if len(values) < 2:
            return [0.5] * len(values)
        ranks = rankdata(values, method="average")
        return [float((r - 1) / (len(values) - 1)) for r in ranks]
    raise InputError(f'unknown target normalisation "{how}"; use {", ".join(TARGET_NORMS)}', field="--target-norm")


def to_label(normalised: float) -> int:
    """Return the 0/1/2 class of a value in [0, 1] (thirds)."""
    return 0 if normalised < 1 / 3 else (1 if normalised < 2 / 3 else 2)


def dimension_for(bench: Benchmark, dimension: str | None) -> str:
    """Return the dimension to use for ``bench``: the one given, else :data:`DIMENSIONS`, else the overall rating.

    The overall rating is a dimension named as :data:`~dialeval.data.benchmark.OVERALL` lists; else a benchmark
    rating one dimension gets that one.

    Raises:
        InputError: The dimension is not rated in ``bench`` (the message lists those that are).
    """
    dims = bench.dimensions()
    chosen = dimension or DIMENSIONS.get(bench.name) or next((name for name in OVERALL if name in dims), None)
    if chosen is None and len(dims) == 1:
        chosen = next(iter(dims))
    if chosen is None or chosen not in dims:
        if chosen is None:  # the user's own table, rating several dimensions
            raise InputError(f'benchmark "{bench.name}" rates several dimensions: choose one with -d or --dim '
                             f'{bench.name}=DIMENSION: {", ".join(dims)}', field="--dimension")  # fmt: skip
        raise InputError(f'benchmark "{bench.name}" has no dimension "{chosen}"; it rates: {", ".join(dims)}',
                         field="--dim" if dimension else "--dimension")  # fmt: skip
    return chosen


def examples_from(bench: Benchmark, dimension: str | None = None, target_norm: str = "rank") -> list[Example]:
    """Return one :class:`Example` per rated candidate of ``bench`` (turn-level ratings only).

    Args:
        bench: A loaded benchmark.
        dimension: The dimension to learn (default: :func:`dimension_for`).
        target_norm: ``rank`` or ``scale``.

    Raises:
        InputError: Unknown dimension or normalisation, or no turn-level numeric rating.
    """
    from dialeval.metrics.base import build_inputs

    dim = dimension_for(bench, dimension)
    scale = bench.dimensions()[dim]
    if not scale:  # the user's own table read without --scale: the three classes need the scale's bounds
        raise InputError(f'benchmark "{bench.name}" gives no rating scale for "{dim}": give it with --scale '
                         '(e.g. --scale 1-5) or scale: in the mapping', field="--scale")  # fmt: skip
    per_item: dict[str, list[float]] = defaultdict(list)
    for r in bench.ratings:
        if r.dimension != dim or r.level != "turn" or r.dont_know or r.value is None:
            continue
        try:
            per_item[r.item_id].append(float(r.value))
        except ValueError:
            continue
    cands = [c for c in bench.candidates if per_item.get(c.id)]
    if not cands:
        whole = any(r.dimension == dim and r.level == "dialogue" for r in bench.ratings)
        why = ": it is rated per dialogue, and train learns the rating of each response" if whole else ""
        raise InputError(f'benchmark "{bench.name}" has no numeric turn-level ratings of "{dim}"{why}',
                         field="--dimension")  # fmt: skip
    humans = [sum(per_item[c.id]) / len(per_item[c.id]) for c in cands]
    targets = normalise(humans, target_norm, scale)
    labels = [to_label(v) for v in normalise(humans, "scale", scale)]
    inputs = build_inputs(cands, bench.dialogues)
    out = []
    for c, item, h, t, lab in zip(cands, inputs, humans, targets, labels, strict=True):
        d = bench.dialogues[c.dialogue_id]
        out.append(
            Example(
                item_id=c.id, benchmark=bench.name, context_id=c.context_id, dialogue_id=c.dialogue_id,
                system=c.system, domain=d.domain or bench.name, text=format_input(item.context, item.response),
                item=item, human=h, target=t, label=lab,
            )
        )
    return out


def data_sha256(examples: Sequence[Example]) -> str:
    """Return the sha256 of the training data as the model saw it (ids, inputs, targets).

    Example:
        >>> data_sha256([]) == hashlib.sha256(b"").hexdigest()
        True
    """
    h = hashlib.sha256()
    for e in examples:
        h.update(json.dumps([e.benchmark, e.item_id, e.text, e.target, e.label], ensure_ascii=False).encode())
        h.update(b"\n")
    return h.hexdigest()
