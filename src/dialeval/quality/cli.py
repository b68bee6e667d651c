"""``dialeval train --self-supervised --recipe NAME``: rebuild the shipped heads (and the ensemble) from public data.

Writes ``OUTPUT/heads`` (``sensible.json``, ``fluent.json``, ``card.json``) and, for
recipes with ``ensemble``, ``OUTPUT/quality`` (``ensemble.json``, ``card.json`` with the
leave-one-benchmark-out results). ``-o src/dialeval/quality/bundled`` rebuilds what the
package ships; the metric takes other folders with ``-p quality.heads=DIR
-p quality.ensemble=FILE``.
"""

from __future__ import annotations

import json
from pathlib import Path

from dialeval.commands.common import console
from dialeval.errors import InputError


def train_self_supervised(output: Path, recipe_name: str, seed: int, n_boot: int) -> None:
    """Run a recipe (its seed replaced by ``seed`` when that is not 0) and print the validation figures.

    Raises:
        InputError: An unknown recipe, or no shared data folder.
    """
    import dataclasses

    from dialeval.paths import shared_data_dir
    from dialeval.quality.ensemble import fit_ensemble
    from dialeval.quality.recipes import RECIPES, train_recipe

    if recipe_name not in RECIPES:
        raise InputError(f'unknown recipe "{recipe_name}"; use {", ".join(RECIPES)}', field="recipe")
    recipe = RECIPES[recipe_name]
    if seed:
        recipe = dataclasses.replace(recipe, seed=seed)
    data = shared_data_dir()
    if data is None:
        raise InputError("no shared data folder with the corpora: set DIALEVAL_DATA")

    def say(msg: str) -> None:
        console.print(msg, highlight=False)

    card = train_recipe(recipe, output / "heads", data, progress=say)
    say("validation: " + json.dumps({k: {m: v[m] for m in ("accuracy", "auc")} for k, v in card["validation"].items()}))
    if recipe.ensemble:
        from dialeval.paths import cache_dir

        ens = fit_ensemble(
            output / "heads", output / "quality", cache=cache_dir() / "quality-features.json", n_boot=n_boot,
            seed=recipe.seed, progress=say,
        )
        for row in ens["leave_one_benchmark_out"]:
            q = row["quality"]
            lo, hi = q["spearman_ci"]
            say(f"{row['benchmark']:<24} spearman {q['spearman']:.3f} [{lo:.3f}, {hi:.3f}]"
                f" (trained on {', '.join(row['trained_on'])})")
    say(f"wrote {output}")
