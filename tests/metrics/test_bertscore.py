"""BERTScore pinned to bert_score.score and to a hand rescale with the bundled baseline."""

from __future__ import annotations

import csv

import pytest

pytest.importorskip("bert_score")

import bert_score

from dialeval.data.usr import load_usr_topical_chat
from dialeval.metrics.base import MetricInput, build_inputs
from dialeval.metrics.bertscore import BertScoreMetric, baseline_file
from dialeval.models.loading import resolve_encoder_dir


@pytest.fixture(scope="module")
def items(shared_data) -> list[MetricInput]:
    bench = load_usr_topical_chat(shared_data / "usr" / "usr_topical_chat.json").head(1)
    return build_inputs(bench.candidates, bench.dialogues)


@pytest.fixture(scope="module")
def raw_reference(items):
    # The reference library's one-call API on the same packaged encoder, layer 6, no rescale.
    p, r, f = bert_score.score(
        [i.response for i in items],
        [list(i.references) for i in items],
        model_type=str(resolve_encoder_dir("all-minilm-l6-v2")),
        num_layers=6,
    )
    return p.tolist(), r.tolist(), f.tolist()


def test_raw_scores_equal_bert_score(items, raw_reference):
    out = BertScoreMetric(rescale=False).compute(items)
    assert out["bertscore_p"] == pytest.approx(raw_reference[0], abs=1e-5)
    assert out["bertscore_r"] == pytest.approx(raw_reference[1], abs=1e-5)
    assert out["bertscore_f1"] == pytest.approx(raw_reference[2], abs=1e-5)


def test_rescaled_scores_use_the_bundled_baseline(items, raw_reference):
    with baseline_file("all-minilm-l6-v2").open() as handle:
        row = list(csv.DictReader(handle))[6]
    b_f = float(row["F"])
    out = BertScoreMetric().compute(items)
    expected = [(v - b_f) / (1 - b_f) for v in raw_reference[2]]
    assert out["bertscore_f1"] == pytest.approx(expected, abs=1e-5)
    assert "baseline_sha:" in BertScoreMetric().signature
    assert "baseline_sha:" not in BertScoreMetric(rescale=False).signature


def test_baseline_is_the_mean_of_unrelated_pairs():
    # Unrelated responses should score near 0 after rescaling, a paraphrase well above.
    out = BertScoreMetric().compute(
        [
            MetricInput(response="Do you have any pets at home?", references=("I went to the beach with my sister.",)),
            MetricInput(response="I love playing football.", references=("I enjoy playing football a lot.",)),
            MetricInput(response="no reference here"),
        ]
    )
    assert abs(out["bertscore_f1"][0]) < 0.25
    assert out["bertscore_f1"][1] > 0.5
    assert out["bertscore_f1"][2] is None


def test_an_empty_response_or_reference_is_scored_as_bert_score_defines_it() -> None:
    """An empty or whitespace-only text was an AttributeError traceback (transformers 5 dropped the tokenizer
    method bert-score calls for it); bert-score defines its raw P, R and F as 0 ("Empty candidate sentence
    detected"), rescaled as every other value."""
    with baseline_file("all-minilm-l6-v2").open() as handle:
        row = list(csv.DictReader(handle))[6]  # the bundled baseline, layer 6
    rescaled_zero = [(0 - float(row[k])) / (1 - float(row[k])) for k in ("P", "R", "F")]
    items = [MetricInput(response="", references=("hello there",)),
             MetricInput(response="  ", references=("hello there",)),
             MetricInput(response="hello there", references=(" ",)),
             MetricInput(response="hello there", references=("", "hello you"))]  # fmt: skip
    out = BertScoreMetric().compute(items)
    got = [[out[f"bertscore_{k}"][j] for k in ("p", "r", "f1")] for j in range(4)]
    for j in range(3):
        assert got[j] == pytest.approx(rescaled_zero, abs=1e-6)
    assert BertScoreMetric(rescale=False).compute(items[:1])["bertscore_f1"] == [0.0]
    # Beside another reference the empty one scores 0 and the other wins: bert_score.score on that one alone.
    model = str(resolve_encoder_dir("all-minilm-l6-v2"))
    p, r, f = bert_score.score(["hello there"], [["hello you"]], model_type=model, num_layers=6, lang="en",
                               rescale_with_baseline=True, baseline_path=str(baseline_file("all-minilm-l6-v2")))
    assert got[3] == pytest.approx([p.item(), r.item(), f.item()], abs=1e-5)


def test_values_do_not_depend_on_the_process_string_hashing(tmp_path):
    """Two processes with different PYTHONHASHSEED give bit-identical BERTScores on the 360 USR-TC items.

    bert-score groups a call's sentences through a set; before the metric cut its calls into
    one-batch chunks, two such processes disagreed in the 7th decimal on some items.
    """
    import json
    import os
    import subprocess
    import sys

    script = tmp_path / "score.py"
    script.write_text(
        "import json\n"
        "from dialeval.data.catalog import load_benchmark\n"
        "from dialeval.metrics.bertscore import BertScoreMetric\n"
        "from dialeval.metrics.base import build_inputs\n"
        "b = load_benchmark('usr-tc')\n"
        "print(json.dumps(BertScoreMetric().compute(build_inputs(b.candidates, b.dialogues))['bertscore_f1']))\n"
    )
    runs = []
    for seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": seed, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
        proc = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=600)
        assert proc.returncode == 0, proc.stderr[-2000:]
        runs.append(json.loads(proc.stdout.strip().splitlines()[-1]))
    assert len(runs[0]) == 360 and all(v is not None for v in runs[0])
    assert runs[0] == runs[1]


@pytest.mark.parametrize("layers", [-3, 7, 100])
def test_a_layer_the_model_lacks_is_one_error_naming_its_range(layers: int) -> None:
    from dialeval.errors import InputError

    with pytest.raises(InputError) as err:
        BertScoreMetric(num_layers=layers)
    assert err.value.field == "--param"
    assert err.value.message.startswith(f"bertscore.num_layers={layers}: must be between 0 and 6")


def test_every_layer_of_the_model_is_accepted_and_the_top_is_read_from_the_model(tmp_path) -> None:
    from dialeval.metrics.bertscore import BertScoreConfig, model_layers

    assert [BertScoreMetric(num_layers=n, rescale=False).config.num_layers for n in (0, 3, 6)] == [0, 3, 6]
    folder = tmp_path / "enc"
    folder.mkdir()
    (folder / "config.json").write_text('{"num_hidden_layers": 2}', encoding="utf-8")
    assert model_layers(BertScoreConfig(model=str(folder))) == 2
    with pytest.raises(ValueError, match="between 0 and 2"):
        BertScoreMetric(model=str(folder), num_layers=3, rescale=False)


def test_a_text_longer_than_bert_score_reads_is_said_on_its_scores() -> None:
    """bert-score encodes each text to the tokenizer's 512 word pieces (special tokens included) and drops the rest:
    two responses that differ only past it scored the same, with nothing said. Their scores now say so in
    extras["cut"], naming the response or a reference."""
    from transformers import AutoTokenizer

    from dialeval.schema import Candidate, Dialogue, Turn
    from dialeval.scoring import score_metrics

    long = " ".join(["I really like walking my dog in the park every morning."] * 50)
    # the packaged encoder's own tokenizer, read from its folder: over 512 word pieces
    tok = AutoTokenizer.from_pretrained(str(resolve_encoder_dir("all-minilm-l6-v2")))
    assert tok.model_max_length == 512 and len(tok(long, verbose=False)["input_ids"]) > 512
    texts = {"short": ("I walk my dog.", "I walk my dog."), "long": (long, "I walk my dog."),
             "longer": (long + " But I never want to see a cat again!", "I walk my dog."),
             "long-ref": ("I walk my dog.", long)}  # fmt: skip
    dialogues = {"d": Dialogue(id="d", turns=[Turn(speaker="A", text="What do you do?")])}
    cands = [Candidate(id=k, dialogue_id="d", turn_index=1, system=k, text=t, references=[r])
             for k, (t, r) in texts.items()]  # fmt: skip
    (run,) = score_metrics([BertScoreMetric()], cands, dialogues)
    f1 = {s.item_id: s for s in run.scores if s.metric == "bertscore_f1"}
    assert f1["long"].value == f1["longer"].value  # the end past the limit is not read
    response = "response read to its first 512 word pieces (the encoder's limit)"
    reference = "a reference read to its first 512 word pieces (the encoder's limit)"
    assert f1["long"].extras == {"cut": response} and f1["short"].extras == {}
    assert f1["long-ref"].extras == {"cut": reference}
    assert run.cuts() == {m: {response: 2, reference: 1} for m in BertScoreMetric.outputs}


@pytest.mark.parametrize(
    ("limit", "says"),
    [
        (None, "reads at most 512 word pieces and its tokenizer sets no limit to cut a text to"),
        (1024, "reads at most 512 word pieces and its tokenizer cuts a text to 1024 word pieces, past them"),
    ],
)
def test_an_encoder_whose_tokenizer_cuts_past_its_positions_is_one_error(tmp_path, limit, says) -> None:
    """bert-score encodes each text to the tokenizer's model_max_length. A copy of the packaged encoder (512
    positions, its config.json) whose tokenizer_config.json sets none (transformers then reads 1e30) was an
    OverflowError traceback ('int too big to convert') on any text, a short one too; one that sets 1024 was torch's
    ('The expanded size of the tensor (702) must match the existing size (512)') on a 700-word response, and
    cut() said nothing of either. Both are now one error naming the folder, both lengths and the fix."""
    import json

    from dialeval.errors import InputError

    source = resolve_encoder_dir("all-minilm-l6-v2")
    folder = tmp_path / "enc"
    folder.mkdir()
    for f in source.iterdir():  # links to the packaged files; only the tokenizer config differs
        if f.name != "tokenizer_config.json":
            (folder / f.name).symlink_to(f)
    settings = json.loads((source / "tokenizer_config.json").read_text(encoding="utf-8"))
    assert settings.pop("model_max_length") == 512
    if limit is not None:
        settings["model_max_length"] = limit
    (folder / "tokenizer_config.json").write_text(json.dumps(settings), encoding="utf-8")
    metric = BertScoreMetric(model=str(folder), rescale=False)
    long = MetricInput(response=" ".join(["walking"] * 700), references=("I walk.",))
    short = MetricInput(response="I walk my dog.", references=("I walk.",))
    for call, item in ((metric.compute, long), (metric.cut, long), (metric.compute, short)):
        with pytest.raises(InputError) as err:
            call([item])
        assert err.value.field == "model"
        assert err.value.message.startswith(f'"{folder}" {says}'), err.value.message
        assert err.value.message.endswith(": set model_max_length to 512 in its tokenizer_config.json")


def test_a_folder_that_holds_no_model_is_one_error_naming_the_parameter(tmp_path) -> None:
    """``-p bertscore.model=FOLDER -p bertscore.rescale=false`` of a folder without a model (here empty) was
    'metric "bertscore" failed on candidate ...: ValueError: Couldn't instantiate the backend tokenizer from one of:
    \\n(1) ...', transformers' message as a failed candidate, naming no option; then the same, its first line
    alone, under "cannot be loaded as a BERTScore encoder", which says nothing of what is wrong."""
    from tests.commands.cli_runner import invoke, refused

    folder = tmp_path / "m"
    folder.mkdir()
    data = tmp_path / "t.csv"
    data.write_text("context,response,ref\nHi there.,Hello!,Hi!\n", encoding="utf-8")
    for cache in (["--no-cache"], ["--cache", tmp_path / "c.sqlite"]):
        res = invoke("score", "--path", data, "--response-col", "response", "--context-col", "context",
                     "--reference-col", "ref", "-m", "bertscore", "-p", f"bertscore.model={folder}",
                     "-p", "bertscore.rescale=false", *cache, "-o", tmp_path / "s.jsonl")  # fmt: skip
        refused(res, f'field "--param": bertscore.model: "{folder}" is not a transformers model folder (no '
                     "config.json)")  # fmt: skip
        assert not (tmp_path / "s.jsonl").exists()


def test_a_folder_that_holds_no_model_is_said_before_it_has_no_baseline(tmp_path) -> None:
    """``-p bertscore.model=FOLDER`` with rescale on (the default), of a folder without a model, said 'no bundled
    BERTScore baseline for FOLDER; use rescale=false', and only that fix led to the folder's real error. A model
    that loads still has no baseline to rescale with."""
    from tests.commands.cli_runner import invoke, refused

    folder = tmp_path / "m"
    folder.mkdir()
    (folder / "config.json").write_text('{"model_type": "bert"}', encoding="utf-8")  # and no weights
    data = tmp_path / "t.csv"
    data.write_text("context,response,ref\nHi there.,Hello!,Hi!\n", encoding="utf-8")
    args = ["score", "--path", data, "--response-col", "response", "--context-col", "context", "--reference-col",
            "ref", "-m", "bertscore", "-p", f"bertscore.model={folder}", "-o", tmp_path / "s.jsonl"]  # fmt: skip
    said = f'field "--param": bertscore.model: "{folder}" cannot be loaded as a BERTScore encoder (a transformers ' \
           "folder): OSError: "  # fmt: skip
    refused(invoke(*args, "--no-cache"), said)
    refused(invoke(*args, "--cache", tmp_path / "c.sqlite"), said)
    copy = tmp_path / "copy"
    copy.symlink_to(resolve_encoder_dir("all-minilm-l6-v2"), target_is_directory=True)
    refused(invoke(*args[:-3], f"bertscore.model={copy}", "--no-cache", *args[-2:]),
            f'field "--param": bertscore.rescale: no bundled BERTScore baseline for "{copy}"; use rescale=false')
    assert not (tmp_path / "s.jsonl").exists()
