"""Frozen MiniLM features of (context, response) pairs and of single utterances.

Every text is embedded once with the packaged all-MiniLM-L6-v2 (mean pooled, unit
length). For a pair, ``u`` is the last context turn, ``w`` the last
:data:`WINDOW` context turns joined, ``v`` the response:
``[v, u*v, |u-v|, w*v, cos(u,v), cos(w,v)]`` (1538 numbers). For an utterance:
``[v, log(1+words), distinct-1, repeated-bigram share]`` (387 numbers; the last three
see word repeats that mean pooling blurs).

Example:
    >>> [round(x, 3) for x in surface_features("I I like like it")]
    [1.792, 0.6, 0.5]
    >>> context_window(("a", "b", "c", "d"))
    'b c d'
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

#: Context turns in the window embedding ``w``.
WINDOW = 3
FloatArray = NDArray[np.float32]


def context_window(context: Sequence[str]) -> str:
    """Return the last :data:`WINDOW` context turns joined by spaces."""
    return " ".join(t.strip() for t in context[-WINDOW:])


def surface_features(text: str) -> list[float]:
    """Return ``[log(1+words), distinct-1, share of bigrams that repeat an earlier one or a word twice in a row]``."""
    words = text.lower().split()
    if not words:
        return [0.0, 0.0, 0.0]
    bigrams = list(itertools.pairwise(words))
    doubled = sum(a == b for a, b in bigrams)
    repeated = len(bigrams) - len(set(bigrams))
    share = (doubled + repeated) / len(bigrams) if bigrams else 0.0
    return [math.log1p(len(words)), len(set(words)) / len(words), float(share)]


def length_batches(lengths: Sequence[int], max_tokens: int = 2048, max_items: int = 64) -> list[list[int]]:
    """Cut positions, shortest first, into batches of at most ``max_tokens`` padded tokens (and ``max_items``).

    Sorted lengths pad little; a token budget keeps a batch of long inputs small (on two
    CPU cores, batches of a few thousand tokens run faster than wide padded ones).

    Example:
        >>> length_batches([5, 1, 4, 2], max_tokens=8)
        [[1, 3], [2], [0]]
    """
    out: list[list[int]] = []
    for i in sorted(range(len(lengths)), key=lambda n: lengths[n]):
        if out and len(out[-1]) < max_items and (len(out[-1]) + 1) * lengths[i] <= max_tokens:
            out[-1].append(i)
        else:
            out.append([i])
    return out


def embed(encoder: Any, texts: Sequence[str], max_tokens: int = 2048) -> dict[str, FloatArray]:
    """Return ``{text: unit-length float32 embedding}``, each distinct text encoded once, in :func:`length_batches`."""
    unique = sorted(set(texts))
    if not unique:
        return {}
    lengths = encoder.tokenizer(unique, truncation=True, max_length=encoder.max_seq_length, return_length=True)
    out: dict[str, FloatArray] = {}
    for idx in length_batches(lengths["length"], max_tokens):
        part = [unique[i] for i in idx]
        vecs = encoder.encode(part, batch_size=len(part), convert_to_numpy=True, normalize_embeddings=True)
        out.update((t, np.asarray(v, dtype=np.float32)) for t, v in zip(part, vecs, strict=True))
    return out


def pair_matrix(
    contexts: Sequence[Sequence[str]], responses: Sequence[str], table: dict[str, FloatArray]
) -> FloatArray:
    """Return the pair features of every (context, response), one row each (an empty context reads as "")."""
    u = np.stack([table[c[-1].strip() if c else ""] for c in contexts])
    w = np.stack([table[context_window(c)] for c in contexts])
    v = np.stack([table[r] for r in responses])
    cos_u = np.sum(u * v, axis=1, keepdims=True)
    cos_w = np.sum(w * v, axis=1, keepdims=True)
    return np.concatenate([v, u * v, np.abs(u - v), w * v, cos_u, cos_w], axis=1).astype(np.float32)


def pair_texts(contexts: Sequence[Sequence[str]], responses: Sequence[str]) -> list[str]:
    """Return every text :func:`pair_matrix` looks up."""
    out = list(responses)
    for c in contexts:
        out.append(c[-1].strip() if c else "")
        out.append(context_window(c))
    return out


def utterance_matrix(texts: Sequence[str], table: dict[str, FloatArray]) -> FloatArray:
    """Return the utterance features of every text, one row each."""
    v = np.stack([table[t] for t in texts])
    s = np.asarray([surface_features(t) for t in texts], dtype=np.float32)
    return np.concatenate([v, s], axis=1).astype(np.float32)
