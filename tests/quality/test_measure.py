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


def test_record_writes_the_rows_under_measured_and_keeps_the_rest_of_the_card(tmp_path):
    from dialeval.quality.measure import record

    card = tmp_path / "card.json"
    card.write_text(json.dumps({"model": "ridge", "leave_one_benchmark_out": [{"benchmark": "usr-tc"}]}))
    record(card, "stress", [{"perturbation": "negation", "fraction": 0.5, "ci_low": float("nan")}], "measure stress")
    record(card, "dialogue", [{"metric": "quality", "value": 0.8}], "measure dialogue --per-system 3")
    saved = json.loads(card.read_text())  # strict JSON: NaN would not parse back as a float
    assert saved["model"] == "ridge" and saved["leave_one_benchmark_out"] == [{"benchmark": "usr-tc"}]
    assert saved["measured"]["stress"]["rows"] == [{"perturbation": "negation", "fraction": 0.5, "ci_low": None}]
    assert saved["measured"]["dialogue"]["rows"] == [{"metric": "quality", "value": 0.8}]
    assert saved["measured"]["dialogue"]["command"] == "measure dialogue --per-system 3"
    assert "CPUs" in saved["measured"]["dialogue"]["machine"] and saved["measured"]["stress"]["date"][:2] == "20"


@pytest.mark.parametrize(("text", "message"), [
    (None, "cannot read the card"), ('{"model": ', "not a JSON card"), ("[1, 2]", "not a JSON object but a list"),
])  # fmt: skip
def test_record_refuses_a_card_it_cannot_read_and_leaves_it_as_it_was(tmp_path, text, message):
    from dialeval.errors import InputError
    from dialeval.quality.measure import record

    card = tmp_path / "card.json"
    if text is not None:
        card.write_text(text)
    with pytest.raises(InputError, match=message) as err:
        record(card, "stress", [{"fraction": 0.5}], "measure stress")
    assert "card.json" in str(err.value) and "--card" in str(err.value)
    assert (card.read_text() if text is not None else None) == text
    assert sorted(p.name for p in tmp_path.iterdir()) == (["card.json"] if text is not None else [])


@pytest.mark.usefixtures("shared_data")
def test_the_command_writes_the_stress_rows_it_prints_into_the_card(tmp_path, monkeypatch, capsys):
    from dialeval.quality.measure import main

    monkeypatch.setenv("DIALEVAL_CACHE", str(tmp_path / "cache"))
    card = tmp_path / "card.json"
    card.write_text('{"model": "ridge"}')
    main(["stress", "--contexts", "1", "--card", str(card)])
    lines = capsys.readouterr().out.strip().splitlines()
    printed = json.loads(lines[-1], parse_constant=lambda c: pytest.fail(f"{c} is no JSON"))
    measured = json.loads(card.read_text())["measured"]["stress"]
    # one context has no other context to swap in: its other-context rows count 0 pairs, null printed and kept
    # (the table said "nan" in each cell, the JSON line NaN)
    assert printed == measured["rows"]
    assert any(line.startswith("| other-context |") and "| 0 | n/a | n/a | n/a |" in line for line in lines)
    assert {r["perturbation"] for r in printed} == {"other-context", "negation", "repetition", "truncation"}
    assert any(r["n"] == 6 and r["fraction"] is not None for r in measured["rows"])
    assert measured["command"] == f"python -m dialeval.quality.measure stress --contexts 1 --card {card}"


def test_the_cli_refuses_a_bad_card_in_one_line_before_measuring(tmp_path, monkeypatch):
    from typer.testing import CliRunner

    from dialeval.cli import app

    monkeypatch.setenv("DIALEVAL_CACHE", str(tmp_path / "cache"))
    card = tmp_path / "card.json"
    card.write_text("[]")
    res = CliRunner().invoke(app, ["quality", "measure", "dialogue", "--per-system", "1", "--card", str(card)])
    assert res.exit_code == 2, res.output
    assert "not a JSON object but a list" in res.output and "Traceback" not in res.output
    assert not (tmp_path / "cache" / "quality-dstc9.json").exists()  # refused before any turn was scored


def test_views_beside_a_bundle_is_refused_not_dropped(tmp_path, monkeypatch):
    """--bundle sets the views to BUNDLE/views: a --views given too was dropped without a word, and the table
    measured other views than the ones asked for."""
    from typer.testing import CliRunner

    from dialeval.cli import app

    monkeypatch.setenv("DIALEVAL_CACHE", str(tmp_path / "cache"))
    args = ["quality", "measure", "stress", "--contexts", "1", "--views", str(tmp_path / "v"),
            "--bundle", str(tmp_path / "b")]  # fmt: skip
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 2, res.output
    assert "argument --bundle: not allowed with argument --views" in res.output and "Traceback" not in res.output
    assert not (tmp_path / "cache").exists()  # refused before any work
