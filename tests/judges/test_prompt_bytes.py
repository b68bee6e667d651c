"""The prompt sent for each protocol stays byte-identical: structure changes how answers are read, not what is asked.

The sha256 values were recorded from the rendered messages of every built-in protocol on
the fixed item below, before structured answers and score distributions were added
(commit 460da9f); a change to a template, to ``item_variables`` or to the message
rendering changes them.
"""

from __future__ import annotations

import hashlib
import json

import pytest

from dialeval.judges import load_protocol, protocol_names
from dialeval.metrics.base import MetricInput
from dialeval.schema import Turn

ITEM = MetricInput(
    response="Yes, I love Miles Davis.",
    context=(Turn(speaker="A", text="Hi!"), Turn(speaker="B", text="Hello."), Turn(speaker="A", text="Like jazz?")),
    references=("I do, mostly bebop.",),
    knowledge=("Miles Davis was a jazz trumpeter.",),
)
#: Filled in by the two-step protocol's code (the step-1 scores and the system turns).
DIALOGUE_EXTRA = {
    "turn_scores": "Turn1 Score - 3\nTurn2 Score - 4", "responses": "Turn1: Hello.\nTurn2: Yes.", "n_turns": "2",
}

RECORDED = {
    "cpdscore-detail": "2d779d11a36c26a98d75fc3cb29fcacd1f6ea0b0da87da2da5cbc79335d6674d",
    "cpdscore-detail-ref": "225e08600260db23ce83cc500a6cbe62593f739887267f8d8ccd245b74e70a3a",
    "cpdscore-dialogue": "d83c326bdd4cd6d18e31f1af4d028c98be68399ccf91d7f74330ebbd2baf1a57",
    "cpdscore-simple": "f2e73497ac2e032e6ab566a2b491af33326238ce28124d29a9e6dd11230af765",
    "cpdscore-simple-ref": "eaa9973b18c480aafdad0498854b2d38aaf14adfd7709810ae4e76f542b5c427",
    "dialogadv:coherence": "1a0f896a0def15fbd70a1cb926b69a3586c0261ad7993110be4d9ea046797103",
    "dialogadv:relevance": "ad84897540d0907fc18505bbf5c7be1544c9aa186f53849fdbea7140a68246f3",
    "dialogadv:consistency": "893a51d52eef63df30a392a2c31b479c7454ae34f45bc1e5d981d045c17c5b1d",
    "dialogadv:fluency": "460e4dc3591b102c4f174686df13b03a160e0c1bead65f58a093df08572f070a",
    "diqad-holistic": "ad83e941b4799f63e77d737e2ecd6063b6432477e4fbb25ac068229a2d7d27c4",
    "lmstyle-appropriateness": "56afd5a3e09ae3c7fea45f5561f88d1d49013fb2980dd324c8d806451855b56f",
}


def prompt_sha256(name: str, dimension: str) -> str:
    """Return the sha256 of the JSON of the rendered messages."""
    p = load_protocol(name)
    extra = DIALOGUE_EXTRA if p.step1_protocol else {}
    msgs = p.render(ITEM, dimension, **extra)
    return hashlib.sha256(json.dumps(msgs, ensure_ascii=False).encode("utf-8")).hexdigest()


@pytest.mark.parametrize("key", sorted(RECORDED))
def test_prompt_bytes_unchanged(key: str) -> None:
    name, _, dimension = key.partition(":")
    assert prompt_sha256(name, dimension) == RECORDED[key]


def test_every_protocol_and_dimension_is_recorded() -> None:
    keys = {f"{n}:{d}" if d else n for n in protocol_names() for d in load_protocol(n).dimension_names}
    assert keys == set(RECORDED)
