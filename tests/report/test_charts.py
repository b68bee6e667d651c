"""The report's figures: what each draws (the stress grid's cells, the titles' CI claims)."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from tests.commands.cli_runner import invoke as run_cli

from dialeval.report import charts

#: Four one-line responses: truncation applies to none of them (it needs a longer response), repetition to one.
SHORT = "context,response,rating\nHi there,Hello!,4\nHow are you?,Fine,5\nYo,Hey,2\nWhat now?,Nothing much,3\n"


def test_the_stress_grid_keeps_a_perturbation_that_applied_to_no_item_as_n_a() -> None:
    """A perturbation with no pair (its value null) was left out of the grid: its column was gone from the heat map,
    and a metric with no value was gone too; when no value was left, imshow raised 'Invalid shape (0,)'."""
    rows = [{"metric": "bleu", "perturbation": "truncation", "value": None},
            {"metric": "bleu", "perturbation": "shuffle", "value": 0.25},
            {"metric": "length", "perturbation": "truncation", "value": None}]  # fmt: skip
    metrics, perts, grid = charts.stress_grid(rows)
    assert (metrics, perts) == (["bleu", "length"], ["truncation", "shuffle"])  # every row's names, in file order
    assert math.isnan(grid[0][0]) and grid[0][1] == 0.25 and all(math.isnan(v) for v in grid[1])
    assert charts.heatmap(rows[:1] + rows[2:])[:4] == b"\x89PNG"  # no value at all: every cell n/a


def test_the_heat_map_shades_every_report_on_one_scale_from_0_to_1(monkeypatch: pytest.MonkeyPatch) -> None:
    """The grid was shaded from its own lowest to its highest value: shares of 0.48 and 0.52 (both "not noticed")
    were drawn white and black, and a grid of one value took matplotlib's default limits around it."""
    drawn: list[object] = []
    monkeypatch.setattr(charts, "_png", drawn.append)
    charts.heatmap([{"metric": "m", "perturbation": p, "value": v} for p, v in (("a", 0.48), ("b", 0.52))])
    image = drawn[0].axes[0].images[0]  # type: ignore[attr-defined]
    texts = {t.get_text(): t.get_color() for t in drawn[0].axes[0].texts}  # type: ignore[attr-defined]
    assert image.get_clim() == (0.0, 1.0)
    charts._plt().close(drawn[0])
    assert texts == {"0.48": "black", "0.52": "white"}  # white on the darker half of the scale, past 0.5


def test_a_stress_run_whose_perturbation_applied_to_no_item_is_reported(tmp_path: Path) -> None:
    """`stress --perturb truncation` on short responses: the report ended in matplotlib's TypeError traceback
    ("Invalid shape (0,) for image data"); its table now says "-" (the value is undefined) and the heat map n/a."""
    (tmp_path / "short.csv").write_text(SHORT)
    run = tmp_path / "stress"
    res = run_cli("stress", "--path", tmp_path / "short.csv", "--response-col", "response", "--context-col", "context",
                  "--rating-col", "rating", "--scale", "1-5", "-m", "length", "--perturb", "truncation", "--boot", "0",
                  "--no-cache", "-o", run)  # fmt: skip
    assert res.exit_code == 0 and '"value":null' in (run / "stress.jsonl").read_text(), res.output
    res = run_cli("report", run, "-o", tmp_path / "r.html")
    assert res.exit_code == 0, res.output
    res = run_cli("report", run, "-o", tmp_path / "r.md")
    assert res.exit_code == 0 and "| length | - |" in (tmp_path / "r.md").read_text(), res.output


def _row(level: str, value: float, ci: tuple[float, float] | None) -> dict[str, object]:
    low, high = ci or (None, None)
    return {"metric": "bleu", "level": level, "method": "pearson", "value": value, "ci_low": low, "ci_high": high}


def test_a_correlation_panel_without_cis_says_so_in_its_title(monkeypatch: pytest.MonkeyPatch) -> None:
    """`benchmark --boot 0`: every panel of the chart was titled "turn level (95% bootstrap CI)" above points with
    no bar. The titles are spied on as the chart sets them; a level with a CI keeps its title."""
    import matplotlib.axes

    titles: list[str] = []
    real = matplotlib.axes.Axes.set_title
    monkeypatch.setattr(matplotlib.axes.Axes, "set_title",
                        lambda ax, label, *a, **k: titles.append(label) or real(ax, label, *a, **k))  # fmt: skip
    rows = [_row("turn", 0.4, (0.3, 0.5)), _row("system", 0.9, None)]
    assert charts.correlation_chart(rows, "Overall")[:4] == b"\x89PNG"
    assert titles == ["turn level (95% bootstrap CI)", "system level (no CI)"]


def test_a_heat_map_cell_that_rounds_to_zero_reads_0_00_whatever_its_sign(monkeypatch: pytest.MonkeyPatch) -> None:
    """A cell of -0.001 was printed "-0.00" (f"{v:.2f}"), read as a negative share; it reads "0.00" now, as every
    table's figures do (:func:`dialeval.words.figure`), and a real negative keeps its sign."""
    drawn: list[object] = []
    monkeypatch.setattr(charts, "_png", drawn.append)
    charts.heatmap([{"metric": "m", "perturbation": p, "value": v} for p, v in (("a", -0.001), ("b", -0.4))])
    texts = [t.get_text() for t in drawn[0].axes[0].texts]  # type: ignore[attr-defined]
    charts._plt().close(drawn[0])
    assert texts == ["0.00", "-0.40"]  # -0.001 to two decimals is zero; -0.4 is -0.40


def test_an_agreement_row_that_rounds_to_zero_reads_0_000_whatever_its_sign(monkeypatch: pytest.MonkeyPatch) -> None:
    """Krippendorff's alpha of -0.0004 was printed "-0.000" in the report's agreement table (f"{v:.3f}"), its CI's
    upper bound too; they read "0.000" now, as the other tables' figures do; a real negative keeps its sign."""
    from dialeval.meta import agreement
    from dialeval.schema import Rating

    got = agreement.Estimate(value=-0.0004, low=-0.0021, high=-0.0001, n_items=2, n_boot=10)
    monkeypatch.setattr(agreement, "agreement_report", lambda *a, **k: {"krippendorff_alpha_interval": got})
    ratings = [Rating(item_id=f"i{i}", dimension="Overall", annotator=f"a{a}", value=float(i + a))
               for i in range(2) for a in range(2)]  # fmt: skip
    _, table = charts.agreement_chart(ratings, n_boot=10)
    assert table == [["Overall", "interval", "0.000", "[-0.002, 0.000]", "2"]]  # -0.0021 to three decimals: -0.002
