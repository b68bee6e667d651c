"""Judge protocols: versioned prompt files (data only) and how they are filled in.

A protocol file (YAML) holds ``name``, ``version``, ``citation``, ``scale``,
``labels`` (what precedes the score), ``messages`` (chat templates with
``{{placeholders}}``) and optional ``dimensions`` (one request per dimension,
``{{aspect}}`` and ``{{definition}}`` filled in). A two-step protocol (``step1_protocol``)
judges the last ``max_turns`` system turns of a dialogue (7 by default, at least 1). Placeholders: ``context``,
``last_turn``, ``response``, ``reference``, ``facts``, ``dialogue_json``; with a
``step1_protocol``, ``turn_scores``, ``responses`` and ``n_turns``. Any other is refused.

``answer`` declares the shape of the answer the prompt asks for: a ``template``
with ``{slot}`` values (``{score}`` is the score; the two-step protocol's
``fields`` name the others) written with ``decimals`` decimals on the scale (none on an ``integer`` one).
Backends turn it into a grammar, a JSON schema or a token mask
(:mod:`dialeval.backends.structure`). A file is checked by a pydantic model that
refuses unknown keys; an error names the file and the field.

Example:
    >>> p = load_protocol("lmstyle-appropriateness")
    >>> p.scale, p.version
    (Scale(min=0.0, max=100.0, integer=True), 1)
    >>> p.answer.parts[0], len(p.answer.slot("score").values)
    ('Appropriateness Score: ', 101)
    >>> from dialeval.metrics.base import MetricInput
    >>> from dialeval.schema import Turn
    >>> ctx = (Turn(speaker="A", text="Frank is getting married."),)
    >>> msgs = p.render(MetricInput(response="Is he really?", context=ctx))
    >>> msgs[0][1].splitlines()[2:5:2]
    ['Speaker: [Frank is getting married.]', 'Response: [Is he really?]']
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from dialeval.backends.structure import AnswerShape
from dialeval.errors import InputError, UnknownNameError
from dialeval.judges.parse import Scale
from dialeval.metrics.base import MetricInput
from dialeval.registry import Registry
from dialeval.signature import text_sha256

_PLACEHOLDER = re.compile(r"\{\{(\w+)\}\}")
#: A placeholder written with spaces (``{{ context }}``, as Jinja allows): it was sent as it is, never filled in.
_SPACED = re.compile(r"\{\{\s*(\w+)\s*\}\}")
#: Anything in double braces: one that is no placeholder's name (``{{last-turn}}``) was sent as it is too.
_BRACED = re.compile(r"\{\{([^{}\n]+)\}\}")
#: In an answer's template, braces around no slot's name (a JSON answer's braces enclose slots: they are text).
_NOT_SLOT = re.compile(r"\{\{\w+\}\}|\{(?!\w+\})[^{}\n]*\}")
#: The placeholders that show something of the item judged (:func:`item_variables`, and a two-step protocol's
#: second step: its turns' scores and responses); ``{{aspect}}`` and ``{{definition}}`` are the same for each item.
ITEM_PLACEHOLDERS = ("context", "last_turn", "response", "reference", "facts", "dialogue_json", "turn_scores",
                     "responses", "n_turns")  # fmt: skip
#: The scores besides the final one that a two-step protocol's ``fields`` label, as
#: :class:`~dialeval.judges.dialogue.DialogueJudge` reads them.
FIELD_NAMES = ("turn", "interaction")


@dataclass(frozen=True)
class Protocol:
    """A parsed protocol file."""

    name: str
    version: int
    citation: str
    description: str
    scale: Scale
    labels: tuple[str, ...]
    messages: tuple[tuple[str, str], ...]
    sha256: str
    dimensions: tuple[tuple[str, str], ...] = ()
    needs_references: bool = False
    levels: int = 0
    fields: tuple[tuple[str, tuple[str, ...]], ...] = ()
    step1_protocol: str = ""
    max_turns: int = 7
    answer: AnswerShape | None = None
    path: str = field(default="", compare=False)

    @property
    def dimension_names(self) -> tuple[str, ...]:
        """Dimension names, or ``("",)`` for a protocol with one question."""
        return tuple(d for d, _ in self.dimensions) or ("",)

    def render(self, item: MetricInput, dimension: str = "", **extra: str) -> tuple[tuple[str, str], ...]:
        """Fill the templates for one item (and one dimension)."""
        values = item_variables(item)
        if dimension:
            values["aspect"] = dimension
            values["definition"] = dict(self.dimensions)[dimension]
        values.update(extra)

        def fill(m: re.Match[str]) -> str:
            key = m.group(1)
            if key not in values:
                raise InputError(f'unknown placeholder "{{{{{key}}}}}"', path=self.path or self.name, field="messages")
            return values[key]

        return tuple((role, _PLACEHOLDER.sub(fill, text)) for role, text in self.messages)


def item_variables(item: MetricInput) -> dict[str, str]:
    """Return the placeholder values of one item."""
    roles = ["user" if (len(item.context) - i) % 2 else "assistant" for i in range(len(item.context))]
    dialogue = [{"role": r, "content": t.text} for r, t in zip(roles, item.context, strict=True)]
    dialogue.append({"role": "assistant", "content": item.response})
    return {
        "context": "\n".join(f"{t.speaker}: {t.text}" for t in item.context),
        "last_turn": item.context[-1].text if item.context else "",
        "response": item.response,
        "reference": item.references[0] if item.references else "",
        "facts": "\n".join(item.knowledge),
        "dialogue_json": json.dumps(dialogue, ensure_ascii=False),
    }


class _Strict(BaseModel):
    # strict: "version: true" was version 1 and "min: true" a scale from 1, as YAML's "yes" or "on" would be
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)


class _ScaleSpec(_Strict):
    # not strict: YAML reads 1e3 as text. .inf and .nan were OverflowError/ValueError tracebacks
    min: float = Field(allow_inf_nan=False, strict=False)
    max: float = Field(allow_inf_nan=False, strict=False)
    integer: bool = True

    @field_validator("min", "max", mode="before")
    @classmethod
    def _not_a_boolean(cls, value: object) -> object:
        if isinstance(value, bool):
            raise ValueError("a number, not true or false")
        return value


class _MessageSpec(_Strict):
    role: Literal["system", "user", "assistant"]  # another went to the backend as it was
    content: str

    @field_validator("content")
    @classmethod
    def _no_spaces_in_placeholders(cls, content: str) -> str:
        """Refuse ``{{ context }}`` and ``{{last-turn}}``: only ``{{context}}`` is filled in; the model saw braces."""
        for m in _SPACED.finditer(content):
            if m.group(0) != f"{{{{{m.group(1)}}}}}":
                raise ValueError(f'"{m.group(0)}" would be sent as it is: write {{{{{m.group(1)}}}}}, without spaces')
        for m in _BRACED.finditer(content):
            if not _SPACED.fullmatch(m.group(0)):
                raise ValueError(f'"{m.group(0)}" would be sent as it is: a placeholder is a name of letters, digits '
                                 "and _ (such as {{last_turn}})")  # fmt: skip
        return content


class _AnswerSpec(_Strict):
    template: str = Field(min_length=1)
    decimals: int = Field(default=0, ge=0, le=2)

    @field_validator("template")
    @classmethod
    def _slots_named(cls, template: str) -> str:
        """Refuse ``{{score}}`` and ``{turn-score}``: text the model was held to copy, the slot never asked for."""
        if m := _NOT_SLOT.search(template):
            raise ValueError(f'"{m.group(0)}" would be text the answer copies: a slot is a name of letters, digits '
                             "and _ in single braces (such as {score})")  # fmt: skip
        return template


class ProtocolFile(_Strict):
    """The fields of a protocol file (unknown keys are refused)."""

    name: str = Field(min_length=1)
    version: int
    citation: str = ""
    description: str = ""
    scale: _ScaleSpec
    labels: list[str] = Field(default_factory=lambda: ["score"])
    messages: list[_MessageSpec] = Field(min_length=1)
    dimensions: dict[str, str] = Field(default_factory=dict)
    needs_references: bool = False
    levels: int = Field(default=0, ge=0)  # -3 made the outputs "level 1--3"
    fields: dict[str, list[str]] = Field(default_factory=dict)
    step1_protocol: str = ""
    # -1 left out the dialogue's last system turn; 0 was read as unset, 7
    max_turns: int = Field(default=7, ge=1)
    answer: _AnswerSpec | None = None

    @field_validator("name")
    @classmethod
    def _name_says_something(cls, name: str) -> str:
        """Refuse a blank name: the signature and the run's summary name the protocol by it ("protocol: ")."""
        if not name.strip():
            raise ValueError("a protocol needs a name (the signature names the protocol by it)")
        return name

    @field_validator("labels")
    @classmethod
    def _labels_say_something(cls, labels: list[str]) -> list[str]:
        """Refuse a blank label: it precedes every number, so the last number of the answer was read as the score."""
        if any(not label.strip() for label in labels):
            raise ValueError("a blank label precedes every number (the last one in the answer was read as the "
                             "score): give the words before the score, or no labels for a bare number")  # fmt: skip
        return labels

    @field_validator("dimensions")
    @classmethod
    def _dimensions_named(cls, dimensions: dict[str, str]) -> dict[str, str]:
        """Refuse a blank dimension name: "" was judged as no dimension, its {{aspect}} unknown at the first item."""
        if any(not name.strip() for name in dimensions):
            raise ValueError("a dimension needs a name (it is {{aspect}} and part of its output's name)")
        return dimensions

    @field_validator("fields")
    @classmethod
    def _fields_read(cls, fields: dict[str, list[str]]) -> dict[str, list[str]]:
        """Refuse a field the two-step judge does not read (it was ignored) and a blank label (any number was it)."""
        if unknown := sorted(set(fields) - set(FIELD_NAMES)):
            raise ValueError(f"unknown field {', '.join(unknown)}: a two-step judge reads {' and '.join(FIELD_NAMES)}")
        if any(not label.strip() for labels in fields.values() for label in labels):
            raise ValueError("a blank label precedes every number (the last one in the answer was read as the field)")
        return fields

    @field_validator("messages")
    @classmethod
    def _shows_the_item(cls, messages: list[_MessageSpec]) -> list[_MessageSpec]:
        """Refuse messages that show nothing of the item: every item got one prompt, and one score."""
        shown = {m.group(1) for spec in messages for m in _PLACEHOLDER.finditer(spec.content)}
        if not shown & set(ITEM_PLACEHOLDERS):
            raise ValueError("no message shows the item judged (a placeholder such as {{response}}, {{context}} "
                             "or {{dialogue_json}}): every item would get the same prompt")  # fmt: skip
        return messages


def scale_values(scale: Scale, decimals: int) -> tuple[str, ...]:
    """Return every spelling of a value on ``scale`` with ``decimals`` decimals.

    Example:
        >>> scale_values(Scale(0, 1, integer=False), 1)[:3], scale_values(Scale(1, 5), 0)
        (('0.0', '0.1', '0.2'), ('1', '2', '3', '4', '5'))
    """
    lo, hi = _bounds(scale, decimals)
    step = 10**decimals
    return tuple(f"{v / step:.{decimals}f}" for v in range(lo, hi + 1))


def _bounds(scale: Scale, decimals: int) -> tuple[int, int]:
    """Return the first and last value on ``scale`` with ``decimals`` decimals, times ``10**decimals``.

    Inward, so every value is on the scale: rounding made 0.5-5.5 with no decimals the answers 0-6, read as scores
    outside the scale. Rounded to 9 places first: 0.3 * 10 is 3.0000000000000004, whose ceiling is 4.

    Example:
        >>> _bounds(Scale(0.5, 5.5, integer=False), 0), _bounds(Scale(0.3, 0.7, integer=False), 1)
        ((1, 5), (3, 7))
    """
    step = 10**decimals
    return math.ceil(round(scale.min * step, 9)), math.floor(round(scale.max * step, 9))


#: The most values an answer's ``{score}`` may take (0-100 with two decimals): the answer's grammar lists them all.
MAX_ANSWER_VALUES = 10_001


def _shape(spec: _AnswerSpec, scale: Scale, path: Path, text: str) -> AnswerShape:
    """Return the answer's shape; an error names the file, the line of its key and the field (``text``: the file)."""
    from dialeval.jsonl import yaml_line

    if scale.integer and spec.decimals:  # 1.50 was read as its score, and a sampled answer had no expected score
        raise InputError(f"decimals: {spec.decimals} writes scores with decimals, and the scale is whole numbers "
                         "(integer: true, the default): write integer: false, or no decimals", path=path,
                         line=yaml_line(text, ["answer", "decimals"]), field="answer.decimals")  # fmt: skip
    lo, hi = _bounds(scale, spec.decimals)
    if hi - lo + 1 > MAX_ANSWER_VALUES:  # 1e300 ran for ever
        raise InputError(f"a {scale.min:g}-{scale.max:g} scale with {spec.decimals} decimals has more than "
                         f"{MAX_ANSWER_VALUES:,} answers (the answer's grammar lists each)", path=path,
                         line=yaml_line(text, ["scale"]), field="scale")  # fmt: skip
    values = scale_values(scale, spec.decimals)
    if not values:  # the grammar allowed no answer at all
        raise InputError(f"no value of the {scale.min:g}-{scale.max:g} scale has {spec.decimals} decimals", path=path,
                         line=yaml_line(text, ["answer", "decimals"]) or yaml_line(text, ["answer"]),
                         field="answer.decimals")  # fmt: skip
    shape = AnswerShape.from_template(spec.template, dict.fromkeys(_SLOT_NAMES.findall(spec.template), values))
    names = [s.name for s in shape.slots]
    if "score" not in names or len(set(names)) != len(names):
        raise InputError("the template needs one {score} slot and distinct slot names", path=path,
                         line=yaml_line(text, ["answer", "template"]), field="answer.template")  # fmt: skip
    return shape


_SLOT_NAMES = re.compile(r"\{(\w+)\}")


def _placeholders(spec: ProtocolFile) -> tuple[str, ...]:
    """Return the placeholders a judge fills in for this file (:meth:`Protocol.render`'s values)."""
    names = ("context", "last_turn", "response", "reference", "facts", "dialogue_json")  # item_variables
    if spec.step1_protocol:  # the second step of a dialogue protocol (DialogueJudge)
        return (*names, "turn_scores", "responses", "n_turns")
    return (*names, "aspect", "definition") if spec.dimensions else names


def _check_names(spec: ProtocolFile, path: Path, text: str) -> None:
    """Refuse a placeholder no judge fills in, and a step-1 protocol that cannot be one, naming line and field.

    Both were found only when the first item was judged (the model loaded, the data read), without the line.
    Dimensions that no message names are refused too: each was judged with the same prompt.
    """
    from dialeval.jsonl import yaml_line

    known = _placeholders(spec)
    for i, m in enumerate(spec.messages):
        for key in _PLACEHOLDER.findall(m.content):
            if key not in known:
                raise InputError(f'unknown placeholder "{{{{{key}}}}}"; this protocol fills in {", ".join(known)}',
                                 path=path, line=yaml_line(text, ["messages", str(i), "content"]),
                                 field=f"messages.{i}.content")  # fmt: skip
        if "reference" in _PLACEHOLDER.findall(m.content) and not spec.needs_references:
            # it was filled in with "" for every item without a reference, and the run never said so
            raise InputError("{{reference}} shows the item's reference: add needs_references: true, so that items "
                             "without one are refused, not judged with it left empty", path=path,
                             line=yaml_line(text, ["messages", str(i), "content"]),
                             field=f"messages.{i}.content")  # fmt: skip
    shown = {key for m in spec.messages for key in _PLACEHOLDER.findall(m.content)}
    if spec.dimensions and (spec.step1_protocol or not shown & {"aspect", "definition"}):
        # each dimension was asked the same, scored the same; a two-step judge asks none (its outputs have none)
        why = ("a two-step protocol (step1_protocol) asks one question, not one per dimension" if spec.step1_protocol
               else "no message names {{aspect}} or {{definition}}: every dimension would get the same prompt, and "
               "the same score")  # fmt: skip
        raise InputError(why, path=path, line=yaml_line(text, ["dimensions"]), field="dimensions")
    blank = [name for name, words in spec.dimensions.items() if not words.strip()]
    if blank and "definition" in shown:
        # the model was asked to judge "fluency: " and never told what fluency is
        raise InputError("a blank definition is filled in as {{definition}}: say what the dimension is", path=path,
                         line=yaml_line(text, ["dimensions", blank[0]]), field=f"dimensions.{blank[0]}")  # fmt: skip
    if spec.step1_protocol:
        _check_step1(spec.step1_protocol, path, text)


def _step1_path(step1: str, path: Path) -> str:
    """Return ``step1`` as it is read: a name as it is, a relative path from the folder of the file naming it.

    A relative path was read from the current folder: ``--protocol protocols/step2.yaml`` naming ``step1.yaml``
    beside it found no file, unless run from inside ``protocols/``.

    Example:
        >>> _step1_path("step1.yaml", Path("protocols/step2.yaml")), _step1_path("cpdscore-detail", Path("a/b.yaml"))
        ('protocols/step1.yaml', 'cpdscore-detail')
    """
    return str(path.parent / step1) if Path(step1).suffix else step1


def _check_step1(step1: str, path: Path, text: str) -> None:
    """Refuse a step-1 protocol that is none, asks per dimension or is two-step itself (step 1 asks one question).

    Read, not loaded: a file naming itself as its step 1 would load for ever. A step 1 with dimensions or its own
    step 1 failed at the first item, as 'unknown placeholder "{{aspect}}"' in the step-1 file.
    """
    from dialeval.jsonl import read_yaml_model, yaml_line

    def refuse(message: str) -> InputError:
        return InputError(message, path=path, line=yaml_line(text, ["step1_protocol"]), field="step1_protocol")

    try:
        target = Path(_step1_path(step1, path)) if Path(step1).suffix else Path(protocol_registry().get(step1))
    except UnknownNameError as exc:
        raise refuse(exc.message) from None
    if not target.is_file():  # it said "nothere.yaml: file not found", naming neither this file nor its field
        raise refuse(f"no protocol file {target.resolve()} (a path is read from the folder of {path.name})")
    first, _ = read_yaml_model(target, ProtocolFile, extra="judge")
    if first.dimensions or first.step1_protocol or first.needs_references:
        # a turn of the dialogue has no reference (system_turns): each was judged with {{reference}} left empty
        what = ("asks one question per dimension" if first.dimensions else "is two-step itself"
                if first.step1_protocol else "needs references, which the turns of a dialogue have none of")
        raise refuse(f'step 1 asks one question per turn, and "{step1}" {what}')


def _protocol_dir() -> Path:
    return Path(str(resources.files("dialeval.judges") / "protocols"))


def protocol_names() -> list[str]:
    """Return the names of the built-in protocols."""
    return sorted(protocol_registry().names())


@cache
def protocol_registry() -> Registry[Path]:
    """Return the protocol files by name: the built-in ones and plugins (entry points ``dialeval.judge_protocols``)."""
    reg: Registry[Path] = Registry("protocol", group="dialeval.judge_protocols")
    for f in sorted(_protocol_dir().glob("*.yaml")):
        reg.register(f.stem, f)
    return reg


def load_protocol(name_or_path: str | Path) -> Protocol:
    """Load a built-in protocol by name or a user's protocol file by path.

    Raises:
        InputError: The file lacks a required field, has an unknown one or a bad value (named).
    """
    from dialeval.jsonl import read_yaml_model, yaml_line

    path = Path(name_or_path)
    if not path.suffix:
        path = Path(protocol_registry().get(str(name_or_path)))
    spec, text = read_yaml_model(path, ProtocolFile, extra="judge")
    sc = Scale(spec.scale.min, spec.scale.max, spec.scale.integer)
    if sc.min >= sc.max:
        raise InputError("scale min must be below max", path=path, line=yaml_line(text, ["scale"]), field="scale")
    if sc.integer and math.ceil(sc.min) > math.floor(sc.max):  # "Score: 0.5" was read, and never an expected score
        raise InputError(f"integer: true (the default), and no whole number is in {sc.min:g}-{sc.max:g}: write "
                         "integer: false", path=path, line=yaml_line(text, ["scale", "integer"]),
                         field="scale.integer")  # fmt: skip
    if spec.levels and (sc.min, sc.max) != (0, 1):  # to_level reads a 0-1 score: on 1-5 every score was the top level
        raise InputError(f"levels split a 0-1 scale (DialogADV's L1-L10), not {sc.min:g}-{sc.max:g}", path=path,
                         line=yaml_line(text, ["levels"]), field="levels")  # fmt: skip
    for key in ("max_turns", "fields"):  # each was ignored: no turn is judged, no field read
        if key in spec.model_fields_set and not spec.step1_protocol:
            raise InputError(f"{key} is for a two-step protocol (step1_protocol), which judges a dialogue's turns",
                             path=path, line=yaml_line(text, [key]), field=key)  # fmt: skip
    _check_names(spec, path, text)
    return Protocol(
        name=spec.name,
        version=spec.version,
        citation=spec.citation,
        description=spec.description,
        scale=sc,
        labels=tuple(spec.labels),
        messages=tuple((m.role, m.content) for m in spec.messages),
        sha256=text_sha256(text),
        dimensions=tuple(spec.dimensions.items()),
        needs_references=spec.needs_references,
        levels=spec.levels,
        fields=tuple((k, tuple(v)) for k, v in spec.fields.items()),
        step1_protocol=_step1_path(spec.step1_protocol, path),
        max_turns=spec.max_turns,
        answer=_shape(spec.answer, sc, path, text) if spec.answer else None,
        path=str(path),
    )
