"""Saved trained evaluators as metrics: ``trained:<path>`` resolves to a family built from the folder.

:func:`register_trained` is the ``trained`` entry point of the
``dialeval.metric_prefixes`` group: :mod:`dialeval.metrics.resolve` calls it for a
name that starts with ``trained:``, so ``dialeval score -m trained:PATH`` (and every
other command that resolves metric names, a Ray worker included) works. The family's one output has the
family's name; its signature carries the sha256 of the model card, which in turn
holds the sha256 of every model file.

Example:
    >>> register_trained("trained:/no/such/model")
    Traceback (most recent call last):
    ...
    dialeval.errors.InputError: /no/such/model: no such model folder
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import cached_property
from pathlib import Path
from typing import Any, ClassVar

from dialeval.metrics.base import METRICS, Metric, MetricInput, MetricValues, needs
from dialeval.trained.store import CARD, Loaded, load, read_card

PREFIX = "trained:"
#: What a saved model of each kind imports (the other kinds need only dialeval's own dependencies).
REQUIRES = {"xgboost": needs("trained", "xgboost"), "ensemble-xgb": needs("trained", "xgboost"),
            "minilm": needs("models", "torch")}


class TrainedMetric(Metric):
    """A saved trained evaluator scoring items (subclasses fix the folder)."""

    folder: ClassVar[str] = ""
    card_sha256: ClassVar[str] = ""
    card: ClassVar[dict[str, Any]] = {}
    batch_size: ClassVar[int] = 256

    @cached_property
    def loaded(self) -> Loaded:
        """The evaluator, loaded (and its files checked) on first use."""
        got = load(self.folder)
        if got.card_sha256 != self.card_sha256:
            from dialeval.errors import InputError

            raise InputError("model card changed since the metric was registered", path=self.folder)
        return got

    def signature_extra(self) -> Mapping[str, Any]:
        """Return the card's sha256 (which covers every model file), the model kind and the target."""
        training = self.card.get("training", {})
        return {
            "card_sha256": self.card_sha256[:16],
            "kind": self.card.get("kind", ""),
            "task": self.card.get("task", ""),
            "target_norm": training.get("target_norm", ""),
        }

    def compute(self, items: Sequence[MetricInput]) -> MetricValues:
        """Predict one score per item with the saved evaluator."""
        from dialeval.errors import InputError

        try:
            return {self.name: list(self.loaded.evaluator.predict(items))}
        except InputError as exc:  # the ensemble's features no longer match: the error named no model
            if exc.path is not None or exc.field not in ("features.signatures", "features.columns"):  # not the card's
                raise
            raise InputError(exc.message, path=Path(self.folder) / CARD, field=exc.field) from None


def register_trained(name: str) -> type[Metric]:
    """Register (once) and return the family ``trained:<path>`` for a saved model folder.

    Raises:
        InputError: The folder has no readable model card.
    """
    if name in METRICS:
        return METRICS.get(name)
    folder = name[len(PREFIX) :] if name.startswith(PREFIX) else name
    card, sha = read_card(folder)
    cls = type(
        "Trained_" + sha[:12],
        (TrainedMetric,),
        {
            "name": name, "outputs": (name,), "folder": str(Path(folder).expanduser()), "card_sha256": sha,
            "card": card, "__doc__": f"Trained evaluator {card['kind']} saved in {folder}.",
            "requires": REQUIRES.get(card["kind"], ()), "units": {name: "predicted human rating"},
        },
    )
    METRICS.register(name, cls)
    return cls
