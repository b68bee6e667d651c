"""The generic table loader and dialeval's own record files."""

from __future__ import annotations

import gzip
import json
import re
from pathlib import Path

import pytest

from dialeval.data.generic import (
    SYSTEM_MESSAGE,
    ColumnMapping,
    is_table,
    load_mapping,
    load_records,
    load_table,
    read_ratings,
    read_records,
)
from dialeval.data.usr import load_usr_topical_chat
from dialeval.errors import InputError
from dialeval.jsonl import write_jsonl
from dialeval.schema import Candidate, Dialogue, Turn

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



def test_an_empty_system_cell_beside_named_systems_is_refused(tmp_path: Path) -> None:
    """Rows 4 and 8 name no system: they were the system "unknown", a fourth beside a, b and c (data show: systems 4),
    its two items averaged as one system's at the system level, silently."""
    p = tmp_path / "sys.csv"
    p.write_text("context,response,system,rating\nHi,Hello there friend,a,5\nHi,ok,b,2\nHi,meh,,3\n"
                 "Yo,Hey how are you,a,4\nYo,no,b,1\nYo,sure,c,2\nSup,Not much really,a,4\nSup,fine, ,1\n")  # fmt: skip
    m = ColumnMapping(response="response", context="context", system="system", ratings={"rating": "Overall"})
    with pytest.raises(InputError, match=r'sys\.csv:4: field "system": no system \(2 such rows\), where other rows '
                       r'name theirs \(a, b, c\): an empty cell would be one more system, "unknown"'):  # fmt: skip
        load_table(p, m)
    p.write_text("context,response,system,rating\nHi,Hello there friend,,5\nHi,ok,,2\n")  # no row names one
    assert {c.system for c in load_table(p, m).candidates} == {"unknown"}

def test_rows_of_one_response_share_an_item_only_with_its_reference_tags_and_grounding(tmp_path: Path) -> None:
    # One row per annotator repeats the response: one item. A row with the same response but another reference
    # (or tag, or knowledge) is an item of its own; it was the first row's item, scored against its reference.
    p = tmp_path / "t.csv"
    p.write_text("context,response,ref,know,task,worker,q\n"
                 "hi,I don't know.,I don't know.,a,x,w1,4\n"
                 "hi,I don't know.,I don't know.,a,x,w2,3\n"
                 "hi,I don't know.,It is Paris.,a,x,w1,2\n"
                 "hi,I don't know.,I don't know.,a,y,w1,5\n"
                 "hi,I don't know.,I don't know.,b,x,w1,1\n")  # fmt: skip
    m = ColumnMapping(response="response", context="context", references=("ref",), knowledge="know", tags=("task",),
                      annotator="worker", ratings={"q": "quality"})  # fmt: skip
    b = load_table(p, m)
    assert [(c.id, c.references, c.tags["task"]) for c in b.candidates] == [
        ("t-0000:unknown", ["I don't know."], "x"), ("t-0000:unknown#2", ["It is Paris."], "x"),
        ("t-0000:unknown#3", ["I don't know."], "y"), ("t-0001:unknown", ["I don't know."], "x"),
    ]  # fmt: skip
    assert [d.knowledge for d in b.dialogues.values()] == [["a"], ["b"]]
    got = sorted((r.item_id, r.annotator, r.value) for r in b.ratings)
    assert got == [("t-0000:unknown", "w1", 4.0), ("t-0000:unknown", "w2", 3.0), ("t-0000:unknown#2", "w1", 2.0),
                   ("t-0000:unknown#3", "w1", 5.0), ("t-0001:unknown", "w1", 1.0)]  # fmt: skip


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


def _benchmark_parts(b: object) -> tuple[object, ...]:
    """What a table reads, but its source (the files below share the stem, so the ids are the same)."""
    return tuple(getattr(b, k) for k in ("dialogues", "candidates", "ratings", "skipped"))


def test_a_json_table_reads_as_the_same_rows_in_jsonl(tmp_path: Path) -> None:
    """A .json file is an array of objects (pandas' to_json(orient="records")) or JSON lines under that name; it
    was read as the USR file (no -b) or as CSV (with the column options). Reference: the same rows as JSONL."""
    import pandas as pd

    rows = [{"ctx": "a\nb", "resp": "c", "refs": ["r1"], "s1": 1}, {"ctx": "x", "resp": "d", "refs": [], "s1": 4}]
    m = ColumnMapping(response="resp", context="ctx", references=("refs",), ratings={"s1": "overall"})
    (tmp_path / "mine.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    want = load_table(tmp_path / "mine.jsonl", m)
    assert want.counts()["items"] == 2 and len(want.ratings) == 2
    pd.DataFrame(rows).to_json(tmp_path / "mine.json", orient="records", indent=2)
    assert _benchmark_parts(load_table(tmp_path / "mine.json", m)) == _benchmark_parts(want)
    pd.DataFrame(rows).to_json(tmp_path / "mine.json", orient="records", lines=True)
    assert _benchmark_parts(load_table(tmp_path / "mine.json", m)) == _benchmark_parts(want)


def test_json_table_errors_name_the_line_and_the_record(tmp_path: Path) -> None:
    p = tmp_path / "r.json"
    p.write_text('\n[\n {"response": "a", "q": 1},\n {"response": 3, "q": 2}\n]\n')
    with pytest.raises(InputError) as caught:
        load_table(p, ColumnMapping(response="response", ratings={"q": "quality"}))
    assert str(caught.value) == (f'{p}:4: field "response": expected a string, found a number '
                                 "(record 1 of the JSON array, counting from 0)")  # fmt: skip
    p.write_text('[{"response": "a", "q": 1},\n {"q": 2}]')
    with pytest.raises(InputError, match=r'r\.json:2: field "response": missing field; there are: q \(record 1 '):
        load_table(p, ColumnMapping(response="response", ratings={"q": "quality"}))
    p.write_text(json.dumps({"data": [{"response": "a"}]}, indent=2))  # one object, pretty-printed
    with pytest.raises(InputError) as caught:
        load_table(p, ColumnMapping(response="response"))
    assert str(caught.value) == (f"{p}: one JSON object over several lines, not a table: give an array of objects, "
                                 'one per response (pandas: to_json(orient="records")), or one object per line')
    # pandas' df.to_json(path) by default: "field response: expected a string, found dict"
    p.write_text(json.dumps({"response": {"0": "a", "1": "b"}, "q": {"0": 1, "1": 2}}))
    with pytest.raises(InputError) as caught:
        load_table(p, ColumnMapping(response="response"))
    assert str(caught.value) == (f"{p}: one JSON object of columns (pandas' to_json() by default), not a table of "
                                 'rows: save it with to_json(orient="records"), one object per response')
    p.write_text(json.dumps({"data": [{"response": "a"}]}))  # on one line: "field response: missing field"
    with pytest.raises(InputError, match=r"r\.json: one JSON object, not a table: give an array of objects"):
        load_table(p, ColumnMapping(response="response"))
    for empty in ("[]", "\n"):  # it said "only a header, or nothing", a CSV's case
        p.write_text(empty)
        with pytest.raises(InputError) as caught:
            load_table(p, ColumnMapping(response="response"))
        assert str(caught.value) == f"{p}: no rows to read (no record: an empty array, or nothing)"
    p.write_text('[{"response": "a"},\n {"response": "b", "response": "c"}]')
    with pytest.raises(InputError, match=r'r\.json:2: field "response": appears twice in one JSON object'):
        load_table(p, ColumnMapping(response="response"))


def test_table_bad_inputs(tmp_path: Path) -> None:
    p = tmp_path / "r.csv"
    p.write_text("context,response,system,ref,worker,q\nhi,yo,bot,x,w1,4\n")
    with pytest.raises(InputError, match=r'r\.csv:1: field "f": missing column'):
        load_table(p, LONG)
    p.write_text("context,response,system,ref,worker,q,f\nhi,yo,bot,x,w1,4,5\nhi,yo,bot,x,w1,N/A,5\n")
    # a crowd export's "N/A" for no rating: the error says how a table says it (it named only the value)
    with pytest.raises(InputError) as caught:
        load_table(p, LONG)
    assert str(caught.value) == (f"{p}:3: field \"q\": expected a number, found 'N/A': leave the cell empty where "
                                 "there is no rating (it is skipped and counted)")
    p.write_text('context,response,system,ref,worker,q,f\nhi,yo,bot,x,w1,"4,5",5\n')  # a European sheet's 4.5
    with pytest.raises(InputError) as caught:  # it said to leave the cell empty: the rating would be lost
        load_table(p, LONG)
    assert str(caught.value) == (f"{p}:2: field \"q\": expected a number, found '4,5': a decimal comma: write 4.5 "
                                 "(or export the sheet with a decimal point)")
    # both said to leave the cell empty, losing every rating in it: several annotators' ratings, a rating out of 5
    said = {"4;5;3": "several ratings in one cell? write them as a list, [4, 5, 3]: one per annotator",
            "4,5,3": "several ratings in one cell? write them as a list, [4, 5, 3]: one per annotator",
            "4/5": "a rating out of 5? write 4, and give its scale (--scale, e.g. 1-5)",
            # pandas' infinity (a mean of nothing): it said to make "inf" a label, --labels inf=3,...
            "inf": "leave the cell empty where there is no rating (it is skipped and counted)",
            "-Infinity": "leave the cell empty where there is no rating (it is skipped and counted)"}  # fmt: skip
    for cell, fix in said.items():
        p.write_text(f'context,response,system,ref,worker,q,f\nhi,yo,bot,x,w1,"{cell}",5\n')
        with pytest.raises(InputError) as caught:
            load_table(p, LONG)
        assert str(caught.value).endswith(f"found '{cell}': {fix}")
        assert str(caught.value).startswith(f"{p}:2: field \"q\": expected a ")  # "a number", or "a finite number"
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


@pytest.mark.parametrize(
    ("second_row", "column"),
    [
        ("d1,a2,hi,grass is green,fine,s1,tone", "fact"),  # one dialogue id, other grounding: not "context"
        ("d1,a1,hi,sky is blue,ok,s2,tone", "sys"),  # one item id, another system: not "response"
        ("d2,a1,hey,sky is blue,ok,s1,tone", "did"),  # one item id, another dialogue
        ("d1,a1,hi,sky is blue,ok,s1,mood", "task"),  # one item id, another tag
        ("d1,a1,hi,sky is blue,yo,s1,tone", "response"),
    ],
)
def test_a_row_differing_from_the_first_of_its_id_names_the_column_that_differs(
    tmp_path: Path, second_row: str, column: str
) -> None:
    """The error named the response (an item) or the context (a dialogue), whichever column differed."""
    p = tmp_path / "t.csv"
    p.write_text(f"did,id,context,fact,response,sys,task\nd1,a1,hi,sky is blue,ok,s1,tone\n{second_row}\n")
    m = ColumnMapping(response="response", context="context", dialogue_id="did", item_id="id", knowledge="fact",
                      system="sys", tags=("task",))  # fmt: skip
    with pytest.raises(InputError, match=rf't\.csv:3: field "{column}": .* differs from its first row \(line 2\)$'):
        load_table(p, m)


def test_a_rating_with_an_empty_annotator_cell_is_refused_and_a_row_rating_nothing_is_not(tmp_path: Path) -> None:
    """Line 3's rating was kept as annotator "" (with pseudonymise, a third annotator-003), silently: 3 ratings by
    2 annotators where the file names one."""
    p = tmp_path / "t.csv"
    p.write_text("context,response,q,worker\nhi,ok,3,w1\nhi,ok,4, \nhey,yo,2,w1\n")
    m = ColumnMapping(response="response", context="context", ratings={"q": "Overall"}, annotator="worker")
    with pytest.raises(InputError, match=r't\.csv:3: field "worker": empty annotator'):
        load_table(p, m)
    p.write_text("context,response,q,worker\nhi,ok,3,w1\nhi,ok,,\nhey,yo,2,w1\n")  # an unrated row: nothing to name
    b = load_table(p, m)
    assert [(r.annotator, r.value) for r in b.ratings] == [("w1", 3.0), ("w1", 2.0)]
    assert b.skipped == {"empty rating (q)": 1}


def test_mapping_file_errors_name_the_file_and_key(tmp_path: Path) -> None:
    p = tmp_path / "m.yaml"
    p.write_text("response: r\nratings:\n  q: [Overall]\n")
    with pytest.raises(InputError, match=r'm\.yaml:3: field "ratings\.q": expected one name, not a list: write O'):
        load_mapping(p)
    p.write_text("ratings: {q: Overall}\n")
    with pytest.raises(InputError, match=r'm\.yaml: field "response": missing field'):
        load_mapping(p)
    p.write_text("- response\n")
    with pytest.raises(InputError, match=r"m\.yaml: expected a YAML mapping"):
        load_mapping(p)
    p.write_text("context: c\nrespones: r\n")  # said 'field "response": Field required', not the misspelt key
    with pytest.raises(InputError, match=r'm\.yaml:2: field "respones": unknown field; did you mean "resp'):
        load_mapping(p)
    p.write_text('response: r\nturn_separator: ""\n')  # Python's "ValueError: empty separator" when read
    with pytest.raises(InputError, match=r'm\.yaml:2: field "turn_separator": is empty; give the text between turns'):
        load_mapping(p)
    p.write_text('response: r\ndelimiter: ";;"\n')  # was 'field "--delimiter"', an option not given, no file
    with pytest.raises(InputError, match=r'm\.yaml:2: field "delimiter": must be one character, not ";;"'):
        load_mapping(p)
    with pytest.raises(InputError, match=r'^field "delimiter": must be one character'):  # a mapping built in Python
        ColumnMapping(response="r", delimiter=";;")  # reaches csv.reader's TypeError otherwise
    # Several systems and a column without {system}: each row's one response was read as both systems' (6 items
    # from 3 rows, each text twice), and one rating column rated both.
    p.write_text("systems: [a, b]\nresponse: r\n")
    with pytest.raises(InputError, match=r'm\.yaml:2: field "response": "r" has no \{system\}: with 2 systems'):
        load_mapping(p)
    p.write_text("systems: [a, b]\nresponse: r_{system}\nratings:\n  q: Overall\n")
    with pytest.raises(InputError, match=r'm\.yaml:4: field "ratings\.q": "q" has no \{system\}'):
        load_mapping(p)
    p.write_text("systems: [a]\nresponse: r\nreferences: [ref]\n")  # one system: nothing read twice
    assert load_mapping(p).systems == ["a"]
    p.write_text("response: r\nsystems: [a, b\n")  # two lines: the error is on the last, not past it
    with pytest.raises(InputError, match=r"m\.yaml:2: not valid YAML"):
        load_mapping(p)


PLAIN = ColumnMapping(response="response", context="context", system="system", references=("reference",))


def test_jsonl_null_reads_as_an_empty_csv_cell(tmp_path: Path) -> None:
    csv_file = tmp_path / "t.csv"
    # no row names its system (beside a named one, an empty system is refused: see the test of it)
    csv_file.write_text("context,response,system,reference\n,Hello,,\nHi,Hey,,Hey there\n")
    j = tmp_path / "t.jsonl"
    rows = [
        {"context": None, "response": "Hello", "system": None, "reference": None},
        {"context": "Hi", "response": "Hey", "system": None, "reference": ["Hey there"]},
    ]
    j.write_text("".join(json.dumps(r) + "\n" for r in rows))
    from_csv, from_jsonl = load_table(csv_file, PLAIN), load_table(j, PLAIN)
    assert from_jsonl.candidates == from_csv.candidates and from_jsonl.dialogues == from_csv.dialogues
    first = from_jsonl.candidates[0]
    assert (first.system, first.references, from_jsonl.dialogues[first.dialogue_id].turns) == ("unknown", [], [])
    assert from_jsonl.candidates[1].references == ["Hey there"]


@pytest.mark.parametrize(
    ("refs", "field"), [(["a", None], "reference.1"), (["a", ""], "reference.1"), ([" ", "b"], "reference.0"),
                        ([None, ""], "reference.0"), ("['a', nan]", "reference.1")],
)  # fmt: skip
def test_a_blank_reference_in_a_list_is_refused(tmp_path: Path, refs: object, field: str) -> None:
    """A null or blank entry of a list of references was dropped, silently; a list of blanks only made the item one
    with no reference. An empty list (or cell) is still no reference."""
    j = tmp_path / "t.jsonl"
    rows = [{"context": "Hi", "response": "Hey", "system": None, "reference": []},
            {"context": "Yo", "response": "Sup", "system": None, "reference": refs}]  # fmt: skip
    j.write_text("".join(json.dumps(r) + "\n" for r in rows))
    with pytest.raises(InputError) as caught:
        load_table(j, PLAIN)
    assert str(caught.value) == (f'{j}:2: field "{field}": an empty reference in the list: remove it (an empty list '
                                 "is no reference)")  # fmt: skip


@pytest.mark.parametrize(
    ("facts", "field"), [(["a", None], "fact.1"), ([" ", "b"], "fact.0"), ("['a', nan]", "fact.1"),
                         ("['a', '']", "fact.1")],
)  # fmt: skip
def test_a_blank_fact_in_a_knowledge_list_is_refused_as_a_blank_reference_is(
    tmp_path: Path, facts: object, field: str
) -> None:
    """A null or blank entry of a list of knowledge was dropped, silently (a list of blanks only: a dialogue with no
    grounding), and pandas' "['a', nan]" was one fact, that text. An empty list or cell is still no knowledge."""
    j = tmp_path / "t.jsonl"
    rows = [{"context": "Hi", "response": "Hey", "fact": []}, {"context": "Yo", "response": "Sup", "fact": facts}]
    j.write_text("".join(json.dumps(r) + "\n" for r in rows))
    mapping = ColumnMapping(response="response", context="context", knowledge="fact")
    with pytest.raises(InputError) as caught:
        load_table(j, mapping)
    assert str(caught.value) == (f'{j}:2: field "{field}": an empty fact in the list of knowledge: remove it (an '
                                 "empty list is no knowledge)")  # fmt: skip
    j.write_text(json.dumps({"context": "Hi", "response": "Hey", "fact": "a\n\nb"}) + "\n")
    assert [d.knowledge for d in load_table(j, mapping).dialogues.values()] == [["a", "b"]]


def test_an_empty_turn_in_a_list_context_keeps_its_place(tmp_path: Path) -> None:
    """Speakers alternate back from the response, so a turn's place says who spoke it. An empty turn in a list
    was left out, and each earlier turn moved to the other speaker: "hello" below became the responder's own
    turn, and quality_dialogue scored the response 0 as a repeat of it. A blank line in a text cell is still the
    spacing between turns."""
    j = tmp_path / "t.jsonl"
    rows = [{"context": ["hello", "", "how are you"], "response": "hello"},
            {"context": "hello\n\nhow are you", "response": "hi"}]  # fmt: skip
    j.write_text("".join(json.dumps(r) + "\n" for r in rows))
    b = load_table(j, ColumnMapping(response="response", context="context"))
    listed, text = (b.dialogues[c.dialogue_id].turns for c in b.candidates)
    assert [(t.speaker, t.text) for t in listed] == [("A", "hello"), ("B", ""), ("A", "how are you")]  # B responds
    assert [(t.speaker, t.text) for t in text] == [("B", "hello"), ("A", "how are you")]


@pytest.mark.parametrize(
    ("column", "value", "found"),
    [("response", True, "true"), ("response", 42, "a number"), ("response", ["a", "b"], "a JSON array"),
     ("context", {"a": 1}, "a JSON object"), ("context", ["Hi", 3], "a number"), ("reference", 3.5, "a number"),
     ("reference", [{"r": 1}], "a JSON object"), ("system", True, "true"), ("system", [7], "a JSON array")],
)  # fmt: skip
def test_a_non_string_where_text_is_expected_is_one_error(
    tmp_path: Path, column: str, value: object, found: str
) -> None:
    j = tmp_path / "t.jsonl"
    good = {"context": "Hi", "response": "Hey", "system": "a", "reference": "Hello"}
    j.write_text(json.dumps(good) + "\n" + json.dumps({**good, column: value}) + "\n")
    with pytest.raises(InputError) as caught:
        load_table(j, PLAIN)
    assert str(caught.value) == f'{j}:2: field "{column}": expected a string, found {found}'


def test_a_system_given_as_a_number_is_named_as_written_as_ids_and_annotators_are(tmp_path: Path) -> None:
    """`"system": 7` in a JSONL table (and a DataFrame's int column in the API) was "expected a string, found int",
    where an item id, dialogue id, annotator or tag given as a number was taken as written."""
    j = tmp_path / "t.jsonl"
    j.write_text("".join(json.dumps({"context": "Hi", "response": r, "system": s}) + "\n"
                         for r, s in [("Hey", 7), ("Yo", 2.5), ("Hm", 7)]))  # fmt: skip
    systems = [c.system for c in load_table(j, ColumnMapping(response="response", context="context",
                                                             system="system")).candidates]  # fmt: skip
    assert systems == ["7", "2.5", "7"]  # 7 beside "7" is refused (test_a_json_id_written_two_ways_is_refused)


def test_an_empty_or_blank_response_is_refused_naming_the_first_row(tmp_path: Path) -> None:
    p = tmp_path / "t.csv"
    p.write_text("context,response\nHi,Hello\nYo,\nSup,   \nHm,ok\n")
    with pytest.raises(InputError) as caught:
        load_table(p, ColumnMapping(response="response", context="context"))
    assert str(caught.value) == f'{p}:3: field "response": no value (2 such rows)'
    j = tmp_path / "t.jsonl"
    j.write_text('{"context": "Hi", "response": "Hello"}\n{"context": "Yo", "response": null}\n')
    with pytest.raises(InputError) as caught:
        load_table(j, ColumnMapping(response="response", context="context"))
    assert str(caught.value) == f'{j}:2: field "response": no value (1 such row)'
    wide = tmp_path / "w.csv"  # several responses per row: each system's column is checked
    wide.write_text("q,r_a,r_b\nhello?,hi,yo\nbye?,ciao,\n")
    with pytest.raises(InputError, match=r'w\.csv:3: field "r_b": no value \(1 such row\)'):
        load_table(wide, ColumnMapping(response="r_{system}", context="q", systems=("a", "b")))
    sheet = tmp_path / "s.csv"  # a spreadsheet's export ends in rows of empty cells: the message said only "no value"
    sheet.write_text("context;response;\r\nHi;Hello;\r\n;;\r\n; ;\r\n")
    with pytest.raises(InputError) as caught:
        load_table(sheet, ColumnMapping(response="response", context="context", delimiter=";"))
    assert str(caught.value) == (f"{sheet}:3: field \"response\": no value (2 such rows); the row is empty in every "
                                 "column (a sheet's trailing rows?): delete it")


def test_empty_responses_are_kept_when_the_mapping_says_so(tmp_path: Path) -> None:
    # as in the LMStyle MTurk export, where a system answered nothing and people rated that
    p = tmp_path / "m.yaml"
    p.write_text("response: r_{system}\ncontext: q\nsystems: [a, b]\nratings: {\"s_{system}\": Overall}\n"
                 "keep_empty_responses: true\n")  # fmt: skip
    wide = tmp_path / "w.csv"
    wide.write_text("q,r_a,r_b,s_a,s_b\nhello?,hi,yo,60,40\nbye?,ciao,,70,0\n")
    b = load_table(wide, load_mapping(p).to_mapping())
    assert [(c.id, c.text) for c in b.candidates] == [("w-0000:a", "hi"), ("w-0000:b", "yo"), ("w-0001:a", "ciao"),
                                                      ("w-0001:b", "")]  # fmt: skip
    assert [(r.item_id, r.value) for r in b.ratings][-1] == ("w-0001:b", 0.0)
    j = tmp_path / "t.jsonl"  # a response that is not a string is still an error
    j.write_text('{"response": ""}\n{"response": 0}\n')
    with pytest.raises(InputError, match=r't\.jsonl:2: field "response": expected a string, found a number'):
        load_table(j, ColumnMapping(response="response", keep_empty_responses=True))


def test_a_column_named_twice_in_the_header_is_refused(tmp_path: Path) -> None:
    p = tmp_path / "t.csv"
    p.write_text("context,response,response\nHi,Hello,one two three four\n")
    with pytest.raises(InputError) as caught:
        load_table(p, ColumnMapping(response="response", context="context"))
    assert str(caught.value) == f'{p}:1: field "response": appears twice in the header (columns 2 and 3)'
    p.write_text("context,response,notes,notes\nHi,Hello,a,b\n")  # even a column the mapping does not read
    with pytest.raises(InputError, match=r't\.csv:1: field "notes": appears twice in the header \(columns 3 and 4\)'):
        load_table(p, ColumnMapping(response="response", context="context"))


def test_ratings_must_lie_on_a_well_formed_scale(tmp_path: Path) -> None:
    p = tmp_path / "t.csv"
    p.write_text("response,rating\nHello there friend,1\nHey,9\nOk,5\n")
    with pytest.raises(InputError) as caught:
        load_table(p, ColumnMapping(response="response", ratings={"rating": "Overall"}, scale="1-5"))
    assert str(caught.value) == f'{p}:3: field "rating": 9 is outside the scale 1-5'
    p.write_text("response,rating\nHello there friend,-1\nHey,2.5\nOk,5\n")  # the ends are on the scale
    b = load_table(p, ColumnMapping(response="response", ratings={"rating": "Overall"}, scale="-1-5"))
    assert [r.value for r in b.ratings] == [-1.0, 2.5, 5.0] and b.dimensions() == {"Overall": "-1-5"}
    with pytest.raises(InputError, match=r't\.csv:2: field "rating": -1 is outside the scale 0-2'):
        load_table(p, ColumnMapping(response="response", ratings={"rating": "q"}, scale="1-5", scales={"q": "0-2"}))
    for bad in ("abc", "5-1", "3-3", "1-"):
        with pytest.raises(InputError) as caught:
            ColumnMapping(response="response", scale=bad)
        assert str(caught.value) == f'field "--scale": expected LOW-HIGH with LOW below HIGH, e.g. 1-5; found "{bad}"'
    with pytest.raises(InputError, match=r'field "scales\.q": expected LOW-HIGH'):
        ColumnMapping(response="response", scales={"q": "high"})


def test_a_mapping_reading_the_response_as_its_own_reference_names_the_line(tmp_path: Path) -> None:
    """``references: [gold, reply]`` with ``response: reply`` scored each response against itself (BLEU 1.0)."""
    p = tmp_path / "m.yaml"
    p.write_text("response: reply\ncontext: history\nreferences: [gold, reply]\n")
    with pytest.raises(InputError) as caught:
        load_mapping(p)
    assert str(caught.value) == (f'{p}:3: field "references": column "reply" is the response column: each response '
                                 "would be its own reference")  # fmt: skip
    with pytest.raises(InputError, match='field "knowledge": column "reply" is the response column'):
        ColumnMapping(response="reply", knowledge="reply")  # the library's own door
    ColumnMapping(response="reply", system="reply", item_id="reply")  # other roles may read it


def test_mapping_file_unknown_keys_and_bad_scales_name_the_line(tmp_path: Path) -> None:
    p = tmp_path / "m.yaml"
    p.write_text("response: response\ncontxt: context\n")
    with pytest.raises(InputError) as caught:
        load_mapping(p)
    assert str(caught.value) == f'{p}:2: field "contxt": unknown field; did you mean "context"?'
    p.write_text("response: response\n\ncolour: red\n")
    with pytest.raises(InputError, match=r'm\.yaml:3: field "colour": unknown field; the fields: name, response,'):
        load_mapping(p)
    p.write_text("response: response\nratings: {rating: Overall}\nscale: 5-1\n")
    with pytest.raises(InputError) as caught:
        load_mapping(p)
    assert str(caught.value) == (
        f'{p}:3: field "scale": expected LOW-HIGH with LOW below HIGH, e.g. 1-5; found "5-1"'
    )
    p.write_text("response: response\nscale: 1-5\nscales:\n  Overall: 1-5\n  fluency: abc\n")
    with pytest.raises(InputError, match=r'm\.yaml:5: field "scales\.fluency": expected LOW-HIGH'):
        load_mapping(p)


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        # never applied: the dimension is Overall
        ("ratings: {q: Overall}\nscales: {Overal: 1-3}\n",
         ':4: field "scales.Overal": no rating column gives the dimension "Overal"; did you mean "Overall"?'),
        ("ratings: {q: ''}\n", ':3: field "ratings.q": a rating column needs a dimension name'),  # dimension ""
        # both were taken: ratings on the dimension "", and by the annotator "" (no --rating-col takes either)
        ("annotator_columns: {r1: alice}\ndimension: ''\n", ':4: field "dimension": a rating column needs a dimension '
                                                              "name"),
        ("annotator_columns:\n  r1: alice\n  r2: ' '\n",
         ':5: field "annotator_columns.r2": an annotator column needs an annotator name'),
        # each row rated its item twice: 'annotator "annotator" rates item ... twice', with no annotator column
        ("ratings:\n  q1: Overall\n  q2: Fluency\n  q3: Overall\n",
         ':6: field "ratings.q3": columns "q1" and "q3" both give the dimension "Overall": one column per dimension '
         "(one column per annotator: a mapping file's annotator_columns, with dimension: Overall)"),
        # each row rated its item twice on Overall, once by an unnamed annotator: 4 items read as 8 ratings by 2 people
        ("ratings: {q: Overall}\nannotator_columns: {q: alice}\ndimension: Overall\n",
         ':4: field "annotator_columns.q": the column "q" is also under ratings: one column is read once, as an '
         "annotator's (here) or as a dimension's (there)"),
        ("ratings:\n  mean: Overall\nannotator_columns: {r1: alice, r2: bob}\ndimension: Overall\n",
         ':4: field "ratings.mean": the column "mean" under ratings gives the dimension "Overall" too, which the '
         "annotators' columns rate: each item would be rated on it once more, by an unnamed annotator; leave it out, "
         "or give it another dimension"),
        # a column named "" or " ": "missing column in the header; there are: ..." when the table was read, no field
        ("dialogue_id: ''\n", ':3: field "dialogue_id": is empty: give the name of a column of the table'),
        ("system: ' '\n", ':3: field "system": is empty: give the name of a column of the table'),
        ("references: [gold, '']\n", ':3: field "references": is empty: give the name of a column of the table'),
        # a rating column "": in a CSV "missing column in the header; the header has "" (a space in a column name
        # counts)" with no field, in a JSONL file with a key "" read (--rating-col =Fl is refused)
        ("ratings:\n  q: Overall\n  '': Fl\n", ':5: field "ratings": is empty: give the name of a column of the table'),
        ("annotator_columns: {r1: alice, ' ': bob}\n",
         ':3: field "annotator_columns": is empty: give the name of a column of the table'),
        ("references: [g, g]\n", ':3: field "references": column "g" is given twice'),  # --reference-col refuses it
        ("tags: [task, task]\n", ':3: field "tags": column "task" is given twice'),
        # pydantic's 'Input should be a valid list': a list is written [gold], as the mapping's example shows
        ("references: gold\n", ':3: field "references": expected a list of column names: write [gold]'),
        ("tags: task, topic\n", ':3: field "tags": expected a list of column names: write [task, topic]'),
        ("systems: a\n", ':3: field "systems": expected a list of system names: write [a]'),
        ("references: 3\n", ':3: field "references": expected a list of column names, e.g. [gold]'),
        # each was read by nothing, silently
        ("scale: 1-5\n", ':3: field "scale": scale is the scale of the ratings, and no ratings or annotator_columns '
                         "is given: add one, or leave scale out"),
        ("annotator: worker\n", ':3: field "annotator": annotator names the annotator of each rating, and no '
                                "ratings is given: add one, or leave annotator out"),
        ("dimension: Overall\nratings: {q: Overall}\n",
         ':3: field "dimension": dimension names the dimension of the annotators\' columns, and no annotator_columns '
         "is given: add one, or leave dimension out"),
        ("pseudonymise: true\n", ':3: field "pseudonymise": pseudonymise renames the annotators, and no annotator '
                                 "or annotator_columns is given: add one, or leave pseudonymise out"),
        # beside systems both were read by nothing: the column "model" need not even exist, the ids were made
        ("system: model\nsystems: [a, b]\n", ':3: field "system": with systems, the system of each response is its '
                                             'name in systems (a, b), and no column is read: leave system out'),
        ("item_id: id\nsystems: [a]\n", ':3: field "item_id": with systems, each row holds one response per system '
                                        "and its id is <dialogue>:<system>; no column is read: leave item_id out (give "
                                        "dialogue_id to name the rows' dialogues)"),
    ],
)  # fmt: skip
def test_a_mapping_file_names_each_column_and_dimension_once(tmp_path: Path, extra: str, message: str) -> None:
    """Each was taken without a word (``systems: [x, x]``, below, too), as ``--reference-col g --reference-col g``
    is not."""
    p = tmp_path / "m.yaml"
    p.write_text("response: reply\ncontext: history\n" + extra)
    with pytest.raises(InputError) as caught:
        load_mapping(p)
    assert str(caught.value) == f"{p}{message}"
    p.write_text("response: 'reply_{system}'\nsystems: [x, x]\n")
    with pytest.raises(InputError, match=r'm\.yaml:2: field "systems": system "x" is given twice'):
        load_mapping(p)
    p.write_text("response: reply\nratings:\n  q: Overall\n  q: Fluency\n")  # PyYAML kept Fluency, silently
    with pytest.raises(InputError, match=r'm\.yaml:4: field "ratings\.q": is given twice in one mapping \(first on'):
        load_mapping(p)
    p.write_text("response: reply\nturn_separator: '|'\n")  # neither context nor knowledge: nothing to split
    with pytest.raises(InputError, match=r'm\.yaml:2: field "turn_separator": turn_separator splits the context'):
        load_mapping(p)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        # each said pydantic's "Input should be a valid dictionary / string / number / boolean"; the forms are
        # the mapping file's example in docs/own_data.md, and the --rating-col / --labels forms written as YAML
        ("response: r\nratings: q\n", ':2: field "ratings": expected pairs "column: dimension", e.g. {q: Overall}'),
        ("response: r\nratings: q=Overall, f=fluency\n",
         ':2: field "ratings": expected pairs "column: dimension": write {q: Overall, f: fluency}'),
        ("response: r\nannotator_columns: [r1, r2]\n",
         ':2: field "annotator_columns": expected pairs "column: annotator", e.g. {r1: alice, r2: bob}'),
        ("response: r\nratings: {q: O}\nlabels: Poor=1,Good=3\n",
         ':3: field "labels": expected pairs "word: number": write {Poor: 1, Good: 3}'),
        ("response: r\nratings: {q: O}\nlabels: {Good: x}\n", ':3: field "labels.Good": expected the number of '
                                                               '"Good", e.g. Good: 3'),
        ("response: [a]\n", ':1: field "response": expected one name, not a list: write a'),
        ("response: [a, b]\n", ':1: field "response": expected one name, not a list'),
        ("response: r\nratings:\n  q: [a]\n", ':3: field "ratings.q": expected one name, not a list: write a'),
        ("response: r\ncontext: {a: b}\n", ':2: field "context": expected one name, not pairs'),
        ("response:\n", ':1: field "response": is empty: give a name'),
        # a CSV column named 5 (YAML reads 5 as a number); the key's error was field "ratings.1.[key]"
        ("response: 5\n", ':1: field "response": expected a name, not a number: write it in quotes, "5"'),
        ("response: r\nratings: {1: Overall}\n",
         ':2: field "ratings": expected a name, not a number: write it in quotes, "1"'),
        # YAML 1.1 reads yes and no as true and false: the error was field "labels.1.[key]"
        ("response: r\nratings: {q: O}\nlabels: {yes: 1, no: 0}\n",
         ':3: field "labels": expected a name, not true or false (YAML reads yes, no, on, off, true and false so): '
         'write it in quotes, e.g. "yes"'),
        # a block over several lines: the line of the key itself, where it was the line of "labels:" (or "ratings:")
        ("response: r\nratings: {q: O}\nlabels:\n  Poor: 1\n  yes: 2\n",
         ':5: field "labels": expected a name, not true or false (YAML reads yes, no, on, off, true and false so): '
         'write it in quotes, e.g. "yes"'),
        ("response: r\nratings:\n  q: Overall\n  3: Fluency\n",
         ':4: field "ratings": expected a name, not a number: write it in quotes, "3"'),
        ("response: r\nratings: {q: Overall,\n  3: Fluency}\n",
         ':3: field "ratings": expected a name, not a number: write it in quotes, "3"'),
        ("response: r\nratings: {q: O}\nlabels:\n  Poor: 1\n  ~: 2\n", ':5: field "labels": is empty: give a name'),
        ("response: r\nratings: {q: O}\nscale: [1, 5]\n",
         ':3: field "scale": expected LOW-HIGH with LOW below HIGH, e.g. 1-5; found [1, 5]'),
        ("response: r\nannotator_columns: {a: x}\npseudonymise: maybe\n",
         ':3: field "pseudonymise": expected true or false'),
    ],
)  # fmt: skip
def test_a_mapping_key_of_the_wrong_kind_says_how_to_write_it(tmp_path: Path, text: str, message: str) -> None:
    p = tmp_path / "m.yaml"
    p.write_text(text)
    with pytest.raises(InputError) as caught:
        load_mapping(p)
    assert str(caught.value) == f"{p}{message}"


def test_named_columns_the_mapping_does_not_read_get_a_warning(tmp_path: Path) -> None:
    p = tmp_path / "t.csv"
    p.write_text("context,response,reference,system\nHi,Hello,Hey,a\n")
    b = load_table(p, ColumnMapping(response="response", context="context"))
    assert b.warnings == [
        'the file has a column "reference" that is not read: pass --reference-col reference, '
        'or name it under "references" in a mapping file',
        'the file has a column "system" that is not read: pass --system-col system, '
        'or name it under "system" in a mapping file',
    ]
    assert load_table(p, PLAIN).warnings == []
    # A context column not read made every row one dialogue with an empty context ("contexts 1"), silently
    p.write_text("context,response,knowledge\nHi,Hello,facts\n")
    assert load_table(p, ColumnMapping(response="response")).warnings == [
        'the file has a column "context" that is not read: pass --context-col context, '
        'or name it under "context" in a mapping file',
        'the file has a column "knowledge" that is not read: name it under "knowledge" in a mapping file',
    ]


def test_a_line_break_written_as_backslash_n_gets_a_warning(tmp_path: Path) -> None:
    """A JSON dump writes a line break as the two characters \\n: the context was read as one turn, silently (a
    metric of the last turn then read the whole conversation). A real line break, or the two characters as the
    separator, get no warning."""
    p = tmp_path / "t.csv"
    p.write_text('context,response\nHi!\\nHow are you?,Fine\n"Hi!\nHow are you?",Good\nYo,Sup\n')
    b = load_table(p, ColumnMapping(response="response", context="context"))
    assert [len(d.turns) for d in b.dialogues.values()] == [1, 2, 1]
    assert b.warnings == ['1 of 3 contexts holds "\\n" as text (a backslash and an n), not as a line break, so no '
                          "turn is split there: if it separates turns, pass --turn-sep '\\\\n' (in a mapping "
                          "file, turn_separator: '\\n')"]
    b = load_table(p, ColumnMapping(response="response", context="context", turn_separator="\\n"))
    assert [len(d.turns) for d in b.dialogues.values()] == [2, 1, 1] and b.warnings == []


def test_a_context_in_the_messages_form_of_chat_logs_is_read_as_its_turns(tmp_path: Path) -> None:
    """[{"role": "user", "content": "Hi"}, ...] was 'expected a string, found dict'. A system prompt is no turn (the
    skip is counted, once per context); roles that do not alternate, or a context that ends with the assistant's
    message (the response would answer the bot itself), are refused at the message."""
    j = tmp_path / "chats.jsonl"
    chat = [{"role": "system", "content": "Be kind."}, {"role": "user", "content": "Hi!"},
            {"role": "assistant", "content": "Hello."}, {"role": "user", "content": "How are you?"}]  # fmt: skip
    rows = [{"messages": chat, "reply": "Fine.", "bot": "a"}, {"messages": chat, "reply": "Meh.", "bot": "b"}]
    j.write_text("".join(json.dumps(r) + "\n" for r in rows))
    b = load_table(j, ColumnMapping(response="reply", context="messages", system="bot"))
    (dialogue,) = b.dialogues.values()
    assert [(t.speaker, t.text) for t in dialogue.turns] == [("A", "Hi!"), ("B", "Hello."), ("A", "How are you?")]
    assert [c.turn_index for c in b.candidates] == [3, 3] and dict(b.skipped) == {SYSTEM_MESSAGE: 1}
    # OpenAI's newer models take the prompt as the "developer" role's, and a log may capitalise its roles: each such
    # prompt was the user's first turn, silently
    for prompt in ("developer", "System"):
        j.write_text(json.dumps({"messages": [{"role": prompt, "content": "Be kind."}, *chat[1:]], "reply": "Ok."}))
        (dialogue,) = load_table(j, ColumnMapping(response="reply", context="messages")).dialogues.values()
        assert [t.text for t in dialogue.turns] == ["Hi!", "Hello.", "How are you?"], prompt
    bad = {"two": [chat[1], chat[1]], "ends": chat[:3], "keys": [{"role": "user", "text": "Hi"}],
           "image": [{"role": "user", "content": [{"type": "text", "text": "Look"}, {"type": "image_url"}]}],
           "part": [{"role": "user", "content": ["Hi"]}],
           "no role": [{"role": None, "content": "Hi"}],
           "tool": [chat[1], {"role": "tool", "content": "sunny"}],
           "tool call": [chat[1], {"role": "assistant", "content": None, "tool_calls": [{"id": "c1"}]}]}  # fmt: skip
    said = {"two": 'field "messages.1": two "user" messages in a row: the turns of a context alternate between two '
                   "speakers; join them into one message",
            "ends": 'field "messages.2": the last message is the assistant\'s: the response answers the last turn, so '
                    "the context ends with the user's; to score that message, name this column as the response "
                    "column too",
            "keys": 'field "messages.0": expected a message {"role": ..., "content": ...}, found the keys role, text',
            "image": 'field "messages.0.content.1": a part of type "image_url": only text is scored; leave it out, '
                     "or say what it showed in a text part",
            "part": 'field "messages.0.content.0": a part that is not {"type": "text", "text": ...}: only text is '
                    "scored; leave it out, or say what it showed in a text part",
            "no role": 'field "messages.0.role": no role: a message says who wrote it (user, assistant, system)',
            # a tool's output was a turn of the user's, and a tool call an empty turn of the assistant's, silently
            "tool": 'field "messages.1": a "tool" message (a tool\'s output) is no turn of either speaker: leave tool '
                    "calls and their outputs out, keeping what the assistant said to the user",
            "tool call": 'field "messages.1": a tool call is no turn of either speaker: leave tool calls and their '
                         "outputs out, keeping what the assistant said to the user"}
    for case, messages in bad.items():
        j.write_text(json.dumps({"messages": messages, "reply": "Fine."}) + "\n")
        with pytest.raises(InputError) as caught:
            load_table(j, ColumnMapping(response="reply", context="messages"))
        assert str(caught.value) == f"{j}:1: {said[case]}"


def test_a_chat_log_column_named_as_context_and_response_scores_its_last_message(tmp_path: Path) -> None:
    """A whole conversation as messages, the reply the last (the assistant's), had no reading: the context refused
    its last message ("the last message is the assistant's"), and naming the column as the response too was
    refused before any row ("each response would be its own context"). Now that names the split: the last
    message is the response, the messages before it the context; a cell that is not such a log is refused."""
    j = tmp_path / "chats.jsonl"
    chat = [{"role": "system", "content": "Be kind."}, {"role": "user", "content": "Hi!"},
            {"role": "assistant", "content": "Hello."}, {"role": "user", "content": "How are you?"},
            {"role": "assistant", "content": [{"type": "text", "text": "Fine."}]}]  # fmt: skip
    j.write_text(json.dumps({"messages": chat}) + "\n" + json.dumps({"messages": chat[:3]}) + "\n")
    split = ColumnMapping(response="messages", context="messages")
    b = load_table(j, split)
    assert [(c.text, c.turn_index) for c in b.candidates] == [("Fine.", 3), ("Hello.", 1)]
    assert [[t.text for t in d.turns] for d in b.dialogues.values()] == [["Hi!", "Hello.", "How are you?"], ["Hi!"]]
    assert dict(b.skipped) == {SYSTEM_MESSAGE: 2}
    bad = {"text": "Hi!", "user last": chat[:4], "empty reply": [chat[1], {"role": "assistant", "content": " "}],
           "null": None, "system only": chat[:1]}  # fmt: skip
    said = {"text": 'field "messages": the context column is the response column, which reads a chat log\'s messages '
                    "(the last, the assistant's, the reply scored); this cell is a str, not messages: give the "
                    "response in a column of its own",
            "user last": 'field "messages.3": the last message is the "user" role\'s: the column is the response '
                         "column too, so its last message is the reply scored, the assistant's",
            "empty reply": 'field "messages.1.content": no value: the last message, the reply scored, is empty',
            "null": 'field "messages": the context column is the response column, which reads a chat log\'s '
                    "messages (the last, the assistant's, the reply scored); this cell is empty: give the response "
                    "in a column of its own",
            "system only": 'field "messages": no message but a system prompt: the column is the response column '
                           "too, so its last message is the reply scored, the assistant's"}  # fmt: skip
    for case, messages in bad.items():
        j.write_text(json.dumps({"messages": messages}) + "\n")
        with pytest.raises(InputError) as caught:
            load_table(j, split)
        assert str(caught.value) == f"{j}:1: {said[case]}", case
    j.write_text(json.dumps({"messages": bad["empty reply"]}) + "\n")
    kept = load_table(j, ColumnMapping(response="messages", context="messages", keep_empty_responses=True))
    assert [c.text for c in kept.candidates] == [""]  # as an empty response cell is kept
    # ShareGPT's form ({"from": "human"/"gpt", "value": ...}) was "expected a message {"role": ..., "content": ...}"
    share = [{"from": "system", "value": "Be kind."}, {"from": "human", "value": "Hi!"},
             {"from": "gpt", "value": "Yo."}]  # fmt: skip
    j.write_text(json.dumps({"conversations": share}) + "\n")
    b = load_table(j, ColumnMapping(response="conversations", context="conversations"))
    assert [(c.text, c.turn_index) for c in b.candidates] == [("Yo.", 1)] and dict(b.skipped) == {SYSTEM_MESSAGE: 1}
    j.write_text(json.dumps({"conversations": [{"from": ["human"], "value": "Hi!"}]}) + "\n")
    with pytest.raises(InputError, match=r"conversations\.0\.role"):  # a speaker that is no name: located, no traceback
        load_table(j, ColumnMapping(response="conversations", context="conversations"))
    # the logs in a CSV, as pandas writes a column of message lists (each list's repr): read as the logs, and said
    import pandas as pd

    c = tmp_path / "chats.csv"
    pd.DataFrame({"messages": [chat, chat[:3]]}).to_csv(c, index=False)
    from_csv = load_table(c, split)
    assert [(x.text, x.turn_index) for x in from_csv.candidates] == [("Fine.", 3), ("Hello.", 1)]
    assert from_csv.warnings == ['2 cells of the column "messages" held a list written as text (as pandas writes a '
                                 "list column to CSV): read as the list"]
    pd.DataFrame({"messages": [chat[:4]], "reply": ["Fine."]}).to_csv(c, index=False)  # the context only: it was
    (d,) = load_table(c, ColumnMapping(response="reply", context="messages")).dialogues.values()  # one turn, "[{'ro..."
    assert [t.text for t in d.turns] == ["Hi!", "Hello.", "How are you?"]


def test_a_message_content_in_parts_is_read_as_the_text_of_its_parts(tmp_path: Path) -> None:
    """The parts form of chat APIs ([{"type": "text", "text": ...}], OpenAI's and Anthropic's) was 'expected a string,
    found list'. Text parts are joined by a line break; a part that is not text is refused (the test above)."""
    j = tmp_path / "chats.jsonl"
    parts = [{"type": "text", "text": " Hi! "}, {"type": "input_text", "text": "Anyone there?"}]
    said = [{"type": "output_text", "text": "Yes."}]
    chat = [{"role": "user", "content": parts}, {"role": "assistant", "content": said}]
    chat.append({"role": "user", "content": "K"})
    j.write_text(json.dumps({"messages": chat, "reply": "Fine."}) + "\n")
    b = load_table(j, ColumnMapping(response="reply", context="messages"))
    (dialogue,) = b.dialogues.values()
    assert [t.text for t in dialogue.turns] == ["Hi!\nAnyone there?", "Yes.", "K"]


def test_systems_that_differ_only_in_case_get_a_warning(tmp_path: Path) -> None:
    """"MyBot" and "mybot" were two systems, silently: every system-level figure counted one system twice."""
    p = tmp_path / "t.csv"
    p.write_text("context,response,system\nHi,Yo,MyBot\nHi,Sup,mybot\nHey,Ho,other\n")
    b = load_table(p, ColumnMapping(response="response", context="context", system="system"))
    assert sorted({c.system for c in b.candidates}) == ["MyBot", "mybot", "other"]  # kept apart: said, not merged
    assert b.warnings == ['the systems "MyBot" and "mybot" differ only in letter case: one system written two ways? '
                          "(kept apart)"]


def test_a_jsonl_table_with_a_key_given_twice_is_refused(tmp_path: Path) -> None:
    j = tmp_path / "t.jsonl"
    j.write_text('{"context": "Hi", "response": "Hello"}\n{"context": "Yo", "response": "x", "response": "y"}\n')
    with pytest.raises(InputError) as caught:
        load_table(j, ColumnMapping(response="response", context="context"))
    assert str(caught.value) == (
        f'{j}:2: field "response": appears twice in one JSON object (only the last value would be kept)'
    )


def _write_records(folder: Path, *texts: str) -> None:
    """Write a record folder: one dialogue with an empty turn, a zero-turn one, and a candidate per text."""
    dialogues = [Dialogue(id="d1", turns=[Turn(speaker="A", text="Hi"), Turn(speaker="B", text=""),
                                          Turn(speaker="A", text="Still there?")]),
                 Dialogue(id="d0", turns=[])]  # fmt: skip
    write_jsonl(folder / "dialogues.jsonl", dialogues)
    cands = [Candidate(id=f"c{i}", dialogue_id="d1" if i % 2 else "d0", turn_index=3 if i % 2 else 0, system="s",
                       text=text) for i, text in enumerate(texts, 1)]  # fmt: skip
    write_jsonl(folder / "candidates.jsonl", cands)
    (folder / "ratings.jsonl").write_text("")


def test_record_files_are_read_as_written_empty_texts_turns_and_dialogues_included(tmp_path: Path) -> None:
    # dialeval writes them after a mapping's decisions: `data export lmstyle-mturk` keeps two empty answers that
    # people rated; published logs (DSTC9) have turns where the user sent nothing; a zero-turn dialogue opens
    _write_records(tmp_path, "Yes", "", "Hello", " \t ")
    bench = load_records(tmp_path)
    assert [len(d.turns) for d in bench.dialogues.values()] == [3, 0] and bench.dialogues["d1"].turns[1].text == ""
    assert [c.text for c in bench.candidates] == ["Yes", "", "Hello", " \t "]
    same = read_records(tmp_path / "dialogues.jsonl", tmp_path / "candidates.jsonl")
    assert [c.text for c in same.candidates] == [c.text for c in bench.candidates]


@pytest.mark.parametrize(("refs", "field"), [(["a", ""], "references.1"), ([" ", "\t"], "references.0")])
def test_a_blank_reference_in_a_candidate_record_is_refused(tmp_path: Path, refs: list[str], field: str) -> None:
    """It was kept: bleu and rouge scored the response against nothing, 0.0, and an item whose every reference was
    blank passed as one with a reference. A candidate with no reference is written ``"references": []``."""
    _write_records(tmp_path, "Yes", "Hello")
    cands = (tmp_path / "candidates.jsonl").read_text().splitlines()
    cands[1] = json.dumps({**json.loads(cands[1]), "references": refs})
    (tmp_path / "candidates.jsonl").write_text("\n".join(cands) + "\n")
    with pytest.raises(InputError) as caught:
        load_records(tmp_path)
    assert str(caught.value) == (f'{tmp_path / "candidates.jsonl"}:2: field "{field}": an empty reference: remove it '
                                 "(a candidate with no reference has references [])")  # fmt: skip


def test_a_repeated_row_is_counted_not_merged_silently(tmp_path: Path) -> None:
    """Two rows with the same context, system and response are one item (the long form gives a row per annotator),
    but a row that added neither an item nor a rating vanished unsaid: 3 rows, 2 items, "skipped: nothing"."""
    from dialeval.data.generic import REPEATED_ROW

    p = tmp_path / "t.csv"
    p.write_text("context,response,system\nhi,hello,a\nhi,hello,a\nhi,yo,a\n")
    b = load_table(p, ColumnMapping(response="response", context="context", system="system"))
    assert len(b.candidates) == 2 and b.skipped == {REPEATED_ROW: 1}
    p.write_text("context,response,worker,q\nhi,hello,w1,3\nhi,hello,w2,4\nhi,hello,w3,\n")  # the long form
    b = load_table(p, ColumnMapping(response="response", context="context", annotator="worker", ratings={"q": "q"}))
    assert len(b.candidates) == 1 and len(b.ratings) == 2 and b.skipped == {"empty rating (q)": 1}


def test_half_of_a_surrogate_pair_in_a_yaml_file_names_its_key_and_line(tmp_path: Path) -> None:
    """YAML spells "\\ud800" as JSON does: a mapping's name holding one was read, and data import then failed
    when it wrote the records (pydantic's UnicodeEncodeError traceback); a protocol file likewise."""
    from dialeval.jsonl import read_yaml_model
    from dialeval.schema import Rating

    p = tmp_path / "m.yaml"
    p.write_text('response: r\nratings:\n  q: "Over\\udc00all"\n', encoding="utf-8")
    with pytest.raises(InputError) as caught:
        load_mapping(p)
    assert str(caught.value) == (f'{p}:3: field "ratings.q": \\udc00 is half of a UTF-16 surrogate pair, no '
                                 "character (text must be valid Unicode)")
    p.write_text('item_id: x\ndimension: "O\\ud800"\nannotator: a\nvalue: 1\n', encoding="utf-8")
    with pytest.raises(InputError, match=r'field "dimension": \\ud800 is half'):
        read_yaml_model(p, Rating, extra="human")


def test_a_table_named_in_capitals_is_read_by_its_kind(tmp_path: Path) -> None:
    """CHATS.JSONL (as Windows tools name files) was read as a CSV: 'missing column in the header'; a .TSV.GZ with
    commas, and is_table said False, so the Python API refused the path."""
    j = tmp_path / "CHATS.JSONL"
    j.write_text('{"context": "Hi", "response": "Hello"}\n')
    t = tmp_path / "T.TSV.GZ"
    t.write_bytes(gzip.compress(b"context\tresponse\nHi\tYo\n"))
    for path in (j, t):
        assert is_table(path)
        assert [c.text for c in load_table(path, ColumnMapping(response="response", context="context")).candidates] \
            in (["Hello"], ["Yo"])  # fmt: skip


def test_ratings_given_as_words_are_read_through_the_labels_of_a_mapping_file(tmp_path: Path) -> None:
    """A crowd export's "Poor"/"Good" was refused with "leave the cell empty where there is no rating", advice
    that loses every rating; ``labels`` gives each word its number, and a word without labels says to give them."""
    p = tmp_path / "r.csv"
    p.write_text("context,response,q\nHi,Yo,Good\nHi,Sup, Poor \nHey,Hm,2\nHey,Ok,\n")
    m = tmp_path / "m.yaml"
    m.write_text("response: response\ncontext: context\nratings: {q: Overall}\nlabels: {Poor: 1, Fair: 2, Good: 3}\n"
                 "scale: 1-3\n")  # fmt: skip
    b = load_table(p, load_mapping(m).to_mapping())
    assert [r.value for r in b.ratings] == [3.0, 1.0, 2.0] and dict(b.skipped) == {"empty rating (q)": 1}
    p.write_text("context,response,q\nHi,Yo,good\n")
    with pytest.raises(InputError) as caught:
        load_table(p, load_mapping(m).to_mapping())
    assert str(caught.value) == f"{p}:2: field \"q\": expected a number, found 'good': give a number or one of the " \
                                "labels (Poor, Fair, Good)"  # fmt: skip
    plain = ColumnMapping(response="response", context="context", ratings={"q": "Overall"})
    p.write_text("context,response,q\nHi,Yo,Very good\n")
    with pytest.raises(InputError) as caught:
        load_table(p, plain)
    assert str(caught.value) == (f"{p}:2: field \"q\": expected a number, found 'Very good': ratings as words need a "
                                 "number each: --labels Very good=3,... (in a mapping file, labels: {Very good: 3, "
                                 "...}), or leave the cell empty where there is no rating")
    j = tmp_path / "r.jsonl"  # JSON's true for a yes/no question: "found True" and "leave the cell empty"
    j.write_text('{"context": "Hi", "response": "Yo", "q": true}\n')
    with pytest.raises(InputError) as caught:
        load_table(j, plain)
    assert str(caught.value) == f'{j}:1: field "q": expected a number, found True: a yes/no rating: write it as 1 or 0'
    m.write_text("response: response\nlabels: {Poor: 1}\n")  # no ratings: the labels would do nothing
    with pytest.raises(InputError, match=r'm\.yaml:2: field "labels": labels turns the words of the ratings into'):
        load_mapping(m)
    m.write_text("response: response\nratings: {q: Overall}\nlabels: {Poor: .inf}\n")
    with pytest.raises(InputError, match=r'm\.yaml:3: field "labels\.Poor": expected a finite number, found inf'):
        load_mapping(m)


def test_a_list_column_written_to_csv_by_pandas_is_read_as_the_list(tmp_path: Path) -> None:
    """pandas writes a list cell as "['Hi!', 'How are you?']": each context was one turn beginning with a bracket
    and the references one text, silently. Now read as the lists (Python's repr or JSON), and said."""
    pd = pytest.importorskip("pandas")
    p = tmp_path / "t.csv"
    pd.DataFrame({"context": [["Hi!", "How's it going?"], ["Yo\nthere"]], "response": ["Fine", "Sup"],
                  "refs": [["Good", "Fine"], ["Hey"]]}).to_csv(p, index=False)  # fmt: skip
    b = load_table(p, ColumnMapping(response="response", context="context", references=("refs",)))
    assert [[t.text for t in d.turns] for d in b.dialogues.values()] == [["Hi!", "How's it going?"], ["Yo\nthere"]]
    assert [c.references for c in b.candidates] == [["Good", "Fine"], ["Hey"]]
    assert b.warnings == [f'2 cells of the column "{col}" held a list written as text (as pandas writes a list column '
                          "to CSV): read as the list" for col in ("context", "refs")]  # no escaped line break: repr's
    p.write_text('context,response\n[laughs] Hi,Yo\n"[1, 2]",Sup\n')  # no list of texts: read as written
    b = load_table(p, ColumnMapping(response="response", context="context"))
    assert [[t.text for t in d.turns] for d in b.dialogues.values()] == [["[laughs] Hi"], ["[1, 2]"]]
    assert b.warnings == []


def test_a_context_list_written_as_text_with_a_missing_turn_keeps_the_turns_as_a_jsonl_list_does(
    tmp_path: Path,
) -> None:
    """pandas writes a missing turn as None ("['Hi', None, 'Yo']"), json.dumps as null: the whole cell was one turn,
    "['Hi', None, 'Yo']", silently, where the JSONL list ["Hi", null, "Yo"] is three turns, the empty one kept."""
    pd = pytest.importorskip("pandas")
    p = tmp_path / "t.csv"
    pd.DataFrame({"context": [["Hi", None, "Yo"]], "response": ["Fine"]}).to_csv(p, index=False)
    with p.open("a") as handle:
        handle.write('"[""Hey"", null]",Sup\n')  # as json.dumps writes it
    b = load_table(p, ColumnMapping(response="response", context="context"))
    assert [[t.text for t in d.turns] for d in b.dialogues.values()] == [["Hi", "", "Yo"], ["Hey", ""]]
    j = tmp_path / "t.jsonl"
    j.write_text('{"context": ["Hi", null, "Yo"], "response": "Fine"}\n')
    assert [t.text for t in load_table(j, ColumnMapping(response="response", context="context")).dialogues[
        "t-0000"].turns] == ["Hi", "", "Yo"]  # fmt: skip
    assert b.warnings == ['2 cells of the column "context" held a list written as text (as pandas writes a list '
                          "column to CSV): read as the list"]


def test_a_list_written_as_text_with_pandas_nan_reads_the_nan_as_a_missing_value_as_none_is(tmp_path: Path) -> None:
    """pandas writes a list holding a missing float as "['Hi', nan, 'Yo']": not a literal (nan is a name), the cell
    was one turn whose text was the whole list, silently (and a rating "[4, nan, 5]" was refused as no number).
    nan is read as None is: an empty turn that keeps its place, a rating not given."""
    pd = pytest.importorskip("pandas")
    p = tmp_path / "t.csv"
    frame = {"context": [["Hi", float("nan"), "Yo"]], "response": ["Fine"], "q": [[4, float("nan"), 5]]}
    pd.DataFrame(frame).to_csv(p, index=False)
    assert "['Hi', nan, 'Yo']" in p.read_text()  # what pandas writes, the case itself
    b = load_table(p, ColumnMapping(response="response", context="context", ratings={"q": "Quality"}))
    # the same turns as "['Hi', None, 'Yo']" gives (the test above): the missing one empty, in its place
    assert [[t.text for t in d.turns] for d in b.dialogues.values()] == [["Hi", "", "Yo"]]
    assert [(r.annotator, r.value) for r in b.ratings] == [("r1", 4.0), ("r3", 5.0)]  # r2 gave none

def test_a_dotted_column_reads_inside_a_json_record_and_a_missing_one_says_what_is_there(tmp_path: Path) -> None:
    """Chat logs nest what a table flattens ({"meta": {"model": ...}}); --system-col meta.model was "missing field".
    A missing column or field named no close one: "respons" beside "response" had no hint."""
    j = tmp_path / "t.jsonl"
    j.write_text('{"context": "Hi", "response": "Yo", "meta": {"model": "gpt-x", "rating": 4}}\n')
    b = load_table(j, ColumnMapping(response="response", context="context", system="meta.model",
                                    ratings={"meta.rating": "Overall"}))  # fmt: skip
    assert [c.system for c in b.candidates] == ["gpt-x"] and [r.value for r in b.ratings] == [4.0]
    c = tmp_path / "t.csv"
    cases = [(j, None, "meta.modle", 'field "meta.modle": missing field (in "meta"); did you mean "model"?'),
             (c, "context,respons\nHi,Yo\n", "response",
              'field "response": missing column in the header; did you mean "respons"?'),
             (c, "q,a\nHi,Yo\n", "response", 'field "response": missing column in the header; there are: q, a')]
    for path, text, column, said in cases:
        if text is not None:
            path.write_text(text)
        with pytest.raises(InputError) as caught:
            load_table(path, ColumnMapping(response="response", system=column) if path == j else
                       ColumnMapping(response=column))  # fmt: skip
        assert str(caught.value) == f"{path}:1: {said}"


def test_a_response_that_is_its_own_contexts_last_turn_gets_a_warning(tmp_path: Path) -> None:
    """A column of whole conversations (the reply included) as the context: every metric of context and response
    compared the reply with itself, silently."""
    p = tmp_path / "t.csv"
    p.write_text('context,response\n"Hi!\nFine, thanks.","Fine, thanks."\n"Yo\nSup",Hey\n')
    b = load_table(p, ColumnMapping(response="response", context="context"))
    assert b.warnings == ["1 of 2 responses is the same as the last turn of its context: does the context "
                          "column hold the reply too?"]


def test_a_cell_holding_a_list_of_ratings_gives_one_rating_per_annotator_named_by_place(tmp_path: Path) -> None:
    """DSTC10's and FED's form, {"annotations": {"overall": [4, 5, 4]}}, was 'expected a number, found [4, 5, 4]'
    (and its error said the JSON record twice). Each value is an annotator's, named r1, r2, ... as the FED loader
    names them; a null in the list is an empty rating; a list where an annotator column names one is refused."""
    j = tmp_path / "d10.json"
    rows = [{"context": "Hi!", "response": "Yo.", "model": "a", "annotations": {"overall": [4, 5, None]}},
            {"context": "Hi!", "response": "Cats.", "model": "b", "annotations": {"overall": [1, 2, 1]}}]  # fmt: skip
    j.write_text(json.dumps(rows))
    rated = {"annotations.overall": "Overall"}
    mapping = ColumnMapping(response="response", context="context", system="model", ratings=rated)
    b = load_table(j, mapping)
    assert sorted((r.item_id, r.annotator, r.value) for r in b.ratings) == [
        ("d10-0000:a", "r1", 4.0), ("d10-0000:a", "r2", 5.0), ("d10-0000:b", "r1", 1.0), ("d10-0000:b", "r2", 2.0),
        ("d10-0000:b", "r3", 1.0)]  # fmt: skip
    assert dict(b.skipped) == {"empty rating (annotations.overall)": 1}
    assert b.warnings == ['2 cells of the column "annotations.overall" held a list of ratings: each is one '
                          "annotator's, named by its place in the list (r1, r2, ...), so r1 of two rows need not be "
                          "one person"]  # fmt: skip
    c = tmp_path / "lists.csv"  # pandas writes a list column to CSV as its repr
    c.write_text('context,response,q\nHi!,Yo.,"[4, 5]"\n')
    b = load_table(c, ColumnMapping(response="response", context="context", ratings={"q": "Overall"}))
    assert [(r.annotator, r.value) for r in b.ratings] == [("r1", 4.0), ("r2", 5.0)]
    c.write_text('context,response,q,who\nHi!,Yo.,"[4, 5]",ann\n')
    with pytest.raises(InputError) as caught:
        load_table(c, ColumnMapping(response="response", context="context", ratings={"q": "Overall"}, annotator="who"))
    assert str(caught.value) == (f'{c}:2: field "q": a list of ratings, where the column "who" names the one annotator '
                                 "of this rating: give one number per cell, or a list (one rating per annotator) "
                                 "without naming them")  # fmt: skip
    with pytest.raises(InputError, match=r'where annotator_columns \("alice"\) names the one annotator'):
        load_table(c, ColumnMapping(response="response", context="context", annotator_columns={"q": "alice"},
                                    dimension="Overall"))  # fmt: skip
    rows[0]["annotations"]["overall"] = {"mean": 4}
    j.write_text(json.dumps(rows))
    with pytest.raises(InputError) as caught:
        load_table(j, mapping)
    assert str(caught.value).count("(record 0 of the JSON array, counting from 0)") == 1


def test_the_rows_are_kept_only_when_asked(tmp_path: Path) -> None:
    """score -o scored.csv needs the rows as read; held by every command they cost 55 MB per 100,000 rows."""
    p = tmp_path / "t.csv"
    p.write_text("context,response,who,q\nHi,Hello,w1,4\nHi,Hello,w2,5\n")
    m = ColumnMapping(response="response", context="context", annotator="who", ratings={"q": "Overall"})
    assert load_table(p, m).rows == []
    kept = load_table(p, m, keep_rows=True).rows
    assert [(where.line, rec["who"], ids) for where, rec, ids in kept] == [(2, "w1", ["t-0000:unknown"]),
                                                                          (3, "w2", ["t-0000:unknown"])]  # fmt: skip


def test_each_item_is_placed_at_its_first_row(tmp_path: Path) -> None:
    """An error about an item of a table named it by its made-up id; the benchmark keeps each item's first row,
    also through --limit (head), which keeps only the places of the items it keeps."""
    p = tmp_path / "t.csv"
    p.write_text("context,response,who,q\nHi,Hello,w1,4\nHi,Hello,w2,5\nBye,Ciao,w1,3\n")
    m = ColumnMapping(response="response", context="context", annotator="who", ratings={"q": "Overall"})
    bench = load_table(p, m)
    assert bench.sources == {"t-0000:unknown": f"{p}:2", "t-0001:unknown": f"{p}:4"}  # lines 2 and 3: one item
    assert bench.head(1).sources == {"t-0000:unknown": f"{p}:2"}


def test_a_record_rating_of_no_item_is_refused(tmp_path: Path) -> None:
    """A ratings.jsonl line whose item_id names no candidate (a typo, a row of another folder) was read and counted:
    `data show` said 2 ratings and 2 annotators for one rated item, and every command that joins ratings to scores
    dropped it unsaid. It is now an error naming the file, the line and item_id (a dialogue-level rating names a
    dialogue)."""
    _write_records(tmp_path, "Yes")  # candidate c1 of dialogue d1
    rating = '{{"item_id": "{}", "dimension": "q", "annotator": "{}", "value": 4, "level": "{}"}}\n'
    (tmp_path / "ratings.jsonl").write_text(rating.format("c1", "a", "turn") + rating.format("c9", "b", "turn"))
    with pytest.raises(InputError) as caught:
        load_records(tmp_path)
    assert str(caught.value) == (
        f'{tmp_path / "ratings.jsonl"}:2: field "item_id": no candidate has the id "c9" '
        f'(not in {tmp_path / "candidates.jsonl"})'
    )
    (tmp_path / "ratings.jsonl").write_text(rating.format("c1", "a", "dialogue"))  # c1 is a candidate, no dialogue
    with pytest.raises(InputError, match=r'ratings\.jsonl:1: field "item_id": no dialogue has the id "c1" \(not in '):
        load_records(tmp_path)
    (tmp_path / "ratings.jsonl").write_text(rating.format("c1", "a", "turn") + rating.format("d1", "b", "dialogue"))
    assert [(r.item_id, r.level) for r in load_records(tmp_path).ratings] == [("c1", "turn"), ("d1", "dialogue")]


def test_a_record_rating_outside_its_own_scale_is_refused(tmp_path: Path) -> None:
    """A ratings.jsonl line {"value": 7, "scale": "1-5"} (or -1 on "1-3") was read as it was: `data show` said
    "q (1-5)" and meta correlated the 7 with the rest, where the table reader refuses the same rating ("7 is outside
    the scale 1-5"). It is now refused, naming the file, the line and value; a label on a scale of labels, or a
    number on no scale, is read as before."""
    _write_records(tmp_path, "Yes", "No")  # candidates c1, c2
    rating = '{{"item_id": "{}", "dimension": "q", "annotator": "a", "value": {}, "scale": "{}"}}\n'
    (tmp_path / "ratings.jsonl").write_text(rating.format("c1", 5, "1-5") + rating.format("c2", 7, "1-5"))
    with pytest.raises(InputError) as caught:
        load_records(tmp_path)
    assert str(caught.value) == f'{tmp_path / "ratings.jsonl"}:2: field "value": 7 is outside the scale 1-5'
    (tmp_path / "ratings.jsonl").write_text(rating.format("c1", -1.5, "1-3"))
    with pytest.raises(InputError, match=r'ratings\.jsonl:1: field "value": -1\.5 is outside the scale 1-3'):
        load_records(tmp_path)
    fine = rating.format("c1", 1, "1-5") + rating.format("c2", '"good"', "good|bad").replace('"q"', '"p"')
    (tmp_path / "ratings.jsonl").write_text(fine + rating.format("c1", 7, "").replace('"q"', '"r"'))
    assert [r.value for r in load_records(tmp_path).ratings] == [1.0, "good", 7.0]


def test_record_ratings_of_one_dimension_on_two_scales_are_refused(tmp_path: Path) -> None:
    """Ratings of one dimension on "1-3" and on "1-5" (two files' lines joined) were read together: `data show` said
    "q (1-3)", the first scale seen, and meta averaged a 3 of 3 with a 3 of 5 as one figure. They are now refused,
    naming the file, the line and scale, and the line of the first scale."""
    _write_records(tmp_path, "Yes", "No")  # candidates c1, c2
    rating = '{{"item_id": "{}", "dimension": "{}", "annotator": "a", "value": 3, "scale": "{}"}}\n'
    (tmp_path / "ratings.jsonl").write_text(rating.format("c1", "q", "1-3") + rating.format("c2", "q", "1-5"))
    with pytest.raises(InputError) as caught:
        load_records(tmp_path)
    assert str(caught.value) == (
        f'{tmp_path / "ratings.jsonl"}:2: field "scale": the dimension "q" is rated on "1-5" here and on "1-3" on '
        "line 1: one scale per dimension"
    )
    (tmp_path / "ratings.jsonl").write_text(rating.format("c1", "q", "1-3") + rating.format("c2", "p", "1-5"))
    assert load_records(tmp_path).dimensions() == {"q": "1-3", "p": "1-5"}


@pytest.mark.parametrize("cell", ["1e400", "-1E999", "1" + "0" * 400])
def test_a_rating_too_large_for_a_float_is_said_not_finite_with_no_hint_about_labels(tmp_path: Path, cell: str) -> None:
    """float("1e400") is inf: the cell was told to become a label (--labels 1e400=3) or be left empty."""
    for name, text in (("t.jsonl", f'{{"r": "hi", "q": "{cell}"}}\n'), ("t.csv", f"r,q\nhi,{cell}\n")):
        p = tmp_path / name
        p.write_text(text)
        line = 1 if name.endswith(".jsonl") else 2
        assert _refusal(p) == (f"{p}:{line}: field \"q\": expected a finite number, found '{cell}': past the largest "
                               "a float holds (about 1.8e308)")


def test_a_json_integer_too_large_for_a_float_is_said_so(tmp_path: Path) -> None:
    """An unquoted 10**400 in a JSON table was told to "leave the cell empty where there is no rating"."""
    p = tmp_path / "t.jsonl"
    p.write_text(f'{{"r": "hi", "q": {10**400}}}\n')
    assert _refusal(p) == f'{p}:1: field "q": expected a finite number, found {10**400}: past the largest a float ' \
                          "holds (about 1.8e308)"

def _refusal(path: Path) -> str:
    """Return the error of reading ``path``'s column "r" as the response and "q" as ratings."""
    with pytest.raises(InputError) as caught:
        load_table(path, ColumnMapping(response="r", ratings={"q": "quality"}))
    return str(caught.value)


def test_a_rating_cell_holding_an_object_or_a_nested_list_is_not_told_to_be_left_empty(tmp_path: Path) -> None:
    """{"q": {"score": 4}} and [[4]] were told "leave the cell empty where there is no rating": they hold ratings.

    A dotted column reading inside the object is read (its rating counted independently: one cell, one rating).
    """
    p = tmp_path / "t.jsonl"
    said = {'{"score": 4}': "found {'score': 4}: an object: give the number itself (of a JSON table, a dotted column "
                            'reads inside an object, e.g. "q.score")',
            "[[4]]": "found [4]: a list inside a list of ratings: give one number per annotator"}  # fmt: skip
    for cell, message in said.items():
        p.write_text(f'{{"r": "hi", "q": {cell}}}\n')
        assert _refusal(p) == f'{p}:1: field "q": expected a number, {message}'
    p.write_text('{"r": "hi", "q": {"score": 4}}\n')
    ratings = load_table(p, ColumnMapping(response="r", ratings={"q.score": "quality"})).ratings
    assert [r.value for r in ratings] == [4.0]


def test_generated_item_ids_that_would_collide_stay_apart(tmp_path: Path) -> None:
    """``<dialogue>:<system>`` joined dialogue "a" with system "b:c" and dialogue "a:b" with system "c" into one id
    "a:b:c"; a system "x#2" took the id of system "x"'s second response. The later row was refused as "item differs
    from its first row". It now takes the next free ``#n`` suffix; ids that do not collide are as before."""
    p = tmp_path / "t.csv"
    p.write_text("did,ctx,resp,sys,q\na,hi,one,b:c,3\na:b,hello,two,c,4\na,hi,three,x,2\na,hi,four,x,5\n"
                 "a,hi,five,x#2,1\na:b,hello,six,c,4\n")  # fmt: skip
    m = ColumnMapping(response="resp", context="ctx", dialogue_id="did", system="sys", ratings={"q": "quality"})
    b = load_table(p, m)
    # by hand: a:b:c is row 1's, so row 2 (a:b, c) takes #2 and row 7 (a:b, c, a second response) #3; a:x#2 is
    # row 4's (x's second response), so row 5 (system x#2) takes a:x#2#2
    got = [(c.id, c.dialogue_id, c.system, c.text) for c in b.candidates]
    assert got == [("a:b:c", "a", "b:c", "one"), ("a:b:c#2", "a:b", "c", "two"), ("a:x", "a", "x", "three"),
                   ("a:x#2", "a", "x", "four"), ("a:x#2#2", "a", "x#2", "five"), ("a:b:c#3", "a:b", "c", "six")]
    assert [(r.item_id, r.value) for r in b.ratings] == [
        ("a:b:c", 3.0), ("a:b:c#2", 4.0), ("a:x", 2.0), ("a:x#2", 5.0), ("a:x#2#2", 1.0), ("a:b:c#3", 4.0)]


def _ratings_file(path: Path, *ratings: tuple[str, str, object]) -> Path:
    """Write a ratings.jsonl of (item, annotator, value) ratings of the dimension "q" on 1-5."""
    path.write_text("".join(json.dumps({"item_id": i, "dimension": "q", "annotator": a, "value": v, "scale": "1-5"})
                            + "\n" for i, a, v in ratings))  # fmt: skip
    return path


def test_a_dimension_rated_with_numbers_and_text_is_refused_at_the_first_of_the_other_kind(tmp_path: Path) -> None:
    """One "value": "4" among numbers made the whole dimension labels: import-agreement counted 4 and "4" as two
    answers (two raters agreeing on every item gave nominal alpha 0.807, not 1) and meta left a label ("N/A") out,
    unsaid. `study export` writes one kind per dimension (a choice's option values as text, else numbers), so a
    mixed dimension is refused, naming the file, the line and the field; text throughout (a choice) is read as
    before."""
    p = _ratings_file(tmp_path / "r.jsonl", ("i1", "a", 4), ("i1", "b", None), ("i2", "a", "4"))
    with pytest.raises(InputError) as caught:
        read_ratings(p)
    assert str(caught.value) == (
        f'{p}:3: field "value": the dimension "q" is rated with numbers (line 1) and here with text ("4"): one kind '
        "per dimension: write 4 as a number"
    )
    _ratings_file(p, ("i1", "a", "good"), ("i2", "a", 5))
    with pytest.raises(InputError) as caught:
        read_ratings(p)
    assert str(caught.value) == (
        f'{p}:2: field "value": the dimension "q" is rated with text (line 1) and here with numbers (5): one kind per '
        'dimension: give each answer as a number, or each as text (for "I don\'t know", null with dont_know: true)'
    )
    _ratings_file(p, ("i1", "a", "1"), ("i1", "b", "2"), ("i2", "a", None))
    assert [r.value for r in read_ratings(p)] == ["1", "2", None]


@pytest.mark.parametrize("who", ["", "  "])
def test_a_blank_annotator_of_a_ratings_file_is_refused(tmp_path: Path, who: str) -> None:
    """A ratings file's annotator "" or " " was one more rater, as the table reader refuses ("empty annotator")."""
    p = _ratings_file(tmp_path / "r.jsonl", ("i1", "a", 4), ("i1", who, 3))
    with pytest.raises(InputError) as caught:
        read_ratings(p)
    assert str(caught.value) == f'{p}:2: field "annotator": empty annotator: each rating names who gave it'


def test_an_annotator_with_spaces_around_is_the_annotator_without_them(tmp_path: Path) -> None:
    """"a " and "a" were two annotators (a spurious second rater of every item both rated); the table reader strips
    an annotator cell, and the ratings reader now does too: the two are one, and one item rated by both is twice."""
    p = _ratings_file(tmp_path / "r.jsonl", ("i1", "a ", 4), ("i2", "a", 3), ("i2", " b", 3))
    assert [r.annotator for r in read_ratings(p)] == ["a", "a", "b"]
    _ratings_file(p, ("i1", "a", 4), ("i1", "a ", 3))
    with pytest.raises(InputError, match=r'r\.jsonl:2: field "annotator": annotator "a" rates item "i1" on "q" twice'):
        read_ratings(p)


def test_a_dimension_with_spaces_around_is_the_dimension_without_them_and_a_blank_one_is_refused(
    tmp_path: Path,
) -> None:
    """A ratings file's dimension "q " beside "q" was a second dimension: import-agreement printed two rows "q" (the
    second n/a) and left its ratings out of the first; a dimension "" was a row of no name. A mapping file refuses a
    blank dimension; the ratings reader now reads one stripped and refuses a blank one, naming the file and line."""
    p = _ratings_file(tmp_path / "r.jsonl", ("i1", "a", 4), ("i2", "a", 3))
    p.write_text(p.read_text().replace('"q"', '"q "', 1))
    assert [r.dimension for r in read_ratings(p)] == ["q", "q"]
    p.write_text(p.read_text().replace('"q "', '" "', 1))
    with pytest.raises(InputError) as caught:
        read_ratings(p)
    assert str(caught.value) == f'{p}:1: field "dimension": empty dimension: each rating names what it judges'


@pytest.mark.parametrize(
    ("second", "line", "field", "message"),
    [
        ({"id": 1.0}, 2, "id", "the value 1.0 is the number 1 of line 1 written another way, and the two would make "
                               "two groups: give the column one type"),
        ({"sys": 1.0}, 2, "sys", "the value 1.0 is the number 1 of line 1 written another way"),
        ({"id": "1"}, 2, "id", "the value '1' (text) prints as the value 1 (a number) of line 1, and the two would "
                               "make one group: give the column one type"),
        ({"sys": " 1 "}, 2, "sys", "the value ' 1 ' (text) prints as the value 1 (a number) of line 1"),
    ],
)
def test_a_json_id_written_two_ways_is_refused(
    tmp_path: Path, second: dict[str, object], line: int, field: str, message: str
) -> None:
    """A dialogue id (or system) 1 on one line and 1.0 on the next were two dialogues (data show: dialogues 2), and 1
    beside "1" one, silently; dialeval.score refuses both, in these words (api._one_group_per_text)."""
    first = {"id": 1, "context": "Hi", "response": "Hello", "sys": 1}
    p = tmp_path / "ids.jsonl"
    p.write_text(json.dumps(first) + "\n" + json.dumps({**first, "response": "Yo", **second}) + "\n")
    m = ColumnMapping(response="response", context="context", dialogue_id="id", system="sys")
    with pytest.raises(InputError, match=re.escape(f'ids.jsonl:{line}: field "{field}": {message}')):
        load_table(p, m)


def test_json_ids_of_one_type_are_read_as_written(tmp_path: Path) -> None:
    p = tmp_path / "ids.jsonl"
    p.write_text('{"id": 1, "r": "a"}\n{"id": 2, "r": "b"}\n{"id": 1, "r": "c"}\n{"id": 2.5, "r": "d"}\n')
    b = load_table(p, ColumnMapping(response="r", dialogue_id="id"))
    assert [c.dialogue_id for c in b.candidates] == ["1", "2", "1", "2.5"]


@pytest.mark.parametrize("blank", ['{"ctx": null, "r": "Hi there"}\n{"ctx": "", "r": "Yo"}\n',
                                   '{"ctx": [], "r": "Hi there"}\n{"ctx": " ", "r": "Yo"}\n',
                                   '{"ctx": ["", null], "r": "Hi there"}\n{"ctx": [" "], "r": "Yo"}\n'])
def test_a_context_column_empty_in_every_row_is_refused_naming_the_key(tmp_path: Path, blank: str) -> None:
    """A context column with no value in any row (a wrong column named, an export that lost it) was read as "no
    context" for every row: each response was scored with no context, silently, as the Python API refuses."""
    j = tmp_path / "t.jsonl"
    j.write_text(blank)
    with pytest.raises(InputError) as caught:
        load_table(j, ColumnMapping(response="r", context="ctx"))
    assert str(caught.value) == (f'{j}: field "context": context="ctx" names a column with no context in any row: '
                                 "give the column of the contexts, or context=None to score without one")
    assert [c.text for c in load_table(j, ColumnMapping(response="r")).candidates] == ["Hi there", "Yo"]
    # blank in some rows only: those responses open their dialogue
    j.write_text(blank.splitlines()[0] + '\n{"ctx": "Hello?", "r": "Yo"}\n')
    assert load_table(j, ColumnMapping(response="r", context="ctx")).candidates[1].turn_index == 1


def test_a_chat_log_with_no_message_before_its_reply_in_any_row_is_no_empty_context_column(tmp_path: Path) -> None:
    """A chat log read as both context and response: a log of the reply alone is a response that opens its
    dialogue, not a context column named wrong."""
    j = tmp_path / "chats.jsonl"
    j.write_text(json.dumps({"messages": [{"role": "assistant", "content": "Hello."}]}) + "\n")
    b = load_table(j, ColumnMapping(response="messages", context="messages"))
    assert [(c.text, c.turn_index) for c in b.candidates] == [("Hello.", 0)]


def test_a_turn_separator_in_no_context_gets_a_warning(tmp_path: Path) -> None:
    """--turn-sep '|' (turn_separator) on contexts split by line breaks read each context as one turn, silently: a
    metric of the last turn read the whole conversation."""
    p = tmp_path / "t.csv"
    p.write_text('ctx,r\n"Hi!\nHow are you?",Fine\nYo,Hey\n')
    b = load_table(p, ColumnMapping(response="r", context="ctx", turn_separator="|"))
    assert [len(d.turns) for d in b.dialogues.values()] == [1, 1]
    assert b.warnings == ["no context holds the turn separator '|', so each was read as one turn: give the one that "
                          "separates their turns (--turn-sep; in a mapping file, turn_separator)"]
    p.write_text('ctx,r\n"Hi!|How are you?",Fine\nYo,Hey\n')  # split in one row: a one-turn context is no defect
    assert load_table(p, ColumnMapping(response="r", context="ctx", turn_separator="|")).warnings == []
    p.write_text("ctx,r\nHi!,Fine\nYo,Hey\n")  # the default separator: contexts of one turn each, no warning
    assert load_table(p, ColumnMapping(response="r", context="ctx")).warnings == []
