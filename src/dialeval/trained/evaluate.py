"""DiQAD's evaluation of a trained evaluator: Acc, UAR, Cohen's kappa, Spearman, Pearson, macro P/R/F1.

The label metrics compare the predicted 0/1/2 label with the human one
(:func:`dialeval.meta.labels.label_agreement`, scikit-learn). Spearman and
Pearson are turn-level correlations of the predicted score with the human mean
on the native scale (SciPy, as in DiQAD), and come with 95% bootstrap CIs from
:func:`dialeval.meta.correlate.correlation_table`, resampling contexts.

Example:
    >>> from dialeval.metrics.base import MetricInput
    >>> from dialeval.trained.data import Example
    >>> ex = [Example(str(i), "b", f"c{i // 2}", "d", "s", "b", "t", MetricInput("t"), h, 0.0, lab)
    ...       for i, (h, lab) in enumerate([(1.0, 0), (2.0, 0), (3.0, 1), (4.5, 2)])]
    >>> r = evaluate(ex, [0.1, 0.2, 0.5, 0.9], [0, 0, 1, 2], n_boot=0)
    >>> r["accuracy"], r["spearman"], r["n"]
    (1.0, 1.0, 4)
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping, Sequence
from typing import Any

from dialeval.errors import InputError
from dialeval.schema import Rating, Score
from dialeval.trained.data import Example

LABELS = (0, 1, 2)


def as_records(examples: Sequence[Example], scores: Sequence[float | None], metric: str) -> tuple[
    list[Score], list[Rating]
]:
    """Return predictions as Score records and the human means as one Rating per item (ids made unique)."""
    recs = [
        Score(
            item_id=f"{e.benchmark}/{e.item_id}", metric=metric, value=s, context_id=e.group_context,
            dialogue_id=f"{e.benchmark}/{e.dialogue_id}", system=e.system,
        )
        for e, s in zip(examples, scores, strict=True)
    ]
    ratings = [
        Rating(item_id=f"{e.benchmark}/{e.item_id}", dimension="human", annotator="mean", value=e.human)
        for e in examples
    ]
    return recs, ratings


def correlations(
    examples: Sequence[Example], columns: Mapping[str, Sequence[float | None]], n_boot: int = 1000, seed: int = 0
) -> dict[str, dict[str, Any]]:
    """Return ``{column: {spearman, spearman_ci, pearson, pearson_ci}}`` at the turn level, CIs over contexts.

    A figure with no CI although resamples were asked (the items of one context) adds ``no_ci``: why; one whose CI
    is rough (too few contexts: three have 10 distinct resamples) adds ``rough_ci``: why, as ``meta`` warns of it.
    """
    from dialeval.meta.caveats import no_ci_reason, rough_ci_reason
    from dialeval.meta.correlate import correlation_table, rough_reason

    scores: list[Score] = []
    ratings: list[Rating] = []
    for name, vals in columns.items():
        s, ratings = as_records(examples, vals, name)
        scores.extend(s)
    rows = correlation_table(
        scores, ratings, dimension="human", levels=("turn",), methods=("spearman", "pearson"), n_boot=n_boot, seed=seed
    )
    out: dict[str, dict[str, Any]] = {}
    for r in rows:
        d = out.setdefault(r.metric, {})
        d[r.method] = r.value
        d[f"{r.method}_ci"] = [r.ci_low, r.ci_high]
        if r.value is not None and (why := no_ci_reason(r.note or "")):  # results.md showed the figure alone
            d["no_ci"] = why
        rough = rough_ci_reason(r.note or "") if r.ci_low is not None else ""
        if rough and rough != rough_reason(n_boot):  # too few resamples for every CI: rough_resamples says it once
            d.setdefault("rough_ci", rough)  # results.md showed the CIs of 2-3 test contexts with no word (meta warned)
    return out


def undefined_why(undefined: Sequence[str], scores: Sequence[float], human: Sequence[float]) -> dict[str, str]:
    """Say why the measures in ``undefined`` are: ``{"spearman, pearson": why, "kappa, ...": why}``.

    Example:
        >>> undefined_why(["spearman", "pearson"], [0.5, 0.5], [2.0, 3.0])
        {'spearman, pearson': 'the model gives every item the same score'}
        >>> undefined_why(["kappa"], [0.1, 0.2], [3.0, 3.0])
        {'kappa': 'the human and the predicted labels are all one and the same label'}
    """
    correlations = [k for k in undefined if k in ("spearman", "pearson")]
    kappas = [k for k in undefined if k.startswith("kappa")]  # scikit-learn's 0/0: one label on both sides
    flat = [what for what, values in (("the model gives every item the same score", scores),
                                      ("people give every item the same rating", human)) if len(set(values)) == 1]
    why = "one item only" if len(scores) < 2 else " and ".join(flat)
    said = {", ".join(correlations): why,
            ", ".join(kappas): "the human and the predicted labels are all one and the same label"}  # fmt: skip
    return {k: v for k, v in said.items() if k}


def evaluate(
    examples: Sequence[Example],
    scores: Sequence[float],
    labels: Sequence[int],
    n_boot: int = 1000,
    seed: int = 0,
) -> dict[str, Any]:
    """Return every DiQAD metric of predictions on ``examples``.

    Args:
        examples: The test items (human means and labels).
        scores: Predicted scores, aligned with ``examples``.
        labels: Predicted 0/1/2 labels.
        n_boot: Bootstrap resamples of contexts for the correlation CIs (0: none).
        seed: Bootstrap seed.

    Returns:
        ``accuracy``, ``uar``, ``kappa``, ``kappa_quadratic``, ``spearman`` (+ ``spearman_ci``),
        ``pearson`` (+ ``pearson_ci``), ``precision``, ``recall``, ``f1`` (macro), ``n``; a correlation
        or kappa that is undefined (constant predictions or ratings, or one item) is None and named in
        ``undefined``, and why in ``undefined_why`` (:func:`undefined_why`); when every predicted label of two
        items or more is the same, ``one_label`` is that label (the label metrics then describe a constant:
        kappa 0, UAR 1 over the thirds the human labels hold); ``no_ci`` and ``rough_ci`` as
        :func:`correlations` adds them.
    """
    from scipy.stats import pearsonr, spearmanr

    from dialeval.meta.labels import label_agreement

    if not examples:
        raise InputError("no test examples")
    if len(scores) != len(examples) or len(labels) != len(examples):
        raise InputError(f"{len(examples)} examples but {len(scores)} scores and {len(labels)} labels")
    agree = label_agreement([e.label for e in examples], list(labels), labels=LABELS)
    human = [e.human for e in examples]
    rho = r = math.nan  # one test item (a fold of 2 contexts): SciPy's pearsonr raised, a traceback of train
    if len(examples) > 1:
        with warnings.catch_warnings():  # constant input: SciPy warns and returns nan, written as undefined below
            warnings.simplefilter("ignore")
            rho, r = float(spearmanr(scores, human).statistic), float(pearsonr(scores, human).statistic)
    out: dict[str, Any] = {
        "accuracy": agree["accuracy"],
        "uar": agree["uar"],
        "kappa": agree["kappa"],
        "kappa_quadratic": agree["kappa_quadratic"],
        "spearman": rho if math.isfinite(rho) else None,
        "pearson": r if math.isfinite(r) else None,
        "precision": agree["precision_macro"],
        "recall": agree["recall_macro"],
        "f1": agree["f1_macro"],
        "n": len(examples),
    }
    undefined = [k for k in ("kappa", "kappa_quadratic", "spearman", "pearson") if out[k] is None]
    if undefined:  # results.jsonl held NaN (not JSON) and results.md an empty cell
        out["undefined"] = undefined
        out["undefined_why"] = undefined_why(undefined, scores, human)  # results.md said "undefined", not why
    if len(labels) > 1 and len(set(labels)) == 1:  # kappa 0 and UAR 1 over the thirds rated, with no word of why
        out["one_label"] = int(labels[0])
    if n_boot > 0:
        ci = correlations(examples, {"pred": list(scores)}, n_boot, seed)["pred"]
        out["spearman_ci"] = ci["spearman_ci"]
        out["pearson_ci"] = ci["pearson_ci"]
        out.update({k: ci[k] for k in ("no_ci", "rough_ci") if k in ci})
    return out
