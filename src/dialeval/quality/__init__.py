"""Self-supervised reference-free quality sub-metrics and the ``quality`` ensemble (shipped trained).

See ``docs/quality.md``: :mod:`~dialeval.quality.corpora` reads the public unrated
dialogues allowed for training, :mod:`~dialeval.quality.build` makes positives and
negatives from them, :mod:`~dialeval.metrics.quality.heads` fits the small heads over frozen
MiniLM features, :mod:`~dialeval.quality.recipes` rebuilds the shipped artifacts.
"""
