"""Human-evaluation protocols: versioned YAML files of criteria, answer formats and explanations.

Bundled protocols live in ``dialeval/human/protocols/``; a user passes a name
(``mousavi-turn``) or the path of their own edited copy.

Example:
    >>> p = load_protocol("mousavi-turn")
    >>> [c.name for c in p.criteria], p.criteria[0].answer.scale
    (['Appropriateness', 'Contextualization', 'Listening', 'Correctness'], 'positive|negative')
    >>> print(p.criteria[0].check("dont_know", [], ""))
    free text is required for "I don't know"
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections import Counter
from collections.abc import Iterable
from decimal import Decimal
from importlib import resources
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator, model_validator

from dialeval.errors import InputError, closest
from dialeval.signature import text_sha256

_NUMBER = re.compile(r"[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)")

MAX_KEY_CHARS = 64
"""The most characters of a criterion's name or an answer's value: what the app takes in an answer and stores."""

TIE = "tie"
"""What the report's majority table calls an item whose votes tie: no answer may have this value."""

DONT_KNOW = "dont_know"
"""What the majority vote and the report call an "I don't know" vote: only the "I don't know" option may have it."""


_UNSEEN = re.compile(
    "[\u034f\u115f\u1160\u17b4\u17b5\u180b-\u180f\u2800\u3164\ufe00-\ufe0f\uffa0\U000e0100-\U000e01ef]"
)
"""The letters and marks that show nothing: Unicode's default-ignorable ones (fillers, variation selectors) and the
blank Braille pattern."""


def visible(text: str) -> bool:
    """Return whether ``text`` holds a character a reader sees.

    Not a space, control or format character, nor one of :data:`_UNSEEN` (``str.strip`` keeps a zero-width space).

    Example:
        >>> visible("\u200b\u2060\ufeff \u3164"), visible("\u200bok")
        (False, True)
    """
    return any(map(_shows, text))


def _shows(ch: str) -> bool:
    return unicodedata.category(ch)[0] != "Z" and unicodedata.category(ch) not in {"Cc", "Cf"} and not _UNSEEN.match(ch)


def looks(text: str) -> str:
    """Return what a reader sees of ``text``: :func:`visible`'s characters, with each run of spaces one space.

    Example:
        >>> looks(" Quality\u200b  of\ufeff\u3164 it ") == looks("Quality of it")
        True
    """
    return " ".join("".join(ch for ch in text if ch.isspace() or _shows(ch)).split())


def _plain(number: Decimal) -> str:
    """Return the one spelling of a number: no exponent, no trailing zeros, no sign on zero.

    Example:
        >>> _plain(Decimal("050.50")), _plain(Decimal("-0.0")), _plain(Decimal("1E+1"))
        ('50.5', '0', '10')
    """
    return "0" if number == 0 else format(number.normalize(), "f")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Option(_Strict):
    """One answer button."""

    value: str
    label: str
    dont_know: bool = False
    score: float | None = None  # the number an export with numeric=True writes for this answer


def _twice(values: Iterable[str]) -> set[str]:
    """Return the values that occur more than once."""
    seen = Counter(values)
    return {v for v, n in seen.items() if n > 1}


#: The keys of an answer that do not apply to each type.
_NOT_FOR = {"choice": {"levels", "min", "max"}, "scale": {"options", "min", "max"}, "slider": {"options", "levels"}}


class Answer(_Strict):
    """The answer format: labelled choices, a numeric scale of levels, or a slider."""

    type: Literal["choice", "scale", "slider"]
    options: list[Option] = Field(default_factory=list)
    levels: list[int] = Field(default_factory=list)
    min: int = 0
    max: int = 100

    @model_validator(mode="after")
    def _answerable(self) -> Answer:
        """Refuse a format no answer fits, and keys that do not apply to its type (they were ignored).

        A slider whose min is not below its max, a scale of fewer than two levels or a choice of fewer than
        two options, or one of them twice, made a study whose page took no answer (or a server error).
        """
        fields = type(self).model_fields  # a stored protocol is written back with every default: those are fine
        unused = sorted(k for k in _NOT_FOR[self.type]
                        if getattr(self, k) != fields[k].get_default(call_default_factory=True))  # fmt: skip
        if unused:
            raise ValueError(f"{' and '.join(unused)} {'does' if len(unused) == 1 else 'do'} not apply to a "
                             f"{self.type} answer")  # fmt: skip
        given = [o.value for o in self.options] if self.type == "choice" else [str(v) for v in self.levels]
        values = [o.value for o in self.options if not o.dont_know] if self.type == "choice" else given
        if sum(o.dont_know for o in self.options) > 1:
            raise ValueError('two "I don\'t know" options (dont_know: true): give one')
        if self.type == "slider":
            if self.min >= self.max:
                raise ValueError(f"a slider's min must be below its max, got {self.min} and {self.max}")
        elif len(set(values)) < 2:
            raise ValueError(f"a {self.type} answer needs two {'options' if self.type == 'choice' else 'levels'} "
                             f"or more (besides \"I don't know\"), got {values}")  # fmt: skip
        elif twice := sorted(_twice(given)):
            raise ValueError(f"{twice[0]!r} is given twice")
        return self

    @property
    def scale(self) -> str:
        """Return the scale string stored on each :class:`~dialeval.schema.Rating`."""
        if self.type == "choice":
            return "|".join(o.value for o in self.options if not o.dont_know)
        if self.type == "scale":
            return f"{min(self.levels)}-{max(self.levels)}"
        return f"{self.min}-{self.max}"

    def canonical(self, value: str) -> str | None:
        """Return the one stored spelling of ``value``, or None when it is not an answer of this format.

        A choice must be one of the option values as written. A number may be typed with spaces,
        a sign, a decimal part or full-width digits (Unicode NFKC); it is stored as the level
        (``scale``) or as a plain decimal (``slider``), so "3.0", " 3 ", "３" and "+3" are all "3"
        and agreement and qualification compare like with like.

        Example:
            >>> five = Answer(type="scale", levels=[1, 2, 3, 4, 5])
            >>> [five.canonical(v) for v in ("3.0", " 3 ", "\uff13", "+3", "3.5", "6", "nan", "1e0")]
            ['3', '3', '3', '3', None, None, None, None]
            >>> Answer(type="slider", min=0, max=100).canonical("050.50")
            '50.5'
        """
        if self.type == "choice":
            return value if value in {o.value for o in self.options} else None
        text = unicodedata.normalize("NFKC", value).strip()
        if not _NUMBER.fullmatch(text):
            return None
        number = Decimal(text)
        if self.type == "scale":
            return next((str(level) for level in self.levels if number == level), None)
        return _plain(number) if self.min <= number <= self.max else None

    @property
    def dont_know_key(self) -> str:
        """Return what the majority vote counts this answer's "I don't know" votes under.

        :data:`DONT_KNOW`, or the "I don't know" option's own value where an ordinary option has the value
        :data:`DONT_KNOW` (a study made before :func:`unfit_answer` refused it): their votes are apart.
        """
        clash = any(o.value == DONT_KNOW and not o.dont_know for o in self.options)
        return next((o.value for o in self.options if o.dont_know), DONT_KNOW) if clash else DONT_KNOW

    @property
    def tie_key(self) -> str:
        """Return what the majority vote calls an item whose votes tie.

        :data:`TIE`, or where an ordinary option has that value (a study made before :func:`unfit_answer` refused
        it) the first of "tie_", "tie__", ... that no vote is counted under: the ties are apart from its votes.
        """
        taken = {o.value for o in self.options if not o.dont_know} | {self.dont_know_key}
        return next(key for n in range(len(taken) + 1) if (key := TIE + "_" * n) not in taken)

    def is_dont_know(self, value: str) -> bool:
        """Return whether ``value`` is the "I don't know" option."""
        return any(o.dont_know and o.value == value for o in self.options)


class Explanation(_Strict):
    """A predefined explanation option, mapped to a sub-dimension code shown only in analysis."""

    code: str
    label: str
    when: list[str]


class Criterion(_Strict):
    """One quality dimension with its definition, question, answer format and explanations."""

    name: str
    definition: str
    question: str
    answer: Answer
    explanations: list[Explanation] = Field(default_factory=list)
    free_text: bool = False

    @model_validator(mode="after")
    def _explained_answers(self) -> Criterion:
        """Refuse an explanation code given twice, or one offered for a value that is no answer."""
        if twice := sorted(_twice(e.code for e in self.explanations)):
            raise ValueError(f'explanation code "{twice[0]}" is given twice')
        for e in self.explanations:
            if bad := [w for w in e.when if self.answer.canonical(w) != w]:
                answers = ", ".join(o.value for o in self.answer.options) or self.answer.scale
                raise ValueError(f'explanation "{e.code}" is offered for {bad[0]!r}, which is no answer of '
                                 f"{self.name} ({answers})")  # fmt: skip
        return self

    def check(self, value: str, reasons: list[str], free_text: str) -> str | None:
        """Return why an answer is invalid, or None when it is valid (``value`` is read as :meth:`Answer.canonical`)."""
        canonical = self.answer.canonical(value)
        if canonical is None:
            return f"{value!r} is not an answer of {self.name}"
        value = canonical
        if repeated := sorted({r for r in reasons if reasons.count(r) > 1}):
            return f"reasons {repeated} are given more than once"
        allowed = {e.code for e in self.explanations if value in e.when}
        if unknown := [r for r in reasons if r not in allowed]:
            return f"reasons {unknown} are not offered for answer {value!r}"
        if self.answer.is_dont_know(value) and self.free_text and not visible(free_text):
            return 'free text is required for "I don\'t know"'
        return None


class Protocol(_Strict):
    """A versioned study protocol.

    Attributes:
        name: Canonical name.
        version: Bumped whenever criteria or answers change.
        level: ``turn`` (candidate responses) or ``dialogue`` (whole dialogues).
        mode: ``absolute`` (one candidate at a time) or ``comparative``.
        include_ground_truth: Add each context's reference response as a candidate.
        order: ``criterion_first``: all candidates of a context on one criterion, then the next.
        show_unit_candidates: Show all candidates of the context together.
        show_tag: A candidate tag shown with the context (e.g. ``task``: the requested style).
        show_tag_label: How the page names that tag (e.g. "Requested style").
        short_guidelines: Always visible in the annotation page.
        full_guidelines_url: Link to the full guidelines.
        criteria: The dimensions judged.
    """

    name: str
    version: int = Field(strict=True)  # as a judge protocol's: "version: true" was 1, "version: \"2\"" 2
    level: Literal["turn", "dialogue"]
    mode: Literal["absolute", "comparative"] = "absolute"
    include_ground_truth: bool = False
    order: Literal["criterion_first"] = "criterion_first"
    show_unit_candidates: bool = False
    show_tag: str = ""
    show_tag_label: str = ""
    short_guidelines: str
    full_guidelines_url: str = ""
    criteria: list[Criterion] = Field(min_length=1)
    source_sha256: str = ""

    @field_validator("mode")
    @classmethod
    def _implemented(cls, mode: str) -> str:
        """Refuse ``comparative``: it was taken and rated each candidate on its own, as ``absolute`` does."""
        if mode == "comparative":
            raise ValueError("comparative (candidates judged against each other) is not implemented: use absolute, "
                             "with show_unit_candidates: true to show a context's candidates together")  # fmt: skip
        return mode

    @field_validator("criteria")
    @classmethod
    def _distinct(cls, criteria: list[Criterion]) -> list[Criterion]:
        """Refuse two criteria of one name: their votes would mix."""
        if twice := sorted(_twice(c.name for c in criteria)):
            raise ValueError(f'criterion "{twice[0]}" is given twice')
        return criteria

    @field_validator("show_tag_label")
    @classmethod
    def _labels_a_tag(cls, label: str, info: ValidationInfo) -> str:
        """Refuse a tag label with no tag to label (it was ignored)."""
        if label and not info.data.get("show_tag"):
            raise ValueError("names the tag that show_tag shows: give show_tag too")
        return label

    @field_validator("full_guidelines_url")
    @classmethod
    def _web_link(cls, url: str) -> str:
        """Only an http(s) link may be shown to annotators (a ``javascript:`` link would run in their page)."""
        if url and urlsplit(url.strip()).scheme.lower() not in {"http", "https"}:
            raise ValueError(f"must be an http:// or https:// link, not {url[:40]!r}")
        return url

    def asked(self, name: str) -> int:
        """Return where the protocol asks the criterion ``name`` (KeyError if none): tables list criteria so.

        Example:
            >>> sorted(["Correctness", "Listening"], key=load_protocol("mousavi-turn").asked)
            ['Listening', 'Correctness']
        """
        return self.criteria.index(self.criterion(name))

    def criterion(self, name: str) -> Criterion:
        """Return the criterion called ``name`` (KeyError if none)."""
        for c in self.criteria:
            if c.name == name:
                return c
        raise KeyError(name)

    def public(self) -> dict[str, Any]:
        """Return what an annotator may see (everything but the sub-dimension codes' meaning)."""
        return self.model_dump()


def bundled_protocols() -> list[str]:
    """Return the names of the protocols shipped with dialeval."""
    folder = resources.files("dialeval.human") / "protocols"
    return sorted(p.name.removesuffix(".yaml") for p in folder.iterdir() if p.name.endswith(".yaml"))


def load_protocol(name_or_path: str | Path) -> Protocol:
    """Load a bundled protocol by name, or a protocol file by path; errors name the file and field.

    Raises:
        InputError: An unknown name, or a file that is not a valid protocol (as :func:`dialeval.jsonl.read_yaml_model`).
    """
    from dialeval.jsonl import read_yaml_model, yaml_line

    path = Path(name_or_path)
    if not path.suffix:  # a file by any suffix, as judge protocols: JSON is YAML too
        if str(name_or_path) not in (known := bundled_protocols()):
            close = closest(str(name_or_path), known)
            hint = f'did you mean "{close}"?' if close else f"bundled: {', '.join(known)}; or a protocol file (YAML)"
            raise InputError(f'unknown protocol "{name_or_path}"; {hint}', field="--protocol")
        path = Path(str(resources.files("dialeval.human") / "protocols" / f"{name_or_path}.yaml"))
    protocol, text = read_yaml_model(path, Protocol, extra="human")
    # a name too long was taken, and the app then refused every answer to it (422); see unfit_answer for the others
    checks = (too_long, unfit_answer, blank_words, unoffered, look_alike)
    if (problem := next(filter(None, (check(protocol) for check in checks)), None)) is not None:
        field, why = problem
        raise InputError(why, path=path, line=yaml_line(text, field.split(".")), field=field)
    return protocol.model_copy(update={"source_sha256": text_sha256(text)})


def too_long(protocol: Protocol) -> tuple[str, str] | None:
    """Return the field of the first criterion name or answer value over :data:`MAX_KEY_CHARS` characters, and why.

    Checked where a protocol is loaded for a new study, not on the model: a stored study stays readable.

    Example:
        >>> p = load_protocol("mousavi-turn")
        >>> long = p.criteria[1].model_copy(update={"name": "x" * 65})
        >>> too_long(p.model_copy(update={"criteria": [p.criteria[0], long]}))[0]
        'criteria.1.name'
    """
    for i, c in enumerate(protocol.criteria):
        values = [("name", "a criterion's name", c.name)]
        values += [(f"answer.options.{j}.value", "an answer's value", o.value) for j, o in enumerate(c.answer.options)]
        values += [(f"answer.levels.{j}", "a level", str(v)) for j, v in enumerate(c.answer.levels)]
        for field, what, text in values:
            if len(text) > MAX_KEY_CHARS:
                return f"criteria.{i}.{field}", (f"{what} has at most {MAX_KEY_CHARS} characters (the app takes no "
                                                 f"longer in an answer), got {len(text)}")  # fmt: skip
    return None


def unfit_answer(protocol: Protocol) -> tuple[str, str] | None:
    """Return the field of the first answer option a study would mishandle, and why; each was taken.

    A blank label: the page showed a button with no words on it (and the report a blank answer). A label
    two answers share: two buttons no annotator could tell apart. An option valued :data:`TIE`: the report's
    majority table counted its votes with the items whose votes tie (an item one annotator called better and
    another worse read as that answer). An ordinary option valued :data:`DONT_KNOW`: the majority vote counted
    its votes with the "I don't know" votes, as one answer. A score that is no finite number: `study export
    --numeric` stopped at the first vote for it with a traceback. A value with no visible character: stored as the
    rating, an answer nobody can read. An ordinary value holding "|": the scale each rating stores joins the values
    with "|", so options "a|b" and "c" read as "a", "b" and "c". Checked where a protocol is loaded for a new study.

    Example:
        >>> p = load_protocol("mousavi-turn")
        >>> tie = p.criteria[0].answer.options[1].model_copy(update={"value": "tie"})
        >>> answer = p.criteria[0].answer.model_copy(update={"options": [p.criteria[0].answer.options[0], tie]})
        >>> unfit_answer(p.model_copy(update={"criteria": [p.criteria[0].model_copy(update={"answer": answer})]}))[0]
        'criteria.0.answer.options.1.value'
    """
    for i, c in enumerate(protocol.criteria):
        labelled: dict[str, str] = {}  # label -> the first answer's value
        for j, o in enumerate(c.answer.options):
            at = f"criteria.{i}.answer.options.{j}"
            if not visible(o.value):
                return f"{at}.value", "an answer needs a value: the study stores it as the rating"
            if "|" in o.value and not o.dont_know:
                return f"{at}.value", ('an answer\'s value may not hold "|": the study stores the answers joined by '
                                       '"|" as the rating\'s scale')  # fmt: skip
            if not visible(o.label):
                return f"{at}.label", "an answer needs a label: the page shows it on its button"
            if (twin := labelled.setdefault(looks(o.label), o.value)) != o.value:
                return f"{at}.label", (f'the label "{o.label}" is also the label of the answer "{twin}": annotators '
                                       "could not tell the two apart")  # fmt: skip
            if o.value == TIE and not o.dont_know:  # "I don't know" is counted apart, as DONT_KNOW
                return f"{at}.value", (
                    f'"{TIE}" is what the report calls an item whose votes tie (no majority), so the votes for this '
                    "answer would be counted with the ties: give it another value (its label can stay)")
            if o.value == DONT_KNOW and not o.dont_know:
                return f"{at}.value", (
                    f'"{DONT_KNOW}" is what the report calls an "I don\'t know" vote, so the votes for this answer '
                    "would be counted with them: give it another value (its label can stay), or dont_know: true if it "
                    "is that option")
            if o.score is not None and not math.isfinite(o.score):
                return f"{at}.score", ("a score is a finite number (`study export --numeric` writes it as the "
                                       f"rating), got {o.score}")  # fmt: skip
    return None


def blank_words(protocol: Protocol) -> tuple[str, str] | None:
    """Return the field of the first text annotators read with no visible character, and why; each was taken.

    The guidelines, a criterion's name (the model checked it with str.strip(), which keeps a zero-width space),
    definition or question, an explanation's label (the page showed a tick box with no words beside it, chosen
    blind and counted in the report) or code (the report's name for its votes). A blank answer label is
    :func:`unfit_answer`'s. Checked where a protocol is loaded for a new study.

    Example:
        >>> p = load_protocol("mousavi-turn")
        >>> bare = p.criteria[0].explanations[1].model_copy(update={"label": " "})
        >>> c = p.criteria[0].model_copy(update={"explanations": [p.criteria[0].explanations[0], bare]})
        >>> blank_words(p.model_copy(update={"criteria": [c]}))
        ('criteria.0.explanations.1.label', 'an explanation needs a label: the page shows it beside its box')
    """
    texts = [("short_guidelines", protocol.short_guidelines, "give the guidelines annotators see on every page")]
    for i, c in enumerate(protocol.criteria):
        texts += [(f"criteria.{i}.name", c.name, "a criterion needs a name: the page shows it, the report's tables "
                   "name its votes by it"),
                  (f"criteria.{i}.definition", c.definition,
                   "a criterion needs a definition: the page shows it with the question"),
                  (f"criteria.{i}.question", c.question, "a criterion needs a question: the page asks it")]  # fmt: skip
        for k, e in enumerate(c.explanations):
            at = f"criteria.{i}.explanations.{k}"
            texts += [(f"{at}.code", e.code,
                       "an explanation needs a code: the report counts the votes that chose it under its code"),
                      (f"{at}.label", e.label,
                       "an explanation needs a label: the page shows it beside its box")]  # fmt: skip
    return next(((field, why) for field, text, why in texts if not visible(text)), None)


def unoffered(protocol: Protocol) -> tuple[str, str] | None:
    """Return the field of the first explanation offered for no answer (``when: []``), and why; it was taken.

    The page offers an explanation only for the answers its ``when`` names: no annotator could choose it.
    Checked where a protocol is loaded for a new study.
    """
    return next(((f"criteria.{i}.explanations.{k}.when", "an explanation is offered only for the answers its when "
                  "names: name one or more") for i, c in enumerate(protocol.criteria)
                 for k, e in enumerate(c.explanations) if not e.when), None)  # fmt: skip


def look_alike(protocol: Protocol) -> tuple[str, str] | None:
    """Return the field of the first name that reads as an earlier one, and why; each was taken.

    Criterion names, answer values and explanation codes that differ only in invisible characters or spaces
    (``Quality`` and ``Quality\u200b``): the study kept their votes apart under names no reader tells apart.
    Checked where a protocol is loaded for a new study.

    Example:
        >>> p = load_protocol("mousavi-turn")
        >>> twin = p.criteria[1].model_copy(update={"name": "Appropriateness\u200b"})
        >>> look_alike(p.model_copy(update={"criteria": [p.criteria[0], twin]}))[0]
        'criteria.1.name'
    """
    groups = [("a criterion's name", [(f"criteria.{i}.name", c.name) for i, c in enumerate(protocol.criteria)])]
    for i, c in enumerate(protocol.criteria):
        groups += [("an answer's value", [(f"criteria.{i}.answer.options.{j}.value", o.value)
                                          for j, o in enumerate(c.answer.options)]),
                   ("an explanation's code", [(f"criteria.{i}.explanations.{k}.code", e.code)
                                              for k, e in enumerate(c.explanations)])]  # fmt: skip
    for what, named in groups:
        seen: dict[str, str] = {}
        for field, name in named:
            if (first := seen.setdefault(looks(name), name)) != name:
                return field, (f"{what} {name!r} reads as {first!r}: they differ only in invisible characters or "
                               "spaces, and a reader could not tell their votes apart")  # fmt: skip
    return None
