"""Context perturbations: the dialogue around a response changes, the response does not.

A context perturbation has the same arguments as a response perturbation
(``response, context, rng, pool``) but returns a :class:`Perturbed`: the
(unchanged) response, the context it is now scored with, and turns that follow
the response. ``None`` means it does not apply.

* ``speaker-swap``: the two parties' speaker labels are exchanged in every
  context turn, so the turns the user said are now attributed to the responder
  and the other way round; the response keeps its speaker.
* ``sentiment-tail-positive`` / ``sentiment-tail-negative``: DiQAD's user
  sentiment expressions (paper 003, Sec. 5, "User Sentiment Influence", Table 5):
  after the response the user thanks the system and it answers
  (``ok thanks!`` / ``you are welcome!``), or the user disagrees
  (``I don't think so.``). DiQAD adds them to the end of the dialogue and shows
  that a session-level evaluator rates the dialogue higher after the positive
  tail and much lower after the negative one. Metrics that read only the
  context *before* the response and the response itself cannot see these turns.

Example:
    >>> import random
    >>> from dialeval.schema import Turn
    >>> ctx = (Turn(speaker="A", text="hi"), Turn(speaker="B", text="hello"), Turn(speaker="A", text="jazz?"))
    >>> out = speaker_swap("sure", ctx, random.Random(0), [])
    >>> [t.speaker for t in out.context], out.response, responder(ctx)
    (['B', 'A', 'B'], 'sure', 'B')
    >>> [(t.speaker, t.text) for t in sentiment_tail_negative("sure", ctx, random.Random(0), []).after]
    [('A', "I don't think so.")]
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

from dialeval.schema import Turn

#: DiQAD's positive sentiment expression: a user turn and the system's answer (paper 003, footnote 5).
POSITIVE_TAIL = ("ok thanks!", "you are welcome!")
#: DiQAD's negative sentiment expression: one user turn (paper 003, footnote 6).
NEGATIVE_TAIL = ("I don't think so.",)


@dataclass(frozen=True)
class Perturbed:
    """What a perturbation produced for one item.

    Attributes:
        response: The response to score (unchanged by context perturbations).
        context: The turns before the response that it is scored with.
        after: Turns that follow the response in the perturbed dialogue (e.g. a user's reaction).

    Example:
        >>> Perturbed("yes", ()).after
        ()
    """

    response: str
    context: tuple[Turn, ...]
    after: tuple[Turn, ...] = ()


def responder(context: Sequence[Turn]) -> str:
    """Return the speaker of the response: the latest context speaker other than the last one.

    With a single-speaker context it is ``"B"`` (``"A"`` if the context's speaker is ``"B"``).

    Example:
        >>> from dialeval.schema import Turn
        >>> responder([Turn(speaker="user", text="hi")]), responder([Turn(speaker="B", text="hi")])
        ('B', 'A')
    """
    if not context:
        return "B"
    last = context[-1].speaker
    for turn in reversed(context):
        if turn.speaker != last:
            return turn.speaker
    return "A" if last == "B" else "B"


def speaker_swap(response: str, context: tuple[Turn, ...], rng: random.Random, pool: Sequence[str]) -> Perturbed | None:
    """Exchange the speakers of the context: the last context speaker and the responder trade labels.

    Every context turn keeps its text and position; a turn of the last speaker
    (the user the response answers) is relabelled as the responder's and vice
    versa, so the response now follows a turn of its own speaker. Third parties
    keep their labels. An empty context gives None. ``rng`` and ``pool`` are
    unused (deterministic).

    Example:
        >>> import random
        >>> from dialeval.schema import Turn
        >>> out = speaker_swap("me too", (Turn(speaker="A", text="i love jazz"),), random.Random(0), [])
        >>> [(t.speaker, t.text) for t in out.context]
        [('B', 'i love jazz')]
    """
    if not context:
        return None
    user, system = context[-1].speaker, responder(context)
    swap = {user: system, system: user}
    new = tuple(Turn(speaker=swap.get(t.speaker, t.speaker), text=t.text) for t in context)
    return Perturbed(response=response, context=new)


def _tail(context: tuple[Turn, ...], texts: Sequence[str]) -> tuple[Turn, ...]:
    user = context[-1].speaker if context else "A"
    system = responder(context)
    return tuple(Turn(speaker=user if k % 2 == 0 else system, text=t) for k, t in enumerate(texts))


def sentiment_tail_positive(
    response: str, context: tuple[Turn, ...], rng: random.Random, pool: Sequence[str]
) -> Perturbed | None:
    """Append DiQAD's positive user feedback after the response: ``ok thanks!`` and ``you are welcome!``.

    The user (the last context speaker) says ``ok thanks!`` and the responder
    answers ``you are welcome!``. Response and context are unchanged.

    Example:
        >>> import random
        >>> out = sentiment_tail_positive("sure", (), random.Random(0), [])
        >>> [(t.speaker, t.text) for t in out.after]
        [('A', 'ok thanks!'), ('B', 'you are welcome!')]
    """
    return Perturbed(response=response, context=context, after=_tail(context, POSITIVE_TAIL))


def sentiment_tail_negative(
    response: str, context: tuple[Turn, ...], rng: random.Random, pool: Sequence[str]
) -> Perturbed | None:
    """Append DiQAD's negative user feedback after the response: the user says ``I don't think so.``.

    Example:
        >>> import random
        >>> out = sentiment_tail_negative("sure", (), random.Random(0), [])
        >>> out.response, out.context, [t.text for t in out.after]
        ('sure', (), ["I don't think so."])
    """
    return Perturbed(response=response, context=context, after=_tail(context, NEGATIVE_TAIL))
