"""quality's encoders in ONNX Runtime against the torch eager models they were exported from, on real USR-TC text."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("onnxruntime")

from dialeval.data.usr import load_usr_topical_chat  # noqa: E402
from dialeval.errors import InputError  # noqa: E402
from dialeval.metrics.base import build_inputs  # noqa: E402
from dialeval.metrics.quality import BUNDLED, QualityMetric, _views  # noqa: E402
from dialeval.metrics.quality.crossenc import TURNS, score_batches  # noqa: E402
from dialeval.metrics.quality.features import embed, pair_texts  # noqa: E402
from dialeval.metrics.quality.onnx import (  # noqa: E402
    OrtEncoder,
    OrtViews,
    cpu_vendor,
    export_key,
    exportable,
    onnx_encoder,
    onnx_views,
    resolve_runtime,
)
from dialeval.models.loading import DEFAULT_ENCODER, fingerprint, load_sentence_encoder, resolve_encoder_dir  # noqa: E402


@pytest.fixture(scope="module")
def pairs(shared_data):
    """Pairs of six USR-TC contexts: 36 inputs of many lengths, so the batches pad and vary in shape."""
    bench = load_usr_topical_chat(shared_data / "usr" / "usr_topical_chat.json").head(6)
    items = build_inputs(bench.candidates, bench.dialogues)
    _, tokens = _views(str(BUNDLED / "views"), str(resolve_encoder_dir(DEFAULT_ENCODER)), "cpu", "torch")
    return tokens.pairs([[t.text for t in i.context][-TURNS:] for i in items], [i.response for i in items])


def eager():
    return _views(str(BUNDLED / "views"), str(resolve_encoder_dir(DEFAULT_ENCODER)), "cpu", "torch")[0]


def test_onnx_logits_equal_the_eager_models(pairs, tmp_path, monkeypatch):
    monkeypatch.setenv("DIALEVAL_CACHE", str(tmp_path))
    key = export_key(fingerprint(resolve_encoder_dir(DEFAULT_ENCODER)), BUNDLED / "views")
    ort = onnx_views(eager(), key)
    assert len({len(ids) for ids, _ in pairs}) > 10
    want, got = np.asarray(score_batches(eager(), pairs)), np.asarray(score_batches(ort, pairs))
    assert want.shape == got.shape == (len(pairs), 3)
    np.testing.assert_allclose(got, want, atol=1e-4)  # float32 sums in another order: ~1e-5 seen
    assert np.abs(want).max() > 1.0  # the comparison is not between near-zero outputs
    for v in range(3):  # the same order of the items on every view
        assert (np.argsort(got[:, v], kind="stable") == np.argsort(want[:, v], kind="stable")).mean() > 0.9


def test_the_export_is_cached_and_a_reload_gives_the_same_bits(pairs, tmp_path, monkeypatch):
    monkeypatch.setenv("DIALEVAL_CACHE", str(tmp_path))
    first = onnx_views(eager(), "k1")
    path = tmp_path / "onnx" / "views-k1.onnx"
    stamp = path.stat().st_mtime_ns
    again = onnx_views(eager(), "k1")
    assert path.stat().st_mtime_ns == stamp  # not exported twice
    assert not list((tmp_path / "onnx").glob(".*.tmp"))  # no temporary file left
    assert score_batches(first, pairs) == score_batches(again, pairs)
    assert isinstance(OrtViews(path, 2), OrtViews)


def test_a_damaged_cached_export_is_exported_again(pairs, tmp_path, monkeypatch):
    monkeypatch.setenv("DIALEVAL_CACHE", str(tmp_path))
    want = score_batches(onnx_views(eager(), "k2"), pairs[:4])
    path = tmp_path / "onnx" / "views-k2.onnx"
    path.write_bytes(path.read_bytes()[:1000])  # cut short, as by a full disk
    assert score_batches(onnx_views(eager(), "k2"), pairs[:4]) == want
    assert path.stat().st_size > 1_000_000


def test_the_export_key_follows_the_trained_files(tmp_path):
    for name in ("adapter.safetensors", "heads.json"):
        (tmp_path / name).write_bytes((BUNDLED / "views" / name).read_bytes())
    same = export_key("enc", tmp_path)
    assert same == export_key("enc", BUNDLED / "views") != export_key("other encoder", BUNDLED / "views")
    (tmp_path / "heads.json").write_text((BUNDLED / "views" / "heads.json").read_text() + " ")
    assert export_key("enc", tmp_path) != same


def test_runtime_resolution_and_its_errors(monkeypatch):
    monkeypatch.setattr("dialeval.metrics.quality.onnx.cpu_vendor", lambda: "AuthenticAMD")
    assert resolve_runtime("auto", "cpu") == "onnx"  # installed here
    monkeypatch.setattr("dialeval.metrics.quality.onnx.cpu_vendor", lambda: "GenuineIntel")
    assert resolve_runtime("auto", "cpu") == "torch"  # torch's kernels are the faster ones there
    assert resolve_runtime("onnx", "cpu") == "onnx"  # asked for: given
    monkeypatch.setattr("dialeval.metrics.quality.onnx.cpu_vendor", lambda: "")
    assert resolve_runtime("auto", "cuda") == "torch"
    assert resolve_runtime("torch", "cpu") == "torch"
    with pytest.raises(InputError, match='runtime "tensorrt" is not one of auto, torch, onnx'):
        resolve_runtime("tensorrt", "cpu")
    with pytest.raises(InputError, match="CPU only"):
        resolve_runtime("onnx", "cuda")
    monkeypatch.setattr("dialeval.metrics.quality.onnx._installed", lambda: False)
    assert resolve_runtime("auto", "cpu") == "torch"
    with pytest.raises(Exception, match="pip install"):
        resolve_runtime("onnx", "cpu")


def test_the_cpu_vendor_is_read_from_proc_cpuinfo():
    import re
    from pathlib import Path

    info = Path("/proc/cpuinfo")
    if not info.exists():
        pytest.skip("no /proc/cpuinfo here")
    found = re.search(r"^vendor_id\s*:\s*(\S+)", info.read_text(), re.MULTILINE)
    assert cpu_vendor() == (found.group(1) if found else "")


def test_onnx_sentence_embeddings_equal_sentence_transformers(shared_data, tmp_path, monkeypatch):
    """Through embed(): the token-budget batches, each text padded beside others, against one text at a time."""
    monkeypatch.setenv("DIALEVAL_CACHE", str(tmp_path))
    bench = load_usr_topical_chat(shared_data / "usr" / "usr_topical_chat.json").head(3)
    items = build_inputs(bench.candidates, bench.dialogues)
    texts = sorted(set(pair_texts([[t.text for t in i.context] for i in items], [i.response for i in items])))
    encoder, _ = load_sentence_encoder(DEFAULT_ENCODER, "cpu")
    ort = onnx_encoder(encoder, "e1")
    assert isinstance(ort, OrtEncoder) and (tmp_path / "onnx" / "encoder-e1.onnx").exists()
    got = embed(ort, [" " + texts[0] + " ", *texts], max_tokens=512)  # surrounding spaces: stripped as by ST
    assert len(got) == len(texts) + 1 and len(texts) > 10
    for t in texts:
        np.testing.assert_allclose(got[t], encoder.encode([t], normalize_embeddings=True)[0], atol=1e-5)
    np.testing.assert_allclose(got[" " + texts[0] + " "], got[texts[0]], atol=1e-6)


def test_quality_in_onnx_equals_quality_in_torch(shared_data):
    bench = load_usr_topical_chat(shared_data / "usr" / "usr_topical_chat.json").head(2)
    items = build_inputs(bench.candidates, bench.dialogues)
    onnx_metric = QualityMetric(device="cpu", runtime="onnx")
    torch_metric = QualityMetric(device="cpu", runtime="torch")
    assert isinstance(onnx_metric.sentence_encoder(), OrtEncoder) and isinstance(onnx_metric.views()[0], OrtViews)
    assert isinstance(onnx_metric.large()[0], OrtEncoder)  # mpnet too (it ran in torch under "onnx" before)
    assert not isinstance(torch_metric.sentence_encoder(), OrtEncoder)
    assert not isinstance(torch_metric.large()[0], OrtEncoder)
    assert not isinstance(torch_metric.views()[0], OrtViews)
    fast, eager = onnx_metric.compute(items), torch_metric.compute(items)
    for name in fast:
        np.testing.assert_allclose(fast[name], eager[name], atol=1e-4, err_msg=name)


def test_the_signature_names_the_runtime():
    assert "|runtime:auto|" in QualityMetric(device="cpu").signature
    used = resolve_runtime("auto", "cpu")
    assert f"|runtime_used:{used}|" in QualityMetric(device="cpu").signature  # what auto became here
    assert "|runtime_used:onnx|" in QualityMetric(device="cpu", runtime="onnx").signature
    assert "|runtime_used:torch|" in QualityMetric(device="cpu", runtime="torch").signature
    onnx = QualityMetric(device="cpu", runtime="onnx").features_key()
    assert onnx != QualityMetric(device="cpu", runtime="torch").features_key()
    # mpnet in ONNX Runtime is named, so no score cached when it ran in torch under "onnx" is served for it
    assert "|large_runtime_used:onnx|" in QualityMetric(device="cpu", runtime="onnx").signature
    assert "large_runtime_used" not in QualityMetric(device="cpu", runtime="torch").signature


def test_the_adapted_mpnet_in_onnx_equals_it_in_torch(shared_data):
    """The shipped larger encoder (LoRA merged) exported without token types, through embed(), against torch eager."""
    bench = load_usr_topical_chat(shared_data / "usr" / "usr_topical_chat.json").head(3)
    items = build_inputs(bench.candidates, bench.dialogues)
    texts = sorted(set(pair_texts([[t.text for t in i.context] for i in items], [i.response for i in items])))
    ort, eager = QualityMetric(device="cpu", runtime="onnx").large()[0], QualityMetric(device="cpu").large()[0]
    assert isinstance(ort, OrtEncoder) and ort.inputs == {"ids", "mask"}
    eager = eager.st if isinstance(eager, OrtEncoder) else eager  # auto may be onnx here: compare with its torch model
    got, want = embed(ort, texts, max_tokens=512), embed(eager, texts, max_tokens=512)
    assert len(texts) > 10
    for t in texts:  # max abs difference 1.9e-7 seen on USR-TC
        np.testing.assert_allclose(got[t], want[t], atol=1e-5)
    # the adapter is merged: the frozen mpnet gives other embeddings (so the comparison is not of the base model)
    frozen, _ = load_sentence_encoder("all-mpnet-base-v2", "cpu")
    assert np.abs(frozen.encode([texts[0]], normalize_embeddings=True)[0] - want[texts[0]]).max() > 1e-3


def test_an_encoder_of_another_kind_stays_in_torch(monkeypatch, tmp_path):
    encoder, _ = load_sentence_encoder(DEFAULT_ENCODER, "cpu")
    monkeypatch.setattr(encoder[0].auto_model.config, "model_type", "distilbert")
    monkeypatch.setenv("DIALEVAL_CACHE", str(tmp_path))
    assert onnx_encoder(encoder, "x") is None and not (tmp_path / "onnx").exists()  # nothing exported
    # the same rule read from a folder's files, which the signature uses before anything is loaded
    assert exportable(resolve_encoder_dir("all-mpnet-base-v2")) and exportable(resolve_encoder_dir(DEFAULT_ENCODER))
    assert not exportable(tmp_path)  # no config.json, no modules.json
    folder = tmp_path / "dense"
    shutil.copytree(resolve_encoder_dir(DEFAULT_ENCODER), folder)
    modules = json.loads((folder / "modules.json").read_text())
    (folder / "modules.json").write_text(json.dumps([*modules, {"idx": 3, "name": "3", "path": "3_Dense",
                                                                "type": "sentence_transformers.models.Dense"}]))
    assert not exportable(folder)  # a Dense module after the pooling: onnx_encoder would keep it in torch


def test_the_larger_encoders_export_key_follows_its_adapter_and_card(tmp_path):
    files = ("adapter.safetensors", "encoder.json")
    for name in files:
        (tmp_path / name).write_bytes((BUNDLED / "heads-large" / name).read_bytes())
    same = export_key("mpnet", tmp_path, files)
    assert same == export_key("mpnet", BUNDLED / "heads-large", files) != export_key("mpnet")
    (tmp_path / "encoder.json").write_text((BUNDLED / "heads-large" / "encoder.json").read_text() + " ")
    assert export_key("mpnet", tmp_path, files) != same


def test_onnx_scores_are_the_same_bits_in_another_process(shared_data):
    """Reproducibility: a fresh process (its own ONNX Runtime session, the cached export) gives equal floats."""
    import json
    import subprocess
    import sys

    code = (
        "import json, sys\n"
        "from dialeval.data.usr import load_usr_topical_chat\n"
        "from dialeval.metrics.base import build_inputs\n"
        "from dialeval.metrics.quality import QualityMetric\n"
        "b = load_usr_topical_chat(sys.argv[1]).head(1)\n"
        "m = QualityMetric(device='cpu', runtime='onnx')\n"
        "print(json.dumps(m.compute(build_inputs(b.candidates, b.dialogues))))\n"
    )
    path = shared_data / "usr" / "usr_topical_chat.json"
    bench = load_usr_topical_chat(path).head(1)
    here = QualityMetric(device="cpu", runtime="onnx").compute(build_inputs(bench.candidates, bench.dialogues))
    done = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True, check=True)
    assert json.loads(done.stdout.strip().splitlines()[-1]) == here


def test_a_process_waiting_for_the_export_lock_takes_the_finished_export(tmp_path, monkeypatch):
    """Two exporters at once (Ray's workers on a cold cache): the second finds the first's file and exports nothing.

    The other exporter is this test holding the lock (flock locks separate open files even within one process).
    """
    import threading
    import time

    from dialeval.metrics.quality.onnx import _export
    from dialeval.models.loading import cache_lock

    monkeypatch.setenv("DIALEVAL_CACHE", str(tmp_path))
    path = tmp_path / "onnx" / "views-k3.onnx"
    done: list[object] = []
    model = eager()  # loaded before: the thread goes straight to the export
    with cache_lock("onnx-views-k3"):
        waiter = threading.Thread(target=lambda: done.append(_export(model, "views-k3", "logits")))
        waiter.start()
        time.sleep(1.0)
        assert waiter.is_alive()  # it waits for the lock...
        assert not path.parent.exists() or not list(path.parent.iterdir())  # ...and writes nothing beside us
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"the other process's export")
    waiter.join(timeout=120)
    assert done == [path] and path.read_bytes() == b"the other process's export"  # taken, not exported again
    assert not list(path.parent.glob(".*.tmp"))


def test_an_mpnet_cross_encoder_runs_in_onnx_without_token_types(tmp_path, monkeypatch):
    """A views folder over MPNet (no token types; hand-made: one layer, a random LoRA pair on every attention
    projection) exports with the inputs ids and mask alone and gives the eager model's logits; the signature
    names its base, and not MiniLM, which none of its parts runs."""
    from safetensors.torch import save_file

    from dialeval.metrics.quality.crossenc import VIEWS

    mpnet = resolve_encoder_dir("all-mpnet-base-v2")  # before the cache moves: no second unzip
    folder = tmp_path / "views"
    folder.mkdir()
    gen = torch.Generator().manual_seed(0)
    layer = "encoder.base_model.model.encoder.layer.0.attention.attn"
    adapter = {}
    for name in ("q", "k", "v", "o"):
        adapter[f"{layer}.{name}.lora_A.default.weight"] = (torch.randn(4, 768, generator=gen) * 0.05).half()
        adapter[f"{layer}.{name}.lora_B.default.weight"] = (torch.randn(768, 4, generator=gen) * 0.05).half()
    save_file(adapter, str(folder / "adapter.safetensors"))
    head = {"views": list(VIEWS), "weight": (torch.randn(3, 768, generator=gen) * 0.5).tolist(), "bias": [0.0] * 3,
            "lora_r": 4, "lora_alpha": 8, "layers": 1, "encoder": str(mpnet), "base_fp16": True}
    (folder / "heads.json").write_text(json.dumps(head))
    monkeypatch.setenv("DIALEVAL_CACHE", str(tmp_path / "cache"))
    minilm = str(resolve_encoder_dir(DEFAULT_ENCODER))
    eager_model, tokens = _views(str(folder), minilm, "cpu", "torch")
    ort_model, _ = _views(str(folder), minilm, "cpu", "onnx")
    assert isinstance(ort_model, OrtViews) and ort_model.inputs == {"ids", "mask"}
    assert not eager_model.typed and eager_model.encoder.config.model_type == "mpnet"
    texts = [["Do you like cats?", "Yes, I have two."], ["Where is the bank?"], ["I just got back from Peru."]]
    pairs = tokens.pairs(texts * 2, ["What are their names?", "Five blocks away.", "How was it?",
                                     "I like turtles.", "ok", "The weather in Lima was great, we hiked for days."])
    want, got = np.asarray(score_batches(eager_model, pairs)), np.asarray(score_batches(ort_model, pairs))
    np.testing.assert_allclose(got, want, atol=1e-4)
    assert np.abs(want).max() > 0.1
    sig = QualityMetric(views=str(folder), runtime="torch").signature_extra()
    assert sig["views_encoder_sha"] == fingerprint(mpnet)
    assert "encoder_sha" not in sig
