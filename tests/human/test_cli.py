"""From `study create` through answers over HTTP to `study export`, `study report` and `dialeval meta`, by the CLI."""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import pytest
import sqlalchemy as sa
from tests.human.conftest import dialogues_and_candidates, free_port, make_study, start_server
from typer.testing import CliRunner

from dialeval.cli import app
from dialeval.human import store
from dialeval.jsonl import read_jsonl, write_jsonl
from dialeval.schema import Rating

runner = CliRunner()


def vote(annotator: str, text: str, criterion: str) -> dict[str, object]:
    """Deterministic answers: m1 is liked by everyone, m2 by nobody, the ground truth splits 2 of 3.

    Annotators see opaque ids; the fixture's texts start with the system ("m1: ..."), the ground truth with "ref".
    """
    if text.startswith("m1:"):
        return {"value": "positive", "reasons": ["Coherence"] if criterion == "Appropriateness" else []}
    if text.startswith("m2:"):
        reasons = {"Appropriateness": ["Incoherence"], "Contextualization": ["Genericness"]}.get(criterion, [])
        return {"value": "negative", "reasons": reasons}
    if annotator == "a03":
        return {"value": "dont_know", "free_text": "cannot tell"}
    return {"value": "positive"}


def annotated_study(tmp_path: Path) -> Path:
    """Create a 4-context mousavi-turn study by the CLI and answer all of it over HTTP (3 annotators)."""
    dialogues, candidates = dialogues_and_candidates(n_contexts=4)
    write_jsonl(tmp_path / "dialogues.jsonl", dialogues.values())
    write_jsonl(tmp_path / "candidates.jsonl", candidates)
    study = tmp_path / "study"
    args = ["study", "create", str(study), "--dialogues", str(tmp_path / "dialogues.jsonl")]
    args += ["--candidates", str(tmp_path / "candidates.jsonl"), "--annotators", "3", "--per-item", "3"]
    args += ["--batch-size", "2", "--payment", "12 EUR per hour", "--json"]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    assert json.loads(result.output.splitlines()[0])["items"] == 12  # 4 contexts x (2 systems + ground truth)
    access = json.loads((study / "access.json").read_text())

    server = start_server(study)
    try:
        for name, token in access["annotators"].items():
            headers = {"Authorization": f"Bearer {token}"}
            tasks = httpx.get(f"{server.base}/api/tasks", headers=headers).json()
            for unit in tasks["units"]:
                for item in unit["items"]:
                    for crit in ("Appropriateness", "Contextualization", "Listening", "Correctness"):
                        body = {
                            "item_id": item["id"],
                            "criterion": crit,
                            "seconds": 2.0,
                            **vote(name, item["text"], crit),
                        }
                        assert httpx.put(f"{server.base}/api/answers", headers=headers, json=body).status_code == 200
        links = runner.invoke(app, ["study", "links", str(study)])
        assert links.output.count("#token=") == 4
    finally:
        server.proc.terminate()
        server.proc.wait(timeout=10)
    return study


def test_study_from_create_to_report_and_meta(tmp_path: Path) -> None:
    study = annotated_study(tmp_path)
    out = runner.invoke(app, ["study", "export", str(study), "-o", str(tmp_path / "ratings.jsonl"), "--numeric"])
    assert out.exit_code == 0, out.output
    ratings = read_jsonl(tmp_path / "ratings.jsonl", Rating)
    assert len(ratings) == 12 * 3 * 4
    assert out.output.strip() == f"wrote 144 ratings to {tmp_path / 'ratings.jsonl'}"  # it said "144 ratings -> ..."
    m1 = {r.value for r in ratings if r.item_id.endswith(":m1")}
    assert m1 == {1.0}
    gt = [r for r in ratings if r.item_id.endswith("ground-truth") and r.annotator == "a03"]
    assert all(r.dont_know and r.value is None and r.explanation == "cannot tell" for r in gt)

    rep = runner.invoke(app, ["study", "report", str(study), "--output", str(tmp_path / "report"), "--n-boot", "50"])
    assert rep.exit_code == 0, rep.output
    md = (tmp_path / "report.md").read_text()
    assert "rough" not in md and "rough" not in rep.output  # 50 resamples: enough for a 95% CI
    assert "turn-level, absolute" in md
    assert "- **Ground-truth response included as a candidate**: yes (4 contexts)" in md  # 4 contexts, each its own
    assert "- **Workers recruited**: 3" in md
    assert "observed mean 3.00, min 3, max 3" in md
    assert "12 EUR per hour" in md
    assert "total 0.08 h" in md  # 144 answers x 2 s = 288 s = 0.08 h
    # Table 3 analogue: m1 positive for every sample, m2 negative; ground truth: 2 positive vs 1 "I don't know"
    assert "| Appropriateness | m1 | Yes 100.0% |" in md
    assert "| Appropriateness | m2 | No 100.0% |" in md
    assert "| Appropriateness | ground-truth | Yes 100.0% |" in md
    # Figure 1 analogue: every m2 vote on Contextualization chose Genericness
    assert "| Contextualization | m2 | Genericness | 100.0 |" in md
    # strong judgements drop the 4 ground-truth samples where a03 said "I don't know"
    strong = md.split("strong judgements only")[1].split("**Per batch**")[0]
    assert "| Appropriateness | 8 | 1.000 [1.000, 1.000] |" in strong
    html = (tmp_path / "report.html").read_text()
    assert "<h2>Inter-annotator agreement</h2>" in html and "<script" not in html

    scored = runner.invoke(
        app,
        ["score", "--dialogues", str(tmp_path / "dialogues.jsonl"), "--candidates", str(tmp_path / "candidates.jsonl"),
         "-m", "length", "-o", str(tmp_path / "scores.jsonl")],
    )  # fmt: skip
    assert scored.exit_code == 0, scored.output
    meta = runner.invoke(
        app,
        ["meta", str(tmp_path / "scores.jsonl"), "-r", str(tmp_path / "ratings.jsonl"), "-d", "Appropriateness",
         "--level", "turn", "--boot", "0", "--json"],
    )  # fmt: skip
    assert meta.exit_code == 0, meta.output
    assert "pearson" in meta.output


def test_a_study_of_a_catalog_benchmark_rates_its_responses(tmp_path: Path, shared_data: Path) -> None:
    """``-b`` names the responses to rate, as in ``score`` and ``benchmark``; only ``--path FILE`` did, read as usr-tc.

    USR's PersonaChat set: 60 contexts x 5 systems (../shared/data/README.md). mousavi-turn shows each context's
    reference as a candidate, and USR's reference is a system's, "Original Ground Truth": it is shown once, as that
    system's (it was also a "ground-truth" item, 360 items, and that item held "New Human Generated"'s text): 300
    items in 60 units; 1 annotator per unit: 60 assignments.
    """
    res = runner.invoke(app, ["study", "create", str(tmp_path / "s"), "-b", "usr-pc", "--annotators", "2",
                              "--per-item", "1", "--json"])  # fmt: skip
    assert res.exit_code == 0, res.output
    summary = json.loads(res.output.splitlines()[0])
    assert (summary["items"], summary["units"], summary["assignments"]) == (300, 60, 60)
    assert summary["units_with_repeated_text"] == 0
    rep = runner.invoke(app, ["study", "report", str(tmp_path / "s"), "-o", str(tmp_path / "r"), "--n-boot", "10"])
    assert rep.exit_code == 0, rep.output
    assert "- **Ground-truth response included as a candidate**: yes (60 contexts; in 60 of them a system's response " \
           "is the reference, rated once, as that system's: Original Ground Truth)" in (tmp_path / "r.md").read_text()


def test_create_takes_the_first_n_contexts_and_says_what_it_made(tmp_path: Path, shared_data: Path) -> None:
    """study create had no --limit (every input command has it), and printed its counts as JSON only.

    USR-PC's first 2 contexts: 2 x 5 systems = 10 items in 2 units (the reference is a system's, shown once); each
    to both annotators.
    A dialogue-level study without candidates takes the first N dialogues.
    """
    res = runner.invoke(app, ["study", "create", str(tmp_path / "s"), "-b", "usr-pc", "--limit", "2",
                              "--annotators", "2", "--per-item", "2"])  # fmt: skip
    assert res.exit_code == 0, res.output
    assert res.output.splitlines()[0] == (f"created {tmp_path / 's'}: 2 units (10 items) in 1 batch, 2 annotators, "
                                          "4 assignments; 0 qualification units, 0 attention units")  # fmt: skip
    dialogues, _ = dialogues_and_candidates(n_contexts=4)
    write_jsonl(tmp_path / "dialogues.jsonl", dialogues.values())
    res = runner.invoke(app, ["study", "create", str(tmp_path / "d"), "--dialogues", str(tmp_path / "dialogues.jsonl"),
                              "--protocol", "comperdial-dialogue", "--limit", "3", "--annotators", "1",
                              "--per-item", "1", "--json"])  # fmt: skip
    assert res.exit_code == 0, res.output
    assert json.loads(res.output)["units"] == 3
    res = runner.invoke(app, ["study", "create", str(tmp_path / "z"), "-b", "usr-pc", "--limit", "0"])
    assert res.exit_code == 2 and 'field "--limit": must be at least 1' in res.output
    assert not (tmp_path / "z").exists()


def test_the_missing_reference_note_on_a_catalog_benchmark_names_no_table_option(tmp_path: Path) -> None:
    """It said "give --reference-col", an option of a table, for `-b dstc9`, which is no table."""
    res = runner.invoke(app, ["study", "create", str(tmp_path / "study"), "-b", "dstc9", "--limit", "2"])
    assert res.exit_code == 0, res.output
    assert "but no candidate has one (give data with references (dstc9 has none), or a protocol without it)" in \
        " ".join(res.output.split())  # fmt: skip


def test_a_protocol_showing_the_reference_on_a_table_without_one_is_said_at_create_and_in_the_report(
    tmp_path: Path,
) -> None:
    """mousavi-turn adds each context's reference as a candidate; a table without references got none, silently,
    and the report still said "Ground-truth response included as a candidate: yes"."""
    table = tmp_path / "mine.csv"
    table.write_text("context,response,system\nHi!,Hello,a\nHi!,Yo,b\nBye,See you,a\n", encoding="utf-8")
    study = tmp_path / "study"
    res = runner.invoke(app, ["study", "create", str(study), "--path", str(table), "--response-col", "response",
                              "--context-col", "context", "--system-col", "system", "--annotators", "1",
                              "--per-item", "1"])  # fmt: skip
    assert res.exit_code == 0, res.output
    assert "note: protocol mousavi-turn shows each context's reference response as a candidate, but no " \
           "candidate has one (give a table's --reference-col, or a protocol without it)" in res.output  # fmt: skip
    assert "(3 items)" in res.output  # the three responses, no ground truth
    rep = runner.invoke(app, ["study", "report", str(study), "--output", str(tmp_path / "report"), "--n-boot", "10"])
    assert rep.exit_code == 0, rep.output
    md = (tmp_path / "report.md").read_text()
    # 10 resamples: the agreement CIs are flagged in the report's method and on screen (they were not)
    rough = "the CIs are rough: 10 resamples only, too few for 95% (40 at least)"
    assert f"(10 resamples, seed 0); warning: {rough}" in md and f"warning: {rough}" in rep.output
    assert "- **Ground-truth response included as a candidate**: no: the protocol includes it, but no candidate " \
           "had a reference" in md  # fmt: skip


def test_create_says_where_two_candidates_of_a_context_show_the_same_text(tmp_path: Path) -> None:
    """Two systems that said the same thing were two items of one unit, silently: an annotator rated one text twice,
    perhaps two ways. The note names the first context and its systems; --json counts them."""
    table = tmp_path / "mine.csv"
    table.write_text("context,response,system\nHi!,Hello,a\nHi!,Hello,b\nHi!,Yo,c\nBye,See you,a\nBye,Ciao,b\n")
    args = ["study", "create", "--path", str(table), "--response-col", "response", "--context-col", "context",
            "--system-col", "system", "--annotators", "1", "--per-item", "1", "--protocol", "mousavi-turn"]
    res = runner.invoke(app, [*args[:2], str(tmp_path / "s"), *args[2:]])
    assert res.exit_code == 0, res.output
    assert 'note: 1 of 2 contexts has two candidates with the same text (the first, the context ending "Hi!": a and ' \
           "b): each is rated on its own, and one annotator's answers may differ; to have a text rated once, leave " \
           "its twins out" in res.output  # fmt: skip
    made = runner.invoke(app, [*args[:2], str(tmp_path / "j"), *args[2:], "--json"])
    summary = json.loads(made.stdout.strip().splitlines()[-1])
    assert summary["units_with_repeated_text"] == 1
    assert summary["first_repeated_text"] == 'the context ending "Hi!": a and b'


def test_create_in_a_database_named_by_db_and_read_back_through_the_study_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """--db had no test. A URL SQLAlchemy cannot use was its traceback (NoSuchModuleError, ArgumentError,
    ModuleNotFoundError) after the inputs were read; an in-memory one made a study lost as the command ended; a
    relative SQLite path was kept as given, so from another folder the study's database was "not there". And two
    batches were "2 batchs"."""
    db = tmp_path / "elsewhere" / "my.db"
    args = ["study", "create", str(tmp_path / "s"), "-b", "usr-tc", "--limit", "2", "--batch-size", "1",
            "--annotators", "2", "--per-item", "1"]  # fmt: skip
    monkeypatch.chdir(tmp_path)
    res = runner.invoke(app, [*args, "--db", "sqlite:///elsewhere/my.db"])
    assert res.exit_code == 0, res.output
    assert " in 2 batches, " in res.output.splitlines()[0]
    assert db.is_file() and not (tmp_path / "s" / "study.db").exists()  # the study lives where --db says
    assert json.loads((tmp_path / "s" / "access.json").read_text())["db_url"] == f"sqlite:///{db}"
    monkeypatch.chdir(tmp_path / "elsewhere")
    links = runner.invoke(app, ["study", "links", str(tmp_path / "s")])
    assert links.exit_code == 0 and len(links.output.splitlines()) == 3, links.output  # two annotators and admin
    # Created again in the same folder without --db, it wrote a new study.db and a new access.json over the
    # first one's: the study in my.db lost its tokens. And --db naming that file said "choose another folder".
    access = (tmp_path / "s" / "access.json").read_text()
    again = runner.invoke(app, args, terminal_width=300)
    assert again.exit_code == 2 and f"{tmp_path / 's' / 'access.json'}: a study already exists here" in again.output
    assert (tmp_path / "s" / "access.json").read_text() == access and not (tmp_path / "s" / "study.db").exists()
    again = runner.invoke(app, [*args[:2], str(tmp_path / "u"), *args[3:], "--db", f"sqlite:///{db}"],
                          terminal_width=300)  # fmt: skip
    assert again.exit_code == 2, again.output
    assert f'{db}: field "--db": already exists; give --db a file that does not exist yet' in again.output
    for url, message in [
        ("postgres://h/db", 'SQLAlchemy knows no database "postgres"'),
        ("notaurl", '"notaurl" is not a database URL'),
        ("postgresql+pg8000://u@127.0.0.1:1/db", 'the driver of "postgresql+pg8000" is not installed here'),
        ("sqlite://", "an in-memory database would be lost when the command ends"),
    ]:
        if url.startswith("postgresql+pg8000") and importlib.util.find_spec("pg8000"):
            continue  # the driver is installed on this machine, and the URL is a good one
        res = runner.invoke(app, [*args[:2], str(tmp_path / "t"), *args[3:], "--db", url], terminal_width=300)
        assert res.exit_code == 2 and f'field "--db": {message}' in res.output, res.output
        assert not (tmp_path / "t").exists()


def _lines(proc: subprocess.Popen[str], n: int, seconds: float = 30) -> list[str]:
    """The first ``n`` lines the process writes to stderr, or those written within ``seconds``.

    A thread reads them: ``select`` on the pipe cannot see lines that the first ``readline`` already pulled into
    the file object's buffer, so a select loop waited out its deadline when the lines came in one write.
    """
    assert proc.stderr is not None
    stream = proc.stderr
    got: queue.Queue[str] = queue.Queue()
    threading.Thread(target=lambda: [got.put(stream.readline().strip()) for _ in range(n)], daemon=True).start()
    lines: list[str] = []
    deadline = time.monotonic() + seconds
    with contextlib.suppress(queue.Empty):
        while len(lines) < n:
            lines.append(got.get(timeout=max(0.0, deadline - time.monotonic())))
    return lines


def test_serve_prints_links_a_browser_here_opens_and_study_links_to_the_same_app(tmp_path: Path) -> None:
    """On --host 0.0.0.0 --port N it printed http://0.0.0.0:N/admin (no address a browser should be sent to) and
    "dialeval study links DIR", whose links default to port 8000: every annotator link pointed at no app."""
    access = make_study(tmp_path / "study")
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-c", "from dialeval.cli import app; app()", "study", "serve",
                             str(tmp_path / "study"), "--host", "0.0.0.0", "--port", str(port)],
                            stderr=subprocess.PIPE, text=True, start_new_session=True)  # fmt: skip
    try:
        lines = _lines(proc, 3)
        base = f"http://127.0.0.1:{port}"
        assert lines[0] == f"admin: {base}/admin#token={access['admin']}"
        assert lines[1] == f"annotator links: dialeval study links {tmp_path / 'study'} --base-url {base}"
        assert lines[2].startswith("listening on every address of this machine (0.0.0.0)")
        printed = runner.invoke(app, lines[1].split()[3:])  # the command it tells the user to run
        assert printed.exit_code == 0, printed.output
        first = printed.output.splitlines()[0].split("\t")[1]
        assert first.startswith(f"{base}/#token=")
        for _ in range(100):  # the link it prints reaches the app
            try:
                assert httpx.get(first.split("#")[0], timeout=1).status_code == 200
                break
            except httpx.HTTPError:
                time.sleep(0.1)
        else:
            raise AssertionError("the app never answered at the printed link")
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)


def test_links_take_an_app_address_and_no_other(tmp_path: Path) -> None:
    """--base-url foo printed "foo/#token=..." and a trailing slash "http://h:8000//#token=..."."""
    access = make_study(tmp_path / "study")
    res = runner.invoke(app, ["study", "links", str(tmp_path / "study"), "--base-url", "http://h:8000/"])
    assert res.exit_code == 0, res.output
    assert res.output.splitlines()[-1] == f"admin\thttp://h:8000/admin#token={access['admin']}"
    # the last three printed links no browser opens: a port past 65535, a port not a number, no host
    for bad in ("foo", "ftp://h", "http://h:1/?a=1", "http://", "http://h:99999", "http://h:80x", "http://:8000"):
        res = runner.invoke(app, ["study", "links", str(tmp_path / "study"), "--base-url", bad])
        assert res.exit_code == 2 and "#token=" not in res.output
        assert f'field "--base-url": "{bad}" is not where a browser reaches the app' in " ".join(res.output.split())


def test_reassign_with_no_failed_worker_says_there_is_nothing_to_move(tmp_path: Path) -> None:
    """It printed "moved 0 units of 0 failed workers to qualified workers; 0 could not be placed (...)"."""
    table = tmp_path / "mine.csv"
    table.write_text("context,response\nHi!,Hello\nBye,See you\n", encoding="utf-8")
    study = tmp_path / "study"
    made = runner.invoke(app, ["study", "create", str(study), "--path", str(table), "--response-col", "response",
                               "--context-col", "context", "--annotators", "1", "--per-item", "1"])  # fmt: skip
    assert made.exit_code == 0, made.output
    res = runner.invoke(app, ["study", "reassign", str(study)])
    assert res.exit_code == 0 and res.output == "no worker has failed qualification: nothing to move\n", res.output
    res = runner.invoke(app, ["study", "reassign", str(study), "--json"])
    assert json.loads(res.output) == {"moved": 0, "failed_workers": 0, "unplaced": 0}


def test_a_numeric_export_of_an_answer_without_a_score_is_refused(tmp_path: Path) -> None:
    """A protocol whose option "yes" has no score: --numeric wrote each "yes" vote as value null, dont_know false,
    and said "wrote 2 ratings"; the votes were lost to `dialeval meta`, silently. The labels export as before."""
    (tmp_path / "p.yaml").write_text(
        "name: mine\nversion: 1\nlevel: turn\nshort_guidelines: judge\ncriteria:\n  - name: Good\n"
        "    definition: d\n    question: q?\n    answer:\n      type: choice\n      options:\n"
        '        - {value: "yes", label: "Yes"}\n        - {value: "no", label: "No", score: 0}\n',
        encoding="utf-8",
    )
    (tmp_path / "mine.csv").write_text("context,response\nHi!,Hello\n", encoding="utf-8")
    study = tmp_path / "study"
    made = runner.invoke(app, ["study", "create", str(study), "--path", str(tmp_path / "mine.csv"), "--response-col",
                               "response", "--context-col", "context", "--annotators", "1", "--per-item", "1",
                               "--protocol", str(tmp_path / "p.yaml")])  # fmt: skip
    assert made.exit_code == 0, made.output
    engine = store.connect(store.db_url(study))
    with engine.begin() as conn:
        item = conn.execute(sa.select(store.items.c.id)).scalar_one()
        store.upsert_answer(conn, {"annotator": "a01", "item_id": item, "criterion": "Good", "value": "yes",
                                   "reasons": [], "free_text": "", "seconds": 1.0})  # fmt: skip
    engine.dispose()
    out = tmp_path / "ratings.jsonl"
    res = runner.invoke(app, ["study", "export", str(study), "-o", str(out), "--numeric"])
    assert res.exit_code == 2, res.output
    assert 'field "--numeric": protocol mine gives the answer "yes" of Good no score, so --numeric has no number to ' \
           "write for it: leave --numeric out to export the labels" in " ".join(res.output.split())  # fmt: skip
    assert not out.exists()
    res = runner.invoke(app, ["study", "export", str(study), "-o", str(out)])
    assert res.exit_code == 0 and [r.value for r in read_jsonl(out, Rating)] == ["yes"]


def test_batches_left_without_attention_checks_are_noted_at_create_and_in_the_report(tmp_path: Path) -> None:
    """One attention unit, three batches, one check per batch: no annotator meets a check twice, so batches 2 and 3
    held none. Nothing said so: the report read "1 per annotator and batch", and the docs "in every batch"."""
    dialogues, candidates = dialogues_and_candidates(n_contexts=4)
    write_jsonl(tmp_path / "dialogues.jsonl", dialogues.values())
    write_jsonl(tmp_path / "candidates.jsonl", [c for c in candidates if c.dialogue_id != "d3"])
    write_jsonl(tmp_path / "checks.jsonl", [c for c in candidates if c.dialogue_id == "d3"])
    write_jsonl(tmp_path / "expected.jsonl", [Rating(item_id="d3:m1", dimension="Listening", annotator="e1",
                                                     value="positive")])  # fmt: skip
    study = tmp_path / "s"
    res = runner.invoke(app, ["study", "create", str(study), "--dialogues", str(tmp_path / "dialogues.jsonl"),
                              "--candidates", str(tmp_path / "candidates.jsonl"), "--attention",
                              str(tmp_path / "checks.jsonl"), "--attention-ratings", str(tmp_path / "expected.jsonl"),
                              "--attention-per-batch", "1", "--annotators", "2", "--per-item", "2", "--batch-size",
                              "1", "--json"])  # fmt: skip
    assert res.exit_code == 0, res.output
    # 3 contexts in batches of 1, both annotators on each: 2 x 3 annotator-batches, a check in the first of each
    assert json.loads(res.stdout.splitlines()[-1])["batches_short_of_attention_checks"] == 4
    assert "note: 4 of the annotators' batches get fewer attention checks than asked (1 per batch): no annotator " \
           "sees a check twice, and there is 1 attention unit; give more --attention candidates" \
           in " ".join(res.output.split())  # fmt: skip
    rep = runner.invoke(app, ["study", "report", str(study), "-o", str(tmp_path / "r"), "--n-boot", "50"])
    assert rep.exit_code == 0, rep.output
    assert "- **Attention checks**: 3 items, 1 per annotator and batch while unseen ones last; 2 attention units " \
           "shown in all" in (tmp_path / "r.md").read_text()  # fmt: skip
