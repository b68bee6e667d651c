"""JSONL I/O: validation at the boundary and atomic writes."""

from __future__ import annotations

from pathlib import Path

import pytest

from dialeval.atomic import atomic_write
from dialeval.errors import InputError
from dialeval.jsonl import read_jsonl, to_frame, write_jsonl
from dialeval.schema import Candidate, Rating, Score


def test_roundtrip_keeps_every_field(tmp_path: Path) -> None:
    recs = [
        Rating(item_id="i1", dimension="Overall", annotator="a1", value=4.0, scale="1-5"),
        Rating(
            item_id="i1",
            dimension="Appropriateness",
            annotator="a2",
            value=None,
            dont_know=True,
            explanation="needs world knowledge",
            reasons=["correctness"],
        ),
    ]
    assert write_jsonl(tmp_path / "r.jsonl", recs) == 2
    assert read_jsonl(tmp_path / "r.jsonl", Rating) == recs


def test_bad_line_names_file_line_and_field(tmp_path: Path) -> None:
    p = tmp_path / "c.jsonl"
    p.write_text(
        '{"id": "a", "dialogue_id": "d", "turn_index": 1, "system": "s", "text": "hi"}\n'
        "\n"
        '{"id": "b", "dialogue_id": "d", "turn_index": -1, "system": "s", "text": "hi"}\n'
    )
    with pytest.raises(InputError) as err:
        read_jsonl(p, Candidate)
    assert err.value.line == 3
    assert err.value.field == "turn_index"
    assert str(err.value).startswith(f"{p}:3: field \"turn_index\"")


def test_invalid_json_and_unknown_field(tmp_path: Path) -> None:
    p = tmp_path / "s.jsonl"
    p.write_text('{"item_id": "x", "metric": "m", "value": 1.0}\n{"item_id": "x",\n')
    with pytest.raises(InputError, match=r"s\.jsonl:2: not valid JSON"):
        read_jsonl(p, Score)
    p.write_text('{"item_id": "x", "metric": "m", "value": 1.0, "colour": "red"}\n')
    with pytest.raises(InputError, match='field "colour"'):
        read_jsonl(p, Score)


def test_nan_is_refused(tmp_path: Path) -> None:
    p = tmp_path / "s.jsonl"
    p.write_text('{"item_id": "x", "metric": "m", "value": NaN}\n')
    with pytest.raises(InputError, match=r'field "value": .*NaN'):
        read_jsonl(p, Score)


def test_atomic_write_leaves_old_file_on_error(tmp_path: Path) -> None:
    p = tmp_path / "out.jsonl"
    p.write_text("old\n")
    with pytest.raises(RuntimeError), atomic_write(p) as handle:
        handle.write("half")
        raise RuntimeError("crash")
    assert p.read_text() == "old\n"
    assert list(tmp_path.iterdir()) == [p]  # no temporary file left behind


def test_frame_view() -> None:
    df = to_frame([Rating(item_id="x", dimension="O", annotator=a, value=v) for a, v in [("a", 1.0), ("b", 3.0)]])
    assert list(df["annotator"]) == ["a", "b"]
    assert df["value"].mean() == 2.0
