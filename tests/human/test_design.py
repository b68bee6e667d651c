"""Study design: balanced seeded assignment, ground truth, per-annotator order, attention checks."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
import sqlalchemy as sa
from tests.human.conftest import dialogues_and_candidates

from dialeval.human import store
from dialeval.human.design import StudyConfig, assign, create_study
from dialeval.human.protocol import load_protocol
from dialeval.schema import Rating


def test_assignment_is_balanced_distinct_and_seeded() -> None:
    units = [f"u{i}" for i in range(23)]
    plan = assign(units, ["a", "b", "c", "d", "e"], per_item=3, seed=1)
    loads = sorted(len(v) for v in plan.values())
    assert sum(loads) == 69 and loads[-1] - loads[0] <= 1
    per_unit = Counter(u for v in plan.values() for u in v)
    assert set(per_unit.values()) == {3}
    assert all(len(set(v)) == len(v) for v in plan.values())
    assert plan == assign(units, ["a", "b", "c", "d", "e"], per_item=3, seed=1)
    assert plan != assign(units, ["a", "b", "c", "d", "e"], per_item=3, seed=2)


def _design(folder: Path, seed: int = 0) -> sa.Engine:
    proto = load_protocol("mousavi-turn")
    dialogues, candidates = dialogues_and_candidates(n_contexts=6)
    attention = [
        c.model_copy(update={"id": f"att{i}", "text": "Please answer No here."})
        for i, c in enumerate(candidates[0:4:2])
    ]
    gold = [
        Rating(item_id=f"att{i}", dimension="Appropriateness", annotator="check", value="negative") for i in range(2)
    ]
    cfg = StudyConfig(
        proto.name,
        proto.version,
        ("a01", "a02", "a03", "a04"),
        per_item=2,
        batch_size=3,
        seed=seed,
        attention_per_batch=1,
    )
    create_study(folder, proto, dialogues, candidates[1:] + candidates[:1], cfg, attention=(attention, gold))
    return store.connect(store.db_url(folder))


def test_study_layout(tmp_path: Path) -> None:
    engine = _design(tmp_path / "s")
    with engine.connect() as conn:
        items = conn.execute(sa.select(store.items)).all()
        assigned = conn.execute(sa.select(store.assignments).order_by(store.assignments.c.position)).all()
        gold = conn.execute(sa.select(store.gold)).all()
    main = [i for i in items if i.kind == "main"]
    # 6 contexts x (2 systems + the ground-truth reference the protocol adds)
    assert len(main) == 18 and Counter(i.system for i in main)["ground-truth"] == 6
    assert {i.batch for i in main} == {1, 2}
    main_assign = [a for a in assigned if a.kind == "main"]
    assert len(main_assign) == 12  # 6 units x 2 annotators
    # one attention check per annotator and batch in which they have work, never twice the same unit
    att = [a for a in assigned if a.kind == "attention"]
    batches_with_work = {(a.annotator, a.batch) for a in main_assign}
    assert {(a.annotator, a.batch) for a in att} == batches_with_work
    assert all(len({a.unit_id for a in att if a.annotator == n}) == 2 for n in ("a01", "a02", "a03", "a04"))
    assert sorted((g.item_id, g.value) for g in gold) == [
        ("attention:att0", "negative"),
        ("attention:att1", "negative"),
    ]
    # per-annotator order: positions are a permutation, batches in order
    for name in ("a01", "a02", "a03", "a04"):
        mine = [a for a in assigned if a.annotator == name]
        assert [a.position for a in mine] == list(range(len(mine)))
        assert [a.batch for a in mine] == sorted(a.batch for a in mine)


def test_same_seed_same_design(tmp_path: Path) -> None:
    def layout(folder: Path, seed: int) -> list[tuple[str, str, int]]:
        with _design(folder, seed).connect() as conn:
            q = sa.select(store.assignments.c.annotator, store.assignments.c.unit_id, store.assignments.c.position)
            return sorted(tuple(r) for r in conn.execute(q))

    assert layout(tmp_path / "a", 0) == layout(tmp_path / "b", 0)
    assert layout(tmp_path / "a2", 0) != layout(tmp_path / "c", 5)


def test_a_seed_gives_the_layout_it_gave_before(tmp_path: Path) -> None:
    """A study made again from its seed is the same study: each annotator's units (and batches) in order, as the
    planner wrote them before its per-batch loop was rewritten for large studies (commit f0af40a, the reference)."""
    with _design(tmp_path / "s", seed=0).connect() as conn:
        a = store.assignments.c
        rows = conn.execute(sa.select(a.annotator, a.unit_id, a.batch).order_by(a.annotator, a.position)).all()
    got: dict[str, list[str]] = {}
    for annotator, unit, batch in rows:
        got.setdefault(annotator, []).append(f"{unit}@{batch}")
    assert got == {
        "a01": ["d2#2@1", "attention:d0#2@1", "d0#2@2", "d5#2@2", "attention:d1#2@2"],
        "a02": ["d1#2@1", "d4#2@1", "attention:d0#2@1", "d3#2@2", "attention:d1#2@2"],
        "a03": ["d4#2@1", "attention:d1#2@1", "d3#2@2", "d0#2@2", "attention:d0#2@2"],
        "a04": ["d1#2@1", "attention:d0#2@1", "d2#2@1", "d5#2@2", "attention:d1#2@2"],
    }


def test_the_reference_is_the_one_its_candidates_share_and_shown_once_when_a_system_said_it() -> None:
    """USR's candidates take "Original Ground Truth" (OGT) as their reference, and OGT's own reference is "New Human
    Generated" (NHG). The ground-truth item took the first candidate's reference, OGT's: every USR unit showed NHG's
    text twice, once labelled ground truth, and OGT's text as a system only. Now the reference is the one most
    candidates give (here "ogt"); a candidate already saying it is shown once, as its system's."""
    from dialeval.human.design import build_units
    from dialeval.schema import Candidate

    proto = load_protocol("mousavi-turn")
    dialogues, _ = dialogues_and_candidates(n_contexts=2)
    usr = {"OGT": ("ogt", "nhg"), "NHG": ("nhg", "ogt"), "bot": ("hi", "ogt")}  # system: (text, reference)
    cands = [Candidate(id=f"d0:{s}", dialogue_id="d0", turn_index=2, system=s, text=t, references=[r])
             for s, (t, r) in usr.items()]  # fmt: skip
    cands.append(Candidate(id="d1:bot", dialogue_id="d1", turn_index=2, system="bot", text="yo", references=["ref"]))
    first, second = build_units(proto, dialogues, cands)
    assert [(i["system"], i["text"]) for i in first.items] == [("OGT", "ogt"), ("NHG", "nhg"), ("bot", "hi")]
    assert first.reference_as == "OGT"
    # a reference no candidate says is its own item, after the first candidate with a reference (as before)
    assert [(i["id"], i["text"]) for i in second.items] == [("d1:bot", "yo"), ("d1#2:ground-truth", "ref")]
    assert second.reference_as == ""


def test_a_shown_tag_must_be_there_and_agree_within_a_context() -> None:
    """lmstyle-sliders shows each context's requested style (its candidates' task tag): missing or mixed is an error."""
    from dialeval.errors import InputError
    from dialeval.human.design import build_units

    proto = load_protocol("lmstyle-sliders")
    dialogues, candidates = dialogues_and_candidates(n_contexts=2)
    with pytest.raises(InputError, match='candidate "d0:m1" has none'):
        build_units(proto, dialogues, candidates)
    tagged = [c.model_copy(update={"tags": {"task": "Formal" if c.dialogue_id == "d0" else "Negative"}})
              for c in candidates]  # fmt: skip
    assert [u.note for u in build_units(proto, dialogues, tagged)] == ["Formal", "Negative"]
    mixed = [c.model_copy(update={"tags": {"task": c.system}}) for c in candidates]
    with pytest.raises(InputError, match="ask for different tasks"):
        build_units(proto, dialogues, mixed)


def test_a_dialogue_level_unit_without_turns_is_refused() -> None:
    """comperdial-dialogue took a dialogue with no turns as a unit: its annotators were shown nothing to rate."""
    from dialeval.errors import InputError
    from dialeval.human.design import build_units

    dialogues, candidates = dialogues_and_candidates(n_contexts=2)
    dialogues["d1"] = dialogues["d1"].model_copy(update={"turns": []})
    proto = load_protocol("comperdial-dialogue")
    with pytest.raises(InputError, match='field "turns": dialogue "d1" has no turns'):
        build_units(proto, dialogues, candidates)
    with pytest.raises(InputError, match='dialogue "d1" has no turns'):
        build_units(proto, dialogues, [])
    assert [u.id for u in build_units(proto, {"d0": dialogues["d0"]}, [])] == ["d0"]


def test_a_gold_i_dont_know_is_the_protocols_own_option(tmp_path: Path) -> None:
    """gold_answer turned a gold "I don't know" into the literal "dont_know": a protocol whose "I don't know"
    option is valued "unsure" refused every such qualification or attention rating. It is now that option's value;
    a protocol without one still refuses it."""
    from importlib import resources

    from dialeval.errors import InputError
    from dialeval.human.design import gold_answer

    text = (resources.files("dialeval.human") / "protocols" / "mousavi-turn.yaml").read_text(encoding="utf-8")
    (mine := tmp_path / "mine.yaml").write_text(text.replace("{value: dont_know,", "{value: unsure,"), "utf-8")
    protocol = load_protocol(mine)
    unsure = Rating(item_id="i", dimension="Listening", annotator="r", value=None, dont_know=True)
    assert gold_answer(protocol, unsure, "attention") == "unsure"
    assert gold_answer(load_protocol("mousavi-turn"), unsure, "attention") == "dont_know"
    sliders = load_protocol("lmstyle-sliders")  # no "I don't know" option
    dim = sliders.criteria[0].name
    with pytest.raises(InputError, match="no \"I don't know\" answer"):
        gold_answer(sliders, unsure.model_copy(update={"dimension": dim}), "attention")
