"""Agreement statistics: textbook values and parity with krippendorff, scikit-learn, statsmodels."""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable
from pathlib import Path

import krippendorff
import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score
from statsmodels.stats.inter_rater import fleiss_kappa as sm_fleiss_kappa

from dialeval.errors import InputError
from dialeval.meta import agreement
from dialeval.meta.agreement import (
    agreement_report,
    bootstrap,
    category_counts,
    cohen_kappa,
    fleiss_kappa,
    fleiss_kappa_over_draws,
    krippendorff_alpha,
    krippendorff_alpha_over_draws,
    mean_pairwise_cohen_kappa,
    mean_pairwise_cohen_kappa_over_draws,
    pairable,
    reliability_matrix,
)
from dialeval.meta.bootstrap import draw_counts
from dialeval.schema import Rating

N = np.nan
# Krippendorff (2011) "Computing Krippendorff's Alpha-Reliability", the 4 observers x 12 units
# example with missing values; the paper reports alpha = 0.743 (nominal), 0.815 (ordinal), 0.849 (interval).
K2011 = np.array(
    [
        [1, 2, 3, 3, 2, 1, 4, 1, 2, N, N, N],
        [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, N, 3],
        [N, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, N],
        [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, N],
    ]
)


@pytest.mark.parametrize(("level", "published"), [("nominal", 0.743), ("ordinal", 0.815), ("interval", 0.849)])
def test_krippendorff_textbook(level: str, published: float) -> None:
    assert krippendorff_alpha(K2011, level) == pytest.approx(published, abs=5e-4)  # type: ignore[arg-type]


def test_fleiss_textbook() -> None:
    # Fleiss' kappa worked example on Wikipedia ("Fleiss' kappa", 10 subjects, 14 raters, 5 categories):
    # kappa = 0.210 (P-bar = 0.378, P-bar_e = 0.213).
    table = [
        [0, 0, 0, 0, 14],
        [0, 2, 6, 4, 2],
        [0, 0, 3, 5, 6],
        [0, 3, 9, 2, 0],
        [2, 2, 8, 1, 1],
        [7, 7, 0, 0, 0],
        [3, 2, 6, 3, 0],
        [2, 5, 3, 2, 2],
        [6, 5, 2, 1, 0],
        [0, 2, 2, 3, 7],
    ]
    matrix = np.array([[c for c, k in enumerate(row) for _ in range(k)] for row in table], dtype=float).T
    assert category_counts(matrix).tolist() == table
    assert fleiss_kappa(matrix) == pytest.approx(0.210, abs=5e-4)


def test_cohen_textbook() -> None:
    # Cohen's kappa worked example on Wikipedia: 50 proposals, yes/yes 20, yes/no 5, no/yes 10,
    # no/no 15 -> p_o = 0.7, p_e = 0.5, kappa = 0.4.
    a = [1] * 20 + [1] * 5 + [0] * 10 + [0] * 15
    b = [1] * 20 + [0] * 5 + [1] * 10 + [0] * 15
    assert cohen_kappa(a, b) == pytest.approx(0.4)


def _random_matrix(seed: int, raters: int, items: int, cats: int, missing: float) -> np.ndarray:
    rng = np.random.default_rng(seed)
    truth = rng.integers(0, cats, size=items)
    m = np.where(rng.random((raters, items)) < 0.6, truth, rng.integers(0, cats, size=(raters, items)))
    m = m.astype(float)
    m[rng.random((raters, items)) < missing] = np.nan
    return m


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("level", ["nominal", "ordinal", "interval"])
def test_krippendorff_parity(seed: int, level: str) -> None:
    m = _random_matrix(seed, raters=5, items=40, cats=5, missing=0.3)
    expected = krippendorff.alpha(reliability_data=m, level_of_measurement=level)
    assert krippendorff_alpha(m, level) == pytest.approx(expected, abs=1e-9)  # type: ignore[arg-type]


@pytest.mark.parametrize("seed", range(5))
def test_fleiss_parity(seed: int) -> None:
    m = _random_matrix(seed, raters=7, items=50, cats=3, missing=0.0)
    assert fleiss_kappa(m) == pytest.approx(sm_fleiss_kappa(category_counts(m), method="fleiss"), abs=1e-12)


#: Fleiss' kappa of ``_random_matrix(seed, raters=5, items=40, cats=3, missing=0.3)`` for seeds 0-4, by irrCAC
#: 0.4.4's ``CAC(items x raters, digits=15).fleiss()`` (Gwet's generalisation to missing ratings), run in an
#: environment of its own (it pins scipy 1.12 and pandas < 3, which dialeval's cannot hold).
IRRCAC_FLEISS = (0.327053822664714, 0.230113223078062, 0.235612093853185, 0.323187906052443, 0.323873135130584)


@pytest.mark.parametrize("seed", range(5))
def test_fleiss_with_missing_ratings_matches_irrcac(seed: int) -> None:
    """Items with fewer ratings than the most-rated one were left out (an "I don't know" is a missing rating, so
    its item went; one item rated once more than the others left kappa to that item). Now every item counts."""
    m = _random_matrix(seed, raters=5, items=40, cats=3, missing=0.3)
    assert fleiss_kappa(m) == pytest.approx(IRRCAC_FLEISS[seed], abs=1e-12)


def test_one_item_rated_once_more_no_longer_decides_fleiss() -> None:
    m = _random_matrix(0, raters=4, items=30, cats=3, missing=0.0)
    extra = np.full((1, 30), np.nan)
    extra[0, 0] = m[0, 0]  # a fifth rating on the first item only
    complete = fleiss_kappa(m)
    assert fleiss_kappa(np.vstack([m, extra])) == pytest.approx(complete, abs=0.05)  # was that one item's figure


@pytest.mark.parametrize("seed", range(5))
def test_cohen_parity_pairwise(seed: int) -> None:
    m = _random_matrix(seed, raters=4, items=60, cats=4, missing=0.2)
    pairs = []
    for i, j in itertools.combinations(range(4), 2):
        both = ~np.isnan(m[i]) & ~np.isnan(m[j])
        reference = cohen_kappa_score(m[i][both], m[j][both])
        assert cohen_kappa(m[i], m[j]) == pytest.approx(reference, abs=1e-12)
        pairs.append(reference)
    assert mean_pairwise_cohen_kappa(m) == pytest.approx(np.mean(pairs), abs=1e-12)


def _usr_overall(shared_data: Path) -> list[Rating]:
    data = json.loads((shared_data / "usr" / "usr_topical_chat.json").read_text())
    out = []
    for c, ctx in enumerate(data):
        for resp in ctx["responses"]:
            for a, v in enumerate(resp["Overall"]):
                out.append(
                    Rating(item_id=f"{c}:{resp['model']}", dimension="Overall", annotator=f"a{a}", value=float(v))
                )
    return out


def test_real_usr_overall_parity(shared_data: Path) -> None:
    rel = reliability_matrix(_usr_overall(shared_data))
    assert rel.matrix.shape == (3, 360)
    for level in ("nominal", "ordinal", "interval"):
        expected = krippendorff.alpha(reliability_data=rel.matrix, level_of_measurement=level)
        assert krippendorff_alpha(rel.matrix, level) == pytest.approx(expected, abs=1e-9)  # type: ignore[arg-type]
    assert fleiss_kappa(rel.matrix) == pytest.approx(sm_fleiss_kappa(category_counts(rel.matrix)), abs=1e-12)


def test_labels_dont_know_and_strong_judgements() -> None:
    rows = [
        ("x", "a1", "positive"),
        ("x", "a2", "positive"),
        ("x", "a3", "negative"),
        ("y", "a1", "negative"),
        ("y", "a2", None),
        ("y", "a3", "negative"),
        ("z", "a1", "positive"),
        ("z", "a2", "positive"),
        ("z", "a3", "positive"),
    ]
    rs = [Rating(item_id=i, dimension="Appropriateness", annotator=a, value=v, dont_know=v is None) for i, a, v in rows]
    missing = reliability_matrix(rs)
    assert missing.labels == ("negative", "positive")
    assert np.isnan(missing.matrix[1, 1])
    category = reliability_matrix(rs, dont_know="category")
    assert category.labels == ("negative", "positive", "I don't know")
    assert category.matrix[1, 1] == 2
    strong = reliability_matrix(rs, dont_know="drop_item")
    assert strong.items == ("x", "z")
    with pytest.raises(ValueError, match="one dimension"):
        reliability_matrix([*rs, Rating(item_id="x", dimension="Other", annotator="a1", value="positive")])


def test_bootstrap_and_report_are_seeded_and_contain_the_point_estimate() -> None:
    m = _random_matrix(3, raters=3, items=80, cats=2, missing=0.0)
    e1 = bootstrap(krippendorff_alpha_over_draws, m, n_boot=300, seed=7)
    e2 = bootstrap(krippendorff_alpha_over_draws, m, n_boot=300, seed=7)
    assert e1 == e2
    assert e1.low < e1.value < e1.high
    assert e1.n_items == 80
    rs = [
        Rating(item_id=str(j), dimension="d", annotator=f"a{i}", value=float(m[i, j]))
        for i in range(3)
        for j in range(80)
    ]
    report = agreement_report(rs, n_boot=200)
    assert set(report) == {"krippendorff_alpha_nominal", "fleiss_kappa", "cohen_kappa_mean"}
    assert report["fleiss_kappa"].value == pytest.approx(sm_fleiss_kappa(category_counts(m)))


def test_undefined_statistics_raise_instead_of_nan() -> None:
    constant = np.ones((3, 5))
    with pytest.raises(ValueError):
        krippendorff_alpha(constant)
    with pytest.raises(ValueError):
        fleiss_kappa(constant)
    with pytest.raises(ValueError):
        cohen_kappa(constant[0], constant[1])


@pytest.mark.parametrize("n_boot", [0, -5])
def test_fewer_than_one_resample_is_an_input_error_not_numpys(n_boot: int) -> None:
    # it was an IndexError from np.percentile of no resamples (dialeval study import-agreement --n-boot -5)
    m = _random_matrix(0, raters=2, items=10, cats=2, missing=0.0)
    with pytest.raises(InputError, match=f'field "n_boot": must be at least 1 .*got {n_boot}'):
        bootstrap(krippendorff_alpha_over_draws, m, n_boot=n_boot)


def _draws(seed: int, n_items: int, n_boot: int) -> tuple[list[np.ndarray], np.ndarray]:
    """The columns each resample draws (as the bootstrap draws them) and their counts per item."""
    rng = np.random.default_rng(seed)
    cols = [rng.integers(0, n_items, size=n_items) for _ in range(n_boot)]
    return cols, np.stack([np.bincount(c, minlength=n_items) for c in cols]).astype(float)


def _on_columns(statistic: Callable[[np.ndarray], float], m: np.ndarray, cols: list[np.ndarray]) -> np.ndarray:
    """``statistic`` of each resample's copied columns, ``nan`` where it is undefined (the old bootstrap's loop)."""
    out = []
    for c in cols:
        try:
            out.append(statistic(m[:, c]))
        except ValueError:
            out.append(np.nan)
    return np.array(out)


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("level", ["nominal", "ordinal", "interval"])
def test_alpha_over_draws_is_krippendorffs_alpha_of_each_resample(seed: int, level: str) -> None:
    """Reference: the krippendorff package on each resample's copied columns (nan where it has one value)."""
    m = pairable(_random_matrix(seed, raters=5, items=12, cats=3, missing=0.4))
    cols, draws = _draws(seed, m.shape[1], 40)

    def reference(x: np.ndarray) -> float:
        if np.unique(x[~np.isnan(x)]).size < 2:
            raise ValueError("one value")
        return float(krippendorff.alpha(reliability_data=x, level_of_measurement=level))

    want = _on_columns(reference, m, cols)
    got = krippendorff_alpha_over_draws(m, draws, level)  # type: ignore[arg-type]
    assert np.isnan(want).tolist() == np.isnan(got).tolist()
    np.testing.assert_allclose(got, want, atol=1e-9)


@pytest.mark.parametrize(("seed", "raters", "items", "cats", "missing", "block"),
                         [*((seed, 4, 8, 2, 0.5, None) for seed in range(4)),
                          *((seed, 15, 40, 3, 0.8, None) for seed in range(2)), (2, 15, 40, 3, 0.8, 40)],
                         ids=[*(f"4 raters-{seed}" for seed in range(4)), "15 raters, ~3 per item-0",
                              "15 raters, ~3 per item-1", "15 raters, resamples in blocks-2"])  # fmt: skip
def test_kappas_over_draws_are_the_kappas_of_each_resample(
    seed: int, raters: int, items: int, cats: int, missing: float, block: int | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """References: Fleiss' point statistic (pinned to statsmodels and irrCAC above) on copied columns, and
    scikit-learn's Cohen's kappa of each pair sharing two distinct drawn items, averaged; small matrices, so some
    resamples leave a pair sharing fewer than two items or one label only (nan). With 15 raters most pairs share
    one item or none; ``block`` makes the Cohen mean take its resamples a few at a time (a block holds 40 counts)."""
    if block is not None:
        monkeypatch.setattr(agreement, "DRAWS_PER_BLOCK", block)
    m = pairable(_random_matrix(seed, raters=raters, items=items, cats=cats, missing=missing))
    cols, draws = _draws(seed, m.shape[1], 60)

    def pairwise_mean(x: np.ndarray, distinct: np.ndarray) -> float:
        kappas = []
        for i, j in itertools.combinations(range(x.shape[0]), 2):
            both = ~np.isnan(x[i]) & ~np.isnan(x[j])
            if len(np.unique(distinct[both])) >= 2 and len(np.unique(np.r_[x[i][both], x[j][both]])) > 1:
                kappas.append(cohen_kappa_score(x[i][both], x[j][both]))
        if not kappas:
            raise ValueError("no pair")
        return float(np.mean(kappas))

    fleiss = _on_columns(fleiss_kappa, m, cols)
    cohen = []
    for c in cols:
        try:
            cohen.append(pairwise_mean(m[:, c], c))
        except ValueError:
            cohen.append(np.nan)
    for want, got in ((fleiss, fleiss_kappa_over_draws(m, draws)),
                      (np.array(cohen), mean_pairwise_cohen_kappa_over_draws(m, draws))):  # fmt: skip
        assert np.isnan(want).tolist() == np.isnan(got).tolist()
        np.testing.assert_allclose(got, want, atol=1e-12)


def test_pairs_that_share_one_item_drawn_twice_no_longer_pull_the_cohen_ci_below_its_estimate() -> None:
    """60 annotators, each item rated by 3 of them: most pairs share one item or none. A resample that drew such an
    item twice counted the pair (kappa 0 or undefined): the 95% CI was [0.119, 0.172] around 0.230."""
    rng = np.random.default_rng(0)
    truth = rng.integers(1, 6, size=600)
    m = np.full((60, 600), np.nan)
    for j in range(600):
        m[rng.choice(60, size=3, replace=False), j] = np.clip(truth[j] + rng.integers(-1, 2, size=3), 1, 5)
    e = bootstrap(mean_pairwise_cohen_kappa_over_draws, m, n_boot=200)
    assert e.value == pytest.approx(mean_pairwise_cohen_kappa(m), abs=1e-12)
    assert e.low < e.value < e.high


def test_interval_alpha_of_a_resample_with_one_value_is_undefined_not_a_rounding() -> None:
    # n * sum(x^2) - sum(x)^2 of the drawn 0.1s is -2.2e-16, not 0: alpha came out 1.0
    m = np.array([[0.1, 0.1, 0.7], [0.1, 0.1, 0.7], [0.1, np.nan, 0.7]])
    got = krippendorff_alpha_over_draws(m, np.array([[1, 1, 0], [3, 1, 0], [1, 1, 1.0]]), "interval")
    assert np.isnan(got[:2]).all()
    assert got[2] == pytest.approx(krippendorff.alpha(reliability_data=m, level_of_measurement="interval"), abs=1e-12)


def test_bootstrap_is_the_percentile_over_copied_columns_of_its_draws() -> None:
    """The CI is the percentile of the point statistic over the resampled columns of ``draw_counts``' draws."""
    m = pairable(_random_matrix(5, raters=3, items=70, cats=4, missing=0.2))
    counts = draw_counts(m.shape[1], 500, seed=11)
    want = _on_columns(fleiss_kappa, m, [np.repeat(np.arange(m.shape[1]), row) for row in counts])
    e = bootstrap(fleiss_kappa_over_draws, m, n_boot=500, seed=11)
    assert (e.low, e.high) == pytest.approx(tuple(np.percentile(want[~np.isnan(want)], [2.5, 97.5])), abs=1e-12)
    assert e.value == pytest.approx(fleiss_kappa(m), abs=1e-12)
    assert e.n_boot == int((~np.isnan(want)).sum())


@pytest.mark.parametrize("matrix", [np.full((3, 0), np.nan), np.full((2, 3), np.nan), np.ones((2, 4))],
                         ids=["no item", "no rating", "one value"])  # fmt: skip
def test_draws_of_nothing_to_agree_on_are_undefined_not_an_error(matrix: np.ndarray) -> None:
    draws = np.ones((2, matrix.shape[1]))
    for level in ("nominal", "ordinal", "interval"):
        assert np.isnan(krippendorff_alpha_over_draws(matrix, draws, level)).all()  # type: ignore[arg-type]
    assert np.isnan(fleiss_kappa_over_draws(matrix, draws)).all()
    assert np.isnan(mean_pairwise_cohen_kappa_over_draws(matrix, draws)).all()
    with pytest.raises(ValueError, match="the statistic is undefined on these ratings"):
        bootstrap(fleiss_kappa_over_draws, matrix, n_boot=10)
