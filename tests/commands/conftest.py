"""Fixtures of the command tests."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.commands.cli_runner import ROWS


@pytest.fixture
def rows(tmp_path: Path) -> Path:
    """:data:`~tests.commands.cli_runner.ROWS` written to ``tmp_path/rows.csv``."""
    path = tmp_path / "rows.csv"
    path.write_text(ROWS, encoding="utf-8")
    return path
