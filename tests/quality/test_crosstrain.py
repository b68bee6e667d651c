"""The multi-view cross-encoder: examples per view, a micro training run that resumes, the card, and the merge.

The merge test pins :func:`dialeval.metrics.quality.crossenc.merge_adapter` (LoRA added into the
weights by hand, so scoring needs no peft) against peft's own forward pass with the adapter.
"""

from __future__ import annotations

import json
import random
import warnings

import pytest

pytest.importorskip("peft")

from dialeval.errors import InputError
from dialeval.metrics.quality.crossenc import VIEWS, assemble
from dialeval.quality import crosstrain as ct
from dialeval.quality.corpora import ALLOWED, Pair

MICRO = ct.TrainConfig(seed=3, batch_size=4, steps=4, warmup=2, val_share=0.3, val_pairs=6, per_source=3)


def test_assemble_cuts_the_oldest_context_first():
    # context "1 2 3 [SEP] 4 5 [SEP]" (7), response cut to "6 7"; room for 8 - 2 - 2 = 4 context tokens
    ids, types = assemble([[1, 2, 3], [4, 5]], [6, 7, 8], cls=9, sep=0, max_len=8, max_response=2)
    assert ids == [9, 0, 4, 5, 0, 6, 7, 0]
    assert types == [0] * 5 + [1] * 3


def test_examples_label_only_their_view():
    pair = Pair("s", "d1", ("Do you like cats?", "Yes, I have two."), "What are their names?")
    other = Pair("s", "d2", ("Hi",), "The train leaves at noon.")
    got = ct.examples_for(pair, [pair, other], {"s/d1": [pair], "s/d2": [other]}, random.Random(0))
    true = got[0]
    assert true.kind == "true" and true.labels == (1.0, 1.0, 1.0)
    for e in got[1:]:
        labelled = [v for v in e.labels if v is not None]
        assert labelled == [0.0], e  # a negative teaches exactly one view
        view = VIEWS[[v is not None for v in e.labels].index(True)]
        if e.kind in ("random", "same-dialogue", "own-earlier-turn", "negation", "truncation", "adversarial"):
            assert view == "coherent"
        if e.kind == "generic":
            assert view == "specific" and ct.is_generic(e.response)
    assert any(e.kind == "random" and e.response == other.response for e in got)


def test_the_overlap_negative_is_the_other_dialogues_turn_sharing_most_words_and_only_when_asked():
    pair = Pair("s", "d1", ("I watched the football match yesterday.", "Which teams were playing?"), "Chelsea won.")
    near = Pair("s", "d2", ("Hi",), "Football teams should stop playing yesterday's tactics.")  # shares 3
    far = Pair("s", "d3", ("Hi",), "The match was great.")  # match
    same = Pair("s", "d1", ("Hi",), "Which football teams were playing the match yesterday?")  # own dialogue: never
    pool = [pair, near, far, same]
    assert ct.overlap_negative(pair, pool, random.Random(0), draws=50) == near.response
    by = {"s/d1": [pair, same], "s/d2": [near], "s/d3": [far]}
    assert not any(e.kind == "word-overlap" for e in ct.examples_for(pair, pool, by, random.Random(0)))
    asked = [e for e in ct.examples_for(pair, pool, by, random.Random(0), overlap=True) if e.kind == "word-overlap"]
    assert [(e.response, e.labels) for e in asked] == [(near.response, (0.0, None, None))]
    # the option only appends (draws after everything else): off, the shipped run's examples are unchanged
    on = ct.examples_for(pair, pool, by, random.Random(5), overlap=True)
    assert on[:-1] == ct.examples_for(pair, pool, by, random.Random(5))


def test_a_generic_true_turn_is_not_a_specific_positive():
    pair = Pair("s", "d1", ("Are you coming?",), "Sure.")
    got = ct.examples_for(pair, [pair], {"s/d1": [pair]}, random.Random(0))
    assert got[0].labels == (1.0, 1.0, None)


@pytest.fixture(scope="module")
def trained(tmp_path_factory, shared_data):
    a = tmp_path_factory.mktemp("a")
    card = ct.train(a, shared_data, MICRO)
    return a, card


def test_micro_run_writes_card_adapter_and_centre(trained, shared_data):
    out, card = trained
    assert json.loads((out / "card.json").read_text()) == card
    assert card["steps_done"] == MICRO.steps and card["config"]["seed"] == 3
    assert {f["source"] for f in card["data_files"]} == set(ALLOWED)
    assert card["true_pairs"] == 3 * len(ALLOWED)
    head = json.loads((out / "model" / "heads.json").read_text())
    assert head["views"] == list(VIEWS) and head["lora_r"] == MICRO.lora_r
    assert len(head["centre"]) == 3 and all(sd > 0 for _, sd in head["centre"])
    row = card["curve"][-1]
    assert set(VIEWS) <= set(row) and 0.0 <= row["mean_auc"] <= 1.0


def test_a_resumed_run_equals_an_uninterrupted_one(tmp_path, trained, shared_data):
    import torch

    out, _ = trained
    ct.train(tmp_path, shared_data, MICRO, minutes=0.0)  # stops after the first step, checkpointed
    assert json.loads((tmp_path / "card.json").read_text())["steps_done"] == 1
    ct.train(tmp_path, shared_data, MICRO)  # resumes from checkpoint.pt
    resumed = torch.load(tmp_path / "checkpoint.pt", weights_only=False)
    whole = torch.load(out / "checkpoint.pt", weights_only=False)
    assert resumed["state"]["step"] == whole["state"]["step"] == MICRO.steps
    assert resumed["model"].keys() == whole["model"].keys()
    for name, value in whole["model"].items():
        assert torch.equal(resumed["model"][name], value), name


def test_stop_at_ends_the_run_early_on_the_same_schedule(tmp_path, trained, shared_data):
    import torch
    from safetensors.torch import load_file

    card = ct.train(tmp_path, shared_data, MICRO, stop_at=2, snapshots=True)
    assert card["steps_done"] == 2 and card["curve"][-1]["step"] == 2 and card["config"]["steps"] == MICRO.steps
    # the schedule is MICRO's 4 steps: after 2 of them the learning rate is the uninterrupted run's at step 2
    saved = torch.load(tmp_path / "checkpoint.pt", weights_only=False)
    assert saved["sched"]["last_epoch"] == 2
    assert saved["sched"]["_last_lr"][0] == pytest.approx(MICRO.lr * ct.schedule(2, MICRO.warmup, MICRO.steps))
    # the snapshot of step 2 holds that step's LoRA weights (fp16); --calibrate-only adds its centre
    snap = tmp_path / "steps" / "00002"
    adapter = load_file(str(snap / "adapter.safetensors"))
    assert adapter.keys() == {n for n in saved["model"] if "heads" not in n}
    for name, value in adapter.items():
        assert torch.equal(value, saved["model"][name].to(torch.float16)), name
    assert "centre" not in json.loads((snap / "heads.json").read_text())
    threads = torch.get_num_threads()
    try:
        ct.main([str(tmp_path), "--calibrate-only", "--threads", "1"])
    finally:
        torch.set_num_threads(threads)  # main sets the process's threads; leave the worker's as they were
    assert len(json.loads((snap / "heads.json").read_text())["centre"]) == len(VIEWS)


def peft_reference(model, head: dict, adapter: dict, targets: tuple[str, ...]):
    """Return ``model`` (a views model) with ``adapter`` applied by peft itself (not merged), and ``head``'s weights."""
    import torch
    from peft import LoraConfig, get_peft_model, set_peft_model_state_dict

    with warnings.catch_warnings():  # peft reads transformers' deprecated attribute (as add_lora filters)
        warnings.filterwarnings("ignore", message=".*is_gradient_checkpointing.*", category=FutureWarning)
        model.encoder = get_peft_model(model.encoder, LoraConfig(r=head["lora_r"], lora_alpha=head["lora_alpha"],
                                                                 target_modules=list(targets)))
    weights = {k.removeprefix("encoder.").replace(".default", ""): v.float() for k, v in adapter.items()}
    set_peft_model_state_dict(model.encoder, weights)
    with torch.no_grad():
        model.heads.weight.copy_(torch.tensor(head["weight"]))
        model.heads.bias.copy_(torch.tensor(head["bias"]))
    return model.eval()


def test_hand_merge_equals_peft_forward(trained):
    import torch
    from safetensors.torch import load_file

    from dialeval.metrics.quality.crossenc import build_model, collate, load_views
    from dialeval.models.loading import DEFAULT_ENCODER, resolve_encoder_dir

    out, _ = trained
    enc = str(resolve_encoder_dir(DEFAULT_ENCODER))
    merged, tokens, head = load_views(str(out / "model"), enc)
    ref = peft_reference(build_model(enc), head, load_file(str(out / "model" / "adapter.safetensors")),
                         ("query", "key", "value", "dense"))
    batch = collate(tokens.pairs([["Do you like cats?"], ["Where is the bank?"]], ["I have two.", "Five blocks away."]))
    with torch.no_grad():
        assert torch.allclose(merged(*batch), ref(*batch), atol=1e-4)
        # and the adapter changed something: the merged model is not the plain encoder
        plain = build_model(enc)
        plain.heads.load_state_dict(ref.heads.state_dict())
        assert not torch.allclose(plain.eval()(*batch), merged(*batch), atol=1e-6)


def test_quality_metric_applies_an_ensemble_over_a_view(trained, tmp_path):
    """An ensemble naming ``view_coherent`` runs the cross-encoder: quality = (logit - mean) / scale * coef + bias."""
    import torch

    from dialeval.metrics.base import MetricInput
    from dialeval.metrics.quality import QualityMetric
    from dialeval.metrics.quality.crossenc import collate, load_views
    from dialeval.models.loading import DEFAULT_ENCODER, resolve_encoder_dir
    from dialeval.schema import Turn

    out, _ = trained
    ens = tmp_path / "ensemble.json"
    ens.write_text(json.dumps({"features": ["view_coherent"], "mean": [0.5], "scale": [2.0], "coef": [3.0],
                               "bias": 1.0}))
    metric = QualityMetric(views=str(out / "model"), ensemble=str(ens), device="cpu")
    assert metric.uses_views() and not metric.uses_lm()
    items = [MetricInput(response="I have two.", context=(Turn(speaker="A", text="Do you like cats?"),)),
             MetricInput(response="Five blocks away.", context=(Turn(speaker="A", text="Where is the bank?"),))]
    got = metric.compute(items)["quality"]
    model, tokens, _ = load_views(str(out / "model"), str(resolve_encoder_dir(DEFAULT_ENCODER)))
    with torch.no_grad():
        logits = model(*collate(tokens.pairs([["Do you like cats?"], ["Where is the bank?"]],
                                             ["I have two.", "Five blocks away."])))[:, 0]
    expected = [(float(v) - 0.5) / 2.0 * 3.0 + 1.0 for v in logits]
    assert got == pytest.approx(expected, abs=1e-5)
    sig = metric.signature_extra()
    assert {"views_heads_sha", "views_adapter_sha"} <= set(sig)


def test_a_shallow_short_run_is_loaded_with_its_own_shape(tmp_path, trained, shared_data):
    """``--layers 2 --max-len 24``: heads.json names the shape, and load_views rebuilds it (the default names none)."""
    from dialeval.errors import InputError
    from dialeval.metrics.quality.crossenc import load_views
    from dialeval.models.loading import DEFAULT_ENCODER, resolve_encoder_dir

    default_head = json.loads((trained[0] / "model" / "heads.json").read_text())
    assert not {"layers", "max_len", "max_response"} & set(default_head)  # the shipped file's keys are unchanged
    cfg = ct.TrainConfig(**{**MICRO.__dict__, "layers": 2, "max_len": 24, "max_response": 10})
    ct.train(tmp_path, shared_data, cfg)
    head = json.loads((tmp_path / "model" / "heads.json").read_text())
    assert (head["layers"], head["max_len"], head["max_response"]) == (2, 24, 10)
    enc = str(resolve_encoder_dir(DEFAULT_ENCODER))
    model, tokens, _ = load_views(str(tmp_path / "model"), enc)
    assert len(model.encoder.encoder.layer) == 2 and (tokens.max_len, tokens.max_response) == (24, 10)
    long_turn = "we walked along the river for hours and talked about everything " * 3
    (ids, types), = tokens.pairs([[long_turn, long_turn]], [long_turn])
    assert len(ids) == 24 and types.count(1) == 10 + 1  # response cut to 10 tokens, plus its [SEP]
    # an adapter for 2 layers does not fit a 1-layer encoder: one InputError, not a silent partial merge
    head["layers"] = 1
    (tmp_path / "model" / "heads.json").write_text(json.dumps(head))
    with pytest.raises(InputError, match="lacks"):
        load_views(str(tmp_path / "model"), enc)
    # nor a deeper one: its top layers would run unadapted (heads.json naming no depth loads all 6 of MiniLM's)
    for depth in (3, None):
        head.pop("layers")
        head |= {} if depth is None else {"layers": depth}
        (tmp_path / "model" / "heads.json").write_text(json.dumps(head))
        with pytest.raises(InputError, match=f'adapts 2 layers, the encoder has {depth or 6}: .*"layers"'):
            load_views(str(tmp_path / "model"), enc)


def test_a_gpu_torch_cannot_see_is_one_error_before_any_data_is_read(tmp_path, monkeypatch):
    import torch

    if torch.cuda.is_available():
        pytest.skip("needs a machine where torch sees no GPU")
    monkeypatch.setattr(ct, "draw", lambda *a: pytest.fail("the data was read before the device was checked"))
    with pytest.raises(InputError, match='field "device": "cuda" asked for, but torch sees no CUDA device'):
        ct.main([str(tmp_path / "run"), "--device", "cuda"])
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize("device", ["auto", "mps", "cuda:x", "CPU"])
def test_a_device_that_scoring_knows_but_training_does_not_run_on_is_refused_by_name(device):
    with pytest.raises(InputError, match=f'field "device": "{device}" is not a device training runs on'):
        ct.check_device(device)


def test_bf16_steps_train_as_fp32_steps_do_and_the_card_says_so(tmp_path, trained, shared_data):
    import torch

    out, exact = trained
    cfg = ct.TrainConfig(**{**MICRO.__dict__, "bf16": True})
    card = ct.train(tmp_path, shared_data, cfg)
    assert card["config"]["bf16"] is True and exact["config"]["bf16"] is False
    assert card["steps_done"] == exact["steps_done"] == MICRO.steps
    fast = torch.load(tmp_path / "checkpoint.pt", weights_only=False)["model"]
    slow = torch.load(out / "checkpoint.pt", weights_only=False)["model"]
    assert any(not torch.equal(fast[n], slow[n]) for n in slow)  # the steps really ran in bf16
    # the same run to bf16's precision: its losses (train, and held-in, which is scored in fp32) stay close
    a, b = card["curve"][-1], exact["curve"][-1]
    assert a["train_loss"] == pytest.approx(b["train_loss"], abs=0.01)
    assert a["loss"] == pytest.approx(b["loss"], abs=0.01)


def test_an_mpnet_cross_encoder_trains_and_loads_as_its_own_base_rounded_to_fp16(tmp_path, shared_data):
    """``--encoder all-mpnet-base-v2 --base-fp16``: MPNet reads no token types, heads.json names the base,
    and load_views rebuilds that base (rounded to fp16) with the adapter merged as peft's forward computes it."""
    import torch
    from safetensors.torch import load_file

    from dialeval.metrics.quality.crossenc import build_model, collate, load_views, round_to_fp16
    from dialeval.models.loading import DEFAULT_ENCODER, resolve_encoder_dir

    targets = ("q", "k", "v", "o", "dense")
    cfg = ct.TrainConfig(**{**MICRO.__dict__, "encoder": "all-mpnet-base-v2", "base_fp16": True, "layers": 1,
                            "lora_targets": targets})
    card = ct.train(tmp_path, shared_data, cfg)
    assert card["encoder"]["name"] == "all-mpnet-base-v2" and card["config"]["lora_targets"] == list(targets)
    head = json.loads((tmp_path / "model" / "heads.json").read_text())
    assert (head["encoder"], head["base_fp16"], head["layers"]) == ("all-mpnet-base-v2", True, 1)
    adapter = load_file(str(tmp_path / "model" / "adapter.safetensors"))
    assert any(".attn.q.lora_A." in k for k in adapter)  # MPNet's attention is adapted, not only its dense layers
    # the encoder_dir passed in (MiniLM's) gives way to the base heads.json names
    merged, tokens, _ = load_views(str(tmp_path / "model"), str(resolve_encoder_dir(DEFAULT_ENCODER)))
    assert merged.encoder.config.model_type == "mpnet" and not merged.typed
    mpnet = str(resolve_encoder_dir("all-mpnet-base-v2"))
    base = build_model(mpnet, layers=1)
    round_to_fp16(base.encoder)
    ref = peft_reference(base, head, adapter, targets)
    batch = collate(tokens.pairs([["Do you like cats?"], ["Where is the bank?"]], ["I have two.", "Five blocks away."]))
    with torch.no_grad():
        assert torch.allclose(merged(*batch), ref(*batch), atol=1e-4)
        unrounded = build_model(mpnet, layers=1)  # the fp32 base differs: the rounding is really applied
        assert not torch.equal(unrounded.encoder.embeddings.word_embeddings.weight,
                               merged.encoder.embeddings.word_embeddings.weight)


def test_a_bad_base_encoder_is_one_error_before_any_data_is_read_or_out_is_made(tmp_path):
    with pytest.raises(InputError, match="neither a packaged encoder"):
        ct.main([str(tmp_path / "run"), "--encoder", "no-such-encoder"])
    assert not (tmp_path / "run").exists()


def test_adding_lora_warns_of_nothing_a_user_can_act_on():
    """peft 0.x reads transformers' deprecated ``is_gradient_checkpointing``, which warns on every training run."""
    import warnings

    from dialeval.metrics.quality.crossenc import build_model
    from dialeval.models.loading import DEFAULT_ENCODER, resolve_encoder_dir

    model = build_model(str(resolve_encoder_dir(DEFAULT_ENCODER)))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        adapted = ct.add_lora(model.encoder, 4, 8)
    assert any("lora_A" in name for name, _ in adapted.named_parameters())


def test_a_rerun_under_other_options_is_refused_before_any_data_is_read(tmp_path, trained, monkeypatch):
    import dataclasses
    import shutil

    import torch

    out, _ = trained
    ct.check_resumable(out, MICRO)  # its own options resume
    with pytest.raises(InputError, match=r"trained with lr=0.0005, steps=4; this run asks for lr=0.001, steps=5\. "):
        ct.check_resumable(out, dataclasses.replace(MICRO, lr=1e-3, steps=5))
    monkeypatch.setattr(ct, "draw", lambda *a: pytest.fail("the data was read before the checkpoint was checked"))
    with pytest.raises(InputError, match="this folder's run was trained with batch_size=4"):
        ct.main([str(out), "--lr", "0.001"])  # before this check: an optimiser of another shape, after the draw
    # a checkpoint from before checkpoints kept their config: compared with the card's
    old = tmp_path / "old"
    shutil.copytree(out, old)
    saved = torch.load(old / "checkpoint.pt", weights_only=False)
    del saved["state"]["config"]
    torch.save(saved, old / "checkpoint.pt")
    with pytest.raises(InputError, match=r"trained with seed=3; this run asks for seed=4"):
        ct.check_resumable(old, dataclasses.replace(MICRO, seed=4))
    (old / "card.json").unlink()
    ct.check_resumable(old, dataclasses.replace(MICRO, seed=4))  # nothing left to compare with
    (old / "checkpoint.pt").write_bytes(b"torn")
    with pytest.raises(InputError, match="cannot read the checkpoint to resume from"):
        ct.check_resumable(old, MICRO)


@pytest.mark.parametrize(("change", "message"), [
    ({"layers": 7}, 'field "--layers": all-minilm-l6-v2 has 6 layers, not 7'),
    ({"max_len": 600}, 'field "--max-len": all-minilm-l6-v2 reads at most 512 tokens, not 600'),
    ({"max_len": 50}, 'field "--max-response": 48 leaves the context no token in inputs of 50'),
])  # fmt: skip
def test_a_shape_the_encoder_cannot_take_is_refused_before_any_data_is_read(tmp_path, monkeypatch, change, message):
    import dataclasses

    # MiniLM's config.json: 6 layers, 512 positions; assemble() keeps max_len - len(response) - 2 context tokens
    with pytest.raises(InputError, match=message):
        ct.check_shape(dataclasses.replace(ct.TrainConfig(), **change))
    monkeypatch.setattr(ct, "draw", lambda *a: pytest.fail("the data was read before the shape was checked"))
    flag = {"layers": "--layers", "max_len": "--max-len"}[next(iter(change))]
    with pytest.raises(InputError, match=message):
        ct.main([str(tmp_path / "run"), flag, str(next(iter(change.values())))])
    assert not (tmp_path / "run").exists()
    ct.check_shape(ct.TrainConfig(layers=6, max_len=51))  # the edges themselves are fine


def test_the_shape_check_reads_the_layer_count_under_each_configs_name(tmp_path):
    """check_shape read config["num_hidden_layers"]: a folder whose config names it n_layers (DistilBERT) was a
    KeyError traceback. It reads the count as BERTScore's layer bound does (models.loading.encoder_shape)."""
    import dataclasses

    folder = tmp_path / "enc"
    folder.mkdir()
    (folder / "config.json").write_text('{"n_layers": 3, "max_position_embeddings": 512}', encoding="utf-8")
    with pytest.raises(InputError, match=f'field "--layers": {folder} has 3 layers, not 4'):
        ct.check_shape(dataclasses.replace(ct.TrainConfig(), encoder=str(folder), layers=4))
    (folder / "config.json").write_text("{}", encoding="utf-8")  # says neither: loading the model reports it
    ct.check_shape(dataclasses.replace(ct.TrainConfig(), encoder=str(folder), layers=4))


def test_a_views_folder_that_is_not_one_says_what_it_lacks(tmp_path) -> None:
    """-p quality.views=PATH on a wrong path said "not a trained views folder ([Errno 2] No such file or
    directory: 'PATH/heads.json')"; a folder without its adapter said the same errno of the other file."""
    from dialeval.metrics.quality.crossenc import load_views

    with pytest.raises(InputError, match=r"nosuch: not found: give a trained views folder \(dialeval quality "):
        load_views(str(tmp_path / "nosuch"), "unused")
    (tmp_path / "heads.json").write_text("{}")
    with pytest.raises(InputError, match=r": not a trained views folder: it lacks adapter\.safetensors$"):
        load_views(str(tmp_path), "unused")
