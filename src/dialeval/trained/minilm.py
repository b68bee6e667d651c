"""A small transformer encoder fine-tuned on the CPU: the packaged all-MiniLM-L6-v2 with a head.

DiQAD fine-tunes BERT-style encoders on the ``question: ... response: ...`` text
with AdamW (lr 1e-5, batch 16, gradient clipping at 1.0, up to 10 epochs). On a
CPU we keep the recipe but train few epochs (default 2) with a larger learning
rate (5e-5) and inputs cut to 128 tokens from the left, so the response under
evaluation is always kept. The head is a single output trained with MSE
(``regression``) or three logits trained with cross-entropy (``classification``).
Training reports the mean loss of every epoch and the seconds it took.

Example:
    >>> MiniLM.defaults["epochs"], MiniLM.defaults["max_length"]
    (2, 128)
"""

from __future__ import annotations

import random
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar

from dialeval.errors import InputError
from dialeval.metrics.base import MetricInput
from dialeval.trained.data import Example
from dialeval.trained.evaluator import EVALUATORS, Bound, Evaluator, finite_scores
from dialeval.trained.features import format_input


class MiniLM(Evaluator):
    """all-MiniLM-L6-v2 (or any local BERT-style folder) fine-tuned with a regression or 3-class head."""

    kind = "minilm"
    defaults: ClassVar[dict[str, Any]] = {
        "base": "all-minilm-l6-v2", "epochs": 2, "lr": 5e-5, "batch_size": 16, "max_length": 128,
        "max_steps": 0, "threads": 0,
    }
    bounds: ClassVar[dict[str, Bound]] = {
        "epochs": Bound(1), "lr": Bound(0, strict=True), "batch_size": Bound(1), "max_length": Bound(8, 512),
        "max_steps": Bound(0), "threads": Bound(0),
    }

    def __init__(self, task: str = "regression", seed: int = 0, **params: Any) -> None:
        super().__init__(task, seed, **params)
        self.model: Any = None
        self.tokenizer: Any = None

    def check(self) -> None:
        """Refuse a ``base`` that is neither a packaged encoder nor a model folder."""
        from dialeval.models.loading import resolve_encoder_dir

        try:
            resolve_encoder_dir(str(self.params["base"]))
        except InputError as exc:
            raise InputError(f"{self.kind}.base: {exc.message}", field="--model-param") from None

    def _setup(self) -> None:
        import torch

        from dialeval.models.loading import require, set_offline

        require("torch")
        require("transformers")
        set_offline()
        from transformers.utils import logging as hf_logging

        hf_logging.set_verbosity_error()  # type: ignore[no-untyped-call]  # no load report for the new head: it is meant to be trained
        if self.params["threads"]:
            torch.set_num_threads(int(self.params["threads"]))

    def _encode(self, texts: Sequence[str]) -> Any:
        return self.tokenizer(
            list(texts), padding=True, truncation=True, max_length=int(self.params["max_length"]), return_tensors="pt"
        )

    def _fit(self, examples: Sequence[Example]) -> None:
        self._setup()
        import torch
        from transformers import AutoModelForSequenceClassification, AutoTokenizer

        from dialeval.models.loading import fingerprint, resolve_encoder_dir

        folder = resolve_encoder_dir(str(self.params["base"]))
        self.info["base_fingerprint"] = fingerprint(folder)
        torch.manual_seed(self.seed)
        cls = self.task == "classification"
        self.tokenizer = AutoTokenizer.from_pretrained(str(folder))
        self.tokenizer.truncation_side = "left"
        self.model = AutoModelForSequenceClassification.from_pretrained(
            str(folder), num_labels=3 if cls else 1, problem_type="single_label_classification" if cls else "regression"
        )
        texts = [e.text for e in examples]
        y = self.y(examples)
        opt = torch.optim.AdamW(self.model.parameters(), lr=float(self.params["lr"]))
        bs, epochs = int(self.params["batch_size"]), int(self.params["epochs"])
        max_steps = int(self.params["max_steps"])
        order = list(range(len(texts)))
        rng = random.Random(self.seed)
        epoch_losses: list[float] = []
        step_losses: list[float] = []
        start = time.perf_counter()
        self.model.train()
        for _ in range(epochs):
            rng.shuffle(order)
            losses = []
            for b in range(0, len(order), bs):
                idx = order[b : b + bs]
                enc = self._encode([texts[i] for i in idx])
                labels = torch.tensor([y[i] for i in idx], dtype=torch.long if cls else torch.float32)
                loss = self.model(**enc, labels=labels).loss
                opt.zero_grad()
                loss.backward()
                torch.nn.utils.clip_grad_norm_(self.model.parameters(), 1.0)
                opt.step()
                losses.append(float(loss.detach()))
                if max_steps and len(step_losses) + len(losses) >= max_steps:
                    break
            step_losses.extend(losses)
            epoch_losses.append(sum(losses) / len(losses))
            if max_steps and len(step_losses) >= max_steps:
                break
        self.model.eval()
        self.info.update(
            epoch_losses=[round(v, 5) for v in epoch_losses], steps=len(step_losses),
            step_losses=[round(v, 5) for v in step_losses], train_seconds=round(time.perf_counter() - start, 2),
        )

    def predict(self, items: Sequence[MetricInput]) -> list[float]:
        """Return the head's output (regression) or the expected class / 2, per item."""
        if self.model is None:
            raise RuntimeError("minilm is not fitted")
        import torch

        texts = [format_input(i.context, i.response) for i in items]
        out: list[float] = []
        with torch.inference_mode():
            for b in range(0, len(texts), 32):
                logits = self.model(**self._encode(texts[b : b + 32])).logits.float()
                if self.task == "classification":
                    probs = torch.softmax(logits, dim=-1)
                    out.extend((probs @ torch.arange(3, dtype=torch.float32) / 2.0).tolist())
                else:
                    out.extend(logits[:, 0].tolist())
        return finite_scores([float(v) for v in out], self.kind)

    def save(self, folder: Path) -> list[str]:
        """Write the fine-tuned model and tokenizer into ``encoder/``."""
        self.model.save_pretrained(folder / "encoder")
        self.tokenizer.save_pretrained(folder / "encoder")
        return sorted(p.relative_to(folder).as_posix() for p in (folder / "encoder").rglob("*") if p.is_file())

    @classmethod
    def load(cls, folder: Path, card: dict[str, Any]) -> Evaluator:
        """Load ``encoder/`` back (offline).

        Raises:
            InputError: The card's task is not the saved head's (3 logits classify, 1 output regresses).
        """
        ev = cls(card["task"], card.get("seed", 0), **card["params"])
        ev._setup()
        from transformers import AutoModelForSequenceClassification, AutoTokenizer

        ev.tokenizer = AutoTokenizer.from_pretrained(str(folder / "encoder"))
        ev.tokenizer.truncation_side = "left"
        ev.model = AutoModelForSequenceClassification.from_pretrained(str(folder / "encoder")).eval()
        if (n := ev.model.config.num_labels) != (3 if ev.task == "classification" else 1):
            model = {1: "a regression model (1 output)", 3: "a classifier (3 outputs)"}.get(n, f"{n} outputs")
            raise InputError(f'is "{ev.task}", but the saved model is {model}: train the model again (dialeval train)',
                             field="task")
        return ev


EVALUATORS.register(MiniLM.kind, MiniLM)
