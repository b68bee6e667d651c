"""Train/test splits by context, never by row: no context is ever on both sides.

* :func:`context_folds`: k folds of the contexts (in-benchmark cross-validation).
* :func:`cross_benchmark`: train on some benchmarks, test on one never seen.
* :func:`leave_one_group_out`: one fold per system or domain. Where the held-out
  group's contexts are also answered by other groups (every USR context has a
  response of every system), the contexts are first split in two halves (seeded):
  the model trains on the other groups' items of one half and is tested on the
  held-out group's items of the other half.

Every function returns :class:`Split` objects whose ``check()`` raises if a context leaks.

Example:
    >>> from dialeval.trained.data import Example
    >>> from dialeval.metrics.base import MetricInput
    >>> ex = [Example(f"{c}{s}", "b", f"c{c}", f"d{c}", f"s{s}", "b", "t", MetricInput("t"), 1.0, 0.5, 1)
    ...       for c in range(6) for s in range(2)]
    >>> folds = context_folds(ex, k=3, seed=0)
    >>> [(len(f.train), len(f.test)) for f in folds]
    [(8, 4), (8, 4), (8, 4)]
    >>> [f.name for f in leave_one_group_out(ex, "system")]
    ['system=s0', 'system=s1']
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

from dialeval.errors import InputError
from dialeval.trained.data import Example

GROUP_KEYS = ("system", "domain", "benchmark")


@dataclass(frozen=True)
class Split:
    """One train/test pair."""

    name: str
    train: list[Example]
    test: list[Example]

    def check(self) -> Split:
        """Raise unless both sides are non-empty and share no context; return self."""
        if not self.train or not self.test:
            raise InputError(f'split "{self.name}" has {len(self.train)} train and {len(self.test)} test items')
        shared = {e.group_context for e in self.train} & {e.group_context for e in self.test}
        if shared:
            raise InputError(f'split "{self.name}" has {len(shared)} context(s) on both sides, e.g. {min(shared)}')
        return self


def _contexts(examples: Sequence[Example]) -> list[str]:
    return sorted({e.group_context for e in examples})


def context_folds(examples: Sequence[Example], k: int = 5, seed: int = 0) -> list[Split]:
    """Return ``k`` folds; each context is in exactly one test fold."""
    ctx = _contexts(examples)
    if k < 2:
        raise InputError(f"must be at least 2, got {k}", field="--folds")
    if k > len(ctx):
        raise InputError(f"{k} folds need at least {k} contexts; --train has {len(ctx)}", field="--folds")
    random.Random(seed).shuffle(ctx)
    fold_of = {c: i % k for i, c in enumerate(ctx)}
    return [
        Split(
            f"fold{i + 1}/{k}",
            [e for e in examples if fold_of[e.group_context] != i],
            [e for e in examples if fold_of[e.group_context] == i],
        ).check()
        for i in range(k)
    ]


def cross_benchmark(train: Sequence[Example], test: Sequence[Example]) -> Split:
    """Return the transfer split; the test benchmarks must not appear in training."""
    overlap = {e.benchmark for e in train} & {e.benchmark for e in test}
    if overlap:
        raise InputError(f"benchmark(s) {', '.join(sorted(overlap))} in both train and test", field="--test")
    names = "+".join(sorted({e.benchmark for e in test}))
    return Split(f"test={names}", list(train), list(test)).check()


def _key(e: Example, by: str) -> str:
    return str(getattr(e, by))


def leave_one_group_out(examples: Sequence[Example], by: str, seed: int = 0) -> list[Split]:
    """Return one split per value of ``by`` (``system``, ``domain`` or ``benchmark``), held out."""
    if by not in GROUP_KEYS:
        raise InputError(f'cannot group by "{by}"; use {", ".join(GROUP_KEYS)}', field="--logo")
    groups = sorted({_key(e, by) for e in examples})
    if len(groups) < 2:
        raise InputError(f'only one {by} ("{groups[0] if groups else ""}"): nothing to hold out', field="--logo")
    ctx = _contexts(examples)
    random.Random(seed).shuffle(ctx)
    half_b = set(ctx[len(ctx) // 2 :])
    splits = []
    for g in groups:
        held = [e for e in examples if _key(e, by) == g]
        rest = [e for e in examples if _key(e, by) != g]
        if {e.group_context for e in held} & {e.group_context for e in rest}:
            held = [e for e in held if e.group_context in half_b]
            rest = [e for e in rest if e.group_context not in half_b]
            if not held or not rest:  # the error was "split ... has 0 train and 1 test items", with no option or why
                raise _empty_half(by, g, len(ctx), rest, held, seed)
        splits.append(Split(f"{by}={g}", rest, held).check())
    return splits


def _empty_half(by: str, group: str, n_contexts: int, rest: list[Example], held: list[Example],
                seed: int) -> InputError:
    """Return the error of a held-out group whose halved contexts leave one side of its split empty."""
    from dialeval.words import counted

    side = f'the test half holds no response of "{group}"' if not held else \
        f"the training half holds no response of another {by}"  # fmt: skip
    return InputError(
        f'{by} "{group}" answers contexts that other {by}s answer too, so the contexts are halved (by --seed {seed}): '
        f"the model trains on the other {by}s' responses to one half and is tested on those of \"{group}\" to the "
        f"other; of the {counted(n_contexts, 'context')}, {side} ({len(rest)} train, {len(held)} test items): give "
        "more contexts (a larger --limit, if given) or another --seed",
        field="--logo",
    )
