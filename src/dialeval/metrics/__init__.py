"""Metrics: lexical ones are always available; model-backed ones need extras."""

from dialeval.metrics.base import METRICS, PREFIXES, Metric, MetricInput, register_metric

__all__ = ["METRICS", "PREFIXES", "Metric", "MetricInput", "load_builtin_metrics", "register_metric"]

_BUILTIN_MODULES = (
    "dialeval.metrics.lexical",
    "dialeval.metrics.likelihood",
    "dialeval.metrics.embedding",
    "dialeval.metrics.bertscore",
    "dialeval.metrics.style",
    "dialeval.metrics.nli",
    "dialeval.metrics.quality",
)


def load_builtin_metrics() -> None:
    """Import the built-in metric modules so that they register themselves, and load the prefix plugins.

    Loading the ``dialeval.metric_prefixes`` entry points imports the packages behind
    ``judge:`` and ``trained:``; the judges register every ``judge:<protocol>`` family.
    Modules are cheap to import: heavy libraries are imported lazily inside the
    metrics, so this never imports torch.
    """
    import importlib

    for mod in _BUILTIN_MODULES:
        importlib.import_module(mod)
    PREFIXES.names()
