"""Entry-point plugins of a registry: one that cannot be imported, one whose name a built-in already has."""

from __future__ import annotations

from importlib.metadata import EntryPoint
from pathlib import Path
from typing import Any

import pytest

import dialeval.registry as registry
from dialeval.registry import Registry, RegistryEntryError


def _installed(monkeypatch: pytest.MonkeyPatch, *found: EntryPoint) -> None:
    """Make ``found`` the entry points every group has (as an installed plugin package would)."""

    def entry_points(group: str) -> tuple[EntryPoint, ...]:
        return tuple(ep for ep in found if ep.group == group)

    monkeypatch.setattr(registry, "entry_points", entry_points)


def test_a_plugin_that_cannot_be_imported_fails_only_where_it_is_asked_for(monkeypatch: pytest.MonkeyPatch) -> None:
    """A plugin whose module is gone (uninstalled half-way, a typo in its entry point) was imported by the first
    look at the registry: every command, `-m length` too, died with ModuleNotFoundError's traceback."""
    _installed(monkeypatch, EntryPoint("broken", "no_such_module_xyz:Thing", "dialeval.widgets"))
    reg: Registry[Any] = Registry("widget")
    reg.register("seven", 7)
    assert reg.get("seven") == 7 and reg.names() == ["broken", "seven"]
    with pytest.raises(RegistryEntryError) as err:
        reg.get("broken")
    assert str(err.value) == (
        "widget \"broken\" (no_such_module_xyz:Thing) cannot be loaded: No module named 'no_such_module_xyz'"
    )


def test_a_plugin_failing_on_import_is_one_error_not_a_traceback(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A plugin module that raises on import (here ZeroDivisionError) escaped as that exception."""
    (tmp_path / "dialeval_bad_plugin_w.py").write_text("Thing = 1 / 0\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    _installed(monkeypatch, EntryPoint("bad", "dialeval_bad_plugin_w:Thing", "dialeval.widgets"))
    reg: Registry[Any] = Registry("widget")
    with pytest.raises(RegistryEntryError) as err:
        reg.get("bad")
    assert str(err.value) == 'widget "bad" (dialeval_bad_plugin_w:Thing) cannot be loaded: division by zero'
