"""Aggregation: majority votes with ties, means, the Table 3 and Figure 1 analogues (hand-computed)."""

from __future__ import annotations

import pytest

from dialeval.human.analysis import majority_table, majority_votes, mean_scores, reason_table
from dialeval.schema import Rating


def r(item: str, ann: str, value: float | str | None, reasons: list[str] | None = None) -> Rating:
    return Rating(
        item_id=item, dimension="A", annotator=ann, value=value, dont_know=value is None, reasons=reasons or []
    )


RATINGS = [
    r("x1", "a", "positive"), r("x1", "b", "negative", ["Incoherence"]), r("x1", "c", "positive"),
    r("x2", "a", "negative", ["Incoherence"]), r("x2", "b", None), r("x2", "c", "positive"), r("x2", "d", "negative"),
    r("y1", "a", "positive"), r("y1", "b", None),
]  # fmt: skip
SYSTEMS = {"x1": "sx", "x2": "sx", "y1": "sy"}


def test_majority_with_ties() -> None:
    votes = majority_votes(RATINGS)
    assert votes[("x1", "A")] == ("positive", False)
    assert votes[("x2", "A")] == ("negative", False)  # 2 negative vs 1 positive vs 1 don't know
    assert votes[("y1", "A")] == ("tie", True)  # 1 positive vs 1 don't know


def test_table3_and_figure1_percentages() -> None:
    # sx: x1 -> positive, x2 -> negative: 50% / 50%; sy: y1 tie: 100% tie
    assert majority_table(RATINGS, SYSTEMS) == {"A": {"sx": {"negative": 50.0, "positive": 50.0}, "sy": {"tie": 100.0}}}
    # sx has 7 votes, 2 of which chose Incoherence: 28.57%
    assert reason_table(RATINGS, SYSTEMS) == {"A": {"sx": {"Incoherence": pytest.approx(200 / 7)}}}


def test_mean_scores_leave_out_dont_know() -> None:
    rs = [r("i", "a", 4.0), r("i", "b", 5.0), r("i", "c", None)]
    assert mean_scores(rs) == {("i", "A"): 4.5}


def test_attention_checks_live_agreement_and_report_on_a_real_database(tmp_path) -> None:  # type: ignore[no-untyped-def]
    import krippendorff
    import sqlalchemy as sa
    from tests.human.conftest import dialogues_and_candidates

    from dialeval.human import store
    from dialeval.human.analysis import attention_results, live_agreement
    from dialeval.human.design import StudyConfig, create_study
    from dialeval.human.protocol import load_protocol
    from dialeval.human.report import build_report, to_markdown

    proto = load_protocol("mousavi-turn")
    dialogues, candidates = dialogues_and_candidates(n_contexts=4)
    main = [c for c in candidates if c.dialogue_id != "d3"]
    checks = [c for c in candidates if c.id == "d3:m2"]
    gold = [Rating(item_id="d3:m2", dimension="Appropriateness", annotator="check", value="negative")]
    cfg = StudyConfig(
        proto.name, proto.version, ("a01", "a02"), per_item=2, batch_size=3, seed=0, attention_per_batch=1
    )
    create_study(tmp_path / "s", proto, dialogues, main, cfg, attention=(checks, gold))
    engine = store.connect(store.db_url(tmp_path / "s"))
    labels = {"a01": ["positive", "positive", "negative"], "a02": ["positive", "negative", "negative"]}
    with engine.begin() as conn:
        for ann, values in labels.items():
            for item, value in zip(["d0:m1", "d1:m1", "d2:m1"], values, strict=True):
                row = {"annotator": ann, "item_id": item, "criterion": "Appropriateness", "value": value,
                       "reasons": [], "free_text": "", "seconds": 1.0}  # fmt: skip
                store.upsert_answer(conn, row)
            value = "negative" if ann == "a01" else "positive"
            check = {**row, "item_id": "attention:d3:m2", "value": value}
            store.upsert_answer(conn, check)
        assert conn.execute(sa.select(sa.func.count()).select_from(store.answers)).scalar_one() == 8
    with engine.connect() as conn:
        assert attention_results(conn) == {"a01": (1, 1), "a02": (0, 1)}
        (row,) = live_agreement(conn, proto)
    expected = krippendorff.alpha(reliability_data=[[1, 1, 0], [1, 0, 0]], level_of_measurement="nominal")
    assert row["batch"] == 1 and row["alpha"] == pytest.approx(expected)
    md = to_markdown(*build_report(store.db_url(tmp_path / "s"), n_boot=20))
    assert "- **Attention checks passed**: a01: 1/1; a02: 0/1" in md



def test_each_attention_check_counts_once_whatever_the_number_of_gold_annotators(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Two experts gave expected answers: the check was counted once per expert (a01 2/2 read 3/4 here, and
    4/4 where the experts agree). Each answered check counts once; it passes when it is any expert's answer.

    By hand: experts e1, e2 say positive on d3:m1; on d3:m2 e1 says negative, e2 positive. a01 answers
    positive twice: 2 of 2 passed. a02 answers negative twice: d3:m1 fails, d3:m2 is e1's answer: 1 of 2.
    """
    from tests.human.conftest import dialogues_and_candidates

    from dialeval.human import store
    from dialeval.human.analysis import attention_results
    from dialeval.human.design import StudyConfig, create_study
    from dialeval.human.protocol import load_protocol
    from dialeval.human.report import build_report, to_markdown

    proto = load_protocol("mousavi-turn")
    dialogues, candidates = dialogues_and_candidates(n_contexts=4)
    expert = {("d3:m1", "e1"): "positive", ("d3:m1", "e2"): "positive",
              ("d3:m2", "e1"): "negative", ("d3:m2", "e2"): "positive"}  # fmt: skip
    gold = [Rating(item_id=i, dimension="Appropriateness", annotator=e, value=v) for (i, e), v in expert.items()]
    cfg = StudyConfig(proto.name, proto.version, ("a01", "a02"), per_item=2, batch_size=3, seed=0,
                      attention_per_batch=2)  # fmt: skip
    main = [c for c in candidates if c.dialogue_id != "d3"]
    checks = [c for c in candidates if c.dialogue_id == "d3"]
    create_study(tmp_path / "s", proto, dialogues, main, cfg, attention=(checks, gold))
    engine = store.connect(store.db_url(tmp_path / "s"))
    with engine.begin() as conn:
        for ann, value in (("a01", "positive"), ("a02", "negative")):
            for item in ("attention:d3:m1", "attention:d3:m2"):
                store.upsert_answer(conn, {"annotator": ann, "item_id": item, "criterion": "Appropriateness",
                                           "value": value, "reasons": [], "free_text": "", "seconds": 1.0})  # fmt: skip
    with engine.connect() as conn:
        assert attention_results(conn) == {"a01": (2, 2), "a02": (1, 2)}
    md = to_markdown(*build_report(store.db_url(tmp_path / "s"), n_boot=20))
    assert "- **Attention checks passed**: a01: 2/2; a02: 1/2" in md


def _live_rows(tmp_path, answers) -> list:  # type: ignore[no-untyped-def]
    """live_agreement on a study of two contexts (annotators a01, a02) holding ``answers`` (annotator, item,
    criterion, value)."""
    from tests.human.conftest import dialogues_and_candidates

    from dialeval.human import store
    from dialeval.human.analysis import live_agreement
    from dialeval.human.design import StudyConfig, create_study
    from dialeval.human.protocol import load_protocol

    proto = load_protocol("mousavi-turn")
    dialogues, candidates = dialogues_and_candidates(n_contexts=2)
    config = StudyConfig(proto.name, proto.version, ("a01", "a02"), per_item=2, batch_size=2, seed=0)
    create_study(tmp_path / "s", proto, dialogues, candidates, config)
    engine = store.connect(store.db_url(tmp_path / "s"))
    with engine.begin() as conn:
        for ann, item, crit, value in answers:
            row = {"annotator": ann, "item_id": item, "criterion": crit, "value": value, "reasons": [],
                   "free_text": "", "seconds": 1.0}  # fmt: skip
            store.upsert_answer(conn, row)
    with engine.connect() as conn:
        return live_agreement(conn, proto)


def test_live_agreement_lists_criteria_in_the_protocols_order(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """The admin dashboard listed Correctness before Listening (sorted as text); the protocol asks Listening first."""
    answers = [(ann, item, crit, "positive") for ann in ("a01", "a02") for crit in ("Correctness", "Listening")
               for item in ("d0:m1", "d1:m2")]  # fmt: skip
    assert [row["criterion"] for row in _live_rows(tmp_path, answers)] == ["Listening", "Correctness"]


@pytest.mark.parametrize("score", [float("nan"), float("inf")])
def test_a_numeric_export_of_a_stored_protocol_scoring_an_answer_with_no_number_is_refused(score: float) -> None:
    """A study made before protocols with a NaN or infinite score were refused (study create) keeps that protocol:
    `study export --numeric` stopped with pydantic's traceback ("NaN is not a rating") at its first vote."""
    from dialeval.errors import InputError
    from dialeval.human.analysis import check_scored
    from dialeval.human.protocol import load_protocol

    p = load_protocol("mousavi-turn")
    c = p.criteria[0]
    odd = c.answer.options[0].model_copy(update={"score": score})
    answer = c.answer.model_copy(update={"options": [odd, *c.answer.options[1:]]})
    stored = p.model_copy(update={"criteria": [c.model_copy(update={"answer": answer}), *p.criteria[1:]]})
    check_scored(p)  # the bundled one: every answer scored
    with pytest.raises(InputError, match=f'"--numeric": protocol mousavi-turn scores the answer "{odd.value}" of '
                                         f"{c.name} with no number"):
        check_scored(stored)


def test_an_ordinary_answer_valued_dont_know_of_a_stored_study_is_not_counted_with_i_dont_know() -> None:
    """A study made before an ordinary answer valued "dont_know" was refused (study create) keeps that protocol:
    its votes and the "I don't know" votes (here valued "unsure") were counted as one answer, so an item with one
    vote for each read as a majority for it, and the report labelled both with one of the two labels.

    By hand: item x has one vote "dont_know" (the ordinary answer) and one "I don't know": a tie.
    """
    from dialeval.human.protocol import Option, load_protocol
    from dialeval.human.report import majority_cell

    p = load_protocol("mousavi-turn")
    c = p.criteria[0]
    options = [c.answer.options[0], Option(value="dont_know", label="Not sure yet"),
               Option(value="unsure", label="I don't know", dont_know=True)]  # fmt: skip
    crit = c.model_copy(update={"answer": c.answer.model_copy(update={"options": options})})
    stored = p.model_copy(update={"criteria": [crit]})
    keys = {crit.name: crit.answer.dont_know_key}
    rs = [Rating(item_id="x", dimension=crit.name, annotator="a", value="dont_know"),
          Rating(item_id="x", dimension=crit.name, annotator="b", value=None, dont_know=True),
          Rating(item_id="y", dimension=crit.name, annotator="a", value="dont_know"),
          Rating(item_id="z", dimension=crit.name, annotator="a", value=None, dont_know=True)]  # fmt: skip
    assert majority_votes(rs, keys)[("x", crit.name)] == ("tie", True)
    pct = majority_table(rs, {"x": "m", "y": "m", "z": "m"}, keys)[crit.name]["m"]
    assert majority_cell(stored.criteria[0], pct) == "Not sure yet 33.3%, I don't know 33.3%, tie 33.3%"


def test_an_ordinary_answer_valued_tie_of_a_stored_study_is_not_counted_with_the_ties() -> None:
    """A study made before an ordinary answer valued "tie" was refused (study create) keeps that protocol: the
    items whose votes tie were counted under "tie" too, so the report labelled them with that answer's label.

    By hand: item x has one vote "better" and one "worse" (a tie); item y two votes "tie" (the answer "About the
    same"): one item of two each, 50% each.
    """
    from dialeval.human.protocol import Option, load_protocol
    from dialeval.human.report import majority_cell

    c = load_protocol("mousavi-turn").criteria[0]
    options = [Option(value="better", label="Better"), Option(value="worse", label="Worse"),
               Option(value="tie", label="About the same")]  # fmt: skip
    crit = c.model_copy(update={"answer": c.answer.model_copy(update={"options": options}), "explanations": []})
    dont_know, ties = {crit.name: crit.answer.dont_know_key}, {crit.name: crit.answer.tie_key}
    rs = [Rating(item_id=i, dimension=crit.name, annotator=a, value=v)
          for i, a, v in [("x", "a", "better"), ("x", "b", "worse"), ("y", "a", "tie"), ("y", "b", "tie")]]  # fmt: skip
    votes = majority_votes(rs, dont_know, ties)
    assert votes[("y", crit.name)] == ("tie", False)
    assert votes[("x", crit.name)] == (crit.answer.tie_key, True) != votes[("y", crit.name)]
    pct = majority_table(rs, {"x": "m", "y": "m"}, dont_know, ties)[crit.name]["m"]
    assert majority_cell(crit, pct) == "About the same 50.0%, tie 50.0%"


@pytest.mark.parametrize(("votes", "note"), [
    # one annotator only, or each item rated by one person: no item has two votes to compare
    ({"a01": ["positive", "negative"]}, "alpha is undefined: no item is rated by 2 annotators or more; Fleiss' kappa "
     "needs an item with at least two ratings"),
    ({"a01": ["positive", None], "a02": [None, "negative"]}, "alpha is undefined: no item is rated by 2 annotators or "
     "more; Fleiss' kappa needs an item with at least two ratings"),
    # every vote the same
    ({"a01": ["positive", "positive"], "a02": ["positive", "positive"]}, "alpha is undefined when fewer than two "
     "distinct values occur; kappa is undefined: every rating has the same label"),
    # agreement defined: krippendorff.alpha([[1, 1], [1, 0]], nominal) is 0.0, no note
    ({"a01": ["positive", "positive"], "a02": ["positive", "negative"]}, ""),
])  # fmt: skip
def test_live_agreement_says_why_a_figure_is_undefined(tmp_path, votes, note) -> None:  # type: ignore[no-untyped-def]
    """The dashboard's alpha and kappa were "–" with no reason on a study with one annotator, each item rated by one
    person, or every vote the same, where the report says why; each batch's row now holds the reasons, as the report
    words them, and the dashboard shows them."""
    answers = [(ann, item, "Appropriateness", value) for ann, values in votes.items()
               for item, value in zip(("d0:m1", "d1:m2"), values, strict=True) if value is not None]  # fmt: skip
    (row,) = _live_rows(tmp_path, answers)
    assert row["note"] == note
    assert (row["alpha"] is None) == bool(note) and (row["fleiss_kappa"] is None) == bool(note)
    if not note:
        assert row["alpha"] == 0.0
