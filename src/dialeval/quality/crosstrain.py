"""Train the multi-view cross-encoder (:mod:`dialeval.metrics.quality.crossenc`) on the allowed unrated corpora.

``python -m dialeval.quality.crosstrain OUT [--steps N] [--minutes M]`` draws true
(context, next turn) pairs from every source of :data:`~dialeval.quality.corpora.ALLOWED`
(capped per source by :data:`CAPS` so no corpus dominates), splits them 95/5 by a
seeded hash of the dialogue, and builds, per pair, labelled examples for the three views:

* every true pair is positive for all three views (for ``specific`` only when the
  true turn is not itself a generic reply);
* ``coherent`` negatives: a turn of another dialogue, a turn of the same dialogue at
  another place, the speaker's own earlier turn, and one of: a DailyDialog++
  adversarial response, the stress perturbations ``negation`` / ``truncation``, the
  context with its last turns shuffled;
* ``fluent`` negatives: the true turn with words dropped, shuffled or doubled;
* ``specific`` negatives: a generic reply (the :data:`GENERIC` list, mined from no rated set).

A view's loss is the binary cross-entropy on the examples labelled for it (the other
views are masked). The encoder is the packaged MiniLM with a LoRA adapter (``peft``)
on every attention and feed-forward projection (``--encoder all-mpnet-base-v2`` with
``--lora-targets q,k,v,o,dense``: mpnet, whose ``heads.json`` then names its base); the view
head is trained in full.
Every :data:`CHECKPOINT_EVERY` steps the adapter, head, optimiser and position are saved
(``OUT/checkpoint.pt``) with the held-in loss and AUC per view and kind of negative;
a rerun with the same options resumes from there (:func:`check_resumable` refuses others).
The checkpoint with the best mean held-in AUC is exported to ``OUT/model`` (``adapter/``,
``heads.json``) with ``card.json``.

Example:
    >>> is_generic("I don't know.") and not is_generic("I visited Paris in May.")
    True
"""

from __future__ import annotations

import argparse
import functools
import hashlib
import json
import random
import re
import time
import warnings
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from dialeval.metrics.quality.crossenc import VIEWS

#: True pairs drawn at most from each source (seeded), so the big Chit-Chat corpus does not dominate.
CAPS = {
    "dailydialog-valid": 7069, "bst-val": 1009, "dailydialogpp-dev": 5140, "chitchat": 9000,
    "topical-chat-valid-freq": 6000, "topical-chat-valid-rare": 6000,
}
#: Generic replies (written for this purpose, not taken from any rated set).
GENERIC = (
    "i don't know", "i don't know.", "ok", "okay", "ok.", "yes", "yes.", "no", "no.", "sure", "sure.", "yeah",
    "that's nice", "that's nice.", "that's cool", "that is cool", "cool", "nice", "lol", "haha", "i see", "i see.",
    "me too", "me too.", "really?", "oh really?", "what?", "i'm not sure", "i'm not sure.", "thank you", "thanks",
    "that's interesting", "that is interesting.", "i agree", "i agree.", "good", "great", "hmm", "right",
    "i don't know what you mean", "i'm fine", "how about you?", "what do you mean?", "that's great!", "wow",
    "i like it", "me neither", "of course", "i think so", "that's true",
)


def generic_key(text: str) -> str:
    """Return ``text`` as :data:`GENERIC` replies are compared: lower case, letters, apostrophes and spaces.

    Example:
        >>> generic_key(" I don't know. ")
        "i don't know"
    """
    return re.sub(r"[^a-z' ]", "", text.lower()).strip()


_GENERIC = {generic_key(g) for g in GENERIC}
#: Save a checkpoint (and measure the held-in set) this often.
CHECKPOINT_EVERY = 100


#: The layers a LoRA adapter adapts by default: every linear layer of a BERT-style encoder (MiniLM); in
#: MPNet only the feed-forward ``dense`` ones and the pooler (its attention layers are ``q``, ``k``, ``v``, ``o``).
LORA_TARGETS = ("query", "key", "value", "dense")


def is_generic(text: str) -> bool:
    """Whether a turn is one of the :data:`GENERIC` replies (ignoring case and punctuation)."""
    return generic_key(text) in _GENERIC


@dataclass(frozen=True)
class TrainConfig:
    """Everything a run depends on (stored in the card)."""

    seed: int = 0
    batch_size: int = 32
    lr: float = 5e-4
    head_lr: float = 2e-3
    warmup: int = 100
    steps: int = 3000
    lora_r: int = 8
    lora_alpha: int = 16
    val_share: float = 0.05
    val_pairs: int = 400
    per_source: int | None = None  # None: CAPS
    #: Add a ``word-overlap`` negative per pair (:func:`overlap_negative`); off in the shipped run.
    overlap_negatives: bool = False
    #: The encoder's first ``layers`` layers only, inputs of at most ``max_len`` tokens (a faster encoder).
    layers: int = 6
    max_len: int = 128
    max_response: int = 48
    #: Run the training steps under torch's bfloat16 autocast (about twice as fast on a CPU with AMX);
    #: the held-in figures, the export and the centres stay fp32.
    bf16: bool = False
    #: The base encoder (a packaged name or a folder); ``heads.json`` names it when it is not MiniLM.
    encoder: str = "all-minilm-l6-v2"
    #: Round the base weights to fp16 first (how mpnet travels to a lent GPU); load time rounds alike.
    base_fp16: bool = False
    #: The layers the LoRA adapter adapts (MPNet's attention is ``q``, ``k``, ``v``, ``o``).
    lora_targets: tuple[str, ...] = LORA_TARGETS
    #: A trained views folder whose view probabilities the run also learns (:mod:`dialeval.quality.distill`).
    teacher: str | None = None
    #: The teacher's share of the loss (:func:`view_loss`); unused without a teacher.
    distill: float = 0.5


@dataclass(frozen=True)
class Example:
    """One input with a label per view (None = not labelled for that view) and the kind of example."""

    group: str
    context: tuple[str, ...]
    response: str
    labels: tuple[float | None, float | None, float | None]
    kind: str


def _split(group: str, cfg: TrainConfig) -> bool:
    digest = hashlib.sha256(f"{cfg.seed}:{group}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64 < cfg.val_share


@functools.cache
def _source(name: str, data_dir: Path) -> tuple[Any, ...]:
    from dialeval.quality.corpora import read_source

    return tuple(p for p in read_source(name, data_dir) if p.response and p.context)


def draw(data_dir: Path, cfg: TrainConfig) -> list[Any]:
    """Return the true pairs of every allowed source (at most :data:`CAPS` each), seeded, in a seeded order."""
    from dialeval.quality.corpora import ALLOWED

    out: list[Any] = []
    for n, name in enumerate(ALLOWED):
        pairs = list(_source(name, data_dir))
        rng = random.Random(cfg.seed * 1000 + n)
        cap = CAPS[name] if cfg.per_source is None else cfg.per_source
        out.extend(rng.sample(pairs, min(cap, len(pairs))))
    random.Random(cfg.seed).shuffle(out)
    return out


@functools.cache
def content_words(text: str) -> frozenset[str]:
    """Return the words of four letters or more (a stop-word list in one rule), lower-cased.

    Cached: :func:`overlap_negative` draws the same turns again and again.

    Example:
        >>> sorted(content_words("I love the Beatles, and their songs!"))
        ['beatles', 'love', 'songs', 'their']
    """
    return frozenset(w for w in re.findall(r"[a-z']+", text.lower()) if len(w) >= 4)


def overlap_negative(pair: Any, pool: Sequence[Any], rng: random.Random, draws: int = 20) -> str | None:
    """Return, of ``draws`` turns of other dialogues, the one sharing the most content words with the context.

    A true next turn often repeats the context's words, and a cross-encoder learns that
    shortcut first (held-in AUC on DailyDialog++'s word-sharing adversarial replies 0.34);
    this negative shares words and is not the next turn. None when none shares a word.
    """
    words = content_words(" ".join(pair.context[-2:]))
    best, best_n = None, 0
    for _ in range(draws):
        other = pool[rng.randrange(len(pool))]
        if (other.source, other.dialogue) == (pair.source, pair.dialogue):
            continue
        n = len(words & content_words(other.response))
        if n > best_n:
            best, best_n = other.response, n
    return best


def examples_for(
    pair: Any, pool: Sequence[Any], by_dialogue: dict[str, list[Any]], rng: random.Random, overlap: bool = False
) -> list[Example]:
    """Return the labelled examples of one true pair (see the module docstring)."""
    from dialeval.quality.build import CORRUPTIONS, DEFAULT_CORRUPTIONS, _hard_negatives

    group = f"{pair.source}/{pair.dialogue}"
    ctx, resp = pair.context, pair.response
    out = [Example(group, ctx, resp, (1.0, 1.0, None if is_generic(resp) else 1.0), "true")]

    def coherent(r: str, kind: str, c: tuple[str, ...] = ctx) -> None:
        out.append(Example(group, c, r, (0.0, None, None), kind))

    for _ in range(20):
        other = pool[rng.randrange(len(pool))]
        if (other.source, other.dialogue) != (pair.source, pair.dialogue):
            coherent(other.response, "random")
            break
    here = [p for p in by_dialogue[group] if abs(len(p.context) - len(ctx)) >= 2 and p.response != resp]
    if here:
        coherent(rng.choice(here).response, "same-dialogue")
    if len(ctx) >= 2 and ctx[-2] != resp and rng.random() < 0.5:
        coherent(ctx[-2], "own-earlier-turn")
    for hard_ctx, hard, kind in _hard_negatives(pair, rng, every=False):
        if kind != "repetition":
            coherent(hard, kind, hard_ctx)
    for name in rng.sample(DEFAULT_CORRUPTIONS, len(DEFAULT_CORRUPTIONS)):
        bad = CORRUPTIONS[name](resp, rng)
        if bad is not None and bad != resp:
            out.append(Example(group, ctx, bad, (None, 0.0, None), name))
            break
    if rng.random() < 0.5:
        out.append(Example(group, ctx, rng.choice(GENERIC), (None, None, 0.0), "generic"))
    if overlap and (shared := overlap_negative(pair, pool, rng)) is not None:
        coherent(shared, "word-overlap")
    return out


def build_examples(pairs: Sequence[Any], cfg: TrainConfig) -> tuple[list[Example], list[Example]]:
    """Return ``(train, held-in validation)`` examples, split by dialogue (validation capped at ``val_pairs``)."""
    by_dialogue: dict[str, list[Any]] = {}
    for p in pairs:
        by_dialogue.setdefault(f"{p.source}/{p.dialogue}", []).append(p)
    rng = random.Random(cfg.seed + 1)
    train: list[Example] = []
    val: list[Example] = []
    n_val = 0
    for p in pairs:
        is_val = _split(f"{p.source}/{p.dialogue}", cfg)
        if is_val and n_val >= cfg.val_pairs:
            continue
        got = examples_for(p, pairs, by_dialogue, rng, cfg.overlap_negatives)
        if is_val:
            n_val += 1
            val.extend(got)
        else:
            train.extend(got)
    return train, val


def _auc(scores: Sequence[float], labels: Sequence[float]) -> float | None:
    from sklearn.metrics import roc_auc_score

    return None if len(set(labels)) < 2 else round(float(roc_auc_score(labels, scores)), 4)


def evaluate(model: Any, tokens: Any, val: Sequence[Example]) -> dict[str, Any]:
    """Return the held-in loss and AUC per view (overall and per kind of negative)."""
    import torch

    from dialeval.metrics.quality.crossenc import score_batches

    model.eval()
    logits = score_batches(model, tokens.pairs([e.context for e in val], [e.response for e in val]))
    model.train()
    out: dict[str, Any] = {}
    losses = []
    for v, view in enumerate(VIEWS):
        lab = [(lg[v], e.labels[v], e.kind) for lg, e in zip(logits, val, strict=True) if e.labels[v] is not None]
        if not lab:
            continue
        s = torch.tensor([x[0] for x in lab])
        y = torch.tensor([float(x[1] or 0.0) for x in lab])
        losses.append(float(torch.nn.functional.binary_cross_entropy_with_logits(s, y)))
        pos = [sc for sc, lbl, _ in lab if lbl == 1.0]
        by_kind = {}
        for kind in sorted({k for _, lbl, k in lab if lbl == 0.0}):
            neg = [sc for sc, _, k in lab if k == kind]
            by_kind[kind] = _auc(pos + neg, [1.0] * len(pos) + [0.0] * len(neg))
        out[view] = {"auc": _auc([x[0] for x in lab], [float(x[1] or 0.0) for x in lab]), "by_kind": by_kind}
    out["loss"] = round(sum(losses) / len(losses), 4)
    out["mean_auc"] = round(sum(out[v]["auc"] for v in VIEWS if v in out) / len(VIEWS), 4)
    return out


def add_lora(model: Any, r: int, alpha: int, targets: Sequence[str] = LORA_TARGETS) -> Any:
    """Return ``model`` wrapped with a LoRA adapter (no dropout) on the linear layers named ``targets``.

    Raises:
        MissingExtraError: peft is not installed.
        InputError: No layer of ``model`` has one of the ``targets``' names.
    """
    import importlib.util

    from dialeval.errors import InputError, MissingExtraError

    if importlib.util.find_spec("peft") is None:
        raise MissingExtraError("peft", extra="trained")
    from peft import LoraConfig, get_peft_model

    names = {name.rsplit(".", 1)[-1] for name, _ in model.named_modules()}
    if not set(targets) & names:
        raise InputError(f"no layer of the encoder is named {', '.join(targets) or '(nothing)'}", field="lora_targets")
    lora = LoraConfig(r=r, lora_alpha=alpha, lora_dropout=0.0, target_modules=list(targets))
    with warnings.catch_warnings():  # peft probes transformers' deprecated alias; nothing a user can act on
        warnings.filterwarnings("ignore", message=".*is_gradient_checkpointing.*", category=FutureWarning)
        return get_peft_model(model, lora)


def _model(cfg: TrainConfig) -> tuple[Any, Any]:
    import torch
    from transformers import AutoTokenizer

    from dialeval.metrics.quality.crossenc import Tokens, build_model, round_to_fp16
    from dialeval.models.loading import resolve_encoder_dir

    torch.manual_seed(cfg.seed)
    enc_dir = str(resolve_encoder_dir(cfg.encoder))
    model = build_model(enc_dir, layers=cfg.layers)
    if cfg.base_fp16:
        round_to_fp16(model.encoder)
    model.encoder = add_lora(model.encoder, cfg.lora_r, cfg.lora_alpha, cfg.lora_targets)
    return model, Tokens(AutoTokenizer.from_pretrained(enc_dir), cfg.max_len, cfg.max_response)


def view_loss(logits: Any, labels: Any, mask: Any, soft: Any = None, distill: float = 0.0) -> Any:
    """Return a batch's loss: the binary cross-entropy on the views each example is labelled for.

    With ``soft`` (a teacher's probabilities of every view of every example), ``1 - distill``
    times that plus ``distill`` times the mean binary cross-entropy against ``soft`` over all views.
    By hand for the example: hard -log(sigmoid(2)) = 0.1269; soft 0.5 on all three views
    (log(1 + e^2) - 1 + 2 log 2) / 3 = 0.8377; half of each 0.4823.

    Example:
        >>> import torch
        >>> x, y, m = torch.tensor([[2.0, 0.0, 0.0]]), torch.tensor([[1.0, 0.0, 0.0]]), torch.tensor([[1.0, 0.0, 0.0]])
        >>> round(float(view_loss(x, y, m)), 4), round(float(view_loss(x, y, m, torch.full((1, 3), 0.5), 0.5)), 4)
        (0.1269, 0.4823)
    """
    import torch

    bce = torch.nn.functional.binary_cross_entropy_with_logits
    hard = (bce(logits, labels, reduction="none") * mask).sum() / mask.sum()
    return hard if soft is None else (1 - distill) * hard + distill * bce(logits, soft)


def schedule(step: int, warmup: int, steps: int) -> float:
    """Return the learning rate's factor at ``step``: a linear warm-up, then a linear decay to 0 at ``steps``.

    Example:
        >>> [schedule(s, 2, 6) for s in (0, 1, 2, 4, 6)]
        [0.5, 1.0, 1.0, 0.5, 0.0]
    """
    if step < warmup:
        return (step + 1) / warmup
    return max(0.0, (steps - step) / max(1, steps - warmup))


def train(out: Path, data_dir: Path, cfg: TrainConfig, minutes: float | None = None,
          stop_at: int | None = None, snapshots: bool = False, device: str = "cpu") -> dict[str, Any]:  # fmt: skip
    """Train (resuming from ``out/checkpoint.pt``), export the best checkpoint and write the card.

    ``minutes`` and ``stop_at`` (a step) end the run early, on the same schedule (``cfg.steps``).
    ``snapshots``: also export every checkpoint to ``out/steps/NNNNN`` (to measure transfer
    along the run afterwards; what ships is still chosen by held-in AUC). ``device``: where
    the steps run (``cuda`` on a GPU; the exported files and the centres are the same either way).
    """
    import torch

    from dialeval.metrics.quality.crossenc import collate

    out.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    pairs = draw(data_dir, cfg)
    train_ex, val_ex = build_examples(pairs, cfg)
    random.Random(cfg.seed + 2).shuffle(train_ex)
    soft, teacher = None, None
    if cfg.teacher:
        from dialeval.quality.distill import teacher_targets

        seen = train_ex[: cfg.steps * cfg.batch_size]  # the examples the schedule reaches, in the order it does
        soft, teacher = teacher_targets(Path(cfg.teacher), [(e.context, e.response) for e in seen], out, device,
                                        cfg.bf16)  # fmt: skip
        soft = soft.to(device)
    model, tokens = _model(cfg)
    model.to(device)
    lora = [p for n, p in model.named_parameters() if p.requires_grad and "heads" not in n]
    params = [{"params": lora, "lr": cfg.lr}, {"params": list(model.heads.parameters()), "lr": cfg.head_lr}]
    opt = torch.optim.AdamW(params, weight_decay=0.01)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: schedule(s, cfg.warmup, cfg.steps))
    ckpt = out / "checkpoint.pt"
    state: dict[str, Any] = resume(ckpt, model, opt, sched, device) or {
        "step": 0, "curve": [], "best": None, "seconds": 0.0, "config": run_config(cfg)}
    trainable = {n for n, p in model.named_parameters() if p.requires_grad}
    model.train()

    def loss_at(step: int) -> Any:
        first = (step * cfg.batch_size) % len(train_ex)
        batch = train_ex[first : first + cfg.batch_size]
        inputs = collate(tokens.pairs([e.context for e in batch], [e.response for e in batch]))
        with torch.autocast(device.split(":")[0], dtype=torch.bfloat16, enabled=cfg.bf16):
            logits = model(*(t.to(device) for t in inputs)).float()
        y = torch.tensor([[0.0 if v is None else v for v in e.labels] for e in batch], device=device)
        m = torch.tensor([[0.0 if v is None else 1.0 for v in e.labels] for e in batch], device=device)
        return view_loss(logits, y, m, None if soft is None else soft[first : first + len(batch)], cfg.distill)

    run_steps(model, opt, sched, state, ckpt=ckpt, last=cfg.steps if stop_at is None else min(stop_at, cfg.steps),
              every=CHECKPOINT_EVERY, started=t0, minutes=minutes, loss_at=loss_at,
              measure=lambda: evaluate(model, tokens, val_ex),
              on_best=lambda: _export(model, trainable, out / "model", cfg),
              keep=lambda n: n in trainable or "heads" in n,
              show=lambda row: {k: row[k] for k in ("step", "train_loss", "loss", "mean_auc", "seconds")},
              on_measure=(lambda step: _export(model, trainable, out / "steps" / f"{step:05d}", cfg))
              if snapshots else None)  # fmt: skip
    calibrate(out / "model", tokens, val_ex, cfg)
    return write_card(out, data_dir, cfg, state, len(pairs), train_ex, val_ex, device, teacher)


def run_steps(model: Any, opt: Any, sched: Any, state: dict[str, Any], *, ckpt: Path, last: int, every: int,
              started: float, minutes: float | None, loss_at: Callable[[int], Any],
              measure: Callable[[], dict[str, Any]], on_best: Callable[[], None], keep: Callable[[str], bool],
              show: Callable[[dict[str, Any]], dict[str, Any]],
              on_measure: Callable[[int], None] | None = None) -> None:  # fmt: skip
    """Run the training steps from ``state["step"]`` to ``last``: the loop both LoRA trainers share.

    Each step: ``loss_at(step)``, backward, gradients clipped to norm 1, optimiser and schedule step.
    Every ``every`` steps, at ``last``, and when ``minutes`` have passed since ``started`` (the run
    then stops): ``measure()`` gives the held-in figures, a row (step, mean training loss,
    seconds, figures) joins ``state["curve"]`` and is printed as ``show(row)``, ``on_measure(step)``
    runs, ``on_best()`` runs when the row's ``mean_auc`` is the best so far, and a
    :func:`checkpoint` keeps the weights whose names ``keep`` accepts.
    """
    import torch

    params = [p for p in model.parameters() if p.requires_grad]
    start_clock, start_seconds = time.perf_counter(), state["seconds"]
    running: list[float] = []
    while state["step"] < last:
        loss = loss_at(state["step"])
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        opt.step()
        sched.step()
        running.append(float(loss.detach()))
        state["step"] += 1
        state["seconds"] = start_seconds + time.perf_counter() - start_clock
        out_of_time = minutes is not None and (time.perf_counter() - started) / 60 > minutes
        if state["step"] % every == 0 or state["step"] == last or out_of_time:
            figs = measure()
            row = {"step": state["step"], "train_loss": round(sum(running) / len(running), 4),
                   "seconds": round(state["seconds"], 1), **figs}  # fmt: skip
            running = []
            if on_measure is not None:
                on_measure(state["step"])
            state["curve"].append(row)
            print(json.dumps(show(row)), flush=True)
            if state["best"] is None or figs["mean_auc"] > state["best"]["mean_auc"]:
                state["best"] = row
                on_best()
            checkpoint(ckpt, {n: p for n, p in model.state_dict().items() if keep(n)}, opt, sched, state)
        if out_of_time:
            break


def checkpoint(path: Path, weights: dict[str, Any], opt: Any, sched: Any, state: dict[str, Any]) -> None:
    """Write the trained weights, optimiser, schedule, torch RNG and run state to ``path`` (whole or not at all)."""
    import torch

    torch.save({"model": weights, "opt": opt.state_dict(), "sched": sched.state_dict(), "rng": torch.get_rng_state(),
                "state": state}, path.with_suffix(".tmp"))  # fmt: skip
    path.with_suffix(".tmp").replace(path)


def run_config(cfg: Any) -> dict[str, Any]:
    """Return a run's config (a dataclass) as its checkpoint and its card keep it: JSON values, tuples as lists.

    Example:
        >>> run_config(TrainConfig())["lora_targets"]
        ['query', 'key', 'value', 'dense']
    """
    config: dict[str, Any] = json.loads(json.dumps(asdict(cfg)))
    return config


def check_resumable(out: Path, cfg: Any) -> None:
    """Refuse a rerun in ``out`` under another config than the one its ``checkpoint.pt`` was trained with.

    A rerun resumes from the checkpoint; under other options it would load an optimiser of another
    shape (a traceback, after the data is drawn) or go on silently under a mixed recipe. A checkpoint
    written before checkpoints kept their config is compared with ``out/card.json`` where there is one.

    Raises:
        InputError: The configs differ (naming each option that differs) or the checkpoint cannot be read.
    """
    import torch

    from dialeval.errors import InputError

    ckpt = out / "checkpoint.pt"
    if not ckpt.exists():
        return
    try:
        saved = torch.load(ckpt, weights_only=False, map_location="cpu")["state"].get("config")
    except Exception as exc:  # a torn or foreign file: torch raises several kinds
        raise InputError(f"cannot read the checkpoint to resume from ({type(exc).__name__}); move it away to start "
                         "again", path=ckpt) from None  # fmt: skip
    card = out / "card.json"
    if saved is None and card.exists():
        saved = json.loads(card.read_text(encoding="utf-8")).get("config")
    if saved is None:
        return
    now = run_config(cfg)
    differ = [k for k in sorted(set(saved) | set(now)) if saved.get(k) != now.get(k)]
    if differ:
        was = ", ".join(f"{k}={saved.get(k)}" for k in differ)
        asked = ", ".join(f"{k}={now.get(k)}" for k in differ)
        raise InputError(f"this folder's run was trained with {was}; this run asks for {asked}. Resume it with its "
                         "own options, or give another folder", path=out)  # fmt: skip


def check_shape(cfg: TrainConfig) -> None:
    """Fail before any data is read when ``--layers``, ``--max-len`` or ``--max-response`` do not fit the encoder.

    Raises:
        InputError: More layers than the encoder has, inputs longer than the positions it reads
            (:func:`~dialeval.models.loading.readable_positions`), or a response budget that leaves the context no
            token.
    """
    from dialeval.errors import InputError
    from dialeval.models.loading import encoder_shape

    depth, longest = encoder_shape(cfg.encoder)  # None where the config does not say: loading reports it
    if depth is not None and cfg.layers > depth:
        raise InputError(f"{cfg.encoder} has {depth} layers, not {cfg.layers}", field="--layers")
    if longest is not None and cfg.max_len > longest:
        raise InputError(f"{cfg.encoder} reads at most {longest} tokens, not {cfg.max_len}", field="--max-len")
    if cfg.max_response + 3 > cfg.max_len:
        raise InputError(f"{cfg.max_response} leaves the context no token in inputs of {cfg.max_len} (a [CLS] and "
                         "two [SEP] take 3)", field="--max-response")  # fmt: skip


def resume(path: Path, model: Any, opt: Any, sched: Any, device: str = "cpu") -> dict[str, Any] | None:
    """Load a :func:`checkpoint` into ``model``, ``opt``, ``sched`` and the RNG; return its run state (None: none)."""
    import torch

    if not path.exists():
        return None
    saved = torch.load(path, weights_only=False, map_location=device)
    model.load_state_dict(saved["model"], strict=False)
    opt.load_state_dict(saved["opt"])
    sched.load_state_dict(saved["sched"])
    torch.set_rng_state(saved["rng"].cpu())
    state: dict[str, Any] = saved["state"]
    return state


def calibrate(folder: Path, tokens: Any, val: Sequence[Example], cfg: TrainConfig) -> None:
    """Add to ``heads.json`` the LoRA scale and each view's logit mean and sd on the held-in examples.

    The mean and sd are what the unfitted combination (:func:`dialeval.quality.experiment.zmean`)
    z-scores with: measured on self-supervised examples only, never on a rating.
    """
    import statistics

    from dialeval.metrics.quality import _views
    from dialeval.metrics.quality.crossenc import score_batches
    from dialeval.models.loading import resolve_encoder_dir

    path = folder / "heads.json"
    head = json.loads(path.read_text(encoding="utf-8"))
    head |= {"lora_r": cfg.lora_r, "lora_alpha": cfg.lora_alpha, **_shape(cfg)}
    path.write_text(json.dumps(head) + "\n", encoding="utf-8")
    model, _ = _views(str(folder), str(resolve_encoder_dir(cfg.encoder)), "cpu")
    logits = score_batches(model, tokens.pairs([e.context for e in val], [e.response for e in val]))
    cols = list(zip(*logits, strict=True))
    head["centre"] = [[round(statistics.fmean(c), 6), round(statistics.stdev(c), 6)] for c in cols]
    path.write_text(json.dumps(head) + "\n", encoding="utf-8")


def _shape(cfg: TrainConfig) -> dict[str, Any]:
    """Return the encoder and its shape as ``heads.json`` names them: what differs from the defaults (shipped: none).

    The default depth is MiniLM's six layers, all it has; another base names its depth even at six, since
    loading keeps every layer of a base whose ``heads.json`` names none.

    >>> _shape(TrainConfig())
    {}
    >>> _shape(TrainConfig(encoder="all-mpnet-base-v2"))
    {'encoder': 'all-mpnet-base-v2', 'layers': 6}
    """
    default = TrainConfig()
    keys = ("layers", "max_len", "max_response", "encoder", "base_fp16")
    shape = {k: getattr(cfg, k) for k in keys if getattr(cfg, k) != getattr(default, k)}
    return shape | {"layers": cfg.layers} if "encoder" in shape else shape


def _export(model: Any, trainable: set[str], folder: Path, cfg: TrainConfig) -> None:
    """Write the LoRA adapter (fp16 safetensors) and the view head (JSON) of the current weights."""
    import torch
    from safetensors.torch import save_file

    folder.mkdir(parents=True, exist_ok=True)
    sd = model.state_dict()
    adapter = {n: sd[n].detach().cpu().to(torch.float16).contiguous() for n in sorted(trainable) if "heads" not in n}
    save_file(adapter, str(folder / "adapter.safetensors"))
    head = {"views": list(VIEWS), "weight": model.heads.weight.detach().tolist(),
            "bias": model.heads.bias.detach().tolist(), "lora_r": cfg.lora_r, "lora_alpha": cfg.lora_alpha,
            **_shape(cfg)}  # fmt: skip
    (folder / "heads.json").write_text(json.dumps(head) + "\n", encoding="utf-8")


def write_card(out: Path, data_dir: Path, cfg: TrainConfig, state: dict[str, Any], n_pairs: int,
               train_ex: Sequence[Example], val_ex: Sequence[Example], device: str = "cpu",
               teacher: dict[str, Any] | None = None) -> dict[str, Any]:  # fmt: skip
    """Write ``out/card.json``: data hashes, config, example counts, the loss/AUC curve and the chosen step.

    ``teacher``: what :func:`dialeval.quality.distill.teacher_targets` says of the teacher (its files, time).
    """
    from dialeval.data._common import sha256_file
    from dialeval.models.loading import encoder_card
    from dialeval.quality.recipes import data_files, machine

    kinds: dict[str, int] = {}
    for e in train_ex:
        kinds[e.kind] = kinds.get(e.kind, 0) + 1
    card = {
        "what": f"multi-view cross-encoder: {cfg.encoder} + LoRA, heads " + ", ".join(VIEWS),
        "config": run_config(cfg), "caps": CAPS, "true_pairs": n_pairs,
        "examples": {"train": len(train_ex), "validation": len(val_ex), "train_by_kind": dict(sorted(kinds.items()))},
        "data_files": data_files(data_dir),
        "encoder": encoder_card(cfg.encoder),
        "steps_done": state["step"], "seconds": round(state["seconds"], 1),
        "machine": machine(device),
        "chosen": state["best"], "curve": state["curve"],
        "files": {f.name: sha256_file(f) for f in sorted((out / "model").glob("*")) if f.is_file()},
        **({"teacher": teacher} if teacher else {}),
    }
    (out / "card.json").write_text(json.dumps(card, indent=1) + "\n", encoding="utf-8")
    return card


def check_device(device: str) -> None:
    """Fail before any data is read when training cannot run on ``device`` here (cpu, cuda or cuda:N).

    The name is checked here; whether torch sees that GPU, by :func:`dialeval.models.device.check_device`.

    Example:
        >>> check_device("cpu")
        >>> check_device("gpu")
        Traceback (most recent call last):
        dialeval.errors.InputError: field "device": "gpu" is not a device training runs on; use cpu, cuda or cuda:N
    """
    from dialeval.errors import InputError
    from dialeval.models.device import check_device as check_usable

    if device != "cpu" and not re.fullmatch(r"cuda(:\d+)?", device):
        raise InputError(f'"{device}" is not a device training runs on; use cpu, cuda or cuda:N', field="device")
    check_usable(device)


def add_base_options(ap: argparse.ArgumentParser) -> None:
    """Add the options that pick the base encoder and its adapter (``train-views`` and ``train-encoder`` alike)."""
    ap.add_argument("--encoder", default=TrainConfig.encoder,
                    help="base: all-minilm-l6-v2 (default), all-mpnet-base-v2 or a sentence-transformers folder")
    ap.add_argument("--base-fp16", action="store_true", help="round the base weights to fp16 first (see the card)")
    ap.add_argument("--lora-targets", default=",".join(TrainConfig.lora_targets),
                    help="comma-separated names of the layers the adapter adapts (default: query,key,value,dense)")


def base_options(args: argparse.Namespace) -> dict[str, Any]:
    """Return the config fields of :func:`add_base_options`; a bad encoder name fails here, before any work.

    Raises:
        InputError: ``--encoder`` is neither a packaged encoder nor a folder.
        MissingExtraError: The packaged encoder it names is not installed.
    """
    from dialeval.models.loading import resolve_encoder_dir

    resolve_encoder_dir(args.encoder)
    targets = tuple(t.strip() for t in args.lora_targets.split(",") if t.strip())
    return {"encoder": args.encoder, "base_fp16": args.base_fp16, "lora_targets": targets}


def main(argv: Sequence[str] | None = None, prog: str = "python -m dialeval.quality.crosstrain") -> None:
    """Command line: ``OUT [--steps N] [--minutes M] [--seed S] [--lr X] [--overlap-negatives]``."""
    import torch

    from dialeval.errors import InputError
    from dialeval.paths import shared_data_dir
    from dialeval.quality.argtypes import SEED, THREADS, count, folder, positive

    ap = argparse.ArgumentParser(prog=prog)
    ap.add_argument("out", type=folder, help="run folder: checkpoint.pt, card.json, model/ (a rerun resumes)")
    ap.add_argument("--steps", type=count(1), default=TrainConfig.steps,
                    help=f"planned steps (default {TrainConfig.steps})")
    ap.add_argument("--minutes", type=positive, default=None, help="stop (and export the best checkpoint) after this")
    ap.add_argument("--stop-at", type=count(1), default=None, help="stop after this step (the schedule stays --steps)")
    ap.add_argument("--snapshots", action="store_true", help="also export every checkpoint to OUT/steps/NNNNN")
    ap.add_argument("--seed", type=SEED, default=0,
                    help="seed of the data draw, the split and the model (default 0)")
    ap.add_argument("--lr", type=positive, default=TrainConfig.lr,
                    help=f"LoRA learning rate (default {TrainConfig.lr})")
    ap.add_argument("--threads", type=THREADS, default=2, help="torch threads (default 2)")
    ap.add_argument("--device", default="cpu", help="where the training steps run: cpu (default) or cuda")
    ap.add_argument("--overlap-negatives", action="store_true", help="add word-overlap negatives (overlap_negative)")
    ap.add_argument("--layers", type=count(1), default=TrainConfig.layers, help="keep the first N layers (default 6)")
    ap.add_argument("--max-len", type=count(1), default=TrainConfig.max_len,
                    help="longest input in tokens (default 128)")
    ap.add_argument("--max-response", type=count(1), default=TrainConfig.max_response,
                    help=f"longest response in tokens (default {TrainConfig.max_response})")  # fmt: skip
    ap.add_argument("--bf16", action="store_true",
                    help="training steps under bfloat16 autocast (about 2x on a CPU with AMX; figures and export fp32)")
    add_base_options(ap)
    ap.add_argument("--teacher", type=Path, default=None,
                    help="a trained views folder whose view probabilities the run also learns (distillation)")
    ap.add_argument("--distill", type=float, default=TrainConfig.distill,
                    help=f"the teacher's share of the loss, 0-1 (default {TrainConfig.distill})")
    ap.add_argument("--calibrate-only", action="store_true", help="only (re)write the centres (OUT/model, OUT/steps/*)")
    args = ap.parse_args(argv)
    check_device(args.device)
    if args.teacher is not None:
        from dialeval.quality.distill import check_teacher

        check_teacher(args.teacher)
    if not 0.0 <= args.distill <= 1.0:
        raise InputError(f"{args.distill} is not between 0 and 1", field="--distill")
    torch.set_num_threads(args.threads)
    cfg = TrainConfig(seed=args.seed, steps=args.steps, lr=args.lr, overlap_negatives=args.overlap_negatives,
                      layers=args.layers, max_len=args.max_len, max_response=args.max_response,
                      bf16=args.bf16, teacher=None if args.teacher is None else str(args.teacher),
                      distill=args.distill, **base_options(args))  # fmt: skip
    check_shape(cfg)
    root = shared_data_dir()
    if root is None:
        raise InputError("no shared data folder ($DIALEVAL_DATA, ../shared/data) to train on")
    if args.calibrate_only:
        card_path = args.out / "card.json"
        if card_path.exists():
            saved = json.loads(card_path.read_text(encoding="utf-8"))["config"]
            cfg = TrainConfig(**saved | {"lora_targets": tuple(saved.get("lora_targets", TrainConfig.lora_targets))})
        _, val_ex = build_examples(draw(root, cfg), cfg)
        tokens = _model(cfg)[1]
        for model_dir in [args.out / "model", *sorted((args.out / "steps").glob("[0-9]*"))]:
            calibrate(model_dir, tokens, val_ex, cfg)
        return
    check_resumable(args.out, cfg)
    card = train(args.out, root, cfg, args.minutes, args.stop_at, args.snapshots, args.device)
    print(json.dumps({"steps": card["steps_done"], "seconds": card["seconds"], "chosen": card["chosen"]["step"]}))


if __name__ == "__main__":
    from dialeval.quality.cli import module_main

    module_main("dialeval.quality.crosstrain")
