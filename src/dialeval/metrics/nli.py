"""NLI contradiction of the response against its context and facts, with the user's own NLI model.

No NLI model with a clear license installs offline, so there is no default: give
a local transformers folder whose labels include "contradiction" (e.g. a
RoBERTa-MNLI you have on disk) with ``model=PATH`` or ``$DIALEVAL_NLI_MODEL``.

``nli_contradiction`` is the largest P(contradiction) over the premises (the
last ``context_turns`` turns and, with ``use_knowledge``, each fact or persona
line), with the response as the hypothesis; lower is better. An item with no
premise, or an empty response, gets None. Every distinct (premise, response) pair is classified once, to the
classifier's limit (``model_max_length`` word pieces, the two together): an item
with a pair past it says which text was cut in ``extras["cut"]`` (:meth:`NliMetric.cut`).

Example:
    >>> try:
    ...     NliMetric(model="")
    ... except InputError as err:
    ...     print(err.field, "|", err.message[:43])
    model | the nli metric needs a local NLI model fold
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from dialeval.errors import InputError
from dialeval.metrics.base import Metric, MetricInput, MetricValues, needs, register_metric
from dialeval.metrics.rules import rule

ENV = "DIALEVAL_NLI_MODEL"


@dataclass(frozen=True)
class NliConfig:
    """The NLI model and which premises to check.

    Attributes:
        model: A local NLI classifier folder (default ``$DIALEVAL_NLI_MODEL``).
        context_turns: How many of the last context turns are premises (0: none, only the knowledge).
        use_knowledge: Also check each fact or persona line.
        device: Torch device; ``auto`` (default) is cuda when torch sees a GPU, else cpu.
    """

    model: str = field(default_factory=lambda: os.environ.get(ENV, ""))
    context_turns: int = field(default=1, metadata=rule(minimum=0, note="0 = no context turn, only the knowledge"))
    use_knowledge: bool = True
    device: str = "auto"


@register_metric
class NliMetric(Metric):
    """Largest contradiction probability of the response against context turns and facts."""

    name = "nli"
    outputs = ("nli_contradiction",)
    requires = needs("models", "torch", "transformers")
    units: ClassVar[Mapping[str, str]] = {"nli_contradiction": "P(contradiction), 0-1"}
    Config = NliConfig
    higher_is_better: ClassVar[bool] = False
    batch_size: ClassVar[int] = 256
    config: NliConfig

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        if not self.config.model:
            raise InputError(
                f"the nli metric needs a local NLI model folder: pass model=PATH or set {ENV} "
                "(no NLI model installs offline)",
                field="model",
            )

    @classmethod
    def unavailable_reason(cls, params: Mapping[str, Any] | None = None) -> str | None:
        """Say what is missing: :attr:`requires`, or a model (no packaged default exists)."""
        if missing := super().unavailable_reason(params):
            return missing
        if not (params or {}).get("model") and not os.environ.get(ENV):
            return f"needs a local NLI model folder: set {ENV}=PATH (no NLI model installs offline)"
        return None

    def signature_extra(self) -> Mapping[str, Any]:
        """Return the model hash and that an empty response gets no value."""
        from dialeval.models.loading import fingerprint

        # empty: a blank response was classified as a hypothesis of no word, and got that P(contradiction)
        return {"model_sha": fingerprint(Path(self.config.model)), "empty": "null"}

    def _turns(self, item: MetricInput) -> list[str]:
        """Return the context turns that are premises (the last ``context_turns``)."""
        turns = item.context[-self.config.context_turns :] if self.config.context_turns > 0 else ()
        return [t.text for t in turns]

    def _premises(self, item: MetricInput) -> list[str]:
        found = self._turns(item) + (list(item.knowledge) if self.config.use_knowledge else [])
        return [p for p in dict.fromkeys(found) if p.strip()]

    def _checked(self, item: MetricInput) -> list[str]:
        """Return the premises the response is checked against: none for an empty response."""
        return self._premises(item) if item.response.strip() else []

    def _pairs(self, items: Sequence[MetricInput]) -> list[tuple[str, str]]:
        """Return every distinct (premise, response) pair of ``items``."""
        return list(dict.fromkeys((p, i.response) for i in items for p in self._checked(i)))

    def lacks(self, output: str, item: MetricInput) -> str | None:
        """Say so when the response is empty, or the item has no premise (context turn or fact with text).

        Example:
            >>> NliMetric(model="x", use_knowledge=False).lacks("nli_contradiction", MetricInput(response="Hi."))
            'no premise to check the response against (no context turn with text, use_knowledge=false)'
        """
        if not item.response.strip():
            return "empty response"
        if self._premises(item):
            return None
        turns = "context_turns=0" if self.config.context_turns == 0 else "no context turn with text"
        facts = "no fact or persona line" if self.config.use_knowledge else "use_knowledge=false"
        return f"no premise to check the response against ({turns}, {facts})"

    def cut(self, items: Sequence[MetricInput]) -> list[dict[str, str]]:
        """Say which items had a (premise, response) pair read in part: past the classifier's limit, together.

        The classifier reads a pair to its tokenizer's ``model_max_length`` word pieces (512 for a RoBERTa-MNLI),
        the longer text losing word pieces first; the note names which text did (the response, a context turn, a
        fact or persona line), "a premise or the response" where a non-fast tokenizer does not say.
        """
        from dialeval.models.loading import classify_cuts

        pairs = self._pairs(items)
        if not pairs:
            return [{} for _ in items]
        cfg = self.config
        limit, found = classify_cuts(cfg.model, [p for p, _ in pairs], [h for _, h in pairs])
        cut = dict(zip(pairs, found, strict=True))
        out: list[dict[str, str]] = []
        for i in items:
            turns, names = self._turns(i), set()
            for p in self._checked(i):
                was = cut[(p, i.response)]
                if was is None:
                    names.add("a premise or the response")
                    continue
                if was[1]:
                    names.add("response")
                if was[0]:
                    names.add("a context turn" if p in turns else "a fact or persona line")
            said = " and ".join(n for n in ("response", "a context turn", "a fact or persona line",
                                            "a premise or the response") if n in names)  # fmt: skip
            note = f"{said} read in part (the classifier reads a premise and the response together to their first "
            out.append({"nli_contradiction": f"{note}{limit} word pieces)"} if said else {})
        return out

    def compute(self, items: Sequence[MetricInput]) -> MetricValues:
        """Classify each distinct (premise, response) pair once; take the max per item (None: :meth:`lacks`)."""
        from dialeval.models.loading import classify

        pairs = self._pairs(items)
        probs: dict[tuple[str, str], float] = {}
        if pairs:
            rows, labels = classify(self.config.model, self.config.device, [p for p, _ in pairs], [h for _, h in pairs])
            hits = [k for k, name in labels.items() if "contradict" in name.lower()]
            if len(hits) != 1:
                raise InputError(
                    f'{self.config.model}: no single "contradiction" label among {sorted(labels.values())}',
                    field="model",
                )
            probs = {pair: row[hits[0]] for pair, row in zip(pairs, rows, strict=True)}
        out: list[float | None] = []
        for i in items:
            found = [probs[(p, i.response)] for p in self._checked(i)]
            out.append(max(found) if found else None)
        return {"nli_contradiction": out}
