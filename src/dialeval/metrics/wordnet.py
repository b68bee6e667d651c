"""WordNet 3.0 for METEOR's synonym stage, built from Debian's packaged files.

No corpus can be downloaded at run time, so the WordNet that NLTK reads comes
from the Debian packages ``wordnet-base`` and ``wordnet-sense-index``
(``/usr/share/wordnet``). NLTK 3.10 wants the files as real files under
``<dir>/corpora/wordnet`` together with a ``lexnames`` file (the WordNet
lexicographer file list, ``man 5 lexnames``), which Debian does not ship.
:func:`nltk_wordnet_dir` builds that folder once under the dialeval cache.

Example:
    >>> lines = LEXNAMES.splitlines()
    >>> len(lines), lines[44].split()
    (45, ['44', 'adj.ppl', '3'])
"""

from __future__ import annotations

import hashlib
import os
import shutil
from functools import cache
from pathlib import Path
from typing import Any

from dialeval.errors import MissingExtraError
from dialeval.paths import cache_dir
from dialeval.signature import file_sha256

DEBIAN_WORDNET = Path("/usr/share/wordnet")
INSTALL_HINT = "apt-get install wordnet-base wordnet-sense-index"
#: Files NLTK's WordNetCorpusReader opens (``index.sense`` is in wordnet-sense-index).
REQUIRED_FILES = (
    *(f"{kind}.{pos}" for kind in ("index", "data") for pos in ("noun", "verb", "adj", "adv")),
    *(f"{pos}.exc" for pos in ("noun", "verb", "adj", "adv")),
    "index.sense",
)

_LEXFILES = (
    "adj.all", "adj.pert", "adv.all", "noun.Tops", "noun.act", "noun.animal", "noun.artifact",
    "noun.attribute", "noun.body", "noun.cognition", "noun.communication", "noun.event",
    "noun.feeling", "noun.food", "noun.group", "noun.location", "noun.motive", "noun.object",
    "noun.person", "noun.phenomenon", "noun.plant", "noun.possession", "noun.process",
    "noun.quantity", "noun.relation", "noun.shape", "noun.state", "noun.substance", "noun.time",
    "verb.body", "verb.change", "verb.cognition", "verb.communication", "verb.competition",
    "verb.consumption", "verb.contact", "verb.creation", "verb.emotion", "verb.motion",
    "verb.perception", "verb.possession", "verb.social", "verb.stative", "verb.weather", "adj.ppl",
)
_POS_NUMBER = {"noun": 1, "verb": 2, "adj": 3, "adv": 4}
#: The 45 WordNet 3.0 lexicographer files: ``NN<TAB>name<TAB>syntactic category``.
LEXNAMES = "".join(f"{i:02d}\t{name}\t{_POS_NUMBER[name.split('.')[0]]}\n" for i, name in enumerate(_LEXFILES))


def wordnet_unavailable(source: Path | None = None) -> str | None:
    """Return why WordNet cannot be used from ``source`` (with the install command), or None.

    ``source`` defaults to :data:`DEBIAN_WORDNET`.
    """
    source = source or DEBIAN_WORDNET
    missing = [name for name in REQUIRED_FILES if not (source / name).is_file()]
    if missing:
        return f"WordNet files missing from {source} ({', '.join(missing[:3])}...): {INSTALL_HINT}"
    return None


@cache
def _fingerprint(source: Path) -> str:
    digest = hashlib.sha256()
    for name in REQUIRED_FILES:
        digest.update(file_sha256(source / name).encode())
    return digest.hexdigest()[:16]


def wordnet_fingerprint(source: Path | None = None) -> str:
    """Return a short sha256 over the WordNet files METEOR reads, or ``"missing"``."""
    source = source or DEBIAN_WORDNET
    return "missing" if wordnet_unavailable(source) else _fingerprint(source)


def nltk_wordnet_dir(source: Path | None = None, target: Path | None = None) -> Path:
    """Return an NLTK data folder holding ``corpora/wordnet``, building it once.

    Args:
        source: Folder of the Debian WordNet files (default :data:`DEBIAN_WORDNET`).
        target: The NLTK data folder to build (default ``<cache>/nltk_data``).

    Raises:
        MissingExtraError: The WordNet files are not installed; the message names
            the ``apt-get install`` command.
    """
    source = source or DEBIAN_WORDNET
    if (reason := wordnet_unavailable(source)) is not None:
        raise MissingExtraError("wordnet", hint=reason)
    root = target or cache_dir() / "nltk_data"
    corpus = root / "corpora" / "wordnet"
    if (corpus / "lexnames").is_file():
        return root
    staging = root / "corpora" / f".wordnet-{os.getpid()}"
    staging.mkdir(parents=True, exist_ok=True)
    for path in source.iterdir():
        if path.is_file():
            shutil.copyfile(path, staging / path.name)  # copies, never links: NLTK needs real files
    (staging / "lexnames").write_text(LEXNAMES, encoding="utf-8")
    try:
        staging.rename(corpus)  # atomic: a half-built folder is never seen as done
    except OSError:  # another process finished first
        shutil.rmtree(staging, ignore_errors=True)
    return root


def load_wordnet(source: Path | None = None) -> Any:
    """Return NLTK's WordNet reader over the packaged WordNet; put its folder first on ``nltk.data.path``."""
    return _load_wordnet(source or DEBIAN_WORDNET)


@cache
def _load_wordnet(source: Path) -> Any:
    import warnings

    import nltk
    from nltk.corpus.reader.wordnet import WordNetCorpusReader

    class EnglishWordNet(WordNetCorpusReader):  # type: ignore[misc]
        """NLTK's reader without the Open Multilingual WordNet mapping it builds at start.

        NLTK 3.10's ``__init__`` maps every synset to WordNet 3.0 (``map30``, ``map_wn``) for
        OMW's tab files; with WordNet 3.0 itself and no OMW reader that map is never read, and
        building it reads ``index.sense`` twice: about half of the reader's start (4 of 8 s on 2 cores).
        """

        def map_wn(self, version: str = "wordnet") -> None:
            return None

    root = nltk_wordnet_dir(source)
    if str(root) not in nltk.data.path:
        nltk.data.path.insert(0, str(root))
    with warnings.catch_warnings():  # no Open Multilingual WordNet: English synonyms only
        warnings.simplefilter("ignore", UserWarning)
        return EnglishWordNet(str(root / "corpora" / "wordnet"), None)
