"""Scoring generated responses with the paper's metrics: every response gets a row of every metric asked for."""

from __future__ import annotations

from dialeval.lmstyle.score import score_generated
from dialeval.lmstyle.tables import build_table, system_summary
from dialeval.schema import Candidate, Dialogue, Turn


def test_a_response_without_a_reference_is_counted_in_the_bleu_and_sbert_cells() -> None:
    """A blank reference line is kept (read_pairs: that response has none), and BLEU and SBERT were computed over
    the responses with a reference only: the other had no row in scores.jsonl, its cells averaged one response of
    two with no "(1/2)", and the summary said "BLEU scored 1/1" beside "responses 2". It now has a null row that
    says why, and the cells and the summary count it."""
    tags = {"dataset": "dd", "style": "formal", "task": "Formal", "model": "m"}
    dialogues = {f"d{i}": Dialogue(id=f"d{i}", turns=[Turn(speaker="A", text="Hi there")], tags={"dataset": "dd"})
                 for i in (0, 1)}  # fmt: skip
    candidates = [
        Candidate(id="d0:formal:m", dialogue_id="d0", turn_index=1, system="m", text="Hello there friend",
                  references=["Hello there friend"], tags=tags),
        Candidate(id="d1:formal:m", dialogue_id="d1", turn_index=1, system="m", text="Hello", references=[], tags=tags),
    ]  # fmt: skip
    run = score_generated(candidates, dialogues, metrics=["sacrebleu", "embedding"])
    rows = sorted((s.item_id, s.metric, s.value is None, s.extras.get("error")) for s in run.scores)
    assert rows == [("d0:formal:m", "sacrebleu", False, None), ("d0:formal:m", "sbert_ref", False, None),
                    ("d1:formal:m", "sacrebleu", True, "no reference to compare with"),
                    ("d1:formal:m", "sbert_ref", True, "no reference to compare with")]  # fmt: skip
    cells = {c.column: c for c in build_table("table4", run.scores).cells()}
    # one identical reference: sentence BLEU 100 and cosine 1 (SBERT 100), over the one response that has one
    assert cells["Formal BLEU"].scored == cells["Formal SBERT"].scored == "1/2"
    assert round(cells["Formal BLEU"].value or 0) == round(cells["Formal SBERT"].value or 0) == 100
    summary = system_summary(run.scores, {"m": 2}, {"m": 0})[0]
    assert (summary["BLEU scored"], summary["SBERT scored"]) == ("1/2", "1/2")
