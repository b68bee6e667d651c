"""The declarative catalog of benchmarks: name, files with sha256, license, citation, loader.

``load_benchmark(name)`` reads the published files from the shared data folder
(:func:`dialeval.paths.shared_data_dir`), else a bundled copy, else raises an
:class:`~dialeval.errors.InputError` that says where it looked and what it needs.
A file whose sha256 differs from the catalog's is loaded anyway and noted in
``Benchmark.warnings`` (users may pass newer releases).

Example:
    >>> DATASETS.get("usr-tc").level, DATASETS.get("usr-tc").items
    ('turn', 360)
    >>> DATASETS.get("usr_tc")
    Traceback (most recent call last):
    ...
    dialeval.errors.UnknownNameError: unknown benchmark "usr_tc"; did you mean "usr-tc"?
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from dialeval.data import dstc9, engagement, fed_grade, gupta, holistic, lmstyle, usr
from dialeval.data._common import OtherFormatError, sha256_file
from dialeval.data.benchmark import Benchmark
from dialeval.errors import DialevalError, InputError, UnknownNameError
from dialeval.paths import shared_data_dir
from dialeval.registry import Registry
from dialeval.words import counted

Loader = Callable[[Path], Benchmark]


@dataclass(frozen=True)
class DataFile:
    """One published file, relative to the shared data folder; ``sha256=None`` if not known."""

    path: str
    sha256: str | None


@dataclass(frozen=True)
class CatalogEntry:
    """One benchmark of the catalog.

    Attributes:
        name: Canonical name.
        description: One line.
        files: The published files it reads.
        target: What the loader is given, relative to the shared data folder (a file or a folder).
        license: As stated by the source (or that none is stated).
        citation: Who to cite.
        level: ``"turn"`` or ``"dialogue"`` ratings.
        items: Expected number of rated items (turns or dialogues).
        loader: Reads ``target`` (or a user's file of the same format).
        bundled: A file shipped in ``dialeval/data/bundled`` used when the shared files are absent.
        bundled_loader: Reads ``bundled`` (defaults to ``loader``).
    """

    name: str
    description: str
    files: tuple[DataFile, ...]
    target: str
    license: str
    citation: str
    level: str
    items: int | None
    loader: Loader
    bundled: str | None = None
    bundled_loader: Loader | None = None

    def shared_target(self) -> Path | None:
        """Return the loader's input in the shared data folder if all files are there."""
        root = shared_data_dir()
        if root is None or not all((root / f.path).is_file() for f in self.files):
            return None
        return root / self.target

    def bundled_path(self) -> Path | None:
        """Return the bundled copy's path, if this benchmark has one."""
        if self.bundled is None:
            return None
        path = Path(str(resources.files("dialeval.data").joinpath("bundled", self.bundled)))
        return path if path.is_file() else None

    def available(self) -> bool:
        """Whether it can be loaded here without a path (shared files or a bundled copy)."""
        return self.shared_target() is not None or self.bundled_path() is not None

    def load(self, path: str | Path | None = None, *, path_option: str = "--path") -> Benchmark:
        """Load from ``path`` (a file/folder of the published format), the shared folder or the bundle.

        ``path_option`` is how the caller gives ``path``, for the error when the data is not here.
        """
        if path is not None:
            given = Path(path)
            if not given.exists():
                raise InputError("file not found", path=given)
            if other := self._published_by_another(given):
                raise InputError(f"this is {other}'s published file, not {self.name}'s: name the benchmark {other}",
                                 path=given)  # fmt: skip
            try:
                bench = self.loader(given)
            except InputError as exc:
                if given.suffix.lower() == Path(self.target).suffix.lower() and not isinstance(exc, OtherFormatError):
                    raise
                # your own table, say: "t.csv:1: not valid JSON" said nothing of -b, nor how to read a table
                raise InputError(exc.message + self._path_hint(path_option), path=exc.path, line=exc.line,
                                 field=exc.field) from None  # fmt: skip
            if not bench.candidates:  # a published file with no items is a wrong file, not an empty result
                raise InputError(f"no {self.name} items in it: nothing to score", path=given)
            bench.source = f"given path {given}"
            bench.warnings += self._hash_warnings(given) + self._count_warnings(bench, given)
            return bench
        shared = self.shared_target()
        if shared is not None:
            bench = self.loader(shared)
            bench.source = f"shared data {shared}"
            bench.warnings += self._hash_warnings(shared)
            return bench
        bundled = self.bundled_path()
        if bundled is not None:
            bench = (self.bundled_loader or self.loader)(bundled)
            bench.source = f"bundled copy {bundled}"
            return bench
        root = shared_data_dir()
        where = f"in {root}" if root else "for a shared data folder ($DIALEVAL_DATA, ../shared/data)"
        needs = ", ".join(f.path for f in self.files)
        raise InputError(
            f'benchmark "{self.name}" is not available: looked {where}; it needs {needs} '
            f"(or pass the file with {path_option})"
        )

    def _path_hint(self, path_option: str) -> str:
        """Say that a given path is read as this benchmark's published file, and how your own table is read.

        Said where the file's suffix is not the published file's (a ``.csv`` for usr-tc's ``.json``), or its header or
        first record lacks a published column or field.
        """
        given = f"-b {self.name} reads --path" if path_option == "--path" else f'benchmark "{self.name}" reads path='
        how = ("leave out -b and give --mapping or --response-col" if path_option == "--path" else
               "give it to dialeval.score as its data")  # fmt: skip
        return f"; {given} as its published file ({Path(self.target).name}): for your own table {how}"

    def _count_warnings(self, bench: Benchmark, given: Path) -> list[str]:
        """Return a warning if the file given as the published one has another number of rated turns than it.

        A table of your own in the published format (usr-tc's fields, 2 contexts) was scored as the benchmark with
        no word: its ids, tags and results read as usr-tc's.
        """
        if self.level != "turn" or self.items is None or len(bench.candidates) == self.items:
            return []
        return [f"{given}: {counted(len(bench.candidates), 'item')} where {self.name}'s published file has "
                f"{self.items}; it is read as that file (ids and tags are {self.name}'s)"]  # fmt: skip

    def _published_by_another(self, given: Path) -> str | None:
        """Return the benchmark whose published file ``given`` is, byte for byte, where it is not this one's.

        ``-b usr-tc --path pc_usr_data.json`` read usr-pc's 300 turns as usr-tc's (ids, tags and results), with a
        warning of a changed file only.
        """
        mine = {f.sha256 for f in self.files if f.path == self.target}
        if not given.is_file() or None in mine or not mine:
            return None
        digest = sha256_file(given)
        if digest in mine:
            return None
        for name in DATASETS.names():
            try:
                entry = DATASETS.get(name)
            except DialevalError:  # a plugin that cannot load: its own error, where it is named
                continue
            if entry.name != self.name and any(f.path == entry.target and f.sha256 == digest for f in entry.files):
                return entry.name
        return None

    def _hash_warnings(self, given: Path) -> list[str]:
        """Return a warning for each file read beside ``given`` whose sha256 is not the catalog's.

        A file in a folder beside the target (lmstyle-mturk's ``BST/ref/ref.txt`` beside its CSV) is found where
        the loader reads it; it was looked for only beside ``given``, so an edited reference file went unsaid.
        """
        out = []
        top = Path(self.target).parent
        for f in self.files:
            name = Path(f.path).name
            # the file given as the target, whatever its name (t.json for usr-tc's usr_topical_chat.json)
            candidates = [given] if given.is_file() and (given.name == name or f.path == self.target) else []
            if given.is_file() and Path(f.path).is_relative_to(top):
                candidates.append(given.parent / Path(f.path).relative_to(top))
            candidates += [given / name, given.parent / name, given / f.path]
            found = next((c for c in candidates if c.is_file()), None)
            if found is not None and f.sha256 is not None and sha256_file(found) != f.sha256:
                out.append(f"{found}: sha256 differs from the catalog's (a different release?)")
        return out


DATASETS: Registry[CatalogEntry] = Registry("benchmark", group="dialeval.datasets")  # the plugin group keeps its name

_USR = "Mehri & Eskenazi (2020). USR: An Unsupervised and Reference Free Evaluation Metric for Dialog Generation. ACL."
_NO_LICENSE = "none stated"


def _add(entry: CatalogEntry) -> None:
    DATASETS.register(entry.name, entry)


def _files(prefix: str, *pairs: tuple[str, str | None]) -> tuple[DataFile, ...]:
    return tuple(DataFile(f"{prefix}{p}", h) for p, h in pairs)


_add(CatalogEntry(
    name="usr-tc",
    description="USR Topical-Chat: 60 contexts x 6 systems, 3 annotators, 6 dimensions",
    files=_files("usr/", ("usr_topical_chat.json", "8e4e6961585f58edb573c0153766547442bde69577e8df6ba9e24a84dc9483e5")),
    target="usr/usr_topical_chat.json",
    license=f"{_NO_LICENSE} (data from shikib.com/usr); bundled fallback: UniEval's MIT copy",
    citation=_USR, level="turn", items=360,
    loader=usr.load_usr_topical_chat,
    bundled="usr_topical_chat_unieval.json.gz", bundled_loader=usr.load_usr_topical_chat_unieval,
))  # fmt: skip
_add(CatalogEntry(
    name="usr-tc-unieval",
    description="UniEval's averaged copy of USR Topical-Chat (mean scores, one pseudo-annotator)",
    files=_files("usr/", ("topical_chat.json", "f6361daa6fe162f636d2071a60322a784acd770be0bf3a6920ac949d751b978a")),
    target="usr/topical_chat.json",
    license="MIT (maszhongming/UniEval)",
    citation=f"{_USR} Zhong et al. (2022). Towards a Unified Multi-Dimensional Evaluator for Text Generation. EMNLP.",
    level="turn", items=360,
    loader=usr.load_usr_topical_chat_unieval, bundled="usr_topical_chat_unieval.json.gz",
))  # fmt: skip
_add(CatalogEntry(
    name="usr-pc",
    description="USR Persona-Chat: 60 contexts x 5 systems, 3 annotators, 6 dimensions",
    files=_files("usr/", ("pc_usr_data.json", "9695056e48d2370d93ec0f4d55e2f4dbf4fe8f5645dd41a0c2be871cf21ada71")),
    target="usr/pc_usr_data.json",
    license=_NO_LICENSE, citation=_USR, level="turn", items=300,
    loader=usr.load_usr_persona_chat,
))  # fmt: skip
_DSTC9_HASHES = {
    1: "1106454ac56344e86da4cc072fdee12bfa7c515b3a991c0e90da6e54a092085c",
    2: "eff39594dd2d895f76604f368d48c72c08a1e72c618f727dc4668270733ee6bb",
    3: "96604aed90fdb548bedf50ab7b81c382bf9431ac42a3d6cef0f1fa776c5379c5",
    4: "d4946a53a84790567a1ac3dba40157a2e9a5246167a3ed1778dd126fcc8c0bf0",
    5: "1cfc061bb9b5e2144ade3ffa546735b5b2a42618cbeb04c1464bb5165fc43c61",
    6: "3cb78055481bfe3db5306fd324e841045409efe664e830466462e5984108a9e1",
    7: "9d90e73ba360cba845172b0a1d4dca1d028c91167a9bdd58054a06027ad57b3b",
    8: "c59ae66ecf34354bcc36c001e75c87cf3967d4f639cf83fafdaf5884b0f38bb3",
    9: "ece5688b18e23d2f0577dfb4dd85f915b04e1477e32e382fcf7e201499342c37",
    10: "676216cefccfdf34c79f2a5d67dc3670541d3d869486cdc56f5e7dfd43fc7858",
    11: "8bbc99aecb1471b49f56298148ab85da5f592dc2998ef6eeb9c1e471c1350571",
}
_add(CatalogEntry(
    name="dstc9",
    description="DSTC9 interactive track: 11 bots, 2200 dialogues, ~3 raters each, 11 dialogue-level dimensions",
    files=_files("dstc9_interactive/", *((f"chatbot{i}.json", h) for i, h in _DSTC9_HASHES.items())),
    target="dstc9_interactive",
    license="MIT (ictnlp/DialoFlow); cite DSTC9",
    citation="Gunasekara et al. (2021). Overview of the Ninth Dialog System Technology Challenge: DSTC9. "
    "Li et al. (2021). Conversations are not Flat (DialoFlow). ACL.",
    level="dialogue", items=2200, loader=dstc9.load_dstc9,
))  # fmt: skip
_PE = (
    "Ghazarian et al. (2020). Predictive Engagement: An Efficient Metric for Automatic Evaluation "
    "of Open-Domain Dialogue Systems. AAAI."
)
_add(CatalogEntry(
    name="predictive-engagement",
    description="PredictiveEngagement: 600 DailyDialog replies (generated / ground truth) x 3 engagement ratings",
    files=_files(
        "predictive_engagement/",
        (
            "Eng_Scores_queries_gen_gtruth_replies.csv",
            "47c5a8a5b2b291373ae61072fed187592e28a5986a14ac73786cbdcdf25267a0",
        ),
        ("DailyDialog_groungtruth_annotated.csv", "ccdd7d12aeddb3392fa5c4e227b4df7b4f8fc5f43b19239e9271ec190098031c"),
    ),
    target="predictive_engagement/Eng_Scores_queries_gen_gtruth_replies.csv",
    license="MIT (PlusLabNLP/PredictiveEngagement)", citation=_PE, level="turn", items=600,
    loader=engagement.load_predictive_engagement, bundled="Eng_Scores_queries_gen_gtruth_replies.csv.gz",
))  # fmt: skip
_add(CatalogEntry(
    name="predictive-engagement-convai",
    description="PredictiveEngagement ConvAI: 297 replies with one 0/1 engagement label",
    files=_files(
        "predictive_engagement/",
        ("humanAMT_engscores_utt.csv", "1f65802bc6d6f5b9f48ed9dbcd5971a2bae17292df8ff15562b31018b77abbc9"),
    ),
    target="predictive_engagement/humanAMT_engscores_utt.csv",
    license="MIT (PlusLabNLP/PredictiveEngagement)", citation=_PE, level="turn", items=297,
    loader=engagement.load_predictive_engagement_convai, bundled="humanAMT_engscores_utt.csv.gz",
))  # fmt: skip
_HOLISTIC = "Pang et al. (2020). Towards Holistic and Automatic Evaluation of Open-Domain Dialogue Generation. ACL."
_add(CatalogEntry(
    name="holistic-coherence",
    description="HolisticEval context coherence: 200 query/response pairs, 10 raters, 1-5",
    files=_files("holistic_eval/", (
        "context_data_release.csv",
        "05456ad4832238c7f60b248b6485af41b5184735c996406fdf40635b688d9cde",
    )),
    target="holistic_eval/context_data_release.csv",
    license=_NO_LICENSE, citation=_HOLISTIC, level="turn", items=200,
    loader=holistic.load_holistic_coherence,
))  # fmt: skip
_add(CatalogEntry(
    name="holistic-fluency",
    description="HolisticEval fluency: 200 responses, 10 raters, 1-5",
    files=_files("holistic_eval/", (
        "fluency_data_release.csv",
        "6bc3c4795104e9d8af7bfb75cfcd3fee7889d1e5a4d174f39fcb72259fc5469c",
    )),
    target="holistic_eval/fluency_data_release.csv",
    license=_NO_LICENSE, citation=_HOLISTIC, level="turn", items=200,
    loader=holistic.load_holistic_fluency,
))  # fmt: skip
_add(CatalogEntry(
    name="gupta-dailydialog",
    description="DailyDialog multi-reference eval: 100 contexts x 5 systems, mean appropriateness 1-5, 5 references",
    files=_files(
        "dailydialog_gupta/",
        ("mturk_rating_processed_output.csv", "55a7c5c01b22ebfed631b28eb0e658eaa9a300a05ef95c09a26853ba6eb45c37"),
        ("multireftest.json", "4f487bda98be4f61bcacb2aa31e24cf01a840ebb8c1331caa1deb12c493878b6"),
    ),
    target="dailydialog_gupta/mturk_rating_processed_output.csv",
    license=_NO_LICENSE,
    citation="Gupta et al. (2019). Investigating Evaluation of Open-Domain Dialogue Systems With Human "
    "Generated Multiple References. SIGDIAL.",
    level="turn", items=500, loader=gupta.load_gupta_dailydialog,
))  # fmt: skip
_add(CatalogEntry(
    name="lmstyle-mturk",
    description="LMStyle MTurk: 397 HITs x 4 models, appropriateness and style 0-100 (pseudonymous workers)",
    files=_files(
        "lmstyle/",
        ("Batch_results_develop.csv", "bbe2e5cb13429075592653de57e29ab0db167d1e4549c306bb14a095bb49933a"),
        ("BST/query.txt", "ecdeda894befb35ac1813940cbcb4e0f42c83c05a30d5ff68100b7a63aaa7c2b"),
        ("BST/ref/ref.txt", "010c0c53339f9a33ee9f0c10c6b7f8c45f494243581d1aa9f5068081f516d171"),
        ("daily_dialog/formality_query.txt", "dce77e7f4339eb9592a892800d628853a7b144f4ba5a813b4aeed9228cd0c270"),
        ("daily_dialog/ref/formality_ref.txt", "8f775fb0c8c89923bdde8348b0defe8c9881088e38a84523d5faae1877476d8b"),
    ),
    target="lmstyle/Batch_results_develop.csv",
    license="not stated in the data README (LMStyle-Group/LMStyle)",
    citation="LMStyle Benchmark, LMStyle-Group/LMStyle (commit 7d0be275).",
    level="turn", items=1588, loader=lmstyle.load_lmstyle_mturk,
))  # fmt: skip
_FED = "Mehri & Eskenazi (2020). Unsupervised Evaluation of Interactive Dialog with DialoGPT. SIGDIAL."
_add(CatalogEntry(
    name="fed-turn",
    description="FED turn level: 8 dimensions 0-2 (Understandable 0-1) + Overall 0-4, 5 annotators",
    files=(DataFile("fed/fed_data.json", None),), target="fed/fed_data.json",
    license=_NO_LICENSE, citation=_FED, level="turn", items=None, loader=fed_grade.load_fed_turn,
))  # fmt: skip
_add(CatalogEntry(
    name="fed-dialogue",
    description="FED dialogue level: 10 dimensions (Consistent 0-1, others 0-2) + Overall 0-4",
    files=(DataFile("fed/fed_data.json", None),), target="fed/fed_data.json",
    license=_NO_LICENSE, citation=_FED, level="dialogue", items=None, loader=fed_grade.load_fed_dialogue,
))  # fmt: skip
_add(CatalogEntry(
    name="grade",
    description="GRADE human judgements: coherence 1-5, 10 raters per response",
    files=(DataFile("grade/human_judgement.json", None),), target="grade/human_judgement.json",
    license=_NO_LICENSE,
    citation="Huang et al. (2020). GRADE: Automatic Graph-Enhanced Coherence Metric for Evaluating "
    "Open-Domain Dialogue Systems. EMNLP.",
    level="turn", items=None, loader=fed_grade.load_grade,
))  # fmt: skip


def list_benchmarks() -> list[CatalogEntry]:
    """Return every catalog entry, sorted by name.

    Example:
        >>> "dstc9" in [e.name for e in list_benchmarks()]
        True
    """
    return [DATASETS.get(name) for name in DATASETS.names()]


def load_benchmark(name: str, path: str | Path | None = None, *, path_option: str = "--path") -> Benchmark:
    """Load the benchmark ``name``: from ``path`` if given, else the shared data, else the bundle.

    ``path_option`` names ``path`` as the caller's user gives it (``--path``; the Python API's ``path=``).

    Raises:
        UnknownNameError: ``name`` is no catalog benchmark; one that names a file or folder says how it is read.

    Example:
        >>> load_benchmark("usr-tc").counts()["items"]
        360
        >>> load_benchmark("my.csv")
        Traceback (most recent call last):
        ...
        dialeval.errors.UnknownNameError: "my.csv" names a file, not a catalog benchmark: ...
    """
    if name not in DATASETS.names() and Path(name).suffix.lower() in (".csv", ".tsv", ".jsonl", ".json"):
        how = ("read your own table with --path FILE and --response-col (or --mapping), as score, benchmark, meta, "
               "stress, train, study create, data show and data import do" if path_option == "--path" else
               "give your own table to dialeval.score as its data")  # fmt: skip
        raise UnknownNameError(f'"{name}" names a file, not a catalog benchmark: {how}')
    # data import's output, say: "unknown benchmark"; "" is no folder (Path("") is the current one: it said it was)
    if name and name not in DATASETS.names() and Path(name).is_dir():
        how = ("read a folder of dialeval records (dialogues/candidates/ratings.jsonl) with --path DIR, as score, "
               "benchmark, meta, stress, train, study create and data show do" if path_option == "--path" else
               "give a folder of dialeval records to dialeval.score as its data")  # fmt: skip
        raise UnknownNameError(f'"{name}" names a folder, not a catalog benchmark: {how}')
    return DATASETS.get(name).load(path, path_option=path_option)
