"""CPDScore-Dialogue: the two-step dialogue-level method of ComperDial (Section 4, App. B.3).

Step 1 scores each system turn with the turn-level protocol named by
``step1_protocol`` (mean of k samples). Step 2 gives those "Dialogue Turn
Scores" and the responses to the B.3 prompt, which answers an Overall
Dialogue Turn Score, a Dialogue Interaction Score and the Final Score; the
final score is the item's value. The system turns of an item are the response
and every second turn before it (the same speaker), the last ``max_turns``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from dialeval.judges.judge import Judge, Judgement, JudgeStats
from dialeval.judges.protocol import Protocol
from dialeval.metrics.base import MetricInput


@dataclass(frozen=True)
class DialogueJudgement:
    """A dialogue's result: the final score and the two intermediate scores (means over samples)."""

    final: Judgement
    turn: float | None
    interaction: float | None
    turn_scores: tuple[float | None, ...]


def system_turns(item: MetricInput, max_turns: int) -> list[MetricInput]:
    """Return one turn-level input per system turn of the dialogue ending in ``item.response``.

    Example:
        >>> from dialeval.schema import Turn
        >>> ctx = tuple(Turn(speaker=s, text=t) for s, t in [("U", "a"), ("S", "b"), ("U", "c")])
        >>> [(len(x.context), x.response) for x in system_turns(MetricInput("d", ctx), 7)]
        [(1, 'b'), (3, 'd')]
    """
    texts = [t.text for t in item.context] + [item.response]
    idx = list(range(len(texts) - 1, -1, -2))[:max_turns][::-1]
    return [
        MetricInput(response=texts[i], context=item.context[:i], references=(), knowledge=item.knowledge)
        for i in idx
    ]


def _mean(xs: Sequence[float | None]) -> float | None:
    got = [x for x in xs if x is not None]
    return sum(got) / len(got) if got else None


class DialogueJudge:
    """The two steps over one runner: ``step1`` judges turns, ``step2`` the dialogue."""

    def __init__(self, step1: Judge, step2: Judge) -> None:
        self.step1 = step1
        self.step2 = step2

    @property
    def stats(self) -> JudgeStats:
        """Parse counts of both steps added up (``items``: dialogues of step 2)."""
        a, b = self.step1.stats.as_dict(), self.step2.stats.as_dict()
        total = {k: a[k] + b[k] for k in a}
        total["items"], total["items_missing"] = b["items"], b["items_missing"]
        return JudgeStats(**total)

    def judge(self, items: Sequence[MetricInput]) -> list[DialogueJudgement]:
        """Judge each item's dialogue."""
        proto: Protocol = self.step2.protocol
        per_item = [system_turns(it, proto.max_turns) for it in items]
        flat = self.step1.judge([t for turns in per_item for t in turns])
        scores: list[list[float | None]] = []
        pos = 0
        for turns in per_item:
            scores.append([j.value for j in flat[pos : pos + len(turns)]])
            pos += len(turns)
        prompts = []
        for it, turns, sc in zip(items, per_item, scores, strict=True):
            lines = "\n".join(
                f"Turn{i} Score - {'N/A' if s is None else f'{round(s, 2):g}'}" for i, s in enumerate(sc, 1)
            )
            responses = "\n".join(f"Turn{i}: {t.response}" for i, t in enumerate(turns, 1))
            prompts.append(proto.render(it, turn_scores=lines, responses=responses, n_turns=str(len(turns))))
        finals = self.step2.judge_prompts(prompts)
        fields = dict(proto.fields)
        out = []
        for fin, sc in zip(finals, scores, strict=True):
            turn = _mean([self.step2.read_field(t, "turn", fields.get("turn", ())) for t in fin.texts])
            inter = _mean([self.step2.read_field(t, "interaction", fields.get("interaction", ())) for t in fin.texts])
            out.append(DialogueJudgement(final=fin, turn=turn, interaction=inter, turn_scores=tuple(sc)))
        return out
