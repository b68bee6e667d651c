"""Helpers shared by the commands: loading inputs, console output, writing results."""

from __future__ import annotations

import contextlib
import functools
import inspect
import json
import math
import os
import re
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar

import typer
from rich.console import Console

from dialeval.atomic import atomic_write, special_kind
from dialeval.commands.argv import given_as_folder
from dialeval.data.benchmark import Benchmark
from dialeval.errors import NAME_MAX, DialevalError, InputError, UnknownNameError, ensure_unique
from dialeval.jsonl import NOT_JSONL, check_file
from dialeval.schema import Rating, Score
from dialeval.words import split_names

if TYPE_CHECKING:
    from dialeval.data.generic import ColumnMapping, ContextOption

R = TypeVar("R")
T = TypeVar("T")

#: emoji=False: rich read ":b:" in a name ("a:b:c", a system "llama3:smile:") as an emoji code and printed "a🅱c".
console = Console(stderr=True, emoji=False)
out = Console(emoji=False)


def split_repeated(values: Sequence[str], option: str, what: str = "metric") -> list[str] | None:
    """Split each value of a repeatable comma-separated option (:func:`split_names`); none given is None.

    ``-m length -m bleu,rouge`` is ``-m length,bleu,rouge`` (the last ``-m`` won, silently).

    Example:
        >>> split_repeated(["length", "bleu, rouge"], "--metrics"), split_repeated([], "--metrics")
        (['length', 'bleu', 'rouge'], None)
    """
    return [name for value in values for name in split_names(value, option, what)] if values else None


#: The bootstrap-resamples option of every command; ``--boot`` is its earlier name, still read.
N_BOOT_FLAGS = ("--n-boot", "--boot")


#: ``--level`` as checked before any work when not given; :func:`levels_to_report` picks the default after.
DEFAULT_LEVELS = "turn,system"
#: The help of ``--level``.
LEVEL_HELP = (
    "Levels: turn, sample, dialogue, system (default: turn, or dialogue for a dimension rated per dialogue; "
    "then system, where the data names 3 systems or more)."
)


def levels_to_report(
    given: list[str], level: str | None, ratings: Iterable[Rating], dimension: str, systems: Iterable[str]
) -> list[str]:
    """Return ``--level`` as given, else the default levels of ``dimension`` and ``systems``.

    The default: turn (dialogue for a dimension rated per dialogue), then system where ``systems``
    names :data:`~dialeval.meta.levels.MIN_POINTS` (3) or more: no system level of one "unknown" system, nor of
    two, where a correlation is +1, -1 or undefined whatever the metric. Only named systems count (not "" nor
    "unknown": the system level leaves their items out); two named systems and some unnamed items switched it on.
    ``--level system`` still gives it where the data names systems; where it names none, it is refused with the
    option that names them (it gave an undefined figure).

    Raises:
        InputError: ``--level`` asks for the system level and ``systems`` names none.

    Example:
        >>> from dialeval.schema import Rating
        >>> rated = [Rating(item_id="d", dimension="q", annotator="w", value=1, level="dialogue")]
        >>> levels_to_report([], None, rated, "q", ["a", "b", "c"]), levels_to_report([], None, rated, "q", ["a", "b"])
        (['dialogue', 'system'], ['dialogue'])
        >>> levels_to_report([], None, rated, "q", ["a", "b", "", "unknown"])
        ['dialogue']
        >>> levels_to_report(["turn", "system"], "turn,system", rated, "q", ["a", "b"])
        ['turn', 'system']
        >>> levels_to_report(["system"], "system", rated, "q", ["unknown"])
        Traceback (most recent call last):
        ...
        dialeval.errors.InputError: field "--level": the system level needs the system of each response, and ...
    """
    from dialeval.meta.correlate import default_levels
    from dialeval.meta.levels import MIN_POINTS
    from dialeval.schema import UNKNOWN_SYSTEM, named_systems

    if level is not None:
        if "system" in given and not named_systems(systems):
            raise InputError(f'the system level needs the system of each response, and the data names none (each is '
                             f'"{UNKNOWN_SYSTEM}"): read a table with --system-col COLUMN, or records that name their '
                             "systems", field="--level")  # fmt: skip
        return given
    return default_levels(ratings, [dimension], also=["system"] if len(named_systems(systems)) >= MIN_POINTS else [])


def split_levels(level: str, method: str) -> tuple[list[str], list[str]]:
    """Split and check ``--level`` and ``--method`` before any work: known names, none empty.

    Example:
        >>> split_levels("turn, system", "spearman")
        (['turn', 'system'], ['spearman'])
        >>> split_levels("", "spearman")
        Traceback (most recent call last):
        ...
        dialeval.errors.InputError: field "--level": empty level name
    """
    from dialeval.meta.correlate import check_names

    levels, methods = split_names(level, "--level", "level"), split_names(method, "--method", "method")
    check_names(levels, methods, fields=("--level", "--method"))
    return levels, methods


TABLE_RULE = (
    "With -b, that catalog benchmark's published file or folder; without -b, a folder of dialeval "
    "records (dialogues/candidates/ratings.jsonl) or your own table (.csv, .tsv, .jsonl, .json) read with --mapping "
    "or the --*-col options."
)


def unescape(text: str) -> str:
    r"""Read ``\n`` and ``\t`` in an option's value as a line break and a tab, and ``\\`` as one backslash.

    So ``--turn-sep '\\n'`` splits on the two characters ``\n`` that a JSON dump writes for a line break.

    Example:
        >>> unescape(r"\n"), unescape(r"\\n"), unescape(" | "), unescape(r"\t")
        ('\n', '\\n', ' | ', '\t')
    """
    return re.sub(r"\\([\\nt])", lambda m: {"n": "\n", "t": "\t"}.get(m[1], "\\"), text)


@dataclass(frozen=True)
class TableOptions:
    """How to read a user's own table (``--path my.csv``): a YAML mapping file or column options."""

    mapping: Path | None = None
    response_col: str | None = None
    context_col: str | None = None
    turn_sep: str = "\\n"
    system_col: str | None = None
    reference_col: tuple[str, ...] = ()
    rating_col: tuple[str, ...] = ()
    annotator_col: str | None = None
    scale: str = ""
    delimiter: str | None = None
    labels: tuple[str, ...] = ()

    def given(self) -> bool:
        """Whether any mapping option was given."""
        return self.mapping is not None or self.delimiter is not None or self._columns_given()

    def _columns_given(self) -> bool:
        cols = (self.response_col, self.context_col, self.system_col, self.annotator_col)
        sep = self.turn_sep != "\\n"  # beside -b or --mapping it did nothing, silently
        listed = self.reference_col or self.rating_col or self.labels
        return any(c is not None for c in cols) or bool(listed or self.scale or sep)

    def _check_read(self) -> None:
        """Refuse an option that nothing reads (each was accepted and did nothing).

        ``--scale`` or ``--annotator-col`` without ``--rating-col``, ``--turn-sep`` without ``--context-col``.
        """
        from dialeval.data.generic import unread_key

        options = {"turn_separator": "--turn-sep", "context": "--context-col", "scale": "--scale",
                   "ratings": "--rating-col", "annotator": "--annotator-col", "labels": "--labels"}  # fmt: skip
        given = (("turn_separator", self.turn_sep != "\\n"), ("context", self.context_col), ("scale", self.scale),
                 ("ratings", self.rating_col), ("annotator", self.annotator_col), ("labels", self.labels))  # fmt: skip
        if idle := unread_key(key for key, value in given if value):
            key, needs, use = idle
            partners = " or ".join(options[n] for n in needs if n in options)
            raise InputError(f"{use}, and no {partners} is given: add it, or leave {options[key]} out",
                             field=options[key])  # fmt: skip

    def read(self) -> tuple[ColumnMapping, str | None]:
        """Return the column mapping and the benchmark name it gives (None: the file's name).

        Example:
            >>> m, _ = TableOptions(response_col="reply", rating_col=("q=Overall",), scale="1-5").read()
            >>> m.response, dict(m.ratings), m.scale
            ('reply', {'q': 'Overall'}, '1-5')
        """
        from dialeval.data.generic import ColumnMapping, check_dimensions, check_response_roles, load_mapping

        if self.mapping is not None:
            if self._columns_given():
                raise InputError("give --mapping or the --*-col options (and --scale, --turn-sep, --labels), not both",
                                 field="--mapping")  # fmt: skip
            spec = load_mapping(self.mapping)
            if self.delimiter is not None:
                spec.delimiter = self._delimiter()
            return spec.to_mapping(), spec.name
        if self.response_col is None:
            raise InputError("a table needs --response-col (or a --mapping file)", field="--response-col")
        named = [("--response-col", self.response_col), ("--context-col", self.context_col),
                 ("--system-col", self.system_col), ("--annotator-col", self.annotator_col),
                 *(("--reference-col", c) for c in self.reference_col)]  # fmt: skip
        if (empty := next((option for option, col in named if col is not None and not col.strip()), None)) is not None:
            # --response-col "" said "missing column in the header" with no field
            raise InputError("is empty: give the name of a column of the table", field=empty)
        self._check_read()
        ensure_unique(self.reference_col, "--reference-col")
        check_response_roles(self.response_col, {"--context-col": self.context_col,
                                                 "--reference-col": self.reference_col})  # fmt: skip
        ratings: dict[str, str] = {}
        for pair in self.rating_col:
            col, _, dim = pair.partition("=")
            if not col.strip() or (not dim.strip() and "=" in pair):
                raise InputError(f'expected COLUMN=DIMENSION, got "{pair}"', field="--rating-col")
            if col.strip() in ratings:
                raise InputError(f'column "{col.strip()}" is given twice', field="--rating-col")
            ratings[col.strip()] = dim.strip() or col.strip()
        check_dimensions(ratings, field="--rating-col")
        sep = unescape(self.turn_sep)
        mapping = ColumnMapping(
            response=self.response_col, context=self.context_col, turn_separator=sep, system=self.system_col,
            references=tuple(self.reference_col), ratings=ratings, annotator=self.annotator_col, scale=self.scale,
            delimiter=self._delimiter(), labels=self.label_numbers(),
        )  # fmt: skip
        return mapping, None

    def label_numbers(self) -> dict[str, float]:
        """Return ``--labels Poor=1,Good=3`` (repeatable) as each word's number.

        Example:
            >>> TableOptions(labels=("Poor=1, Fair=2", "Good=3")).label_numbers()
            {'Poor': 1.0, 'Fair': 2.0, 'Good': 3.0}
            >>> TableOptions(labels=("Poor=1,Poor=2",)).label_numbers()
            Traceback (most recent call last):
            ...
            dialeval.errors.InputError: field "--labels": the word "Poor" is given twice
        """
        labels: dict[str, float] = {}
        for pair in (part for given in self.labels for part in given.split(",")):
            word, _, value = (x.strip() for x in pair.partition("="))
            try:
                got = float(value)
            except ValueError:
                got = math.nan
            if not word or not math.isfinite(got):
                raise InputError(f'expected WORD=NUMBER, e.g. Good=3, got "{pair.strip()}"', field="--labels")
            if word in labels:
                raise InputError(f'the word "{word}" is given twice', field="--labels")
            labels[word] = got
        return labels

    def context_option(self, column: str | None) -> ContextOption:
        """Return how an error names the option that chose the context column ``column``.

        That is ``--context-col``, or the mapping file's key ``context``.

        Example:
            >>> TableOptions(context_col="ctx").context_option("ctx").said
            '--context-col "ctx"'
        """
        from dialeval.data.generic import ContextOption

        if self.mapping is None:
            return ContextOption("--context-col", f'--context-col "{column}"', "leave --context-col out")
        file = self.mapping
        return ContextOption("context", f'context: "{column}" of {file}', f"leave context out of {file}")

    def json_delimiter(self, path: Path) -> InputError:
        """Return the error for a delimiter given for a JSON table, naming ``--delimiter`` or the mapping file's key."""
        from dialeval.jsonl import read_text, yaml_line

        said = "splits the fields of a CSV or TSV table"
        if self.delimiter is not None or self.mapping is None:
            return InputError(f"{said}, and this file is JSON: leave it out", path=path, field="--delimiter")
        line = yaml_line(read_text(self.mapping), ["delimiter"])
        return InputError(f"{said}, and {path.name} is JSON: leave it out", path=self.mapping, line=line,
                          field="delimiter")  # fmt: skip

    def check(self) -> None:
        """Refuse an empty ``--turn-sep`` and a ``--delimiter`` that is not one character, where they are read."""
        from dialeval.data.generic import check_separators

        check_separators(self.turn_sep, self._delimiter(), fields=("--turn-sep", "--delimiter"))

    def _delimiter(self) -> str | None:
        r"""``--delimiter`` with ``\t`` read as a tab."""
        return None if self.delimiter is None else unescape(self.delimiter)


_TABLE_HELP = "(your own table)"
_TABLE_PARAMS = [
    inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=kind)
    for name, kind, default in [
        ("mapping", Path | None, typer.Option(
            None, "--mapping", help="YAML file saying which column of your table holds what; keys: response, "
            "context, turn_separator, system, references, ratings {column: dimension}, annotator, annotator_columns, "
            "dimension, scale, scales, labels {word: number}, item_id, dialogue_id, knowledge, domain, tags, systems, "
            "pseudonymise, delimiter, keep_empty_responses, name."
        )),
        ("response_col", str | None, typer.Option(None, "--response-col", help=f"Column of responses {_TABLE_HELP}.")),
        ("context_col", str | None, typer.Option(
            None, "--context-col", help=f"Column of contexts, turns split by --turn-sep {_TABLE_HELP}."
        )),
        ("turn_sep", str, typer.Option("\\n", "--turn-sep", help="Separator of turns in --context-col; \\n is a "
                                       "line break, '\\\\n' the two characters a JSON dump writes for one.")),
        ("system_col", str | None, typer.Option(None, "--system-col", help=f"Column naming the system {_TABLE_HELP}.")),
        ("reference_col", list[str], typer.Option(
            [], "--reference-col", help=f"Column of reference responses; repeatable {_TABLE_HELP}."
        )),
        ("rating_col", list[str], typer.Option(
            [], "--rating-col", help=f"COLUMN=DIMENSION: a column of human ratings; repeatable {_TABLE_HELP}."
        )),
        ("annotator_col", str | None, typer.Option(
            None, "--annotator-col", help=f"Column naming the annotator (one row per rating) {_TABLE_HELP}."
        )),
        ("scale", str, typer.Option("", "--scale", help="Scale of the ratings, e.g. 1-5 (with --rating-col).")),
        ("delimiter", str | None, typer.Option(
            None, "--delimiter", help="Field separator of your CSV table, e.g. ';' (default: tab for .tsv, else comma)."
        )),
        ("labels", list[str], typer.Option(
            [], "--labels", help="WORD=NUMBER,...: ratings written as words, each word's number, e.g. Poor=1,Good=3 "
            "(with --rating-col)."
        )),
    ]
]  # fmt: skip


def option_bundle(
    param: str, options: Sequence[inspect.Parameter], build: Callable[[dict[str, Any]], Any]
) -> Callable[[Callable[..., R]], Callable[..., R]]:
    """Return a decorator that gives a typer command ``options`` and hands it ``build(their values)`` as ``param``.

    The command declares a parameter named ``param`` (not an option itself); the options take its
    place in the signature typer reads. One declaration serves every command that takes the bundle.
    A bad value that ``build`` refuses (a :class:`DialevalError`) is one error line and exit 2,
    before the command starts.
    """

    def decorate(command: Callable[..., R]) -> Callable[..., R]:
        sig = inspect.signature(command, eval_str=True)
        kept = [p for p in sig.parameters.values() if p.name != param]
        new_sig = sig.replace(parameters=[*kept, *options])
        names = [p.name for p in options]

        @functools.wraps(command)
        def wrapper(*args: Any, **kwargs: Any) -> R:
            given = {n: kwargs.pop(n) for n in names if n in kwargs}
            try:
                built = build(given)
            except DialevalError as exc:
                fail(exc)
            return command(*args, **kwargs, **{param: built})

        wrapper.__signature__ = new_sig  # type: ignore[attr-defined]
        wrapper.__annotations__ = {p.name: p.annotation for p in new_sig.parameters.values()}
        wrapper.__annotations__["return"] = sig.return_annotation
        return wrapper

    return decorate


def _table_from(given: dict[str, Any]) -> TableOptions:
    """Return the table options given (an empty ``--turn-sep`` or a long ``--delimiter`` is refused)."""
    for key in ("reference_col", "rating_col", "labels"):
        given[key] = tuple(given.get(key) or ())
    options = TableOptions(**given)
    options.check()
    return options


#: Give a typer command the table options (``--mapping``, ``--response-col``, ...).
#: The command declares a parameter ``table: TableOptions`` (not an option itself); it receives the
#: options gathered in one :class:`TableOptions`, to pass to :func:`load_inputs`. One declaration
#: serves ``benchmark``, ``score``, ``meta``, ``train``, ``study create`` and ``data import``.
table_options = option_bundle("table", _TABLE_PARAMS, _table_from)


def show_understood(bench: Benchmark) -> None:
    """Print what was read from a user's table on stderr, as ``dialeval data show`` prints it."""
    from dialeval.data.show import print_report, report_of

    print_report(report_of(bench), console)


def load_inputs(
    benchmark: str | None,
    path: Path | None,
    dialogues: Path | None,
    candidates: Path | None,
    limit: int | None,
    *,
    table: TableOptions | None = None,
    show: bool = True,
    rows: bool = False,
) -> Benchmark:
    """Load the inputs of a command, optionally cut to the first ``limit`` contexts.

    One of: record files (``--candidates`` with ``--dialogues``); your own table
    (``--path FILE`` with a mapping, see :data:`TABLE_RULE`), whose reading is shown
    (``show``) and whose rows are kept where ``rows`` (:attr:`Benchmark.rows`); a folder of dialeval
    records (``--path DIR`` without ``-b``); a catalog benchmark (``-b``, default usr-tc, from ``--path``
    if given).

    Example:
        >>> load_inputs("usr-tc", None, Path("d.jsonl"), Path("c.jsonl"), None)
        Traceback (most recent call last):
        ...
        dialeval.errors.InputError: field "--dialogues": give --dialogues/--candidates or -b, not both
    """
    from dialeval.data.benchmark import check_limit
    from dialeval.data.generic import JSON_SUFFIXES, RECORD_FILES, is_table, load_records, load_table, read_records

    check_limit(limit)  # before any file is read (a table's reading was shown first)
    if (dialogues is not None or candidates is not None) and (benchmark is not None or path is not None):
        given = "-b" if path is None else "--path"  # score, judge run and stress read -b or --path, silently
        raise InputError(f"give --dialogues/--candidates or {given}, not both", field="--dialogues")
    if dialogues is not None and candidates is None:  # score, judge run and stress read usr-tc instead, silently
        raise InputError("--dialogues needs --candidates (the responses, with their dialogue ids)", field="--dialogues")
    if table is not None and table.given():
        if path is None:  # record files beside --path were refused above
            raise InputError("--mapping and the --*-col options read your own table: give it with --path FILE")
        if benchmark is not None:
            raise InputError(f"-b {benchmark} is a catalog benchmark; --path with a mapping is your own table: "
                             "give one of them", field="--benchmark")  # fmt: skip
        mapping, name = table.read()
        check_file(path)
        if mapping.delimiter is not None and path.name.lower().endswith(JSON_SUFFIXES):  # it did nothing, silently
            raise table.json_delimiter(path)
        named = table.context_option(mapping.context)
        bench = load_table(path, mapping, name=name, keep_rows=rows, context_option=named)
        if show:
            show_understood(bench)
    elif candidates is not None:
        if dialogues is None:
            raise InputError("--candidates needs --dialogues (the contexts the candidates answer)",
                             field="--candidates")  # fmt: skip
        bench = read_records(dialogues, candidates)
    elif path is not None and benchmark is None and is_table(path):
        check_file(path)  # a missing table is "file not found" first, then the mapping it needs
        raise InputError("a table needs a mapping: --mapping m.yaml, or the --*-col options (at least --response-col; "
                         "--rating-col for human ratings), or -b NAME if it is that catalog benchmark's published "
                         "file", path=path)  # fmt: skip
    elif path is not None and benchmark is None and path.is_dir() and (path / RECORD_FILES[1]).is_file():
        bench = load_records(path)
    else:
        bench = catalog_benchmark("usr-tc" if benchmark is None else benchmark, path)  # -b "": an unknown name
    shown = len(bench.warnings) if table is not None and table.given() else 0  # a table's, with its reading
    if limit is not None:
        bench = bench.head(limit)  # adds the note of a --limit above the data (limit_note)
    if show:  # the others were said nowhere (a catalog file whose sha256 is not the catalog's: by score --json only)
        warn(bench.warnings[shown:])
    return bench


def catalog_benchmark(name: str, path: Path | None = None) -> Benchmark:
    """Load a catalog benchmark (from ``path`` if given); an unknown name is an error of ``--benchmark``.

    Spaces around ``name`` are dropped, as around the names of ``-m``, ``--engine`` and ``--device``.
    """
    from dialeval.data.catalog import load_benchmark

    try:
        return load_benchmark(name.strip(), path)
    except UnknownNameError as exc:
        raise exc.given_by("--benchmark") from None


def summary_path(output: Path) -> Path:
    """Return the file beside an output that holds its run's summary (``judge run``, ``score -o scored.csv``).

    Example:
        >>> summary_path(Path("out/scored.csv")).as_posix()
        'out/scored.csv.summary.json'
    """
    return output.with_name(output.name + ".summary.json")


def write_json(path: Path, payload: Any) -> None:
    """Write JSON atomically."""
    with atomic_write(path) as handle:
        json.dump(payload, handle, indent=2, ensure_ascii=False)
        handle.write("\n")


def write_text(path: Path, text: str) -> None:
    """Write text atomically."""
    with atomic_write(path) as handle:
        handle.write(text)


#: What a command reads, for :func:`check_output`: (the option or argument that names it, the path), or
#: (the option, the folder given, a file in it that the command reads) where a folder is not a record folder.
Inputs = Iterable[tuple[str, Path | None] | tuple[str, Path, Path]]


def check_jsonl_name(path: Path | None, what: str, option: str = "--output") -> None:
    """Refuse a JSONL output whose suffix names another format (``-o scores.csv`` got JSON lines).

    Example:
        >>> check_jsonl_name(Path("s.jsonl"), "Score records"), check_jsonl_name(Path("scores"), "Score records")
        (None, None)
        >>> check_jsonl_name(Path("s.csv"), "Score records")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        dialeval.errors.InputError: s.csv: field "--output": names a CSV file, but Score records are written as ...
        >>> check_jsonl_name(Path("s.csv.gz"), "Score records")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        dialeval.errors.InputError: s.csv.gz: field "--output": names a gzipped file, ...: name it s.csv (and gzip ...
    """
    if path is not None and path.suffix.lower() == ".gz":  # plain JSON lines under a .gz name, which no reader read
        raise InputError(f"names a gzipped file, but dialeval writes its outputs uncompressed: name it "
                         f"{path.with_suffix('').name} (and gzip it afterwards)", path=path, field=option)  # fmt: skip
    if path is not None and (fmt := NOT_JSONL.get(path.suffix.lower())):
        raise InputError(f"names {fmt} file, but {what} are written as JSON lines: name it "
                         f"{path.with_suffix('.jsonl').name}", path=path, field=option)  # fmt: skip


#: Suffixes of the files dialeval writes or reads: a new output folder named so is a file name given by mistake
#: (``benchmark -o runs/x.jsonl`` made a folder ``x.jsonl``). An existing folder so named is used as it is.
FILE_SUFFIXES = frozenset({".jsonl", ".json", ".csv", ".tsv", ".md", ".html", ".txt", ".png", ".pdf", ".gguf"})


def check_output(
    path: Path | None, kind: str = "file", *, option: str = "--output", inputs: Inputs = (), files: Sequence[str] = ()
) -> list[Path]:
    """Refuse, before any work, an output path that cannot be written as a ``kind`` ("file" or "folder").

    Every command that writes calls it first: ``-`` (standard output is not written to), a file
    path that is an existing folder, a device, pipe or socket (``/dev/stdout``), a loop of links or a link
    into a missing folder (which would be made wherever it points), a folder
    path that is an existing file, a path below a file or below a symbolic link to nothing or in a loop, or one
    in a folder this user cannot write to.
    The files it would replace (the path itself, or ``files`` in the folder) are refused when one
    of them is one of the command's ``inputs`` (through a symbolic or hard link too), is read-only,
    or is a folder.
    Paths are checked where the write lands (:func:`reached`): ``new/../x.csv`` is ``x.csv``.

    Returns:
        The existing files the outputs will replace (for the success line, see :func:`replaced_note`).

    Example:
        >>> import tempfile
        >>> check_output(Path(tempfile.mkdtemp()), "file")
        Traceback (most recent call last):
        ...
        dialeval.errors.InputError: /...: field "--output": is an existing folder; give the name of a file to write
    """
    if path is None:
        return []
    inputs = list(inputs)  # read twice: for the files not there yet, and for those replaced
    if str(path) == "-":
        raise InputError(f'"-" is not standard output here: give the {kind} to write', field=option)
    if path.name.lower() in FILE_SUFFIXES | {".jsonl.gz", ".csv.gz", ".tsv.gz"}:  # -o "$NAME.csv", NAME unset
        raise InputError(f'is a suffix with no name before it ("{path.name}" would be hidden); give the whole '
                         "name", path=path, field=option)  # fmt: skip
    if (size := len(os.fsencode(path.name))) > NAME_MAX:  # score's NAME.summary.json beside a NAME.csv that fits
        raise InputError(f"names a file of {size:,} bytes (...{path.name[-24:]}); file systems take {NAME_MAX} at "
                         "most: give a shorter name", field=option)  # fmt: skip
    # where the write lands: new/../x.csv "did not exist" (new/ did not), so x.csv, an input, was replaced unchecked
    lands = reached(path)
    if kind == "file" and lands.is_dir():
        raise InputError("is an existing folder; give the name of a file to write", path=path, field=option)
    if kind == "file" and (end := given_as_folder(path)):  # Path dropped the "/": "-o runs/" wrote a file named runs
        raise InputError(f'ends in "{end}", naming a folder, and this option writes a file; give the name of a file '
                         f"(e.g. {path.name}/scores.jsonl)", path=path, field=option)  # fmt: skip
    if kind == "folder" and lands.exists() and not lands.is_dir():
        raise InputError("is an existing file; give a folder to write the outputs in", path=path, field=option)
    if kind == "folder" and not lands.exists() and path.suffix.lower() in FILE_SUFFIXES:
        inside = f" ({', '.join(files)} go in it)" if files else ""
        raise InputError(f'names a file ("{path.name}"), and this option takes a folder{inside}; give a folder name',
                         path=path, field=option)  # fmt: skip
    start = path.absolute() if kind == "folder" else path.absolute().parent
    above = next(p for p in (start, *start.parents) if p.exists() or p.is_symlink())
    if special_kind(above) == "a loop of symbolic links":  # not "a link to loop, which does not exist"
        raise InputError(f"cannot be created: {above} is a loop of symbolic links, which leads to no folder",
                         path=path, field=option)  # fmt: skip
    if not above.exists():  # the folders are not made through it: the run failed after its work, "File exists"
        raise InputError(f"cannot be created: {above} is a symbolic link to {os.readlink(above)}, which does not "
                         "exist", path=path, field=option)  # fmt: skip
    if not above.is_dir():
        raise InputError(f"cannot be created: {above} is a file, not a folder", path=path, field=option)
    targets = [path] if kind == "file" else [path / name for name in files]
    for target in targets:
        if special := special_kind(reached(target)):  # /dev/null, /dev/stdout: the rename would replace them
            raise InputError(f"is {special}, not a file; give the name of a file to write", path=target, field=option)
        if (to := Path(os.path.realpath(reached(target)))) != reached(target) and not to.parent.is_dir():
            raise InputError(f"is a symbolic link to {to}, whose folder does not exist; give another name",
                             path=target, field=option)  # fmt: skip
    _refuse_sharing(targets, inputs, option)
    replaced = [t for t in targets if os.path.lexists(reached(t))]  # a dangling link too
    sources = list(_read_files(inputs)) if replaced else []
    for target in replaced:
        _refuse_replacing(target, sources, option)
    if not os.access(above, os.W_OK):
        raise InputError(f"cannot be written: no permission to write in {above}", path=path, field=option)
    return replaced


def reached(path: Path) -> Path:
    """Return the absolute path a write to ``path`` reaches once its missing folders are made.

    The folders above are resolved as the system will: links followed, and ``..`` after a folder that
    is not there yet taken lexically (making ``new/`` makes ``new/..`` the folder above it). The last
    part is kept, so that a link there stays a link.

    Example:
        >>> reached(Path("no-such-folder/../x.csv")) == reached(Path("x.csv"))
        True
    """
    if path.name in ("", ".."):  # "new/..", "/": the path is a folder to resolve whole
        return Path(os.path.realpath(path))
    return Path(os.path.realpath(path.parent)) / path.name


def _read_files(inputs: Inputs) -> Iterator[tuple[str, Path, Path]]:
    """Yield (option, path given, file) for each file of ``inputs``: a folder stands for the record files in it."""
    from dialeval.data.generic import RECORD_FILES

    for entry in inputs:
        name, p = entry[0], entry[1]
        if p is None:
            continue
        if len(entry) == 3:
            if reached(entry[2]).exists():
                yield name, p, entry[2]
        elif reached(p).is_dir():
            yield from ((name, p, p / f) for f in RECORD_FILES if reached(p / f).exists())
        elif reached(p).exists():  # --cache new/../s.sqlite is s.sqlite: the cache opens it, making new/
            yield name, p, p


def _refuse_sharing(targets: Sequence[Path], inputs: Inputs, option: str) -> None:
    """Refuse an output that is also the path of an input not there yet: the score cache, which the run makes.

    ``score -o c.sqlite --cache c.sqlite`` (or ``benchmark -o b --cache b/scores.jsonl``) made the cache,
    filled it, then wrote the outputs over it: the cache was lost, and the next run refused the file.
    """
    for target in targets:
        for entry in inputs:
            name, given = entry[0], entry[-1]
            if given is None or os.path.lexists(reached(given)) or reached(given) != reached(target):
                continue
            what = name if name.startswith("the ") else f"the path given to {name}"
            raise InputError(f"is {what} too: the run would write its outputs over it; give another name",
                             path=target, field=option)  # fmt: skip


def _refuse_replacing(target: Path, sources: Sequence[tuple[str, Path, Path]], option: str) -> None:
    """Refuse to replace ``target`` when it is a file a command reads (``sources``), read-only, or a folder."""
    for name, given, source in sources:
        with contextlib.suppress(OSError):
            if not os.path.samefile(reached(target), reached(source)):
                continue
            if given != source:
                what = f"read from the folder given to {name} ({given})"
            else:
                given_to = name if name.startswith("the ") else f"the file given to {name}"  # "the ...": not an option
                what = given_to + ("" if str(source) == str(target) else f" ({source})")
            raise InputError(f"is {what}: writing it would destroy the input; give another name", path=target,
                             field=option)  # fmt: skip
    lands = reached(target)
    if lands.is_dir():  # it returned here: the write failed after the work, leaving files, or with a traceback
        raise InputError("is an existing folder, where a file of this name is written; move it, or give another "
                         "folder", path=target, field=option)  # fmt: skip
    if not lands.is_file():
        return
    if not os.access(lands, os.W_OK) or not lands.stat().st_mode & 0o222:
        raise InputError(
            "is read-only; it is not replaced (make it writable, or give another name)", path=target, field=option
        )


def given_once(option: T | None, positional: T | None, names: tuple[str, str], what: str) -> T | None:
    """Return what was given as the option or as the positional argument (the earlier form); both is an error.

    ``names`` are the option's and the argument's (``("--benchmark", "NAME")``); ``what`` says what they give.

    Example:
        >>> given_once(None, "usr-tc", ("--benchmark", "NAME"), "the catalog benchmark")
        'usr-tc'
        >>> given_once("usr-tc", "usr-pc", ("--benchmark", "NAME"), "the catalog benchmark")
        Traceback (most recent call last):
        ...
        dialeval.errors.InputError: field "--benchmark": give the catalog benchmark once: --benchmark or NAME, not both
    """
    if option is not None and positional is not None:
        raise InputError(f"give {what} once: {names[0]} or {names[1]}, not both", field=names[0])
    return option if option is not None else positional


def check_given_once(paths: Sequence[Path], field: str, what: str) -> None:
    """Refuse a file or folder given twice, by any name (``x`` and ``./x``, or a link): it would count twice.

    Example:
        >>> import tempfile
        >>> d = Path(tempfile.mkdtemp())
        >>> check_given_once([d, d], "FOLDERS", "folders")
        Traceback (most recent call last):
        ...
        dialeval.errors.InputError: ...: field "FOLDERS": is given twice: folders 1 and 2
    """
    for n, p in enumerate(paths):
        for m, q in enumerate(paths[:n]):
            if p.exists() and q.exists() and os.path.samefile(p, q):
                again = "" if str(p) == str(q) else f" (as {q})"
                raise InputError(f"is given twice{again}: {what} {m + 1} and {n + 1}", path=p, field=field)


def check_serving(port: int, host: str = "127.0.0.1", **sizes: int) -> None:
    """Refuse, before a server starts, a port that is not one or cannot be bound on ``host``, and sizes below 1.

    ``sizes`` are other options that count something (``n_ctx=...``: ``--n-ctx``). The port is bound
    once, as the server will bind it (``SO_REUSEADDR``), and let go.

    Example:
        >>> check_serving(99999)
        Traceback (most recent call last):
        ...
        dialeval.errors.InputError: field "--port": must be a TCP port, 1 to 65535, got 99999
        >>> check_serving(8000, workers=0)
        Traceback (most recent call last):
        ...
        dialeval.errors.InputError: field "--workers": must be at least 1, got 0
    """
    import errno
    import socket

    if not 1 <= port <= 65535:
        raise InputError(f"must be a TCP port, 1 to 65535, got {port}", field="--port")
    for name, value in sizes.items():
        if value < 1:
            raise InputError(f"must be at least 1, got {value}", field="--" + name.replace("_", "-"))
    try:
        family, kind, _, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
        with socket.socket(family, kind) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            probe.bind(address)
    except OSError as exc:
        field = "--port" if exc.errno in (errno.EADDRINUSE, errno.EACCES) else "--host"
        raise InputError(f"{host}:{port} cannot be served: {exc.strerror}", field=field) from None


def replaced_note(replaced: Sequence[Path]) -> str:
    """Return what the success line adds when outputs replaced existing files ("" when none did).

    Example:
        >>> replaced_note([Path("out.jsonl")])
        ' (replaced the existing out.jsonl)'
        >>> replaced_note([Path("b/table.md"), Path("b/run.json")])
        ' (replaced the existing table.md, run.json)'
    """
    if not replaced:
        return ""
    names = [str(p) for p in replaced] if len(replaced) == 1 else [p.name for p in replaced]
    return f" (replaced the existing {', '.join(names)})"


def remove_earlier(output: Path, names: Iterable[str]) -> list[str]:
    """Remove the files ``names`` in ``output`` that an earlier run wrote and this run does not; return those removed.

    ``dialeval report`` showed them as this run's (stress's per-subset figures, meta's compare.json).

    Example:
        >>> import tempfile
        >>> out = Path(tempfile.mkdtemp())
        >>> _ = (out / "compare.json").write_text("{}")
        >>> remove_earlier(out, ["compare.json", "absent.png"]), (out / "compare.json").exists()
        (['compare.json'], False)
    """
    gone = [name for name in names if (output / name).is_file()]
    for name in gone:
        (output / name).unlink()
    return gone


def say_removed(output: Path, removed: Sequence[str]) -> None:
    """Print the line that names the files :func:`remove_earlier` removed (nothing when it removed none)."""
    if removed:
        console.print(f"removed {output}/{{{', '.join(removed)}}}: an earlier run's, which this run does not write",
                      highlight=False, markup=False, soft_wrap=True)  # fmt: skip


@contextlib.contextmanager
def fields_as_options(*names: str) -> Iterator[None]:
    """Inside the block, an :class:`InputError` on a library argument in ``names`` names its option instead.

    Example:
        >>> with fields_as_options("metrics"):
        ...     raise InputError("no scores for metric bogus", field="metrics")
        Traceback (most recent call last):
        ...
        dialeval.errors.InputError: field "--metrics": no scores for metric bogus
    """
    try:
        yield
    except InputError as exc:
        if exc.path is not None or exc.field not in names:
            raise
        raise InputError(exc.message, line=exc.line, field=f"--{exc.field}") from None


@contextlib.contextmanager
def interrupted_says(what: str) -> Iterator[None]:
    """On Ctrl-C (SIGINT) inside the block, print one line, ``interrupted; WHAT``, and exit 130."""
    try:
        yield
    except KeyboardInterrupt:
        console.print(f"interrupted; {what}", highlight=False, soft_wrap=True, markup=False)
        raise typer.Exit(130) from None


def interrupted_run(
    output: Path | None, no_cache: bool, *, written: str = "",
    kept: str = "the items scored so far are kept in the score cache",
) -> contextlib.AbstractContextManager[None]:
    """On Ctrl-C in the block, say what the run kept (:func:`interrupted_says`), and exit 130.

    That is nothing at ``output`` (or what ``written`` says is there), and what its cache ``kept``
    (not with ``--no-cache``): a rerun resumes from it.

    Example:
        >>> with interrupted_run(Path("s.jsonl"), False):
        ...     raise KeyboardInterrupt
        Traceback (most recent call last):
        ...
        typer.exceptions.Exit: 130
    """
    said = [written or (f"nothing written to {output}" if output is not None else ""),
            "" if no_cache else f"{kept}, so a rerun resumes"]  # fmt: skip
    return interrupted_says("; ".join(x for x in said if x) or "nothing kept")


def check_request_failures(scores: Iterable[Score], allow: bool, contexts: Mapping[str, int] | None = None) -> None:
    """After the outputs are written, exit 1 if judge requests failed, unless ``allow`` (``--allow-failures``).

    The items whose requests failed have null scores whose ``extras["error"]`` says why;
    this prints one line counting them by cause. ``contexts``: stress's subset judge's contexts left with no subset,
    by cause (its failed requests exited 0, the run's subsets silently gone).
    """
    failed = {(s.item_id, str(s.extras["error"])) for s in scores if "request failed" in str(s.extras.get("error"))}
    untagged = Counter({why: n for why, n in (contexts or {}).items() if "request failed" in why})
    if (not failed and not untagged) or allow:
        return
    from rich.markup import escape

    causes = Counter(why for _, why in failed) + untagged
    lost = " and ".join(part for part in [
        f"{len({i for i, _ in failed})} item(s) got no score" if failed else "",
        f"{untagged.total()} context(s) no subset (--subsets judge)" if untagged else ""] if part)  # fmt: skip
    console.print(
        f"[bold red]error:[/] {lost} because judge requests failed "
        f"({escape('; '.join(f'{n} x {why}' for why, n in causes.most_common(3)))}); "
        f"{'they were written as null scores that say why' if failed else 'the notes say why'}; rerun to try them "
        "again, or pass --allow-failures to accept them",
        highlight=False,
        soft_wrap=True,
    )
    raise typer.Exit(1)


def say(text: str, indent: str = "") -> None:
    """Print ``text`` wrapped between words at the terminal's width: nothing cut, no trailing blanks.

    Lines after the first are indented two more spaces than ``indent``.

    Example:
        >>> say("outputs: judge:x, judge:x:expected", "  ")
          outputs: judge:x, judge:x:expected
    """
    import shutil
    import textwrap

    width = shutil.get_terminal_size().columns  # $COLUMNS, else the terminal's, else 80
    typer.echo(textwrap.fill(text, width, initial_indent=indent, subsequent_indent=indent + "  ",
                             break_long_words=False, break_on_hyphens=False))  # fmt: skip


def warn(lines: Iterable[str]) -> None:
    """Print each warning line on stderr, yellow, as written (no markup, never wrapped)."""
    for line in lines:
        console.print(line, style="yellow", highlight=False, markup=False, soft_wrap=True)


def warned(lines: Iterable[str]) -> str:
    r"""Return the warning lines as Markdown paragraphs, for under a table written to a file (:func:`warn` prints them).

    Example:
        >>> warned(["warning: a", "warning: b"])
        '\nwarning: a\n\nwarning: b\n'
    """
    return "".join(f"\n{line}\n" for line in lines)


def fail(exc: DialevalError | OSError) -> NoReturn:
    """Print a dialeval error on one line (never wrapped, :func:`~dialeval.errors.one_line`), and exit with status 2."""
    from rich.markup import escape

    from dialeval.errors import one_line

    console.print(f"[bold red]error:[/] {escape(one_line(str(exc)))}", highlight=False, soft_wrap=True)
    raise typer.Exit(2)
