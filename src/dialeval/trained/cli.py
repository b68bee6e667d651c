"""``dialeval train``: fit trained evaluators on rated benchmarks, evaluate them as DiQAD does, save them.

Modes: with ``--test`` it trains on ``--train`` and tests on benchmarks never
seen in training (cross-benchmark transfer); with ``--logo system|domain|benchmark``
it holds out each group of the ``--train`` benchmarks in turn; with ``--folds K``
it cross-validates over contexts. Every split is by context. The model of each
kind fitted on all of ``--train`` is saved to ``OUTPUT/model-<kind>`` and can be
used as the metric ``trained:OUTPUT/model-<kind>``.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import typer

from dialeval.commands.common import (
    TableOptions,
    check_output,
    console,
    fail,
    load_inputs,
    out,
    split_list,
    table_options,
    write_text,
)
from dialeval.commands.options import quiet_option
from dialeval.commands.tables import ScreenTable
from dialeval.data.benchmark import Benchmark
from dialeval.errors import DialevalError, InputError
from dialeval.scoring import progress_bars

COLUMNS = ("accuracy", "uar", "kappa", "spearman", "pearson", "precision", "recall", "f1", "spearman_diff")
HEADERS = {"spearman_diff": "vs best metric"}


def _num(v: Any) -> str:
    return "" if v is None or (isinstance(v, float) and math.isnan(v)) else f"{v:.3f}"


def _cell(row: dict[str, Any], key: str) -> str:
    text = _num(row.get(key))
    ci = row.get(f"{key}_ci")
    if text and ci and ci[0] is not None and ci[1] is not None:
        text += f" [{ci[0]:.3f}, {ci[1]:.3f}]"
    return text


def to_markdown(rows: list[dict[str, Any]]) -> str:
    """Render result rows as a Markdown table.

    Example:
        >>> print(to_markdown([{"model": "m", "split": "s", "n": 4, "spearman": 0.5, "spearman_ci": [0.1, 0.8]}]))
        | model | split | n | accuracy | uar | kappa | spearman | pearson | precision | recall | f1 | vs best metric |
        |---|---|---|---|---|---|---|---|---|---|---|---|
        | m | s | 4 |  |  |  | 0.500 [0.100, 0.800] |  |  |  |  |  |
    """
    head = ["model", "split", "n", *(HEADERS.get(c, c) for c in COLUMNS)]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        cells = [str(r.get("model", "")), str(r.get("split", "")), str(r.get("n", ""))]
        lines.append("| " + " | ".join(cells + [_cell(r, k) for k in COLUMNS]) + " |")
    return "\n".join(lines)


def _table(rows: list[dict[str, Any]], title: str) -> ScreenTable:
    """Return the console table: the columns some row fills, in blocks that fit the width (nothing is cut)."""
    filled = [k for k in COLUMNS if any(_cell(r, k) for r in rows)]
    keys = [[str(r.get("model", "")), str(r.get("split", "")), str(r.get("n", ""))] for r in rows]
    values = [[_cell(r, k) for k in filled] for r in rows]
    heads = [HEADERS.get(k, k) for k in filled]
    return ScreenTable(title, ["model", "split", "n"], heads, list(zip(keys, values, strict=True)))


def _params(pairs: list[str]) -> dict[str, dict[str, Any]]:
    from dialeval.metrics.resolve import parse_params

    typed: dict[str, dict[str, Any]] = {}
    for fam, kv in parse_params(pairs).items():
        for k, v in kv.items():
            val: Any = v
            for cast in (int, float):
                try:
                    val = cast(v)
                    break
                except ValueError:
                    continue
            typed.setdefault(fam, {})[k] = val
    return typed


@table_options
def train(
    output: Path = typer.Option(..., "--output", "-o", help="Folder for results.jsonl, results.md and the models."),
    model: str = typer.Option("ensemble", "--model", help="Comma-separated: ensemble, ensemble-xgb, tfidf-lr, "
                              "tfidf-nb, xgboost, minilm."),
    train_on: str | None = typer.Option(None, "--train", help="Comma-separated catalog benchmarks to train on."),
    test: str | None = typer.Option(None, "--test", help="Comma-separated benchmarks never seen in training."),
    logo: str | None = typer.Option(None, "--logo", help="Leave one group out of --train: system, domain, benchmark."),
    folds: int = typer.Option(0, "--folds", help="K-fold cross-validation over the contexts of --train."),
    dimension: str | None = typer.Option(None, "--dimension", "-d", help="Dimension, for benchmarks that rate it "
                                         "(others use their overall-quality default)."),
    dim: list[str] = typer.Option([], "--dim", help="benchmark=dimension override; repeatable."),
    task: str = typer.Option("regression", "--task", help="regression (numeric target) or classification (0/1/2)."),
    target_norm: str = typer.Option("rank", "--target-norm", help="Per-benchmark target normalisation: rank, scale."),
    param: list[str] = typer.Option([], "--param", "-p", help="Model parameter, [model.]key=value; repeatable."),
    baselines: bool = typer.Option(False, "--baselines", help="Also correlate every offline metric on the test set."),
    n_boot: int = typer.Option(1000, "--n-boot", help="Bootstrap resamples of contexts for the CIs."),
    seed: int = typer.Option(0, "--seed", help="Seed for splits, models and bootstrap."),
    limit: int | None = typer.Option(None, "--limit", help="Only the first N contexts of each benchmark."),
    save_models: bool = typer.Option(True, "--save/--no-save", help="Save each model fitted on all of --train."),
    quiet: bool = quiet_option,
    self_supervised: bool = typer.Option(False, "--self-supervised", help="Rebuild the quality heads (and ensemble) "
                                         "from public unrated dialogues instead (see docs/quality.md)."),
    recipe: str = typer.Option("default", "--recipe", help="With --self-supervised: default or tiny."),
    path: Path | None = typer.Option(None, "--path", help="Your own rated table (.csv, .tsv, .jsonl; with "
                                     "--mapping or the --*-col options) or a folder of records; name it "
                                     "in --train or --test by its file name without suffix (or the "
                                     "mapping's name)."),
    table: TableOptions = TableOptions(),
) -> None:
    """Train evaluators on human ratings and evaluate them (Acc, UAR, kappa, Spearman, Pearson, P/R/F1)."""
    from dialeval.trained import experiment as xp
    from dialeval.trained import splits as sp
    from dialeval.trained import store

    try:
        check_output(output, "folder")
        if self_supervised:
            from dialeval.quality.cli import train_self_supervised

            train_self_supervised(output, recipe, seed, n_boot)
            return
        kinds = split_list(model) or []
        train_names = split_list(train_on) or []
        if not train_names:
            raise InputError("give --train (benchmarks to train on), or --self-supervised")
        test_names = split_list(test) or []
        if sum(bool(x) for x in (test_names, logo, folds)) != 1:
            raise InputError("give exactly one of --test, --logo, --folds")
        own: dict[str, Benchmark] = {}
        if path is not None:
            bench = load_inputs(None, path, None, None, None, None, table=table)
            own[bench.name] = bench
        xp.check_names(train_names, test_names, own=own)
        from dialeval.trained.models import make_evaluator

        params = _params(param)
        for k in kinds:  # fail on a bad name or parameter before any work
            make_evaluator(k, task, seed, **{**params.get("*", {}), **params.get(k, {})})
        per_kind = {k: {**params.get("*", {}), **params.get(k, {})} for k in kinds}
        overrides = xp.parse_dimensions(dim)
        common = {"dimension": dimension, "overrides": overrides, "target_norm": target_norm, "limit": limit,
                  "own": own}
        tr = xp.load_dataset(train_names, **common)  # type: ignore[arg-type]
        dims = dict(tr.dimensions)
        if test_names:
            te = xp.load_dataset(test_names, **common)  # type: ignore[arg-type]
            dims.update(te.dimensions)
            splits = [sp.cross_benchmark(tr.examples, te.examples)]
        elif logo:
            splits = sp.leave_one_group_out(tr.examples, logo, seed)
        else:
            splits = sp.context_folds(tr.examples, folds, seed)
        console.print("dimensions: " + ", ".join(f"{b}={d}" for b, d in dims.items()), highlight=False)

        def show(row: dict[str, Any]) -> None:
            console.print(f"{row['model']:<13} {row['split']:<28} spearman {_cell(row, 'spearman')}  "
                          f"({row['seconds']}s)", highlight=False)

        with progress_bars({}, quiet=quiet):  # the metric features' scoring shows a bar per family
            rows, models = xp.run_all(kinds, splits, task=task, params=per_kind, seed=seed, n_boot=n_boot, on_row=show)
        summary = xp.summarise_folds(rows) if len(splits) > 1 else []
        base: list[dict[str, Any]] = []
        if baselines and test_names:
            preds = {k: models[(k, splits[0].name)][1] for k in kinds}
            with progress_bars({}, quiet=quiet):
                base = xp.baseline_rows(splits[0], preds, n_boot=n_boot, seed=seed)
            for cmp in [b for b in base if "vs_metric" in b]:
                next(r for r in rows if r["model"] == cmp["model"]).update(cmp)
            base = [b for b in base if "vs_metric" not in b]
        saved: dict[str, str] = {}
        if save_models:
            training = {"benchmarks": train_names, "dimensions": {b: dims[b] for b in train_names},
                        "target_norm": target_norm, "n_examples": len(tr.examples)}
            from dialeval.trained.data import data_sha256

            training["data_sha256"] = data_sha256(tr.examples)
            for k in kinds:
                ev = models[(k, splits[0].name)][0] if test_names else None
                if ev is None:
                    ev = make_evaluator(k, task, seed, **per_kind[k])
                    ev.fit(tr.examples)
                mine = [r for r in rows if r["model"] == k]
                folder = output / f"model-{k}"
                saved[k] = store.save(ev, folder, store.build_card(ev, training, mine))
        all_rows = [*rows, *summary, *base]
        output.mkdir(parents=True, exist_ok=True)
        write_text(output / "results.jsonl", "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in all_rows))
        mode = f"leave one {logo} out" if logo else f"{folds} folds"
        mode = f"test on {','.join(test_names)}" if test_names else mode
        md = [f"# dialeval train: {mode}", "", f"train: {', '.join(train_names)}; task {task}; target {target_norm}; "
              "dimensions: " + ", ".join(f"{b}={d}" for b, d in dims.items()), "", to_markdown(all_rows), ""]
        if base:
            vs = next((r for r in rows if "vs_metric" in r), None)
            md.append(f"Paired: each model's Spearman minus that of the best single metric on the same items "
                      f"({vs['vs_metric'] if vs else '-'}), 95% CI from the same context resamples.\n")
        write_text(output / "results.md", "\n".join(md))
    except DialevalError as exc:
        fail(exc)
        return
    out.print(_table(all_rows, f"dialeval train: {mode}"))
    for k, sha in saved.items():
        console.print(f"saved {k} to {output / f'model-{k}'} (card sha256 {sha[:16]}); "
                      f"use it as -m trained:{output / f'model-{k}'}", highlight=False)
    console.print(f"wrote {output / 'results.jsonl'} and {output / 'results.md'}", highlight=False)


def register(app: typer.Typer) -> None:
    """Add ``train`` to the CLI."""
    app.command("train")(train)
