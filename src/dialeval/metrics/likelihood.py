"""Response likelihood under a causal LM, in the LMStyle paper's form, computed without waste.

For each item the prompt is ``###Speaker: {context} ###Response:`` and the
continuation is `` {response}``; the mean token NLL of the continuation is
reported as ``100 / NLL`` (higher is better). The unconditional form scores the
same continuation after the BOS token alone, and ``lm_context_gain`` is
``NLL_uncond - NLL_cond`` (how much the context explains the response).

Speed comes from not doing work: identical (prompt, response) pairs are scored
once; each distinct prompt is computed once and its keys/values are shared by
every response to it (a prompt and all its responses are packed into one row
with a tree-shaped attention mask); the vocabulary projection runs only at the
positions that predict response tokens; rows are batched longest first, so
padding stays small.

Example:
    >>> LikelihoodMetric().signature.split("|")[:3]
    ['likelihood', 'model:smollm2-135m', 'device:cpu']
"""

from __future__ import annotations

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


def _pack(chunk: Sequence[tuple[tuple[int, ...], list[tuple[int, ...]]]], width: int) -> tuple[Any, ...]:
    """Lay each prompt and all its responses side by side in one row, with a tree-shaped mask."""
    import torch

    n = len(chunk)
    ids = torch.zeros((n, width), dtype=torch.long)
    pos = torch.zeros((n, width), dtype=torch.long)
    mask = torch.zeros((n, 1, width, width), dtype=torch.bool)
    pred: list[int] = []
    targets: list[int] = []
    keys: list[Request] = []
    for b, (prefix, conts) in enumerate(chunk):
        size = len(prefix)
        ids[b, :size] = torch.tensor(prefix)
        pos[b, :size] = torch.arange(size)
        mask[b, 0, :size, :size] = torch.ones(size, size, dtype=torch.bool).tril()
        off = size
        for c in conts:
            n_c = len(c)
            ids[b, off : off + n_c] = torch.tensor(c)
            pos[b, off : off + n_c] = torch.arange(size, size + n_c)
            mask[b, 0, off : off + n_c, :size] = True  # every response sees the whole prompt ...
            mask[b, 0, off : off + n_c, off : off + n_c] = torch.ones(n_c, n_c, dtype=torch.bool).tril()  # and itself
            pred.extend([b * width + size - 1] + [b * width + off + k for k in range(n_c - 1)])
            targets.extend(c)
            keys.append((prefix, c))
            off += n_c
        for j in range(off, width):  # padding attends to itself only (no empty softmax rows)
            mask[b, 0, j, j] = True
    return ids, pos, mask, pred, targets, keys


def continuation_nll(model: Any, requests: Sequence[Request], max_batch_tokens: int = 2048) -> list[float | None]:
    """Return the mean token NLL of each continuation given its prefix (None if it is empty).

    Equals the loss of ``model(prefix + continuation, labels=...)`` with the prefix
    labels masked. Each distinct prefix is laid out once, followed by its distinct
    continuations; a tree-shaped attention mask lets every continuation see the
    prefix and itself only (the prefix's keys and values are computed once and
    shared), position ids restart after the prefix for each continuation, and
    several contexts are batched, longest first, up to ``max_batch_tokens`` padded
    tokens. The vocabulary projection runs only at positions that predict a
    continuation token.
    """
    import torch

    base = getattr(model, model.base_model_prefix)
    head = model.get_output_embeddings()
    device = next(model.parameters()).device
    groups: dict[tuple[int, ...], set[tuple[int, ...]]] = defaultdict(set)
    for prefix, cont in requests:
        if cont:
            groups[prefix].add(cont)
    rows = sorted(
        ((p, sorted(cs, key=len)) for p, cs in groups.items()),
        key=lambda row: -(len(row[0]) + sum(len(c) for c in row[1])),
    )
    found: dict[Request, float] = {}
    start = 0
    with torch.inference_mode():
        while start < len(rows):
            width = len(rows[start][0]) + sum(len(c) for c in rows[start][1])
            chunk = rows[start : start + max(1, max_batch_tokens // width)]
            start += len(chunk)
            ids, pos, mask, pred, targets, keys = _pack(chunk, width)
            hidden = base(
                input_ids=ids.to(device), attention_mask=mask.to(device), position_ids=pos.to(device)
            ).last_hidden_state
            picked = hidden.reshape(-1, hidden.shape[-1])[torch.tensor(pred, device=device)]
            logp = torch.log_softmax(head(picked).float(), dim=-1)
            nll = -logp.gather(1, torch.tensor(targets, device=device)[:, None])[:, 0]
            for key, part in zip(keys, torch.split(nll, [len(c) for _, c in keys]), strict=True):
                found[key] = float(part.mean())
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
    max_batch_tokens: ClassVar[int] = 1024
    config: LikelihoodConfig

    @classmethod
    def unavailable_reason(cls, params: Mapping[str, Any] | None = None) -> str | None:
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
