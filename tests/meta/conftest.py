"""USR Topical-Chat as dialeval records, built with plain json (no dialeval loader)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

from dialeval.schema import Rating, Score


@dataclass
class Usr:
    contexts: list[dict]
    scores: list[Score]
    ratings: list[Rating]

    def item_ids(self) -> list[str]:
        return [f"tc{c}:{r['model']}" for c, ctx in enumerate(self.contexts) for r in ctx["responses"]]


def build_usr(path: Path, n_contexts: int | None = None) -> Usr:
    contexts = json.loads(path.read_text())[:n_contexts]
    rng = np.random.default_rng(7)
    scores, ratings = [], []
    for c, ctx in enumerate(contexts):
        for resp in ctx["responses"]:
            item = f"tc{c}:{resp['model']}"
            keys = {
                "context_id": f"tc{c}",
                "dialogue_id": f"tc{c}",
                "system": resp["model"],
                "tags": {"subset": "even" if c % 2 == 0 else "odd"},
            }
            scores.append(Score(item_id=item, metric="len", value=float(len(resp["response"].split())), **keys))
            scores.append(Score(item_id=item, metric="noise", value=float(rng.normal()), **keys))
            for dim in ("Overall", "Natural", "Uses Knowledge"):
                for annotator, value in zip(ctx["annotators"], resp[dim], strict=True):
                    ratings.append(Rating(item_id=item, dimension=dim, annotator=annotator, value=value))
    return Usr(contexts, scores, ratings)


@pytest.fixture(scope="session")
def usr(shared_data: Path) -> Usr:
    return build_usr(shared_data / "usr" / "usr_topical_chat.json")


@pytest.fixture(scope="session")
def usr_path(shared_data: Path) -> Path:
    return shared_data / "usr" / "usr_topical_chat.json"


@pytest.fixture(scope="session")
def make_usr(usr_path: Path):
    """Build USR records from the first ``n`` contexts (all when None)."""
    return lambda n=None: build_usr(usr_path, n)
