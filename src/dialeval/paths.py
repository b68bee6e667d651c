"""Where dialeval keeps its cache and finds the shared benchmark data."""

from __future__ import annotations

import os
from pathlib import Path

from dialeval.errors import InputError, not_utf8


def cache_dir() -> Path:
    """Return the cache directory (``$DIALEVAL_CACHE`` or ``~/.cache/dialeval``), created if needed.

    Raises:
        InputError: The folder cannot be created (a read-only home, a path below a file).

    Example:
        >>> cache_dir().is_dir()
        True
    """
    root = _env_path("DIALEVAL_CACHE") or _check_utf8(Path.home() / ".cache" / "dialeval", "$DIALEVAL_CACHE")
    try:
        root.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InputError(f"the cache folder cannot be created ({exc.strerror}): set $DIALEVAL_CACHE to a folder "
                         "you can write", path=root, field="$DIALEVAL_CACHE") from None  # fmt: skip
    return root


def score_cache_path() -> Path:
    """Return the score cache file (``$DIALEVAL_SCORE_CACHE`` or ``scores.sqlite`` in :func:`cache_dir`).

    Example:
        >>> score_cache_path().name.endswith(".sqlite")
        True
    """
    return _env_path("DIALEVAL_SCORE_CACHE") or cache_dir() / "scores.sqlite"


def _env_path(variable: str) -> Path | None:
    """Return the path in ``$variable`` with ``~`` expanded (None when unset or empty), checked by :func:`_check_utf8`.

    A ``~`` kept by quotes (``DIALEVAL_CACHE="~/cache"``, or an env file, which no shell reads) made a
    folder named ``~`` in the working folder, silently.

    Example:
        >>> os.environ["DIALEVAL_EXAMPLE"] = "~/cache"
        >>> _env_path("DIALEVAL_EXAMPLE") == Path.home() / "cache"
        True
        >>> del os.environ["DIALEVAL_EXAMPLE"]
    """
    if not (value := os.environ.get(variable)):
        return None
    try:
        path = Path(value).expanduser()
    except RuntimeError:  # ~name of no user, or no home folder to be found
        raise InputError(f"{value!r} starts with a ~ whose home folder cannot be found: give the full path",
                         field=f"${variable}") from None  # fmt: skip
    return _check_utf8(path, f"${variable}")


def _check_utf8(path: Path, variable: str) -> Path:
    r"""Return ``path``, refusing one that is not UTF-8 text (from a variable, or a home folder, in Latin-1).

    Every run writes its paths into its JSON files, which cannot hold such a name: ``benchmark`` ended
    in a ``UnicodeEncodeError`` traceback after the scoring.

    Example:
        >>> _check_utf8(Path("/tmp/caf\udce9"), "$DIALEVAL_CACHE")
        Traceback (most recent call last):
        ...
        dialeval.errors.InputError: field "$DIALEVAL_CACHE": '/tmp/caf\udce9' is not UTF-8 text: byte 0xe9 at ...
    """
    if why := not_utf8(str(path)):
        raise InputError(f"{str(path)!a} {why}: set {variable} to a path that is", field=variable)
    return path


def shared_data_dir() -> Path | None:
    """Return the folder of published benchmark files, or None if there is none.

    Looked up in order: ``$DIALEVAL_DATA``; ``../shared/data`` beside the current
    directory; ``../shared/data`` beside the source checkout.

    Raises:
        InputError: ``$DIALEVAL_DATA`` is set and is not a folder (a mistyped path went on, silently, with
            another folder's files).
    """
    candidates = []
    if env := _env_path("DIALEVAL_DATA"):
        if not env.is_dir():
            raise InputError("is not a folder: set $DIALEVAL_DATA to the shared data folder, or unset it to read "
                             "../shared/data", path=env, field="$DIALEVAL_DATA")  # fmt: skip
        return env
    candidates.append(Path.cwd().parent / "shared" / "data")
    candidates.append(Path(__file__).resolve().parents[3] / "shared" / "data")
    for c in candidates:
        if c.is_dir():
            return c
    return None
