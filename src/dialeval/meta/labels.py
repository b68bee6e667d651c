"""Agreement of label-valued predictions (e.g. a judge's 0/1/2) with human labels, via scikit-learn.

Example:
    >>> r = label_agreement([0, 1, 2, 2], [0, 1, 1, 2])
    >>> r["accuracy"], round(r["uar"], 4)
    (0.75, 0.8333)
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from typing import Any

from dialeval.errors import InputError


def label_agreement(
    y_true: Sequence[Any], y_pred: Sequence[Any], labels: Sequence[Any] | None = None
) -> dict[str, float | None]:
    """Accuracy, unweighted average recall, Cohen's kappa (plain, linear, quadratic) and macro P/R/F1.

    Args:
        y_true: Human labels.
        y_pred: Predicted labels, aligned with ``y_true``.
        labels: The label set, in order (matters for weighted kappa: give ordinal
            labels in scale order); default: the sorted union of both sides.

    Returns:
        ``accuracy``, ``uar`` (balanced accuracy: mean recall over the true classes),
        ``kappa``, ``kappa_linear``, ``kappa_quadratic``, ``precision_macro``,
        ``recall_macro``, ``f1_macro`` (over the labels either side gives, as scikit-learn's default: the precision
        of a label never predicted and the recall of one never true count as 0), ``n``.
        A kappa is None where it is undefined: both sides give one and the same label throughout
        (scikit-learn's 0/0, a nan that was written as such).
    """
    from sklearn.exceptions import UndefinedMetricWarning
    from sklearn.metrics import accuracy_score, cohen_kappa_score, precision_recall_fscore_support

    if len(y_true) != len(y_pred):
        raise InputError(f"{len(y_true)} true labels but {len(y_pred)} predictions", field="y_pred")
    if not y_true:
        raise InputError("no labels to compare", field="y_true")
    label_list = list(labels) if labels is not None else sorted(set(y_true) | set(y_pred))
    if labels is not None and (unknown := (set(y_true) | set(y_pred)) - set(label_list)):
        raise InputError(f"labels not in the label set: {sorted(map(str, unknown))}", field="labels")
    seen = set(y_true) | set(y_pred)  # a label neither side gives has no P/R/F1: it counted 0, a perfect F1 was 2/3
    macro = [x for x in label_list if x in seen]
    p, r, f, _ = precision_recall_fscore_support(y_true, y_pred, labels=macro, average="macro", zero_division=0)
    with warnings.catch_warnings():  # one label on both sides: scikit-learn warns and returns nan (None here)
        warnings.filterwarnings("ignore", message=".*cohen_kappa_score. is undefined", category=UndefinedMetricWarning)
        kappas = {
            f"kappa{suffix}": _defined(float(cohen_kappa_score(y_true, y_pred, labels=label_list, weights=w)))
            for suffix, w in (("", None), ("_linear", "linear"), ("_quadratic", "quadratic"))
        }
    return {
        "accuracy": float(accuracy_score(y_true, y_pred)),
        "uar": _uar(y_true, y_pred),
        **kappas,
        "precision_macro": float(p),
        "recall_macro": float(r),
        "f1_macro": float(f),
        "n": float(len(y_true)),
    }


def _defined(value: float) -> float | None:
    """``value``, or None where it is nan (undefined)."""
    return value if math.isfinite(value) else None


def _uar(y_true: Sequence[Any], y_pred: Sequence[Any]) -> float:
    """Balanced accuracy, without scikit-learn's warning for a predicted class that no true label has.

    That case is what the documented definition already covers (the mean recall over the true
    classes; a wrong prediction of an absent class lowers its true class's recall), so the warning
    says nothing a user should act on; a judge or a fold without every class meets it routinely.
    """
    from sklearn.metrics import balanced_accuracy_score

    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="y_pred contains classes not in y_true", category=UserWarning)
        warnings.filterwarnings("ignore", message="A single label was found", category=UserWarning)  # one class
        return float(balanced_accuracy_score(y_true, y_pred))
