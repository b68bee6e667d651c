"""check_device: a device torch cannot use here is one InputError naming the field, before any model loads.

torch's view of the GPUs is replaced in these tests (none, or two), so they give the same answer on a machine
with or without a GPU.
"""

from __future__ import annotations

import pytest

from dialeval.errors import InputError
from dialeval.models import check_device
from dialeval.models.loading import load_sentence_encoder

torch = pytest.importorskip("torch")


@pytest.fixture
def no_gpu(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 0)
    monkeypatch.setattr(torch.backends.mps, "is_available", lambda: False)


@pytest.fixture
def two_gpus(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 2)


@pytest.mark.parametrize("device", ["cpu", "auto"])
def test_cpu_and_auto_are_always_fine(device: str, no_gpu: None) -> None:
    assert check_device(device) == device


@pytest.mark.parametrize("device", ["gpu", "CUDA", "cuda:", "cuda:x", "cuda0", "", " cpu", "tpu"])
def test_a_name_that_is_not_a_device_is_refused_naming_the_field(device: str) -> None:
    with pytest.raises(InputError) as caught:
        check_device(device, field="--device")
    assert str(caught.value) == f'field "--device": "{device}" is not a device; use cpu, cuda, cuda:N, mps or auto'


@pytest.mark.parametrize("device", ["cuda", "cuda:0"])
def test_cuda_without_a_gpu_is_refused(device: str, no_gpu: None) -> None:
    with pytest.raises(InputError, match="torch sees no CUDA device") as caught:
        check_device(device, field="--device")
    assert str(caught.value).startswith(f'field "--device": "{device}" asked for')


def test_mps_without_an_apple_gpu_is_refused(no_gpu: None) -> None:
    with pytest.raises(InputError, match="torch sees no MPS"):
        check_device("mps")


def test_cuda_with_gpus_is_fine_up_to_the_last_one(two_gpus: None) -> None:
    assert check_device("cuda") == "cuda"
    assert check_device("cuda:1") == "cuda:1"
    with pytest.raises(InputError, match=r"torch sees 2 CUDA device\(s\): cuda:0 to cuda:1"):
        check_device("cuda:2")


def test_a_loader_checks_the_device_before_loading() -> None:
    """-p embedding.device=gpu through the Python API gets the same error from the loader, not torch's."""
    load_sentence_encoder.cache_clear()
    with pytest.raises(InputError, match='field "device": "gpu" is not a device'):
        load_sentence_encoder("all-minilm-l6-v2", "gpu")
