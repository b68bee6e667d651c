"""Response likelihood under a causal LM, in the LMStyle paper's form, computed without waste.

For each item the prompt is ``###Speaker: {context} ###Response:`` and the
continuation is `` {response}``; the mean token NLL of the continuation is
reported as ``100 / NLL`` (higher is better). The unconditional form scores the
same continuation after the BOS token alone, and ``lm_context_gain`` is
``NLL_uncond - NLL_cond`` (how much the context explains the response).

Speed comes from not doing work: identical (prompt, response) pairs are scored
once; each distinct prompt runs through the model once and its key/value cache
is reused by every response to it; the vocabulary projection runs only at the
positions that predict response tokens; responses to one prompt are batched
longest first, so padding stays small.

Example:
    >>> LikelihoodMetric().signature.split("|")[:3]
    ['likelihood', 'model:smollm2-135m', 'device:cpu']
"""

from __future__ import annotations

import copy
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from dialeval.metrics.base import Metric, MetricInput, MetricValues, register_metric
from dialeval.models.loading import DEFAULT_CAUSAL_LM

Request = tuple[tuple[int, ...], tuple[int, ...]]


@dataclass(frozen=True)
class LikelihoodConfig:
    """How the prompt is built and which model scores it.

    Attributes:
        model: ``"smollm2-135m"`` (packaged), a GGUF file, or a transformers folder.
        device: Torch device (``"cpu"``, ``"cuda"``).
        context_turns: How many of the last context turns go in the prompt (0 = all).
        max_context_tokens: The context is cut from the left to this many tokens.
        max_response_tokens: The response is cut from the right to this many tokens.
        template: Prompt template with a ``{context}`` slot.
        turn_separator: Joins the context turns.
    """

    model: str = DEFAULT_CAUSAL_LM
    device: str = "cpu"
    context_turns: int = 1
    max_context_tokens: int = 512
    max_response_tokens: int = 256
    template: str = "###Speaker: {context} ###Response:"
    turn_separator: str = " "


def continuation_nll(model: Any, requests: Sequence[Request], max_batch_tokens: int = 2048) -> list[float | None]:
    """Return the mean token NLL of each continuation given its prefix (None if it is empty).

    Equals the loss of ``model(prefix + continuation, labels=...)`` with the prefix
    labels masked, computed with one prefix pass per distinct prefix.
    """
    import torch

    base = getattr(model, model.base_model_prefix)
    head = model.get_output_embeddings()
    device = next(model.parameters()).device
    by_prefix: dict[tuple[int, ...], set[tuple[int, ...]]] = defaultdict(set)
    for prefix, cont in requests:
        if cont:
            by_prefix[prefix].add(cont)
    found: dict[Request, float] = {}
    with torch.inference_mode():
        for prefix, cont_set in by_prefix.items():
            out = base(input_ids=torch.tensor([prefix], device=device), use_cache=True)
            past, last_h = out.past_key_values, out.last_hidden_state[0, -1:]
            conts = sorted(cont_set, key=len, reverse=True)
            start = 0
            while start < len(conts):
                width = len(conts[start])
                rows = max(1, max_batch_tokens // width)
                chunk = conts[start : start + rows]
                start += len(chunk)
                ids = torch.zeros((len(chunk), width), dtype=torch.long, device=device)
                for i, c in enumerate(chunk):
                    ids[i, : len(c)] = torch.tensor(c)
                cache = copy.deepcopy(past)
                cache.batch_repeat_interleave(len(chunk))
                pos = torch.arange(len(prefix), len(prefix) + width, device=device).expand(len(chunk), width)
                h = base(input_ids=ids, past_key_values=cache, position_ids=pos, use_cache=True).last_hidden_state
                picked = torch.cat([torch.cat([last_h, h[i, : len(c) - 1]]) for i, c in enumerate(chunk)])
                logp = torch.log_softmax(head(picked).float(), dim=-1)
                targets = torch.tensor([t for c in chunk for t in c], device=device)
                nll = -logp.gather(1, targets[:, None])[:, 0]
                for c, part in zip(chunk, torch.split(nll, [len(c) for c in chunk]), strict=True):
                    found[(prefix, c)] = float(part.mean())
    return [found.get(r) for r in requests]


def _inverse(nll: float | None) -> float | None:
    return None if nll is None else 100.0 / max(nll, 1e-9)


@register_metric
class LikelihoodMetric(Metric):
    """``lm_likelihood`` (100/NLL of the response given the context), its unconditional twin, and the gain."""

    name = "likelihood"
    outputs = ("lm_likelihood", "lm_likelihood_uncond", "lm_context_gain")
    Config = LikelihoodConfig
    batch_size: ClassVar[int] = 120
    #: Upper bound on padded tokens per forward pass (does not change the values).
    max_batch_tokens: ClassVar[int] = 2048
    config: LikelihoodConfig

    @classmethod
    def unavailable_reason(cls) -> str | None:
        """Say which pip install is missing, if any."""
        import importlib.util

        for mod in ("torch", "transformers", "gguf"):
            if importlib.util.find_spec(mod) is None:
                return f"needs {mod}: pip install 'dialeval[models]'"
        return None

    def _loaded(self) -> tuple[Any, Any, str]:
        from dialeval.models.loading import load_causal_lm

        return load_causal_lm(self.config.model, self.config.device)

    def signature_extra(self) -> Mapping[str, Any]:
        """Model file hash and transformers version."""
        import transformers

        from dialeval.models.loading import fingerprint, resolve_lm_source

        sha = fingerprint(resolve_lm_source(self.config.model))
        return {"model_sha": sha, "transformers": transformers.__version__}

    def requests(self, items: Sequence[MetricInput]) -> tuple[list[Request], list[Request]]:
        """Return the token-id (prefix, continuation) pairs, conditional and unconditional."""
        cfg = self.config
        _, tok, _ = self._loaded()
        start = tok.bos_token_id if tok.bos_token_id is not None else tok.eos_token_id
        bos = (start,) if start is not None else ()
        cond: list[Request] = []
        uncond: list[Request] = []
        for item in items:
            turns = item.context[-cfg.context_turns :] if cfg.context_turns > 0 else item.context
            ctx_ids = tok(cfg.turn_separator.join(t.text for t in turns), add_special_tokens=False).input_ids
            context = tok.decode(ctx_ids[-cfg.max_context_tokens :]) if len(ctx_ids) > cfg.max_context_tokens else None
            if context is None:
                context = cfg.turn_separator.join(t.text for t in turns)
            prefix = bos + tuple(tok(cfg.template.format(context=context), add_special_tokens=False).input_ids)
            text = item.response.strip()
            cont = tuple(tok(" " + text, add_special_tokens=False).input_ids)[: cfg.max_response_tokens] if text else ()
            cond.append((prefix, cont))
            uncond.append((bos, cont))
        return cond, uncond

    def compute(self, items: Sequence[MetricInput]) -> MetricValues:
        """Score a batch; an empty response gets None."""
        model, _, _ = self._loaded()
        cond, uncond = self.requests(items)
        nll = continuation_nll(model, cond + uncond, self.max_batch_tokens)
        nll_c, nll_u = nll[: len(items)], nll[len(items) :]
        gain = [None if c is None or u is None else u - c for c, u in zip(nll_c, nll_u, strict=True)]
        return {
            "lm_likelihood": [_inverse(v) for v in nll_c],
            "lm_likelihood_uncond": [_inverse(v) for v in nll_u],
            "lm_context_gain": gain,
        }
