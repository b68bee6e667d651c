"""Write files so that a crash never leaves a half-written output.

A write that fails for a reason of the system (a full disk, an I/O error, no permission) raises
one :class:`WriteError` naming the file and the reason, with no chained traceback; the old file
is kept and the temporary file and any folder the write created are removed.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import tempfile
from collections.abc import Iterator
from contextvars import ContextVar
from pathlib import Path
from typing import IO, Any, Literal, overload

from dialeval.errors import NAME_MAX, DialevalError

#: The open :func:`all_or_nothing` block: its folder and the (temporary file, target) renames it holds back.
_STAGED: ContextVar[tuple[Path, list[tuple[str, Path]]] | None] = ContextVar("dialeval_staged", default=None)


class WriteError(DialevalError, OSError):
    """A file could not be written (disk full, I/O error, no permission), naming the file and the reason.

    Example:
        >>> import errno
        >>> print(WriteError.of("out.jsonl", OSError(errno.ENOSPC, "No space left on device")))
        out.jsonl: cannot be written: No space left on device
        >>> print(WriteError("c.sqlite", "database or disk is full", field="--cache"))
        c.sqlite: field "--cache": cannot be written: database or disk is full
    """

    def __init__(self, path: str | Path, reason: str, *, field: str | None = None) -> None:
        self.path = str(path)
        self.reason = reason
        self.field = field
        where = f'{self.path}: field "{field}"' if field else self.path
        self.message = f"{where}: cannot be written: {reason}"
        super().__init__(self.message)

    def __str__(self) -> str:
        return self.message

    @classmethod
    def of(cls, path: str | Path, exc: BaseException, *, field: str | None = None) -> WriteError:
        """Return the error for ``path`` that ``exc`` (an :class:`OSError`) gives: its ``strerror``, else its text."""
        reason = getattr(exc, "strerror", None) or str(exc) or type(exc).__name__
        return cls(path, reason, field=field)


def _umask() -> int:
    """Return the process umask (reading it means setting it; it is set straight back)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def temp_folder(parent: Path, prefix: str) -> Path:
    """Return a new hidden folder in ``parent`` to be renamed into place, with a new folder's mode.

    :func:`tempfile.mkdtemp` makes it 0700: renamed into place (a saved model, a converted model), it was readable
    by its owner only. It gets ``0777`` less the umask, as :meth:`Path.mkdir` gives.

    Example:
        >>> import tempfile, pathlib
        >>> d = temp_folder(pathlib.Path(tempfile.mkdtemp()), ".x.")
        >>> oct(d.stat().st_mode & 0o777) == oct(0o777 & ~_umask())
        True
    """
    folder = Path(tempfile.mkdtemp(prefix=prefix, dir=parent))
    folder.chmod(0o777 & ~_umask())
    return folder


def special_kind(path: Path) -> str | None:
    """Say what ``path`` is when it is neither a file nor a folder (links followed): device, pipe, socket, link loop.

    Renaming a new file over it, as :func:`atomic_write` does, would replace the device or the link to it
    (``/dev/null``, ``/dev/stdout``) for every program on the machine, so writers refuse it. A link in a
    loop (``ln -s loop loop``) leads to no file to write through to: the rename replaced the link.

    Example:
        >>> special_kind(Path("/dev/null")), special_kind(Path("/tmp")), special_kind(Path("/no/such/file"))
        ('a character device', None, None)
    """
    try:
        mode = path.stat().st_mode
    except OSError as exc:
        return "a loop of symbolic links" if exc.errno == errno.ELOOP and path.is_symlink() else None
    kinds = [(stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"), (stat.S_ISFIFO, "a pipe"),
             (stat.S_ISSOCK, "a socket")]  # fmt: skip
    return next((name for test, name in kinds if test(mode)), None)


def missing_dirs(folder: Path) -> list[Path]:
    """Return the folders that creating ``folder`` (with its parents) would create, deepest first.

    Example:
        >>> import tempfile, pathlib
        >>> root = pathlib.Path(tempfile.mkdtemp())
        >>> [p.relative_to(root).as_posix() for p in missing_dirs(root / "a" / "b")]
        ['a/b', 'a']
    """
    out = []
    for p in (folder, *folder.parents):
        if p.exists() or p.is_symlink():
            break
        out.append(p)
    return out


def remove_dirs(created: list[Path]) -> None:
    """Remove the folders of :func:`missing_dirs` that are still empty, deepest first; ignore the others."""
    for p in created:
        with contextlib.suppress(OSError):
            p.rmdir()


def _ours(exc: BaseException, *paths: str | Path) -> bool:
    """Whether ``exc`` is the failure of a write to one of ``paths`` (an OSError about them or about no file)."""
    if not isinstance(exc, OSError) or isinstance(exc, DialevalError):
        return False
    return exc.filename is None or str(exc.filename) in {str(p) for p in paths}


def _make_parent(target: Path) -> list[Path]:
    """Create the folder of ``target``; return the folders created (see :func:`missing_dirs`)."""
    created = missing_dirs(target.parent)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        remove_dirs(created)
        raise WriteError.of(target, exc) from None
    return created


def _temp_prefix(name: str) -> str:
    """Return the prefix of the temporary file written beside ``name``: ``.NAME.``, cut so the file's name fits.

    mkstemp adds 8 characters and ".tmp": beside a name of 242 to 255 bytes (a valid one) the temporary
    file's was too long, and the write failed after all the work.

    Example:
        >>> _temp_prefix("scores.jsonl"), len(os.fsencode(_temp_prefix("é" * 200)))
        ('.scores.jsonl.', 242)
    """
    room = NAME_MAX - len("..") - 8 - len(".tmp")
    while len(os.fsencode(name)) > room:
        name = name[:-1]
    return f".{name}."


@overload
def atomic_write(
    path: str | Path, mode: Literal["w"] = "w", encoding: str | None = "utf-8", *, private: bool = False
) -> contextlib.AbstractContextManager[IO[str]]: ...


@overload
def atomic_write(
    path: str | Path, mode: Literal["wb"], encoding: str | None = None, *, private: bool = False
) -> contextlib.AbstractContextManager[IO[bytes]]: ...


@contextlib.contextmanager
def atomic_write(
    path: str | Path, mode: str = "w", encoding: str | None = "utf-8", *, private: bool = False
) -> Iterator[IO[Any]]:
    """Open a temporary file beside ``path`` and rename it over ``path`` on success.

    When ``path`` is a symbolic link, the file it points to is replaced and the link is kept.

    On any exception the temporary file is removed and ``path`` is untouched, and folders
    created for it are removed again. The file gets the permissions a plain ``open`` would give
    it (0666 less the umask), not mkstemp's 0600, unless ``private``: then it is the owner's
    only (0600) from its first byte. Inside an :func:`all_or_nothing` block for its folder, the
    rename waits for the end of the block.

    Raises:
        WriteError: The file could not be written (a full disk, an I/O error), ``path`` is a device,
            a pipe or a socket (:func:`special_kind`), or a link into a missing folder: naming it and the reason.

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
    given = Path(path)
    if kind := special_kind(given):
        raise WriteError(given, f"it is {kind}, not a file")
    # A symbolic link is written through: the rename replaces the file it points to and keeps the link.
    # Renaming over the link itself replaced /dev/stdout (a link to /proc/self/fd/1) machine-wide when
    # standard output was a file.
    target = Path(os.path.realpath(given)) if given.is_symlink() else given
    if target != given and not target.parent.is_dir():  # made there, the folders were outside what was given
        raise WriteError(given, f"it is a symbolic link to {target}, whose folder does not exist")
    created = _make_parent(target)
    try:
        fd, tmp = tempfile.mkstemp(prefix=_temp_prefix(target.name), suffix=".tmp", dir=target.parent)
    except OSError as exc:
        remove_dirs(created)
        raise WriteError.of(given, exc) from None
    try:
        with os.fdopen(fd, mode, encoding=encoding if "b" not in mode else None) as handle:
            yield handle
            handle.flush()
            if not private:
                os.fchmod(handle.fileno(), 0o666 & ~_umask())
            os.fsync(handle.fileno())
        staged = _STAGED.get()
        if staged is not None and given.absolute().parent == staged[0]:
            staged[1].append((tmp, target))
        else:
            os.replace(tmp, target)
    except BaseException as exc:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        remove_dirs(created)
        if _ours(exc, tmp, target):
            raise WriteError.of(given, exc) from None
        raise


@contextlib.contextmanager
def all_or_nothing(folder: str | Path) -> Iterator[None]:
    """Write several files of ``folder`` as one: every file is renamed into place at the end, or none.

    Each :func:`atomic_write` into ``folder`` inside the block writes its temporary file and
    waits; when the block ends without an error, all are renamed over their targets at once.
    On an error (a full disk, an interrupt) every temporary file is removed, the old files are
    kept as they were, and ``folder`` is removed again if the block created it.

    Example:
        >>> import tempfile, pathlib
        >>> out = pathlib.Path(tempfile.mkdtemp()) / "run"
        >>> try:
        ...     with all_or_nothing(out):
        ...         with atomic_write(out / "a.txt") as f:
        ...             _ = f.write("a")
        ...         raise KeyboardInterrupt
        ... except KeyboardInterrupt:
        ...     pass
        >>> out.exists()
        False
    """
    root = Path(folder).absolute()
    created = missing_dirs(root)
    staged: list[tuple[str, Path]] = []
    token = _STAGED.set((root, staged))
    try:
        yield
        for _, target in staged:  # a folder made there meanwhile failed its rename after the others were done
            if target.is_dir():
                raise WriteError(target, "it is a folder, not a file")
        for tmp, target in staged:
            try:
                os.replace(tmp, target)
            except OSError as exc:
                raise WriteError.of(target, exc) from None
    except BaseException:
        for tmp, _ in staged:  # those already renamed are gone
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)
        remove_dirs(created)
        raise
    finally:
        _STAGED.reset(token)


@contextlib.contextmanager
def staged_folder(folder: str | Path) -> Iterator[Path]:
    """Yield a new hidden folder inside ``folder`` to write a tree of outputs into; move them all into place at the end.

    For writers that read back what they wrote (a training run fits the ensemble over the heads it
    just saved), which :func:`all_or_nothing` cannot hold back. When the block ends without an error,
    each file of the staged tree is renamed over the same path in ``folder``; on an error (an
    interrupt) the staged tree is removed, the old files are kept as they were, and ``folder`` is
    removed again if the block created it.

    Example:
        >>> import tempfile, pathlib
        >>> out = pathlib.Path(tempfile.mkdtemp())
        >>> _ = (out / "a.txt").write_text("old")
        >>> try:
        ...     with staged_folder(out) as stage:
        ...         _ = (stage / "a.txt").write_text("new")
        ...         raise KeyboardInterrupt
        ... except KeyboardInterrupt:
        ...     pass
        >>> (out / "a.txt").read_text(), sorted(p.name for p in out.iterdir())
        ('old', ['a.txt'])
        >>> with staged_folder(out) as stage:
        ...     (stage / "sub").mkdir()
        ...     _ = (stage / "sub" / "b.txt").write_text("b")
        >>> sorted(p.relative_to(out).as_posix() for p in out.rglob("*"))
        ['a.txt', 'sub', 'sub/b.txt']
    """
    import shutil

    root = Path(folder).absolute()
    created = missing_dirs(root)
    try:
        root.mkdir(parents=True, exist_ok=True)
        stage = Path(tempfile.mkdtemp(prefix=".staged-", dir=root))
    except OSError as exc:
        remove_dirs(created)
        raise WriteError.of(root, exc) from None
    try:
        yield stage
        for tmp in sorted(p for p in stage.rglob("*") if p.is_file()):
            target = root / tmp.relative_to(stage)
            try:
                target.parent.mkdir(parents=True, exist_ok=True)
                os.replace(tmp, target)
            except OSError as exc:
                raise WriteError.of(target, exc) from None
    finally:
        shutil.rmtree(stage, ignore_errors=True)
        remove_dirs(created)
