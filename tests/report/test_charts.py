"""The report's figures: what each draws (the stress grid's cells, the titles' CI claims)."""

from __future__ import annotations

import math
from pathlib import Path

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
