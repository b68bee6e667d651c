"""Registry look-ups and signatures."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from dialeval import __version__
from dialeval.errors import UnknownNameError
from dialeval.registry import Registry
from dialeval.signature import make_signature, text_sha256


def test_did_you_mean() -> None:
    reg: Registry[int] = Registry("metric")
    reg.register("sacrebleu", 1)
    reg.register("rouge", 2)
    with pytest.raises(UnknownNameError, match='did you mean "sacrebleu"'):
        reg.get("sacrebelu")
    with pytest.raises(ValueError, match="already registered"):
        reg.register("rouge", 3)
    assert reg.names() == ["rouge", "sacrebleu"]


@dataclass(frozen=True)
class _Cfg:
    n: int = 4
    lowercase: bool = False


def test_signature_changes_with_params_and_names_version() -> None:
    a = make_signature("bleu", _Cfg())
    assert a == f"bleu|n:4|lowercase:no|version:{__version__}"
    assert make_signature("bleu", _Cfg(n=2)) != a
    with pytest.raises(TypeError):
        make_signature("bleu", {"n": 4})


def test_text_hash_is_sha256() -> None:
    # sha256("abc") from FIPS 180-2, appendix B.1
    assert text_sha256("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"


@dataclass(frozen=True)
class _Tmpl:
    template: str = "###Speaker: {q}\n###Response:|x"


def test_signature_stays_on_one_line() -> None:
    sig = make_signature("nll", _Tmpl())
    assert "\n" not in sig
    assert "template:###Speaker: {q}\\n###Response:\\|x|version:" in sig


def test_device_auto_resolves_before_the_signature(monkeypatch) -> None:
    """`auto` becomes the real device in the config and signature (cpu here; cuda mocked: no GPU on this machine)."""
    torch = pytest.importorskip("torch")
    from dialeval.metrics import METRICS, load_builtin_metrics

    load_builtin_metrics()
    emb = METRICS.get("embedding")
    assert emb.Config().device == "auto"
    here = emb()
    assert here.config.device == ("cuda" if torch.cuda.is_available() else "cpu")
    assert f"device:{here.config.device}" in here.signature
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)  # a mock: no GPU exists on this machine
    assert emb().config.device == "cuda" and "device:cuda" in emb().signature
    assert emb(device="cpu").config.device == "cpu"  # an explicit device is kept


def test_device_option_is_accepted_by_a_lexical_only_run(tmp_path) -> None:
    from typer.testing import CliRunner

    from dialeval.cli import app

    res = CliRunner().invoke(app, ["score", "-b", "usr-tc", "--limit", "1", "-m", "length", "--device", "cpu",
                                   "--no-cache", "-o", str(tmp_path / "s.jsonl")])  # fmt: skip
    assert res.exit_code == 0, res.output


def test_a_key_twice_in_a_signature_is_refused() -> None:
    """A field and an extra of one name gave "bleu|n:4|...|n:2|...": a reader keeps one of them."""
    with pytest.raises(ValueError, match=r"keys \['n'\] more than once"):
        make_signature("bleu", _Cfg(), {"n": 2})
