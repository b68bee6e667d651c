r"""The Python API: score responses, correlate metrics with people and load benchmarks, as pandas DataFrames.

It is a thin front end over the same parts as the command line: the rows are read by the table
reader of ``--path`` (:func:`dialeval.data.generic.build_table`), scored by
:func:`dialeval.scoring.score_request` from the :class:`~dialeval.scoring.ScoringRequest` that
``dialeval score`` builds from the same options, and correlated by
:func:`dialeval.meta.correlate.correlation_table`. So the numbers are the CLI's, a rerun computes
nothing (the score cache), and bad input raises the CLI's one-line :class:`~dialeval.errors.InputError`,
naming the function's argument where the CLI names its option.

Example:
    >>> import dialeval
    >>> df = dialeval.score([{"context": "Hi!\nHow are you?", "response": "Fine, thanks."}],
    ...                     metrics=["length"], cache=False, progress=False)
    >>> df[["response", "length"]].to_dict("records")
    [{'response': 'Fine, thanks.', 'length': 2.0}]
"""

from __future__ import annotations

import contextlib
import json
import math
import numbers
import reprlib
import warnings
from collections import Counter
from collections.abc import Hashable, Iterable, Iterator, Mapping, Sequence
from decimal import Decimal
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dialeval.atomic import WriteError
from dialeval.bulk import fewer_collections
from dialeval.errors import InputError, UnknownNameError, closest, ensure_unique, given_path
from dialeval.jsonl import lone_surrogate
from dialeval.words import counted, one_line, split_names

if TYPE_CHECKING:
    import pandas as pd

    from dialeval.data._common import Where
    from dialeval.data.benchmark import Benchmark
    from dialeval.data.generic import ColumnMapping
    from dialeval.schema import Rating, Score
    from dialeval.scoring import MetricRun, ScoringRequest

#: Where the rows of in-memory data are said to come from in errors (``data:3`` is the third row).
DATA = "data"
#: Optional columns picked up by name when the matching ``*_col`` argument is None.
OPTIONAL_COLUMNS = {"reference": "reference", "system": "system", "knowledge": "knowledge"}
#: ``DataFrame.attrs`` key of :func:`load_benchmark`: the dimensions rated per dialogue, not per response.
DIALOGUE_RATINGS = "dialogue_ratings"
#: The ``attrs`` key of the columns :func:`score` read as the context, dialogue and system.
COLUMNS = "columns"
#: ``DataFrame.attrs`` key of :func:`load_benchmark`: the benchmark's name. Its empty responses are data (a system
#: that said nothing, rated so), scored as the CLI scores them, where a table's are refused as a wrong column.
BENCHMARK = "benchmark"
#: The command-line options that the scoring library's errors name, and the argument of :func:`score` each one is.
ARGUMENTS = {
    "--metrics": "metrics", "--param": "params", "--engine": "engine", "--device": "device", "--cache": "cache",
}  # fmt: skip

Rows = list[tuple["Where", dict[str, Any]]]


@fewer_collections()
def score(
    data: pd.DataFrame | Sequence[Mapping[str, Any]] | str | Path,
    metrics: Sequence[str] | None = None,
    *,
    context_col: str | None = "context",
    response_col: str = "response",
    reference_col: str | None = None,
    system_col: str | None = None,
    dialogue_col: str | None = None,
    knowledge_col: str | None = None,
    engine: str = "local",
    cache: str | Path | bool = True,
    params: Mapping[str, Any] | None = None,
    device: str | None = None,
    progress: bool = True,
) -> pd.DataFrame:
    """Score every response with ``metrics``; return the input with one column per metric output.

    Args:
        data: A DataFrame, a list of dicts (one per response), or a path read as ``dialeval score
            --path`` reads it: a CSV/TSV/JSONL/JSON table (with the columns below) or a folder of
            dialeval records (``dialogues.jsonl``, ``candidates.jsonl``).
        metrics: Metric families or outputs, e.g. ``["quality", "bleu4"]`` or ``"quality,bleu4"`` (None: every metric
            that runs here; the others are listed in ``attrs["skipped"]``).
        context_col: The context: a string (turns split on newlines) or a list of turns; speakers
            alternate, the response's speaker last (None: no context).
        response_col: The response.
        reference_col: Reference responses (a string or a list); None: the column ``reference`` if any.
        system_col: The system that wrote the response; None: the column ``system`` if any.
        dialogue_col: The dialogue id (rows with the same one share their context); None: one
            dialogue per distinct context. A number or a date there (and in ``system_col``) is read as its text, as
            :func:`correlate` reads it.
        knowledge_col: Grounding facts (a string split on newlines, or a list); None: the column
            ``knowledge`` if any.
        engine: ``local`` (this process) or ``ray``, as ``--engine``.
        cache: The score cache: True for the CLI's default (``$DIALEVAL_SCORE_CACHE`` or
            ``~/.cache/dialeval/scores.sqlite``), a path, or False for none.
        params: Metric parameters ``{"[metric.]key": value}``, as ``-p [metric.]key=value``.
        device: ``cpu`` or ``cuda``, as ``--device`` (None: cuda if torch sees a GPU).
        progress: Show progress bars (only when stderr is a terminal).

    Returns:
        The input columns and one float column per metric output, one row per input row, in input order (NaN
        where a metric could not score a row). ``attrs["signatures"]`` maps each output to its signature,
        ``attrs["skipped"]`` each metric not run to why, ``attrs["without_value"]`` each output with NaN rows to
        why, counted (``{"sbert_ref": {"no reference to compare with": 4}}``, as ``dialeval score`` prints it),
        ``attrs["cut"]`` each output whose values read a text in part (longer than its model reads) to what, counted,
        ``attrs["request"]`` is the scoring request, as ``run.json`` stores a command's, and ``attrs["columns"]``
        the columns read as the context, dialogue and system, and ``log`` where one column of chat logs was read
        as both context and response (for :func:`correlate`); the input's ``attrs`` are kept (a scored one's: added to).

    Raises:
        InputError: A missing column (or a column named for a folder of records), a context column empty in every row
            (but a :func:`load_benchmark` frame's), a response that is missing, empty or only whitespace, a value that
            is not a string where text is expected (None is a missing value, as an empty CSV cell is), an unreadable
            file or an empty path (``""``), an unknown metric or a bad parameter, or an argument of another type.
    """
    import pandas as pd

    from dialeval.data.generic import check_response_roles
    from dialeval.scoring import score_request

    _expect_columns(data, response_col=response_col, context_col=context_col, reference_col=reference_col,
                    system_col=system_col, dialogue_col=dialogue_col, knowledge_col=knowledge_col)  # fmt: skip
    check_response_roles(response_col, {"context_col": context_col, "reference_col": reference_col,
                                        "knowledge_col": knowledge_col})  # fmt: skip
    wanted = {"reference": reference_col, "system": system_col, "knowledge": knowledge_col}
    frame, rows, read = _read(data, wanted, context_col, response_col, dialogue_col)
    bench, items, used = _items(frame, rows, read, wanted, (cols := (context_col, response_col, dialogue_col)))
    with arguments_named():
        request = request_of(metrics, engine, cache, params, device, progress)
        built = request.build(bench.candidates, bench.sources)  # an item without a reference is named by its row
        runs, skipped = score_request(request.open(), bench.candidates, bench.dialogues, built)  # no cache made first
    values, signatures, nulls = _by_output(runs)
    _no_clash(values, frame.columns, rows[0][0].path if rows else DATA, [*cols, *wanted.values()])
    out = frame.assign(**{name: pd.Series([per_item[i] for i in items], index=frame.index, dtype="float64")
                          for name, per_item in values.items()})  # fmt: skip
    out.attrs = {**frame.attrs, **_with_earlier(frame, signatures=signatures, without_value=nulls, cut=_cuts(runs)),
                 "skipped": dict(skipped), "request": request.record(), COLUMNS: used}  # fmt: skip
    return out


def _with_earlier(frame: pd.DataFrame, **per_output: dict[str, Any]) -> dict[Hashable, Any]:
    """Return each per-output ``attrs`` key of :func:`score`, after what an earlier score put there, for its outputs.

    An earlier score's outputs are kept while their columns are still in the frame.

    Scoring a scored frame again with other metrics replaced them: :func:`correlate`'s default metrics (the
    signatures') left the first outputs out, and why their values were NaN was lost, nothing said.

    Example:
        >>> import pandas as pd
        >>> frame = pd.DataFrame({"length": [2.0]})
        >>> frame.attrs["signatures"] = {"length": "length|version:1", "bleu1": "bleu|version:1"}  # bleu1 dropped
        >>> _with_earlier(frame, signatures={"distinct1": "distinct|version:1"}, cut={})
        {'signatures': {'length': 'length|version:1', 'distinct1': 'distinct|version:1'}, 'cut': {}}
    """
    out: dict[Hashable, Any] = {}
    for key, new in per_output.items():
        given = frame.attrs.get(key)
        earlier = {k: v for k, v in given.items() if k in frame.columns} if isinstance(given, Mapping) else {}
        out[key] = {**earlier, **new}
    return out


def _no_columns_of_records(folder: Any, **given: str | None) -> None:
    """Refuse a column argument other than its default beside a folder of dialeval records, whose fields are named.

    It was ignored, silently.

    Example:
        >>> _no_columns_of_records("recs", context_col="context", response_col="reply")
        Traceback (most recent call last):
        ...
        dialeval.errors.InputError: field "response_col": names a table's column, and recs is a folder of dialeval \
records, whose fields are named: leave it out
    """
    defaults = {"context_col": "context", "response_col": "response"}
    for name, value in given.items():
        if value != defaults.get(name):
            raise InputError(f"names a table's column, and {folder} is a folder of dialeval records, whose fields "
                             "are named: leave it out", field=name)  # fmt: skip


def _no_clash(outputs: Iterable[str], columns: Iterable[object], source: str | Path = DATA,
              inputs: Iterable[str | None] = ()) -> None:  # fmt: skip
    """Refuse data that already has a column named like a metric output (a notebook cell run twice, most often).

    ``source``: the file the data was read from (it was named ``data``, with the DataFrame's mend), else ``data``.
    ``inputs``: the columns read as the context, response and the rest: one of those is renamed, not dropped.

    Example:
        >>> _no_clash(["length"], ["response", "length"])
        Traceback (most recent call last):
        ...
        dialeval.errors.InputError: data: a column is named like a metric output: "length"; scored already? drop it ...
    """
    if clash := sorted(set(outputs) & set(columns)):
        if read := [c for c in clash if c in set(inputs)]:  # "drop it" would drop the responses themselves
            mend = f'(df.rename(columns={{"{read[0]}": "{read[0]}_text"}}))' if source == DATA else "in the file"
            raise InputError(f'the column "{read[0]}" is read as input and named like a metric output, which would '
                             f"replace it: rename it first {mend}", path=source)
        names = ", ".join(f'"{c}"' for c in clash)
        it = "it" if len(clash) == 1 else "them"
        mend = f"drop {it} first (df.drop(columns=[{names}]))" if source == DATA else f"drop {it} from the file first"
        raise InputError(f"a column is named like a metric output: {names}; scored already? {mend}", path=source)


def _items(
    frame: pd.DataFrame, rows: Rows, bench: Benchmark | None, wanted: dict[str, str | None],
    cols: tuple[str | None, str, str | None],
) -> tuple[Benchmark, list[str], dict[str, str]]:
    """Return the benchmark to score, each row's item id, and the columns read as context, dialogue and system.

    ``cols``: the context, response and dialogue columns; ``bench``: the records folder read, else None.
    """
    from dialeval.data.generic import ContextOption, build_table, reading_warnings

    if bench is not None:
        context, response, dialogue = cols
        _no_columns_of_records(bench.source, context_col=context, response_col=response, dialogue_col=dialogue,
                               **{f"{key}_col": name for key, name in wanted.items()})  # fmt: skip
        return bench, [c.id for c in bench.candidates], {}
    mapping = _mapping(frame, rows, wanted, *cols)
    col = mapping.context
    # a context column with no context in any row is refused, but a benchmark's (holistic-fluency's: its data)
    named = None if BENCHMARK in frame.attrs else ContextOption(str(col), f'context_col="{col}"', "context_col=None")
    unit = "row" if rows and rows[0][0].path == DATA else "line"  # a frame's row, or the line of the file it read
    table, row_items = build_table(rows, mapping, name=DATA, source=DATA, context_option=named, unit=unit)
    split = f'split there first: df["{col}"] = df["{col}"].str.split(r"\\n", regex=False)'
    for warning in reading_warnings(rows, mapping, table, split):  # as the CLI's summary says them
        warnings.warn(warning, stacklevel=4)  # at score's caller
    chosen = {"context": mapping.context, "dialogue": mapping.dialogue_id, "system": mapping.system,
              "log": mapping.context if mapping.context == mapping.response else None}  # fmt: skip
    return table, [ids[0] for ids in row_items], {key: name for key, name in chosen.items() if name is not None}


def _by_output(
    runs: Sequence[MetricRun],
) -> tuple[dict[str, dict[str, float | None]], dict[str, str], dict[str, dict[str, int]]]:
    """Return each output's value per item id, each output's signature, and why its values that are None are."""
    values: dict[str, dict[str, float | None]] = {}
    signatures: dict[str, str] = {}
    for run in runs:
        for s in run.scores:
            values.setdefault(s.metric, {})[s.item_id] = s.value
            signatures[s.metric] = run.signature
    return values, signatures, {name: dict(why) for run in runs for name, why in run.nulls().items()}


def _cuts(runs: Sequence[MetricRun]) -> dict[str, dict[str, int]]:
    """Return, per output, what its values read in part and how often (:meth:`~dialeval.scoring.MetricRun.cuts`)."""
    return {name: dict(said) for run in runs for name, said in run.cuts().items()}


@contextlib.contextmanager
def arguments_named() -> Iterator[None]:
    """Inside the block, an error that names a command-line option (:data:`ARGUMENTS`) names :func:`score`'s argument.

    Example:
        >>> with arguments_named():
        ...     raise InputError('no metric of this run has the parameter bogus', field="--param")
        Traceback (most recent call last):
        ...
        dialeval.errors.InputError: field "params": no metric of this run has the parameter bogus
    """
    try:
        yield
    except InputError as exc:
        if exc.field not in ARGUMENTS:
            raise
        exc.given_by(ARGUMENTS[exc.field])  # the same exception, with the argument's name
        raise
    except WriteError as exc:
        if exc.field not in ARGUMENTS:
            raise
        raise WriteError(exc.path, exc.reason, field=ARGUMENTS[exc.field]) from None


#: Strings that mean a yes or a no, not a cache file (``cache="no"`` made one named ``no``).
_WORDS_OF_YES_AND_NO = frozenset({"yes", "no", "true", "false", "on", "off", "none", "0", "1"})


def request_of(
    metrics: Sequence[str] | str | None,
    engine: str,
    cache: str | Path | bool,
    params: Mapping[str, Any] | None,
    device: str | None,
    progress: bool,
) -> ScoringRequest:
    """Return the :class:`~dialeval.scoring.ScoringRequest` that :func:`score`'s keyword arguments give.

    The same request as ``dialeval score -m ... -p key=value --device ... --engine ... --cache ...``,
    with ``device`` checked as ``--device`` is, before any work (a metric without a model would
    otherwise ignore a misspelt one).

    Raises:
        InputError: ``device`` is not one, or torch cannot see it (:func:`~dialeval.models.device.check_device`).

    Example:
        >>> r = request_of("length", "local", False, {"bleu.smoothing": "method1"}, None, True)
        >>> r.metrics, r.params, r.no_cache
        (('length',), ('bleu.smoothing=method1',), True)
    """
    from dialeval.models.device import check_device
    from dialeval.scoring import ScoringRequest

    names = None if metrics is None else _split(metrics, "metrics", "metric")
    _expect(progress, (bool,), "True or False", "progress")
    _expect(engine, (str,), "local or ray", "engine")
    _expect(cache, (bool, str, Path), "True, False or a path", "cache")
    if isinstance(cache, str) and cache.strip().lower() in _WORDS_OF_YES_AND_NO:  # it made a cache file named "no"
        raise InputError(f"{cache!r} would be a file of that name: give True or False (or a path)", field="cache")
    _expect(params, (Mapping, type(None)), 'a dict such as {"bleu.smoothing": "method2"}', "params")
    _expect(device, (str, type(None)), "cpu, cuda, cuda:N, mps, auto or None", "device")
    for key, value in (params or {}).items():
        if isinstance(value, Mapping):  # {"bleu": {"smoothing": ...}} read as a parameter named "bleu"
            inner = next(iter(value), "KEY")
            raise InputError(f'"{key}" is given a mapping: name one parameter per key, e.g. {{"{key}.{inner}": ...}}',
                             field="params")  # fmt: skip
        _param_value(key, value)
    return ScoringRequest(
        metrics=None if names is None else tuple(names),
        params=tuple(f"{key}={value}" for key, value in (params or {}).items()),
        device=None if device is None else check_device(device.strip(), field="--device"),
        engine=engine.strip(), cache=None if isinstance(cache, bool) else _user_path(cache, "cache"),
        no_cache=cache is False, progress=progress,
    )  # fmt: skip


def _user_path(value: str | Path, field: str) -> Path:
    """Return a path argument as :func:`~dialeval.errors.given_path` checks it, ``~`` read as the home folder.

    A shell expands ``~`` on the command line; Python does not, and ``cache="~/scores.sqlite"`` made a folder
    named ``~`` in the notebook's folder, silently (pandas' readers expand it, so ``pd.read_csv("~/my.csv")`` reads).

    Example:
        >>> _user_path("~/scores.sqlite", "cache") == Path.home() / "scores.sqlite"
        True
    """
    return given_path(value, field).expanduser()


def _param_value(key: object, value: object) -> None:
    """Refuse a parameter value that ``-p key=value`` cannot say: None, or a list, tuple or set; or a key with "=".

    Each was passed on as its Python text, silently where a parameter takes any text
    (``{"likelihood.turn_separator": None}`` joined the turns with ``"None"``); a key holding "=" was split there,
    ``{"bleu.smoothing=method1": "x"}`` read as the value ``"method1=x"``.

    Example:
        >>> _param_value("likelihood.turn_separator", None)
        Traceback (most recent call last):
        ...
        dialeval.errors.InputError: field "params": "likelihood.turn_separator" is given None: leave the key out \
for the parameter's default
        >>> _param_value("heads", ["a", "b"])
        Traceback (most recent call last):
        ...
        dialeval.errors.InputError: field "params": "heads" is given a list: give a string, a number or True/False
        >>> _param_value("bleu.smoothing=method1", "x")
        Traceback (most recent call last):
        ...
        dialeval.errors.InputError: field "params": "bleu.smoothing=method1" is no parameter name (it holds "="): \
give {"bleu.smoothing": "method1"}
    """
    if isinstance(key, str) and "=" in key:  # -p's text "key=value" was split at its first "=", silently
        name, _, rest = key.partition("=")
        raise InputError(f'"{key}" is no parameter name (it holds "="): give {{"{name}": "{rest}"}}', field="params")
    if value is None:
        raise InputError(f"\"{key}\" is given None: leave the key out for the parameter's default", field="params")
    if isinstance(value, (list, tuple, set, frozenset)):
        raise InputError(f'"{key}" is given a {type(value).__name__}: give a string, a number or True/False',
                         field="params")  # fmt: skip


def _read(
    data: Any, wanted: dict[str, str | None], context_col: str | None, response_col: str, dialogue_col: str | None
) -> tuple[pd.DataFrame, Rows, Benchmark | None]:
    """Return the input frame and its rows to read as a table, or the frame and benchmark of a records folder."""
    import pandas as pd

    from dialeval.data._common import Where

    if isinstance(data, (str, Path)):
        return _read_path(_user_path(data, "data"), wanted, context_col, response_col, dialogue_col)
    if isinstance(data, pd.DataFrame):
        frame = data
    elif isinstance(data, Sequence) and not isinstance(data, bytes):
        row = next((n for n, r in enumerate(data, 1) if not isinstance(r, Mapping)), None)
        if row is not None:  # a list of tuples or of strings: say which row, not just "list"
            kind = type(data[row - 1]).__name__
            raise InputError(f"row is a {kind}, not a dict (a list is read as one dict per row)", path=DATA, line=row)
        _check_unicode(enumerate(data, 1))  # before pandas, whose string columns refuse it with a traceback
        frame = pd.DataFrame(list(data))
    else:
        hint = " (a dict of columns: pass pd.DataFrame(data))" if isinstance(data, Mapping) else ""
        if isinstance(data, pd.Series):
            hint = ' (responses alone: pass data.to_frame("response") with context_col=None)'
        raise InputError(f"expected a DataFrame, a list of dicts or a path, got {type(data).__name__}{hint}")
    _check_column_names(frame)  # to_dict kept one of two, with pandas' warning only
    records = frame.to_dict("records")
    rows = [(Where(DATA, line=n), {str(k): _cell(v) for k, v in rec.items()}) for n, rec in enumerate(records, 1)]
    _check_unicode((where.line, cells) for where, cells in rows)
    return frame, rows, None


def _check_column_names(frame: pd.DataFrame) -> None:
    """Refuse a frame with a column name that is not a string, or two columns of one name, as the table reader does.

    A name not a string was refused naming no column (score), or as no column "1" (did you mean "1"?) (correlate).

    Example:
        >>> import pandas as pd
        >>> _check_column_names(pd.DataFrame([[1, 2, 3]], columns=["a", "b", "a"]))
        Traceback (most recent call last):
        ...
        dialeval.errors.InputError: data: field "a": appears twice in the header (columns 1 and 3)
    """
    from dialeval.data._common import Where, header_index

    if (fix := _names_fix(frame)) is not None:
        name = next(c for c in frame.columns if not isinstance(c, str))
        raise InputError(f"the column name {name!r} ({type(name).__name__}) is not a string: name the columns with "
                         f"strings (df.columns = {fix})", path=DATA, field=str(name))  # fmt: skip
    header_index(list(frame.columns), Where(DATA))


def _names_fix(frame: pd.DataFrame) -> str | None:
    """Return the pandas call that names a frame's columns with strings, where one is not; else None."""
    import pandas as pd

    if all(isinstance(c, str) for c in frame.columns):
        return None
    flat = isinstance(frame.columns, pd.MultiIndex)
    return 'df.columns.to_flat_index().map("_".join)' if flat else "df.columns.astype(str)"


def _check_unicode(rows: Iterable[tuple[int | None, Any]]) -> None:
    r"""Refuse a string with half of a surrogate pair (``"\ud800"``): it failed when written, or in pandas."""
    for line, cells in rows:
        if (half := lone_surrogate(dict(cells), DATA, line)) is not None:
            raise half


def _read_path(
    path: Path, wanted: dict[str, str | None], context_col: str | None, response_col: str, dialogue_col: str | None
) -> tuple[pd.DataFrame, Rows, Benchmark | None]:
    """Read a table file with the ``--path`` reader, or a folder of dialeval records.

    A CSV's columns of numbers come back as numbers (:func:`_numbers_read`), but those read as text.
    """
    import pandas as pd

    from dialeval.data.generic import JSON_SUFFIXES, RECORD_FILES, ColumnMapping, is_table, load_records, table_records
    from dialeval.jsonl import check_file

    if path.is_dir() and (path / RECORD_FILES[1]).is_file():
        bench = load_records(path)
        return benchmark_frame(bench), [], bench
    if not is_table(path):
        reader = _PANDAS_READERS.get(path.suffix.lower())
        hint = f": read it with pd.{reader}(path) and pass the DataFrame" if reader else ""
        raise InputError(f"expected a CSV, TSV, JSONL or JSON table or a folder of dialeval records{hint}", path=path)
    # read as references: checked present (the dialogue column too: it was "data: no column", naming no file)
    present = tuple(c for c in (*wanted.values(), dialogue_col) if c and c != response_col)
    given = ColumnMapping(response=response_col, context=context_col, references=present)
    # checks that the columns given are there; a header separated by ";" said to pass --delimiter, which score lacks
    read = table_records(check_file(path), given, 'read it with pd.read_csv(path, sep="{}") and pass the DataFrame')
    if not read:  # a header alone: it was "data: no rows to score", naming no file
        raise InputError("no rows to score", path=path)
    frame = pd.DataFrame([rec for _, rec in read])
    rows = [(where, {c: _cell(rec.get(c)) for c in frame.columns}) for where, rec in read]
    if not path.name.lower().endswith(JSON_SUFFIXES):  # a CSV's cells are text: its numbers, as pd.read_csv reads them
        text = {response_col, context_col, dialogue_col, *(name or key for key, name in wanted.items())}
        frame = _numbers_read(frame, keep=text)
    return frame, rows, None


#: The cells that ``pd.read_csv`` reads as missing by default (its ``na_values``; "" aside).
_NA_TEXT = frozenset({"#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan", "1.#IND", "1.#QNAN", "<NA>",
                      "N/A", "NA", "NULL", "NaN", "None", "n/a", "nan", "null"})  # fmt: skip


def _numbers_read(frame: pd.DataFrame, keep: set[str | None]) -> pd.DataFrame:
    """Return a CSV's frame with each column of numbers as numbers, empty and missing cells NaN, but ``keep``.

    ``dialeval.score("my.csv")`` gave the rating column as text, which :func:`correlate` then refused (``'5'``)
    where ``pd.read_csv`` gives numbers. A cell that ``pd.read_csv`` reads as missing (``NA``, ``nan``, ``null``,
    ...) is NaN in a column of numbers, and a column with no value at all is NaN (both were text: ``'NA'``, ``''``).
    The columns read as text (context, response, ...) and those with a word in them stay as read.

    Example:
        >>> import pandas as pd
        >>> f = _numbers_read(pd.DataFrame({"r": ["4", "NA", "3.5"], "m": ["a", "2", ""], "e": ["", "", " "],
        ...                                 "system": ["1", "2", "3"]}), keep={"system"})
        >>> f["r"].tolist(), f["m"].tolist(), f["e"].tolist(), f["system"].tolist()
        ([4.0, nan, 3.5], ['a', '2', ''], [nan, nan, nan], ['1', '2', '3'])
    """
    import pandas as pd

    out = frame.copy()
    for name in frame.columns:
        column = frame[name]
        if name in keep or not column.map(lambda v: v is None or isinstance(v, str)).all():
            continue
        filled = column.map(lambda v: isinstance(v, str) and v.strip() != "" and v not in _NA_TEXT)
        numbers = pd.to_numeric(column.where(filled), errors="coerce")
        if numbers.notna().sum() == filled.sum():  # every filled cell a number
            out[name] = numbers
    return out


#: The pandas reader of a table file that :func:`score` does not read itself.
_PANDAS_READERS = {".parquet": "read_parquet", ".xlsx": "read_excel", ".xls": "read_excel", ".ods": "read_excel",
                   ".feather": "read_feather", ".pkl": "read_pickle", ".pickle": "read_pickle"}  # fmt: skip


def _cell(value: Any) -> Any:
    """One cell as the table reader takes it: NaN, None and pandas' NA/NaT become None, arrays and tuples lists.

    A numpy date or duration is pandas' (``tolist`` gave one of nanoseconds as an int, read as a number). So is each
    entry of a list: a missing turn is None, JSON's null, the empty turn (``["Hi", nan]`` was refused, "expected a
    string, found a number", where ``["Hi", None]`` scored).

    Example:
        >>> import numpy as np, pandas as pd
        >>> [_cell(v) for v in (np.float32("nan"), pd.NA, pd.NaT, np.int64(3), (1, 2), np.datetime64("NaT"))]
        [None, None, None, 3, [1, 2], None]
        >>> _cell(Decimal("NaN")), _cell(Decimal("4.50"))
        (None, Decimal('4.50'))
        >>> _cell(np.datetime64("2024-01-01T00:00:00.000000000"))
        Timestamp('2024-01-01 00:00:00')
        >>> _cell(["Hi", float("nan"), pd.NA, pd.NaT]), _cell(np.array(["Hi", np.float32("nan")], dtype=object))
        (['Hi', None, None, None], ['Hi', None])
    """
    import numpy as np
    import pandas as pd

    if isinstance(value, np.datetime64):
        value = pd.Timestamp(value)
    elif isinstance(value, np.timedelta64):
        value = pd.Timedelta(value)
    elif hasattr(value, "tolist") and not isinstance(value, (str, bytes)):
        value = value.tolist()  # numpy scalars: a float32 NaN is no Python float until here
    if value is None or value is pd.NA or value is pd.NaT or (isinstance(value, float) and math.isnan(value)):
        return None
    if isinstance(value, Decimal) and value.is_nan():
        return None
    return [_cell(v) for v in value] if isinstance(value, (list, tuple)) else value


def _mapping(
    frame: pd.DataFrame,
    rows: Rows,
    wanted: dict[str, str | None],
    context_col: str | None,
    response_col: str,
    dialogue_col: str | None,
) -> ColumnMapping:
    """Check the columns and the dialogue ids; return the table mapping that reads them.

    ``rows``: the frame's rows, each with its place (a file's line, where the frame was read from one).

    The values are checked as the table reader of ``--path`` checks them (:func:`~dialeval.data.generic.build_table`):
    a response None, NaN, empty or only whitespace is an error (but in a :func:`load_benchmark` frame, whose empty
    responses are data); a system None or NaN is ``unknown`` where no row names one, else an error.
    """
    from dialeval.data.generic import ColumnMapping

    if len(frame) == 0:
        raise InputError("no rows to score", path=DATA)
    cols = {k: v if v is not None else (OPTIONAL_COLUMNS[k] if OPTIONAL_COLUMNS[k] in frame else None)
            for k, v in wanted.items()}  # fmt: skip
    given = {"context_col": context_col, "response_col": response_col, "dialogue_col": dialogue_col,
             **{f"{key}_col": name for key, name in cols.items()}}  # fmt: skip
    for keyword, name in given.items():
        if name is not None and name not in frame.columns:
            raise _no_column(frame, name, keyword, path=DATA)
    if dialogue_col is not None and (missing := _missing(frame[dialogue_col])):
        # a file's line (it was the frame's row, with "data" for the file)
        raise rows[missing[0] - 1][0].error(f"no value ({counted(len(missing), 'such row')})", field=dialogue_col)
    return ColumnMapping(
        response=response_col, context=context_col, system=cols["system"], dialogue_id=dialogue_col,
        references=(cols["reference"],) if cols["reference"] else (), knowledge=cols["knowledge"],
        keep_empty_responses=BENCHMARK in frame.attrs,
    )  # fmt: skip


def _no_column(frame: pd.DataFrame, name: str, keyword: str, path: str | None = None) -> InputError:
    """Return the error for a column the frame lacks, naming the closest column and every column.

    ``keyword``: the argument that named the column: the field where the name is empty (no field was named), and
    ``context_col=None`` is said when no column is close.

    Example:
        >>> import pandas as pd
        >>> print(_no_column(pd.DataFrame(columns=["length", "rating"]), "lenght", "metrics"))
        field "lenght": no column "lenght" (did you mean "length"?); the columns: length, rating
        >>> print(_no_column(pd.DataFrame({"context": ["Hi"], "r": ["Yo"]}).set_index("context"), "context", "by"))
        field "context": no column "context" (it is the frame's index: pass df.reset_index()); the columns: r
        >>> print(_no_column(pd.DataFrame({"response": ["Yo"]}), "context", "context_col"))
        field "context": no column "context" (context_col=None scores without one); the columns: response
        >>> print(_no_column(pd.DataFrame({"response": ["Yo"]}), "", "human"))
        field "human": no column ""; the columns: response
    """
    have = [str(c) for c in frame.columns]
    close = closest(name, have)
    none = " (context_col=None scores without one)" if keyword == "context_col" else ""
    hint = f' (did you mean "{close}"?)' if close else none
    if name in [str(n) for n in frame.index.names if n is not None]:  # set_index moved it out of the columns
        hint = " (it is the frame's index: pass df.reset_index())"
    return InputError(f'no column "{name}"{hint}; the columns: {", ".join(have) or "none"}', path=path,
                      field=name or keyword)


def _missing(column: pd.Series) -> list[int]:
    """Return the rows (from 1) whose value is None or NaN."""
    return [n for n, v in enumerate(column.tolist(), 1) if _cell(v) is None]


@fewer_collections()
def correlate(
    df: pd.DataFrame,
    human: str | Sequence[str],
    metrics: Sequence[str] | None = None,
    *,
    level: str | Sequence[str] | None = None,
    method: str | Sequence[str] = "spearman",
    by: str | None = None,
    n_boot: int = 1000,
    seed: int = 0,
) -> pd.DataFrame:
    """Correlate metric columns with human columns, with cluster-bootstrap 95% CIs (``dialeval meta``).

    Each row is an item; ``human`` columns hold its human score (the mean over annotators).
    Items are grouped by the columns ``context_id`` (else the context), ``dialogue_id`` (else the
    context) and ``system`` where the frame has them, or by those :func:`score` read
    (``context_col=``, ``dialogue_col=``, ``system_col=``; ``attrs["columns"]``): the bootstrap
    resamples contexts (turn, sample and system levels) or dialogues.

    Args:
        df: Scores and human scores, e.g. ``score(load_benchmark("usr-tc"))``.
        human: The human column (or several; a bool one, a yes/no judgement, reads as 1.0 and 0.0, and a decimal one
            as its floats).
        metrics: The metric columns (None: the outputs ``score`` added, from ``df.attrs["signatures"]``,
            but the ``human`` columns).
        level: ``turn``, ``sample``, ``dialogue`` or ``system`` (or several, a list or ``"turn,system"``); None:
            ``turn``, or ``dialogue`` when the human columns are rated per dialogue (``load_benchmark("dstc9")``).
        method: ``pearson``, ``spearman`` or ``kendall`` (or several, as ``level``).
        by: Also break every figure down by this column (``group`` is ``"column=value"``); the rows
            with no value there make the last group, ``"no column"``.
        n_boot: Bootstrap resamples (0: no CIs).
        seed: Bootstrap seed.

    Returns:
        One row per metric (and dimension, group, level, method): ``value``, ``ci_low``,
        ``ci_high``, ``n`` (items with both a score and a human value), ``p_value`` (floats, NaN
        where undefined, and ``note`` says why; Spearman's p of at most 8 items, dialogues or systems is exact, over
        every pairing), ``n_groups``, ``note`` and ``signature``.

    Raises:
        InputError: No row; no human column, level or method; a column, level or method named twice; a
            missing or non-numeric column, or an infinite value in one; a metric column named like a column of
            the table correlated (``human``, ``n_annotators``, ``context_id``, ``dialogue_id``, ``context_named``,
            ``dialogue_named``, ``system``, or ``tag:...``); two values in the rows of one dialogue of a column rated
            per dialogue; a row with no ``item_id``, ``context_id`` or ``dialogue_id`` where the frame has that
            column, one of those ids written two ways (``1`` and ``1.0`` or ``"1"``, as a ``by`` value), or an
            ``item_id`` given twice; an unknown level or method; the system level or ``by="system"`` with no system
            column; a negative ``n_boot`` or ``seed``, an ``n_boot`` over 100,000 or a ``seed`` over 2**32 - 1, or an
            argument of another type than the one documented.
    """
    import pandas as pd

    from dialeval.meta.correlate import correlation_table, default_levels

    _expect(df, (pd.DataFrame,), "a DataFrame", "df")
    _expect(by, (str, type(None)), "a column name or None", "by")
    if len(df) == 0:  # it said "no scores for metric length; the scores hold: nothing"
        raise InputError("no rows to correlate", path=DATA)
    _check_column_names(df)  # a column read twice was an AttributeError (df[name] is then a frame)
    if not (dims := _names(human, "human")):
        raise InputError("no human column to correlate", field="human")
    ensure_unique(dims, "human")
    names = _metric_columns(df, metrics, dims)
    _check_present(df, human=dims, metrics=names, by=[by] if by is not None and by != "system" else [])
    if by is not None and by != "system" and by in df.columns:  # the system column: checked by _keys, as any level
        _one_group_per_text(df[by].tolist(), by)
    scores = _scores(df, names, by)
    ratings = _ratings(df, dims, scores)
    levels = default_levels(ratings, dims) if level is None else _split(level, "level", "level")
    _check_systems(scores, levels, by)
    rows = correlation_table(
        scores, ratings, dimension=dims, metrics=names, levels=levels, methods=_split(method, "method", "method"),
        n_boot=n_boot, seed=seed, by=by,
    )  # fmt: skip
    table = pd.DataFrame([r.to_dict() for r in rows]).rename(columns={"n_items": "n"})
    table = table.astype(dict.fromkeys(("value", "ci_low", "ci_high", "p_value"), "float64"))
    first = ["metric", "dimension", "group", "level", "method", "value", "ci_low", "ci_high", "n"]
    return table[first + [c for c in table.columns if c not in first]]


def _check_present(df: pd.DataFrame, **named: Sequence[str]) -> None:
    """Refuse a column the frame lacks, naming the argument that named it where its name is empty."""
    for keyword, names in named.items():
        for name in names:
            if name not in df.columns:
                raise _no_column(df, name, keyword)


def _one_group_per_text(values: Sequence[Any], column: str, places: Sequence[Where] | None = None) -> None:
    """Refuse a ``by=`` or id column two of whose values of two types print alike, or one number printed two ways.

    1 and "1" were one group, silently; 1 and 1.0 (a JSON file's) two groups of one number.
    ``values``: the column's cells; ``places``: where each was read from (a file's line), else the frame's rows.

    Example:
        >>> _one_group_per_text([1, "1"], "t")
        Traceback (most recent call last):
        ...
        dialeval.errors.InputError: data:2: field "t": the value '1' (text) prints as the value 1 (a number) of ...
    """
    from dialeval.data._common import Where
    from dialeval.data.generic import one_group_per_text

    at = list(places) if places is not None else [Where(DATA, line=n) for n in range(1, len(values) + 1)]
    one_group_per_text([(where, _cell(raw)) for where, raw in zip(at, values, strict=True)], column,
                       unit="row" if at and at[0].path == DATA else "line")  # fmt: skip


def _check_systems(scores: Sequence[Score], levels: Sequence[str], by: str | None) -> None:
    """Refuse the system level, or ``by="system"``, on rows that name no system (one group of all), as ``meta`` does."""
    from dialeval.schema import named_systems

    if named_systems(s.system for s in scores):
        return
    asked = "the system level" if "system" in levels else 'by="system"' if by == "system" else None
    if asked is not None:
        raise InputError(f'{asked} needs the system of each row: a column "system", or score(..., system_col=...)',
                         field="by" if "system" not in levels else "level")  # fmt: skip


def _column_of(df: pd.DataFrame, key: str) -> str:
    """Return the column that holds ``key`` (context or system): the one :func:`score` read, else ``key``."""
    return str(df.attrs.get(COLUMNS, {}).get(key, key))


def _names(value: str | Sequence[str], field: str) -> list[str]:
    """Return one name or several as a list; anything else is refused, naming the argument.

    Example:
        >>> _names("turn", "level"), _names(("turn", "system"), "level")
        (['turn'], ['turn', 'system'])
        >>> _names(1, "human")
        Traceback (most recent call last):
        ...
        dialeval.errors.InputError: field "human": expected a name or a list of names, got 1 (int)
        >>> import pandas as pd
        >>> _names(pd.Series([4.0, 5.0], name="h"), "human")
        Traceback (most recent call last):
        ...
        dialeval.errors.InputError: field "human": ... (Series); give the column's name, "h", not its values
    """
    if isinstance(value, str):
        return [value]
    if not isinstance(value, Sequence) or not all(isinstance(v, str) for v in value):
        raise InputError(f"expected a name or a list of names, got {_short(value)}{_names_hint(value)}", field=field)
    return list(value)


def _split(value: str | Sequence[str], field: str, what: str) -> list[str]:
    """Return names that are no column's (metrics, levels, methods): a list, or a string split on commas, as the CLI's.

    ``"length, distinct"`` was one name: 'unknown metric "length, distinct"; did you mean "distinct"?'.
    An empty name in the string is refused as the CLI does, naming the keyword (:func:`~dialeval.words.split_names`).

    Example:
        >>> _split(" turn, system", "level", "level"), _split(["turn"], "level", "level")
        (['turn', 'system'], ['turn'])
    """
    return split_names(value, field, what) if isinstance(value, str) else _names(value, field)


def _names_hint(value: object) -> str:
    """Say how to pass a pandas Index or Series, or a numpy array, as names: a list of them, or a column's name.

    A column's values (``df["h"]`` for ``"h"``) were told to pass them as a list, which was refused again.
    """
    if not hasattr(value, "tolist"):
        return ""
    if all(isinstance(v, str) for v in value.tolist()):
        return "; pass it as a list (list(...))"
    if isinstance(name := getattr(value, "name", None), str):
        return f'; give the column\'s name, "{name}", not its values'
    return "; give column names, not values"


def _expect(value: object, kinds: tuple[type, ...], what: str, field: str) -> None:
    """Refuse an argument of another type than ``kinds`` (it was a pydantic, attribute or type error)."""
    if not isinstance(value, kinds):
        raise InputError(f"expected {what}, got {_short(value)}", field=field)


def _expect_columns(data: object, **columns: object) -> None:
    """Refuse a column argument that is neither a column name nor None (``response_col``: a name), naming it.

    Where ``data`` is a frame whose columns are not named with strings (``pd.DataFrame([[...]])``'s 0, 1, 2), the
    error names the call that names them, and the name to give then (it said "expected a column name, got 1 (int)").
    """
    import pandas as pd

    for field, col in columns.items():
        if isinstance(col, str) or (col is None and field != "response_col"):
            continue
        hint = ""
        if isinstance(data, pd.DataFrame) and _has_label(data, col) and (fix := _names_fix(data)) is not None:
            new = "_".join(map(str, col)) if isinstance(col, tuple) else col
            hint = f"; the frame's columns are not named with strings: df.columns = {fix}, then {field}=\"{new}\""
        what = "a column name" if field == "response_col" else "a column name or None"
        raise InputError(f"expected {what}, got {_short(col)}{hint}", field=field)


def _has_label(frame: pd.DataFrame, label: object) -> bool:
    """Whether ``label`` is one of the frame's column labels (an unhashable value is none)."""
    try:
        return label in frame.columns
    except TypeError:
        return False


def _short(value: object) -> str:
    """Return a value as an error shows it: a short repr on one line (a long list is cut) and its type.

    A pandas Series' repr is several lines: the error it was in was too.

    Example:
        >>> import pandas as pd
        >>> _short(list(range(100))), _short(pd.Series(["length"]))
        ('[0, 1, 2, 3, 4, 5, ...] (list)', '0 length dtype: ... (Series)')
    """
    return f"{one_line(reprlib.repr(value), 80)} ({type(value).__name__})"


def _metric_columns(df: pd.DataFrame, metrics: Sequence[str] | None, human: Sequence[str]) -> list[str]:
    """Return the metric columns: ``metrics``, or the outputs ``score`` added that are not a ``human`` column.

    Example:
        >>> import pandas as pd
        >>> df = pd.DataFrame({"a": [1.0], "b": [2.0]})
        >>> df.attrs["signatures"] = {"a": "a|version:1", "b": "b|version:1"}
        >>> _metric_columns(df, None, ["b"])
        ['a']
        >>> _metric_columns(df, ["a", "b"], ["b"])
        Traceback (most recent call last):
        ...
        dialeval.errors.InputError: field "metrics": "b" is a human column too: a column agrees with itself
    """
    if metrics is not None:
        if not (names := _names(metrics, "metrics")):
            raise InputError("no metric columns to correlate", field="metrics")
        ensure_unique(names, "metrics")
        if both := [n for n in names if n in human]:  # it correlated the column with itself: 1.0
            raise InputError(f'"{both[0]}" is a human column too: a column agrees with itself', field="metrics")
        return names
    names = [m for m in df.attrs.get("signatures", {}) if m in df.columns and m not in human]
    if not names:
        raise InputError("no metric columns from dialeval.score on this frame: give them with metrics=[...]")
    return names


def _keys(df: pd.DataFrame) -> tuple[list[str], list[str], list[str], list[str]]:
    """Return each row's item, context, dialogue and system (see :func:`correlate`)."""
    from dialeval.data._common import Where
    from dialeval.data.generic import before_reply, check_systems_named
    from dialeval.schema import UNKNOWN_SYSTEM

    def column(name: str) -> list[str] | None:
        return _ids(df, name) if name in df.columns else None

    items = column("item_id") or [str(n) for n in range(len(df))]
    first: dict[str, int] = {}
    for row, item in enumerate(items, 1):
        if (seen := first.setdefault(item, row)) != row:
            raise InputError(f'item "{item}" of row {seen} again', path=DATA, line=row, field="item_id")
    contexts = column("context_id")
    if contexts is None and (context := _column_of(df, "context")) in df.columns:
        logs = df.attrs.get(COLUMNS, {}).get("log") == context  # whole chat logs, read as context and response
        contexts = [json.dumps(before_reply(_cell(v)) if logs else _cell(v), default=str)  # a date: its text
                    for v in df[context].tolist()]  # fmt: skip
    contexts = contexts or items
    read = df.attrs.get(COLUMNS, {}).get("dialogue")  # score's dialogue_col=; no column guessed by its name
    dialogues = column("dialogue_id") or (column(str(read)) if read else None) or contexts
    system = _column_of(df, "system")
    if system not in df:
        return items, contexts, dialogues, [""] * len(df)
    _one_group_per_text(df[system].tolist(), system)  # 1 and 1.0 were two systems, 1 and "1" one, silently
    named = [(Where(DATA, line=n), "" if _cell(v) is None else str(v)) for n, v in enumerate(df[system].tolist(), 1)]
    check_systems_named(named, system)  # beside named systems, a row without one was of one more: "unknown"
    return items, contexts, dialogues, [name or UNKNOWN_SYSTEM for _, name in named]  # none: "unknown" (was "nan")


def _ids(df: pd.DataFrame, name: str) -> list[str]:
    """Return a column of ids (item, context or dialogue) as text; a row without one is refused.

    Each missing cell was the id ``"nan"`` (or ``"None"``): the rows without one made one context, or one dialogue,
    silently.

    Example:
        >>> import pandas as pd
        >>> _ids(pd.DataFrame({"context_id": [1, 2]}), "context_id")
        ['1', '2']
        >>> _ids(pd.DataFrame({"context_id": ["c1", None, float("nan")]}), "context_id")
        Traceback (most recent call last):
        ...
        dialeval.errors.InputError: data:2: field "context_id": no value (2 such rows)
    """
    values = df[name].tolist()
    if missing := _missing(df[name]):
        raise InputError(f"no value ({counted(len(missing), 'such row')})", path=DATA, line=missing[0], field=name)
    _one_group_per_text(values, name)  # 1 and 1.0 (an object column's) were two contexts, 1 and "1" one, silently
    return [str(v) for v in values]


def _scores(df: pd.DataFrame, metrics: Sequence[str], by: str | None) -> list[Score]:
    from dialeval.schema import Score

    items, contexts, dialogues, systems = _keys(df)
    tags: list[dict[str, str]] = [{} for _ in items]
    if by is not None and by != "system":
        tags = [{} if _cell(v) is None else {by: str(v)} for v in df[by]]  # no value: the group "no BY", as in meta
    out = []
    for name in metrics:
        for n, value in enumerate(_numbers(df, name)):
            out.append(
                Score(item_id=items[n], metric=name, value=value, context_id=contexts[n], dialogue_id=dialogues[n],
                      system=systems[n], tags=tags[n])
            )  # fmt: skip
    return out


def _numbers(df: pd.DataFrame, name: str) -> list[float | None]:
    """Return a column's values as floats (None for missing); an infinite value is refused, as the CLI refuses it.

    A Decimal (a pyarrow decimal column's) is a number too, though no :class:`numbers.Real`.

    Example:
        >>> import pandas as pd
        >>> _numbers(pd.DataFrame({"h": pd.array([2, None], dtype="Int64")}), "h")
        [2.0, None]
        >>> _numbers(pd.DataFrame({"h": [4.0, "n/a"]}), "h")
        Traceback (most recent call last):
        ...
        dialeval.errors.InputError: data:2: field "h": expected a number (None or NaN for no value), found str 'n/a'
        >>> _numbers(pd.DataFrame({"h": ["4", "5"]}), "h")
        Traceback (most recent call last):
        ...
        dialeval.errors.InputError: data:1: field "h": ... found str '4'; numbers as text: pd.to_numeric(df["h"]) ...
    """
    values: list[float | None] = []
    for row, cell in enumerate(df[name].tolist(), 1):
        value = _cell(cell)
        if value is not None and not isinstance(value, (numbers.Real, Decimal)):  # "not a numeric column" named no row
            hint = _text_number_hint(value, name)
            raise InputError(f"expected a number (None or NaN for no value), found {type(value).__name__} "
                             f"{reprlib.repr(value)}{hint}", path=DATA, line=row, field=name)  # fmt: skip
        values.append(None if value is None else _finite(value, row, name))
    return values


def _finite(value: numbers.Real | Decimal, row: int, name: str) -> float:
    """Return a cell's number as a float; an infinite one, or an integer past a float's range, is refused.

    An integer such as 10**400 (a JSON file's, as Python's json reads it) was an OverflowError traceback.

    Example:
        >>> _finite(10**400, 2, "h")
        Traceback (most recent call last):
        ...
        dialeval.errors.InputError: data:2: field "h": 1000...0000 is beyond a float's range: not a finite number
    """
    try:
        number = float(value)
    except OverflowError:
        raise InputError(f"{reprlib.repr(value)} is beyond a float's range: not a finite number", path=DATA, line=row,
                         field=name) from None  # fmt: skip
    if math.isinf(number):
        raise InputError(f"{number} is not a finite number", path=DATA, line=row, field=name)
    return number


def _text_number_hint(value: object, name: str) -> str:
    """Say how to mend a cell that holds a number as text (a column read as strings) or a list of numbers, else nothing.

    Example:
        >>> _text_number_hint(" 4", "h"), _text_number_hint("n/a", "h")
        ('; numbers as text: pd.to_numeric(df["h"]) makes them numbers', '')
        >>> _text_number_hint("4,5", "h")
        '; a decimal comma: read the file with pd.read_csv(..., decimal=",")'
        >>> _text_number_hint([4, 5], "h")
        '; a list of ratings (one per annotator?): correlate with their mean, df["h"].map(statistics.mean)'
    """
    from dialeval.data._common import DECIMAL_COMMA

    if isinstance(value, list) and value and all(isinstance(v, numbers.Real) for v in value):
        return f'; a list of ratings (one per annotator?): correlate with their mean, df["{name}"].map(statistics.mean)'
    if not isinstance(value, str):
        return ""
    if DECIMAL_COMMA.fullmatch(value):
        return '; a decimal comma: read the file with pd.read_csv(..., decimal=",")'
    try:
        finite = math.isfinite(float(value))
    except ValueError:
        return ""
    return f'; numbers as text: pd.to_numeric(df["{name}"]) makes them numbers' if finite else ""


def _ratings(df: pd.DataFrame, dims: Sequence[str], scores: Sequence[Score]) -> list[Rating]:
    """One rating per row and human column (per dialogue for the dialogue-level columns of load_benchmark).

    The rows of one dialogue that differ in a column rated per dialogue are refused (the first was taken, silently).
    """
    from dialeval.schema import Rating

    per_dialogue = set(df.attrs.get(DIALOGUE_RATINGS, ()))
    keys = scores[: len(df)]
    out: list[Rating] = []
    for dim in dims:
        seen: dict[str, tuple[int, float]] = {}
        values = _numbers(df, dim)
        if all(v is None for v in values):  # it said 'field "dimension": no ratings for dimension "h"; found: '
            raise InputError("no value in any row: nothing to correlate with", field=dim)
        for row, (key, value) in enumerate(zip(keys, values, strict=True), 1):
            if value is None:
                continue
            if dim not in per_dialogue:
                out.append(Rating(item_id=key.item_id, dimension=dim, annotator="mean", value=value))
            elif (first := seen.setdefault(key.dialogue_id, (row, value)))[1] != value:
                raise InputError(f'dialogue "{key.dialogue_id}" is rated {value} here and {first[1]} in row '
                                 f"{first[0]}: a column rated per dialogue holds one value per dialogue (the same in "
                                 "each of its rows)", path=DATA, line=row, field=dim)  # fmt: skip
            elif first[0] == row:
                out.append(Rating(item_id=key.dialogue_id, dimension=dim, annotator="mean", value=value,
                                  level="dialogue"))  # fmt: skip
    return out


@fewer_collections()
def load_benchmark(name: str, path: str | Path | None = None) -> pd.DataFrame:
    """Load a catalog benchmark (``dialeval data list``) as one row per rated response.

    Args:
        name: The catalog name, e.g. ``usr-tc``.
        path: Its published file or folder, as ``-b NAME --path PATH`` (None: the shared data
            folder, else the bundled copy).

    Returns:
        Columns ``item_id``, ``dialogue_id``, ``context_id``, ``context`` (the list of turns),
        ``response``, ``reference`` (a string, a list when several, None when none), ``system``,
        ``knowledge`` (a list) and one column per human dimension: the mean over the annotators
        who gave a number (NaN where none did). A dimension rated per dialogue holds the
        dialogue's mean on each of its rows and is listed in ``attrs["dialogue_ratings"]``.

    Warns:
        UserWarning: ``path``'s sha256 is not the catalog's, or its number of rated turns not the published file's,
            as ``-b NAME --path PATH`` says.

    Raises:
        InputError: An unknown benchmark, an empty ``path``, or a missing or malformed data file.
    """
    from dialeval.data.catalog import load_benchmark as load

    _expect(name, (str,), "a benchmark name", "name")
    _expect(path, (str, Path, type(None)), "a path or None", "path")
    try:
        bench = load(name, None if path is None else _user_path(path, "path"), path_option="path=")
    except UnknownNameError as exc:  # it named no argument, where score's metrics= is named
        raise exc.given_by("name") from None
    for warning in bench.warnings:  # a changed file, or another count of items than the published file's
        warnings.warn(warning, stacklevel=3)  # at the caller (the arguments_named wrapper is one frame)
    return benchmark_frame(bench)


def list_benchmarks() -> pd.DataFrame:
    """Return the benchmark catalog, as ``dialeval data list --json`` gives it: one row per benchmark.

    Returns:
        Columns ``name``, ``description``, ``level`` (turn or dialogue), ``items`` (rated responses or
        dialogues; None where unknown), ``license``, ``citation``, ``files`` (path and sha256 of each),
        ``bundled`` and ``available`` (whether :func:`load_benchmark` can load it here).
    """
    import pandas as pd

    from dialeval.data.catalog import list_benchmarks as entries
    from dialeval.data.show import entry_json_of

    return pd.DataFrame([entry_json_of(e) for e in entries()]).astype({"items": "Int64"})  # None stays <NA>


def list_metrics() -> pd.DataFrame:
    """Return every metric family, as ``dialeval metrics --json`` gives it: one row per family.

    Returns:
        Columns ``name`` (for ``metrics=``), ``description``, ``outputs`` (the columns :func:`score` adds),
        ``needs_references``, ``higher_is_better``, ``unavailable`` (why it cannot run here; None when it
        can) and ``parameters`` (each parameter's default, for ``params=``). An installed plugin that cannot
        be loaded is left out with a warning saying why, as ``dialeval metrics`` leaves it out.
    """
    import pandas as pd

    from dialeval.metrics.describe import describe_loadable

    entries, skipped = describe_loadable()
    for name, why in skipped.items():  # it was one error, and no listing of the others
        warnings.warn(f"skipped {name}: {why}", stacklevel=2)
    return pd.DataFrame(entries)


def benchmark_frame(bench: Benchmark) -> pd.DataFrame:
    """Return a loaded benchmark as the frame of :func:`load_benchmark`."""
    import pandas as pd

    from dialeval.meta.align import _human_means

    rows = []
    for c in bench.candidates:
        d = bench.dialogues[c.dialogue_id]
        refs: str | list[str] | None = c.references[0] if len(c.references) == 1 else (c.references or None)
        rows.append({
            "item_id": c.id, "dialogue_id": c.dialogue_id, "context_id": c.context_id,
            "context": [t.text for t in d.context(c.turn_index)], "response": c.text, "reference": refs,
            "system": c.system, "knowledge": list(d.knowledge),
        })  # fmt: skip
    frame = pd.DataFrame(rows, columns=["item_id", "dialogue_id", "context_id", "context", "response",
                                        "reference", "system", "knowledge"])  # fmt: skip
    per_dialogue = []
    for dim in bench.dimensions():
        for level, key in (("turn", "item_id"), ("dialogue", "dialogue_id")):
            chosen = [r for r in bench.ratings if r.dimension == dim and r.level == level]
            if chosen and dim not in frame.columns:
                frame[dim] = frame[key].map(_human_means(chosen, Counter())["human"]).astype("float64")
                per_dialogue += [dim] if level == "dialogue" else []
    frame.attrs = {DIALOGUE_RATINGS: per_dialogue, BENCHMARK: bench.name}
    return frame
