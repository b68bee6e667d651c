"""Write files so that a crash never leaves a half-written output."""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO


def _umask() -> int:
    """Return the process umask (reading it means setting it; it is set straight back)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


@contextlib.contextmanager
def atomic_write(
    path: str | Path, mode: str = "w", encoding: str | None = "utf-8", *, private: bool = False
) -> Iterator[IO[str]]:
    """Open a temporary file beside ``path`` and rename it over ``path`` on success.

    On any exception the temporary file is removed and ``path`` is untouched. The file gets
    the permissions a plain ``open`` would give it (0666 less the umask), not mkstemp's 0600,
    unless ``private``: then it is the owner's only (0600) from its first byte.

    Example:
        >>> import tempfile, pathlib
        >>> p = pathlib.Path(tempfile.mkdtemp()) / "out.txt"
        >>> with atomic_write(p) as f:
        ...     _ = f.write("done")
        >>> p.read_text()
        'done'
        >>> oct(p.stat().st_mode & 0o777) == oct(0o666 & ~_umask())
        True
    """
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, mode, encoding=encoding if "b" not in mode else None) as handle:
            yield handle
            handle.flush()
            if not private:
                os.fchmod(handle.fileno(), 0o666 & ~_umask())
            os.fsync(handle.fileno())
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
