"""Distillation: a trained views cross-encoder as the teacher of a ``train-views`` run.

The teacher here is a micro run's views model (MiniLM, 4 steps): what is pinned is the mechanism
(the targets are the teacher's own probabilities, scored once and read back on a resume; the
loss mixes them with the hard labels as written by hand), not a figure.
"""

from __future__ import annotations

import json
import math
import random

import pytest

pytest.importorskip("peft")

from dialeval.errors import InputError
from dialeval.quality import crosstrain as ct
from dialeval.quality import distill

MICRO = ct.TrainConfig(seed=3, batch_size=4, steps=4, warmup=2, val_share=0.3, val_pairs=6, per_source=3)


@pytest.fixture(scope="module")
def teacher(tmp_path_factory, shared_data):
    """A micro views run (its ``model`` folder is the teacher) and its checkpoint, trained without a teacher."""
    out = tmp_path_factory.mktemp("teacher")
    ct.train(out, shared_data, MICRO)
    return out


def _examples(shared_data, cfg):
    """The training examples in the order train() steps through them (its draw, split and shuffle)."""
    train_ex, _ = ct.build_examples(ct.draw(shared_data, cfg), cfg)
    random.Random(cfg.seed + 2).shuffle(train_ex)
    return train_ex


def test_view_loss_mixes_the_hard_labels_and_the_teachers_probabilities_as_written_by_hand():
    import torch

    x = torch.tensor([[1.5, -0.5, 0.25], [-2.0, 0.75, 3.0]])
    y = torch.tensor([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]])
    m = torch.tensor([[1.0, 0.0, 1.0], [1.0, 1.0, 0.0]])
    p = torch.tensor([[0.9, 0.2, 0.6], [0.1, 0.7, 0.95]])

    def bce(z: float, t: float) -> float:  # -(t log sigmoid(z) + (1 - t) log(1 - sigmoid(z)))
        s = 1 / (1 + math.exp(-z))
        return -(t * math.log(s) + (1 - t) * math.log(1 - s))

    cells = [(i, j) for i in range(2) for j in range(3)]
    hard = sum(bce(x[i, j].item(), y[i, j].item()) for i, j in cells if m[i, j]) / 4
    soft = sum(bce(x[i, j].item(), p[i, j].item()) for i, j in cells) / 6
    assert float(ct.view_loss(x, y, m)) == pytest.approx(hard, rel=1e-6)
    assert float(ct.view_loss(x, y, m, p, 0.3)) == pytest.approx(0.7 * hard + 0.3 * soft, rel=1e-6)
    assert float(ct.view_loss(x, y, m, p, 1.0)) == pytest.approx(soft, rel=1e-6)


def test_the_targets_are_the_teachers_probabilities_scored_once_and_read_back_on_a_resume(
    tmp_path, teacher, shared_data, monkeypatch
):
    import torch
    from safetensors.torch import load_file

    from dialeval.data._common import sha256_file
    from dialeval.metrics.quality import crossenc
    from dialeval.models.loading import DEFAULT_ENCODER, resolve_encoder_dir
    from dialeval.quality.recipes import machine

    monkeypatch.setattr(distill, "SHARD", 6)  # 16 examples: shards of 6, 6 and 4
    folder = teacher / "model"
    cfg = ct.TrainConfig(**{**MICRO.__dict__, "teacher": str(folder), "distill": 0.5})
    ct.train(tmp_path, shared_data, cfg, minutes=0.0)  # one step, checkpointed
    shards = sorted((tmp_path / "teacher").glob("*.safetensors"))
    assert [s.name for s in shards] == ["00000.safetensors", "00001.safetensors", "00002.safetensors"]
    probs = torch.cat([load_file(str(s))["probs"] for s in shards])
    examples = _examples(shared_data, cfg)[: MICRO.steps * MICRO.batch_size]  # only what the schedule reaches
    assert len(examples) == 16 and probs.shape == (16, 3)
    # independently: the teacher's forward pass on a few examples, padded one by one, through a sigmoid
    model, tokens, _ = crossenc.load_views(str(folder), str(resolve_encoder_dir(DEFAULT_ENCODER)))
    for n in (0, 7, 15):
        e = examples[n]
        with torch.no_grad():
            want = torch.sigmoid(model(*crossenc.collate(tokens.pairs([e.context], [e.response]))))[0]
        assert torch.allclose(probs[n], want, atol=1e-5), n

    # a run stopped while the teacher scored left shards 0 and 2: the rerun scores shard 1 only
    shards[1].unlink()
    scored: list[int] = []
    call = distill._Scorer.__call__
    monkeypatch.setattr(distill._Scorer, "__call__", lambda self, ex: scored.append(len(ex)) or call(self, ex))
    again, _ = distill.teacher_targets(folder, [(e.context, e.response) for e in examples], tmp_path)
    assert scored == [6] and torch.equal(again, probs)

    def no_teacher(*_a, **_k):
        raise AssertionError("the resumed run scored the examples again")

    monkeypatch.setattr(crossenc, "load_views", no_teacher)
    card = ct.train(tmp_path, shared_data, cfg)  # resumes; reads the targets back
    assert card["steps_done"] == MICRO.steps
    assert card["config"]["teacher"] == str(folder) and card["config"]["distill"] == 0.5
    assert card["teacher"]["files"] == {n: sha256_file(folder / n) for n in distill.TEACHER_FILES}
    assert card["teacher"]["examples"] == len(examples) and card["teacher"]["encoder"] == DEFAULT_ENCODER
    assert card["teacher"]["scored"] == "cpu" and card["teacher"]["seconds"] > 0
    assert card["teacher"]["machines"] == [machine("cpu")]
    # another teacher's targets, or targets scored another way, are not read: the key names both
    pairs = [(e.context, e.response) for e in examples]
    assert distill.teacher_key({"x": "1"}, pairs, "cpu") != distill.teacher_key(card["teacher"]["files"], pairs, "cpu")
    assert distill.teacher_key({"x": "1"}, pairs, "cpu") != distill.teacher_key({"x": "1"}, pairs, "cpu bf16")


def test_a_teacher_with_no_share_trains_exactly_as_no_teacher(tmp_path, teacher, shared_data):
    import torch

    cfg = ct.TrainConfig(**{**MICRO.__dict__, "teacher": str(teacher / "model"), "distill": 0.0})
    ct.train(tmp_path, shared_data, cfg)
    with_teacher = torch.load(tmp_path / "checkpoint.pt", weights_only=False)["model"]
    without = torch.load(teacher / "checkpoint.pt", weights_only=False)["model"]
    assert with_teacher.keys() == without.keys()
    for name, value in without.items():
        assert torch.equal(with_teacher[name], value), name
    # and with a share, the teacher changes what is learnt
    cfg = ct.TrainConfig(**{**MICRO.__dict__, "teacher": str(teacher / "model"), "distill": 1.0})
    ct.train(tmp_path / "full", shared_data, cfg)
    full = torch.load(tmp_path / "full" / "checkpoint.pt", weights_only=False)["model"]
    assert any(not torch.equal(full[n], without[n]) for n in without)


def test_a_folder_that_is_no_teacher_is_one_error_before_any_data_is_read_or_out_is_made(tmp_path, teacher):
    (tmp_path / "empty").mkdir()
    with pytest.raises(InputError, match=r"lacks adapter\.safetensors, heads\.json") as got:
        ct.main([str(tmp_path / "run"), "--teacher", str(tmp_path / "empty")])
    assert got.value.field == "--teacher"
    two = tmp_path / "two"
    two.mkdir()
    (two / "adapter.safetensors").write_bytes((teacher / "model" / "adapter.safetensors").read_bytes())
    head = json.loads((teacher / "model" / "heads.json").read_text())
    (two / "heads.json").write_text(json.dumps({**head, "views": ["coherent", "fluent"]}))
    with pytest.raises(InputError, match="the teacher's views are"):
        ct.main([str(tmp_path / "run"), "--teacher", str(two)])
    with pytest.raises(InputError, match="not between 0 and 1"):
        ct.main([str(tmp_path / "run"), "--teacher", str(teacher / "model"), "--distill", "1.5"])
    assert not (tmp_path / "run").exists()
