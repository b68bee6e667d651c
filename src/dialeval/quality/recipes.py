"""Rebuild the self-supervised heads from the public unrated corpora (``dialeval quality train``).

A :class:`Recipe` names how many true pairs to draw from each allowed source
(:data:`~dialeval.quality.corpora.ALLOWED`), the seed and the L2 penalty. Training
draws the pairs with the seed, builds negatives (:mod:`dialeval.quality.build`),
splits them by dialogue into train (90%) and held-in validation (10%), embeds every
text once with the packaged MiniLM, fits the ``sensible`` and ``fluent`` heads on the
train part only and writes, into the output folder, ``sensible.json``,
``fluent.json`` and ``card.json``: the data files and their sha256, the recipe, the
seed, the example counts, the validation accuracy and AUC (overall and per kind of
negative), the encoder fingerprint, the seconds it took, and the sha256 of each head.

Example:
    >>> RECIPES["tiny"].per_source
    40
"""

from __future__ import annotations

import hashlib
import json
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from dialeval.data._common import sha256_file
from dialeval.errors import InputError
from dialeval.metrics.quality.heads import LogisticHead, auc, fit_logistic, save_head
from dialeval.quality.build import (
    DEFAULT_CORRUPTIONS,
    FluentExample,
    SensibleExample,
    fluent_examples,
    sensible_examples,
)
from dialeval.quality.corpora import ALLOWED, Pair, read_source, source_path


@dataclass(frozen=True)
class Recipe:
    """What a self-supervised training run draws and how it fits.

    Attributes:
        name: The recipe's name.
        per_source: True pairs drawn from each source (at most; fewer if the source has fewer).
        chitchat_dialogues: Chit-Chat conversations read before drawing (the corpus is large).
        seed: Seeds the draws, the negatives and the split.
        l2: L2 penalty of both heads.
        val_share: Share of dialogues held out for the validation figures.
        ensemble: Also fit the ``quality`` ensemble over the new heads on the rated sets.
        sources: The allowed sources drawn from (the frozen heads predate Topical-Chat).
        every_hard: One sensible hard negative of every kind that applies per pair, not one in all.
        corruptions: The fluent head's corruptions (:data:`~dialeval.quality.build.CORRUPTIONS`).
    """

    name: str
    per_source: int
    chitchat_dialogues: int
    seed: int = 0
    l2: float = 10.0
    val_share: float = 0.1
    ensemble: bool = True
    sources: tuple[str, ...] = ("dailydialog-valid", "bst-val", "dailydialogpp-dev", "chitchat")
    every_hard: bool = False
    corruptions: tuple[str, ...] = DEFAULT_CORRUPTIONS


#: Named recipes: ``default`` built the shipped heads; ``all`` draws from every allowed corpus (issue 19:
#: up to 6,000 pairs of each of the six sources, the whole Chit-Chat); ``all-hard`` is ``all`` with every kind
#: of hard negative per pair and truncation among the fluent corruptions; ``tiny`` is the test's quick rebuild.
RECIPES: dict[str, Recipe] = {
    "default": Recipe("default", per_source=1000, chitchat_dialogues=600),
    "all": Recipe("all", per_source=6000, chitchat_dialogues=7168, ensemble=False, sources=tuple(ALLOWED)),
    "all-hard": Recipe("all-hard", per_source=6000, chitchat_dialogues=7168, ensemble=False, sources=tuple(ALLOWED),
                       every_hard=True, corruptions=(*DEFAULT_CORRUPTIONS, "truncation")),
    "tiny": Recipe("tiny", per_source=40, chitchat_dialogues=20, ensemble=False),
}


def data_files(data_dir: Path, sources: Sequence[str] = tuple(ALLOWED)) -> list[dict[str, str]]:
    """Return ``[{source, path, sha256}]`` of every source file read (Chit-Chat: its package file)."""
    import importlib.util

    out = []
    for name in sources:
        if name == "chitchat":
            spec = importlib.util.find_spec("chitchat_dataset")
            if spec is None or spec.origin is None:
                raise InputError("the chitchat corpus needs its package: pip install chitchat-dataset")
            path = Path(spec.origin).parent / "dataset.json"
            shown = "chitchat_dataset/dataset.json"
        else:
            path = source_path(name, data_dir)
            shown = ALLOWED[name]
        out.append({"source": name, "path": shown, "sha256": sha256_file(path)})
    return out


def draw_pairs(recipe: Recipe, data_dir: Path) -> list[Pair]:
    """Draw up to ``per_source`` pairs of each of the recipe's sources with its seed (in :data:`ALLOWED` order)."""
    out: list[Pair] = []
    for n, name in enumerate(ALLOWED):
        if name not in recipe.sources:
            continue
        pairs = read_source(name, data_dir, limit=recipe.chitchat_dialogues if name == "chitchat" else None)
        rng = random.Random(recipe.seed * 1000 + n)
        out.extend(rng.sample(pairs, min(recipe.per_source, len(pairs))))
    return out


def is_validation(group: str, seed: int, share: float) -> bool:
    """Return whether a dialogue is in the held-in validation part (a seeded hash of its id, ``share`` of them).

    Example:
        >>> is_validation("dailydialog-valid/3", 0, 0.1) in (True, False)
        True
    """
    digest = hashlib.sha256(f"{seed}:{group}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64 < share


def _figures(head: LogisticHead, x: Any, labels: Sequence[int], kinds: Sequence[str]) -> dict[str, Any]:
    if not labels:
        return {"n": 0}
    p = head.predict_proba(x)
    y = np.asarray(labels)
    out: dict[str, Any] = {
        "n": len(y), "accuracy": round(float(np.mean((p >= 0.5) == (y > 0))), 4), "auc": round(auc(p, y), 4),
    }
    by_kind = {}
    for kind in sorted(set(kinds)):
        if kind in ("true", "real"):
            continue
        mask = np.asarray([k == kind or lab == 1 for k, lab in zip(kinds, labels, strict=True)])
        by_kind[kind] = {"n": int(sum(k == kind for k in kinds)), "auc": round(auc(p[mask], y[mask]), 4)}
    out["by_kind"] = by_kind
    return out


def train_recipe(
    recipe: Recipe,
    output: Path,
    data_dir: Path,
    *,
    encoder_name: str = "all-minilm-l6-v2",
    progress: Callable[[str], None] | None = None,
    device: str = "cpu",
) -> dict[str, Any]:
    """Train both heads and write them with their card into ``output``; return the card.

    ``device`` is where the texts are embedded (cpu, or cuda where torch sees a GPU); the heads are fitted on the CPU.
    """
    from dialeval.metrics.quality.features import embed, pair_matrix, pair_texts, utterance_matrix
    from dialeval.models.loading import encoder_card, load_sentence_encoder

    say = progress or (lambda _msg: None)
    start = time.perf_counter()
    pairs = draw_pairs(recipe, data_dir)
    sens = sensible_examples(pairs, recipe.seed, recipe.every_hard)
    flu = fluent_examples(pairs, recipe.seed, recipe.corruptions)
    say(f"{len(pairs)} pairs -> {len(sens)} sensible, {len(flu)} fluent examples")
    encoder, _ = load_sentence_encoder(encoder_name, device)
    texts = pair_texts([e.context for e in sens], [e.response for e in sens]) + [e.text for e in flu]
    t0 = time.perf_counter()
    table = embed(encoder, texts)
    embed_seconds = time.perf_counter() - t0
    say(f"embedded {len(table)} texts in {embed_seconds:.0f} s")
    output.mkdir(parents=True, exist_ok=True)
    validation: dict[str, Any] = {}
    counts: dict[str, Any] = {}
    files: dict[str, str] = {}
    for part, examples, layout in (("sensible", sens, "pair"), ("fluent", flu, "utterance")):
        val = [is_validation(e.group, recipe.seed, recipe.val_share) for e in examples]
        if isinstance(examples[0], SensibleExample):
            s_ex: list[SensibleExample] = examples  # type: ignore[assignment]
            x = pair_matrix([e.context for e in s_ex], [e.response for e in s_ex], table)
        else:
            f_ex: list[FluentExample] = examples  # type: ignore[assignment]
            x = utterance_matrix([e.text for e in f_ex], table)
        y = np.asarray([e.label for e in examples])
        kinds = [e.kind for e in examples]
        tr = ~np.asarray(val)
        head = fit_logistic(x[tr], y[tr], l2=recipe.l2)
        head = LogisticHead.from_json(head.to_json())
        vi = np.flatnonzero(val)
        validation[part] = _figures(head, x[vi], [int(y[i]) for i in vi], [kinds[i] for i in vi])
        counts[part] = {"train": int(tr.sum()), "validation": len(vi), "by_kind": _count(kinds)}
        save_head(head, output / f"{part}.json", layout)
        files[f"{part}.json"] = sha256_file(output / f"{part}.json")
        say(f"{part}: validation {validation[part].get('accuracy')} acc, {validation[part].get('auc')} AUC")
    card = {
        "recipe": {**asdict(recipe), "sources": list(recipe.sources), "corruptions": list(recipe.corruptions)},
        "seed": recipe.seed,
        "data_files": data_files(data_dir, recipe.sources),
        "sources": {name: sum(p.source == name for p in pairs) for name in recipe.sources},
        "examples": counts,
        "validation": validation,
        "encoder": encoder_card(encoder_name),
        "features": {"sensible": "pair", "fluent": "utterance"},
        "seconds": {"total": round(time.perf_counter() - start, 1), "embedding": round(embed_seconds, 1)},
        "machine": machine(device),
        "files": files,
    }
    (output / "card.json").write_text(json.dumps(card, indent=1) + "\n", encoding="utf-8")
    return card


def machine(device: str = "cpu") -> str:
    """Return what a card says of the machine that trained: architecture, CPU vendor, CPUs, torch threads.

    On a CUDA ``device`` it adds ``", steps on <GPU name>"``.

    Example:
        >>> "CPUs, torch threads" in machine() and "steps on" not in machine("cpu")
        True
    """
    import os
    import platform

    import torch

    from dialeval.metrics.quality.onnx import cpu_vendor

    threads = torch.get_num_threads()
    gpu = f", steps on {torch.cuda.get_device_name(torch.device(device))}" if device.startswith("cuda") else ""
    return f"{platform.machine()}, {cpu_vendor() or 'unknown'}, {os.cpu_count()} CPUs, torch threads {threads}{gpu}"


def _count(kinds: Sequence[str]) -> dict[str, int]:
    out: dict[str, int] = {}
    for k in kinds:
        out[k] = out.get(k, 0) + 1
    return dict(sorted(out.items()))
