"""Checks of a command line that typer cannot make: text that is not UTF-8, an empty path, a deleted folder.

``Path("")`` is the current folder, so typer hands a command ``.`` for ``-o ""``: with ``-o "$OUT"``
and ``OUT`` unset, ``meta`` replaced the ``table.md`` of whatever folder the shell was in, and
``study create ""`` put a study there. :func:`check_empty_paths` refuses an empty value of any
path option or argument before the command starts (``-o .`` still means the current folder).

click keeps the last value of an option that takes one and is given twice, silently: ``lmstyle --datasets dd
--datasets bst`` ran bst only. The same walk refuses two different values of such an option.
"""

from __future__ import annotations

import inspect
import os
import types
import typing
from contextvars import ContextVar
from pathlib import Path
from typing import Any

from dialeval.errors import InputError, given_path, not_utf8

#: The path values of the command line that end in "/" (a folder, as the shell completes one) or "/." (a folder
#: too: ``-o "$DIR/."``), as ``Path`` reads them, with that ending: it drops it, so ``score -o runs/`` wrote a file
#: named ``runs`` (:func:`given_as_folder`).
_SLASHED: ContextVar[tuple[tuple[Path, str], ...]] = ContextVar("dialeval_slashed", default=())


def given_as_folder(path: Path) -> str:
    """Return the ending ("/" or "/.") that ``path`` was given with on this command line ("" when none).

    Its ``Path`` no longer shows it.

    Example:
        >>> given_as_folder(Path("runs"))  # no command line was read here
        ''
    """
    return dict(_SLASHED.get()).get(path, "")


def is_path(annotation: Any) -> bool:
    """Whether a parameter's annotation is a path: ``Path``, ``Path | None``, ``list[Path]``.

    Example:
        >>> is_path(Path), is_path(Path | None), is_path(list[Path]), is_path(str | None), is_path(int)
        (True, True, True, False, False)
    """
    if annotation is Path:
        return True
    origin = typing.get_origin(annotation)
    return origin in (list, tuple, typing.Union, types.UnionType) and any(
        is_path(arg) for arg in typing.get_args(annotation)
    )


def check_empty_paths(command: Any, args: list[str]) -> None:
    """Refuse ``""`` as the value of a path option or argument of the (sub-)command ``args`` names, and two values.

    ``command`` is the click command (or group) the words ``args`` follow; sub-command names are
    followed down to the command that runs.

    The path values that end in "/" are kept for :func:`given_as_folder`.

    Raises:
        InputError: Naming the option (``--output``) or argument (``STUDY_DIR``) given an empty value, or the
            option that takes one value given two (:func:`_once`).
    """
    _SLASHED.set(())
    while (subs := getattr(command, "commands", None)) and args and args[0] in subs:
        command, args = subs[args[0]], args[1:]
    if getattr(command, "callback", None) is None:
        return
    signature = inspect.signature(command.callback, eval_str=True).parameters
    paths = {name for name, p in signature.items() if is_path(p.annotation)}
    options = {opt: p for p in command.params if p.param_type_name == "option" for opt in (*p.opts, *p.secondary_opts)}
    arguments = [p for p in command.params if p.param_type_name == "argument"]
    positional: list[str] = []
    slashed: list[str] = []  # the path values: those that end in "/" are kept for given_as_folder
    first: dict[str, str] = {}  # each one-value option's first value
    i = 0
    while i < len(args):
        token = args[i]
        if token == "--":
            positional += args[i + 1 :]
            break
        param, attached = _option_in(token, options)
        if param is None:
            positional.append(token)
            i += 1
            continue
        if param.is_flag or param.count:
            i += 1
            continue
        given = attached if attached is not None else (args[i + 1] if i + 1 < len(args) else None)
        i += 1 if attached is not None else 2
        if given is not None and not param.multiple:
            _once(param, first.setdefault(param.name, given), given)
        if given is not None and param.name in paths:
            given_path(given, max(param.opts, key=len))
            slashed.append(given)
    for k, token in enumerate(positional):
        param = arguments[min(k, len(arguments) - 1)] if arguments else None  # a variadic argument takes the rest
        if param is not None and param.name in paths:
            given_path(token, param.name.upper())  # as the usage line names it
            slashed.append(token)
    ends = [(p, "/" if p.endswith("/") else "/.") for p in slashed if p.endswith(("/", "/.")) and p.strip("/")]
    _SLASHED.set(tuple((Path(p), end) for p, end in ends))


def _option_in(word: str, options: dict[str, Any]) -> tuple[Any, str | None]:
    """Return the option a word gives, as click reads it, and the value the word holds (None: the next word's).

    ``--output=x`` and ``-ox`` hold x; ``-qo`` is the flag ``-q`` and ``-o``, whose value is the next word.
    A word that gives no option (or an unknown one, which click refuses) gives ``(None, None)``.
    """
    if word.startswith("--"):
        name, eq, value = word.partition("=")
        return options.get(name), (value if eq else None)
    if not word.startswith("-") or len(word) < 2:
        return None, None
    param = None
    for k in range(1, len(word)):  # short options in one word: flags, then at most one that takes the rest
        param = options.get(f"-{word[k]}")
        if param is None:
            return None, None
        if not (param.is_flag or param.count):
            return param, word[k + 1 :] or None
    return param, None


def _once(param: Any, first: str, given: str) -> None:
    """Refuse ``given`` as a second value of ``param``, an option that takes one, where it is not ``first``.

    An option whose help says "comma-separated", or whose default is a comma list, reads both as one list.

    Raises:
        InputError: Naming the option, both values and the fix.
    """
    if given == first:
        return
    name = max(param.opts, key=len)
    listed = "comma-separated" in (param.help or "").lower() or "," in str(param.default or "")
    both = f", or both as one list: {name} {first},{given}" if listed else ""
    raise InputError(f'given twice ("{first}", then "{given}"); it takes one value: give it once{both}', field=name)


def check_arguments(argv: list[str]) -> None:
    r"""Refuse an argument holding bytes that are not UTF-8 (a Latin-1 terminal's ``é``), naming it and the byte.

    Python keeps such bytes as lone surrogates, which no output file can hold: ``--rating-col q=café`` failed
    only when the records were written, with pydantic's ``UnicodeEncodeError`` traceback.

    Example:
        >>> check_arguments(["score", "--rating-col", "q=caf\udce9"])
        Traceback (most recent call last):
        ...
        dialeval.errors.InputError: argument 3 ('q=caf\udce9') is not UTF-8 text: byte 0xe9 at character 6 ...
    """
    for n, arg in enumerate(argv, 1):
        if why := not_utf8(arg):
            raise InputError(f"argument {n} ({arg!a}) {why} (is the terminal's encoding UTF-8?)")


def check_working_folder() -> None:
    """Refuse to run in a folder that was deleted after the shell entered it.

    Every relative path, and the default shared data folder (``../shared/data``), is read from the
    working folder: ``dialeval score`` there ended in a ``FileNotFoundError`` traceback from
    ``Path.cwd()``, with no word of which folder was missing.

    Example:
        >>> check_working_folder()  # this one exists
    """
    try:
        os.getcwd()
    except FileNotFoundError:
        raise InputError("the current folder no longer exists (it was deleted after the shell entered it): "
                         "cd to a folder that exists and run the command again") from None  # fmt: skip
