"""Splits are by context: no context is ever on both sides."""

from __future__ import annotations

import pytest

from dialeval.errors import InputError
from dialeval.trained.data import Example
from dialeval.trained.splits import Split, context_folds, cross_benchmark, leave_one_group_out


def _ctx(xs: list[Example]) -> set[str]:
    return {e.group_context for e in xs}


def test_context_folds_partition_the_contexts(small_examples: list[Example]) -> None:
    folds = context_folds(small_examples, k=4, seed=1)
    tested: list[str] = []
    for f in folds:
        assert not _ctx(f.train) & _ctx(f.test)
        assert len(f.train) + len(f.test) == len(small_examples)
        tested.extend(_ctx(f.test))
    assert sorted(tested) == sorted(_ctx(small_examples))  # every context tested exactly once


def test_leave_one_system_out_keeps_contexts_apart(small_examples: list[Example]) -> None:
    usr = [e for e in small_examples if e.benchmark == "usr-pc"]
    splits = leave_one_group_out(usr, "system", seed=0)
    assert len(splits) == len({e.system for e in usr})
    for s in splits:
        held = s.name.split("=", 1)[1]
        assert {e.system for e in s.test} == {held}
        assert held not in {e.system for e in s.train}
        assert not _ctx(s.train) & _ctx(s.test)


def test_leave_one_benchmark_out_and_transfer(small_examples: list[Example]) -> None:
    splits = leave_one_group_out(small_examples, "benchmark")
    assert [s.name for s in splits] == ["benchmark=gupta-dailydialog", "benchmark=usr-pc"]
    usr = [e for e in small_examples if e.benchmark == "usr-pc"]
    gupta = [e for e in small_examples if e.benchmark == "gupta-dailydialog"]
    assert cross_benchmark(usr, gupta).name == "test=gupta-dailydialog"
    with pytest.raises(InputError, match="in both train and test"):
        cross_benchmark(small_examples, gupta)


def test_a_leaking_split_is_refused(small_examples: list[Example]) -> None:
    with pytest.raises(InputError, match="on both sides"):
        Split("bad", small_examples[:10], small_examples[5:15]).check()
    with pytest.raises(InputError, match="cannot group by"):
        leave_one_group_out(small_examples, "annotator")


def test_a_held_out_group_with_no_item_in_its_half_says_why() -> None:
    """--logo system on contexts every system answers halves the contexts; where one half had none of the items a side
    needs (one context: the training half is empty; a rare system answering one context that fell in the training
    half), the error was 'split "system=s0" has 0 train and 1 test items', naming no option and not saying why."""
    from dialeval.metrics.base import MetricInput

    def ex(c: int, s: str) -> Example:
        return Example(f"{c}{s}", "b", f"c{c}", f"d{c}", s, "b", "t", MetricInput("t"), 1.0, 0.5, 1)

    with pytest.raises(InputError) as got:
        leave_one_group_out([ex(0, "s0"), ex(0, "s1")], "system", seed=0)
    assert str(got.value) == (
        'field "--logo": system "s0" answers contexts that other systems answer too, so the contexts are halved '
        "(by --seed 0): the model trains on the other systems' responses to one half and is tested on those of "
        '"s0" to the other; of the 1 context, the training half holds no response of another system (0 train, 1 test '
        'items): give more contexts (a larger --limit, if given) or another --seed'
    )
    # a rare system answers context 0 only; the seeded shuffle of 4 contexts puts it in the training half with seed 1
    rare = [ex(c, s) for c in range(4) for s in ("s0", "s1")] + [ex(0, "rare")]
    with pytest.raises(InputError, match=r'system "rare" .* of the 4 contexts, the test half holds no response of '
                                          r'"rare" \(4 train, 0 test items\)'):  # fmt: skip
        leave_one_group_out(rare, "system", seed=1)
