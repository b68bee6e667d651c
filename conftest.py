"""Collect the package's doctests from its modules as Python imports them.

With ``--import-mode=importlib``, pytest executes a module's file a second time when the module's
package imported it first (``dialeval/metrics/__init__.py`` imports ``metrics/base.py``): the copy
replaces the module in ``sys.modules`` with a second ``METRICS`` registry, and every later doctest
that resolves a metric by name found the first one empty (``unknown metric "bleu"; known:``) when
``base.py``'s doctests ran first in a process. Importing each module by its name before pytest
collects it makes pytest take the module that is already there.

The doctests' ``tempfile.mkdtemp()`` folders go under each doctest's ``tmp_path``, which pytest cleans up
with its own (it keeps the last three runs'), not into ``/tmp`` for good.
"""

from __future__ import annotations

import importlib
import tempfile
from pathlib import Path
from typing import Any

import pytest

SRC = Path(__file__).resolve().parent / "src"


def pytest_collect_file(file_path: Path, parent: Any) -> None:
    """Import a package module under ``src/`` by its dotted name before pytest collects its doctests."""
    if file_path.suffix != ".py" or file_path.name in ("__main__.py", "conftest.py") or SRC not in file_path.parents:
        return
    parts = file_path.resolve().relative_to(SRC).with_suffix("").parts
    importlib.import_module(".".join(parts[:-1] if parts[-1] == "__init__" else parts))


@pytest.fixture(autouse=True)
def _doctest_temp_under_tmp_path(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """Put a doctest's temporary folders under its ``tmp_path``; other tests make theirs with ``tmp_path``."""
    if isinstance(request.node, pytest.DoctestItem):
        monkeypatch.setattr(tempfile, "tempdir", str(request.getfixturevalue("tmp_path")))
