"""``dialeval stress``: perturb responses and measure whether each metric notices.

``dialeval stress --benchmark dailydialog++`` runs the DailyDialog++ ranking test
instead (:mod:`dialeval.stress.ranking`).
"""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from dialeval.atomic import all_or_nothing, atomic_write
from dialeval.commands.common import (
    N_BOOT_FLAGS,
    TABLE_RULE,
    TableOptions,
    check_output,
    check_request_failures,
    console,
    fail,
    interrupted_run,
    out,
    remove_earlier,
    replaced_note,
    say_removed,
    table_options,
    warn,
    warned,
)
from dialeval.commands.options import allow_failures_option, run_options
from dialeval.errors import DialevalError, InputError
from dialeval.meta.caveats import rough_resamples
from dialeval.runinfo import MetricInfo, RankingRun, StressRun, write_run_info
from dialeval.schema import Candidate, Score
from dialeval.scoring import ScoringContext, ScoringRequest
from dialeval.words import counted, figure, markdown_table, split_names

if TYPE_CHECKING:
    from dialeval.data.benchmark import Benchmark
    from dialeval.metrics.base import Metric
    from dialeval.stress.ranking import RankingResult
    from dialeval.stress.run import StressResult, StressRow

LEXICAL = "bleu,sacrebleu,chrf,rouge,meteor,f1,length"
#: ``--benchmark`` names that select the DailyDialog++ ranking test.
DDPP_NAMES = ("dailydialog++", "dailydialog-pp", "ddpp")
#: What the DailyDialog++ ranking test writes in OUTPUT.
RANKING_FILES = RankingRun.FILES
#: What a perturbation run writes in OUTPUT (stress_subsets.jsonl where items have subsets), besides one figure per
#: perturbation --plot names.
STRESS_FILES = (*StressRun.FILES, "stress_subsets.jsonl")


def to_markdown(result: StressResult, title: str, figures: Sequence[str] = (), notes: Sequence[str] = ()) -> str:
    """Render the fraction table (outputs as rows, perturbations as columns) and the long rows as Markdown.

    With per-subset rows it adds one fraction table per subset, and ``figures``
    (PNG file names beside the Markdown) as images. Under each table, why its n/a cells have no pair; ``notes``
    (e.g. a figure not drawn) under the first.

    Example:
        >>> from dialeval.stress.run import StressResult, StressRow
        >>> row = StressRow("f1", "f1", "negation", 3, 1.0, 0.2, 0.1, 0.3, 0.9, True, 3)
        >>> print(to_markdown(StressResult(rows=[row]), "t").splitlines()[4])
        | f1 | 1.000 |
    """
    from dialeval.stress.run import ci_text, left_out_notes, na_lines, perturbed_lines

    lines = [f"# {title}", "", *_fraction_table(result.rows)]
    head = ["metric", "perturbation", "pairs", "fraction", "mean drop [95% CI]", "AUROC"]
    body = [[r.metric, r.perturbation, str(r.n_pairs), figure(r.fraction),
             ci_text(r.drop, r.ci_low, r.ci_high, r.n_contexts), figure(r.auroc)] for r in result.rows]  # fmt: skip
    lines += [
        "",
        "Cell: fraction of pairs where the metric scores the original above the perturbed response (ties 0.5).",
        "",
        *markdown_table(head, body),
    ]
    said = (perturbed_lines(result), na_lines(result.rows), left_out_notes(result), notes)
    lines += [line for some in said for line in ("", *some) if some]
    for subset in dict.fromkeys(r.subset for r in result.subset_rows):
        mine = [r for r in result.subset_rows if r.subset == subset]
        pairs = max((r.n_pairs for r in mine), default=0)
        lines += ["", f"## Subset {subset} (up to {pairs} pairs per cell)", "", *_fraction_table(mine)]
        lines += ["", *na] if (na := na_lines(mine)) else []
    for name in figures:
        lines += ["", f"![score distributions per subset: {name}]({name})"]
    return "\n".join(lines) + "\n"


def _fraction_table(rows: Sequence[StressRow]) -> list[str]:
    perts = list(dict.fromkeys(r.perturbation for r in rows))
    cell = {(r.metric, r.perturbation): r for r in rows}
    metrics = dict.fromkeys(r.metric for r in rows)
    return markdown_table(["metric", *perts], [[m, *(figure(cell[(m, p)].fraction) for p in perts)] for m in metrics])


def _pairs(pairs: Sequence[str]) -> dict[str, str]:
    """Parse ``key=value`` pairs (``--subset-param``): the spaces around a key are dropped, the value is as given.

    The rule of ``-p`` (:func:`dialeval.commands.options._key_stripped`).

    Example:
        >>> _pairs(["k=1", "model=a=b", " n = 2"])
        {'k': '1', 'model': 'a=b', 'n': ' 2'}
    """
    out: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        key = key.strip()
        if not sep or not key:
            raise InputError(f'"{pair}" is not of the form key=value', field="--subset-param")
        if key in out:  # the last one won, silently
            raise InputError(f'parameter "{key}" is given twice', field="--subset-param")
        out[key] = value
    return out


def family_signatures(scores: Iterable[Score]) -> dict[str, MetricInfo]:
    """Return ``{family: MetricInfo(signature=...)}`` from the scores' signatures (for run.json and the report).

    Example:
        >>> family_signatures([Score(item_id="i", metric="rouge1", value=1.0, signature="rouge|x:1")])
        {'rouge': MetricInfo(signature='rouge|x:1', seconds=None)}
    """
    sigs = sorted({s.signature for s in scores if s.signature})
    return {sig.split("|", 1)[0]: MetricInfo(signature=sig) for sig in sigs}


@run_options
@table_options
def stress(
    benchmark: str | None = typer.Option(
        None, "--benchmark", "-b",
        help="Catalog benchmark (default usr-tc), or dailydialog++ (ranking of good vs negatives).",
    ),
    path: Path | None = typer.Option(None, "--path", help=TABLE_RULE),
    dialogues: Path | None = typer.Option(None, "--dialogues", help="Dialogue records (JSONL)."),
    candidates: Path | None = typer.Option(None, "--candidates", help="Candidate records (JSONL)."),
    perturb: str | None = typer.Option(None, "--perturb", help="Comma-separated perturbations (default: all)."),
    limit: int | None = typer.Option(None, "--limit", help="Only the first N contexts."),
    seed: int = typer.Option(0, "--seed", help="Seed of the perturbations and the bootstrap."),
    n_boot: int = typer.Option(1000, *N_BOOT_FLAGS, help="Bootstrap resamples (over contexts)."),
    subsets: str = typer.Option(
        "rule", "--subsets",
        help="Open/closed-ended subsets: rule (last context turn), judge (an LLM, see --subset-param), tags, none.",
    ),
    subset_param: list[str] = typer.Option(
        [], "--subset-param", help="Parameter of the subset judge (--subsets judge), key=value; repeatable."
    ),
    plot: str | None = typer.Option(
        None, "--plot", help="Perturbations to draw per-subset score distributions for, among those run "
        "(default: negation when it runs; none: no figure).",
    ),
    split: str | None = typer.Option(None, "--split", help="dailydialog++: test (default) or dev."),
    refs: int | None = typer.Option(
        None, "--refs", help="dailydialog++: good responses per context held out as references (default 1)."
    ),
    output: Path = typer.Option(Path("runs/stress"), "--output", "-o", help="Output folder."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON only."),
    allow_failures: bool = allow_failures_option,
    table: TableOptions = TableOptions(),
    request: ScoringRequest = ScoringRequest(),
) -> None:
    """Perturb every response (negation, number swap, ...) and report how often each metric prefers the original.

    Writes stress.jsonl (one row per metric output and perturbation), stress_subsets.jsonl (the same per
    open/closed-ended subset), stress.md and stress_subsets_<perturbation>.png to OUTPUT. With --benchmark
    dailydialog++ it instead ranks each context's good responses against its adversarial and random negatives
    and writes ranking.jsonl and ranking.md. The metrics are the lexical ones unless -m names others.
    Finished items are kept in the score cache: a rerun computes nothing and a killed run resumes.
    """
    try:
        files = _output_files(benchmark, perturb, plot)
        inputs = [("--path", path), ("--dialogues", dialogues), ("--candidates", candidates),
                  ("--mapping", table.mapping), *request.inputs()]  # fmt: skip
        replaced = check_output(output, "folder", inputs=inputs, files=files)
        _check_together(benchmark, subsets, subset_param, plot, split, refs)
        from dialeval.meta.correlate import check_boot

        check_boot(n_boot, field="--n-boot", seed=seed)  # numpy's errors came after the scoring
        opts = _StressOptions(benchmark, path, perturb, limit, seed, n_boot, subsets, subset_param, plot,
                              dialogues, candidates, table, show=not as_json)  # fmt: skip
        started = time.perf_counter()
        loaded = _load_ranking(opts, split or "test", 1 if refs is None else refs, request) if _ranks(benchmark) \
            else _load_perturbations(opts, request)  # fmt: skip
        run = request.open(quiet=as_json)  # after the metrics are built: a bad -p left a new score cache
    except DialevalError as exc:
        fail(exc)
        return
    if isinstance(loaded, _RankingInputs):
        with interrupted_run(output, request.no_cache):
            ranked = _ranking(opts, loaded, output, as_json, run, started, replaced_note(replaced))
        check_request_failures(ranked, allow_failures)
        return
    try:
        with interrupted_run(output, request.no_cache):
            done = _run_perturbations(opts, loaded, run)
    except DialevalError as exc:
        fail(exc)
        return
    run_info, rows, sub_rows, figures = _write_stress(opts, run, done, output, started)
    stale = remove_stale(output, figures, bool(sub_rows))
    if as_json:  # the notes: the screen's lines (the data's warnings were printed as it was read)
        said = [*done.bench.warnings, *_result_lines(done), *rough_resamples(n_boot)]
        out.print_json(json.dumps({"run": run_info.as_dict(), "rows": rows, "subset_rows": sub_rows, "notes": said}))
    else:
        _print_stress(done, output, figures, run_info.seconds, replaced, rough_resamples(n_boot), stale)
    check_request_failures(done.result.scores, allow_failures, done.unjudged)


def _check_together(
    benchmark: str | None, subsets: str, subset_param: Sequence[str], plot: str | None, split: str | None,
    refs: int | None,
) -> None:  # fmt: skip
    """Refuse an option that the others make pointless (it was ignored, silently).

    Example:
        >>> _check_together(None, "none", [], "negation", None, None)
        Traceback (most recent call last):
        ...
        dialeval.errors.InputError: field "--plot": draws each subset's scores, and --subsets none makes no subsets
    """
    if subset_param and subsets != "judge":
        raise InputError("--subset-param needs --subsets judge", field="--subset-param")
    if subsets == "none" and plot is not None and plot.strip() != "none":  # no figure was drawn
        raise InputError("draws each subset's scores, and --subsets none makes no subsets", field="--plot")
    for option, given in (("--split", split), ("--refs", refs)):
        if given is not None and not _ranks(benchmark):
            raise InputError("applies to -b dailydialog++ only", field=option)


def _ranks(benchmark: str | None) -> bool:
    """Whether ``-b`` asks for the DailyDialog++ ranking test rather than perturbations (spaces around it dropped)."""
    return benchmark is not None and benchmark.strip().lower() in DDPP_NAMES


def _output_files(benchmark: str | None, perturb: str | None, plot: str | None) -> list[str]:
    """Return the names of the files ``stress`` may write in OUTPUT (figures: one per perturbation it draws).

    Example:
        >>> _output_files("usr-tc", None, None)
        ['stress.jsonl', 'stress.md', 'run.json', 'stress_subsets.jsonl', 'stress_subsets_negation.png']
        >>> _output_files("DailyDialog++", None, None)
        ['ranking.jsonl', 'ranking.md', 'run.json']
    """
    if _ranks(benchmark):
        return list(RANKING_FILES)
    figures = [f"stress_subsets_{p}.png" for p in _names(perturb, plot)[1]]
    return [*STRESS_FILES, *figures]


def _names(perturb: str | None, plot: str | None) -> tuple[list[str], list[str]]:
    """Return the perturbations to run (``--perturb``, default all) and those to draw (``--plot``).

    ``--plot`` defaults to negation when it runs; ``none`` draws nothing; a perturbation it names must run.

    Example:
        >>> _names("negation,truncation", None), _names("truncation", None), _names("truncation", "none")
        ((['negation', 'truncation'], ['negation']), (['truncation'], []), (['truncation'], []))
        >>> _names("truncation", "negation")
        Traceback (most recent call last):
        ...
        dialeval.errors.InputError: field "--plot": negation is not among the perturbations run (--perturb)
    """
    from dialeval.stress.perturb import ALL_PERTURBATIONS
    from dialeval.stress.run import check_perturbations

    names = check_perturbations(split_names(perturb, "--perturb", "perturbation") or list(ALL_PERTURBATIONS))
    if plot is None:
        return names, [p for p in ("negation",) if p in names]
    if plot.strip() == "none":
        return names, []
    plots = check_perturbations(split_names(plot, "--plot", "perturbation"), field="--plot")
    for p in plots:
        if p not in names:  # no figure was drawn, silently
            raise InputError(f"{p} is not among the perturbations run (--perturb)", field="--plot")
    return names, plots


@dataclass(frozen=True)
class _StressOptions:
    """The perturbation run's options, as ``dialeval stress`` parsed them."""

    benchmark: str | None
    path: Path | None
    perturb: str | None
    limit: int | None
    seed: int
    n_boot: int
    subsets: str
    subset_param: Sequence[str]
    plot: str | None
    dialogues: Path | None = None
    candidates: Path | None = None
    table: TableOptions | None = None
    show: bool = True


@dataclass
class _StressDone:
    """A finished perturbation run: its inputs, the perturbations and plots asked for, and the result."""

    bench: Benchmark
    candidates: list[Candidate]
    names: list[str]
    plots: list[str]
    judged: dict[str, int]
    unjudged: dict[str, int]  # the subset judge's contexts with no answer, by cause
    result: StressResult
    mode: str  # --subsets

    @property
    def drawn(self) -> list[str]:
        """The perturbations among ``plots`` whose figure is drawn: those with subsets that perturbed a response."""
        return [p for p in self.plots if self.result.subset_rows and self.result.applied.get(p)]

    @property
    def figure_notes(self) -> list[str]:
        """Say which perturbations among ``plots`` get no figure, having perturbed no response (it showed originals).

        With no subset at all, say so where the subset judge classified no context, or no item has a tag (only the
        screen said that).
        """
        if not self.result.subset_rows and self.judged and set(self.judged) == {"unparsed"}:
            causes = "; ".join(f"{n} x {why}" for why, n in Counter(self.unjudged).most_common(3))
            return [f"subsets (judge): the judge classified none of the {counted(self.judged['unparsed'], 'context')} "
                    f"({causes}), so there are no per-subset rows or figures"]  # fmt: skip
        if not self.result.subset_rows and self.mode == "tags":
            return ['subsets (tags): no item has a "subset" tag, so there are no per-subset figures (--subsets rule '
                    "or judge assigns them)"]  # fmt: skip
        if not self.result.subset_rows:  # no figure at all: the subsets line says why
            return []
        return [f"no figure for {p}: it applied to none of the {counted(len(self.candidates), 'response')}"
                for p in self.plots if p not in self.drawn]  # fmt: skip

    @property
    def title(self) -> str:
        """The report's title."""
        n_ctx = len({c.context_id for c in self.bench.candidates})
        return (
            f"{self.bench.name}: fraction of pairs where the metric prefers the original "
            f"({len(self.bench.candidates)} items, {n_ctx} contexts)"
        )


@dataclass
class _StressInputs:
    """A perturbation run's inputs, read, and its metrics, built, before the run is opened."""

    bench: Benchmark
    names: list[str]
    plots: list[str]
    metrics: list[Metric]


def _load_perturbations(opts: _StressOptions, request: ScoringRequest) -> _StressInputs:
    """Read the benchmark and build the metrics (a bad ``-p`` is refused here, before the score cache is made)."""
    from dialeval.commands.common import load_inputs
    from dialeval.stress.run import check_ids

    names, plots = _names(opts.perturb, opts.plot)
    bench = load_inputs(opts.benchmark, opts.path, opts.dialogues, opts.candidates, opts.limit, table=opts.table,
                        show=opts.show)  # fmt: skip
    check_ids(bench.candidates, bench.dialogues, bench.source)
    plan = request.plan(bench.candidates, default=LEXICAL.split(","), sources=bench.sources)
    return _StressInputs(bench, names, plots, plan.build())


def _run_perturbations(opts: _StressOptions, loaded: _StressInputs, run: ScoringContext) -> _StressDone:
    """Tag the benchmark's subsets, perturb every response and score it all."""
    from dialeval.stress.run import run_stress
    from dialeval.stress.subsets import judge_subsets, tag_subsets

    bench, names = loaded.bench, loaded.names
    judged: dict[str, int] = {}
    unjudged: dict[str, int] = {}
    if opts.subsets == "judge":
        bar = "subsets (judge)"  # a local LM takes a minute or more
        try:
            with run.bars({bar: len({c.context_id for c in bench.candidates})}) as tick:
                candidates, counts, why = judge_subsets(bench.candidates, bench.dialogues,
                                                        _pairs(opts.subset_param), progress=lambda n: tick(bar, n))
        except InputError as exc:  # the subset judge's parameters come from --subset-param, not -p
            raise exc.given_by("--subset-param") if exc.field == "--param" else exc from None
        judged, unjudged = dict(counts), dict(why)
    else:
        candidates = tag_subsets(bench.candidates, bench.dialogues, opts.subsets)
    with run.bars({m.name: len(candidates) * (1 + len(names)) for m in loaded.metrics}) as tick:
        result = run_stress(
            candidates, bench.dialogues, loaded.metrics, names, seed=opts.seed, n_boot=opts.n_boot,
            cache=run.cache, engine=run.engine, progress=tick,
        )
    return _StressDone(bench, candidates, names, loaded.plots, judged, unjudged, result, opts.subsets)


def _write_stress(
    opts: _StressOptions, run: ScoringContext, done: _StressDone, output: Path, started: float
) -> tuple[StressRun, list[dict[str, Any]], list[dict[str, Any]], list[str]]:
    """Write the figures, stress.jsonl, stress_subsets.jsonl, stress.md and run.json (all or none); return their data.

    ``started`` is the run's ``time.perf_counter()`` at its start (run.json's seconds). A failed write
    is one line (:func:`~dialeval.commands.common.fail`).
    """
    try:  # a write error (a full disk) was a traceback, leaving the files before it (the figures not even atomic)
        with all_or_nothing(output):
            return _write_stress_files(opts, run, done, output, started)
    except DialevalError as exc:
        fail(exc)


def remove_stale(output: Path, figures: Sequence[str], subsets: bool) -> list[str]:
    """Remove the per-subset files of an earlier run in ``output`` that this run did not write; return their names.

    A rerun with other perturbations or ``--subsets none`` left them, and ``dialeval report`` showed them
    as this run's.

    Example:
        >>> import tempfile
        >>> out = Path(tempfile.mkdtemp())
        >>> for name in ("stress_subsets_negation.png", "stress_subsets_truncation.png", "stress_subsets.jsonl"):
        ...     _ = (out / name).write_text("")
        >>> remove_stale(out, ["stress_subsets_truncation.png"], subsets=True)
        ['stress_subsets_negation.png']
    """
    found = sorted(p.name for p in output.glob("stress_subsets*") if p.name.endswith((".png", ".jsonl")))
    return remove_earlier(output, [n for n in found if n not in figures and (n != "stress_subsets.jsonl"
                                                                            or not subsets)])  # fmt: skip


def _write_stress_files(
    opts: _StressOptions, run: ScoringContext, done: _StressDone, output: Path, started: float
) -> tuple[StressRun, list[dict[str, Any]], list[dict[str, Any]], list[str]]:
    """Write :func:`_write_stress`'s files (inside its :func:`~dialeval.atomic.all_or_nothing` block)."""
    from dialeval.commands.common import write_text
    from dialeval.jsonl import write_jsonl
    from dialeval.stress.run import StressLine
    from dialeval.stress.subsets import subset_distribution_png

    result = done.result
    figures = []
    for p in done.drawn:
        figures.append(f"stress_subsets_{p}.png")
        with atomic_write(output / figures[-1], "wb") as handle:
            handle.write(subset_distribution_png(result.scores, p))
    subsets: dict[str, Any] = {"mode": opts.subsets, "items": _subset_items(done)}
    if done.judged:
        subsets["judged_contexts"] = done.judged
    run_info = StressRun(
        benchmark=done.bench.name,
        source=done.bench.source,
        metrics=family_signatures(result.scores),
        request=run.request.record(),
        engine=run.engine.describe(),
        cache=run.cache_path(),
        seed=opts.seed,
        bootstrap={"resamples": opts.n_boot, "unit": "context"},
        subsets=subsets,
        applied=result.applied,
        skipped=result.skipped,
        seconds=round(time.perf_counter() - started, 2),
    )
    rows = [{**r.as_dict(), "value": r.as_dict()["fraction"], "skipped": result.skipped[r.perturbation]}
            for r in result.rows]  # fmt: skip
    sub_rows = [r.as_dict() for r in result.subset_rows]
    write_jsonl(output / "stress.jsonl", [StressLine.of(r, result.skipped[r.perturbation]) for r in result.rows])
    if result.subset_rows:
        write_jsonl(output / "stress_subsets.jsonl", result.subset_rows)
    md = to_markdown(result, done.title, figures, done.figure_notes)
    write_text(output / "stress.md", md + warned(rough_resamples(opts.n_boot)))
    write_run_info(output, run_info)
    return run_info, rows, sub_rows, figures


def _subset_items(done: _StressDone) -> dict[str, int]:
    return dict(Counter(c.tags.get("subset", "untagged") for c in done.candidates))


def _result_lines(done: _StressDone) -> list[str]:
    """Return the lines said under the fraction table: counts, n/a reasons, pairs left out, figures not drawn."""
    from dialeval.stress.run import left_out_notes, na_lines, perturbed_lines

    result = done.result
    return [*perturbed_lines(result), *na_lines(result.rows), *left_out_notes(result), *done.figure_notes]


def _print_stress(
    done: _StressDone, output: Path, figures: Sequence[str], seconds: float | None,
    replaced: Sequence[Path] = (), warnings: Sequence[str] = (), removed: Sequence[str] = (),
) -> None:  # fmt: skip
    """Print the fraction table, the perturbation counts, the ``warnings`` and the files written (replaced, removed)."""
    from dialeval.commands.tables import ScreenTable

    result, names = done.result, done.names
    cell = {(r.metric, r.perturbation): r for r in result.rows}
    row_names = dict.fromkeys(r.metric for r in result.rows)
    grid = [([m], [figure(cell[(m, p)].fraction) for p in names]) for m in row_names]
    out.print(ScreenTable(done.title, ["metric"], list(names), grid))  # blocks of perturbations that fit the width
    for line in _result_lines(done):
        console.print(line, highlight=False, markup=False)
    if result.subset_rows:
        items = ", ".join(f"{name} {n}" for name, n in _subset_items(done).items())
        console.print(f"subsets ({done.mode}): {items}", highlight=False)
    if done.judged:  # it printed a Python dict: {'open-ended': 2}
        judged = ", ".join(f"{name} {n}" for name, n in done.judged.items())
        console.print(f"subsets (judge), per context: {judged}", highlight=False)
    warn(warnings)
    written = [f for f in STRESS_FILES if result.subset_rows or f != "stress_subsets.jsonl"] + list(figures)
    note = replaced_note([p for p in replaced if p.name in written])
    wrote = f"wrote {output}/{{{', '.join(written)}}} in {seconds} s{note}"
    console.print(wrote, highlight=False, markup=False, soft_wrap=True)
    say_removed(output, removed)


def _ranking(
    opts: _StressOptions, loaded: _RankingInputs, output: Path, as_json: bool, run: ScoringContext, started: float,
    note: str = "",
) -> list[Score]:  # fmt: skip
    """``dialeval stress --benchmark dailydialog++``: rank good responses against the negatives of their context.

    ``started``: the run's ``time.perf_counter()`` at its start, before the inputs were read (run.json's seconds);
    ``note`` ends the line that says what was written (:func:`replaced_note`).
    Returns the scores (none when it failed; it has then exited).
    """
    from dialeval.commands.common import write_text
    from dialeval.jsonl import write_jsonl
    from dialeval.stress.ranking import ranking_markdown

    bench, candidates, split, refs = loaded.bench, loaded.candidates, loaded.split, loaded.refs
    try:
        result = _run_ranking(opts, loaded, run)
    except DialevalError as exc:
        fail(exc)
        return []
    n_ctx = len(bench.dialogues)
    ranked = Counter(str(c.tags.get("label")) for c in candidates)
    title = (
        f"{bench.name} {split}: how often each metric ranks a good response above the negatives of its context "
        f"({n_ctx} contexts; per context {refs} good response(s) held out as reference, "
        f"{ranked['good'] // max(1, n_ctx)} ranked)"
    )
    run_info = RankingRun(
        benchmark=bench.name,
        metrics=family_signatures(result.scores),
        split=split,
        source=bench.source,
        contexts=n_ctx,
        ranked=dict(ranked),
        references_per_context=refs,
        request=run.request.record(),
        engine=run.engine.describe(),
        cache=run.cache_path(),
        seed=opts.seed,
        bootstrap={"resamples": opts.n_boot, "unit": "context"},
        skipped_metrics=result.skipped,
        warnings=bench.warnings,
        seconds=round(time.perf_counter() - started, 2),
    )
    rows = [r.as_dict() for r in result.rows]
    rough = rough_resamples(opts.n_boot)
    try:  # a write error (a full disk) was a traceback, leaving ranking.jsonl beside the last run's ranking.md
        with all_or_nothing(output):
            write_jsonl(output / "ranking.jsonl", result.rows)
            write_text(output / "ranking.md", ranking_markdown(result, title) + warned(rough))
            write_run_info(output, run_info)
    except DialevalError as exc:
        fail(exc)
        return []
    if as_json:
        said = [*(f"skipped {fam}: {why}" for fam, why in result.skipped.items()), *bench.warnings, *rough]
        out.print_json(json.dumps({"run": run_info.as_dict(), "rows": rows, "notes": said}))
    else:
        _print_ranking(result, title, bench.warnings, output, run_info.seconds, note, rough)
    return result.scores


@dataclass
class _RankingInputs:
    """The DailyDialog++ ranking's inputs, read, and its metrics, built, before the run is opened."""

    bench: Benchmark
    candidates: list[Candidate]
    split: str
    refs: int
    metrics: list[Metric]


def _load_ranking(opts: _StressOptions, split: str, refs: int, request: ScoringRequest) -> _RankingInputs:
    """Load DailyDialog++, hold out ``refs`` good responses per context as references, and build the metrics."""
    from dialeval.data.dailydialog_pp import default_path, load_dailydialog_pp
    from dialeval.stress.ranking import hold_out_references

    given = "its negatives are given"
    subsets = opts.subsets if opts.subsets != "rule" else None  # another was accepted and split nothing
    for option, value, why in (("--perturb", opts.perturb, given), ("--plot", opts.plot, given),
                               ("--subsets", subsets, "its ranking is not split into subsets")):  # fmt: skip
        if value is not None:
            raise InputError(f"{option} does not apply to dailydialog++ ({why})", field=option)
    if opts.dialogues or opts.candidates or (opts.table is not None and opts.table.given()):
        raise InputError("dailydialog++ is read from its own files (--path, --split): --dialogues, --candidates, "
                         "--mapping and the --*-col options do not apply", field="--benchmark")  # fmt: skip
    bench = load_dailydialog_pp(opts.path if opts.path is not None else default_path(split), split)
    if opts.limit is not None:
        bench = bench.head(opts.limit)
    candidates = hold_out_references(bench.candidates, refs)
    return _RankingInputs(bench, candidates, split, refs, request.plan(default=LEXICAL.split(",")).build())


def _run_ranking(opts: _StressOptions, loaded: _RankingInputs, run: ScoringContext) -> RankingResult:
    """Rank the held-out candidates' good responses against the negatives of their context."""
    from dialeval.stress.ranking import run_ranking

    with run.bars({m.name: len(loaded.candidates) for m in loaded.metrics}) as tick:
        return run_ranking(
            loaded.candidates, loaded.bench.dialogues, loaded.metrics, n_boot=opts.n_boot, seed=opts.seed,
            cache=run.cache, engine=run.engine, progress=tick,
        )


def _print_ranking(
    result: RankingResult, title: str, notes: Sequence[str], output: Path, seconds: float | None, note: str = "",
    warnings: Sequence[str] = (),
) -> None:  # fmt: skip
    """Print the ranking table, the skipped metrics, the benchmark's notes, the ``warnings`` and the files written.

    ``note`` ends the line that says what was written.
    """
    from dialeval.commands.tables import ScreenTable
    from dialeval.stress.ranking import NEGATIVES

    cell = {(r.metric, r.negatives): r for r in result.rows}
    row_names = dict.fromkeys(r.metric for r in result.rows)
    grid = [([m], [figure(cell[(m, n)].fraction) for n in NEGATIVES]) for m in row_names]
    out.print(ScreenTable(title, ["metric"], [f"good > {neg}" for neg in NEGATIVES], grid))
    for fam, why in result.skipped.items():
        console.print(f"skipped {fam}: {why}", highlight=False)
    for n in notes:
        console.print(f"note: {n}", highlight=False)
    warn(warnings)
    wrote = f"wrote {output}/{', '.join(RANKING_FILES)} in {seconds} s{note}"
    console.print(wrote, highlight=False, markup=False, soft_wrap=True)


def register(app: typer.Typer) -> None:
    """Add ``stress`` to the CLI."""
    app.command("stress")(stress)
