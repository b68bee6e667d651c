"""The contrastive encoder run: its negatives, its masks, its loss against sentence-transformers', export and resume."""

from __future__ import annotations

import json
import random

import pytest

pytest.importorskip("peft")
pytest.importorskip("sentence_transformers")

from dialeval.quality import bitrain as bt
from dialeval.quality.build import sensible_examples
from dialeval.quality.corpora import Pair

PAIRS = [
    Pair("s", "1", ("Do you like cats?", "Yes, I have two.", "What are their names?"), "Tom and Jerry, like the show."),
    Pair("s", "2", ("Where do you work?",), "I work at a bakery downtown, I bake bread every morning."),
    Pair("dailydialogpp-dev", "3", ("Shall we eat out tonight?", "Sure, where?"), "How about the new Thai place?",
         adversarial=("I like eating.", "Tonight is dark.")),
]


def test_triples_hold_every_response_side_negative_of_the_every_hard_examples_and_the_own_turn():
    got = bt.triples(PAIRS, seed=5)
    examples = sensible_examples(PAIRS, 5, every_hard=True)  # the heads' own negatives, read independently
    for pair, t in zip(PAIRS, got, strict=True):
        mine = [e for e in examples if e.context == pair.context or e.response == pair.response]
        want = {(e.kind, e.response) for e in mine if e.kind in bt.RESPONSE_KINDS}
        assert want <= set(t.negatives)
        assert not any(kind == "random" for kind, _ in t.negatives)  # in-batch responses play that part
        shuffled = [e.context for e in mine if e.kind == "shuffled-context"]
        assert t.shuffled == (shuffled[0] if shuffled else None)
    assert ("own-turn", "Yes, I have two.") in got[0].negatives  # the responder's own turn, two back
    assert not any(k == "own-turn" for k, _ in got[1].negatives)  # one context turn: none
    assert {x for k, x in got[2].negatives if k == "adversarial"} <= set(PAIRS[2].adversarial)


def test_a_hard_negative_counts_for_its_own_pair_and_generic_replies_not_against_a_generic_turn():
    batch = [bt.Triple("a", ("hi",), "ok"), bt.Triple("b", ("yo",), "I ride horses."), bt.Triple("c", ("x",), "ok")]
    mask = bt.candidate_mask(batch, [1, 0], ["I ride cows.", "okay then"], 2).tolist()
    # columns: 3 responses, 2 negatives (owned by pair 1, then pair 0), 2 generic replies
    assert mask[0] == [False, False, True, True, False, True, True]  # "c"'s "ok" is its own text; generic: masked
    assert mask[1] == [False, False, False, False, True, False, False]
    assert mask[2] == [True, False, False, True, True, True, True]


def test_the_loss_without_hard_negatives_is_sentence_transformers_multiple_negatives_ranking_loss():
    import torch
    from sentence_transformers import SentenceTransformer
    try:  # sentence-transformers 6 moved its losses; 5 (the lowest pyproject allows) has them here only
        from sentence_transformers.sentence_transformer.losses import MultipleNegativesRankingLoss
    except ImportError:
        from sentence_transformers.losses import MultipleNegativesRankingLoss

    from dialeval.metrics.quality.features import context_window
    from dialeval.models.loading import DEFAULT_ENCODER, resolve_encoder_dir

    cfg = bt.BiConfig(negatives_per_pair=0, shuffled_per_batch=0)
    model, tokenizer = bt._model(cfg)  # LoRA starts at zero: the packaged MiniLM itself
    batch = [bt.Triple(p.dialogue, p.context, p.response) for p in PAIRS]
    with torch.no_grad():
        ours = float(bt.batch_loss(model, tokenizer, batch, [], cfg, random.Random(0)))
    st = SentenceTransformer(str(resolve_encoder_dir(DEFAULT_ENCODER)), device="cpu")
    loss = MultipleNegativesRankingLoss(st, scale=cfg.scale)

    def mnrl(anchors: list[str], positives: list[str]) -> float:
        with torch.no_grad():
            return float(loss([st.tokenize(anchors), st.tokenize(positives)], None))

    windows = [context_window(p.context) for p in PAIRS]
    responses = [p.response for p in PAIRS]
    want = (mnrl(windows, responses) + mnrl([p.context[-1] for p in PAIRS], responses) + mnrl(responses, windows)) / 3
    assert ours == pytest.approx(want, abs=1e-4)


@pytest.mark.slow
def test_a_micro_run_exports_an_encoder_that_encodes_as_it_trained_and_a_resumed_run_equals_a_straight_one(
        tmp_path, shared_data):  # fmt: skip
    import numpy as np
    import torch
    from safetensors.numpy import load_file
    from sentence_transformers import SentenceTransformer

    from dialeval.models.loading import load_sentence_encoder

    cfg = bt.BiConfig(recipe="tiny", batch_size=4, steps=3, warmup=1, val_pairs=8)
    card = bt.train(tmp_path / "a", shared_data, cfg, stop_at=2)
    assert card["steps_done"] == 2
    card = bt.train(tmp_path / "a", shared_data, cfg)  # resumes at step 2
    straight = bt.train(tmp_path / "b", shared_data, cfg)
    assert card["steps_done"] == straight["steps_done"] == 3
    a, b = (torch.load(tmp_path / d / "checkpoint.pt", weights_only=False)["model"] for d in ("a", "b"))
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)
    adapter = load_file(str(tmp_path / "b" / "adapter.safetensors"))
    assert adapter.keys() == b.keys() and all(v.dtype == np.float16 for v in adapter.values())
    saved = json.loads((tmp_path / "b" / "card.json").read_text())
    assert saved["chosen"]["step"] == 3 and saved["before"]["mean_auc"] > 0  # one measurement: step 3 exported
    assert {"own-turn", "random", "generic"} <= set(saved["curve"][-1]["auc"])
    # the exported folder (what `quality train --encoder` reads) encodes as the LoRA model with the saved adapter
    model, tokenizer = bt._model(cfg)
    model.load_state_dict({k: torch.from_numpy(v).float() for k, v in adapter.items()}, strict=False)
    texts = ["Do you like cats?", "Tom and Jerry, like the show."]
    with torch.no_grad():
        trained = bt.encode(model.eval(), tokenizer, texts, 128).numpy()
    exported = SentenceTransformer(str(tmp_path / "b" / "model"), device="cpu").encode(texts, normalize_embeddings=True)
    assert np.allclose(exported, trained, atol=1e-5)
    base, _ = load_sentence_encoder("all-minilm-l6-v2", "cpu")
    assert not np.allclose(exported, base.encode(texts, normalize_embeddings=True), atol=1e-5)  # it did train
    # --rebuild from the card and the adapter alone writes the exported weights bit for bit
    (tmp_path / "r").mkdir()
    for name in ("card.json", "adapter.safetensors"):
        (tmp_path / "r" / name).write_bytes((tmp_path / "b" / name).read_bytes())
    bt.main([str(tmp_path / "r"), "--rebuild"])
    rebuilt, exported_w = (load_file(str(tmp_path / d / "model" / "model.safetensors")) for d in ("r", "b"))
    assert rebuilt.keys() == exported_w.keys() and all(np.array_equal(rebuilt[k], exported_w[k]) for k in rebuilt)


def test_base_fp16_rounds_every_float_weight_of_the_base_and_leaves_the_adapter_alone():
    import torch

    plain, _ = bt._model(bt.BiConfig())
    rounded, _ = bt._model(bt.BiConfig(base_fp16=True))
    changed = 0
    for (name, p), (_, q) in zip(plain.named_parameters(), rounded.named_parameters(), strict=True):
        if "lora_" in name:  # the adapter starts as the seed makes it, in fp32
            assert torch.equal(p, q)
            continue
        assert torch.equal(q, p.to(torch.float16).to(torch.float32)), name
        changed += int(not torch.equal(p, q))
    assert changed > 50  # MiniLM's fp32 weights are not fp16 values: nearly every tensor moved


def test_rebuild_needs_the_card_and_an_adapter_that_fits_it(tmp_path):
    import torch
    from safetensors.torch import save_file

    from dialeval.errors import InputError

    with pytest.raises(InputError, match=r"no card\.json to rebuild from"):
        bt.rebuild(tmp_path)
    model, _ = bt._model(bt.BiConfig(lora_r=4))
    save_file({n: p.detach().to(torch.float16) for n, p in model.named_parameters() if p.requires_grad},
              str(tmp_path / "adapter.safetensors"))  # fmt: skip
    (tmp_path / "card.json").write_text(json.dumps({"config": {"lora_r": 8}}))
    with pytest.raises(InputError, match=r"are not the .* LoRA weights of all-minilm-l6-v2 at rank 8"):
        bt.rebuild(tmp_path)


def test_lora_targets_reach_mpnets_attention_and_a_card_without_them_rebuilds_the_old_layout(tmp_path):
    """peft matches a target by a module's last name: MPNet's attention is q, k, v, o (read off its modules)."""
    import torch
    from safetensors.torch import save_file

    attention = ("query", "key", "value", "dense", "q", "k", "v", "o")
    model, _ = bt._model(bt.BiConfig(encoder="all-mpnet-base-v2", lora_r=2, lora_targets=attention))

    def adapted(m):
        return {n.split(".lora_A.")[0].rsplit(".", 1)[-1] for n, _ in m.named_parameters() if ".lora_A." in n}

    assert adapted(model) == {"q", "k", "v", "o", "dense"}
    old, _ = bt._model(bt.BiConfig(encoder="all-mpnet-base-v2", lora_r=2))
    assert adapted(old) == {"dense"}
    # a card written before lora_targets existed rebuilds with the default targets (the shipped tenth-session run)
    save_file({n: p.detach().to(torch.float16) for n, p in old.named_parameters() if p.requires_grad},
              str(tmp_path / "adapter.safetensors"))  # fmt: skip
    (tmp_path / "card.json").write_text(json.dumps({"config": {"encoder": "all-mpnet-base-v2", "lora_r": 2}}))
    assert (bt.rebuild(tmp_path) / "model.safetensors").exists()


def test_lora_targets_that_name_no_layer_are_one_input_error_before_any_output(tmp_path):
    from dialeval.errors import InputError

    with pytest.raises(InputError, match="no layer of the encoder is named q_proj, v_proj"):
        bt.train(tmp_path / "run", tmp_path / "no-data", bt.BiConfig(lora_targets=("q_proj", "v_proj")))
    assert not (tmp_path / "run").exists()  # the data (absent here) is never read, no folder is made


def test_interpolate_halves_each_adapted_weights_update_and_the_metrics_merge_gives_the_same_encoder(tmp_path):
    """WiSE-FT at 0.5: every weight of the rebuilt model is the mean of the base's and the full adapter's.

    The expected weights are computed here by hand from the base (the packaged MiniLM) and the
    model rebuilt with the whole adapter, independently of the scaled adapter file.
    """
    import numpy as np
    import torch
    from safetensors.numpy import load_file
    from safetensors.torch import load_file as load_torch
    from safetensors.torch import save_file
    from transformers import AutoModel

    from dialeval.data._common import sha256_file
    from dialeval.errors import InputError
    from dialeval.metrics.quality.crossenc import merge_adapter
    from dialeval.models.loading import resolve_encoder_dir

    model, _ = bt._model(bt.BiConfig(lora_r=4, lora_alpha=8))
    gen = torch.Generator().manual_seed(0)
    adapter = {n: (torch.randn(p.shape, generator=gen) * 0.05).to(torch.float16)
               for n, p in model.named_parameters() if p.requires_grad}  # fmt: skip
    full, half = tmp_path / "full", tmp_path / "half"
    full.mkdir()
    save_file(adapter, str(full / "adapter.safetensors"))
    (full / "card.json").write_text(json.dumps({"config": {"lora_r": 4, "lora_alpha": 8}, "files": {}}))
    bt.main([str(full), "--rebuild"])
    bt.main([str(half), "--interpolate", str(full), "--weight", "0.5"])
    base = load_file(str(resolve_encoder_dir("all-minilm-l6-v2") / "model.safetensors"))
    w1, wh = (load_file(str(d / "model" / "model.safetensors")) for d in (full, half))
    moved = 0
    for key, w in wh.items():
        expected = (base[key] + w1[key]) / 2
        assert np.allclose(w, expected, atol=1e-6), key
        moved += int(not np.array_equal(w1[key], base[key]))
    assert moved >= 6 * 6  # every layer's query, key, value and dense weights moved
    card = json.loads((half / "card.json").read_text())
    assert card["interpolation"]["weight"] == 0.5
    assert card["interpolation"]["source_adapter_sha256"] == sha256_file(full / "adapter.safetensors")
    assert card["files"]["adapter.safetensors"] == sha256_file(half / "adapter.safetensors")
    # the metric's load-time merge of the halved adapter gives the same encoder
    enc = AutoModel.from_pretrained(str(resolve_encoder_dir("all-minilm-l6-v2")))
    merge_adapter(enc, load_torch(str(half / "adapter.safetensors")), 8 / 4)
    for name, p in enc.named_parameters():
        assert np.allclose(p.detach().numpy(), wh[name], atol=1e-6), name
    with pytest.raises(InputError, match=r"field \"--weight\": 0.0 is not in \(0, 1\]"):
        bt.interpolate(full, tmp_path / "zero", 0.0)
    with pytest.raises(InputError, match=r"no card\.json to interpolate from"):
        bt.interpolate(tmp_path / "nothing", tmp_path / "x", 0.5)
    assert not (tmp_path / "zero").exists() and not (tmp_path / "x").exists()
