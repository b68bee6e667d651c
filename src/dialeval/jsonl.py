"""JSONL in and out for every record type, validated at the boundary.

Example:
    >>> import tempfile, pathlib
    >>> from dialeval.schema import Rating
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "r.jsonl"
    >>> write_jsonl(p, [Rating(item_id="x", dimension="Overall", annotator="a1", value=4.0)])
    1
    >>> [r.value for r in read_jsonl(p, Rating)]
    [4.0]
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TypeVar

import pandas as pd
from pydantic import BaseModel, ValidationError

from dialeval.atomic import atomic_write
from dialeval.errors import InputError

M = TypeVar("M", bound=BaseModel)


def _field_of(err: ValidationError) -> tuple[str, str]:
    first = err.errors()[0]
    loc = ".".join(str(x) for x in first["loc"]) or "<record>"
    return loc, first["msg"]


def iter_jsonl(path: str | Path, model: type[M]) -> Iterator[M]:
    """Yield validated records from a JSONL file.

    Blank lines are allowed. The first malformed line raises :class:`InputError`
    naming the file, the line number and the field.
    """
    p = Path(path)
    if not p.exists():
        raise InputError("file not found", path=p)
    with p.open(encoding="utf-8") as handle:
        for lineno, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                raw = json.loads(line)
            except json.JSONDecodeError as exc:
                raise InputError(f"not valid JSON ({exc.msg})", path=p, line=lineno) from None
            if not isinstance(raw, dict):
                raise InputError("expected a JSON object", path=p, line=lineno)
            try:
                yield model.model_validate(raw)
            except ValidationError as exc:
                field, msg = _field_of(exc)
                raise InputError(msg, path=p, line=lineno, field=field) from None


def read_jsonl(path: str | Path, model: type[M]) -> list[M]:
    """Read a whole JSONL file of ``model`` records (see :func:`iter_jsonl`)."""
    return list(iter_jsonl(path, model))


def write_jsonl(path: str | Path, records: Iterable[BaseModel]) -> int:
    """Write records as JSONL atomically; return how many were written."""
    n = 0
    with atomic_write(path) as handle:
        for rec in records:
            handle.write(rec.model_dump_json(exclude_none=False))
            handle.write("\n")
            n += 1
    return n


def to_frame(records: Iterable[BaseModel]) -> pd.DataFrame:
    """Return a DataFrame with one row per record and one column per field.

    Example:
        >>> from dialeval.schema import Rating
        >>> to_frame([Rating(item_id="x", dimension="O", annotator="a", value=1.0)])[["item_id", "value"]]
          item_id  value
        0       x    1.0
    """
    return pd.DataFrame([r.model_dump() for r in records])
