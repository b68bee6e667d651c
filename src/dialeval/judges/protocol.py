"""Judge protocols: versioned prompt files (data only) and how they are filled in.

A protocol file (YAML) holds ``name``, ``version``, ``citation``, ``scale``,
``labels`` (what precedes the score), ``messages`` (chat templates with
``{{placeholders}}``) and optional ``dimensions`` (one request per dimension,
``{{aspect}}`` and ``{{definition}}`` filled in). Placeholders: ``context``,
``last_turn``, ``response``, ``reference``, ``facts``, ``dialogue_json``.

Example:
    >>> p = load_protocol("lmstyle-appropriateness")
    >>> p.scale, p.version
    (Scale(min=0.0, max=100.0, integer=True), 1)
    >>> from dialeval.metrics.base import MetricInput
    >>> from dialeval.schema import Turn
    >>> ctx = (Turn(speaker="A", text="Frank is getting married."),)
    >>> msgs = p.render(MetricInput(response="Is he really?", context=ctx))
    >>> msgs[0][1].splitlines()[2:5:2]
    ['Speaker: [Frank is getting married.]', 'Response: [Is he really?]']
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from dialeval.errors import InputError, MissingExtraError
from dialeval.judges.parse import Scale
from dialeval.metrics.base import MetricInput
from dialeval.signature import text_sha256

_PLACEHOLDER = re.compile(r"\{\{(\w+)\}\}")


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
    max_turns: int = 0
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


def _protocol_dir() -> Path:
    return Path(str(resources.files("dialeval.judges") / "protocols"))


def protocol_names() -> list[str]:
    """Return the names of the built-in protocols."""
    return sorted(p.stem for p in _protocol_dir().glob("*.yaml"))


def load_protocol(name_or_path: str | Path) -> Protocol:
    """Load a built-in protocol by name or a user's protocol file by path.

    Raises:
        InputError: The file lacks a required field or has a bad value (named).
    """
    try:
        import yaml  # type: ignore[import-untyped]
    except ImportError as exc:
        raise MissingExtraError("pyyaml", extra="judge") from exc
    path = Path(name_or_path)
    if not path.suffix:
        path = _protocol_dir() / f"{name_or_path}.yaml"
        if not path.is_file():
            from dialeval.registry import Registry

            reg: Registry[str] = Registry("protocol")
            for n in protocol_names():
                reg.register(n, n)
            reg.get(str(name_or_path))
    text = path.read_text(encoding="utf-8")
    data: dict[str, Any] = yaml.safe_load(text) or {}

    def need(key: str) -> Any:
        if key not in data:
            raise InputError("missing required field", path=path, field=key)
        return data[key]

    scale = need("scale")
    try:
        msgs = tuple((str(m["role"]), str(m["content"])) for m in need("messages"))
        sc = Scale(float(scale["min"]), float(scale["max"]), bool(scale.get("integer", True)))
    except (KeyError, TypeError, ValueError) as exc:
        raise InputError(f"malformed: {exc!r}", path=path, field="messages/scale") from exc
    if sc.min >= sc.max:
        raise InputError("scale min must be below max", path=path, field="scale")
    return Protocol(
        name=str(need("name")),
        version=int(need("version")),
        citation=str(data.get("citation", "")),
        description=str(data.get("description", "")),
        scale=sc,
        labels=tuple(str(x) for x in data.get("labels", ["score"])),
        messages=msgs,
        sha256=text_sha256(text),
        dimensions=tuple((str(k), str(v)) for k, v in (data.get("dimensions") or {}).items()),
        needs_references=bool(data.get("needs_references", False)),
        levels=int(data.get("levels", 0)),
        fields=tuple((str(k), tuple(v)) for k, v in (data.get("fields") or {}).items()),
        step1_protocol=str(data.get("step1_protocol", "")),
        max_turns=int(data.get("max_turns", 0)),
        path=str(path),
    )
