"""DSTC9 interactive loader against counts computed here from the raw files."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from dialeval.data.dstc9 import DSTC9_SCALES, load_dstc9
from dialeval.errors import InputError


@pytest.fixture(scope="module")
def raw(shared_data: Path) -> dict[str, list[dict]]:
    folder = shared_data / "dstc9_interactive"
    return {f"chatbot{i}": json.loads((folder / f"chatbot{i}.json").read_text()) for i in range(1, 12)}


@pytest.fixture(scope="module")
def bench(shared_data: Path):
    return load_dstc9(shared_data / "dstc9_interactive")


def test_counts_match_the_raw_files(raw, bench) -> None:
    n_dialogues = sum(len({r["context"] for r in recs}) for recs in raw.values())
    n_records = sum(len(recs) for recs in raw.values())
    n_na = sum(1 for recs in raw.values() for r in recs for k, v in r.items() if k != "context" and v == "N/A")
    n_values = sum(1 for recs in raw.values() for r in recs for k in r if k != "context")
    assert (n_dialogues, n_records) == (2200, 6473)  # the README's numbers
    counts = bench.counts()
    assert counts["dialogues"] == n_dialogues and counts["systems"] == 11
    assert len({(r.item_id, r.annotator) for r in bench.ratings}) == n_records
    assert counts["ratings"] == n_values - n_na
    na_skips = sum(n for why, n in bench.skipped.items() if '"N/A"' in why)
    assert na_skips == n_na == 236
    assert counts["levels"] == ["dialogue"] and bench.dimensions() == DSTC9_SCALES


def test_spot_check_one_rating_and_grouping(raw, bench) -> None:
    recs = raw["chatbot3"]
    contexts = list(dict.fromkeys(r["context"] for r in recs))
    target = contexts[5]
    records = [r for r in recs if r["context"] == target]
    did = "dstc9-chatbot3-005"
    second = {r.dimension: r.value for r in bench.ratings if r.item_id == did and r.annotator == "r2"}
    assert second["human (overall)"] == float(records[1]["human (overall)"])
    assert len({r.annotator for r in bench.ratings if r.item_id == did}) == len(records)


def test_turns_and_system_candidates(raw, bench) -> None:
    target = raw["chatbot1"][0]["context"]
    d = bench.dialogues["dstc9-chatbot1-000"]
    users = [line[len("User: ") :].strip() for line in target.split("\n") if line.startswith("User: ")]
    assert [t.text for t in d.turns if t.speaker == "User"] == users
    cands = [c for c in bench.candidates if c.dialogue_id == d.id]
    assert all(d.turns[c.turn_index].text == c.text and d.turns[c.turn_index].speaker == "System" for c in cands)
    assert len(cands) == sum(1 for t in d.turns if t.speaker == "System" and t.text)


def test_continuation_lines_join_the_previous_turn(bench) -> None:
    # chatbot8 writes "System: " then the text on the next line
    d = bench.dialogues["dstc9-chatbot8-000"]
    assert all(t.speaker in ("User", "System") for t in d.turns)
    assert d.turns[1].speaker == "System" and d.turns[1].text


def _write(tmp_path: Path, data: object) -> Path:
    p = tmp_path / "chatbot1.json"
    p.write_text(data if isinstance(data, str) else json.dumps(data))
    return p


def test_bad_inputs(tmp_path: Path, raw) -> None:
    recs = json.loads(json.dumps(raw["chatbot1"][:3]))
    with pytest.raises(InputError, match=r"chatbot1\.json:\d+: not valid JSON"):
        load_dstc9(_write(tmp_path, json.dumps(recs)[:300]))
    missing = json.loads(json.dumps(recs))
    del missing[2]["coherent"]
    with pytest.raises(InputError) as err:
        load_dstc9(_write(tmp_path, missing))
    assert err.value.field == "coherent" and "record 2" in str(err.value)
    bad = json.loads(json.dumps(recs))
    bad[1]["likeable"] = "high"
    with pytest.raises(InputError) as err:
        load_dstc9(_write(tmp_path, bad))
    assert err.value.field == "likeable" and "record 1" in str(err.value) and "chatbot1.json" in str(err.value)
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(InputError, match=r"no chatbot"):
        load_dstc9(empty)


def test_na_values_are_counted_not_loaded(tmp_path: Path, raw) -> None:
    recs = json.loads(json.dumps(raw["chatbot1"][:1]))
    recs[0]["diverse"] = "N/A"
    b = load_dstc9(_write(tmp_path, recs))
    assert Counter(b.skipped)['dstc9: "N/A" value (diverse)'] == 1
    assert "diverse" not in {r.dimension for r in b.ratings}
