"""Learn utterance-level engagement from Chit-Chat's conversation ratings (``dialeval quality train-engagement``).

PredictiveEngagement (Ghazarian et al., 2020) learned an utterance-level engagement score
from conversation-level labels by giving every utterance the label of its conversation.
The allowed corpora carry one such signal at scale: 5,988 Chit-Chat conversations rated
1-10 for witty, upbeat and interesting. Each example is one turn of a rated conversation
(up to :data:`PER_CONVERSATION`, drawn with the seed) with the turns before it as context;
its target is the conversation's mean rating (:func:`conversation_target`). A ridge
regression over the sensible head's frozen MiniLM pair features
(:func:`dialeval.metrics.quality.features.pair_matrix`) with the ensemble's fixed penalty
is fitted on 90% of the conversations and checked on the rest (a seeded hash of the
conversation id). Written: ``OUT/engagement.json`` (a linear head, layout ``pair``) and
``OUT/card.json`` (data hash, recipe, counts, held-in Spearman at turn and conversation
level, seconds).

Example:
    >>> conversation_target({"witty": 4, "upbeat": 6, "interesting": 8})
    6.0
    >>> conversation_target({"witty": 4}) is None
    True
"""

from __future__ import annotations

import argparse
import json
import math
import random
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

#: Turns drawn from each rated conversation (at most).
PER_CONVERSATION = 8
#: The conversation ratings whose mean is the target.
RATINGS = ("witty", "upbeat", "interesting")
#: Share of conversations held in for the validation figures.
VAL_SHARE = 0.1


def conversation_target(ratings: Mapping[str, Any] | None) -> float | None:
    """Return the mean of the :data:`RATINGS` (each 1-10), or None if one is missing or out of range."""
    values = [(ratings or {}).get(k) for k in RATINGS]
    numbers = [float(v) for v in values if isinstance(v, int | float) and not isinstance(v, bool)]
    if len(numbers) != len(RATINGS) or not all(1 <= v <= 10 for v in numbers):
        return None
    return sum(numbers) / len(numbers)


@dataclass(frozen=True)
class EngagementExample:
    """One turn of a rated conversation: its context, the turn, and the conversation's mean rating."""

    group: str
    context: tuple[str, ...]
    response: str
    target: float


def examples(seed: int = 0, per_conversation: int = PER_CONVERSATION, limit: int | None = None
             ) -> list[EngagementExample]:  # fmt: skip
    """Return up to ``per_conversation`` turns (not the first) of each rated conversation among the first ``limit``."""
    from dialeval.data.chitchat import _corpus, load_chitchat

    corpus = _corpus()
    rng = random.Random(seed)
    out = []
    for did, dialogue in load_chitchat(limit).dialogues.items():
        target = conversation_target(corpus[did].get("ratings"))
        texts = [t.text for t in dialogue.turns]
        if target is None or len(texts) < 2:  # unrated, or no turn with a context before it
            continue
        for k in sorted(rng.sample(range(1, len(texts)), min(per_conversation, len(texts) - 1))):
            out.append(EngagementExample(f"chitchat/{did}", tuple(texts[:k]), texts[k], target))
    return out


def train(output: Path, seed: int = 0, per_conversation: int = PER_CONVERSATION, limit: int | None = None,
          say: Any = print) -> dict[str, Any]:  # fmt: skip
    """Fit the engagement head and write it with its card into ``output``; return the card."""
    import numpy as np
    from scipy.stats import spearmanr

    from dialeval.atomic import all_or_nothing, atomic_write
    from dialeval.errors import InputError
    from dialeval.metrics.quality.features import embed, pair_matrix, pair_texts
    from dialeval.metrics.quality.heads import save_head
    from dialeval.models.loading import encoder_card, load_sentence_encoder
    from dialeval.quality.ensemble import ALPHA, fit_ridge
    from dialeval.quality.recipes import data_files, is_validation

    start = time.perf_counter()
    ex = examples(seed, per_conversation, limit)
    if not ex:
        raise InputError("no rated Chit-Chat conversation to learn from", field="limit")
    say(f"{len(ex)} turns of {len({e.group for e in ex})} rated conversations")
    encoder, _ = load_sentence_encoder("all-minilm-l6-v2", "cpu")
    contexts, responses = [list(e.context) for e in ex], [e.response for e in ex]
    t0 = time.perf_counter()
    table = embed(encoder, pair_texts(contexts, responses))
    say(f"embedded {len(table)} texts in {time.perf_counter() - t0:.0f} s")
    x = pair_matrix(contexts, responses, table)
    y = np.asarray([e.target for e in ex])
    val = np.asarray([is_validation(e.group, seed, VAL_SHARE) for e in ex])
    head = fit_ridge(x[~val], y[~val], np.ones(int((~val).sum())), alpha=ALPHA)
    pred = head.logit(x[val])
    groups = [e.group for e, v in zip(ex, val, strict=True) if v]
    by_conv: dict[str, list[float]] = {}
    for g, p in zip(groups, pred, strict=True):
        by_conv.setdefault(g, []).append(float(p))
    conv_target = {e.group: e.target for e in ex}
    held_in = {
        "turns": int(val.sum()), "conversations": len(by_conv),
        "turn_spearman": _rounded(spearmanr(pred, y[val])[0]),
        "conversation_spearman": _rounded(spearmanr([np.mean(v) for v in by_conv.values()],
                                                    [conv_target[g] for g in by_conv])[0]),
    }  # fmt: skip
    card = {
        "recipe": {"per_conversation": per_conversation, "limit": limit, "target": f"mean of {', '.join(RATINGS)}",
                   "features": "pair", "model": "ridge", "alpha": ALPHA, "val_share": VAL_SHARE},
        "seed": seed, "data_files": data_files(Path("."), ("chitchat",)),
        "examples": {"train": int((~val).sum()), "validation": int(val.sum())}, "held_in": held_in,
        "encoder": encoder_card(),
        "seconds": round(time.perf_counter() - start, 1),
    }  # fmt: skip
    with all_or_nothing(output):  # both files or neither: an earlier run's head never beside this run's card
        save_head(head, output / "engagement.json", "pair")
        with atomic_write(output / "card.json") as f:
            f.write(json.dumps(card, indent=1, allow_nan=False) + "\n")
    say("held-in: " + json.dumps(held_in))
    return card


def _rounded(value: float) -> float | None:
    """Return ``value`` to four places, or None where it is undefined (a Spearman of fewer than two held-in turns).

    Example:
        >>> _rounded(0.123456), _rounded(float("nan"))
        (0.1235, None)
    """
    return round(float(value), 4) if math.isfinite(value) else None


def main(argv: Sequence[str] | None = None, prog: str = "python -m dialeval.quality.engagement") -> None:
    """Command line: ``OUT [--seed S] [--per-conversation N] [--limit N]``."""
    from dialeval.quality.argtypes import SEED, count, folder

    ap = argparse.ArgumentParser(prog=prog, description="Learn utterance engagement from Chit-Chat's ratings.")
    ap.add_argument("output", type=folder, help="folder for engagement.json and card.json")
    ap.add_argument("--seed", type=SEED, default=0,
                    help="seeds the draw of turns and the held-in split (default 0)")
    ap.add_argument("--per-conversation", type=count(1), default=PER_CONVERSATION,
                    help=f"turns drawn per rated conversation (default {PER_CONVERSATION})")
    ap.add_argument("--limit", type=count(1), default=None, help="only the first N conversations (a quick look)")
    args = ap.parse_args(argv)
    train(args.output, args.seed, args.per_conversation, args.limit)


if __name__ == "__main__":
    from dialeval.quality.cli import module_main

    module_main("dialeval.quality.engagement")
