"""Read a score out of a judge model's free text, or say why there is none.

Rules, in order:

1. A number after one of the protocol's labels (``Appropriateness Score: 85``,
   ``overall - 4``, ``the score is 1``). When the score is stated more than
   once, the **last** labelled statement wins (models restate a final answer).
   Numbers that are not after a label (e.g. in the reasoning) are ignored. A label and then only
   whitespace (``Score 4``) reads the number only where the statement ends with it: the line's end or
   punctuation (``Score 4.``, ``Score 4/5``, ``Score 3 - good``). With no separator but a space, a word after
   the number is prose (``the score 3 times``, ``Score 4 because ...``): no score from it, so an earlier
   labelled statement wins or there is none. A label is a whole word: ``Subscore: 2`` is not ``score: 2``.
2. Otherwise, an answer that is nothing but a number (``"2"``, ``"0.7."``).
   A range such as ``1-5``, ``3 to 4`` or ``3 or 4`` after a label is the scale echoed back or
   no one score, not a score.
3. ``x/y`` and ``x out of y``: taken as ``x`` when ``y`` is the scale's top;
   on a 0-1 scale read as the fraction ``x/y`` (``8/10`` -> 0.8); otherwise a failure.
4. A value outside the scale is a failure (never clipped).
5. A dash right after a label separates (``overall - 4``, ``overall -4``, ``Score - 3``), and so does
   one with no digit right after it (``Score: - 3``; ``Score: 3 - good`` reads 3). Any other dash right
   before the digits is the sign (``Score: -3``, ``Rating:-3``, ``Score - -3``), and so is every one on a
   scale below zero (``Score: -2``). A sign the scale has no room for is a failure by rule 4 (``Score: -3``
   on 1-5), never read as 3; an en dash as a sign (``Score: –3``) is no number: no score. A minus sign
   (U+2212) right before the digits is always the sign (``Score: −2`` is -2; on 1-5 it is out of range,
   never 2, and so is ``overall −4``), and never a separator nor a range's dash elsewhere (``Score: 1−5`` is a
   range; ``Score: − 3`` is no score).
6. A comma between digits (``3,5``: a decimal comma, or ``1,000``: digit grouping) is a failure:
   which it is cannot be told, and reading the digits before the comma gave 3 and 1.
7. So is a number in exponent notation (``1e3``: no judge's score on a scale, and reading the digits
   before the ``e`` gave 1) and one with a second point (``3.5.2`` and ``3..5`` are no number; they gave 3.5
   and 3).
   A full stop after the number ends the sentence (``Score: 4.``).
8. A digit is any Unicode decimal digit, as Python's regular expressions and ``float`` take it: a Chinese-locale judge's
   full-width digits (U+FF10-U+FF19) read as the ASCII ones, its full-width colon (U+FF1A) separates as ``:``
   does and its full-width solidus (U+FF0F) is the ``/`` of rule 3 (full-width 4/10 on 1-5 is no score, never 4).
   ``-0`` is the score 0, never -0.0.

Example:
    >>> s = Scale(0, 1, integer=False)
    >>> parse_score("Relevant. Therefore, the score is 1.", s, ["score"]).value
    1.0
    >>> parse_score("score: 8/10", s, ["score"]).value
    0.8
    >>> parse_score("score: 7", s, ["score"]).reason
    'out of range: 7 not in [0, 1]'
    >>> parse_score("score: 0,8", s, ["score"]).reason
    'a comma between digits: 0,8 (a decimal comma or digit grouping?)'
    >>> to_level(0.85, 10)
    9
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

#: What the parser reads from an answer, in judge signatures (``judge_parser``): a change to the rules above changes
#: the values, so it must change the signature, or the score cache serves values read the old way. 2: numbers taken
#: whole (exponent, second point, sign), "Score 4", whole-word labels, the bare-number rule for the final score only.
#: 3: the full-width colon and solidus (rule 8), -0 read as 0.
PARSER_VERSION = 3
_NUM = r"[-+\u2212]?\d+(?:\.\d+)?"
#: A number as written, taken whole so that no part of it is read as the score: comma-joined digits ("3,5",
#: "1,000": 3 and 1 were read), more points ("3.5.2": 3.5, "3..5": 3) and an exponent ("1e3": 1); _resolve refuses
#: those. U+2212 (a minus sign) is a sign ("Score: −2" was no score).
_NUM_WRITTEN = r"[-+\u2212]?\d+(?:[.,]+\d+)*(?:[eE][-+]?\d+)?"
#: A dash right before a digit is the sign ("Score: -3" was read as 3), except right after the label (_LEAD_DASH).
_SEP = r"(?:\s*(?:is|of|was|would be|:|\uff1a|=|[-–](?!\d)|\*\*|\[)\s*)*"
#: On a scale with no sign a dash right after the label separates: "overall -4" is 4.
_LEAD_DASH = r"(?:\s*[-–](?=\d))?"
_FRACTION = rf"(?:\s*(?:/|\uff0f|out of)\s*(?P<den>{_NUM}))?"
#: "Humanness: 1-5" echoes the scale, it is not a score; nor is "Score: 3 to 4" or "3 or 4" (read as 3)
_NOT_RANGE = r"(?!\s*[-–\u2212]\s*[-+\u2212]?\d|\s+(?:to|or)\s+[-+\u2212]?\d)"
#: After a label and only whitespace ("Score 4") the number ends the statement: the line's end or punctuation.
_ENDS = re.compile(r"[ \t]*(?:\n|\Z|[^\w\s])")


@dataclass(frozen=True)
class Scale:
    """A score range; ``integer`` scales take single-token values (for expected scores)."""

    min: float
    max: float
    integer: bool = True

    def tokens(self) -> list[str]:
        """Return the score values as strings, for integer scales of at most 11 values."""
        lo, hi = math.ceil(self.min), math.floor(self.max)  # int(0.5) gave "0", a token outside a 0.5-5.5 scale
        if not self.integer or hi - lo > 10:
            return []
        return [str(v) for v in range(lo, hi + 1)]


@dataclass(frozen=True)
class Parsed:
    """A parse result: a value, or None with the reason.

    Attributes:
        value: The score, inside the scale.
        reason: ``"ok"`` or why no score was read.
        start: Character offset of the number in the text (-1 when none).
        raw: The matched number text.
    """

    value: float | None
    reason: str = "ok"
    start: int = -1
    raw: str = ""


def _fmt(x: float) -> str:
    return str(int(x)) if x == int(x) else str(x)


def _resolve(num: str, den: str | None, scale: Scale, start: int) -> Parsed:
    if "," in num:
        return Parsed(None, f"a comma between digits: {num} (a decimal comma or digit grouping?)", start, num)
    if num.count(".") > 1:
        return Parsed(None, f"not a number: {num}", start, num)
    if "e" in num.lower():
        return Parsed(None, f"a number in exponent notation: {num}", start, num)
    value = float(num.replace("\u2212", "-"))
    if den is not None:
        d = float(den)
        if d == scale.max:
            pass
        elif scale.min == 0 and scale.max == 1 and d > 0:
            value = value / d
        else:
            return Parsed(None, f"fraction {num}/{den} does not match the scale", start, num)
    if not math.isfinite(value) or not scale.min <= value <= scale.max:
        return Parsed(None, f"out of range: {num} not in [{_fmt(scale.min)}, {_fmt(scale.max)}]", start, num)
    return Parsed(value + 0.0, "ok", start, num)  # -0.0 + 0.0 is 0.0


def parse_score(text: str, scale: Scale, labels: Sequence[str], *, bare: bool = True) -> Parsed:
    """Return the score stated in ``text`` after one of ``labels`` (see the module rules).

    ``bare=False`` skips rule 2: a number alone is not this score (an answer's other fields, such as a two-step
    judge's turn score, whose bare answer is the final score).
    """
    if labels:
        label_re = "|".join(re.escape(lbl) for lbl in labels)
        # the number is atomic: "Score: 10-100" backed off to "1", which no range follows, and read 1
        sep = _SEP if scale.min < 0 else _LEAD_DASH + _SEP
        pattern = re.compile(
            rf"(?<!\w)(?:{label_re})(?P<sep>{sep}|\s+)(?P<num>(?>{_NUM_WRITTEN})){_NOT_RANGE}{_FRACTION}", re.IGNORECASE
        )
        # "the score 3 times": a bare space, then a word after the number, is prose (rule 1)
        hits = [m for m in pattern.finditer(text) if not m["sep"].isspace() or _ENDS.match(text, m.end())]
        if hits:
            last = hits[-1]
            return _resolve(last["num"], last["den"], scale, last.start("num"))
    alone = re.fullmatch(rf"[\s*\[(]*(?P<num>{_NUM_WRITTEN}){_FRACTION}[\s*\]).]*", text) if bare else None
    if alone:
        return _resolve(alone["num"], alone["den"], scale, alone.start("num"))
    return Parsed(None, "no score found")


def to_level(value: float, levels: int) -> int:
    """Map a 0-1 score to levels 1..``levels`` (L1: [0, 0.1), ..., L10: [0.9, 1])."""
    return min(levels, int(value * levels) + 1)
