"""The annotation web app: FastAPI over the study database, with token auth.

Annotators authenticate with ``Authorization: Bearer <token>``; the per-annotator
link carries the token in the URL fragment (``/#token=...``), which browsers do
not send to the server or write to its logs. Annotator endpoints only ever read
and write the caller's own assignments and answers; reference answers and other
annotators' labels are reachable only through ``/api/admin/*`` with the admin token.
"""

import hashlib
import hmac
import random
from importlib import resources
from typing import Annotated, Any

from dialeval.errors import MissingExtraError

try:
    import sqlalchemy as sa
    from fastapi import Depends, FastAPI, Header, HTTPException
    from fastapi.responses import HTMLResponse, Response
    from pydantic import BaseModel, Field
except ImportError as exc:  # pragma: no cover - the human extra
    raise MissingExtraError("fastapi", extra="human") from exc

from dialeval.human import store
from dialeval.human.analysis import live_agreement, progress
from dialeval.human.protocol import Protocol
from dialeval.human.qualification import decide_qualification


class AnswerIn(BaseModel):
    """One answer as the browser sends it."""

    item_id: str = Field(max_length=200)
    criterion: str = Field(max_length=64)
    value: str = Field(max_length=64)
    reasons: list[str] = Field(default_factory=list, max_length=20)
    free_text: str = Field(default="", max_length=5000)
    seconds: float = Field(default=0.0, ge=0, le=86400)
    request_id: str | None = Field(default=None, max_length=64)


def _static(name: str) -> str:
    return (resources.files("dialeval.human") / "static" / name).read_text("utf-8")


_TYPES = {".js": "text/javascript", ".css": "text/css", ".html": "text/html"}
_NO_STORE = {"Cache-Control": "no-store", "X-Content-Type-Options": "nosniff"}
_CSP = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; object-src 'none'; base-uri 'none'"


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


def create_app(url: str) -> FastAPI:
    """Return the app serving the study stored at SQLAlchemy ``url``.

    Annotators see opaque item and unit ids (:func:`public_id`) and each unit's candidates in
    their own seeded order, so neither an id nor a position tells which system (or the ground
    truth, or an attention check) they are rating.
    """
    engine = store.connect(url)
    with engine.connect() as conn:
        protocol = Protocol.model_validate(store.get_meta(conn, "protocol"))
        config = store.get_meta(conn, "config")
        blind_key = str(store.get_meta(conn, "blind_key", default=""))
        notes: dict[str, str] = dict(store.get_meta(conn, "unit_notes", default={}))
        # items never change after create_study: map the opaque ids back once, not per answer
        real_id = {public_id(blind_key, i): i for i in conn.execute(sa.select(store.items.c.id)).scalars()}
    app = FastAPI(title="dialeval study", docs_url=None, redoc_url=None, openapi_url=None)
    app.state.engine = engine

    def caller(authorization: Annotated[str | None, Header()] = None) -> dict[str, Any]:
        if not authorization or not authorization.startswith("Bearer "):
            raise HTTPException(401, "missing token")
        digest = store.token_hash(authorization.removeprefix("Bearer ").strip())
        with engine.connect() as conn:
            row = conn.execute(sa.select(store.annotators).where(store.annotators.c.token_sha256 == digest)).first()
        if row is None or row.role == "reference":
            raise HTTPException(401, "unknown token")
        return dict(row._mapping)

    def annotator(who: Annotated[dict[str, Any], Depends(caller)]) -> dict[str, Any]:
        if who["role"] != "annotator":
            raise HTTPException(403, "annotator token required")
        return who

    def admin(who: Annotated[dict[str, Any], Depends(caller)]) -> dict[str, Any]:
        if who["role"] != "admin":
            raise HTTPException(403, "admin token required")
        return who

    def page(name: str) -> HTMLResponse:
        return HTMLResponse(_static(name), headers={**_NO_STORE, "Content-Security-Policy": _CSP})

    @app.get("/", include_in_schema=False)
    def index() -> HTMLResponse:
        return page("index.html")

    @app.get("/admin", include_in_schema=False)
    def admin_page() -> HTMLResponse:
        return page("admin.html")

    @app.get("/static/{name}", include_in_schema=False)
    def static(name: str) -> Response:
        suffix = name[name.rfind(".") :]
        if "/" in name or suffix not in _TYPES or name.startswith("."):
            raise HTTPException(404)
        try:
            body = _static(name)
        except FileNotFoundError:
            raise HTTPException(404) from None
        return Response(body, media_type=_TYPES[suffix], headers=_NO_STORE)

    @app.get("/api/me")
    def me(who: Annotated[dict[str, Any], Depends(annotator)]) -> dict[str, Any]:
        with engine.begin() as conn:
            qualified = decide_qualification(conn, who["id"], float(config["qualification_threshold"]))
        return {"annotator": who["id"], "qualified": qualified, "protocol": protocol.public()}

    @app.get("/api/tasks")
    def tasks(who: Annotated[dict[str, Any], Depends(annotator)]) -> dict[str, Any]:
        with engine.begin() as conn:
            qualified = decide_qualification(conn, who["id"], float(config["qualification_threshold"]))
            a = store.assignments
            query = sa.select(a.c.unit_id, a.c.batch, a.c.kind).where(a.c.annotator == who["id"]).order_by(a.c.position)
            if not qualified:
                query = query.where(a.c.kind == "qualification")
            units = conn.execute(query).all()
            unit_ids = [u.unit_id for u in units]
            rows = conn.execute(
                sa.select(store.items).where(store.items.c.unit_id.in_(unit_ids)).order_by(store.items.c.position)
            ).all()
            mine = conn.execute(sa.select(store.answers).where(store.answers.c.annotator == who["id"])).all()
        by_unit: dict[str, list[Any]] = {}
        for r in rows:
            by_unit.setdefault(r.unit_id, []).append(r)
        answered = {
            (r.item_id, r.criterion): {"value": r.value, "reasons": r.reasons, "free_text": r.free_text} for r in mine
        }
        out = []
        for u in units:
            its = by_unit[u.unit_id]
            its = [its[j] for j in annotator_order(blind_key, who["id"], u.unit_id, len(its))]
            out.append(
                {
                    "unit_id": public_id(blind_key, u.unit_id),
                    "batch": u.batch,
                    "qualification": u.kind == "qualification",
                    "context": its[0].context,
                    "note": notes.get(u.unit_id, ""),
                    "knowledge": its[0].knowledge,
                    "items": [
                        {
                            "id": public_id(blind_key, it.id),
                            "text": it.text,
                            "answers": {
                                c.name: answered[(it.id, c.name)]
                                for c in protocol.criteria
                                if (it.id, c.name) in answered
                            },
                        }
                        for it in its
                    ],
                }
            )
        return {"qualified": qualified, "units": out}

    @app.put("/api/answers")
    def save(answer: AnswerIn, who: Annotated[dict[str, Any], Depends(annotator)]) -> dict[str, Any]:
        try:
            problem = protocol.criterion(answer.criterion).check(answer.value, answer.reasons, answer.free_text)
        except KeyError:
            raise HTTPException(422, f"unknown criterion {answer.criterion!r}") from None
        if problem:
            raise HTTPException(422, problem)
        item_id = real_id.get(answer.item_id, "")
        with engine.begin() as conn:
            kind = conn.execute(
                sa.select(store.assignments.c.kind)
                .join(store.items, store.items.c.unit_id == store.assignments.c.unit_id)
                .where(store.items.c.id == item_id, store.assignments.c.annotator == who["id"])
            ).scalar_one_or_none()
            if kind is None:
                raise HTTPException(404, "no such item among your assignments")
            if kind != "qualification" and not who["qualified"]:
                raise HTTPException(403, "finish and pass the qualification batch first")
            store.upsert_answer(conn, {"annotator": who["id"], **answer.model_dump(), "item_id": item_id})
        return {"saved": True, "item_id": answer.item_id, "criterion": answer.criterion}

    @app.get("/api/admin/progress")
    def admin_progress(_: Annotated[dict[str, Any], Depends(admin)]) -> dict[str, Any]:
        with engine.connect() as conn:
            return {"annotators": progress(conn, protocol)}

    @app.get("/api/admin/agreement")
    def admin_agreement(_: Annotated[dict[str, Any], Depends(admin)]) -> dict[str, Any]:
        with engine.connect() as conn:
            return {"batches": live_agreement(conn, protocol)}

    return app
