"""Loading a views folder (``load_views``) refuses a broken ``heads.json`` with one error naming its field."""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import pytest

pytest.importorskip("torch")
pytest.importorskip("safetensors")

from dialeval.errors import InputError
from dialeval.metrics.quality import BUNDLED
from dialeval.metrics.quality.crossenc import load_views
from dialeval.models.loading import DEFAULT_ENCODER, resolve_encoder_dir


def views_with(tmp_path: Path, **changes: object) -> Path:
    """Return a copy of the shipped views folder whose heads.json has ``changes``."""
    folder = tmp_path / "views"
    shutil.copytree(BUNDLED / "views", folder)
    head = json.loads((folder / "heads.json").read_text())
    (folder / "heads.json").write_text(json.dumps(head | changes))
    return folder


def refusal(folder: Path) -> str:
    with pytest.raises(InputError) as caught:
        load_views(str(folder), str(resolve_encoder_dir(DEFAULT_ENCODER)))
    return str(caught.value)


def test_a_weight_or_bias_that_is_not_finite_or_a_zero_lora_rank_is_one_error(tmp_path):
    """A NaN weight or an infinite bias loaded and made every view NaN (each score then unscored, nothing said);
    ``lora_r`` 0 was a ZeroDivisionError traceback (the adapter's scale is lora_alpha / lora_r), "x" a ValueError.
    The wording is the quality heads' (:meth:`LogisticHead.from_json`)."""
    head = json.loads((BUNDLED / "views" / "heads.json").read_text())
    weight = [list(row) for row in head["weight"]]
    weight[1][5] = math.nan
    for n, (change, said) in enumerate((
        ({"weight": weight}, 'field "weight": must be finite numbers, got nan at index 1, 5'),
        ({"bias": [0.0, 0.0, math.inf]}, 'field "bias": must be finite numbers, got inf at index 2'),
        ({"lora_r": 0}, 'field "lora_r": must be a number above 0, got 0'),
        ({"lora_alpha": "x"}, "field \"lora_alpha\": must be a finite number, got 'x'"),
        ({"weight": [1.0, 2.0, 3.0]}, 'field "weight": must be one row per view (3 rows), got 1 dimension'),
        ({"bias": [0.0, 0.0]}, 'field "bias": must be one number per view (3), got 2'),
        ({"weight": [[0.1], [0.2], [0.3]]}, 'field "weight": must be 3 rows of 768 numbers (the '
                                            "encoder's width), got 3 rows of 1"),  # torch's copy_ broadcast it
    )):
        folder = views_with(tmp_path / str(n), **change)
        assert refusal(folder) == f"{folder / 'heads.json'}: {said}"


def test_a_truncated_adapter_is_one_error_naming_the_folder(tmp_path):
    """A cut-off adapter.safetensors was safetensors' SafetensorError traceback ("invalid header length")."""
    folder = views_with(tmp_path)
    adapter = folder / "adapter.safetensors"
    adapter.write_bytes(adapter.read_bytes()[:1000])
    assert refusal(folder).startswith(f"{folder}: not a trained views folder (Error while deserializing header")


def test_a_heads_json_of_the_wrong_types_is_one_error_naming_the_field(tmp_path):
    """heads.json as a list was an AttributeError traceback, ``max_len`` "x" a ValueError one, ``layers`` "x" was
    blamed on the encoder ("cannot be loaded"), and ``views`` "abc" loaded as three views named a, b and c."""
    cases = (
        ({"views": "abc"}, 'field "views": must be a list of view names, got \'abc\''),
        ({"max_len": "x"}, "field \"max_len\": must be a whole number above 0, got 'x'"),
        ({"layers": "x"}, "field \"layers\": must be a whole number above 0, got 'x'"),
        ({"max_response": 0}, 'field "max_response": must be a whole number above 0, got 0'),
    )
    for n, (change, said) in enumerate(cases):
        folder = views_with(tmp_path / str(n), **change)
        assert refusal(folder) == f"{folder / 'heads.json'}: {said}"
    (folder / "heads.json").write_text("[1, 2]")
    assert refusal(folder) == f"{folder / 'heads.json'}: must be a JSON object, got a list"
