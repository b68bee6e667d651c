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

from abc import ABC, abstractmethod
from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar

from dialeval.errors import InputError
from dialeval.metrics.base import MetricInput
from dialeval.registry import Registry
from dialeval.trained.data import Example, to_label

TASKS = ("regression", "classification")


class Evaluator(ABC):
    """A trainable evaluator: fit on examples, predict scores for metric inputs, save to a folder."""

    kind: ClassVar[str]
    defaults: ClassVar[dict[str, Any]] = {}
    classifier_only: ClassVar[bool] = False

    def __init__(self, task: str = "regression", seed: int = 0, **params: Any) -> None:
        if task not in TASKS:
            raise InputError(f'unknown task "{task}"; use {", ".join(TASKS)}', field="--task")
        unknown = set(params) - set(self.defaults)
        if unknown:
            known = ", ".join(sorted(self.defaults)) or "none"
            raise InputError(f"unknown parameter(s) {', '.join(sorted(unknown))} for {self.kind}; known: {known}")
        self.task = "classification" if self.classifier_only else task
        self.seed = seed
        self.params: dict[str, Any] = {**self.defaults, **params}
        self.info: dict[str, Any] = {}

    def fit(self, examples: Sequence[Example]) -> dict[str, Any]:
        """Train on ``examples``; return what training reported (seconds, losses, chosen penalty)."""
        import time

        if not examples:
            raise InputError("no training examples")
        if self.task == "classification" and len({e.label for e in examples}) < 2:
            raise InputError("classification needs at least two classes among the training labels")
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


#: Kind (``tfidf-lr``, ``ensemble``, ``minilm``, ...) -> evaluator class.
EVALUATORS: Registry[type[Evaluator]] = Registry("evaluator")
