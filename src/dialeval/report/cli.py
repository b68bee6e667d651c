"""``dialeval report``: results folders in, one self-contained HTML page (or Markdown / LaTeX tables) out."""

from __future__ import annotations

import shlex
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from dialeval.commands.common import (
    FILE_SUFFIXES,
    check_given_once,
    check_output,
    console,
    fail,
    replaced_note,
    write_text,
)
from dialeval.errors import DialevalError, InputError

if TYPE_CHECKING:
    from dialeval.schema import Rating

FORMATS = ("html", "md", "tex")


def report(
    folders: list[Path] | None = typer.Argument(
        None, help="Results folders (dialeval benchmark, meta -o, lmstyle, stress or train output); none with --study."
    ),
    output: Path | None = typer.Option(
        None, "--output", "-o", help="File to write (default: report.html, report.md or report.tex, by --format)."
    ),
    fmt: str | None = typer.Option(
        None, "--format", "-f", help="html (figures inlined), md or tex (tables only); default: by the output's "
        "suffix (.html, .md, .tex), else html.",
    ),
    study: list[Path] = typer.Option([], "--study", help="A human study export (ratings JSONL); repeatable."),
) -> None:
    """Turn results folders into a report: correlation tables with CIs, scatter plots, distributions, signatures."""
    from dialeval.report.build import build_report
    from dialeval.report.doc import to_html, to_latex, to_markdown
    from dialeval.report.load import Results, load_results

    folders = folders or []
    try:
        if not folders and not study:  # `report --study ratings.jsonl` was "Missing argument 'FOLDERS...'"
            raise InputError("give a results folder, or a study export with --study", field="FOLDERS")
        fmt, output = format_and_output(fmt, output)
        replaced = check_output(output, inputs=_inputs(folders, study))
        check_report_name(output)
        check_not_results(output)
        check_given_once(folders, "FOLDERS", "folders")  # its sections were written twice
        check_not_copies(folders)
        check_given_once(study, "--study", "study exports")
        results = [load_results(f) for f in folders]
        results += [Results(path=path, ratings=_study_ratings(path)) for path in study]
        command = "dialeval " + " ".join(shlex.quote(a) for a in sys.argv[1:])
        doc = build_report(results, command, log=lambda line: console.print(line, highlight=False))
    except DialevalError as exc:
        fail(exc)
        return
    render = {"html": to_html, "md": to_markdown, "tex": to_latex}[fmt]
    write_text(output, render(doc))
    console.print(f"wrote {output}{replaced_note(replaced)}", highlight=False, markup=False, soft_wrap=True)


def check_report_name(output: Path) -> None:
    """Refuse an output named as another kind of file than a report (``report.pdf``: HTML was written into it).

    Called after :func:`~dialeval.commands.common.check_output`: an output that is one of the inputs is worse news.

    Example:
        >>> check_report_name(Path("r.pdf"))
        Traceback (most recent call last):
        ...
        dialeval.errors.InputError: r.pdf: field "--output": names a .pdf file, and the report is HTML, Markdown or \
LaTeX: name it r.html (or .md, .tex)
    """
    if output.suffix.lower() not in SUFFIXES and output.suffix.lower() in FILE_SUFFIXES:
        html = output.with_suffix(".html").name
        raise InputError(f"names a {output.suffix} file, and the report is HTML, Markdown or LaTeX: name it {html} "
                         "(or .md, .tex)", path=output, field="--output")  # fmt: skip


def check_not_results(output: Path) -> None:
    """Refuse to replace a file that a command wrote into a results folder: ``-o runs/b/table.md`` replaced b's table.

    A report of the folder's own (``-o runs/b/report.html``) may be written again.

    Example:
        >>> import tempfile
        >>> runs = Path(tempfile.mkdtemp())
        >>> _ = (runs / "run.json").write_text("{}"), (runs / "table.md").write_text("| metric |")
        >>> check_not_results(runs / "table.md")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        dialeval.errors.InputError: ...table.md: field "--output": is the table.md of the results folder ...
        >>> check_not_results(runs / "report.md")  # a report beside the results is fine
        >>> _ = (runs / "stress.md").write_text("| metric |")  # every file a command writes, stress's too
        >>> check_not_results(runs / "stress.md")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        dialeval.errors.InputError: ...stress.md: field "--output": is the stress.md of the results folder ...
    """
    from typing import get_args

    from dialeval.meta.rows import COMPARE_FILE
    from dialeval.report.load import KNOWN
    from dialeval.runinfo import AnyRun

    written = {*KNOWN, COMPARE_FILE, "stress_subsets.jsonl", *(name for run in get_args(AnyRun) for name in run.FILES)}
    if output.name in written and output.is_file() and (output.parent / "run.json").is_file():
        raise InputError(f"is the {output.name} of the results folder {output.parent}: name another file",
                         path=output, field="--output")  # fmt: skip


def check_not_copies(folders: list[Path]) -> None:
    """Refuse a folder whose results files are those of another one given: a copy (``cp -r``) was reported twice.

    Example:
        >>> import shutil, tempfile
        >>> a = Path(tempfile.mkdtemp(), "a")
        >>> a.mkdir()
        >>> _ = (a / "stress.jsonl").write_text("a line")
        >>> _ = shutil.copytree(a, a.with_name("b"))
        >>> check_not_copies([a, a.with_name("b")])  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        dialeval.errors.InputError: ...b: field "FOLDERS": holds the same results files as ...a (folders 1 and 2): ...
        >>> shutil.rmtree(a.parent)
    """
    import filecmp

    from dialeval.report.load import KNOWN

    def files(folder: Path) -> list[str]:
        return [name for name in KNOWN if (folder / name).is_file()]

    for n, p in enumerate(folders):
        for m, q in enumerate(folders[:n]):
            if p.is_dir() and q.is_dir() and (names := files(p)) and names == files(q) and all(
                    filecmp.cmp(p / name, q / name, shallow=False) for name in names):  # fmt: skip
                raise InputError(f"holds the same results files as {q} (folders {m + 1} and {n + 1}): is one a copy "
                                 "of the other? Give it once", path=p, field="FOLDERS")  # fmt: skip


#: The suffixes that name a format.
SUFFIXES = {".html": "html", ".htm": "html", ".md": "md", ".markdown": "md", ".tex": "tex"}


def format_and_output(fmt: str | None, output: Path | None) -> tuple[str, Path]:
    """Return the format and the file: ``--format``, else the output's suffix, else html; ``report.<format>``.

    Raises:
        InputError: An unknown format, or one the output's suffix contradicts (Markdown in ``report.html``).

    Example:
        >>> format_and_output(None, Path("r.md")), format_and_output("tex", None), format_and_output(None, None)
        (('md', PosixPath('r.md')), ('tex', PosixPath('report.tex')), ('html', PosixPath('report.html')))
        >>> format_and_output("md", Path("r.html"))  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        dialeval.errors.InputError: field "--format": md does not go in r.html (a html file): name the file r.md, ...
    """
    if fmt is not None and fmt not in FORMATS:
        raise InputError(f'unknown format "{fmt}"; use one of {", ".join(FORMATS)}', field="--format")
    named = SUFFIXES.get(output.suffix.lower()) if output is not None else None
    if fmt is not None and named is not None and named != fmt:  # it wrote Markdown into report.html
        assert output is not None
        raise InputError(f"{fmt} does not go in {output} (a {named} file): name the file "
                         f"{output.with_suffix('.' + fmt)}, or leave --format out", field="--format")  # fmt: skip
    chosen = fmt or named or "html"
    return chosen, output if output is not None else Path(f"report.{chosen}")


def _study_ratings(path: Path) -> list[Rating]:
    """Read a ``--study`` export; a folder or an empty export is one error saying what to give."""
    from dialeval.jsonl import read_jsonl
    from dialeval.schema import Rating

    export = "the ratings JSONL that dialeval study export writes"
    if path.is_dir():  # it said "study export not found" of a folder that is there
        if (path / "access.json").is_file() or (path / "study.db").is_file():
            raise InputError(f"is a study folder: give {export} (dialeval study export {path} -o ratings.jsonl)",
                             path=path, field="--study")  # fmt: skip
        raise InputError(f"is a folder: give {export}", path=path, field="--study")
    if not path.is_file():  # a pipe was "study export not found" too
        what = "not found" if not path.exists() else "not a regular file"
        raise InputError(f"{what}: give {export}", path=path, field="--study")
    ratings = read_jsonl(path, Rating)
    if not ratings:  # it was reported as a results file of kind "scores", with no section of its own
        raise InputError("no ratings in this study export (the study has no answers yet?)", path=path)
    return ratings


def _inputs(folders: list[Path], study: list[Path]) -> Iterator[tuple[str, Path] | tuple[str, Path, Path]]:
    """Yield what the report reads, for :func:`check_output`: each folder's results files and figures, each --study.

    In a results folder that is every file :func:`~dialeval.report.load.load_results` reads and the per-subset
    figures :mod:`dialeval.report.build` inlines. Lazily: the folders are looked at only when the output exists.
    """
    from dialeval.report.load import KNOWN

    for folder in folders:
        if folder.is_dir():
            yield from (("FOLDERS", folder, folder / name) for name in KNOWN)
            yield from (("FOLDERS", folder, png) for png in sorted(folder.glob("stress_subsets_*.png")))
    yield from (("--study", path) for path in study)


def register(app: typer.Typer) -> None:
    """Add ``report`` to the CLI."""
    app.command("report")(report)
