"""Parameter rules declared on config fields: choices, bounds, templates, and no NaN or infinite float anywhere."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import pytest

from dialeval.errors import InputError
from dialeval.metrics.base import Metric, MetricInput, MetricValues
from dialeval.metrics.rules import check_config, rule, template_problem
from dialeval.signature import NOT_IN_SIGNATURE, make_signature

OFFERED = ["a", "b"]  # read by a rule at check time, as sacrebleu's lists are


def _layers(config: Any) -> int | None:
    return None if config.model == "unknown" else 4


@dataclass(frozen=True)
class ToyConfig:
    tok: str = field(default="a", metadata=rule(choices=("a", "b")))
    offered: str = field(default="a", metadata=rule(choices=lambda: OFFERED))
    turns: int = field(default=1, metadata=rule(minimum=0, note="0 = all turns"))
    layer: int = field(default=2, metadata=rule(minimum=0, maximum=_layers))
    model: str = "known"
    template: str = field(default="<{context}>", metadata=rule(placeholders=("context",)))
    alpha: float = 0.5
    limit: float = float("inf")
    timeout: float = field(default=1.0, metadata={**NOT_IN_SIGNATURE, **rule(minimum=0.5)})


class Toy(Metric):
    name = "toy"
    outputs = ("toy",)
    Config = ToyConfig

    def compute(self, items: Sequence[MetricInput]) -> MetricValues:
        return {"toy": [1.0 for _ in items]}


@pytest.mark.parametrize(
    ("given", "message"),
    [
        ({"tok": "c"}, "toy.tok='c': not one of a, b"),
        ({"tok": "A"}, "toy.tok='A': not one of a, b; did you mean \"a\"?"),
        ({"offered": "c"}, "toy.offered='c': not one of a, b"),
        ({"turns": -5}, "toy.turns=-5: must be at least 0 (0 = all turns)"),
        ({"layer": 5}, "toy.layer=5: must be between 0 and 4"),
        ({"layer": -1}, "toy.layer=-1: must be between 0 and 4"),
        ({"turns": "two"}, "toy.turns='two': expected a number, found str"),
        ({"template": "nobraces"}, "toy.template='nobraces': has no {context} placeholder"),
        ({"alpha": float("nan")}, "toy.alpha=nan: not a finite number"),
        ({"alpha": float("inf")}, "toy.alpha=inf: not a finite number"),
        ({"alpha": float("-inf")}, "toy.alpha=-inf: not a finite number"),
        ({"timeout": 0.1}, "toy.timeout=0.1: must be at least 0.5"),
    ],
)
def test_a_value_its_rule_refuses_is_one_input_error_naming_the_parameter(given: dict[str, Any], message: str) -> None:
    with pytest.raises(InputError) as err:
        Toy(**given)
    assert err.value.field == "--param"
    assert err.value.message.startswith(message), err.value.message
    assert "\n" not in str(err.value)


def test_values_the_rules_allow_build_the_metric_and_show_in_its_signature() -> None:
    toy = Toy(tok="b", turns=0, layer=4, template="{{x}} {context}", alpha=0.0, timeout=0.5)
    assert "tok:b" in toy.signature and "turns:0" in toy.signature and "layer:4" in toy.signature
    assert Toy(model="unknown", layer=99).config.layer == 99  # the top is unknown here: only the minimum holds
    assert Toy().config.limit == float("inf")  # a field whose default is not finite may stay so


def test_choices_given_as_a_function_are_read_when_checked(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(InputError, match="not one of a, b"):
        Toy(offered="c")
    monkeypatch.setitem(globals(), "OFFERED", ["a", "b", "c"])
    assert Toy(offered="c").config.offered == "c"


def test_a_config_without_rules_is_checked_only_for_finite_floats() -> None:
    @dataclass(frozen=True)
    class Plain:
        n: int = -3
        x: float = 1.0

    check_config("plain", Plain())  # no rule: any int
    with pytest.raises(InputError, match=r"plain\.x=nan: not a finite number"):
        check_config("plain", Plain(x=float("nan")))
    assert make_signature("plain", Plain()).startswith("plain|n:-3|x:1.0|")


@pytest.mark.parametrize(
    ("template", "problem"),
    [
        ("###Speaker: {context} ###Response:", None),
        ("{context}{context}", None),
        ("literal {{braces}} {context}", None),
        ("{context:>5}", None),
        ("nobraces", "has no {context} placeholder"),
        ("{{context}}", "has no {context} placeholder"),
        ("{context} {speaker}", "unknown placeholder {speaker}"),
        ("{} {context}", "unknown placeholder {}"),
        ("{context.upper}", "unknown placeholder {context.upper}"),
        ("{context} {", "not a valid template"),
        ("{context} }", "not a valid template"),
        ("{context!z}", "not a valid template"),
    ],
)
def test_a_template_must_use_its_placeholders_and_no_other(template: str, problem: str | None) -> None:
    found = template_problem(template, ("context",))
    if problem is None:
        assert found is None
        template.format(context="hi")  # what the metric will do with it
    else:
        assert found is not None and found.startswith(problem), found


def test_a_device_torch_cannot_use_is_one_error_naming_the_metrics_parameter():
    """A misspelt device fails when the metric is built, naming the metric's parameter."""
    from dialeval.metrics.resolve import build_metric

    with pytest.raises(InputError) as caught:
        build_metric("embedding", {"device": "gpu"})
    assert caught.value.field == "--param"
    assert caught.value.message == 'embedding.device="gpu" is not a device; use cpu, cuda, cuda:N, mps or auto'
    assert build_metric("embedding", {"device": "cpu"}).config.device == "cpu"
