"""The annotation API over a real uvicorn server on 127.0.0.1: auth, isolation, save and resume."""

from __future__ import annotations

import json
import re
import secrets
from pathlib import Path
from typing import Any

import httpx
import pytest
from tests.human.conftest import Server, make_study, start_server

from dialeval.human.app import public_id


def auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def first_item(base: str, token: str) -> dict[str, Any]:
    units = httpx.get(f"{base}/api/tasks", headers=auth(token)).json()["units"]
    return units[0]["items"][0]


def answer(item_id: str, value: str = "positive", criterion: str = "Appropriateness", **kw: Any) -> dict[str, Any]:
    return {"item_id": item_id, "criterion": criterion, "value": value, **kw}


def _db(study_dir: Path) -> Any:
    from dialeval.human import store
    from dialeval.human.design import read_access

    return store.connect(read_access(study_dir)[1])


def blind_key(study_dir: Path) -> str:
    from dialeval.human import store

    with _db(study_dir).connect() as conn:
        return str(store.get_meta(conn, "blind_key"))


def main_item_of(study_dir: Path, token: str, access: dict[str, Any]) -> str:
    """The real id of one main-batch item assigned to the annotator holding ``token`` (read from the database)."""
    import sqlalchemy as sa

    from dialeval.human import store

    name = next(n for n, t in access["annotators"].items() if t == token)
    with _db(study_dir).connect() as conn:
        return str(
            conn.execute(
                sa.select(store.items.c.id)
                .join(store.assignments, store.items.c.unit_id == store.assignments.c.unit_id)
                .where(store.assignments.c.annotator == name, store.assignments.c.kind == "main")
            ).first()[0]  # type: ignore[index]
        )


def test_annotators_see_opaque_ids_and_their_own_candidate_order(server: Server, study: dict[str, Any]) -> None:
    """Neither an id nor a position tells the system: ids are keyed hashes, candidate order is per annotator."""
    orders: dict[str, dict[str, list[str]]] = {}
    for name, token in study["access"]["annotators"].items():
        body = httpx.get(f"{server.base}/api/tasks", headers=auth(token))
        assert body.status_code == 200
        ids = json_ids(body.json())
        assert all(re.fullmatch("[0-9a-f]{20}", i) for i in ids)  # no system, dialogue or ground-truth name
        assert not set(ids) & {f"d{i}:{s}" for i in range(6) for s in ("m1", "m2", "ground-truth")}
        orders[name] = {u["unit_id"]: [it["text"][:2] for it in u["items"]] for u in body.json()["units"]}
    # every unit holds m1, m2 and the ground truth ("re..."); across the 12 (annotator, unit) views the ground
    # truth is not always in the same place (a fixed order would put it second every time)
    views = [order for per_unit in orders.values() for order in per_unit.values()]
    assert all(sorted(v) == ["m1", "m2", "re"] for v in views) and len(views) == 12
    assert len({v.index("re") for v in views}) > 1
    # the same annotator sees the same order again (resume keeps the page stable)
    name, token = next(iter(study["access"]["annotators"].items()))
    again = httpx.get(f"{server.base}/api/tasks", headers=auth(token)).json()["units"]
    assert {u["unit_id"]: [it["text"][:2] for it in u["items"]] for u in again} == orders[name]


def json_ids(body: dict[str, Any]) -> list[str]:
    return [u["unit_id"] for u in body["units"]] + [it["id"] for u in body["units"] for it in u["items"]]


def test_annotator_sees_only_own_units_and_never_gold_or_others(server: Server, study: dict[str, Any]) -> None:
    tokens = study["access"]["annotators"]
    seen: dict[str, set[str]] = {}
    for name, token in tokens.items():
        body = httpx.get(f"{server.base}/api/tasks", headers=auth(token)).json()
        seen[name] = {u["unit_id"] for u in body["units"]}
    # 6 contexts x 2 annotators each over 3 annotators -> 4 units each, every unit exactly twice.
    assert sorted(len(v) for v in seen.values()) == [4, 4, 4]
    all_units = [u for v in seen.values() for u in v]
    assert len(set(all_units)) == 6 and len(all_units) == 12
    # a01 answers; a02 must not see a01's answer even on a shared unit.
    a01, a02 = tokens["a01"], tokens["a02"]
    shared = seen["a01"] & seen["a02"]
    assert shared
    units01 = httpx.get(f"{server.base}/api/tasks", headers=auth(a01)).json()["units"]
    item = next(u for u in units01 if u["unit_id"] in shared)["items"][0]["id"]
    r = httpx.put(f"{server.base}/api/answers", headers=auth(a01), json=answer(item))
    assert r.status_code == 200
    units02 = httpx.get(f"{server.base}/api/tasks", headers=auth(a02)).json()["units"]
    it02 = next(it for u in units02 for it in u["items"] if it["id"] == item)
    assert it02["answers"] == {}
    assert '"a01"' not in httpx.get(f"{server.base}/api/tasks", headers=auth(a02)).text  # quoted: hex ids may hold a01


@pytest.mark.parametrize("endpoint", [("GET", "/api/me"), ("GET", "/api/tasks"), ("PUT", "/api/answers")])
def test_annotator_endpoints_refuse_missing_forged_and_admin_tokens(
    server: Server, study: dict[str, Any], endpoint: tuple[str, str]
) -> None:
    method, path = endpoint
    item = first_item(server.base, study["access"]["annotators"]["a01"])["id"]
    body = answer(item) if method == "PUT" else None
    headers_and_codes = [
        ({}, 401),
        (auth(secrets.token_urlsafe(24)), 401),
        ({"Authorization": "Basic abc"}, 401),
        (auth(study["access"]["admin"]), 403),
    ]
    for headers, code in headers_and_codes:
        r = httpx.request(method, f"{server.base}{path}", headers=headers, json=body)
        assert r.status_code == code, (headers, r.text)


def test_other_annotators_items_are_refused(server: Server, study: dict[str, Any]) -> None:
    tokens = study["access"]["annotators"]
    mine = {u["unit_id"] for u in httpx.get(f"{server.base}/api/tasks", headers=auth(tokens["a01"])).json()["units"]}
    foreign = next(
        it["id"]
        for u in httpx.get(f"{server.base}/api/tasks", headers=auth(tokens["a02"])).json()["units"]
        if u["unit_id"] not in mine
        for it in u["items"]
    )
    r = httpx.put(f"{server.base}/api/answers", headers=auth(tokens["a01"]), json=answer(foreign))
    assert r.status_code == 404
    assert httpx.put(f"{server.base}/api/answers", headers=auth(tokens["a02"]), json=answer(foreign)).status_code == 200


@pytest.mark.parametrize("path", ["/api/admin/progress", "/api/admin/agreement"])
def test_admin_endpoints_refuse_annotator_and_forged_tokens(server: Server, study: dict[str, Any], path: str) -> None:
    assert httpx.get(f"{server.base}{path}").status_code == 401
    assert httpx.get(f"{server.base}{path}", headers=auth("forged")).status_code == 401
    for token in study["access"]["annotators"].values():
        assert httpx.get(f"{server.base}{path}", headers=auth(token)).status_code == 403
    assert httpx.get(f"{server.base}{path}", headers=auth(study["access"]["admin"])).status_code == 200


def test_answers_are_validated_saved_once_and_resumed(server: Server, study: dict[str, Any]) -> None:
    token = study["access"]["annotators"]["a01"]
    item = first_item(server.base, token)["id"]
    put = lambda body: httpx.put(f"{server.base}/api/answers", headers=auth(token), json=body)  # noqa: E731
    assert put(answer(item, value="maybe")).status_code == 422
    assert put(answer(item, criterion="Fluency")).status_code == 422
    # "I don't know" needs free text; reasons must belong to the chosen answer (Table 1).
    assert put(answer(item, value="dont_know")).status_code == 422
    assert put(answer(item, value="positive", reasons=["Incoherence"])).status_code == 422
    assert put(answer(item, value="dont_know", free_text="unclear reference")).status_code == 200
    assert put(answer(item, value="negative", reasons=["Incoherence"], seconds=3.5)).status_code == 200
    again = first_item(server.base, token)
    assert again["answers"] == {"Appropriateness": {"value": "negative", "reasons": ["Incoherence"], "free_text": ""}}
    progress = httpx.get(f"{server.base}/api/admin/progress", headers=auth(study["access"]["admin"])).json()
    row = next(r for r in progress["annotators"] if r["annotator"] == "a01")
    assert row["answered"] == 1  # the update replaced the earlier answer
    assert row["seconds"] == 3.5
    assert row["due"] == 4 * 3 * 4  # 4 units x (2 candidates + ground truth) x 4 criteria


@pytest.mark.parametrize("text", ["\u200b", "\u200b\u200d\ufeff", " \u2060\u00a0\u3000", "\u3164", "\u2800\u034f"])
def test_i_dont_know_with_no_visible_free_text_is_refused(server: Server, study: dict[str, Any], text: str) -> None:
    """Zero-width, joiner, BOM, word-joiner and filler characters show nothing: they are no explanation."""
    token = study["access"]["annotators"]["a01"]
    item = first_item(server.base, token)["id"]
    put = httpx.put(f"{server.base}/api/answers", headers=auth(token), json=answer(item, "dont_know", free_text=text))
    assert (put.status_code, put.json()) == (422, {"detail": 'free text is required for "I don\'t know"'})
    assert first_item(server.base, token)["answers"] == {}
    ok = answer(item, "dont_know", free_text="\u200bé")
    assert httpx.put(f"{server.base}/api/answers", headers=auth(token), json=ok).status_code == 200


def test_qualification_gates_main_batches(tmp_path: Path) -> None:
    access = make_study(tmp_path / "q", qualification=True, annotators=("a01", "a02"), per_item=1)
    s = start_server(tmp_path / "q")
    try:
        good, bad = access["annotators"]["a01"], access["annotators"]["a02"]
        for token, agree in ((good, True), (bad, False)):
            body = httpx.get(f"{s.base}/api/tasks", headers=auth(token)).json()
            assert body["qualified"] is False and body["failed"] is False  # undecided until the batch is done
            assert all(u["qualification"] for u in body["units"]) and len(body["units"]) == 1
            main_item = public_id(blind_key(tmp_path / "q"), main_item_of(tmp_path / "q", token, access))
            r = httpx.put(f"{s.base}/api/answers", headers=auth(token), json=answer(main_item))
            assert r.status_code == 403, r.text  # their own main item, refused until they qualify
            for it in body["units"][0]["items"]:
                # references say m1 positive, m2 negative (the ground-truth candidate has no gold and is not scored)
                gold = "positive" if it["text"].startswith("m1:") else "negative"
                value = gold if agree else ("negative" if gold == "positive" else "positive")
                for crit in ("Appropriateness", "Contextualization", "Listening", "Correctness"):
                    r = httpx.put(f"{s.base}/api/answers", headers=auth(token), json=answer(it["id"], value, crit))
                    assert r.status_code == 200
        good_tasks = httpx.get(f"{s.base}/api/tasks", headers=auth(good)).json()
        bad_tasks = httpx.get(f"{s.base}/api/tasks", headers=auth(bad)).json()
        assert good_tasks["qualified"] is True and any(not u["qualification"] for u in good_tasks["units"])
        assert bad_tasks["qualified"] is False and all(u["qualification"] for u in bad_tasks["units"])
        assert (good_tasks["failed"], bad_tasks["failed"]) == (False, True)  # the page tells the failed worker
        prog = httpx.get(f"{s.base}/api/admin/progress", headers=auth(access["admin"])).json()["annotators"]
        kappas = {r["annotator"]: r["qualification_kappa"] for r in prog}
        # Hand computation: 8 (item, criterion) columns, raters ref1, ref2, worker, labels split 4/4.
        # Agreeing worker: every column unanimous -> kappa 1. Contrary worker: P_i = 1/3 per column,
        # p_e = 0.5 -> kappa = (1/3 - 1/2) / (1/2) = -1/3.
        assert kappas["a01"] == pytest.approx(1.0)
        assert kappas["a02"] == pytest.approx(-1 / 3)
        # the failed worker's main units go to the qualified one, so every unit keeps its vote
        before = {u["unit_id"] for u in good_tasks["units"] if not u["qualification"]}
        from typer.testing import CliRunner

        from dialeval.cli import app

        res = CliRunner().invoke(app, ["study", "reassign", str(tmp_path / "q"), "--json"])
        assert res.exit_code == 0, res.output
        assert json.loads(res.output) == {"failed_workers": 1, "moved": 5 - len(before), "unplaced": 0}
        after = httpx.get(f"{s.base}/api/tasks", headers=auth(good)).json()["units"]
        assert len({u["unit_id"] for u in after if not u["qualification"]}) == 5  # d0-d4, all main units
        import sqlalchemy as sa

        from dialeval.human import store

        with _db(tmp_path / "q").connect() as conn:
            left = conn.execute(sa.select(store.assignments.c.unit_id).where(
                store.assignments.c.annotator == "a02", store.assignments.c.kind == "main")).all()  # fmt: skip
        assert left == []  # none of the failed worker's main units stayed with them
    finally:
        s.proc.terminate()
        s.proc.wait(timeout=10)


def test_pages_are_served_with_a_strict_content_security_policy(server: Server) -> None:
    r = httpx.get(f"{server.base}/")
    assert "script-src 'self'" in r.headers["content-security-policy"]
    assert httpx.get(f"{server.base}/static/app.js").headers["content-type"].startswith("text/javascript")
    assert httpx.get(f"{server.base}/static/..%2Fapp.py").status_code == 404
    assert "innerHTML" not in httpx.get(f"{server.base}/static/app.js").text.replace(
        "nothing is\n// ever assigned to innerHTML", ""
    )


@pytest.mark.slow  # it waits 6 s on purpose
def test_a_connection_idle_past_a_clients_pool_expiry_is_still_open(server: Server) -> None:
    """The server must keep an idle connection open longer than clients keep it in their pools.

    uvicorn's default (5 s) equals httpx's pool expiry (5 s): a client reusing a connection at the
    moment the server closed it got a reset (``ReadError('')``), two of 600 answers in a CI run of
    test_load.py. Here one connection waits 6 s between two requests; with the default the server has
    closed it by then and the second request reads nothing.
    """
    import http.client
    import time

    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    statuses = []
    try:
        for wait in (0, 6):
            time.sleep(wait)
            conn.request("GET", "/")
            reply = conn.getresponse()
            reply.read()
            statuses.append(reply.status)
    finally:
        conn.close()
    assert statuses == [200, 200]  # with uvicorn's default: http.client.RemoteDisconnected on the second


def test_two_processes_deciding_one_qualification_store_one_verdict(tmp_path: Path, monkeypatch: Any) -> None:
    """With `study serve --workers 2`, two processes could decide an undecided worker at once: each read "not
    decided", then both stored a verdict and the second hit the verdicts table's primary key (a 500). Here process A
    tries to decide while process B is between reading "undecided" and storing its verdict: A must not get in (its
    write waits for B's transaction; here, busy timeout 0, it is "database is locked"), and afterwards both processes
    read B's single verdict."""
    import sqlalchemy as sa

    from dialeval.human import qualification, store
    from dialeval.human.app import Study
    from dialeval.human.design import read_access

    make_study(tmp_path / "q", qualification=True, annotators=("a01",), per_item=1)
    url = read_access(tmp_path / "q")[1]
    a, b = Study.load(url), Study.load(url)
    sa.event.listen(a.engine, "connect", lambda dbapi, _: dbapi.execute("PRAGMA busy_timeout=0"))
    a.engine.dispose()  # the connection Study.load pooled waits 30 s
    with b.engine.begin() as conn:  # every referenced answer given, agreeing with the references (conftest)
        refs = conn.execute(sa.select(store.gold.c.item_id, store.gold.c.criterion, store.gold.c.value)
                            .where(store.gold.c.annotator == "ref1")).all()  # fmt: skip
        for item, crit, value in refs:
            store.upsert_answer(conn, {"annotator": "a01", "item_id": item, "criterion": crit, "value": value,
                                       "reasons": [], "free_text": "", "seconds": 1.0})  # fmt: skip
    judge, other = qualification.judge, []

    def judge_while_a_decides(*args: Any) -> Any:
        if not other:  # B has read "undecided" and every answer; now A's request comes in
            other.append("A started")
            try:
                other.append(a.verdict("a01"))
            except sa.exc.OperationalError as exc:
                other.append(str(exc.orig))
        return judge(*args)

    monkeypatch.setattr(qualification, "judge", judge_while_a_decides)
    assert b.verdict("a01") is True
    assert other == ["A started", "database is locked"]
    a.decided.clear()
    assert a.verdict("a01") is True
    with b.engine.connect() as conn:
        assert conn.execute(sa.select(sa.func.count()).select_from(store.verdicts)).scalar() == 1
