"""The paper's Tables 2, 4 and 5 (and a per-model summary) from scores, with its rows beside ours.

Cells are system-level means over the responses of a (dataset, model, style) subset:
ACC% = 100 x mean ``style_match``; BLEU = mean sentence ``sacrebleu``; SBERT = 100 x mean
``sbert_ref``; ChatGPT = mean judge score over the responses it could score; NLL = 100 /
(mean response NLL), the per-item NLL being ``100 / lm_likelihood``. Responses a metric
could not score are left out of that cell, which then shows ``(k/n)``: k of its n responses
were scored; where generations failed (``lmstyle --allow-failures``), n counts the responses
asked for, so the cell says how many of those it averages.

Example:
    >>> from dialeval.schema import Score
    >>> s = [Score(item_id=f"i{v}", metric="style_match", value=v, system="m",
    ...            tags={"dataset": "dd", "style": "formal"}) for v in (0.0, 1.0)]
    >>> t = build_table("table4", s)
    >>> t.rows[0][0], t.rows[0][2][0]
    (('Daily Dialog', 'm'), 50.0)
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from dialeval.lmstyle.prompt import DATASETS, STYLES
from dialeval.lmstyle.score import JUDGE
from dialeval.schema import Score
from dialeval.words import figure, markdown_table

METRIC_OF = {"ACC%": "style_match", "BLEU": "sacrebleu", "SBERT": "sbert_ref", "NLL": "lm_likelihood",
             "ChatGPT": JUDGE}  # fmt: skip
FIVE = ("ACC%", "BLEU", "SBERT", "NLL", "ChatGPT")
#: Table -> (published table name, per-dataset rows?, columns as (header, styles, paper metric)).
SPECS: dict[str, tuple[str, bool, list[tuple[str, tuple[str, ...], str]]]] = {
    "table2": ("lmstyle-table2", False,
               [(f"{task} {m}", styles, m) for task, styles in (("Formality", ("formal", "informal")),
                                                                 ("Sentiment", ("positive", "negative")))
                for m in ("ACC%", "ChatGPT", "NLL")]),
    "table4": ("lmstyle-table4", True, [(f"{STYLES[s]} {m}", (s,), m) for s in ("formal", "informal") for m in FIVE]),
    "table5": ("lmstyle-table5", True, [(f"{STYLES[s]} {m}", (s,), m) for s in ("positive", "negative") for m in FIVE]),
}  # fmt: skip
TITLES = {
    "table2": "Table 2: formality and sentiment tasks, both datasets",
    "table4": "Table 4: formality tasks per dataset",
    "table5": "Table 5: sentiment tasks per dataset",
}


def aggregate(paper_metric: str, values: Sequence[float]) -> float | None:
    """Return a system-level cell from per-item values (None when there are none).

    Example:
        >>> aggregate("NLL", [50.0, 25.0])  # NLLs 2 and 4: 100 / 3
        33.333333333333336
    """
    if not values:
        return None
    if paper_metric == "NLL":
        return 100.0 / (sum(100.0 / max(v, 1e-9) for v in values) / len(values))
    scale = 100.0 if paper_metric in ("ACC%", "SBERT") else 1.0
    return scale * sum(values) / len(values)


@dataclass(frozen=True)
class TableCell:
    """One cell of a paper-layout table.

    Attributes:
        table: ``table2``, ``table4`` or ``table5``.
        dataset: The dataset's name on a per-dataset table, else ``""``.
        model: The model (system).
        source: ``ours`` or ``paper``.
        column: The column header.
        value: The cell, or None when empty.
        scored: ``"k/n"`` where only k of the n responses asked for were scored (a metric could not score some,
            or generations failed), else None.
        title: The table's title (it names the datasets of a run over one; ``dialeval report`` shows it).
    """

    table: str
    dataset: str
    model: str
    source: str
    column: str
    value: float | None
    scored: str | None
    title: str = ""


@dataclass
class LayoutTable:
    """A table in the paper's layout.

    Attributes:
        name: ``table2``, ``table4`` or ``table5``.
        title: Caption.
        columns: Column headers after the row labels.
        rows: ``((dataset or "", model), source, values)``; source is ``ours`` or ``paper``.
        scored: Per row, per cell, ``"k/n"`` where only k of the cell's n responses asked for were scored
            (the judge's parse failures, failed generations), else None.
    """

    name: str
    title: str
    columns: list[str]
    rows: list[tuple[tuple[str, str], str, list[float | None]]]
    scored: list[list[str | None]]

    def to_markdown(self) -> str:
        """Render as Markdown (one decimal; ``-`` for an empty cell; ``(k/n)`` after a partly scored cell)."""
        per_dataset = SPECS[self.name][1]
        head = (["Dataset"] if per_dataset else []) + ["Model", "source", *self.columns]
        body = []
        for ((group, model), source, vals), notes in zip(self.rows, self.scored, strict=True):
            cells = [
                ("-" if v is None or math.isnan(v) else figure(v, 1)) + (f" ({k})" if k else "")
                for v, k in zip(vals, notes, strict=True)
            ]
            body.append(([group] if per_dataset else []) + [model, source, *cells])
        return "\n".join([f"### {self.title}", "", *markdown_table(head, body)]) + "\n"

    def cells(self) -> list[TableCell]:
        """Return one cell per (row, column): the lines of ``lmstyle_tables.jsonl``."""
        return [
            TableCell(table=self.name, dataset=g, model=m, source=src, column=col, value=v, scored=k, title=self.title)
            for ((g, m), src, vals), notes in zip(self.rows, self.scored, strict=True)
            for col, v, k in zip(self.columns, vals, notes, strict=True)
        ]

    def records(self) -> list[dict[str, Any]]:
        """Return :meth:`cells` as dicts."""
        return [asdict(c) for c in self.cells()]


def _index(scores: Iterable[Score]) -> dict[tuple[str, str, str, str], list[float | None]]:
    idx: dict[tuple[str, str, str, str], list[float | None]] = defaultdict(list)
    for s in scores:
        idx[(s.system, s.tags.get("dataset", ""), s.tags.get("style", ""), s.metric)].append(s.value)
    return idx


def build_table(
    name: str, scores: Sequence[Score], *, compare_paper: bool = False,
    asked: Mapping[tuple[str, str, str], int] | None = None, ran: Collection[str] | None = None,
) -> LayoutTable:  # fmt: skip
    """Build ``table2``, ``table4`` or ``table5`` for the models in ``scores`` (and in ``asked``).

    Args:
        name: ``table2``, ``table4`` or ``table5``.
        scores: The scores of the responses that came back.
        compare_paper: Add the paper's rows.
        asked: The responses asked for per (model, dataset, style). Where generations failed, fewer came back,
            and a cell of a metric that was run reads ``(k/n)``, k of the n asked for; it averaged the others
            without a word. None: the responses scored are all that were asked for.
        ran: The outputs of the metrics that were run (:attr:`~dialeval.lmstyle.score.ScoredRun.outputs`): their
            cells count the responses asked for. None: those in ``scores``, which has none of a run whose every
            generation failed.
    """
    published, per_dataset, columns = SPECS[name]
    idx = _index(scores)
    asked = asked or {}
    ran = set(ran) if ran is not None else {metric for *_, metric in idx}  # one not run (-m): no "(0/n)"
    models = sorted({s.system for s in scores} | {model for model, _, _ in asked})
    datasets = [d for d in DATASETS if any(s.tags.get("dataset") == d for s in scores) or any(k[1] == d for k in asked)]
    groups = [(DATASETS[d][0], (d,)) for d in datasets] if per_dataset else [("", tuple(datasets))]
    rows: list[tuple[tuple[str, str], str, list[float | None]]] = []
    scored: list[list[str | None]] = []
    paper = None
    if compare_paper:
        from dialeval.published import load_table

        paper = load_table(published)
    for label, ds in groups:
        for model in models:
            vals: list[float | None] = []
            notes: list[str | None] = []
            for _, styles, metric in columns:
                cell = [v for d in ds for st in styles for v in idx.get((model, d, st, METRIC_OF[metric]), [])]
                got = [v for v in cell if v is not None]
                wanted = sum(asked.get((model, d, st), 0) for d in ds for st in styles)
                n = max(len(cell), wanted if METRIC_OF[metric] in ran else 0)
                vals.append(aggregate(metric, got))
                notes.append(f"{len(got)}/{n}" if len(got) < n else None)
            rows.append(((label, model), "ours", vals))
            scored.append(notes)
        if paper is not None:
            for pmodel, pvals in paper.rows.get(label or "all", {}).items():
                rows.append(((label, pmodel), "paper", list(pvals)))
                scored.append([None] * len(pvals))
    present = [st for st in STYLES if any(s.tags.get("style") == st for s in scores) or any(k[2] == st for k in asked)]
    title = TITLES[name] if per_dataset else _table2_title(datasets, present, compare_paper)
    return LayoutTable(name, title, [c for c, _, _ in columns], rows, scored)


def _table2_title(datasets: Sequence[str], styles: Sequence[str], compare_paper: bool) -> str:
    """Return Table 2's title, naming the datasets and the styles it averages where they are not all of them.

    It said "both datasets" over one of them, and over some styles it averaged those without a word.

    Example:
        >>> _table2_title(["dd"], ["formal", "informal", "positive"], True)  # doctest: +NORMALIZE_WHITESPACE
        "Table 2: formality and sentiment tasks, Daily Dialog only, the Formal, Informal and Positive styles only
        (the paper's rows: both datasets, all four styles)"
    """
    title, paper = TITLES["table2"], []
    if 0 < len(datasets) < len(DATASETS):
        title = title.replace("both datasets", f"{', '.join(DATASETS[d][0] for d in datasets)} only")
        paper.append("both datasets")
    if 0 < len(styles) < len(STYLES):
        words = [STYLES[s] for s in styles]
        named = " and ".join([", ".join(words[:-1]), words[-1]] if len(words) > 1 else words)
        title += f", the {named} style{'s' if len(words) > 1 else ''} only"
        paper.append("all four styles")
    return title + (f" (the paper's rows: {', '.join(paper)})" if compare_paper and paper else "")


def system_summary(
    scores: Sequence[Score], n_responses: dict[str, int], empty: dict[str, int], cut: dict[str, int] | None = None
) -> list[dict[str, Any]]:
    """Return one row per model: every metric over all its responses, and what could not be scored.

    A metric's value averages the responses it scored, as a table cell does; its ``scored`` reads ``k/n`` over the
    ``n`` responses that came back (``responses``), where a cell's ``n`` counts those asked for (table.md's first
    line says how many generations failed). ``cut``: the responses ``max_tokens`` cut per model, a column after
    ``empty`` (None: no column).
    """
    out = []
    for model in sorted(n_responses):
        mine = [s for s in scores if s.system == model]
        row: dict[str, Any] = {"model": model, "responses": n_responses[model], "empty": empty.get(model, 0)}
        if cut is not None:
            row["cut"] = cut.get(model, 0)
        for paper_name, metric in METRIC_OF.items():
            vals = [s.value for s in mine if s.metric == metric]
            got = [v for v in vals if v is not None]
            row[paper_name] = aggregate(paper_name, got)
            row[f"{paper_name} scored"] = f"{len(got)}/{len(vals)}"
        strength = [s.value for s in mine if s.metric == "style_strength" and s.value is not None]
        row["style strength"] = sum(strength) / len(strength) if strength else None
        out.append(row)
    return out


def summary_markdown(rows: Sequence[dict[str, Any]]) -> str:
    """Render :func:`system_summary` rows as Markdown.

    Example:
        >>> print(summary_markdown([{"model": "m", "responses": 2, "ACC%": 50.0, "ACC% scored": "2/2"}]))
        | model | responses | ACC% | ACC% scored |
        |---|---|---|---|
        | m | 2 | 50.0 | 2/2 |
    """
    if not rows:
        return ""
    head = list(rows[0])
    def cell(value: Any) -> str:
        return "-" if value is None else figure(value, 1) if isinstance(value, float) else str(value)

    return "\n".join(markdown_table(head, [[cell(r.get(h)) for h in head] for r in rows]))
