"""Run a protocol: one score distribution per item, or k seeded samples; parse, one counted retry.

Two modes. ``distribution`` (G-Eval style) sends one request per item with the
answer held to the protocol's shape and reads the probability of every allowed
value at the score position (:func:`~dialeval.backends.structure.value_distribution`):
``expected`` is sum p(s) * s over the allowed values (renormalised), the value is the
most probable score (for a multi-token scale, the decoded one), and the distribution
itself is kept on the :class:`Judgement`. It samples at temperature 1 (the model's own
distribution), so the probabilities are not sharpened. ``sample`` asks k samples.

In sample mode, every sample is a separate cached request (seed ``seed + j``). A sample that does
not parse is asked again once with the same prompt (seed ``seed + j + RETRY_SEED_OFFSET``);
if that fails too it counts as a parse failure. An item's score is the mean of
its parsed samples, and missing (None, with the reason) when none parsed, never
a default. Where the backend returned top log-probabilities and the scale has
single-token values, each sample also gives the probability-weighted expected
score at the score token, averaged the same way.

Example:
    >>> from dialeval.backends.base import Backend, Completion
    >>> from dialeval.backends.runner import Runner
    >>> from dialeval.judges.protocol import load_protocol
    >>> class Fixed(Backend):
    ...     signature = "fixed"
    ...     def chat(self, request):
    ...         return Completion(text="- Humanness: 4" if request.seed == 1 else "no idea")
    >>> j = Judge(load_protocol("cpdscore-detail"), Runner(Fixed()), k=2, seed=0, mode="sample", structured=False)
    >>> out = j.judge_prompts([(("user", "rate"),)])
    >>> out[0].value, out[0].samples, j.stats.parse_retries, j.stats.parse_failures
    (4.0, (None, 4.0), 1, 1)
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass

from dialeval.backends.base import BackendError, BudgetExceeded, ChatRequest, Completion
from dialeval.backends.runner import Runner
from dialeval.backends.structure import ValueDistribution, value_distribution
from dialeval.judges.parse import Parsed, Scale, parse_score
from dialeval.judges.protocol import Protocol
from dialeval.metrics.base import MetricInput

RETRY_SEED_OFFSET = 1_000_003
Messages = tuple[tuple[str, str], ...]


@dataclass
class JudgeStats:
    """Parse counts of one judge (the runner counts calls and tokens).

    Attributes:
        items: Items judged (by a judge metric: each item once, whatever its protocol's dimensions).
        samples: Samples asked for (items x k).
        parse_retries: Retries sent because a sample did not parse.
        parse_failures: Samples that did not parse even after the retry.
        request_failures: Samples whose request failed after all transport retries.
        budget_skipped: Samples not asked because the budget was spent.
        items_missing: Items left without a score (by a judge metric: in one of its dimensions, at least).
        distribution_missing: Distribution-mode answers whose probabilities did not cover an
            allowed value at the score position (the decoded value is used, no expected score).
        cut_by_max_tokens: Answers (first tries and parse retries) that did not parse and that the backend said
            ``max_tokens`` ended (``finish_reason: length``).
    """

    items: int = 0
    samples: int = 0
    parse_retries: int = 0
    parse_failures: int = 0
    request_failures: int = 0
    budget_skipped: int = 0
    items_missing: int = 0
    distribution_missing: int = 0
    cut_by_max_tokens: int = 0

    def as_dict(self) -> dict[str, int]:
        """Return the counts as a dict."""
        return asdict(self)


@dataclass(frozen=True)
class Judgement:
    """One item's result.

    Attributes:
        value: Mean of the parsed samples, or None.
        expected: Mean probability-weighted expected score, or None.
        samples: Each sample's parsed value (None where it failed).
        reason: ``"ok"`` or why the item has no score.
        texts: The raw answers (after a retry, the retry's answer).
        distribution: In distribution mode, ``{score: probability}`` at the score position.
    """

    value: float | None
    expected: float | None
    samples: tuple[float | None, ...]
    reason: str
    texts: tuple[str, ...]
    distribution: dict[float, float] | None = None

    @property
    def entropy(self) -> float | None:
        """Entropy (nats) of the distribution, or None in sample mode.

        Example:
            >>> Judgement(3.0, 2.0, (3.0,), "ok", ("3",), {1.0: 0.5, 3.0: 0.5}).entropy == math.log(2)  # by hand
            True
            >>> Judgement(3.0, None, (3.0,), "ok", ("3",)).entropy is None
            True
        """
        if not self.distribution:
            return None
        return -sum(p * math.log(p) for p in self.distribution.values() if p > 0)


def expected_score(answer: Completion, parsed: Parsed, scale: Scale) -> float | None:
    """Return the probability-weighted score at the token that holds the parsed number.

    None where there is none: no scale tokens, no log-probabilities, or the number as written is not one of the
    scale's tokens (``4.0``; a full-width 4, whose ASCII alternatives would be weighed without it).

    Example:
        >>> import math
        >>> c = Completion(text="Score: 2", tokens=("Score", ":", " 2"),
        ...                top_logprobs=({}, {}, {" 2": math.log(0.6), "1": math.log(0.2), "x": math.log(0.2)}))
        >>> round(expected_score(c, Parsed(2.0, "ok", 7, "2"), Scale(0, 2)), 4)
        1.75
    """
    values = scale.tokens()
    if parsed.value is None or parsed.raw not in values or not answer.top_logprobs:
        return None
    offset = 0
    for i, tok in enumerate(answer.tokens):
        if offset <= parsed.start < offset + len(tok) or (tok.strip() == parsed.raw and offset >= parsed.start - 1):
            if tok.strip() != parsed.raw:
                return None  # the number is split over tokens: no single-token distribution
            probs = answer.score_token_probs(values, i)
            return sum(float(v) * p for v, p in probs.items()) if probs else None
        offset += len(tok)
    return None


class Judge:
    """A protocol bound to a runner and sampling parameters.

    Args:
        protocol: The protocol.
        runner: Sends requests (cache, budget, concurrency).
        k: Samples per item.
        temperature: Sampling temperature.
        seed: Seed of the first sample; sample j uses ``seed + j``.
        max_tokens: Most tokens per answer.
        top_logprobs: Alternatives per token to ask for (0: none; distribution mode asks at least 20).
        mode: ``distribution`` (one request, the score's probabilities) or ``sample`` (k samples);
            a protocol without an answer shape always samples.
        structured: Hold answers to the protocol's answer shape (when it declares one).
    """

    def __init__(
        self,
        protocol: Protocol,
        runner: Runner,
        *,
        k: int = 3,
        temperature: float = 0.7,
        seed: int = 0,
        max_tokens: int = 64,
        top_logprobs: int = 5,
        mode: str = "distribution",
        structured: bool = True,
    ) -> None:
        if k < 1:
            raise ValueError("k must be at least 1")
        if mode not in ("distribution", "sample"):
            raise ValueError(f'mode must be "distribution" or "sample", not "{mode}"')
        self.protocol = protocol
        self.runner = runner
        self.k = k
        self.temperature = temperature
        self.seed = seed
        self.max_tokens = max_tokens
        self.top_logprobs = top_logprobs
        # a protocol that declares no answer shape has no score position to read: it samples
        self.mode = mode if protocol.answer is not None else "sample"
        self.shape = protocol.answer if structured else None
        self.stats = JudgeStats()

    @property
    def distribution(self) -> bool:
        """Whether this judge reads score distributions (one request per item)."""
        return self.mode == "distribution"

    def _request(self, messages: Messages, seed: int) -> ChatRequest:
        if self.distribution:
            return ChatRequest(
                messages=messages, max_tokens=self.max_tokens, temperature=1.0, seed=seed,
                top_logprobs=max(self.top_logprobs, 20), answer=self.shape, score_probs=True,
            )
        return ChatRequest(
            messages=messages, max_tokens=self.max_tokens, temperature=self.temperature,
            seed=seed, top_logprobs=self.top_logprobs, answer=self.shape,
        )

    def parse(self, text: str, labels: Sequence[str] | None = None) -> Parsed:
        """Parse one answer: by the answer shape when it has that shape, else by the protocol's labels."""
        scale = self.protocol.scale
        if self.protocol.answer is not None and labels is None:
            shape = self.protocol.answer
            got = shape.read(text)
            if got is not None:
                raw = got[shape.score]
                return Parsed(float(raw), "ok", shape.score_offset(text), raw)
        return parse_score(text, scale, self.protocol.labels if labels is None else labels)

    def read_field(self, text: str, name: str, labels: Sequence[str]) -> float | None:
        """Return the value of slot ``name`` of a shaped answer, else the number after ``labels``.

        Never a number alone: that is the answer's score (a bare "4" was also the turn and interaction score).
        """
        shape = self.protocol.answer
        got = shape.read(text) if shape is not None else None
        if got is not None and name in got:
            return float(got[name])
        return parse_score(text, self.protocol.scale, labels, bare=False).value

    def score_distribution(self, answer: Completion) -> ValueDistribution | None:
        """Return the distribution of the score from an answer's per-token probabilities, or None."""
        shape = self.protocol.answer
        if shape is None or not answer.tokens or not answer.top_logprobs:
            return None
        joined = "".join(answer.tokens)
        offset = shape.score_offset(joined)
        if offset < 0:
            return None
        probs = [{t: math.exp(lp) for t, lp in d.items()} for d in answer.top_logprobs]
        values = shape.slot(shape.score).values
        # the end of the value as this answer spells it: a JSON answer's "}" ends it, not the template's text
        return value_distribution(answer.tokens, probs, offset, values, shape.after_score(joined))

    def ask(self, prompts: Sequence[Messages]) -> list[list[Completion | BackendError | BudgetExceeded]]:
        """Send k samples per prompt (one in distribution mode), retry unparsable ones once; return the answers."""
        k = 1 if self.distribution else self.k
        reqs = [self._request(m, self.seed + j) for m in prompts for j in range(k)]
        answers = self.runner.run(reqs)
        retry_at = [i for i, a in enumerate(answers) if isinstance(a, Completion) and self.parse(a.text).value is None]
        retries = [self._request(reqs[i].messages, reqs[i].seed + RETRY_SEED_OFFSET) for i in retry_at]
        self.stats.parse_retries += len(retries)
        self._count_cut([answers[i] for i in retry_at])
        for i, again in zip(retry_at, self.runner.run(retries), strict=True):
            if isinstance(again, BudgetExceeded):
                continue  # keep the first, unparsable answer: it counts as a parse failure
            answers[i] = again
            if isinstance(again, Completion) and self.parse(again.text).value is None:
                self._count_cut([again])
        return [answers[p * k : (p + 1) * k] for p in range(len(prompts))]

    def _count_cut(self, unparsed: Sequence[Completion | BackendError | BudgetExceeded]) -> None:
        """Count the unparsable answers that ``max_tokens`` cut (an empty answer the server ended is not one)."""
        self.stats.cut_by_max_tokens += sum(isinstance(a, Completion) and a.cut for a in unparsed)

    def judge_prompts(self, prompts: Sequence[Messages]) -> list[Judgement]:
        """Judge rendered prompts (one per item)."""
        out: list[Judgement] = []
        for answers in self.ask(prompts):
            self.stats.items += 1
            self.stats.samples += len(answers)
            values: list[float | None] = []
            expecteds: list[float] = []
            reasons: list[str] = []
            texts: list[str] = []
            dist: ValueDistribution | None = None
            for a in answers:
                if isinstance(a, BudgetExceeded):
                    self.stats.budget_skipped += 1
                    values.append(None)
                    reasons.append("budget spent")
                    continue
                if isinstance(a, BackendError):
                    self.stats.request_failures += 1
                    values.append(None)
                    reasons.append(f"request failed: {a}")
                    continue
                texts.append(a.text)
                parsed = self.parse(a.text)
                values.append(parsed.value)
                if parsed.value is None:
                    self.stats.parse_failures += 1
                    reasons.append(f"parse failure: {parsed.reason}")
                elif self.distribution:
                    dist = self.score_distribution(a)
                    if dist is None:
                        self.stats.distribution_missing += 1
                    else:
                        values[-1] = dist.argmax if dist.exact else dist.decoded
                        expecteds.append(dist.expected)
                elif (e := expected_score(a, parsed, self.protocol.scale)) is not None:
                    expecteds.append(e)
            got = [v for v in values if v is not None]
            if not got:
                self.stats.items_missing += 1
            out.append(
                Judgement(
                    value=sum(got) / len(got) if got else None,
                    expected=sum(expecteds) / len(expecteds) if expecteds else None,
                    samples=tuple(values),
                    reason="ok" if got else "; ".join(sorted(set(reasons))),
                    texts=tuple(texts),
                    distribution=dist.probs if dist is not None else None,
                )
            )
        return out

    def judge(self, items: Sequence[MetricInput], dimension: str = "") -> list[Judgement]:
        """Render and judge items (for one dimension of the protocol)."""
        return self.judge_prompts([self.protocol.render(it, dimension) for it in items])
