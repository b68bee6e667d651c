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
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import typer

from dialeval.atomic import all_or_nothing
from dialeval.commands.common import (
    N_BOOT_FLAGS,
    TableOptions,
    check_output,
    console,
    fail,
    interrupted_run,
    load_inputs,
    out,
    replaced_note,
    table_options,
    warn,
    write_text,
)
from dialeval.commands.options import run_options
from dialeval.commands.tables import ScreenTable
from dialeval.data.benchmark import Benchmark
from dialeval.errors import DialevalError, InputError, ensure_unique
from dialeval.meta.caveats import rough_resamples
from dialeval.report.build import result_notes, train_cell, train_table
from dialeval.report.doc import table_markdown
from dialeval.runinfo import TrainRun, write_run_info
from dialeval.scoring import ScoringContext, ScoringRequest
from dialeval.words import split_names

#: What ``train`` writes in OUTPUT, beside the ``model-<kind>`` folders.
RESULT_FILES = TrainRun.FILES


def to_markdown(rows: list[dict[str, Any]]) -> str:
    """Render result rows as a Markdown table, every measure a column.

    Example:
        >>> print(to_markdown([{"model": "m", "split": "s", "n": 4, "spearman": 0.5, "spearman_ci": [0.1, 0.8]}]))
        | model | split | n | accuracy | uar | kappa | spearman | pearson | precision | recall | f1 | vs best metric |
        |---|---|---|---|---|---|---|---|---|---|---|---|
        | m | s | 4 |  |  |  | 0.500 [0.100, 0.800] |  |  |  |  |  |
    """
    return "\n".join(table_markdown(train_table(rows, "", every_column=True)))


def _table(rows: list[dict[str, Any]], title: str) -> ScreenTable:
    """Return the console table: the columns some row fills, in blocks that fit the width (nothing is cut)."""
    table = train_table(rows, title)
    return ScreenTable(title, table.header[:3], table.header[3:], [(row[:3], row[3:]) for row in table.rows])


def _params(pairs: list[str], kinds: list[str]) -> dict[str, dict[str, Any]]:
    """Return ``--model-param``'s pairs by model, numbers as numbers; a model not in ``kinds`` is refused."""
    from dialeval.metrics.resolve import parse_params

    typed: dict[str, dict[str, Any]] = {}
    for fam, kv in parse_params(pairs, "--model-param").items():
        if fam != "*" and fam not in kinds:  # its parameters were ignored, silently
            raise InputError(f'names the model "{fam}", which is not in --model', field="--model-param")
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


@dataclass
class _Plan:
    """What ``train`` will do, checked before any work: models, benchmarks, splits."""

    kinds: list[str]
    train_names: list[str]
    test_names: list[str]
    per_kind: dict[str, dict[str, Any]]
    data: Any  # experiment.Dataset of --train
    dims: dict[str, str]
    splits: list[Any]
    mode: str


def _plan(
    model: str, train_on: str | None, test: str | None, logo: str | None, folds: int | None, task: str, seed: int,
    param: list[str], path: Path | None, table: TableOptions, common: dict[str, Any], baselines: bool = False,
) -> _Plan:  # fmt: skip
    """Check the names and parameters, load the benchmarks and split them (no model is fitted yet)."""
    from dialeval.trained import experiment as xp
    from dialeval.trained import splits as sp
    from dialeval.trained.models import make_evaluator

    kinds = split_names(model, "--model", "model")
    train_names = split_names(train_on, "--train", "benchmark") or []
    test_names = split_names(test, "--test", "benchmark") or []
    logo = None if logo is None else logo.strip()  # a name, as --train's: " system" could not group
    own: dict[str, Benchmark] = {}
    if path is not None:
        bench = load_inputs(None, path, None, None, None, table=table)
        own[bench.name] = bench
    if not train_names:
        hint = f'; your table is named "{next(iter(own))}": e.g. --train {next(iter(own))} --folds 5' if own else ""
        raise InputError(f"give --train (benchmarks to train on{hint}); "
                         "the quality heads train with dialeval quality train")  # fmt: skip
    for name in own:  # a table given and named on neither side was loaded and then not used
        if name not in (*train_names, *test_names):
            raise InputError(f'your table is "{name}": name it in --train or --test', path=path, field="--path")
    given = [o for o, x in (("--test", test_names), ("--logo", logo), ("--folds", folds is not None)) if x]
    if len(given) != 1:  # --folds 0 was "give exactly one of ..."; it said neither which nor how many were given
        what = f"{', '.join(given[:-1])} and {given[-1]} are {'both' if len(given) == 2 else 'all'} given" if given \
            else "none is given"
        raise InputError(f"give exactly one of --test, --logo, --folds ({what}): how to split --train")
    if folds is not None and folds < 2:
        raise InputError(f"must be at least 2, got {folds}", field="--folds")
    if baselines and not test_names:  # with --folds or --logo it wrote no metric row, and said nothing of it
        raise InputError("correlates every offline metric on the --test benchmarks: it applies with --test only, "
                         f"not with {given[0]}", field="--baselines")  # fmt: skip
    ensure_unique(kinds, "--model", "model")  # each model's rows were written twice
    xp.check_names(train_names, test_names, own=own)
    for name in common["overrides"]:  # a name in neither was ignored, silently
        if name not in (*train_names, *test_names):
            raise InputError(f'names "{name}", which is not in --train or --test', field="--dim")
    params = _params(param, kinds)
    per_kind = {k: {**params.get("*", {}), **params.get(k, {})} for k in kinds}
    for k in kinds:  # fail on a bad name or parameter before any work
        make_evaluator(k, task, seed, **per_kind[k]).check()
    tr = xp.load_dataset(train_names, **common, own=own)
    dims = dict(tr.dimensions)
    if test_names:
        te = xp.load_dataset(test_names, **common, own=own)
        dims.update(te.dimensions)
    _check_dimension(common["dimension"], dims)
    if test_names:
        splits = [sp.cross_benchmark(tr.examples, te.examples)]
    elif logo:
        splits = sp.leave_one_group_out(tr.examples, logo, seed)
    else:
        assert folds is not None  # exactly one of --test, --logo and --folds was given (checked above)
        splits = sp.context_folds(tr.examples, folds, seed)
    mode = f"test on {','.join(test_names)}" if test_names else f"leave one {logo} out" if logo else f"{folds} folds"
    return _Plan(kinds, train_names, test_names, per_kind, tr, dims, splits, mode)


def _check_dimension(dimension: str | None, dims: dict[str, str]) -> None:
    """Refuse a ``-d`` that no benchmark of the run learns (a typo ran each one's default, silently).

    Example:
        >>> _check_dimension("Engaging", {"usr-tc": "Engaging", "gupta-dailydialog": "Overall"})
    """
    if dimension is not None and dimension not in dims.values():
        used = ", ".join(f"{b}={d}" for b, d in dims.items())
        raise InputError(f'no benchmark learns "{dimension}" (they rate other dimensions, or --dim chose one for '
                         f"them); they learn: {used}", field="--dimension")  # fmt: skip


def _evaluate(
    plan: _Plan, task: str, seed: int, n_boot: int, baselines: bool, run: ScoringContext
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], dict[tuple[str, str], Any]]:
    """Fit and test every model on every split; return its rows, the baseline metrics' rows and the models."""
    from dialeval.trained import experiment as xp

    def show(row: dict[str, Any]) -> None:
        console.print(f"{row['model']:<13} {row['split']:<28} spearman {train_cell(row, 'spearman')}  "
                      f"({row['seconds']}s)", highlight=False)  # fmt: skip

    with run.bars({}):  # the metric features' scoring shows a bar per family
        rows, models = xp.run_all(
            plan.kinds, plan.splits, task=task, params=plan.per_kind, seed=seed, n_boot=n_boot, on_row=show
        )
    base: list[dict[str, Any]] = []
    if baselines:  # with --test only (_plan)
        preds = {k: models[(k, plan.splits[0].name)][1] for k in plan.kinds}
        with run.bars({}):
            base = xp.baseline_rows(plan.splits[0], preds, n_boot=n_boot, seed=seed)
        for cmp in [b for b in base if "vs_metric" in b]:
            next(r for r in rows if r["model"] == cmp["model"]).update(cmp)
        base = [b for b in base if "vs_metric" not in b]
    return rows, base, models


def _save_models(
    plan: _Plan, rows: list[dict[str, Any]], models: dict[tuple[str, str], Any], output: Path, task: str,
    seed: int, target_norm: str,
) -> dict[str, str]:  # fmt: skip
    """Save each model fitted on all of --train (fitted here unless a --test run already did); return card hashes."""
    from dialeval.trained import store
    from dialeval.trained.data import data_sha256
    from dialeval.trained.models import make_evaluator

    training = {"benchmarks": plan.train_names, "dimensions": {b: plan.dims[b] for b in plan.train_names},
                "target_norm": target_norm, "n_examples": len(plan.data.examples),
                "data_sha256": data_sha256(plan.data.examples)}  # fmt: skip
    saved: dict[str, str] = {}
    for k in plan.kinds:
        ev = models[(k, plan.splits[0].name)][0] if plan.test_names else None
        if ev is None:
            ev = make_evaluator(k, task, seed, **plan.per_kind[k])
            ev.fit(plan.data.examples)
        mine = [r for r in rows if r["model"] == k]
        saved[k] = store.save(ev, output / f"model-{k}", store.build_card(ev, training, mine))
    return saved


def _write_results(
    plan: _Plan, rows: list[dict[str, Any]], all_rows: list[dict[str, Any]], has_base: bool, output: Path,
    task: str, target_norm: str, warnings: Sequence[str] = (),
) -> None:  # fmt: skip
    """Write results.jsonl and results.md, the ``warnings`` at its end (run.json: :func:`_run_info`)."""
    output.mkdir(parents=True, exist_ok=True)
    write_text(output / "results.jsonl", "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in all_rows))
    md = [f"# dialeval train: {plan.mode}", "", f"train: {', '.join(plan.train_names)}; task {task}; target "
          f"{target_norm}; dimensions: " + ", ".join(f"{b}={d}" for b, d in plan.dims.items()), "",
          to_markdown(all_rows), ""]  # fmt: skip
    md += [f"{note}\n" for note in _notes(all_rows)]
    if has_base:
        vs = next((r for r in rows if "vs_metric" in r), None)
        md.append(f"Paired: each model's Spearman minus that of the best single metric on the same items "
                  f"({vs['vs_metric'] if vs else '-'}), 95% CI from the same context resamples.\n")  # fmt: skip
    md += [f"{w}\n" for w in warnings]
    write_text(output / "results.md", "\n".join(md))


def _notes(rows: Sequence[dict[str, Any]]) -> list[str]:
    """Return the result notes (:func:`~dialeval.report.build.result_notes`), then those of unobserved features.

    One per model for the features that no training example had a value of (``fit.unobserved``, recorded by
    :class:`~dialeval.trained.models.Ensemble`): scikit-learn's imputer warned of them on every transform, by column
    index; they are said once here, with the splits they were left out in.

    Example:
        >>> _notes([{"model": "ensemble", "split": f"fold{i}/2", "fit": {"unobserved": ["f1"]}} for i in (1, 2)])
        ... # doctest: +ELLIPSIS
        ['note: ensemble on fold1/2, fold2/2: no training example has a value of f1 (a metric that needs ...']
    """
    splits: dict[tuple[str, tuple[str, ...]], list[str]] = {}
    for r in rows:
        if unobserved := (r.get("fit") or {}).get("unobserved"):
            splits.setdefault((str(r["model"]), tuple(unobserved)), []).append(str(r["split"]))
    return [*result_notes(list(rows)), *(
        f"note: {model} on {', '.join(names) if len(names) <= 3 else f'{len(names)} splits'}: no training example "
        f"has a value of {', '.join(feats)} (a metric that needs references has none on items without them), so "
        f"the model leaves {'it' if len(feats) == 1 else 'them'} out"
        for (model, feats), names in splits.items()
    )]


def _output_files(output: Path, model: str, save: bool) -> list[str]:
    """Return the files ``train`` writes or replaces in OUTPUT, relative to it.

    Its results, and with ``save`` every file now in the ``model-<kind>`` folders it replaces whole
    (:func:`dialeval.trained.store.save`), so that none of them can be one of its inputs.
    """
    files = list(RESULT_FILES)
    kinds = split_names(model, "--model", "model") if save else []
    for kind in kinds:
        folder = output / f"model-{kind}"
        if folder.is_dir():
            files += [str(f.relative_to(output)) for f in sorted(folder.rglob("*")) if f.is_file() or f.is_symlink()]
    return files


def _check_model_folders(output: Path, model: str) -> None:
    """Refuse a ``model-<kind>`` in OUTPUT that is a file or a folder holding files but no saved model.

    :func:`dialeval.trained.store.save` replaces the folder whole: such a file or folder was deleted with no word.

    Raises:
        InputError: Naming the path and ``--output``.
    """
    for kind in split_names(model, "--model", "model") or []:
        folder = output / f"model-{kind}"
        if folder.exists() and not folder.is_dir():
            what = "is a file, not a saved model"
        elif folder.is_dir() and not (folder / "card.json").is_file() and any(folder.iterdir()):
            what = "holds no saved model (no card.json), but other files"
        else:
            continue
        raise InputError(f"{what}: train replaces {folder.name} whole with the model it saves; move it away, give "
                         "another --output, or --no-save", path=folder, field="--output")  # fmt: skip


def _check_request(request: ScoringRequest) -> None:
    """Refuse the run options that would change the features (a saved model computes them with the defaults).

    Raises:
        InputError: ``-m``, ``-p`` or ``--device`` given.
    """
    options = {"-m": ("--metrics", request.metrics), "-p": ("--param", request.params),
               "--device": ("--device", request.device)}  # fmt: skip
    given = [opt for opt, (_, value) in options.items() if value]
    if given:  # the error is of the first option given (it was of --param, given or not)
        raise InputError(f"train takes no {', '.join(given)}: its features are the metrics each model names, with "
                         "their defaults (--model-param ensemble.families=...)",
                         field=options[given[0]][0])  # fmt: skip


def _run_info(plan: _Plan, run: ScoringContext, task: str, seed: int, started: float) -> TrainRun:
    """Return what ``run.json`` records: the mode, the benchmarks, the task, the request, engine, cache."""
    return TrainRun(
        mode=plan.mode, train=plan.train_names, test=plan.test_names, dimensions=plan.dims, task=task, seed=seed,
        request=run.request.record(), engine=run.engine.describe(), cache=run.cache_path(),
        seconds=round(time.perf_counter() - started, 2),
    )  # fmt: skip


@run_options
@table_options
def train(
    output: Path = typer.Option(..., "--output", "-o", help="Folder for results.jsonl, results.md and the models."),
    model: str = typer.Option("ensemble", "--model", help="Comma-separated: ensemble, ensemble-xgb, tfidf-lr, "
                              "tfidf-nb, xgboost, minilm."),
    train_on: str | None = typer.Option(None, "--train", help="Comma-separated catalog benchmarks to train on."),
    test: str | None = typer.Option(None, "--test", help="Comma-separated benchmarks never seen in training."),
    logo: str | None = typer.Option(None, "--logo", help="Leave one group out of --train: system, domain, benchmark."),
    folds: int | None = typer.Option(None, "--folds", help="K-fold cross-validation over the contexts of --train."),
    dimension: str | None = typer.Option(None, "--dimension", "-d", help="Dimension, for benchmarks that rate it "
                                         "(others use their overall-quality default)."),
    dim: list[str] = typer.Option([], "--dim", help="benchmark=dimension override; repeatable."),
    task: str = typer.Option("regression", "--task", help="regression (numeric target) or classification (0/1/2)."),
    target_norm: str = typer.Option("rank", "--target-norm", help="Per-benchmark target normalisation: rank, scale."),
    model_param: list[str] = typer.Option(
        [], "--model-param", help="Model parameter, [model.]key=value, e.g. ensemble.families=length,bleu; "
        "repeatable. docs/trained_evaluators.md lists each model's.",
    ),
    baselines: bool = typer.Option(False, "--baselines", help="Also correlate every offline metric (--test only)."),
    n_boot: int = typer.Option(1000, *N_BOOT_FLAGS, help="Bootstrap resamples of contexts for the CIs."),
    seed: int = typer.Option(0, "--seed", help="Seed for splits, models and bootstrap."),
    limit: int | None = typer.Option(None, "--limit", help="Only the first N contexts of each benchmark."),
    save_models: bool = typer.Option(True, "--save/--no-save", help="Save each model fitted on all of --train."),
    path: Path | None = typer.Option(None, "--path", help="Your own rated table (.csv, .tsv, .jsonl, .json; with "
                                     "--mapping or the --*-col options) or a folder of records; name it "
                                     "in --train or --test by its file name without suffix (or the "
                                     "mapping's name)."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON only: the run, the result rows, the saved models."),
    table: TableOptions = TableOptions(),
    request: ScoringRequest = ScoringRequest(),
) -> None:
    """Train evaluators on human ratings and evaluate them (Acc, UAR, kappa, Spearman, Pearson, P/R/F1).

    The metric features go through the score cache, on --engine: a rerun computes nothing and a killed
    run resumes. They are the metrics each model names (--model-param ensemble.families=...), with
    their defaults, as a saved model computes them again: -m, -p and --device are refused.
    """
    from dialeval.trained import experiment as xp
    from dialeval.trained.features import scoring_with

    started = time.perf_counter()
    inputs = [("--path", path), ("--mapping", table.mapping), *request.inputs()]
    try:
        files = _output_files(output, model, save_models)
        replaced = check_output(output, "folder", inputs=inputs, files=files)
        if save_models:
            _check_model_folders(output, model)
        common = {"dimension": dimension, "overrides": xp.parse_dimensions(dim), "target_norm": target_norm,
                  "limit": limit}  # fmt: skip
        _check_request(request)
        from dialeval.meta.correlate import check_boot

        check_boot(n_boot, field="--n-boot", seed=seed)
        plan = _plan(model, train_on, test, logo, folds, task, seed, model_param, path, table, common, baselines)
        run = request.open(quiet=as_json)
        console.print("dimensions: " + ", ".join(f"{b}={d}" for b, d in plan.dims.items()), highlight=False)
        with scoring_with(run):
            with interrupted_run(output, request.no_cache):
                rows, base, models = _evaluate(plan, task, seed, n_boot, baselines, run)
            saved = _save_models(plan, rows, models, output, task, seed, target_norm) if save_models else {}
        summary = xp.summarise_folds(rows) if len(plan.splits) > 1 else []
        all_rows = [*rows, *summary, *base]
        run_info = _run_info(plan, run, task, seed, started)
        with all_or_nothing(output):  # a failed write left this run's results.jsonl beside the last run's results.md
            _write_results(plan, rows, all_rows, bool(base), output, task, target_norm, rough_resamples(n_boot))
            write_run_info(output, run_info)
    except DialevalError as exc:
        fail(exc)
        return
    _say(all_rows, plan.mode, saved, output, replaced, n_boot, run_info.as_dict() if as_json else None)


def _say(
    rows: list[dict[str, Any]], mode: str, saved: dict[str, str], output: Path, replaced: list[Path], n_boot: int,
    json_run: dict[str, Any] | None,
) -> None:  # fmt: skip
    """Print the results: the table, its notes and the files written; or one JSON object (``--json``).

    With ``json_run`` (the run's record), the object holds the run, the rows, the saved models and the notes: the
    lines under the screen's table, which --json dropped.
    """
    if json_run is not None:
        kept = {k: {"path": str(output / f"model-{k}"), "card_sha256": sha} for k, sha in saved.items()}
        notes = [*_notes(rows), *rough_resamples(n_boot)]
        out.print_json(json.dumps({"run": json_run, "rows": rows, "models": kept, "notes": notes}))
        return
    out.print(_table(rows, f"dialeval train: {mode}"))
    for note in _notes(rows):
        console.print(note, highlight=False, markup=False)
    warn(rough_resamples(n_boot))
    for k, sha in saved.items():
        console.print(f"saved {k} to {output / f'model-{k}'} (card sha256 {sha[:16]}); "
                      f"use it as -m trained:{output / f'model-{k}'}", highlight=False)  # fmt: skip
    note = replaced_note([p for p in replaced if p.parent == output])
    wrote = f"wrote {output}/results.jsonl, results.md and run.json{note}"
    console.print(wrote, highlight=False, markup=False, soft_wrap=True)


def register(app: typer.Typer) -> None:
    """Add ``train`` to the CLI."""
    app.command("train")(train)
