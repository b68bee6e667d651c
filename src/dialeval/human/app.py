"""The annotation web app: FastAPI over the study database, with token auth.

Annotators authenticate with ``Authorization: Bearer <token>``; the per-annotator
link carries the token in the URL fragment (``/#token=...``), which browsers do
not send to the server or write to its logs. Annotator endpoints only ever read
and write the caller's own assignments and answers; reference answers and other
annotators' labels are reachable only through ``/api/admin/*`` with the admin token.
"""

import contextlib
import functools
import hashlib
import hmac
import random
import threading
from collections.abc import Awaitable, Callable, Iterator, MutableMapping
from dataclasses import dataclass, field
from importlib import resources
from typing import Annotated, Any

from dialeval.errors import MissingExtraError

try:
    import sqlalchemy as sa
    from fastapi import APIRouter, Depends, FastAPI, HTTPException, Request
    from fastapi.exceptions import RequestValidationError
    from fastapi.responses import HTMLResponse, JSONResponse, Response
    from pydantic import BaseModel, ConfigDict, Field, field_validator
except ImportError as exc:  # pragma: no cover - the human extra
    raise MissingExtraError("fastapi", extra="human") from exc

from dialeval.human import store
from dialeval.human.analysis import live_agreement, progress
from dialeval.human.protocol import MAX_KEY_CHARS, Protocol
from dialeval.human.qualification import decide_qualification


class AnswerIn(BaseModel):
    """One answer as the browser sends it; a key it does not name is refused (a misspelt "reason" was dropped)."""

    model_config = ConfigDict(extra="forbid")

    item_id: str = Field(max_length=200)
    criterion: str = Field(max_length=MAX_KEY_CHARS)
    value: str = Field(max_length=MAX_KEY_CHARS)
    reasons: list[str] = Field(default_factory=list, max_length=20)
    free_text: str = Field(default="", max_length=5000)
    # strict: true, "5" and "1e3" were read as 1, 5 and 1,000 seconds, figures no client measured
    seconds: float = Field(default=0.0, ge=0, le=86400, allow_inf_nan=False, strict=True)
    request_id: str | None = Field(default=None, max_length=64)

    @field_validator("item_id", "criterion", "value", "free_text", "request_id", "reasons")
    @classmethod
    def _encodable(cls, text: Any) -> Any:
        r"""Refuse lone surrogates (JSON's "\ud800"): they cannot be stored or sent back as UTF-8."""
        for part in text if isinstance(text, list) else [text]:
            if isinstance(part, str) and not part.isascii():
                try:
                    part.encode("utf-8")
                except UnicodeEncodeError:
                    raise ValueError("text holds a lone surrogate (not valid Unicode)") from None
        return text


@functools.cache
def _static(name: str) -> str:
    return (resources.files("dialeval.human") / "static" / name).read_text("utf-8")


_TYPES = {".js": "text/javascript", ".css": "text/css", ".html": "text/html"}
# the only files /static/ serves: a fixed list, so no user-typed name ever reaches the file system
_STATIC_FILES = frozenset(
    p.name for p in (resources.files("dialeval.human") / "static").iterdir() if p.name.endswith(tuple(_TYPES))
)
_CSP = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; object-src 'none'; base-uri 'none'"
SECURITY_HEADERS = {
    "content-security-policy": f"{_CSP}; frame-ancestors 'none'; form-action 'self'",
    "x-content-type-options": "nosniff",
    "x-frame-options": "DENY",
    "referrer-policy": "no-referrer",
    "cache-control": "no-store",
}
"""Headers on every response, pages, scripts, API answers and errors alike."""
_SECURITY_NAMES = frozenset(k.encode() for k in SECURITY_HEADERS)
_SECURITY_RAW = [(k.encode(), v.encode()) for k, v in SECURITY_HEADERS.items()]

MAX_BODY_BYTES = 64 * 1024
"""The largest request body the app reads (an answer with 5,000 characters of free text is under 32 KiB)."""

_Scope = MutableMapping[str, Any]
_Message = MutableMapping[str, Any]
_Receive = Callable[[], Awaitable[_Message]]
_Send = Callable[[_Message], Awaitable[None]]


class Guard:
    """ASGI middleware: add :data:`SECURITY_HEADERS` to every response; refuse bodies over ``limit`` bytes; HEAD is GET.

    The body is read (at most ``limit`` bytes of it) before the app sees the request, so an
    oversized body gets 413 before routing and authentication: a Content-Length over the limit
    is refused at once, a chunked body as soon as the bytes received pass it.
    """

    def __init__(self, app: Callable[[_Scope, _Receive, _Send], Awaitable[None]], limit: int = MAX_BODY_BYTES) -> None:
        self.app = app
        self.limit = limit

    async def __call__(self, scope: _Scope, receive: _Receive, send: _Send) -> None:
        """Serve one ASGI connection through the guard."""
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        if scope["method"] == "HEAD":  # routed as GET (HEAD was 405); uvicorn, reading its own scope, drops the body
            scope = {**scope, "method": "GET"}

        async def send_secured(message: _Message) -> None:
            if message["type"] == "http.response.start":
                kept = [(k, v) for k, v in message.get("headers", []) if k.lower() not in _SECURITY_NAMES]
                message["headers"] = kept + _SECURITY_RAW
            await send(message)

        declared = dict(scope["headers"]).get(b"content-length", b"0")
        body = bytearray()
        if not declared.isdigit() or int(declared) > self.limit:
            await _too_large(send_secured, self.limit)
            return
        while True:
            message = await receive()
            if message["type"] != "http.request":
                return  # the client went away
            body += message.get("body", b"")
            if len(body) > self.limit:
                await _too_large(send_secured, self.limit)
                return
            if not message.get("more_body", False):
                break
        replayed = False

        async def replay() -> _Message:
            nonlocal replayed
            if replayed:
                return await receive()
            replayed = True
            return {"type": "http.request", "body": bytes(body), "more_body": False}

        await self.app(scope, replay, send_secured)


async def _too_large(send: _Send, limit: int) -> None:
    await JSONResponse(
        {"detail": f"request body over {limit} bytes"}, status_code=413, headers={"Connection": "close"}
    )({"type": "http"}, _no_receive, send)


async def _no_receive() -> _Message:  # pragma: no cover - a plain response never reads the request
    return {"type": "http.disconnect"}


def _readable(errors: Any) -> list[dict[str, Any]]:
    """Return validation errors as plain JSON: where and why, never the input (it may be NaN or a lone surrogate)."""
    out = []
    for e in errors:
        msg = str(e.get("msg", "invalid")).encode("utf-8", "backslashreplace").decode("utf-8")
        out.append({"loc": [str(x) for x in e.get("loc", ())], "msg": msg, "type": str(e.get("type", ""))})
    return out


def public_id(key: str, real_id: str) -> str:
    """Return the opaque id an annotator sees for an item or unit (ids name systems and attention checks).

    Example:
        >>> public_id("k", "d0:ground-truth") == public_id("k", "d0:ground-truth") != public_id("k", "d0:m1")
        True
    """
    return hmac.new(key.encode(), real_id.encode(), hashlib.sha256).hexdigest()[:20]


def annotator_order(key: str, annotator: str, unit_id: str, n: int) -> list[int]:
    """Return the seeded order in which ``annotator`` sees the ``n`` candidates of a unit (blind to position)."""
    order = list(range(n))
    random.Random(public_id(key, f"{annotator}\u0000{unit_id}")).shuffle(order)
    return order


@dataclass(frozen=True)
class Caller:
    """Who sent a request: an annotator or the admin."""

    id: str
    role: str


@dataclass
class Study:
    """What the app reads once at start-up: none of it changes after ``create_study``.

    Tokens, items and the protocol are fixed when a study is created, so authentication and the
    opaque-id lookups need no database query; only answers, assignments (``study reassign``) and
    qualification decisions are read per request. Writes in this process take ``write_lock`` so
    they queue in Python instead of in SQLite's busy handler, which sleeps in steps of up to 100 ms.
    """

    engine: sa.Engine
    protocol: Protocol
    threshold: float | None  # None: the reference annotators' own kappa (see dialeval.human.qualification)
    blind_key: str
    notes: dict[str, str]
    real_id: dict[str, str]  # the id an annotator sees -> item id
    unit_of: dict[str, str]  # item id -> unit id
    people: dict[str, Caller]  # token sha256 -> caller; reference annotators never log in
    write_lock: threading.Lock = field(default_factory=threading.Lock)
    decided: dict[str, bool] = field(default_factory=dict)  # qualification decisions, final once made

    @classmethod
    def load(cls, url: str) -> "Study":
        """Read the study stored at SQLAlchemy ``url`` (and add tables newer than the study, if any)."""
        engine = store.connect(url)
        store.metadata.create_all(engine)  # a study made by an older dialeval lacks qualification_verdicts
        with engine.connect() as conn:
            config = store.get_meta(conn, "config")
            blind_key = str(store.get_meta(conn, "blind_key", default=""))
            items = conn.execute(sa.select(store.items.c.id, store.items.c.unit_id)).all()
            people = conn.execute(sa.select(store.annotators).where(store.annotators.c.role != "reference")).all()
            return cls(
                engine=engine,
                protocol=Protocol.model_validate(store.get_meta(conn, "protocol")),
                threshold=config.get("qualification_threshold"),
                blind_key=blind_key,
                notes=dict(store.get_meta(conn, "unit_notes", default={})),
                real_id={public_id(blind_key, i.id): i.id for i in items},
                unit_of={i.id: i.unit_id for i in items},
                people={p.token_sha256: Caller(p.id, p.role) for p in people},
            )

    @contextlib.contextmanager
    def writing(self) -> Iterator[sa.Connection]:
        """Yield a connection in a write transaction, one writer of this process at a time.

        On SQLite the transaction holds the database's write lock from its first read, so the writers of
        ``study serve --workers N`` take turns: what one reads (a worker still undecided) is not stored by another
        process before it writes.
        """
        with self.write_lock, self.engine.begin() as conn:
            if conn.dialect.name == "sqlite":
                conn.exec_driver_sql("BEGIN IMMEDIATE")  # pysqlite would begin at the first write
            yield conn

    def qualified(self, annotator: str) -> bool:
        """Return whether ``annotator`` may work on main batches, deciding it once they finish qualifying."""
        return self.verdict(annotator) is True

    def verdict(self, annotator: str) -> bool | None:
        """Return whether ``annotator`` passed qualification: None while undecided, deciding it once they finish."""
        if annotator not in self.decided:
            with self.engine.connect() as conn:  # most calls: decided already, no need to queue for the writer
                known = conn.execute(sa.select(store.annotators.c.qualified)
                                     .where(store.annotators.c.id == annotator)).scalar_one()  # fmt: skip
            if known is not None:
                self.decided[annotator] = bool(known)
        if annotator in self.decided:
            return self.decided[annotator]
        with self.writing() as conn:
            conn.execute(_LOCKED, {"who": annotator})
            passed = decide_qualification(conn, annotator, self.threshold)
        if passed is not None:
            self.decided[annotator] = passed
        return passed


async def _study(request: Request) -> Study:
    # every dependency is async and does no I/O: a sync one would cost a trip through the thread pool
    study: Study = request.app.state.study
    return study


async def _caller(request: Request) -> Caller:
    sent = request.headers.getlist("authorization")
    if len(sent) > 1:  # the first was used: a proxy's added header, or the client's, chose who the request was
        raise HTTPException(400, "more than one Authorization header")
    scheme, _, token = (sent[0] if sent else "").partition(" ")
    if scheme.lower() != "bearer" or not token.strip():  # a scheme is case-insensitive: "bearer T" was "missing token"
        raise HTTPException(401, "missing token")
    token = token.strip()
    who: Caller | None = request.app.state.study.people.get(store.token_hash(token))
    if who is None:
        raise HTTPException(401, "unknown token")
    return who


async def _annotator(who: Annotated[Caller, Depends(_caller)]) -> Caller:
    if who.role != "annotator":
        raise HTTPException(403, "annotator token required")
    return who


async def _admin(who: Annotated[Caller, Depends(_caller)]) -> Caller:
    if who.role != "admin":
        raise HTTPException(403, "admin token required")
    return who


StudyDep = Annotated[Study, Depends(_study)]
AnnotatorDep = Annotated[Caller, Depends(_annotator)]
AdminDep = Annotated[Caller, Depends(_admin)]

pages = APIRouter(include_in_schema=False)
annotator_api = APIRouter(prefix="/api")
admin_api = APIRouter(prefix="/api/admin")


@pages.get("/")
async def index() -> HTMLResponse:
    """Serve the annotation page."""
    return HTMLResponse(_static("index.html"))


@pages.get("/admin")
async def admin_page() -> HTMLResponse:
    """Serve the admin page (progress and live agreement)."""
    return HTMLResponse(_static("admin.html"))


@pages.get("/static/{name}")
async def static(name: str) -> Response:
    """Serve one of the app's own scripts and style sheets; nothing else."""
    if name not in _STATIC_FILES:
        raise HTTPException(404)
    return Response(_static(name), media_type=_TYPES[name[name.rfind(".") :]])


@annotator_api.get("/me")
async def me(who: AnnotatorDep, st: StudyDep) -> dict[str, Any]:
    """Return the caller's id, qualification state and the protocol (without any reference answer)."""
    return {"annotator": who.id, "qualified": st.qualified(who.id), "protocol": st.protocol.public()}


@annotator_api.get("/tasks")
async def tasks(who: AnnotatorDep, st: StudyDep) -> dict[str, Any]:
    """Return the caller's units in order (only the qualification batch until they qualify), with answers.

    ``failed`` says the caller did not pass qualification: no main batch will open for them.
    """
    verdict = st.verdict(who.id)
    qualified = verdict is True
    a = store.assignments
    query = sa.select(a.c.unit_id, a.c.batch, a.c.kind).where(a.c.annotator == who.id).order_by(a.c.position)
    if not qualified:
        query = query.where(a.c.kind == "qualification")
    with st.engine.connect() as conn:
        units = conn.execute(query).all()
        rows = conn.execute(sa.select(store.items).where(store.items.c.unit_id.in_([u.unit_id for u in units]))
                            .order_by(store.items.c.position)).all()  # fmt: skip
        mine = conn.execute(sa.select(store.answers).where(store.answers.c.annotator == who.id)).all()
    by_unit: dict[str, list[Any]] = {}
    for r in rows:
        by_unit.setdefault(r.unit_id, []).append(r)
    answered = {(r.item_id, r.criterion): {"value": r.value, "reasons": r.reasons, "free_text": r.free_text}
                for r in mine}  # fmt: skip
    pages = [_unit_page(st, who.id, u, by_unit[u.unit_id], answered) for u in units]
    return {"qualified": qualified, "failed": verdict is False, "units": pages}


def _unit_page(st: Study, annotator: str, unit: Any, its: list[Any], answered: dict[Any, Any]) -> dict[str, Any]:
    """One unit as the annotator sees it: opaque ids, candidates in the annotator's own seeded order."""
    its = [its[j] for j in annotator_order(st.blind_key, annotator, unit.unit_id, len(its))]
    return {
        "unit_id": public_id(st.blind_key, unit.unit_id),
        "batch": unit.batch,
        "qualification": unit.kind == "qualification",
        "context": its[0].context,
        "note": st.notes.get(unit.unit_id, ""),
        "knowledge": its[0].knowledge,
        "items": [
            {
                "id": public_id(st.blind_key, it.id),
                "text": it.text,
                "answers": {
                    c.name: answered[(it.id, c.name)] for c in st.protocol.criteria if (it.id, c.name) in answered
                },
            }
            for it in its
        ],
    }


_ASSIGNED = (
    sa.select(store.assignments.c.kind, store.annotators.c.qualified)
    .join(store.annotators, store.annotators.c.id == store.assignments.c.annotator)
    .where(store.assignments.c.annotator == sa.bindparam("who"), store.assignments.c.unit_id == sa.bindparam("unit"))
    .with_for_update(of=store.annotators)
)
"""The caller's assignment of a unit and whether they qualified: one indexed lookup per answer.

Their annotator row stays locked until the answer is committed, so another process deciding their qualification
(``study serve --workers N``) is waited for, not read around (PostgreSQL; SQLite's write lock is taken by writing()).
"""

_LOCKED = sa.select(store.annotators.c.id).where(store.annotators.c.id == sa.bindparam("who")).with_for_update()
"""An annotator's row, locked until the transaction ends: one process at a time decides their qualification."""

_a, _g = store.answers, store.gold
_JUDGED = (
    sa.select(_a.c.value)
    .join(_g, (_g.c.item_id == _a.c.item_id) & (_g.c.criterion == _a.c.criterion))
    .where(_a.c.annotator == sa.bindparam("who"), _a.c.item_id == sa.bindparam("item"),
           _a.c.criterion == sa.bindparam("criterion"))
    .limit(1)
)  # fmt: skip
"""The caller's answer to a referenced qualification question: one of those their verdict was computed from."""


@annotator_api.put("/answers")
async def save(answer: AnswerIn, who: AnnotatorDep, st: StudyDep) -> dict[str, Any]:
    """Store one answer of the caller's (replacing an earlier one); acknowledged once committed.

    Like every annotator endpoint it runs on the event loop, not in the thread pool: the write
    is two indexed statements (well under a millisecond), while writers in a pool of 40 threads
    queued on each other's GIL hand-offs and put p99 at 1.3-2 s at 50 annotators (see
    docs/performance.md). Only the admin's endpoints, which compute agreement, use the pool.
    The qualification answer that completes the referenced questions also decides the worker's
    qualification, in the same transaction; once decided, the referenced answers it read are final (409).
    """
    try:
        criterion = st.protocol.criterion(answer.criterion)
    except KeyError:
        raise HTTPException(422, f"unknown criterion {answer.criterion!r}") from None
    problem = criterion.check(answer.value, answer.reasons, answer.free_text)
    if problem:
        raise HTTPException(422, problem)
    value = criterion.answer.canonical(answer.value)
    item_id = st.real_id.get(answer.item_id, "")
    with st.writing() as conn:
        row = conn.execute(_ASSIGNED, {"who": who.id, "unit": st.unit_of.get(item_id, "")}).first()
        if row is None:
            raise HTTPException(404, "no such item among your assignments")
        if row.kind != "qualification" and not row.qualified:
            raise HTTPException(403, "finish and pass the qualification batch first")
        if row.kind == "qualification" and row.qualified is not None:
            judged = conn.execute(_JUDGED, {"who": who.id, "item": item_id, "criterion": criterion.name}).scalar()
            if judged is not None and (criterion.answer.canonical(judged) or judged) != value:
                # the stored verdict (kappa, reason) was computed from it: a change would leave them disagreeing
                raise HTTPException(409, f"your qualification is decided: the answer to {criterion.name} of this "
                                         "item is final")  # fmt: skip
        store.upsert_answer(conn, {"annotator": who.id, **answer.model_dump(), "item_id": item_id, "value": value})
        # the decision waited for the worker's next page load: one who answered the last question and closed
        # the tab was never decided (study reassign found no failed worker, the report no decision)
        undecided = row.kind == "qualification" and row.qualified is None
        passed = decide_qualification(conn, who.id, st.threshold) if undecided else None
    if passed is not None:
        st.decided[who.id] = passed
    return {"saved": True, "item_id": answer.item_id, "criterion": answer.criterion, "value": value}


@admin_api.get("/progress")
def admin_progress(_: AdminDep, st: StudyDep) -> dict[str, Any]:
    """Return answers given and due, time spent and qualification state per annotator."""
    with st.engine.connect() as conn:
        return {"annotators": progress(conn, st.protocol)}


@admin_api.get("/agreement")
def admin_agreement(_: AdminDep, st: StudyDep) -> dict[str, Any]:
    """Return the agreement so far, per batch and criterion."""
    with st.engine.connect() as conn:
        return {"batches": live_agreement(conn, st.protocol)}


def create_app(url: str) -> FastAPI:
    """Return the app serving the study stored at SQLAlchemy ``url``.

    Annotators see opaque item and unit ids (:func:`public_id`) and each unit's candidates in
    their own seeded order, so neither an id nor a position tells which system (or the ground
    truth, or an attention check) they are rating.
    """
    app = FastAPI(title="dialeval study", docs_url=None, redoc_url=None, openapi_url=None)
    app.state.study = Study.load(url)
    app.add_middleware(Guard)

    @app.exception_handler(RequestValidationError)
    async def invalid(_: Request, exc: RequestValidationError) -> JSONResponse:
        return JSONResponse({"detail": _readable(exc.errors())}, status_code=422)

    for router in (pages, annotator_api, admin_api):
        app.include_router(router)
    return app
