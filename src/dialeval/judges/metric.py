"""Judges as metrics: one family ``judge:<protocol>`` per protocol file, plus ``judge:custom``.

Each family's outputs: the score (per dimension for multi-dimension protocols),
the probability-weighted expected score (``:expected``: from the score
distribution in distribution mode; in sample mode where the scale has
single-token values), the level (``:level``) for DialogADV, and the two
intermediate scores for ``cpdscore-dialogue``. A parse failure gives None.
After a run, :meth:`JudgeMetric.run_summary` returns the counts.

Example:
    >>> from dialeval.metrics.base import METRICS
    >>> METRICS.get("judge:dialogadv").outputs[:2]
    ('judge:dialogadv:coherence', 'judge:dialogadv:coherence:level')
    >>> METRICS.get("judge:cpdscore-detail").outputs
    ('judge:cpdscore-detail', 'judge:cpdscore-detail:expected')
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any, ClassVar

from dialeval.backends import BACKENDS, Backend, make_backend
from dialeval.backends.base import C_INT, MAX_IN_FLIGHT, MAX_TOP_LOGPROBS
from dialeval.backends.cache import RequestCache
from dialeval.backends.runner import Runner
from dialeval.errors import MAX_SEED, InputError
from dialeval.judges.dialogue import DialogueJudge
from dialeval.judges.judge import RETRY_SEED_OFFSET, Judge, Judgement, JudgeStats
from dialeval.judges.parse import to_level
from dialeval.judges.protocol import Protocol, load_protocol, protocol_names
from dialeval.metrics.base import METRICS, Metric, MetricInput, MetricValues, needs
from dialeval.metrics.rules import rule
from dialeval.signature import NOT_IN_SIGNATURE

MAX_SAMPLES = 1000
"""The most samples a judge asks per item (``k``): the papers ask 20 at most; a huge ``k`` built its
requests until memory ran out, with nothing printed."""

IN_PROCESS = ("llamacpp", "transformers")
"""The backend kinds that run the model in this process: they send no request, so take no ``base_url``."""

MAX_JUDGE_SEED = MAX_SEED - 1 - (MAX_SAMPLES - 1) - RETRY_SEED_OFFSET
"""The largest judge seed: every seed a run sends (``seed + j`` for sample j, plus :data:`RETRY_SEED_OFFSET` for a
retry) stays below 2**32 - 1, which llama.cpp reads as "a random seed" (seed 4294967295 gave another answer on each
run) and above which it wraps onto other seeds (4294967303 answered as 7)."""


@dataclass(frozen=True)
class JudgeConfig:
    """Parameters of a judge metric.

    Those that cannot change a score (the API key's variable, timeouts, retries, budgets,
    the cache switch, prices) are left out of the signature, so changing them keeps cached
    scores valid. ``in_flight`` stays in: in process, the batch's composition changes answers.

    Attributes:
        backend: ``llamacpp`` (default, packaged SmolLM2), ``openai-compatible`` or ``transformers``.
        model: GGUF path, model name on the server, or model directory ("" = packaged model).
        base_url: API root of an ``openai-compatible`` server.
        api_key_env: Environment variable holding the API key (the key itself is never recorded).
        protocol: Path of a user's protocol file (``judge:custom`` only). Not in the signature: the
            protocol's name, version and sha256 are (the same file elsewhere scores the same).
        mode: ``distribution`` (default: one request per item, the probability of every allowed
            score at the score position; ``k`` and ``temperature`` are not used, it samples at 1)
            or ``sample`` (k sampled answers, averaged).
        structured: Hold the answer to the protocol's shape: a GBNF grammar (llama.cpp in
            process), ``response_format`` with a JSON schema (OpenAI-compatible; a server that
            refuses it gets free text, counted in ``structured_fallbacks``), a token mask
            (transformers). Default on.
        k: Samples per item (``mode=sample``).
        temperature: Sampling temperature (``mode=sample``).
        seed: Seed of the first sample (at most :data:`MAX_JUDGE_SEED`: llama.cpp reads 2**32 - 1 as random).
        max_tokens: Most tokens per answer.
        top_logprobs: Alternatives per token asked for (0: no expected score).
        in_flight: Requests at once; 0 (default) is the backend's default, resolved before the
            signature: 1 in process (batched decoding would change the numbers), 8 over HTTP.
        timeout: Seconds per HTTP request.
        max_retries: Transport retries per request.
        max_calls: Budget of calls (0: none).
        max_total_tokens: Budget of tokens (0: none).
        cache: Keep requests and answers in the SQLite request cache.
        usd_per_mtok_in: Price per million prompt tokens, for the cost in the summary.
        usd_per_mtok_out: Price per million completion tokens.
    """

    backend: str = dataclasses.field(default="llamacpp", metadata=rule(choices=BACKENDS.names))
    model: str = ""
    base_url: str = ""
    api_key_env: str = dataclasses.field(default="OPENAI_API_KEY", metadata=NOT_IN_SIGNATURE)
    protocol: str = dataclasses.field(default="", metadata=NOT_IN_SIGNATURE)  # "protocol:" twice in signatures
    mode: str = dataclasses.field(default="distribution", metadata=rule(choices=("distribution", "sample")))
    structured: bool = True
    k: int = dataclasses.field(default=3, metadata=rule(minimum=1, maximum=MAX_SAMPLES, note="samples per item"))
    temperature: float = dataclasses.field(default=0.7, metadata=rule(minimum=0))
    seed: int = dataclasses.field(default=0, metadata=rule(minimum=0, maximum=MAX_JUDGE_SEED,
                                                           note="seed + k + the retry's offset stay 32-bit"))
    max_tokens: int = dataclasses.field(default=64, metadata=rule(minimum=1, maximum=C_INT))
    top_logprobs: int = dataclasses.field(default=5, metadata=rule(minimum=0, maximum=MAX_TOP_LOGPROBS,
                                                                   note="0 = no expected score"))
    in_flight: int = dataclasses.field(default=0, metadata=rule(minimum=0, maximum=MAX_IN_FLIGHT,
                                                                note="0 = the backend's default"))
    timeout: float = dataclasses.field(default=60.0, metadata={**NOT_IN_SIGNATURE, **rule(minimum=0.001)})
    max_retries: int = dataclasses.field(default=5, metadata={**NOT_IN_SIGNATURE, **rule(minimum=0)})
    max_calls: int = dataclasses.field(default=0, metadata={**NOT_IN_SIGNATURE, **rule(minimum=0, note="0 = none")})
    max_total_tokens: int = dataclasses.field(default=0, metadata={**NOT_IN_SIGNATURE,
                                                                   **rule(minimum=0, note="0 = none")})  # fmt: skip
    cache: bool = dataclasses.field(default=True, metadata=NOT_IN_SIGNATURE)
    usd_per_mtok_in: float = dataclasses.field(default=0.0, metadata={**NOT_IN_SIGNATURE, **rule(minimum=0)})
    usd_per_mtok_out: float = dataclasses.field(default=0.0, metadata={**NOT_IN_SIGNATURE, **rule(minimum=0)})


def _outputs(p: Protocol, family: str) -> tuple[str, ...]:
    if p.step1_protocol:
        return (family, f"{family}:turn", f"{family}:interaction")
    outs: list[str] = []
    for dim in p.dimension_names:
        base = f"{family}:{dim}" if dim else family
        outs.append(base)
        if p.levels:
            outs.append(f"{base}:level")
        if p.scale.tokens() or p.answer is not None:
            outs.append(f"{base}:expected")
    return tuple(outs)


def _units(p: Protocol, family: str) -> dict[str, str]:
    """Return each output's unit: the protocol's scale, ``level 1-N`` for a ``:level`` output."""
    scale = f"{p.scale.min:g}-{p.scale.max:g}"
    return {o: f"level 1-{p.levels}" if o.endswith(":level") else scale for o in _outputs(p, family)}


class JudgeMetric(Metric):
    """An LLM judge running one protocol (subclasses fix the protocol)."""

    Config = JudgeConfig
    protocol_name: ClassVar[str] = ""
    batch_size: ClassVar[int] = 64
    requires = needs("judge", "httpx", "xllamacpp")

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        self._unscored: dict[str, str] = {}
        if self.config.base_url and self.config.backend in IN_PROCESS:
            # it was ignored: the packaged model answered in place of the server, under a signature naming the URL
            raise InputError(f"is for backend=openai-compatible; backend={self.config.backend} runs the model in "
                             "this process (give -p backend=openai-compatible to use the server)",
                             field="base_url")  # fmt: skip
        if self.protocol_name and self.config.protocol:  # the file was judged, its scores named after the built-in
            raise InputError(f"is for judge:custom (a protocol file of your own); {self.name} runs the built-in "
                             f"protocol {self.protocol_name}: give the file as --protocol, or leave protocol out",
                             field="protocol")  # fmt: skip
        if self.config.in_flight == 0:
            from dialeval.backends import default_in_flight

            self.config = dataclasses.replace(self.config, in_flight=default_in_flight(self.config.backend))
        if not (self.protocol_name or self.config.protocol):  # it said 'unknown protocol ""' when first scoring
            raise InputError("give a protocol YAML file (-p judge:custom.protocol=my.yaml)",
                             field="protocol")  # fmt: skip
        if self.protocol.needs_references:  # judge:custom's file: the class cannot know it, and "" was the reference
            self.needs_references = True  # type: ignore[misc]  # the scoring plan reads it from the instance
        if self.config.mode == "distribution" and self.protocol.answer is None:
            # no answer shape, no score position to read: it samples
            self.config = dataclasses.replace(self.config, mode="sample")
        if self.config.mode == "distribution":
            # one request at temperature 1 (the model's own probabilities): say so in the signature
            self.config = dataclasses.replace(self.config, k=1, temperature=1.0)

    @cached_property
    def protocol(self) -> Protocol:
        """The protocol (the config's file for ``judge:custom``)."""
        return load_protocol(self.config.protocol or self.protocol_name)

    @cached_property
    def backend(self) -> Backend:
        """The model backend, built on first use."""
        c = self.config
        return make_backend(
            c.backend, c.model, base_url=c.base_url, api_key_env=c.api_key_env, timeout=c.timeout,
            max_retries=c.max_retries, in_flight=c.in_flight,
        )

    @cached_property
    def runner(self) -> Runner:
        """Cache + budget + concurrency, shared by every batch of a run."""
        from dialeval.paths import cache_dir

        c = self.config
        return Runner(
            self.backend,
            RequestCache(cache_dir() / "judge_requests.sqlite") if c.cache else None,
            in_flight=c.in_flight, max_calls=c.max_calls or None, max_tokens=c.max_total_tokens or None,
        )

    def _judge(self, protocol: Protocol) -> Judge:
        c = self.config
        return Judge(
            protocol, self.runner, k=c.k, temperature=c.temperature, seed=c.seed,
            max_tokens=c.max_tokens, top_logprobs=c.top_logprobs, mode=c.mode, structured=c.structured,
        )

    @cached_property
    def judge(self) -> Judge | DialogueJudge:
        """The judge (two-step for cpdscore-dialogue)."""
        p = self.protocol
        if p.step1_protocol:
            return DialogueJudge(self._judge(load_protocol(p.step1_protocol)), self._judge(p))
        return self._judge(p)

    def signature_extra(self) -> Mapping[str, Any]:
        """Protocol name, version and hash (and its step-1 protocol's); the parser's version; the backend's."""
        from dialeval.judges.parse import PARSER_VERSION

        p = self.protocol
        # a step-1 file edited in place changed no signature: the score cache kept the old prompt's scores
        step1 = {"step1_protocol_sha256": load_protocol(p.step1_protocol).sha256[:16]} if p.step1_protocol else {}
        return {
            "protocol": p.name, "protocol_version": p.version, "protocol_sha256": p.sha256[:16], **step1,
            "judge_parser": PARSER_VERSION, "judge_backend": self.backend.signature,
        }

    def why_unscored(self, key: str) -> str | None:
        """Say why this run left an item without a score: the failed request, the parse failure, the budget."""
        return self._unscored.get(key)

    def _note_unscored(self, items: Sequence[MetricInput], judged: Sequence[Judgement]) -> None:
        """Keep the reason of every item judged without a score (see :meth:`why_unscored`)."""
        from dialeval.cache import input_key

        for item, j in zip(items, judged, strict=True):
            if j.value is None:
                key = input_key(item)
                self._unscored[key] = "; ".join(dict.fromkeys(filter(None, (self._unscored.get(key), j.reason))))

    def compute(self, items: Sequence[MetricInput]) -> MetricValues:
        """Judge a batch; None where an item got no parsable score."""
        judge, fam = self.judge, self.name
        out: dict[str, list[float | None]] = {}
        if isinstance(judge, DialogueJudge):
            res = judge.judge(items)
            self._note_unscored(items, [r.final for r in res])
            out[fam] = [r.final.value for r in res]
            out[f"{fam}:turn"] = [r.turn for r in res]
            out[f"{fam}:interaction"] = [r.interaction for r in res]
            return out
        p = self.protocol
        stats, counted = judge.stats, (judge.stats.items, judge.stats.items_missing)
        missing = [False] * len(items)
        for dim in p.dimension_names:
            base = f"{fam}:{dim}" if dim else fam
            res_dim = judge.judge(items, dim)
            self._note_unscored(items, res_dim)
            missing = [m or r.value is None for m, r in zip(missing, res_dim, strict=True)]
            out[base] = [r.value for r in res_dim]
            if p.levels:
                out[f"{base}:level"] = [
                    None if r.value is None else float(to_level(r.value, p.levels)) for r in res_dim
                ]
            out[f"{base}:expected"] = [r.expected for r in res_dim]
        # the judge counted each dimension's question as an item: 2 items of dialogadv read "items: 8"
        stats.items, stats.items_missing = counted[0] + len(items), counted[1] + sum(missing)
        return {o: out.get(o, [None] * len(items)) for o in self.outputs}

    def run_summary(self) -> dict[str, Any]:
        """Return the counts of the run so far: calls, cache hits, retries, parse failures, tokens, cost."""
        stats: JudgeStats = self.judge.stats if "judge" in self.__dict__ else JudgeStats()
        run = self.runner.stats.as_dict() if "runner" in self.__dict__ else {}
        c = self.config
        cost = run.get("prompt_tokens", 0) * c.usd_per_mtok_in + run.get("completion_tokens", 0) * c.usd_per_mtok_out
        backend = self.__dict__.get("backend")
        out: dict[str, Any] = {
            "protocol": self.protocol.name,
            "mode": c.mode,
            "structured": c.structured,
            **stats.as_dict(),
            **run,
            "transport_retries": backend.retries if backend is not None else 0,
            "structured_fallbacks": backend.structured_fallbacks if backend is not None else 0,
            "cost_usd": round(cost / 1e6, 6),
        }
        out["notes"] = _notes(out, getattr(backend, "structure_refused", ""), self.protocol)
        return out


def _notes(s: Mapping[str, Any], refused: str, protocol: Protocol) -> list[str]:
    """Say why a counter that structure should keep at zero is not zero."""
    notes = []
    if s["structured_fallbacks"]:
        notes.append(f"the server refused response_format ({refused}); those answers were free text, parsed")
    if s["parse_failures"] or s["parse_retries"]:
        if not s["structured"]:
            notes.append("structured=off: answers are free text and some did not state a score")
        elif protocol.answer is None:
            notes.append("the protocol declares no answer shape, so answers are free text")
        elif s["cut_by_max_tokens"]:  # the server's finish_reason: an empty answer it ended was noted as cut
            notes.append(f"{s['cut_by_max_tokens']} answer(s) were cut by max_tokens before the shape was complete "
                         "(raise max_tokens)")  # fmt: skip
        elif not s["structured_fallbacks"]:
            notes.append("an answer ended without the shape's score, and the backend did not say max_tokens cut it: "
                         "does the backend hold answers to the shape?")  # fmt: skip
    if s["distribution_missing"]:
        notes.append("the backend returned no probability for an allowed score at the score position")
    if s["request_failures"] or s["budget_skipped"]:
        notes.append("requests failed or the budget was spent: those items have no score")
    return notes


def _family(name: str) -> type[JudgeMetric]:
    family = f"judge:{name}"
    p = load_protocol(name)
    return type(
        f"Judge_{name.replace('-', '_')}",
        (JudgeMetric,),
        {
            "name": family, "outputs": _outputs(p, family), "protocol_name": name, "units": _units(p, family),
            "needs_references": p.needs_references, "__doc__": f"LLM judge, protocol {name}: {p.description}",
        },
    )


class CustomJudge(JudgeMetric):
    """An LLM judge with a user's protocol file: ``judge:custom`` with ``protocol=path.yaml``."""

    name = "judge:custom"
    outputs = ("judge:custom", "judge:custom:expected")
    units: ClassVar[Mapping[str, str]] = dict.fromkeys(outputs, "the protocol's scale")

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        from dialeval.jsonl import read_text, yaml_line

        p = self.protocol
        why, key = "", ""
        if len(p.dimensions) > 1:  # only the first was asked, and its score was "judge:custom", the others dropped
            why, key = (f"judge:custom gives one score per item, and this file asks {len(p.dimensions)} dimensions "
                        f"({', '.join(p.dimension_names)}): give each its own file", "dimensions")  # fmt: skip
        elif p.levels:  # its outputs have no ":level": the levels asked for were dropped
            why, key = (f"judge:custom gives the score and the expected score, not the {p.levels} levels this file "
                        "asks for: leave levels out (a level is read from the 0-1 score)", "levels")  # fmt: skip
        if why:
            raise InputError(why, path=p.path, line=yaml_line(read_text(p.path), [key]), field=key)

    def compute(self, items: Sequence[MetricInput]) -> MetricValues:
        """Judge with the user's protocol (its one dimension, if it names one; the final score of a two-step one)."""
        judge = self.judge  # the cached judge, so run_summary() counts its calls and parse failures
        if isinstance(judge, DialogueJudge):
            res = [r.final for r in judge.judge(items)]
        else:
            res = judge.judge(items, self.protocol.dimension_names[0])
        self._note_unscored(items, res)
        return {"judge:custom": [r.value for r in res], "judge:custom:expected": [r.expected for r in res]}


def register_judges() -> None:
    """Register ``judge:<protocol>`` for every built-in protocol, and ``judge:custom``."""
    for name in protocol_names():
        if f"judge:{name}" not in METRICS:
            METRICS.register(f"judge:{name}", _family(name))
    if "judge:custom" not in METRICS:
        METRICS.register("judge:custom", CustomJudge)
