"""The dialogue-native records every part of dialeval reads and writes.

A :class:`Dialogue` holds turns and optional grounding (persona, facts). A
:class:`Candidate` is one response to score: the context is the dialogue's turns
before ``turn_index``. A :class:`Rating` is one annotator's judgement of one
item on one dimension; ratings are kept per annotator, never pre-averaged. A
:class:`Score` is a metric's value for one item, with the metric's signature.

Example:
    >>> d = Dialogue(id="d1", turns=[Turn(speaker="A", text="hi"), Turn(speaker="B", text="hello")])
    >>> c = Candidate(id="d1:sys", dialogue_id="d1", turn_index=1, system="sys", text="hey")
    >>> [t.text for t in d.context(c.turn_index)]
    ['hi']
    >>> c.context_id
    'd1#1'
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator


class _Record(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Turn(_Record):
    """One utterance of a dialogue."""

    speaker: str
    text: str


class Dialogue(_Record):
    """A conversation with optional grounding and tags.

    Attributes:
        id: Unique id within a benchmark.
        turns: The utterances in order.
        knowledge: Persona lines or facts the responses may use.
        domain: Optional domain name (e.g. ``"topical-chat"``).
        tags: Free subset tags (e.g. ``{"subset": "open-ended"}``).
    """

    id: str
    turns: list[Turn]
    knowledge: list[str] = Field(default_factory=list)
    domain: str | None = None
    tags: dict[str, str] = Field(default_factory=dict)

    def context(self, turn_index: int) -> list[Turn]:
        """Return the turns before ``turn_index``."""
        return self.turns[:turn_index]


#: The system of a response whose data names none (a table read without a system column, HolisticEval).
UNKNOWN_SYSTEM = "unknown"


def named_systems(systems: Iterable[str]) -> set[str]:
    """Return the systems that are named: neither empty nor :data:`UNKNOWN_SYSTEM`.

    Example:
        >>> sorted(named_systems(["a", "", "unknown", "a", "b"]))
        ['a', 'b']
    """
    return set(systems) - {"", UNKNOWN_SYSTEM}


class Candidate(_Record):
    """A response to score, placed after the first ``turn_index`` turns of a dialogue.

    Attributes:
        id: Unique item id; ratings and scores refer to it.
        dialogue_id: The dialogue whose turns form the context.
        turn_index: Number of context turns before this response.
        system: The system (model) that produced the response (:data:`UNKNOWN_SYSTEM` when not known).
        text: The response.
        references: Zero or more reference responses.
        tags: Subset tags, copied onto scores for breakdowns.
    """

    id: str
    dialogue_id: str
    turn_index: int = Field(ge=0)
    system: str
    text: str
    references: list[str] = Field(default_factory=list)
    tags: dict[str, str] = Field(default_factory=dict)

    @property
    def context_id(self) -> str:
        """Identify the context: every candidate with the same one answers the same turns."""
        return f"{self.dialogue_id}#{self.turn_index}"


RatingValue = float | str | None


def _nonfinite(value: RatingValue) -> bool:
    """Whether a rating value is, or as text reads as (``float`` reads it), a NaN or an infinity.

    Example:
        >>> [_nonfinite(v) for v in (float("inf"), " -Infinity ", "nan", "1e999", "4", "positive", None)]
        [True, True, True, True, False, False, False]
    """
    if isinstance(value, str):
        try:
            value = float(value)
        except ValueError:
            return False
    return isinstance(value, float) and not math.isfinite(value)


def _refuse_bool(value: object, what: str) -> object:
    """Pass a value on unless it is a bool, which JSON's true and false become and pydantic would read as a number.

    Example:
        >>> _refuse_bool(1, "a number")
        1
    """
    if isinstance(value, bool):
        raise ValueError(f"{str(value).lower()} is not a number: {what}")
    return value


class Rating(_Record):
    """One annotator's judgement of one item on one dimension.

    Attributes:
        item_id: A candidate id (``level="turn"``) or a dialogue id (``level="dialogue"``).
        dimension: What was judged, e.g. ``"Overall"``.
        annotator: Pseudonymous annotator id.
        value: A number, a label, or ``None`` when the annotator said "I don't know".
        scale: The answer scale, e.g. ``"1-5"`` or ``"positive|negative"``.
        dont_know: The annotator answered "I don't know".
        explanation: Free-text explanation.
        reasons: Predefined reason codes.
        level: Whether ``item_id`` names a turn or a dialogue.
    """

    item_id: str
    dimension: str
    annotator: str
    value: RatingValue
    scale: str = ""
    dont_know: bool = False
    explanation: str | None = None
    reasons: list[str] = Field(default_factory=list)
    level: Literal["turn", "dialogue"] = "turn"

    @field_validator("value", mode="before")
    @classmethod
    def _not_bool(cls, v: object) -> object:
        """Refuse true and false, which pydantic reads as 1.0 and 0.0: a yes/no answer is a number or a label."""
        return _refuse_bool(v, "a rating is a number, a label (as text) or null")

    @field_validator("value")
    @classmethod
    def _finite(cls, v: RatingValue) -> RatingValue:
        """Refuse NaN and infinities, as numbers or as text ("NaN", "inf"): meta reads a text rating as its number.

        A ratings file's ``"value": "inf"`` made every correlation of its item n/a or wrong, silently.
        """
        if isinstance(v, float) and v != v:
            raise ValueError("NaN is not a rating; use null with dont_know=true")
        if _nonfinite(v):
            raise ValueError(f"{v!r} is not a finite number; use null with dont_know=true")
        return v


class Score(_Record):
    """A metric's value for one item.

    Attributes:
        item_id: The candidate id.
        metric: The output's name, e.g. ``"bleu4"``.
        value: The value (``None`` only when the metric could not score the item,
            with the reason in ``extras["error"]``).
        dialogue_id: Copied from the candidate for grouping.
        context_id: Copied from the candidate for grouping.
        system: Copied from the candidate for grouping.
        tags: Copied from the candidate for breakdowns.
        extras: Per-item details (sub-scores, parse info).
        signature: The metric's signature string.
    """

    item_id: str
    metric: str
    value: float | None
    dialogue_id: str = ""
    context_id: str = ""
    system: str = ""
    tags: dict[str, str] = Field(default_factory=dict)
    extras: dict[str, Any] = Field(default_factory=dict)
    signature: str = ""

    @field_validator("value", mode="before")
    @classmethod
    def _not_bool(cls, v: object) -> object:
        """Refuse true and false: pydantic reads them as numbers; a scores file's ``"value": true`` was 1.0."""
        return _refuse_bool(v, "a score's value is a number, or null with the reason in extras.error")

    @field_validator("value")
    @classmethod
    def _finite(cls, v: float | None) -> float | None:
        if v is not None and not math.isfinite(v):
            raise ValueError(f"{'NaN' if v != v else v} is not a score; use null and say why in extras.error")
        return v
