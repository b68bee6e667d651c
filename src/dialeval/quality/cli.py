"""``dialeval quality``: train and compare the reference-free ``quality`` metric's parts on public data.

* ``dialeval quality train --recipe NAME -o OUT`` rebuilds the frozen heads (MiniLM's; ``--encoder`` another's)
  (``OUT/heads``: ``sensible.json``, ``fluent.json``, ``card.json``) and, for recipes with
  ``ensemble``, ``OUT/quality`` (``ensemble.json``, ``card.json`` with the
  leave-one-benchmark-out results). What the package ships (``src/dialeval/metrics/quality/bundled``,
  refused as ``-o``) is written by ``quality experiment --ship``, which takes such heads with ``--heads DIR``;
  the metric takes other folders with ``-p quality.heads=DIR -p quality.ensemble=FILE``.
* ``dialeval quality train-views OUT`` fine-tunes the multi-view cross-encoder
  (:mod:`dialeval.quality.crosstrain`; checkpointed, resumable).
* ``dialeval quality train-encoder OUT`` fine-tunes the sentence encoder contrastively
  (:mod:`dialeval.quality.bitrain`; checkpointed, resumable); ``train --encoder OUT/model`` trains heads over it.
* ``dialeval quality train-engagement OUT`` learns utterance engagement from Chit-Chat's
  conversation ratings (:mod:`dialeval.quality.engagement`).
* ``dialeval quality train-humanlike OUT`` learns to tell a true next turn from a small LM's
  reply (:mod:`dialeval.quality.humanlike`).
* ``dialeval quality experiment VIEWS_DIR`` compares the candidates leave-one-benchmark-out
  (:mod:`dialeval.quality.experiment`).
"""

from __future__ import annotations

import contextlib
import json
from pathlib import Path

import typer

from dialeval.atomic import staged_folder
from dialeval.commands.common import (
    N_BOOT_FLAGS,
    check_output,
    console,
    fail,
    fields_as_options,
    remove_earlier,
    say_removed,
    warn,
)
from dialeval.errors import DialevalError, InputError
from dialeval.words import with_ci

quality_app = typer.Typer(help="Train and compare the parts of the reference-free quality metric.",
                          no_args_is_help=True)  # fmt: skip


def train_self_supervised(output: Path, recipe_name: str, seed: int | None, n_boot: int, encoder: str = "",
                          device: str = "cpu") -> None:  # fmt: skip
    """Run a recipe (its seed replaced by ``seed`` unless that is None) and print the validation figures.

    ``encoder``: the frozen sentence encoder of the heads ("": the packaged MiniLM); ``device``: where it embeds.

    Raises:
        InputError: An unknown recipe, no shared data folder, or another encoder for a recipe with an ensemble.
    """
    import dataclasses

    from dialeval.metrics.quality import ENSEMBLE_FILES
    from dialeval.paths import shared_data_dir
    from dialeval.quality.ensemble import fit_ensemble
    from dialeval.quality.recipes import RECIPES, train_recipe

    if recipe_name not in RECIPES:
        raise InputError(f'unknown recipe "{recipe_name}"; use {", ".join(RECIPES)}', field="recipe")
    recipe = RECIPES[recipe_name]
    if seed is not None:  # 0 too ("if seed:" kept a recipe's own seed for --seed 0)
        recipe = dataclasses.replace(recipe, seed=seed)
    if encoder and recipe.ensemble:
        free = ", ".join(name for name, r in RECIPES.items() if not r.ensemble)
        raise InputError(f'recipe "{recipe_name}" also fits the ensemble, which reads the packaged MiniLM; '
                         f"--encoder goes with a recipe without one ({free})", field="encoder")
    data = shared_data_dir()
    if data is None:
        raise InputError("no shared data folder with the corpora: set DIALEVAL_DATA")

    def say(msg: str) -> None:
        console.print(msg, highlight=False)

    from dialeval.models.loading import DEFAULT_ENCODER, resolve_encoder_dir
    from dialeval.quality.crosstrain import check_device

    check_device(device)
    if encoder:
        resolve_encoder_dir(encoder, "encoder")  # a bad name or a missing package fails before any work
    with staged_folder(output) as stage:  # an interrupt or a failure keeps an earlier run's files as they were
        card = train_recipe(recipe, stage / "heads", data, encoder_name=encoder or DEFAULT_ENCODER, progress=say,
                            device=device)  # fmt: skip
        say("validation: " + json.dumps({k: {m: v[m] for m in ("accuracy", "auc")}
                                         for k, v in card["validation"].items()}))  # fmt: skip
        if recipe.ensemble:
            from dialeval.paths import cache_dir

            ens = fit_ensemble(
                stage / "heads", stage / "quality", cache=cache_dir() / "quality-features.json", n_boot=n_boot,
                seed=recipe.seed, progress=say,
            )
            for row in ens["leave_one_benchmark_out"]:
                q = row["quality"]
                say(f"{row['benchmark']:<24} spearman {with_ci(q['spearman'], *q['spearman_ci'])}"
                    f" (trained on {', '.join(row['trained_on'])})")
            from dialeval.meta.caveats import rough_resamples

            warn(rough_resamples(n_boot))
        # an earlier run's ensemble, fitted over other heads, stayed beside these, read with them as one run
        removed = [] if recipe.ensemble else remove_earlier(output, ENSEMBLE_FILES)
    if removed:
        with contextlib.suppress(OSError):  # the folder, when that emptied it
            (output / "quality").rmdir()
    say_removed(output, removed)
    say(f"wrote {output}")


#: The heads and their card, which ``quality train`` writes in its output folder beside the ensemble's
#: (:data:`dialeval.metrics.quality.ENSEMBLE_FILES`, imported where used: it would load the metric at CLI start).
HEAD_FILES = ("heads/sensible.json", "heads/fluent.json", "heads/card.json")

#: Fields the training library names as arguments, which these commands take as options of the same name.
LIBRARY_FIELDS = ("recipe", "encoder", "device")


@quality_app.command("train")
def train(
    output: Path = typer.Option(..., "--output", "-o", help="Folder for heads/ and quality/ with their cards."),
    recipe: str = typer.Option("default", "--recipe", help="default, all, all-hard or tiny."),
    seed: int | None = typer.Option(None, "--seed", help="Replaces the recipe's seed (each named recipe's is 0)."),
    n_boot: int = typer.Option(1000, *N_BOOT_FLAGS, help="Bootstrap resamples of contexts for the CIs."),
    encoder: str = typer.Option("", "--encoder", help="The heads' frozen encoder: all-mpnet-base-v2 or a "
                                "sentence-transformers folder (default: the packaged MiniLM); recipes without "
                                "an ensemble (all, all-hard, tiny)."),
    device: str = typer.Option("cpu", "--device", help="Where the texts are embedded: cpu or cuda."),
) -> None:
    """Rebuild the frozen heads (over MiniLM, or --encoder) and the ensemble from public unrated dialogues."""
    from dialeval.meta.agreement import check_resamples
    from dialeval.meta.correlate import check_boot
    from dialeval.metrics.quality import ENSEMBLE_FILES

    try:
        check_resamples(n_boot, field="--n-boot")  # the card's CIs (0 stopped in formatting None, after training)
        # a negative seed stopped the ensemble, after training
        check_boot(n_boot, field="--n-boot", seed=0 if seed is None else seed)
        check_output(output, "folder", files=(*HEAD_FILES, *ENSEMBLE_FILES))
        refuse_bundled(output)
        with fields_as_options(*LIBRARY_FIELDS):
            train_self_supervised(output, recipe, seed, n_boot, encoder, device)
    except DialevalError as exc:
        fail(exc)


def refuse_bundled(output: Path) -> None:
    """Refuse the package's ``bundled`` folder as ``quality train``'s output: ``quality experiment --ship`` writes it.

    The ensemble of a recipe with one is one that no comparison chose, beside the views of another run; a recipe
    without one removes the earlier ensemble (here the shipped one). Trained heads ship with ``--heads DIR``.

    Raises:
        InputError: ``output`` is (or reaches) the bundled folder.
    """
    from dialeval.metrics.quality import BUNDLED

    if output.resolve() == BUNDLED:
        raise InputError("is the folder the package ships, which dialeval quality experiment VIEWS --ship writes "
                         "(it takes heads trained elsewhere with --heads DIR); train into another folder",
                         path=output, field="--output")  # fmt: skip


#: The argparse commands below take every argument, ``--help`` included (their own help lists their options).
PASS_ON = {"allow_extra_args": True, "ignore_unknown_options": True, "help_option_names": []}


@quality_app.command("train-views", context_settings=PASS_ON)
def train_views(ctx: typer.Context) -> None:
    """Fine-tune the multi-view cross-encoder (arguments as python -m dialeval.quality.crosstrain --help)."""
    _pass_on("dialeval.quality.crosstrain", ctx.args, "dialeval quality train-views")


@quality_app.command("train-encoder", context_settings=PASS_ON)
def train_encoder(ctx: typer.Context) -> None:
    """Fine-tune the sentence encoder contrastively (arguments as python -m dialeval.quality.bitrain --help)."""
    _pass_on("dialeval.quality.bitrain", ctx.args, "dialeval quality train-encoder")


@quality_app.command("train-engagement", context_settings=PASS_ON)
def train_engagement(ctx: typer.Context) -> None:
    """Learn utterance engagement from Chit-Chat's ratings (arguments: python -m dialeval.quality.engagement)."""
    _pass_on("dialeval.quality.engagement", ctx.args, "dialeval quality train-engagement")


@quality_app.command("train-humanlike", context_settings=PASS_ON)
def train_humanlike(ctx: typer.Context) -> None:
    """Learn to tell a true next turn from a small LM's reply (arguments: python -m dialeval.quality.humanlike)."""
    _pass_on("dialeval.quality.humanlike", ctx.args, "dialeval quality train-humanlike")


@quality_app.command("experiment", context_settings=PASS_ON)
def experiment(ctx: typer.Context) -> None:
    """Compare quality candidates leave-one-benchmark-out (arguments: python -m dialeval.quality.experiment)."""
    _pass_on("dialeval.quality.experiment", ctx.args, "dialeval quality experiment")


@quality_app.command("measure", context_settings=PASS_ON)
def measure(ctx: typer.Context) -> None:
    """Measure quality's stress pairs or DSTC9 dialogue level (arguments: python -m dialeval.quality.measure)."""
    _pass_on("dialeval.quality.measure", ctx.args, "dialeval quality measure")


def _pass_on(module: str, args: list[str], prog: str) -> None:
    """Run ``module``'s ``main`` on the remaining arguments, its usage named ``prog``; errors are one line."""
    import importlib

    try:
        with fields_as_options(*LIBRARY_FIELDS):
            importlib.import_module(module).main(args, prog)
    except DialevalError as exc:
        fail(exc)
    except SystemExit as exc:  # argparse's --help (0) or its one-line usage error (2)
        raise typer.Exit(exc.code if isinstance(exc.code, int) else 1) from None


def module_main(module: str) -> None:
    """``python -m dialeval.quality.X``: run ``module`` as its ``dialeval quality`` command does, errors on one line."""
    import sys

    try:
        _pass_on(module, sys.argv[1:], f"python -m {module}")
    except typer.Exit as exc:
        raise SystemExit(exc.exit_code) from None


def register(app: typer.Typer) -> None:
    """Add the ``quality`` command group to the CLI."""
    app.add_typer(quality_app, name="quality")
