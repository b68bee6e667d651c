"""Markdown ranking and JSON rows."""

from __future__ import annotations

import json

from dialeval.meta.correlate import correlation_table
from dialeval.meta.render import rows_to_dicts, rows_to_markdown


def test_markdown_ranks_by_chosen_column_and_json_round_trips(usr):
    rows = correlation_table(
        usr.scores,
        usr.ratings,
        dimension="Overall",
        levels=("turn", "system"),
        methods=("pearson",),
        n_boot=50,
        by="subset",
    )
    by_key = {(r.group, r.level, r.metric): r for r in rows}
    text = rows_to_markdown(rows, rank_by=("system", "pearson"))
    lines = text.splitlines()
    assert lines[0] == "| group | metric | turn pearson | system pearson |"
    all_lines = [ln for ln in lines[2:] if ln.startswith("| all |")]
    order = sorted(["len", "noise"], key=lambda m: -by_key[("all", "system", m)].value)
    assert [ln.split(" | ")[1] for ln in all_lines] == order
    turn = by_key[("all", "turn", "len")]
    assert f"{turn.value:.3f} [{turn.ci_low:.3f}, {turn.ci_high:.3f}]" in text
    assert len(lines) == 2 + 2 * 3  # two metrics x (all, even, odd)
    dicts = json.loads(json.dumps(rows_to_dicts(rows)))
    assert dicts[0]["group"] == "all" and set(dicts[0]) >= {"metric", "level", "method", "value", "ci_low", "n_skipped"}
