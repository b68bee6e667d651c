"""Compose the report from results folders: tables, figures, signatures and the exact commands.

Example:
    >>> fmt(0.12345), fmt(None), fmt(2, 1)
    ('0.123', '-', '2')
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from dialeval import __version__
from dialeval.meta.wide import rank_column
from dialeval.report.charts import has_ci
from dialeval.report.doc import Block, Code, Doc, Figure, Section, Table, Text
from dialeval.report.load import TRAIN_COLUMNS, Results, human_ratings, read_figure, signature_keys
from dialeval.runinfo import BenchmarkRun, LmstyleRun, TrainRun
from dialeval.schema import Score
from dialeval.signature import file_sha256
from dialeval.words import figure, human_rating, with_ci

if TYPE_CHECKING:
    from dialeval.meta.align import Aligned


def fmt(value: Any, digits: int = 3) -> str:
    """Format a number (``-`` for None or NaN); a whole number (a count: lmstyle's summary's responses) as it is."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    return figure(value, digits) if isinstance(value, float) else str(value)


def correlation_table(
    rows: Sequence[dict[str, Any]], caption: str, *, by_group: bool = False, rank_by: tuple[str, str] | None = None
) -> Table:
    """One row per metric, one column per (level, method), ranked by ``rank_by`` or the first column (:func:`pivot`).

    The overall group's rows; with ``by_group``, every other group's, under a group column in ``meta --by``'s order.
    """
    from types import SimpleNamespace

    from dialeval.meta.wide import cell_text, pivot

    wide = pivot([SimpleNamespace(**r) for r in rows], rank_by=rank_by)
    body = [[*([g] if by_group else []), m, *[cell_text(cells.get(c), missing="-") for c in wide.columns]]
            for g, m, cells in wide.rows if (g != "all") == by_group]  # fmt: skip
    ci = " [95% CI]" if has_ci(rows) else ""  # --boot 0: no row has one, and the headers said "[95% CI]"
    head = [*(["group"] if by_group else []), "metric", *[f"{lv} {me}{ci}" for lv, me in wide.columns]]
    return Table(head, body, caption)


def _benchmark(r: Results, blocks: list[Block]) -> None:
    from types import SimpleNamespace

    from dialeval.meta.caveats import table_warnings
    from dialeval.report import charts

    run = r.run if isinstance(r.run, BenchmarkRun) else None
    named = {str(x["dimension"]) for x in r.correlations if x.get("dimension")}
    # the table's own dimension first: meta -o into a benchmark's folder (-d Engaging) was headed and plotted
    # with run.json's (Overall)
    dim = named.pop() if len(named) == 1 else (run and run.dimension) or "human score"
    name = run.benchmark if run else r.path.name
    if other := run and other_table(r.correlations, run, dim):
        blocks.append(Text(other))
    own = run is not None and not other  # not a meta -o table in a benchmark's folder
    label = name if own or run is None else f"{name}, another run's table"
    columns = list(dict.fromkeys((str(x["level"]), str(x["method"])) for x in r.correlations))
    rank_by = rank_column(columns) if own else None  # the rule benchmark ranked its screen and table.md by
    ranked_by = f" (ranked by {' '.join(rank_by)})" if rank_by else ""
    blocks.append(correlation_table(r.correlations, f"{label}: correlation of each metric with {human_rating(dim)}"
                                    f"{ranked_by}", rank_by=rank_by))  # fmt: skip
    if any(x.get("group", "all") != "all" for x in r.correlations):  # meta --by: the groups its warnings name
        per_group = correlation_table(r.correlations, f"{label}: the same, per group", by_group=True, rank_by=rank_by)
        blocks.append(per_group)
    # the lines under the run's own table as it wrote them (metrics not run, notes, warnings), else meta's warnings
    said = run.notes if run is not None and own else None
    if said is None:
        said = table_warnings([SimpleNamespace(**x) for x in r.correlations])
    blocks += [Text(line) for line in said]
    if r.paired is not None:  # meta --compare -o: the paired test was on the screen only
        from dialeval.meta.significance import paired_line

        blocks.append(Text(paired_line(r.paired)))
    if any(x.get("value") is not None and x.get("group", "all") == "all" for x in r.correlations):
        cis = "with 95% bootstrap CIs" if has_ci(r.correlations) else "(no CIs: the run drew no resamples)"
        caption = f"{label}: metric-human correlation {cis}, per level and method"
        blocks.append(Figure(charts.correlation_chart(r.correlations, dim), caption))
    else:  # matplotlib's legend of no method: a ValueError traceback
        blocks.append(Text("No correlation chart: every figure is undefined (n/a)."))
    levels = [str(x["level"]) for x in r.correlations]
    level = rank_by[0] if rank_by else "turn" if "turn" in levels else (levels[0] if levels else "")
    ranked = [x for x in r.correlations if x["level"] == level and x.get("group", "all") == "all"
              and x.get("value") is not None]  # fmt: skip
    method = rank_by[1] if rank_by else str(ranked[0]["method"]) if ranked else ""
    ranked = sorted((x for x in ranked if x["method"] == method), key=lambda x: float(x["value"]))
    if lost := sorted({str(x["metric"]) for x in r.correlations} - {s.metric for s in r.scores}) if r.scores else []:
        # a KeyError traceback from pandas when the scatter plot looked the metric up
        blocks.append(Text(f"table.jsonl names metrics that scores.jsonl does not hold ({', '.join(lost)}): are the "
                           "two files from one run? The charts below leave them out."))  # fmt: skip
        ranked = [x for x in ranked if x["metric"] not in lost]
    ratings, why = human_ratings(r) if ranked and r.scores else ([], "no scores.jsonl" if ranked else "no figures")
    if ratings and ranked:
        from dialeval.meta.align import align

        chosen = {ranked[-1]["metric"]: ("best", ranked[-1]), ranked[0]["metric"]: ("worst", ranked[0])}
        aligned = align([s for s in r.scores if s.metric in chosen], ratings, dimension=dim)
        per = "dialogue" if level == "dialogue" else "item"
        points = {}
        for metric, (label, row) in chosen.items():
            x, y = _points(aligned, metric, per)
            title = f"{label}: {metric}\n{level} {method} {fmt(row['value'])} (n={len(x)})"
            points[metric] = (x, y, title)
        caption = f"{name}: the best and the worst metric against {human_rating(dim)}, one point per {per}"
        blocks.append(Figure(charts.scatter_chart(points, dim, per), caption))
    elif why:
        blocks.append(Text(f"No scatter plots: {why}."))
    metrics = [x["metric"] for x in reversed(ranked)][:6] or sorted({s.metric for s in r.scores})[:6]
    if r.scores and metrics:
        blocks.append(Figure(charts.distribution_chart(r.scores, metrics, lambda s: s.system or "?"),
                             f"{name}: score distributions per system (best-ranked metrics)"))  # fmt: skip


def other_table(rows: Sequence[dict[str, Any]], run: BenchmarkRun, dim: str) -> str:
    """Return a note when ``rows`` (table.jsonl) are not of run.json's command: another dimension, other resamples.

    ``meta -o`` into a benchmark's folder leaves its table beside the benchmark's run.json; the report headed,
    ranked and captioned it as that command's. The resamples and seed are read from the rows' signatures.

    Example:
        >>> run = BenchmarkRun(benchmark="usr-tc", dimension="Overall", bootstrap={"resamples": 0, "seed": 0})
        >>> other_table([{"signature": "corr|level:turn|n_boot:20|seed:3|version:0.1.0"}], run, "Overall")
        "table.jsonl is of 20 bootstrap resamples (seed 3), run.json's command of 0 bootstrap resamples (seed 0): \
the table comes from another run (dialeval meta -o into this folder?), not from that command."
        >>> other_table([{"signature": "corr|level:turn|n_boot:0|seed:0|version:0.1.0"}], run, "Overall")
        ''
    """
    mine, theirs = [], []
    if run.dimension and dim != run.dimension:
        mine.append(human_rating(dim))
        theirs.append(human_rating(run.dimension))
    boot = {(k["n_boot"], k["seed"]) for x in rows if "n_boot" in (k := signature_keys(str(x.get("signature", ""))))}
    ran = tuple(str((run.bootstrap or {}).get(key, "?")) for key in ("resamples", "seed"))
    if boot and boot != {ran}:
        mine.append(" and ".join(f"{n} bootstrap resamples (seed {seed})" for n, seed in sorted(boot)))
        theirs.append(f"{ran[0]} bootstrap resamples (seed {ran[1]})")
    if not mine:
        return ""
    return (f"table.jsonl is of {' and '.join(mine)}, run.json's command of {' and '.join(theirs)}: the table comes "
            "from another run (dialeval meta -o into this folder?), not from that command.")


def _points(aligned: Aligned, metric: str, per: str) -> tuple[list[float], list[float]]:
    """Return a metric's values and the human means, one pair per item or per dialogue (as the dialogue level).

    Per item there was no point at all for a benchmark rated per dialogue (DSTC9): its items have no rating.
    """
    from dialeval.meta.levels import RowLevel, prepare

    if per == "dialogue":
        data = prepare(aligned.items, aligned.dialogue_human, "dialogue", [metric], scaled=False)  # the metric's units
        assert isinstance(data, RowLevel)
        return data.x[metric].tolist(), data.y.tolist()
    both = aligned.items[[metric, "human"]].dropna()
    return both[metric].tolist(), both["human"].tolist()


_LAYOUT_HEAD = {"table2": ["Model", "source"], "table4": ["Dataset", "Model", "source"],
                "table5": ["Dataset", "Model", "source"]}  # fmt: skip
_TITLES = {"table2": "LMStyle Table 2: formality and sentiment tasks, both datasets",
           "table4": "LMStyle Table 4: formality tasks per dataset",
           "table5": "LMStyle Table 5: sentiment tasks per dataset"}  # fmt: skip


def lmstyle_tables(rows: Sequence[dict[str, Any]]) -> list[Table]:
    """Rebuild the paper-layout tables from ``lmstyle_tables.jsonl`` records."""
    out = []
    for name in dict.fromkeys(str(r["table"]) for r in rows):
        mine = [r for r in rows if r["table"] == name]
        cols = list(dict.fromkeys(str(r["column"]) for r in mine))
        keyed: dict[tuple[str, str, str], dict[str, str]] = {}
        for r in mine:
            key = (str(r.get("dataset", "")), str(r["model"]), str(r["source"]))
            # a partly scored cell (the judge's parse failures) says how many responses it averages
            note = f" ({r['scored']})" if r.get("scored") else ""
            keyed.setdefault(key, {})[r["column"]] = fmt(r["value"], 1) + note
        head = _LAYOUT_HEAD.get(name, ["Dataset", "Model", "source"])
        body = [([d] if "Dataset" in head else []) + [m, s] + [v.get(c, "-") for c in cols]
                for (d, m, s), v in keyed.items()]  # fmt: skip
        # a run's own title (a run over one dataset names it); files written before it was kept: the paper's
        title = next((f"LMStyle {r['title']}" for r in mine if r.get("title")), _TITLES.get(name, name))
        out.append(Table([*head, *cols], body, title))
    return out


def _lmstyle(r: Results, blocks: list[Block]) -> None:
    from dialeval.report import charts

    blocks.extend(lmstyle_tables(r.lmstyle_tables))
    if r.summary:
        head = list(r.summary[0])
        caption = "System-level summary (all responses of each model; 'scored' = responses a metric scored)"
        blocks.append(Table(head, [[fmt(row.get(h), 1) for h in head] for row in r.summary], caption))
    judge = (r.run.judge if isinstance(r.run, LmstyleRun) else None) or {}
    counters = ("responses", "scored", "from_score_cache", "items", "samples", "parse_retries", "parse_failures",
                "items_missing", "cache_hits")  # fmt: skip
    if any(k in judge for k in counters):  # its settings are there on every run, its counters where it ran
        blocks.append(Text("Appropriateness judge: " + ", ".join(f"{k} {judge[k]}" for k in ("model", "k", *counters)
                                                                 if k in judge)))  # fmt: skip
    elif judge:  # "model smollm2, k 1" read as judged
        blocks.append(Text("Appropriateness judge: not run (-m left it out)."))
    metrics = [m for m in ("style_match", "style_strength", "sacrebleu", "sbert_ref", "lm_likelihood",
                           "judge:lmstyle-appropriateness") if any(s.metric == m for s in r.scores)]  # fmt: skip
    if metrics:
        several = len({s.system for s in r.scores}) > 1

        def subset(s: Score) -> str:
            label = f"{s.tags.get('dataset', '?')}/{s.tags.get('style', '?')}"
            return f"{s.system}:{label}" if several else label

        blocks.append(Figure(charts.distribution_chart(r.scores, metrics, subset),
                             "LMStyle: score distributions per subset (dataset/style)"))  # fmt: skip


def _stress(r: Results, blocks: list[Block]) -> None:
    from dialeval.report import charts

    blocks.append(Figure(charts.heatmap(r.stress), "Stress test: share of pairs where the metric prefers the original"))
    perts, body = _by_metric(r.stress, "perturbation", lambda x: fmt(x["value"]))
    caption = "Stress test: share of pairs where the metric prefers the original (ties 0.5; stress.jsonl)"
    blocks.append(Table(["metric", *perts], body, caption))
    for png in sorted(r.path.glob("stress_subsets_*.png")):
        pert = png.stem.removeprefix("stress_subsets_")
        if pert not in perts:  # an earlier run's figure was shown as this run's
            blocks.append(Text(f"Left out {png.name}: {pert} is not a perturbation of stress.jsonl "
                               "(a figure of an earlier run in this folder)."))  # fmt: skip
            continue
        blocks.append(Figure(read_figure(png), f"Score distributions per subset, original vs {pert} ({png.name})"))


def _by_metric(
    rows: Sequence[dict[str, Any]], column: str, show: Callable[[dict[str, Any]], str]
) -> tuple[list[str], list[list[str]]]:
    """Pivot result rows to one line per metric and one column per value of ``column`` (file order; ``-`` if none)."""
    columns = list(dict.fromkeys(str(x[column]) for x in rows))
    cell = {(str(x["metric"]), str(x[column])): x for x in rows}
    metrics = dict.fromkeys(str(x["metric"]) for x in rows)
    return columns, [[m, *(show(cell[(m, c)]) if (m, c) in cell else "-" for c in columns)] for m in metrics]


def _ranking(r: Results, blocks: list[Block]) -> None:
    def show(x: dict[str, Any]) -> str:
        ci = f" [{fmt(x['ci_low'])}, {fmt(x['ci_high'])}]" if x.get("ci_low") is not None else ""
        return f"{fmt(x['fraction'])}{ci}"

    negatives, body = _by_metric(r.ranking, "negatives", show)
    ci = "95% CI over contexts" if has_ci(r.ranking) else "no CI"  # --boot 0
    caption = ("DailyDialog++: share of pairs where a good response outranks a negative of its context "
               f"(ties 0.5; {ci}; ranking.jsonl)")  # fmt: skip
    blocks.append(Table(["metric", *(f"good > {n}" for n in negatives)], body, caption))


#: The headers of the measures of ``dialeval train``'s result rows (:data:`TRAIN_COLUMNS`) where not their name.
TRAIN_HEADERS = {"spearman_diff": "vs best metric"}


def train_cell(row: dict[str, Any], key: str) -> str:
    """Return ``value [low, high]`` of one measure of a ``train`` result row (empty when it has none).

    A measure the row names in ``undefined`` (a correlation of constant predictions) reads ``undefined``.

    Example:
        >>> train_cell({"spearman": 0.5, "spearman_ci": [0.1, 0.8]}, "spearman"), train_cell({}, "f1")
        ('0.500 [0.100, 0.800]', '')
    """
    value = row.get(key)
    if key in row.get("undefined", ()):
        return "undefined"
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    return with_ci(value, *(row.get(f"{key}_ci") or (None, None)))


def train_table(rows: Sequence[dict[str, Any]], caption: str, *, every_column: bool = False) -> Table:
    """Return ``train``'s result rows as a table: model, split, n and each measure some row has (or all of them)."""
    keys = [k for k in TRAIN_COLUMNS if every_column or any(train_cell(r, k) for r in rows)]
    body = [[str(r.get("model", "")), str(r.get("split", "")), str(r.get("n", "")), *(train_cell(r, k) for k in keys)]
            for r in rows]  # fmt: skip
    return Table(["model", "split", "n", *(TRAIN_HEADERS.get(k, k) for k in keys)], body, caption)


def result_notes(rows: list[dict[str, Any]]) -> list[str]:
    """Return a note for each row whose predicted labels are all one (``one_label``, set by ``trained.evaluate``).

    And one for each row whose correlations have no CI (``no_ci``: why), one per reason a measure of a row is
    undefined (``undefined_why``), and a warning for each reason the CIs of
    some rows are rough (``rough_ci``: why, naming the rows), as ``meta`` warns under its table.

    Example:
        >>> result_notes([{"model": "m", "split": "test=b", "n": 300, "one_label": 1}, {"model": "m2"}])
        ... # doctest: +ELLIPSIS
        ['note: m on test=b predicted label 1 (the middle third of the scale) for all 300 items: its accuracy, ...']
        >>> result_notes([{"model": "m", "split": "fold1/2", "no_ci": "the items come from one context"}])
        ['note: m on fold1/2: no CI: the items come from one context']
        >>> result_notes([{"model": m, "split": "test=b", "rough_ci": "3 contexts have 10 ..."} for m in ("m", "n")])
        ['warning: the CIs of m, n on test=b are rough: 3 contexts have 10 ...']
    """
    thirds = ("lowest", "middle", "highest")
    rough: dict[tuple[str, str], list[str]] = {}
    for r in rows:
        if r.get("rough_ci"):
            rough.setdefault((str(r["split"]), str(r["rough_ci"])), []).append(str(r["model"]))
    warnings = [f"warning: the CIs of {', '.join(models) if len(models) <= 3 else f'{len(models)} rows'} on {split} "
                f"are rough: {why}" for (split, why), models in rough.items()]  # fmt: skip
    return warnings + [
        note
        for r in rows
        for note in (
            f"note: {r['model']} on {r['split']} predicted label {r['one_label']} (the {thirds[r['one_label']]} "
            f"third of the scale) for all {_items(r)}: its accuracy, UAR, kappa and P/R/F1 describe that "
            "constant; its Spearman and Pearson read the scores" if "one_label" in r else "",
            f"note: {r['model']} on {r['split']}: no CI: {r['no_ci']}" if r.get("no_ci") else "",
            *(f"note: {r['model']} on {r['split']}: {measures} undefined: {why}"
              for measures, why in (r.get("undefined_why") or {}).items()),
        )
        if note
    ]


def _items(row: dict[str, Any]) -> str:
    """Return "24 items" of a result row's ``n``, "its items" of a row without one (a hand-made or older row)."""
    return f"{row['n']} items" if row.get("n") is not None else "its items"


def _train(r: Results, blocks: list[Block]) -> None:
    run = r.run if isinstance(r.run, TrainRun) else None
    if run is not None:
        parts = [f"mode {run.mode}" if run.mode else "", f"train {', '.join(run.train)}" if run.train else "",
                 f"test {', '.join(run.test)}" if run.test else "", f"task {run.task}" if run.task else "",
                 f"seed {run.seed}" if run.seed is not None else "",
                 "dimensions " + ", ".join(f"{b}={d}" for b, d in (run.dimensions or {}).items())
                 if run.dimensions else ""]  # fmt: skip
        blocks.append(Text("Trained: " + "; ".join(p for p in parts if p) + "."))
    cis = [end for row in r.train for k in TRAIN_COLUMNS for end in row.get(f"{k}_ci") or ()]  # --n-boot 0: nulls
    ci = "95% CI over contexts" if any(end is not None for end in cis) else "no CI"
    caption = f"dialeval train: each model on each split ({ci}; results.jsonl)"  # no CI: --n-boot 0
    blocks.append(train_table(r.train, caption) if r.train else Text("No result rows (results.jsonl)."))
    blocks += [Text(note) for note in result_notes(r.train)]


def _study(r: Results, blocks: list[Block]) -> None:
    from dialeval.report import charts

    png, table = charts.agreement_chart(r.ratings)
    blocks.append(Table(["dimension", "level", "Krippendorff alpha", "95% CI", "items"], table,
                        "Human study: agreement per dimension"))  # fmt: skip
    blocks.append(Figure(png, "Human study: agreement and error categories per dimension"))


def signatures(r: Results) -> Table | Text:
    """Every signature behind the numbers, each once: generation, metrics, scores, correlations.

    Generation and metrics are run.json's; the scores' are stamped on them; the correlations' are table.jsonl's
    (level, method, resamples, seed, CI level).

    For a ``train`` folder, also the card sha256 of each model of its results saved in it (its ``trained:`` metric's
    signature carries it).
    """
    rows: list[list[str]] = []
    for model, g in ((r.run.generation if isinstance(r.run, LmstyleRun) else None) or {}).items():
        rows.append([f"generation {model}", str(g.get("signature", ""))])
    for name, m in (r.run.metrics if r.run else {}).items():
        rows.append([name, m.signature])
    known = {sig for _, sig in rows}
    for metric, sig in sorted({(s.metric, s.signature) for s in r.scores if s.signature}):
        if sig not in known:
            rows.append([f"score {metric}", sig])
            known.add(sig)
    table = dict.fromkeys(str(x.get("signature") or "") for x in r.correlations)  # how each figure was computed
    rows += [["table.jsonl", sig] for sig in table if sig and sig not in known]
    if r.kind == "train":  # the models of results.jsonl: another run's saved model-* was listed too
        cards = [r.path / f"model-{m}" / "card.json" for m in sorted({str(row["model"]) for row in r.train})]
        rows += [[f"{card.parent.name} card sha256", file_sha256(card)] for card in cards if card.is_file()]
    if not rows:  # it said "run.json names no metric, and there are no scores" of no run.json, of unsigned scores
        why = ["there is no run.json" if r.run is None else "run.json names no metric",
               "its scores carry no signature" if r.scores else "there are no scores",
               *(["its table.jsonl rows carry no signature"] if r.correlations else [])]  # fmt: skip
        return Text(f"Signatures: none in this folder ({', '.join(why[:-1])}, and {why[-1]}).")
    return Table(["what", "signature"], rows, "Signatures")


def other_runs(r: Results) -> list[str]:
    """Return a note for each results file of ``r`` that run.json's command does not write: another run's.

    Two commands with one ``-o`` (``stress -o runs/b`` after ``benchmark -o runs/b``) leave the first one's files
    beside the second one's run.json, and the report gave the second's command as the one that produced them.

    Example:
        >>> from pathlib import Path
        >>> from dialeval.runinfo import StressRun
        >>> other_runs(Results(Path("b"), run=StressRun(benchmark="usr-tc"), correlations=[{"metric": "m"}]))
        ["table.jsonl is not from run.json's command (a stress run, which does not write it): it is from another run \
that wrote into this folder."]
    """
    if r.run is None:  # meta -o writes no run.json
        return []
    held = {"table.jsonl": ("benchmark", r.correlations), "lmstyle_tables.jsonl": ("lmstyle", r.lmstyle_tables),
            "stress.jsonl": ("stress", r.stress), "ranking.jsonl": ("ranking", r.ranking),
            "results.jsonl": ("train", r.train)}  # fmt: skip
    return [f"{name} is not from run.json's command (a {r.run.kind} run, which does not write it): it is from "
            "another run that wrote into this folder." for name, (kind, rows) in held.items()
            if rows and kind != r.run.kind]  # fmt: skip


def made_by(r: Results) -> str:
    """Return what run.json records of the dialeval that made ``r`` (read back, it fills what it lacks with ours).

    Example:
        >>> from pathlib import Path
        >>> from dialeval.runinfo import StressRun
        >>> made_by(Results(Path("b"), run=StressRun(benchmark="b", version="0.0.9"))), made_by(Results(Path("b")))
        ('dialeval 0.0.9; run.json records no command', 'no run.json: version and command not recorded')
    """
    if r.run is None:
        return "no run.json: version and command not recorded"
    lacks = [name for name in ("version", "command") if name not in r.run.model_fields_set]
    made = "" if "version" in lacks else f"dialeval {r.run.version}"
    said = f"run.json records no {' and no '.join(lacks)}" if lacks else ""
    return "; ".join(part for part in (made, said) if part)


def build_report(results: Sequence[Results], command: str, log: Callable[[str], None] | None = None) -> Doc:
    """Build the report of one or more results folders."""
    sections = []
    for r in results:
        blocks: list[Block] = [Text(f"Folder: {r.path} ({r.kind}); {made_by(r)}.")]
        if r.run and "command" in r.run.model_fields_set and r.run.command:
            blocks.append(Text("Command that produced it:"))
            blocks.append(Code(r.run.command))
        blocks += [Text(note) for note in other_runs(r)]
        if r.correlations:
            _benchmark(r, blocks)
        if r.lmstyle_tables or r.summary:  # a summary alone was a folder of no scores, reported empty
            _lmstyle(r, blocks)
        if r.stress:
            _stress(r, blocks)
        if r.ranking:
            _ranking(r, blocks)
        if r.kind == "train":
            _train(r, blocks)
        if r.ratings:
            _study(r, blocks)
        if r.kind == "scores" and r.scores:
            from dialeval.report import charts

            metrics = sorted({s.metric for s in r.scores})[:6]
            blocks.append(Figure(charts.distribution_chart(r.scores, metrics, lambda s: s.system or "?"),
                                 "Score distributions per system"))  # fmt: skip
        blocks.append(signatures(r))
        sections.append(Section(f"{r.path.name}: {r.kind}", blocks))
        if log is not None:
            log(f"{r.path}: {r.kind}, {len(blocks)} blocks")
    sections.append(Section("This report", [Code(command), Text(f"dialeval {__version__}")]))
    return Doc("dialeval report", sections)
