"""``dialeval generate`` (styled responses) and ``dialeval lmstyle`` (generate, score, print Tables 2/4/5)."""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import typer

from dialeval import __version__
from dialeval.atomic import all_or_nothing
from dialeval.commands.common import (
    check_output,
    check_request_failures,
    console,
    fail,
    interrupted_run,
    out,
    remove_earlier,
    replaced_note,
    say_removed,
    write_json,
    write_text,
)
from dialeval.commands.options import run_options
from dialeval.errors import DialevalError, InputError, check_at_most, check_seed, ensure_unique
from dialeval.lmstyle.score import JudgeSettings
from dialeval.runinfo import LmstyleRun, MetricInfo, command_line, write_run_info
from dialeval.scoring import ScoringRequest
from dialeval.words import counted, some_of, split_names

_MODEL = typer.Option([], "--model", help="Model spec, repeatable: smollm2 (packaged), a .gguf, a folder, NAME@URL.")
#: ``--limit`` as every command names it; ``--n`` is its earlier name, still read.
_N = typer.Option(50, "--limit", "--n", help="First N queries of each dataset.")
_DATASETS = typer.Option("dd,bst", "--datasets", help="Comma-separated: dd (DailyDialog), bst (Blended Skill Talk).")
_STYLES = typer.Option("formal,informal,positive,negative", "--styles", help="Comma-separated styles.")
_TEMP = typer.Option(0.7, "--temperature", help="Sampling temperature (0: greedy).")
_MAXTOK = typer.Option(40, "--max-tokens", help="Most tokens per response.")
_STOP = typer.Option([], "--stop", help="Stop string, repeatable, escapes allowed (default: ### and \\n).")
_SEED = typer.Option(0, "--seed", help="Sampling seed.")
_DATA = typer.Option(None, "--data", help="Shared data folder (default: $DIALEVAL_DATA or ../shared/data).")
#: The paper's metrics, what ``lmstyle`` scores unless ``-m`` names some of them.
PAPER_METRICS = ("style", "sacrebleu", "embedding", "likelihood", "judge")
_JSON = typer.Option(False, "--json", help="Print JSON only (what the command wrote to its JSON files).")
_ALLOW_GENERATE = typer.Option(
    False, "--allow-failures",
    help="Exit 0 even when generation requests failed (the responses that came back are written; "
    "generation.json counts the others by reason).",
)  # fmt: skip
_ALLOW_LMSTYLE = typer.Option(
    False, "--allow-failures",
    help="Exit 0 even when generation or judge requests failed (what came back is written and scored; run.json "
    "counts failed generations by reason; failed judge requests leave null scores that say why).",
)  # fmt: skip
_NOCACHE = typer.Option(
    False, "--no-cache", help="Call the backends again and compute every score: no request cache, no score cache."
)
#: What ``generate`` writes in OUTPUT.
GENERATE_FILES = ("dialogues.jsonl", "candidates.jsonl", "generation.json")
#: What ``lmstyle`` writes in OUTPUT.
LMSTYLE_FILES = LmstyleRun.FILES


def _settings(temperature: float, max_tokens: int, stop: list[str], seed: int) -> Any:
    from dialeval.backends.base import C_INT
    from dialeval.lmstyle.generate import GenerationSettings

    if max_tokens < 1:
        raise InputError(f"must be at least 1, got {max_tokens}", field="--max-tokens")
    check_at_most(max_tokens, C_INT, "--max-tokens", why="llama.cpp's is a C int")  # each request came back HTTP 400
    check_seed(seed)  # llama.cpp read a negative seed as "a random one": the same command, other responses
    if not 0 <= temperature < float("inf"):  # a negative one was sent to the backend, which sampled anyway
        raise InputError(f"must be 0 (greedy) or a larger finite number, got {temperature}", field="--temperature")
    stops = tuple(unescape(s, "--stop") for s in stop) if stop else GenerationSettings.stop
    if "" in stops:  # every response stopped before its first token: all of them came back empty
        raise InputError("an empty stop string ends every response before it starts", field="--stop")
    ensure_unique(stops, "--stop", "stop string")
    return GenerationSettings(temperature=temperature, max_tokens=max_tokens, stop=stops, seed=seed)


def unescape(text: str, field: str) -> str:
    r"""Return ``text`` with its backslash escapes (``\n``, ``\t``, ``\u3002``) read, and every other character kept.

    Python's ``unicode_escape`` codec reads text as Latin-1 bytes, so ``--stop é`` became ``Ã©``,
    which no response holds: the stop string never stopped anything, and the signature recorded it.

    Raises:
        InputError: An escape that is cut short or unknown (``\x4``, a lone trailing ``\``).

    Example:
        >>> unescape("###", "--stop"), unescape(r"\n", "--stop"), unescape("é", "--stop"), unescape("。", "--stop")
        ('###', '\n', 'é', '。')
        >>> unescape("\\x4", "--stop")
        Traceback (most recent call last):
        ...
        dialeval.errors.InputError: field "--stop": "\x4" holds an escape that is cut short or unknown ...
    """
    try:
        return text.encode("latin-1", "backslashreplace").decode("unicode_escape")
    except UnicodeDecodeError as exc:
        raise InputError(f'"{text}" holds an escape that is cut short or unknown ({exc.reason}); write a backslash '
                         "as \\\\", field=field) from None  # fmt: skip


def _inputs(
    data: Path | None, datasets: str, models: list[str], judge_model: str = "", request: ScoringRequest | None = None
) -> Iterator[tuple[str, Path | None]]:
    """Yield the files a run reads, for :func:`check_output`: the query and reference files, the local models.

    The query and reference files of each ``--datasets`` in the data folder (``--data``, else the shared
    one), each ``--model`` and ``--judge-model`` that is a .gguf file or a folder, and what ``request``
    reads (the score cache, ``-p`` files). Lazily: they are looked up only when the output folder
    holds a file the run would replace.
    """
    from dialeval.lmstyle.generate import parse_model_spec
    from dialeval.lmstyle.prompt import DATASETS
    from dialeval.paths import shared_data_dir

    root = data or shared_data_dir()
    for ds in split_names(datasets, "--datasets", "dataset"):
        if root is not None and ds in DATASETS:
            yield from (("--data", root / "lmstyle" / name) for name in DATASETS[ds][1:])
    for option, spec in [*(("--model", m) for m in models), ("--judge-model", judge_model)]:
        kind, model, _, _ = parse_model_spec(spec)
        if kind != "openai-compatible" and model:
            yield option, Path(model)
    if request is not None:
        yield from request.inputs()


def _counts(summary: dict[str, Any]) -> str:
    """Return a model's generation summary as a line.

    Example:
        >>> _counts({"signature": "generate|...", "empty": 1, "requests": 8, "calls": 6, "cache_hits": 2,
        ...          "completion_tokens": 90, "seconds": 3.5})
        '8 responses: 6 generated (90 tokens), 2 from the request cache, 1 empty; 3.5 s; signature generate|...'
        >>> line = _counts({"signature": "g", "requests": 2, "calls": 2, "failed": 1, "failures": {"HTTP 400": 1},
        ...                 "seconds": 0.1})
        >>> line.split(";")[0]
        '2 responses: 1 generated (0 tokens), 0 from the request cache, 0 empty, 1 failed (not written: 1 x HTTP 400)'
    """
    def n(key: str) -> int:
        return int(summary.get(key, 0))

    failed = f", {n('failed')} failed (not written: {_causes(summary)})" if n("failed") else ""
    cut = f", {n('cut_by_max_tokens')} cut by --max-tokens" if n("cut_by_max_tokens") else ""
    if n("control_characters"):
        cut += f", {n('control_characters')} with control characters (written as U+FFFD)"
    plural = "" if n("requests") == 1 else "s"
    generated = n("calls") - n("failed")  # the calls the backend answered
    return (f"{n('requests')} response{plural}: {generated} generated ({n('completion_tokens')} tokens), "
            f"{n('cache_hits')} from the request cache, {n('empty')} empty{cut}{failed}; {summary['seconds']} s; "
            f"signature {summary['signature']}")  # fmt: skip


def _causes(summary: dict[str, Any]) -> str:
    """Return a model's failed requests by reason, the three most frequent, as ``2 x HTTP 400: ...``.

    Example:
        >>> _causes({"failed": 3, "failures": {"HTTP 400: too long": 2, "HTTP 500": 1}})
        '2 x HTTP 400: too long; 1 x HTTP 500'
        >>> _causes({"failed": 10, "failures": {"a": 4, "b": 3, "c": 2, "d": 1}})
        '4 x a; 3 x b; 2 x c; 1 other reason'
    """
    causes = list(summary.get("failures", {}).items())
    more = f"; {counted(len(causes) - 3, 'other reason')}" if len(causes) > 3 else ""
    return "; ".join(f"{count} x {why}" for why, count in causes[:3]) + more


def check_generation_failures(summaries: dict[str, Any], allow: bool) -> None:
    """After the outputs are written, exit 1 if generation requests failed, unless ``allow`` (``--allow-failures``).

    Prints one line: how many responses were lost, and each model's reasons. (Before, ``generate``
    exited 0 and said only "failed (not written)", even when it wrote no candidate at all.)
    """
    failed = {label: s for label, s in summaries.items() if s.get("failed")}
    if not failed or allow:
        return
    from rich.markup import escape

    total = sum(int(s.get("requests", 0)) for s in summaries.values())
    lost = sum(int(s["failed"]) for s in failed.values())
    causes = "; ".join(f"{label}: {_causes(s)}" for label, s in failed.items())
    back = total - lost
    kept = f"the {back} that came back {'was' if back == 1 else 'were'} written" if back else "none came back"
    console.print(
        f"[bold red]error:[/] {some_of(lost, total, 'response', ('was', 'were'))} not generated because requests "
        f"failed ({escape(causes)}); {kept}; rerun to try the failed ones again, or pass --allow-failures to "
        "accept them",
        highlight=False,
        soft_wrap=True,
    )
    raise typer.Exit(1)


def _generate_all(
    models: list[str], n: int, datasets: str, styles: str, settings: Any, data: Path | None, output: Path,
    use_cache: bool,
) -> tuple[dict[str, Any], list[Any], dict[str, Any]]:
    """Generate with every model; return dialogues, candidates and per-model summaries.

    On Ctrl-C, one line says that nothing was written to ``output`` and what the request cache kept.
    """
    from dialeval.lmstyle.generate import DEFAULT_MODEL, generate_styled, make_generator
    from dialeval.lmstyle.prompt import DATASETS, read_pairs, split_shots
    from dialeval.paths import shared_data_dir

    root = data or shared_data_dir()
    if root is None:
        raise InputError("no shared data folder found; pass --data or set DIALEVAL_DATA")
    if n < 1:  # before the data folder is read
        raise InputError(f"must be at least 1, got {n}", field="--limit")
    style_list = _style_list(styles)
    names = split_names(datasets, "--datasets", "dataset")
    ensure_unique(names, "--datasets", "dataset")
    pairs = {ds: read_pairs(root, ds) for ds in names}
    for ds, lines in pairs.items():  # before any model loads: generate_styled refused it after, naming "n"
        split_shots(lines, n, field="--limit", path=root / "lmstyle" / DATASETS[ds][1])
    _check_models(models or [DEFAULT_MODEL])
    dialogues: dict[str, Any] = {}
    candidates: list[Any] = []
    summaries: dict[str, Any] = {}
    for spec in models or [DEFAULT_MODEL]:
        backend, label = make_generator(spec)
        todo = counted(len(pairs) * n * len(style_list), "response")
        console.print(f"generating {todo} with {label} ...", highlight=False)
        kept = "the responses generated so far are kept in the request cache"
        with interrupted_run(output, not use_cache, kept=kept):
            got = generate_styled(backend, label, pairs, style_list, n, settings, use_cache=use_cache)
        dialogues.update(got.dialogues)
        candidates.extend(got.candidates)
        summaries[label] = {"spec": spec, **got.summary()}
        console.print(f"  {label}: {_counts(got.summary())}", highlight=False, markup=False, soft_wrap=True)
    return dialogues, candidates, summaries


def _style_list(styles: str) -> list[str]:
    """Return ``--styles`` as names, each once; refuse an empty or unknown one."""
    from dialeval.lmstyle.prompt import style_word

    style_list = [s.lower() for s in split_names(styles, "--styles", "style")]  # an empty name is refused
    ensure_unique(style_list, "--styles", "style")  # each once: one response each
    for s in style_list:
        style_word(s)
    return style_list


def _asked(models: list[str], dialogues: dict[str, Any], styles: str) -> dict[tuple[str, str, str], int]:
    """Return the responses asked of each model per (dataset, style): one per query of the dataset.

    Example:
        >>> from dialeval.schema import Dialogue
        >>> _asked(["m"], {"q": Dialogue(id="q", turns=[], tags={"dataset": "dd"})}, "formal,positive")
        {('m', 'dd', 'formal'): 1, ('m', 'dd', 'positive'): 1}
    """
    queries, style_list = Counter(d.tags["dataset"] for d in dialogues.values()), _style_list(styles)
    return {(m, ds, st): k for m in models for ds, k in queries.items() for st in style_list}


def _check_models(specs: list[str]) -> None:
    """Refuse a model named twice (by two names too) or not there, before any model generates.

    A second model that was not there, or two paths of one model, ended the run after the first
    model had generated all its responses.

    Example:
        >>> _check_models(["smollm2", "m@http://127.0.0.1:1/v1", "m@http://127.0.0.1:2/v1"])
        Traceback (most recent call last):
        ...
        dialeval.errors.InputError: field "--model": model "m" is listed twice
    """
    from dialeval.lmstyle.generate import check_model_spec, parse_model_spec

    ensure_unique(specs, "--model", "model")
    labels = [parse_model_spec(spec)[3] for spec in specs]
    if twice := next((label for i, label in enumerate(labels) if label in labels[:i]), None):
        raise InputError(f'model "{twice}" is listed twice', field="--model")
    for spec in specs:
        check_model_spec(spec, "--model")


def _write_records(output: Path, dialogues: dict[str, Any], candidates: list[Any]) -> None:
    """Write dialogues.jsonl and candidates.jsonl (inside the caller's :func:`all_or_nothing` block)."""
    from dialeval.jsonl import write_jsonl

    write_jsonl(output / "dialogues.jsonl", dialogues.values())
    write_jsonl(output / "candidates.jsonl", candidates)


def generate(
    model: list[str] = _MODEL, n: int = _N, datasets: str = _DATASETS, styles: str = _STYLES,
    temperature: float = _TEMP, max_tokens: int = _MAXTOK, stop: list[str] = _STOP, seed: int = _SEED,
    data: Path | None = _DATA, no_cache: bool = _NOCACHE, as_json: bool = _JSON,
    output: Path = typer.Option(Path("runs/generate"), "--output", "-o", help="Output folder."),
    allow_failures: bool = _ALLOW_GENERATE,
) -> None:  # fmt: skip
    """Generate styled responses with the LMStyle Fig. 3 few-shot prompt.

    Writes dialogues.jsonl and candidates.jsonl (re-score them with dialeval score --dialogues
    OUT/dialogues.jsonl --candidates OUT/candidates.jsonl) and generation.json (signatures, counts,
    failed requests by reason). Requests that fail are not written and the exit is 1, unless
    --allow-failures.
    """
    try:
        replaced = check_output(output, "folder", inputs=_inputs(data, datasets, model), files=GENERATE_FILES)
        settings = _settings(temperature, max_tokens, stop, seed)
        dialogues, candidates, summaries = _generate_all(
            model, n, datasets, styles, settings, data, output, not no_cache
        )
    except (DialevalError, FileNotFoundError, ValueError) as exc:
        fail(exc if isinstance(exc, DialevalError) else InputError(str(exc)))
        return
    info = {"command": command_line(), "version": __version__, "n": n, "models": summaries}
    with all_or_nothing(output):  # a failed write left this run's dialogues beside an earlier run's candidates
        _write_records(output, dialogues, candidates)
        write_json(output / "generation.json", info)
    # an lmstyle run's scores, tables and run.json are of the records just replaced: report showed them as these
    removed = remove_earlier(output, LMSTYLE_FILES[2:]) if _holds_lmstyle_run(output) else []
    if as_json:
        out.print_json(json.dumps(info))
    else:
        wrote = f"wrote {counted(len(candidates), 'candidate')} to {output}/candidates.jsonl{replaced_note(replaced)}"
        console.print(wrote, highlight=False, markup=False, soft_wrap=True)
        say_removed(output, removed)
    check_generation_failures(summaries, allow_failures)


def _holds_lmstyle_run(output: Path) -> bool:
    """Return whether ``output`` holds an lmstyle run's files: its lmstyle_tables.jsonl, summary.jsonl, or run.json.

    Only its lmstyle_tables.jsonl was looked for: a run without it (deleted, or renamed into place in part) left
    its scores.jsonl, table.md and run.json beside generate's records. A run.json counts when its kind is lmstyle.

    Example:
        >>> import tempfile
        >>> with tempfile.TemporaryDirectory() as folder:
        ...     kinds = []
        ...     for kind in ("benchmark", "lmstyle"):
        ...         _ = (Path(folder) / "run.json").write_text(json.dumps({"kind": kind}))
        ...         kinds.append(_holds_lmstyle_run(Path(folder)))
        >>> kinds
        [False, True]
    """
    if any((output / name).is_file() for name in ("lmstyle_tables.jsonl", "summary.jsonl")):
        return True
    try:
        run = json.loads((output / "run.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):  # none, or not JSON: nothing says it is lmstyle's
        return False
    return isinstance(run, dict) and run.get("kind") == LmstyleRun.model_fields["kind"].default


#: ``--judge-model`` and ``--judge-k`` when not given.
_JUDGE_DEFAULTS: dict[str, Any] = {"model": "smollm2", "k": 1}


@run_options
def lmstyle(
    model: list[str] = _MODEL, n: int = _N, datasets: str = _DATASETS, styles: str = _STYLES,
    temperature: float = _TEMP, max_tokens: int = _MAXTOK, stop: list[str] = _STOP, seed: int = _SEED,
    data: Path | None = _DATA,
    judge_model: str = typer.Option(
        _JUDGE_DEFAULTS["model"], "--judge-model", help="Appropriateness judge (model spec)."
    ),
    judge_k: int = typer.Option(_JUDGE_DEFAULTS["k"], "--judge-k", help="Judge samples per response."),
    compare_paper: bool = typer.Option(False, "--compare-paper", help="Print the paper's rows beside ours."),
    output: Path = typer.Option(Path("runs/lmstyle"), "--output", "-o", help="Output folder."),
    as_json: bool = _JSON,
    allow_failures: bool = _ALLOW_LMSTYLE,
    request: ScoringRequest = ScoringRequest(),
) -> None:  # fmt: skip
    """Run the LMStyle benchmark: generate, score (ACC, BLEU, SBERT, NLL, judge), print Tables 2/4/5.

    The metrics are style, sacrebleu, embedding, likelihood and judge, or those of them -m names,
    with the paper's settings (-p and --device are refused; --judge-model and --judge-k set the judge).
    Writes dialogues.jsonl, candidates.jsonl, scores.jsonl, table.md, lmstyle_tables.jsonl,
    summary.jsonl and run.json (command, signatures, settings, the request, counts, timings) to OUTPUT.
    Generations are kept in the request cache and scores in the score cache: a killed run resumes
    (--no-cache: neither cache, every response generated and scored again). When generation or
    judge requests fail, what came back is written and scored and the exit is 1, unless --allow-failures.
    """
    from dialeval.jsonl import write_jsonl
    from dialeval.lmstyle.score import score_generated

    started = time.perf_counter()
    inputs = _inputs(data, datasets, model, judge_model, request)
    try:
        replaced = check_output(output, "folder", inputs=inputs, files=LMSTYLE_FILES)
        settings = _settings(temperature, max_tokens, stop, seed)
        names = _metric_names(request)
        judge = _check_judge(names, judge_model, judge_k)
        run = request.open(quiet=as_json)
        dialogues, candidates, summaries = _generate_all(
            model, n, datasets, styles, settings, data, output, not request.no_cache
        )
        with interrupted_run(output, request.no_cache), run.bars({m: len(candidates) for m in names}) as tick:
            scored = score_generated(
                candidates, dialogues, judge, metrics=names, cache=run.cache, engine=run.engine,
                log=lambda line: console.print(f"  scored {line}", highlight=False), progress=tick,
            )
    except (DialevalError, FileNotFoundError, ValueError) as exc:
        fail(exc if isinstance(exc, DialevalError) else InputError(str(exc)))
        return
    tables, summary, markdown = _report(scored, candidates, _asked(list(summaries), dialogues, styles), compare_paper)
    run_info = LmstyleRun(
        n=n,
        generation=summaries,
        judge={**judge.params(), **scored.judge_summary},
        metrics={k: MetricInfo(signature=v, seconds=scored.seconds.get(k)) for k, v in scored.signatures.items()},
        request=request.record(),
        engine=run.engine.describe(),
        cache=run.cache_path(),
        seconds=round(time.perf_counter() - started, 2),
    )
    with all_or_nothing(output):  # an earlier run's files stay until these are all written (a failed scoring lost them)
        _write_records(output, dialogues, candidates)
        write_jsonl(output / "scores.jsonl", scored.scores)
        write_text(output / "table.md", f"{_heading(n, summaries, len(candidates))}\n\n{markdown}")
        write_jsonl(output / "lmstyle_tables.jsonl", [c for t in tables for c in t.cells()])
        write_text(output / "summary.jsonl", "".join(json.dumps(r) + "\n" for r in summary))
        write_run_info(output, run_info)
    removed = remove_earlier(output, GENERATE_FILES[2:])  # a generate run's: the settings of another generation
    if as_json:  # the rows as written: NaN as null
        cells = [json.loads(line) for line in (output / "lmstyle_tables.jsonl").read_text().splitlines()]
        out.print_json(json.dumps({"run": run_info.as_dict(), "tables": cells, "summary": summary}))
    else:
        typer.echo(markdown)  # plain text: a console that wraps lines would break the Markdown tables
        wrote = f"wrote {output}/ ({', '.join(LMSTYLE_FILES)}) in {run_info.seconds} s{replaced_note(replaced)}"
        console.print(wrote, highlight=False, markup=False, soft_wrap=True)
        say_removed(output, removed)
    check_generation_failures(summaries, allow_failures)
    check_request_failures(scored.scores, allow_failures)


def _report(
    scored: Any, candidates: list[Any], asked: dict[tuple[str, str, str], int], compare_paper: bool
) -> tuple[list[Any], list[dict[str, Any]], str]:
    """Return the paper's tables, the per-model summary rows, and both as Markdown (the body of table.md).

    ``asked``: the responses asked of each model per (dataset, style), as :func:`_asked` counts them; the cells
    count those never generated.
    """
    from dialeval.lmstyle.tables import build_table, summary_markdown, system_summary

    tables = [build_table(t, scored.scores, compare_paper=compare_paper, asked=asked, ran=scored.outputs)
              for t in ("table2", "table4", "table5")]  # fmt: skip
    models = list(dict.fromkeys(m for m, _, _ in asked))
    counts = {m: sum(1 for c in candidates if c.system == m) for m in models}
    empty = {m: sum(1 for c in candidates if c.system == m and not c.text) for m in models}
    cut = {m: sum(1 for c in candidates if c.system == m and "cut" in c.tags) for m in models}
    summary = system_summary(scored.scores, counts, empty, cut if any(cut.values()) else None)  # a column when any
    markdown = "\n".join(t.to_markdown() for t in tables)
    markdown += f"\n### System-level summary\n\n{summary_markdown(summary)}\n\n{_judge_line(scored.judge_summary)}\n"
    return tables, summary, markdown


def _heading(n: int, summaries: dict[str, Any], scored: int) -> str:
    """Return table.md's first line: ``n`` per dataset and style, and where generations failed, how many were scored.

    After failed generations (``--allow-failures``) it said "n=N" over fewer responses.

    Example:
        >>> _heading(2, {"m": {"requests": 8}}, 8)
        '# LMStyle benchmark, n=2 per dataset and style'
        >>> _heading(1, {"a": {"requests": 2, "failed": 1}, "b": {"requests": 2}}, 3)
        '# LMStyle benchmark, 3 of 4 responses scored (n=1 per dataset and style; 1 generation failed)'
    """
    failed = sum(int(s.get("failed", 0)) for s in summaries.values())
    heading = f"n={n} per dataset and style"
    if failed:
        asked = counted(sum(int(s["requests"]) for s in summaries.values()), "response")
        heading = f"{scored} of {asked} scored ({heading}; {counted(failed, 'generation')} failed)"
    return f"# LMStyle benchmark, {heading}"


def _metric_names(request: ScoringRequest) -> list[str]:
    """Return the paper's metrics that ``-m`` names (all by default); refuse ``-p`` and ``--device``.

    Raises:
        InputError: A metric that is not one of the paper's or is given twice, or ``-p`` or ``--device`` given.
    """
    if request.params or request.device:
        raise InputError("lmstyle scores with the paper's settings: it takes no -p or --device "
                         "(--judge-model and --judge-k set the judge)",
                         field="--param" if request.params else "--device")  # fmt: skip
    names = list(request.metrics or PAPER_METRICS)
    ensure_unique(names, "--metrics", "metric")  # each response was scored twice, and the summary counted both
    for name in names:
        if name not in PAPER_METRICS:
            known = ", ".join(PAPER_METRICS)
            raise InputError(f'"{name}" is not one of the paper\'s metrics: {known}', field="--metrics")
    return names


def _check_judge(names: list[str], model: str, k: int) -> JudgeSettings:
    """Return the judge's settings; refuse a bad one before any response is generated (it stopped the run after).

    Raises:
        InputError: ``--judge-k`` below 1 or above 1,000, a ``--judge-model`` that is not there, or either
            given when ``-m`` leaves the judge out (it would be ignored).
    """
    from dialeval.judges.metric import MAX_SAMPLES
    from dialeval.lmstyle.generate import check_model_spec

    if "judge" not in names:
        given = [f"--judge-{key}" for key, value in (("model", model), ("k", k)) if value != _JUDGE_DEFAULTS[key]]
        if given:
            also = "".join(f" (as does {option}, given too)" for option in given[1:])
            raise InputError(f"sets the judge, which -m leaves out{also}", field=given[0])
        return JudgeSettings(model=model, k=k)
    if k < 1:
        raise InputError(f"must be at least 1, got {k}", field="--judge-k")
    check_at_most(k, MAX_SAMPLES, "--judge-k", unit="samples per response")
    check_model_spec(model, "--judge-model")
    return JudgeSettings(model=model, k=k)


def _judge_line(summary: dict[str, Any]) -> str:
    if not summary:
        return "judge: not run"
    keys = ("responses", "scored", "from_score_cache", "items", "samples", "parse_retries", "parse_failures",
            "items_missing", "calls", "cache_hits")  # fmt: skip
    return "judge: " + ", ".join(f"{k} {summary[k]}" for k in keys if k in summary)


def register(app: typer.Typer) -> None:
    """Add ``generate`` and ``lmstyle`` to the CLI."""
    app.command("generate")(generate)
    app.command("lmstyle")(lmstyle)
