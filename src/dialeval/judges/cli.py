"""``dialeval judge list``, ``dialeval judge run`` and ``dialeval serve-model``."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from dialeval.commands.common import (
    TABLE_RULE,
    TableOptions,
    check_jsonl_name,
    check_output,
    check_request_failures,
    check_serving,
    console,
    fail,
    given_once,
    interrupted_run,
    load_inputs,
    replaced_note,
    summary_path,
    table_options,
)
from dialeval.commands.options import allow_failures_option, judge_run_options
from dialeval.errors import DialevalError, InputError, UnknownNameError, check_at_most
from dialeval.scoring import ScoringRequest
from dialeval.words import counted, figure

if TYPE_CHECKING:
    from collections.abc import Sequence

    from dialeval.data.benchmark import Benchmark
    from dialeval.judges.protocol import Protocol
    from dialeval.schema import Score

judge_app = typer.Typer(help="LLM-as-a-judge protocols.", no_args_is_help=True)


@judge_app.command("list")
def list_command(
    as_json: bool = typer.Option(False, "--json", help="Print every protocol as JSON only."),
) -> None:
    """Show every built-in protocol: name, version, scale, outputs, citation."""
    from dialeval.commands.common import say
    from dialeval.judges import load_protocol, protocol_names
    from dialeval.metrics.resolve import family

    entries: list[dict[str, Any]] = []
    for name in protocol_names():
        p = load_protocol(name)
        entries.append({
            "name": name, "version": p.version, "scale": [p.scale.min, p.scale.max],
            "outputs": list(family(f"judge:{name}").outputs), "citation": p.citation,
        })  # fmt: skip
    if as_json:
        typer.echo(json.dumps(entries, indent=2))
        return
    # One block per protocol, wrapped at the terminal's width between words, as `dialeval metrics` prints: a table
    # of five columns cut the output names or the citation at 80 columns.
    say("dialeval judge protocols (metric family judge:<name>)")
    for e in entries:
        low, high = e["scale"]
        typer.echo("")
        say(f"{e['name']}  version {e['version']}, scale {low:g}-{high:g}")
        for label, text in (("outputs", ", ".join(e["outputs"])), ("citation", e["citation"])):
            say(f"{label}: {text}", "  ")


def output_counts(values: dict[str, list[float | None]]) -> dict[str, dict[str, Any]]:
    """Return, per output, the items scored and missing and the mean score (None when none was scored).

    Example:
        >>> output_counts({"judge:x": [1.0, None, 2.0]})
        {'judge:x': {'scored': 2, 'missing': 1, 'mean': 1.5}}
    """
    counts: dict[str, dict[str, Any]] = {}
    for out, vals in values.items():
        got = [v for v in vals if v is not None]
        mean = sum(got) / len(got) if got else None
        counts[out] = {"scored": len(got), "missing": len(vals) - len(got), "mean": mean}
    return counts


def summary_table(summary: dict[str, Any], values: dict[str, list[float | None]]) -> Any:
    """Return the console tables of a judge run: mean score per output, parse failures, calls, tokens; its notes.

    Names and numbers are never cut (:class:`~dialeval.commands.tables.ScreenTable`).
    """
    from rich.console import Group
    from rich.text import Text

    from dialeval.commands.tables import ScreenTable

    means = [
        ([out], [str(c["scored"]), str(c["missing"]), "-" if c["mean"] is None else figure(c["mean"])])
        for out, c in output_counts(values).items()
    ]
    counts = [([key], [str(val)]) for key, val in summary.items() if key not in ("protocol", "notes")]
    notes = [Text(f"note: {n}") for n in summary.get("notes", [])]  # a row read "['the server refused ...']"
    return Group(
        ScreenTable(f"judge run: {summary['protocol']}", ["output"], ["scored", "missing", "mean"], means),
        ScreenTable("counts", ["count"], ["value"], counts, justify_values="left"),
        *notes,
    )


#: ``--out`` is the option's earlier name, still read.
OUTPUT_FLAGS = ("--output", "-o", "--out")


@judge_app.command("run")
@judge_run_options
@table_options
def run_command(
    positional: str | None = typer.Argument(None, metavar="PROTOCOL", help="The same as --protocol."),
    option: str | None = typer.Option(None, "--protocol", help="Protocol name (see `judge list`) or a YAML path."),
    benchmark: str | None = typer.Option(None, "--benchmark", "-b", help="Catalog benchmark (default usr-tc)."),
    path: Path | None = typer.Option(None, "--path", help=TABLE_RULE),
    dialogues: Path | None = typer.Option(None, "--dialogues", help="Dialogue records (JSONL)."),
    candidates: Path | None = typer.Option(None, "--candidates", help="Candidate records (JSONL)."),
    limit: int = typer.Option(5, "--limit", help="Contexts to judge (all systems of each)."),
    out: Path | None = typer.Option(
        None, *OUTPUT_FLAGS, help="Write scores (JSONL) and the summary with the request (<output>.summary.json)."
    ),
    allow_failures: bool = allow_failures_option,
    as_json: bool = typer.Option(False, "--json", help="Print the summary, with each output's counts, as JSON only."),
    table: TableOptions = TableOptions(),
    request: ScoringRequest = ScoringRequest(),
) -> None:
    """Judge the first contexts of a benchmark or of your own data, and print the summary table.

    The judge's parameters come with -p as for every metric (`-p k=1 -p backend=openai-compatible`):
    backend (llamacpp | openai-compatible | transformers), model, base_url, api_key_env, k,
    temperature, seed, max_tokens, in_flight, max_calls, cache (the request cache).
    Every request is cached (-p cache=no turns that off); finished items are kept in the score
    cache (a killed run resumes); with --engine ray the items are judged on a Ray cluster.
    A backend that cannot be reached ends the run at its first request (one line, no output);
    requests that fail later leave null scores that say why, and exit 1 unless --allow-failures.
    """
    from rich.console import Console

    from dialeval.metrics.base import configured
    from dialeval.scoring import score_metrics

    try:
        protocol = _protocol(option, positional)
        # a path as load_protocol reads one: any suffix (mine.YAML was run as the metric "judge:mine.YAML")
        from_file = bool(Path(protocol).suffix)
        inputs = [("--protocol", Path(protocol) if from_file else None), ("--path", path), ("--dialogues", dialogues),
                  ("--candidates", candidates), ("--mapping", table.mapping), *request.inputs()]  # fmt: skip
        loaded = _load(protocol)
        step1 = loaded.step1_protocol if from_file else ""
        if Path(step1).suffix:  # a protocol file may name its step-1 protocol by path: read too
            inputs.append(("the step1_protocol of --protocol", Path(step1)))
        replaced = check_output(out, option="--output", inputs=inputs)
        replaced += check_output(None if out is None else summary_path(out), option="--output", inputs=inputs)
        check_jsonl_name(out, "Score records")  # after: writing over an input is the worse news
        request = request.model_copy(update={"metrics": ("judge:custom" if from_file else f"judge:{protocol}",)})
        bench, cut = _inputs(limit, benchmark, path, dialogues, candidates, table=table, show=not as_json)
        plan = request.plan(bench.candidates, sources=bench.sources)
        cls = plan.families[0]
        if from_file and "protocol" in plan.params[cls.name]:  # --protocol won over it, unsaid
            raise InputError("give the protocol once: --protocol or -p protocol, not both", field="--protocol")
        metric = configured(cls, {**plan.params[cls.name], **({"protocol": protocol} if from_file else {})})
        run = request.open(quiet=as_json)
        start = time.perf_counter()
        kept = _kept(metric.config.cache, not request.no_cache, metric.batch_size)
        with interrupted_run(out, not kept, kept=kept), run.bars({metric.name: len(bench.candidates)}) as tick:
            scored = score_metrics(
                [metric], bench.candidates, bench.dialogues, cache=run.cache, engine=run.engine, progress=tick
            )[0]
    except DialevalError as exc:
        fail(exc)
        return
    seconds = time.perf_counter() - start
    summary = {**scored.summary, "items_from_score_cache": scored.cached, "seconds": round(seconds, 2),
               "signature": scored.signature, "engine": run.engine.name, "request": request.record()}  # fmt: skip
    summary["notes"] = [*summary.get("notes", []), *cut]
    values: dict[str, list[float | None]] = {}
    for s in scored.scores:
        values.setdefault(s.metric, []).append(s.value)
    if as_json:
        typer.echo(json.dumps({**summary, "outputs": output_counts(values)}))
    else:
        shown = {k: v for k, v in summary.items() if k not in ("signature", "request")}
        Console(emoji=False).print(summary_table(shown, values))  # made here: COLUMNS is read when a console is made
    if out is not None:
        _write(out, scored.scores, summary)
        if not as_json:  # where the scores went: every other command that writes says so
            wrote = (f"wrote {counted(len(scored.scores), 'score')} for {counted(len(bench.candidates), 'item')} to "
                     f"{out} and the summary to {summary_path(out)}{replaced_note(replaced)}")  # fmt: skip
            console.print(wrote, highlight=False, markup=False, soft_wrap=True)
    check_request_failures(scored.scores, allow_failures)


def _inputs(
    limit: int, benchmark: str | None, path: Path | None, dialogues: Path | None, candidates: Path | None,
    table: TableOptions | None = None, show: bool = True,
) -> tuple[Benchmark, list[str]]:
    """Load the inputs (:func:`load_inputs`), cut to the first ``limit`` contexts, and say what was left out.

    The default ``--limit`` judged 5 contexts of your own table and said nothing of the rest.

    Example:
        >>> _inputs(58, "usr-tc", None, None, None)[1]
        ['judged the first 58 of 60 contexts (--limit, 5 by default), 2 left out: --limit 60 judges all']
    """
    from dialeval.data.benchmark import check_limit

    check_limit(limit)  # before any file is read, as load_inputs does
    bench = load_inputs(benchmark, path, dialogues, candidates, None, table=table, show=show)
    whole = len({c.context_id for c in bench.candidates})
    if whole <= limit:
        return bench, []
    return bench.head(limit), [f"judged the first {limit} of {whole} contexts (--limit, 5 by default), "
                               f"{whole - limit} left out: --limit {whole} judges all"]  # fmt: skip


def _kept(request_cache: bool, score_cache: bool, batch: int) -> str:
    """Say what an interrupted run kept: the answers in the request cache, whole batches in the score cache.

    It said "the items scored so far are kept in the score cache", which keeps only finished batches: a run of
    fewer items kept none there, and with ``-p cache=no`` a rerun asked every request again.

    Example:
        >>> _kept(True, True, 64)
        "the judge's answers so far are kept in the request cache (each finished batch of 64 items in the score cache)"
        >>> _kept(False, True, 64), _kept(False, False, 64)
        ('each finished batch of 64 items is kept in the score cache', '')
    """
    batches = f"each finished batch of {batch} items"
    if request_cache:
        return "the judge's answers so far are kept in the request cache" + (
            f" ({batches} in the score cache)" if score_cache else "")  # fmt: skip
    return f"{batches} is kept in the score cache" if score_cache else ""


def _load(protocol: str) -> Protocol:
    """Load ``--protocol`` before any work; an unknown name is an error of ``--protocol``, with the closest."""
    from dialeval.judges.protocol import load_protocol

    try:
        return load_protocol(protocol)
    except UnknownNameError as exc:
        raise exc.given_by("--protocol") from None


def _protocol(option: str | None, positional: str | None) -> str:
    """Return the protocol given as ``--protocol`` or as the argument (``judge run cpdscore-simple``), once.

    Example:
        >>> _protocol(None, "cpdscore-simple")
        'cpdscore-simple'
        >>> _protocol(None, None)
        Traceback (most recent call last):
        ...
        dialeval.errors.InputError: field "--protocol": give a protocol: --protocol NAME (dialeval judge list) or ...
    """
    protocol = given_once(option, positional, ("--protocol", "PROTOCOL"), "the protocol")
    if protocol is None:  # the argument alone said "Missing option '--protocol'"
        raise InputError("give a protocol: --protocol NAME (dialeval judge list) or a protocol YAML path",
                         field="--protocol")  # fmt: skip
    return protocol


def _write(out: Path, scores: Sequence[Score], summary: dict[str, Any]) -> None:
    """Write the scores and their summary as one: scores without their summary (the request) are not left behind."""
    from dialeval.atomic import all_or_nothing, atomic_write
    from dialeval.jsonl import write_jsonl

    try:
        with all_or_nothing(out.parent):
            write_jsonl(out, scores)
            with atomic_write(summary_path(out)) as fh:
                fh.write(json.dumps(summary, indent=1) + "\n")
    except DialevalError as exc:
        fail(exc)


def serve_model(
    model: str = typer.Option("", help="GGUF file (default: the packaged SmolLM2-135M-Instruct)."),
    port: int = typer.Option(8080, help="Port on 127.0.0.1."),
    n_ctx: int = typer.Option(4096, help="Context tokens per slot."),
    parallel: int = typer.Option(4, help="Requests served at once."),
) -> None:
    """Serve a GGUF model as an OpenAI-compatible server on 127.0.0.1 until Ctrl-C."""
    from dialeval.backends.base import C_INT, missing_model
    from dialeval.backends.llamacpp import local_server

    try:
        check_serving(port, n_ctx=n_ctx, parallel=parallel)  # llama.cpp: "listening on ...:99999", serving nothing
        # llama.cpp's whole context, --n-ctx times --parallel, is a C int: 10**20 was an OverflowError traceback
        check_at_most(parallel, C_INT, "--parallel", why="llama.cpp's slots are a C int")
        check_at_most(n_ctx, C_INT // parallel, "--n-ctx", why=f"times --parallel {parallel}, llama.cpp's context "
                      "is a C int")  # fmt: skip
        if why := missing_model("llamacpp", model):  # the backend's check, which named the file and no option
            raise InputError(why, path=model, field="--model")
        local_server(model or None, n_ctx=n_ctx, n_parallel=parallel, port=port, verbose=True)
    except DialevalError as exc:
        fail(exc)
    typer.echo(f"serving on http://127.0.0.1:{port}/v1 (POST /v1/chat/completions); Ctrl-C to stop", err=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        pass


def register(app: typer.Typer) -> None:
    """Add ``judge`` and ``serve-model`` to the main app."""
    app.add_typer(judge_app, name="judge")
    app.command("serve-model")(serve_model)
