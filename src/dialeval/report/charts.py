r"""The report's figures, drawn with matplotlib (Agg) in grey-scale: markers and hatches, not hues, tell series apart.

Each function returns PNG bytes. matplotlib is imported inside the functions.

Example:
    >>> png = heatmap([{"metric": "bleu", "perturbation": "shuffle", "value": -0.4}])
    >>> png[:4] == b"\x89PNG"
    True
"""

from __future__ import annotations

import io
import math
from collections import defaultdict
from collections.abc import Sequence
from typing import Any, Literal

from dialeval.schema import Rating, Score
from dialeval.words import figure, human_rating

MARKERS = ("o", "s", "^", "D", "v")
HATCHES = ("", "///", "...", "xxx", "\\\\\\", "---")


def unit(metric: str) -> str:
    """Return an output's unit for an axis label, as its metric class names it ("score" when unknown).

    Example:
        >>> unit("sacrebleu"), unit("judge:lmstyle-appropriateness"), unit("no-such-output")
        ('BLEU, 0-100', '0-100', 'score')
    """
    from dialeval.metrics import load_builtin_metrics
    from dialeval.metrics.base import metric_by_output

    load_builtin_metrics()
    cls = metric_by_output().get(metric)
    return cls.unit(metric) if cls else "score"


def _plt() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plt.rcParams.update({"font.size": 9, "axes.grid": True, "grid.color": "#dddddd", "axes.axisbelow": True})
    return plt


def _png(fig: Any) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110, bbox_inches="tight")
    _plt().close(fig)
    return buf.getvalue()


def _gap(high: Any, low: Any) -> float:
    """Length of a CI arm (0 when an end is missing)."""
    return 0.0 if high is None or low is None else max(0.0, float(high) - float(low))


def has_ci(rows: Sequence[dict[str, Any]]) -> bool:
    """Return whether any correlation (or ranking) row has a confidence interval (none has one with ``--boot 0``)."""
    return any(r.get("ci_low") is not None for r in rows)


def correlation_chart(rows: Sequence[dict[str, Any]], dimension: str) -> bytes:
    """Points with 95% CI bars per metric, one panel per level, one marker per method.

    A panel none of whose points has a CI (``--boot 0``) says "no CI" in its title.
    """
    plt = _plt()
    rows = [r for r in rows if r.get("group", "all") == "all" and r.get("value") is not None]
    levels = list(dict.fromkeys(str(r["level"]) for r in rows))
    methods = list(dict.fromkeys(str(r["method"]) for r in rows))
    n_metrics = len({r["metric"] for r in rows})
    fig, axes = plt.subplots(1, max(1, len(levels)), figsize=(4.2 * max(1, len(levels)), 1.2 + 0.28 * n_metrics),
                             squeeze=False, layout="constrained")  # fmt: skip
    for ax, level in zip(axes[0], levels, strict=False):
        mine = [r for r in rows if r["level"] == level]
        first = [r for r in mine if r["method"] == methods[0]] or mine
        order = [r["metric"] for r in sorted(first, key=lambda r: float(r["value"]))]
        pos = {m: i for i, m in enumerate(order)}
        for k, method in enumerate(methods):
            pts = [r for r in mine if r["method"] == method and r["metric"] in pos]
            y = [pos[r["metric"]] + (k - (len(methods) - 1) / 2) * 0.22 for r in pts]
            x = [float(r["value"]) for r in pts]
            lo = [_gap(v, r.get("ci_low")) for v, r in zip(x, pts, strict=True)]
            hi = [_gap(r.get("ci_high"), v) for v, r in zip(x, pts, strict=True)]
            grey = str(0.55 * k / max(1, len(methods) - 1))
            ax.errorbar(x, y, xerr=[lo, hi], fmt=MARKERS[k % len(MARKERS)], color=grey, ecolor=grey,
                        capsize=2, markersize=4, label=method)  # fmt: skip
        ax.axvline(0, color="black", linewidth=0.8)
        ax.set_yticks(range(len(order)), order)
        ax.set_xlabel(f"correlation with {human_rating(dimension)} (coefficient, -1 to 1)")
        ax.set_title(f"{level} level ({'95% bootstrap CI' if has_ci(mine) else 'no CI'})")  # --boot 0: no bar
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncol=len(methods))
    return _png(fig)


def scatter_chart(
    points: dict[str, tuple[list[float], list[float], str]], dimension: str, per: str = "item"
) -> bytes:
    """One panel per metric: metric score (x) against the human mean (y) per item (or per dialogue).

    Args:
        points: ``{metric: (metric values, human means, panel title)}``.
        dimension: The human dimension (y label).
        per: What one point is: ``item``, or ``dialogue`` (the metric's mean over the dialogue's items).
    """
    plt = _plt()
    fig, axes = plt.subplots(1, len(points), figsize=(4.4 * len(points), 3.6), squeeze=False)
    for k, (ax, (metric, (x, y, title))) in enumerate(zip(axes[0], points.items(), strict=True)):
        ax.scatter(x, y, s=12, facecolors="none" if k else "black", edgecolors="black", linewidths=0.7)
        ax.set_xlabel(f"{metric} ({unit(metric)}{', mean per dialogue' if per == 'dialogue' else ''})")
        ax.set_ylabel(f"{human_rating(dimension)} (mean rating per {per})")
        ax.set_title(title)
    return _png(fig)


def distribution_chart(scores: Sequence[Score], metrics: Sequence[str], subset_of: Any) -> bytes:
    """Box plots of each metric's item scores per subset (``subset_of(score) -> label``)."""
    plt = _plt()
    cols = min(3, len(metrics))
    rows_n = math.ceil(len(metrics) / cols)
    fig, axes = plt.subplots(rows_n, cols, figsize=(4.6 * cols, 3.3 * rows_n), squeeze=False)
    for ax in axes.flat[len(metrics):]:
        ax.set_visible(False)
    for ax, metric in zip(axes.flat, metrics, strict=False):
        groups: dict[str, list[float]] = defaultdict(list)
        for s in scores:
            if s.metric == metric and s.value is not None:
                groups[subset_of(s)].append(s.value)
        labels = sorted(groups)
        ax.set_title(metric)
        if not labels:
            ax.text(0.5, 0.5, "no item could be scored", ha="center", va="center", transform=ax.transAxes)
            ax.set_ylabel(f"{metric} ({unit(metric)})")
            continue
        ticks = [f"{g}\n(n={len(groups[g])})" for g in labels]
        if all(v in (0.0, 1.0) for g in labels for v in groups[g]):  # a 0/1 outcome: show the share of ones
            share = [100.0 * sum(groups[g]) / len(groups[g]) for g in labels]
            bars = ax.bar(range(1, len(labels) + 1), share, color="0.75", edgecolor="black")
            for i, bar in enumerate(bars):
                bar.set_hatch(HATCHES[i % len(HATCHES)])
            ax.set_ylim(0, 100)
            ax.set_xticks(range(1, len(labels) + 1), ticks, fontsize=7, rotation=30 if len(labels) > 4 else 0)
            ax.set_ylabel(f"{metric} (% of items = 1)")
            continue
        box = ax.boxplot([groups[g] for g in labels], patch_artist=True, widths=0.6,
                         medianprops={"color": "black"}, flierprops={"marker": ".", "markersize": 3})  # fmt: skip
        for i, patch in enumerate(box["boxes"]):
            patch.set(facecolor=str(0.6 + 0.35 * (i % 2)), hatch=HATCHES[i % len(HATCHES)], edgecolor="black")
        ax.set_xticks(range(1, len(labels) + 1), ticks, fontsize=7, rotation=30 if len(labels) > 4 else 0)
        ax.set_ylabel(f"{metric} ({unit(metric)})")
    fig.tight_layout()
    return _png(fig)


def _mean(values: list[float] | None) -> float:
    return sum(values) / len(values) if values else math.nan


def stress_grid(rows: Sequence[dict[str, Any]]) -> tuple[list[str], list[str], list[list[float]]]:
    """Return the metrics, the perturbations (both in file order) and the metric x perturbation grid of the values.

    A cell is the mean of its rows' values, NaN where it has none: a perturbation that applied to no item (its
    value null) keeps its column, of NaN cells, which the heat map prints as n/a.

    Example:
        >>> stress_grid([{"metric": "m", "perturbation": "truncation", "value": None},
        ...              {"metric": "m", "perturbation": "shuffle", "value": 0.5}])
        (['m'], ['truncation', 'shuffle'], [[nan, 0.5]])
    """
    cells: dict[tuple[str, str], list[float]] = defaultdict(list)
    for r in rows:
        values = cells[(str(r["metric"]), str(r["perturbation"]))]
        if r.get("value") is not None:
            values.append(float(r["value"]))
    metrics = list(dict.fromkeys(m for m, _ in cells))  # as in the file: families stay together
    perts = list(dict.fromkeys(p for _, p in cells))
    return metrics, perts, [[_mean(cells.get((m, p))) for p in perts] for m in metrics]


def heatmap(rows: Sequence[dict[str, Any]]) -> bytes:
    """Metric x perturbation grid of the stress values (:func:`stress_grid`), numbers printed (n/a where none)."""
    plt = _plt()
    metrics, perts, grid = stress_grid(rows)
    fig, ax = plt.subplots(figsize=(1.2 + 0.9 * len(perts), 1.0 + 0.4 * len(metrics)))
    ax.grid(False)
    # one scale for every report, 0 to 1: scaled to its own values, 0.48 and 0.52 were white and black
    image = ax.imshow(grid, cmap="Greys", vmin=0.0, vmax=1.0, aspect="auto")
    for i, row in enumerate(grid):
        for j, v in enumerate(row):
            # figure: n/a for NaN, and a cell of -0.001 "0.00", not "-0.00" (read as a negative share)
            ax.text(j, i, figure(v, 2), ha="center", va="center", fontsize=7, color="white" if v > 0.5 else "black")
    ax.set_xticks(range(len(perts)), perts, rotation=35, ha="right")
    ax.set_yticks(range(len(metrics)), metrics)
    ax.set_xlabel("perturbation")
    ax.set_ylabel("metric")
    fig.colorbar(image, ax=ax, label="share of pairs where the original scores higher (0.5: not noticed)")
    return _png(fig)


def agreement_chart(ratings: Sequence[Rating], n_boot: int = 200) -> tuple[bytes, list[list[str]]]:
    """Krippendorff's alpha per dimension with its bootstrap CI, and error categories (reason codes) per dimension.

    Returns the PNG and the table rows ``[dimension, level, alpha, CI, items]``.
    """
    from dialeval.meta.agreement import agreement_report

    plt = _plt()
    dims = sorted({r.dimension for r in ratings})
    table: list[list[str]] = []
    est: list[tuple[str, float, float, float]] = []
    for d in dims:
        mine = [r for r in ratings if r.dimension == d]
        numeric = all(isinstance(r.value, (int, float)) for r in mine if r.value is not None)
        level: Literal["interval", "nominal"] = "interval" if numeric else "nominal"
        got = agreement_report(mine, level=level, n_boot=n_boot).get(f"krippendorff_alpha_{level}")
        if got is None:
            table.append([d, level, "n/a", "", str(len({r.item_id for r in mine}))])
            continue
        est.append((d, got.value, got.low, got.high))
        table.append([d, level, figure(got.value), f"[{figure(got.low)}, {figure(got.high)}]", str(got.n_items)])
    reasons: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for r in ratings:
        for code in r.reasons:
            reasons[r.dimension][code] += 1
    fig, axes = plt.subplots(1, 2, figsize=(10, 0.9 + 0.45 * max(len(dims), 3)), squeeze=False)
    ax = axes[0][0]
    for i, (_, v, lo, hi) in enumerate(est):
        ax.errorbar([v], [i], xerr=[[max(0.0, v - lo)], [max(0.0, hi - v)]], fmt="o", color="black", capsize=3)
    ax.set_yticks(range(len(est)), [e[0] for e in est])
    ax.axvline(0, color="black", linewidth=0.8)
    ax.set_xlabel("Krippendorff's alpha (95% bootstrap CI over items)")
    ax.set_title("inter-annotator agreement")
    ax = axes[0][1]
    codes = sorted({c for per in reasons.values() for c in per})
    for k, code in enumerate(codes):
        left = [sum(reasons[d][c] for c in codes[:k]) for d in dims]
        grey = str(0.25 + 0.6 * k / max(1, len(codes)))
        ax.barh(range(len(dims)), [reasons[d][code] for d in dims], left=left, color=grey,
                hatch=HATCHES[k % len(HATCHES)], edgecolor="black", label=code)  # fmt: skip
    ax.set_yticks(range(len(dims)), dims)
    ax.set_xlabel("answers giving the reason (count)")
    ax.set_title("error categories" if codes else "error categories (none given)")
    if codes:
        ax.legend(fontsize=7, loc="lower right")
    fig.tight_layout()
    return _png(fig), table
