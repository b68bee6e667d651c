"""Open-ended vs closed-ended items (DialogADV, paper 002) and the per-subset score-distribution figure.

DialogADV annotates an example as *closed-ended* when the response to be
generated has no semantic diversity given the history (a location, a time, a
yes/no), else *open-ended*. Without annotators, :func:`question_subset` applies a
rule to the last context turn:

1. Its last sentence ending in ``?`` is the question (none: **open-ended**;
   a statement leaves the reply open).
2. Leading fillers (``so``, ``and``, ``but``, ``well``, ``oh``, ``ok``, ``yeah``,
   ``hey``, ``haha``, ``lol``, commas) are dropped.
3. An opinion or elaboration question is **open-ended**: it (or a comma-separated
   clause of it, as in ``i like soccer , what about you ?``) starts with
   ``why``, ``how come``, ``what about``, ``how about``, ``what do you think``,
   ``what do you like``, ``what kind``, ``what's your favorite``, ``how do you feel``,
   ``any thoughts``, ``what would you``, ``how would you``, ``how do you like``, or
   contains ``you think``, ``your opinion``, ``your favorite`` or ``thoughts on``.
4. Any other question (yes/no, e.g. ``do you ...?``, ``is it ...?``; factual
   wh-, e.g. ``who``, ``when``, ``where``, ``which``, ``how many``, ``what is``;
   a declarative ``you like jazz?``) is **closed-ended**.

Records that already carry a ``subset`` tag (``--subsets tags``) keep it. ``--subsets judge``
asks an LLM judge instead (:func:`judge_subsets`, protocol ``stress/protocols/open-closed.yaml``),
once per context; a context whose answer does not parse stays untagged, and is counted.

Example:
    >>> question_subset("i saw the film . who directed it ?")
    'closed-ended'
    >>> question_subset("So, what do you think about jazz?")
    'open-ended'
    >>> question_subset("I went to a concert yesterday.")
    'open-ended'
    >>> question_subset("i like soccer , how about you ?")
    'open-ended'
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from dialeval.schema import Candidate, Dialogue, Score

CLOSED, OPEN = "closed-ended", "open-ended"
SUBSET_MODES = ("rule", "judge", "tags", "none")
#: The subset judge's protocol file (``--subsets judge``; ``-p subsets.protocol=PATH`` for another).
SUBSET_PROTOCOL = Path(__file__).with_name("protocols") / "open-closed.yaml"

_FILLER = re.compile(r"^(?:(?:so|and|but|well|oh|ok|okay|yeah|yes|no|hey|haha|lol|hmm|um|wow)\b[\s,]*|[\s,]+)+")
_OPEN_START = (
    "why",
    "how come",
    "what about",
    "how about",
    "what do you think",
    "what do you like",
    "what kind",
    "what's your favorite",
    "what 's your favorite",
    "what is your favorite",
    "how do you feel",
    "any thoughts",
    "what would you",
    "how would you",
    "how do you like",
)
_OPEN_ANYWHERE = ("you think", "your opinion", "your favorite", "thoughts on")


def question_subset(text: str) -> str:
    """Return ``"closed-ended"`` or ``"open-ended"`` for the turn ``text`` the response answers (rule above).

    Example:
        >>> question_subset("Do you like jazz?"), question_subset("why do you like jazz ?")
        ('closed-ended', 'open-ended')
    """
    sentences = [s.strip() for s in re.findall(r"[^.!?]*\?", text) if s.strip(" ?")]
    if not sentences:
        return OPEN
    q = sentences[-1].lower().replace("’", "'")
    clauses = [_FILLER.sub("", part).strip() for part in q.split(",")]
    if any(c.startswith(_OPEN_START) for c in clauses) or any(p in q for p in _OPEN_ANYWHERE):
        return OPEN
    return CLOSED


def tag_subsets(
    candidates: Sequence[Candidate], dialogues: Mapping[str, Dialogue], mode: str = "rule"
) -> list[Candidate]:
    """Return the candidates with a ``subset`` tag: by the rule on the last context turn, or as given.

    ``mode="rule"`` tags every candidate with :func:`question_subset` of its last
    context turn (an empty context is open-ended); ``"tags"`` keeps the records'
    own ``subset`` tags (items without one are left untagged); ``"none"`` drops them.

    Example:
        >>> from dialeval.schema import Candidate, Dialogue, Turn
        >>> d = {"x": Dialogue(id="x", turns=[Turn(speaker="A", text="Where is it?")])}
        >>> c = [Candidate(id="x:s", dialogue_id="x", turn_index=1, system="s", text="Paris.")]
        >>> tag_subsets(c, d)[0].tags["subset"]
        'closed-ended'
    """
    if mode not in SUBSET_MODES:
        from dialeval.errors import InputError

        raise InputError(f'unknown subset mode "{mode}"; use {", ".join(SUBSET_MODES)}', field="--subsets")
    if mode == "tags":
        return list(candidates)
    if mode == "judge":
        return judge_subsets(candidates, dialogues)[0]
    out = []
    for c in candidates:
        tags = {k: v for k, v in c.tags.items() if k != "subset"}
        if mode == "rule":
            context = dialogues[c.dialogue_id].context(c.turn_index)
            tags["subset"] = question_subset(context[-1].text) if context else OPEN
        out.append(c.model_copy(update={"tags": tags}))
    return out


def judge_subsets(
    candidates: Sequence[Candidate],
    dialogues: Mapping[str, Dialogue],
    params: Mapping[str, str] | None = None,
    progress: Callable[[int], None] | None = None,
) -> tuple[list[Candidate], Counter[str], Counter[str]]:
    """Tag each candidate with its context's subset as an LLM judge classifies it; count the outcomes and the causes.

    The judge (``judge:custom`` with :data:`SUBSET_PROTOCOL`, any backend through
    ``params`` such as ``backend``, ``model``, ``base_url``, ``k``) answers once per
    context: a mean answer of 0.5 or more is open-ended, below is closed-ended; a
    context whose answers do not parse leaves its candidates untagged (counted as
    ``unparsed``, the third value counting their causes), never a default. ``progress`` is called with the contexts
    judged after each batch.
    """
    from dialeval.judges.metric import CustomJudge
    from dialeval.metrics import load_builtin_metrics
    from dialeval.metrics.resolve import coerce_params
    from dialeval.scoring import score_candidates

    load_builtin_metrics()
    given = dict(params or {})
    protocol = given.pop("protocol", "") or str(SUBSET_PROTOCOL)
    judge = CustomJudge(protocol=protocol, **coerce_params(CustomJudge, given, strict=True))
    first = {c.context_id: c for c in reversed(candidates)}  # one item per context
    verdict: dict[str, str | None] = {}
    why: Counter[str] = Counter()
    for s in score_candidates(judge, list(first.values()), dialogues, progress=progress):
        if s.metric == "judge:custom":
            verdict[str(s.context_id)] = None if s.value is None else (OPEN if s.value >= 0.5 else CLOSED)
            why.update([str(s.extras.get("error", "no reason given"))] if s.value is None else [])
    counts: Counter[str] = Counter(v or "unparsed" for v in verdict.values())
    out = []
    for c in candidates:
        tags = {k: v for k, v in c.tags.items() if k != "subset"}
        if (label := verdict.get(c.context_id)) is not None:
            tags["subset"] = label
        out.append(c.model_copy(update={"tags": tags}))
    return out, counts, why


def distribution_label(score: Score, perturbation: str) -> str:
    r"""Box label of a score in the subset figure: its subset, then ``original`` or ``perturbed``.

    Example:
        >>> s = Score(item_id="d:s~negation", metric="f1", value=0.1, tags={"subset": "open-ended"})
        >>> distribution_label(s, "negation")
        'open-ended\nperturbed'
    """
    from dialeval.stress.run import perturbation_of

    kind = "perturbed" if perturbation_of(score.item_id) == perturbation else "original"
    return f"{score.tags.get('subset', 'untagged')}\n{kind}"


def subset_distribution_png(scores: Sequence[Score], perturbation: str, metrics: Sequence[str] | None = None) -> bytes:
    r"""Draw DialogADV Fig. 4 for a stress run: each metric's scores, original vs perturbed, per subset.

    Reuses :func:`dialeval.report.charts.distribution_chart` (grey-scale box
    plots, one panel per metric output, n per box, boxes ordered subset then
    original / perturbed). Only originals (an id that ends in no ``~<perturbation>``) and the copies made by
    ``perturbation`` are drawn; the caption or file name must say which.

    Example:
        >>> s = [Score(item_id=i, metric="f1", value=v, tags={"subset": "open-ended"})
        ...      for i, v in [("a", 0.5), ("a~negation", 0.2)]]
        >>> subset_distribution_png(s, "negation")[:4] == b"\x89PNG"
        True
    """
    from dialeval.report.charts import distribution_chart
    from dialeval.stress.run import perturbation_of

    keep = [s for s in scores if perturbation_of(s.item_id) in (None, perturbation)]
    names = list(metrics) if metrics else list(dict.fromkeys(s.metric for s in keep if s.value is not None))
    return distribution_chart(keep, names, lambda s: distribution_label(s, perturbation))
