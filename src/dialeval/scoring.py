"""Run metrics over candidates and produce :class:`~dialeval.schema.Score` records.

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

import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from dialeval.cache import CachedValues, ScoreCache, input_key
from dialeval.errors import InputError
from dialeval.metrics.base import Metric, MetricInput
from dialeval.schema import Candidate, Dialogue, Score

if TYPE_CHECKING:
    from dialeval.engines import Engine, WorkBatch


def build_inputs(
    candidates: Sequence[Candidate], dialogues: Mapping[str, Dialogue]
) -> list[MetricInput]:
    """Turn candidates into metric inputs, resolving each context from its dialogue."""
    out: list[MetricInput] = []
    for c in candidates:
        d = dialogues.get(c.dialogue_id)
        if d is None:
            raise InputError(f'candidate "{c.id}" names unknown dialogue "{c.dialogue_id}"', field="dialogue_id")
        if c.turn_index > len(d.turns):
            raise InputError(
                f'candidate "{c.id}" has turn_index {c.turn_index} but dialogue "{d.id}" has {len(d.turns)} turns',
                field="turn_index",
            )
        out.append(
            MetricInput(
                response=c.text,
                context=tuple(d.context(c.turn_index)),
                references=tuple(c.references),
                knowledge=tuple(d.knowledge),
            )
        )
    return out


@dataclass
class ScoringJob:
    """One metric's work over a list of candidates, planned before any compute.

    Attributes:
        metric: The metric.
        candidates: The candidates to score, in output order.
        keys: Each candidate's input key (its index when there is no cache).
        known: Values already known (from the cache), filled in as batches finish.
        batches: The work: distinct unknown inputs, cut into batches of ``metric.batch_size``.
        tags: Each candidate's score tags: its dialogue's tags and domain, then its own tags.
        weight: How many candidates share each key (for progress).
    """

    metric: Metric
    candidates: Sequence[Candidate]
    keys: list[str]
    known: dict[str, CachedValues]
    batches: list[WorkBatch]
    tags: list[dict[str, str]]
    weight: Counter[str] = field(default_factory=Counter)

    def assemble(self) -> list[Score]:
        """Return one Score per candidate and output, once every batch has finished."""
        sig = self.metric.signature
        scores: list[Score] = []
        for cand, key, item_tags in zip(self.candidates, self.keys, self.tags, strict=True):
            for out_name in self.metric.outputs:
                v = self.known[key].get(out_name)
                scores.append(
                    Score(
                        item_id=cand.id,
                        metric=out_name,
                        value=v,
                        dialogue_id=cand.dialogue_id,
                        context_id=cand.context_id,
                        system=cand.system,
                        tags=dict(item_tags),
                        extras={} if v is not None else {"error": "metric could not score this item"},
                        signature=sig,
                    )
                )
        return scores


def plan_job(
    metric: Metric,
    candidates: Sequence[Candidate],
    dialogues: Mapping[str, Dialogue],
    cache: ScoreCache | None = None,
) -> ScoringJob:
    """Build the inputs, look them up in the cache, and cut the distinct rest into batches."""
    inputs = build_inputs(candidates, dialogues)
    if metric.needs_references and any(not i.references for i in inputs):
        missing = sum(1 for i in inputs if not i.references)
        raise InputError(f'metric "{metric.name}" needs references; {missing} item(s) have none')
    if cache is None:
        keys = [str(n) for n in range(len(inputs))]
        known: dict[str, CachedValues] = {}
    else:
        keys = [input_key(i) for i in inputs]
        known = cache.get_many(metric.signature, keys)
    todo = list({k: i for k, i in zip(keys, inputs, strict=True) if k not in known}.items())
    step = max(1, metric.batch_size)
    batches = [todo[start : start + step] for start in range(0, len(todo), step)]
    return ScoringJob(metric, candidates, keys, known, batches, score_tags(candidates, dialogues), Counter(keys))


def score_tags(candidates: Sequence[Candidate], dialogues: Mapping[str, Dialogue]) -> list[dict[str, str]]:
    """Return each candidate's score tags: its dialogue's tags and ``domain``, overridden by its own tags.

    So ``dialeval meta --by domain`` (or any dialogue-level tag) works on scores of any benchmark.
    """
    out = []
    for c in candidates:
        d = dialogues[c.dialogue_id]
        out.append({**d.tags, **({"domain": d.domain} if d.domain else {}), **c.tags})
    return out


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
            if job.known:
                progress(n, sum(job.weight[k] for k in job.known))
    seconds = [0.0] * len(jobs)
    last = time.perf_counter()
    for n, result in engine.run([(j.metric, j.batches) for j in jobs]):
        job = jobs[n]
        job.known.update(result.values)
        if cache is not None:
            cache.put_many(job.metric.signature, result.values)
        now = time.perf_counter()
        seconds[n] += now - last
        last = now
        if progress is not None:
            progress(n, sum(job.weight[k] for k in result.values))
    return seconds


def score_candidates(
    metric: Metric,
    candidates: Sequence[Candidate],
    dialogues: Mapping[str, Dialogue],
    progress: Callable[[int], None] | None = None,
    cache: ScoreCache | None = None,
    engine: Engine | None = None,
) -> list[Score]:
    """Score every candidate with every output of ``metric``.

    Items are handed to :meth:`Metric.compute` in batches of ``metric.batch_size``;
    ``progress`` is called with the number of items finished after each batch.
    An item a metric cannot score gets ``value=None`` and ``extras["error"]``.

    With a :class:`~dialeval.cache.ScoreCache`, items already in it (same metric
    signature, same input) are not computed again, identical inputs are computed
    once, and each finished batch is committed to the cache before the next starts,
    so a killed job resumes where it stopped.

    ``engine`` runs the batches (default: :class:`~dialeval.engines.LocalEngine`,
    in this process); the batches are the same whichever engine runs them.
    """
    job = plan_job(metric, candidates, dialogues, cache)
    tick = None if progress is None else (lambda _n, items: progress(items))
    run_jobs([job], cache=cache, engine=engine, progress=tick)
    return job.assemble()
