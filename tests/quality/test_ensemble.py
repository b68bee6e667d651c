"""The ensemble's ridge: the signed fit against an independent bounded least-squares solver."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import lsq_linear

from dialeval.quality.ensemble import fit_ridge


def _problem(seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    a = rng.normal(size=200)
    x = np.column_stack([a, a + 0.3 * rng.normal(size=200), rng.normal(size=200), -a + rng.normal(size=200)])
    y = 2 * a - x[:, 1] + 0.5 * rng.normal(size=200)  # rises with the twin, whose partial weight is negative
    return x, y, rng.uniform(0.5, 2.0, size=200)


@pytest.mark.parametrize("alpha", [0.0, 1.0, 10.0])
def test_signed_ridge_is_the_bounded_least_squares_solution(alpha):
    x, y, w = _problem()
    signs = np.array([1.0, 1.0, 1.0, -1.0])
    got = fit_ridge(x, y, w, alpha=alpha, signs=signs)
    # the same weighted, penalised problem on the standardised columns, solved by scipy's bounded solver
    z = (x - x.mean(axis=0)) / x.std(axis=0)
    wn = w / w.sum()
    zc, yc = z - wn @ z, y - wn @ y
    design = np.vstack([zc * np.sqrt(wn)[:, None], np.sqrt(alpha / len(y)) * np.eye(4)])
    target = np.concatenate([np.sqrt(wn) * yc, np.zeros(4)])
    bounds = (np.where(signs > 0, 0.0, -np.inf), np.where(signs > 0, np.inf, 0.0))
    expected = lsq_linear(design, target, bounds=bounds, tol=1e-12).x
    np.testing.assert_allclose(got.coef, expected, atol=1e-7)
    assert np.all(got.coef * signs >= 0)
    # the collinear twin takes a negative weight when free, and none when held to its direction
    free = fit_ridge(x, y, w, alpha=alpha)
    assert free.coef[1] < 0 and got.coef[1] >= 0


def test_signs_that_hold_anyway_change_nothing():
    x, y, w = _problem(1)
    free = fit_ridge(x, y, w)
    held = fit_ridge(x, y, w, signs=np.sign(free.coef))
    np.testing.assert_allclose(held.coef, free.coef, atol=1e-9)
    assert held.bias == pytest.approx(free.bias)
