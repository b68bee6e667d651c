"""Argument types of the ``dialeval quality`` research commands (argparse): a bad number is one usage line.

Each is a ``type=`` for ``ArgumentParser.add_argument``; argparse turns its error into
``PROG: error: argument --steps: must be at least 1, got 0`` before any data is read.
"""

from __future__ import annotations

import argparse
import math
import os
from collections.abc import Callable
from pathlib import Path

from dialeval.errors import MAX_SEED
from dialeval.meta.bootstrap import MAX_RESAMPLES


def count(low: int = 1, high: int | None = None, why: str = "") -> Callable[[str], int]:
    """Return an argparse type that reads an integer of at least ``low`` (and at most ``high``, for ``why``).

    Example:
        >>> count(1)("3")
        3
        >>> count(0)("-1")
        Traceback (most recent call last):
        argparse.ArgumentTypeError: must be at least 0, got -1
        >>> count(1, 8, "cores")("99")
        Traceback (most recent call last):
        argparse.ArgumentTypeError: must be at most 8 (cores), got 99
    """

    def read(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
        if value < low:
            raise argparse.ArgumentTypeError(f"must be at least {low}, got {value}")
        if high is not None and value > high:
            raise argparse.ArgumentTypeError(f"must be at most {high:,} ({why}), got {value:,}")
        return value

    return read


SEED = count(0, MAX_SEED, "seeds are 32-bit")
"""A seed: torch's ``manual_seed`` overflowed at 2**64 after the data was drawn."""
THREADS = count(1, os.cpu_count() or 1, "this machine's cores")
"""Torch threads: ``--threads 99999999999999999999`` overflowed in ``torch.set_num_threads``."""
RESAMPLES = count(1, MAX_RESAMPLES, "the resamples are held at once")
"""Bootstrap resamples."""


def _number(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None


def positive(text: str) -> float:
    """Read a finite number above 0 (a learning rate, minutes).

    Example:
        >>> positive("5e-4")
        0.0005
        >>> positive("0")
        Traceback (most recent call last):
        argparse.ArgumentTypeError: must be a finite number above 0, got 0
    """
    value = _number(text)
    if not (math.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(f"must be a finite number above 0, got {text}")
    return value


def share(text: str) -> float:
    """Read a number above 0 and at most 1 (a weight that must keep some of what it weighs).

    Example:
        >>> share("0.5")
        0.5
        >>> share("2")
        Traceback (most recent call last):
        argparse.ArgumentTypeError: must be above 0 and at most 1, got 2
    """
    value = _number(text)
    if not 0 < value <= 1:  # NaN fails this too
        raise argparse.ArgumentTypeError(f"must be above 0 and at most 1, got {text}")
    return value


def folder(text: str) -> Path:
    """Read an output folder: refused when it, or a folder above it, is an existing file (before any work).

    The research commands made it with ``mkdir`` when they first wrote, after their work: a
    ``FileExistsError`` or ``NotADirectoryError`` traceback after minutes of training or measuring.

    Example:
        >>> import tempfile
        >>> file = tempfile.NamedTemporaryFile()
        >>> folder(file.name + "/run")
        Traceback (most recent call last):
        argparse.ArgumentTypeError: cannot be created: ... is a file, not a folder
        >>> folder(file.name)
        Traceback (most recent call last):
        argparse.ArgumentTypeError: is an existing file; give a folder to write the outputs in
    """
    if not text:
        raise argparse.ArgumentTypeError("is empty; give a folder")
    path = Path(text)
    if path.exists() and not path.is_dir():
        raise argparse.ArgumentTypeError("is an existing file; give a folder to write the outputs in")
    above = next((p for p in path.absolute().parents if p.exists()), None)
    if above is not None and not above.is_dir():
        raise argparse.ArgumentTypeError(f"cannot be created: {above} is a file, not a folder")
    return path


def folder_for(*files: str) -> Callable[[str], Path]:
    """Return an argparse type that reads an output folder (:func:`folder`) where ``files`` will be written.

    Each file's path is refused when it is an existing folder: the write failed there, after the work.

    Example:
        >>> import tempfile, pathlib
        >>> out = pathlib.Path(tempfile.mkdtemp())
        >>> (out / "results.json").mkdir()
        >>> folder_for("results.json")(str(out))
        Traceback (most recent call last):
        argparse.ArgumentTypeError: .../results.json is a folder; results.json is written there: give another folder
    """

    def read(text: str) -> Path:
        path = folder(text)
        for name in files:
            if (path / name).is_dir():
                raise argparse.ArgumentTypeError(f"{path / name} is a folder; {name} is written there: "
                                                 "give another folder")  # fmt: skip
        return path

    return read
