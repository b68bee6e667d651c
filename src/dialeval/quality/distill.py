"""A trained views cross-encoder as the teacher of another: its view probabilities for every training example.

``dialeval quality train-views OUT --teacher DIR`` trains a student (say MiniLM, cheap to run)
on the teacher's soft targets (say the mpnet cross-encoder, too slow for the main job) beside the
hard labels (:func:`dialeval.quality.crosstrain.view_loss`). The teacher scores every training
example the schedule reaches once, before the first step; its probabilities are kept in
``OUT/teacher.safetensors`` under a key of the teacher's files and the examples, so a resumed run
reads them back and a run with another teacher or other examples scores again.

Example:
    >>> teacher_key({"adapter.safetensors": "ab", "heads.json": "cd"}, [(("Hi",), "Hello")]) == teacher_key(
    ...     {"adapter.safetensors": "ab", "heads.json": "cd"}, [(("Hi",), "Hello!")])
    False
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

#: The files of a trained views folder a teacher needs.
TEACHER_FILES = ("adapter.safetensors", "heads.json")


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


def teacher_key(files: dict[str, str], examples: Sequence[tuple[Sequence[str], str]]) -> str:
    """Return the key of a teacher's targets: its files' hashes and every example's context and response, in order."""
    h = hashlib.sha256(json.dumps(files, sort_keys=True).encode())
    for context, response in examples:
        h.update(json.dumps([list(context), response]).encode())
    return h.hexdigest()


def teacher_targets(
    folder: Path, examples: Sequence[tuple[Sequence[str], str]], out: Path, device: str = "cpu", bf16: bool = False
) -> tuple[Any, dict[str, Any]]:
    """Return the teacher's view probabilities of every example (float32, one row each) and what the card says of it.

    Read from ``out/teacher.safetensors`` when its key is this teacher's and these examples';
    otherwise scored (on ``device``, under bfloat16 autocast if ``bf16``) and written there
    whole or not at all.

    Raises:
        InputError: ``folder`` is not a trained views folder (:func:`check_teacher`).
    """
    import torch
    from safetensors import safe_open
    from safetensors.torch import save_file

    from dialeval.metrics.quality.crossenc import load_views, score_batches
    from dialeval.models.loading import DEFAULT_ENCODER, resolve_encoder_dir

    files = check_teacher(folder)
    key = teacher_key(files, examples)
    path = out / "teacher.safetensors"
    if path.exists():
        with safe_open(str(path), "pt") as f:
            meta = f.metadata() or {}
            if meta.get("key") == key:
                return f.get_tensor("probs"), json.loads(meta["card"])
    started = time.perf_counter()
    model, tokens, head = load_views(str(folder), str(resolve_encoder_dir(DEFAULT_ENCODER)), device)
    pairs = tokens.pairs([list(c) for c, _ in examples], [r for _, r in examples])
    with torch.autocast(device.split(":")[0], dtype=torch.bfloat16, enabled=bf16):
        logits = score_batches(model, pairs, max_tokens=2048 if device == "cpu" else 65536)
    probs = torch.sigmoid(torch.tensor(logits, dtype=torch.float32))
    card = {"folder": str(folder), "files": files, "encoder": head.get("encoder", DEFAULT_ENCODER),
            "examples": len(examples), "bf16": bf16, "seconds": round(time.perf_counter() - started, 1)}  # fmt: skip
    out.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    save_file({"probs": probs.contiguous()}, str(tmp), metadata={"key": key, "card": json.dumps(card)})
    tmp.replace(path)
    return probs, card
