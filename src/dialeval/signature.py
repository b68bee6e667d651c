"""Signatures that make every number reproducible, in sacrebleu's style.

A signature is built from a frozen config object, never from ``__dict__`` of a
live object, so it names exactly the parameters that change the result. A field
that cannot change a result (a timeout, a retry count, a price) says so with
``metadata=NOT_IN_SIGNATURE`` (``{"signature": False}``) and is left out,
so that changing it does not invalidate cached scores.

Example:
    >>> from dataclasses import dataclass
    >>> @dataclass(frozen=True)
    ... class Cfg:
    ...     nrefs: str = "var"
    ...     smooth: str = "exp"
    >>> make_signature("sacrebleu", Cfg(), extra={"tok": "13a"}).startswith("sacrebleu|nrefs:var|smooth:exp|tok:13a|")
    True
    >>> @dataclass(frozen=True)
    ... class Timed:
    ...     model: str = "m"
    ...     timeout: float = dataclasses.field(default=60.0, metadata=NOT_IN_SIGNATURE)
    >>> make_signature("judge", Timed(timeout=5.0)) == make_signature("judge", Timed())
    True
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any

from dialeval import __version__

#: ``metadata`` of a :func:`dataclasses.field` left out of signatures.
NOT_IN_SIGNATURE: Mapping[str, Any] = MappingProxyType({"signature": False})


def _fmt(value: Any) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, (tuple, list)):
        return ",".join(_fmt(v) for v in value)
    # Keep a signature on one line and unambiguous: escape the separators.
    return str(value).replace("\\", "\\\\").replace("\n", "\\n").replace("|", "\\|")


def make_signature(name: str, config: Any = None, extra: Mapping[str, Any] | None = None) -> str:
    """Render ``name|key:value|...|version:X`` from a frozen dataclass and extras.

    Fields whose metadata has ``"signature": False`` are left out.

    Raises:
        ValueError: A key twice (a field and an extra of one name): a reader of the signature would keep one.
    """
    parts = [name]
    if config is not None:
        if not dataclasses.is_dataclass(config) or isinstance(config, type):
            raise TypeError("config must be a dataclass instance")
        for f in dataclasses.fields(config):
            if not f.metadata.get("signature", True):
                continue
            parts.append(f"{f.name}:{_fmt(getattr(config, f.name))}")
    for key, value in (extra or {}).items():
        parts.append(f"{key}:{_fmt(value)}")
    parts.append(f"version:{__version__}")
    keys = [part.split(":", 1)[0] for part in parts[1:]]
    if twice := sorted({k for k in keys if keys.count(k) > 1}):
        raise ValueError(f"signature of {name} has the keys {twice} more than once")
    return "|".join(parts)


def file_sha256(path: str | Path, chunk: int = 1 << 20) -> str:
    """Return the hex sha256 of a file, read in chunks."""
    h = hashlib.sha256()
    with Path(path).open("rb") as handle:
        while block := handle.read(chunk):
            h.update(block)
    return h.hexdigest()


def text_sha256(text: str) -> str:
    """Return the hex sha256 of a UTF-8 string (for prompt templates)."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
