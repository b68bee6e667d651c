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

import contextlib
import functools
import threading
import weakref
from collections import defaultdict
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from dialeval.errors import InputError
from dialeval.metrics.base import Metric, MetricInput, MetricValues, needs, register_metric
from dialeval.metrics.rules import rule
from dialeval.models.loading import DEFAULT_CAUSAL_LM

Request = tuple[tuple[int, ...], tuple[int, ...]]


@dataclass(frozen=True)
class LikelihoodConfig:
    """How the prompt is built and which model scores it.

    Attributes:
        model: ``"smollm2-135m"`` (packaged), a GGUF file, or a transformers folder.
        device: Torch device (``"cpu"``, ``"cuda"``); ``auto`` (default) is cuda when torch sees a GPU.
        context_turns: How many of the last context turns go in the prompt (0 = all; at least 0).
        max_context_tokens: The context is cut from the left to this many tokens (at least 1), and further where
            the prompt and the response would pass the model's positions (8,192 for SmolLM2-135M); the score says so.
        max_response_tokens: The response is cut from the right to this many tokens (at least 1), and further where
            it alone would pass the model's positions.
        template: Prompt template with a ``{context}`` slot and no other (a literal brace is ``{{`` or ``}}``); with
            an empty context it must leave the model a position for the response.
        turn_separator: Joins the context turns.
    """

    model: str = DEFAULT_CAUSAL_LM
    device: str = "auto"
    context_turns: int = field(default=1, metadata=rule(minimum=0, note="0 = all turns"))
    max_context_tokens: int = field(default=512, metadata=rule(minimum=1))
    max_response_tokens: int = field(default=256, metadata=rule(minimum=1))
    template: str = field(default="###Speaker: {context} ###Response:", metadata=rule(placeholders=("context",)))
    turn_separator: str = " "


_ATTENTION = "dialeval_tree"
#: Positions per vocabulary-projection chunk: the logits of one chunk (chunk x vocab floats) stay
#: in one reused buffer instead of a fresh vocab-wide tensor per batch.
_HEAD_CHUNK = 128
_unsupported: weakref.WeakSet[Any] = weakref.WeakSet()


class _Packed(threading.local):
    """The rows of the forward pass running in this thread: (start, end, tree mask) each."""

    rows: list[tuple[int, int, Any]] | None = None
    calls: int = 0


_packed = _Packed()


def _tree_attention(
    module: Any, query: Any, key: Any, value: Any, attention_mask: Any, scaling: float | None = None, **kwargs: Any
) -> tuple[Any, None]:
    """Attention over a batch of rows laid end to end: each row attends within itself, under its tree mask.

    Registered as a transformers attention implementation; outside :func:`continuation_nll`'s
    packed forward (no rows set in this thread) it is plain SDPA.
    """
    import torch

    rows = _packed.rows
    if rows is None:
        from transformers.integrations.sdpa_attention import sdpa_attention_forward

        return sdpa_attention_forward(module, query, key, value, attention_mask, scaling=scaling, **kwargs)
    if query.shape[0] != 1 or query.shape[2] != rows[-1][1] or key.shape[2] != query.shape[2]:
        raise RuntimeError(f"packed attention got query {tuple(query.shape)}, key {tuple(key.shape)}")
    _packed.calls += 1
    gqa = query.shape[1] != key.shape[1]
    out = query.new_empty(1, query.shape[2], query.shape[1], value.shape[3])
    for start, end, mask in rows:
        part = torch.nn.functional.scaled_dot_product_attention(
            query[:, :, start:end],
            key[:, :, start:end],
            value[:, :, start:end],
            attn_mask=mask,
            scale=scaling,
            enable_gqa=gqa,
        )
        out[:, start:end] = part.transpose(1, 2)
    return out, None


@functools.cache
def _register_attention() -> None:
    from transformers import AttentionInterface

    AttentionInterface.register(_ATTENTION, _tree_attention)


def _can_pack(model: Any) -> bool:
    return bool(getattr(type(model), "_supports_attention_backend", False)) and model not in _unsupported


@contextlib.contextmanager
def _packed_attention(model: Any) -> Iterator[None]:
    """Switch the model to :func:`_tree_attention` for the duration (restored afterwards)."""
    _register_attention()
    old = model.config._attn_implementation
    model.set_attn_implementation(_ATTENTION)
    try:
        yield
    finally:
        _packed.rows = None
        model.set_attn_implementation(old)


def _split_rows(
    groups: Mapping[tuple[int, ...], set[tuple[int, ...]]], pair_cost: float
) -> list[tuple[tuple[int, ...], list[tuple[int, ...]]]]:
    """Lay each prefix and its continuations in rows; a prefix gets a second row only when that is cheaper.

    Within a row every query-key pair costs attention (``pair_cost`` of a token's dense
    layers), so a continuation joins the current row unless repeating the prefix in a new
    row costs less (the unconditional prefix is one token: its many responses go in short rows).
    """
    rows: list[tuple[tuple[int, ...], list[tuple[int, ...]]]] = []
    for prefix, conts in groups.items():
        size = len(prefix)
        row: list[tuple[int, ...]] = []
        width = size
        for cont in sorted(conts, key=lambda c: (len(c), c)):
            n = len(cont)
            join = pair_cost * ((width + n) ** 2 - width**2)
            fresh = size + pair_cost * (size + n) ** 2
            if row and join > fresh:
                rows.append((prefix, row))
                row, width = [], size
            row.append(cont)
            width += n
        rows.append((prefix, row))
    return sorted(rows, key=lambda r: -(len(r[0]) + sum(len(c) for c in r[1])))


def _tree_mask(size: int, lengths: Sequence[int], device: Any) -> Any:
    """Boolean mask of one row: the prefix is causal; each continuation sees the prefix and itself, causally."""
    import torch

    seg = torch.repeat_interleave(torch.arange(len(lengths) + 1), torch.tensor([size, *lengths]))
    idx = torch.arange(len(seg))
    causal = idx[None, :] <= idx[:, None]
    visible = (seg[None, :] == seg[:, None]) | (seg[None, :] == 0)
    return (causal & visible).to(device)


def _layout(
    chunk: Sequence[tuple[tuple[int, ...], list[tuple[int, ...]]]],
) -> tuple[list[int], list[int], list[int], list[int], list[Request], list[tuple[int, int, list[int]]]]:
    """Token ids, position ids, predicting positions, targets, keys and row spans of rows laid end to end."""
    ids: list[int] = []
    pos: list[int] = []
    pred: list[int] = []
    targets: list[int] = []
    keys: list[Request] = []
    spans: list[tuple[int, int, list[int]]] = []
    for prefix, conts in chunk:
        start = len(ids)
        size = len(prefix)
        ids.extend(prefix)
        pos.extend(range(size))
        for c in conts:
            off = len(ids)
            ids.extend(c)
            pos.extend(range(size, size + len(c)))
            pred.append(start + size - 1)
            pred.extend(range(off, off + len(c) - 1))
            targets.extend(c)
            keys.append((prefix, c))
        spans.append((start, len(ids), [size, *(len(c) for c in conts)]))
    return ids, pos, pred, targets, keys, spans


def _pack(chunk: Sequence[tuple[tuple[int, ...], list[tuple[int, ...]]]], width: int) -> tuple[Any, ...]:
    """Lay out padded rows, one per prefix (the fallback for models without the attention interface)."""
    import torch

    n = len(chunk)
    ids = torch.zeros((n, width), dtype=torch.long)
    pos = torch.zeros((n, width), dtype=torch.long)
    mask = torch.zeros((n, 1, width, width), dtype=torch.bool)
    pred: list[int] = []
    targets: list[int] = []
    keys: list[Request] = []
    for b, (prefix, conts) in enumerate(chunk):
        ids_b, pos_b, pred_b, targets_b, keys_b, _ = _layout([(prefix, conts)])
        w = len(ids_b)
        ids[b, :w] = torch.tensor(ids_b)
        pos[b, :w] = torch.tensor(pos_b)
        mask[b, 0, :w, :w] = _tree_mask(len(prefix), [len(c) for c in conts], "cpu")
        pad = torch.arange(w, width)
        mask[b, 0, pad, pad] = True  # padding attends to itself only (no empty softmax rows)
        pred.extend(b * width + p for p in pred_b)
        targets.extend(targets_b)
        keys.extend(keys_b)
    return ids, pos, mask, pred, targets, keys


def _head_nll(head: Any, hidden: Any, targets: Any) -> Any:
    """NLL of each target from its hidden state: logsumexp minus the target logit, a chunk of positions at a time."""
    import torch

    n = hidden.shape[0]
    nll = torch.empty(n, dtype=torch.float32, device=hidden.device)
    linear = type(head) is torch.nn.Linear
    buf = hidden.new_empty(min(n, _HEAD_CHUNK), head.weight.shape[0]) if linear else None
    for s in range(0, n, _HEAD_CHUNK):
        x = hidden[s : s + _HEAD_CHUNK]
        if buf is not None:
            logits = torch.mm(x, head.weight.t(), out=buf[: len(x)])
            if head.bias is not None:
                logits += head.bias
        else:
            logits = head(x)
        logits = logits.float()
        t = targets[s : s + _HEAD_CHUNK, None]
        nll[s : s + len(x)] = torch.logsumexp(logits, dim=-1) - logits.gather(1, t)[:, 0]
    return nll


def continuation_nll(model: Any, requests: Sequence[Request], max_batch_tokens: int = 1024) -> list[float | None]:
    """Return the mean token NLL of each continuation given its prefix (None if it is empty).

    Equals the loss of ``model(prefix + continuation, labels=...)`` with the prefix
    labels masked. Each distinct prefix is laid out once, followed by its distinct
    continuations; a tree-shaped attention mask lets every continuation see the
    prefix and itself only (the prefix's keys and values are computed once and
    shared), and position ids restart after the prefix for each continuation. Rows
    are laid end to end without padding, up to ``max_batch_tokens`` tokens per
    forward pass, and attention runs row by row (models without transformers'
    attention interface get padded rows and a 4-D mask instead). The vocabulary
    projection runs only at positions that predict a continuation token.

    Raises:
        ValueError: A continuation has an empty prefix (nothing predicts its first token).
    """
    import torch

    if any(cont and not prefix for prefix, cont in requests):
        raise ValueError("a continuation needs a prefix of at least one token to predict its first token from")

    base = getattr(model, model.base_model_prefix)
    head = model.get_output_embeddings()
    device = next(model.parameters()).device
    groups: dict[tuple[int, ...], set[tuple[int, ...]]] = defaultdict(set)
    for prefix, cont in requests:
        if cont:
            groups[prefix].add(cont)
    found: dict[Request, float] = {}
    packed = _can_pack(model)
    pair_cost = 1 / (4 * int(getattr(model.config, "hidden_size", 1024))) if packed else 0.0
    rows = _split_rows(groups, pair_cost)
    widths = [len(p) + sum(len(c) for c in cs) for p, cs in rows]
    start = 0
    with torch.inference_mode(), _packed_attention(model) if packed else contextlib.nullcontext():
        while start < len(rows):
            if packed:
                stop, total = start + 1, widths[start]
                while stop < len(rows) and total + widths[stop] <= max_batch_tokens:
                    total += widths[stop]
                    stop += 1
                chunk = rows[start:stop]
            else:
                chunk = rows[start : start + max(1, max_batch_tokens // widths[start])]
            start += len(chunk)
            nll = _forward_nll(model, base, head, chunk, device, packed)
            if nll is None:  # the model ignored the attention hook: never pack it again
                _unsupported.add(model)
                return continuation_nll(model, requests, max_batch_tokens)
            keys, values = nll
            for key, part in zip(keys, torch.split(values, [len(c) for _, c in keys]), strict=True):
                found[key] = float(part.mean())
    return [found.get(r) for r in requests]


def _forward_nll(
    model: Any,
    base: Any,
    head: Any,
    chunk: Sequence[tuple[tuple[int, ...], list[tuple[int, ...]]]],
    device: Any,
    packed: bool,
) -> tuple[list[Request], Any] | None:
    """One forward pass over ``chunk``: the keys and the per-token NLLs, in key order (None if unpacked)."""
    import torch

    if packed:
        ids_l, pos_l, pred, targets, keys, spans = _layout(chunk)
        _packed.rows = [(s, e, _tree_mask(sizes[0], sizes[1:], device)) for s, e, sizes in spans]
        _packed.calls = 0
        hidden = base(
            input_ids=torch.tensor([ids_l], device=device),
            position_ids=torch.tensor([pos_l], device=device),
            use_cache=False,
        ).last_hidden_state
        _packed.rows = None
        if _packed.calls == 0:
            return None
    else:
        width = max(len(p) + sum(len(c) for c in cs) for p, cs in chunk)
        ids, pos, mask, pred, targets, keys = _pack(chunk, width)
        hidden = base(
            input_ids=ids.to(device), attention_mask=mask.to(device), position_ids=pos.to(device), use_cache=False
        ).last_hidden_state
    picked = hidden.reshape(-1, hidden.shape[-1])[torch.tensor(pred, device=device)]
    return keys, _head_nll(head, picked, torch.tensor(targets, device=device))


def _bos(tok: Any) -> tuple[int, ...]:
    """Return the token that starts every prompt (the tokenizer's BOS, else its EOS), or none."""
    start = tok.bos_token_id if tok.bos_token_id is not None else tok.eos_token_id
    return (start,) if start is not None else ()


def _positions(model: Any) -> int | None:
    """Return how many positions ``model`` reads (its config's ``max_position_embeddings``), None if it says none."""
    found = getattr(model.config, "max_position_embeddings", None)
    return found if isinstance(found, int) else None


def _inverse(nll: float | None) -> float | None:
    return None if nll is None else 100.0 / max(nll, 1e-9)


@register_metric
class LikelihoodMetric(Metric):
    """``lm_likelihood`` (100/NLL of the response given the context), its unconditional twin, and the gain."""

    name = "likelihood"
    outputs = ("lm_likelihood", "lm_likelihood_uncond", "lm_context_gain")
    requires = needs("models", "torch", "transformers", "gguf")
    units: ClassVar[Mapping[str, str]] = {
        "lm_likelihood": "100 / NLL, higher = likelier", "lm_likelihood_uncond": "100 / NLL, higher = likelier",
        "lm_context_gain": "NLL gain from the context, nats per token",
    }
    Config = LikelihoodConfig
    batch_size: ClassVar[int] = 120
    #: Upper bound on padded tokens per forward pass (does not change the values).
    max_batch_tokens: ClassVar[int] = 1024
    config: LikelihoodConfig

    def _loaded(self) -> tuple[Any, Any, str]:
        """Return the model, its tokenizer and its fingerprint.

        Raises:
            InputError: The template's prompt with an empty context already fills the model's positions (every
                response would be cut to no token), or the tokenizer has no start token (BOS, else EOS).
        """
        from dialeval.models.loading import load_causal_lm

        loaded = load_causal_lm(self.config.model, self.config.device)
        model, tok, _ = loaded
        if not _bos(tok):
            raise InputError(f'the tokenizer of "{self.config.model}" has neither a BOS nor an EOS token: the '
                             "unconditional likelihood has no start token to predict the response's first token "
                             "from (use a model whose tokenizer has one)", field="model")  # fmt: skip
        size, limit = len(self._prompt(tok, _bos(tok), "")), _positions(model)
        if limit is not None and size >= limit:
            raise InputError(
                f"likelihood.template holds {size} tokens with an empty context (the start token included) and "
                f'"{self.config.model}" reads {limit} positions: no room for a response (shorten the template)',
                field="template",
            )
        return loaded

    def signature_extra(self) -> Mapping[str, Any]:
        """Model file hash and transformers version."""
        import transformers

        from dialeval.models.loading import fingerprint, resolve_lm_source

        sha = fingerprint(resolve_lm_source(self.config.model))
        return {"model_sha": sha, "transformers": transformers.__version__}

    def requests(self, items: Sequence[MetricInput]) -> tuple[list[Request], list[Request]]:
        """Return the token-id (prefix, continuation) pairs, conditional and unconditional."""
        model, tok, _ = self._loaded()
        bos = _bos(tok)
        cond = [self._read(tok, bos, _positions(model), item)[0] for item in items]
        return cond, [(bos, cont) for _, cont in cond]

    def _read(self, tok: Any, bos: tuple[int, ...], limit: int | None, item: MetricInput) -> tuple[Request, str, str]:
        """Return the item's (prompt, response) token ids, and what was cut of its context and of its response.

        The context is cut from its start to ``max_context_tokens`` and the response from its end to
        ``max_response_tokens``. Where the prompt and the response still hold more than the model's ``limit``
        positions, the context is cut further to fit, then the response.
        """
        cfg = self.config
        context, ctx_ids, resp_ids = self._token_ids(tok, item)
        keep = min(len(ctx_ids), cfg.max_context_tokens)
        prefix = self._prompt(tok, bos, context if keep == len(ctx_ids) else tok.decode(ctx_ids[-keep:]))
        cont = tuple(resp_ids[: cfg.max_response_tokens])
        said_ctx = f"context read to its last {keep} tokens (max_context_tokens)" if keep < len(ctx_ids) else ""
        said_resp = f"response read to its first {len(cont)} tokens (max_response_tokens)"
        said_resp = said_resp if len(cont) < len(resp_ids) else ""
        fit = f"to fit the model's {limit} positions with the prompt"
        while limit is not None and len(prefix) + len(cont) > limit and keep > 0:
            keep = max(0, keep - (len(prefix) + len(cont) - limit))  # a re-tokenized cut may take another round
            prefix = self._prompt(tok, bos, tok.decode(ctx_ids[-keep:]) if keep else "")
            said_ctx = f"context cut from its start {fit} and the response"
        if limit is not None and len(prefix) + len(cont) > limit:
            cont = cont[: max(0, limit - len(prefix))]
            said_resp = f"response cut from its end {fit}"
        return (prefix, cont), said_ctx, said_resp

    def _prompt(self, tok: Any, bos: tuple[int, ...], context: str) -> tuple[int, ...]:
        """Return the token ids of the prompt: the start token and the template holding ``context``."""
        return bos + tuple(tok(self.config.template.format(context=context), add_special_tokens=False).input_ids)

    def _token_ids(self, tok: Any, item: MetricInput) -> tuple[str, list[int], list[int]]:
        """Return the item's context (its last ``context_turns`` joined), its token ids and the response's, uncut."""
        cfg = self.config
        turns = item.context[-cfg.context_turns :] if cfg.context_turns > 0 else item.context
        context = cfg.turn_separator.join(t.text for t in turns)
        text = item.response.strip()
        resp_ids = list(tok(" " + text, add_special_tokens=False).input_ids) if text else []
        return context, list(tok(context, add_special_tokens=False).input_ids), resp_ids

    def cut(self, items: Sequence[MetricInput]) -> list[dict[str, str]]:
        """Say which outputs read a context or a response cut (to the parameters' limits or the model's positions).

        The unconditional likelihood reads no context: only a cut response is said of it.
        """
        model, tok, _ = self._loaded()
        bos, limit = _bos(tok), _positions(model)
        out = []
        for item in items:
            _, context, response = self._read(tok, bos, limit, item)
            both = "; ".join(s for s in (context, response) if s)
            out.append({k: v for k, v in (("lm_likelihood", both), ("lm_likelihood_uncond", response),
                                          ("lm_context_gain", both)) if v})  # fmt: skip
        return out

    def lacks(self, output: str, item: MetricInput) -> str | None:
        """Say so when the response is empty (no token to score).

        Example:
            >>> LikelihoodMetric().lacks("lm_likelihood", MetricInput(response=" "))
            'empty response'
        """
        return None if item.response.strip() else "empty response"

    def compute(self, items: Sequence[MetricInput]) -> MetricValues:
        """Score a batch; an empty response gets None (:meth:`lacks` says why)."""
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
