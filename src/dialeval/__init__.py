"""dialeval: evaluate chatbot and dialogue-system responses.

Score responses with metrics from the literature, run human evaluation studies,
and meta-evaluate which metric agrees with people. From Python (see docs/python.md):

* :func:`score` - score a DataFrame, a list of dicts or a file; one column per metric output;
* :func:`correlate` - correlate metric columns with human columns, with bootstrap CIs;
* :func:`load_benchmark` - a catalog benchmark as a DataFrame with its human scores;
* :func:`list_metrics` and :func:`list_benchmarks` - what ``metrics=`` and ``load_benchmark`` take.

They are imported on first use, so ``import dialeval`` stays fast (no pandas, no torch).
"""

from __future__ import annotations

from importlib import import_module
from importlib.metadata import PackageNotFoundError, version
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from dialeval.api import correlate, list_benchmarks, list_metrics, load_benchmark, score

try:
    __version__ = version("dialeval")
except PackageNotFoundError:  # pragma: no cover - running from a source tree
    __version__ = "0.0.0+unknown"

__all__ = ["__version__", "correlate", "list_benchmarks", "list_metrics", "load_benchmark", "score"]

_API = ("correlate", "list_benchmarks", "list_metrics", "load_benchmark", "score")


def __getattr__(name: str) -> Any:
    """Import the Python API (:mod:`dialeval.api`) on first use of one of its functions."""
    if name in _API:
        # imported by name, after this package has finished initialising: modules that
        # read ``dialeval.__version__`` are no import cycle with the API they sit under
        return getattr(import_module("dialeval.api"), name)
    raise AttributeError(f"module 'dialeval' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(__all__)
