"""Model loading: packaged names resolve offline, each model loads once, errors say what to do."""

from __future__ import annotations

import os

import pytest

from dialeval.errors import InputError
from dialeval.models import loading


def test_unknown_model_path_is_a_clear_input_error(tmp_path):
    with pytest.raises(InputError, match="neither"):
        loading.resolve_lm_source(str(tmp_path / "nope.gguf"))
    with pytest.raises(InputError, match="sentence-transformers folder"):
        loading.resolve_encoder_dir(str(tmp_path / "nope"))


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
