"""Embedding cosine pinned to sentence_transformers.util.cos_sim on real USR items."""

from __future__ import annotations

import pytest

pytest.importorskip("sentence_transformers")

from sentence_transformers import SentenceTransformer, util

from dialeval.data.usr import load_usr_persona_chat
from dialeval.metrics.base import MetricInput, build_inputs
from dialeval.metrics.embedding import EmbeddingMetric
from dialeval.models.loading import resolve_encoder_dir
from dialeval.schema import Turn


@pytest.fixture(scope="module")
def items(shared_data) -> list[MetricInput]:
    bench = load_usr_persona_chat(shared_data / "usr" / "pc_usr_data.json").head(2)
    return build_inputs(bench.candidates, bench.dialogues)


@pytest.fixture(scope="module")
def reference_encoder() -> SentenceTransformer:
    # An independent instance, called the plain way (no normalisation, no dedup).
    return SentenceTransformer(str(resolve_encoder_dir("all-minilm-l6-v2")), device="cpu")


def test_cosines_equal_util_cos_sim(items, reference_encoder):
    values = EmbeddingMetric().compute(items)
    assert len(items) == 10  # 2 contexts x 5 systems
    for j, item in enumerate(items):
        resp = reference_encoder.encode([item.response])
        refs = reference_encoder.encode(list(item.references))
        know = reference_encoder.encode(list(item.knowledge))
        last = reference_encoder.encode([item.context[-1].text])
        assert values["sbert_ref"][j] == pytest.approx(float(util.cos_sim(resp, refs).max()), abs=1e-5)
        assert values["sbert_knowledge"][j] == pytest.approx(float(util.cos_sim(resp, know).max()), abs=1e-5)
        assert values["sbert_context"][j] == pytest.approx(float(util.cos_sim(resp, last)[0, 0]), abs=1e-5)


def test_paraphrase_beats_unrelated_and_missing_parts_are_none():
    m = EmbeddingMetric()
    out = m.compute(
        [
            MetricInput(response="I love playing football.", references=("I enjoy playing soccer.",)),
            MetricInput(response="The stock market fell today.", references=("I enjoy playing soccer.",)),
            MetricInput(response="hello"),
        ]
    )
    assert out["sbert_ref"][0] > 0.6 > 0.2 > out["sbert_ref"][1]
    assert out["sbert_ref"][2] is None and out["sbert_context"][2] is None and out["sbert_knowledge"][2] is None


def test_batch_split_does_not_change_values(items):
    m = EmbeddingMetric()
    whole = m.compute(items)["sbert_ref"]
    parts = list(m.compute(items[:3])["sbert_ref"]) + list(m.compute(items[3:])["sbert_ref"])
    assert parts == pytest.approx(whole, abs=1e-5)
    assert "model_sha:" in m.signature


def test_a_text_longer_than_the_encoder_reads_is_said_on_its_scores(reference_encoder, tmp_path):
    """A response past the encoder's 256 word pieces was read to the limit with nothing said: two responses that
    differ only after it got the same sbert_ref. Its scores now say so (extras["cut"]), and `score` counts them."""
    import json

    from tests.commands.cli_runner import invoke

    from dialeval.schema import Candidate, Dialogue, Turn
    from dialeval.scoring import score_metrics

    long = " ".join(["I really like walking my dog in the park every morning."] * 40)
    # the reference tokenizer's own count: more than the 256 word pieces all-minilm-l6-v2 reads
    assert len(reference_encoder.tokenizer(long)["input_ids"]) > reference_encoder.max_seq_length == 256
    texts = {"short": "I walk my dog.", "long": long, "longer": long + " But I never want to see a cat again!"}
    dialogues = {"d": Dialogue(id="d", turns=[Turn(speaker="A", text="What do you do?")])}
    cands = [Candidate(id=k, dialogue_id="d", turn_index=1, system=k, text=t, references=["I walk my dog."])
             for k, t in texts.items()]  # fmt: skip
    (run,) = score_metrics([EmbeddingMetric()], cands, dialogues)
    ref = {s.item_id: s for s in run.scores if s.metric == "sbert_ref"}
    assert ref["long"].value == ref["longer"].value  # the end past the limit is not read
    said = "response read to its first 256 word pieces (the encoder's limit)"
    assert ref["long"].extras == {"cut": said} and ref["short"].extras == {}
    assert run.cuts() == {"sbert_ref": {said: 2}, "sbert_context": {said: 2}}  # sbert_knowledge: no value
    # a long reference is said too, on the short response's sbert_ref only
    (run,) = score_metrics([EmbeddingMetric()], [cands[0].model_copy(update={"references": [long]})], dialogues)
    assert run.cuts() == {"sbert_ref": {"a reference read to its first 256 word pieces (the encoder's limit)": 1}}
    rows = tmp_path / "rows.csv"
    rows.write_text("context,response\n" + "".join(f"What do you do?,{t}\n" for t in texts.values()))
    cols = ("--response-col", "response", "--context-col", "context")
    res = invoke("score", "--path", rows, *cols, "-m", "embedding", "-o", tmp_path / "s.jsonl", "--no-cache")
    assert res.exit_code == 0, res.output
    assert f"read in part (cut): sbert_context 2 ({said})" in " ".join(res.output.split())
    res = invoke("score", "--path", rows, *cols, "-m", "embedding", "-o", tmp_path / "t.jsonl", "--no-cache", "--json")
    assert json.loads(res.stdout)["metrics"]["embedding"]["cut"] == {"sbert_context": 2}


def test_the_cut_check_tokenizes_without_transformers_too_long_warning(reference_encoder):
    """cut() counts each text's word pieces with the encoder's own tokenizer; called plainly, that tokenizer logs
    'Token indices sequence length is longer than the specified maximum' (transformers, once per tokenizer), which
    reached the user's stderr in the middle of a benchmark. A handler on transformers' logger records what is said."""
    import logging

    from dialeval.models.loading import load_sentence_encoder

    class Said(logging.Handler):
        def __init__(self) -> None:
            super().__init__()
            self.lines: list[str] = []

        def emit(self, record: logging.LogRecord) -> None:
            self.lines.append(record.getMessage())

    said, log = Said(), logging.getLogger("transformers.tokenization_utils_base")
    encoder, _ = load_sentence_encoder("all-minilm-l6-v2", "cpu")
    long = " ".join(["word"] * 600)
    log.addHandler(said)
    try:
        encoder.tokenizer.deprecation_warnings.clear()  # the once-per-tokenizer flag an earlier test may have set
        assert EmbeddingMetric().cut([MetricInput(response="Hi.", knowledge=(long,))])[0] == {
            "sbert_knowledge": "a fact or persona line read to its first 256 word pieces (the encoder's limit)"
        }
        assert said.lines == []
        encoder.tokenizer.deprecation_warnings.clear()
        encoder.tokenizer([long])  # the plain call logs it: the handler would see the line
        assert any("Token indices sequence length" in x for x in said.lines)
    finally:
        log.removeHandler(said)


def test_an_empty_response_gets_no_value_and_says_why(reference_encoder):
    """A blank response was scored as the encoder's embedding of no word: 1.0 against a blank reference."""
    m = EmbeddingMetric()
    context = (Turn(speaker="A", text="How are you?"),)
    items = [MetricInput(response="   ", references=("  ", "fine"), context=context, knowledge=("I am fine.",)),
             MetricInput(response="fine thanks", references=("fine",), context=context)]
    out = m.compute(items)
    assert [out[o][0] for o in m.outputs] == [None, None, None]
    assert [m.lacks(o, items[0]) for o in m.outputs] == ["empty response"] * 3
    # the other item of the batch keeps its value: sentence-transformers' own cosine, called the plain way
    resp, ref = reference_encoder.encode(["fine thanks", "fine"])
    assert out["sbert_ref"][1] == pytest.approx(float(util.cos_sim(resp, ref)[0, 0]), abs=1e-5)
    assert "|empty:null|" in m.signature
