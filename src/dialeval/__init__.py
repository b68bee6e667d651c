"""dialeval: evaluate chatbot and dialogue-system responses.

Score responses with metrics from the literature, run human evaluation studies,
and meta-evaluate which metric agrees with people.
"""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("dialeval")
except PackageNotFoundError:  # pragma: no cover - running from a source tree
    __version__ = "0.0.0+unknown"

__all__ = ["__version__"]
