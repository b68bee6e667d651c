"""Published result tables, transcribed from the papers, for side-by-side comparison.

Example:
    >>> t = load_table("lmstyle-table1")
    >>> t.rows["pearson"]["BLEU"][-1]
    1.65
    >>> load_table("lmstyle-table4").rows["Daily Dialog"]["Vicuna-13B"][:2]
    [68.4, 5.1]
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from importlib import resources

from dialeval.errors import unknown_name

_FILES = {
    "lmstyle-table1": "lmstyle_table1.json",
    "lmstyle-table2": "lmstyle_table2.json",
    "lmstyle-table4": "lmstyle_table4.json",
    "lmstyle-table5": "lmstyle_table5.json",
}


@dataclass(frozen=True)
class PublishedTable:
    """A published table: ``rows[method][paper_metric]`` aligned with ``columns``."""

    name: str
    title: str
    citation: str
    notes: str
    columns: list[str]
    rows: dict[str, dict[str, list[float]]]
    metric_map: dict[str, str]
    dimension_of: dict[str, str]


def load_table(name: str) -> PublishedTable:
    """Load a published table by name (see ``names()``)."""
    if name not in _FILES:
        raise unknown_name("published table", name, _FILES)
    raw = json.loads(resources.files(__package__).joinpath(_FILES[name]).read_text("utf-8"))
    return PublishedTable(name=name, **raw)


def names() -> list[str]:
    """Return the names of the published tables."""
    return sorted(_FILES)
