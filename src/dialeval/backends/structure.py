"""The shape of an answer, and what each backend makes of it: a grammar, a JSON schema, a token mask.

An :class:`AnswerShape` is a sequence of literal text and value slots; each slot
takes one of a finite list of spellings (``"1"`` .. ``"5"``, ``"0.0"`` .. ``"1.0"``).
llama.cpp gets a GBNF grammar of the text (:meth:`AnswerShape.gbnf`), an
OpenAI-compatible server a JSON schema with one property per slot
(:meth:`AnswerShape.json_schema`), transformers a prefix tree of allowed token
sequences (:meth:`AnswerShape.token_trie`). :func:`value_distribution` reads the
probability of every allowed value at a slot from per-token probabilities.

Example:
    >>> shape = AnswerShape.from_template("Score: {score}", {"score": ("0", "1", "2")})
    >>> print(shape.gbnf())
    root ::= "Score: " score
    score ::= "0" | "1" | "2"
    >>> shape.read("Score: 2"), shape.read("Score: 3")
    ({'score': '2'}, None)
    >>> shape.read('```json {"score": 1} ```')
    {'score': '1'}
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

_SLOT = re.compile(r"\{(\w+)\}")

#: A prefix tree of token ids: child id -> subtree; the key -1 marks the end of an allowed answer.
TokenTrie = dict[int, "TokenTrie"]


@dataclass(frozen=True)
class Slot:
    """A value in the answer: its name and its allowed spellings."""

    name: str
    values: tuple[str, ...]


@dataclass(frozen=True)
class AnswerShape:
    """Literal text and value slots, in order; ``score`` names the slot whose distribution is read.

    Attributes:
        parts: Literal strings and :class:`Slot` objects.
        score: The score slot's name.
    """

    parts: tuple[str | Slot, ...]
    score: str = "score"

    @classmethod
    def from_template(cls, template: str, values: Mapping[str, Sequence[str]], score: str = "score") -> AnswerShape:
        """Build a shape from ``"label: {slot}"`` text and each slot's spellings."""
        parts: list[str | Slot] = []
        pos = 0
        for m in _SLOT.finditer(template):
            if m.start() > pos:
                parts.append(template[pos : m.start()])
            parts.append(Slot(m.group(1), tuple(values[m.group(1)])))
            pos = m.end()
        if pos < len(template):
            parts.append(template[pos:])
        return cls(tuple(parts), score)

    @property
    def slots(self) -> tuple[Slot, ...]:
        """The value slots, in order."""
        return tuple(p for p in self.parts if isinstance(p, Slot))

    def slot(self, name: str) -> Slot:
        """Return the slot called ``name``."""
        return next(s for s in self.slots if s.name == name)

    def key(self) -> str:
        """Return a stable string naming the shape (part of a request's cache key)."""
        return json.dumps([p if isinstance(p, str) else [p.name, list(p.values)] for p in self.parts] + [self.score])

    def after(self, name: str) -> str:
        """Return the literal text that follows slot ``name`` ("" when it ends the answer)."""
        for i, p in enumerate(self.parts):
            if isinstance(p, Slot) and p.name == name:
                nxt = self.parts[i + 1] if i + 1 < len(self.parts) else ""
                return nxt if isinstance(nxt, str) else ""
        raise KeyError(name)

    def gbnf(self) -> str:
        """Return a llama.cpp GBNF grammar that accepts exactly the answers of this shape."""
        seq = " ".join(json.dumps(p) if isinstance(p, str) else f"{_rule(p.name)}" for p in self.parts)
        rules = [f"root ::= {seq}"]
        for s in dict.fromkeys(self.slots):
            rules.append(f"{_rule(s.name)} ::= " + " | ".join(json.dumps(v) for v in s.values))
        return "\n".join(rules)

    def json_schema(self) -> dict[str, Any]:
        """Return a JSON schema of an object with one property per slot (values as JSON numbers)."""
        props = {s.name: {"enum": [json.loads(v) for v in s.values]} for s in self.slots}
        return {"type": "object", "properties": props, "required": list(props), "additionalProperties": False}

    def response_format(self) -> dict[str, Any]:
        """Return the OpenAI ``response_format`` for :meth:`json_schema`."""
        return {"type": "json_schema", "json_schema": {"name": "answer", "schema": self.json_schema(), "strict": True}}

    def _regex(self) -> re.Pattern[str]:
        out = []
        for i, p in enumerate(self.parts):
            if isinstance(p, str):
                out.append(re.escape(p))
            else:
                alts = "|".join(re.escape(v) for v in sorted(p.values, key=len, reverse=True))
                out.append(f"(?P<s{i}>{alts})")
        return re.compile("".join(out))

    def read(self, text: str) -> dict[str, str] | None:
        """Return each slot's spelling from an answer of this shape (text or JSON), or None."""
        m = self._regex().fullmatch(text.strip())
        if m:
            return {p.name: m.group(f"s{i}") for i, p in enumerate(self.parts) if isinstance(p, Slot)}
        return self._read_json(text)

    def _read_json(self, text: str) -> dict[str, str] | None:
        start, end = text.find("{"), text.rfind("}")
        if start < 0 or end < start:
            return None
        try:
            data = json.loads(text[start : end + 1])
        except ValueError:
            return None
        if not isinstance(data, dict):
            return None
        out: dict[str, str] = {}
        for s in self.slots:
            v = data.get(s.name)
            if isinstance(v, bool) or not isinstance(v, (int, float)):
                return None
            spelled = next((x for x in s.values if json.loads(x) == v), None)
            if spelled is None:
                return None
            out[s.name] = spelled
        return out

    def score_offset(self, text: str) -> int:
        """Return the character offset of the score slot's value in ``text`` (-1 when not found).

        Works on the text answer and on the JSON one (``"score": 4``), fences and all.
        """
        m = self._regex().search(text)
        if m:
            i = next(i for i, p in enumerate(self.parts) if isinstance(p, Slot) and p.name == self.score)
            return m.start(f"s{i}")
        j = re.search(rf'"{re.escape(self.score)}"\s*:\s*', text)
        return j.end() if j else -1

    def after_score(self, text: str) -> str:
        """Return the literal that ends the score value in ``text``, for :func:`value_distribution`.

        A text answer's is the template's; a JSON answer's is the first character after the number (``}``, or
        ``,`` when another property follows). A token that begins with it ends the value there.

        Example:
            >>> shape = AnswerShape.from_template("Score: {score}", {"score": ("8", "80", "85")})
            >>> shape.after_score("Score: 85"), shape.after_score('{"score": 85}'), shape.after_score('{"score":8 ,')
            ('', '}', ',')
        """
        if self._regex().fullmatch(text.strip()):
            return self.after(self.score)
        offset = self.score_offset(text)
        number = re.match(r"[-+0-9.eE]*", text[offset:]) if offset >= 0 else None
        return text[offset + number.end() :].lstrip()[:1] if number else self.after(self.score)

    def token_trie(self, encode: Callable[[str], list[int]]) -> TokenTrie:
        """Return the prefix tree of the token sequences of every allowed answer.

        Each literal and each spelling is encoded on its own and the pieces are joined,
        so the model is held to one tokenization of each answer.
        """
        pieces: list[list[list[int]]] = [
            [encode(p)] if isinstance(p, str) else [encode(v) for v in p.values] for p in self.parts
        ]
        root: TokenTrie = {}

        def grow(node: TokenTrie, depth: int) -> None:
            if depth == len(pieces):
                node[-1] = {}
                return
            for seq in pieces[depth]:
                cur = node
                for t in seq:
                    cur = cur.setdefault(t, {})
                grow(cur, depth + 1)

        grow(root, 0)
        return root


def _rule(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-") or "v"


@dataclass(frozen=True)
class ValueDistribution:
    """The probability of each allowed value at a slot.

    Attributes:
        probs: ``{value: probability}``, summing to 1.
        exact: False when some value off the decoded path stands for several values (see
            :func:`value_distribution`).
        decoded: The value that was generated.
    """

    probs: dict[float, float]
    exact: bool
    decoded: float

    @property
    def expected(self) -> float:
        """Sum of value x probability."""
        return sum(v * p for v, p in self.probs.items())

    @property
    def argmax(self) -> float:
        """The most probable value (the lower one on a tie)."""
        return max(sorted(self.probs), key=lambda v: self.probs[v])


def value_distribution(
    tokens: Sequence[str], probs: Sequence[Mapping[str, float]], offset: int, values: Sequence[str], after: str
) -> ValueDistribution | None:
    """Return the distribution of a slot's values from per-token probabilities.

    ``tokens`` are the generated tokens, ``probs[i]`` the probabilities of the tokens
    allowed at position i (renormalised here over the ones that continue an allowed
    value or end one), ``offset`` the character offset of the value in the joined
    tokens, ``after`` the literal that follows the value ("" at the end of the answer).

    A value of one token (1-5, 0-2) is read at one position: exact. A value of several
    tokens ("85" on 0-100, "0.7" on 0-1) is read along the generated path: at each
    position the allowed next tokens share the probability; a token that leaves the
    path starts several values and stands for their mean (``exact=False``), so the
    expected score is exact only up to that averaging.

    Example:
        >>> d = value_distribution(["4", ""], [{"4": 0.5, "2": 0.25, "x": 0.25}, {"": 1.0}], 0,
        ...                        ["1", "2", "3", "4", "5"], "")
        >>> {v: round(p, 4) for v, p in d.probs.items()}, round(d.expected, 4), d.argmax, d.exact
        ({4.0: 0.6667, 2.0: 0.3333}, 3.3333, 4.0, True)
    """
    start, i = 0, 0
    while i < len(tokens) and start + len(tokens[i]) <= offset:
        start += len(tokens[i])
        i += 1
    if i >= len(tokens) or start > offset:
        return None
    lead = "".join(tokens)[start:offset]
    exact = [True]
    decoded = [""]

    def mean_of(prefix: str) -> float:
        got = [float(v) for v in values if v.startswith(prefix)]
        return sum(got) / len(got)

    def ends(cont: str) -> bool:
        if not after:
            return cont == "" or cont.startswith("<")
        return cont != "" and (after.startswith(cont) or cont.startswith(after[0]))

    def walk(prefix: str, pos: int, lead: str) -> dict[float, float]:
        if pos >= len(tokens) or pos >= len(probs):
            decoded[0] = prefix
            return {float(prefix): 1.0} if prefix in values else {mean_of(prefix): 1.0}
        path = tokens[pos][len(lead):] if tokens[pos].startswith(lead) else None
        on_path = path is not None and path != "" and any(v.startswith(prefix + path) for v in values)
        out: dict[float, float] = {}
        for tok, p in probs[pos].items():
            if not tok.startswith(lead) or p <= 0:
                continue
            cont = tok[len(lead):]
            if cont and any(v.startswith(prefix + cont) for v in values):
                if on_path and cont == path:
                    for v, q in walk(prefix + cont, pos + 1, "").items():
                        out[v] = out.get(v, 0.0) + p * q
                    continue
                nxt = prefix + cont
                if nxt in values and not any(v != nxt and v.startswith(nxt) for v in values):
                    val = float(nxt)
                else:  # the token begins several values: it stands for their mean
                    exact[0] = False
                    val = mean_of(nxt)
                out[val] = out.get(val, 0.0) + p
            elif prefix in values and ends(cont):
                out[float(prefix)] = out.get(float(prefix), 0.0) + p
        if not on_path:
            decoded[0] = prefix
        total = sum(out.values())
        if total <= 0:
            decoded[0] = prefix
            return {float(prefix): 1.0} if prefix in values else {mean_of(prefix): 1.0}
        return {v: q / total for v, q in out.items()}

    dist = walk("", i, lead)
    if not decoded[0] or decoded[0] not in values:
        return None
    return ValueDistribution(dist, exact[0], float(decoded[0]))
