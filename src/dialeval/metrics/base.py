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

import contextlib
import dataclasses
from abc import ABC, abstractmethod
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, ClassVar, NamedTuple

from dialeval.errors import InputError
from dialeval.metrics.rules import check_config
from dialeval.registry import Registry, RegistryEntryError
from dialeval.schema import Candidate, Dialogue, Turn
from dialeval.signature import make_signature


@dataclass(frozen=True)
class MetricInput:
    """What a metric sees of one item.

    Attributes:
        response: The candidate response.
        context: The turns before the response, oldest first.
        references: Zero or more reference responses.
        knowledge: Persona lines or facts.
        tags: The candidate's own tags (``style`` reads the requested style from one). They are
            not part of the input key: a metric that depends on a tag splits its work by it
            (:meth:`Metric.partition`), so each part has its own signature.
    """

    response: str
    context: tuple[Turn, ...] = ()
    references: tuple[str, ...] = ()
    knowledge: tuple[str, ...] = ()
    tags: Mapping[str, str] = field(default_factory=dict, compare=False, hash=False)


def build_inputs(candidates: Sequence[Candidate], dialogues: Mapping[str, Dialogue]) -> list[MetricInput]:
    """Turn candidates into metric inputs, resolving each context from its dialogue.

    Raises:
        InputError: A candidate names an unknown dialogue or a turn past its end.

    Example:
        >>> d = {"d": Dialogue(id="d", turns=[Turn(speaker="A", text="hi"), Turn(speaker="B", text="yo")])}
        >>> c = Candidate(id="d:s", dialogue_id="d", turn_index=1, system="s", text="hey", tags={"k": "v"})
        >>> i = build_inputs([c], d)[0]
        >>> i.response, [t.text for t in i.context], dict(i.tags)
        ('hey', ['hi'], {'k': 'v'})
    """
    out: list[MetricInput] = []
    for c in candidates:
        d = dialogues.get(c.dialogue_id)
        if d is None:
            raise InputError(f'candidate "{c.id}" names unknown dialogue "{c.dialogue_id}"', field="dialogue_id")
        if c.turn_index > len(d.turns):
            raise InputError(
                f'candidate "{c.id}" has turn_index {c.turn_index} but dialogue "{d.id}" has {len(d.turns)} turns',
                field="turn_index",
            )
        out.append(
            MetricInput(
                response=c.text,
                context=tuple(d.context(c.turn_index)),
                references=tuple(c.references),
                knowledge=tuple(d.knowledge),
                tags=dict(c.tags),
            )
        )
    return out


class ItemInputError(InputError):
    """Bad input in one item of a metric's work, by position; the scorer names the item.

    Example:
        >>> str(ItemInputError(1, "has no tag", field="tags.x").naming('candidate "c"'))
        'field "tags.x": candidate "c" has no tag'
    """

    def __init__(self, position: int, message: str, *, field: str | None = None) -> None:
        self.position = position
        self.source = 0  # which of several input lists (set by the scorer)
        super().__init__(f"item {position} {message}", field=field)
        self.detail = message

    def naming(self, item: str) -> InputError:
        """Return the same error with ``item`` (e.g. ``candidate "ID"``) in place of the position."""
        return InputError(f"{item} {self.detail}", field=self.field)


@dataclass(frozen=True)
class NoConfig:
    """Config of a metric without parameters."""


MetricValues = Mapping[str, Sequence[float | None]]


class Requirement(NamedTuple):
    """A module a metric imports, and the pip extra of dialeval that installs it.

    Example:
        >>> Requirement("no_such_module_here", "models").missing()
        "needs no_such_module_here: pip install 'dialeval[models]'"
        >>> Requirement("json", "models").missing() is None
        True
    """

    module: str
    extra: str

    def missing(self) -> str | None:
        """Return what to install when the module cannot be found (without importing it), else None."""
        import importlib.util

        if importlib.util.find_spec(self.module) is None:
            return f"needs {self.module}: pip install 'dialeval[{self.extra}]'"
        return None


def needs(extra: str, *modules: str) -> tuple[Requirement, ...]:
    """Return the requirements for ``modules``, all installed by the pip extra ``extra``.

    Example:
        >>> needs("trained", "xgboost")
        (Requirement(module='xgboost', extra='trained'),)
    """
    return tuple(Requirement(m, extra) for m in modules)


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
    #: Run and listed before the other default metrics (the default reference-free score).
    listed_first: ClassVar[bool] = False
    #: The modules the metric imports beyond dialeval's own dependencies, with the extra that installs each.
    requires: ClassVar[tuple[Requirement, ...]] = ()
    #: Output -> unit for an axis label (``"BLEU, 0-100"``); see :meth:`unit`.
    units: ClassVar[Mapping[str, str]] = {}

    def __init__(self, **params: Any) -> None:
        """Build the config from ``params`` and check it (:func:`dialeval.metrics.rules.check_config`).

        Raises:
            InputError: A parameter value its rule refuses, a NaN or infinite float, or a device torch
                cannot use here (:func:`dialeval.models.device.check_device`).
        """
        config = self.Config(**params)
        check_config(self.name, config)
        if isinstance(getattr(config, "device", None), str):  # a bad device: one error now, not torch's traceback
            from dialeval.models.device import check_device

            try:
                check_device(config.device, field="--param")
            except InputError as exc:  # named as every other parameter error is: family.key=value
                raise InputError(f"{self.name}.device={exc.message}", field="--param") from None
        if getattr(config, "device", None) == "auto":  # resolved now, so the signature names the real device
            config = dataclasses.replace(config, device=resolve_device("auto"))
        self.config = config

    @classmethod
    def unavailable_reason(cls, params: Mapping[str, Any] | None = None) -> str | None:
        """Return why this metric cannot run here (a missing extra, data or model), or None.

        This reads :attr:`requires` (the first module not installed); a metric that needs
        more (data files, a model folder) extends it.

        Args:
            params: The parameters the metric will be built with (``model=...``
                can supply what the environment lacks).
        """
        return next((why for why in (r.missing() for r in cls.requires) if why), None)

    @classmethod
    def idle_params(cls, params: Mapping[str, Any]) -> dict[str, str]:
        """Return the parameters in ``params`` that would change no score beside the others, each with why.

        :func:`dialeval.metrics.resolve.metric_params` refuses those given by name (``-p family.key=...``):
        a value that changes nothing would still go into every signature. None here; ``quality`` names some.
        """
        return {}

    @classmethod
    def unit(cls, output: str) -> str:
        """Return the unit of ``output`` for an axis label (``"score"`` when the class names none)."""
        return cls.units.get(output, "score")

    def signature_extra(self) -> Mapping[str, Any]:
        """Return signature fields that are not config parameters (model hash, library version)."""
        return {}

    @cached_property
    def signature(self) -> str:
        """The reproducibility signature of this metric with this config.

        Made before any batch (a cached run reads it first): a model a parameter names that is not one is named
        as ``-p FAMILY.KEY`` names it (:func:`parameter_errors`); it said ``field "model"``.
        """
        with parameter_errors(self):
            return make_signature(self.name, self.config, self.signature_extra())

    @abstractmethod
    def compute(self, items: Sequence[MetricInput]) -> MetricValues:
        """Return ``{output: [value per item]}`` for a batch of items."""

    def params(self) -> dict[str, Any]:
        """Return the config as a plain dict."""
        return dataclasses.asdict(self.config)

    def run_summary(self) -> dict[str, Any]:
        """Return this metric's run counters (judge calls, parse failures, tokens); none by default."""
        return {}

    def lacks(self, output: str, item: MetricInput) -> str | None:
        """Say what ``item`` lacks for ``output`` to have a value (``"no reference to compare with"``), or None.

        It is the score's ``extras["error"]`` where the value is None and :meth:`why_unscored` knows no
        reason. Unlike that one, it keeps nothing out of the score cache: a rerun would lack it too.
        """
        return None

    def cut(self, items: Sequence[MetricInput]) -> list[dict[str, str]]:
        """Say, per item, which outputs read one of its texts in part: ``{output: "response cut to ..."}``.

        A model reads a text to its length limit and drops the rest, silently; the note goes into the valued
        score's ``extras["cut"]``, and ``dialeval score`` counts the notes per output. None here by default.
        """
        return [{} for _ in items]

    def why_unscored(self, key: str) -> str | None:
        """Return why this run left the item with input key ``key`` without a value, or None (no reason known).

        ``key`` is :func:`dialeval.cache.input_key` of the item. A reason (a failed request,
        a spent budget) goes into the score's ``extras["error"]``, and the item is kept out
        of the score cache, so that the next run tries it again.
        """
        return None

    def fitted_note(self, benchmark: str) -> str | None:
        """Say so when this metric's shipped model was fitted on ``benchmark``'s human ratings (None if not).

        A correlation on such a benchmark is in-sample; the note should give the figure
        of a model that never saw it, where one was measured.
        """
        return None

    def partition(self, items: Sequence[MetricInput]) -> list[tuple[Metric, list[int]]]:
        """Split the work into ``(metric, positions of its items)`` parts; by default one part, this metric.

        A metric whose configuration depends on each item (``style`` with
        ``target=tag:NAME``) returns one configured metric per group; each part
        is planned, cached and signed on its own.
        """
        return [(self, list(range(len(items))))]


def read_in_part(tokenizer: Any, texts: Sequence[str], limit: int, *, special: bool = True) -> set[str]:
    """Return the texts of more than ``limit`` word pieces by ``tokenizer``: a model reading to ``limit`` cut them.

    ``special``: count the tokenizer's special tokens too (a sentence encoder's limit holds them). Tokenized with
    ``verbose=False``: the plain call logs transformers' "longer than the specified maximum" line to stderr.
    """
    unique = list(dict.fromkeys(texts))
    if not unique:
        return set()
    ids = tokenizer(unique, add_special_tokens=special, verbose=False)["input_ids"]
    return {t for t, one in zip(unique, ids, strict=True) if len(one) > limit}


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


@contextlib.contextmanager
def parameter_errors(metric: type[Metric] | Metric) -> Iterator[None]:
    """Inside the block, an error on one of ``metric``'s parameters names it as ``-p FAMILY.KEY`` does.

    A model folder that is not one, a runtime or a target refused while the metric is built or loads its
    model said ``field "model"``, which names no option.

    Example:
        >>> from dialeval.metrics.lexical import Bleu
        >>> with parameter_errors(Bleu):
        ...     raise InputError("not a tokenizer", field="tokenizer")
        Traceback (most recent call last):
        ...
        dialeval.errors.InputError: field "--param": bleu.tokenizer: not a tokenizer
    """
    try:
        yield
    except ItemInputError:
        raise
    except InputError as exc:
        keys = {f.name for f in dataclasses.fields(metric.Config)}
        if exc.path is not None or exc.field not in keys:
            raise
        raise InputError(f"{metric.name}.{exc.field}: {exc.message}", line=exc.line, field="--param") from None


def configured(cls: type[Metric], params: Mapping[str, Any]) -> Metric:
    """Build the family ``cls`` with ``params``; an error on a parameter names it as ``-p FAMILY.KEY`` does.

    Example:
        >>> from dialeval.metrics.lexical import Bleu
        >>> configured(Bleu, {"smoothing": "method2"}).config.smoothing
        'method2'
    """
    with parameter_errors(cls):
        return cls(**params)


METRICS: Registry[type[Metric]] = Registry("metric", base=Metric, factories=False)
#: Name prefix (``judge``, ``trained``) -> what registers the families of that prefix: a module whose import
#: registers them, or a callable given the full name (``trained:PATH``). Plugins: ``dialeval.metric_prefixes``.
PREFIXES: Registry[object] = Registry("metric name prefix", group="dialeval.metric_prefixes")


def register_metric(cls: type[Metric]) -> type[Metric]:
    """Class decorator: register a metric family under its ``name``."""
    METRICS.register(cls.name, cls)
    return cls


def metric_by_output() -> dict[str, type[Metric]]:
    """Map each output name (``rougeL``) to its family class (a plugin that cannot be loaded has none known)."""
    out: dict[str, type[Metric]] = {}
    for fam in METRICS.names():
        try:
            cls = METRICS.get(fam)
        except RegistryEntryError:  # said where it is asked for by its name; -m length must not fail for it
            continue
        for o in cls.outputs:
            out[o] = cls
    return out
