"""LMStyle benchmark raw MTurk export (``Batch_results_develop.csv``).

One dialogue per HIT (id ``lmstyle-<Input.HIT>``) whose single turn is the
query ``Input.Speaker``; one candidate per (HIT, model) for the four models,
tagged with ``task`` (Formal/Informal/Positive/Negative), ``dataset`` (``BST``
or ``DD`` as in the file) and ``system``. Each assignment gives one rating per
model on ``appropriateness`` and ``style`` (0-100 sliders).

Worker ids are never stored: each ``WorkerId`` becomes ``annotator-001``,
``annotator-002``, ... in first-appearance order. Assignments with
``AssignmentStatus`` "Rejected" are skipped and counted unless
``include_rejected=True`` (each rejected HIT was re-done by another worker). Every row of one
``Input.HIT`` must show the same query, dataset, task and responses, and a worker rates a HIT once:
another row is an error naming its line, the field and the earlier line.

References: ``Input.HIT`` is not a line number of the query files, so the query
text is matched (whitespace-stripped) against ``BST/query.txt`` or
``daily_dialog/formality_query.txt`` beside the CSV; the same line of
``BST/ref/ref.txt`` / ``daily_dialog/ref/formality_ref.txt`` is the reference.
A query found on several lines keeps every distinct reference (counted in
``warnings``); a query not found keeps no reference (counted in ``skipped``).
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from dialeval.data._common import Where, number, read_csv_rows
from dialeval.data.benchmark import Benchmark
from dialeval.errors import InputError
from dialeval.jsonl import read_text
from dialeval.schema import Candidate, Dialogue, Rating, Turn
from dialeval.words import counted

MODELS = ("llama7b", "llama13b", "vicuna7b", "vicuna13b")
DIMENSIONS = {"appropriateness": "Appropriateness", "style": "Style"}
QUERY_FILES = {
    "BST": ("BST/query.txt", "BST/ref/ref.txt"),
    "DD": ("daily_dialog/formality_query.txt", "daily_dialog/ref/formality_ref.txt"),
}


def read_lines_paired(queries: Path, references: Path) -> list[tuple[str, str]]:
    r"""Read a query file and its reference file: line i of each is one (query, reference) pair, both stripped.

    Each file is read as :func:`~dialeval.jsonl.read_text` reads it (a BOM dropped; a byte that is not UTF-8 is
    an error naming the file and line). The line break that ends a file's last line starts no line, so one file
    ending with one and the other not pair up; blank lines at the end of both files are dropped together.

    Raises:
        InputError: The files (then without blank lines at their ends) have different numbers of lines: it names the
            longer one's first line with no partner.

    Example:
        >>> import tempfile
        >>> d = Path(tempfile.mkdtemp())
        >>> _ = (d / "q.txt").write_bytes(b"\xef\xbb\xbfHi !\r\nBye\n"), (d / "r.txt").write_text("Hello\nCiao")
        >>> read_lines_paired(d / "q.txt", d / "r.txt")
        [('Hi !', 'Hello'), ('Bye', 'Ciao')]
    """
    lines = []
    for path in (queries, references):
        text = read_text(path)
        lines.append(text.removesuffix("\n").split("\n") if text else [])
    qs, refs = lines
    while qs and refs and not qs[-1].strip() and not refs[-1].strip():
        qs.pop()
        refs.pop()
    if len(qs) != len(refs):  # a file ending with a line break and one without were one line apart: refused
        paired = min(len(qs), len(refs))  # the first line past it, in the longer file, has no partner
        longer, other, what = (queries, references, "a query with no reference") if len(qs) > paired else (
            references, queries, "a reference with no query")  # fmt: skip
        raise InputError(f"{what}: {other.name} has {counted(paired, 'line')} (line i of each file is one query and "
                         "its reference)", path=longer, line=paired + 1)  # fmt: skip
    return [(q.strip(), r.strip()) for q, r in zip(qs, refs, strict=True)]


def _reference_index(root: Path, dataset: str) -> dict[str, list[str]] | None:
    files = QUERY_FILES.get(dataset)
    if files is None or not all((root / f).is_file() for f in files):
        return None
    index: dict[str, list[str]] = {}
    for query, ref in read_lines_paired(root / files[0], root / files[1]):
        found = index.setdefault(query, [])
        if ref not in found:
            found.append(ref)
    return index


def load_lmstyle_mturk(path: str | Path, *, include_rejected: bool = False) -> Benchmark:
    """Load the LMStyle MTurk ratings with pseudonymous annotators.

    Args:
        path: ``Batch_results_develop.csv`` (the query/reference folders beside it).
        include_rejected: Keep assignments the requester rejected.

    Example:
        >>> from dialeval.paths import shared_data_dir
        >>> b = load_lmstyle_mturk(shared_data_dir() / "lmstyle/Batch_results_develop.csv")
        >>> b.counts()["contexts"], b.counts()["systems"], b.ratings[0].annotator
        (397, 4, 'annotator-001')
    """
    p = Path(path)
    needed = ["HITId", "WorkerId", "AssignmentStatus", "Input.HIT", "Input.Speaker",
              "Input.dataset", "Input.task"]  # fmt: skip
    needed += [f"Input.{m}" for m in MODELS]
    needed += [f"Answer.{col}_{m}" for col in DIMENSIONS.values() for m in MODELS]
    col, rows = read_csv_rows(p, required=needed)
    skipped: Counter[str] = Counter()
    ref_index: dict[str, dict[str, list[str]] | None] = {}
    pseudonyms: dict[str, str] = {}
    dialogues: dict[str, Dialogue] = {}
    candidates: list[Candidate] = []
    ratings: list[Rating] = []
    seen = _SeenHits()
    for where, row in rows:
        if row[col["AssignmentStatus"]] == "Rejected" and not include_rejected:
            skipped["lmstyle: rejected MTurk assignment"] += 1
            continue
        hit = row[col["Input.HIT"]].strip()
        if not hit:
            raise where.error("empty", field="Input.HIT")
        did = f"lmstyle-{hit}"
        worker = row[col["WorkerId"]]
        annotator = pseudonyms.setdefault(worker, f"annotator-{len(pseudonyms) + 1:03d}")
        seen.check(where, hit, annotator, {c: row[col[c]].strip() for c in HIT_INPUTS})
        if did not in dialogues:
            dataset, query = row[col["Input.dataset"]].strip(), row[col["Input.Speaker"]].strip()
            if dataset not in ref_index:
                ref_index[dataset] = _reference_index(p.parent, dataset)
            refs = _references(ref_index[dataset], dataset, query, skipped)
            tags = {"task": row[col["Input.task"]].strip(), "dataset": dataset}
            dialogues[did] = Dialogue(id=did, turns=[Turn(speaker="A", text=query)], tags=tags)
            candidates.extend(
                Candidate(id=f"{did}:{m}", dialogue_id=did, turn_index=1, system=m,
                          text=row[col[f"Input.{m}"]].strip(), references=refs,
                          tags={**tags, "system": m})
                for m in MODELS
            )  # fmt: skip
        for dim, column in DIMENSIONS.items():
            for m in MODELS:
                name = f"Answer.{column}_{m}"
                raw = row[col[name]].strip()
                if not raw:
                    skipped[f"lmstyle: empty {name}"] += 1
                    continue
                ratings.append(
                    Rating(item_id=f"{did}:{m}", dimension=dim, annotator=annotator,
                           value=number(raw, where, name), scale="0-100")
                )  # fmt: skip
    bench = Benchmark("lmstyle-mturk", dialogues, candidates, ratings, skipped, source=str(p))
    several = sum(1 for c in candidates if c.system == MODELS[0] and len(c.references) > 1)
    if several:
        bench.warnings.append(f"lmstyle: {several} queries are on several lines with different references (all kept)")
    return bench


#: The columns that give a HIT's query and responses: every assignment of one ``Input.HIT`` holds the same.
HIT_INPUTS = ("Input.Speaker", "Input.dataset", "Input.task", *(f"Input.{m}" for m in MODELS))


class _SeenHits:
    """The first row of each ``Input.HIT``, and who rated it, to refuse a row that would be read as another's.

    A second row of a HIT with another query or response was rated as the first row's (its own text dropped,
    silently), and one worker's assignment given twice rated every item twice under one annotator.
    """

    def __init__(self) -> None:
        self.inputs: dict[str, tuple[int | None, dict[str, str]]] = {}
        self.rated: dict[tuple[str, str], int | None] = {}

    def check(self, where: Where, hit: str, annotator: str, inputs: dict[str, str]) -> None:
        """Refuse a row of ``hit`` whose inputs differ from its first row's, or a second row of its annotator."""
        line, first = self.inputs.setdefault(hit, (where.line, inputs))
        if (column := next((c for c in HIT_INPUTS if inputs[c] != first[c]), None)) is not None:
            raise where.error(f"differs from line {line}, an earlier row of Input.HIT {hit}: the assignments of "
                              "one HIT show the same query and responses", field=column)  # fmt: skip
        if (hit, annotator) in self.rated:
            raise where.error(f"the worker of line {self.rated[hit, annotator]} ({annotator}) rates Input.HIT {hit} "
                              "again: one assignment given twice?", field="WorkerId")  # fmt: skip
        self.rated[hit, annotator] = where.line


def _references(
    index: dict[str, list[str]] | None, dataset: str, query: str, skipped: Counter[str]
) -> list[str]:
    if index is None:
        skipped[f"lmstyle: no query/reference files for dataset {dataset!r} (no reference)"] += 1
        return []
    refs = index.get(query)
    if not refs:
        skipped["lmstyle: query not found in the query file (no reference)"] += 1
        return []
    return list(refs)
