"""Hostile and careless clients against a real `dialeval study serve` on 127.0.0.1 (issue 15, web app)."""

from __future__ import annotations

import os
import socket
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from tests.human.conftest import Server, dialogues_and_candidates, make_study, start_server

from dialeval.human.app import MAX_BODY_BYTES
from dialeval.human.design import StudyConfig, create_study
from dialeval.human.protocol import load_protocol
from dialeval.schema import Rating


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Server, dict[str, Any]]]:
    """One mousavi-turn study and its server, shared by the tests of this module (none changes what another reads)."""
    folder = tmp_path_factory.mktemp("hostile") / "study"
    old = os.umask(0o022)  # the usual umask: files a plain open creates are world-readable
    try:
        access = make_study(folder)
    finally:
        os.umask(old)
    server = start_server(folder)
    yield server, access
    server.proc.terminate()
    server.proc.wait(timeout=10)


def auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def first_item(server: Server, token: str) -> str:
    return str(httpx.get(f"{server.base}/api/tasks", headers=auth(token)).json()["units"][0]["items"][0]["id"])


def raw_request(server: Server, head: str, body: bytes, timeout: float = 5.0) -> bytes:
    """Send a request head and (part of) a body on a raw socket; return what the server answers within ``timeout``."""
    with socket.create_connection(("127.0.0.1", server.port), timeout=timeout) as sock:
        sock.sendall(head.encode() + body)
        chunks = []
        try:
            while chunk := sock.recv(65536):
                chunks.append(chunk)
                if b"\r\n\r\n" in b"".join(chunks):
                    break
        except TimeoutError:
            pass  # the server is still waiting for the rest of the body
    return b"".join(chunks)


def test_an_oversized_body_is_refused_before_authentication(hostile: tuple[Server, dict[str, Any]]) -> None:
    """A 30 MB body with no token: 413 after the headers, without the server waiting for the 30 MB."""
    server, _ = hostile
    head = "PUT /api/answers HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 30000000\r\n\r\n"
    # only 64 KiB of the announced 30 MB are ever sent: a server reading the whole body would hang until the timeout
    answer = raw_request(server, head, b"x" * 65536)
    assert answer.startswith(b"HTTP/1.1 413"), answer[:200]
    # no Content-Length: a chunked stream is counted as it arrives and cut at the limit
    head = (
        "PUT /api/answers HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
    )
    chunk = b"x" * 65536
    chunks = b"".join(b"%x\r\n%s\r\n" % (len(chunk), chunk) for _ in range(MAX_BODY_BYTES // len(chunk) + 2))
    answer = raw_request(server, head, chunks)
    assert answer.startswith(b"HTTP/1.1 413"), answer[:200]
    # a body at the limit still reaches authentication (401, not 413)
    r = httpx.put(f"{server.base}/api/answers", content=b" " * MAX_BODY_BYTES)
    assert r.status_code == 401


@pytest.mark.parametrize(
    "raw",
    [
        '"seconds": NaN',
        '"seconds": Infinity',
        '"seconds": -Infinity',
        '"seconds": 1e999',
        '"free_text": "\\ud800"',
        '"reasons": ["\\udfff"]',
    ],
)
def test_non_finite_numbers_and_lone_surrogates_get_a_clean_422(
    hostile: tuple[Server, dict[str, Any]], raw: str
) -> None:
    """Python's JSON reader accepts NaN, Infinity, 1e999 (inf) and lone surrogates; the answer is 422 with JSON."""
    server, access = hostile
    token = access["annotators"]["a01"]
    item = first_item(server, token)
    body = '{"item_id": "' + item + '", "criterion": "Appropriateness", "value": "dont_know", ' + raw + "}"
    r = httpx.put(f"{server.base}/api/answers", headers={**auth(token), "Content-Type": "application/json"},
                  content=body.encode())  # fmt: skip
    assert r.status_code == 422, r.text
    assert r.json()["detail"]  # a readable reason, not an HTML 500 page


def test_duplicate_reason_codes_are_refused(hostile: tuple[Server, dict[str, Any]]) -> None:
    server, access = hostile
    token = access["annotators"]["a02"]
    item = first_item(server, token)
    body = {"item_id": item, "criterion": "Appropriateness", "value": "negative", "reasons": ["Incoherence"] * 3}
    r = httpx.put(f"{server.base}/api/answers", headers=auth(token), json=body)
    assert r.status_code == 422 and "Incoherence" in r.text, r.text
    tasks = httpx.get(f"{server.base}/api/tasks", headers=auth(token)).json()
    assert all(it["answers"] == {} for u in tasks["units"] for it in u["items"])  # nothing was stored


@pytest.mark.parametrize(
    "path", ["/", "/admin", "/static/index.html", "/static/app.js", "/static/style.css", "/api/tasks", "/nowhere"]
)
def test_every_response_carries_the_security_headers(hostile: tuple[Server, dict[str, Any]], path: str) -> None:
    """/static/index.html used to come without the CSP of /, so an inline or javascript: script could run there."""
    server, _ = hostile
    r = httpx.get(f"{server.base}{path}")
    csp = r.headers.get("content-security-policy", "")
    assert "script-src 'self'" in csp and "default-src 'self'" in csp, (path, r.headers)
    assert r.headers.get("x-content-type-options") == "nosniff"
    assert r.headers.get("x-frame-options") == "DENY"
    assert r.headers.get("referrer-policy") == "no-referrer"
    assert r.headers.get("cache-control") == "no-store"


@pytest.mark.parametrize("name", ["app.js%00.js", "app.js%00", "a" * 5000 + ".js", "%2e%2e%2fapp.py", "app.py", ".js"])
def test_odd_static_names_are_404(hostile: tuple[Server, dict[str, Any]], name: str) -> None:
    server, _ = hostile
    assert httpx.get(f"{server.base}/static/{name}").status_code == 404


def test_the_study_database_and_its_wal_are_owner_only(hostile: tuple[Server, dict[str, Any]]) -> None:
    """Created under umask 022 (world-readable by default), the database, -wal and -shm are 0600."""
    server, access = hostile
    token = access["annotators"]["a03"]
    body = {"item_id": first_item(server, token), "criterion": "Appropriateness", "value": "positive"}
    assert httpx.put(f"{server.base}/api/answers", headers=auth(token), json=body).status_code == 200
    names = ["study.db", "study.db-wal", "study.db-shm", "access.json"]
    modes = {n: stat.S_IMODE(os.stat(server.folder / n).st_mode) for n in names}  # the server is running: WAL exists
    assert modes == dict.fromkeys(names, 0o600)


def comperdial_qualification_study(folder: Path) -> dict[str, Any]:
    """A 1-5 scale study whose qualification batch has two items: references rate m1 5 and m2 1."""
    proto = load_protocol("comperdial")
    dialogues, candidates = dialogues_and_candidates(n_contexts=3)
    q_cands = [c for c in candidates if c.dialogue_id == "d2"]
    gold = [
        Rating(item_id=c.id, dimension="Overall", annotator=ref, value=5.0 if c.system == "m1" else 1.0)
        for c in q_cands
        for ref in ("ref1", "ref2")
    ]
    main = [c for c in candidates if c.dialogue_id != "d2"]
    config = StudyConfig(protocol=proto.name, protocol_version=proto.version, annotators=("a01",), per_item=1,
                         batch_size=2, seed=0)  # fmt: skip
    create_study(folder, proto, dialogues, main, config, qualification=(q_cands, gold))
    import json

    return dict(json.loads((folder / "access.json").read_text()))


def test_numeric_answers_are_stored_canonical_and_qualify(tmp_path: Path) -> None:
    """Typed "5.0", " 5 ", "５" (fullwidth), "+5" mean the level 5: stored as "5", so qualification compares 5 with 5.

    Before, they were stored as typed and a worker answering 5.0/1.0 against references' 5/1 never qualified.
    """
    access = comperdial_qualification_study(tmp_path / "s")
    server = start_server(tmp_path / "s")
    try:
        token = access["annotators"]["a01"]
        put = lambda body: httpx.put(f"{server.base}/api/answers", headers=auth(token), json=body)  # noqa: E731
        units = httpx.get(f"{server.base}/api/tasks", headers=auth(token)).json()["units"]
        assert [u["qualification"] for u in units] == [True]
        items = {it["text"][:2]: it["id"] for it in units[0]["items"]}
        for typed in ("5.0", " 5 ", "\uff15", "+5"):
            r = put({"item_id": items["m1"], "criterion": "Overall", "value": typed})
            assert r.status_code == 200 and r.json()["value"] == "5", (typed, r.text)
        for bad in ("5.5", "6", "0", "1e0x", "", "nan", "1_0"):
            assert put({"item_id": items["m2"], "criterion": "Overall", "value": bad}).status_code == 422, bad
        r = put({"item_id": items["m2"], "criterion": "Overall", "value": "1.0", "free_text": "", "reasons": []})
        assert r.status_code == 200 and r.json()["value"] == "1"
        body = httpx.get(f"{server.base}/api/tasks", headers=auth(token)).json()
        answers = {it["text"][:2]: it["answers"]["Overall"]["value"] for u in body["units"] for it in u["items"]
                   if u["qualification"]}  # fmt: skip
        assert answers == {"m1": "5", "m2": "1"}
        assert body["qualified"] is True  # the same answers as both references: kappa 1 > 0.21
    finally:
        server.proc.terminate()
        server.proc.wait(timeout=10)


@pytest.mark.parametrize("seconds", [True, False, "5", "1e3", " 7 "])
def test_time_spent_that_is_not_a_number_is_refused(hostile: tuple[Server, dict[str, Any]], seconds: Any) -> None:
    """`"seconds": true` was stored as 1 s, `"1e3"` (a string) as 1,000 s: the time spent in the admin's progress and
    the report's "Time spent" added figures no client measured. A boolean or a string is now 422, and nothing is stored.
    """
    server, access = hostile
    token = access["annotators"]["a02"]
    item = first_item(server, token)
    body = {"item_id": item, "criterion": "Listening", "value": "positive", "seconds": seconds}
    r = httpx.put(f"{server.base}/api/answers", headers=auth(token), json=body)
    assert r.status_code == 422, r.text
    assert r.json()["detail"][0]["loc"] == ["body", "seconds"]
    tasks = httpx.get(f"{server.base}/api/tasks", headers=auth(token)).json()
    assert all("Listening" not in it["answers"] for u in tasks["units"] for it in u["items"])


@pytest.mark.parametrize("scheme", ["bearer", "BEARER", "Bearer  "])
def test_the_bearer_scheme_is_read_in_any_case(hostile: tuple[Server, dict[str, Any]], scheme: str) -> None:
    """An auth scheme is case-insensitive (RFC 9110 11.1): `bearer TOKEN` was 401 "missing token", the token there."""
    server, access = hostile
    r = httpx.get(f"{server.base}/api/me", headers={"Authorization": f"{scheme} {access['annotators']['a01']}"})
    assert r.status_code == 200 and r.json()["annotator"] == "a01", r.text
    r = httpx.get(f"{server.base}/api/me", headers={"Authorization": "bearer"})
    assert (r.status_code, r.json()["detail"]) == (401, "missing token")


@pytest.mark.parametrize("second", ["Bearer {a02}", "Bearer {a01}", "Basic cHJveHk6cHc="])
def test_two_authorization_headers_are_refused(hostile: tuple[Server, dict[str, Any]], second: str) -> None:
    """A request with two Authorization headers was served as whoever came first: a proxy adding its own header
    (or a client's second one) silently chose the identity. It is 400 naming the header, whichever the second is."""
    server, access = hostile
    tokens = access["annotators"]
    headers = [("Authorization", f"Bearer {tokens['a01']}"), ("Authorization", second.format(**tokens))]
    for path in ("/api/me", "/api/tasks"):
        r = httpx.get(f"{server.base}{path}", headers=headers)
        assert r.status_code == 400, r.text
        assert r.json()["detail"] == "more than one Authorization header"


@pytest.mark.parametrize("key", ["reason", "explanation", "freetext"])
def test_an_answer_with_a_key_the_app_does_not_read_is_refused(
    hostile: tuple[Server, dict[str, Any]], key: str
) -> None:
    """A misspelt key was dropped: {"value": "negative", "reason": ["Incoherence"]} was 200 "saved", without the
    explanation the client sent. It is 422 naming body.KEY, and nothing is stored."""
    server, access = hostile
    token = access["annotators"]["a03"]
    item = first_item(server, token)
    body = {"item_id": item, "criterion": "Listening", "value": "negative", key: ["Incoherence"]}
    r = httpx.put(f"{server.base}/api/answers", headers=auth(token), json=body)
    assert r.status_code == 422 and r.json()["detail"][0]["loc"] == ["body", key]
    tasks = httpx.get(f"{server.base}/api/tasks", headers=auth(token)).json()
    assert not [it for u in tasks["units"] for it in u["items"] if "Listening" in it["answers"]]


def test_a_decided_qualification_answer_cannot_be_changed(tmp_path: Path) -> None:
    """A worker's qualification answers could be changed after the verdict was stored: a worker judged with kappa 1
    turned a gold answer round and the study kept "kappa 1.000, qualified" beside answers giving another kappa. The
    referenced answers the verdict read are now final (409); resending the same value, and the unreferenced
    ground-truth candidate, are still taken."""
    access = make_study(tmp_path / "q", qualification=True, annotators=("a01",), per_item=1)
    server = start_server(tmp_path / "q")
    try:
        token = access["annotators"]["a01"]
        put = lambda body: httpx.put(f"{server.base}/api/answers", headers=auth(token), json=body)  # noqa: E731
        items = httpx.get(f"{server.base}/api/tasks", headers=auth(token)).json()["units"][0]["items"]
        by_text = {it["text"][:3]: it["id"] for it in items}  # "m1:", "m2:" and the ground truth "ref"
        gold = {"m1:": "positive", "m2:": "negative"}  # the references' answers (conftest.make_study)
        for text, value in gold.items():
            for crit in ("Appropriateness", "Contextualization", "Listening", "Correctness"):
                assert put({"item_id": by_text[text], "criterion": crit, "value": value}).status_code == 200
        assert httpx.get(f"{server.base}/api/tasks", headers=auth(token)).json()["qualified"] is True
        r = put({"item_id": by_text["m1:"], "criterion": "Listening", "value": "negative"})
        assert r.status_code == 409 and "Listening" in r.json()["detail"], r.text
        r = put({"item_id": by_text["m1:"], "criterion": "Listening", "value": "positive"})  # a retried save
        assert r.status_code == 200, r.text
        assert put({"item_id": by_text["ref"], "criterion": "Listening", "value": "negative"}).status_code == 200
        answers = {it["text"][:3]: it["answers"] for it in
                   httpx.get(f"{server.base}/api/tasks", headers=auth(token)).json()["units"][0]["items"]}  # fmt: skip
        assert answers["m1:"]["Listening"]["value"] == "positive"
    finally:
        server.proc.terminate()
        server.proc.wait(timeout=10)


@pytest.mark.parametrize("path", ["/", "/admin", "/static/app.js", "/api/me", "/api/tasks"])
def test_head_is_answered_as_get_without_the_body(hostile: tuple[Server, dict[str, Any]], path: str) -> None:
    """HEAD, which every server must support beside GET (RFC 9110 9.1), was 405 on every page and endpoint: a link
    checker or uptime probe (curl -I) read the study as down. It is GET's status and headers, with no body."""
    server, access = hostile
    headers = auth(access["annotators"]["a01"])
    got, head = (httpx.request(m, f"{server.base}{path}", headers=headers) for m in ("GET", "HEAD"))
    assert (head.status_code, head.content) == (200, b""), head.text
    assert {k: head.headers[k] for k in ("content-type", "content-length", "content-security-policy")} == {
        k: got.headers[k] for k in ("content-type", "content-length", "content-security-policy")
    }


def test_head_on_a_put_endpoint_is_still_405(hostile: tuple[Server, dict[str, Any]]) -> None:
    server, access = hostile
    r = httpx.head(f"{server.base}/api/answers", headers=auth(access["annotators"]["a01"]))
    assert (r.status_code, r.headers["allow"]) == (405, "PUT")
