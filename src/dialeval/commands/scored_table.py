"""``dialeval score -o scored.csv``: the table back, one row per row read and one column per metric output.

A CSV cannot hold a signature per value, so the summary of the run that made the table (each output's
signature, the request, the counts) is written beside it, as ``scored.csv.summary.json``
(:func:`~dialeval.commands.common.summary_path`, as ``judge run`` names its summary), in the same
all-or-nothing step.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dialeval.atomic import all_or_nothing, atomic_write
from dialeval.commands.common import summary_path, write_json
from dialeval.data.benchmark import Benchmark
from dialeval.errors import InputError

if TYPE_CHECKING:
    from dialeval.scoring import MetricRun

#: The output suffixes written as a table, each with its delimiter.
TABLE_OUTPUTS = {".csv": ",", ".tsv": "\t"}

#: The columns of a table written from records or a catalog benchmark (there is no table of the user's to write back).
ITEM_COLUMNS = ["item_id", "dialogue_id", "system", "context", "response"]

#: Per row, its cells and its items' ids (one per response: several where a row holds one per system).
Rows = list[tuple[list[Any], list[str]]]

#: The columns of a table to write back, its rows, and the systems of a row's responses where it holds several
#: (:func:`table_rows`).
Table = tuple[list[str], Rows, list[str]]


def is_table_output(path: Path) -> bool:
    """Return whether ``-o path`` asks for the scored table (a ``.csv`` or ``.tsv`` name) rather than Score records.

    Example:
        >>> is_table_output(Path("scored.CSV")), is_table_output(Path("s.jsonl"))
        (True, False)
    """
    return path.suffix.lower() in TABLE_OUTPUTS


def table_rows(bench: Benchmark, outputs: Iterable[str]) -> Table:
    """Return the columns, per row its cells and its items' ids, and the systems of a row's responses.

    The rows are the table's as read, else one per item. A table's columns are its own, in first-seen order (a
    JSONL record may lack a key another has). A table whose rows hold one response per system (a mapping's
    ``systems``) gets a column per output and system (:func:`output_columns`). Called with the outputs the
    run will write, before any work.

    Raises:
        InputError: A column is named like an output column, which the table would hold twice.
    """
    if not bench.rows:
        rows = [([c.id, c.dialogue_id, c.system, "\n".join(t.text for t in bench.dialogues[c.dialogue_id].context(
            c.turn_index)), c.text], [c.id]) for c in bench.candidates]  # fmt: skip
        return list(ITEM_COLUMNS), rows, []
    system_of = {c.id: c.system for c in bench.candidates}
    first = bench.rows[0][2]  # every row gives the systems of the mapping, in its order
    systems = [system_of[i] for i in first] if len(first) > 1 else []
    columns = list(dict.fromkeys(key for _, rec, _ in bench.rows for key in rec))
    if clash := [name for name in output_columns(dict.fromkeys(outputs), systems) if name in columns]:
        names = ", ".join(f'"{c}"' for c in clash)
        raise InputError(f"has a column named like a metric output ({names}), which the table written back would "
                         "hold twice: rename the column, or write Score records (-o scores.jsonl)",
                         path=bench.source, field="--output")  # fmt: skip
    return columns, [([rec.get(key) for key in columns], ids) for _, rec, ids in bench.rows], systems


def output_columns(outputs: Iterable[str], systems: Sequence[str]) -> list[str]:
    """Return the columns of the outputs: their names, or one per output and system (each output's together).

    Example:
        >>> output_columns(["quality", "length"], ["a", "b"])
        ['quality_a', 'quality_b', 'length_a', 'length_b']
        >>> output_columns(["quality"], [])
        ['quality']
    """
    return [f"{name}_{system}" for name in outputs for system in systems] if systems else list(outputs)


def _text(value: Any) -> str:
    """Return a cell as the table writes it: text as it is, nothing as empty, anything else as JSON.

    Example:
        >>> _text("Hi"), _text(None), _text(["a", "b"]), _text(4)
        ('Hi', '', '["a", "b"]', '4')
    """
    if isinstance(value, str):
        return value
    return "" if value is None else json.dumps(value, ensure_ascii=False)


def write_scored_table(path: Path, table: Table, runs: Sequence[MetricRun], summary: Mapping[str, Any]) -> int:
    """Write the table (:func:`table_rows`) with one column per output after its own, and its summary beside it.

    The summary is ``summary`` (as ``score --json`` prints it) with ``signatures``: each output column's, its
    run's (every part's where the metric split its items, as the Python API's ``attrs["signatures"]``).
    A value is written as Python's shortest round-trip form (read back, it is the same float); a score
    without a value (``null`` in Score records, why in the summary's counts) is an empty cell.

    Returns:
        The number of rows written.
    """
    columns, rows, systems = table
    values: dict[str, dict[str, float | None]] = {}
    signature: dict[str, str] = {}
    for run in runs:  # one score's signature is its part's: style with target=tag:NAME has one per style
        for s in run.scores:
            values.setdefault(s.metric, {})[s.item_id] = s.value
            signature[s.metric] = run.signature
    outputs = list(values)
    with all_or_nothing(path.parent):
        with atomic_write(path) as handle:
            writer = csv.writer(handle, delimiter=TABLE_OUTPUTS[path.suffix.lower()], lineterminator="\n")
            writer.writerow(columns + output_columns(outputs, systems))
            for cells, ids in rows:  # each output's values, one per response, in output_columns' order
                numbers = (values[name].get(item) for name in outputs for item in ids)
                writer.writerow([_text(c) for c in cells] + ["" if v is None else repr(v) for v in numbers])
        signatures = {column: signature[name] for name in outputs  # each column's, as the API's attrs["signatures"]
                      for column in output_columns([name], systems)}  # fmt: skip
        write_json(summary_path(path), {**summary, "signatures": signatures})
    return len(rows)
