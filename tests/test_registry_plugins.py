"""Entry-point plugins of a registry: one that cannot be imported, one whose name a built-in already has."""

from __future__ import annotations

import json
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


def _builtin() -> str:
    return "built in"


def test_a_plugin_named_as_a_registered_entry_is_an_error_whichever_comes_first(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A plugin entry point named "bleu" was silently ignored when the built-in registered first, made the built-in's
    registration a ValueError traceback when the plugin loaded first (dialeval metrics bleu, score -m bleu), and
    silently replaced the built-in when the plugin's module imported the built-in's: which "bleu" ran depended on
    import order. Now either order gives the same one-line error where the name is asked for."""
    (tmp_path / "dialeval_clash_plugin_w.py").write_text("def thing():\n    return 'plugin'\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    _installed(monkeypatch, EntryPoint("bleu", "dialeval_clash_plugin_w:thing", "dialeval.widgets"))
    expected = (
        f'two widgets are named "bleu": {__name__}:_builtin and the plugin dialeval_clash_plugin_w:thing; '
        "rename the plugin's entry point (or uninstall it)"
    )
    builtin_first: Registry[Any] = Registry("widget")
    builtin_first.register("bleu", _builtin)
    builtin_first.register("seven", 7)
    plugin_first: Registry[Any] = Registry("widget")
    assert plugin_first.names() == ["bleu"]  # the plugins load at the first look
    plugin_first.register("bleu", _builtin)
    plugin_first.register("seven", 7)
    for reg in (builtin_first, plugin_first):
        assert reg.get("seven") == 7 and reg.names() == ["bleu", "seven"]
        with pytest.raises(RegistryEntryError) as err:
            reg.get("bleu")
        assert str(err.value) == expected


def test_a_plugin_failing_on_import_is_imported_once(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """A plugin module that raised on import was imported again at every look at its name (the first look at the
    registry, then each get): its import-time output and side effects repeated, a half-done registration among
    them. Now it is imported once and the same error said each time it is asked for."""
    imports = tmp_path / "imports.txt"
    (tmp_path / "dialeval_bad_plugin_once.py").write_text(
        f"with open({str(imports)!r}, 'a') as f:\n    f.write('x')\nThing = 1 / 0\n", encoding="utf-8"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    _installed(monkeypatch, EntryPoint("bad", "dialeval_bad_plugin_once:Thing", "dialeval.widgets"))
    reg: Registry[Any] = Registry("widget")
    expected = 'widget "bad" (dialeval_bad_plugin_once:Thing) cannot be loaded: division by zero'
    for _ in range(2):
        with pytest.raises(RegistryEntryError) as err:
            reg.get("bad")
        assert str(err.value) == expected
    assert imports.read_text(encoding="utf-8") == "x"


def _fresh_metrics(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make the metric registry a copy that loads its plugins again: this test's plugins only."""
    from dialeval.metrics.base import METRICS
    from dialeval.metrics.resolve import load_builtin_metrics

    load_builtin_metrics()
    for attr in ("_items", "_plugins", "_clashes", "_broken"):
        monkeypatch.setattr(METRICS, attr, dict(getattr(METRICS, attr)))
    monkeypatch.setattr(METRICS, "_plugins_loaded", False)


def test_a_metric_plugin_that_is_no_metric_class_fails_only_where_it_is_asked_for(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A "dialeval.metrics" entry point naming a function (or any object that is not a Metric subclass) was taken
    as a metric: every run that went over the metrics (score with its default set) ended in the traceback of
    AttributeError: 'function' object has no attribute 'listed_first' (-m length too: 'outputs')."""
    from dialeval.metrics.base import metric_by_output
    from dialeval.metrics.resolve import family, resolve_metrics

    (tmp_path / "dialeval_fn_plugin_m.py").write_text("def scorer():\n    return 1\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    _installed(monkeypatch, EntryPoint("fnplug", "dialeval_fn_plugin_m:scorer", "dialeval.metrics"))
    _fresh_metrics(monkeypatch)
    said = 'metric "fnplug" (dialeval_fn_plugin_m:scorer) is not a Metric subclass'
    families, skipped = resolve_metrics(None)
    assert skipped["fnplug"] == said and "length" in [f.name for f in families]
    assert metric_by_output()["length"].name == "length"
    assert [f.name for f in resolve_metrics(["length"])[0]] == ["length"]
    with pytest.raises(RegistryEntryError) as err:
        family("fnplug")
    assert str(err.value) == said


def test_the_metrics_listing_skips_a_plugin_that_cannot_load_and_says_why(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """`dialeval metrics` (and --json) was one error line, "metric "badplug" (...) cannot be loaded: division by zero",
    and listed nothing, where the default set of score skips such a plugin with the reason; it lists the others and
    says on stderr which plugin it skipped and why."""
    from tests.commands.cli_runner import invoke

    (tmp_path / "dialeval_bad_plugin_m.py").write_text("Thing = 1 / 0\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    _installed(monkeypatch, EntryPoint("badplug", "dialeval_bad_plugin_m:Thing", "dialeval.metrics"))
    _fresh_metrics(monkeypatch)
    said = 'skipped badplug: metric "badplug" (dialeval_bad_plugin_m:Thing) cannot be loaded: division by zero'
    listed = invoke("metrics")
    assert listed.exit_code == 0 and said in listed.stderr.splitlines(), listed.output
    assert "bleu: needs references" in listed.stdout and "badplug" not in listed.stdout
    as_json = invoke("metrics", "--json")
    assert as_json.exit_code == 0 and said in as_json.stderr.splitlines(), as_json.output
    assert "length" in [e["name"] for e in json.loads(as_json.stdout)]
    assert "error:" in invoke("metrics", "badplug").output  # named: refused, as -m badplug is
    import dialeval

    with pytest.warns(UserWarning) as caught:  # dialeval.list_metrics() was that one error too
        frame = dialeval.list_metrics()
    assert [str(w.message) for w in caught] == [said] and "badplug" not in set(frame["name"])
    assert "length" in set(frame["name"])


def test_a_metric_plugin_whose_class_has_another_name_is_skipped_by_the_default_set(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """An entry point "epname" naming a class whose name is "othername" (outputs "xout") made every run over the
    default set (score without -m) fail with 'field "--metrics": unknown metric "othername"; did you mean
    "epname"?', an option the user never gave; the plugin is skipped with why, and the rest run."""
    from dialeval.metrics.resolve import resolve_metrics

    said = _other_named(monkeypatch, tmp_path)
    families, skipped = resolve_metrics(None)
    assert skipped["epname"] == said
    assert "length" in [f.name for f in families] and "othername" not in [f.name for f in families]

def _metric_plugin(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, entry: str, name: str, outputs: str) -> None:
    """Install the entry point ``entry`` of a metric class named ``name`` whose outputs are ``outputs`` (as written)."""
    (tmp_path / f"dialeval_{entry}_m.py").write_text(
        f"from dialeval.metrics.base import Metric\n\n\nclass Plug(Metric):\n    name = {name!r}\n"
        f"    outputs = {outputs}\n\n    def compute(self, items):\n        return {{'xout': [1.0 for _ in items]}}\n",
        encoding="utf-8",
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    _installed(monkeypatch, EntryPoint(entry, f"dialeval_{entry}_m:Plug", "dialeval.metrics"))
    _fresh_metrics(monkeypatch)


def _other_named(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> str:
    """Install the entry point "epname" of a class named "othername"; return why it cannot be used."""
    _metric_plugin(monkeypatch, tmp_path, "epname", "othername", "('xout',)")
    return ('metric "epname" is the class dialeval_epname_m.Plug, named "othername": '
            'name its entry point "othername" too')  # fmt: skip


def test_a_metric_plugin_whose_class_has_another_name_is_refused_when_named(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The default set skipped the entry point "epname" of a class named "othername", but `score -m epname` ran it,
    its scores and signature named "othername", and `dialeval metrics` listed it as "othername". Now the name is
    refused where it is asked for, with the reason the default set skips it for, and the listing skips it so."""
    from tests.commands.cli_runner import invoke, refused

    from dialeval.errors import UnknownNameError
    from dialeval.metrics.resolve import family, resolve_metrics

    said = _other_named(monkeypatch, tmp_path)
    assert resolve_metrics(None)[1]["epname"] == said
    with pytest.raises(RegistryEntryError) as err:
        resolve_metrics(["epname"])
    assert str(err.value) == said
    with pytest.raises(UnknownNameError):
        family("xout")  # its output is no family's: "unknown metric"
    listed = invoke("metrics")
    assert listed.exit_code == 0 and f"skipped epname: {said}" in listed.stderr.splitlines(), listed.output
    assert "othername" not in listed.stdout
    refused(invoke("metrics", "epname"), said)



def test_a_metric_plugin_whose_outputs_are_a_string_is_skipped_by_the_listing_and_the_default_set(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A plugin with `outputs = ("score")` (a string: no comma) was listed by `dialeval metrics` and
    dialeval.list_metrics() with the outputs s, c, o, r, e, `-m e` picked it, and `score` without -m (the default
    set) failed as a whole on it. Now it is skipped, with why, as a plugin that cannot be loaded is."""
    from tests.commands.cli_runner import invoke, refused

    import dialeval
    from dialeval.errors import UnknownNameError
    from dialeval.metrics.base import metric_by_output
    from dialeval.metrics.resolve import family, resolve_metrics

    _metric_plugin(monkeypatch, tmp_path, "strplug", "strplug", "('score')")
    said = ('metric "strplug" (dialeval_strplug_m:Plug) has outputs "score", a string: write a tuple, ("score",) '
            "with its comma")  # fmt: skip
    families, skipped = resolve_metrics(None)
    assert skipped["strplug"] == said and "strplug" not in [f.name for f in families]
    assert "e" not in metric_by_output()
    with pytest.raises(UnknownNameError):
        family("e")
    listed = invoke("metrics")
    assert listed.exit_code == 0 and f"skipped strplug: {said}" in listed.stderr.splitlines(), listed.output
    assert "strplug" not in listed.stdout and "outputs: s, c, o, r, e" not in listed.stdout
    refused(invoke("metrics", "strplug"), said)
    with pytest.warns(UserWarning) as caught:
        frame = dialeval.list_metrics()
    assert [str(w.message) for w in caught] == [f"skipped strplug: {said}"] and "strplug" not in set(frame["name"])
