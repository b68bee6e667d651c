"""The trained evaluators: DiQAD's classical baselines on TF-IDF, and a feature ensemble over metric scores.

Every evaluator learns a target in [0, 1] (``task="regression"``) or the 0/1/2
label (``task="classification"``) and predicts a score per item: the regression
output, or the expected class / 2 of a classifier (so scores are comparable and
rankable either way), plus a 0/1/2 label.

=================  ========================================================================
``tfidf-nb``       TF-IDF (1-2 grams) + multinomial naive Bayes (always a classifier)
``tfidf-lr``       TF-IDF + ridge regression (numeric) or logistic regression (labels)
``xgboost``        TF-IDF + gradient-boosted trees (XGBoost; the ``trained`` extra)
``ensemble``       every offline metric's scores -> impute, standardise, ridge / logistic
                   regression, its penalty chosen by 5-fold cross-validation over contexts
``ensemble-xgb``   every offline metric's scores -> gradient-boosted trees (XGBoost)
``minilm``         the packaged all-MiniLM-L6-v2 fine-tuned with a head (:mod:`.minilm`)
=================  ========================================================================

Example:
    >>> from dialeval.metrics.base import MetricInput
    >>> from dialeval.trained.data import Example
    >>> ex = [Example(str(i), "b", f"c{i}", "d", "s", "b", t, MetricInput(t), 0.0, y, int(2 * y), )
    ...       for i, (t, y) in enumerate([("response: great answer", 1.0), ("response: awful junk", 0.0)] * 4)]
    >>> m = make_evaluator("tfidf-lr", min_df=1)
    >>> _ = m.fit(ex)
    >>> s = m.predict([MetricInput("great"), MetricInput("awful")])
    >>> s[0] > s[1]
    True
"""

from __future__ import annotations

import contextlib
import importlib.util
import warnings
from abc import abstractmethod
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, ClassVar

from dialeval.errors import InputError, MissingExtraError, UnknownNameError
from dialeval.metrics.base import MetricInput
from dialeval.trained.data import Example
from dialeval.trained.evaluator import EVALUATORS, Bound, Evaluator, finite_scores
from dialeval.trained.features import compute_features, feature_families, feature_matrix, format_input
from dialeval.words import counted


def require_xgboost() -> None:
    """Raise :class:`MissingExtraError` unless xgboost is installed."""
    if importlib.util.find_spec("xgboost") is None:
        raise MissingExtraError("xgboost", extra="trained")


def _scores_from(model: Any, x: Any, task: str, kind: str) -> list[float]:
    if task == "classification":
        proba = model.predict_proba(x)
        classes = [float(c) for c in model.classes_]
        scores = [float(sum(p * c for p, c in zip(row, classes, strict=True)) / 2.0) for row in proba]
    else:
        scores = [float(v) for v in model.predict(x)]
    return finite_scores(scores, kind)


class SklearnEvaluator(Evaluator):
    """An evaluator whose fitted state is one scikit-learn-compatible estimator, saved with joblib.

    Only load model folders you trust: joblib files can run code when loaded.
    """

    def __init__(self, task: str = "regression", seed: int = 0, **params: Any) -> None:
        super().__init__(task, seed, **params)
        self.model: Any = None

    @abstractmethod
    def build(self) -> Any:
        """Return the unfitted estimator."""

    def inputs(self, items: Sequence[MetricInput]) -> Any:
        """Return what the estimator reads for ``items`` (texts by default)."""
        return [format_input(i.context, i.response) for i in items]

    def _fit(self, examples: Sequence[Example]) -> None:
        self.model = self.build()
        self.model.fit(self.inputs([e.item for e in examples]), self.y(examples))

    def predict(self, items: Sequence[MetricInput]) -> list[float]:
        """Return one score per item."""
        if self.model is None:
            raise RuntimeError(f"{self.kind} is not fitted")
        if not items:
            return []
        return _scores_from(self.model, self.inputs(items), self.task, self.kind)

    def save(self, folder: Path) -> list[str]:
        """Write ``model.joblib``."""
        import joblib  # type: ignore[import-untyped]

        joblib.dump(self.model, folder / "model.joblib")
        return ["model.joblib"]

    @classmethod
    def load(cls, folder: Path, card: dict[str, Any]) -> Evaluator:
        """Read ``model.joblib`` back.

        Raises:
            InputError: The card's task is not the saved model's (its output was read the other way).
        """
        import joblib  # type: ignore[import-untyped]
        from sklearn.base import is_classifier

        ev = cls(card["task"], card.get("seed", 0), **card["params"])
        ev.model = joblib.load(folder / "model.joblib")
        if is_classifier(ev.model) != (card["task"] == "classification"):  # not ev.task: tfidf-nb sets its own
            model = "a classifier" if is_classifier(ev.model) else "a regression model"
            raise InputError(f'is "{card["task"]}", but the saved model is {model}: train the model again '
                             "(dialeval train)", field="task")
        return ev


def _tfidf(p: dict[str, Any]) -> Any:
    from sklearn.feature_extraction.text import TfidfVectorizer

    return TfidfVectorizer(ngram_range=(1, 2), min_df=p["min_df"], sublinear_tf=True, max_features=p["max_features"])


class TfidfEvaluator(SklearnEvaluator):
    """A pipeline of TF-IDF and a head: the vectoriser is fitted alone, so only its errors name the vocabulary."""

    def _fit(self, examples: Sequence[Example]) -> None:
        self.model = self.build()
        texts = self.inputs([e.item for e in examples])
        try:
            x = self.model[:-1].fit_transform(texts)  # the slice shares the pipeline's fitted vectoriser
        except ValueError as exc:  # scikit-learn's TF-IDF on too few texts: a traceback ("max_df corresponds to ...")
            min_df = self.params["min_df"]
            lower = f"; or --model-param {self.kind}.min_df=1" if min_df > 1 else ""
            raise InputError(f"TF-IDF cannot learn a vocabulary from {counted(len(examples), 'training text')} with "
                             f"min_df={min_df} (scikit-learn: {exc}): train on more{lower}", field="--train") from None
        self.model[-1].fit(x, self.y(examples))


class TfidfNB(TfidfEvaluator):
    """TF-IDF + multinomial naive Bayes (a classifier of the 0/1/2 label)."""

    kind = "tfidf-nb"
    classifier_only = True
    defaults: ClassVar[dict[str, Any]] = {"min_df": 2, "max_features": 50000, "alpha": 1.0}
    bounds: ClassVar[dict[str, Bound]] = {"min_df": Bound(1), "max_features": Bound(1), "alpha": Bound(0, strict=True)}

    def build(self) -> Any:
        """TF-IDF -> MultinomialNB."""
        from sklearn.naive_bayes import MultinomialNB
        from sklearn.pipeline import make_pipeline

        return make_pipeline(_tfidf(self.params), MultinomialNB(alpha=self.params["alpha"]))


class TfidfLR(TfidfEvaluator):
    """TF-IDF + ridge regression (numeric) or logistic regression (labels)."""

    kind = "tfidf-lr"
    defaults: ClassVar[dict[str, Any]] = {"min_df": 2, "max_features": 50000, "alpha": 1.0, "C": 1.0}
    bounds: ClassVar[dict[str, Bound]] = {**TfidfNB.bounds, "C": Bound(0, strict=True)}

    def build(self) -> Any:
        """TF-IDF -> Ridge or LogisticRegression."""
        from sklearn.linear_model import LogisticRegression, Ridge
        from sklearn.pipeline import make_pipeline

        head = (
            LogisticRegression(C=self.params["C"], max_iter=2000)
            if self.task == "classification"
            else Ridge(alpha=self.params["alpha"])
        )
        return make_pipeline(_tfidf(self.params), head)


def _xgb(task: str, p: dict[str, Any], seed: int) -> Any:
    require_xgboost()
    import xgboost

    kw = {
        "n_estimators": p["n_estimators"], "max_depth": p["max_depth"], "learning_rate": p["learning_rate"],
        "subsample": 0.8, "colsample_bytree": p["colsample_bytree"], "random_state": seed, "n_jobs": p["n_jobs"],
        "tree_method": "hist",
    }
    return xgboost.XGBClassifier(**kw) if task == "classification" else xgboost.XGBRegressor(**kw)


_XGB_DEFAULTS: dict[str, Any] = {
    "n_estimators": 300, "max_depth": 4, "learning_rate": 0.05, "colsample_bytree": 0.5, "n_jobs": 2,
}
_XGB_BOUNDS = {
    "n_estimators": Bound(1), "max_depth": Bound(0), "learning_rate": Bound(0), "colsample_bytree": Bound(0, 1, True),
    "n_jobs": Bound(1),
}


class TfidfXGB(TfidfEvaluator):
    """TF-IDF + gradient-boosted trees (XGBoost)."""

    kind = "xgboost"
    defaults: ClassVar[dict[str, Any]] = {"min_df": 2, "max_features": 20000, **_XGB_DEFAULTS}
    bounds: ClassVar[dict[str, Bound]] = {"min_df": Bound(1), "max_features": Bound(1), **_XGB_BOUNDS}

    def build(self) -> Any:
        """TF-IDF -> XGBRegressor or XGBClassifier."""
        from sklearn.pipeline import make_pipeline

        return make_pipeline(_tfidf(self.params), _xgb(self.task, self.params, self.seed))

    def _fit(self, examples: Sequence[Example]) -> None:
        require_xgboost()
        super()._fit(examples)


@contextlib.contextmanager
def _unobserved_quiet() -> Iterator[None]:
    """Silence scikit-learn's "Skipping features without any observed values" within the block.

    Its imputer said it on every transform (each cross-validation fold, the refit, each prediction), naming the
    column's index; :meth:`Ensemble._fit` records the features by name in ``info["unobserved"]`` instead.
    """
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "Skipping features without any observed values", UserWarning)
        yield


class Ensemble(SklearnEvaluator):
    """A regularised linear model over every offline metric's scores.

    Missing values (a reference-based metric on an item without references) are
    imputed with the training mean plus a missing-indicator column; features are
    standardised; the ridge penalty (or logistic C) is chosen by grouped 5-fold
    cross-validation over training contexts.
    """

    kind = "ensemble"
    defaults: ClassVar[dict[str, Any]] = {"families": ""}

    def __init__(self, task: str = "regression", seed: int = 0, **params: Any) -> None:
        super().__init__(task, seed, **params)
        self.columns: list[str] = []
        self.signatures: dict[str, str] = {}

    def _families(self) -> list[Any]:
        names = [n for n in str(self.params["families"] or "").split(",") if n]
        return feature_families(names or None)

    def check(self) -> None:
        """Refuse a metric family in ``families`` that is unknown or cannot run here."""
        try:
            self._families()
        except InputError as exc:  # an unknown name too (UnknownNameError is one)
            raise InputError(f"{self.kind}.families: {exc.message}", field="--model-param") from None

    def inputs(self, items: Sequence[MetricInput]) -> Any:
        """Return the metric-score matrix (NaN where a metric gives no value)."""
        import numpy as np

        fams = self._families()
        rows, sigs = compute_features(items, fams)  # through the run's score cache (train --cache)
        outputs = [o for f in fams for o in f.outputs]
        if not self.columns:
            self.columns = outputs
            self.signatures = sigs
        elif sigs != self.signatures:
            changed = sorted(k for k in set(sigs) | set(self.signatures) if sigs.get(k) != self.signatures.get(k))
            said = "; ".join(f'{k} (trained "{self.signatures.get(k)}", now "{sigs.get(k)}")' for k in changed)
            raise InputError(f"the feature metrics differ from training: {said}: another version or other parameters "
                             "of the metric; train the model again (dialeval train) to score with these",
                             field="features.signatures")  # fmt: skip
        elif self.columns != outputs:  # a card edited by hand: the matrix was read in its order
            raise InputError(f"{', '.join(self.columns)} are not the outputs of the feature metrics in order "
                             f"({', '.join(outputs)}): train the model again (dialeval train)",
                             field="features.columns")
        return np.asarray(feature_matrix(rows, self.columns), dtype=float)

    def build(self) -> Any:
        """Impute + indicator, standardise, then the regularised linear head."""
        from sklearn.impute import SimpleImputer
        from sklearn.linear_model import LogisticRegression, Ridge
        from sklearn.pipeline import make_pipeline
        from sklearn.preprocessing import StandardScaler

        head = LogisticRegression(max_iter=5000) if self.task == "classification" else Ridge()
        return make_pipeline(SimpleImputer(add_indicator=True), StandardScaler(), head)

    def _fit(self, examples: Sequence[Example]) -> None:
        import numpy as np
        from sklearn.model_selection import GridSearchCV, GroupKFold

        x = self.inputs([e.item for e in examples])
        groups = [e.group_context for e in examples]
        grid = (
            {"logisticregression__C": list(np.logspace(-3, 2, 11))}
            if self.task == "classification"
            else {"ridge__alpha": list(np.logspace(-2, 4, 13))}
        )
        n_splits = min(5, len(set(groups)))
        if n_splits < 2:  # scikit-learn's GroupKFold: a ValueError traceback
            raise InputError(f"{self.kind} chooses its penalty by cross-validation over contexts, which needs 2 "
                             f"training contexts or more; got {n_splits}: train on more", field="--train")
        unobserved = [c for c, empty in zip(self.columns, np.isnan(x).all(axis=0), strict=True) if empty]
        if unobserved:  # the imputer leaves them out; the train command says so once (trained.cli._notes)
            self.info["unobserved"] = unobserved
        search = GridSearchCV(self.build(), grid, cv=GroupKFold(n_splits=n_splits), scoring=self._scoring())
        with _unobserved_quiet():
            search.fit(x, self.y(examples), groups=groups)
        self.model = search.best_estimator_
        self.info["penalty"] = {k.split("__")[1]: float(v) for k, v in search.best_params_.items()}

    def _scoring(self) -> str:
        return "neg_log_loss" if self.task == "classification" else "neg_mean_squared_error"

    def predict(self, items: Sequence[MetricInput]) -> list[float]:
        """Return one score per item (a feature without training values, left out, is said once, at the fit)."""
        with _unobserved_quiet():
            return super().predict(items)

    def feature_signatures(self) -> dict[str, str]:
        """Return ``{family: signature}`` of the metrics the model reads."""
        return dict(self.signatures)

    def save(self, folder: Path) -> list[str]:
        """Write ``model.joblib`` (the columns and feature signatures go into the card)."""
        return super().save(folder)

    @classmethod
    def load(cls, folder: Path, card: dict[str, Any]) -> Evaluator:
        """Read the model and restore the feature columns from the card.

        Raises:
            InputError: A feature family in the card's params that is unknown or cannot run here.
        """
        ev = super().load(folder, card)
        assert isinstance(ev, Ensemble)
        ev.check()
        ev.columns = list(card["features"]["columns"])
        ev.signatures = dict(card["features"]["signatures"])
        return ev


class EnsembleXGB(Ensemble):
    """Gradient-boosted trees (XGBoost) over every offline metric's scores (NaN handled natively)."""

    kind = "ensemble-xgb"
    defaults: ClassVar[dict[str, Any]] = {"families": "", **_XGB_DEFAULTS, "colsample_bytree": 0.8}
    bounds: ClassVar[dict[str, Bound]] = _XGB_BOUNDS

    def build(self) -> Any:
        """XGBRegressor or XGBClassifier."""
        return _xgb(self.task, self.params, self.seed)

    def _fit(self, examples: Sequence[Example]) -> None:
        SklearnEvaluator._fit(self, examples)  # fit as is: no penalty to choose, unlike the linear ensemble


for _cls in (TfidfNB, TfidfLR, TfidfXGB, Ensemble, EnsembleXGB):
    EVALUATORS.register(_cls.kind, _cls)


def evaluator_kinds() -> dict[str, type[Evaluator]]:
    """Return ``{kind: class}`` of every registered evaluator (``minilm`` imports torch lazily).

    Example:
        >>> sorted(evaluator_kinds())
        ['ensemble', 'ensemble-xgb', 'minilm', 'tfidf-lr', 'tfidf-nb', 'xgboost']
    """
    import dialeval.trained.minilm  # noqa: F401  (registers "minilm")

    return {name: EVALUATORS.get(name) for name in EVALUATORS.names()}


def make_evaluator(kind: str, task: str = "regression", seed: int = 0, **params: Any) -> Evaluator:
    """Return an unfitted evaluator of ``kind`` (see the module table).

    Raises:
        InputError: An unknown kind (with the closest name) or parameter.
    """
    kinds = evaluator_kinds()
    try:
        cls = EVALUATORS.get(kind)
    except UnknownNameError as exc:
        raise InputError(str(exc).replace("unknown evaluator", "unknown model"), field="--model") from None
    assert cls is kinds[kind]
    return cls(task, seed, **params)
