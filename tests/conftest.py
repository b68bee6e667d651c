"""Shared fixtures: the real benchmark data beside the project root."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest

# The CLI keeps a score cache by default; tests start with an empty one of their own (one per
# xdist worker), never the user's ~/.cache/dialeval/scores.sqlite.
os.environ["DIALEVAL_SCORE_CACHE"] = str(Path(tempfile.mkdtemp(prefix="dialeval-test-scores-")) / "scores.sqlite")

ROOT = Path(__file__).resolve().parents[1]
SHARED_DATA = ROOT.parent / "shared" / "data"


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """The ``../shared/data`` folder; the tests need it (CI runs with it beside the checkout)."""
    assert SHARED_DATA.is_dir(), f"expected the shared data at {SHARED_DATA}"
    return SHARED_DATA
