"""The study report on numeric scales: ordinal alpha for rating scales, per-model means; a generic SQL upsert."""

from __future__ import annotations

import contextlib
from pathlib import Path

import krippendorff
import numpy as np
import pytest
import sqlalchemy as sa
from tests.human.conftest import dialogues_and_candidates

from dialeval.human import store
from dialeval.human.design import StudyConfig, create_study
from dialeval.human.protocol import load_protocol
from dialeval.human.report import (
    OUTSIDE,
    OUTSIDE_NOTE,
    StudyData,
    _agreement_section,
    _recruitment_section,
    _results_section,
    build_report,
)
from dialeval.schema import Rating

# (annotator, candidate) -> 1-5 answer on ComperDial's Overall: m1 rated high, m2 low, with disagreement
VOTES = {
    ("a01", "m1"): [5, 4, 5, 4], ("a02", "m1"): [4, 4, 3, 5], ("a03", "m1"): [5, 3, 4, 4],
    ("a01", "m2"): [1, 2, 2, 1], ("a02", "m2"): [2, 1, 3, 2], ("a03", "m2"): [1, 1, 2, 3],
}


def test_rating_scales_get_ordinal_alpha_and_per_model_means(tmp_path: Path) -> None:
    proto = load_protocol("comperdial")
    dialogues, candidates = dialogues_and_candidates(n_contexts=4)
    config = StudyConfig(protocol=proto.name, protocol_version=proto.version, annotators=("a01", "a02", "a03"),
                         per_item=3, batch_size=4, seed=0)
    create_study(tmp_path / "s", proto, dialogues, candidates, config)
    url = f"sqlite:///{tmp_path / 's' / 'study.db'}"
    engine = store.connect(url)
    with engine.begin() as conn:
        for (ann, system), values in VOTES.items():
            for i, v in enumerate(values):
                row = {"annotator": ann, "item_id": f"d{i}:{system}", "criterion": "Overall", "value": str(v),
                       "reasons": [], "free_text": "", "seconds": 1.0}
                store.upsert_answer(conn, row)
    _, sections = build_report(url, n_boot=50)
    tables = {caption: rows for s in sections for caption, rows in s.tables}
    # alpha by hand: the krippendorff package, ordinal, annotators x the 8 items
    items = [(s, i) for s in ("m1", "m2") for i in range(4)]
    data = np.array([[VOTES[(a, s)][i] for s, i in items] for a in ("a01", "a02", "a03")], dtype=float)
    expected = krippendorff.alpha(reliability_data=data, level_of_measurement="ordinal")
    (row,) = tables["Per criterion"][1:]
    assert row[0] == "Overall" and row[1] == "8"
    assert float(row[2].split()[0]) == pytest.approx(expected, abs=5e-4)
    # means: each sample's three votes averaged, then over the model's four samples
    means = {r[1]: r for r in tables["Mean score per model (each sample's votes averaged first)"][1:]}
    for system in ("m1", "m2"):
        per_item = np.mean([VOTES[(a, system)] for a in ("a01", "a02", "a03")], axis=0)
        assert means[system][2] == "4"
        assert float(means[system][3]) == pytest.approx(per_item.mean(), abs=5e-3)
        assert float(means[system][4]) == pytest.approx(per_item.std(), abs=5e-3)
    # ComperDial offers no explanation to choose: no Figure 1 table (it was one with a header and no row)
    assert not [caption for caption in tables if "Figure 1" in caption]


def test_batches_are_listed_by_number(tmp_path: Path) -> None:
    """Twelve batches of one context each: the per-batch table went 1, 10, 11, 12, 2, ... (sorted as text)."""
    proto = load_protocol("comperdial")
    dialogues, candidates = dialogues_and_candidates(n_contexts=12)
    config = StudyConfig(protocol=proto.name, protocol_version=proto.version, annotators=("a01", "a02", "a03"),
                         per_item=3, batch_size=1, seed=0)  # fmt: skip
    create_study(tmp_path / "s", proto, dialogues, candidates, config)
    url = f"sqlite:///{tmp_path / 's' / 'study.db'}"
    with store.connect(url).begin() as conn:
        for n, c in enumerate(candidates):
            for k, ann in enumerate(("a01", "a02", "a03")):
                row = {"annotator": ann, "item_id": f"{c.dialogue_id}:{c.system}", "criterion": "Overall",
                       "value": str(1 + (n + k) % 5), "reasons": [], "free_text": "", "seconds": 1.0}  # fmt: skip
                store.upsert_answer(conn, row)
    _, sections = build_report(url, n_boot=20)
    tables = {caption: rows for s in sections for caption, rows in s.tables}
    assert [row[0] for row in tables["Per batch"][1:]] == [str(b) for b in range(1, 13)]


def test_a_study_without_votes_says_so_instead_of_empty_tables(tmp_path: Path) -> None:
    """Before any answer the report printed five tables with a header and no row, and "112-112 judgements"."""
    from tests.human.conftest import make_study

    make_study(tmp_path / "s")
    _, sections = build_report(f"sqlite:///{tmp_path / 's' / 'study.db'}", n_boot=10)
    assert [(s.title, caption) for s in sections for caption, _ in s.tables] == [("Task", "Quality dimensions")]
    rows = {key: value for s in sections for key, value in s.rows}
    assert rows["Agreement"] == "not computed: no votes yet"
    assert rows["Votes"] == "none yet"
    assert rows["Workers qualified"] == "3 (no qualification task)"
    # 6 contexts x (2 systems + the ground truth) = 18 items x 2 votes x 4 criteria = 144 judgements over 3 annotators
    assert rows["Workload per annotator"] == "48 judgements assigned to each"


def test_generic_upsert_replaces_on_other_databases(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The update-else-insert path other SQLAlchemy databases take, run here on SQLite through the same code."""
    proto = load_protocol("comperdial")
    dialogues, candidates = dialogues_and_candidates(n_contexts=1)
    config = StudyConfig(protocol=proto.name, protocol_version=proto.version, annotators=("a01",), per_item=1,
                         batch_size=1, seed=0)
    create_study(tmp_path / "s", proto, dialogues, candidates, config)
    engine = store.connect(f"sqlite:///{tmp_path / 's' / 'study.db'}")
    row = {"annotator": "a01", "item_id": "d0:m1", "criterion": "Overall", "value": "2", "reasons": [],
           "free_text": "", "seconds": 1.0}
    with engine.begin() as conn:


        conn.dialect.name, real = "mysql", conn.dialect.name  # type: ignore[misc]
        try:
            store.upsert_answer(conn, row)
            store.upsert_answer(conn, {**row, "value": "4"})
        finally:
            conn.dialect.name = real  # type: ignore[misc]
        got = conn.execute(sa.select(store.answers.c.value)).scalars().all()
    assert got == ["4"]  # one row, the last value


def _crowd(n_annotators: int, n_items: int, seed: int = 0) -> StudyData:
    """3 of ``n_annotators`` label each item Yes/No, each agreeing with the item's truth half the time."""
    rng = np.random.default_rng(seed)
    ratings = []
    for i in range(n_items):
        truth = int(rng.integers(2))
        for a in rng.choice(n_annotators, 3, replace=False):
            vote = truth if rng.random() < 0.5 else int(rng.integers(2))
            ratings.append(Rating(item_id=f"i{i}", dimension="Appropriateness", annotator=f"a{a:03d}",
                                  value=("negative", "positive")[vote]))  # fmt: skip
    return StudyData(protocol=load_protocol("mousavi-turn"), config={}, ratings=ratings,
                     systems=dict.fromkeys((f"i{i}" for i in range(n_items)), "m1"),
                     batches=dict.fromkeys((f"i{i}" for i in range(n_items)), 1), people=[], attention={},
                     verdicts={}, counts={})  # fmt: skip


def test_a_figure_outside_its_own_ci_is_marked_and_explained() -> None:
    """100 annotators, 3 per item on 10,000 items (6 items per pair): the mean Cohen's kappa's resamples are biased.

    Each pair's kappa is read off about six items, fewer distinct ones in a resample, so the resamples' mean lies
    below the estimate and the percentile CI, printed as if it held the figure, did not: 0.212 [0.193, 0.211].
    """
    section = _agreement_section(_crowd(100, 10_000), n_boot=200, seed=0)
    tables = dict(section.tables)
    head, row = tables["Per criterion"]
    cells = dict(zip(head, row, strict=True))
    value, low, high = (float(x) for x in cells["mean Cohen's kappa"].replace("[", " ").replace(",", " ")
                        .replace("]", " ").split()[:3])  # fmt: skip
    assert not low <= value <= high and cells["mean Cohen's kappa"].endswith(OUTSIDE)
    assert not cells["alpha"].endswith(OUTSIDE) and not cells["Fleiss' kappa"].endswith(OUTSIDE)
    assert dict(section.rows)[OUTSIDE] == OUTSIDE_NOTE and "Krippendorff's alpha" in OUTSIDE_NOTE
    # a small crowd (3 of 20 on 200 items) has every figure inside its CI: no mark, no note
    small = _agreement_section(_crowd(20, 200), n_boot=200, seed=0)
    assert OUTSIDE not in dict(small.rows) and not any(OUTSIDE in c for _, t in small.tables for r in t for c in r)


def test_criteria_come_in_the_protocols_order_and_answers_by_their_labels() -> None:
    """The tables listed criteria as text (Correctness before Listening) and answers by value ("dont_know",
    "negative", "positive"); the protocol asks Listening second to last and labels its answers Yes, No, I don't know.
    """
    proto = load_protocol("mousavi-turn")
    votes = ("positive", "negative", "dont_know")
    ratings = [Rating(item_id=f"i{i}", dimension=c.name, annotator=a, value=None if v == "dont_know" else v,
                      dont_know=v == "dont_know")
               for c in reversed(proto.criteria) for i in range(6) for a, v in zip(("x", "y"), (votes[i % 3],) * 2,
                                                                                   strict=True)]  # fmt: skip
    items = {f"i{i}": "m1" for i in range(6)}
    data = StudyData(protocol=proto, config={}, ratings=ratings, systems=items, batches=dict.fromkeys(items, 1),
                     people=[], attention={}, verdicts={}, counts={})  # fmt: skip
    asked = [c.name for c in proto.criteria]
    assert asked == ["Appropriateness", "Contextualization", "Listening", "Correctness"]
    agreement = dict(_agreement_section(data, n_boot=20, seed=0).tables)
    assert [row[0] for row in agreement["Per criterion"][1:]] == asked
    assert [row[1] for row in agreement["Per batch"][1:]] == asked
    (table3,) = [table for caption, table in _results_section(data).tables if "Table 3" in caption]
    assert [row[0] for row in table3[1:]] == asked
    assert table3[1][2] == "Yes 33.3%, No 33.3%, I don't know 33.3%"


def _listening(votes: list[str]) -> StudyData:
    """Listening answers of x, y, z per item, one character each: p positive, n negative, d "I don't know"."""
    code = {"p": "positive", "n": "negative", "d": None}
    ratings = [Rating(item_id=f"i{i}", dimension="Listening", annotator=a, value=code[v], dont_know=v == "d")
               for i, item in enumerate(votes) for a, v in zip("xyz", item, strict=True)]  # fmt: skip
    items = {f"i{i}": "m1" for i in range(len(votes))}
    return StudyData(protocol=load_protocol("mousavi-turn"), config={}, ratings=ratings, systems=items,
                     batches=dict.fromkeys(items, 1), people=[], attention={}, verdicts={}, counts={})  # fmt: skip


def test_fleiss_kappa_counts_an_item_with_one_vote_as_the_live_figure_does() -> None:
    """The report's bootstrap kept the items with two votes or more for every statistic, so its Fleiss' kappa left
    an item with one vote out of chance agreement: 0.067, where the admin page and irrCAC's formula say 0.040.

    By hand (Gwet 2014, irrCAC's ``fleiss``): observed agreement over the 5 items rated twice or more,
    (1/3 + 1/3 + 1 + 1 + 0) / 5 = 8/15; each category's share over all 6 items, positive
    (2/3 + 1/3 + 1 + 0 + 1/2 + 1) / 6 = 7/12, so chance (7/12)^2 + (5/12)^2 = 37/72; kappa (8/15 - 37/72) / (35/72)
    = 0.04 (without the sixth item, chance 1/2 and kappa 1/15). The CI resamples those 6 items.
    """
    from dialeval.meta.agreement import fleiss_kappa, reliability_matrix
    from dialeval.meta.bootstrap import draw_counts

    data = _listening(["ppn", "nnp", "ppp", "nnn", "pnd", "pdd"])
    head, row = dict(_agreement_section(data, n_boot=200, seed=3).tables)["Per criterion"]
    cell = dict(zip(head, row, strict=True))["Fleiss' kappa"]
    assert cell.startswith("0.040 [")  # it said 0.067
    m = reliability_matrix(data.ratings).matrix
    kappas = []
    for counts in draw_counts(6, 200, seed=3):  # each resample's items copied, as a plain bootstrap would
        with contextlib.suppress(ValueError):  # undefined on this resample
            kappas.append(fleiss_kappa(m[:, np.repeat(np.arange(6), counts)]))
    assert cell.removesuffix(f" {OUTSIDE}") == "0.040 [{:.3f}, {:.3f}]".format(*np.percentile(kappas, [2.5, 97.5]))


def test_a_defined_figure_without_a_ci_is_shown_with_its_items_and_why() -> None:
    """Two items rated by all three (Yes, No) and four with "I don't know" only: alpha is 1.0 (the krippendorff
    package), but half the resamples draw one item twice, where it is undefined. The report dropped the figure and
    read ``| Listening | 0 | undefined | - | - |``: items 0, no alpha, no word why.
    """
    data = _listening(["ppp", "nnn", "ddd", "ddd", "ddd", "ddd"])
    expected = krippendorff.alpha(reliability_data=[[1, 0], [1, 0], [1, 0]], level_of_measurement="nominal")
    assert expected == 1.0
    tables = dict(_agreement_section(data, n_boot=100, seed=0).tables)
    assert tables["Per criterion"][1] == ["Listening", "2", "1.000 [no CI]", "1.000 [no CI]", "1.000 [no CI]"]
    why = tables["Figures undefined, or without a CI"]
    assert why[0] == ["table", "row", "statistic", "why"]
    assert ["Per criterion", "Listening", "alpha", "no CI: statistic undefined on 55 of 100 resamples"] in why
    # by hand: a resample draws 2 items; both copies of one item, 2 in 4 times: about half undefined
    assert all(w[3].startswith("no CI: statistic undefined on ") for w in why[1:])


def test_alpha_of_a_study_where_no_item_has_two_votes_says_so() -> None:
    """One annotator answering Yes and No: the report said alpha "is undefined when fewer than two distinct values
    occur", which two values contradicted; no item has two votes (the krippendorff package refuses such data too)."""
    data = _listening(["ppp", "nnn"])
    data.ratings = [r for r in data.ratings if r.annotator == "x"]
    why = dict(_agreement_section(data, n_boot=20, seed=0).tables)["Figures undefined, or without a CI"]
    assert ["Per criterion", "Listening", "alpha", "alpha is undefined: no item is rated by 2 annotators or more"] \
        in why  # fmt: skip
    assert ["Per criterion", "Listening", "Fleiss' kappa", "Fleiss' kappa needs an item with at least two ratings"] \
        in why  # fmt: skip


def test_a_qualification_kappa_that_rounds_to_zero_is_no_negative_zero() -> None:
    """The qualification decisions printed kappa and threshold with :.3f, so a kappa of -0.0004 read "-0.000", a
    negative agreement that is none at three decimals. They print as every other figure does (dialeval.words.figure):
    0.000."""
    d = StudyData(protocol=load_protocol("mousavi-turn"), config={"qualification_threshold": -0.0001,
                                                                  "attention_per_batch": 0},
                  ratings=[], systems={}, batches={}, attention={},
                  people=[{"annotator": "w1", "qualified": False, "qualification_kappa": -0.0004}],
                  verdicts={"w1": (-0.0001, "below")}, counts={"qualification": 2, "attention": 0})  # fmt: skip
    (table,) = [rows for name, rows in _recruitment_section(d).tables if name == "Qualification decisions"]
    assert table[1] == ["w1", "not qualified", "0.000", "0.000", "below"]


def test_a_model_mean_that_rounds_to_zero_is_no_negative_zero(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The per-model means table printed f"{mean:.2f}": a mean of -0.001 (a slider around zero) read "-0.00"."""
    import dialeval.human.report as report

    proto = load_protocol("comperdial")
    dialogues, candidates = dialogues_and_candidates(n_contexts=1)
    config = StudyConfig(protocol=proto.name, protocol_version=proto.version, annotators=("a01", "a02"),
                         per_item=2, batch_size=4, seed=0)  # fmt: skip
    create_study(tmp_path / "s", proto, dialogues, candidates, config)
    url = f"sqlite:///{tmp_path / 's' / 'study.db'}"
    with store.connect(url).begin() as conn:  # answers, so that the report has results to show
        for ann, system in (("a01", "m1"), ("a02", "m1")):
            store.upsert_answer(conn, {"annotator": ann, "item_id": f"d0:{system}", "criterion": "Overall",
                                       "value": "3", "reasons": [], "free_text": "", "seconds": 1.0})  # fmt: skip
    monkeypatch.setattr(report, "system_means", lambda *a: {("Overall", "m1"): (4, -0.001, 0.25)})
    _, sections = build_report(url, n_boot=10)
    tables = {caption: rows for s in sections for caption, rows in s.tables}
    assert tables["Mean score per model (each sample's votes averaged first)"][1] == ["Overall", "m1", "4", "0.00",
                                                                                     "0.25"]  # fmt: skip


def test_a_figure_read_off_one_item_has_no_ci() -> None:
    """One item (Yes, Yes, No): every resample draws that item, so the CI was the figure itself and printed as
    certainty, alpha "0.000 [0.000, 0.000]" and Fleiss' kappa "-0.500 [-0.500, -0.500]". Alpha is the krippendorff
    package's on [[1], [1], [0]]; Fleiss' kappa by hand: observed 1/3, chance (2/3)^2 + (1/3)^2 = 5/9,
    (1/3 - 5/9) / (4/9) = -0.5. Both are kept, with no CI and the reason."""
    expected = krippendorff.alpha(reliability_data=[[1], [1], [0]], level_of_measurement="nominal")
    tables = dict(_agreement_section(_listening(["ppn"]), n_boot=50, seed=0).tables)
    assert tables["Per criterion"][1] == ["Listening", "1", f"{expected:.3f} [no CI]", "-0.500 [no CI]", "undefined"]
    why = tables["Figures undefined, or without a CI"]
    for stat in ("alpha", "Fleiss' kappa"):
        assert ["Per criterion", "Listening", stat, "no CI: one item only, which every resample draws"] in why
