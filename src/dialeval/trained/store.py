"""Saving and loading a trained evaluator: a folder with the model files and ``card.json``.

The model card names the evaluator, its task and parameters, the training data
(benchmarks, dimensions, target normalisation, the sha256 of the examples), the
features (metric signatures for the ensembles), the evaluation results, the
dialeval version, and the sha256 of every model file. Files are written into a
temporary folder that is renamed into place, so a crash never leaves a half-saved
model; loading checks every file's hash against the card. The card's own sha256
identifies the model (it is in the metric signature of ``trained:PATH``).

Only load model folders you trust: the scikit-learn models are joblib files,
which can run code when loaded.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dialeval import __version__
from dialeval.atomic import WriteError, temp_folder
from dialeval.errors import InputError
from dialeval.jsonl import DUPLICATE_KEY, DuplicateKeyError, json_problem, loads, nonfinite_field, read_text
from dialeval.signature import file_sha256
from dialeval.trained.evaluator import Evaluator
from dialeval.trained.models import Ensemble, evaluator_kinds

CARD = "card.json"
CARD_FORMAT = 1
#: The card's field that holds what a ``train`` option gave, for an error a saved model's card raises on load.
_CARD_FIELDS = {"--task": "task", "--model-param": "params"}


@dataclass(frozen=True)
class Loaded:
    """A loaded evaluator with its card and the card's sha256."""

    evaluator: Evaluator
    card: dict[str, Any]
    card_sha256: str
    path: Path


def build_card(ev: Evaluator, training: dict[str, Any], results: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """Return the card of a fitted evaluator (``files`` is filled in by :func:`save`)."""
    card: dict[str, Any] = {
        "format": CARD_FORMAT,
        "dialeval_version": __version__,
        "kind": ev.kind,
        "task": ev.task,
        "seed": ev.seed,
        "params": dict(ev.params),
        "training": training,
        "fit": ev.info,
        "results": results or [],
    }
    if isinstance(ev, Ensemble):
        card["features"] = {"columns": ev.columns, "signatures": ev.feature_signatures()}
    else:
        card["features"] = {"input": "question: ... response: ... (DiQAD format)"}
    return card


def save(ev: Evaluator, folder: str | Path, card: dict[str, Any]) -> str:
    """Write the model and its card into ``folder`` (replacing it atomically); return the card's sha256."""
    target = Path(folder)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = temp_folder(target.parent, f".{target.name}.")  # mkdtemp's 0700 was the saved model's mode
    try:
        names = ev.save(tmp)
        card = {**card, "files": {n: file_sha256(tmp / n) for n in names}}
        data = json.dumps(card, indent=2, ensure_ascii=False, sort_keys=True) + "\n"
        (tmp / CARD).write_text(data, encoding="utf-8")
        if target.exists():
            old = Path(tempfile.mkdtemp(prefix=f".{target.name}.old.", dir=target.parent))
            os.replace(target, old / "x")
            os.replace(tmp, target)
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.replace(tmp, target)
    except BaseException as exc:
        shutil.rmtree(tmp, ignore_errors=True)
        if isinstance(exc, OSError) and not isinstance(exc, WriteError):  # a full disk was a traceback of train
            raise WriteError.of(target, exc) from None
        raise
    return file_sha256(target / CARD)


def read_card(folder: str | Path) -> tuple[dict[str, Any], str]:
    """Return the card of a saved model and its sha256, checking it is readable and complete.

    Raises:
        InputError: No folder, no card, a card that is not strict JSON (a key given twice, NaN) or lacks fields.
    """
    path = Path(folder).expanduser() / CARD
    if path.parent.is_file():  # "no such model folder" of a path that exists
        raise InputError("a file, not a model folder: give the folder that holds card.json", path=path.parent)
    if not path.parent.is_dir():
        raise InputError("no such model folder", path=path.parent)
    if not path.is_file():
        raise InputError("not a trained-evaluator folder (no card.json)", path=path.parent)
    _check_inside(path.parent, CARD)
    try:
        card = loads(read_text(path))  # bytes that are not UTF-8: an error naming the line, as for every file
    except json.JSONDecodeError as exc:  # the file, line and column, as every JSON file's error names them
        raise InputError(f"model card is not valid JSON ({json_problem(exc)})", path=path,
                         line=exc.lineno) from None
    except DuplicateKeyError as exc:
        raise InputError(DUPLICATE_KEY, path=path, line=exc.line, field=exc.field) from None
    if not isinstance(card, dict):
        raise InputError("model card is not a JSON object", path=path)
    if (bad := nonfinite_field(card)) is not None:  # NaN, Infinity: not JSON, and no seed or parameter
        raise InputError(f"{json.dumps(bad[1])} is not a finite number", path=path, field=bad[0])
    missing = [k for k in ("format", "kind", "task", "params", "files", "training") if k not in card]
    if missing:
        raise InputError(f"model card lacks {', '.join(missing)}", path=path)
    if card["format"] != CARD_FORMAT:  # repr: a format of "1" read "format 1 is not 1"
        raise InputError(f"model card format {card['format']!r} is not {CARD_FORMAT}", path=path)
    _check_shape(card, path)
    return card, file_sha256(path)


def _check_inside(root: Path, name: str) -> None:
    """Refuse a file of the model folder that is a symbolic link (or under one) to a file outside the folder.

    It was followed and loaded: the folder no longer held the model its card names, and joblib runs the code of
    what it reads.
    """
    target = (root / name).resolve()
    if not target.is_relative_to(root.resolve()):
        raise InputError(f'model file "{name}" is a link to {target}, outside the model folder: put the file itself '
                         "in the folder", path=root)  # fmt: skip


def _json_type(value: Any) -> str:
    """Return the JSON type of ``value`` in words.

    Example:
        >>> _json_type([1]), _json_type({}), _json_type("x"), _json_type(None), _json_type(True), _json_type(2.5)
        ('a list', 'a JSON object', 'a string', 'null', 'true or false', 'a number')
    """
    if isinstance(value, bool):
        return "true or false"
    words: dict[type, str] = {list: "a list", dict: "a JSON object", str: "a string", type(None): "null"}
    return next((w for t, w in words.items() if isinstance(value, t)), "a number")


def _check_shape(card: dict[str, Any], path: Path) -> None:
    """Refuse a card whose fields are of the wrong JSON type (a card edited by hand was a traceback on load).

    Raises:
        InputError: Naming the card and the field.
    """
    wanted = {"kind": str, "task": str, "params": dict, "files": dict, "training": dict, "features": dict}
    for key, kind in wanted.items():
        if key in card and not isinstance(card[key], kind):
            what = {str: "a string", dict: "a JSON object"}[kind] + (" of file: sha256" if key == "files" else "")
            raise InputError(f"is {_json_type(card[key])}, not {what}", path=path, field=key)
    for name, sha in card["files"].items():
        if not isinstance(sha, str):
            raise InputError(f'the sha256 of "{name}" is {json.dumps(sha)}, not a string', path=path, field="files")
        if Path(name).is_absolute() or ".." in Path(name).parts:  # it was hashed, and could be loaded
            raise InputError(f'"{name}" is not a path inside the model folder (its files are named as paths inside '
                             "it)", path=path, field="files")
    if not card["files"]:  # the model's files were loaded unchecked
        raise InputError("lists no file, so no model file is checked", path=path, field="files")
    if issubclass(evaluator_kinds().get(card["kind"], Evaluator), Ensemble):  # its load reads the feature columns
        features = card.get("features") or {}
        columns, signatures = features.get("columns"), features.get("signatures")
        if not isinstance(columns, list) or not all(isinstance(c, str) for c in columns):
            got = "missing" if columns is None else _json_type(columns)
            raise InputError(f"is {got}, not a list of strings", path=path, field="features.columns")
        if not isinstance(signatures, dict) or not all(isinstance(v, str) for v in signatures.values()):
            got = "missing" if signatures is None else _json_type(signatures)
            raise InputError(f"is {got}, not a JSON object of metric: signature", path=path,
                             field="features.signatures")  # fmt: skip


def load(folder: str | Path) -> Loaded:
    """Load a saved evaluator, checking every file's sha256 against the card.

    Raises:
        InputError: A missing or corrupt card or model file, or an unknown kind.
    """
    root = Path(folder).expanduser()
    card, sha = read_card(root)
    present = sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file())
    hidden = re.compile(r"(^|/)\.")  # .DS_Store, .ipynb_checkpoints/: no loader reads them
    if unnamed := [n for n in present if n != CARD and n not in card["files"] and not hidden.search(n)]:
        raise InputError(f'model file "{unnamed[0]}" is not named in the card\'s files, so its sha256 is not checked: '
                         "train the model again, or remove the file", path=root)
    for name, want in card["files"].items():
        _check_inside(root, name)
        f = root / name
        if not f.is_file():
            raise InputError(f'model file "{name}" named in the card is missing', path=root)
        if file_sha256(f) != want:
            raise InputError(f'model file "{name}" does not match its sha256 in the card (corrupt?)', path=root)
    kinds = evaluator_kinds()
    if card["kind"] not in kinds:
        raise InputError(f'unknown evaluator kind "{card["kind"]}" in the card', path=root / CARD)
    try:
        ev = kinds[card["kind"]].load(root, card)
    except InputError as exc:  # it named --task or --model-param, options of train, and no file
        field = _CARD_FIELDS.get(exc.field or "", exc.field)
        raise InputError(exc.message, path=root / CARD, field=field) from None
    except OSError as exc:  # a model file the card does not name, gone: the loader's traceback
        raise InputError(f"cannot read the saved model: {exc.strerror or exc}",
                         path=exc.filename or root) from None  # fmt: skip
    return Loaded(ev, card, sha, root)
