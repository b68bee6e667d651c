"""The metric interface: a pure batch function wrapped by a thin registered object.

A metric family (e.g. ``rouge``) has one or more named outputs (``rouge1``,
``rouge2``, ``rougeL``). :meth:`Metric.compute` maps a batch of
:class:`MetricInput` to one value per item per output; it must not depend on
how the input is split into batches. Its configuration is a frozen dataclass
from which the signature is built.

Example:
    >>> from dataclasses import dataclass
    >>> @dataclass(frozen=True)
    ... class LenCfg:
    ...     unit: str = "chars"
    >>> class CharLen(Metric):
    ...     name = "charlen"
    ...     outputs = ("charlen",)
    ...     Config = LenCfg
    ...     def compute(self, items):
    ...         return {"charlen": [float(len(i.response)) for i in items]}
    >>> CharLen().compute([MetricInput(response="abc")])
    {'charlen': [3.0]}
    >>> CharLen().signature.split("|")[:2]
    ['charlen', 'unit:chars']
"""

from __future__ import annotations

import dataclasses
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any, ClassVar

from dialeval.registry import Registry
from dialeval.schema import Turn
from dialeval.signature import make_signature


@dataclass(frozen=True)
class MetricInput:
    """What a metric sees of one item.

    Attributes:
        response: The candidate response.
        context: The turns before the response, oldest first.
        references: Zero or more reference responses.
        knowledge: Persona lines or facts.
    """

    response: str
    context: tuple[Turn, ...] = ()
    references: tuple[str, ...] = ()
    knowledge: tuple[str, ...] = ()


@dataclass(frozen=True)
class NoConfig:
    """Config of a metric without parameters."""


MetricValues = Mapping[str, Sequence[float | None]]


class Metric(ABC):
    """A registered metric family: config + batch compute + signature.

    Subclasses set ``name``, ``outputs`` and ``Config`` and implement
    :meth:`compute`. ``None`` in an output means the item could not be scored;
    the scorer records why.
    """

    name: ClassVar[str]
    outputs: ClassVar[tuple[str, ...]]
    Config: ClassVar[type[Any]] = NoConfig
    needs_references: ClassVar[bool] = False
    #: Larger is better for every output (False for e.g. NLL).
    higher_is_better: ClassVar[bool] = True
    #: Items per batch the scorer hands to :meth:`compute`.
    batch_size: ClassVar[int] = 1024

    def __init__(self, **params: Any) -> None:
        config = self.Config(**params)
        if getattr(config, "device", None) == "auto":  # resolved now, so the signature names the real device
            config = dataclasses.replace(config, device=resolve_device("auto"))
        self.config = config

    @classmethod
    def unavailable_reason(cls, params: Mapping[str, Any] | None = None) -> str | None:
        """Return why this metric cannot run here (a missing extra, data or model), or None.

        Args:
            params: The parameters the metric will be built with (``model=...``
                can supply what the environment lacks).
        """
        return None

    def signature_extra(self) -> Mapping[str, Any]:
        """Return signature fields that are not config parameters (model hash, library version)."""
        return {}

    @cached_property
    def signature(self) -> str:
        """The reproducibility signature of this metric with this config."""
        return make_signature(self.name, self.config, self.signature_extra())

    @abstractmethod
    def compute(self, items: Sequence[MetricInput]) -> MetricValues:
        """Return ``{output: [value per item]}`` for a batch of items."""

    def params(self) -> dict[str, Any]:
        """Return the config as a plain dict."""
        return dataclasses.asdict(self.config)


def resolve_device(device: str) -> str:
    """Return ``device``, with ``"auto"`` meaning ``"cuda"`` when torch sees a GPU, else ``"cpu"``.

    Example:
        >>> resolve_device("cpu")
        'cpu'
    """
    if device != "auto":
        return device
    import importlib.util

    if importlib.util.find_spec("torch") is None:
        return "cpu"
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"


METRICS: Registry[type[Metric]] = Registry("metric")


def register_metric(cls: type[Metric]) -> type[Metric]:
    """Class decorator: register a metric family under its ``name``."""
    METRICS.register(cls.name, cls)
    return cls


def metric_by_output() -> dict[str, type[Metric]]:
    """Map each output name (``rougeL``) to its family class."""
    out: dict[str, type[Metric]] = {}
    for fam in METRICS.names():
        cls = METRICS.get(fam)
        for o in cls.outputs:
            out[o] = cls
    return out
