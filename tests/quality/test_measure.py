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
