"""The LMStyle few-shot prompt (Fig. 3) and the query/reference files it is built from.

The prompt joins five style-free shots, each ``###Speaker: {query} ###Response: {reference}``,
then ``###Speaker: {query} ###{Style} Response:``; only the style word changes between
the four styles. As in the paper (Sec. A.3), the shots are the last five query/reference
pairs of the evaluation data, and the evaluated queries are the first N, so N is at most
the number of lines minus five.

Example:
    >>> shots = [Pair("What a nice day !", "yes .")]
    >>> build_prompt(shots, "Hi there", "formal")
    '###Speaker: What a nice day ! ###Response: yes . ###Speaker: Hi there ###Formal Response:'
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from dialeval.data.lmstyle import read_lines_paired
from dialeval.errors import InputError

#: The four style words of the paper, by target name (the style metric's ``target``).
STYLES = {"formal": "Formal", "informal": "Informal", "positive": "Positive", "negative": "Negative"}
#: Formality styles (Table 4) and sentiment styles (Table 5).
TASKS = {"formality": ("formal", "informal"), "sentiment": ("positive", "negative")}
#: Dataset key -> (display name, query file, reference file) under ``<data>/lmstyle/``.
DATASETS = {
    "dd": ("Daily Dialog", "daily_dialog/formality_query.txt", "daily_dialog/ref/formality_ref.txt"),
    "bst": ("Blended Skill Talk", "BST/query.txt", "BST/ref/ref.txt"),
}
N_SHOTS = 5
PROMPT_ID = "lmstyle-fig3"
#: Control characters but tab, line feed and carriage return: a NUL went on to candidates.jsonl, CSV tables and the app.
CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")


@dataclass(frozen=True)
class Pair:
    """A query and its reference response."""

    query: str
    reference: str


def style_word(style: str) -> str:
    """Return the paper's style word for a style name (case-insensitive).

    Example:
        >>> style_word("INFORMAL")
        'Informal'
    """
    word = STYLES.get(style.lower())
    if word is None:
        raise InputError(f'unknown style "{style}"; known: {", ".join(STYLES)}', field="--styles")
    return word


def build_prompt(shots: list[Pair], query: str, style: str) -> str:
    """Build the Fig. 3 prompt: the shots, then the query with the style word.

    Whitespace at the ends of every query and reference is stripped; parts are joined by one space.
    """
    parts = [f"###Speaker: {s.query.strip()} ###Response: {s.reference.strip()}" for s in shots]
    parts.append(f"###Speaker: {query.strip()} ###{style_word(style)} Response:")
    return " ".join(parts)


def read_pairs(data_dir: Path, dataset: str) -> list[Pair]:
    """Read the query and reference files of ``dataset`` (``dd`` or ``bst``) line by line.

    Raises:
        InputError: Unknown dataset, missing file, a blank query line (naming it: a response was generated to
            nothing, and scored), a query or a shot's reference holding ``###`` or a control character
            (:func:`_breaks_prompt`), or as :func:`~dialeval.data.lmstyle.read_lines_paired` reads them (bytes
            that are not UTF-8, files of different lengths). A blank reference is kept: that response has none.
    """
    if dataset not in DATASETS:
        raise InputError(f'unknown dataset "{dataset}"; known: {", ".join(DATASETS)}', field="--datasets")
    _, qfile, rfile = DATASETS[dataset]
    paths = [data_dir / "lmstyle" / qfile, data_dir / "lmstyle" / rfile]
    for p in paths:
        if not p.is_file():
            raise InputError("LMStyle query/reference file not found (set DIALEVAL_DATA or --data)", path=p)
    pairs = [Pair(q, r) for q, r in read_lines_paired(*paths)]
    if (blank := next((i for i, pair in enumerate(pairs, 1) if not pair.query), None)) is not None:
        raise InputError("a blank query: each line is one query (its reference on the same line of "
                         f"{paths[1].name})", path=paths[0], line=blank)  # fmt: skip
    for i, pair in enumerate(pairs):  # the shots' references are in every prompt; the others are not sent
        for path, text in ((paths[0], pair.query), (paths[1], pair.reference if i >= len(pairs) - N_SHOTS else "")):
            if why := _breaks_prompt(text):
                raise InputError(why, path=path, line=i + 1)
    return pairs


def _breaks_prompt(text: str) -> str | None:
    r"""Say why ``text`` cannot go into the Fig. 3 prompt as it is, or return None.

    The template has no escape: ``###`` in a query showed the model a turn the query does not have.

    Example:
        >>> _breaks_prompt("Hi ###Response: no"), _breaks_prompt("Hi # there !")
        ('holds "###", the turn marker of the Fig. 3 prompt: the model would read what follows as another turn', None)
        >>> _breaks_prompt("a \x1b[1m")
        'holds a control character (U+001B), which would go into the prompt unseen'
    """
    if "###" in text:
        return 'holds "###", the turn marker of the Fig. 3 prompt: the model would read what follows as another turn'
    if found := CONTROL.search(text):
        return f"holds a control character (U+{ord(found.group()):04X}), which would go into the prompt unseen"
    return None


def split_shots(
    pairs: list[Pair], n: int, *, field: str = "n", path: Path | None = None
) -> tuple[list[Pair], list[Pair]]:
    """Return ``(shots, evaluated)``: the last five pairs, and the first ``n`` pairs.

    ``field`` and ``path`` name ``n`` and the query file in the error (the command line's ``--limit``).

    Example:
        >>> pairs = [Pair(str(i), str(i)) for i in range(8)]
        >>> [p.query for p in split_shots(pairs, 3)[0]], len(split_shots(pairs, 3)[1])
        (['3', '4', '5', '6', '7'], 3)
    """
    most = len(pairs) - N_SHOTS
    if n < 1 or n > most:
        raise InputError(f"must be between 1 and {most}, got {n} ({len(pairs)} query lines, the last {N_SHOTS} of them "
                         "the shots)", path=path, field=field)  # fmt: skip
    return pairs[-N_SHOTS:], pairs[:n]
