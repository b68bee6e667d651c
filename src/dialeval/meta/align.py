"""Join metric scores and human ratings into one table, counting everything that does not match.

One row per item: a column per metric, the human mean for one dimension (over the
annotators who gave a number), the number of those annotators, and the group keys
(``context_id``, ``dialogue_id``, ``system`` and one ``tag:<key>`` column per tag). An item whose scores name no
context or dialogue is its own; ``context_named`` and ``dialogue_named`` say which do (``--by context_id`` groups
the others as one, the dialogue level leaves them out).
Ratings marked "I don't know" or without a value are left out of the means and
counted; items scored but not rated (or rated but not scored) are counted too.

Example:
    >>> from dialeval.schema import Rating, Score
    >>> scores = [Score(item_id=i, metric="len", value=v, context_id="c", system=i) for i, v in [("a", 1), ("b", 2)]]
    >>> ratings = [Rating(item_id="a", dimension="Overall", annotator=w, value=v) for w, v in [("w1", 3), ("w2", 4)]]
    >>> t = align(scores, ratings, dimension="Overall")
    >>> t.items[["len", "human", "n_annotators"]].to_dict("records")
    [{'len': 1.0, 'human': 3.5, 'n_annotators': 2}, {'len': 2.0, 'human': nan, 'n_annotators': 0}]
    >>> t.counts["scores_without_rating"]
    1
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import pandas as pd

from dialeval.errors import InputError, closest
from dialeval.schema import Candidate, Rating, Score

#: The columns of :attr:`Aligned.items` beside the metrics' (the human mean, its annotators, the group keys): a
#: metric of one of these names met its column there. "human" and "n_annotators" were a pandas ValueError
#: ("columns overlap"), "system" and "context_id" one from groupby ("not 1-dimensional"), and "dialogue_id" replaced
#: the dialogue of every item, silently changing every other metric's dialogue-level figures.
KEY_COLUMNS = {"context_id": "the context of each item", "dialogue_id": "the dialogue of each item",
               "context_named": "whether each item's scores name its context",
               "dialogue_named": "whether each item's scores name its dialogue",
               "system": "the system of each item", "human": "the human mean",
               "n_annotators": "the annotators of each item"}
#: How the column of a tag starts (``tag:task``); a metric named so was taken as a tag by ``--by``.
TAG_PREFIX = "tag:"


def reserved_name_why(metric: str) -> str:
    """Return why ``metric`` cannot name a metric: it names another column of the aligned table, or is blank; else "".

    Blank: empty, or with spaces at its ends (``-m`` strips the names it is given: it picked neither).

    Example:
        >>> reserved_name_why("system")
        'metric name "system" is taken by the system of each item (a column of the table correlated): rename the metric'
        >>> reserved_name_why("tag:task"), reserved_name_why("length")
        ('metric name "tag:task" is taken by the tag task (a column of the table correlated): rename the metric', '')
        >>> reserved_name_why(" bleu")
        'metric name " bleu" has spaces at its ends: -m could not pick it; rename the metric'
    """
    if metric != metric.strip() or not metric:
        said = "is empty" if not metric else "has spaces at its ends"
        return f'metric name "{metric}" {said}: -m could not pick it; rename the metric'
    if metric in KEY_COLUMNS:
        what = KEY_COLUMNS[metric]
    elif metric.startswith(TAG_PREFIX):
        what = f"the tag {metric.removeprefix(TAG_PREFIX)}"
    else:
        return ""
    return f'metric name "{metric}" is taken by {what} (a column of the table correlated): rename the metric'


@dataclass(frozen=True)
class Aligned:
    """Scores joined to human means for one dimension.

    Attributes:
        items: One row per scored or rated item (index ``item_id``); NaN marks a missing side.
        metrics: The metric columns, in first-seen order.
        dimension: The human dimension.
        dialogue_human: Native dialogue-level human means (index ``dialogue_id``;
            columns ``human``, ``n_annotators``), or None when there are none.
        counts: What was left out and why (see :func:`align`).
    """

    items: pd.DataFrame
    metrics: tuple[str, ...]
    dimension: str
    dialogue_human: pd.DataFrame | None
    counts: dict[str, int] = field(default_factory=dict)

    def tag_columns(self) -> list[str]:
        """Return the ``tag:<key>`` columns."""
        return [c for c in self.items.columns if str(c).startswith(TAG_PREFIX)]


def numeric_rating(r: Rating) -> float | None:
    """Return a rating's number (a number as text, ``"4"``, is read as one), or None: "I don't know", or a label.

    Example:
        >>> numeric_rating(Rating(item_id="i", dimension="q", annotator="a", value="4")), numeric_rating(
        ...     Rating(item_id="i", dimension="q", annotator="a", value="good"))
        (4.0, None)
    """
    if r.dont_know or r.value is None:
        return None
    if isinstance(r.value, str):
        try:
            return float(r.value)
        except ValueError:
            return None
    return float(r.value)


def _check_numbers(chosen: Sequence[Rating], dimension: str) -> None:
    """Refuse a dimension whose every answer is a label (``positive``): each figure said "constant input".

    Example:
        >>> labels = [Rating(item_id="i", dimension="Listening", annotator=a, value=v, scale="positive|negative")
        ...           for a, v in (("a", "positive"), ("b", "negative"))]
        >>> _check_numbers(labels, "Listening")
        Traceback (most recent call last):
        ...
        dialeval.errors.InputError: field "dimension": the ratings of "Listening" are labels (negative, positive), ...
    """
    answered = [r for r in chosen if not r.dont_know and r.value is not None]
    if answered and all(numeric_rating(r) is None for r in answered):
        labels = ", ".join(sorted({str(r.value) for r in answered})[:5])
        raise InputError(f'the ratings of "{dimension}" are labels ({labels}), not numbers: a correlation needs a '
                         "number per rating (a study's: dialeval study export STUDY_DIR --numeric)",
                         field="dimension")  # fmt: skip


def _human_means(ratings: Iterable[Rating], counts: Counter[str]) -> pd.DataFrame:
    rows = []
    for r in ratings:
        value = numeric_rating(r)
        if value is None:
            counts["ratings_dont_know" if r.dont_know or r.value is None else "ratings_not_numeric"] += 1
            continue
        rows.append((r.item_id, value))
    frame = pd.DataFrame(rows, columns=["item_id", "value"])
    grouped = frame.groupby("item_id")["value"]
    return pd.DataFrame({"human": grouped.mean(), "n_annotators": grouped.size()})


def with_candidate_keys(scores: Sequence[Score], candidates: Sequence[Candidate]) -> list[Score]:
    """Return ``scores`` with the context, dialogue, system and tags a score leaves empty taken from its candidate.

    A score of another tool often holds only ``item_id``, ``metric`` and ``value``: each item was then its own
    context (the bootstrap resampled items, not contexts), of no system (no system level) and of no subset
    (``--by`` a tag found none), although the benchmark's candidates knew all three. A key or tag the score names
    is kept, whatever its candidate says; a score whose item is no candidate's is kept as it is.

    Example:
        >>> c = Candidate(id="a", dialogue_id="d", turn_index=2, system="s1", text="hi", tags={"k": "x", "t": "y"})
        >>> [s] = with_candidate_keys([Score(item_id="a", metric="m", value=1.0, system="mine", tags={"t": "z"})], [c])
        >>> s.context_id, s.dialogue_id, s.system, s.tags
        ('d#2', 'd', 'mine', {'k': 'x', 't': 'z'})
    """
    by_id = {c.id: c for c in candidates}
    out = []
    for s in scores:
        c = by_id.get(s.item_id)
        known = {} if c is None else {"context_id": c.context_id, "dialogue_id": c.dialogue_id, "system": c.system}
        missing: dict[str, object] = {k: v for k, v in known.items() if not getattr(s, k)}
        if c is not None and not set(c.tags) <= set(s.tags):
            missing["tags"] = {**c.tags, **s.tags}
        out.append(s.model_copy(update=missing) if missing else s)
    return out


def missing_metrics(absent: Sequence[str], present: Sequence[str], field: str = "metrics") -> InputError:
    """Return the error for metrics asked for that the scores do not hold: each with its closest name, and the list.

    Example:
        >>> print(missing_metrics(["lenght"], ["bleu1", "length"]))
        field "metrics": no scores for metric lenght (did you mean "length"?); the scores hold: bleu1, length
    """
    named = []
    for name in absent:
        close = closest(name, present)
        named.append(f'{name} (did you mean "{close}"?)' if close else name)
    held = ", ".join(sorted(present)) or "nothing"
    what = "metric" if len(absent) == 1 else "metrics"
    return InputError(f"no scores for {what} {', '.join(named)}; the scores hold: {held}", field=field)


def _check_metric_names(scores: Sequence[Score]) -> None:
    """Refuse a metric named like another column of the aligned table (see :func:`reserved_name_why`)."""
    for metric in dict.fromkeys(s.metric for s in scores):
        if why := reserved_name_why(metric):
            raise InputError(why, field="metrics")


def item_keys(s: Score) -> dict[str, str]:
    """Return what ``s`` says of its item beside its value: context, dialogue, system and tags (``tag:NAME``), if given.

    Example:
        >>> item_keys(Score(item_id="a", metric="m", value=1.0, context_id="c", tags={"t": "x"}))
        {'context_id': 'c', 'tag:t': 'x'}
    """
    keys = {key: value for key in ("context_id", "dialogue_id", "system") if (value := getattr(s, key))}
    return keys | {f"{TAG_PREFIX}{tag}": value for tag, value in s.tags.items()}


def key_conflict(key: str, item: str, value: str, earlier: str, metric: str, where: str, note: str = "") -> InputError:
    """Return the error for a score giving its item another context, dialogue, system or tag than ``where`` gave it.

    ``note`` follows the value (where it came from, if not from the score).

    Example:
        >>> print(key_conflict("tag:task", "a", "qa", "chat", "m", "an earlier score"))
        field "tags.task": metric "m" gives item "a" the tag task "qa", where an earlier score gave it "chat": an item \
has one of each (scores of two benchmarks whose item ids meet?)
    """
    tag = key.removeprefix(TAG_PREFIX)
    what, name = (f"the tag {tag}", f"tags.{tag}") if key.startswith(TAG_PREFIX) else (f"the {key}", key)
    return InputError(f'metric "{metric}" gives item "{item}" {what} "{value}"{note}, where {where} gave it '
                      f'"{earlier}": an item has one of each (scores of two benchmarks whose item ids meet?)',
                      field=name)  # fmt: skip


def _add_keys(known: dict[str, str], s: Score) -> None:
    """Add to ``known`` (its item's keys so far) the keys and tags ``s`` gives that no earlier score of it gave.

    The keys: context, dialogue and system. A key or tag given earlier with another value is refused: the first
    read was kept, so the figures changed with the order of the scores, silently.

    The first score of an item gave them all: scores of another tool (no tags) read before ``score``'s left every
    item without its tags, and ``--by task`` said 'no tag "task" on the scores' (read after, it broke down).

    Example:
        >>> known = {}
        >>> _add_keys(known, Score(item_id="a", metric="m", value=1.0, system="s1"))
        >>> _add_keys(known, Score(item_id="a", metric="n", value=1.0, context_id="c", tags={"t": "x"}))
        >>> known
        {'system': 's1', 'context_id': 'c', 'tag:t': 'x'}
        >>> _add_keys(known, Score(item_id="a", metric="o", value=1.0, system="s2"))
        Traceback (most recent call last):
        ...
        dialeval.errors.InputError: field "system": metric "o" gives item "a" the system "s2", where an earlier ...
    """
    for key, value in item_keys(s).items():
        if known.setdefault(key, value) != value:
            raise key_conflict(key, s.item_id, value, known[key], s.metric, "an earlier score")


def align(
    scores: Sequence[Score], ratings: Sequence[Rating], *, dimension: str, metrics: Sequence[str] | None = None
) -> Aligned:
    """Build the aligned table for ``dimension``.

    Args:
        scores: Metric scores (one per item and metric).
        ratings: Per-annotator ratings; only ``dimension`` is used.
        dimension: The human dimension to join.
        metrics: Keep only these metrics (default: all present).

    Returns:
        The table, with ``counts``: ``scores_missing_value:<metric>`` (score value None),
        ``ratings_dont_know``, ``ratings_not_numeric``, ``scores_without_rating``
        (items scored, with no rating of their own or of their dialogue), ``ratings_without_score``
        (turn items rated, with no score record: one whose scores have no value is counted as that),
        ``dialogue_ratings_without_score``.

    Raises:
        InputError: A metric scores the same item twice or is named like another column (:data:`KEY_COLUMNS`,
            ``tag:...``), two scores give an item two contexts, dialogues, systems or values of a tag, a requested
            metric is absent, or no rating has this dimension.
    """
    counts: Counter[str] = Counter()
    wanted = set(metrics) if metrics is not None else None
    values: dict[str, dict[str, float]] = {}
    keys: dict[str, dict[str, str]] = {}
    present: dict[str, None] = {}
    valueless: set[str] = set()  # items with a score record but no value: "without value", not "without score"
    _check_metric_names(scores)
    for s in scores:
        present.setdefault(s.metric)
        if wanted is not None and s.metric not in wanted:
            continue
        per_metric = values.setdefault(s.metric, {})
        if s.item_id in per_metric:
            raise InputError(f'metric "{s.metric}" scores item "{s.item_id}" twice', field="item_id")
        if s.value is None:
            counts[f"scores_missing_value:{s.metric}"] += 1
            valueless.add(s.item_id)
            continue
        per_metric[s.item_id] = s.value
        _add_keys(keys.setdefault(s.item_id, {}), s)
    named = {k: [item for item, known in keys.items() if known.get(f"{k}_id")] for k in ("context", "dialogue")}
    for item, known in keys.items():  # an item no score gives a context or dialogue is its own
        known.update({k: known.get(k) or item for k in ("context_id", "dialogue_id")}, system=known.get("system", ""))
    if wanted is not None and (absent := sorted(wanted - set(values))):
        raise missing_metrics(absent, list(present))
    chosen = [r for r in ratings if r.dimension == dimension]
    if not chosen:
        found = ", ".join(sorted({r.dimension for r in ratings})) or "none"
        raise InputError(f'no ratings for dimension "{dimension}"; found: {found}', field="dimension")
    _check_numbers(chosen, dimension)
    turn = _human_means((r for r in chosen if r.level == "turn"), counts)
    dialogue_ratings = [r for r in chosen if r.level == "dialogue"]
    dialogue = _human_means(dialogue_ratings, counts) if dialogue_ratings else None
    items = pd.DataFrame.from_dict(keys, orient="index")
    for k, ids in named.items():  # the dialogue level uses the named dialogues only; --by context_id, the contexts
        items[f"{k}_named"] = items.index.isin(ids)
    if not keys:  # no score has a value: the key columns, empty (prepare read them, and failed with a KeyError)
        items = pd.DataFrame(columns=["context_id", "dialogue_id", "system", "context_named", "dialogue_named"],
                             dtype=object)
    for metric, per_item in values.items():
        items[metric] = pd.Series(per_item, dtype="float64")
    # Keep the scores' order (bootstrap clusters are numbered by first appearance); rated-only items go last.
    items = pd.concat([items.join(turn, how="left"), turn[~turn.index.isin(items.index)]])
    items["n_annotators"] = items["n_annotators"].fillna(0).astype(int)
    items.index.name = "item_id"
    scored = items[list(values)].notna().any(axis=1)
    rated = items["n_annotators"] > 0
    if dialogue is not None:  # an item whose dialogue is rated counts as rated (it said "31012 without rating")
        rated |= items["dialogue_id"].isin(dialogue.index)
    counts["scores_without_rating"] += int((scored & ~rated).sum())
    counts["ratings_without_score"] += int((rated & ~scored & ~items.index.isin(list(valueless))).sum())
    if dialogue is not None:
        dialogue_ids = set(items.loc[scored, "dialogue_id"].dropna())
        counts["dialogue_ratings_without_score"] += int((~dialogue.index.isin(dialogue_ids)).sum())
    return Aligned(
        items=items, metrics=tuple(values), dimension=dimension, dialogue_human=dialogue, counts=dict(counts)
    )
