"""``dialeval meta``: scores + ratings in, correlation tables out."""

from __future__ import annotations

import dataclasses
import json
from collections import Counter
from collections.abc import Collection, Sequence
from pathlib import Path
from typing import Any

import typer

from dialeval.atomic import all_or_nothing
from dialeval.commands.common import (
    DEFAULT_LEVELS,
    LEVEL_HELP,
    N_BOOT_FLAGS,
    TABLE_RULE,
    TableOptions,
    check_given_once,
    check_output,
    console,
    fail,
    fields_as_options,
    interrupted_says,
    levels_to_report,
    load_inputs,
    out,
    remove_earlier,
    replaced_note,
    say_removed,
    split_levels,
    split_repeated,
    table_options,
    warned,
    write_json,
    write_text,
)
from dialeval.commands.tables import to_markdown, to_rich
from dialeval.data.benchmark import choose_dimension
from dialeval.errors import DialevalError, InputError, ensure_unique
from dialeval.jsonl import iter_records, nan_as_none, write_jsonl
from dialeval.meta.caveats import table_warnings
from dialeval.meta.rows import COMPARE_FILE
from dialeval.meta.wide import Wide, pivot
from dialeval.published import PublishedTable, load_table
from dialeval.schema import UNKNOWN_SYSTEM, Candidate, Rating, Score, named_systems
from dialeval.words import figure, human_rating, split_names

#: The files ``meta -o`` writes in its folder.
OUTPUT_FILES = ("table.md", "table.jsonl")


@dataclasses.dataclass
class Seen:
    """What the scores files read so far said, and where (the file and its line).

    Attributes:
        scored: Where each (metric, item) was first scored.
        keys: Each (item, key) given (:func:`~dialeval.meta.align.item_keys`): its value, and where it was first.
        signatures: Each (metric, part)'s signature (:func:`_part`), and where it was first.
    """

    scored: dict[tuple[str, str], tuple[Path, int]] = dataclasses.field(default_factory=dict)
    keys: dict[tuple[str, str], tuple[str, Path, int]] = dataclasses.field(default_factory=dict)
    signatures: dict[tuple[str, str], tuple[str, Path, int]] = dataclasses.field(default_factory=dict)


def row_dict(row: Any) -> dict[str, Any]:
    """Return a correlation row as a JSON-safe dict (NaN becomes null)."""
    raw = row.model_dump() if hasattr(row, "model_dump") else dataclasses.asdict(row)
    return nan_as_none(raw)


def paper_comparison(rows: Sequence[Any], table: PublishedTable) -> str:
    """Render our task-level sample correlations beside a published table (values x100)."""
    tasks = table.columns[:-1]
    ours: dict[tuple[str, str, str], float] = {}
    for r in rows:
        group = str(getattr(r, "group", "all"))
        if r.level == "sample" and group.startswith("task=") and r.value is not None:
            ours[(r.method, r.metric, group.split("=", 1)[1])] = 100.0 * r.value
    lines = [f"{table.title}", f"source: {table.citation}", ""]
    head = ["method", "metric", "", *table.columns]
    lines += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    found = False
    for method, paper_rows in table.rows.items():
        for ours_name, paper_name in table.metric_map.items():
            vals = [ours.get((method, ours_name, t)) for t in tasks]
            if all(v is None for v in vals):
                continue
            found = True
            present = [v for v in vals if v is not None]
            overall = sum(present) / len(present) if len(present) == len(tasks) else None
            mine = [*vals, overall]
            paper = paper_rows[paper_name]
            fmt = [figure(v, 1) for v in mine]
            lines.append(f"| {method} | {paper_name} ({ours_name}) | dialeval | " + " | ".join(fmt) + " |")
            lines.append("| | | paper | " + " | ".join(f"{v:g}" for v in paper) + " |")
            diff = [_difference(None if m is None else m - p) for m, p in zip(mine, paper, strict=True)]
            lines.append("| | | difference | " + " | ".join(diff) + " |")
    if not found:
        raise InputError(
            f'no sample-level rows by task for the metrics of "{table.name}" '
            f"({', '.join(table.metric_map)}); run with --level sample --by task"
        )
    return "\n".join(lines)


def _difference(value: float | None) -> str:
    """Return a difference as :func:`paper_comparison` prints it: ``+0.5``, ``-1.0``; ``+0.0`` for -0.04 (not -0.0)."""
    text = figure(value, 1)
    return text if text == "n/a" or text.startswith("-") else f"+{text}"


@table_options
def meta(
    scores: list[Path] = typer.Argument(..., help="Score JSONL file(s)."),
    ratings: Path | None = typer.Option(None, "--ratings", "-r", help="Rating JSONL."),
    benchmark: str | None = typer.Option(
        None, "--benchmark", "-b", help="Take the ratings from this catalog benchmark."
    ),
    path: Path | None = typer.Option(None, "--path", help=TABLE_RULE),
    dimension: str | None = typer.Option(
        None, "--dimension", "-d", help="Human dimension (default: the overall rating, else the only one)."
    ),
    level: str | None = typer.Option(None, "--level", "-l", help=LEVEL_HELP),
    method: str = typer.Option("pearson,spearman,kendall", "--method", help="Correlation methods."),
    metrics: list[str] = typer.Option(
        [], "--metrics", "-m", help="Only these metric outputs or families, comma-separated; repeatable (a name with a "
        "comma: rename it)."
    ),
    by: str | None = typer.Option(None, "--by", help="Break every figure down by this tag (e.g. task, system)."),
    n_boot: int = typer.Option(1000, *N_BOOT_FLAGS, help="Bootstrap resamples (0: no CIs)."),
    seed: int = typer.Option(0, "--seed", help="Bootstrap seed."),
    compare_paper: str | None = typer.Option(
        None, "--compare-paper", help="Print beside a published table (lmstyle-table1)."
    ),
    ceiling: bool = typer.Option(False, "--ceiling", help="Add the human ceiling (leave-one-annotator-out)."),
    compare: str | None = typer.Option(
        None, "--compare", help="Paired test of two metrics A,B: does A correlate better than B? (first level/method)"
    ),
    output: Path | None = typer.Option(
        None, "--output", "-o", help="Folder for table.md and table.jsonl (and compare.json with --compare)."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print rows as JSON only."),
    table: TableOptions = TableOptions(),
) -> None:
    """Correlate metric scores with human ratings, with cluster-bootstrap confidence intervals."""
    from dialeval.meta.correlate import check_boot, correlation_table

    inputs = [*(("SCORES", f) for f in scores), ("--ratings", ratings), ("--path", path), ("--mapping", table.mapping)]
    try:
        written = "nothing written" if output is None else f"nothing written to {output}"
        with interrupted_says(written), fields_as_options("metrics", "by", "dimension"):
            check_boot(n_boot, field="--n-boot", seed=seed)
            _no_tables(scores)
            levels, methods = split_levels(DEFAULT_LEVELS if level is None else level, method)
            wanted = split_repeated(metrics, "--metrics")
            pair = _compare_pair(compare)
            table_of = None if compare_paper is None else load_table(compare_paper)  # refused before scoring
            replaced = check_output(output, "folder", inputs=inputs, files=_files(pair))
            rating_recs, rated_from, cands = _ratings_of(ratings, benchmark, path, table, as_json)
            dimension = choose_dimension((r.dimension for r in rating_recs), dimension, rated_from)
            all_scores = read_all_scores(scores, rating_recs, dimension, rated_from, cands)
            _check_commas({"--metrics": wanted, "--compare": pair}, {s.metric for s in all_scores})
            wanted = _outputs_wanted(wanted, all_scores)
            _check_systems(by, all_scores)
            levels = levels_to_report(levels, level, rating_recs, dimension, (s.system for s in all_scores))
            _check_dialogues(levels, all_scores, rating_recs, dimension)
            _check_ceiling(ceiling, rating_recs, dimension)
            _check_pair(pair, all_scores)
            rows = correlation_table(
                all_scores, rating_recs, dimension=dimension, metrics=wanted, levels=levels,
                methods=methods, n_boot=n_boot, seed=seed, by=by,
            )  # fmt: skip
            comparison = None if table_of is None else paper_comparison(rows, table_of)
            rows = [*rows, *(_ceiling(all_scores, rating_recs, dimension, methods, levels) if ceiling else [])]
            paired = _paired(pair, all_scores, rating_recs, dimension, levels[0], methods[0], n_boot, seed)
            wide = pivot(rows)
            notes = _notes(rows, all_scores, rating_recs, dimension, wanted, paired)
            if output is not None:
                removed = _write_tables(output, wide, rows, comparison, notes, paired)
    except DialevalError as exc:
        fail(exc)
    if as_json:
        dicts = [row_dict(r) for r in rows]
        # notes: the lines under the screen's table (rough CIs, scores left out), which --json dropped
        out.print_json(json.dumps({"rows": dicts, "paper_comparison": comparison, "paired": paired, "notes": notes}))
        return
    out.print(to_rich(wide, f"Correlation with {human_rating(dimension)}"))
    for text in (*notes, comparison):
        if text:
            out.print(text, highlight=False, markup=False, soft_wrap=True)
    if output is not None:
        _say_written(output, _files(pair), replaced, removed)


def _outputs_wanted(wanted: list[str] | None, scores: Sequence[Score]) -> list[str] | None:
    """Return the outputs ``-m`` names: a family's name stands for its outputs in the scores, as ``score -m`` reads it.

    ``-m distinct`` said "no scores for metric distinct (did you mean "distinct2"?)" on scores of distinct1 and
    distinct2. A name given twice is refused before a family and one of its outputs are taken as one.
    """
    from dialeval.metrics.resolve import outputs_in

    if wanted is None:
        return None
    ensure_unique(wanted, "--metrics", "metric")
    return outputs_in(wanted, {s.metric for s in scores})


def _check_commas(asked: dict[str, Sequence[str] | None], held: Collection[str]) -> None:
    """Refuse an option of ``asked`` (``-m``, ``--compare``) whose names, split at commas, spell a held metric's name.

    The options split at commas, so a metric named "rouge,l" could not be picked: "no scores for metrics l, rouge".
    It is refused by name, with the way on (no quoting to learn); a comma name no option reaches is correlated.

    Example:
        >>> _check_commas({"--metrics": ["bleu", "rouge", "l"]}, {"rouge,l", "bleu"})  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        dialeval.errors.InputError: field "--metrics": metric "rouge,l" has a comma in its name, and --metrics ...
    """
    for option, names in asked.items():
        for name in sorted(m for m in held if "," in m):
            parts = [part.strip() for part in name.split(",")]
            if names and any(list(names[i : i + len(parts)]) == parts for i in range(len(names))):
                raise InputError(f'metric "{name}" has a comma in its name, and {option} splits names at commas: '
                                 f'rename it in the scores (e.g. "{"_".join(parts)}") to pick it, or leave out '
                                 f"{option} to correlate every metric", field=option)  # fmt: skip


def _check_systems(by: str | None, scores: Sequence[Score]) -> None:
    """Refuse ``--by system`` on scores that name no system: it gave one group, "system=unknown", equal to "all"."""
    if by == "system" and not named_systems(s.system for s in scores):
        raise InputError(f'the scores name no system (each is "{UNKNOWN_SYSTEM}"): score a table read with '
                         "--system-col, or records that name their systems", field="--by")  # fmt: skip


def _check_dialogues(levels: Sequence[str], scores: Sequence[Score], ratings: Sequence[Rating], dimension: str) -> None:
    """Refuse the dialogue level on scores that name no dialogue, of a dimension rated per item.

    Each item was its own dialogue: the dialogue-level figures were the turn level's. Scores of whole dialogues
    rated per dialogue name none either (their item ids are the dialogues'), and are kept.
    """
    per_dialogue = any(r.level == "dialogue" for r in ratings if r.dimension == dimension)
    if "dialogue" in levels and not per_dialogue and not any(s.dialogue_id for s in scores):
        raise InputError("the dialogue level needs the dialogue of each item, and the scores name none (each item "
                         "would be a dialogue of its own, and the figures the turn level's): give each score its "
                         "dialogue_id, or read the ratings with -b or --path, whose responses name theirs",
                         field="--level")  # fmt: skip


def _check_ceiling(ceiling: bool, ratings: Sequence[Rating], dimension: str) -> None:
    """Refuse ``--ceiling`` of a dimension rated per dialogue only, before the bootstrap runs.

    It said 'field "--dimension": no numeric turn ratings', after the table's bootstrap, of a dimension that correlates.
    """
    if ceiling and not any(r.level == "turn" for r in ratings if r.dimension == dimension):
        raise InputError(f'"{dimension}" is rated per dialogue, and the ceiling compares each annotator\'s ratings '
                         "with the others' item by item (turn level): leave out --ceiling", field="--ceiling")


def _ratings_of(
    ratings: Path | None, benchmark: str | None, path: Path | None, table: TableOptions, as_json: bool
) -> tuple[list[Rating], str, list[Candidate]]:
    """Return the ratings ``meta`` correlates with (``--ratings``, ``-b`` or ``--path``), their source and candidates.

    The candidates (none from ``--ratings``) know each item's context, dialogue and system, and carry the tags
    its scores would (:func:`~dialeval.scoring.score_tags`: their dialogue's, then their own).
    """
    if ratings is not None:
        if benchmark is not None or path is not None or table.given():  # they were left unread, silently
            other = "-b" if benchmark is not None else "--path" if path is not None else "your table's options"
            raise InputError(f"give --ratings or {other}, not both: each gives the ratings", field="--ratings")
        from dialeval.data.generic import read_ratings

        return read_ratings(ratings), str(ratings), []
    if benchmark is not None or path is not None:
        bench = load_inputs(benchmark, path, None, None, None, table=table, show=not as_json)
        from dialeval.scoring import score_tags

        tags = score_tags(bench.candidates, bench.dialogues)
        tagged = [c.model_copy(update={"tags": t}) for c, t in zip(bench.candidates, tags, strict=True)]
        return bench.ratings, bench.source, tagged
    raise InputError("give --ratings FILE, --benchmark NAME or --path FILE")


def _files(pair: tuple[str, str] | None) -> tuple[str, ...]:
    """Return the files ``meta -o`` writes: :data:`OUTPUT_FILES`, and :data:`COMPARE_FILE` with ``--compare``."""
    return (*OUTPUT_FILES, *([COMPARE_FILE] if pair is not None else []))


def _ceiling(
    scores: Sequence[Score], ratings: Sequence[Rating], dimension: str, methods: Sequence[str], levels: Sequence[str]
) -> list[Any]:
    """Return the rows of the human ceiling, on the items the metrics were scored on."""
    from dialeval.meta.ceiling import human_ceiling

    scored = {s.item_id for s in scores}
    on_items = [r for r in ratings if r.item_id in scored]
    return human_ceiling(on_items, dimension=dimension, methods=methods, levels=levels)


def _notes(
    rows: Sequence[Any], scores: Sequence[Score], ratings: Sequence[Rating], dimension: str,
    metrics: list[str] | None, paired: dict[str, Any] | None,
) -> list[str]:  # fmt: skip
    """Return the lines under the table: the scores left out, the warnings, the unscored items, the paired test.

    The screen and table.md show the same lines: table.md had the warnings alone (no "left out N of M scores",
    no paired test), so ``dialeval report`` could not show them.
    """
    from dialeval.meta.significance import paired_line

    lines = [dropped_note(scores, ratings, dimension, metrics), *table_warnings(rows),
             unscored_note(scores, ratings, dimension, metrics), paired_line(paired) if paired else ""]  # fmt: skip
    return [line for line in lines if line]


def _write_tables(
    output: Path, wide: Wide, rows: Sequence[Any], comparison: str | None, notes: Sequence[str],
    paired: dict[str, Any] | None,
) -> list[str]:  # fmt: skip
    """Write table.md (with the ``notes`` and the paper comparison), table.jsonl and, with a paired test, compare.json.

    All or none. An earlier run's compare.json is removed when this run has no paired test (``dialeval report``
    would show it as this run's); return what was removed.
    """
    extra = f"\n{comparison}\n" if comparison else ""
    with all_or_nothing(output):
        write_text(output / "table.md", to_markdown(wide) + "\n" + warned(notes) + extra)
        write_jsonl(output / "table.jsonl", rows)
        if paired is not None:
            write_json(output / COMPARE_FILE, paired)
    return remove_earlier(output, [] if paired is not None else [COMPARE_FILE])


def _say_written(output: Path, names: Sequence[str], replaced: Sequence[Path], removed: Sequence[str]) -> None:
    """Say which files ``meta -o`` wrote (``names``; the existing ones ``replaced``), and those it ``removed``."""
    wrote = f"wrote {', '.join(str(output / n) for n in names)}{replaced_note(replaced)}"
    console.print(wrote, highlight=False, markup=False, soft_wrap=True)
    say_removed(output, removed)


def _no_tables(paths: Sequence[Path]) -> None:
    """Refuse a scores file named as a table (``score -o scored.csv`` writes one), before the ratings are read.

    It said 'not valid JSON (Expecting value at column 1)', after the ratings' reading, with no way on.

    Example:
        >>> _no_tables([Path("s.jsonl"), Path("scored.csv")])  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        dialeval.errors.InputError: scored.csv: field "SCORES": names a table (what score -o NAME.csv writes for ...
    """
    from dialeval.commands.scored_table import is_table_output

    for path in paths:
        if is_table_output(path):
            raise InputError("names a table (what score -o NAME.csv writes for people to read), and meta reads Score "
                             "records, one per line: write them with score -o NAME.jsonl", path=path,
                             field="SCORES")  # fmt: skip


def read_all_scores(
    paths: Sequence[Path], ratings: Sequence[Rating], dimension: str, rated_from: str,
    candidates: Sequence[Candidate] = (),
) -> list[Score]:  # fmt: skip
    """Read every scores file (see :func:`read_scores`); a file given twice, or an item scored twice, is refused.

    Raises:
        InputError: The same file is given twice (by any name); a metric scores an item
            twice (naming the file and line of both); or what :func:`read_scores` refuses.
    """
    check_given_once(paths, "SCORES", "scores files")
    seen = Seen()
    return [s for p in paths for s in read_scores(p, ratings, dimension, rated_from, seen, candidates)]


def _check_repeats(path: Path, numbered: Sequence[tuple[int, Score]], filled: Sequence[Score], seen: Seen) -> None:
    """Refuse a (metric, item) scored before, here or in an earlier file; remember the others in ``seen``.

    And a metric named like a column of the aligned table (``human``, ``system``, ...): it was a pandas traceback, or
    (``dialogue_id``) every other metric's dialogue-level figures changed, silently. And a score (``filled`` with its
    candidate's keys) giving its item another context, dialogue, system or tag value than an earlier one: the first
    read was kept, so the figures changed with the order of the files, silently.
    """
    from dialeval.meta.align import reserved_name_why

    for (line, s), full in zip(numbered, filled, strict=True):
        if why := reserved_name_why(s.metric):
            raise InputError(why, path=path, line=line, field="metric")
        first = seen.scored.setdefault((s.metric, s.item_id), (path, line))
        if first != (path, line):
            raise InputError(
                f'metric "{s.metric}" scores item "{s.item_id}" twice: first at {first[0]}:{first[1]}',
                path=path,
                line=line,
                field="item_id",
            )
        _check_keys(path, line, s, full, seen)
        _check_signature(path, line, s, seen)


def _part(signature: str) -> str:
    """Return the part of a split metric a signature signs (its ``target``), or "".

    ``style`` with ``target=tag:NAME`` signs each style's items on their own (one detector each), in one run.

    Example:
        >>> _part("style|target:formal|spacy:3.8"), _part("bleu|lowercase:yes")
        ('formal', '')
    """
    return next((p.removeprefix("target:") for p in signature.split("|")[1:] if p.startswith("target:")), "")


def _check_signature(path: Path, line: int, s: Score, seen: Seen) -> None:
    """Refuse a score whose metric an earlier score (of the same part) signed otherwise: two runs, two metrics.

    Scores of two runs concatenated (other parameters, another version) were correlated as one metric, silently.
    A score without a signature (another tool's) is not compared.
    """
    if not s.signature:
        return
    earlier, where, at = seen.signatures.setdefault((s.metric, _part(s.signature)), (s.signature, path, line))
    if earlier != s.signature:
        raise InputError(f'metric "{s.metric}" was computed here by "{s.signature}", at {where}:{at} by "{earlier}": '
                         "scores of two runs (other parameters or versions) are two metrics; score the items again "
                         "in one run", path=path, line=line, field="signature")  # fmt: skip


def _check_keys(path: Path, line: int, s: Score, full: Score, seen: Seen) -> None:
    """Refuse ``full`` (``s`` with its candidate's keys) giving its item a key another score gave another value."""
    from dialeval.meta.align import item_keys, key_conflict

    own = item_keys(s)
    for key, value in item_keys(full).items():
        earlier, where, at = seen.keys.setdefault((s.item_id, key), (value, path, line))
        if earlier != value:
            note = "" if key in own else " (its candidate's: the score gives none)"
            error = key_conflict(key, s.item_id, value, earlier, s.metric, f"{where}:{at}", note)
            raise InputError(error.message, path=path, line=line, field=error.field)


def read_scores(
    path: Path, ratings: Sequence[Rating], dimension: str, rated_from: str, seen: Seen | None = None,
    candidates: Sequence[Candidate] = (),
) -> list[Score]:  # fmt: skip
    """Read one scores file, refusing one that cannot be correlated with ``ratings``.

    ``seen`` holds where each (metric, item) was scored in the files read before; a repeat
    is refused naming both places. A score that leaves its context, dialogue or system empty gets its
    candidate's (:func:`~dialeval.meta.align.with_candidate_keys`): scores of only ``item_id``, ``metric`` and
    ``value`` were correlated as if each item were its own context, and of no system.

    Raises:
        InputError: Naming the file and the reason: no scores in it, no score with a
            value (all null), or no scored item rated on ``dimension`` (a scores
            file from another benchmark?); a (metric, item) scored twice, or a metric named like a column
            of the aligned table (``human``, ``system``, ...), with the line.
    """
    from dialeval.meta.align import with_candidate_keys

    numbered = list(iter_records(path, Score))
    recs = with_candidate_keys([s for _, s in numbered], candidates)
    _check_repeats(path, numbered, recs, Seen() if seen is None else seen)
    if not recs:
        raise InputError("no scores in this file", path=path)
    valued = [s for s in recs if s.value is not None]
    if not valued:
        why = next((str(s.extras["error"]) for s in recs if s.extras.get("error")), "no reason given")
        raise InputError(f"none of its {len(recs)} scores has a value (all null; first reason: {why})", path=path)
    rated = {r.item_id for r in ratings if r.dimension == dimension}
    if not any(s.item_id in rated or (s.dialogue_id and s.dialogue_id in rated) for s in valued):
        raise InputError(
            f'none of its {len({s.item_id for s in valued})} scored items is rated on "{dimension}" in {rated_from} '
            "(scores of another benchmark?)",
            path=path,
        )
    return recs


def dropped_note(scores: Sequence[Score], ratings: Sequence[Rating], dimension: str, metrics: list[str] | None) -> str:
    """Say how many scores the table left out and why: null values, items nobody rated, items with no number.

    Null values are counted with their reasons. An item with no number is rated only "I don't know" or with labels:
    its scores were left out of the table silently.

    Example:
        >>> r = [Rating(item_id="a", dimension="q", annotator="x", value=1),
        ...      Rating(item_id="c", dimension="q", annotator="x", value=None, dont_know=True)]
        >>> s = [Score(item_id="a", metric="m", value=None, extras={"error": "HTTP 500"}),
        ...      Score(item_id="b", metric="m", value=0.5), Score(item_id="c", metric="m", value=0.5)]
        >>> for part in dropped_note(s, r, "q", None).split("; "):
        ...     print(part)
        left out 3 of 3 scores: 1 null (1 x HTTP 500)
        1 of items not rated on "q" (unknown item ids)
        1 of items rated on "q" with no number ("I don't know" or a label)
    """
    from dialeval.meta.align import numeric_rating

    chosen = [r for r in ratings if r.dimension == dimension]
    rated = {r.item_id for r in chosen}
    numbered = {r.item_id for r in chosen if numeric_rating(r) is not None}
    used = [s for s in scores if metrics is None or s.metric in metrics]
    null = Counter(str(s.extras.get("error") or "no reason given") for s in used if s.value is None)
    valued = [s for s in used if s.value is not None]
    unknown = sum(1 for s in valued if s.item_id not in rated and s.dialogue_id not in rated)
    no_number = sum(1 for s in valued if s.item_id not in numbered and s.dialogue_id not in numbered) - unknown
    parts = [f"{n} null ({'; '.join(f'{k} x {why}' for why, k in null.most_common(3))})" for n in [null.total()] if n]
    if unknown:
        parts.append(f'{unknown} of items not rated on "{dimension}" (unknown item ids)')
    if no_number:
        parts.append(f'{no_number} of items rated on "{dimension}" with no number ("I don\'t know" or a label)')
    dropped = null.total() + unknown + no_number
    return f"left out {dropped} of {len(used)} scores: " + "; ".join(parts) if dropped else ""


def unscored_note(scores: Sequence[Score], ratings: Sequence[Rating], dimension: str, metrics: list[str] | None) -> str:
    """Say on how many of the rated items the table stands, when the scores leave some rated items out.

    An item counts as scored when a score with a value names it, or names its dialogue (dialogue-level ratings).

    Example:
        >>> r = [Rating(item_id=i, dimension="q", annotator="x", value=1) for i in "abc"]
        >>> unscored_note([Score(item_id="a", metric="m", value=0.5)], r, "q", None)
        'note: the table is over 1 of the 3 items rated on "q": 2 have no score'
        >>> unscored_note([Score(item_id=i, metric="m", value=0.5) for i in "ab"], r, "q", None)
        'note: the table is over 2 of the 3 items rated on "q": 1 has no score'
        >>> unscored_note([Score(item_id=i, metric="m", value=0.5) for i in "abc"], r, "q", None)
        ''
    """
    rated = {r.item_id for r in ratings if r.dimension == dimension}
    used = [s for s in scores if s.value is not None and (metrics is None or s.metric in metrics)]
    scored = {s.item_id for s in used} | {s.dialogue_id for s in used if s.dialogue_id}
    missing = len(rated - scored)
    if not missing:
        return ""
    return (f'note: the table is over {len(rated) - missing} of the {len(rated)} items rated on "{dimension}": '
            f"{missing} {'has' if missing == 1 else 'have'} no score")  # fmt: skip


def _compare_pair(compare: str | None) -> tuple[str, str] | None:
    """Read ``--compare A,B`` (None when not given); an empty, single or repeated name is refused.

    >>> _compare_pair("bleu4,length")
    ('bleu4', 'length')
    """
    if compare is None:
        return None
    names = split_names(compare, "--compare")
    if len(names) != 2 or names[0] == names[1]:  # a metric against itself: a difference of 0, p = 0.5
        raise InputError(f'--compare takes two different metrics "A,B", got "{compare}"', field="--compare")
    return names[0], names[1]


def _check_pair(pair: tuple[str, str] | None, scores: Sequence[Score]) -> None:
    """Refuse a ``--compare`` metric the scores do not hold, before the table's bootstrap runs."""
    from dialeval.meta.align import missing_metrics

    held = sorted({s.metric for s in scores})
    if pair is not None and (absent := [m for m in pair if m not in held]):
        raise missing_metrics(absent, held, field="--compare")


def _paired(
    pair: tuple[str, str] | None,
    scores: Sequence[Score],
    ratings: Sequence[Rating],
    dimension: str,
    level: str,
    method: str,
    n_boot: int,
    seed: int,
) -> dict[str, Any] | None:
    """Run the paired bootstrap test of ``--compare A,B`` at ``level`` and ``method`` (None when not asked)."""
    if pair is None:
        return None
    from dialeval.meta.significance import compare_metrics

    res = compare_metrics(
        scores, ratings, metric_a=pair[0], metric_b=pair[1], dimension=dimension,
        level=level, method=method, n_boot=n_boot, seed=seed,
    )  # fmt: skip
    return row_dict(res)


def register(app: typer.Typer) -> None:
    """Add ``meta`` to the CLI."""
    app.command("meta")(meta)
