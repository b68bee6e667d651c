"""``dialeval study``: create, serve, export, report and import human evaluation studies."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from dialeval.commands.common import (
    N_BOOT_FLAGS,
    TABLE_RULE,
    TableOptions,
    check_output,
    check_serving,
    fail,
    table_options,
    warn,
)
from dialeval.errors import DialevalError, InputError, UnknownNameError, check_at_most
from dialeval.meta.caveats import rough_resamples
from dialeval.words import counted, some_of, with_ci

if TYPE_CHECKING:
    from dialeval.human.protocol import Protocol
    from dialeval.schema import Candidate, Dialogue, Rating

study_app = typer.Typer(
    help="Human evaluation studies: design, annotate in the browser, analyse.", no_args_is_help=True
)


#: The help of every study command's STUDY_DIR argument.
STUDY_DIR_HELP = "The study's folder (`dialeval study create` makes it)."


def _study(study_dir: Path) -> tuple[dict[str, Any], str]:
    """Return the study's access file and database URL, or fail in one line (see ``design.read_access``)."""
    from dialeval.human.design import read_access

    try:
        return read_access(study_dir)
    except DialevalError as exc:
        fail(exc)


#: Why ``_gold`` refuses a qualification or attention batch without a rating.
_NO_GOLD = {
    "qualification": "a worker is decided once they have answered the questions the reference annotators rated, so "
    "with none no worker would ever reach the main batches",
    "attention": "an attention check is passed by giving its expected answer, and none would be given",
}


def _gold(
    candidates: Path | None, ratings: Path | None, dialogues: dict[str, Dialogue], what: str, protocol: Protocol
) -> tuple[list[Candidate], list[Rating]] | None:
    """Read a qualification or attention batch: candidates checked as ``score`` checks them, and their ratings.

    The file is read as :func:`~dialeval.data.generic.read_ratings` reads it (an annotator rating one item on one
    dimension twice, a blank name, a value outside its scale: the same errors); each rating is then checked against
    ``protocol`` and the batch's candidates here, where its file and line are known.
    """
    from dialeval.data.generic import rating_lines, read_candidates
    from dialeval.human.design import gold_answer

    if candidates is None and ratings is None:
        return None
    if candidates is None or ratings is None:
        raise InputError(f"--{what} and --{what}-ratings go together: give both or neither", field=f"--{what}")
    batch = read_candidates(candidates, dialogues, "the study's dialogues")
    ids = {c.id for c in batch}
    read = []
    for line, rating in rating_lines(ratings):
        try:
            if rating.item_id not in ids:
                raise InputError(f'no candidate of --{what} ({candidates}) has the id "{rating.item_id}"',
                                 field="item_id")  # fmt: skip
            if rating.level != "turn":  # one item rated at both levels was two gold rows of one key, a traceback
                raise InputError(f'a {what} batch rates its candidates: level "turn" (or none), not "{rating.level}"',
                                 field="level")  # fmt: skip
            gold_answer(protocol, rating, what)
        except InputError as exc:  # it named neither the file nor the line
            raise InputError(exc.message, path=ratings, line=line, field=exc.field) from None
        read.append(rating)
    if not read:  # a qualification batch no worker could finish (its questions are the rated ones), blind checks
        raise InputError(f"no ratings in this file: {_NO_GOLD[what]}", path=ratings)
    return batch, read


def _study_inputs(
    benchmark: str | None, dialogues: Path | None, path: Path | None, candidates: Path | None, table: TableOptions,
    limit: int | None = None, level: str = "turn",
) -> tuple[dict[str, Dialogue], list[Candidate]]:
    """Read the dialogues and candidates through the validation ``dialeval score`` uses (file:line errors).

    With ``limit``, only the first N contexts (as ``--limit`` everywhere), or the first N dialogues of a
    dialogue-level study without candidates; there (``level`` "dialogue"), a dialogue without turns is refused.
    """
    from dialeval.commands.common import load_inputs
    from dialeval.data.benchmark import check_limit
    from dialeval.errors import InputError
    from dialeval.jsonl import read_unique
    from dialeval.schema import Dialogue

    if path is not None or benchmark is not None:  # a catalog benchmark, your own table or a folder of records
        own = load_inputs(benchmark, path, dialogues, candidates, limit, table=table)  # refuses both given
        return own.dialogues, own.candidates
    if dialogues is None:
        raise InputError("give --dialogues (and --candidates), -b NAME, or --path FILE with a mapping")
    if candidates is None:  # a dialogue-level protocol: every dialogue is a unit
        check_limit(limit)
        units = list(read_unique(dialogues, Dialogue).items())[:limit]
        empty = next((line for _, (line, d) in units if not d.turns), None)  # a unit that shows nothing to rate
        if level == "dialogue" and empty is not None:
            raise InputError("has no turns: a dialogue-level study rates whole dialogues", path=dialogues, line=empty,
                             field="turns")  # fmt: skip
        return {k: d for k, (_, d) in units}, []
    bench = load_inputs(None, None, dialogues, candidates, limit)  # an empty candidates file is refused there
    return bench.dialogues, bench.candidates


@study_app.command("create")
@table_options
def create(
    study_dir: Path = typer.Argument(..., help="Folder for the study database and access links."),
    protocol: str = typer.Option("mousavi-turn", help="Bundled protocol name or a protocol YAML path."),
    dialogues: Path | None = typer.Option(None, help="Dialogue records (JSONL); or give -b or --path."),
    benchmark: str | None = typer.Option(
        None, "--benchmark", "-b", help="Catalog benchmark whose responses are rated (from --path if given)."
    ),
    path: Path | None = typer.Option(None, "--path", help=TABLE_RULE),
    candidates: Path | None = typer.Option(None, help="Candidate records (JSONL); dialogue-level protocols may omit."),
    limit: int | None = typer.Option(None, "--limit", help="Only the first N contexts (a pilot study)."),
    annotators: int = typer.Option(3, help="Number of annotators (ids a01, a02, ...); at least 1."),
    per_item: int = typer.Option(3, help="Annotators per item, 1 to --annotators."),
    batch_size: int = typer.Option(20, help="Contexts (units) per batch; at least 1."),
    seed: int = typer.Option(0, help="Seed for assignment and order."),
    qualification: Path | None = typer.Option(None, help="Candidates (JSONL) of the qualification batch."),
    qualification_ratings: Path | None = typer.Option(None, help="Reference annotators' ratings (JSONL)."),
    threshold: float | None = typer.Option(
        None, help="A fixed Fleiss' kappa a worker must exceed to qualify (-1 to 1); default: the reference "
        "annotators' own kappa, which adding the worker must not lower."
    ),
    attention: Path | None = typer.Option(None, help="Candidates (JSONL) used as attention checks."),
    attention_ratings: Path | None = typer.Option(None, help="Expected answers of the attention checks (JSONL)."),
    attention_per_batch: int = typer.Option(0, help="Attention checks per annotator and batch; 0 or more."),
    payment: str = typer.Option("", help="Payment per annotator, for the report (free text)."),
    db: str | None = typer.Option(None, help="SQLAlchemy URL instead of STUDY_DIR/study.db."),
    as_json: bool = typer.Option(False, "--json", help="Print the counts as one JSON object only."),
    table: TableOptions = TableOptions(),
) -> None:
    """Create a study: batches, balanced seeded assignment, attention checks, qualification."""
    from dialeval.human.design import StudyConfig, check_annotator_count, check_config, create_study
    from dialeval.human.protocol import load_protocol
    from dialeval.human.store import resolve_db_url, sqlite_file

    try:
        check_annotator_count(annotators)  # before their ids are made
        proto = load_protocol(protocol)
        config = StudyConfig(
            protocol=proto.name,
            protocol_version=proto.version,
            annotators=tuple(f"a{i:02d}" for i in range(1, annotators + 1)),
            per_item=per_item,
            batch_size=batch_size,
            seed=seed,
            attention_per_batch=attention_per_batch,
            qualification_threshold=threshold,
            payment=payment,
        )
        # the options first: no file read for a bad layout
        check_config(config, attention=attention is not None, qualification=qualification is not None)
        db = None if db is None else resolve_db_url(db)
        check_output(study_dir, "folder", option="STUDY_DIR")  # below a file, or read-only: it was a traceback
        if db is not None and (db_file := sqlite_file(db)) is not None:
            check_output(db_file, option="--db")
        dials, cands = _study_inputs(benchmark, dialogues, path, candidates, table, limit, proto.level)
        qual = _gold(qualification, qualification_ratings, dials, "qualification", proto)
        att = _gold(attention, attention_ratings, dials, "attention", proto)
        summary = create_study(study_dir, proto, dials, cands, config, qualification=qual, attention=att, db_url=db)
    except DialevalError as exc:
        fail(exc)
    if proto.include_ground_truth and not any(c.references for c in cands):  # the report said "included: yes"
        give = "a table's --reference-col, " if benchmark is None else f"data with references ({benchmark} has none), "
        typer.echo(f"note: protocol {proto.name} shows each context's reference response as a candidate, but no "
                   f"candidate has one (give {give}or a protocol without it)", err=True)  # fmt: skip
    if idle := summary["annotators_without_main_units"]:
        typer.echo(_idle_note(idle, summary), err=True)
    if repeated := summary["units_with_repeated_text"]:  # an annotator rated one text twice, and was not told why
        typer.echo(f"note: {some_of(repeated, summary['units'], 'context')} two candidates with the same text (the "
                   f"first, {summary['first_repeated_text']}): each is rated on its own, and one annotator's answers "
                   "may differ; to have a text rated once, leave its twins out", err=True)  # fmt: skip
    if short := summary["batches_short_of_attention_checks"]:
        typer.echo(_short_note(short, attention_per_batch, summary["attention_units"]), err=True)
    if as_json:
        typer.echo(json.dumps({**summary, "access": str(study_dir / "access.json")}))
        return
    typer.echo(_created_line(study_dir, summary))
    typer.echo(f"access links: {study_dir / 'access.json'} (keep it private); print them with dialeval study links")


def _short_note(short: int, per_batch: int, checks: int) -> str:
    """Say that some annotators' batches hold fewer attention checks than asked: no check is shown twice to one.

    Example:
        >>> _short_note(4, 1, 1)
        "note: 4 of the annotators' batches get fewer attention checks than asked (1 per batch): no annotator sees \
a check twice, and there is 1 attention unit; give more --attention candidates"
    """
    return (f"note: {short} of the annotators' batches get fewer attention checks than asked ({per_batch} per "
            f"batch): no annotator sees a check twice, and there {'is' if checks == 1 else 'are'} "
            f"{counted(checks, 'attention unit')}; give more --attention candidates")


def _idle_note(idle: int, summary: dict[str, int]) -> str:
    """Say that some annotators got no main unit, and what they will do.

    Example:
        >>> _idle_note(2, {"annotators": 3, "units": 1, "assignments": 1, "qualification_units": 0})
        'note: 2 of 3 annotators get no unit (1 unit to rate, 1 assignment); lower --annotators or raise --per-item'
    """
    words = f"note: {idle} of {summary['annotators']} annotators get no "
    if summary["qualification_units"]:
        return words + ("main unit, only the qualification batch; `dialeval study reassign` gives them the units "
                        "of workers who fail it")  # fmt: skip
    places = f"{counted(summary['units'], 'unit')} to rate, {counted(summary['assignments'], 'assignment')}"
    return words + f"unit ({places}); lower --annotators or raise --per-item"


def _created_line(study_dir: Path, summary: dict[str, int]) -> str:
    """Return what ``study create`` made, as words.

    Example:
        >>> _created_line(Path("s"), {"units": 2, "items": 14, "batches": 1, "annotators": 2, "assignments": 4,
        ...                           "qualification_units": 0, "attention_units": 1})
        'created s: 2 units (14 items) in 1 batch, 2 annotators, 4 assignments; 0 qualification units, 1 attention unit'
    """
    c = summary
    return (f"created {study_dir}: {counted(c['units'], 'unit')} ({counted(c['items'], 'item')}) in "
            f"{counted(c['batches'], 'batch')}, {counted(c['annotators'], 'annotator')}, "
            f"{counted(c['assignments'], 'assignment')}; {counted(c['qualification_units'], 'qualification unit')}, "
            f"{counted(c['attention_units'], 'attention unit')}")  # fmt: skip


#: Where `study links` says annotators reach the app unless --base-url says otherwise (`study serve`'s defaults).
DEFAULT_APP_URL = "http://127.0.0.1:8000"
#: Hosts that listen on every address: no browser should be sent there.
WILDCARDS = ("0.0.0.0", "::", "")


def app_url(host: str, port: int) -> str:
    """Return the address a browser on this machine opens for an app served on ``host:port``.

    Example:
        >>> app_url("127.0.0.1", 8000), app_url("0.0.0.0", 8123), app_url("::1", 80)
        ('http://127.0.0.1:8000', 'http://127.0.0.1:8123', 'http://[::1]:80')
    """
    shown = "127.0.0.1" if host in WILDCARDS else f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}"


@study_app.command("links")
def links(
    study_dir: Path = typer.Argument(..., help=STUDY_DIR_HELP),
    base_url: str = typer.Option(DEFAULT_APP_URL, help="Where annotators reach the app (`study serve`)."),
) -> None:
    """Print the per-annotator links and the admin link."""
    from urllib.parse import urlsplit

    from dialeval.errors import InputError

    access, _ = _study(study_dir)
    parts = urlsplit(base_url.strip())
    try:
        port_ok = parts.port is None or parts.port >= 0  # reading it checks the range
    except ValueError:  # a port out of 0-65535, or not a number ("http://host:99999" passed)
        port_ok = False
    if parts.scheme not in ("http", "https") or not parts.hostname or not port_ok or parts.query or parts.fragment:
        fail(InputError(f'"{base_url}" is not where a browser reaches the app; give http(s)://HOST:PORT, as `study '
                        "serve` prints it", field="--base-url"))  # fmt: skip
    base_url = base_url.strip().rstrip("/")  # a trailing / gave links with "//#token="
    for name, token in access["annotators"].items():
        typer.echo(f"{name}\t{base_url}/#token={token}")
    typer.echo(f"admin\t{base_url}/admin#token={access['admin']}")


@study_app.command("serve")
def serve(
    study_dir: Path = typer.Argument(..., help=STUDY_DIR_HELP),
    host: str = typer.Option("127.0.0.1", help="Address to listen on (an address of this machine)."),
    port: int = typer.Option(8000, help="Port to listen on."),
    workers: int = typer.Option(1, help="Uvicorn worker processes."),
) -> None:
    """Serve the annotation app and print the admin link."""
    try:
        import uvicorn
    except ImportError:
        from dialeval.errors import MissingExtraError

        fail(MissingExtraError("uvicorn", extra="human"))
    access, url = _study(study_dir)
    try:
        check_serving(port, host, workers=workers)  # uvicorn: a traceback for a bad port, any --workers taken
        cores = os.cpu_count() or 1  # --workers 10**20 forked until the machine ran out of processes
        check_at_most(workers, 4 * cores, "--workers", why=f"4 per core; this machine has {counted(cores, 'core')}")
    except DialevalError as exc:
        fail(exc)
    base = app_url(host, port)
    typer.echo(f"admin: {base}/admin#token={access['admin']}", err=True)
    given = "" if base == DEFAULT_APP_URL else f" --base-url {base}"  # links' default is port 8000 on 127.0.0.1
    typer.echo(f"annotator links: dialeval study links {study_dir}{given}", err=True)
    if host in WILDCARDS:
        typer.echo(f"listening on every address of this machine ({host}): annotators elsewhere reach it at its "
                   "name or address in place of 127.0.0.1", err=True)  # fmt: skip
    os.environ["DIALEVAL_STUDY_DB"] = url
    # uvicorn closes an idle connection after 5 s, the moment httpx's pool (also 5 s) may reuse it: a reset answer.
    # 75 s (nginx's default) outlasts the pools of scripted clients, so they close first.
    uvicorn.run("dialeval.human.serve:make_app", factory=True, host=host, port=port, workers=workers,
                log_level="warning", timeout_keep_alive=75)  # fmt: skip


@study_app.command("reassign")
def reassign(
    study_dir: Path = typer.Argument(..., help=STUDY_DIR_HELP),
    as_json: bool = typer.Option(False, "--json", help="Print the counts as one JSON object only."),
) -> None:
    """Give the unanswered main units of workers who failed qualification to qualified workers."""
    from dialeval.human import store
    from dialeval.human.qualification import reassign_failed

    engine = store.connect(_study(study_dir)[1])
    with engine.begin() as conn:
        moved = reassign_failed(conn)
    if as_json:
        typer.echo(json.dumps(moved))
        return
    if not moved["failed_workers"]:  # it said "moved 0 units of 0 failed workers ...; 0 could not be placed"
        typer.echo("no worker has failed qualification: nothing to move")
        return
    typer.echo(f"moved {counted(moved['moved'], 'unit')} of {counted(moved['failed_workers'], 'failed worker')} to "
               f"qualified workers; {moved['unplaced']} could not be placed (no qualified worker free for them)")


@study_app.command("export")
def export(
    study_dir: Path = typer.Argument(..., help=STUDY_DIR_HELP),
    positional: Path | None = typer.Argument(None, metavar="OUTPUT", help="The same as --output (its earlier form)."),
    output: Path | None = typer.Option(None, "--output", "-o", help="Rating records to write (JSONL)."),
    include_qualification: bool = typer.Option(False, help="Export the qualification batch's answers too."),
    numeric: bool = typer.Option(False, help="Write labelled answers as their option score (positive 1, negative 0)."),
) -> None:
    """Write the study's answers as Rating records (JSONL) for `dialeval meta`."""
    from dialeval.commands.common import check_jsonl_name, given_once
    from dialeval.human import store
    from dialeval.human.analysis import check_scored, study_ratings
    from dialeval.human.protocol import Protocol
    from dialeval.jsonl import write_jsonl

    url = _study(study_dir)[1]
    try:
        output = given_once(output, positional, ("--output", "OUTPUT"), "the rating records to write")
        if output is None:
            raise InputError("give the rating records to write: -o ratings.jsonl", field="--output")
        check_output(output, inputs=_study_files(study_dir, url))  # it wrote over study.db
        check_jsonl_name(output, "Rating records")
        engine = store.connect(url)
        with engine.connect() as conn:
            proto = Protocol.model_validate(store.get_meta(conn, "protocol"))
            if numeric:
                check_scored(proto)
            kinds = ("main", "qualification") if include_qualification else ("main",)
            n = write_jsonl(output, study_ratings(conn, proto, kinds, numeric=numeric))
    except DialevalError as exc:
        fail(exc)
    empty = " (no answer yet: annotators answer through `dialeval study serve`)" if n == 0 else ""
    typer.echo(f"wrote {counted(n, 'rating')} to {output}{empty}")


def _study_files(study_dir: Path, url: str) -> list[tuple[str, Path, Path]]:
    """Return the files of a study that no output may replace: its access file, its SQLite database and WAL."""
    from dialeval.human import store

    files = [study_dir / "access.json"]
    if (db := store.sqlite_file(url)) is not None:
        files += [db, db.with_name(db.name + "-wal"), db.with_name(db.name + "-shm")]
    return [("STUDY_DIR", study_dir, f) for f in files]


@study_app.command("report")
def report(
    study_dir: Path = typer.Argument(..., help=STUDY_DIR_HELP),
    output: Path = typer.Option(..., "--output", "-o", help="Report path without suffix; writes .md and .html."),
    n_boot: int = typer.Option(1000, *N_BOOT_FLAGS, help="Bootstrap resamples of the agreement CIs; at least 1."),
    seed: int = typer.Option(0, "--seed", help="Bootstrap seed."),
) -> None:
    """Write the reporting checklist (Mousavi et al. 2022, Sec. 3.4) as Markdown and HTML."""
    from dialeval.human.report import report_paths, write_report
    from dialeval.meta.agreement import check_resamples
    from dialeval.meta.correlate import check_boot

    url = _study(study_dir)[1]
    try:
        check_resamples(n_boot, field="--n-boot")
        check_boot(n_boot, seed=seed)  # a negative seed was numpy's traceback
        inputs = _study_files(study_dir, url)
        for written in report_paths(output):
            check_output(written, inputs=inputs)
        md, html = write_report(url, output, n_boot=n_boot, seed=seed)
    except DialevalError as exc:
        fail(exc)
    typer.echo(f"{md}\n{html}")
    warn(rough_resamples(n_boot))


@study_app.command("import-agreement")
@table_options
def import_agreement(
    positional: str | None = typer.Argument(
        None, metavar="SOURCE", help="The same as --benchmark (its earlier form)."
    ),
    source: str | None = typer.Option(
        None, "--benchmark", "-b", help="usr-tc, usr-pc, dstc9 or lmstyle-mturk; none with --path: your own ratings."
    ),
    path: Path | None = typer.Option(
        None, "--path", help="With -b, its published file (default: under the shared data folder); without, your "
        "own table (.csv, .tsv, .jsonl, .json) read with --mapping or the --*-col options, a folder of dialeval "
        "records, or the rating records `study export` writes (read as they are).",
    ),
    dimension: str | None = typer.Option(None, help="Only this dimension."),
    n_boot: int = typer.Option(1000, *N_BOOT_FLAGS, help="Bootstrap resamples of the CIs; at least 1."),
    seed: int = typer.Option(0, "--seed", help="Bootstrap seed."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object per row only."),
    table: TableOptions = TableOptions(),
) -> None:
    """Krippendorff's alpha (with bootstrap CIs) on per-annotator ratings: published ones, or your own table's.

    Numbers get ordinal and interval alpha; labels (text ratings) nominal only, their order being unknown.
    """
    from dialeval.commands.common import given_once, out
    from dialeval.commands.tables import ScreenTable
    from dialeval.meta.agreement import check_resamples
    from dialeval.meta.correlate import check_boot

    try:
        source = given_once(source, positional, ("--benchmark", "SOURCE"), "the published benchmark")
        source = None if source is None else source.strip()  # as every other command's -b
        check_resamples(n_boot, field="--n-boot")
        check_boot(n_boot, seed=seed)
        rows, name = _agreement(source, path, table, dimension, n_boot, seed, as_json)
    except DialevalError as exc:
        fail(exc)
    if as_json:
        for r in rows:
            typer.echo(json.dumps(r))
        return
    body = [([r["dimension"], r["level"]], [_alpha_cell(r), str(r["items"]), str(r["annotators"])]) for r in rows]
    whose = f"{name}'s published ratings" if source else f"the ratings of {name}"
    title = f"Krippendorff's alpha of {whose} (95% CI, {n_boot} resamples of items)"
    out.print(ScreenTable(title, ["dimension", "level"], ["alpha [95% CI]", "items", "annotators"], body))
    for note in dict.fromkeys(r["note"] for r in rows if r["note"]):
        out.print(f"note: {note}", highlight=False, markup=False, soft_wrap=True)
    warn(rough_resamples(n_boot))


def _agreement(source: str | None, path: Path | None, table: TableOptions, dimension: str | None, n_boot: int,
               seed: int, as_json: bool) -> tuple[list[dict[str, Any]], str]:  # fmt: skip
    """Return the alpha rows of a published SOURCE, or of ``--path``'s own ratings, and the name of what was read."""
    from dialeval.commands.common import load_inputs
    from dialeval.human.importers import agreement_rows, exported_ratings, import_agreement

    if source is not None:
        if table.given():
            raise InputError(f"{source} is a published benchmark; --mapping and the --*-col options read your own "
                             "table: give one of them", field="--benchmark")  # fmt: skip
        try:
            return import_agreement(source, path, dimension=dimension, n_boot=n_boot, seed=seed), source
        except UnknownNameError as exc:
            raise exc.given_by("--benchmark") from None
    if path is None:
        raise InputError("give -b usr-tc, usr-pc, dstc9 or lmstyle-mturk, or --path with your own ratings")
    bench = None if table.given() else exported_ratings(path)  # `study export`'s file, as it is
    if bench is None:
        bench = load_inputs(None, path, None, None, None, table=table, show=not as_json)
    return agreement_rows(bench, bench.name, dimension=dimension, n_boot=n_boot, seed=seed), bench.name


def _alpha_cell(row: dict[str, Any]) -> str:
    """``0.665 [0.601, 0.720]``, ``0.665 [no CI]`` or ``n/a`` (the note says why)."""
    return with_ci(row["alpha"], *(row["ci95"] or (None, None)), no_ci="no CI")


def register(app: typer.Typer) -> None:
    """Add the ``study`` command group."""
    app.add_typer(study_app, name="study")
