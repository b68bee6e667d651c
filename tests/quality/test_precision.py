"""``quality`` with ``precision=bf16``: both encoders under torch's bfloat16 autocast, against fp32 eager.

The reference is the same metric in fp32 torch eager (``runtime=torch``): bf16 keeps 8 bits of
mantissa, so the values differ (about 5e-3 at most on 360 USR-TC items, docs/quality.md) while the
order of the items is the same to about 1e-4 in Spearman; these bounds are what the docs promise.
"""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("sentence_transformers")

from scipy.stats import spearmanr

from dialeval.data.usr import load_usr_topical_chat
from dialeval.errors import InputError
from dialeval.metrics.base import build_inputs
from dialeval.metrics.quality import QualityMetric


def test_bf16_ranks_items_as_fp32_does(shared_data):
    bench = load_usr_topical_chat(shared_data / "usr" / "usr_topical_chat.json").head(5)
    items = build_inputs(bench.candidates, bench.dialogues)
    fast = QualityMetric(device="cpu", precision="bf16").compute(items)
    exact = QualityMetric(device="cpu", runtime="torch").compute(items)
    for name in ("quality", "quality_sensible", "quality_fluent"):
        a, b = np.asarray(fast[name]), np.asarray(exact[name])
        assert not np.array_equal(a, b), name  # it really ran in bf16
        assert np.abs(a - b).max() < 0.02, name
        assert spearmanr(a, b)[0] > 0.999, name


def test_bf16_runs_in_torch_and_is_named_in_the_signature_and_the_features_key():
    metric = QualityMetric(device="cpu", precision="bf16")
    assert metric.runtime() == "torch"
    assert "|precision:bf16|" in metric.signature and "|runtime_used:torch|" in metric.signature
    fp32 = QualityMetric(device="cpu", runtime="torch")
    assert "|precision:fp32|" in fp32.signature
    assert metric.features_key() != fp32.features_key()


def test_an_unknown_precision_or_bf16_in_onnx_is_one_clear_error():
    with pytest.raises(InputError, match='precision "fp16" is not one of fp32, bf16') as err:
        _ = QualityMetric(device="cpu", precision="fp16").signature
    assert err.value.field == "--param" and str(err.value).startswith('field "--param": quality.precision: ')
    with pytest.raises(InputError, match='precision "bf16" runs in torch; use runtime auto or torch'):
        _ = QualityMetric(device="cpu", precision="bf16", runtime="onnx").signature
