"""Metric names and -p parameters -> configured families: did-you-mean, typed values, prefix plugins."""

from __future__ import annotations

from importlib.metadata import entry_points

import pytest

from dialeval.errors import InputError, UnknownNameError
from dialeval.metrics import METRICS
from dialeval.metrics.resolve import family, metric_params, parse_params, resolve_metrics


def test_prefixed_families_come_from_the_entry_point_group_not_from_the_resolver():
    names = {ep.name: ep.value for ep in entry_points(group="dialeval.metric_prefixes")}
    assert names["judge"] == "dialeval.judges" and names["trained"].startswith("dialeval.trained.metric:")
    assert family("judge:cpdscore-simple").name == "judge:cpdscore-simple"
    assert "judge:custom" in METRICS


def test_a_typo_gets_the_closest_name_and_an_unknown_prefix_is_a_plain_unknown_metric():
    with pytest.raises(UnknownNameError, match='did you mean "rouge"'):
        resolve_metrics(["rouje"])
    with pytest.raises(UnknownNameError, match='unknown metric "nope:x"'):
        family("nope:x")


def test_parameters_are_typed_and_unknown_keys_or_families_are_errors():
    fams, _ = resolve_metrics(["bleu", "embedding"])
    pairs = parse_params(["bleu.smoothing=method1", "embedding.model=all-minilm-l6-v2"])
    got = metric_params(fams, pairs, {"device": "cpu"})
    assert got["bleu"] == {"smoothing": "method1"}  # bleu has no device: the default is not forced on it
    assert got["embedding"]["device"] == "cpu"
    with pytest.raises(InputError, match='has no parameter "smoothng"'):
        metric_params(fams, parse_params(["bleu.smoothng=method1"]))
    with pytest.raises(InputError, match="no metric of this run has the parameter device"):
        metric_params(fams[:1], parse_params(["device=cpu"]))  # given with -p (not --device), it must be used
    with pytest.raises(UnknownNameError, match='did you mean "bleu"'):
        metric_params(fams, parse_params(["bleux.smoothing=method1"]))
