"""Judges end to end on the packaged SmolLM2-135M-Instruct (llama.cpp in process): counts, cache, budget."""

from __future__ import annotations

from pathlib import Path

import pytest

from dialeval.backends.llamacpp import LlamaCppBackend
from dialeval.backends.runner import Runner
from dialeval.data.catalog import load_benchmark
from dialeval.judges import JudgeMetric, load_protocol
from dialeval.judges.dialogue import DialogueJudge, system_turns
from dialeval.judges.judge import Judge
from dialeval.metrics.base import METRICS, MetricInput
from dialeval.schema import Turn
from dialeval.scoring import score_candidates

# sample mode: these tests are about k samples, retries, the cache and the budget (distribution mode has its own)
FAST = {"mode": "sample", "k": 2, "max_tokens": 12, "temperature": 0.7, "seed": 5}


@pytest.fixture(autouse=True)
def _own_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, llama_url: str) -> None:
    monkeypatch.setenv("DIALEVAL_CACHE", str(tmp_path / "cache"))


@pytest.fixture(scope="module")
def usr_two(shared_data: Path):  # type: ignore[no-untyped-def]
    # two USR-TC candidates with the context cut to its last turn: the 2-core CPU reads
    # prompts at ~20 tokens/s, and full USR contexts would make this test take minutes
    bench = load_benchmark("usr-tc").head(1)
    dialogues = {
        k: d.model_copy(update={"turns": d.turns[-1:], "knowledge": []}) for k, d in bench.dialogues.items()
    }
    cands = [c.model_copy(update={"turn_index": 1}) for c in bench.candidates[:2]]
    return cands, dialogues


def _metric(name: str, **params: object) -> JudgeMetric:
    m = METRICS.get(name)(**{**FAST, **params})
    assert isinstance(m, JudgeMetric)
    return m


def test_metric_counts_add_up_and_missing_is_none(usr_two) -> None:  # type: ignore[no-untyped-def]
    cands, dialogues = usr_two
    m = _metric("judge:lmstyle-appropriateness")
    scores = score_candidates(m, cands, dialogues)
    s = m.run_summary()
    main = [x for x in scores if x.metric == "judge:lmstyle-appropriateness"]
    assert len(main) == 2
    # every sample is one call, plus one call per parse retry
    assert s["calls"] == 2 * 2 + s["parse_retries"]
    assert s["samples"] == 4 and s["items"] == 2
    assert s["items_missing"] == sum(x.value is None for x in main)
    assert all(x.value is None or 0 <= x.value <= 100 for x in main)
    assert s["completion_tokens"] <= 12 * s["calls"] and s["prompt_tokens"] > 80 * s["calls"]
    sig = m.signature
    assert "protocol:lmstyle-appropriateness" in sig and "protocol_version:1" in sig
    assert f"protocol_sha256:{load_protocol('lmstyle-appropriateness').sha256[:16]}" in sig
    assert "judge_backend:llamacpp:SmolLM2-135M-Instruct.Q4_1:" in sig and "k:2" in sig and "seed:5" in sig


def test_distribution_mode_is_one_request_per_item_and_always_parses(usr_two) -> None:  # type: ignore[no-untyped-def]
    """The default: one request per item, answer held to the shape, the score's distribution read at once."""
    cands, dialogues = usr_two
    m = METRICS.get("judge:cpdscore-simple")(max_tokens=48)
    assert isinstance(m, JudgeMetric) and m.config.mode == "distribution" and m.config.structured
    scores = score_candidates(m, cands, dialogues)
    s = m.run_summary()
    assert (s["calls"], s["parse_failures"], s["parse_retries"], s["distribution_missing"]) == (2, 0, 0, 0)
    assert s["notes"] == []
    by = {(x.item_id, x.metric): x.value for x in scores}
    for c in cands:
        value, expected = by[(c.id, "judge:cpdscore-simple")], by[(c.id, "judge:cpdscore-simple:expected")]
        assert value in {1.0, 2.0, 3.0, 4.0, 5.0} and expected is not None and 1 <= expected <= 5
    assert "mode:distribution" in m.signature and "k:1" in m.signature and "temperature:1.0" in m.signature


def test_cached_rerun_makes_no_calls(usr_two) -> None:  # type: ignore[no-untyped-def]
    cands, dialogues = usr_two
    first = _metric("judge:lmstyle-appropriateness", k=1)
    a = score_candidates(first, cands, dialogues)
    second = _metric("judge:lmstyle-appropriateness", k=1)
    b = score_candidates(second, cands, dialogues)
    assert second.run_summary()["calls"] == 0
    assert second.run_summary()["cache_hits"] == first.run_summary()["calls"]
    assert [x.value for x in a] == [x.value for x in b]


def test_budget_stops_cleanly(usr_two) -> None:  # type: ignore[no-untyped-def]
    cands, dialogues = usr_two
    m = _metric("judge:lmstyle-appropriateness", max_calls=2, cache=False, k=1)
    scores = score_candidates(m, cands, dialogues)
    s = m.run_summary()
    assert s["calls"] == 2
    # with k=1 and 2 calls: both items were asked once; any parse retry hits the spent budget
    assert s["budget_stopped"] == s["parse_retries"]
    assert len([x for x in scores if x.metric == "judge:lmstyle-appropriateness"]) == 2


def test_expected_score_from_real_logprobs() -> None:
    """The expected score equals the probability-weighted mean over the scale digits, recomputed by hand.

    A real answer of the packaged model (greedy, with the top-5 alternatives per token) that states a
    digit; the expected score must find the digit's token and weigh the digits among its alternatives.
    """
    import math

    from dialeval.backends.base import ChatRequest
    from dialeval.judges.judge import expected_score
    from dialeval.judges.parse import Parsed

    scale = load_protocol("cpdscore-detail").scale  # 1-5
    prompt = "Rate from 1 to 5 how correct this answer is. Reply with one digit only.\nQ: Capital of France?\nA: Paris."
    answer = LlamaCppBackend().chat(ChatRequest(messages=(("user", prompt),), max_tokens=4, top_logprobs=5))
    assert len(answer.top_logprobs) == len(answer.tokens)
    at = next(i for i, t in enumerate(answer.tokens) if t.strip() in "12345" and t.strip())
    digit = answer.tokens[at].strip()
    start = sum(len(t) for t in answer.tokens[:at]) + answer.tokens[at].index(digit)
    tops = {t.strip(): math.exp(lp) for t, lp in answer.top_logprobs[at].items()}
    digits = {d: q for d, q in tops.items() if d in {"1", "2", "3", "4", "5"}}
    assert len(digits) >= 2, tops  # a spread over several scale digits, so the weighting matters
    by_hand = sum(int(d) * q for d, q in digits.items()) / sum(digits.values())
    got = expected_score(answer, Parsed(float(digit), "ok", start, digit), scale)
    assert got == pytest.approx(by_hand, abs=1e-12)
    assert got != float(digit)


def test_cpdscore_dialogue_two_steps() -> None:
    ctx = tuple(
        Turn(speaker=s, text=t)
        for s, t in [("U", "hi, how was your weekend?"), ("S", "great, I went hiking."), ("U", "where did you go?")]
    )
    item = MetricInput(response="We hiked up Mount Tam near San Francisco.", context=ctx)
    runner = Runner(LlamaCppBackend())
    opts = {"k": 1, "temperature": 0.0, "seed": 0, "top_logprobs": 0}
    dj = DialogueJudge(
        Judge(load_protocol("cpdscore-detail"), runner, max_tokens=6, **opts),  # type: ignore[arg-type]
        Judge(load_protocol("cpdscore-dialogue"), runner, max_tokens=40, **opts),  # type: ignore[arg-type]
    )
    [res] = dj.judge([item])
    assert [t.response for t in system_turns(item, 7)] == ["great, I went hiking.", item.response]
    assert len(res.turn_scores) == 2
    # step 1: one call per system turn; step 2: one call; plus the counted parse retries
    assert runner.stats.calls == 2 + 1 + dj.stats.parse_retries
    assert dj.stats.items == 1
    assert res.final.value is None or 1 <= res.final.value <= 5
    assert (res.final.value is None) == (dj.stats.items_missing == 1)


def test_fresh_in_process_runs_are_identical(usr_two) -> None:  # type: ignore[no-untyped-def]
    """Same input, same output without any cache: the in-process backend answers one request at a time by default.

    (With 8 requests in flight llama.cpp decodes them in one batch and the batch's composition changes the
    sampled answers: measured, two such fresh runs of lmstyle-appropriateness on one USR context disagreed.)
    """
    cands, dialogues = usr_two
    runs = []
    for _ in range(2):
        m = _metric("judge:cpdscore-simple", cache=False, k=2)
        assert m.config.in_flight == 1 and "in_flight:1" in m.signature
        runs.append([(s.metric, s.value) for s in score_candidates(m, cands, dialogues)])
        assert m.run_summary()["cache_hits"] == 0
    assert runs[0] == runs[1]
    over_http = {"backend": "openai-compatible", "base_url": "http://127.0.0.1:1/v1", "model": "x"}
    http = METRICS.get("judge:cpdscore-simple")(**over_http)
    assert http.config.in_flight == 8  # over HTTP the server batches; 8 requests at once by default


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"mode": "vote"}, "judge:cpdscore-simple.mode='vote': not one of distribution, sample"),
        # it was 'unknown backend "openai"', naming no parameter, when the first item was scored
        ({"backend": "openai"}, "judge:cpdscore-simple.backend='openai': not one of llamacpp, openai-compatible, "
                                'transformers; did you mean "openai-compatible"?'),
        ({"k": 0}, "judge:cpdscore-simple.k=0: must be between 1 and 1000 (samples per item)"),
        ({"max_tokens": -1}, "judge:cpdscore-simple.max_tokens=-1: must be between 1 and 2147483647"),
        ({"temperature": -0.5}, "judge:cpdscore-simple.temperature=-0.5: must be at least 0"),
        ({"timeout": 0.0}, "judge:cpdscore-simple.timeout=0.0: must be at least 0.001"),
        ({"max_calls": -3}, "judge:cpdscore-simple.max_calls=-3: must be at least 0 (0 = none)"),
        # 4294967295 was taken: llama.cpp reads it as "a random seed" (three runs of one request, three answers);
        # the largest is 2**32 - 2 less the most samples' offsets (999) and the retry's (1000003): 4293966292
        ({"seed": 4294967295}, "judge:cpdscore-simple.seed=4294967295: must be between 0 and 4293966292 (seed + k + "
                               "the retry's offset stay 32-bit)"),
        ({"seed": 4293966293}, "judge:cpdscore-simple.seed=4293966293: must be between 0 and 4293966292 (seed + k + "
                               "the retry's offset stay 32-bit)"),
    ],
)
def test_a_judge_parameter_out_of_its_range_is_one_error_before_any_model_loads(params, message):
    from dialeval.errors import InputError

    with pytest.raises(InputError) as caught:
        METRICS.get("judge:cpdscore-simple")(**params)
    assert str(caught.value) == f'field "--param": {message}'


def test_expected_score_of_a_full_width_digit_is_none() -> None:
    """The scale's tokens are ASCII digits: at a "４" the expected score weighed only the ASCII alternatives and left
    the chosen token's own probability out (here 3.5 by hand: "3" and "4" at 0.05 each, "４" at 0.9)."""
    import math

    from dialeval.backends.base import Completion
    from dialeval.judges.judge import expected_score
    from dialeval.judges.parse import Scale, parse_score

    tops = {"\uff14": math.log(0.9), "3": math.log(0.05), "4": math.log(0.05)}
    answer = Completion(text="Score: \uff14", tokens=("Score", ":", " \uff14"), top_logprobs=({}, {}, tops))
    parsed = parse_score(answer.text, Scale(1, 5), ["score"])
    assert parsed.value == 4.0
    assert expected_score(answer, parsed, Scale(1, 5)) is None
