"""The logistic head and the AUC against independent computations."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import mannwhitneyu

from dialeval.errors import InputError
from dialeval.metrics.quality.heads import LogisticHead, auc, fit_logistic


def test_auc_equals_the_mann_whitney_statistic():
    rng = np.random.default_rng(0)
    s = rng.normal(size=200).round(1)  # ties on purpose
    y = (s + rng.normal(size=200) > 0).astype(int)
    u = mannwhitneyu(s[y == 1], s[y == 0]).statistic
    assert auc(s, y) == pytest.approx(u / ((y == 1).sum() * (y == 0).sum()))


def test_fit_reaches_the_stationary_point_of_the_balanced_penalised_loss():
    rng = np.random.default_rng(1)
    x = rng.normal(size=(300, 3))
    y = (x @ [1.0, -2.0, 0.5] + rng.normal(size=300) > 0.8).astype(int)
    head = fit_logistic(x, y, l2=5.0)
    # gradient of the class-balanced loss + 0.5*l2/n*|w|^2 at the solution, computed here by hand
    z = (x - x.mean(0)) / x.std(0)
    p = 1 / (1 + np.exp(-(z @ head.coef + head.bias)))
    w = np.where(y == 1, 1 / (2 * y.sum()), 1 / (2 * (300 - y.sum())))
    grad = z.T @ (w * (p - y)) + 5.0 * head.coef / 300
    assert np.abs(grad).max() < 1e-4 and abs(float(w @ (p - y))) < 1e-4


def test_json_round_trip_and_bad_file():
    head = LogisticHead(np.array([1.0]), np.array([2.0]), np.array([0.5]), -0.25)
    back = LogisticHead.from_json(head.to_json())
    assert back.logit(np.array([[3.0]]))[0] == pytest.approx((3 - 1) / 2 * 0.5 - 0.25)
    with pytest.raises(InputError, match="not a head"):
        LogisticHead.from_json({"mean": [1.0]}, "h.json")
