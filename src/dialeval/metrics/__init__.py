"""Metrics: lexical ones are always available; model-backed ones need extras."""

from dialeval.metrics.base import METRICS, Metric, MetricInput, register_metric

__all__ = ["METRICS", "Metric", "MetricInput", "load_builtin_metrics", "register_metric"]

_BUILTIN_MODULES = (
    "dialeval.metrics.lexical",
    "dialeval.metrics.likelihood",
    "dialeval.metrics.embedding",
    "dialeval.metrics.bertscore",
    "dialeval.metrics.style",
    "dialeval.metrics.nli",
    "dialeval.judges",
)


def load_builtin_metrics() -> None:
    """Import the built-in metric modules so that they register themselves.

    Modules are cheap to import: heavy libraries are imported lazily inside the
    metrics, so this never imports torch.
    """
    import importlib

    for mod in _BUILTIN_MODULES:
        importlib.import_module(mod)
