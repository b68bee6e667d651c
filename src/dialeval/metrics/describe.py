"""What each metric family is, for ``dialeval metrics`` and :func:`dialeval.list_metrics`.

Example:
    >>> bleu = next(d for d in describe_metrics() if d["name"] == "bleu")
    >>> bleu["outputs"], bleu["needs_references"], bleu["parameters"]["smoothing"]
    (['bleu1', 'bleu2', 'bleu3', 'bleu4'], True, 'method1')
    >>> plain("Cosine of ``sbert_ref``; see :func:`dialeval.metrics.functional.corpus_sacrebleu`.")
    'Cosine of sbert_ref; see corpus_sacrebleu.'
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence
from typing import Any

from dialeval.metrics import load_builtin_metrics
from dialeval.metrics.base import METRICS, Metric
from dialeval.registry import RegistryEntryError

#: A parameter that has no default: the user must give it (``-p nli.model=PATH``).
REQUIRED = "(required)"


def plain(text: str) -> str:
    """Return a docstring line without its reStructuredText markup (``code``, :role:`target`)."""
    text = re.sub(r":\w+:`~?(?:[\w.]*\.)?([^`.]+)`", r"\1", text)
    return text.replace("``", "")


def _default(f: dataclasses.Field[Any]) -> Any:
    if f.default is not dataclasses.MISSING:
        return f.default
    if f.default_factory is not dataclasses.MISSING:
        return f.default_factory()
    return REQUIRED


def describe(cls: type[Metric]) -> dict[str, Any]:
    """Return one family's name, summary, outputs, needs, whether it runs here (or why not) and its parameters."""
    doc = plain((cls.__doc__ or "").strip().split("\n\n")[0].replace("\n", " "))
    return {
        "name": cls.name,
        "description": " ".join(doc.split()),
        "outputs": list(cls.outputs),
        "needs_references": cls.needs_references,
        "higher_is_better": cls.higher_is_better,
        "unavailable": cls.unavailable_reason(),
        "parameters": {f.name: _default(f) for f in dataclasses.fields(cls.Config)},
    }


def describe_metrics(names: Sequence[str] | None = None) -> list[dict[str, Any]]:
    """Return :func:`describe` of every registered metric family (built-in, judge protocols, plugins), by name.

    With ``names``, only those families, or the families of those outputs, each once, in the order given.

    Raises:
        UnknownNameError: A name that is neither a family nor an output (with the closest).

    Example:
        >>> [d["name"] for d in describe_metrics(["rougeL", "bleu4", "rouge"])]
        ['rouge', 'bleu']
    """
    from dialeval.metrics.resolve import family

    load_builtin_metrics()
    chosen = METRICS.names() if names is None else list(dict.fromkeys(family(n).name for n in names))
    return [describe(METRICS.get(name)) for name in chosen]


def describe_loadable(names: Sequence[str] | None = None) -> tuple[list[dict[str, Any]], dict[str, str]]:
    """Return :func:`describe_metrics`, but without ``names`` a plugin that cannot be loaded is skipped, not an error.

    Returns:
        The families described, and those skipped with why (the registry's error), as the default metric set
        of ``score`` skips them. A family named in ``names`` that cannot be loaded is still an error.
    """
    if names is not None:
        return describe_metrics(names), {}
    load_builtin_metrics()
    entries: list[dict[str, Any]] = []
    skipped: dict[str, str] = {}
    for name in METRICS.names():
        try:
            cls = METRICS.get(name)
        except RegistryEntryError as exc:
            skipped[name] = str(exc)
            continue
        entries.append(describe(cls))
    return entries, skipped
