"""Shared, offline model loading: each model loads once per process.

Nothing here imports torch at import time; the loaders import it when called.
"""

from dialeval.models.device import check_device
from dialeval.models.loading import (
    DEFAULT_CAUSAL_LM,
    DEFAULT_ENCODER,
    load_causal_lm,
    load_sentence_encoder,
    resolve_encoder_dir,
)

__all__ = [
    "DEFAULT_CAUSAL_LM",
    "DEFAULT_ENCODER",
    "check_device",
    "load_causal_lm",
    "load_sentence_encoder",
    "resolve_encoder_dir",
]
