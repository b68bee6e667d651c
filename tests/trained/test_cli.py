"""``dialeval train`` and ``dialeval score -m trained:PATH`` through the real CLI."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from tests.commands.cli_runner import invoke, refused
from typer.testing import CliRunner

from dialeval.cli import app
from dialeval.jsonl import read_jsonl
from dialeval.runinfo import RunInfo, TrainRun
from dialeval.schema import Score
from dialeval.scoring import ScoringRequest

runner = CliRunner()


def test_train_then_score_with_the_saved_model(tmp_path: Path) -> None:
    out = tmp_path / "run"
    res = runner.invoke(app, [
        "train", "--model", "tfidf-lr", "--train", "usr-pc,gupta-dailydialog", "--test", "usr-tc",
        "--dimension", "Overall", "--limit", "8", "--n-boot", "50", "--output", str(out),
    ])
    assert res.exit_code == 0, res.output
    rows = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    assert rows[0]["model"] == "tfidf-lr" and rows[0]["split"] == "test=usr-tc" and rows[0]["n"] == 48
    assert set(rows[0]) >= {"accuracy", "uar", "kappa", "spearman", "spearman_ci", "pearson", "f1"}
    card = json.loads((out / "model-tfidf-lr" / "card.json").read_text())
    assert card["training"]["dimensions"] == {"usr-pc": "Overall", "gupta-dailydialog": "appropriateness"}
    assert "| tfidf-lr | test=usr-tc | 48 |" in (out / "results.md").read_text()
    run = RunInfo.model_validate(json.loads((out / "run.json").read_text())).root
    assert isinstance(run, TrainRun) and run.train == ["usr-pc", "gupta-dailydialog"] and run.test == ["usr-tc"]
    assert run.request == ScoringRequest().record()  # the run options as given (none)

    scores = tmp_path / "scores.jsonl"
    name = f"trained:{out / 'model-tfidf-lr'}"
    res = runner.invoke(app, ["score", "-m", name, "-b", "usr-tc", "--limit", "2", "-o", str(scores)])
    assert res.exit_code == 0, res.output
    got = read_jsonl(scores, Score)
    assert len(got) == 12 and {s.metric for s in got} == {name}
    assert all(s.value is not None for s in got)


def test_a_model_predicting_one_label_gets_a_note_on_screen_and_in_results_md(tmp_path: Path) -> None:
    """TF-IDF ridge from USR-TC puts every USR-PC response in the middle third: kappa 0.000 was printed bare."""
    res = runner.invoke(app, ["train", "--model", "tfidf-lr", "--train", "usr-tc-unieval", "--test", "usr-pc",
                              "--n-boot", "0", "--no-save", "--output", str(tmp_path)])  # fmt: skip
    assert res.exit_code == 0, res.output
    (row,) = [json.loads(line) for line in (tmp_path / "results.jsonl").read_text().splitlines()]
    assert row["one_label"] == 1 and row["kappa"] == 0.0
    note = "note: tfidf-lr on test=usr-pc predicted label 1 (the middle third of the scale) for all 300 items"
    assert note in " ".join(res.output.split())
    assert note in (tmp_path / "results.md").read_text()
    res = runner.invoke(app, ["report", str(tmp_path), "-o", str(tmp_path / "report.md"), "--format", "md"])
    assert res.exit_code == 0, res.output
    assert note in (tmp_path / "report.md").read_text()  # the report of the folder says it too


def test_an_error_in_one_split_names_the_split(tmp_path: Path) -> None:
    """--logo system on 3 contexts: each split trains on the other system's one context, and the error named none."""
    (tmp_path / "t.csv").write_text("context,response,system,q\nHi,Hello there,a,4\nHi,ok,b,2\nYo,Hey you,a,5\n"
                                    "Yo,no,b,1\nSup,Not much,a,4\nSup,eh,b,3\n")  # fmt: skip
    table = ["--path", str(tmp_path / "t.csv"), "--response-col", "response", "--context-col", "context",
             "--system-col", "system", "--rating-col", "q", "--scale", "1-5"]  # fmt: skip
    res = runner.invoke(app, ["train", "--model", "tfidf-lr", *table, "--train", "t", "--logo", "system",
                              "--n-boot", "0", "-o", str(tmp_path / "out")])  # fmt: skip
    assert res.exit_code == 2
    assert 'error: field "--train": split "system=a": TF-IDF cannot learn a vocabulary from 1 training text' in \
        " ".join(res.output.split())  # fmt: skip
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("logo", ["system", " system "])
def test_logo_by_system(tmp_path: Path, logo: str) -> None:
    """--logo " system" was 'cannot group by " system"', where -b, --train, --engine and --level drop the spaces."""
    res = runner.invoke(app, [
        "train", "--model", "tfidf-nb", "--train", "usr-pc", "--logo", logo, "--limit", "10",
        "--n-boot", "0", "--no-save", "--output", str(tmp_path),
    ])
    assert res.exit_code == 0, res.output
    rows = [json.loads(line) for line in (tmp_path / "results.jsonl").read_text().splitlines()]
    assert [r["split"] for r in rows][-1] == "mean of 5"
    assert not (tmp_path / "model-tfidf-nb").exists()


def test_bad_input_errors(tmp_path: Path) -> None:
    cases = [
        (["--train", "usr-pc", "--test", "usr-tcc"], 'unknown benchmark "usr-tcc"'),
        (["--train", "usr-pc", "--test", "usr-pc"], "both in --train and --test"),
        (["--train", "usr-pc"], "exactly one of --test, --logo, --folds (none is given): how to split --train"),
        (["--train", "usr-pc", "--logo", "system", "--folds", "3"], "(--logo and --folds are both given)"),
        (["--train", "usr-pc", "--test", "usr-tc", "--model", "gpt"], 'unknown model "gpt"'),
        # the first ran and stopped in 'metric "pred" scores item ... twice'; the second wrote its rows twice;
        # the third was accepted; the fourth named the field "k"
        (["--train", "usr-pc", "--test", "usr-tc,usr-tc"], 'field "--test": benchmark "usr-tc" is given twice'),
        (["--train", "usr-pc", "--test", "usr-tc", "--model", "tfidf-lr,tfidf-lr"],
         'field "--model": model "tfidf-lr" is given twice'),
        (["--train", "usr-pc", "--test", "usr-tc", "--n-boot", "-1"], 'field "--n-boot": must be >= 0'),
        (["--train", "usr-pc", "--folds", "1"], 'field "--folds": must be at least 2, got 1'),
        (["--train", "usr-pc", "--folds", "0"], 'field "--folds": must be at least 2, got 0'),  # "exactly one of"
        # the first wrote results of no model; the second read "usr-tc," as usr-tc
        (["--train", "usr-pc", "--test", "usr-tc", "--model", ""], 'field "--model": empty model name'),
        (["--train", "usr-pc", "--test", "usr-tc,"], 'field "--test": empty benchmark name in "usr-tc,"'),
        # each ran: the first ignored its --dim, the second took the last of the two
        (["--train", "usr-pc", "--test", "usr-tc", "--dim", "usr-cp=Overall"],
         'field "--dim": names "usr-cp", which is not in --train or --test'),
        (["--train", "usr-pc", "--test", "usr-tc", "--dim", "usr-pc=Overall", "--dim", "usr-pc=Engaging"],
         'field "--dim": benchmark "usr-pc" is given twice'),
        # each of these ran on: -d with each benchmark's default, nope.min_df ignored; the next was sklearn's
        # traceback after loading, the next three named no field or another one ("k", "target_norm")
        (["--train", "usr-pc", "--test", "usr-tc", "-d", "Coolness"],
         'field "--dimension": no benchmark learns "Coolness" (they rate other dimensions, or --dim chose one for '
         "them); they learn: usr-pc=Overall, usr-tc=Overall"),
        (["--train", "usr-pc", "--test", "usr-tc", "--model", "tfidf-lr", "--model-param", "nope.min_df=1"],
         'field "--model-param": names the model "nope", which is not in --model'),
        (["--train", "usr-pc", "--test", "usr-tc", "--model", "tfidf-lr", "--model-param", "tfidf-lr.min_df=-3"],
         'field "--model-param": tfidf-lr.min_df must be at least 1, got -3'),
        (["--train", "usr-pc", "--test", "usr-tc", "--model-param", "ensemble.families=lenght"],
         'field "--model-param": ensemble.families: unknown metric "lenght"; did you mean "length"?'),
        (["--train", "usr-pc", "--folds", "4"], 'field "--folds": 4 folds need at least 4 contexts; --train has 3'),
        (["--train", "usr-pc", "--test", "usr-tc", "--target-norm", "z"], 'field "--target-norm": unknown target'),
        (["--train", "usr-pc", "--test", "usr-tc", "--model-param", "min_df"],
         'field "--model-param": parameter "min_df" is not of the form [model.]key=value'),
        (["--train", "usr-pc", "--test", "usr-tc", "--dim", "usr-pc=Coolness"],
         'field "--dim": benchmark "usr-pc" has no dimension "Coolness"'),
    ]
    for args, message in cases:
        res = runner.invoke(app, ["train", *args, "--limit", "3", "--output", str(tmp_path)])
        assert res.exit_code != 0, args
        assert message in " ".join(res.output.split()), res.output
    (tmp_path / "card.json").write_text("{")
    res = runner.invoke(app, ["score", "-m", f"trained:{tmp_path}", "-b", "usr-tc", "--limit", "1",
                              "-o", str(tmp_path / "s.jsonl")])
    assert res.exit_code != 0
    assert "not valid JSON" in res.output or "not valid JSON" in str(res.exception)



def test_train_refuses_an_output_folder_that_holds_its_inputs(tmp_path: Path) -> None:
    """--path sitting where train writes results.jsonl, or --mapping inside a model-<kind> folder it replaces
    whole: one error line before any benchmark is read or model fitted, and the inputs are unchanged."""
    out = tmp_path / "run"
    (out / "model-tfidf-lr").mkdir(parents=True)
    table = out / "results.jsonl"
    table.write_text("".join(json.dumps({"context": f"Hi {i}", "response": f"Hello {i}", "system": "ab"[i % 2],
                                         "rating": 1 + i % 5}) + "\n" for i in range(12)))  # fmt: skip
    before = table.read_bytes()
    args: list[str | Path] = ["train", "--model", "tfidf-lr", "--train", "results", "--folds", "2", "-o", out]
    cols = ["--response-col", "response", "--context-col", "context", "--rating-col", "rating=Overall"]
    res = invoke(*args, "--path", table, *cols, "--scale", "1-5")
    line = refused(res, f'{table}: field "--output"', "is the file given to --path")
    assert "destroy the input" in line
    assert table.read_bytes() == before
    rows = table.rename(tmp_path / "results.jsonl")
    mapping = out / "model-tfidf-lr" / "mapping.yaml"
    mapping.write_text("response: response\ncontext: context\nratings: {rating: Overall}\nscale: 1-5\n")
    kept = mapping.read_bytes()
    res = invoke(*args, "--path", rows, "--mapping", mapping)
    refused(res, f'{mapping}: field "--output"', "is the file given to --mapping")
    assert mapping.read_bytes() == kept and rows.read_bytes() == before
    assert sorted(p.name for p in out.rglob("*")) == ["mapping.yaml", "model-tfidf-lr"]


def test_train_on_your_own_table_says_what_is_missing(tmp_path: Path) -> None:
    """Three gaps a user of --path met: no --train said only "give --train" (not that the table is named by its
    file); a table named in neither --train nor --test was read and then silently not used (the run trained on
    the catalog alone); no --scale ended in 'field "scale": cannot read the rating scale ""'."""
    table = tmp_path / "mine.csv"
    table.write_text("context,response,rating\n" + "".join(f"Hi {i},Hello {i},{1 + i % 5}\n" for i in range(12)))
    own = ["--path", table, "--response-col", "response", "--context-col", "context", "--rating-col", "rating"]
    out = tmp_path / "run"
    res = invoke("train", "--model", "tfidf-lr", *own, "-o", out)
    refused(res, "give --train (benchmarks to train on; your table is named \"mine\": e.g. --train mine --folds 5)")
    res = invoke("train", "--model", "tfidf-lr", "--train", "usr-pc", "--test", "usr-tc", *own, "-o", out)
    refused(res, f'{table}: field "--path": your table is "mine": name it in --train or --test')
    res = invoke("train", "--model", "tfidf-lr", "--train", "mine", "--folds", "2", *own, "-o", out)
    refused(res, 'field "--scale": benchmark "mine" gives no rating scale for "rating": give it with --scale')
    assert not out.exists()
    res = invoke("train", "--model", "tfidf-lr", "--train", "mine", "--folds", "2", "--n-boot", "0", *own,
                 "--scale", "1-5", "--no-save", "-o", out)  # fmt: skip
    assert res.exit_code == 0, res.output
    def strict(name: str) -> Any:
        raise AssertionError(f"{name} in results.jsonl: not JSON")

    rows = [json.loads(line, parse_constant=strict) for line in (out / "results.jsonl").read_text().splitlines()]
    assert [r["split"] for r in rows] == ["fold1/2", "fold2/2", "mean of 2"]
    assert rows[0]["n"] + rows[1]["n"] == 12  # every row of the table, over the two folds


def test_train_resumes_from_the_score_cache_and_computes_only_what_is_missing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run killed after some feature batches were committed leaves a partial score cache (made here by
    deleting committed rows): the rerun computes only the missing items and writes a fresh run's results."""
    from tests.partial_cache import count_computed, drop_cached

    from dialeval.metrics.lexical import Distinct

    computed = count_computed(monkeypatch, Distinct)

    def run(out: str, *cache: str) -> None:
        res = runner.invoke(app, [
            "train", "--model", "ensemble", "--model-param", "ensemble.families=length,distinct", "--train", "usr-pc",
            "--test", "usr-tc", "--limit", "4", "--n-boot", "20", "--no-save", "--output", str(tmp_path / out),
            *cache,
        ])  # fmt: skip
        assert res.exit_code == 0, res.output

    scores = tmp_path / "scores.sqlite"
    run("first", "--cache", str(scores))
    everything = len(computed)
    assert everything == 20 + 24  # 4 contexts of USR-PC (5 systems) and of USR-TC (6 systems)
    deleted = drop_cached(scores, "distinct", 7)
    assert deleted == 7
    computed.clear()
    run("resumed", "--cache", str(scores))
    assert len(computed) == deleted
    computed.clear()
    run("fresh", "--no-cache")
    assert len(computed) == everything
    resumed, fresh = ([_untimed(json.loads(line)) for line in (tmp_path / d / "results.jsonl").open()]
                      for d in ("resumed", "fresh"))  # fmt: skip
    assert resumed == fresh and resumed[0]["model"] == "ensemble"
    rough = "warning: the CIs are rough: 20 resamples only, too few for 95% (40 at least)"  # flagged (it was not)
    assert rough in (tmp_path / "fresh" / "results.md").read_text()


def _untimed(value: Any) -> Any:
    """``value`` without its timings (``seconds``, ``fit_seconds``), at any depth."""
    if isinstance(value, dict):
        return {k: _untimed(v) for k, v in value.items() if not k.endswith("seconds")}
    return value


def test_json_prints_the_run_the_rows_and_the_saved_models(tmp_path: Path) -> None:
    """train had no --json (benchmark, meta, stress, score and judge run have it): the rows are results.jsonl's,
    the run is run.json's, and each saved model's card sha256 is that of its card.json."""
    import hashlib

    res = runner.invoke(app, ["train", "--model", "tfidf-lr", "--train", "usr-pc", "--test", "usr-tc", "--limit", "4",
                              "--n-boot", "20", "--json", "-o", str(tmp_path)])  # fmt: skip
    assert res.exit_code == 0, res.output
    printed = json.loads(res.stdout)
    assert printed["rows"] == [json.loads(x) for x in (tmp_path / "results.jsonl").read_text().splitlines()]
    assert printed["run"] == json.loads((tmp_path / "run.json").read_text())
    # the screen's warning under the table, which --json dropped: 20 resamples, fewer than 40 (rough_reason)
    assert printed["notes"][-1] == "warning: the CIs are rough: 20 resamples only, too few for 95% (40 at least)"
    card = tmp_path / "model-tfidf-lr" / "card.json"
    assert printed["models"] == {"tfidf-lr": {"path": str(card.parent),
                                              "card_sha256": hashlib.sha256(card.read_bytes()).hexdigest()}}


def test_train_takes_boot_as_meta_and_benchmark_do(tmp_path: Path) -> None:
    """meta and benchmark take --boot for --n-boot; train said "No such option: --boot"."""
    res = invoke("train", "--model", "tfidf-lr", "--train", "usr-pc", "--test", "usr-tc", "--limit", "4",
                 "--boot", "0", "--no-save", "--json", "-o", tmp_path)  # fmt: skip
    assert res.exit_code == 0, res.output
    assert all("spearman_ci" not in row for row in json.loads(res.stdout)["rows"])  # 0 resamples: no CI


def test_cis_of_three_test_contexts_are_flagged_rough_as_meta_flags_them(tmp_path: Path) -> None:
    """Three contexts drawn with replacement give C(5, 3) = 10 distinct resamples, however many are drawn: meta
    warned "rough CI", train showed the CIs of its three test contexts with no word."""
    import math

    out = tmp_path / "out"
    res = invoke("train", "--model", "tfidf-lr", "--train", "usr-pc", "--test", "usr-tc", "--limit", "3",
                 "--n-boot", "200", "--no-save", "-o", out)  # fmt: skip
    assert res.exit_code == 0, res.output
    why = f"3 contexts have {math.comb(5, 3)} distinct resamples only, too few for 95% (40 at least)"
    (row,) = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    assert row["rough_ci"] == why and row["spearman_ci"][0] is not None
    warning = f"warning: the CIs of tfidf-lr on test=usr-tc are rough: {why}"
    assert warning in " ".join(res.output.split()) and warning in (out / "results.md").read_text()


def test_baselines_with_folds_or_logo_is_refused(tmp_path: Path) -> None:
    """--baselines compares the models with every offline metric on the --test benchmarks; with --folds or --logo
    the run went on, wrote no metric row, and said nothing of it."""
    for split in (["--folds", "2"], ["--logo", "system"]):
        res = invoke("train", "--model", "tfidf-lr", "--train", "usr-pc", *split, "--baselines", "--limit", "4",
                     "--n-boot", "0", "--no-save", "-o", tmp_path / "out")  # fmt: skip
        refused(res, 'field "--baselines"', "--test")
        assert not (tmp_path / "out").exists()



def test_a_failed_write_leaves_the_earlier_results_whole(tmp_path: Path, full_disk_at: Any) -> None:
    """results.md on a full disk was one line, but results.jsonl was already replaced by this run's, beside the
    earlier run's results.md and run.json: now the three are written all or none."""
    out = tmp_path / "out"
    base = ("train", "--model", "tfidf-lr", "--train", "usr-pc", "--test", "usr-tc", "--n-boot", "0", "--no-save",
            "-o", out)  # fmt: skip
    assert invoke(*base, "--limit", "3").exit_code == 0
    before = {name: (out / name).read_bytes() for name in ("results.jsonl", "results.md", "run.json")}
    full_disk_at("results.md.")
    res = invoke(*base, "--limit", "4")
    refused(res, "results.md: cannot be written: No space left on device")
    assert {name: (out / name).read_bytes() for name in before} == before
    assert sorted(p.name for p in out.iterdir()) == sorted(before)


def test_a_training_target_of_one_value_is_refused(tmp_path: Path) -> None:
    """Every response of the table rated 3: a regression model was fitted on a constant target, saved and scored
    ("spearman undefined", with no word of why), as classification refuses a single class."""
    table = tmp_path / "flat.csv"
    table.write_text("context,response,rating\n" + "".join(f"Hi {i},Hello there friend {i},3\n" for i in range(12)))
    own = ["--path", table, "--response-col", "response", "--context-col", "context", "--rating-col", "rating",
           "--scale", "1-5"]  # fmt: skip
    out = tmp_path / "run"
    res = invoke("train", "--model", "tfidf-lr", *own, "--train", "flat", "--test", "usr-tc", "--limit", "12",
                 "--n-boot", "0", "-o", out)  # fmt: skip
    # rank targets: 12 tied ratings all take the mean rank, (6.5 - 1) / 11 = 0.5
    refused(res, 'field "--train": split "test=usr-tc": all 12 training examples have the target 0.5', "constant")
    assert not out.exists()
    res = invoke("train", "--model", "tfidf-lr", *own, "--train", "flat", "--folds", "2", "--n-boot", "0",
                 "--target-norm", "scale", "-o", out)  # fmt: skip
    refused(res, 'split "fold1/2": all 6 training examples have the target 0.5')  # (3 - 1) / (5 - 1)
    assert not out.exists()


def test_a_saved_ensemble_whose_feature_metric_changed_names_its_card(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A saved ensemble scored after its feature metric's signature changed (other parameters, another version)
    stopped with "feature metrics differ from training: length (other version or model)": no model, no file, no
    field, and not what differs."""
    from dialeval.metrics.lexical import Length

    out = tmp_path / "run"
    res = invoke("train", "--model", "ensemble", "--model-param", "ensemble.families=length", "--train", "usr-pc",
                 "--test", "usr-tc", "--limit", "3", "--n-boot", "0", "-o", out, "--no-cache")  # fmt: skip
    assert res.exit_code == 0, res.output
    card = out / "model-ensemble" / "card.json"
    trained = json.loads(card.read_text())["features"]["signatures"]["length"]
    monkeypatch.setattr(Length, "signature_extra", lambda self: {"unit": "characters"})
    now = Length().signature
    assert now != trained
    res = invoke("score", "-m", f"trained:{out / 'model-ensemble'}", "-b", "usr-tc", "--limit", "1",
                 "-o", tmp_path / "s.jsonl", "--no-cache")  # fmt: skip
    refused(res, f'{card}: field "features.signatures": the feature metrics differ from training: length (trained '
                 f'"{trained}", now "{now}")', "train the model again")  # fmt: skip
    assert not (tmp_path / "s.jsonl").exists()


def test_only_the_feature_mismatch_is_named_as_the_cards() -> None:
    """compute() names the card for the ensemble's feature-signature error alone: another error of the evaluator
    (a bad item, say) keeps what it named, rather than being blamed on card.json."""
    from types import SimpleNamespace

    from dialeval.errors import InputError
    from dialeval.metrics.base import MetricInput
    from dialeval.trained.metric import TrainedMetric

    def failing(field: str) -> TrainedMetric:
        def predict(_items: object) -> list[float]:
            raise InputError("went wrong", field=field)

        metric = type("Mine", (TrainedMetric,), {"name": "trained:mine", "folder": "/models/mine"})()
        metric.__dict__["loaded"] = SimpleNamespace(evaluator=SimpleNamespace(predict=predict))  # cached_property
        return metric

    with pytest.raises(InputError) as caught:
        failing("features.signatures").compute([MetricInput(response="hi")])
    assert str(caught.value.path) == "/models/mine/card.json"
    with pytest.raises(InputError) as caught:
        failing("response").compute([MetricInput(response="hi")])
    assert caught.value.path is None and caught.value.field == "response"


def test_a_feature_without_any_training_value_is_said_once_in_dialevals_words(tmp_path: Path, recwarn) -> None:
    """Predictive Engagement has no references, so f1 has no value in any training example: scikit-learn's imputer
    warned "Skipping features without any observed values: [1]" on every transform (each
    cross-validation fold, the refit, the test predictions). It is now one note naming word_f1, on screen and in
    results.md, and the row's fit records it."""
    out = tmp_path / "run"
    res = runner.invoke(app, [
        "train", "--model", "ensemble", "--model-param", "ensemble.families=length,f1", "--train",
        "predictive-engagement", "--test", "usr-tc", "--limit", "8", "--n-boot", "20", "--no-save", "--no-cache",
        "--output", str(out),
    ])  # fmt: skip
    assert res.exit_code == 0, res.output
    assert not [w for w in recwarn if "without any observed values" in str(w.message)]
    note = ("note: ensemble on test=usr-tc: no training example has a value of word_f1 (a metric that needs references "
            "has none on items without them), so the model leaves it out")
    assert " ".join(res.output.split()).count(note) == 1, res.output
    assert (out / "results.md").read_text().count(note) == 1
    row = json.loads((out / "results.jsonl").read_text().splitlines()[0])
    assert row["fit"]["unobserved"] == ["word_f1"]  # the f1 family's output


def test_train_refuses_to_replace_a_model_folder_that_holds_no_saved_model(tmp_path: Path) -> None:
    """train replaces OUTPUT/model-<kind> whole with the model it saves; a file of that name, or a folder of the
    user's own files with no card.json, was deleted with no word (the run said only "saved tfidf-lr to ..."). Both are
    now refused before any work, naming the path, and left as they were; a saved model there is replaced as before."""
    out = tmp_path / "run"
    out.mkdir()
    args = ["train", "--model", "tfidf-lr", "--train", "usr-pc", "--folds", "2", "--limit", "3", "--n-boot", "0",
            "-o", out]  # fmt: skip
    (out / "model-tfidf-lr").write_text("precious\n")
    refused(invoke(*args), f'{out / "model-tfidf-lr"}: field "--output": is a file, not a saved model')
    assert (out / "model-tfidf-lr").read_text() == "precious\n"
    (out / "model-tfidf-lr").unlink()
    (out / "model-tfidf-lr" / "notes").mkdir(parents=True)
    (out / "model-tfidf-lr" / "notes" / "todo.txt").write_text("keep me\n")
    refused(invoke(*args), f'{out / "model-tfidf-lr"}: field "--output": holds no saved model (no card.json)')
    assert (out / "model-tfidf-lr" / "notes" / "todo.txt").read_text() == "keep me\n"
    assert sorted(p.name for p in out.iterdir()) == ["model-tfidf-lr"]  # no result written
    (out / "model-tfidf-lr" / "notes" / "todo.txt").unlink()
    (out / "model-tfidf-lr" / "notes").rmdir()  # an empty folder holds nothing to lose: the model is saved in it
    res = invoke(*args)
    assert res.exit_code == 0, res.output
    assert (out / "model-tfidf-lr" / "card.json").is_file()
    again = invoke(*args)  # a saved model is replaced by the new one
    assert again.exit_code == 0, again.output
