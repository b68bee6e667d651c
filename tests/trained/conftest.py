"""Small real training data for the trained-evaluator tests (a few contexts of two benchmarks)."""

from __future__ import annotations

from pathlib import Path

import pytest

from dialeval.data.catalog import load_benchmark
from dialeval.trained.data import Example, examples_from


@pytest.fixture(scope="session")
def small_examples() -> list[Example]:
    """12 contexts of USR-PC (5 systems each) and 12 of Gupta DailyDialog: 120 rated turns."""
    return [
        *examples_from(load_benchmark("usr-pc").head(12)),
        *examples_from(load_benchmark("gupta-dailydialog").head(12)),
    ]


@pytest.fixture(autouse=True)
def _private_cache(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """Keep the persistent score cache of these tests out of the user's cache (models stay shared)."""
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("TRANSFORMERS_OFFLINE", "1")
    root: Path = tmp_path_factory.getbasetemp() / "trained-scores"
    root.mkdir(exist_ok=True)
    monkeypatch.setenv("DIALEVAL_SCORE_CACHE", str(root / "scores.sqlite"))
