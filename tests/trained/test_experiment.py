"""Single-metric baselines on the test side and the paired comparison with a trained model."""

from __future__ import annotations

import pytest
from scipy.stats import spearmanr

from dialeval.trained.data import Example
from dialeval.trained.experiment import baseline_rows, run_split
from dialeval.trained.splits import cross_benchmark


def test_baselines_and_paired_difference(small_examples: list[Example]) -> None:
    usr = [e for e in small_examples if e.benchmark == "usr-pc"]
    gupta = [e for e in small_examples if e.benchmark == "gupta-dailydialog"]
    split = cross_benchmark(gupta, usr)
    _, row, preds = run_split("tfidf-lr", split, n_boot=100)
    rows = baseline_rows(split, {"tfidf-lr": preds}, families=["length", "f1"], n_boot=100)
    cmp, metrics = rows[0], rows[1:]
    assert [r["model"] for r in metrics] == sorted((r["model"] for r in metrics), key=lambda m: -next(
        x["spearman"] for x in metrics if x["model"] == m))
    best = next(r for r in metrics if r["model"] == f"metric:{cmp['vs_metric']}")
    assert best is metrics[0]
    # the difference is the two point Spearman figures, each checked against SciPy here
    human = [e.human for e in usr]
    length = [float(len(e.item.response.split())) for e in usr]
    by_name = {r["model"]: r for r in metrics}
    assert by_name["metric:length"]["spearman"] == pytest.approx(spearmanr(length, human).statistic)
    assert cmp["spearman_diff"] == pytest.approx(row["spearman"] - best["spearman"])
    lo, hi = cmp["spearman_diff_ci"]
    assert lo <= cmp["spearman_diff"] <= hi and 0.0 <= cmp["p_paired"] <= 1.0


def test_a_mean_over_folds_is_undefined_where_a_fold_is() -> None:
    """The mean of a measure that one fold left undefined was the mean of the other folds under the name
    "mean of 2" (or NaN, when the fold held NaN); now it is None and named in ``undefined``."""
    from dialeval.trained.experiment import summarise_folds

    rows = [{"model": "m", "spearman": 0.4, "accuracy": 0.5},
            {"model": "m", "spearman": None, "accuracy": 0.7, "undefined": ["spearman"]}]  # fmt: skip
    (got,) = summarise_folds(rows)
    assert got["spearman"] is None and got["undefined"] == ["spearman"]
    assert got["accuracy"] == pytest.approx(0.6)
