"""Errors that tell the user what is wrong and where."""

from __future__ import annotations

import difflib
import numbers
import os
from collections.abc import Iterable
from pathlib import Path


def closest(name: str, known: Iterable[str], cutoff: float = 0.5) -> str | None:
    """Return the known name most like ``name`` (for a "did you mean" hint), or None if none is close.

    Case does not count: "BLEU" is close to "bleu" (it had no hint). A name of three characters or more that
    begins one known name only is taken as its start: "gupta" had no hint beside "gupta-dailydialog".

    Example:
        >>> closest("lenght", ["bleu1", "length"]), closest("zzz", ["length"]), closest("BLEU", ["bleu", "f1"])
        ('length', None, 'bleu')
        >>> closest("gupta", ["gupta-dailydialog", "usr-tc"])
        'gupta-dailydialog'
    """
    by_lower: dict[str, str] = {}
    for known_name in known:
        by_lower.setdefault(known_name.lower(), known_name)
    starts = [k for k in by_lower if k.startswith(name.lower())] if len(name) >= 3 else []
    if len(starts) == 1:
        return by_lower[starts[0]]
    found = difflib.get_close_matches(name.lower(), list(by_lower), n=1, cutoff=cutoff)
    return by_lower[found[0]] if found else None


def not_utf8(text: str) -> str | None:
    r"""Say where ``text`` holds a byte that was not UTF-8, or None if it holds none.

    Python keeps such bytes of a command line, an environment variable or a file name as lone
    surrogates, which no output file can hold: the first write of them fails.

    Example:
        >>> not_utf8("q=caf\udce9"), not_utf8("café")
        ('is not UTF-8 text: byte 0xe9 at character 6', None)
    """
    bad = next((i for i, ch in enumerate(text) if "\udc80" <= ch <= "\udcff"), None)
    return None if bad is None else f"is not UTF-8 text: byte 0x{ord(text[bad]) - 0xDC00:02x} at character {bad + 1}"


def one_line(text: str) -> str:
    r"""Return ``text`` with each character that is not printable written as its escape, so it stays one line.

    A file name or column name with a line break (or a tab, a non-breaking space) split an error in two lines
    and hid which character was there.

    Example:
        >>> print(one_line("bad\nname.csv: not found"), one_line("\u00a0café\t"))
        bad\nname.csv: not found \xa0café\t
    """
    return "".join(ch if ch.isprintable() else repr(ch)[1:-1] for ch in text)


def ensure_unique(names: Iterable[str], field: str, what: str = "column") -> None:
    """Reject a name given twice in a list of names (the first repeat, in order): an option, a list argument.

    Example:
        >>> ensure_unique(["a", "b", "a"], "--reference-col")
        Traceback (most recent call last):
        ...
        dialeval.errors.InputError: field "--reference-col": column "a" is given twice
    """
    seen = set()
    for n in names:
        if n in seen:
            raise InputError(f'{what} "{n}" is given twice', field=field)
        seen.add(n)


def check_at_most(value: int, most: int, field: str, *, unit: str = "", why: str = "") -> None:
    """Refuse a count over ``most`` (a huge one was a C overflow, a numpy dimension error, or work without end).

    Example:
        >>> check_at_most(200_000, 100_000, "--n-boot", unit="resamples")
        Traceback (most recent call last):
        ...
        dialeval.errors.InputError: field "--n-boot": must be at most 100,000 resamples, got 200,000
        >>> check_at_most(9, 8, "--workers", why="4 per core here")
        Traceback (most recent call last):
        ...
        dialeval.errors.InputError: field "--workers": must be at most 8 (4 per core here), got 9
    """
    if value > most:
        said = f"{most:,}" + (f" {unit}" if unit else "") + (f" ({why})" if why else "")
        raise InputError(f"must be at most {said}, got {value:,}", field=field)


NAME_MAX, PATH_MAX = 255, 4095
"""The longest file name and path, in bytes, that Linux file systems take (ext4, XFS, Btrfs, tmpfs)."""


def given_path(value: str | Path, field: str) -> Path:
    """Return ``value`` as a path, refusing an empty or blank string (``Path("")`` is ``.``) and a name too long.

    A name over :data:`NAME_MAX` bytes was an ``OSError: File name too long`` traceback from the
    first look at the path (``Path.is_dir`` raises it).

    Example:
        >>> given_path("out", "--output")
        PosixPath('out')
        >>> given_path("", "--output")
        Traceback (most recent call last):
        ...
        dialeval.errors.InputError: field "--output": is empty; give a path (. for the current folder)
        >>> given_path(" ", "--output")
        Traceback (most recent call last):
        ...
        dialeval.errors.InputError: field "--output": is only whitespace; give a path (. for the current folder)
        >>> given_path("runs/" + "a" * 300, "--output")
        Traceback (most recent call last):
        ...
        dialeval.errors.InputError: field "--output": the name "aaaaaaaaaaaaaaaaaaaa..." is 300 bytes long; ...
    """
    if isinstance(value, str) and not value.strip():  # " ": score -o " " wrote a file named " "
        raise InputError(f"is {'only whitespace' if value else 'empty'}; give a path (. for the current folder)",
                         field=field)  # fmt: skip
    path = Path(value)
    sizes = {part: len(os.fsencode(part)) for part in path.parts}
    if long := next((part for part, size in sizes.items() if size > NAME_MAX), None):
        shown = long if len(long) <= 23 else long[:20] + "..."
        raise InputError(f'the name "{shown}" is {sizes[long]:,} bytes long; file systems take {NAME_MAX} at most',
                         field=field)  # fmt: skip
    if (size := len(os.fsencode(str(path)))) > PATH_MAX:
        raise InputError(f"is {size:,} bytes long; file systems take paths of {PATH_MAX:,} at most", field=field)
    return path


MAX_SEED = 2**32 - 1
"""The largest seed: llama.cpp's seeds are 32-bit, and torch's ``manual_seed`` overflowed at 2**64."""


def check_seed(seed: int, field: str = "--seed") -> None:
    """Refuse a negative seed, or one over :data:`MAX_SEED`.

    numpy's generators take no negative seed, and llama.cpp reads one as "a random seed".

    Example:
        >>> check_seed(-1)
        Traceback (most recent call last):
        ...
        dialeval.errors.InputError: field "--seed": must be >= 0, got -1
        >>> check_seed("1", "seed")
        Traceback (most recent call last):
        ...
        dialeval.errors.InputError: field "seed": must be a whole number, got '1' (str)
        >>> check_seed(2**32)
        Traceback (most recent call last):
        ...
        dialeval.errors.InputError: field "--seed": must be at most 4,294,967,295 (seeds are 32-bit), got 4,294,967,296
    """
    check_whole(seed, field)
    if seed < 0:
        raise InputError(f"must be >= 0, got {seed}", field=field)
    check_at_most(seed, MAX_SEED, field, why="seeds are 32-bit")


def check_whole(value: object, field: str) -> None:
    """Refuse a value that is not a whole number (a Python or numpy integer; not a bool, a float or a string).

    From Python (``correlate(..., seed="1")``) it was a ``TypeError`` of comparison deep in numpy.
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise InputError(f"must be a whole number, got {value!r} ({type(value).__name__})", field=field)


class DialevalError(Exception):
    """Base class for every error dialeval raises on purpose."""


class InputError(DialevalError, ValueError):
    """Malformed input, located by file, line and field.

    Example:
        >>> str(InputError("bad value", path="a.jsonl", line=3, field="value"))
        'a.jsonl:3: field "value": bad value'
    """

    def __init__(
        self,
        message: str,
        *,
        path: str | Path | None = None,
        line: int | None = None,
        field: str | None = None,
    ) -> None:
        self.message = message
        self.path = str(path) if path is not None else None
        self.line = line
        self.field = field
        super().__init__(self._render())

    def _render(self) -> str:
        where = ""
        if self.path is not None:
            where = self.path if self.line is None else f"{self.path}:{self.line}"
        parts = [p for p in (where, f'field "{self.field}"' if self.field else "") if p]
        prefix = ": ".join(parts)
        return f"{prefix}: {self.message}" if prefix else self.message

    def given_by(self, field: str) -> InputError:
        """Name ``field`` as where the bad input came from (the option that gave a name) and return this error.

        The same exception, its type and traceback kept.

        Example:
            >>> str(InputError("unknown metric x").given_by("--metrics"))
            'field "--metrics": unknown metric x'
        """
        self.field = field
        self.args = (self._render(),)
        return self


class MissingExtraError(DialevalError, ImportError):
    """An optional dependency is not installed.

    Example:
        >>> print(MissingExtraError("torch", extra="models"))
        This needs the optional package "torch": pip install 'dialeval[models]'
    """

    def __init__(self, package: str, *, extra: str | None = None, hint: str | None = None) -> None:
        fix = hint or (f"pip install 'dialeval[{extra}]'" if extra else f"pip install {package}")
        super().__init__(f'This needs the optional package "{package}": {fix}')
        self.package = package
        self.extra = extra


class UnknownNameError(InputError, KeyError):
    """A name that is not in a registry, with the closest matches: bad input, which a command names the option of."""

    def __str__(self) -> str:
        return str(self.args[0])


def unknown_name(kind: str, name: str, known: Iterable[str]) -> UnknownNameError:
    """Return the error for a name not among ``known``: the closest known name, else every one.

    Example:
        >>> print(unknown_name("widget", "sevn", ["seven", "eight"]))
        unknown widget "sevn"; did you mean "seven"?
        >>> print(unknown_name("widget", "zzz", ["seven", "eight"]))
        unknown widget "zzz"; known: eight, seven
    """
    names = sorted(known)
    close = closest(name, names)
    hint = f'did you mean "{close}"?' if close else f"known: {', '.join(names)}"
    return UnknownNameError(f'unknown {kind} "{name}"; {hint}')
