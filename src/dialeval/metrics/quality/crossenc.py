"""A multi-view cross-encoder: an encoder reads context and response together; three heads score three views.

The encoder (the packaged all-MiniLM-L6-v2 by default; the shipped views name all-mpnet-base-v2, whose
``<s>`` and ``</s>`` stand for ``[CLS]`` and ``[SEP]``) reads
``[CLS] turn-3 [SEP] turn-2 [SEP] turn-1 [SEP] response [SEP]``
(the last :data:`TURNS` context turns, cut from the oldest end to fit :data:`MAX_LEN`
tokens; the response keeps at most :data:`MAX_RESPONSE`), mean-pools the last layer,
and a linear layer gives one logit per view of :data:`VIEWS`:

* ``coherent``: the response is the true next turn of this context (against random,
  same-dialogue, adversarial, negated, truncated and repeated responses);
* ``fluent``: the response reads as people write it (against words dropped, shuffled, doubled);
* ``specific``: the response is not a generic reply that would fit any context.

The encoder is fine-tuned with a LoRA adapter (:mod:`dialeval.quality.crosstrain`), so what
ships is the adapter and the heads (a few MB), applied to the packaged base at load time
and merged into its weights for speed. A views folder whose ``heads.json`` names another base
than MiniLM (``encoder``: all-mpnet-base-v2, which reads no token types, as the shipped one does)
is rebuilt over that base.

Example:
    >>> assemble([[7, 8], [9]], [5, 6, 4], cls=101, sep=102, max_len=8, max_response=2)
    ([101, 8, 102, 9, 102, 5, 6, 102], [0, 0, 0, 0, 0, 1, 1, 1])
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

#: The views, in head order.
VIEWS = ("coherent", "fluent", "specific")
#: Context turns the encoder reads.
TURNS = 3
#: Longest input in tokens, and longest response.
MAX_LEN = 128
MAX_RESPONSE = 48


def assemble(
    turns: Sequence[Sequence[int]], response: Sequence[int], *,
    cls: int, sep: int, max_len: int = MAX_LEN, max_response: int = MAX_RESPONSE,
) -> tuple[list[int], list[int]]:
    """Return the input ids and token types of one pair (context cut from its oldest end).

    Args:
        turns: The token ids of the last context turns, oldest first.
        response: The response's token ids.
        cls: The ``[CLS]`` id.
        sep: The ``[SEP]`` id.
        max_len: Longest input; the context gets what the response leaves, plus one ``[SEP]`` per turn.
        max_response: Longest response.
    """
    resp = list(response[:max_response])
    ctx: list[int] = []
    for t in turns:
        ctx.extend([*t, sep])
    room = max_len - len(resp) - 2
    if len(ctx) > room:
        ctx = ctx[len(ctx) - room :]
    ids = [cls, *ctx, *resp, sep]
    types = [0] * (1 + len(ctx)) + [1] * (len(resp) + 1)
    return ids, types


class Tokens:
    """Tokenise texts once each (dialogues repeat their turns) and assemble pairs of at most ``max_len`` tokens."""

    def __init__(self, tokenizer: Any, max_len: int = MAX_LEN, max_response: int = MAX_RESPONSE) -> None:
        self.tokenizer = tokenizer
        self.cache: dict[str, list[int]] = {}
        self.cls = int(tokenizer.cls_token_id)
        self.sep = int(tokenizer.sep_token_id)
        self.max_len = max_len
        self.max_response = max_response

    def ids(self, texts: Sequence[str]) -> list[list[int]]:
        """Return the token ids of each text (no special tokens), tokenising the new ones in one call."""
        new = sorted({t for t in texts if t not in self.cache})
        if new:
            got = self.tokenizer(new, add_special_tokens=False, truncation=True, max_length=MAX_LEN)["input_ids"]
            self.cache.update(zip(new, got, strict=True))
        return [self.cache[t] for t in texts]

    def pairs(self, contexts: Sequence[Sequence[str]], responses: Sequence[str]) -> list[tuple[list[int], list[int]]]:
        """Return :func:`assemble` of every (context, response)."""
        flat = [t.strip() for c in contexts for t in c[-TURNS:]] + [r.strip() for r in responses]
        self.ids(flat)
        cut = {"cls": self.cls, "sep": self.sep, "max_len": self.max_len, "max_response": self.max_response}
        return [
            assemble(self.ids([t.strip() for t in c[-TURNS:]]), self.cache[r.strip()], **cut)
            for c, r in zip(contexts, responses, strict=True)
        ]


def collate(batch: Sequence[tuple[list[int], list[int]]], pad: int = 0) -> tuple[Any, Any, Any]:
    """Return padded ``(input_ids, attention_mask, token_type_ids)`` tensors of a batch."""
    import torch

    width = max(len(ids) for ids, _ in batch)
    ids = torch.full((len(batch), width), pad, dtype=torch.long)
    mask = torch.zeros((len(batch), width), dtype=torch.long)
    types = torch.zeros((len(batch), width), dtype=torch.long)
    for n, (i, t) in enumerate(batch):
        ids[n, : len(i)] = torch.tensor(i)
        mask[n, : len(i)] = 1
        types[n, : len(t)] = torch.tensor(t)
    return ids, mask, types


def build_model(encoder_dir: str, n_views: int = len(VIEWS), layers: int | None = None) -> Any:
    """Return the packaged encoder with a linear view head on its mean-pooled last layer (a ``torch.nn.Module``).

    Args:
        encoder_dir: The encoder's folder (a BERT-style one reads token types; an MPNet one does not).
        n_views: Logits the head gives.
        layers: Keep only the encoder's first ``layers`` transformer layers (None: all).
    """
    import inspect

    import torch
    from transformers import AutoModel

    class ViewModel(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.encoder = AutoModel.from_pretrained(encoder_dir, dtype=torch.float32)
            if layers is not None:
                self.encoder.encoder.layer = self.encoder.encoder.layer[:layers]
                self.encoder.config.num_hidden_layers = layers
            self.heads = torch.nn.Linear(self.encoder.config.hidden_size, n_views)
            #: Whether the encoder reads token types (BERT does; MPNet has none, and ``types`` is then unused).
            self.typed = "token_type_ids" in inspect.signature(self.encoder.forward).parameters

        def forward(self, ids: Any, mask: Any, types: Any) -> Any:
            extra = {"token_type_ids": types} if self.typed else {}
            h = self.encoder(input_ids=ids, attention_mask=mask, **extra).last_hidden_state
            m = mask.unsqueeze(-1).to(h.dtype)
            return self.heads((h * m).sum(1) / m.sum(1).clamp(min=1.0))

    return ViewModel()


def score_batches(
    model: Any, pairs: Sequence[tuple[list[int], list[int]]], max_tokens: int = 2048
) -> list[list[float]]:
    """Return the view logits of every pair, in :func:`length_batches` of ``max_tokens`` (least padding), in order."""
    import torch

    from dialeval.metrics.quality.features import length_batches

    out: list[list[float]] = [[] for _ in pairs]
    device = next(model.parameters()).device  # an OrtViews says cpu
    with torch.inference_mode():
        for idx in length_batches([len(ids) for ids, _ in pairs], max_tokens, max_items=max(64, max_tokens // 32)):
            logits = model(*(t.to(device) for t in collate([pairs[i] for i in idx]))).float().tolist()
            for i, row in zip(idx, logits, strict=True):
                out[i] = row
    return out


def round_to_fp16(model: Any) -> None:
    """Round every weight of ``model`` to the nearest fp16 value, in place (kept in its fp32 tensors).

    A LoRA adapter trained over an fp16-rounded base (``dialeval quality train-encoder --base-fp16``)
    is merged into the base rounded the same way, in training and at load time alike.
    """
    import torch

    with torch.no_grad():
        for param in model.parameters():
            param.copy_(param.to(torch.float16).to(torch.float32))


def merge_adapter(encoder: Any, adapter: dict[str, Any], scale: float) -> int:
    """Add each LoRA pair's ``B @ A * scale`` to the base weight it adapts; return how many weights changed.

    Adapter keys are peft's (``...encoder.layer.0.attention.self.query.lora_A.default.weight``);
    the weight they adapt is found by its module path in ``encoder`` (a plain transformers model).
    Merging by hand keeps ``peft`` a training-time dependency only.
    """
    import torch

    params = dict(encoder.named_parameters())
    merged = 0
    for key, a in adapter.items():
        if ".lora_A." not in key:
            continue
        module = key.split(".lora_A.")[0].split("base_model.model.", 1)[-1]
        b = adapter[key.replace(".lora_A.", ".lora_B.")]
        weight = params.get(f"{module}.weight")
        if weight is None:
            raise KeyError(f"the adapter names {module}, which the encoder lacks")
        with torch.no_grad():
            weight += (b.float() @ a.float()) * scale
        merged += 1
    return merged


def views_base(head: dict[str, Any]) -> Path | None:
    """Return the folder of the base encoder a views ``heads.json`` names (``encoder``); None when it names none.

    Example:
        >>> views_base({"views": ["coherent"]}) is None
        True
    """
    from dialeval.models.loading import resolve_encoder_dir

    return resolve_encoder_dir(str(head["encoder"])) if head.get("encoder") else None


def head_numbers(head: Any, path: Path) -> tuple[Any, Any, float]:
    """Return a views ``heads.json``'s ``(weight, bias, LoRA scale)``, checked as the quality heads are.

    Raises:
        InputError: It is not an object, ``views`` not a list of names, ``layers``, ``max_len`` or ``max_response``
            not a whole number above 0, ``weight`` not one row per view or ``bias`` one number per view, a number
            not finite (each would make every view NaN), or ``lora_alpha`` not a finite number or ``lora_r`` one
            above 0.
    """
    import numpy as np

    from dialeval.errors import InputError

    if not isinstance(head, dict):
        raise InputError(f"must be a JSON object, got a {type(head).__name__}", path=path)
    if not isinstance(head.get("views"), list) or not all(isinstance(v, str) for v in head["views"]):
        raise InputError(f"must be a list of view names, got {head.get('views')!r}", path=path, field="views")
    for key in ("layers", "max_len", "max_response"):  # optional shape
        value = head.get(key, 1)
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise InputError(f"must be a whole number above 0, got {value!r}", path=path, field=key)
    n, out = len(head["views"]), []
    for key, dims, need in (("weight", 2, f"one row per view ({n} rows)"), ("bias", 1, f"one number per view ({n})")):
        if key not in head:
            raise InputError("not a views head: missing", path=path, field=key)
        try:
            values = np.asarray(head[key], dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise InputError(f"not a views head: {exc}", path=path, field=key) from None
        if values.ndim != dims or len(values) != n:
            got = len(values) if values.ndim == dims else f"{values.ndim} dimension{'s' * (values.ndim != 1)}"
            raise InputError(f"must be {need}, got {got}", path=path, field=key)
        if (bad := ~np.isfinite(values)).any():
            at = np.argwhere(bad)[0]
            raise InputError(f"must be finite numbers, got {values[tuple(at)]} at index {', '.join(map(str, at))}",
                             path=path, field=key)  # fmt: skip
        out.append(values)
    return out[0], out[1], lora_scale(head, path)


def lora_scale(config: dict[str, Any], path: Path, prefix: str = "") -> float:
    """Return a training card's LoRA scale, ``lora_alpha / lora_r``, each checked (``prefix``: their fields' place).

    ``lora_r`` 0 was a ZeroDivisionError, ``lora_alpha`` "x" a ValueError, out of the run.

    Example:
        >>> lora_scale({"lora_alpha": 32, "lora_r": 16}, Path("heads.json"))
        2.0
        >>> lora_scale({"lora_alpha": 32, "lora_r": 0}, Path("heads.json"))
        Traceback (most recent call last):
        ...
        dialeval.errors.InputError: heads.json: field "lora_r": must be a number above 0, got 0
    """
    import math

    from dialeval.errors import InputError

    for key in ("lora_alpha", "lora_r"):
        value = config.get(key)
        if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) \
                or (key == "lora_r" and value <= 0):  # fmt: skip
            need = "a number above 0" if key == "lora_r" else "a finite number"
            raise InputError(f"must be {need}, got {value!r}", path=path, field=prefix + key)
    return float(config["lora_alpha"]) / float(config["lora_r"])


def load_views(folder: str, encoder_dir: str, device: str = "cpu") -> tuple[Any, Any, dict[str, Any]]:
    """Return ``(model, Tokens, heads.json)`` of a trained views folder, the adapter merged into the encoder.

    ``heads.json`` may name ``layers``, ``max_len`` and ``max_response`` (a shallower, shorter
    encoder than the defaults: all layers, :data:`MAX_LEN`, :data:`MAX_RESPONSE`), and ``encoder``
    (a base other than ``encoder_dir``, e.g. ``all-mpnet-base-v2``) with ``base_fp16`` (the base
    rounded to fp16 first, as in training).

    Raises:
        InputError: The folder lacks ``adapter.safetensors`` or ``heads.json``, or they do not fit the encoder.
    """
    import json
    import re

    import torch
    from safetensors import SafetensorError
    from safetensors.torch import load_file
    from transformers import AutoTokenizer

    from dialeval.errors import InputError
    from dialeval.models.loading import check_vocabulary, loading, set_offline

    set_offline()  # no hub request, and no "Loading weights" bar under dialeval's own progress
    root = Path(folder)
    if not root.is_dir():
        raise InputError("not found: give a trained views folder (dialeval quality train-views writes one)", path=root)
    lacking = [f for f in ("heads.json", "adapter.safetensors") if not (root / f).is_file()]
    if lacking:  # it said "([Errno 2] No such file or directory: '.../heads.json')"
        raise InputError(f"not a trained views folder: it lacks {' and '.join(lacking)}", path=root)
    try:
        head = json.loads((root / "heads.json").read_text(encoding="utf-8"))
        adapter = load_file(str(root / "adapter.safetensors"))
    except (OSError, ValueError, SafetensorError) as exc:  # SafetensorError: a cut-off adapter
        raise InputError(f"not a trained views folder ({exc})", path=root) from None
    weight, bias, scale = head_numbers(head, root / "heads.json")
    own_base = views_base(head)
    base = str(own_base or encoder_dir)
    named_by = "encoder" if own_base is None else "views"  # the parameter that chose it
    with loading(base, "the views' transformers encoder", named_by):  # an empty folder was transformers' traceback
        model = build_model(base, len(head["views"]), head.get("layers"))
        tok = AutoTokenizer.from_pretrained(base)
    check_vocabulary(Path(base), base, named_by)
    if head.get("base_fp16"):
        round_to_fp16(model.encoder)
    try:
        n = merge_adapter(model.encoder, adapter, scale)
    except KeyError as exc:
        raise InputError(str(exc.args[0]), path=root / "adapter.safetensors") from None
    if n == 0:
        raise InputError("the adapter holds no LoRA weights", path=root / "adapter.safetensors")
    adapted = {int(m.group(1)) for key in adapter if (m := re.search(r"\.layer\.(\d+)\.", key))}
    depth = len(model.encoder.encoder.layer)
    if adapted != set(range(depth)):  # a deeper encoder than the adapter's would run its top layers unadapted
        raise InputError(f"the adapter adapts {len(adapted)} layers, the encoder has {depth}: heads.json must name "
                         f"the depth it was trained at (\"layers\")", path=root / "heads.json")  # fmt: skip
    if weight.shape != (rows := tuple(model.heads.weight.shape)):  # copy_ broadcast one number a row to the width
        raise InputError(f"must be {rows[0]} rows of {rows[1]} numbers (the encoder's width), got {weight.shape[0]} "
                         f"rows of {weight.shape[1]}", path=root / "heads.json", field="weight")  # fmt: skip
    with torch.no_grad():
        model.heads.weight.copy_(torch.from_numpy(weight))
        model.heads.bias.copy_(torch.from_numpy(bias))
    model.eval().to(device)
    tokens = Tokens(tok, int(head.get("max_len", MAX_LEN)), int(head.get("max_response", MAX_RESPONSE)))
    return model, tokens, head
