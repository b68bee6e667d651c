"""Atomic writes: a failed write (full disk, I/O error) is one WriteError naming the file, keeps the old file,
leaves no temporary file and no folder it created; all_or_nothing renames a folder's files together or not at all.
"""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest
from tests.conftest import FullDisk

import dialeval.atomic as atomic
from dialeval.atomic import WriteError, all_or_nothing, atomic_write
from dialeval.errors import DialevalError


def _leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".tmp"))


def test_a_full_disk_is_one_write_error_naming_the_file_with_no_chained_traceback(
    tmp_path: Path, full_disk: None
) -> None:
    out = tmp_path / "out.jsonl"
    out.write_text("old\n")
    with pytest.raises(WriteError) as caught, atomic_write(out) as handle:
        handle.write("new\n")
    err = caught.value
    assert str(err) == f"{out}: cannot be written: No space left on device"
    assert isinstance(err, DialevalError) and isinstance(err, OSError)
    assert err.__cause__ is None and err.__suppress_context__  # "from None": no "During handling..." chain
    assert out.read_text() == "old\n"
    assert _leftovers(tmp_path) == []


def test_a_failed_write_removes_the_folders_it_created(tmp_path: Path, full_disk: None) -> None:
    out = tmp_path / "new" / "deeper" / "out.jsonl"
    with pytest.raises(WriteError), atomic_write(out) as handle:
        handle.write("x")
    assert list(tmp_path.iterdir()) == []


def test_an_io_error_at_fsync_is_a_write_error_too(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(fd: int) -> None:
        raise OSError(errno.EIO, os.strerror(errno.EIO))

    monkeypatch.setattr(atomic.os, "fsync", broken)
    out = tmp_path / "out.txt"
    with pytest.raises(WriteError, match=r"out\.txt: cannot be written: Input/output error"), atomic_write(out) as f:
        f.write("x")
    assert not out.exists() and _leftovers(tmp_path) == []


def test_an_error_of_the_writer_about_another_file_is_not_blamed_on_the_output(tmp_path: Path) -> None:
    out = tmp_path / "out.txt"
    with pytest.raises(FileNotFoundError) as caught, atomic_write(out):
        (tmp_path / "missing-input.txt").read_text()
    assert not isinstance(caught.value, WriteError)
    assert not out.exists() and _leftovers(tmp_path) == []


def test_all_or_nothing_renames_every_file_at_the_end(tmp_path: Path) -> None:
    folder = tmp_path / "run"
    with all_or_nothing(folder):
        with atomic_write(folder / "a.txt") as f:
            f.write("a")
        assert not (folder / "a.txt").exists()  # held back until the block ends
        with atomic_write(folder / "b.txt") as f:
            f.write("b")
    assert (folder / "a.txt").read_text() == "a" and (folder / "b.txt").read_text() == "b"
    assert _leftovers(folder) == []


def test_all_or_nothing_keeps_every_old_file_when_a_later_write_fails(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "run"
    folder.mkdir()
    for name in ("a.txt", "b.txt"):
        (folder / name).write_text(f"old {name}")
    with pytest.raises(WriteError, match=r"b\.txt"), all_or_nothing(folder):
        with atomic_write(folder / "a.txt") as f:
            f.write("new a")
        real_fdopen = os.fdopen
        monkeypatch.setattr(atomic.os, "fdopen", lambda fd, *a, **k: FullDisk(real_fdopen(fd, *a, **k)))
        with atomic_write(folder / "b.txt") as f:
            f.write("new b")
    assert (folder / "a.txt").read_text() == "old a.txt"  # not the new a: nothing half-written
    assert (folder / "b.txt").read_text() == "old b.txt"
    assert _leftovers(folder) == []


def test_all_or_nothing_renames_none_when_a_target_is_a_folder(tmp_path: Path) -> None:
    """A folder where the last file goes (made while the files were written): the renames before it were done, so
    data import left dialogues.jsonl and candidates.jsonl and failed on ratings.jsonl. Now none is renamed."""
    folder = tmp_path / "run"
    folder.mkdir()
    (folder / "a.txt").write_text("old a")
    with pytest.raises(WriteError, match=r"b\.txt: cannot be written: it is a folder"), all_or_nothing(folder):
        for name in ("a.txt", "b.txt"):
            with atomic_write(folder / name) as f:
                f.write(f"new {name}")
        (folder / "b.txt").mkdir()
    assert (folder / "a.txt").read_text() == "old a"
    assert sorted(p.name for p in folder.iterdir()) == ["a.txt", "b.txt"]


def test_all_or_nothing_removes_a_folder_it_created_on_failure(tmp_path: Path, full_disk: None) -> None:
    folder = tmp_path / "runs" / "benchmark"
    with pytest.raises(WriteError), all_or_nothing(folder), atomic_write(folder / "scores.jsonl") as f:
        f.write("x")
    assert list(tmp_path.iterdir()) == []


def test_all_or_nothing_removes_what_it_wrote_on_an_interrupt(tmp_path: Path) -> None:
    folder = tmp_path / "run"
    with pytest.raises(KeyboardInterrupt), all_or_nothing(folder):
        with atomic_write(folder / "a.txt") as f:
            f.write("a")
        raise KeyboardInterrupt
    assert not folder.exists()


def test_a_pipe_or_a_link_to_one_is_not_replaced(tmp_path: Path) -> None:
    """The last guard under every writer: renaming over /dev/null or /dev/stdout would replace it machine-wide."""
    pipe, link = tmp_path / "pipe", tmp_path / "stdout"
    os.mkfifo(pipe)
    link.symlink_to(pipe)
    for out in (pipe, link):
        with pytest.raises(WriteError) as caught, atomic_write(out) as handle:
            handle.write("x")
        assert str(caught.value) == f"{out}: cannot be written: it is a pipe, not a file"
    assert pipe.is_fifo() and link.is_symlink() and _leftovers(tmp_path) == []


def test_a_link_is_written_through_and_kept(tmp_path: Path) -> None:
    """/dev/stdout is a link to /proc/self/fd/1; with standard output a file, renaming over the link replaced
    /dev/stdout for the whole machine. A link made here to /proc/self/fd/N of a file opened here stands for it."""
    real = tmp_path / "real.txt"
    with real.open("w") as opened:
        link = tmp_path / "stdout"
        link.symlink_to(f"/proc/self/fd/{opened.fileno()}")
        with atomic_write(link) as handle:
            handle.write("scores\n")
        assert link.is_symlink() and os.readlink(link) == f"/proc/self/fd/{opened.fileno()}"
    assert real.read_text() == "scores\n" and _leftovers(tmp_path) == []
    plain = tmp_path / "latest.txt"  # an ordinary link: its target gets the new file
    plain.symlink_to(real)
    with atomic_write(plain) as handle:
        handle.write("again\n")
    assert plain.is_symlink() and real.read_text() == "again\n"


def test_a_loop_of_links_is_not_replaced(tmp_path: Path) -> None:
    """`ln -s loop loop` (or a -> b -> a) names no file: the write renamed its file over the link, silently."""
    loop, a, b = tmp_path / "loop", tmp_path / "a", tmp_path / "b"
    loop.symlink_to("loop")
    a.symlink_to("b")
    b.symlink_to("a")
    for out in (loop, a):
        with pytest.raises(WriteError) as caught, atomic_write(out) as handle:
            handle.write("x")
        assert str(caught.value) == f"{out}: cannot be written: it is a loop of symbolic links, not a file"
    assert [os.readlink(p) for p in (loop, a, b)] == ["loop", "b", "a"] and _leftovers(tmp_path) == []


def test_a_link_into_a_missing_folder_makes_no_folder_there(tmp_path: Path) -> None:
    """A link to gone/deeper/x.txt: the write made gone/deeper wherever the link pointed (/nonexist/x at the root of
    the machine) and wrote the file there; the link's own folder was all it was given."""
    link = tmp_path / "out.txt"
    link.symlink_to(tmp_path / "gone" / "deeper" / "x.txt")
    with pytest.raises(WriteError) as caught, atomic_write(link) as handle:
        handle.write("x")
    assert str(caught.value) == (f"{link}: cannot be written: it is a symbolic link to "
                                 f"{tmp_path / 'gone' / 'deeper' / 'x.txt'}, whose folder does not exist")  # fmt: skip
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.txt"] and link.is_symlink()


def test_staged_folder_keeps_every_old_file_of_the_tree_on_an_interrupt(tmp_path: Path) -> None:
    """quality train wrote heads/ then fitted quality/ over them: an interrupt in between left new heads beside an
    earlier run's ensemble and card. Staged, nothing of the old tree changes until the block ends."""
    (tmp_path / "heads").mkdir()
    (tmp_path / "heads" / "sensible.json").write_text("old")
    with pytest.raises(KeyboardInterrupt), atomic.staged_folder(tmp_path) as stage:
        (stage / "heads").mkdir()
        (stage / "heads" / "sensible.json").write_text("new")
        raise KeyboardInterrupt
    assert sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*")) == ["heads", "heads/sensible.json"]
    assert (tmp_path / "heads" / "sensible.json").read_text() == "old"
    with pytest.raises(KeyboardInterrupt), atomic.staged_folder(tmp_path / "new" / "run") as stage:
        (stage / "a.json").write_text("a")
        raise KeyboardInterrupt
    assert not (tmp_path / "new").exists()  # the folders it made are gone again
    with atomic.staged_folder(tmp_path) as stage:
        (stage / "heads").mkdir()
        (stage / "heads" / "sensible.json").write_text("new")
        (stage / "quality").mkdir()
        (stage / "quality" / "card.json").write_text("card")
    found = sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*"))
    assert found == ["heads", "heads/sensible.json", "quality", "quality/card.json"]
    assert (tmp_path / "heads" / "sensible.json").read_text() == "new"


def test_a_name_near_the_file_systems_limit_is_written(tmp_path: Path) -> None:
    """A name of 251 bytes is a valid file name (255 at most), but the temporary file beside it was named
    ".NAME.XXXXXXXX.tmp", 265 bytes: score -o NAME.jsonl scored everything, then failed "File name too long"."""
    for name in ("b" * 245 + ".jsonl", "é" * 122 + ".jsonl"):  # 251 and 250 bytes (é is 2 bytes in UTF-8)
        out = tmp_path / name
        with atomic_write(out) as handle:
            handle.write("x\n")
        assert out.read_text() == "x\n"
        folder = tmp_path / "run"
        with all_or_nothing(folder), atomic_write(folder / name) as handle:
            handle.write("y\n")
        assert (folder / name).read_text() == "y\n" and _leftovers(folder) == []
    assert _leftovers(tmp_path) == []
