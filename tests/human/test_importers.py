"""Agreement on published annotations, checked against the krippendorff package on the raw files."""

from __future__ import annotations

import json
from pathlib import Path

import krippendorff
import numpy as np
import pandas as pd
import pytest

from dialeval.human.importers import import_agreement


def test_usr_topical_chat_overall_alpha(shared_data: Path) -> None:
    raw = json.loads((shared_data / "usr" / "usr_topical_chat.json").read_text())
    # Independent: the raw per-annotator lists as a 3 x 360 matrix (alpha does not depend on who is who).
    matrix = np.array([v for ctx in raw for r in ctx["responses"] for v in [r["Overall"]]], dtype=float).T
    rows = {r["level"]: r for r in import_agreement("usr-tc", dimension="Overall", n_boot=200)}
    for level in ("ordinal", "interval"):
        expected = krippendorff.alpha(reliability_data=matrix, level_of_measurement=level)
        assert rows[level]["alpha"] == pytest.approx(expected, abs=1e-4)
        low, high = rows[level]["ci95"]
        assert low < rows[level]["alpha"] < high
        assert rows[level]["items"] == 360
    assert rows["ordinal"]["alpha"] == pytest.approx(0.6647, abs=1e-4)  # printed by `dialeval study import-agreement`


def test_lmstyle_appropriateness_alpha(shared_data: Path) -> None:
    df = pd.read_csv(shared_data / "lmstyle" / "Batch_results_develop.csv")
    twice = df[df.groupby("HITId")["HITId"].transform("size") == 2].sort_values(["HITId", "AssignmentId"])
    cols = [c for c in df.columns if c.startswith("Answer.Appropriateness_")]
    first = twice.groupby("HITId").nth(0)[cols].to_numpy(dtype=float).ravel()
    second = twice.groupby("HITId").nth(1)[cols].to_numpy(dtype=float).ravel()
    matrix = np.vstack([first, second])
    assert matrix.shape == (2, 29 * 4)
    rows = {r["level"]: r for r in import_agreement("lmstyle-mturk", dimension="appropriateness", n_boot=200)}
    for level in ("ordinal", "interval"):
        expected = krippendorff.alpha(reliability_data=matrix, level_of_measurement=level)
        assert rows[level]["alpha"] == pytest.approx(expected, abs=1e-4)
        assert rows[level]["items"] == 116
        assert "29 of 397" in rows[level]["note"]


def test_the_command_prints_a_table_and_json_on_request(shared_data: Path) -> None:
    """It printed JSON lines only. The table holds the alpha of the test above (krippendorff's 0.665 on USR-TC
    Overall, ordinal) with its CI; --json gives the rows; --seed moves the CI, not the alpha."""
    from typer.testing import CliRunner

    from dialeval.cli import app

    args = ["study", "import-agreement", "usr-tc", "--dimension", "Overall", "--n-boot", "50"]
    table = CliRunner().invoke(app, args, terminal_width=100)
    assert table.exit_code == 0, table.output
    rows = [json.loads(line) for line in CliRunner().invoke(app, [*args, "--json"]).output.splitlines()]
    ordinal = next(r for r in rows if r["level"] == "ordinal")
    low, high = ordinal["ci95"]
    assert f"│ Overall   │ ordinal  │ 0.665 [{low:.3f}, {high:.3f}] │   360 │          5 │" in table.output
    other = [json.loads(line) for line in CliRunner().invoke(app, [*args, "--json", "--seed", "1"]).output.splitlines()]
    assert [r["alpha"] for r in other] == [r["alpha"] for r in rows] and other != rows
    refused = CliRunner().invoke(app, [*args, "--seed", "-1"])
    assert refused.exit_code == 2 and 'field "--seed": must be >= 0, got -1' in refused.output


@pytest.mark.parametrize(("args", "message"), [
    # each was Python's repr: "unknown source 'usr_tc'; choose one of ['usr-tc', ...]", "has no dimension 'overall';
    # it has ['Understandable', ...]", naming no option and no close name
    (["usr_tc"], 'unknown source "usr_tc"; did you mean "usr-tc"?'),
    (["usr-tc", "--dimension", "overall"], 'field "--dimension": usr-tc has no dimension "overall" (did you mean'),
])  # fmt: skip
def test_a_name_not_known_gets_the_closest(shared_data: Path, args: list[str], message: str) -> None:
    from typer.testing import CliRunner

    from dialeval.cli import app

    res = CliRunner().invoke(app, ["study", "import-agreement", *args, "--n-boot", "10"], terminal_width=200)
    assert res.exit_code == 2 and message in res.output, res.output
