"""USR loaders against the raw files, read here with plain json."""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

import pytest

from dialeval.data.usr import (
    USR_SCALES,
    load_usr_persona_chat,
    load_usr_topical_chat,
    load_usr_topical_chat_unieval,
)
from dialeval.errors import InputError


@pytest.fixture(scope="module")
def tc(shared_data: Path):
    return load_usr_topical_chat(shared_data / "usr/usr_topical_chat.json")


def test_topical_chat_counts_match_the_raw_file(shared_data: Path, tc) -> None:
    raw = json.loads((shared_data / "usr/usr_topical_chat.json").read_text())
    n_responses = sum(len(x["responses"]) for x in raw)
    systems = {r["model"] for x in raw for r in x["responses"]}
    names = {a for x in raw for a in x["annotators"]}
    counts = tc.counts()
    # the numbers: 360 responses, 60 contexts, 6 systems, 3 annotators per item
    assert counts["items"] == n_responses == 360
    assert counts["contexts"] == counts["dialogues"] == len(raw) == 60
    assert counts["systems"] == len(systems) == 6
    assert counts["annotators"] == len(names)  # 5 distinct names; each item has 3
    per_item = defaultdict(set)
    for r in tc.ratings:
        per_item[r.item_id].add(r.annotator)
    assert {len(v) for v in per_item.values()} == {3}
    assert counts["annotators_per_item"] == "3"
    assert counts["ratings"] == n_responses * 3 * 6
    assert tc.dimensions() == USR_SCALES


def test_topical_chat_spot_checks(shared_data: Path, tc) -> None:
    raw = json.loads((shared_data / "usr/usr_topical_chat.json").read_text())
    resp = raw[7]["responses"][1]
    item = f"usr-tc-07:{resp['model']}"
    annotator = raw[7]["annotators"][2]
    got = [r.value for r in tc.ratings if r.item_id == item and r.annotator == annotator and r.dimension == "Overall"]
    assert got == [float(resp["Overall"][2])]
    cand = next(c for c in tc.candidates if c.id == item)
    assert item == "usr-tc-07:Argmax Decoding"
    assert cand.text == resp["response"].strip()
    truth = next(r for r in raw[7]["responses"] if r["model"] == "Original Ground Truth")
    new = next(r for r in raw[7]["responses"] if r["model"] == "New Human Generated")
    assert cand.references == [truth["response"].strip()]
    gt_cand = next(c for c in tc.candidates if c.id == "usr-tc-07:Original Ground Truth")
    assert gt_cand.references == [new["response"].strip()]
    dialogue = tc.dialogues["usr-tc-07"]
    lines = [t.strip() for t in raw[7]["context"].split("\n") if t.strip()]
    assert [t.text for t in dialogue.turns] == lines
    assert dialogue.turns[-1].speaker == "A" and cand.turn_index == len(lines)
    assert [t.speaker for t in dialogue.turns[-2:]] == ["B", "A"]
    assert dialogue.knowledge == [f.strip() for f in raw[7]["fact"].split("\n") if f.strip()]


def test_persona_chat_counts(shared_data: Path) -> None:
    raw = json.loads((shared_data / "usr/pc_usr_data.json").read_text())
    b = load_usr_persona_chat(shared_data / "usr/pc_usr_data.json")
    assert b.counts()["items"] == sum(len(x["responses"]) for x in raw) == 300
    assert b.counts()["systems"] == 5
    first = raw[0]["responses"][0]
    got = [r.value for r in b.ratings if r.item_id == "usr-pc-00:Original Ground Truth" and r.dimension == "Engaging"]
    assert got == [float(v) for v in first["Engaging"]]


def test_unieval_copy_maps_to_the_same_ids_and_dimensions(shared_data: Path, tc) -> None:
    uni = load_usr_topical_chat_unieval(shared_data / "usr/topical_chat.json")
    assert uni.dialogues == tc.dialogues
    assert uni.candidates == tc.candidates
    # The dimension mapping, checked numerically: the mean of the 3 raw ratings == UniEval's value.
    sums: dict[tuple[str, str], list[float]] = defaultdict(list)
    for r in tc.ratings:
        sums[(r.item_id, r.dimension)].append(float(r.value))  # type: ignore[arg-type]
    assert len(uni.ratings) == len(sums) == 360 * 6
    for r in uni.ratings:
        values = sums[(r.item_id, r.dimension)]
        assert r.value == pytest.approx(sum(values) / len(values), abs=1e-6), (r.item_id, r.dimension)
    assert {r.annotator for r in uni.ratings} == {"unieval-mean"}


def _write(tmp_path: Path, text: str) -> Path:
    p = tmp_path / "usr.json"
    p.write_text(text)
    return p


@pytest.fixture()
def one_record(shared_data: Path) -> list[dict]:
    return json.loads((shared_data / "usr/usr_topical_chat.json").read_text())[:2]


def test_truncated_json_names_the_file_and_line(tmp_path: Path, one_record) -> None:
    p = _write(tmp_path, json.dumps(one_record, indent=1)[:500])
    with pytest.raises(InputError, match=r"usr\.json:\d+: not valid JSON"):
        load_usr_topical_chat(p)


def test_missing_field_names_record_and_field(tmp_path: Path, one_record) -> None:
    del one_record[1]["fact"]
    with pytest.raises(InputError) as err:
        load_usr_topical_chat(_write(tmp_path, json.dumps(one_record)))
    assert err.value.field == "fact" and "record 1" in str(err.value) and "usr.json" in str(err.value)
    # pretty-printed, the error also names the line the record starts on (counted here by hand)
    text = json.dumps(one_record, indent=1)
    start = text.index("\n {", text.index('"fact"')) + 1  # the second record's opening brace
    with pytest.raises(InputError) as err:
        load_usr_topical_chat(_write(tmp_path, text))
    assert err.value.line == text.count("\n", 0, start) + 1 and err.value.field == "fact"


def test_non_numeric_score_names_record_and_field(tmp_path: Path, one_record) -> None:
    one_record[0]["responses"][2]["Natural"][1] = "three"
    with pytest.raises(InputError) as err:
        load_usr_topical_chat(_write(tmp_path, json.dumps(one_record)))
    assert err.value.field == "responses[2].Natural" and "record 0" in str(err.value)
    assert "'three'" in str(err.value)


def test_wrong_number_of_scores_is_an_error(tmp_path: Path, one_record) -> None:
    one_record[0]["responses"][0]["Overall"] = [5, 5]
    with pytest.raises(InputError, match=r"2 scores for 3 annotators"):
        load_usr_topical_chat(_write(tmp_path, json.dumps(one_record)))


def test_unieval_missing_score_is_an_error(tmp_path: Path, shared_data: Path) -> None:
    raw = json.loads((shared_data / "usr/topical_chat.json").read_text())[:6]
    del raw[3]["scores"]["groundedness"]
    p = tmp_path / "tc.json"
    p.write_text(json.dumps(raw))
    with pytest.raises(InputError) as err:
        load_usr_topical_chat_unieval(p)
    assert err.value.field == "scores.groundedness" and "record 3" in str(err.value)


def test_a_model_or_annotator_given_twice_in_a_record_is_refused(tmp_path: Path, one_record) -> None:
    """A model answering one context twice was a second item of the same id (benchmark: 'metric "length" scores item
    "usr-tc-00:Argmax Decoding" twice', naming no file); an annotator listed twice kept each rating twice."""
    one_record[1]["responses"].append(dict(one_record[1]["responses"][1]))
    with pytest.raises(InputError) as err:
        load_usr_topical_chat(_write(tmp_path, json.dumps(one_record)))
    assert err.value.field == "responses.model" and "record 1" in str(err.value)
    assert "responses[6]: model 'Argmax Decoding' answers this context again (first in responses[1])" in str(err.value)
    one_record[1]["responses"].pop()
    one_record[0]["annotators"][2] = one_record[0]["annotators"][0]
    with pytest.raises(InputError, match=r'field "annotators": annotator .* is listed twice \(annotators\[2\]\)'):
        load_usr_topical_chat(_write(tmp_path, json.dumps(one_record)))


def test_unieval_a_system_given_twice_for_one_source_is_refused(tmp_path: Path, shared_data: Path) -> None:
    """Two mean ratings of one item by the one pseudo-annotator, and a second candidate of the same id."""
    raw = json.loads((shared_data / "usr/topical_chat.json").read_text())[:6]
    p = tmp_path / "tc.json"
    p.write_text(json.dumps([*raw, raw[1]]))
    with pytest.raises(InputError) as err:
        load_usr_topical_chat_unieval(p)
    assert err.value.field == "system_id" and "record 6" in str(err.value) and "(first on line 1, record 1)" in str(
        err.value)
