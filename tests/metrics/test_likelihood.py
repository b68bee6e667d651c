"""Likelihood metric: values pinned to the plain transformers loss on real USR items."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from dialeval.data.usr import load_usr_topical_chat  # noqa: E402
from dialeval.metrics.base import MetricInput, build_inputs  # noqa: E402
from dialeval.metrics.likelihood import LikelihoodMetric, continuation_nll  # noqa: E402


@pytest.fixture(scope="module")
def metric() -> LikelihoodMetric:
    return LikelihoodMetric()


@pytest.fixture(scope="module")
def usr_items(shared_data) -> list[MetricInput]:
    bench = load_usr_topical_chat(shared_data / "usr" / "usr_topical_chat.json").head(2)
    return build_inputs(bench.candidates, bench.dialogues)


def plain_loss(model, prefix, cont) -> float:
    """The reference: full sequence through the model, loss from labels with the prefix masked."""
    ids = torch.tensor([list(prefix) + list(cont)])
    labels = ids.clone()
    labels[0, : len(prefix)] = -100
    with torch.inference_mode():
        return float(model(input_ids=ids, labels=labels).loss)


def test_values_equal_the_plain_transformers_loss(metric, usr_items):
    model, _, _ = metric._loaded()
    assert len(usr_items) == 12  # 2 contexts x 6 systems
    some = usr_items[4:8]  # straddles the two contexts; the plain loop is slow on 2 cores
    cond, uncond = metric.requests(some)
    values = metric.compute(some)
    for j, ((p, c), (bos, c2)) in enumerate(zip(cond, uncond, strict=True)):
        ref_c, ref_u = plain_loss(model, p, c), plain_loss(model, bos, c2)
        assert values["lm_likelihood"][j] == pytest.approx(100 / ref_c, rel=1e-4)
        assert values["lm_likelihood_uncond"][j] == pytest.approx(100 / ref_u, rel=1e-4)
        assert values["lm_context_gain"][j] == pytest.approx(ref_u - ref_c, abs=1e-3)


def test_prompt_is_the_lmstyle_template_with_the_last_turn(metric, usr_items):
    _, tok, _ = metric._loaded()
    cond, uncond = metric.requests(usr_items[:1])
    prompt = tok.decode(cond[0][0])
    assert prompt.startswith(tok.bos_token + "###Speaker: ")
    assert prompt.endswith(" ###Response:")
    assert usr_items[0].context[-1].text in prompt
    assert usr_items[0].context[0].text not in prompt or len(usr_items[0].context) == 1
    assert tok.decode(cond[0][1]).strip() == usr_items[0].response.strip()
    assert uncond[0][0] == (tok.bos_token_id,)


def test_fitting_answer_beats_nonsense(metric):
    from dialeval.schema import Turn

    ctx = (Turn(speaker="A", text="Do you like pizza?"),)
    fit = MetricInput(response="Yes, I love pizza, especially with cheese.", context=ctx)
    junk = MetricInput(response="Purple seventeen mitochondria under the regulatory.", context=ctx)
    values = metric.compute([fit, junk])
    assert values["lm_likelihood"][0] > 2 * values["lm_likelihood"][1]


def test_contexts_pack_into_few_passes_and_duplicates_are_free(metric, usr_items):
    model, _, _ = metric._loaded()
    base = model.model
    calls: list[int] = []
    hook = base.register_forward_hook(lambda mod, args, kwargs_out: calls.append(1))
    try:
        cond, _ = metric.requests(usr_items)
        twice = continuation_nll(model, cond + cond, max_batch_tokens=100_000)
        small = continuation_nll(model, cond, max_batch_tokens=1)
    finally:
        hook.remove()
    # everything in one forward pass when it fits; duplicates cost nothing;
    # with a tiny budget, one pass per distinct context (each prompt is still computed once)
    assert len(calls) == 1 + len({p for p, _ in cond})
    assert twice[: len(cond)] == twice[len(cond) :]
    assert small == pytest.approx(twice[: len(cond)], abs=1e-4)


def test_batch_split_does_not_change_values(metric, usr_items):
    whole = metric.compute(usr_items)["lm_likelihood"]
    parts = metric.compute(usr_items[:5])["lm_likelihood"] + metric.compute(usr_items[5:])["lm_likelihood"]
    assert parts == pytest.approx(whole, rel=1e-5)


def test_empty_response_is_none_and_context_window_is_in_the_signature(metric):
    assert metric.compute([MetricInput(response="  ")])["lm_likelihood"] == [None]
    # its score's error says why (it said 'metric could not score this item')
    assert metric.lacks("lm_context_gain", MetricInput(response="  ")) == "empty response"
    assert metric.lacks("lm_likelihood", MetricInput(response="ok")) is None
    sig = LikelihoodMetric(context_turns=3, max_context_tokens=64).signature
    assert "context_turns:3" in sig and "max_context_tokens:64" in sig and "model_sha:" in sig
    assert sig != metric.signature


def test_padded_fallback_gives_the_packed_values(metric, usr_items):
    """Models without transformers' attention interface take the padded 4-D-mask path: same NLLs."""
    from dialeval.metrics import likelihood

    model, _, _ = metric._loaded()
    cond, _ = metric.requests(usr_items)
    packed = continuation_nll(model, cond)
    likelihood._unsupported.add(model)
    try:
        assert not likelihood._can_pack(model)
        padded = continuation_nll(model, cond)
    finally:
        likelihood._unsupported.discard(model)
    assert padded == pytest.approx(packed, abs=1e-4)


def test_a_prefix_is_repeated_only_when_a_new_row_is_cheaper():
    from dialeval.metrics.likelihood import _split_rows

    short_prefix = {(1,): {(2,) * 50, (3,) * 50, (4,) * 50}}  # one-token prefix: a fresh row costs one token
    long_prefix = {(1,) * 400: {(2,) * 10, (3,) * 10}}  # long prefix: repeating it costs far more than sharing
    assert len(_split_rows(short_prefix, pair_cost=1 / 4096)) == 3
    assert len(_split_rows(long_prefix, pair_cost=1 / 4096)) == 1
    assert len(_split_rows(short_prefix, pair_cost=0.0)) == 1  # padded layout: never split


@pytest.mark.parametrize(
    ("given", "message"),
    [
        ({"max_response_tokens": 0}, "likelihood.max_response_tokens=0: must be at least 1"),
        ({"max_context_tokens": -1}, "likelihood.max_context_tokens=-1: must be at least 1"),
        ({"context_turns": -5}, "likelihood.context_turns=-5: must be at least 0 (0 = all turns)"),
        ({"template": "nobraces"}, "likelihood.template='nobraces': has no {context} placeholder"),
        ({"template": "{speaker}: {context}"}, "likelihood.template='{speaker}: {context}': unknown placeholder"),
        ({"template": "{context"}, "likelihood.template='{context': not a valid template"),
    ],
)
def test_meaningless_settings_are_refused_when_built(given, message):
    from dialeval.errors import InputError

    with pytest.raises(InputError) as err:
        LikelihoodMetric(**given)
    assert err.value.field == "--param" and err.value.message.startswith(message), err.value.message


def test_context_turns_zero_puts_every_turn_in_the_prompt(metric):
    from dialeval.schema import Turn

    _, tok, _ = metric._loaded()
    item = MetricInput(response="yes", context=(Turn(speaker="A", text="first"), Turn(speaker="B", text="second")))
    every = LikelihoodMetric(context_turns=0, template="<{context}> {{x}}")
    prefix, cont = every.requests([item])[0][0]
    assert tok.decode(prefix).endswith("<first second> {x}")
    last, _ = metric.requests([item])[0][0]
    assert "second" in tok.decode(last) and "first" not in tok.decode(last) and len(cont) == 1


def test_a_cut_context_or_response_is_said_on_its_scores(metric):
    """max_context_tokens and max_response_tokens cut a text with nothing said on the score; each cut is named,
    and the unconditional likelihood, which reads no context, names only the response's."""
    from dialeval.schema import Candidate, Dialogue, Turn
    from dialeval.scoring import score_metrics

    small = LikelihoodMetric(max_context_tokens=4, max_response_tokens=3)
    _, tok, _ = small._loaded()
    context, response = "Do you like walking your dog in the park?", "Yes, every single morning."
    # the model's own tokenizer: 11 context tokens > 4, 6 response tokens > 3
    assert len(tok(context).input_ids) > 4 and len(tok(" " + response).input_ids) > 3
    dialogues = {"d": Dialogue(id="d", turns=[Turn(speaker="A", text=context)])}
    cands = [Candidate(id="a", dialogue_id="d", turn_index=1, system="s", text=response),
             Candidate(id="b", dialogue_id="d", turn_index=1, system="s", text="Yes.")]  # fmt: skip
    (run,) = score_metrics([small], cands, dialogues)
    cut = {(s.item_id, s.metric): s.extras.get("cut") for s in run.scores}
    ctx, resp = "context read to its last 4 tokens (max_context_tokens)", "response read to its first 3 tokens " \
        "(max_response_tokens)"  # fmt: skip
    assert cut[("a", "lm_likelihood")] == cut[("a", "lm_context_gain")] == f"{ctx}; {resp}"
    assert cut[("a", "lm_likelihood_uncond")] == resp and cut[("b", "lm_likelihood_uncond")] is None
    assert cut[("b", "lm_likelihood")] == ctx
    (run,) = score_metrics([metric], cands, dialogues)  # the default limits (512, 256): nothing cut
    assert run.cuts() == {}


#: Over 8,192 tokens by SmolLM2's tokenizer (9,600: 800 x 12 tokens).
LONG = " ".join(["I really like walking my dog in the park every morning."] * 800)
#: What the score of a context cut to fit the model says (SmolLM2-135M's config: max_position_embeddings 8192).
FIT = "context cut from its start to fit the model's 8192 positions with the prompt and the response"


def test_a_context_past_the_models_positions_is_cut_to_fit_and_said(metric, usr_items):
    """-p max_context_tokens=100000 laid a 9,600-token context before the response, past the 8,192 positions
    SmolLM2-135M has, with nothing said. The context is now cut from its start to fit the prompt and the whole
    response in them, and its scores say so; a response too long for them is cut from its end. Inputs that fit are
    read as before."""
    from dialeval.schema import Turn

    big = LikelihoodMetric(max_context_tokens=100_000, max_response_tokens=100_000)
    model, tok, _ = big._loaded()
    assert model.config.max_position_embeddings == 8192  # the packaged model's own config
    assert len(tok(LONG).input_ids) > 8192
    response = "Yes, every single morning."
    item = MetricInput(response=response, context=(Turn(speaker="A", text=LONG),))
    ((prefix, cont),), _ = big.requests([item])
    assert cont == tuple(tok(" " + response, add_special_tokens=False).input_ids)  # the response whole
    assert 8192 - 8 <= len(prefix) + len(cont) <= 8192  # filled but for a re-tokenized word's pieces
    prompt = tok.decode(prefix)
    assert prompt.startswith(tok.bos_token + "###Speaker: ") and prompt.endswith("every morning. ###Response:")
    assert big.cut([item]) == [{"lm_likelihood": FIT, "lm_context_gain": FIT}]
    # a response past the positions: the prompt of an empty context, and the response cut from its end to fit
    long_reply = MetricInput(response=LONG, context=(Turn(speaker="A", text="Hi."),))
    ((prefix, cont),), ((bos, cont_u),) = big.requests([long_reply])
    assert len(prefix) + len(cont) == 8192 and (bos, cont_u) == (prefix[:1], cont)
    assert cont == tuple(tok(" " + LONG, add_special_tokens=False).input_ids)[: len(cont)]
    assert tok.decode(prefix) == tok.bos_token + "###Speaker:  ###Response:"
    said = "response cut from its end to fit the model's 8192 positions with the prompt"
    assert big.cut([long_reply]) == [{"lm_likelihood": f"{FIT}; {said}", "lm_likelihood_uncond": said,
                                      "lm_context_gain": f"{FIT}; {said}"}]  # fmt: skip
    # inputs that fit: the default's requests, token for token
    assert big.requests(usr_items) == metric.requests(usr_items) and big.cut(usr_items) == [{}] * len(usr_items)


@pytest.mark.parametrize("extra", [0, 3])
def test_a_template_that_fills_the_models_positions_is_one_error(metric, extra):
    """A template whose prompt, with an empty context, already fills the model's 8,192 positions left every response
    cut to no token: each item was None with 'metric could not score this item'. It is now one error up front,
    naming both lengths; a template that leaves room for part of a response is read as before (cut() says so)."""
    from dialeval.errors import InputError
    from dialeval.schema import Turn

    _, tok, _ = metric._loaded()
    # SmolLM2's tokenizer reads " x" as one token: with the start token, the prompt holds 1 + the number of " x"
    (x,) = tok(" x", add_special_tokens=False).input_ids
    assert tok(" x" * 8191, add_special_tokens=False).input_ids == [x] * 8191
    item = MetricInput(response="Yes, every single morning.", context=(Turn(speaker="A", text="Hi."),))
    full = LikelihoodMetric(template="{context}" + " x" * (8191 + extra))
    for call in (full.compute, full.cut, full.requests):
        with pytest.raises(InputError) as err:
            call([item])
        assert err.value.field == "template"
        assert err.value.message == (f'likelihood.template holds {8192 + extra} tokens with an empty context (the '
                                     'start token included) and "smollm2-135m" reads 8192 positions: no room for a '
                                     "response (shorten the template)")  # fmt: skip
    # one position left: the context goes and the response is read to its first token, as cut() says
    room = LikelihoodMetric(template="{context}" + " x" * 8190)
    ((prefix, cont),), _ = room.requests([item])
    assert len(prefix) == 8191 and cont == tuple(tok(" Yes", add_special_tokens=False).input_ids)
    said = "response cut from its end to fit the model's 8192 positions with the prompt"
    assert room.cut([item])[0]["lm_likelihood_uncond"] == said


def test_a_tokenizer_without_a_start_token_is_refused(metric, monkeypatch):
    """With neither a BOS nor an EOS token the unconditional prompt was empty, and its first response token was
    "predicted" from the previous row's last token (the first row's from the last position of the pass): a
    value, and a wrong one. No packaged model lacks both; this one is SmolLM2 with both taken away."""
    import copy

    from dialeval.errors import InputError
    from dialeval.models import loading

    model, tok, fp = metric._loaded()
    bare = copy.deepcopy(tok)
    bare.bos_token = bare.eos_token = None
    assert bare.bos_token_id is None and bare.eos_token_id is None
    monkeypatch.setattr(loading, "load_causal_lm", lambda *_args: (model, bare, fp))
    with pytest.raises(InputError) as err:
        LikelihoodMetric().compute([MetricInput(response="Yes, every single morning.")])
    assert err.value.field == "model"
    assert "neither a BOS nor an EOS token" in err.value.message


def test_a_continuation_without_a_prefix_is_refused(metric):
    model, tok, _ = metric._loaded()
    cont = tuple(tok(" Yes", add_special_tokens=False).input_ids)
    with pytest.raises(ValueError, match="at least one token"):
        continuation_nll(model, [((tok.bos_token_id,), cont), ((), cont)])
