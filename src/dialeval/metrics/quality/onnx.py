"""Run quality's encoders in ONNX Runtime (``pip install onnxruntime onnx``, in the ``models`` extra).

On an AMD CPU, ONNX Runtime runs the trained cross-encoder and the sentence encoders (MiniLM,
and all-mpnet-base-v2 with its adapter merged) 1.1-1.6x as fast as torch eager, depending on
the machine (``benchmarks/bench_quality.py``); the logits and embeddings match eager to about 1e-5
(``tests/quality/test_onnx.py``). Each model (for the views and the larger heads, the adapter
merged into the encoder) is exported once per trained folder or encoder and torch version, to
``<cache>/onnx/<name>-<key>.onnx`` (about 90 MB for a MiniLM, 440 MB for mpnet), and reused.

``auto`` picks ONNX Runtime on CPU, except on Intel processors: there torch's kernels (MKL)
multiply faster than ONNX Runtime's, while on AMD's it is the other way round (measured with
``benchmarks/bench_quality.py``: on an AMD EPYC with AVX-512, ONNX Runtime 1.57x torch eager for
the whole metric; on an Intel Xeon with AVX-512 and AMX, 0.84-0.90x; docs/quality.md).

Example:
    >>> resolve_runtime("torch", "cpu")
    'torch'
    >>> resolve_runtime("auto", "cuda")
    'torch'
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from dialeval.errors import InputError, MissingExtraError
from dialeval.paths import cache_dir

#: What ``runtime`` may be: ``auto`` is ``onnx`` on CPU when ONNX Runtime is installed, else ``torch``.
RUNTIMES = ("auto", "torch", "onnx")
#: The ONNX opset of the export.
OPSET = 17
#: The inputs of a BERT-style export: token ids, attention mask, token types.
INPUTS = ("ids", "mask", "types")
#: The sentence encoders' model types that :func:`onnx_encoder` exports (MiniLM is a BERT).
ONNX_MODEL_TYPES = ("bert", "mpnet")
#: The files of a trained views folder that an export's key covers.
VIEWS_FILES = ("adapter.safetensors", "heads.json")


def _installed() -> bool:
    return importlib.util.find_spec("onnxruntime") is not None and importlib.util.find_spec("onnx") is not None


def cpu_vendor() -> str:
    """Return the CPU's vendor id from ``/proc/cpuinfo`` (``GenuineIntel``, ``AuthenticAMD``), "" if unknown."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            for line in fh:
                if line.startswith("vendor_id"):
                    return line.partition(":")[2].strip()
    except OSError:
        pass
    return ""


def resolve_runtime(runtime: str, device: str) -> str:
    """Return the runtime that will run quality's encoders: ``torch`` or ``onnx``.

    ``auto``: ``onnx`` on a CPU that is not Intel's, when ONNX Runtime is installed; else ``torch``.

    Raises:
        InputError: ``runtime`` is not one of :data:`RUNTIMES`, or ``onnx`` on a device other than the CPU.
        MissingExtraError: ``onnx`` was asked for and ONNX Runtime is not installed.
    """
    if runtime not in RUNTIMES:
        raise InputError(f'runtime "{runtime}" is not one of {", ".join(RUNTIMES)}', field="runtime")
    if runtime == "auto":
        return "onnx" if device == "cpu" and _installed() and cpu_vendor() != "GenuineIntel" else "torch"
    if runtime == "onnx":
        if device != "cpu":
            raise InputError(f'runtime "onnx" runs on the CPU only (device is "{device}")', field="runtime")
        if not _installed():
            raise MissingExtraError("onnxruntime", extra="models")
    return runtime


class OrtViews:
    """A cross-encoder as an ONNX Runtime session, called like the torch model: ``(ids, mask, types) -> logits``."""

    def __init__(self, path: Path, threads: int) -> None:
        """Open the exported model with ``threads`` intra-op threads (the torch setting, for the same CPU use)."""
        import onnxruntime as ort

        opts = ort.SessionOptions()
        opts.intra_op_num_threads = threads
        opts.inter_op_num_threads = 1
        opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        self.session = ort.InferenceSession(str(path), opts, providers=["CPUExecutionProvider"])
        self.inputs = {i.name for i in self.session.get_inputs()}

    def parameters(self) -> Iterator[Any]:
        """Yield one empty CPU tensor: where :func:`~dialeval.metrics.quality.crossenc.score_batches` puts inputs."""
        import torch

        yield torch.empty(0)

    def __call__(self, ids: Any, mask: Any, types: Any) -> Any:
        """Return the view logits of a padded batch as a torch tensor."""
        import torch

        feed = {"ids": ids.numpy(), "mask": mask.numpy()}
        if "types" in self.inputs:  # an MPNet cross-encoder's export reads no token types
            feed["types"] = types.numpy()
        return torch.from_numpy(self.session.run(None, feed)[0])


def export_key(encoder_fingerprint: str, views: Path | None = None, files: tuple[str, ...] = VIEWS_FILES) -> str:
    """Return the cache key of an export: the encoder, torch, the opset and the trained ``files`` of ``views``.

    ``views``: a trained folder whose ``files`` change the exported weights (a views folder's
    adapter and heads; the larger heads' folder's adapter and card); None for a plain encoder.
    """
    import torch

    h = hashlib.sha256(f"{encoder_fingerprint}|torch {torch.__version__}|opset {OPSET}".encode())
    if views is not None:
        for name in files:
            h.update((views / name).read_bytes())
    return h.hexdigest()[:20]


def _export(model: Any, name: str, output: str, inputs: tuple[str, ...] = INPUTS) -> Path:
    """Export ``model(*inputs) -> output`` to ``<cache>/onnx/<name>.onnx`` unless it is there; return the path.

    ``inputs``: ``ids``, ``mask`` and, for BERT-style models, ``types``. Written to a temporary
    file and renamed, so a process never reads a half-written export; under a lock in the cache,
    so that processes started together (Ray's workers) export it once, not once each.
    """
    import warnings

    import torch

    from dialeval.models.loading import cache_lock

    path = cache_dir() / "onnx" / f"{name}.onnx"
    if path.exists():
        return path
    with cache_lock(f"onnx-{name}"):
        if path.exists():  # another process exported it while this one waited
            return path
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        dummy = tuple((torch.zeros if n == "types" else torch.ones)((2, 16), dtype=torch.long) for n in inputs)
        axes = {n: {0: "batch", 1: "tokens"} for n in inputs} | {output: {0: "batch"}}
        with warnings.catch_warnings():  # the tracer's notes on shape arithmetic it folds (checked by the parity test)
            warnings.simplefilter("ignore")
            torch.onnx.export(model, dummy, str(tmp), input_names=list(inputs), output_names=[output],
                              dynamic_axes=axes, opset_version=OPSET, dynamo=False)  # fmt: skip
        tmp.replace(path)
    return path


def _open(model: Any, name: str, output: str, inputs: tuple[str, ...] = INPUTS) -> OrtViews:
    """Return the session of ``model``'s export, exporting it again once if the cached file does not load."""
    import torch

    path = _export(model, name, output, inputs)
    try:
        return OrtViews(path, torch.get_num_threads())
    except Exception:  # a damaged cache file (a full disk, an edit): export again; a second failure is raised
        path.unlink(missing_ok=True)
        return OrtViews(_export(model, name, output, inputs), torch.get_num_threads())


def onnx_views(model: Any, key: str) -> OrtViews:
    """Return ``model`` (a loaded views model) as an :class:`OrtViews`, exporting it first if it is not cached.

    A model whose encoder reads no token types (``model.typed`` false: MPNet) is exported with
    the inputs ``ids`` and ``mask`` alone.
    """
    if getattr(model, "typed", True):
        return _open(model, f"views-{key}", "logits")
    import torch

    class Untyped(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.views = model

        def forward(self, ids: Any, mask: Any) -> Any:
            return self.views(ids, mask, None)

    return _open(Untyped().eval(), f"views-{key}", "logits", ("ids", "mask"))


class OrtEncoder:
    """A sentence-transformers encoder whose transformer runs in ONNX Runtime; its own pooling modules follow.

    It answers what :func:`dialeval.metrics.quality.features.embed` asks of an encoder:
    ``tokenizer``, ``max_seq_length`` and ``encode(texts, batch_size=, convert_to_numpy=, normalize_embeddings=)``.
    """

    def __init__(self, encoder: Any, transformer: OrtViews) -> None:
        """Wrap a loaded ``SentenceTransformer`` and the session of its first module's export."""
        self.st = encoder
        self.tokenizer = encoder.tokenizer
        self.max_seq_length = encoder.max_seq_length
        self.session = transformer.session
        self.inputs = {i.name for i in self.session.get_inputs()}

    def encode(self, texts: list[str], batch_size: int, convert_to_numpy: bool = True,
               normalize_embeddings: bool = False) -> Any:  # fmt: skip
        """Return the embeddings of ``texts`` as numpy, as the wrapped encoder would (``texts`` are one batch)."""
        import torch

        feats = self.st[0].preprocess(texts)
        feed = {"ids": feats["input_ids"].numpy(), "mask": feats["attention_mask"].numpy()}
        if "types" in self.inputs:
            feed["types"] = feats["token_type_ids"].numpy()
        out = {"token_embeddings": torch.from_numpy(self.session.run(None, feed)[0]),
               "attention_mask": feats["attention_mask"]}  # fmt: skip
        with torch.inference_mode():
            for module in list(self.st)[1:]:
                out = module(out)
            emb = out["sentence_embedding"]
            if normalize_embeddings:
                emb = torch.nn.functional.normalize(emb, p=2, dim=1)
        return emb.numpy()


def plain(modules: list[str], model_type: str) -> bool:
    """Whether an encoder of these modules (class names) over a model of this type is one :func:`onnx_encoder` exports.

    Example:
        >>> plain(["Transformer", "Pooling", "Normalize"], "mpnet"), plain(["Transformer", "Pooling", "Dense"], "bert")
        (True, False)
    """
    return (modules[:1] == ["Transformer"] and all(m in ("Pooling", "Normalize") for m in modules[1:])
            and model_type in ONNX_MODEL_TYPES)  # fmt: skip


def exportable(encoder_dir: Path) -> bool:
    """Whether :func:`onnx_encoder` exports the sentence-transformers folder, read from its files without loading it.

    :func:`plain` over ``modules.json``'s module types and ``config.json``'s ``model_type``; False
    if either is missing or unreadable.
    """
    import json

    try:
        modules = json.loads((encoder_dir / "modules.json").read_text(encoding="utf-8"))
        kind = json.loads((encoder_dir / "config.json").read_text(encoding="utf-8"))["model_type"]
        return plain([str(m["type"]).rsplit(".", 1)[-1] for m in modules], str(kind))
    except (OSError, ValueError, KeyError, TypeError):
        return False


def onnx_encoder(encoder: Any, key: str) -> OrtEncoder | None:
    """Return ``encoder`` with its transformer in ONNX Runtime, or None if it is not a plain BERT or MPNet encoder.

    Plain: a ``Transformer`` module over a model of :data:`ONNX_MODEL_TYPES` (BERT reads ids,
    mask and token types; MPNet, as all-mpnet-base-v2, ids and mask), then only ``Pooling`` and
    ``Normalize`` modules (which run in torch as before).
    """
    import torch

    if not plain([type(m).__name__ for m in encoder], str(getattr(encoder[0].auto_model.config, "model_type", ""))):
        return None
    auto = encoder[0].auto_model
    kind = auto.config.model_type
    if ("token_type_ids" in encoder[0].preprocess(["a"])) != (kind == "bert"):
        return None

    class Hidden(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.auto = auto

        def forward(self, ids: Any, mask: Any, types: Any = None) -> Any:
            extra = {} if types is None else {"token_type_ids": types}
            return self.auto(input_ids=ids, attention_mask=mask, **extra).last_hidden_state

    inputs = INPUTS if kind == "bert" else INPUTS[:2]
    return OrtEncoder(encoder, _open(Hidden().eval(), f"encoder-{key}", "hidden", inputs))
