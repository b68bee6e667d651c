"""Check a torch device name once, before any model loads: ``cpu``, ``cuda``, ``cuda:N``, ``mps`` or ``auto``.

A misspelt device or a GPU that torch cannot see is one :class:`~dialeval.errors.InputError`
naming the option, not torch's traceback from deep inside a model load. Checking ``cpu`` and
``auto`` imports nothing; ``cuda`` and ``mps`` import torch to ask it.

Example:
    >>> check_device("cpu")
    'cpu'
    >>> check_device("gpu", field="--device")
    Traceback (most recent call last):
    ...
    dialeval.errors.InputError: field "--device": "gpu" is not a device; use cpu, cuda, cuda:N, mps or auto
"""

from __future__ import annotations

import importlib.util
import re

from dialeval.errors import InputError

#: What a device may be called (``auto``: cuda when torch sees a GPU, else cpu).
DEVICE_FORMS = "cpu, cuda, cuda:N, mps or auto"
_ACCELERATOR = re.compile(r"(cuda|mps)(?::(\d+))?")


def check_device(device: str, *, field: str = "device") -> str:
    """Return ``device`` if torch can run on it here; else raise naming ``field``.

    Raises:
        InputError: ``device`` is not cpu, cuda, cuda:N, mps or auto; or it is cuda (mps) and
            torch sees no such device (or is not installed); or cuda:N is past the last GPU.
    """
    if device in ("cpu", "auto"):
        return device
    found = _ACCELERATOR.fullmatch(device)
    if found is None:
        raise InputError(f'"{device}" is not a device; use {DEVICE_FORMS}', field=field)
    kind, index = found.group(1), found.group(2)
    if importlib.util.find_spec("torch") is None:
        raise InputError(
            f"\"{device}\" needs torch, which is not installed: pip install 'dialeval[models]'", field=field
        )
    import torch

    if kind == "mps":
        if not torch.backends.mps.is_available():
            raise InputError(f'"{device}" asked for, but torch sees no MPS (Apple GPU) device; use cpu', field=field)
        return device
    count = torch.cuda.device_count() if torch.cuda.is_available() else 0
    if count == 0:
        build = " (this torch is a CPU-only build)" if torch.version.cuda is None else ""
        raise InputError(f'"{device}" asked for, but torch sees no CUDA device{build}; use cpu', field=field)
    if index is not None and int(index) >= count:
        raise InputError(
            f'"{device}" asked for, but torch sees {count} CUDA device(s): cuda:0 to cuda:{count - 1}', field=field
        )
    return device
