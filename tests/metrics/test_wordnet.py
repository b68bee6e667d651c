"""The packaged WordNet for METEOR: building the NLTK folder, synonyms, and the missing-WordNet error."""

from __future__ import annotations

from pathlib import Path

import pytest

from dialeval.errors import MissingExtraError
from dialeval.metrics import functional as F
from dialeval.metrics.base import MetricInput
from dialeval.metrics.lexical import Meteor
from dialeval.metrics.wordnet import DEBIAN_WORDNET, load_wordnet, nltk_wordnet_dir


def test_builds_an_nltk_wordnet_folder_from_the_debian_files(tmp_path: Path) -> None:
    root = nltk_wordnet_dir(DEBIAN_WORDNET, tmp_path / "nltk_data")
    corpus = root / "corpora" / "wordnet"
    assert (corpus / "data.noun").is_file() and not (corpus / "data.noun").is_symlink()
    assert (corpus / "data.noun").stat().st_size == (DEBIAN_WORDNET / "data.noun").stat().st_size
    lexnames = (corpus / "lexnames").read_text().splitlines()
    # WordNet 3.0 lexicographer files (man 5 lexnames): 00 adj.all ... 03 noun.Tops ... 44 adj.ppl
    assert len(lexnames) == 45
    assert lexnames[0] == "00\tadj.all\t3" and lexnames[3] == "03\tnoun.Tops\t1"
    assert lexnames[29] == "29\tverb.body\t2" and lexnames[44] == "44\tadj.ppl\t3"
    assert nltk_wordnet_dir(DEBIAN_WORDNET, tmp_path / "nltk_data") == root  # second call reuses it


def test_reader_is_wordnet_30_with_synonyms() -> None:
    wn = load_wordnet()
    assert wn.get_version() == "3.0"
    assert "fast" in {lemma for s in wn.synsets("quick") for lemma in s.lemma_names()}


def test_meteor_synonym_scores_above_exact_match_only() -> None:
    # Exact match only, by hand (NLTK METEOR, alpha=0.9, beta=3, gamma=0.5):
    #   hyp "he is fast" vs ref "he is quick": matches he, is -> P = R = 2/3, Fmean = 2/3
    #   one chunk, frag = 1/2, penalty = 0.5 * (1/2)^3 = 0.0625 -> 2/3 * 0.9375 = 0.625
    # With WordNet, fast~quick also matches: P = R = 1, one chunk, frag = 1/3,
    #   penalty = 0.5 / 27 -> 1 - 1/54 = 0.98148...
    exact_only = 2 / 3 * (1 - 0.5 * 0.5**3)
    value = float(F.sentence_meteor(["he is fast"], [["he is quick"]])[0])
    assert value == pytest.approx(1 - 1 / 54, abs=1e-12)
    assert value > exact_only + 0.3
    # Control: unrelated words get no synonym credit (same arithmetic as exact_only).
    assert float(F.sentence_meteor(["he is blue"], [["he is quick"]])[0]) == pytest.approx(exact_only, abs=1e-12)


def test_missing_wordnet_names_the_apt_command(tmp_path: Path) -> None:
    empty = tmp_path / "no-wordnet"
    empty.mkdir()
    with pytest.raises(MissingExtraError, match="apt-get install wordnet-base wordnet-sense-index"):
        nltk_wordnet_dir(empty, tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_meteor_unavailable_reason_and_error_when_wordnet_missing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import dialeval.metrics.wordnet as wordnet

    assert Meteor.unavailable_reason() is None  # installed on this machine (scripts/setup.sh)
    empty = tmp_path / "share-wordnet"
    empty.mkdir()
    # A machine without the Debian packages cannot be had here, so the Debian
    # location is pointed at an empty folder instead.
    monkeypatch.setattr(wordnet, "DEBIAN_WORDNET", empty)
    reason = Meteor.unavailable_reason()
    assert reason is not None and "apt-get install wordnet-base wordnet-sense-index" in reason
    with pytest.raises(MissingExtraError, match="apt-get install wordnet-base wordnet-sense-index"):
        Meteor().compute([MetricInput(response="a", references=("a",))])


def test_the_reader_skips_nltks_multilingual_map_and_answers_as_nltks_own_reader(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The map to WordNet 3.0 for OMW (half of the reader's start) is not built; synonyms are unchanged."""
    import warnings

    import nltk
    from nltk.corpus.reader.wordnet import WordNetCorpusReader

    wn = load_wordnet()
    assert wn.map30 is None
    root = nltk_wordnet_dir(DEBIAN_WORDNET)
    # NLTK opens corpora only under nltk.data.path; another test of the worker may have reset it
    monkeypatch.setattr(nltk.data, "path", [str(root), *nltk.data.path])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        stock = WordNetCorpusReader(str(root / "corpora" / "wordnet"), None)
    assert stock.map30  # NLTK's own reader builds it (what is skipped)
    for word in ("quick", "bank", "run", "happy", "slowly", "dog", "colour", "went"):
        assert [s.name() for s in wn.synsets(word)] == [s.name() for s in stock.synsets(word)]
        assert [s.lemma_names() for s in wn.synsets(word)] == [s.lemma_names() for s in stock.synsets(word)]
