"""The collector's threshold inside :func:`dialeval.bulk.fewer_collections`, and where it applies."""

from __future__ import annotations

import gc
from typing import Any

import pytest

import dialeval
import dialeval.data.catalog
from dialeval.bulk import YOUNG_THRESHOLD, fewer_collections
from dialeval.cli import app


def test_the_old_thresholds_come_back_after_an_error_and_a_higher_one_is_kept() -> None:
    before = gc.get_threshold()
    with pytest.raises(ValueError, match="inside"), fewer_collections():
        assert gc.get_threshold() == (YOUNG_THRESHOLD, *before[1:])
        raise ValueError("inside")
    assert gc.get_threshold() == before
    try:
        gc.set_threshold(10 * YOUNG_THRESHOLD, *before[1:])
        with fewer_collections():
            assert gc.get_threshold()[0] == 10 * YOUNG_THRESHOLD  # never lowered
        assert gc.get_threshold()[0] == 10 * YOUNG_THRESHOLD
    finally:
        gc.set_threshold(*before)


def _recording(seen: list[int], result: Any) -> Any:
    def record(*_: Any, **__: Any) -> Any:
        seen.append(gc.get_threshold()[0])
        return result

    return record


def test_a_command_and_an_api_function_run_inside_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """The command line's entry (``DialevalApp.__call__``, which typer's test runner does not go through) and the
    API's functions; the catalog reader they call stands in for the work, recording the threshold it ran under."""
    before = gc.get_threshold()
    seen: list[int] = []
    monkeypatch.setattr(dialeval.data.catalog, "list_benchmarks", _recording(seen, []))
    app(["data", "list", "--json"], standalone_mode=False)
    monkeypatch.setattr(dialeval.data.catalog, "load_benchmark", _recording(seen, None))
    with pytest.raises(AttributeError):  # the stand-in returned no benchmark
        dialeval.load_benchmark("usr-tc")
    assert seen == [YOUNG_THRESHOLD, YOUNG_THRESHOLD]
    assert gc.get_threshold() == before
