r"""Read a results folder: what ``dialeval benchmark``, ``lmstyle``, ``stress`` or ``train`` wrote.

A folder must hold at least one known file, and beside a ``run.json`` every file its command writes
(:attr:`~dialeval.runinfo.RunBase.FILES`); the known files:
``run.json`` (command, signatures), ``scores.jsonl`` (Score records), ``table.jsonl``
(correlation rows), ``lmstyle_tables.jsonl`` and ``summary.jsonl`` (LMStyle tables),
``stress.jsonl`` (rows with ``metric``, ``perturbation``, ``value``), ``ranking.jsonl`` (the
DailyDialog++ ranking: ``metric``, ``negatives``, ``fraction``), ``results.jsonl`` (``dialeval
train``'s rows: ``model``, ``split``, the measures) and ``ratings.jsonl`` (a human study's
export, Rating records); beside ``table.jsonl``, ``compare.json`` (``meta --compare``'s paired test).

Example:
    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (d / "stress.jsonl").write_text('{"metric": "bleu", "perturbation": "shuffle", "value": 0.25}\n')
    >>> r = load_results(d)
    >>> r.kind, r.stress[0]["value"]
    ('stress', 0.25)
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, ClassVar, get_args

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError, create_model

from dialeval.errors import InputError
from dialeval.jsonl import (
    check_file,
    field_of,
    iter_objects,
    json_kind,
    json_problem,
    pydantic_message,
    read_jsonl,
    read_text,
)
from dialeval.meta.rows import COMPARE_FILE, CorrelationRow
from dialeval.runinfo import AnyRun, LmstyleRun, OnBenchmark, RunInfo, TrainRun
from dialeval.schema import Rating, Score

KNOWN = ("run.json", "scores.jsonl", "table.jsonl", "lmstyle_tables.jsonl", "summary.jsonl", "stress.jsonl",
         "ranking.jsonl", "results.jsonl", "ratings.jsonl")  # fmt: skip


@dataclass
class Results:
    """The parsed content of one results folder (empty lists for absent files)."""

    path: Path
    run: AnyRun | None = None
    scores: list[Score] = field(default_factory=list)
    correlations: list[dict[str, Any]] = field(default_factory=list)
    lmstyle_tables: list[dict[str, Any]] = field(default_factory=list)
    summary: list[dict[str, Any]] = field(default_factory=list)
    stress: list[dict[str, Any]] = field(default_factory=list)
    ranking: list[dict[str, Any]] = field(default_factory=list)
    train: list[dict[str, Any]] = field(default_factory=list)
    ratings: list[Rating] = field(default_factory=list)
    paired: dict[str, Any] | None = None

    @property
    def kind(self) -> str:
        """``lmstyle``, ``benchmark``, ``stress``, ``ranking``, ``train``, ``study`` or ``scores``."""
        if isinstance(self.run, LmstyleRun) or self.lmstyle_tables or self.summary:
            return "lmstyle"
        if self.correlations:
            return "benchmark"
        if self.stress:
            return "stress"
        if self.ranking:
            return "ranking"
        if isinstance(self.run, TrainRun) or self.train:
            return "train"
        return "study" if self.ratings and not self.scores else "scores"


class _Line(BaseModel):
    """A line of a results file: the fields the report reads, typed as their writer writes them; others as they are.

    A word where a figure goes (``"value": "high"``) was a ``ValueError`` traceback while a chart was drawn, or was
    printed in a table as if it were the figure.
    """

    model_config = ConfigDict(extra="allow")

    #: The fields that name what a line is the figure of: two lines of one file may not share them.
    KEY: ClassVar[tuple[str, ...]] = ()


#: A share of pairs (stress's ``value``, the ranking's ``fraction`` and its CI): one out of its range was printed,
#: and shaded in the heat map, as a share.
_Share = Annotated[float | None, Field(ge=0, le=1)]


class _StressLine(_Line):
    KEY = ("metric", "perturbation")
    metric: str
    perturbation: str
    value: _Share


class _RankingLine(_Line):
    KEY = ("metric", "negatives")
    metric: str
    negatives: str
    fraction: _Share
    ci_low: _Share = None
    ci_high: _Share = None


class _TableCell(_Line):
    KEY = ("table", "dataset", "model", "source", "column")
    table: str
    model: str
    source: str
    column: str
    value: float | None
    dataset: str = ""


class _SummaryLine(_Line):
    KEY = ("model",)  # lmstyle's system_summary: a row per model
    model: str


#: The measures of ``dialeval train``'s result rows, in its order.
TRAIN_COLUMNS = ("accuracy", "uar", "kappa", "spearman", "pearson", "precision", "recall", "f1", "spearman_diff")

_TRAIN_FIELDS: dict[str, Any] = {
    "model": (str, ...),
    "split": (str, ...),
    "n": (int | None, None),
    "one_label": (int | None, Field(None, ge=0, le=2)),  # the third of the scale every prediction fell in
    "undefined": (list[str], []),
    "undefined_why": (dict[str, str], {}),  # measures -> why they are undefined
    "no_ci": (str, ""),
    "rough_ci": (str, ""),
    **{key: (float | None, None) for key in TRAIN_COLUMNS},
    **{f"{key}_ci": (tuple[float | None, float | None] | None, None) for key in TRAIN_COLUMNS},
}


class _TrainKey(_Line):
    KEY = ("model", "split")  # a row per model and split (a mean row's split: "mean of 5")


_TrainLine = create_model("_TrainLine", __base__=_TrainKey, **_TRAIN_FIELDS)


def read_rows(path: Path, line: type[_Line] = _Line) -> list[dict[str, Any]]:
    r"""Read a JSONL file of objects, each checked as a ``line`` (the fields the report reads, and their types).

    Two lines of one ``line.KEY`` are refused (:func:`check_once`).

    Example:
        >>> import tempfile, pathlib
        >>> p = pathlib.Path(tempfile.mkdtemp()) / "stress.jsonl"
        >>> _ = p.write_text('{"metric": "bleu", "perturbation": "negation", "value": "high"}\n')
        >>> read_rows(p, _StressLine)
        Traceback (most recent call last):
        ...
        dialeval.errors.InputError: ...stress.jsonl:1: field "value": Input should be a valid number, ...
    """
    rows: list[dict[str, Any]] = []
    seen: dict[tuple[str, ...], int] = {}
    for n, obj in iter_objects(path):
        try:
            rows.append(line.model_validate(obj).model_dump(exclude_unset=True))
        except ValidationError as exc:
            where, msg = field_of(exc)
            raise InputError(msg, path=path, line=n, field=where) from None
        check_once(rows[-1], line.KEY, seen, path, n)
    return rows


def check_once(row: dict[str, Any], key: tuple[str, ...], seen: dict[tuple[str, ...], int], path: Path, n: int) -> None:
    """Refuse a second line of a results file for what an earlier one (in ``seen``: key -> line) is the figure of.

    The report showed one of the two in its table (the last) and their mean, or both, in its chart: two runs'
    files joined into one (``cat``) gave figures that match neither run.

    Example:
        >>> check_once({"metric": "bleu", "negatives": "random"}, ("metric", "negatives"), {("bleu", "random"): 1},
        ...            Path("ranking.jsonl"), 3)
        Traceback (most recent call last):
        ...
        dialeval.errors.InputError: ranking.jsonl:3: field "negatives": a second line of metric "bleu", negatives \
"random" (the first is line 1): are two runs' files joined in this one?
    """
    if not key:
        return
    k = tuple(str(row.get(name, "")) for name in key)
    if k in seen:
        said = ", ".join(f'{name} "{value}"' for name, value in zip(key, k, strict=True))
        raise InputError(f"a second line of {said} (the first is line {seen[k]}): are two runs' files joined in this "
                         "one?", path=path, line=n, field=key[-1])  # fmt: skip
    seen[k] = n


def read_correlations(path: Path) -> list[dict[str, Any]]:
    r"""Read ``table.jsonl``: each line a :class:`~dialeval.meta.rows.CorrelationRow`, typed (as ``meta`` writes it).

    A list in ``metric`` or a dict in ``value`` was a ``TypeError`` traceback while the report was drawn.

    Example:
        >>> import tempfile, pathlib
        >>> p = pathlib.Path(tempfile.mkdtemp()) / "table.jsonl"
        >>> _ = p.write_text('{"metric": "bleu", "dimension": "Overall", "level": "turn", "method": "pearson", '
        ...                  '"value": {}, "p_value": null, "ci_low": null, "ci_high": null, "n_items": 3, '
        ...                  '"n_groups": 3, "n_skipped": 0}\n')
        >>> read_correlations(p)
        Traceback (most recent call last):
        ...
        dialeval.errors.InputError: ...table.jsonl:1: field "value": Input should be a valid number
    """
    rows: list[dict[str, Any]] = []
    seen: dict[tuple[str, ...], int] = {}
    boot: tuple[int, str, str] | None = None  # the first row's line, resamples and seed
    for n, obj in iter_objects(path):
        try:
            rows.append(_CORRELATION_ROW.validate_python(obj).to_dict())
        except ValidationError as exc:
            where, msg = field_of(exc)
            raise InputError(msg, path=path, line=n, field=where) from None
        check_once(rows[-1], ("metric", "level", "method", "group"), seen, path, n)  # a cell of the table
        if rows[-1]["value"] is None and (rows[-1]["ci_low"], rows[-1]["ci_high"]) != (None, None):  # shown as n/a
            raise InputError("null (an undefined figure), and the row has a CI: meta writes none for an undefined "
                             "figure; was the row edited?", path=path, line=n, field="value")  # fmt: skip
        if "n_boot" not in (keys := signature_keys(str(rows[-1].get("signature") or ""))):
            continue
        boot = boot or (n, keys["n_boot"], keys["seed"])
        if (keys["n_boot"], keys["seed"]) != boot[1:]:  # one table showed one metric's CIs and not another's
            raise InputError(f"a row of {keys['n_boot']} bootstrap resamples (seed {keys['seed']}), line {boot[0]} of "
                             f"{boot[1]} (seed {boot[2]}): are two runs' files joined in this one?", path=path,
                             line=n, field="signature")  # fmt: skip
    return rows


def signature_keys(signature: str) -> dict[str, str]:
    """Return a signature's ``key:value`` parts (:func:`~dialeval.signature.make_signature`) as a dict.

    Example:
        >>> signature_keys("corr|level:turn|n_boot:20|seed:3")
        {'level': 'turn', 'n_boot': '20', 'seed': '3'}
    """
    return dict(part.split(":", 1) for part in signature.split("|")[1:] if ":" in part)


_CORRELATION_ROW = TypeAdapter(CorrelationRow)


def read_comparison(path: Path) -> dict[str, Any]:
    """Read ``compare.json``: the paired test of ``meta --compare A,B -o``, typed (a :class:`ComparisonResult`).

    Example:
        >>> import json, tempfile, pathlib
        >>> p = pathlib.Path(tempfile.mkdtemp(), "compare.json")
        >>> _ = p.write_text(json.dumps({"metric_a": "a", "metric_b": "b", "level": "turn", "method": "pearson"}))
        >>> read_comparison(p)
        Traceback (most recent call last):
        ...
        dialeval.errors.InputError: ...compare.json: field "dimension": missing field
    """
    try:
        data = json.loads(read_text(path))
    except json.JSONDecodeError as exc:
        raise InputError(f"not valid JSON ({json_problem(exc)})", path=path, line=exc.lineno) from None
    from dialeval.meta.significance import ComparisonResult  # numpy and pandas: not on the CLI's start

    try:
        return TypeAdapter(ComparisonResult).validate_python(data).to_dict()
    except ValidationError as exc:
        where, msg = field_of(exc)
        raise InputError(msg, path=path, field=where) from None


def read_run(path: Path) -> AnyRun:
    """Read a ``run.json`` as the model of its kind (:class:`~dialeval.runinfo.RunInfo`).

    Raises:
        InputError: Not a JSON object, an unknown kind, or a field that is unknown, missing or of the wrong type.

    Example:
        >>> import tempfile, pathlib
        >>> p = pathlib.Path(tempfile.mkdtemp()) / "run.json"
        >>> _ = p.write_text('{"kind": "benchmark", "benchmark": "usr-tc", "dimension": "Overall"}')
        >>> read_run(p).dimension
        'Overall'
        >>> _ = p.write_text('{"kind": "benchmark", "benchmark": "usr-tc", "dimenson": "Overall"}')
        >>> read_run(p)
        Traceback (most recent call last):
        ...
        dialeval.errors.InputError: ...run.json: field "dimenson": unknown field; did you mean "dimension"?
        >>> _ = p.write_text('{"benchmark": "usr-tc"}')
        >>> read_run(p)
        Traceback (most recent call last):
        ...
        dialeval.errors.InputError: ...run.json: field "kind": missing: it names the command that wrote the folder \
(benchmark, stress, ranking, lmstyle or train)
    """
    try:
        data = json.loads(read_text(path))
    except json.JSONDecodeError as exc:
        raise InputError(f"not valid JSON ({json_problem(exc)})", path=path, line=exc.lineno) from None
    if not isinstance(data, dict):
        raise InputError(f"expected a JSON object, found {json_kind(data)}", path=path)
    try:
        return RunInfo.model_validate(data).root
    except ValidationError as exc:
        first = exc.errors()[0]
        where = [str(x) for x in first["loc"][1:]]  # the first element is the kind (the union's tag)
        kinds = "benchmark, stress, ranking, lmstyle or train"
        message = {"union_tag_not_found": f"missing: it names the command that wrote the folder ({kinds})",
                   "union_tag_invalid": f"{data.get('kind')!r} is no kind of run; one of {kinds}"}  # fmt: skip
        # pydantic's words: "Unable to extract tag using discriminator 'kind'"
        fields = next((list(m.model_fields) for m in get_args(AnyRun) if m.model_fields["kind"].default ==
                       data.get("kind")), []) if len(where) == 1 else []  # fmt: skip
        said = message.get(first["type"]) or pydantic_message(first["type"], first["msg"], (where or [""])[-1], fields)
        raise InputError(said, path=path, field=".".join(where) or "kind") from None


def _result_folders(path: Path) -> list[str]:
    """Return the names of the folders in ``path`` that hold results (none where one cannot be read)."""
    try:
        return sorted(d.name for d in path.iterdir() if d.is_dir() and any((d / n).is_file() for n in KNOWN))
    except OSError:  # an unreadable folder: the error stays "no results here"
        return []


def check_whole(path: Path, run: AnyRun) -> None:
    """Refuse a run's folder that lacks a file its command (``run``) writes on every run (``run.FILES``).

    A benchmark's folder without its table.jsonl was reported as a folder of scores (their distributions, no
    table), one without its scores.jsonl as a benchmark with no scatter plot, with no word of the missing file.

    Example:
        >>> import tempfile
        >>> from dialeval.runinfo import StressRun
        >>> folder = Path(tempfile.mkdtemp())
        >>> for name in ("stress.jsonl", "run.json"):
        ...     _ = (folder / name).write_text("")
        >>> check_whole(folder, StressRun(benchmark="usr-tc"))  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        dialeval.errors.InputError: ...: lacks stress.md, which dialeval stress writes beside its run.json: was the \
folder copied in part? Give the whole folder, or run the command again
    """
    if lacks := [name for name in run.FILES if not (path / name).is_file()]:
        command = "dialeval stress -b dailydialog++" if run.kind == "ranking" else f"dialeval {run.kind}"
        raise InputError(f"lacks {', '.join(lacks)}, which {command} writes beside its run.json: was the folder "
                         "copied in part? Give the whole folder, or run the command again", path=path)  # fmt: skip


def load_results(path: str | Path) -> Results:
    """Load a results folder.

    Raises:
        InputError: Not a folder, no known file in it, compare.json without table.jsonl, a file that its run.json's
            command writes missing (:func:`check_whole`), a results file with no rows, or a malformed file (named
            with line and field).
    """
    p = Path(path)
    if not p.is_dir():
        what = "a file" if p.exists() else "not found"
        raise InputError(f"{what}: give a results folder (the --output of benchmark, stress, lmstyle or train)", path=p)
    if (p / COMPARE_FILE).is_file() and not (p / "table.jsonl").is_file():  # "no results here", or left out unsaid
        raise InputError("lacks the table.jsonl that dialeval meta --compare -o writes beside it: its paired test is "
                         "reported under that table; give the whole folder", path=p / COMPARE_FILE)  # fmt: skip
    if not any((p / name).is_file() for name in KNOWN):
        inside = _result_folders(p)
        hint = f"; its folders {', '.join(inside)} hold results: name them" if inside else ""  # `report runs/`
        raise InputError(f"no results here (looked for {', '.join(KNOWN)}){hint}", path=p)
    r = Results(path=p)
    if (p / "run.json").is_file():
        r.run = read_run(p / "run.json")
        check_whole(p, r.run)
    for name, attr, read in _ROW_FILES:
        if (p / name).is_file():
            rows = read(p / name)
            if not rows:  # it was reported as a folder of kind "scores" with nothing in it, and no word why
                raise InputError("holds no rows: nothing to report (was it cut short?)", path=p / name)
            setattr(r, attr, rows)
    if (p / COMPARE_FILE).is_file():  # meta --compare's paired test: it was on the screen only
        r.paired = read_comparison(p / COMPARE_FILE)
    return r


#: The results files of rows: each file's name, the :class:`Results` field it fills, and its reader.
_ROW_FILES: tuple[tuple[str, str, Callable[[Path], list[Any]]], ...] = (
    ("scores.jsonl", "scores", lambda f: read_jsonl(f, Score)),
    ("table.jsonl", "correlations", read_correlations),
    ("lmstyle_tables.jsonl", "lmstyle_tables", lambda f: read_rows(f, _TableCell)),
    ("summary.jsonl", "summary", lambda f: read_rows(f, _SummaryLine)),
    ("stress.jsonl", "stress", lambda f: read_rows(f, _StressLine)),
    ("ranking.jsonl", "ranking", lambda f: read_rows(f, _RankingLine)),
    ("results.jsonl", "train", lambda f: read_rows(f, _TrainLine)),
    ("ratings.jsonl", "ratings", lambda f: read_jsonl(f, Rating)),
)


def read_figure(path: Path) -> bytes:
    """Read a figure a command drew beside its results (``stress_subsets_<perturbation>.png``), checked as a PNG.

    A folder of that name was an ``IsADirectoryError`` traceback; a file of other bytes was inlined as a PNG that
    shows nothing.

    Example:
        >>> import tempfile
        >>> p = Path(tempfile.mkdtemp()) / "stress_subsets_negation.png"
        >>> _ = p.write_text("not a figure")
        >>> read_figure(p)  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        dialeval.errors.InputError: ...stress_subsets_negation.png: not a PNG figure: ...
    """
    try:
        data = check_file(path).read_bytes()
    except OSError as exc:
        raise InputError(f"cannot read ({exc.strerror or exc})", path=path) from None
    if not data.startswith(b"\x89PNG\r\n\x1a\n"):
        raise InputError("not a PNG figure: run the command again, or remove the file", path=path)
    return data


def human_ratings(results: Results) -> tuple[list[Rating], str]:
    """Return the ratings a benchmark run was compared with, reloaded from its catalog entry, and a note.

    The note says why there are none (e.g. the data is not on this machine).
    """
    run = results.run
    name, source = (run.benchmark, run.source) if isinstance(run, OnBenchmark) else (None, None)
    if run is None:  # it said "run.json names no benchmark" of the run.json that is not there
        return [], "there is no run.json to name the benchmark whose human ratings they plot"
    if not name:
        return [], "run.json names no benchmark"
    from dialeval.data.catalog import load_benchmark
    from dialeval.errors import DialevalError

    try:
        bench = load_benchmark(str(name), source if source and Path(str(source)).exists() else None)
    except (DialevalError, OSError) as exc:
        return [], f"human ratings of {name} could not be reloaded: {exc}"
    return bench.ratings, ""
