"""A standardised L2 logistic regression head, fitted with L-BFGS and stored as plain JSON numbers.

The head is ``sigmoid(((x - mean) / scale) @ coef + bias)``; the JSON file holds
``mean``, ``scale``, ``coef`` and ``bias``, so anyone can apply it by hand. Classes
are weighted to balance (positives and negatives count the same in the loss).

Example:
    >>> import numpy as np
    >>> x = np.array([[0.0], [1.0], [2.0], [3.0]], dtype=np.float32)
    >>> head = fit_logistic(x, np.array([0, 0, 1, 1]), l2=0.1)
    >>> [round(float(p)) for p in head.predict_proba(x)]
    [0, 0, 1, 1]
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from dialeval.errors import InputError


@dataclass(frozen=True)
class LogisticHead:
    """Fitted head weights (float64 arrays)."""

    mean: NDArray[np.float64]
    scale: NDArray[np.float64]
    coef: NDArray[np.float64]
    bias: float

    def logit(self, x: NDArray[Any]) -> NDArray[np.float64]:
        """Return the decision value of every row."""
        z = (np.asarray(x, dtype=np.float64) - self.mean) / self.scale
        return np.asarray(z @ self.coef + self.bias, dtype=np.float64)

    def predict_proba(self, x: NDArray[Any]) -> NDArray[np.float64]:
        """Return the probability of the positive class for every row."""
        return np.asarray(1.0 / (1.0 + np.exp(-self.logit(x))), dtype=np.float64)

    def to_json(self) -> dict[str, Any]:
        """Return the weights as JSON-ready lists (rounded to float32 precision)."""
        def r(a: NDArray[np.float64]) -> list[float]:
            return [float(np.float32(v)) for v in a]

        bias = float(np.float32(self.bias))
        return {"mean": r(self.mean), "scale": r(self.scale), "coef": r(self.coef), "bias": bias}

    @classmethod
    def from_json(cls, data: dict[str, Any], where: str | Path = "") -> LogisticHead:
        """Rebuild a head from :meth:`to_json` output.

        Raises:
            InputError: A field is missing, a number is not finite, a scale is not above 0 (each would make every
                score NaN or saturated), or the arrays differ in length.
        """
        path = where or None
        arrays = []
        for key in ("mean", "scale", "coef", "bias"):
            if key not in data:
                raise InputError("not a head: missing", path=path, field=key)
            try:
                arrays.append(np.asarray(data[key], dtype=np.float64))
            except (TypeError, ValueError) as exc:
                raise InputError(f"not a head: {exc}", path=path, field=key) from None
        *arrays, bias_array = arrays
        if bias_array.ndim != 0 or not np.isfinite(bias_array):
            raise InputError(f"must be a finite number, got {data['bias']}", path=path, field="bias")
        for key, values in zip(("mean", "scale", "coef"), arrays, strict=True):
            bad = ~np.isfinite(values) | ((values <= 0) if key == "scale" else False)
            if bad.any():
                at = int(np.flatnonzero(bad)[0])
                need = "numbers above 0" if key == "scale" else "finite numbers"
                raise InputError(f"must be {need}, got {values.flat[at]} at index {at}", path=path, field=key)
        bias = float(bias_array)
        if not (arrays[0].shape == arrays[1].shape == arrays[2].shape) or arrays[0].ndim != 1:
            raise InputError("head arrays differ in length", path=path)
        return cls(arrays[0], arrays[1], arrays[2], bias)


def fit_logistic(x: NDArray[Any], y: Sequence[int] | NDArray[Any], l2: float = 1.0) -> LogisticHead:
    """Fit a class-balanced L2 logistic regression (penalty ``l2`` on the standardised coefficients).

    Deterministic: L-BFGS from zeros.
    """
    from scipy.optimize import minimize

    xa = np.asarray(x, dtype=np.float64)
    ya = np.asarray(y, dtype=np.float64)
    mean = xa.mean(axis=0)
    scale = xa.std(axis=0)
    scale[scale < 1e-8] = 1.0
    z = (xa - mean) / scale
    n_pos = max(1.0, float(ya.sum()))
    n_neg = max(1.0, float(len(ya) - ya.sum()))
    weight = np.where(ya > 0.5, len(ya) / (2 * n_pos), len(ya) / (2 * n_neg)) / len(ya)

    def loss(theta: NDArray[np.float64]) -> tuple[float, NDArray[np.float64]]:
        w, b = theta[:-1], theta[-1]
        m = z @ w + b
        p = 1.0 / (1.0 + np.exp(-m))
        ll = np.logaddexp(0.0, m) - ya * m
        g = weight * (p - ya)
        grad = np.concatenate([z.T @ g + l2 * w / len(ya), [g.sum()]])
        return float(weight @ ll + 0.5 * l2 * (w @ w) / len(ya)), grad

    res = minimize(loss, np.zeros(z.shape[1] + 1), jac=True, method="L-BFGS-B", options={"maxiter": 500})
    return LogisticHead(mean, scale, np.asarray(res.x[:-1]), float(res.x[-1]))


def auc(scores: Sequence[float] | NDArray[Any], labels: Sequence[int] | NDArray[Any]) -> float:
    """Return the ROC AUC (ties count half), NaN when one class is missing.

    Example:
        >>> auc([0.1, 0.4, 0.35, 0.8], [0, 0, 1, 1])
        0.75
    """
    from scipy.stats import rankdata

    s = np.asarray(scores, dtype=np.float64)
    lab = np.asarray(labels) > 0
    n1, n0 = int(lab.sum()), int((~lab).sum())
    if n1 == 0 or n0 == 0:
        return float("nan")
    r = rankdata(s)
    return float((r[lab].sum() - n1 * (n1 + 1) / 2) / (n1 * n0))


def save_head(head: LogisticHead, path: Path, features: str) -> None:
    """Write a head as JSON with the name of its feature layout, atomically (in an all-or-nothing block, with it)."""
    from dialeval.atomic import atomic_write

    with atomic_write(path) as f:
        f.write(json.dumps({"features": features, **head.to_json()}) + "\n")
