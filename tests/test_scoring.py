"""The scoring service: one engine run for several metrics, per-part signatures, progress, errors naming the item."""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

import pytest

from dialeval.cache import ScoreCache
from dialeval.errors import DialevalError, InputError
from dialeval.metrics.base import Metric, MetricInput, MetricValues, build_inputs
from dialeval.metrics.style import StyleMetric
from dialeval.schema import Candidate, Dialogue, Turn
from dialeval.scoring import progress_bars, report_to, score_each, score_inputs, score_metrics


class Words(Metric):
    """Word count; counts the items it computes."""

    name = "words_test"
    outputs: ClassVar[tuple[str, ...]] = ("words_test",)
    batch_size = 2

    def __init__(self) -> None:
        super().__init__()
        self.seen = 0

    def compute(self, items: Sequence[MetricInput]) -> MetricValues:
        self.seen += len(items)
        return {"words_test": [float(len(i.response.split())) for i in items]}


DIALOGUES = {"d": Dialogue(id="d", turns=[Turn(speaker="A", text="Are you happy today?")])}


def cand(n: int, text: str, **tags: str) -> Candidate:
    return Candidate(id=f"d:s{n}", dialogue_id="d", turn_index=1, system=f"s{n}", text=text, tags=tags)


CANDS = [cand(0, "I am so happy and grateful today!", want="positive"),
         cand(1, "This is awful, I hate it.", want="negative"),
         cand(2, "I am so happy and grateful today!", want="Positive")]  # fmt: skip


def test_identical_inputs_are_computed_once_and_cached_values_are_not_recomputed(tmp_path):
    cache = ScoreCache(tmp_path / "s.sqlite")
    first = Words()
    runs = score_metrics([first], CANDS, DIALOGUES, cache=cache)
    assert first.seen == 2  # CANDS[0] and CANDS[2] are the same input
    assert [s.value for s in runs[0].scores] == [7.0, 6.0, 7.0]  # counted by hand
    again = Words()
    assert [s.value for s in score_metrics([again], CANDS, DIALOGUES, cache=cache)[0].scores] == [7.0, 6.0, 7.0]
    assert again.seen == 0


def test_a_cached_entry_without_a_new_output_is_computed_again(tmp_path):
    """A metric that gained an output keeps its signature (same version): its old cache entries lack the output."""

    class MoreWords(Words):
        outputs: ClassVar[tuple[str, ...]] = ("words_test", "chars_test")

        def compute(self, items: Sequence[MetricInput]) -> MetricValues:
            return {**super().compute(items), "chars_test": [float(len(i.response)) for i in items]}

    cache = ScoreCache(tmp_path / "s.sqlite")
    score_metrics([Words()], CANDS, DIALOGUES, cache=cache)
    more = MoreWords()
    assert more.signature == Words().signature
    (run,) = score_metrics([more], CANDS, DIALOGUES, cache=cache)
    assert more.seen == 2
    assert [s.value for s in run.scores if s.metric == "chars_test"] == [33.0, 25.0, 33.0]  # len() by hand


def test_style_target_tag_splits_by_each_items_tag_with_its_own_signature():
    run = score_metrics([StyleMetric(target="tag:want")], CANDS, DIALOGUES)[0]
    match = {s.item_id: s for s in run.scores if s.metric == "style_match"}
    for c in CANDS:  # the same as the metric for that style alone
        alone = StyleMetric(target=c.tags["want"].lower())
        assert match[c.id].signature == alone.signature
        assert match[c.id].value == alone.compute([MetricInput(response=c.text)])["style_match"][0]
    assert run.signature == "; ".join(StyleMetric(target=t).signature for t in ("negative", "positive"))
    assert [p.config.target for p, _ in run.parts] == ["negative", "positive"]  # type: ignore[attr-defined]


def test_an_item_without_the_tag_is_an_error_naming_the_candidate():
    untagged = [CANDS[0], cand(9, "No tag here.")]
    with pytest.raises(InputError, match='candidate "d:s9" has no "want" tag'):
        score_metrics([StyleMetric(target="tag:want")], untagged, DIALOGUES)


def test_each_metric_gets_its_own_candidates_in_one_run():
    runs = score_each([(Words(), CANDS[:1]), (Words(), CANDS)], DIALOGUES)
    assert [len(r.scores) for r in runs] == [1, 3]


def test_progress_reaches_the_enclosing_bars_without_a_callback():
    seen: list[tuple[str, int]] = []
    with report_to(lambda name, n: seen.append((name, n))):
        score_inputs([(Words(), build_inputs(CANDS, DIALOGUES))])
    assert seen == [("words_test", 2), ("words_test", 1)]  # one batch of 2 distinct inputs (3 items)...
    with progress_bars({"words_test": 3}, quiet=True) as tick:  # bars off: the callback still works
        tick("words_test", 3)


class Refuses(Words):
    """Leaves the second word-count item unscored and says why, in the instance that computed it only."""

    name = "refuses_test"
    outputs: ClassVar[tuple[str, ...]] = ("refuses_test",)

    def __init__(self) -> None:
        super().__init__()
        self.reasons: dict[str, str] = {}

    def compute(self, items: Sequence[MetricInput]) -> MetricValues:
        from dialeval.cache import input_key

        self.seen += len(items)
        out: list[float | None] = []
        for i in items:
            if "awful" in i.response:
                self.reasons[input_key(i)] = "the server refused this one"
                out.append(None)
            else:
                out.append(float(len(i.response.split())))
        return {"refuses_test": out}

    def why_unscored(self, key: str) -> str | None:
        return self.reasons.get(key)


class FreshCopyEngine:
    """Computes every batch on a new instance of the metric, as a Ray worker does in another process.

    (The real Ray path is tested in tests/engines/test_ray_engine.py, behind the slow marker.)
    """

    name = "fresh-copy"

    def run(self, jobs):
        from dialeval.engines.base import compute_batch

        for n, (metric, batches) in enumerate(jobs):
            for batch in batches:
                yield n, compute_batch(type(metric)(), batch)

    def summary(self, metric):
        return {}

    def describe(self):
        return {"engine": self.name}


@pytest.mark.parametrize("engine", [None, FreshCopyEngine()], ids=["local", "other-process"])
def test_the_reason_an_item_went_unscored_travels_with_the_batch_and_keeps_it_out_of_the_cache(tmp_path, engine):
    cache = ScoreCache(tmp_path / "s.sqlite")
    driver = Refuses()
    scores = score_metrics([driver], CANDS, DIALOGUES, cache=cache, engine=engine)[0].scores
    assert [s.value for s in scores] == [7.0, None, 7.0]
    assert scores[1].extras == {"error": "the server refused this one"}
    assert scores[0].extras == {} and scores[2].extras == {}
    # the unscored item is not cached (the next run tries it again); the scored one is
    again = Refuses()
    score_metrics([again], CANDS, DIALOGUES, cache=cache)
    assert again.seen == 1


def test_scored_counts_the_inputs_the_cache_answered(tmp_path) -> None:
    """What a rerun took from the score cache is counted (judge run's counts said "items 0" and nothing more)."""
    from dialeval.metrics.lexical import Length

    inputs = [MetricInput(response=r) for r in ("a b", "c", "a b", "d e f")]  # one response twice
    cache = ScoreCache(tmp_path / "scores.sqlite")
    (first,) = score_inputs([(Length(), inputs[:2])], cache=cache)
    (second,) = score_inputs([(Length(), inputs)], cache=cache)
    assert first.cached == 0
    assert second.cached == 3  # "a b" twice and "c"; "d e f" is computed
    (uncached,) = score_inputs([(Length(), inputs)])
    assert uncached.cached == 0


def test_a_param_value_is_an_input_file_only_as_given(tmp_path) -> None:
    """inputs() stripped a -p value before looking for its file, while the metric reads the value as given:
    "protocol= p.yaml" recorded p.yaml as an input of the run (its sha in run.json), and the metric read " p.yaml"."""
    from dialeval.scoring import ScoringRequest

    protocol = tmp_path / "p.yaml"
    protocol.write_text("name: p\n", encoding="utf-8")
    spaced = ScoringRequest(no_cache=True, params=(f"judge:custom.protocol= {protocol}",))
    assert spaced.inputs() == [("--cache", None)]  # " /tmp/.../p.yaml" is a relative path naming no file
    exact = ScoringRequest(no_cache=True, params=(f"judge:custom.protocol={protocol}",))
    assert exact.inputs() == [("--cache", None), ("-p judge:custom.protocol", protocol)]


class NotFinite(Words):
    """Gives NaN, inf and -inf where a response has 7, 5 and 3 words, as a careless plugin might (a 0/0, a log 0)."""

    name = "not_finite_test"
    outputs: ClassVar[tuple[str, ...]] = ("not_finite_test",)

    def compute(self, items: Sequence[MetricInput]) -> MetricValues:
        self.seen += len(items)
        odd = {7: float("nan"), 5: float("inf"), 3: float("-inf")}
        return {"not_finite_test": [odd.get(len(i.response.split()), 1.0) for i in items]}


def test_a_metric_giving_nan_or_infinity_leaves_the_item_without_a_value_and_says_so(tmp_path) -> None:
    """A plugin's NaN ended the run in pydantic's traceback ("NaN is not a score"), after every metric had run;
    an infinity was taken as a score (and stress's AUROC then stopped in sklearn's "Input contains infinity")."""
    cands = [cand(0, "one two three four five six seven"), cand(1, "one two three four five"),
             cand(2, "one two three"), cand(3, "one")]  # fmt: skip
    cache = ScoreCache(tmp_path / "s.sqlite")
    scores = score_metrics([NotFinite()], cands, DIALOGUES, cache=cache)[0].scores
    assert [s.value for s in scores] == [None, None, None, 1.0]
    assert [s.extras.get("error") for s in scores[:3]] == [
        f"the metric gave {v} for not_finite_test: not a finite number" for v in ("NaN", "inf", "-inf")]
    again = NotFinite()
    score_metrics([again], cands, DIALOGUES, cache=cache)
    assert again.seen == 3  # nothing non-finite was cached: the next run asks the metric again


class Fragile(Words):
    """Raises an ordinary exception on a response of three words, as a buggy plugin might (a KeyError, a 0/0)."""

    name = "fragile_test"
    outputs: ClassVar[tuple[str, ...]] = ("fragile_test",)
    error: ClassVar[type[BaseException]] = ZeroDivisionError

    def compute(self, items: Sequence[MetricInput]) -> MetricValues:
        if any(len(i.response.split()) == 3 for i in items):
            raise self.error("division by zero")
        return {"fragile_test": super().compute(items)["words_test"]}


@pytest.mark.parametrize("error", [ValueError, KeyError, ZeroDivisionError])
def test_a_metric_raising_midway_is_one_error_naming_the_metric_the_candidate_and_the_message(tmp_path, error):
    """A plugin's ZeroDivisionError ended the run in its traceback; batches finished before stay cached, as they do
    when any other error stops a run."""
    cands = [cand(0, "one"), cand(1, "one two"), cand(2, "one two four five"), cand(3, "one two three")]
    cache = ScoreCache(tmp_path / "s.sqlite")
    metric = type("F", (Fragile,), {"error": error})()
    with pytest.raises(DialevalError) as got:
        score_metrics([Words(), metric], cands, DIALOGUES, cache=cache)
    assert str(got.value).startswith('metric "fragile_test" failed on candidate "d:s3": ')
    assert str(got.value).endswith("division by zero") or str(got.value).endswith("division by zero'")
    assert len(cache) == 4 + 2  # every words_test item, and fragile_test's first batch of two


@pytest.mark.parametrize("error", [KeyboardInterrupt, MemoryError])
def test_an_interrupt_or_memory_error_in_a_metric_is_not_turned_into_a_metric_error(error):
    metric = type("F", (Fragile,), {"error": error})()
    with pytest.raises(error):
        score_metrics([metric], [cand(0, "one two three")], DIALOGUES)


@pytest.mark.parametrize(("value", "said"), [
    ("high", "'high' \\(str\\)"),
    ("1.5", "'1.5' \\(str\\)"),  # float("1.5") took it as 1.5, silently
    (True, "True \\(bool\\)"),  # float(True) took it as 1.0, silently
    ([2.0], "\\[2.0\\] \\(list\\)"),
])  # fmt: skip
def test_a_metric_value_that_is_no_number_is_one_error_naming_the_metric_output_and_candidate(value, said) -> None:
    """A value returned as text ("1.5") or a bool was made a float and scored, silently; other text was
    "ValueError: could not convert string to float", naming no output. The item is found as it is scored alone."""

    class Text(Words):
        name = "text_test"
        outputs: ClassVar[tuple[str, ...]] = ("text_test",)

        def compute(self, items: Sequence[MetricInput]) -> MetricValues:
            return {"text_test": [value if len(i.response.split()) == 2 else 1 for i in items]}

    with pytest.raises(DialevalError, match=f'^metric "text_test" failed on candidate "d:s1": RuntimeError: '
                                            f"text_test.text_test returned {said} for an item: give a number or None$"):
        score_metrics([Text()], [cand(0, "one"), cand(1, "one two")], DIALOGUES)


@pytest.mark.parametrize(("attrs", "said"), [
    ({"outputs": ("words_test", "words_test")}, 'names its output "words_test" twice'),
    ({"batch_size": 2.5}, "has batch_size 2.5: give a whole number"),
    ({"batch_size": None}, "has batch_size None: give a whole number"),
    ({"outputs": ()}, "names no output in outputs: it would give no score"),
    # ("words_test") is a string: read as outputs w, o, r, d, s... ("returned no values for its output "w"")
    ({"outputs": "words_test"},
     "has outputs \"words_test\", a string: write a tuple, \\(\"words_test\",\\) with its comma$"),
    ({"outputs": ""}, "has outputs \"\", a string: write a tuple"),
])  # fmt: skip
def test_a_metric_class_with_a_repeated_output_or_a_batch_size_that_is_no_whole_number_is_refused(attrs, said):
    """A repeated output wrote every score twice (6 rows for 3 candidates); a batch_size of 2.5 or None ended in
    a TypeError traceback from range() or max(); no output at all gave no score for any candidate, silently."""
    metric = type("Odd", (Words,), {"__module__": "plugin", **attrs})()
    with pytest.raises(DialevalError, match=f'^metric "words_test" \\(plugin.Odd\\) {said}'):
        score_metrics([metric], CANDS, DIALOGUES)


def test_a_metric_returning_no_column_for_one_of_its_outputs_is_one_error_saying_so() -> None:
    """compute() without a declared output's column failed with "KeyError: 'b'", which reads as the plugin's own
    KeyError; it says which output the metric gave no values for."""

    class Half(Words):
        name = "half_test"
        outputs: ClassVar[tuple[str, ...]] = ("half_a", "half_b")

        def compute(self, items: Sequence[MetricInput]) -> MetricValues:
            return {"half_a": [1.0 for _ in items]}

    with pytest.raises(DialevalError, match=r'^metric "half_test" failed on candidate "d:s0": RuntimeError: '
                                            r'half_test returned no values for its output "half_b"$'):  # fmt: skip
        score_metrics([Half()], [cand(0, "one")], DIALOGUES)


@pytest.mark.parametrize(("parts", "said"), [
    ([[0, 1]], "gave item 2 to 0 parts"),  # the third candidate: scored by no part
    ([[0, 1, 2], [2]], "gave item 2 to 2 parts"),
    ([[0, 1, 2, 3]], "gave item 3 to 1 part"),  # past the three candidates
    ([], "gave item 0 to 0 parts"),
])  # fmt: skip
def test_a_partition_that_gives_an_item_to_no_part_or_to_two_is_refused(parts, said) -> None:
    """A plugin's partition() that left an item out gave it value None, "metric could not score this item",
    silently; one given to two parts kept the last part's value; one past the items was an IndexError traceback."""

    class Split(Words):
        def partition(self, items: Sequence[MetricInput]) -> list[tuple[Metric, list[int]]]:
            return [(self, list(p)) for p in parts]

    Split.__module__ = "plugin"
    with pytest.raises(DialevalError, match=f'^metric "words_test" \\(plugin.{Split.__qualname__}\\) {said} in '
                                            r"partition\(\), of its 3 items: give each item to exactly one part$"):
        score_metrics([Split()], CANDS, DIALOGUES)


@pytest.mark.parametrize(("notes", "said"), [
    ([{}], "gave 1 note in cut\\(\\), for its 3 items"),  # one note for the three candidates
    ([{}] * 4, "gave 4 notes in cut\\(\\), for its 3 items"),
    (None, "gave None in cut\\(\\), for its 3 items"),
])  # fmt: skip
def test_a_cut_that_gives_no_note_per_item_is_refused(notes, said) -> None:
    """A plugin's cut() that returned a list of the wrong length ended, once every item was scored, in the traceback
    of "ValueError: zip() argument 7 is shorter than arguments 1-6"; it is one error naming the metric's class."""

    class Notes(Words):
        def cut(self, items: Sequence[MetricInput]) -> list[dict[str, str]]:
            return notes  # type: ignore[return-value]

    Notes.__module__ = "plugin"
    with pytest.raises(DialevalError, match=f'^metric "words_test" \\(plugin.{Notes.__qualname__}\\) {said}: '
                                            "give one dict per item$"):
        score_metrics([Notes()], CANDS, DIALOGUES)


def test_a_parameter_error_raised_in_cut_names_the_parameter() -> None:
    """cut() ran outside parameter_errors: a plugin's cut() that loads what its model parameter names (compute() does
    not run when every item comes from the cache) said 'field "model"', which names no option; compute()'s and the
    signature's errors name "-p FAMILY.KEY"."""
    import dataclasses

    @dataclasses.dataclass(frozen=True)
    class Cfg:
        model: str = "here"

    class Loads(Words):
        name = "loads_test"
        outputs: ClassVar[tuple[str, ...]] = ("loads_test",)
        Config = Cfg

        def compute(self, items: Sequence[MetricInput]) -> MetricValues:
            return {"loads_test": [1.0 for _ in items]}

        def cut(self, items: Sequence[MetricInput]) -> list[dict[str, str]]:
            raise InputError("holds no tokenizer", field="model")

    with pytest.raises(InputError, match=r'^field "--param": loads_test.model: holds no tokenizer$'):
        score_metrics([Loads()], CANDS, DIALOGUES)
