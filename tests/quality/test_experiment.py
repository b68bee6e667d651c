"""The candidate harness: unfitted candidates scored as they are, ridge candidates only on the sets they did not see."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import random
from types import SimpleNamespace

import pytest
from scipy.stats import spearmanr

from dialeval.errors import InputError
from dialeval.metrics.base import MetricInput
from dialeval.quality import experiment as ex
from dialeval.trained.data import Example

VIEWS = ("view_coherent", "view_fluent", "view_specific")


def synthetic(n_per_set: int = 30) -> tuple[list[Example], list[dict[str, float | None]]]:
    """Five sets; ``sensible`` tracks the rating everywhere, ``log_words`` with the opposite sign on one set."""
    rng = random.Random(0)
    examples, rows = [], []
    for b in ("a", "b", "c", "d", "e"):
        for i in range(n_per_set):
            human = rng.uniform(1, 5)
            examples.append(Example(f"{b}{i}", b, f"c{i // 3}", f"d{i // 3}", f"s{i % 3}", b, "t", MetricInput("t"),
                                    human, (human - 1) / 4, 1))  # fmt: skip
            row: dict[str, float | None] = {"sensible": human + rng.gauss(0, 1), "fluent": rng.gauss(0, 1),
                                            "sbert_context": rng.gauss(0, 1),
                                            "log_words": (-human if b == "e" else human) + rng.gauss(0, 1)}  # fmt: skip
            row |= {v: rng.gauss(0, 1) for v in VIEWS} | {"length_fit": rng.gauss(0, 1), "relative_length": 0.0}
            rows.append(row)
    return examples, rows


def test_an_unfitted_candidate_is_its_spearman_on_each_set_and_the_winner_is_the_best_mean():
    examples, rows = synthetic()
    centre = {n: (0.0, 1.0) for n in (*VIEWS, "sensible", "fluent", "sbert_context")}
    results = {r["candidate"]: r for r in ex.run(examples, rows, centre, n_boot=50)}
    assert set(results) == set(ex.CANDIDATES)
    cosine = results["cosine (MiniLM context-response)"]
    for b in "abcde":
        held = [i for i, e in enumerate(examples) if e.benchmark == b]
        want = spearmanr([rows[i]["sbert_context"] for i in held], [examples[i].human for i in held])[0]
        assert abs(cosine["folds"][b]["spearman"] - want) < 1e-9  # scipy, computed independently
    mean = sum(f["spearman"] for f in cosine["folds"].values()) / 5
    assert abs(cosine["mean"] - mean) < 1e-4
    # the ridge's sign rule sees only the four training sets: log_words enters only when "e" is held out
    ridge = results["frozen heads ridge (shipped recipe, no LM)"]["folds"]
    assert "log_words" in ridge["e"]["features"] and all("log_words" not in ridge[b]["features"] for b in "abcd")
    assert "sensible" in ridge["a"]["features"]


def test_an_lm_winner_is_refused_by_ship_in_one_line_and_nothing_is_written(tmp_path):
    results = [{"candidate": "views + frozen ridge", "mean": 0.4}, {"candidate": "frozen + lm raw ridge", "mean": 0.5}]
    with pytest.raises(InputError, match='"frozen \\+ lm raw ridge" needs SmolLM2 features'):
        ex.ship(tmp_path / "bundled", tmp_path / "views", None, [], results)
    assert not (tmp_path / "bundled").exists()


def test_the_hierarchy_is_usl_h_over_probabilities_of_the_z_scores():
    # by hand: p = 1 / (1 + e^-z) of each view, then (U + U*S + U*S*L) / 3 (USL-H's form, equal weights)
    centre = {"view_fluent": (1.0, 2.0), "view_coherent": (-1.0, 0.5), "view_specific": (0.0, 1.0)}
    row = {"view_fluent": 3.0, "view_coherent": -1.5, "view_specific": 2.0}
    u, s, spec = 1 / (1 + math.exp(-1.0)), 1 / (1 + math.exp(1.0)), 1 / (1 + math.exp(-2.0))
    got = ex.hierarchy([row, {**row, "view_specific": None}], ["view_fluent", "view_coherent", "view_specific"],
                       centre)  # fmt: skip
    assert got[0] == pytest.approx((u + u * s + u * s * spec) / 3, abs=1e-12)
    assert got[1] is None  # a missing view is missing, not imputed
    # a specific but incoherent reply gains less from its specificity than a coherent one
    coherent = ex.hierarchy([{**row, "view_coherent": 1.0}], list(centre), centre)[0]
    assert coherent is not None and got[0] is not None and coherent > got[0]


def test_a_hierarchy_candidate_scores_each_set_unfitted():
    examples, rows = synthetic()
    centre = {n: (0.0, 1.0) for n in (*VIEWS, "sensible", "fluent", "sbert_context")}
    results = {r["candidate"]: r for r in ex.run(examples, rows, centre, n_boot=50)}
    name = "hierarchy U*S*L, frozen U and S (unfitted)"
    col = ex.hierarchy(rows, ["fluent", "sensible", "view_specific"], centre)
    for b in "abcde":
        held = [i for i, e in enumerate(examples) if e.benchmark == b]
        want = spearmanr([col[i] for i in held], [examples[i].human for i in held])[0]
        assert abs(results[name]["folds"][b]["spearman"] - want) < 1e-9  # scipy on the hand-made column


def test_a_winner_that_needs_a_feature_quality_does_not_compute_is_refused_and_nothing_is_written(tmp_path):
    examples, rows = synthetic()
    centre = {n: (0.0, 1.0) for n in VIEWS}
    rows = ex.with_gated([{**r, "view_coherent": r["sensible"]} for r in rows], centre)  # gated tracks the rating
    c, sp = rows[0]["view_coherent"], rows[0]["view_specific"]
    assert c is not None and sp is not None
    assert rows[0]["gated_specific"] == pytest.approx(1 / (1 + math.exp(-c)) / (1 + math.exp(-sp)))  # by hand
    results = [{"candidate": "views + frozen + gated specificity ridge", "mean": 0.6}]
    ds = type("DS", (), {"examples": examples, "dimensions": {}})()
    with pytest.raises(InputError, match="uses gated_specific, which quality does not compute; nothing shipped"):
        ex.ship(tmp_path / "bundled", tmp_path / "views", ds, rows, results)
    assert not (tmp_path / "bundled").exists()


def test_a_bad_head_option_is_one_clear_error(tmp_path):
    with pytest.raises(InputError, match='--head takes NAME=PATH with NAME one of engagement, humanlike, not "x"'):
        ex.parse_head("x")
    with pytest.raises(InputError, match="no such head file") as err:
        ex.parse_head(f"humanlike={tmp_path / 'missing.json'}")
    assert err.value.field == "--head"
    (tmp_path / "h.json").write_text('{"mean": [0], "scale": [1], "coef": [1], "bias": 0}')
    assert ex.parse_head(f"engagement={tmp_path / 'h.json'}") == ("engagement", tmp_path / "h.json")


def test_length_features_compare_the_response_with_the_last_three_turns():
    from dialeval.schema import Turn

    ctx = tuple(Turn(speaker="A", text=t) for t in ("w " * 30, "a b", "c d e f", "g h i j k l"))  # last 3: 2, 4, 6
    got = ex.length_features([MetricInput(response="x y z", context=ctx), MetricInput(response="alone")])
    want = math.log(1 + 3) - math.log(1 + 4)  # by hand: 3 words against a mean of 4
    assert got[0]["relative_length"] == pytest.approx(want) and got[0]["length_fit"] == pytest.approx(-abs(want))
    assert got[1] == {"relative_length": None, "length_fit": None}  # no context, no figure


@pytest.mark.parametrize(("head", "text", "message"), [
    ("bogus=1", "", "--head takes NAME=PATH"),
    ("engagement={file}", "{}", 'h.json: field "mean": not a head: missing'),
    ("engagement={file}", '{"mean": [1], "scale": [0], "coef": [1], "bias": 0}',
     'h.json: field "scale": must be numbers above 0'),
    ("engagement={file}", "not json", "h.json:1: not valid JSON"),
])  # fmt: skip
def test_a_bad_head_option_fails_before_any_feature_is_computed(tmp_path, monkeypatch, head, text, message):
    """--head NAME=FILE was only checked to exist: a file that is no head was read after the rated sets' features
    (33 s at --limit 1, the whole sets' features without it) and then refused."""
    def no_work(*_args, **_kwargs):
        raise AssertionError("rated_rows ran before the options were checked")

    monkeypatch.setattr(ex, "rated_rows", no_work)
    (tmp_path / "h.json").write_text(text)
    with pytest.raises(InputError, match=message):
        ex.main([str(tmp_path), "--head", head.format(file=tmp_path / "h.json"), "-o", str(tmp_path / "out")])
    assert not (tmp_path / "out").exists()


def test_a_head_named_twice_is_refused_before_any_feature_is_computed(tmp_path, monkeypatch):
    """--head engagement=A --head engagement=B kept B silently (a dict of the options): the run compared one head."""
    monkeypatch.setattr(ex, "rated_rows", lambda *_a, **_k: pytest.fail("rated_rows ran before the options"))
    for name in ("a.json", "b.json"):
        (tmp_path / name).write_text('{"mean": [0], "scale": [1], "coef": [1], "bias": 0}')
    heads = ["--head", f"engagement={tmp_path / 'a.json'}", "--head", f"engagement={tmp_path / 'b.json'}"]
    with pytest.raises(InputError, match='head "engagement" is given twice') as err:
        ex.main([str(tmp_path), *heads, "-o", str(tmp_path / "out")])
    assert err.value.field == "--head" and not (tmp_path / "out").exists()


@pytest.mark.parametrize(("spec", "message"), [
    ("usr-tc,usr-pc,nope", "unknown benchmark 'nope'; known: "),
    ("usr-tc,usr-pc", "give at least 3 rated sets"),
    ("usr-tc,usr-pc,usr-tc,gupta-dailydialog", 'benchmark "usr-tc" is given twice'),
])  # fmt: skip
def test_a_bad_benchmarks_option_fails_before_any_feature_is_computed(tmp_path, monkeypatch, spec, message):
    def no_work(*_args, **_kwargs):
        raise AssertionError("rated_rows ran before the options were checked")

    monkeypatch.setattr(ex, "rated_rows", no_work)
    with pytest.raises(InputError, match=message) as err:
        ex.main([str(tmp_path), "--benchmarks", spec, "-o", str(tmp_path / "out")])
    assert err.value.field == "--benchmarks" and not (tmp_path / "out").exists()


def test_the_benchmarks_option_reaches_the_rated_rows_and_each_set_is_a_fold(tmp_path, monkeypatch, capsys):
    """Four sets fitted on and the default --never-fitted: every set a fold, the mean over the four."""
    examples, rows = synthetic()
    named = {"a": "usr-tc", "b": "usr-pc", "c": "gupta-dailydialog", "d": "holistic-coherence", "e": "lmstyle-mturk"}
    examples = [dataclasses.replace(e, benchmark=named[e.benchmark]) for e in examples]
    seen = []

    def rated(views, limit, heads, benchmarks):
        seen.append(benchmarks)
        return SimpleNamespace(examples=examples, dimensions={}), rows

    views_folder(tmp_path / "views")
    monkeypatch.setattr(ex, "rated_rows", rated)
    monkeypatch.setattr(ex, "held_in_centre", lambda *a, **k: {n: (0.0, 1.0) for n in ex.FROZEN})
    # the synthetic items have no context, so no length figure: keep the rows' own
    monkeypatch.setattr(ex, "length_features", lambda items: [{"length_fit": r["length_fit"]} for r in rows])
    fitted = list(named.values())[:4]
    ex.main([str(tmp_path / "views"), "--benchmarks", ",".join(fitted), "-o", str(tmp_path / "out"),
             "--n-boot", "10"])  # fmt: skip
    assert seen == [[*fitted, "lmstyle-mturk", "predictive-engagement-convai"]]
    # 10 resamples: the CIs are rough, and it says so as every command with CIs does (it said nothing)
    assert capsys.readouterr().err == "warning: the CIs are rough: 10 resamples only, too few for 95% (40 at least)\n"
    out = json.loads((tmp_path / "out" / "results.json").read_text())
    assert out["benchmarks"] == fitted and out["never_fitted"] == ["lmstyle-mturk", "predictive-engagement-convai"]
    for r in out["results"]:
        assert set(r["folds"]) == set(named.values())
        assert r["mean"] == round(sum(r["folds"][b]["spearman"] for b in fitted) / 4, 4)
    # log_words flips its direction on "e" (lmstyle-mturk): never fitted on, so the sign rule keeps it everywhere
    ridge = next(r for r in out["results"] if r["candidate"] == "frozen heads ridge (shipped recipe, no LM)")
    assert all("log_words" in f["features"] for f in ridge["folds"].values())
    # the rule check is over the candidates written: recomputed here with scipy from the table itself
    got = [(r["mean"], r["folds"]["lmstyle-mturk"]["spearman"]) for r in out["results"]]
    assert out["rule_check"]["lmstyle-mturk"] == round(float(spearmanr(*zip(*got, strict=True))[0]), 4)
    assert "predictive-engagement-convai" not in out["rule_check"]  # no item of it among the synthetic sets
    with pytest.raises(InputError, match="lmstyle-mturk is in --benchmarks too") as err:
        ex.main([str(tmp_path / "views"), "--benchmarks", ",".join(named.values())])
    assert err.value.field == "--never-fitted"


def test_encoder_heads_add_their_candidates_and_a_winner_among_them_is_refused_by_ship(tmp_path):
    examples, rows = synthetic()
    rows = [r | {"large_sensible": r["sensible"], "large_fluent": r["fluent"], "large_cosine": r["sbert_context"]}
            for r in rows]  # fmt: skip
    centre = {n: (0.0, 1.0) for n in (*VIEWS, "sensible", "fluent", "sbert_context")}
    centre |= {"large_sensible": (1.0, 2.0), "large_fluent": (0.0, 1.0), "large_cosine": (0.0, 1.0)}
    results = {r["candidate"]: r for r in ex.run(examples, rows, centre, n_boot=20, encoder_heads=True)}
    assert set(results) == set(ex.CANDIDATES) | set(ex.ENCODER_CANDIDATES)
    # the unfitted mean of the shipped features: by hand on set "a", against scipy's Spearman
    names = ("view_coherent", "sensible", "fluent", "sbert_context", "large_sensible", "large_fluent", "large_cosine")
    held = [i for i, e in enumerate(examples) if e.benchmark == "a"]
    by_hand = [sum((rows[i][n] - centre[n][0]) / centre[n][1] for n in names) / 7 for i in held]
    want = spearmanr(by_hand, [examples[i].human for i in held])[0]
    assert results["shipped features z-mean (unfitted)"]["folds"]["a"]["spearman"] == pytest.approx(want, abs=1e-9)
    # the signed ridge sees the same features as the free one (the sign rule), fitted otherwise
    free, signed = (results[c]["folds"] for c in ("views + frozen + other-encoder heads ridge",
                                                   "views + frozen + other-encoder heads, signed ridge"))
    assert [f["features"] for f in free.values()] == [f["features"] for f in signed.values()]
    # the other encoder's cosine is here a copy of MiniLM's: the same figures
    names = ("cosine (other encoder, unfitted)", "cosine (MiniLM context-response)")
    other, minilm = (results[c]["folds"] for c in names)
    assert [(f["spearman"], f["ci"]) for f in other.values()] == [(f["spearman"], f["ci"]) for f in minilm.values()]
    won = [{"candidate": "views + frozen ridge", "mean": 0.4}, {"candidate": "other-encoder heads ridge", "mean": 0.5}]
    with pytest.raises(InputError, match=r"needs the larger encoder's heads \(--encoder-heads\); nothing shipped"):
        ex.ship(tmp_path / "bundled", tmp_path / "views", None, rows, won)
    assert not (tmp_path / "bundled").exists()


def test_an_encoder_heads_folder_without_heads_or_encoder_is_one_clear_error(tmp_path):
    with pytest.raises(InputError, match=r"no sensible\.json in the --encoder-heads folder"):
        ex.encoder_heads_metric(tmp_path)
    for name in ("sensible.json", "fluent.json"):
        (tmp_path / name).write_text("{}")
    (tmp_path / "card.json").write_text('{"encoder": {}}')
    with pytest.raises(InputError, match="names no encoder") as err:
        ex.encoder_heads_metric(tmp_path)
    assert err.value.field == "encoder"


@pytest.fixture
def micro_heads_metric(tmp_path, shared_data):
    """``quality`` whose larger heads are a micro recipe's over MiniLM, trained in ``tmp_path`` (a few seconds)."""
    pytest.importorskip("sentence_transformers")
    from dialeval.quality.recipes import Recipe, train_recipe

    micro = Recipe("micro", per_source=4, chitchat_dialogues=2, seed=7, val_share=0.4, ensemble=False)
    train_recipe(micro, tmp_path, shared_data)
    return ex.encoder_heads_metric(tmp_path)


def test_encoder_rows_are_the_heads_and_the_encoders_own_cosine(micro_heads_metric):
    import numpy as np

    from dialeval.models.loading import load_sentence_encoder
    from dialeval.schema import Turn

    metric = micro_heads_metric
    items = [MetricInput(response="I love hiking too!", context=(Turn(speaker="A", text="I went hiking."),)),
             MetricInput(response="The stock fell.", context=(Turn(speaker="A", text="Hi, how are you?"),))]
    got = ex.encoder_rows(metric, items)
    assert [set(r) for r in got] == [set(ex.ENCODER_FEATURES)] * 2
    encoder, _ = load_sentence_encoder("all-minilm-l6-v2", "cpu")  # the card's encoder, read independently
    for item, row in zip(items, got, strict=True):
        u, v = encoder.encode([item.context[-1].text, item.response], normalize_embeddings=True)
        assert row["large_cosine"] == pytest.approx(float(np.dot(u, v)), abs=1e-4)
    assert got[0]["large_cosine"] > got[1]["large_cosine"]


def test_a_signed_winner_ships_weights_that_keep_their_features_directions(tmp_path):
    import json

    examples, rows = synthetic()
    rows = [r | {"large_sensible": r["sensible"] + random.Random(i).gauss(0, 0.3), "large_fluent": r["fluent"],
                 "large_cosine": r["sbert_context"]} for i, r in enumerate(rows)]  # fmt: skip
    views, large, bundled = tmp_path / "views", tmp_path / "large", tmp_path / "bundled"
    for folder, names in ((views, ("adapter.safetensors", "heads.json", "card.json")),
                          (large, ("sensible.json", "fluent.json", "card.json")), (bundled / "heads", ("card.json",))):
        folder.mkdir(parents=True)
        for name in names:
            (folder / name).write_text("{}")  # copied as bytes; only the ensemble is computed here
    ds = type("DS", (), {"examples": examples, "dimensions": {}})()
    won = [{"candidate": "views + frozen + other-encoder heads, signed ridge", "mean": 0.6}]
    assert ex.ship(bundled, views, ds, rows, won, n_boot=20, large_heads=large) == won[0]["candidate"]
    ensemble = json.loads((bundled / "quality" / "ensemble.json").read_text())
    card = json.loads((bundled / "quality" / "card.json").read_text())
    assert card["model"] == "ridge, each weight held to its feature's direction"
    assert (bundled / "heads-large" / "sensible.json").exists()
    assert not (bundled / "heads-large" / "adapter.safetensors").exists()  # frozen heads bring no adapter
    # heads over a fine-tuned encoder bring its adapter and card; frozen ones after them take them away again
    for name, text in (("adapter.safetensors", "weights"), ("encoder.json", '{"config": {}}')):
        (large / name).write_text(text)
    ex.ship(bundled, views, ds, rows, won, n_boot=20, large_heads=large)
    assert (bundled / "heads-large" / "adapter.safetensors").read_text() == "weights"
    assert (bundled / "heads-large" / "encoder.json").exists()
    for name in ("adapter.safetensors", "encoder.json"):
        (large / name).unlink()
    ex.ship(bundled, views, ds, rows, won, n_boot=20, large_heads=large)
    assert not any((bundled / "heads-large" / n).exists() for n in ("adapter.safetensors", "encoder.json"))
    from dialeval.quality.ensemble import feature_signs

    signs = feature_signs(examples, rows, ensemble["features"])
    assert all(c * signs[n] >= 0 for n, c in zip(ensemble["features"], ensemble["coef"], strict=True))
    assert ensemble["features"] == list(signs) and "sensible" in signs
    # a set never fitted on stays out of the shipped fit: log_words (flipped only on "e") then agrees everywhere
    assert "log_words" not in ensemble["features"]
    ex.ship(bundled, views, ds, rows, [{"candidate": "views + frozen ridge", "mean": 0.6}], n_boot=20,
            never_fitted=("e",))  # fmt: skip
    card = json.loads((bundled / "quality" / "card.json").read_text())
    assert card["benchmarks"] == ["a", "b", "c", "d"] and card["n"] == 120 and card["never_fitted"] == ["e"]
    assert "log_words" in json.loads((bundled / "quality" / "ensemble.json").read_text())["features"]
    assert [r["trained_on"] for r in card["leave_one_benchmark_out"]][-1] == ["a", "b", "c", "d"]


def test_tuned_heads_add_their_candidates_beside_the_shipped_features_and_cannot_ship(tmp_path, monkeypatch):
    examples, rows = synthetic()
    rows = [r | {"large_sensible": r["sensible"], "large_fluent": r["fluent"], "large_cosine": r["sbert_context"],
                 "tuned_sensible": r["log_words"], "tuned_fluent": r["fluent"],
                 "tuned_cosine": r["sensible"]} for r in rows]  # fmt: skip
    centre = {n: (0.0, 1.0) for n in (*VIEWS, "sensible", "fluent", "sbert_context", *ex.ENCODER_FEATURES)}
    results = {r["candidate"]: r for r in ex.run(examples, rows, centre, n_boot=20, encoder_heads=True, tuned=True)}
    assert set(results) == set(ex.CANDIDATES) | set(ex.ENCODER_CANDIDATES) | set(ex.TUNED_CANDIDATES)
    for b in "abcde":  # the tuned cosine alone is its own Spearman (scipy, independently)
        held = [i for i, e in enumerate(examples) if e.benchmark == b]
        want = spearmanr([rows[i]["tuned_cosine"] for i in held], [examples[i].human for i in held])[0]
        assert results["cosine (tuned encoder, unfitted)"]["folds"][b]["spearman"] == pytest.approx(want, abs=1e-9)
    ridge = results["shipped features + tuned heads ridge"]["folds"]
    assert all("tuned_cosine" in f["features"] and "large_sensible" in f["features"] for f in ridge.values())
    # a copy of log_words, whose direction flips on set "e": kept only when "e" is held out (the sign rule)
    assert "tuned_sensible" in ridge["e"]["features"] and all("tuned_sensible" not in ridge[b]["features"]
                                                              for b in "abcd")  # fmt: skip
    won = [{"candidate": "views + frozen ridge", "mean": 0.4}, {"candidate": "shipped features + tuned heads ridge",
                                                                "mean": 0.5}]  # fmt: skip
    with pytest.raises(InputError, match="needs a fine-tuned third encoder that quality does not run"):
        ex.ship(tmp_path / "bundled", tmp_path / "views", None, rows, won)
    assert not (tmp_path / "bundled").exists()

    def no_work(*_args, **_kwargs):
        raise AssertionError("rated_rows ran before the options were checked")

    monkeypatch.setattr(ex, "rated_rows", no_work)
    monkeypatch.setattr(ex, "encoder_heads_metric", lambda folder: folder)  # the folders' contents are not the point
    with pytest.raises(InputError, match="--tuned-heads goes beside --encoder-heads"):
        ex.main([str(tmp_path), "--tuned-heads", str(tmp_path), "-o", str(tmp_path / "out")])
    assert not (tmp_path / "out").exists()


def test_calibrated_rows_subtract_the_mean_over_the_generic_probes_in_the_same_context(micro_heads_metric):
    import numpy as np

    from dialeval.models.loading import load_sentence_encoder
    from dialeval.schema import Turn

    metric = micro_heads_metric
    items = [MetricInput(response="I love hiking too!", context=(Turn(speaker="A", text="I went hiking."),)),
             MetricInput(response="ok", context=()),
             MetricInput(response="The stock fell.", context=(Turn(speaker="B", text="Hi."),
                                                               Turn(speaker="A", text="How are you?")))]  # fmt: skip
    rows = ex.encoder_rows(metric, items)
    got = ex.calibrated_rows(metric, items, rows)
    assert [set(r) for r in got] == [set(ex.CALIBRATED_FEATURES)] * 3
    assert got[1]["large_cosine_vs_generic"] is None  # no context, no cosine
    encoder, _ = load_sentence_encoder("all-minilm-l6-v2", "cpu")  # the card's encoder, read independently
    sensible = metric.large()[1][0]
    for n in (0, 2):
        turns = [t.text for t in items[n].context]
        u, w = encoder.encode([turns[-1], " ".join(turns[-3:])], normalize_embeddings=True)
        probe_cos, probe_logit = [], []
        for g in ex.probes():  # each probe after the item's own context, by hand
            v = encoder.encode([g], normalize_embeddings=True)[0]
            x = np.concatenate([v, u * v, np.abs(u - v), w * v, [np.dot(u, v)], [np.dot(w, v)]])[None, :]
            probe_cos.append(float(np.dot(u, v)))
            probe_logit.append(float(sensible.logit(x)[0]))
        want_cos = rows[n]["large_cosine"] - sum(probe_cos) / len(probe_cos)
        want_sens = rows[n]["large_sensible"] - sum(probe_logit) / len(probe_logit)
        assert got[n]["large_cosine_vs_generic"] == pytest.approx(want_cos, abs=1e-4)
        assert got[n]["large_sensible_vs_generic"] == pytest.approx(want_sens, abs=1e-3)


def test_calibrated_candidates_need_the_encoder_heads(tmp_path, monkeypatch):
    def no_work(*_args, **_kwargs):
        raise AssertionError("rated_rows ran before the options were checked")

    monkeypatch.setattr(ex, "rated_rows", no_work)
    with pytest.raises(InputError, match="--calibrated reads the --encoder-heads features"):
        ex.main([str(tmp_path), "--calibrated", "-o", str(tmp_path / "out")])
    assert not (tmp_path / "out").exists()


def _results(pairs, never=("x",)):
    return [{"mean": m, "folds": {"x": {"spearman": s}, "y": {"spearman": -s}}, "never_fitted": list(never)}
            for m, s in pairs]  # fmt: skip


def test_the_rule_check_ranks_candidates_by_the_fold_mean_against_each_never_fitted_set():
    # hand computation: the same order gives 1, the reverse -1; x and y are mirror images
    same = ex.rule_check(_results([(0.1, 0.0), (0.2, 0.5), (0.3, 0.9)], never=("x", "y")))
    assert same == {"x": 1.0, "y": -1.0, "never-fitted mean": None}  # the mean of x and -x is constant
    assert ex.rule_check(_results([(0.1, 0.3), (0.2, 0.2), (0.3, 0.1)])) == {"x": -1.0, "never-fitted mean": -1.0}
    # too few candidates, a constant fold mean, no never-fitted set: nothing to rank
    assert ex.rule_check(_results([(0.1, 0.3), (0.2, 0.2)])) == {"x": None, "never-fitted mean": None}
    assert ex.rule_check(_results([(0.2, 0.1), (0.2, 0.2), (0.2, 0.3)])) == {"x": None, "never-fitted mean": None}
    assert ex.rule_check(_results([(0.1, 0.3), (0.2, 0.2), (0.3, 0.1)], never=())) == {}


def test_a_fold_without_a_figure_leaves_the_mean_empty_and_the_table_says_so(tmp_path):
    """dialeval quality experiment --limit 2 stopped in a TypeError: a constant column has no Spearman on one set."""
    examples, rows = synthetic()
    rows = [r | {"sbert_context": 1.0} if e.benchmark == "a" else r for e, r in zip(examples, rows, strict=True)]
    centre = {n: (0.0, 1.0) for n in (*VIEWS, "sensible", "fluent", "sbert_context")}
    results = ex.run(examples, rows, centre, n_boot=20)
    cosine = next(r for r in results if r["candidate"] == "cosine (MiniLM context-response)")
    assert cosine["folds"]["a"]["spearman"] is None and cosine["mean"] is None and cosine["min"] is None
    assert "| cosine (MiniLM context-response) | n/a |" in ex.markdown(results)
    assert "| n/a | n/a |" in ex.markdown(results)  # its mean and min
    whole = [r for r in results if r["mean"] is not None]
    assert whole and all(r["folds"]["a"]["spearman"] is not None for r in whole)  # the others keep theirs
    # the rule check passes over a candidate without a mean (hand case: three in order, one without)
    ranked = [*_results([(0.1, 0.0), (0.2, 0.5), (0.3, 0.9)]), {**_results([(0.0, 0.4)])[0], "mean": None}]
    assert ex.rule_check(ranked) == {"x": 1.0, "never-fitted mean": 1.0}
    with pytest.raises(InputError, match="no candidate has a figure on every fold"):
        ex.ship(tmp_path / "bundled", tmp_path / "views", None, [], [{**r, "mean": None} for r in results])
    assert not (tmp_path / "bundled").exists()


def test_ship_interrupted_while_measuring_leaves_the_shipped_files_as_they_were(tmp_path, monkeypatch):
    """ship copied the views and wrote ensemble.json, then ran the leave-one-benchmark-out bootstraps: an interrupt
    there left the new ensemble beside the card of the one shipped before. It is raised where those rows start."""
    examples, rows = synthetic()
    views, bundled = tmp_path / "views", tmp_path / "bundled"
    parts = ((views, ("adapter.safetensors", "heads.json", "card.json")), (bundled / "heads", ("card.json",)))
    for folder, names in parts:
        folder.mkdir(parents=True)
        for name in names:
            (folder / name).write_text("{}")
    ds = type("DS", (), {"examples": examples, "dimensions": {}})()
    won = [{"candidate": "views + frozen ridge", "mean": 0.6}]
    ex.ship(bundled, views, ds, rows, won, n_boot=20)
    shipped = {p: p.read_bytes() for p in sorted(bundled.rglob("*")) if p.is_file()}
    card = json.loads((bundled / "quality" / "card.json").read_bytes())
    ensemble = (bundled / "quality" / "ensemble.json").read_bytes()
    assert card["files"]["ensemble.json"] == hashlib.sha256(ensemble).hexdigest()  # the card names its ensemble

    def interrupt(*args, **kwargs):
        raise KeyboardInterrupt

    (views / "heads.json").write_text('{"new": 1}')
    monkeypatch.setattr("dialeval.quality.ensemble.leave_one_out", interrupt)
    with pytest.raises(KeyboardInterrupt):  # another fit: log_words joins once set "e" is never fitted on
        ex.ship(bundled, views, ds, rows, won, n_boot=20, never_fitted=("e",))
    assert {p: p.read_bytes() for p in sorted(bundled.rglob("*")) if p.is_file()} == shipped


def test_ship_failing_at_the_card_leaves_every_bundled_file_as_it_was(tmp_path):
    """ship copied the views and heads into ``bundled`` file by file, then wrote the ensemble and its card: an error
    there left the new parts beside the old card. Here the card cannot be written (a comparison row holds a value
    JSON cannot write, so json.dumps of the card raises TypeError) after every part was copied."""
    examples, rows = synthetic()
    rows = [r | {"large_sensible": r["sensible"], "large_fluent": r["fluent"], "large_cosine": r["sbert_context"]}
            for r in rows]  # fmt: skip
    views, large, heads, bundled = tmp_path / "views", tmp_path / "large", tmp_path / "heads", tmp_path / "bundled"
    parts = ((views, ("adapter.safetensors", "heads.json", "card.json")),
             (large, ("sensible.json", "fluent.json", "card.json")), (heads, ("sensible.json", "fluent.json",
                                                                               "card.json")))  # fmt: skip
    for folder, names in parts:
        folder.mkdir(parents=True)
        for name in names:
            (folder / name).write_text(f'{{"{folder.name}/{name}": 1}}')
    ds = type("DS", (), {"examples": examples, "dimensions": {}})()
    won = [{"candidate": "views + frozen + other-encoder heads, signed ridge", "mean": 0.6}]
    (large / "adapter.safetensors").write_text("old weights")
    ex.ship(bundled, views, ds, rows, won, n_boot=20, heads=heads, large_heads=large)
    # the normal ship: the parts copied byte for byte, the card's sha256 of the files as shipped
    for source, folder in ((views, "views"), (large, "heads-large"), (heads, "heads")):
        assert {p.name: p.read_bytes() for p in (bundled / folder).iterdir()} == {
            p.name: p.read_bytes() for p in source.iterdir()}
    card = json.loads((bundled / "quality" / "card.json").read_bytes())
    sha = {name: hashlib.sha256(p.read_bytes()).hexdigest() for name, p in
           (("ensemble.json", bundled / "quality" / "ensemble.json"), ("heads", bundled / "heads" / "card.json"),
            ("large", bundled / "heads-large" / "card.json"))}  # fmt: skip
    assert card["files"] == {"ensemble.json": sha["ensemble.json"]}
    assert (card["heads_card_sha256"], card["large_heads_card_sha256"]) == (sha["heads"], sha["large"])
    assert card["views_sha256"] == {p.name: hashlib.sha256(p.read_bytes()).hexdigest()
                                    for p in sorted((bundled / "views").iterdir())}  # fmt: skip
    shipped = {p: p.read_bytes() if p.is_file() else None for p in sorted(bundled.rglob("*"))}
    for source in (views, large, heads):  # every part new, the adapter gone from the larger heads
        for name in ("heads.json", "card.json", "sensible.json"):
            if (source / name).exists():
                (source / name).write_text('{"new": 1}')
    (large / "adapter.safetensors").unlink()
    with pytest.raises(TypeError, match="not JSON serializable"):
        ex.ship(bundled, views, ds, rows, [{**won[0], "note": {"a set, not JSON"}}], n_boot=20, heads=heads,
                large_heads=large)  # fmt: skip
    assert {p: p.read_bytes() if p.is_file() else None for p in sorted(bundled.rglob("*"))} == shipped
    # the shipped views compared again: the source is the target, nothing to copy, the card names them as they are
    ex.ship(bundled, bundled / "views", ds, rows, won, n_boot=20, large_heads=bundled / "heads-large")
    for folder in ("views", "heads-large"):
        assert {p: p.read_bytes() for p in (bundled / folder).iterdir()} == {
            p: shipped[p] for p in (bundled / folder).iterdir()}
    card = json.loads((bundled / "quality" / "card.json").read_bytes())
    assert card["views_sha256"] == {p.name: hashlib.sha256(shipped[p]).hexdigest()
                                    for p in sorted((bundled / "views").iterdir())}  # fmt: skip
    assert (bundled / "heads-large" / "adapter.safetensors").read_text() == "old weights"  # kept: it is the source
    ex.ship(bundled, views, ds, rows, won, n_boot=20, large_heads=large)  # frozen heads: the stale adapter goes
    assert not (bundled / "heads-large" / "adapter.safetensors").exists()
    assert (bundled / "heads-large" / "card.json").read_text() == '{"new": 1}'
    assert not [p for p in bundled.iterdir() if p.name.startswith(".")]  # no staged folder left behind


def views_folder(path, card='{"config": {}}', heads='{"centre": [[0.0, 1.0], [0.5, 2.0], [-1, 3]]}'):
    """A views folder as far as the experiment reads it before any work: its card and its heads' centre."""
    path.mkdir(parents=True)
    for name, text in (("card.json", card), ("heads.json", heads)):
        if text is not None:
            (path / name).write_text(text)
    return path


def test_the_views_card_and_centre_are_read_as_the_training_run_wrote_them(tmp_path):
    from dialeval.metrics.quality import BUNDLED
    from dialeval.quality.crosstrain import TrainConfig

    folder = views_folder(tmp_path / "views", card='{"config": {"seed": 3, "lora_targets": ["q", "k"]}}')
    cfg, centre = ex.views_training(folder)
    assert cfg == TrainConfig(seed=3, lora_targets=("q", "k"))  # the rest as the dataclass's defaults
    assert centre == {"view_coherent": (0.0, 1.0), "view_fluent": (0.5, 2.0), "view_specific": (-1.0, 3.0)}
    # the shipped views: their card's config and heads.json's centre, read here with json alone
    cfg, centre = ex.views_training(BUNDLED / "views")
    card = json.loads((BUNDLED / "views" / "card.json").read_text())["config"]
    assert cfg.encoder == card["encoder"] == "all-mpnet-base-v2" and cfg.steps == card["steps"]
    want = json.loads((BUNDLED / "views" / "heads.json").read_text())["centre"]
    assert [list(centre[v]) for v in VIEWS] == want
    # a run's model/ folder finds the card one up, as the run writes it
    run = views_folder(tmp_path / "run", heads=None)
    views_folder(run / "model", card=None)
    assert ex.views_training(run / "model")[0] == TrainConfig()


@pytest.mark.parametrize(("name", "text", "field", "message"), [
    ("card.json", None, None, "no card.json in the views folder or the run folder above it"),
    ("card.json", '{"config": ', None, "not valid JSON"),
    ("card.json", '{"what": "views"}', "config", "no training config (an object)"),
    ("card.json", '{"config": {"stpes": 10}}', "config.stpes", 'unknown field; did you mean "steps"?'),
    ("card.json", '{"config": {"steps": "many"}}', "config.steps", "Input should be a valid integer"),
    ("heads.json", None, None, "cannot read the trained file"),
    ("heads.json", '{"views": ["coherent"]}', "centre", "must hold one [mean, sd] pair per view (3: view_coherent"),
    ("heads.json", '{"centre": [[0.0, 1.0], [0.0, 1.0]]}', "centre", "got [[0.0, 1.0], [0.0, 1.0]]"),
    ("heads.json", '{"centre": [[0, 1], [0, 1], [0, 0]]}', "centre", "each sd above 0"),
])  # fmt: skip
def test_a_bad_views_card_or_centre_is_one_error_before_any_feature_is_computed(tmp_path, monkeypatch, name, text,
                                                                                field, message):
    """A missing or corrupt card, or a centre of two views, failed after the rated features (minutes), in a
    traceback (KeyError, TypeError, or zip's ValueError: 'zip() argument 2 is shorter than argument 1')."""

    def no_work(*_args, **_kwargs):
        raise AssertionError("rated_rows ran before the views' card and centre were read")

    monkeypatch.setattr(ex, "rated_rows", no_work)
    views = views_folder(tmp_path / "run" / "steps" / "00100", **{name.removesuffix(".json"): text})
    with pytest.raises(InputError) as err:
        ex.main([str(views), "-o", str(tmp_path / "out")])
    assert message in err.value.message
    assert err.value.path == str(views if message.startswith("no card.json") else views / name)
    assert err.value.field == field and not (tmp_path / "out").exists()


@pytest.mark.parametrize(("config", "field", "message"), [
    ('{"val_pairs": 0}', "val_pairs", "must be at least 1, got 0"),
    ('{"per_source": -3}', "per_source", "must be at least 1, got -3"),
    ('{"val_share": 0}', "val_share", "must be above 0 and at most 1, got 0.0"),
    ('{"seed": -1}', "seed", "must be at least 0, got -1"),
    ('{"seed": 99999999999999999999}', "seed", "must be at most 4,294,967,295 (seeds are 32-bit)"),
    ('{"steps": 0}', "steps", "must be at least 1, got 0"),
    ('{"lr": NaN}', "lr", "must be a finite number above 0, got nan"),
    ('{"lr": 0}', "lr", "must be a finite number above 0, got 0.0"),
    # another JSON type: pydantic's lax mode converted these silently (lr 0.1, seed 1, seed 2, overlap on)
    ('{"lr": "0.1"}', "lr", "Input should be a valid number"),
    ('{"seed": true}', "seed", "Input should be a valid integer"),
    ('{"seed": 2.0}', "seed", "Input should be a valid integer"),
    ('{"overlap_negatives": "yes"}', "overlap_negatives", "Input should be a valid boolean"),
    ('{"per_source": "7"}', "per_source", "Input should be a valid integer"),
])  # fmt: skip
def test_a_views_config_out_of_range_is_one_error_before_any_feature_is_computed(tmp_path, monkeypatch, config,
                                                                                 field, message):
    """Such a card was taken as it was: the held-in examples it rebuilds (after the rated features, minutes)
    were none (val_pairs 0, val_share 0: statistics' "fmean requires at least one data point") or a traceback
    (per_source -3: random.sample's "Sample larger than population or is negative"). The messages are
    dialeval.quality.argtypes' (the training command's own option checks). dialeval writes the card, so text
    for a number or a number for a flag is a hand edit: refused as the wrong type, not converted."""

    def no_work(*_args, **_kwargs):
        raise AssertionError("rated_rows ran before the views' card was checked")

    monkeypatch.setattr(ex, "rated_rows", no_work)
    views = views_folder(tmp_path / "views", card=f'{{"config": {config}}}')
    with pytest.raises(InputError) as err:
        ex.main([str(views), "-o", str(tmp_path / "out")])
    assert message in err.value.message
    assert err.value.path == str(views / "card.json") and err.value.field == f"config.{field}"
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(("name", "text", "line", "field"), [
    ("card.json", '{"config": {"seed": 1,\n "seed": 2}}', 2, "config.seed"),
    ("heads.json", '{"centre": [[0, 1], [0, 1], [0, 1]],\n\n "centre": [[0, 1], [0, 1], [0, 2]]}', 3, "centre"),
])  # fmt: skip
def test_a_key_given_twice_in_the_views_card_or_centre_is_refused(tmp_path, monkeypatch, name, text, line, field):
    """json kept the last value silently: a card naming seed twice rebuilt the held-in examples of seed 2."""
    monkeypatch.setattr(ex, "rated_rows", lambda *_a, **_k: pytest.fail("rated_rows ran before the check"))
    views = views_folder(tmp_path / "views", **{name.removesuffix(".json"): text})
    with pytest.raises(InputError) as err:
        ex.main([str(views), "-o", str(tmp_path / "out")])
    assert "appears twice in one JSON object" in err.value.message
    assert (err.value.path, err.value.line, err.value.field) == (str(views / name), line, field)


@pytest.mark.parametrize(("option", "inside"), [("-o", "results.json"), ("--ship", "quality/card.json")])
def test_an_output_file_that_is_a_folder_is_refused_before_any_work(tmp_path, monkeypatch, capsys, option, inside):
    """-o OUT with OUT/results.json a folder ran the whole comparison, then stopped in an IsADirectoryError."""

    def no_work(*_args, **_kwargs):
        raise AssertionError("rated_rows ran before the options were checked")

    monkeypatch.setattr(ex, "rated_rows", no_work)
    (tmp_path / "out" / inside).mkdir(parents=True)
    with pytest.raises(SystemExit) as exit_:  # the views folder is not there either: the options come first
        ex.main([str(tmp_path / "views"), option, str(tmp_path / "out")])
    assert exit_.value.code == 2  # argparse's one usage line
    assert f"{tmp_path}/out/{inside} is a folder; {inside} is written there" in capsys.readouterr().err


def test_results_json_is_written_whole_or_not_at_all(tmp_path, monkeypatch):
    """It was written with a plain write_text: a full disk or an interrupt while writing left half a file."""
    import errno

    from dialeval.atomic import WriteError

    results = [{"candidate": "x", "how": "single", "folds": {"a": {"spearman": 0.5, "ci": [0.1, 0.9]}},
                "mean": 0.5, "min": 0.5, "never_fitted": []}]  # fmt: skip
    (tmp_path / "results.json").write_text("earlier run")

    def full(_fd):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr("dialeval.atomic.os.fsync", full)
    with pytest.raises(WriteError, match=r"results\.json: cannot be written: No space left on device"):
        ex.write_report(tmp_path, results, 1000, {})
    assert (tmp_path / "results.json").read_text() == "earlier run"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["results.json"]  # no temporary file left
    monkeypatch.undo()
    ex.write_report(tmp_path, results, 1000, {"views": "v"})
    assert json.loads((tmp_path / "results.json").read_text()) == {"views": "v", "results": results, "rule_check": {}}
