"""The generic table loader and dialeval's own record files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dialeval.data.generic import ColumnMapping, load_records, load_table
from dialeval.data.usr import load_usr_topical_chat
from dialeval.errors import InputError
from dialeval.jsonl import write_jsonl

LONG = ColumnMapping(
    response="response", context="context", turn_separator=" || ", system="system",
    references=("ref",), ratings={"q": "quality", "f": "fluency"}, annotator="worker", scale="1-5",
)  # fmt: skip


def test_csv_long_form(tmp_path: Path) -> None:
    p = tmp_path / "ratings.csv"
    p.write_text(
        "context,response,system,ref,worker,q,f\n"
        "hi || how are you?,fine,bot,good thanks,w1,4,5\n"
        "hi || how are you?,fine,bot,good thanks,w2,3,\n"
        "hi || how are you?,meh,other,good thanks,w1,2,2\n"
        "new topic,ok,bot,,w1,5,5\n"
    )
    b = load_table(p, LONG)
    assert [c.id for c in b.candidates] == ["ratings-0000:bot", "ratings-0000:other", "ratings-0001:bot"]
    assert b.dialogues["ratings-0000"].turns[-1].text == "how are you?"
    assert b.dialogues["ratings-0000"].turns[-1].speaker == "A"
    assert b.candidates[0].references == ["good thanks"] and b.candidates[2].references == []
    assert b.counts()["ratings"] == 7 and b.skipped == {"empty rating (f)": 1}
    got = {(r.item_id, r.annotator, r.dimension): r.value for r in b.ratings}
    assert got[("ratings-0000:bot", "w2", "quality")] == 3.0


def test_jsonl_wide_form_with_reference_lists(tmp_path: Path) -> None:
    p = tmp_path / "mine.jsonl"
    rows = [
        {"ctx": "a\nb", "resp": "c", "refs": ["r1", "r2"], "s1": 1, "s2": 2},
        {"ctx": "a\nb", "resp": "d", "refs": ["r1"], "s1": 3, "s2": None},
    ]
    p.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    m = ColumnMapping(response="resp", context="ctx", references=("refs",),
                      annotator_columns={"s1": "ann-a", "s2": "ann-b"}, dimension="overall")  # fmt: skip
    b = load_table(p, m)
    assert [c.id for c in b.candidates] == ["mine-0000:unknown", "mine-0000:unknown#2"]
    assert b.candidates[0].references == ["r1", "r2"]
    assert [(r.annotator, r.value) for r in b.ratings] == [("ann-a", 1.0), ("ann-b", 2.0), ("ann-a", 3.0)]
    assert b.skipped == {"empty rating (s2)": 1}


def test_table_bad_inputs(tmp_path: Path) -> None:
    p = tmp_path / "r.csv"
    p.write_text("context,response,system,ref,worker,q\nhi,yo,bot,x,w1,4\n")
    with pytest.raises(InputError, match=r'r\.csv:1: field "f": missing column'):
        load_table(p, LONG)
    p.write_text("context,response,system,ref,worker,q,f\nhi,yo,bot,x,w1,4,5\nhi,yo,bot,x,w1,four,5\n")
    with pytest.raises(InputError, match=r'r\.csv:3: field "q": expected a number'):
        load_table(p, LONG)
    p.write_text("context,response,system,ref,worker,q,f\nhi,yo,bot,x,w1,4,5,9\n")
    with pytest.raises(InputError, match=r"r\.csv:2: expected 7 columns, found 8"):
        load_table(p, LONG)
    j = tmp_path / "r.jsonl"
    j.write_text('{"response": "a", "q": 1}\n{"response": "b", "q": 2')
    with pytest.raises(InputError, match=r"r\.jsonl:2: not valid JSON"):
        load_table(j, ColumnMapping(response="response", ratings={"q": "quality"}))
    j.write_text('{"response": "a", "q": 1}\n{"q": 2}\n')
    with pytest.raises(InputError, match=r'r\.jsonl:2: field "response": missing field'):
        load_table(j, ColumnMapping(response="response", ratings={"q": "quality"}))


def test_records_round_trip(tmp_path: Path, shared_data: Path) -> None:
    b = load_usr_topical_chat(shared_data / "usr/usr_topical_chat.json").head(3)
    write_jsonl(tmp_path / "dialogues.jsonl", b.dialogues.values())
    write_jsonl(tmp_path / "candidates.jsonl", b.candidates)
    write_jsonl(tmp_path / "ratings.jsonl", b.ratings)
    back = load_records(tmp_path, name="usr-tc-head")
    assert back.dialogues == b.dialogues and back.candidates == b.candidates and back.ratings == b.ratings


def test_records_bad_inputs(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"missing dialogues\.jsonl, candidates\.jsonl, ratings\.jsonl"):
        load_records(tmp_path)
    (tmp_path / "dialogues.jsonl").write_text('{"id": "d1", "turns": []}\n')
    (tmp_path / "candidates.jsonl").write_text(
        '{"id": "c1", "dialogue_id": "d1", "turn_index": 0, "system": "s", "text": "x"}\n'
        '{"id": "c2", "dialogue_id": "d9", "turn_index": 0, "system": "s", "text": "x"}\n'
    )
    (tmp_path / "ratings.jsonl").write_text('{"item_id": "c1", "dimension": "o", "annotator": "a", "value": 1}\n')
    with pytest.raises(InputError, match=r'candidates\.jsonl:2: field "dialogue_id": unknown dialogue "d9"'):
        load_records(tmp_path)
    (tmp_path / "candidates.jsonl").write_text('{"id": "c1", "dialogue_id": "d1", "turn_index": -1, "system": "s"}\n')
    with pytest.raises(InputError, match=r"candidates\.jsonl:1: field"):
        load_records(tmp_path)


def test_several_systems_per_row_tsv_and_per_dimension_scales(tmp_path: Path) -> None:
    p = tmp_path / "hits.tsv"
    p.write_text(
        "hit\tquery\tworker\ttask\tr_a\tr_b\tq_a\tq_b\tf_a\n"
        "7\thello?\tw1\tformal\thi\tyo\t80\t20\t3\n"
        "7\thello?\tw2\tformal\thi\tyo\t60\t\t4\n"
    )
    m = ColumnMapping(response="r_{system}", context="query", systems=("a", "b"), dialogue_id="hit",
                      annotator="worker", tags=("task",), ratings={"q_{system}": "quality", "f_a": "fluency"},
                      scale="0-100", scales={"fluency": "1-5"})  # fmt: skip
    b = load_table(p, m)
    assert [(c.id, c.text, c.tags) for c in b.candidates] == [
        ("7:a", "hi", {"system": "a", "task": "formal"}), ("7:b", "yo", {"system": "b", "task": "formal"}),
    ]  # fmt: skip
    got = sorted((r.item_id, r.dimension, r.annotator, r.value, r.scale) for r in b.ratings)
    # f_a names no {system}: every response of the row gets it
    assert got == [
        ("7:a", "fluency", "w1", 3.0, "1-5"), ("7:a", "fluency", "w2", 4.0, "1-5"),
        ("7:a", "quality", "w1", 80.0, "0-100"), ("7:a", "quality", "w2", 60.0, "0-100"),
        ("7:b", "fluency", "w1", 3.0, "1-5"), ("7:b", "fluency", "w2", 4.0, "1-5"),
        ("7:b", "quality", "w1", 20.0, "0-100"),
    ]  # fmt: skip
    assert b.skipped == {"empty rating (q_b)": 1}


def test_table_refuses_duplicate_ratings_and_conflicting_ids(tmp_path: Path) -> None:
    p = tmp_path / "t.csv"
    p.write_text("response,worker,q\nfine,w1,4\nfine,w2,3\nfine,w1,5\n")
    m = ColumnMapping(response="response", annotator="worker", ratings={"q": "quality"})
    with pytest.raises(InputError, match=r"t\.csv:4: field \"q\": annotator \"w1\" rates .* twice \(first on line 2\)"):
        load_table(p, m)
    p.write_text("id,response,q\nx1,fine,4\nx1,other,3\n")
    with pytest.raises(InputError, match=r"t\.csv:3: field \"response\": item \"x1\" differs from its first row"):
        load_table(p, ColumnMapping(response="response", item_id="id", ratings={"q": "quality"}))


def test_mapping_file_errors_name_the_file_and_key(tmp_path: Path) -> None:
    from dialeval.data.generic import load_mapping

    p = tmp_path / "m.yaml"
    p.write_text("response: r\nratings:\n  q: [Overall]\n")
    with pytest.raises(InputError, match=r'm\.yaml: field "ratings\.q": Input should be a valid string'):
        load_mapping(p)
    p.write_text("ratings: {q: Overall}\n")
    with pytest.raises(InputError, match=r'm\.yaml: field "response": Field required'):
        load_mapping(p)
    p.write_text("- response\n")
    with pytest.raises(InputError, match=r"m\.yaml: expected a YAML mapping"):
        load_mapping(p)
    p.write_text("response: r\nsystems: [a, b\n")
    with pytest.raises(InputError, match=r"m\.yaml:3: not valid YAML"):
        load_mapping(p)
