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


@pytest.mark.parametrize(("change", "message"), [
    ({"scale": [0.0, 1.0]}, 'h.json: field "scale": must be numbers above 0, got 0.0 at index 0'),
    ({"scale": [1.0, -2.0]}, 'h.json: field "scale": must be numbers above 0, got -2.0 at index 1'),
    ({"mean": [1.0, float("nan")]}, 'h.json: field "mean": must be finite numbers, got nan at index 1'),
    ({"coef": [float("inf"), 1.0]}, 'h.json: field "coef": must be finite numbers, got inf at index 0'),
    ({"bias": float("nan")}, 'h.json: field "bias": must be a finite number, got nan'),
])  # fmt: skip
def test_a_head_whose_weights_are_not_finite_or_scale_not_positive_is_refused_where_it_is_read(change, message):
    """A scale of 0 divided to inf: the quality metric gave quality_sensible 1.0 or 0.0 for every item, and a NaN
    mean (json reads NaN) null scores for every item of a run that exited 0. Fitted heads never hold either
    (fit_logistic and the ensemble put a scale under 1e-8 at 1)."""
    good = {"mean": [0.0, 1.0], "scale": [1.0, 2.0], "coef": [0.5, 0.5], "bias": 0.0}
    with pytest.raises(InputError) as exc:
        LogisticHead.from_json(good | change, "h.json")
    assert str(exc.value) == message


def test_a_head_missing_a_field_names_the_field():
    """It said "not a head: 'scale'", the KeyError's text, naming no field."""
    with pytest.raises(InputError) as exc:
        LogisticHead.from_json({"mean": [1.0], "coef": [1.0], "bias": 0.0}, "h.json")
    assert str(exc.value) == 'h.json: field "scale": not a head: missing'
