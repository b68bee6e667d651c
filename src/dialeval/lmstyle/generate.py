r"""Generate styled responses with the Fig. 3 prompt, as re-scorable Candidate records.

Each request is a raw text completion (the prompt is written for base models; no
chat template), with explicit sampling settings that all go in the signature. The
answer is cut at the first stop string and stripped. Requests go through the
request cache, so a rerun with the same backend and settings makes no calls.

Model specs (``--model``; the command line refuses an empty one): ``smollm2`` = the packaged SmolLM2-135M via
llama.cpp; a ``.gguf`` file = llama.cpp; a directory = transformers;
``NAME@http://host:port/v1`` = an OpenAI-compatible server (``/v1/completions``).

Example:
    >>> GenerationSettings().signature("llamacpp:x:abc").split("|")[:5]
    ['generate', 'temperature:0.7', 'max_tokens:40', 'stop:###,\\n', 'seed:0']
    >>> parse_model_spec("judge@http://127.0.0.1:8080/v1")
    ('openai-compatible', 'judge', 'http://127.0.0.1:8080/v1', 'judge')
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dialeval.backends.base import Backend, ChatRequest, Completion
from dialeval.errors import InputError, closest
from dialeval.lmstyle.prompt import CONTROL, PROMPT_ID, Pair, build_prompt, split_shots, style_word
from dialeval.schema import Candidate, Dialogue, Turn
from dialeval.signature import make_signature, text_sha256

DEFAULT_MODEL = "smollm2"


@dataclass(frozen=True)
class GenerationSettings:
    """Sampling settings of the styled-response generation (the paper states none of them).

    Attributes:
        temperature: Sampling temperature (0: greedy).
        max_tokens: Most tokens per response.
        stop: Strings that end a response: the next ``###`` turn marker, or a line break.
        seed: Sampling seed, the same for every request.
    """

    temperature: float = 0.7
    max_tokens: int = 40
    stop: tuple[str, ...] = ("###", "\n")
    seed: int = 0

    def signature(self, backend_signature: str, shots_sha256: str = "") -> str:
        """Return the generation signature: settings, prompt id and shot hash, backend."""
        extra = {"prompt": PROMPT_ID, "shots_sha256": shots_sha256[:16], "backend": backend_signature}
        return make_signature("generate", self, extra)

    def request(self, prompt: str) -> ChatRequest:
        """Return the raw completion request for one prompt."""
        return ChatRequest(
            messages=(("user", prompt),), max_tokens=self.max_tokens, temperature=self.temperature,
            seed=self.seed, stop=self.stop, raw=True,
        )  # fmt: skip


def parse_model_spec(spec: str) -> tuple[str, str, str, str]:
    """Return ``(backend kind, model, base_url, label)`` for a ``--model`` value."""
    if not spec or spec == DEFAULT_MODEL:
        return "llamacpp", "", "", DEFAULT_MODEL
    if "@" in spec and "://" in spec.split("@", 1)[1]:
        name, url = spec.split("@", 1)
        return "openai-compatible", name, url, name
    if spec.endswith(".gguf"):
        return "llamacpp", spec, "", Path(spec).stem
    return "transformers", spec, "", Path(spec).name


def check_model_spec(spec: str, option: str) -> None:
    """Refuse a local model that is not there, as building its backend would, but before any model loads.

    Example:
        >>> check_model_spec("smollm2", "--judge-model"), check_model_spec("m@http://127.0.0.1:1/v1", "--model")
        (None, None)
        >>> check_model_spec("no/such.gguf", "--judge-model")
        Traceback (most recent call last):
        ...
        dialeval.errors.InputError: no/such.gguf: field "--judge-model": model file not found (give a GGUF file)
        >>> check_model_spec("llama", "--model")
        Traceback (most recent call last):
        ...
        dialeval.errors.InputError: llama: field "--model": not found: give smollm2 (packaged), a GGUF file, ...
        >>> check_model_spec("smollm", "--model")
        Traceback (most recent call last):
        ...
        dialeval.errors.InputError: smollm: field "--model": not found; did you mean "smollm2" (packaged)? Else ...
        >>> check_model_spec("", "--judge-model")
        Traceback (most recent call last):
        ...
        dialeval.errors.InputError: field "--judge-model": is empty; give smollm2 (packaged), a GGUF file, ...
        >>> check_model_spec("@http://127.0.0.1:8080/v1", "--judge-model")
        Traceback (most recent call last):
        ...
        dialeval.errors.InputError: field "--judge-model": names no model before "@": give NAME@URL, NAME as the ...
    """
    from dialeval.backends.base import missing_model

    others = "a GGUF file, a transformers model folder or NAME@URL (an OpenAI-compatible server)"
    if not spec.strip():  # an unset shell variable: the packaged model ran, and run.json said the judge was ""
        raise InputError(f"is empty; give {DEFAULT_MODEL} (packaged), {others}", field=option)
    kind, model, url, _ = parse_model_spec(spec)
    if kind == "openai-compatible":  # before any model generates: a second model's bad URL ended the run late
        from dialeval.backends.openai_compat import check_base_url

        if not model:  # it said 'field "model": ... needs model (-p model=...)', which generate does not take
            raise InputError('names no model before "@": give NAME@URL, NAME as the server knows it', field=option)
        check_base_url(url, option)
    if kind == "transformers" and not Path(model).exists():  # it said only what the transformers backend loads
        if closest(model, [DEFAULT_MODEL], cutoff=0.7):  # "smollm", "smolm"; not "llama"
            raise InputError(f'not found; did you mean "{DEFAULT_MODEL}" (packaged)? Else give {others}', path=model,
                             field=option)  # fmt: skip
        raise InputError(f"not found: give {DEFAULT_MODEL} (packaged), {others}", path=model, field=option)
    if why := missing_model(kind, model):
        raise InputError(why, path=model, field=option)


def make_generator(spec: str, in_flight: int = 0) -> tuple[Backend, str]:
    """Build the backend for a model spec; return it and the model's label."""
    from dialeval.backends import make_backend

    kind, model, url, label = parse_model_spec(spec)
    return make_backend(kind, model, base_url=url, in_flight=in_flight), label


def clean(text: str, stop: Sequence[str]) -> str:
    r"""Cut a completion at its first stop string (after leading blanks) and strip it.

    Example:
        >>> clean("  Sure . ###Speaker: x", ("###", "\n"))
        'Sure .'
    """
    text = text.lstrip()
    for s in stop:
        if s:
            text = text.split(s, 1)[0]
    return text.strip()


def readable(text: str) -> tuple[str, int]:
    r"""Return ``text`` with each control character but tab, line feed and carriage return as U+FFFD, and how many.

    U+FFFD, as a lone surrogate half becomes (:func:`~dialeval.backends.base.whole`): something unreadable was there.

    Example:
        >>> readable("ok\x00 \x1b[1m\tyes") == ("ok\ufffd \ufffd[1m\tyes", 2)
        True
    """
    return CONTROL.subn("\ufffd", text)


@dataclass
class Generated:
    """The outcome of one generation run.

    Attributes:
        dialogues: One single-turn dialogue per query.
        candidates: One candidate per (query, style) that got an answer; one ``max_tokens`` cut is tagged
            ``cut: max_tokens``.
        signature: The generation signature (settings, prompt, backend).
        counts: requests, cache hits, failures, empty responses, responses cut by ``max_tokens`` and responses
            holding control characters (each when any).
        failures: The failed requests counted by the backend's reason (``HTTP 400: ...``).
        seconds: Wall time.
    """

    dialogues: dict[str, Dialogue] = field(default_factory=dict)
    candidates: list[Candidate] = field(default_factory=list)
    signature: str = ""
    counts: Counter[str] = field(default_factory=Counter)
    failures: Counter[str] = field(default_factory=Counter)
    seconds: float = 0.0

    def summary(self) -> dict[str, Any]:
        """Return a JSON-able summary: signature, counts, the failures by reason (if any), seconds.

        Example:
            >>> done = Generated(signature="generate|x", counts=Counter(requests=2, failed=1))
            >>> done.failures["HTTP 400"] += 1
            >>> done.summary()
            {'signature': 'generate|x', 'requests': 2, 'failed': 1, 'failures': {'HTTP 400': 1}, 'seconds': 0.0}
        """
        failures = {"failures": dict(self.failures.most_common())} if self.failures else {}
        return {"signature": self.signature, **dict(self.counts), **failures, "seconds": round(self.seconds, 2)}


def generate_styled(
    backend: Backend,
    label: str,
    data: dict[str, list[Pair]],
    styles: Sequence[str],
    n: int,
    settings: GenerationSettings,
    *,
    use_cache: bool = True,
    in_flight: int | None = None,
) -> Generated:
    """Generate one response per (dataset, first-``n`` query, style) with one backend.

    Args:
        backend: The model.
        label: The model's name in ``system`` and the ``model`` tag.
        data: Query/reference pairs per dataset key (``dd``, ``bst``).
        styles: Style names (``formal``, ``informal``, ``positive``, ``negative``).
        n: Queries per dataset (the first ``n``; the last five are the shots).
        settings: Sampling settings.
        use_cache: Keep requests and answers in ``$DIALEVAL_CACHE/generation_requests.sqlite``.
        in_flight: Requests at once (default: the backend's).
    """
    from dialeval.backends.cache import RequestCache
    from dialeval.backends.runner import Runner
    from dialeval.paths import cache_dir

    started = time.perf_counter()
    out = Generated()
    cache = RequestCache(cache_dir() / "generation_requests.sqlite") if use_cache else None
    runner = Runner(backend, cache, in_flight=in_flight)
    jobs: list[tuple[str, int, Pair, str]] = []
    prompts: list[str] = []
    shot_text = []
    for ds, pairs in data.items():
        shots, evaluated = split_shots(pairs, n)
        shot_text.append(build_prompt(shots, "", "formal"))
        for i, pair in enumerate(evaluated):
            did = f"lmstyle-{ds}-{i:04d}"
            out.dialogues[did] = Dialogue(id=did, turns=[Turn(speaker="A", text=pair.query)], tags={"dataset": ds})
            for style in styles:
                jobs.append((ds, i, pair, style))
                prompts.append(build_prompt(shots, pair.query, style))
    answers = runner.run([settings.request(p) for p in prompts])
    for (ds, i, pair, style), answer in zip(jobs, answers, strict=True):
        if not isinstance(answer, Completion):
            out.counts["failed"] += 1
            out.failures[str(answer)] += 1
            continue
        text, controls = readable(clean(answer.text, settings.stop))
        out.counts["empty"] += int(not text)
        if controls:
            out.counts["control_characters"] += 1
        did = f"lmstyle-{ds}-{i:04d}"
        tags = {"dataset": ds, "style": style, "task": style_word(style), "model": label}
        if answer.cut:  # written and scored as a whole response, with nothing said
            out.counts["cut_by_max_tokens"] += 1
            tags["cut"] = "max_tokens"
        out.candidates.append(
            Candidate(id=f"{did}:{style}:{label}", dialogue_id=did, turn_index=1, system=label, text=text,
                      references=[pair.reference] if pair.reference else [], tags=tags)
        )  # fmt: skip
    out.counts.update(requests=len(prompts), calls=runner.stats.calls, cache_hits=runner.stats.cache_hits)
    out.counts.update(completion_tokens=runner.stats.completion_tokens)
    out.signature = settings.signature(backend.signature, text_sha256("\n".join(shot_text)))
    out.seconds = time.perf_counter() - started
    if cache is not None:
        cache.close()
    return out
