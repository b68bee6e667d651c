"""``dialeval study report``: the reporting checklist of Mousavi et al. (2022, Sec. 3.4), filled from a study.

One structure (sections of key/value rows and tables) is rendered twice, as
Markdown and as a self-contained HTML page; every value in the HTML is escaped.
"""

from __future__ import annotations

import html
import statistics
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import sqlalchemy as sa

from dialeval import __version__
from dialeval.atomic import atomic_write
from dialeval.errors import InputError
from dialeval.human import store
from dialeval.human.analysis import (
    agreement_level,
    attention_results,
    item_batches,
    item_systems,
    majority_table,
    one_item_ci,
    progress,
    reason_table,
    study_ratings,
    system_means,
)
from dialeval.human.design import GROUND_TRUTH
from dialeval.human.protocol import TIE, Criterion, Protocol
from dialeval.meta.agreement import Estimate, Figure, agreement_figures, check_resamples, rated, reliability_matrix
from dialeval.meta.caveats import rough_resamples
from dialeval.schema import Rating
from dialeval.words import counted, figure, markdown_table, with_ci


@dataclass
class Section:
    """A titled block of ``(key, value)`` rows and tables (header row first)."""

    title: str
    rows: list[tuple[str, str]] = field(default_factory=list)
    tables: list[tuple[str, list[list[str]]]] = field(default_factory=list)


#: Marks a figure that lies outside its own percentile CI; :data:`OUTSIDE_NOTE` says why, under the tables.
OUTSIDE = "\N{DAGGER}"
OUTSIDE_NOTE = (
    "the figure lies outside its percentile CI: its resamples are biased. Mean pairwise Cohen's kappa does so "
    "where pairs of annotators share a handful of items (crowd designs: each pair's kappa is read off those few, "
    "and fewer still in a resample); Krippendorff's alpha, which pools the items, is the statistic for such designs"
)


def _fmt(e: Estimate) -> str:
    """Format a figure with its CI, marked with :data:`OUTSIDE` where the CI does not hold it.

    Example:
        >>> from dialeval.meta.agreement import Estimate
        >>> _fmt(Estimate(0.212, 0.193, 0.211, 10000, 1000))
        '0.212 [0.193, 0.211] \N{DAGGER}'
        >>> _fmt(Estimate(1.0, 0.9, 1 - 2e-16, 10, 1000))  # rounding, not bias
        '1.000 [0.900, 1.000]'
    """
    inside = e.low - 1e-9 <= e.value <= e.high + 1e-9  # not a kappa of 1 whose resamples summed to 1 - 2e-16
    mark = "" if inside else f" {OUTSIDE}"
    return with_ci(e.value, e.low, e.high) + mark


def _cell(f: Figure, n_boot: int) -> str:
    """Format a figure: with its CI, ``[no CI]`` where only the CI is undefined, else ``undefined``.

    Example:
        >>> from dialeval.meta.agreement import Figure
        >>> _cell(Figure(1.0, None, "no CI: ..."), 100), _cell(Figure(None, None, "alpha is undefined ..."), 100)
        ('1.000 [no CI]', 'undefined')
    """
    if f.value is None:
        return "undefined"
    if f.ci is None:
        return with_ci(f.value, None, None, no_ci="no CI")  # it dropped the figure, defined as it was
    return _fmt(Estimate(f.value, *f.ci, 0, n_boot))


_STATS = {"fleiss_kappa": "Fleiss' kappa", "cohen_kappa_mean": "mean Cohen's kappa"}


def _agreement_rows(
    groups: dict[tuple[Any, ...], list[Rating]], protocol: Protocol, n_boot: int, seed: int, strong: bool = False
) -> tuple[list[list[str]], list[list[str]]]:
    """Return the table's rows, and ``[row, statistic, why]`` for each figure undefined or without a CI."""
    out, why = [], []
    for key, rs in sorted(groups.items(), key=lambda kv: (*kv[0][:-1], protocol.asked(kv[0][-1]))):  # 2 before 10
        level = agreement_level(protocol, key[-1])
        rel = reliability_matrix(rs, dont_know="drop_item" if strong else "missing")
        n_items, stats = agreement_figures(rel.matrix, level, n_boot=n_boot, seed=seed)  # type: ignore[arg-type]
        stats = {k: one_item_ci(f, rated(rel.matrix).shape[1] if k == "fleiss_kappa" else n_items)
                 for k, f in stats.items()}  # Fleiss' kappa resamples every item with a vote  # fmt: skip
        # it showed "items 0" and "undefined" wherever alpha's CI was undefined on half of the resamples
        out.append([*map(str, key), str(n_items), *(_cell(stats[k], n_boot) if k in stats else "-"
                                                    for k in (f"krippendorff_alpha_{level}", *_STATS))])  # fmt: skip
        why += [[" ".join(map(str, key)), _STATS.get(k, "alpha"), f.why] for k, f in stats.items() if f.why]
    return out, why


@dataclass
class StudyData:
    """What the report reads from the study database."""

    protocol: Protocol
    config: dict[str, Any]
    ratings: list[Rating]
    systems: dict[str, str]
    batches: dict[str, int]
    people: list[dict[str, Any]]
    attention: dict[str, tuple[int, int]]
    verdicts: dict[str, tuple[float, str]]  # worker -> (threshold, reason) of their qualification decision
    counts: dict[str, int]  # items per kind: main, qualification, attention
    # unit -> the system whose response is its reference (shown once, as that system's)
    reference_as: dict[str, str] = field(default_factory=dict)


def read_study(url: str) -> StudyData:
    """Read everything the report needs from the study database at ``url``."""
    engine = store.connect(url)
    try:
        with engine.connect() as conn:
            protocol = Protocol.model_validate(store.get_meta(conn, "protocol"))
            per_kind = sa.select(store.items.c.kind, sa.func.count()).group_by(store.items.c.kind)
            kinds: dict[str, int] = {k: int(n) for k, n in conn.execute(per_kind).all()}
            a = store.assignments.c  # the attention units shown: fewer than asked where checks ran out
            shown = conn.execute(sa.select(sa.func.count()).where(a.kind == "attention")).scalar_one()
            verdicts = {}
            if sa.inspect(conn).has_table(store.verdicts.name):  # absent in studies made before it existed
                verdicts = {v.annotator: (v.threshold, v.reason) for v in conn.execute(sa.select(store.verdicts))}
            return StudyData(
                protocol=protocol,
                config=store.get_meta(conn, "config"),
                ratings=list(study_ratings(conn, protocol)),
                systems=item_systems(conn),
                batches=item_batches(conn),
                people=progress(conn, protocol),
                attention=attention_results(conn),
                verdicts=verdicts,
                counts={**{k: kinds.get(k, 0) for k in ("main", "qualification", "attention")},
                        "attention_shown": int(shown)},
                reference_as=dict(store.get_meta(conn, "reference_as", default={})),  # absent before it was kept
            )
    finally:
        engine.dispose()


def build_report(url: str, *, n_boot: int = 1000, seed: int = 0) -> tuple[str, list[Section]]:
    """Collect the checklist sections from the study database at ``url``.

    Raises:
        InputError: ``n_boot`` below 1 (checked before the database is read, answers or not).
    """
    check_resamples(n_boot)
    d = read_study(url)
    title = f"Human evaluation report: {d.protocol.name} v{d.protocol.version}"
    return title, [
        _task_section(d.protocol, sum(s == GROUND_TRUTH for s in d.systems.values()), d.reference_as),
        _recruitment_section(d),
        _execution_section(d),
        _agreement_section(d, n_boot, seed),
        _results_section(d),
    ]


def _ground_truth(protocol: Protocol, n: int, reference_as: dict[str, str]) -> str:
    """Say whether the study showed a reference as a candidate: what it did, not only what the protocol asks.

    Example:
        >>> from types import SimpleNamespace
        >>> p = SimpleNamespace(include_ground_truth=True)  # a protocol that asks for it
        >>> _ground_truth(p, 0, {})
        'no: the protocol includes it, but no candidate had a reference'
        >>> _ground_truth(p, 12, {})
        'yes (12 contexts)'
        >>> _ground_truth(p, 1, {"c2": "Human", "c3": "Human"})
        "yes (3 contexts; in 2 of them a system's response is the reference, rated once, as that system's: Human)"
    """
    if n or reference_as:
        said = ""
        if reference_as:
            systems = ", ".join(sorted(set(reference_as.values())))
            said = (f"; in {len(reference_as)} of them a system's response is the reference, rated once, as that "
                    f"system's: {systems}")  # fmt: skip
        return f"yes ({counted(n + len(reference_as), 'context')}{said})"
    return "no: the protocol includes it, but no candidate had a reference" if protocol.include_ground_truth else "no"


def _task_section(protocol: Protocol, n_ground_truth: int, reference_as: dict[str, str]) -> Section:
    task = Section("Task")
    task.rows += [
        ("Evaluation granularity", f"{protocol.level}-level, {protocol.mode}"),
        ("Order", "all candidates of a context judged on one criterion before the next criterion"),
        ("Ground-truth response included as a candidate", _ground_truth(protocol, n_ground_truth, reference_as)),
    ]
    dims = [["dimension", "definition", "question", "answer format", "explanation options"]]
    for c in protocol.criteria:
        a = c.answer
        fmt = {"choice": " / ".join(o.label for o in a.options), "scale": f"levels {a.scale}"}.get(
            a.type, f"slider {a.scale}"
        )
        expl = "; ".join(f"{e.label} [{e.code}] (for {', '.join(e.when)})" for e in c.explanations)
        if c.free_text:
            expl += ("; " if expl else "") + 'free text (required for "I don\'t know")'
        dims.append([c.name, c.definition, c.question, fmt, expl or "-"])
    task.tables.append(("Quality dimensions", dims))
    return task


def qualification_rule(threshold: float | None) -> str:
    """Describe the qualification rule of a study in one sentence.

    Example:
        >>> qualification_rule(0.21)
        "pass if Fleiss' kappa with the reference annotators > 0.21 (a fixed threshold)"
    """
    if threshold is not None:
        return f"pass if Fleiss' kappa with the reference annotators > {threshold} (a fixed threshold)"
    return ("pass if adding the worker does not lower the reference annotators' own Fleiss' kappa; never "
            "when the worker gives one answer everywhere while the references' answers vary")  # fmt: skip


def _recruitment_section(d: StudyData) -> Section:
    recruit = Section("Recruitment")
    n_qual = d.counts["qualification"]
    rule = qualification_rule(d.config.get("qualification_threshold"))
    qual = f"{n_qual} qualification items judged against reference annotators; {rule}" if n_qual else "none"
    n_qualified = sum(1 for p in d.people if p["qualified"])
    checks = f"{counted(d.counts['attention'], 'item')}, {d.config['attention_per_batch']} per annotator and batch"
    if d.counts["attention"]:  # it read as if every batch had them; an annotator meets each check once
        checks += f" while unseen ones last; {counted(d.counts['attention_shown'], 'attention unit')} shown in all"
    recruit.rows += [
        ("Sampling criteria", "set by the researcher outside dialeval (not recorded)"),
        ("Qualification task", qual),
        ("Attention checks", checks),
        (
            "Attention checks passed",
            "; ".join(f"{a}: {ok}/{n}" for a, (ok, n) in sorted(d.attention.items())) or "none answered",
        ),
        ("Workers recruited", str(len(d.people))),
        ("Workers qualified", f"{n_qualified}" + ("" if n_qual else " (no qualification task)")),
    ]
    rows = [["worker", "verdict", "kappa", "threshold", "why"]]
    for p in d.people:
        if p["annotator"] in d.verdicts:
            threshold, why = d.verdicts[p["annotator"]]
            verdict = "qualified" if p["qualified"] else "not qualified"
            rows.append([p["annotator"], verdict, figure(p["qualification_kappa"]), figure(threshold), why])
    if len(rows) > 1:
        recruit.tables.append(("Qualification decisions", rows))
    return recruit


def _execution_section(d: StudyData) -> Section:
    votes = Counter((r.item_id, r.dimension) for r in d.ratings)
    per_sample = list(votes.values())
    secs = [p["seconds"] for p in d.people if p["answered"]]
    loads = [p["due"] for p in d.people]
    stats = Section("Execution statistics")
    stats.rows += [
        ("Annotators who participated", str(sum(1 for p in d.people if p["answered"]))),
        ("Samples in the study", f"{d.counts['main']} ({len({r.item_id for r in d.ratings})} with at least one vote)"),
        (
            "Votes per sample",
            f"design {d.config['per_item']}; observed mean {statistics.mean(per_sample):.2f}, "
            f"min {min(per_sample)}, max {max(per_sample)}"
            if per_sample
            else "no votes yet",
        ),
        ("Workload per annotator", _workload(loads)),
        (
            "Time spent",
            f"total {sum(secs) / 3600:.2f} h; median per annotator {statistics.median(secs) / 60:.1f} min"
            if secs
            else "-",
        ),
        ("Payment", d.config.get("payment") or "not entered"),
        ("Demographics of the annotators", "not collected by dialeval"),
        ("Platform", f"dialeval {__version__} annotation app"),
    ]
    return stats


def _workload(loads: list[int]) -> str:
    """Say the judgements assigned per annotator: a range, or one number when every annotator has the same.

    Example:
        >>> _workload([112, 112]), _workload([1]), _workload([4, 8]), _workload([])
        ('112 judgements assigned to each', '1 judgement assigned to each', '4-8 judgements assigned', '-')
    """
    if not loads:
        return "-"
    if min(loads) == max(loads):
        return f"{counted(loads[0], 'judgement')} assigned to each"
    return f"{min(loads)}-{max(loads)} judgements assigned"


def _agreement_section(d: StudyData, n_boot: int, seed: int) -> Section:
    agree = Section("Inter-annotator agreement")
    agree.rows.append(
        (
            "Metrics",
            "Krippendorff's alpha (nominal for labels, ordinal for rating scales, interval for sliders), "
            "Fleiss' kappa (Gwet's generalisation where items have different numbers of votes) and mean pairwise "
            f"Cohen's kappa for labels; 95% percentile bootstrap over items ({n_boot} resamples, seed {seed})"
            + "".join(f"; {w}" for w in rough_resamples(n_boot)),
        )
    )
    if not d.ratings:
        agree.rows.append(("Agreement", "not computed: no votes yet"))
        return agree
    head = ["items", "alpha", "Fleiss' kappa", "mean Cohen's kappa"]
    by_crit: dict[tuple[str, ...], list[Rating]] = defaultdict(list)
    by_batch: dict[tuple[Any, ...], list[Rating]] = defaultdict(list)
    by_system: dict[tuple[str, ...], list[Rating]] = defaultdict(list)
    for r in d.ratings:
        by_crit[(r.dimension,)].append(r)
        by_batch[(d.batches[r.item_id], r.dimension)].append(r)
        by_system[(d.systems[r.item_id], r.dimension)].append(r)
    p = d.protocol
    undefined = [["table", "row", "statistic", "why"]]
    tables: list[tuple[str, list[str], dict[tuple[Any, ...], list[Rating]], bool]] = [
        ("Per criterion", ["criterion"], by_crit, False),
        ('Per criterion, strong judgements only (no annotator said "I don\'t know")', ["criterion"], by_crit, True),
        ("Per batch", ["batch", "criterion"], by_batch, False),
        ("Per model", ["model", "criterion"], by_system, False),
    ]
    for caption, keys, groups, strong in tables:
        rows, why = _agreement_rows(groups, p, n_boot, seed, strong=strong)
        agree.tables.append((caption, [[*keys, *head], *rows]))
        undefined += [[caption.split(" (")[0], *w] for w in why]
    if len(undefined) > 1:
        agree.tables.append(("Figures undefined, or without a CI", undefined))
    if any(c.endswith(OUTSIDE) for _, table in agree.tables for row in table for c in row):
        agree.rows.append((OUTSIDE, OUTSIDE_NOTE))
    return agree


def _results_section(d: StudyData) -> Section:
    results = Section("Results")
    if not d.ratings:
        results.rows.append(("Votes", "none yet"))
        return results
    kind = {c.name: c.answer.type for c in d.protocol.criteria}
    unsure = {c.name: c.answer.dont_know_key for c in d.protocol.criteria}
    ties = {c.name: c.answer.tie_key for c in d.protocol.criteria}
    table3 = majority_table([r for r in d.ratings if kind[r.dimension] != "slider"], d.systems, unsure, ties)
    rows = [["criterion", "model", "majority answer: % of samples"]]
    for criterion in (c for c in d.protocol.criteria if c.name in table3):
        for sys, pct in sorted(table3[criterion.name].items()):
            rows.append([criterion.name, sys, majority_cell(criterion, pct)])
    if len(rows) > 1:
        results.tables.append(("Majority vote per model (ties reported as 'tie'; cf. the paper's Table 3)", rows))
    means = system_means([r for r in d.ratings if kind[r.dimension] != "choice"], d.systems)
    rows = [["criterion", "model", "samples", "mean of the per-sample means", "sd"]]
    for (crit, sys), (n, mean, sd) in sorted(means.items(), key=lambda kv: (d.protocol.asked(kv[0][0]), kv[0][1])):
        rows.append([crit, sys, str(n), figure(mean, 2), figure(sd, 2)])  # a mean of -0.001 read "-0.00"
    if len(rows) > 1:
        results.tables.append(("Mean score per model (each sample's votes averaged first)", rows))
    if not any(c.explanations for c in d.protocol.criteria):
        return results  # nothing to choose: no Figure 1
    fig1 = reason_table(d.ratings, d.systems)
    rows = [["criterion", "model", "sub-dimension", "% of votes"]]
    for crit, by_sys in sorted(fig1.items(), key=lambda kv: d.protocol.asked(kv[0])):
        for sys, pct in sorted(by_sys.items()):
            rows += [[crit, sys, code, f"{v:.1f}"] for code, v in pct.items()]
    caption = "Explanation sub-dimensions chosen, over all votes (cf. the paper's Figure 1)"
    if len(rows) > 1:
        results.tables.append((caption, rows))
    else:
        results.rows.append((caption, "none chosen yet"))
    return results


def majority_cell(criterion: Criterion, percents: dict[str, float]) -> str:
    """Return a model's share of each majority answer, labelled and in the protocol's order, ties last.

    A choice's answers go by their labels in the options' order; a scale's levels go from low to high.

    Example:
        >>> from dialeval.human.protocol import load_protocol
        >>> crit = load_protocol("mousavi-turn").criterion("Listening")
        >>> majority_cell(crit, {"dont_know": 10.0, "negative": 20.0, "positive": 50.0, "tie": 20.0})
        "Yes 50.0%, No 20.0%, I don't know 10.0%, tie 20.0%"
        >>> majority_cell(load_protocol("comperdial").criterion("Overall"), {"5.0": 25.0, "4.0": 50.0, "tie": 25.0})
        '4 50.0%, 5 25.0%, tie 25.0%'
    """
    answer = criterion.answer
    options = [(answer.dont_know_key if o.dont_know else o.value, o.label) for o in answer.options] or [
        (str(float(level)), str(level)) for level in sorted(answer.levels)]  # a scale's votes are numbers: "4.0"
    place = {value: i for i, (value, _) in enumerate(options)}
    labels = {**dict(options), answer.tie_key: TIE}
    return ", ".join(f"{labels.get(a, a)} {percents[a]:.1f}%"
                     for a in sorted(percents, key=lambda a: (a == answer.tie_key, place.get(a, len(place)), a)))


def to_markdown(title: str, sections: list[Section]) -> str:
    """Render the report as Markdown."""
    out = [f"# {title}", ""]
    for s in sections:
        out += [f"## {s.title}", ""]
        out += [f"- **{k}**: {v}" for k, v in s.rows]
        for caption, table in s.tables:
            out += ["", f"**{caption}**", "", *markdown_table(table[0], table[1:])]
        out.append("")
    return "\n".join(out)


def to_html(title: str, sections: list[Section]) -> str:
    """Render the report as a self-contained HTML page (every value escaped)."""
    e = html.escape
    parts = [
        "<!doctype html><html lang='en'><head><meta charset='utf-8'>",
        f"<title>{e(title)}</title><style>body{{font-family:system-ui,sans-serif;max-width:70rem;margin:auto}}"
        "table{border-collapse:collapse;margin:.5rem 0}td,th{border:1px solid #bbb;padding:.2rem .5rem;"
        "text-align:left;vertical-align:top}</style></head><body>",
        f"<h1>{e(title)}</h1>",
    ]
    for s in sections:
        parts.append(f"<h2>{e(s.title)}</h2><dl>")
        parts += [f"<dt><b>{e(k)}</b></dt><dd>{e(v)}</dd>" for k, v in s.rows]
        parts.append("</dl>")
        for caption, table in s.tables:
            parts.append(f"<table><caption>{e(caption)}</caption><tr>")
            parts += [f"<th>{e(h)}</th>" for h in table[0]]
            parts.append("</tr>")
            parts += ["<tr>" + "".join(f"<td>{e(c)}</td>" for c in r) + "</tr>" for r in table[1:]]
            parts.append("</table>")
    parts.append("</body></html>")
    return "\n".join(parts)


def report_paths(output: str | Path) -> tuple[Path, Path]:
    """Return the Markdown and HTML files a report named ``output`` is written to (its suffix replaced).

    Example:
        >>> report_paths("out/study"), report_paths("out/study.txt")[1]
        ((PosixPath('out/study.md'), PosixPath('out/study.html')), PosixPath('out/study.html'))
    """
    base = Path(output)
    if base.name in ("", ".", ".."):  # pathlib's with_suffix: a ValueError traceback
        raise InputError("give the report's file name, without suffix (e.g. out/report)", path=output, field="--output")
    return base.with_suffix(".md"), base.with_suffix(".html")


def write_report(url: str, output: str | Path, *, n_boot: int = 1000, seed: int = 0) -> tuple[Path, Path]:
    """Write ``output.md`` and ``output.html`` atomically (:func:`report_paths`); return both paths."""
    md, page = report_paths(output)
    title, sections = build_report(url, n_boot=n_boot, seed=seed)
    with atomic_write(md) as handle:
        handle.write(to_markdown(title, sections))
    with atomic_write(page) as handle:
        handle.write(to_html(title, sections))
    return md, page
