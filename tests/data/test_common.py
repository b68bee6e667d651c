"""The loaders' shared helpers: CSV headers and rating scales."""

from __future__ import annotations

from pathlib import Path

import pytest

from dialeval.data._common import read_csv_rows, scale_range
from dialeval.errors import InputError


def test_a_header_naming_a_column_twice_is_refused(tmp_path: Path) -> None:
    p = tmp_path / "t.csv"
    p.write_text("a,b,,,a\n1,2,3,4,5\n")
    with pytest.raises(InputError) as caught:
        read_csv_rows(p)
    assert str(caught.value) == f'{p}:1: field "a": appears twice in the header (columns 1 and 5)'
    p.write_text("a,b,,\n1,2,3,4\n")  # empty names are not columns, so not duplicates
    names, rows = read_csv_rows(p, required=["a", "b"])
    assert names == {"a": 0, "b": 1} and [r for _, r in rows] == [["1", "2", "3", "4"]]


def test_a_missing_column_spelled_in_another_case_is_named(tmp_path: Path) -> None:
    p = tmp_path / "t.csv"
    p.write_text("Context,Response\nHi,Hello\n")
    with pytest.raises(InputError) as caught:
        read_csv_rows(p, required=["context"])
    assert str(caught.value) == (
        f'{p}:1: field "context": missing column in the header; the header has "Context" '
        "(column names are case-sensitive)"
    )


@pytest.mark.parametrize(
    ("scale", "bounds"),
    [("1-5", (1.0, 5.0)), ("0-100", (0.0, 100.0)), (" -2 - 2.5 ", (-2.0, 2.5)), ("5-1", None), ("3-3", None),
     ("abc", None), ("1-5-7", None), ("", None), ("1 to 5", None)],
)  # fmt: skip
def test_scale_range(scale: str, bounds: tuple[float, float] | None) -> None:
    assert scale_range(scale) == bounds
