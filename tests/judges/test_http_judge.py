"""Judges over HTTP against a real scripted server on 127.0.0.1 (tests/backends/test_openai_compat.py's
:class:`Scripted`): what the run's counters and notes make of the server's answers. No model is served."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
from tests.backends.test_openai_compat import Reply
from typer.testing import CliRunner

from dialeval.cli import app
from dialeval.judges import JudgeMetric
from dialeval.metrics.base import METRICS, MetricInput
from dialeval.schema import Turn

ITEMS = [MetricInput(response="Yes, I love Miles Davis.", context=(Turn(speaker="A", text="Do you like jazz?"),))]


@pytest.fixture(autouse=True)
def _own_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DIALEVAL_CACHE", str(tmp_path / "cache"))


def answer(text: str, finish_reason: str) -> bytes:
    """A chat-completion body with one choice that ended for ``finish_reason``."""
    choice = {"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": finish_reason}
    return json.dumps({"object": "chat.completion", "choices": [choice]}).encode()


def _metric(url: str, **params: Any) -> JudgeMetric:
    m = METRICS.get("judge:lmstyle-appropriateness")(
        backend="openai-compatible", base_url=url, model="m", max_retries=0, **{"cache": False, **params}
    )
    assert isinstance(m, JudgeMetric)
    return m


@pytest.mark.parametrize(("finish", "cut"), [("stop", 0), ("length", 2)])
def test_an_empty_answer_the_server_ended_is_not_noted_as_cut_by_max_tokens(serve: Any, finish: str, cut: int) -> None:
    """Every unparsable structured answer was noted "cut by max_tokens ... (raise max_tokens)": an empty answer
    with ``finish_reason: stop`` too, where raising max_tokens changes nothing. The server's finish_reason now
    decides: the item's answer and its parse retry are the two unparsable answers of the run. A rerun from the
    request cache says the same (the cache keeps the finish_reason)."""
    url = serve(Reply(body=answer("", finish))).url
    cut_note = "2 answer(s) were cut by max_tokens before the shape was complete (raise max_tokens)"
    other = "an answer ended without the shape's score, and the backend did not say max_tokens cut it: does the " \
            "backend hold answers to the shape?"
    for hits in (0, 2):
        m = _metric(url, cache=True)
        assert m.compute(ITEMS)["judge:lmstyle-appropriateness"] == [None]
        s = m.run_summary()
        assert (s["cache_hits"], s["parse_retries"], s["parse_failures"], s["cut_by_max_tokens"]) == (hits, 1, 1, cut)
        assert s["notes"] == [cut_note if cut else other]


@pytest.mark.parametrize("backend", ["llamacpp", "transformers"])
def test_a_base_url_for_a_backend_in_this_process_is_one_error(tmp_path: Path, backend: str) -> None:
    """``-p base_url=...`` without ``-p backend=openai-compatible`` was ignored: the packaged model answered in
    this process in place of the server, under a signature that named the URL. No request, no model: one line."""
    out = tmp_path / "scores.jsonl"
    args = ["judge", "run", "--protocol", "lmstyle-appropriateness", "--limit", "1", "--out", str(out),
            "-p", f"backend={backend}", "-p", "base_url=http://127.0.0.1:8080/v1"]  # fmt: skip
    res = CliRunner().invoke(app, args, terminal_width=300)
    assert res.exit_code == 2, res.output
    assert [line for line in res.output.splitlines() if line.startswith("error:")] == [
        f'error: field "--param": judge:lmstyle-appropriateness.base_url: is for backend=openai-compatible; '
        f"backend={backend} runs the model in this process (give -p backend=openai-compatible to use the server)"
    ], res.output
    assert not out.exists()


def _token(token: str, alternatives: dict[str, float]) -> dict[str, Any]:
    """One position of OpenAI's ``logprobs.content``: the token and its alternatives' probabilities."""
    tops = [{"token": t, "logprob": math.log(p)} for t, p in alternatives.items()]
    return {"token": token, "logprob": math.log(alternatives[token]), "top_logprobs": tops}


def test_a_json_answer_s_distribution_keeps_the_value_that_ends_at_the_closing_brace(serve: Any) -> None:
    """An OpenAI-compatible server answers the shape as JSON, ``{"score": 85}``. After the "8", the token "}"
    ends the value at 8; the distribution took only the end of a *text* answer (no token, or an end-of-turn
    token) as an end, so the "}" was dropped and P(85) renormalised from 0.5 to 0.71: the expected score read
    83.57 where the model's probabilities give 60.9. By hand: after "8" (probability 1 here), "5" (0.5) gives
    85, "}" (0.3) gives 8, "0" (0.2) gives 80: expected 0.5 * 85 + 0.3 * 8 + 0.2 * 80 = 60.9; the most
    probable value is 85."""
    content = [_token('{"', {'{"': 1.0}), _token("score", {"score": 1.0}), _token('":', {'":': 1.0}),
               _token(" ", {" ": 1.0}), _token("8", {"8": 1.0}), _token("5", {"5": 0.5, "}": 0.3, "0": 0.2}),
               _token("}", {"}": 1.0})]  # fmt: skip
    choice = {"index": 0, "message": {"role": "assistant", "content": '{"score": 85}'}, "finish_reason": "stop",
              "logprobs": {"content": content}}  # fmt: skip
    body = json.dumps({"object": "chat.completion", "choices": [choice]}).encode()
    m = _metric(serve(Reply(body=body)).url)
    assert m.config.mode == "distribution"
    out = m.compute(ITEMS)
    assert out["judge:lmstyle-appropriateness"] == [85.0]
    assert out["judge:lmstyle-appropriateness:expected"] == [pytest.approx(60.9, abs=1e-9)]


def test_a_protocol_with_dimensions_counts_each_item_once(serve: Any) -> None:
    """dialogadv asks one question per dimension (4), and ``items`` counted each question: 2 items judged read
    ``items: 8`` (and ``items_missing`` up to 8), while a rerun said ``items_from_score_cache: 2``. Each item now
    counts once; it is missing when a dimension of it got no score. Requests go one at a time, dimension by
    dimension, so the server's first 2 answers are both items' coherence and every later one fails to parse."""
    items = [*ITEMS, MetricInput(response="Banana keyboard.", context=(Turn(speaker="A", text="Where to?"),))]
    url = serve(Reply(body=answer("0.5", "stop")), Reply(body=answer("0.5", "stop")),
                Reply(body=answer("no idea", "stop"))).url  # fmt: skip
    m = METRICS.get("judge:dialogadv")(backend="openai-compatible", base_url=url, model="m", max_retries=0,
                                       cache=False, mode="sample", k=1, in_flight=1)  # fmt: skip
    assert isinstance(m, JudgeMetric) and len(m.protocol.dimensions) == 4
    out = m.compute(items)
    assert out["judge:dialogadv:coherence"] == [0.5, 0.5] and out["judge:dialogadv:fluency"] == [None, None]
    s = m.run_summary()
    # by hand: 2 items x 4 dimensions = 8 samples; the 6 of the last three dimensions fail, each retried once
    assert (s["items"], s["items_missing"], s["samples"], s["parse_failures"], s["calls"]) == (2, 2, 8, 6, 14)


def test_a_protocol_file_given_to_a_built_in_family_is_one_error(serve: Any, tmp_path: Path) -> None:
    """``judge run cpdscore-simple -p protocol=mine.yaml`` sent mine.yaml's prompt to the judge and wrote its scores
    as ``judge:cpdscore-simple``, the summary titled with mine.yaml's name: a built-in protocol's scores that were
    another prompt's. ``protocol`` is judge:custom's; a built-in family now refuses it, before any request."""
    mine = tmp_path / "mine.yaml"
    mine.write_text('name: mine\nversion: 1\nscale: {min: 1, max: 5}\nmessages:\n'
                    '  - role: user\n    content: "Rate {{response}}"\n')  # fmt: skip
    server = serve(Reply(body=answer("Score: 4", "stop")))
    out = tmp_path / "scores.jsonl"
    args = ["judge", "run", "cpdscore-simple", "--limit", "1", "--out", str(out), "-p", "backend=openai-compatible",
            "-p", f"base_url={server.url}", "-p", "model=m", "-p", "cache=no", "-p", f"protocol={mine}"]  # fmt: skip
    res = CliRunner().invoke(app, args, terminal_width=300)
    assert res.exit_code == 2, res.output
    assert [line for line in res.output.splitlines() if line.startswith("error:")] == [
        'error: field "--param": judge:cpdscore-simple.protocol: is for judge:custom (a protocol file of your own); '
        "judge:cpdscore-simple runs the built-in protocol cpdscore-simple: give the file as --protocol, or leave "
        "protocol out"
    ], res.output
    assert not server.seen and not out.exists()


def test_a_bare_number_is_the_final_score_of_a_dialogue_not_its_two_other_scores(serve: Any) -> None:
    """cpdscore-dialogue's step 2 asks three scores; an answer that is only a number ("4", free text) is the final
    score (parse rule 2), and it was read as the Overall Dialogue Turn Score and the Dialogue Interaction Score
    too: ``:turn`` and ``:interaction`` were 4 though the answer stated neither. They are now None; the final is
    still 4. The server answers "4" to every request (step 1's turns, then step 2)."""
    url = serve(Reply(body=answer("4", "stop"))).url
    m = METRICS.get("judge:cpdscore-dialogue")(backend="openai-compatible", base_url=url, model="m", max_retries=0,
                                               cache=False, mode="sample", k=1, structured=False)  # fmt: skip
    assert isinstance(m, JudgeMetric)
    out = m.compute(ITEMS)
    assert out["judge:cpdscore-dialogue"] == [4.0]
    assert out["judge:cpdscore-dialogue:turn"] == [None] and out["judge:cpdscore-dialogue:interaction"] == [None]
