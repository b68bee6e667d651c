"""The trained evaluator interface and its registry (``dialeval train --model KIND``).

An evaluator is fitted on rated examples, predicts one score per metric input,
and saves itself to a folder. Built-in kinds register in
:mod:`dialeval.trained.models` and :mod:`dialeval.trained.minilm`; a plugin
registers through the ``dialeval.evaluators`` entry-point group.

Example:
    >>> EVALUATORS.kind, TASKS
    ('evaluator', ('regression', 'classification'))
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar, NamedTuple

from dialeval.errors import DialevalError, InputError
from dialeval.metrics.base import MetricInput
from dialeval.registry import Registry
from dialeval.trained.data import Example, to_label
from dialeval.words import counted

TASKS = ("regression", "classification")


class Bound(NamedTuple):
    """The values a numeric parameter takes: from ``low`` (excluded when ``strict``) up to ``high``.

    Example:
        >>> Bound(0, 1, strict=True).describe(), Bound(1).describe()
        ('greater than 0 and at most 1', 'at least 1')
    """

    low: float
    high: float | None = None
    strict: bool = False

    def holds(self, value: float) -> bool:
        """Return whether ``value`` is in bounds."""
        above = value > self.low if self.strict else value >= self.low
        return above and (self.high is None or value <= self.high)

    def describe(self) -> str:
        """Return the bounds as words."""
        low = f"greater than {self.low:g}" if self.strict else f"at least {self.low:g}"
        return low if self.high is None else f"{low} and at most {self.high:g}"


class Evaluator(ABC):
    """A trainable evaluator: fit on examples, predict scores for metric inputs, save to a folder."""

    kind: ClassVar[str]
    defaults: ClassVar[dict[str, Any]] = {}
    #: The values each numeric parameter takes, as the library it goes to accepts them (a parameter whose
    #: default is an integer takes integers only); checked when the evaluator is made, before any work.
    bounds: ClassVar[dict[str, Bound]] = {}
    classifier_only: ClassVar[bool] = False

    def __init__(self, task: str = "regression", seed: int = 0, **params: Any) -> None:
        if task not in TASKS:
            raise InputError(f'unknown task "{task}"; use {", ".join(TASKS)}', field="--task")
        unknown = set(params) - set(self.defaults)
        if unknown:
            known = ", ".join(sorted(self.defaults)) or "none"
            raise InputError(
                f"unknown parameter(s) {', '.join(sorted(unknown))} for {self.kind}; known: {known}",
                field="--model-param",
            )
        self.task = "classification" if self.classifier_only else task
        self.seed = seed
        self.params: dict[str, Any] = {**self.defaults, **{k: self._checked(k, v) for k, v in params.items()}}
        self.info: dict[str, Any] = {}

    def _checked(self, key: str, value: Any) -> Any:
        """Return ``value``, an integer where the default is one; refuse a wrong type or a value out of :attr:`bounds`.

        Raises:
            InputError: Naming ``--model-param`` and ``kind.key``.
        """
        default = self.defaults[key]
        if not isinstance(default, int | float) or isinstance(default, bool):
            return value
        whole = isinstance(default, int)
        number = isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
        if not number or (whole and not float(value).is_integer()):
            kind = "an integer" if whole else "a finite number"
            raise InputError(f"{self.kind}.{key} takes {kind}, got {value!r}", field="--model-param")
        bound = self.bounds.get(key)
        if bound is not None and not bound.holds(value):
            raise InputError(f"{self.kind}.{key} must be {bound.describe()}, got {value!r}", field="--model-param")
        return int(value) if whole else value

    def check(self) -> None:
        """Check what the parameters name (a model folder, metric families) before any work; nothing by default.

        Raises:
            InputError: Naming ``--model-param``.
        """
        return

    def fit(self, examples: Sequence[Example]) -> dict[str, Any]:
        """Train on ``examples``; return what training reported (seconds, losses, chosen penalty)."""
        import time

        if not examples:
            raise InputError("no training examples")
        if self.task == "classification" and len({e.label for e in examples}) < 2:
            raise InputError("classification needs at least two classes among the training labels", field="--train")
        # a constant was fitted, saved and scored ("spearman undefined"); one example is the model's to refuse
        if self.task == "regression" and len(examples) > 1 and len(targets := {e.target for e in examples}) == 1:
            raise InputError(f"all {counted(len(examples), 'training example')} have the target {targets.pop():g}: a "
                             "regression model learns that constant and predicts it for every response; train on "
                             "responses rated differently", field="--train")  # fmt: skip
        start = time.perf_counter()
        self._fit(examples)
        self.info["fit_seconds"] = round(time.perf_counter() - start, 2)
        return self.info

    def y(self, examples: Sequence[Example]) -> list[float]:
        """Return the training target of the task."""
        return [float(e.label) if self.task == "classification" else e.target for e in examples]

    @abstractmethod
    def _fit(self, examples: Sequence[Example]) -> None: ...

    @abstractmethod
    def predict(self, items: Sequence[MetricInput]) -> list[float]:
        """Return one score per item (regression output, or expected class / 2)."""

    def predict_labels(self, scores: Sequence[float]) -> list[int]:
        """Return the 0/1/2 label of each score."""
        return [to_label(min(1.0, max(0.0, s))) for s in scores]

    @abstractmethod
    def save(self, folder: Path) -> list[str]:
        """Write the fitted model into ``folder``; return the file names written."""

    @classmethod
    @abstractmethod
    def load(cls, folder: Path, card: dict[str, Any]) -> Evaluator:
        """Rebuild a fitted evaluator from ``folder`` and its card."""

    def feature_signatures(self) -> dict[str, str]:
        """Return the signatures of the metrics used as features (none for text models)."""
        return {}


def finite_scores(scores: list[float], kind: str) -> list[float]:
    """Return ``scores``, or refuse them if any is NaN or infinite (a diverged or singular fit).

    Example:
        >>> finite_scores([0.5, 1.0], "tfidf-lr")
        [0.5, 1.0]
        >>> finite_scores([0.5, float("nan")], "tfidf-lr")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        dialeval.errors.DialevalError: the fitted tfidf-lr model predicted 1 non-finite score(s) of 2; refit it ...
    """
    bad = sum(not math.isfinite(s) for s in scores)
    if bad:
        raise DialevalError(f"the fitted {kind} model predicted {bad} non-finite score(s) of {len(scores)}; "
                            "refit it with other --model-param values")  # fmt: skip
    return scores


#: Kind (``tfidf-lr``, ``ensemble``, ``minilm``, ...) -> evaluator class.
EVALUATORS: Registry[type[Evaluator]] = Registry("evaluator")
