"""Contrastive fine-tuning of the sentence encoder (issue 19, candidate (a)): ``dialeval quality train-encoder OUT``.

The true pairs of a recipe's draw (:data:`~dialeval.quality.recipes.RECIPES`, ``all-hard`` by default:
every allowed corpus), train part only (:func:`~dialeval.quality.recipes.is_validation`, the split
the heads use), teach the encoder that a context's true next turn is nearer to it than

* every other response in the batch (in-batch negatives: other dialogues, and other places of the same one),
* one of the pair's hard negatives per step (``negatives_per_pair``, drawn by the step's seed) among
  :func:`~dialeval.quality.build.sensible_examples`' with ``every_hard`` (DailyDialog++'s adversarial
  responses; the stress perturbations negation, truncation, repetition) and the speaker's own earlier
  turn (``own-turn``),
* a few generic replies shared by the batch (``generic``; not against a generic true turn),

and that the response is nearer to its context than to another pair's or to its own shuffled
(``shuffled-context``, ``shuffled_per_batch`` pairs a step).
Both anchors the heads read are trained: the last 3 turns joined (``w``) and the last turn (``u``).
Loss: cross-entropy over ``scale * cosine`` (sentence-transformers' MultipleNegativesRankingLoss, written
out so that hard negatives and masks are explicit). The encoder (``encoder``: the packaged MiniLM by
default, all-mpnet-base-v2 or a sentence-transformers folder) gets a LoRA adapter (``peft``) on the
layers ``lora_targets`` names: by default ``query``, ``key``, ``value`` and ``dense`` (every linear
layer of MiniLM; only the feed-forward ones and the pooler of mpnet, whose attention is ``q``,
``k``, ``v``, ``o``: ``--lora-targets query,key,value,dense,q,k,v,o`` reaches both); mean
pooling and unit length as the packaged models do. ``base_fp16`` rounds the base
weights to fp16 before training (how mpnet's 438 MB travel to a lent GPU in 64 MB parts); a rebuild
applies the same rounding, so the adapter always meets the base it was trained on.

The run folder holds ``checkpoint.pt`` (a rerun resumes), ``model/`` (a sentence-transformers folder,
adapter merged: ``dialeval quality train --encoder OUT/model`` trains heads over it), ``adapter.safetensors``
(fp16, what would ship) and ``card.json`` (data hashes, config, the held-in AUC per kind along the run).
The exported step is the one with the best held-in mean AUC, never a rated figure. ``model/`` is the
base merged with the fp16 adapter as saved, so ``--rebuild`` (the card and the adapter alone, no
training) writes the same weights, bit for bit on one machine; on another the merge's small
matrix product (``B @ A``) may round its last bit otherwise.

Example:
    >>> BiConfig().lr, BiConfig().scale
    (0.0002, 20.0)
"""

from __future__ import annotations

import argparse
import json
import random
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dialeval.quality.crosstrain import LORA_TARGETS

#: Kinds of hard negative that replace the response (the rest of :mod:`dialeval.quality.build`'s change the context).
RESPONSE_KINDS = ("adversarial", "negation", "truncation", "repetition", "own-turn")
#: Save a checkpoint and measure the held-in pairs this often.
CHECKPOINT_EVERY = 200


@dataclass(frozen=True)
class BiConfig:
    """Everything a run depends on (stored in the card)."""

    recipe: str = "all-hard"
    seed: int = 0
    batch_size: int = 32
    lr: float = 2e-4
    warmup: int = 100
    steps: int = 650
    lora_r: int = 16
    lora_alpha: int = 32
    scale: float = 20.0
    generic_per_batch: int = 4
    negatives_per_pair: int = 1
    shuffled_per_batch: int = 8
    max_context: int = 128
    max_response: int = 64
    val_pairs: int = 600
    bf16: bool = False
    encoder: str = "all-minilm-l6-v2"
    base_fp16: bool = False
    lora_targets: tuple[str, ...] = LORA_TARGETS


@dataclass(frozen=True)
class Triple:
    """A true pair, its response-side hard negatives and its shuffled context (if any)."""

    group: str
    context: tuple[str, ...]
    response: str
    negatives: tuple[tuple[str, str], ...] = field(default=())  # (kind, text)
    shuffled: tuple[str, ...] | None = None


def triples(pairs: Sequence[Any], seed: int) -> list[Triple]:
    """Return one :class:`Triple` per pair, its negatives from the recipe's every-hard examples and the own turn.

    Example:
        >>> from dialeval.quality.corpora import Pair
        >>> t = triples([Pair("s", "1", ("hi there", "hello, how are you?", "fine. and you?"), "good, thanks")], 0)[0]
        >>> ("own-turn", "hello, how are you?") in t.negatives
        True
    """
    from dialeval.quality.build import sensible_examples

    out: list[Triple] = []
    examples = sensible_examples(pairs, seed, every_hard=True)
    groups: list[list[Any]] = []
    for e in examples:  # each pair's examples start with its positive
        if e.label == 1:
            groups.append([])
        groups[-1].append(e)
    for pair, group in zip(pairs, groups, strict=True):
        negs = [(e.kind, e.response) for e in group if e.kind in RESPONSE_KINDS and e.response != pair.response]
        if len(pair.context) >= 2 and pair.context[-2].strip() and pair.context[-2] != pair.response:
            negs.append(("own-turn", pair.context[-2]))
        shuffled = next((e.context for e in group if e.kind == "shuffled-context"), None)
        out.append(Triple(group[0].group, pair.context, pair.response, tuple(negs), shuffled))
    return out


def _model(cfg: BiConfig) -> tuple[Any, Any]:
    import torch
    from transformers import AutoModel, AutoTokenizer

    from dialeval.metrics.quality.crossenc import round_to_fp16
    from dialeval.models.loading import resolve_encoder_dir
    from dialeval.quality.crosstrain import add_lora

    torch.manual_seed(cfg.seed)
    enc_dir = str(resolve_encoder_dir(cfg.encoder))
    base = AutoModel.from_pretrained(enc_dir, dtype=torch.float32)
    if cfg.base_fp16:
        round_to_fp16(base)
    model = add_lora(base, cfg.lora_r, cfg.lora_alpha, cfg.lora_targets)
    return model, AutoTokenizer.from_pretrained(enc_dir)


def encode(model: Any, tokenizer: Any, texts: Sequence[str], max_len: int) -> Any:
    """Return unit-length mean-pooled embeddings of ``texts`` (a torch tensor, one row each)."""
    import torch

    batch = tokenizer(list(texts), padding=True, truncation=True, max_length=max_len, return_tensors="pt")
    device = next(model.parameters()).device
    hidden = model(input_ids=batch["input_ids"].to(device), attention_mask=batch["attention_mask"].to(device))
    hidden = hidden.last_hidden_state
    mask = batch["attention_mask"].to(device).unsqueeze(-1).to(hidden.dtype)
    pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
    return torch.nn.functional.normalize(pooled.float(), dim=-1)


def batch_loss(model: Any, tokenizer: Any, batch: Sequence[Triple], generic: Sequence[str], cfg: BiConfig,
               rng: random.Random) -> Any:  # fmt: skip
    """Return the mean of the three contrastive losses (anchors ``w`` and ``u``; response to context) of a batch.

    Each pair brings ``negatives_per_pair`` of its hard negatives (drawn by ``rng``); the first
    ``shuffled_per_batch`` pairs with a shuffled context bring it.
    """
    import torch

    from dialeval.metrics.quality.features import context_window

    n = len(batch)
    negs = [(i, text) for i, t in enumerate(batch)
            for _, text in rng.sample(t.negatives, min(cfg.negatives_per_pair, len(t.negatives)))]  # fmt: skip
    shuffled = [(i, context_window(t.shuffled)) for i, t in enumerate(batch) if t.shuffled is not None]
    shuffled = shuffled[: cfg.shuffled_per_batch]
    windows = encode(model, tokenizer, [context_window(t.context) for t in batch] + [s for _, s in shuffled],
                     cfg.max_context)  # fmt: skip
    lasts = encode(model, tokenizer, [t.context[-1].strip() for t in batch], cfg.max_context)
    cands = encode(model, tokenizer, [t.response for t in batch] + [x for _, x in negs] + list(generic),
                   cfg.max_response)  # fmt: skip
    mask = candidate_mask(batch, [owner for owner, _ in negs], [x for _, x in negs], len(generic)).to(cands.device)
    target = torch.arange(n, device=cands.device)
    losses = [torch.nn.functional.cross_entropy((cfg.scale * anchor @ cands.T).masked_fill(mask, float("-inf")), target)
              for anchor in (windows[:n], lasts)]  # fmt: skip
    # the response against every context of the batch and its own context shuffled
    logits = cfg.scale * cands[:n] @ windows.T
    cmask = context_mask(batch, [owner for owner, _ in shuffled]).to(cands.device)
    losses.append(torch.nn.functional.cross_entropy(logits.masked_fill(cmask, float("-inf")), target))
    return sum(losses) / 3


def candidate_mask(batch: Sequence[Triple], owners: Sequence[int], negatives: Sequence[str], n_generic: int) -> Any:
    """Return which candidates each anchor may not see (True), one row per pair of ``batch``.

    Columns: the batch's responses, then ``negatives`` (each owned by the pair ``owners`` names), then
    ``n_generic`` generic replies. A candidate with the anchor's true response as its text is masked
    (it is not a negative then); a hard negative counts only for its own pair; generic replies count
    for every pair whose true turn is not generic.

    Example:
        >>> batch = [Triple("a", ("hi",), "ok"), Triple("b", ("yo",), "I ride horses.")]
        >>> candidate_mask(batch, [1], ["I ride cows."], 1).int().tolist()
        [[0, 0, 1, 1], [0, 0, 0, 0]]
    """
    import torch

    from dialeval.quality.crosstrain import is_generic

    n = len(batch)
    texts = [t.response for t in batch] + list(negatives)
    mask = torch.zeros(n, len(texts) + n_generic, dtype=torch.bool)
    for i, t in enumerate(batch):
        for j, x in enumerate(texts):
            if j != i and x == t.response:
                mask[i, j] = True
        for j, owner in enumerate(owners):
            if owner != i:
                mask[i, n + j] = True
        if is_generic(t.response):
            mask[i, len(texts) :] = True
    return mask


def context_mask(batch: Sequence[Triple], owners: Sequence[int]) -> Any:
    """Return which contexts each response may not see (True): the batch's windows, then shuffled ones of ``owners``.

    A shuffled window counts only for its own pair; another pair's window equal to the true one is masked.

    Example:
        >>> batch = [Triple("a", ("hi",), "ok"), Triple("b", ("hi",), "hello")]
        >>> context_mask(batch, [0]).int().tolist()
        [[0, 1, 0], [1, 0, 1]]
    """
    import torch

    from dialeval.metrics.quality.features import context_window

    n = len(batch)
    mask = torch.zeros(n, n + len(owners), dtype=torch.bool)
    for k, owner in enumerate(owners):
        mask[:, n + k] = True
        mask[owner, n + k] = False
    for i, t in enumerate(batch):
        for j, u in enumerate(batch):
            if j != i and context_window(u.context) == context_window(t.context):
                mask[i, j] = True
    return mask


def evaluate(model: Any, tokenizer: Any, val: Sequence[Triple], cfg: BiConfig) -> dict[str, Any]:
    """Return the held-in AUC of ``cos(w, v)`` per kind of negative (``random``: another dialogue's response)."""
    import numpy as np
    import torch

    from dialeval.metrics.quality.features import context_window
    from dialeval.metrics.quality.heads import auc
    from dialeval.quality.crosstrain import GENERIC

    rng = random.Random(cfg.seed + 7)
    rows: list[tuple[str, str, str]] = []  # (kind, window, response)
    for i, t in enumerate(val):
        w = context_window(t.context)
        rows.append(("true", w, t.response))
        other = val[(i + 1 + rng.randrange(len(val) - 1)) % len(val)] if len(val) > 1 else t
        if other.group != t.group:
            rows.append(("random", w, other.response))
        rows.extend((kind, w, text) for kind, text in t.negatives)
        rows.append(("generic", w, GENERIC[rng.randrange(len(GENERIC))]))
        if t.shuffled is not None:
            rows.append(("shuffled-context", context_window(t.shuffled), t.response))
    was = model.training
    model.eval()
    table: dict[str, Any] = {}
    with torch.no_grad():
        for texts, max_len in ((sorted({r[1] for r in rows}), cfg.max_context),
                               (sorted({r[2] for r in rows}), cfg.max_response)):  # fmt: skip
            for start in range(0, len(texts), 64):
                part = texts[start : start + 64]
                vecs = encode(model, tokenizer, part, max_len).cpu().numpy()
                table.update((x, v) for x, v in zip(part, vecs, strict=True))
    model.train(was)
    score = np.asarray([float(table[w] @ table[r]) for _, w, r in rows])
    kinds = [k for k, _, _ in rows]
    out: dict[str, float] = {}
    for kind in sorted(set(kinds) - {"true"}):
        sel = np.asarray([k in (kind, "true") for k in kinds])
        out[kind] = round(auc(score[sel], [int(k == "true") for k, s in zip(kinds, sel, strict=True) if s]), 4)
    return {"auc": out, "mean_auc": round(float(np.mean(list(out.values()))), 4)}


def order(n: int, steps: int, batch_size: int, seed: int) -> list[int]:
    """Return the pair index of every slot of every planned step: one seeded shuffle per epoch.

    Example:
        >>> sorted(order(4, 2, 2, 0)) == [0, 1, 2, 3]
        True
    """
    out: list[int] = []
    epoch = 0
    while len(out) < steps * batch_size:
        idx = list(range(n))
        random.Random(seed * 1000 + epoch).shuffle(idx)
        out.extend(idx)
        epoch += 1
    return out[: steps * batch_size]


def split(cfg: BiConfig, data_dir: Path) -> tuple[list[Triple], list[Triple], int]:
    """Return the train triples, at most ``val_pairs`` held-in ones (the heads' split) and the number of pairs."""
    from dialeval.quality.recipes import RECIPES, draw_pairs, is_validation

    recipe = RECIPES[cfg.recipe]
    pairs = draw_pairs(recipe, data_dir)
    all_t = triples(pairs, recipe.seed)
    train = [t for t in all_t if not is_validation(t.group, recipe.seed, recipe.val_share)]
    val = [t for t in all_t if is_validation(t.group, recipe.seed, recipe.val_share)]
    random.Random(cfg.seed + 3).shuffle(val)
    return train, val[: cfg.val_pairs], len(pairs)


def train(out: Path, data_dir: Path, cfg: BiConfig, minutes: float | None = None,
          stop_at: int | None = None, device: str = "cpu") -> dict[str, Any]:  # fmt: skip
    """Train (resuming from ``out/checkpoint.pt``) on ``device``, export the best checkpoint and write the card."""
    import torch

    from dialeval.quality.crosstrain import GENERIC, resume, run_config, run_steps, schedule

    t0 = time.perf_counter()
    model, tokenizer = _model(cfg)  # first: a bad --lora-targets fails before the data is read or OUT is made
    out.mkdir(parents=True, exist_ok=True)
    train_t, val_t, n_pairs = split(cfg, data_dir)
    model.to(device)
    trainable = {n for n, p in model.named_parameters() if p.requires_grad}
    opt = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=cfg.lr, weight_decay=0.01)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: schedule(s, cfg.warmup, cfg.steps))
    ckpt = out / "checkpoint.pt"
    state = resume(ckpt, model, opt, sched, device)
    if state is None:
        state = {"step": 0, "curve": [], "best": None, "seconds": 0.0, "config": run_config(cfg)}
        state["before"] = evaluate(model, tokenizer, val_t, cfg)
        print(json.dumps({"step": 0, **state["before"]}), flush=True)
    slots = order(len(train_t), cfg.steps, cfg.batch_size, cfg.seed)
    model.train()

    def loss_at(step: int) -> Any:
        batch = [train_t[i] for i in slots[step * cfg.batch_size : (step + 1) * cfg.batch_size]]
        rng = random.Random(cfg.seed * 1_000_003 + step)
        generic = rng.sample(GENERIC, cfg.generic_per_batch)
        with torch.autocast(device.split(":")[0], dtype=torch.bfloat16, enabled=cfg.bf16):
            return batch_loss(model, tokenizer, batch, generic, cfg, rng)

    run_steps(model, opt, sched, state, ckpt=ckpt, last=cfg.steps if stop_at is None else min(stop_at, cfg.steps),
              every=CHECKPOINT_EVERY, started=t0, minutes=minutes, loss_at=loss_at,
              measure=lambda: evaluate(model, tokenizer, val_t, cfg),
              on_best=lambda: export(model, trainable, out, cfg), keep=lambda n: n in trainable,
              show=lambda row: row)  # fmt: skip
    return write_card(out, data_dir, cfg, state, n_pairs, train_t, val_t, device)


def export(model: Any, trainable: set[str], out: Path, cfg: BiConfig) -> None:
    """Write ``out/adapter.safetensors`` (fp16 LoRA weights) and ``out/model`` (the base with that adapter merged)."""
    import copy

    import torch
    from safetensors.torch import save_file
    from sentence_transformers import SentenceTransformer

    from dialeval.models.loading import resolve_encoder_dir

    sd = model.state_dict()
    adapter = {n: sd[n].detach().to(torch.float16).cpu().contiguous() for n in sorted(trainable)}
    save_file(adapter, str(out / "adapter.safetensors"))
    merged = copy.deepcopy(model).cpu()
    merged.load_state_dict({n: w.to(torch.float32) for n, w in adapter.items()}, strict=False)
    merged = merged.merge_and_unload()
    st = SentenceTransformer(str(resolve_encoder_dir(cfg.encoder)), device="cpu")
    transformer: Any = st[0]
    transformer.auto_model.load_state_dict(merged.state_dict())
    tmp = out / "model.tmp"
    st.save(str(tmp))
    if (out / "model").exists():
        import shutil

        shutil.rmtree(out / "model")
    tmp.replace(out / "model")


def write_card(out: Path, data_dir: Path, cfg: BiConfig, state: dict[str, Any], n_pairs: int,
               train_t: Sequence[Triple], val_t: Sequence[Triple], device: str = "cpu") -> dict[str, Any]:  # fmt: skip
    """Write ``out/card.json``: data hashes, config, counts, the held-in AUC curve and the exported step."""
    from dialeval.data._common import sha256_file
    from dialeval.models.loading import encoder_card
    from dialeval.quality.crosstrain import run_config
    from dialeval.quality.recipes import RECIPES, data_files, machine

    kinds: dict[str, int] = {}
    for t in train_t:
        for k, _ in t.negatives:
            kinds[k] = kinds.get(k, 0) + 1
    kinds["shuffled-context"] = sum(t.shuffled is not None for t in train_t)
    card = {
        "what": f"{cfg.encoder} + LoRA, contrastive (in-batch, hard, generic and shuffled-context "
                "negatives), anchors: last 3 turns and last turn",
        "config": run_config(cfg), "true_pairs": n_pairs,
        "triples": {"train": len(train_t), "validation": len(val_t), "hard_negatives": dict(sorted(kinds.items()))},
        "data_files": data_files(data_dir, RECIPES[cfg.recipe].sources),
        "encoder": encoder_card(cfg.encoder),
        "steps_done": state["step"], "seconds": round(state["seconds"], 1), "machine": machine(device),
        "before": state.get("before"), "chosen": state["best"], "curve": state["curve"],
        "files": {"adapter.safetensors": sha256_file(out / "adapter.safetensors")},
    }
    (out / "card.json").write_text(json.dumps(card, indent=1) + "\n", encoding="utf-8")
    return card


def _run_files(folder: Path, verb: str, field: str = "") -> tuple[Path, Path]:
    """Return a run folder's ``card.json`` and ``adapter.safetensors``, refusing a folder without either.

    Raises:
        InputError: ``no card.json to {verb} from`` (or the adapter), naming the folder and ``field`` (default: verb).
    """
    from dialeval.errors import InputError

    card_path, adapter_path = folder / "card.json", folder / "adapter.safetensors"
    for path in (card_path, adapter_path):
        if not path.exists():
            raise InputError(f"no {path.name} to {verb} from", path=folder, field=field or verb)
    return card_path, adapter_path


def rebuild(out: Path) -> Path:
    """Write ``out/model`` from ``out/card.json`` and ``out/adapter.safetensors`` alone (no data, no training).

    The base is the card's encoder (rounded to fp16 where its config says ``base_fp16``); the
    adapter is merged as :func:`export` merges it, so the folder's weights equal the trained run's.

    Raises:
        InputError: No card or no adapter in ``out``, or an adapter that does not fit the card's config.
    """
    from safetensors.torch import load_file

    from dialeval.errors import InputError

    card_path, adapter_path = _run_files(out, "rebuild")
    config = json.loads(card_path.read_text(encoding="utf-8"))["config"]
    cfg = BiConfig(**{**config, "lora_targets": tuple(config.get("lora_targets", BiConfig.lora_targets))})
    model, _ = _model(cfg)
    adapter = load_file(str(adapter_path))
    shapes = {n: tuple(p.shape) for n, p in model.named_parameters() if p.requires_grad}
    trainable = set(shapes)
    if {n: tuple(w.shape) for n, w in adapter.items()} != shapes:
        raise InputError(f"the adapter's {len(adapter)} tensors are not the {len(trainable)} LoRA weights of "
                         f"{cfg.encoder} at rank {cfg.lora_r}", path=adapter_path, field="adapter")  # fmt: skip
    model.load_state_dict(adapter, strict=False)
    export(model, trainable, out, cfg)
    return out / "model"


def interpolate(source: Path, out: Path, weight: float) -> Path:
    """Write ``out`` as ``source``'s run with its adapter's update scaled by ``weight``, then rebuild ``out/model``.

    A weight-space interpolation between the base and the tuned encoder (WiSE-FT, Wortsman et al.
    2022): every adapted weight becomes ``W0 + weight * (W1 - W0)``, done by scaling each LoRA
    ``B`` matrix, so the metric's own merge at load time gives the interpolated encoder. The card
    is ``source``'s, with ``interpolation`` (the weight and the source adapter's sha256) added.

    Example:
        >>> interpolate(Path("run"), Path("half"), 1.5)
        Traceback (most recent call last):
        dialeval.errors.InputError: field "--weight": 1.5 is not in (0, 1]

    Raises:
        InputError: ``weight`` outside (0, 1], or no card or adapter in ``source``.
    """
    from safetensors.torch import load_file, save_file

    from dialeval.data._common import sha256_file
    from dialeval.errors import InputError

    if not 0.0 < weight <= 1.0:
        raise InputError(f"{weight} is not in (0, 1]", field="--weight")
    card_path, adapter_path = _run_files(source, "interpolate", field="--interpolate")
    adapter = load_file(str(adapter_path))
    scaled = {k: (v.float() * weight).to(v.dtype) if ".lora_B." in k else v for k, v in adapter.items()}
    out.mkdir(parents=True, exist_ok=True)
    save_file(scaled, str(out / "adapter.safetensors"))
    card = json.loads(card_path.read_text(encoding="utf-8"))
    card["interpolation"] = {"weight": weight, "source_adapter_sha256": sha256_file(adapter_path),
                             "what": "every LoRA B matrix times the weight: W0 + weight * (W1 - W0)"}  # fmt: skip
    card["files"] = {"adapter.safetensors": sha256_file(out / "adapter.safetensors")}
    (out / "card.json").write_text(json.dumps(card, indent=1) + "\n", encoding="utf-8")
    return rebuild(out)


def main(argv: Sequence[str] | None = None, prog: str = "python -m dialeval.quality.bitrain") -> None:
    """Command line: ``OUT [--steps N] [--encoder E] [--device D] [--seed S] ... | OUT --rebuild``."""
    import torch

    from dialeval.errors import InputError
    from dialeval.paths import shared_data_dir
    from dialeval.quality.argtypes import SEED, THREADS, count, folder, positive, share
    from dialeval.quality.crosstrain import add_base_options, base_options, check_device, check_resumable
    from dialeval.quality.recipes import RECIPES

    ap = argparse.ArgumentParser(prog=prog)
    ap.add_argument("out", type=folder, help="run folder: checkpoint.pt, card.json, adapter.safetensors, model/")
    ap.add_argument("--steps", type=count(1), default=BiConfig.steps, help=f"planned steps (default {BiConfig.steps})")
    ap.add_argument("--minutes", type=positive, default=None, help="stop (and export the best checkpoint) after this")
    ap.add_argument("--stop-at", type=count(1), default=None, help="stop after this step (the schedule stays --steps)")
    ap.add_argument("--seed", type=SEED, default=0, help="seed of the batch order and the model (default 0)")
    ap.add_argument("--lr", type=positive, default=BiConfig.lr, help=f"LoRA learning rate (default {BiConfig.lr})")
    ap.add_argument("--batch-size", type=count(1), default=BiConfig.batch_size, help="true pairs per step (default 32)")
    ap.add_argument("--recipe", default=BiConfig.recipe, help=f"pairs of this recipe (default {BiConfig.recipe})")
    ap.add_argument("--threads", type=THREADS, default=2, help="torch threads (default 2)")
    ap.add_argument("--bf16", action="store_true", help="training steps under bfloat16 autocast (figures fp32)")
    add_base_options(ap)
    ap.add_argument("--device", default="cpu", help="where the training steps run: cpu (default) or cuda")
    ap.add_argument("--interpolate", type=Path, default=None, metavar="RUN",
                    help="only write OUT as RUN's adapter scaled by --weight (WiSE-FT), and OUT/model")
    ap.add_argument("--weight", type=share, default=0.5, help="the --interpolate weight in (0, 1] (default 0.5)")
    ap.add_argument("--rebuild", action="store_true",
                    help="only write OUT/model from OUT/card.json and OUT/adapter.safetensors (no training)")
    args = ap.parse_args(argv)
    torch.set_num_threads(args.threads)
    if args.rebuild:
        print(json.dumps({"model": str(rebuild(args.out))}))
        return
    if args.interpolate is not None:
        print(json.dumps({"model": str(interpolate(args.interpolate, args.out, args.weight))}))
        return
    if args.recipe not in RECIPES:
        raise InputError(f'unknown recipe "{args.recipe}"; use {", ".join(RECIPES)}', field="recipe")
    check_device(args.device)
    cfg = BiConfig(recipe=args.recipe, seed=args.seed, steps=args.steps, lr=args.lr, batch_size=args.batch_size,
                   bf16=args.bf16, **base_options(args))  # fmt: skip
    root = shared_data_dir()
    if root is None:
        raise InputError("no shared data folder ($DIALEVAL_DATA, ../shared/data) to train on")
    check_resumable(args.out, cfg)
    card = train(args.out, root, cfg, args.minutes, args.stop_at, args.device)
    print(json.dumps({"steps": card["steps_done"], "seconds": card["seconds"], "chosen": card["chosen"]["step"]}))


if __name__ == "__main__":
    from dialeval.quality.cli import module_main

    module_main("dialeval.quality.bitrain")
