"""The human-or-machine head: true turns against SmolLM2's greedy replies, cached and kept for a refit."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("sentence_transformers")
pytest.importorskip("xllamacpp")

from dialeval.quality import humanlike


@pytest.mark.slow
def test_a_tiny_run_writes_its_replies_head_and_card_and_a_rerun_generates_nothing(tmp_path, shared_data, capsys):
    card = humanlike.train(tmp_path, seed=0, per_source=3)
    lines = [json.loads(x) for x in (tmp_path / "generated.jsonl").read_text().splitlines()]
    assert len(lines) == 18 and {x["source"] for x in lines} == set(card["recipe"]["sources"])  # 3 x 6 sources
    assert card["examples"]["true"] == 18
    assert card["examples"]["generated"] + card["examples"]["empty_or_equal_replies"] == 18
    assert card["examples"]["generated"] >= 9  # SmolLM2 answers most contexts
    assert all("\n" not in x["reply"] for x in lines)  # cut at the first line break
    head = json.loads((tmp_path / "humanlike.json").read_text())
    assert head["features"] == "pair" and len(head["coef"]) == 4 * 384 + 2
    first = (tmp_path / "humanlike.json").read_bytes()
    capsys.readouterr()
    humanlike.train(tmp_path, seed=0, per_source=3)
    assert "18 replies cached, 0 to generate" in capsys.readouterr().out  # resumed from the request cache
    assert (tmp_path / "humanlike.json").read_bytes() == first  # same replies, same head, to the bit


def test_an_interrupted_run_leaves_an_earlier_runs_files_as_they_were(tmp_path, shared_data, monkeypatch):
    """generated.jsonl was written before the replies were embedded: an interrupt there left this run's replies
    beside an earlier run's head and card. The interrupt is raised where the embedding starts."""

    def interrupt(*args, **kwargs):
        raise KeyboardInterrupt

    earlier = {name: f"an earlier run's {name}\n" for name in ("generated.jsonl", "humanlike.json", "card.json")}
    for name, text in earlier.items():
        (tmp_path / name).write_text(text)
    monkeypatch.setattr("dialeval.metrics.quality.features.embed", interrupt)
    with pytest.raises(KeyboardInterrupt):
        humanlike.train(tmp_path, seed=0, per_source=1)
    assert {name: (tmp_path / name).read_text() for name in earlier} == earlier
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([*earlier, "requests.sqlite"])  # the replies kept
