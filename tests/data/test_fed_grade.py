"""FED and GRADE loaders on the samples and on larger files written here in the same format."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dialeval.data.fed_grade import load_fed_dialogue, load_fed_turn, load_grade
from dialeval.errors import InputError


@pytest.fixture(scope="module")
def fed(shared_data: Path) -> tuple[Path, list[dict]]:
    path = shared_data / "samples/fed_data.sample.json"
    return path, json.loads(path.read_text())


@pytest.fixture(scope="module")
def grade(shared_data: Path) -> tuple[Path, list[dict]]:
    path = shared_data / "samples/grade_human_judgement.sample.json"
    return path, json.loads(path.read_text())


def _na(records: list[dict]) -> int:
    return sum(
        1
        for r in records
        for values in r["annotations"].values()
        for v in values
        if isinstance(v, str) and v.startswith("N/A (")
    )


def test_fed_turn_sample(fed) -> None:
    path, raw = fed
    turns = [r for r in raw if "response" in r]
    b = load_fed_turn(path)
    assert b.counts()["items"] == len(turns) == 4
    n_values = sum(len(v) for r in turns for v in r["annotations"].values())
    assert b.counts()["ratings"] == n_values - _na(turns)
    assert b.candidates[1].text == turns[1]["response"].removeprefix("System: ")
    got = [r.value for r in b.ratings if r.item_id == b.candidates[1].id and r.dimension == "Overall"]
    assert got == [float(v) for v in turns[1]["annotations"]["Overall"]]
    assert b.dimensions()["Overall"] == "0-4" and b.dimensions()["Understandable"] == "0-1"
    last = b.dialogues[b.candidates[0].dialogue_id].turns[-1]
    assert (last.speaker, last.text) == ("User", "Can't say")


def test_fed_dialogue_sample_skips_na(fed) -> None:
    path, raw = fed
    dialogues = [r for r in raw if "response" not in r]
    b = load_fed_dialogue(path)
    assert b.counts()["dialogues"] == len(dialogues) == 2
    assert _na(dialogues) == 3
    assert b.skipped['fed: "N/A (...)" value (Error recovery)'] == 3
    n_values = sum(len(v) for r in dialogues for v in r["annotations"].values())
    assert b.counts()["ratings"] == n_values - 3
    assert all(isinstance(r.value, float) for r in b.ratings)
    assert b.counts()["levels"] == ["dialogue"]
    er = [r.value for r in b.ratings if r.item_id == "fed-d0005" and r.dimension == "Error recovery"]
    assert er == [2.0, 1.0, 2.0, 2.0]  # raw: [2, "N/A (no errors)", 1, 2, 2]


def test_fed_larger_file(tmp_path: Path, fed) -> None:
    _, raw = fed
    big = [json.loads(json.dumps(r)) for _ in range(50) for r in raw]
    for i, r in enumerate(big):
        r["system"] = f"bot{i % 7}"
    p = tmp_path / "fed_data.json"
    p.write_text(json.dumps(big))
    t, d = load_fed_turn(p), load_fed_dialogue(p)
    assert t.counts()["items"] == 200 and d.counts()["dialogues"] == 100
    assert t.counts()["systems"] == 7
    assert d.skipped['fed: "N/A (...)" value (Error recovery)'] == 150
    assert t.skipped["fed: record of the other level (loaded by fed-dialogue)"] == 100


def test_fed_bad_inputs(tmp_path: Path, fed) -> None:
    _, raw = fed
    p = tmp_path / "fed_data.json"
    p.write_text(json.dumps(raw, indent=1)[:700])
    with pytest.raises(InputError, match=r"fed_data\.json:\d+: not valid JSON"):
        load_fed_turn(p)
    bad = json.loads(json.dumps(raw))
    bad[2]["annotations"]["Fluent"][3] = "good"
    p.write_text(json.dumps(bad))
    with pytest.raises(InputError) as err:
        load_fed_turn(p)
    assert err.value.field == "annotations.Fluent[3]" and "record 2" in str(err.value)
    bad = json.loads(json.dumps(raw))
    del bad[4]["annotations"]
    p.write_text(json.dumps(bad))
    with pytest.raises(InputError) as err:
        load_fed_dialogue(p)
    assert err.value.field == "annotations" and "record 4" in str(err.value)


def test_grade_sample(grade) -> None:
    path, raw = grade
    b = load_grade(path)
    assert b.counts()["items"] == len(raw) == 5
    assert b.counts()["ratings"] == sum(len(json.loads(r["HumanScores"])) for r in raw) == 50
    item = b.candidates[2].id
    assert [r.value for r in b.ratings if r.item_id == item] == [float(v) for v in json.loads(raw[2]["HumanScores"])]
    assert [t.text for t in b.dialogues[b.candidates[2].dialogue_id].turns] == raw[2]["Context"].split("|||")


def test_grade_larger_file(tmp_path: Path, grade) -> None:
    _, raw = grade
    big = []
    for k in range(40):
        for r in raw:
            r = dict(r)
            r["ID"] = len(big)
            r["DialogModel"] = ["transformer_generator", "transformer_ranker"][k % 2]
            big.append(r)
    p = tmp_path / "human_judgement.json"
    p.write_text(json.dumps(big))
    b = load_grade(p)
    assert b.counts()["items"] == 200 and b.counts()["systems"] == 2 and b.counts()["ratings"] == 2000


def test_grade_bad_inputs(tmp_path: Path, grade) -> None:
    _, raw = grade
    p = tmp_path / "human_judgement.json"
    bad = [dict(r) for r in raw]
    bad[3]["HumanScores"] = "[3, 5, oops]"
    p.write_text(json.dumps(bad))
    with pytest.raises(InputError) as err:
        load_grade(p)
    assert err.value.field == "HumanScores" and "record 3" in str(err.value)
    bad = [dict(r) for r in raw]
    bad[1]["HumanScores"] = '[3, "x"]'
    p.write_text(json.dumps(bad))
    with pytest.raises(InputError, match=r'field "HumanScores\[1\]"'):
        load_grade(p)
    bad = [dict(r) for r in raw]
    del bad[0]["Response"]
    p.write_text(json.dumps(bad))
    with pytest.raises(InputError, match=r'human_judgement\.json:1: field "Response": missing field \(record 0'):
        load_grade(p)
    p.write_text(json.dumps([*raw, raw[0]]))
    with pytest.raises(InputError, match=r"duplicate"):
        load_grade(p)
    p.write_text(json.dumps(raw)[:-40])
    with pytest.raises(InputError, match=r"not valid JSON"):
        load_grade(p)
