"""``dialeval quality`` train-views, train-encoder and experiment hand every argument, ``--help`` too, to argparse."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from dialeval.cli import app


@pytest.mark.parametrize(
    ("command", "option"),
    [("train-views", "--overlap-negatives"), ("train-encoder", "--recipe"), ("experiment", "--tuned-heads")],
    ids=["train", "train-encoder", "experiment"],
)
def test_help_lists_the_commands_own_options_under_its_own_name(command: str, option: str) -> None:
    res = CliRunner().invoke(app, ["quality", command, "--help"])
    assert res.exit_code == 0, res.output
    assert f"usage: dialeval quality {command}" in res.output
    assert option in res.output  # typer's own help would list only --help


def test_a_missing_argument_is_argparses_one_line_error_and_exit_code_2() -> None:
    res = CliRunner().invoke(app, ["quality", "train-views"])
    assert res.exit_code == 2
    assert "dialeval quality train-views: error: the following arguments are required: out" in res.output
    assert "Traceback" not in res.output


def test_an_unknown_recipe_for_the_encoder_run_is_one_line_before_any_work(tmp_path) -> None:
    res = CliRunner().invoke(app, ["quality", "train-encoder", str(tmp_path / "run"), "--recipe", "bogus"])
    assert res.exit_code == 2
    # the options' names (they named the library's arguments, "recipe" and "device")
    assert 'error: field "--recipe": unknown recipe "bogus"; use default, all, all-hard, tiny' in res.output
    assert not (tmp_path / "run").exists()


def test_the_encoder_run_checks_its_device_and_encoder_before_any_work(tmp_path) -> None:
    res = CliRunner().invoke(app, ["quality", "train-encoder", str(tmp_path / "run"), "--device", "gpu"])
    assert res.exit_code == 2
    assert 'field "--device": "gpu" is not a device training runs on; use cpu, cuda or cuda:N' in res.output
    res = CliRunner().invoke(app, ["quality", "train-encoder", str(tmp_path / "run"), "--encoder", str(tmp_path / "x")])
    assert res.exit_code == 2 and "is neither a packaged encoder" in res.output
    res = CliRunner().invoke(app, ["quality", "train-encoder", str(tmp_path / "run"), "--rebuild"])
    assert res.exit_code == 2 and "no card.json to rebuild from" in res.output
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize(
    ("module", "args", "message"),
    [("measure", ["stress", "--card", "missing.json"], "missing.json"),
     ("crosstrain", ["run", "--encoder", "no-such-encoder"], "neither a packaged encoder"),
     ("experiment", ["no-such-views"], "no-such-views")],
)
def test_python_dash_m_gives_the_same_one_line_errors_as_the_cli(tmp_path, module, args, message) -> None:
    """The lab notebook (docs/quality-search.md) runs ``python -m dialeval.quality.*``: bad input is one line."""
    import subprocess
    import sys

    res = subprocess.run([sys.executable, "-m", f"dialeval.quality.{module}", *args], cwd=tmp_path,
                         capture_output=True, text=True, timeout=300)  # fmt: skip
    assert res.returncode == 2, res.stderr
    assert "Traceback" not in res.stderr + res.stdout
    assert message in res.stdout + res.stderr
    res = subprocess.run([sys.executable, "-m", f"dialeval.quality.{module}"], capture_output=True, text=True,
                         timeout=300)  # fmt: skip
    assert res.returncode == 2 and f"usage: python -m dialeval.quality.{module}" in res.stderr  # argparse's own


@pytest.mark.parametrize(("args", "message"), [
    (["--n-boot", "0"], 'field "--n-boot": must be at least 1 (the bootstrap resamples of the CIs), got 0'),
    (["--seed", "-1"], 'field "--seed": must be >= 0, got -1'),
])  # fmt: skip
def test_quality_train_checks_its_bootstrap_before_any_training(tmp_path, args, message) -> None:
    """With a recipe that fits the ensemble, both stopped after the training, in its figures (0 resamples in
    formatting a CI of None, a negative seed in the bootstrap); tiny, which fits none, trained and exited 0."""
    res = CliRunner().invoke(app, ["quality", "train", "-o", str(tmp_path / "out"), "--recipe", "tiny", *args])
    assert res.exit_code == 2 and f"error: {message}" in res.output, res.output
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    ("command", "args", "argument"),
    [("train-views", ["{out}"], "out"), ("train-encoder", ["{out}"], "out"), ("train-engagement", ["{out}"], "output"),
     ("train-humanlike", ["{out}"], "output"), ("experiment", ["views", "-o", "{out}"], "-o/--out"),
     ("experiment", ["views", "--ship", "{out}"], "--ship")],
)
def test_an_output_folder_that_is_a_file_is_one_usage_line_before_any_work(tmp_path, command, args, argument) -> None:
    """They made the folder on their first write, after the work: experiment -o FILE trained its candidates over
    the rated sets (80 s at --limit 1) and ended in a FileExistsError traceback; FILE/run a NotADirectoryError."""
    (tmp_path / "file").write_text("mine")
    for out, said in ((tmp_path / "file", "is an existing file; give a folder to write the outputs in"),
                      (tmp_path / "file" / "run", f"cannot be created: {tmp_path / 'file'} is a file, not a folder")):
        res = CliRunner().invoke(app, ["quality", command, *(a.format(out=out) for a in args)])
        assert res.exit_code == 2 and "Traceback" not in res.output, res.output
        assert f"dialeval quality {command}: error: argument {argument}: {said}" in " ".join(res.output.split())
    assert (tmp_path / "file").read_text() == "mine"


@pytest.mark.parametrize(("given", "trained"), [(["--seed", "0"], 0), (["--seed", "5"], 5), ([], 7)])
def test_quality_train_seed_0_is_a_seed_like_any_other(tmp_path, monkeypatch, given, trained) -> None:
    """``if seed:`` read --seed 0 as "not given": a recipe seeded otherwise (7 here) trained with its own seed, so 0
    could not be chosen. The recipe's seed is now replaced by any --seed given, 0 included, and kept without one."""
    import dataclasses

    from dialeval.errors import InputError
    from dialeval.quality import recipes

    monkeypatch.setitem(recipes.RECIPES, "seven", dataclasses.replace(recipes.RECIPES["tiny"], name="seven", seed=7))
    seeds: list[int] = []

    def stop(recipe: recipes.Recipe, *args: object, **kwargs: object) -> dict[str, object]:
        seeds.append(recipe.seed)
        raise InputError("stopped before training")

    monkeypatch.setattr(recipes, "train_recipe", stop)
    monkeypatch.setenv("DIALEVAL_DATA", str(tmp_path))  # any folder: the stub reads nothing
    res = CliRunner().invoke(app, ["quality", "train", "-o", str(tmp_path / "out"), "--recipe", "seven", *given])
    assert res.exit_code == 2 and "stopped before training" in res.output, res.output
    assert seeds == [trained]


def test_quality_train_names_its_encoder_option_for_an_unknown_encoder(tmp_path, monkeypatch) -> None:
    """The encoder was looked up under the library's default field: 'field "model"', which no option of
    quality train is; it now names --encoder, as train-encoder's check does, before any training."""
    monkeypatch.setenv("DIALEVAL_DATA", str(tmp_path))  # any folder: the check comes before reading the data
    res = CliRunner().invoke(app, ["quality", "train", "-o", str(tmp_path / "out"), "--recipe", "tiny",
                                   "--encoder", "no-such-encoder"])  # fmt: skip
    assert res.exit_code == 2, res.output
    assert 'error: field "--encoder": "no-such-encoder" is neither a packaged encoder' in res.output
    assert not (tmp_path / "out").exists()
