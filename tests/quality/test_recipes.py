"""Rebuilding the heads from the public corpora: deterministic, and the card says what went in."""

from __future__ import annotations

import hashlib
import json

import pytest

pytest.importorskip("sentence_transformers")

from dialeval.quality.corpora import ALLOWED
from dialeval.quality.recipes import Recipe, train_recipe

MICRO = Recipe("micro", per_source=4, chitchat_dialogues=2, seed=7, val_share=0.4, ensemble=False)


def sha(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture(scope="module")
def built(tmp_path_factory, shared_data):
    a, b = tmp_path_factory.mktemp("a"), tmp_path_factory.mktemp("b")
    return a, b, train_recipe(MICRO, a, shared_data), train_recipe(MICRO, b, shared_data)


def test_same_recipe_same_heads(built):
    a, b, _, _ = built
    for name in ("sensible.json", "fluent.json"):
        assert (a / name).read_bytes() == (b / name).read_bytes()


def test_card_names_data_recipe_seed_and_validation(built, shared_data):
    a, _, card, _ = built
    assert json.loads((a / "card.json").read_text()) == card
    assert card["recipe"]["name"] == "micro" and card["seed"] == 7
    files = {f["source"]: f for f in card["data_files"]}
    assert set(files) == set(MICRO.sources)  # the frozen heads' recipe predates Topical-Chat
    for name, rel in ALLOWED.items():
        if rel and name in MICRO.sources:
            assert files[name]["sha256"] == sha(shared_data / rel)
    from pathlib import Path

    import chitchat_dataset

    assert files["chitchat"]["sha256"] == sha(Path(chitchat_dataset.__file__).parent / "dataset.json")
    assert card["sources"] == {name: 4 for name in MICRO.sources}
    for part in ("sensible", "fluent"):
        assert card["files"][f"{part}.json"] == sha(a / f"{part}.json")
        val = card["validation"][part]
        assert val["n"] == card["examples"][part]["validation"] > 0
        assert 0.0 <= val["auc"] <= 1.0 and 0.0 <= val["accuracy"] <= 1.0
    # 16 true pairs: each gives a positive and a random negative, most a hard negative too
    assert card["examples"]["sensible"]["by_kind"]["true"] == 16
    assert card["examples"]["sensible"]["by_kind"]["random"] == 16
    import os

    assert card["encoder"]["name"] == "all-minilm-l6-v2" and f"{os.cpu_count()} CPUs" in card["machine"]


@pytest.mark.slow
def test_cli_rebuilds_the_tiny_recipe(tmp_path):
    from typer.testing import CliRunner

    from dialeval.cli import app

    res = CliRunner().invoke(app, ["quality", "train", "--recipe", "tiny", "-o", str(tmp_path)])
    assert res.exit_code == 0, res.output
    card = json.loads((tmp_path / "heads" / "card.json").read_text())
    assert card["recipe"]["name"] == "tiny" and card["validation"]["sensible"]["n"] > 0
    assert not (tmp_path / "quality").exists()  # tiny fits no ensemble
    # an earlier run's ensemble and its card (fitted over other heads, naming their card's sha256) stayed beside
    # the new heads, and the metric read them together as one run; they go when the new heads go into place
    (tmp_path / "quality").mkdir()
    for name in ("ensemble.json", "card.json"):
        (tmp_path / "quality" / name).write_text('{"earlier": "run"}')
    res = CliRunner().invoke(app, ["quality", "train", "--recipe", "tiny", "-o", str(tmp_path)])
    assert res.exit_code == 0, res.output
    assert not (tmp_path / "quality").exists()
    said = " ".join(res.output.split())
    assert f"removed {tmp_path}/{{quality/ensemble.json, quality/card.json}}: an earlier run's" in said
    assert sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*")) == [
        "heads", "heads/card.json", "heads/fluent.json", "heads/sensible.json"]


def test_cli_a_recipe_without_an_ensemble_removes_an_earlier_runs_ensemble(tmp_path, monkeypatch):
    """The fast twin of the rebuild above: the training replaced by one that writes three files at once."""
    from typer.testing import CliRunner

    from dialeval.cli import app

    def fake_train(recipe, output, data, **_kwargs):
        output.mkdir(parents=True)
        for name in ("sensible.json", "fluent.json", "card.json"):
            (output / name).write_text(recipe.name)
        return {"validation": {"sensible": {"accuracy": 1.0, "auc": 1.0}}}

    monkeypatch.setattr("dialeval.quality.recipes.train_recipe", fake_train)
    (tmp_path / "quality").mkdir()
    for name in ("ensemble.json", "card.json"):
        (tmp_path / "quality" / name).write_text("earlier run")
    res = CliRunner().invoke(app, ["quality", "train", "--recipe", "tiny", "-o", str(tmp_path)])
    assert res.exit_code == 0, res.output
    assert f"removed {tmp_path}/{{quality/ensemble.json, quality/card.json}}" in " ".join(res.output.split())
    assert sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*")) == [
        "heads", "heads/card.json", "heads/fluent.json", "heads/sensible.json"]
    assert (tmp_path / "heads" / "card.json").read_text() == "tiny"
    # a file of the user's in quality/ keeps the folder (only the ensemble and its card are this command's)
    (tmp_path / "quality").mkdir()
    (tmp_path / "quality" / "notes.txt").write_text("mine")
    (tmp_path / "quality" / "card.json").write_text("earlier run")
    res = CliRunner().invoke(app, ["quality", "train", "--recipe", "tiny", "-o", str(tmp_path)])
    assert res.exit_code == 0, res.output
    assert sorted(p.name for p in (tmp_path / "quality").iterdir()) == ["notes.txt"]


def test_cli_refuses_to_train_into_the_folder_the_package_ships(monkeypatch):
    """docs/quality.md said -o src/dialeval/metrics/quality/bundled "replaces what ships"; it put an ensemble that
    no comparison chose beside the views of another run (default), or, with a recipe without one, removed the
    shipped ensemble. What ships is written by quality experiment --ship (--heads DIR brings trained heads)."""
    from typer.testing import CliRunner

    from dialeval.cli import app
    from dialeval.metrics.quality import BUNDLED

    def no_work(*_args, **_kwargs):
        raise AssertionError("trained before the output was checked")

    monkeypatch.setattr("dialeval.quality.recipes.train_recipe", no_work)
    before = {p: p.read_bytes() for p in BUNDLED.rglob("*") if p.is_file()}
    for recipe in ("default", "tiny"):
        res = CliRunner().invoke(app, ["quality", "train", "--recipe", recipe, "-o", str(BUNDLED / "heads" / "..")])
        assert res.exit_code == 2 and "Traceback" not in res.output, res.output
        said = " ".join(res.output.split())
        assert 'field "--output": is the folder the package ships, which dialeval quality experiment' in said
    assert {p: p.read_bytes() for p in BUNDLED.rglob("*") if p.is_file()} == before


def test_cli_unknown_recipe_is_one_clear_error(tmp_path):
    from typer.testing import CliRunner

    from dialeval.cli import app

    res = CliRunner().invoke(app, ["quality", "train", "--recipe", "huge", "-o", str(tmp_path)])
    assert res.exit_code != 0 and 'unknown recipe "huge"' in res.output and "Traceback" not in res.output


def test_cli_a_folder_where_a_file_is_written_is_refused_before_training(tmp_path):
    """heads/card.json a folder: the run trained for half a minute (tiny), replaced both heads, then died in an
    IsADirectoryError traceback writing the card, leaving heads that no card described."""
    from typer.testing import CliRunner

    from dialeval.cli import app

    (tmp_path / "heads" / "card.json").mkdir(parents=True)
    (tmp_path / "heads" / "sensible.json").write_text("earlier run")
    res = CliRunner().invoke(app, ["quality", "train", "--recipe", "tiny", "-o", str(tmp_path)])
    assert res.exit_code == 2 and "Traceback" not in res.output, res.output
    said = " ".join(res.output.split())
    assert f'error: {tmp_path}/heads/card.json: field "--output": is an existing folder' in said
    assert "embedded" not in res.output  # before any work
    assert (tmp_path / "heads" / "sensible.json").read_text() == "earlier run"
    assert sorted(p.name for p in (tmp_path / "heads").iterdir()) == ["card.json", "sensible.json"]


def test_the_all_recipe_draws_from_every_allowed_corpus(shared_data):
    import dataclasses

    from dialeval.quality.recipes import RECIPES, draw_pairs

    small = dataclasses.replace(RECIPES["all"], per_source=5, chitchat_dialogues=10)
    pairs = draw_pairs(small, shared_data)
    counts = {name: sum(p.source == name for p in pairs) for name in ALLOWED}
    assert counts == dict.fromkeys(ALLOWED, 5)  # Topical-Chat and Chit-Chat included, no other file
    assert RECIPES["all"].chitchat_dialogues == 7168  # the whole Chit-Chat corpus (docs/quality-search.md)


def test_cli_another_encoder_with_an_ensemble_recipe_or_a_bad_name_is_one_clear_error(tmp_path):
    from typer.testing import CliRunner

    from dialeval.cli import app

    res = CliRunner().invoke(app, ["quality", "train", "--recipe", "default", "--encoder", "all-mpnet-base-v2",
                                   "-o", str(tmp_path / "a")])  # fmt: skip
    assert res.exit_code == 2 and 'field "--encoder"' in res.output and "Traceback" not in res.output
    assert "without one (all, all-hard, tiny)" in " ".join(res.output.split())  # the recipes without an ensemble
    res = CliRunner().invoke(app, ["quality", "train", "--recipe", "tiny", "--encoder", str(tmp_path / "none"),
                                   "-o", str(tmp_path / "b")])  # fmt: skip
    assert res.exit_code == 2 and "neither a packaged encoder" in res.output
    assert not (tmp_path / "a").exists() and not (tmp_path / "b" / "heads").exists()


def test_cli_a_device_torch_does_not_know_or_cannot_see_is_one_clear_error_before_any_work(tmp_path):
    from typer.testing import CliRunner

    from dialeval.cli import app

    res = CliRunner().invoke(app, ["quality", "train", "--recipe", "tiny", "--device", "gpu", "-o", str(tmp_path)])
    assert res.exit_code == 2 and "Traceback" not in res.output
    expected = 'field "--device": "gpu" is not a device training runs on; use cpu, cuda or cuda:N'
    assert expected in " ".join(res.output.split())
    assert not (tmp_path / "heads").exists()
