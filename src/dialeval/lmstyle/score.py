"""Score generated styled responses with the paper's five metrics, through the one score cache.

* ACC%: ``style_match`` of :class:`~dialeval.metrics.style.StyleMetric`, one instance per
  requested style (VADER for sentiment, the Heylighen-Dewaele F-score for formality).
* BLEU: sentence-level ``sacrebleu`` against the reference.
* SBERT: ``sbert_ref`` (all-MiniLM-L6-v2 cosine with the reference).
* NLL: ``lm_likelihood`` = 100 / mean response-token NLL after ``###Speaker: {query} ###Response:``.
* ChatGPT: ``judge:lmstyle-appropriateness`` (Fig. 2, 0-100) with the configured judge backend;
  a response whose answers do not parse has no score (counted), never a default.

Example:
    >>> JUDGE, sorted(JudgeSettings().params())
    ('judge:lmstyle-appropriateness', ['k', 'max_tokens', 'model', 'seed', 'temperature'])
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from dialeval.schema import Candidate, Dialogue, Score
from dialeval.words import counted

if TYPE_CHECKING:
    from dialeval.cache import ScoreCache
    from dialeval.engines import Engine

JUDGE = "judge:lmstyle-appropriateness"
#: Our output name -> the paper's column name.
PAPER_NAMES = {"style_match": "ACC%", "sacrebleu": "BLEU", "sbert_ref": "SBERT", "lm_likelihood": "NLL",
               JUDGE: "ChatGPT"}  # fmt: skip
#: Outputs kept from each metric run (the others a family computes are dropped).
KEEP = (*PAPER_NAMES, "style_strength")


@dataclass(frozen=True)
class JudgeSettings:
    """The appropriateness judge's settings (all of them land in its signature).

    Attributes:
        model: Model spec as for generation (``smollm2`` = packaged SmolLM2 via llama.cpp).
        k: Samples per response.
        temperature: Sampling temperature.
        seed: Seed of the first sample.
        max_tokens: Most tokens per answer.
    """

    model: str = "smollm2"
    k: int = 1
    temperature: float = 0.0
    seed: int = 0
    max_tokens: int = 32

    def params(self) -> dict[str, Any]:
        """Return the settings as a dict."""
        return asdict(self)

    def metric_params(self) -> dict[str, Any]:
        """Return the judge metric's config parameters for this model spec."""
        from dialeval.lmstyle.generate import parse_model_spec

        kind, model, url, _ = parse_model_spec(self.model)
        return {"backend": kind, "model": model, "base_url": url, "k": self.k, "temperature": self.temperature,
                "seed": self.seed, "max_tokens": self.max_tokens}  # fmt: skip


@dataclass
class ScoredRun:
    """Scores of every metric, with signatures, timings, the judge's counts and the paper's outputs that were run."""

    scores: list[Score]
    signatures: dict[str, str]
    seconds: dict[str, float]
    judge_summary: dict[str, Any]
    outputs: list[str] = field(default_factory=list)


def score_generated(
    candidates: Sequence[Candidate],
    dialogues: Mapping[str, Dialogue],
    judge: JudgeSettings | None = None,
    *,
    metrics: Sequence[str] = ("style", "sacrebleu", "embedding", "likelihood", "judge"),
    cache: ScoreCache | None = None,
    engine: Engine | None = None,
    log: Callable[[str], None] | None = None,
    progress: Callable[[str, int], None] | None = None,
) -> ScoredRun:
    """Score candidates tagged with ``style`` with the paper's metrics.

    Args:
        candidates: Generated responses (tags ``style``, ``dataset``, ``model``).
        dialogues: Their one-turn dialogues.
        judge: Judge settings (default: packaged SmolLM2, k=1, greedy).
        metrics: Which of ``style``, ``sacrebleu``, ``embedding``, ``likelihood``, ``judge`` to run.
        cache: The score cache (``dialeval lmstyle --cache``; None: compute everything).
        engine: Where batches run (``--engine``; default: this process).
        log: Called with one line per finished metric.
        progress: Called with (metric family, items finished).

    All metrics are scored by the scoring service in one engine run; ``style``
    with ``target=tag:style`` scores each response for its own style (one metric,
    and one signature, per style).
    """
    from dialeval.metrics.base import Metric
    from dialeval.metrics.resolve import family
    from dialeval.scoring import score_each

    judge = judge or JudgeSettings()
    run = ScoredRun([], {}, {}, {})
    work: list[tuple[Metric, Sequence[Candidate]]] = []
    for name in metrics:
        if name == "style":  # each response for the style it was asked for (its tag "style")
            work.append((family("style")(target="tag:style"), candidates))
        elif name == "judge":
            work.append((family(JUDGE)(**judge.metric_params()), candidates))
        else:  # sacrebleu refuses a response with no reference (a blank reference line): it gets a null row below
            with_refs = [c for c in candidates if c.references] if name == "sacrebleu" else candidates
            work.append((family(name)(), with_refs))
    done = score_each(work, dialogues, cache=cache, engine=engine, progress=progress)
    for (metric, subset), got in zip(work, done, strict=True):
        run.outputs.extend(name for name in metric.outputs if name in PAPER_NAMES)
        run.scores.extend(s for s in got.scores if s.metric in KEEP)
        if len(subset) < len(candidates):  # it had no row, and its cells averaged the others without a "(k/n)"
            left = [c for c in candidates if not c.references]
            run.scores.extend(_no_reference(left, dialogues, metric.outputs, metric.signature))
        if metric.name == "style":
            for part, seconds in got.parts:
                key = f"style:{part.config.target}"  # type: ignore[attr-defined]
                run.signatures[key] = part.signature
                run.seconds[key] = round(seconds, 2)
        else:
            key = JUDGE if metric.name == JUDGE else metric.name
            run.signatures[key] = metric.signature
            run.seconds[key] = round(got.seconds, 2)
        if log is not None:
            log(f"{metric.name}: {counted(len(subset), 'response')} in {got.seconds:.1f} s")
        if metric.name == JUDGE:
            summary = got.summary
            run.judge_summary = {
                "responses": len(candidates),
                "scored": sum(1 for s in got.scores if s.metric == JUDGE and s.value is not None),
                # the counters below are this run's; responses judged by an earlier run come from the score cache
                "from_score_cache": len(candidates) - int(summary.get("items", 0)),
                **summary,
            }
    return run


def _no_reference(
    candidates: Sequence[Candidate], dialogues: Mapping[str, Dialogue], outputs: Sequence[str], signature: str
) -> list[Score]:
    """Return a null score that says why for each output of each candidate, which has no reference to compare with."""
    from dialeval.scoring import score_tags

    tagged = zip(candidates, score_tags(candidates, dialogues), strict=True)
    return [Score(item_id=c.id, metric=name, value=None, dialogue_id=c.dialogue_id, context_id=c.context_id,
                  system=c.system, tags=dict(tags), extras={"error": "no reference to compare with"},
                  signature=signature)
            for c, tags in tagged for name in outputs]  # fmt: skip
