"""A trained views cross-encoder as the teacher of another: its view probabilities for every training example.

``dialeval quality train-views OUT --teacher DIR`` trains a student (say MiniLM, cheap to run)
on the teacher's soft targets (say the mpnet cross-encoder, too slow for the main job) beside the
hard labels (:func:`dialeval.quality.crosstrain.view_loss`). The teacher scores every training
example the schedule reaches once, before the first step. Its probabilities are kept in shards
of :data:`SHARD` examples, ``OUT/teacher/NNNNN.safetensors``, each written whole as soon as it
is scored and keyed by the teacher's files, where and how it scored (``cpu``, bf16) and the
shard's examples. A run stopped while the teacher scores (on 2 CPU cores the teacher's pass can
take hours) keeps the shards it finished; a rerun reads them back and scores only the rest, and a
run with another teacher or other examples scores again.

Example:
    >>> teacher_key({"adapter.safetensors": "ab", "heads.json": "cd"}, [(("Hi",), "Hello")]) == teacher_key(
    ...     {"adapter.safetensors": "ab", "heads.json": "cd"}, [(("Hi",), "Hello!")])
    False
    >>> teacher_key({"heads.json": "cd"}, [], "cpu") == teacher_key({"heads.json": "cd"}, [], "cuda")
    False
"""

from __future__ import annotations

import hashlib
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

#: The files of a trained views folder a teacher needs.
TEACHER_FILES = ("adapter.safetensors", "heads.json")
#: Examples per shard of the teacher's targets (about 3 minutes of scoring on 2 CPU cores under bf16).
SHARD = 4096


def check_teacher(folder: Path) -> dict[str, str]:
    """Return the sha256 of each of the teacher's :data:`TEACHER_FILES`; fail before any work if one is missing.

    Raises:
        InputError: ``folder`` is not a trained views folder, or its heads are not the three views.
    """
    from dialeval.data._common import sha256_file
    from dialeval.errors import InputError
    from dialeval.metrics.quality.crossenc import VIEWS

    missing = [name for name in TEACHER_FILES if not (folder / name).is_file()]
    if missing:
        raise InputError(f"not a trained views folder: it lacks {', '.join(missing)}", path=folder, field="--teacher")
    try:
        views = json.loads((folder / "heads.json").read_text(encoding="utf-8")).get("views")
    except (OSError, ValueError, AttributeError) as exc:
        raise InputError(f"heads.json does not read as a views head ({exc})", path=folder / "heads.json") from None
    if views != list(VIEWS):
        raise InputError(f"the teacher's views are {views}, not {list(VIEWS)}", path=folder / "heads.json",
                         field="views")  # fmt: skip
    return {name: sha256_file(folder / name) for name in TEACHER_FILES}


def teacher_key(files: dict[str, str], examples: Sequence[tuple[Sequence[str], str]], scored: str = "") -> str:
    """Return the key of a teacher's targets: its files' hashes, how it scored, and every example's text, in order."""
    h = hashlib.sha256(json.dumps([files, scored], sort_keys=True).encode())
    for context, response in examples:
        h.update(json.dumps([list(context), response]).encode())
    return h.hexdigest()


def teacher_targets(
    folder: Path, examples: Sequence[tuple[Sequence[str], str]], out: Path, device: str = "cpu", bf16: bool = False
) -> tuple[Any, dict[str, Any]]:
    """Return the teacher's view probabilities of every example (float32, one row each) and what the card says of it.

    Each shard of :data:`SHARD` examples is read from ``out/teacher/NNNNN.safetensors`` when its
    key is this teacher's, this way of scoring's and these examples'; otherwise it is scored (on
    ``device``, under bfloat16 autocast if ``bf16``) and written there whole or not at all. The
    card's ``seconds`` add up the scoring time of every shard, over all the runs that scored them, and
    its ``machines`` name where they were scored (:func:`dialeval.quality.recipes.machine`).

    Raises:
        InputError: ``folder`` is not a trained views folder (:func:`check_teacher`).
    """
    import torch

    files = check_teacher(folder)
    scored = f"{device.split(':')[0]}{' bf16' if bf16 else ''}"
    folder_out = out / "teacher"
    scorer = _Scorer(folder, device, bf16)
    parts, seconds, machines = [], 0.0, set()
    n_shards = -(-len(examples) // SHARD)
    for n in range(n_shards):
        shard = examples[n * SHARD : (n + 1) * SHARD]
        probs, took, where, fresh = _shard(folder_out / f"{n:05d}.safetensors", teacher_key(files, shard, scored),
                                           shard, scorer)  # fmt: skip
        parts.append(probs)
        seconds += took
        machines.add(where)
        if fresh:
            print(f"teacher: shard {n + 1}/{n_shards} scored ({min(len(examples), (n + 1) * SHARD):,} of "
                  f"{len(examples):,} examples)", file=sys.stderr, flush=True)  # fmt: skip
    card = {"folder": str(folder), "files": files, "encoder": scorer.encoder, "examples": len(examples),
            "scored": scored, "bf16": bf16, "seconds": round(seconds, 1), "machines": sorted(machines)}  # fmt: skip
    return (torch.cat(parts) if parts else torch.empty((0, 3))), card


class _Scorer:
    """The teacher, loaded on its first use only (a run whose shards are all written never loads it)."""

    def __init__(self, folder: Path, device: str, bf16: bool) -> None:
        self.folder, self.device, self.bf16 = folder, device, bf16
        self.model: Any = None
        head = json.loads((folder / "heads.json").read_text(encoding="utf-8"))
        from dialeval.models.loading import DEFAULT_ENCODER

        self.encoder = str(head.get("encoder", DEFAULT_ENCODER))

    def __call__(self, examples: Sequence[tuple[Sequence[str], str]]) -> Any:
        """Return the teacher's view probabilities of ``examples`` (float32)."""
        import torch

        from dialeval.metrics.quality.crossenc import load_views, score_batches
        from dialeval.models.loading import DEFAULT_ENCODER, resolve_encoder_dir

        if self.model is None:
            self.model, self.tokens, _ = load_views(str(self.folder), str(resolve_encoder_dir(DEFAULT_ENCODER)),
                                                    self.device)  # fmt: skip
        pairs = self.tokens.pairs([list(c) for c, _ in examples], [r for _, r in examples])
        with torch.autocast(self.device.split(":")[0], dtype=torch.bfloat16, enabled=self.bf16):
            logits = score_batches(self.model, pairs, max_tokens=2048 if self.device == "cpu" else 65536)
        return torch.sigmoid(torch.tensor(logits, dtype=torch.float32).reshape(len(examples), 3))


def _shard(
    path: Path, key: str, examples: Sequence[tuple[Sequence[str], str]], scorer: _Scorer
) -> tuple[Any, float, str, bool]:
    """Return one shard's probabilities, its scoring's seconds and machine, and whether it was scored now (not read)."""
    from safetensors import safe_open
    from safetensors.torch import save

    from dialeval.atomic import atomic_write
    from dialeval.quality.recipes import machine

    if path.exists():
        with safe_open(str(path), "pt") as f:
            meta = f.metadata() or {}
            if meta.get("key") == key:
                return f.get_tensor("probs"), float(meta["seconds"]), meta.get("machine", "not recorded"), False
    started = time.perf_counter()
    probs = scorer(examples)
    took = time.perf_counter() - started
    where = machine(scorer.device)
    with atomic_write(path, "wb") as fh:
        fh.write(save({"probs": probs.contiguous()}, metadata={"key": key, "seconds": repr(took), "machine": where}))
    return probs, took, where, True
