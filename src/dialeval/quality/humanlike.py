"""A human-or-machine view: the true next turn against a small LM's reply (``dialeval quality train-humanlike``).

The negatives of the other views are people's own words out of place; what rated sets rate
low is mostly what weak systems write. For each drawn context of the allowed corpora
(:func:`dialeval.quality.recipes.draw_pairs` of the ``all`` recipe), the packaged
SmolLM2-135M-Instruct (llama.cpp, in process) completes the last :data:`TURNS` turns written
as an ``A:``/``B:`` transcript (:func:`prompt`), greedily, up to the first line break.
A class-balanced logistic head over the sensible head's frozen MiniLM pair features
separates the true turn from the generated one; 10% of the dialogues are held in.

Written into the output folder: ``generated.jsonl`` (every context's reply, so that the
head can be refitted from the same replies: llama.cpp's batched decoding may change a greedy
reply between runs), ``humanlike.json`` (layout ``pair``) and ``card.json``, the three at the
end and together, or none. Replies are kept in a request cache (``OUT/requests.sqlite``): a
killed run resumes.

Example:
    >>> print(prompt(("hi", "hello, how are you?", "fine, and you?")))
    The following is a conversation between two people.
    A: hi
    B: hello, how are you?
    A: fine, and you?
    B:
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

#: Context turns in the prompt.
TURNS = 3
#: True pairs drawn from each allowed source.
PER_SOURCE = 700
#: Most tokens of a generated reply.
MAX_TOKENS = 40
#: Share of dialogues held in.
VAL_SHARE = 0.1


def prompt(context: Sequence[str]) -> str:
    """Return the raw completion prompt: the last :data:`TURNS` turns as a transcript, the next speaker open."""
    turns = list(context)[-TURNS:]
    lines = [f"{'AB'[i % 2]}: {t}" for i, t in enumerate(turns)]
    return "\n".join(["The following is a conversation between two people.", *lines, f"{'AB'[len(turns) % 2]}:"])


def generate(contexts: Sequence[Sequence[str]], cache_path: Path, say: Any = print) -> list[str]:
    """Return SmolLM2's greedy reply to each context (cached: a rerun or a resumed run asks only for the rest)."""
    from dialeval.backends.base import ChatRequest
    from dialeval.backends.cache import RequestCache
    from dialeval.backends.llamacpp import LlamaCppBackend

    requests = [ChatRequest(messages=(("user", prompt(c)),), max_tokens=MAX_TOKENS, raw=True, stop=("\n",))
                for c in contexts]  # fmt: skip
    cache = RequestCache(cache_path)
    backend = LlamaCppBackend(n_parallel=8)
    sig = backend.signature
    out: list[str | None] = [None if (hit := cache.get(sig, r)) is None else hit.text for r in requests]
    todo = [i for i, t in enumerate(out) if t is None]
    say(f"{len(requests) - len(todo)} replies cached, {len(todo)} to generate")

    def ask(i: int) -> tuple[int, str]:
        answer = backend.chat(requests[i])
        cache.put(sig, requests[i], answer)
        return i, answer.text

    start = time.perf_counter()
    with ThreadPoolExecutor(backend.max_in_flight) as pool:
        for n, (i, text) in enumerate(pool.map(ask, todo), 1):
            out[i] = text
            if n % 500 == 0:
                say(f"{n} of {len(todo)} generated in {time.perf_counter() - start:.0f} s")
    backend.close()
    cache.close()
    return [t.strip() if t else "" for t in out]


def train(output: Path, seed: int = 0, per_source: int = PER_SOURCE, say: Any = print) -> dict[str, Any]:
    """Generate the replies, fit the head and write it with its card into ``output``; return the card."""
    import numpy as np

    from dialeval.atomic import all_or_nothing, atomic_write
    from dialeval.errors import InputError
    from dialeval.metrics.quality.features import embed, pair_matrix, pair_texts
    from dialeval.metrics.quality.heads import auc, fit_logistic, save_head
    from dialeval.models.loading import encoder_card, load_sentence_encoder
    from dialeval.paths import shared_data_dir
    from dialeval.quality.recipes import RECIPES, data_files, draw_pairs, is_validation

    data = shared_data_dir()
    if data is None:
        raise InputError("no shared data folder with the corpora: set DIALEVAL_DATA")
    start = time.perf_counter()
    recipe = dataclasses.replace(RECIPES["all"], per_source=per_source, seed=seed)
    pairs = draw_pairs(recipe, data)
    output.mkdir(parents=True, exist_ok=True)
    replies = generate([p.context for p in pairs], output / "requests.sqlite", say)
    gen_seconds = time.perf_counter() - start
    contexts: list[list[str]] = []
    responses: list[str] = []
    labels: list[int] = []
    groups: list[str] = []
    for p, r in zip(pairs, replies, strict=True):
        keep = [(p.response, 1)] + ([(r, 0)] if r and r != p.response else [])
        for text, label in keep:
            contexts.append(list(p.context))
            responses.append(text)
            labels.append(label)
            groups.append(f"{p.source}/{p.dialogue}")
    encoder, _ = load_sentence_encoder("all-minilm-l6-v2", "cpu")
    x = pair_matrix(contexts, responses, embed(encoder, pair_texts(contexts, responses)))
    y = np.asarray(labels)
    val = np.asarray([is_validation(g, seed, VAL_SHARE) for g in groups])
    head = fit_logistic(x[~val], y[~val], l2=recipe.l2)
    held_in = {"examples": int(val.sum()), "auc": round(auc(head.logit(x[val]), y[val]), 4)}
    card = {
        "recipe": {"per_source": per_source, "sources": list(recipe.sources), "generator": "SmolLM2-135M-Instruct "
                   "Q4_1 (llama.cpp, 8 slots), greedy", "prompt": prompt(["<turn>"] * TURNS),
                   "max_tokens": MAX_TOKENS, "features": "pair", "model": "class-balanced logistic",
                   "l2": recipe.l2, "val_share": VAL_SHARE},
        "seed": seed, "data_files": data_files(data, recipe.sources),
        "examples": {"true": int(y.sum()), "generated": int(len(y) - y.sum()),
                     "empty_or_equal_replies": len(pairs) - int(len(y) - y.sum())},
        "held_in": held_in,
        "encoder": encoder_card(),
        "seconds": {"generation": round(gen_seconds, 1), "total": round(time.perf_counter() - start, 1)},
    }  # fmt: skip
    # all three or none: written as the run went, an interrupt while embedding left this run's replies beside an
    # earlier run's head and card (and one while writing, half a generated.jsonl)
    with all_or_nothing(output):
        with atomic_write(output / "generated.jsonl") as fh:
            fh.writelines(json.dumps({"source": p.source, "dialogue": p.dialogue, "reply": r}, ensure_ascii=False)
                          + "\n" for p, r in zip(pairs, replies, strict=True))
        save_head(head, output / "humanlike.json", "pair")
        with atomic_write(output / "card.json") as fh:
            fh.write(json.dumps(card, indent=1) + "\n")
    say("held-in: " + json.dumps(held_in))
    return card


def main(argv: Sequence[str] | None = None, prog: str = "python -m dialeval.quality.humanlike") -> None:
    """Command line: ``OUT [--seed S] [--per-source N]``."""
    from dialeval.quality.argtypes import SEED, count, folder

    ap = argparse.ArgumentParser(prog=prog, description="Learn to tell a true next turn from a small LM's reply.")
    ap.add_argument("output", type=folder, help="folder for generated.jsonl, humanlike.json and card.json")
    ap.add_argument("--seed", type=SEED, default=0,
                    help="seeds the draw of pairs and the held-in split (default 0)")
    ap.add_argument("--per-source", type=count(1), default=PER_SOURCE,
                    help=f"true pairs drawn from each allowed source (default {PER_SOURCE})")
    args = ap.parse_args(argv)
    train(args.output, args.seed, args.per_source)


if __name__ == "__main__":
    from dialeval.quality.cli import module_main

    module_main("dialeval.quality.humanlike")
