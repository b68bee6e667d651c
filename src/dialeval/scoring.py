"""The one scoring service: plan -> cache -> engine -> assemble.

Every command that scores (``score``, ``benchmark``, ``judge run``, ``stress``,
``lmstyle``) and the trained evaluators' features call it, so they all get the
score cache (a rerun computes nothing, a killed run resumes), ``--engine ray``,
deduplication of identical inputs, progress and the same signatures.

1. plan: each metric splits its items into parts (:meth:`Metric.partition`, e.g.
   ``style`` with ``target=tag:NAME``: one metric per style); each part's inputs
   are looked up in the cache and the distinct unknown ones cut into batches of
   ``metric.batch_size``;
2. engine: every part's batches of every metric run in one engine run; each
   finished batch is committed to the cache before the next is taken;
3. assemble: one value per item and output (or one :class:`~dialeval.schema.Score`
   per candidate and output), each with its part's signature.

Example:
    >>> from dialeval.schema import Dialogue, Turn, Candidate
    >>> from dialeval.metrics.base import Metric
    >>> class Len(Metric):
    ...     name = "len_demo"
    ...     outputs = ("len_demo",)
    ...     def compute(self, items):
    ...         return {"len_demo": [float(len(i.response.split())) for i in items]}
    >>> dialogues = {"d": Dialogue(id="d", turns=[Turn(speaker="A", text="hi")])}
    >>> cands = [Candidate(id="d:s", dialogue_id="d", turn_index=1, system="s", text="hello there")]
    >>> [(s.metric, s.value, s.context_id) for s in score_candidates(Len(), cands, dialogues)]
    [('len_demo', 2.0, 'd#1')]
"""

from __future__ import annotations

import errno
import time
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict

from dialeval.cache import CachedValues, ScoreCache, input_key
from dialeval.errors import DialevalError, InputError
from dialeval.metrics.base import ItemInputError, Metric, MetricInput, build_inputs, configured, parameter_errors
from dialeval.schema import Candidate, Dialogue, Score
from dialeval.words import some_of

if TYPE_CHECKING:
    from dialeval.engines import BatchResult, Engine, WorkBatch

#: Called with (metric family, items finished).
ProgressFn = Callable[[str, int], None]
#: The progress callback of the innermost :func:`progress_bars` block: scoring deep inside a command
#: (the trained evaluators' features) reports to the command's bars without being handed a callback.
_ACTIVE: ContextVar[ProgressFn | None] = ContextVar("dialeval_progress", default=None)


@dataclass
class ScoringJob:
    """One (part of a) metric's work over a list of inputs, planned before any compute.

    Attributes:
        metric: The metric (one part's, after :meth:`Metric.partition`).
        keys: Each input's key (its index when there is no cache).
        known: Values already known (from the cache), filled in as batches finish.
        batches: The work: distinct unknown inputs, cut into batches of ``metric.batch_size``.
        weight: How many inputs share each key (for progress).
        unscored: Why an input got no value, by key, as the engine reported it (filled in as batches finish).
        cached: How many inputs the cache answered when the job was planned.
    """

    metric: Metric
    keys: list[str]
    known: dict[str, CachedValues]
    batches: list[WorkBatch]
    weight: Counter[str] = field(default_factory=Counter)
    unscored: dict[str, str] = field(default_factory=dict)
    cached: int = 0

    def values(self) -> list[CachedValues]:
        """Return each input's ``{output: value}``, once every batch has finished."""
        return [self.known[k] for k in self.keys]

    def reasons(self) -> list[str | None]:
        """Return why each input got no value (None: it got every value, or no reason is known)."""
        return [self.unscored.get(k) for k in self.keys]


def plan_job(metric: Metric, inputs: Sequence[MetricInput], cache: ScoreCache | None = None) -> ScoringJob:
    """Look the inputs up in the cache and cut the distinct rest into batches.

    Raises:
        InputError: The metric needs references and an input has none.
        DialevalError: The metric's outputs are a string, name no output or one twice, or its ``batch_size`` is not
            a whole number (a plugin's mistake: no score at all, each score written twice, or a TypeError).
    """
    _check_metric(metric)
    if metric.needs_references and any(not i.references for i in inputs):
        missing = sum(1 for i in inputs if not i.references)
        raise InputError(f'metric "{metric.name}" needs references; {some_of(missing, len(inputs), "item")} none')
    if cache is None:
        keys = [str(n) for n in range(len(inputs))]
        known: dict[str, CachedValues] = {}
    else:
        keys = [input_key(i) for i in inputs]
        # an entry written before the metric gained an output (same signature) is computed again
        known = {k: v for k, v in cache.get_many(metric.signature, keys).items() if set(metric.outputs) <= set(v)}
    todo = list({k: i for k, i in zip(keys, inputs, strict=True) if k not in known}.items())
    step = max(1, metric.batch_size)
    batches = [todo[start : start + step] for start in range(0, len(todo), step)]
    return ScoringJob(metric, keys, known, batches, Counter(keys), cached=sum(k in known for k in keys))


def _where(metric: Metric) -> str:
    """Name a metric and its class, for a plugin's mistake: ``metric "NAME" (MODULE.CLASS)``."""
    return f'metric "{metric.name}" ({type(metric).__module__}.{type(metric).__qualname__})'


def _check_metric(metric: Metric) -> None:
    """Refuse a metric whose outputs are a string, none or repeat one, or whose ``batch_size`` is no whole number."""
    where = _where(metric)
    if isinstance(metric.outputs, str):  # ("score") is the string "score": outputs s, c, o, r, e
        raise DialevalError(f'{where} has outputs "{metric.outputs}", a string: write a tuple, ("{metric.outputs}",) '
                            "with its comma")  # fmt: skip
    if not metric.outputs:
        raise DialevalError(f"{where} names no output in outputs: it would give no score for any item; name each "
                            "value compute() returns")  # fmt: skip
    twice = [o for o, n in Counter(metric.outputs).items() if n > 1]
    if twice:
        raise DialevalError(f'{where} names its output "{twice[0]}" twice in outputs: each score would be written '
                            "twice; give each output once")  # fmt: skip
    size = metric.batch_size
    if not isinstance(size, int) or isinstance(size, bool):
        raise DialevalError(f"{where} has batch_size {size!r}: give a whole number of items per batch")


def run_jobs(
    jobs: Sequence[ScoringJob],
    *,
    cache: ScoreCache | None = None,
    engine: Engine | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> list[float]:
    """Run every job's batches on ``engine`` (all metrics in one engine run); return seconds per job.

    Each finished batch is committed to ``cache`` before the next is taken;
    ``progress(job_index, items)`` is called for cached items first, then per batch.
    A job's seconds are the waits that ended with one of its batches.
    """
    from dialeval.engines import LocalEngine

    engine = engine or LocalEngine()
    if progress is not None:
        for n, job in enumerate(jobs):
            if job.cached:
                progress(n, job.cached)
    seconds = [0.0] * len(jobs)
    last = time.perf_counter()
    for n, result in _results(engine, jobs):
        job = jobs[n]
        job.known.update(result.values)
        job.unscored.update(result.unscored)
        if cache is not None:  # an item left unscored for a reason is tried again next run
            kept = {k: v for k, v in result.values.items() if k not in result.unscored}
            cache.put_many(job.metric.signature, kept)
        now = time.perf_counter()
        seconds[n] += now - last
        last = now
        if progress is not None:
            progress(n, sum(job.weight[k] for k in result.values))
    return seconds


class MetricFailed(DialevalError):
    """A metric raised an ordinary exception (a plugin's KeyError, ZeroDivisionError...) while it scored.

    Attributes:
        metric: The metric's name.
        detail: The exception, as ``TYPE: MESSAGE``.
        job: The index of its job in :func:`run_jobs`.
        key: The input key of the item that raised it alone (None: not found).
        position: That item's index in the metric's inputs, and ``source`` the metric's in ``work``
            (set by :func:`score_inputs`).
    """

    def __init__(self, metric: str, detail: str, job: int = 0, key: str | None = None) -> None:
        self.metric, self.detail, self.job, self.key = metric, detail, job, key
        self.position: int | None = None
        self.source = 0
        super().__init__(self.naming("an item" if key is None else "item"))

    def naming(self, item: str) -> str:
        """Return the message with ``item`` (e.g. ``candidate "ID"``) for the item."""
        return f'metric "{self.metric}" failed on {item}: {self.detail}'


def _results(engine: Engine, jobs: Sequence[ScoringJob]) -> Iterator[tuple[int, BatchResult]]:
    """Yield the engine's finished batches; a metric's ordinary exception becomes :class:`MetricFailed`.

    An engine that ran the batch in another process names the item there (:class:`BatchFailed`); in this
    process the item is the first of the first unfinished batch (engines take them in order) that raises alone.
    """
    from dialeval.engines.base import BatchFailed, failing_key

    results = engine.run([(j.metric, j.batches) for j in jobs])
    while True:
        try:
            got = next(results, None)
        except BatchFailed as exc:
            raise MetricFailed(jobs[exc.job].metric.name, exc.detail, exc.job, exc.key) from exc
        except (DialevalError, MemoryError):
            raise
        except Exception as exc:
            unfinished = ((n, b) for n, j in enumerate(jobs) for b in j.batches if any(k not in j.known for k, _ in b))
            if (first := next(unfinished, None)) is None:
                raise
            n, batch = first
            raise MetricFailed(jobs[n].metric.name, f"{type(exc).__name__}: {exc}", n,
                               failing_key(jobs[n].metric, batch)) from exc  # fmt: skip
        if got is None:
            return
        yield got


@dataclass
class Scored:
    """What one metric produced over its inputs.

    Attributes:
        metric: The metric as given (before :meth:`Metric.partition`).
        values: One ``{output: value}`` per input, in input order.
        reasons: Why each input got no value, where the metric said (None elsewhere).
        signatures: Each input's signature (its part's).
        signature: The run's signature: every part's, distinct, joined with ``"; "``.
        seconds: Time spent waiting for this metric's batches.
        summary: The metric's run counters (judge calls, tokens), from the engine.
        parts: Each part's metric and seconds (one part unless the metric split its items).
        cached: How many inputs the score cache answered (not computed in this run).
    """

    metric: Metric
    values: list[CachedValues]
    reasons: list[str | None]
    signatures: list[str]
    signature: str
    seconds: float
    summary: dict[str, Any]
    parts: list[tuple[Metric, float]] = field(default_factory=list)
    cached: int = 0


def score_inputs(
    work: Sequence[tuple[Metric, Sequence[MetricInput]]],
    *,
    cache: ScoreCache | None = None,
    engine: Engine | None = None,
    progress: ProgressFn | None = None,
) -> list[Scored]:
    """Score each metric's inputs (plan, cache, one engine run for all, assemble); one :class:`Scored` per metric.

    ``progress`` defaults to the bars of an enclosing :func:`progress_bars` block, if any.

    Raises:
        ItemInputError: A metric cannot split an input (its position and ``source``, the index in ``work``).
        MetricFailed: A metric raised an ordinary exception (naming the item by its position).
    """
    from dialeval.engines import LocalEngine

    engine = engine or LocalEngine()
    progress = progress or _ACTIVE.get()
    parts: list[tuple[int, list[int]]] = []  # (metric index, positions of the part's inputs)
    jobs: list[ScoringJob] = []
    for w, (metric, inputs) in enumerate(work):
        try:
            split = metric.partition(inputs)
        except ItemInputError as exc:
            exc.source = w
            raise
        _check_split(metric, [positions for _, positions in split], len(inputs))
        for part, positions in split:
            parts.append((w, positions))
            jobs.append(plan_job(part, [inputs[j] for j in positions], cache))
    tick = None if progress is None else (lambda n, items: progress(work[parts[n][0]][0].name, items))
    try:
        seconds = run_jobs(jobs, cache=cache, engine=engine, progress=tick)
    except MetricFailed as exc:
        if exc.key is not None:
            exc.source, in_part = parts[exc.job][0], parts[exc.job][1]
            exc.position = in_part[jobs[exc.job].keys.index(exc.key)]
            exc.args = (exc.naming(f"item {exc.position}"),)
        raise
    out: list[Scored] = []
    for w, (metric, inputs) in enumerate(work):
        values: list[CachedValues] = [{} for _ in inputs]
        reasons: list[str | None] = [None] * len(inputs)
        sigs = [""] * len(inputs)
        mine = [(job, secs, pos) for (v, pos), job, secs in zip(parts, jobs, seconds, strict=True) if v == w]
        for job, _, positions in mine:
            for j, got, why in zip(positions, job.values(), job.reasons(), strict=True):
                values[j] = got
                reasons[j] = why
                sigs[j] = job.metric.signature
        signature = "; ".join(dict.fromkeys(job.metric.signature for job, _, _ in mine)) or metric.signature
        summary = engine.summary(mine[0][0].metric) if mine else engine.summary(metric)
        parts_done = [(job.metric, secs) for job, secs, _ in mine]
        out.append(Scored(metric, values, reasons, sigs, signature, sum(s for _, s, _ in mine), summary, parts_done,
                          cached=sum(job.cached for job, _, _ in mine)))  # fmt: skip
    return out


def _check_split(metric: Metric, parts: Sequence[Sequence[int]], items: int) -> None:
    """Refuse a :meth:`Metric.partition` that does not give each of the metric's items to exactly one part."""
    given = Counter(j for positions in parts for j in positions)
    wrong = [j for j in range(items) if given[j] != 1] + [j for j in given if j not in range(items)]
    if wrong:
        n = given[wrong[0]]
        raise DialevalError(f"{_where(metric)} gave item {wrong[0]} to {n} part{'' if n == 1 else 's'} in "
                            f"partition(), of its {items} items: give each item to exactly one part")  # fmt: skip


@dataclass
class MetricRun:
    """What running one metric family over candidates produced.

    Attributes:
        family: The family's name.
        signature: The run's signature (see :attr:`Scored.signature`).
        scores: One Score per candidate and output, candidates in input order.
        seconds: Time spent waiting for its batches.
        summary: Its run counters (judge calls, parse failures, tokens).
        parts: Each part's metric and seconds (see :attr:`Scored.parts`).
        cached: How many candidates the score cache answered (see :attr:`Scored.cached`).
    """

    family: str
    signature: str
    scores: list[Score]
    seconds: float
    summary: dict[str, Any] = field(default_factory=dict)
    parts: list[tuple[Metric, float]] = field(default_factory=list)
    cached: int = 0

    def nulls(self) -> dict[str, Counter[str]]:
        """Return, per output, why its scores without a value have none (each score's ``extras.error``), counted.

        Example:
            >>> MetricRun("m", "m|v", [Score(item_id="a", metric="m", value=None, extras={"error": "no reference"}),
            ...                        Score(item_id="b", metric="m", value=1.0)], 0.0).nulls()
            {'m': Counter({'no reference': 1})}
        """
        why: dict[str, Counter[str]] = {}
        for s in self.scores:
            if s.value is None:
                why.setdefault(s.metric, Counter())[str(s.extras.get("error", "no reason given"))] += 1
        return why

    def cuts(self) -> dict[str, Counter[str]]:
        """Return, per output, what its valued scores read in part (each score's ``extras.cut``), counted.

        Example:
            >>> MetricRun("m", "m|v", [Score(item_id="a", metric="m", value=0.5, extras={"cut": "response cut"}),
            ...                        Score(item_id="b", metric="m", value=1.0)], 0.0).cuts()
            {'m': Counter({'response cut': 1})}
        """
        said: dict[str, Counter[str]] = {}
        for s in self.scores:
            if s.value is not None and "cut" in s.extras:
                said.setdefault(s.metric, Counter())[str(s.extras["cut"])] += 1
        return said


def score_metrics(
    metrics: Sequence[Metric],
    candidates: Sequence[Candidate],
    dialogues: Mapping[str, Dialogue],
    *,
    cache: ScoreCache | None = None,
    engine: Engine | None = None,
    progress: ProgressFn | None = None,
) -> list[MetricRun]:
    """Score every candidate with every metric; one :class:`MetricRun` per metric (see :func:`score_each`)."""
    return score_each([(m, candidates) for m in metrics], dialogues, cache=cache, engine=engine, progress=progress)


def score_each(
    work: Sequence[tuple[Metric, Sequence[Candidate]]],
    dialogues: Mapping[str, Dialogue],
    *,
    cache: ScoreCache | None = None,
    engine: Engine | None = None,
    progress: ProgressFn | None = None,
) -> list[MetricRun]:
    """Score each metric's candidates, all metrics in one engine run; one :class:`MetricRun` per metric.

    An item a metric cannot score gets ``value=None`` and ``extras["error"]``.
    Each score carries its dialogue's tags and domain, then its candidate's tags
    (so ``dialeval meta --by domain`` works on any benchmark), and the signature
    of the metric that computed it.

    Raises:
        InputError: An unknown dialogue, a turn past its dialogue's end, missing references,
            or an item a metric cannot split (naming the candidate).
        DialevalError: A metric raised an ordinary exception (naming the metric, the candidate and the exception).
    """
    inputs = {id(cands): build_inputs(cands, dialogues) for _, cands in work}
    try:
        scored = score_inputs(
            [(m, inputs[id(cands)]) for m, cands in work], cache=cache, engine=engine, progress=progress
        )
    except ItemInputError as exc:
        cands = work[exc.source][1]
        raise exc.naming(f'candidate "{cands[exc.position].id}"') from None
    except MetricFailed as exc:
        if exc.position is None:
            raise
        raise DialevalError(exc.naming(f'candidate "{work[exc.source][1][exc.position].id}"')) from exc.__cause__
    runs = []
    for s, (_, cands) in zip(scored, work, strict=True):
        scores: list[Score] = []
        tags = score_tags(cands, dialogues)
        items = inputs[id(cands)]
        with parameter_errors(s.metric):  # cut() may load what compute() loads (every item from the cache)
            cuts = s.metric.cut(items) if items else []
        _check_cuts(s.metric, cuts, len(items))
        for cand, item, got, why, sig, item_tags, cut in zip(cands, items, s.values, s.reasons, s.signatures, tags,
                                                             cuts, strict=True):  # fmt: skip
            for out_name in s.metric.outputs:
                v = got.get(out_name)
                lacks = None if v is not None or why else s.metric.lacks(out_name, item)
                said = {"cut": cut[out_name]} if v is not None and out_name in cut else {}
                scores.append(
                    Score(
                        item_id=cand.id,
                        metric=out_name,
                        value=v,
                        dialogue_id=cand.dialogue_id,
                        context_id=cand.context_id,
                        system=cand.system,
                        tags=dict(item_tags),
                        extras=said if v is not None else {"error": why or lacks or "metric could not score this item"},
                        signature=sig,
                    )
                )
        runs.append(MetricRun(s.metric.name, s.signature, scores, s.seconds, s.summary, s.parts, s.cached))
    return runs


def _check_cuts(metric: Metric, cuts: object, items: int) -> None:
    """Refuse a :meth:`Metric.cut` that does not give one ``{output: note}`` per item."""
    if isinstance(cuts, Sequence) and not isinstance(cuts, str):
        if len(cuts) == items:
            return
        given = f"{len(cuts)} note{'' if len(cuts) == 1 else 's'}"
    else:
        given = repr(cuts)
    raise DialevalError(f"{_where(metric)} gave {given} in cut(), for its {items} items: give one dict per item")


def score_tags(candidates: Sequence[Candidate], dialogues: Mapping[str, Dialogue]) -> list[dict[str, str]]:
    """Return each candidate's score tags: its dialogue's tags and ``domain``, overridden by its own tags.

    Example:
        >>> d = {"d": Dialogue(id="d", turns=[], domain="chat", tags={"a": "1"})}
        >>> score_tags([Candidate(id="c", dialogue_id="d", turn_index=0, system="s", text="x", tags={"a": "2"})], d)
        [{'a': '2', 'domain': 'chat'}]
    """
    out = []
    for c in candidates:
        d = dialogues[c.dialogue_id]
        out.append({**d.tags, **({"domain": d.domain} if d.domain else {}), **c.tags})
    return out


def score_candidates(
    metric: Metric,
    candidates: Sequence[Candidate],
    dialogues: Mapping[str, Dialogue],
    progress: Callable[[int], None] | None = None,
    cache: ScoreCache | None = None,
    engine: Engine | None = None,
) -> list[Score]:
    """Score every candidate with every output of one metric (:func:`score_metrics` for one metric).

    ``progress`` is called with the number of items finished after each batch
    (cached items first).
    """
    tick = None if progress is None else (lambda _name, items: progress(items))
    return score_metrics([metric], candidates, dialogues, cache=cache, engine=engine, progress=tick)[0].scores


@contextmanager
def progress_bars(total: Mapping[str, int], *, quiet: bool = False) -> Iterator[ProgressFn]:
    """Show one rich progress bar per metric family on stderr while the block runs; yield the callback.

    ``total`` gives the bars known in advance (family -> items); a family first seen in a
    callback gets a bar without a total. Scoring inside the block reports to these bars
    even when it is not handed the callback. The bars are off with ``quiet`` and when
    stderr is not a terminal (a log file, a pipe, a test).

    Example:
        >>> with progress_bars({"bleu": 3}, quiet=True) as tick:
        ...     tick("bleu", 3)
    """
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    console = Console(stderr=True, emoji=False)
    with Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
        disable=quiet or not console.is_terminal,
        transient=True,
    ) as bar:
        tasks = {name: bar.add_task(name, total=n) for name, n in total.items()}

        def tick(name: str, items: int) -> None:
            if name not in tasks:
                tasks[name] = bar.add_task(name, total=None)
            bar.update(tasks[name], advance=items)

        with report_to(tick):
            yield tick


@contextmanager
def report_to(progress: ProgressFn) -> Iterator[None]:
    """Within the block, scoring that is handed no progress callback reports to ``progress``.

    Example:
        >>> seen = []
        >>> with report_to(lambda name, n: seen.append((name, n))):
        ...     _ACTIVE.get()("bleu", 2)
        >>> seen
        [('bleu', 2)]
    """
    token = _ACTIVE.set(progress)
    try:
        yield
    finally:
        _ACTIVE.reset(token)


class ScoringRequest(BaseModel):
    """One run's scoring options: which metrics, their parameters, where they run, the cache, progress.

    Both front ends build it once: the commands from the run options every scoring command
    shares (:func:`dialeval.commands.options.run_options`), the Python API from its keyword
    arguments. :meth:`open` builds the engine and the score cache; run.json stores the request
    as given (its ``request`` field).

    Attributes:
        metrics: Families or outputs (``-m``; None: the command's default set, for ``score`` and
            ``benchmark`` every metric that runs here).
        params: ``[family.]key=value`` pairs (``-p``).
        device: ``cpu`` or ``cuda`` for the families that take one (None: cuda if torch sees a GPU).
        engine: ``local`` or ``ray``.
        ray_address: Ray cluster to join (None: start Ray here).
        ray_workers: Ray actors per metric (None: the cluster's CPUs).
        ray_cpus: CPUs per Ray actor (None: 1).
        cache: The score cache file (None: :func:`dialeval.paths.score_cache_path`).
        no_cache: Read and write no score cache.
        progress: Show progress bars (only when stderr is a terminal).

    Example:
        >>> ScoringRequest(metrics=("bleu",), params=("bleu.smoothing=method1",), no_cache=True).plan().params
        {'bleu': {'smoothing': 'method1'}}
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    metrics: tuple[str, ...] | None = None
    params: tuple[str, ...] = ()
    device: str | None = None
    engine: str = "local"
    ray_address: str | None = None
    ray_workers: int | None = None
    ray_cpus: float | None = None
    cache: Path | None = None
    no_cache: bool = False
    progress: bool = True

    def plan(
        self, candidates: Sequence[Candidate] | None = None, default: Sequence[str] | None = None,
        sources: Mapping[str, str] | None = None,
    ) -> MetricPlan:
        """Parse ``params``, resolve ``metrics`` (else ``default``) and give each family its parameters.

        Args:
            candidates: The items (a family that needs references they lack is skipped or refused).
            default: The names when ``metrics`` is None (None: every metric that runs here,
                the others are returned as skipped).
            sources: Where each item came from (:attr:`~dialeval.data.benchmark.Benchmark.sources`), to name an
                item without the reference a family needs by.

        Raises:
            InputError: An unknown metric or parameter, a bad value, or a metric asked for that cannot run.
        """
        from dialeval.metrics.resolve import metric_params, parse_params, resolve_metrics

        parsed = parse_params(self.params)
        names = self.metrics if self.metrics is not None else default
        try:
            families, skipped = resolve_metrics(
                None if names is None else list(names), candidates=candidates, params=parsed, sources=sources
            )
        except InputError as exc:
            if self.metrics is not None or names is None:
                raise
            # the user named no metric: "metric bleu cannot run" alone left them asking which bleu
            raise InputError(f"{exc.message}; it is one of this command's default metrics ({', '.join(names)}): "
                             "name others with -m (dialeval metrics says which need no reference)",
                             field="--metrics") from None  # fmt: skip
        return MetricPlan(families, skipped, metric_params(families, parsed, self.defaults()))

    def build(
        self, candidates: Sequence[Candidate], sources: Mapping[str, str] | None = None
    ) -> tuple[list[Metric], dict[str, str]]:
        """Return the metrics :meth:`plan` gives, built, and the families skipped with why: before :meth:`open`.

        A command builds them before it opens the run, so that a bad ``-p`` (or a metric that cannot run) is
        refused before the score cache, and the folder it is in, are made.

        Raises:
            InputError: As :meth:`plan`, or a parameter value the metric refuses as it is built.
        """
        plan = self.plan(candidates, sources=sources)
        return plan.build(), plan.skipped

    def inputs(self) -> list[tuple[str, Path | None]]:
        """Return the files a run with this request reads, for the output check: the score cache, -p files.

        The score cache is ``cache``, else the default one (None with ``no_cache``); a ``-p`` value
        that names an existing file (a saved model, a protocol file) as given, spaces included, is read too.

        Example:
            >>> ScoringRequest(cache=Path("s.sqlite"), params=("bleu.smoothing=method1",)).inputs()
            [('--cache', PosixPath('s.sqlite'))]
            >>> ScoringRequest(no_cache=True, params=(f"trained.model={__file__}",)).inputs()[1][0]
            '-p trained.model'
        """
        from dialeval.paths import score_cache_path

        files: list[tuple[str, Path | None]] = []
        if self.no_cache or self.cache is not None:
            files.append(("--cache", None if self.no_cache else self.cache))
        else:
            try:
                default: Path | None = score_cache_path()
            except InputError:  # no cache folder can be made: no cache file to keep (the run says why, in one line)
                default = None
            files.append(("the default score cache ($DIALEVAL_SCORE_CACHE, else $DIALEVAL_CACHE/scores.sqlite)",
                          default))
        for pair in self.params:
            key, _, value = pair.partition("=")
            if value and _names_file(value):  # as given, as the metric reads it: " h.pt" names no file h.pt
                files.append((f"-p {key.strip()}", Path(value)))
        return files

    def defaults(self) -> dict[str, str] | None:
        """Return the parameters for the families that have them (``--device``), no error for the others."""
        return {"device": self.device} if self.device else None

    def open(self, *, quiet: bool = False) -> ScoringContext:
        """Build the engine and the score cache (:func:`dialeval.engines.run_context`); ``quiet``: no bars.

        Raises:
            InputError: An unknown engine, ``cache`` with ``no_cache``, or Ray options without ``ray``.
        """
        from dialeval.engines import run_context

        engine, cache = run_context(
            self.engine, address=self.ray_address, workers=self.ray_workers, cpus_per_worker=self.ray_cpus,
            cache=self.cache, no_cache=self.no_cache,
        )  # fmt: skip
        return ScoringContext(self, engine, cache, show=self.progress and not quiet)

    def record(self) -> dict[str, Any]:
        """Return the request as run.json stores it (JSON-ready)."""
        return self.model_dump(mode="json")


def _names_file(value: str) -> bool:
    """Return whether a ``-p`` value names an existing file; one too long for a file's name names none.

    A value over 255 bytes raised ``OSError: File name too long`` here, and the run was refused as one given a
    path too long, naming neither ``-p`` nor the field: the field's own check now says what is wrong with it.

    Example:
        >>> _names_file(__file__), _names_file("Be kind. " * 30 + "{context}"), _names_file("a" * 300)
        (True, False, False)
    """
    try:
        return Path(value).is_file()
    except OSError as exc:
        if exc.errno == errno.ENAMETOOLONG:
            return False
        raise


@dataclass
class MetricPlan:
    """The metric families a request resolved to, those skipped with why, and each family's parameters."""

    families: list[type[Metric]]
    skipped: dict[str, str]
    params: dict[str, dict[str, Any]]

    def build(self) -> list[Metric]:
        """Return one metric per family, with its parameters."""
        return [configured(cls, self.params[cls.name]) for cls in self.families]


@dataclass
class ScoringContext:
    """An opened :class:`ScoringRequest`: its engine, its score cache, and whether to show progress."""

    request: ScoringRequest
    engine: Engine
    cache: ScoreCache | None
    show: bool = True

    def bars(self, total: Mapping[str, int]) -> AbstractContextManager[ProgressFn]:
        """Return the run's progress bars (:func:`progress_bars`), off when the request asks for none."""
        return progress_bars(total, quiet=not self.show)

    def cache_path(self) -> str | None:
        """Return the score cache's file (run.json's ``cache``), None without one."""
        return None if self.cache is None else str(self.cache.path)


def score_request(
    run: ScoringContext, candidates: Sequence[Candidate], dialogues: Mapping[str, Dialogue],
    built: tuple[Sequence[Metric], Mapping[str, str]],
) -> tuple[list[MetricRun], dict[str, str]]:
    """Score the candidates as an opened request asks, with progress bars: what ``score`` and ``benchmark`` call.

    ``built``: the metrics and the families skipped, as :meth:`ScoringRequest.build` gave them before the run was
    opened (a bad ``-p`` is refused before the score cache is made).

    Returns:
        One run per family, and the families skipped with why.
    """
    metrics, skipped = built
    with run.bars({m.name: len(candidates) for m in metrics}) as tick:
        runs = score_metrics(metrics, candidates, dialogues, cache=run.cache, engine=run.engine, progress=tick)
    return runs, dict(skipped)
