"""A local transformers causal LM by directory path (no hub downloads).

A request with an answer shape is decoded under a token mask: at each step only
the tokens that continue an allowed answer (:meth:`AnswerShape.token_trie`) keep
their logits (``prefix_allowed_tokens_fn`` of ``generate``). The returned
log-probabilities are those of the processed scores, so under the mask they are the
distribution over the allowed tokens, renormalised.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from dialeval.backends.base import Backend, BackendOptions, ChatRequest, Completion, missing_model
from dialeval.backends.structure import AnswerShape, TokenTrie
from dialeval.errors import InputError, MissingExtraError


class TransformersBackend(Backend):
    """Chat with a local ``AutoModelForCausalLM`` directory that has a chat template.

    Args:
        model: A local model directory.
    """

    @classmethod
    def from_options(cls, options: BackendOptions) -> TransformersBackend:
        """Build from ``model`` (a local model directory; needed)."""
        if not options.model:
            raise InputError("the transformers backend needs model=<local model directory>", field="model")
        return cls(options.model)

    def __init__(self, model: str) -> None:
        try:
            import torch
            from transformers import AutoModelForCausalLM, AutoTokenizer
        except ImportError as exc:
            raise MissingExtraError("transformers", extra="models") from exc
        if why := missing_model("transformers", model):
            raise InputError(why, path=model)
        self.path = model
        self._torch = torch
        try:
            self.tokenizer: Any = AutoTokenizer.from_pretrained(model, local_files_only=True)
            self.model: Any = AutoModelForCausalLM.from_pretrained(model, local_files_only=True)
        except (OSError, ValueError) as exc:  # no config.json, no weights, an unknown architecture
            reason = " ".join(str(exc).split())
            raise InputError(f"not a causal LM that transformers can load: {reason}", path=model) from None
        self.model.eval()  # type: ignore[no-untyped-call]
        self._tries: dict[str, TokenTrie] = {}

    def allowed_tokens(self, shape: AnswerShape, prompt_len: int) -> Callable[[int, Any], list[int]]:
        """Return the ``prefix_allowed_tokens_fn`` that holds generation to ``shape``.

        After a complete answer only the end-of-sequence token is allowed.
        """
        key = shape.key()
        if key not in self._tries:
            self._tries[key] = shape.token_trie(lambda t: list(self.tokenizer.encode(t, add_special_tokens=False)))
        trie, eos = self._tries[key], int(self.tokenizer.eos_token_id)

        def allowed(_batch: int, ids: Any) -> list[int]:
            node = trie
            for t in ids[prompt_len:].tolist():
                if t not in node:
                    return [eos]
                node = node[t]
            nxt = [t for t in node if t >= 0]
            return [*nxt, eos] if -1 in node or not nxt else nxt

        return allowed

    @property
    def signature(self) -> str:
        """``transformers:<directory name>:<name_or_path>``."""
        return f"transformers:{Path(self.path).name}:{self.model.config.name_or_path}"

    def chat(self, request: ChatRequest) -> Completion:
        """Generate with the model's chat template; top log-probabilities from the scores."""
        torch = self._torch
        if request.raw:
            ids = self.tokenizer(request.prompt, return_tensors="pt")["input_ids"]
        else:
            msgs = [{"role": r, "content": c} for r, c in request.messages]
            ids = self.tokenizer.apply_chat_template(msgs, add_generation_prompt=True, return_tensors="pt")
            if not isinstance(ids, torch.Tensor):
                ids = ids["input_ids"]
        torch.manual_seed(request.seed)
        sample = request.temperature > 0
        with torch.no_grad():
            out = self.model.generate(
                ids, max_new_tokens=request.max_tokens, do_sample=sample,
                temperature=request.temperature if sample else None, top_p=None, top_k=None,
                output_scores=True, return_dict_in_generate=True,
                pad_token_id=self.tokenizer.eos_token_id,
                prefix_allowed_tokens_fn=(
                    self.allowed_tokens(request.answer, int(ids.shape[1])) if request.answer is not None else None
                ),
            )
        new = out.sequences[0, ids.shape[1]:]
        eos = self.tokenizer.eos_token_id
        tokens = tuple("" if int(t) == eos else self.tokenizer.decode([t]) for t in new)
        tops: list[dict[str, float]] = []
        if request.top_logprobs:
            for step in out.scores:
                lp = torch.log_softmax(step[0].float(), dim=-1)
                vals, idx = lp.topk(request.top_logprobs)
                tops.append({
                    ("" if int(i) == eos else self.tokenizer.decode([int(i)])): float(v)
                    for v, i in zip(vals, idx, strict=True) if v > -float("inf")
                })
        text = self.tokenizer.decode(new, skip_special_tokens=True)
        for stop in request.stop:  # generate() has no stop strings: cut after the fact
            text = text.split(stop, 1)[0]
        return Completion(
            text=text, tokens=tokens, top_logprobs=tuple(tops),
            prompt_tokens=int(ids.shape[1]), completion_tokens=len(new),
        )
