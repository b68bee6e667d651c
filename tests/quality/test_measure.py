"""The docs' stress measurement applies the ensemble it is given (a candidate's, not only the shipped one)."""

from __future__ import annotations

import json

import pytest

from dialeval.quality.measure import stress_table


@pytest.mark.usefixtures("shared_data")
def test_the_stress_table_applies_a_candidates_ensemble(tmp_path, monkeypatch):
    """An ensemble over the sensible logit alone ranks as ``quality_sensible`` does, and its negation the other way.

    Expected values come from the table's own ``quality_sensible`` row (a monotone map of the same
    logit), not from the code under test's ensemble path.
    """
    monkeypatch.setenv("DIALEVAL_CACHE", str(tmp_path / "cache"))
    rows = {}
    for sign in (2.0, -2.0):
        ens = tmp_path / f"ensemble{sign}.json"
        ens.write_text(json.dumps({"features": ["sensible"], "mean": [0.0], "scale": [1.0], "coef": [sign],
                                   "bias": 0.0}))
        rows[sign] = {(r["perturbation"], r["output"]): r["fraction"]
                      for r in stress_table(2, ("negation", "truncation"), ensemble=str(ens))}
    for p in ("negation", "truncation"):
        sensible = rows[2.0][(p, "quality_sensible")]
        assert rows[2.0][(p, "quality")] == pytest.approx(sensible)
        assert rows[-2.0][(p, "quality")] == pytest.approx(1.0 - sensible)


@pytest.mark.usefixtures("shared_data")
def test_the_split_by_the_originals_rating_partitions_the_pairs(tmp_path, monkeypatch):
    """The two rows split by the original's human rating hold every pair once: their counts add up, and their
    fractions, weighted by the counts, give the whole table's (ties count half in each)."""
    monkeypatch.setenv("DIALEVAL_CACHE", str(tmp_path / "cache"))
    ens = tmp_path / "ensemble.json"
    ens.write_text(json.dumps({"features": ["sensible"], "mean": [0.0], "scale": [1.0], "coef": [1.0], "bias": 0.0}))
    rows = {r["output"]: r for r in stress_table(2, ("truncation",), ensemble=str(ens))}
    low, high, whole = rows["quality, original rated < 3"], rows["quality, original rated >= 3"], rows["quality"]
    assert low["n"] > 0 and high["n"] > 0
    assert low["n"] + high["n"] == whole["n"]
    mixed = (low["fraction"] * low["n"] + high["fraction"] * high["n"]) / whole["n"]
    assert mixed == pytest.approx(whole["fraction"])
