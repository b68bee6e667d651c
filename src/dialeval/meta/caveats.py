"""What a table cannot show in its cells: figures resting on too few points or resamples, and why one is n/a.

``meta`` and ``benchmark`` print these lines under their tables and into ``table.md``; ``report`` under the
same table. ``stress``, ``train`` and the ``study`` commands print :func:`rough_resamples`; ``train`` also each
result's rough CIs (:func:`rough_ci_reason`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


def table_warnings(rows: Sequence[Any]) -> list[str]:
    """Return one warning per group and level whose figures rest on too few points.

    Too few: fewer than :data:`~dialeval.meta.levels.MIN_POINTS`. The points are the systems at system level,
    the dialogues at dialogue level and the items at turn level.
    The figures are kept as computed; the warning goes under the table, followed by the items the system (dialogue)
    level left out for naming no system (dialogue) (:func:`_left_out`) and the reasons of the figures that are n/a
    or have no CI (:func:`_na_reasons`).

    Example:
        >>> from types import SimpleNamespace as R
        >>> [w] = table_warnings([R(level="system", n_groups=2, n_items=9, value=1.0, group="all", metric="m")])
        >>> w[:60]
        'warning: the system-level correlations are over 2 systems on'
        >>> table_warnings([R(level="system", n_groups=3, n_items=9, value=1.0, group="all", metric="m")])
        []
    """
    from dialeval.meta.levels import MIN_POINTS  # levels loads pandas: the CLI imports this module to start

    few: dict[tuple[str, str], int] = {}
    for r in rows:
        points = {"system": r.n_groups, "dialogue": r.n_groups, "turn": r.n_items}.get(r.level)
        if points is not None and points < MIN_POINTS and r.value is not None and r.metric != "human":
            few.setdefault((str(getattr(r, "group", "all")), r.level), points)
    out = []
    for (group, level), n in few.items():
        where = "" if group == "all" else f" of {group}"
        unit = {"system": "systems", "dialogue": "dialogues", "turn": "items"}[level]
        out.append(
            f"warning: the {level}-level correlations{where} are over {n} {unit} only: with fewer than "
            f"{MIN_POINTS} {unit} a correlation is +1, -1 or undefined, whatever the metric"
        )
    return [*out, *_unnamed_groups(rows), *_left_out(rows), *_rough_cis(rows), *_na_reasons(rows)]


#: The group of a breakdown by system (by dialogue) that holds the items naming none, and what the note says of it.
UNNAMED_GROUPS = {
    "no system": ("system", 'the items naming no system (empty or "unknown")'),
    "no dialogue_id": ("dialogue", "the items whose scores name no dialogue"),
}


def _unnamed_groups(rows: Sequence[Any]) -> list[str]:
    """Return one line per group of a breakdown that holds the items naming no system (or no dialogue).

    Example:
        >>> from types import SimpleNamespace as R
        >>> _unnamed_groups([R(group="all"), R(group="no system"), R(group="no system")])
        ['note: the group "no system" holds the items naming no system (empty or "unknown"), which the system level \
leaves out']
    """
    groups = dict.fromkeys(str(getattr(r, "group", "all")) for r in rows)
    return [f'note: the group "{group}" holds {who}, which the {level} level leaves out'
            for group, (level, who) in UNNAMED_GROUPS.items() if group in groups]  # fmt: skip


def _left_out(rows: Sequence[Any]) -> list[str]:
    """Return one line per group and level that left out items naming no system (or no dialogue).

    The rows' notes say how many (:data:`~dialeval.meta.levels.LEFT_OUT`).

    Example:
        >>> from types import SimpleNamespace as R
        >>> why, by = "left out of the system level: ", "left out of the dialogue level: "
        >>> _left_out([R(level="system", group="all", note=f"{why}2 items; {why}1 dialogue of 2 systems"),
        ...            R(level="dialogue", group="all", note=f"{by}1 item naming no dialogue"),
        ...            R(level="turn", group="all", note="")])  # doctest: +NORMALIZE_WHITESPACE
        ['note: the system level left out 2 items and 1 dialogue of 2 systems; the other levels use them',
         'note: the dialogue level left out 1 item naming no dialogue; the other levels use them']
    """
    from dialeval.meta.levels import LEFT_OUT

    out: dict[tuple[str, str], str] = {}
    for r in rows:
        note, start = str(getattr(r, "note", "") or ""), LEFT_OUT.format(r.level)
        parts = [n.removeprefix(start) for n in note.split("; ") if n.startswith(start)]
        group = str(getattr(r, "group", "all"))
        if parts and UNNAMED_GROUPS.get(group, ("",))[0] != r.level:  # :func:`_unnamed_groups` says it
            where = "" if group == "all" else f" of {group}"
            out.setdefault((group, r.level), f"note: the {r.level} level{where} left out {' and '.join(parts)}; the "
                                             "other levels use them")  # fmt: skip
    return list(out.values())


def rough_resamples(n_boot: int) -> list[str]:
    """Return the warning line for a command whose CIs all rest on ``n_boot`` resamples, when they are too few.

    For the commands whose resamples are the same for every CI (``stress``, ``study report``, ``train``):
    ``meta`` and ``benchmark`` count each figure's defined resamples (:func:`table_warnings`).

    Example:
        >>> rough_resamples(10)
        ['warning: the CIs are rough: 10 resamples only, too few for 95% (40 at least)']
        >>> rough_resamples(1000)
        []
    """
    from dialeval.meta.correlate import rough_reason

    return [f"warning: the CIs are rough: {why}"] if (why := rough_reason(n_boot)) else []


def _rough_cis(rows: Sequence[Any]) -> list[str]:
    """Return one line per reason the CIs of some figures rest on too few resamples (their notes say which).

    Example:
        >>> from types import SimpleNamespace as R
        >>> _rough_cis([R(note="rough CI: 1 resample only, too few for 95% (40 at least)", ci_low=0.1),
        ...             R(note="", ci_low=0.2), R(note="undefined", ci_low=None)])
        ['warning: 1 of 2 CIs is rough: 1 resample only, too few for 95% (40 at least)']
    """
    from dialeval.words import some_of

    reasons = [why for r in rows if (why := rough_ci_reason(str(getattr(r, "note", "") or "")))]
    with_ci = sum(getattr(r, "ci_low", None) is not None for r in rows)
    return [f"warning: {some_of(reasons.count(why), with_ci, 'CI', ('is', 'are'))} rough: {why}"
            for why in dict.fromkeys(reasons)]  # fmt: skip


def rough_ci_reason(note: str) -> str:
    """Return why a row's CI is rough, from its ``note`` (the part after "rough CI: "), or "" when it is not.

    ``meta`` and ``benchmark`` say it under their tables (:func:`_rough_cis`), ``train`` under its results.

    Example:
        >>> rough_ci_reason("rough CI: 3 contexts have 10 distinct resamples only, too few for 95% (40 at least)")
        '3 contexts have 10 distinct resamples only, too few for 95% (40 at least)'
        >>> rough_ci_reason("2 scored items without rating")
        ''
    """
    from dialeval.meta.correlate import ROUGH_CI

    return next((n.removeprefix(ROUGH_CI) for n in note.split("; ") if n.startswith(ROUGH_CI)), "")


def no_ci_reason(note: str) -> str:
    """Return why a row's figure has no CI, from its ``note`` (the part after "no CI: "), or "" when it has one.

    Example:
        >>> no_ci_reason("2 scored items without rating; no CI: the items come from one context")
        'the items come from one context'
    """
    return next((n.removeprefix("no CI: ") for n in note.split("; ") if n.startswith("no CI: ")), "")


def _na_reasons(rows: Sequence[Any]) -> list[str]:
    """Return one line per reason a figure is n/a, naming the metrics and levels (the table shows only "n/a").

    And one per reason a figure has no CI (its note says "no CI: ..."): the table shows the figure alone.

    Example:
        >>> from types import SimpleNamespace as R
        >>> _na_reasons([R(level="turn", value=None, metric="k", note="undefined: constant input; 3 rated items"),
        ...              R(level="turn", value=None, metric="human", note="undefined: no item rated twice"),
        ...              R(level="turn", value=0.5, metric="m", note="")])
        ['n/a: k (turn): undefined: constant input', 'n/a: human (turn): undefined: no item rated twice']
        >>> _na_reasons([R(level="turn", value=0.5, metric="m", note="no CI: the items come from one context")])
        ['no CI: m (turn): the items come from one context']
    """
    by_reason: dict[tuple[str, str], list[str]] = {}
    for r in rows:
        note = str(getattr(r, "note", "") or "")
        if r.value is None:
            label, reason = "n/a", note.split("; ")[0] or "undefined"
        elif reason := no_ci_reason(note):  # a figure without its interval
            label = "no CI"
        else:
            continue
        group = str(getattr(r, "group", "all"))
        where = f"{r.metric} ({r.level}{'' if group == 'all' else ', ' + group})"
        if where not in by_reason.setdefault((label, reason), []):
            by_reason[(label, reason)].append(where)
    return [f"{label}: {', '.join(where)}: {reason}" for (label, reason), where in by_reason.items()]
