"""Design a study: units, batches, balanced seeded assignment, attention checks, qualification.

A *unit* is what an annotator opens at once: one context with all its candidates
(turn level) or one dialogue (dialogue level). Each unit goes to ``per_item``
annotators, always choosing the least-loaded ones (ties broken by a seeded
random draw), so workloads differ by at most one unit; each annotator then sees
their units of a batch in their own seeded random order.
"""

from __future__ import annotations

import heapq
import json
import math
import random
import secrets
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import sqlalchemy as sa

from dialeval.atomic import atomic_write
from dialeval.errors import InputError, check_at_most, check_seed, closest
from dialeval.human import store
from dialeval.human.protocol import Protocol
from dialeval.jsonl import json_problem
from dialeval.schema import Candidate, Dialogue, Rating
from dialeval.words import one_line

GROUND_TRUTH = "ground-truth"
ADMIN = "admin"
MAX_ANNOTATORS = 10_000
"""The most annotators a study takes (each gets a token and a row; ``--annotators 10**20`` never finished)."""


@dataclass(frozen=True)
class StudyConfig:
    """How a study is laid out (stored in the database and in the report)."""

    protocol: str
    protocol_version: int
    annotators: tuple[str, ...]
    per_item: int
    batch_size: int
    seed: int
    attention_per_batch: int = 0
    qualification_threshold: float | None = None  # None: the reference annotators' own Fleiss' kappa
    payment: str = ""


@dataclass
class Unit:
    """One context (or dialogue) with the items an annotator judges together."""

    id: str
    kind: str
    dialogue: Dialogue
    context: list[dict[str, str]]
    items: list[dict[str, Any]] = field(default_factory=list)
    note: str = ""  # the protocol's ``show_tag`` value, shown with the context
    reference_as: str = ""  # the system whose response is the context's reference, shown once as that system's


def build_units(
    protocol: Protocol, dialogues: dict[str, Dialogue], candidates: Sequence[Candidate], kind: str = "main"
) -> list[Unit]:
    """Group candidates by context (turn level) or take whole dialogues (dialogue level)."""
    prefix = "" if kind == "main" else f"{kind}:"
    units: dict[str, Unit] = {}
    if protocol.level == "dialogue":
        wanted = list(dict.fromkeys(c.dialogue_id for c in candidates)) if candidates else list(dialogues)
        for did in wanted:
            d = _dialogue(dialogues, did)
            if not d.turns:  # the annotator was shown nothing, and asked to rate it
                raise InputError(f'dialogue "{did}" has no turns: a dialogue-level study rates whole dialogues',
                                 field="turns")  # fmt: skip
            turns = [t.model_dump() for t in d.turns]
            u = Unit(prefix + did, kind, d, turns)
            u.items.append({"id": prefix + did, "system": "", "text": ""})
            units[u.id] = u
        return list(units.values())
    references: dict[str, Counter[str]] = defaultdict(Counter)  # unit -> its candidates' first references, counted
    after: dict[str, int] = {}  # unit -> where its reference goes: after its first candidate that has one
    for c in candidates:
        d = _dialogue(dialogues, c.dialogue_id)
        uid = prefix + c.context_id
        note = _shown_tag(protocol, c)
        if uid not in units:
            units[uid] = Unit(uid, kind, d, [t.model_dump() for t in d.context(c.turn_index)], note=note)
        elif units[uid].note != note:
            raise InputError(
                f'candidates of context "{c.context_id}" ask for different {protocol.show_tag}s '
                f'("{units[uid].note}" and "{note}"); one context is shown with one',
                field=f"tags.{protocol.show_tag}",
            )
        units[uid].items.append({"id": prefix + c.id, "system": c.system, "text": c.text})
        if protocol.include_ground_truth and c.references:
            references[uid][c.references[0]] += 1
            after.setdefault(uid, len(units[uid].items))
    for uid, counts in references.items():
        _add_reference(units[uid], counts.most_common(1)[0][0], after[uid])
    return list(units.values())


def _add_reference(unit: Unit, text: str, at: int) -> None:
    """Show the context's reference as a candidate at ``at``, unless a candidate of the unit already says it.

    The reference is the one most of the unit's candidates give (USR's give "Original Ground Truth"'s response,
    whose own reference is "New Human Generated"'s). Where a candidate says it (USR's "Original Ground Truth"), it
    is shown once, as that system's, and the unit records which system that is.
    """
    if twin := next((item["system"] for item in unit.items if item["text"] == text), ""):
        unit.reference_as = twin
    else:
        unit.items.insert(at, {"id": f"{unit.id}:{GROUND_TRUTH}", "system": GROUND_TRUTH, "text": text})


def repeated_texts(units: Sequence[Unit]) -> list[str]:
    """Name, for each unit that shows one text as two or more of its candidates, the candidates' systems.

    Example:
        >>> u = Unit("c1", "main", Dialogue(id="d", turns=[]), [{"speaker": "A", "text": "Tea?"}],
        ...          [{"id": "c1:a", "system": "a", "text": "Ok."}, {"id": "c1:b", "system": "b", "text": "Ok."}])
        >>> repeated_texts([u])
        ['the context ending "Tea?": a and b']
    """
    out = []
    for unit in units:
        by_text: dict[str, list[str]] = defaultdict(list)
        for item in unit.items:
            if item["text"]:  # a dialogue-level unit's one item has none
                by_text[item["text"]].append(item["system"])
        if twins := [" and ".join(systems) for systems in by_text.values() if len(systems) > 1]:
            last = one_line(unit.context[-1]["text"], 40) if unit.context else ""
            out.append(f'the context ending "{last}": ' + "; ".join(twins))
    return out


def _shown_tag(protocol: Protocol, c: Candidate) -> str:
    """Return the candidate's value of the protocol's ``show_tag`` ("" when the protocol shows none)."""
    if not protocol.show_tag:
        return ""
    value = c.tags.get(protocol.show_tag, "")
    if not value:
        raise InputError(
            f'protocol "{protocol.name}" shows each context with its "{protocol.show_tag}" tag, '
            f'but candidate "{c.id}" has none',
            field=f"tags.{protocol.show_tag}",
        )
    return value


def _dialogue(dialogues: dict[str, Dialogue], did: str) -> Dialogue:
    if did not in dialogues:
        raise InputError(f"dialogue {did!r} is not in the dialogues file", field="dialogue_id")
    return dialogues[did]


def assign(units: Sequence[str], annotators: Sequence[str], per_item: int, seed: int) -> dict[str, list[str]]:
    """Give each unit to ``per_item`` distinct least-loaded annotators; return annotator -> units.

    Example:
        >>> a = assign([f"u{i}" for i in range(5)], ["x", "y", "z"], per_item=2, seed=0)
        >>> sorted(len(v) for v in a.values())
        [3, 3, 4]
    """
    if per_item > len(annotators):
        raise InputError(f"per_item={per_item} needs at least that many annotators, got {len(annotators)}")
    rng = random.Random(seed)
    load: dict[str, list[str]] = {a: [] for a in annotators}
    for unit in units:  # nsmallest is sorted(...)[:per_item], drawing the same numbers: 2.4x at 1,000 annotators
        for a in heapq.nsmallest(per_item, annotators, key=lambda a: (len(load[a]), rng.random())):
            load[a].append(unit)
    return load


def check_annotator_count(n: int) -> None:
    """Refuse fewer than one annotator or more than :data:`MAX_ANNOTATORS`, before their ids are made.

    Example:
        >>> check_annotator_count(10**20)
        Traceback (most recent call last):
        ...
        dialeval.errors.InputError: field "--annotators": must be at most 10,000, got 100,000,000,000,000,000,000
    """
    if n < 1:
        raise InputError(f"needs at least 1 annotator, got {n}", field="--annotators")
    check_at_most(n, MAX_ANNOTATORS, "--annotators")


def check_config(
    config: StudyConfig, references: Sequence[str] = (), attention: bool | None = None,
    qualification: bool | None = None,
) -> None:  # fmt: skip
    """Refuse a layout that cannot work, naming the option: every count in range, names distinct.

    ``attention``: whether attention-check items are given (None: not known yet; see :func:`check_attention`).
    ``qualification``: whether a qualification batch is given (None: not known yet); a fixed threshold needs one.

    Raises:
        InputError: No annotators or more than :data:`MAX_ANNOTATORS`, ``per_item`` outside
            1..annotators, ``batch_size`` below 1, ``attention_per_batch`` below 0, a negative seed,
            a threshold that is not a number in [-1, 1] or that no qualification batch uses, a reference
            annotator named like a worker or the admin, or attention checks asked for without items (or items
            without a number per batch).

    Example:
        >>> check_config(StudyConfig("p", 1, ("a01",), 1, 20, 0, qualification_threshold=0.4), qualification=False)
        Traceback (most recent call last):
        ...
        dialeval.errors.InputError: field "--threshold": a qualification threshold (0.4) needs a qualification \
batch to hold workers to: give --qualification (and --qualification-ratings), or leave --threshold out
    """
    n = len(config.annotators)
    check_annotator_count(n)
    if len(set(config.annotators)) != n:
        raise InputError("annotator names must be distinct", field="--annotators")
    if not 1 <= config.per_item <= n:
        raise InputError(f"must be between 1 and the number of annotators ({n}), got {config.per_item}",
                         field="--per-item")  # fmt: skip
    if config.batch_size < 1:
        raise InputError(f"must be at least 1, got {config.batch_size}", field="--batch-size")
    if config.attention_per_batch < 0:
        raise InputError(f"must be 0 or more, got {config.attention_per_batch}", field="--attention-per-batch")
    check_seed(config.seed)
    if attention is not None:
        check_attention(config, attention)
    t = config.qualification_threshold
    if t is not None and not (math.isfinite(t) and -1.0 <= t <= 1.0):
        raise InputError(f"must be a Fleiss' kappa between -1 and 1, got {t}", field="--threshold")
    if t is not None and qualification is False:  # the study was created with it, and it held nobody to anything
        raise InputError(f"a qualification threshold ({t}) needs a qualification batch to hold workers to: give "
                         "--qualification (and --qualification-ratings), or leave --threshold out",
                         field="--threshold")  # fmt: skip
    taken = {*config.annotators, ADMIN}
    for r in references:
        if r in taken:
            what = "the admin" if r == ADMIN else "a worker"
            raise InputError(f'reference annotator "{r}" has the name of {what} (workers: '
                             f"{', '.join(config.annotators)}; admin: {ADMIN}); rename the reference",
                             field="annotator")  # fmt: skip


def check_attention(config: StudyConfig, given: bool) -> None:
    """Refuse attention checks per batch without their items, and items that no batch would show.

    Example:
        >>> config = StudyConfig("p", 1, annotators=("a01",), per_item=1, batch_size=1, seed=0)
        >>> check_attention(config, given=True)
        Traceback (most recent call last):
        ...
        dialeval.errors.InputError: field "--attention": attention-check items are given, but --attention-per-batch \
is 0, so no annotator would see one; give --attention-per-batch N
    """
    if config.attention_per_batch and not given:
        raise InputError(f"{config.attention_per_batch} attention checks per batch need their items: give --attention "
                         "(and --attention-ratings)", field="--attention-per-batch")  # fmt: skip
    if given and not config.attention_per_batch:
        raise InputError("attention-check items are given, but --attention-per-batch is 0, so no annotator would see "
                         "one; give --attention-per-batch N", field="--attention")  # fmt: skip


def _check_threshold(config: StudyConfig, gold: Sequence[Rating]) -> None:
    """Refuse the default threshold (the references' own kappa) with fewer than two reference annotators."""
    refs = {r.annotator for r in gold}
    if config.qualification_threshold is None and len(refs) < 2:
        raise InputError(
            f"the default qualification threshold is the reference annotators' own Fleiss' kappa, which needs "
            f"two or more of them (found {len(refs)}); add references or give a fixed --threshold",
            field="--threshold",
        )


@dataclass
class Plan:
    """Every unit of a study and who sees which, in which order (annotator -> ``(unit, batch)``)."""

    main: list[Unit]
    batches: list[list[Unit]]
    quals: list[Unit]
    checks: list[Unit]
    order: dict[str, list[tuple[Unit, int]]]
    short_of_checks: int = 0  # (annotator, batch) pairs given fewer attention checks than asked: too few checks

    def units(self) -> dict[str, Unit]:
        """Return unit id -> unit, over main, qualification and attention units."""
        return {u.id: u for u in [*self.main, *self.quals, *self.checks]}


def plan_study(
    protocol: Protocol,
    dialogues: dict[str, Dialogue],
    candidates: Sequence[Candidate],
    config: StudyConfig,
    qualification: Sequence[Candidate] = (),
    attention: Sequence[Candidate] = (),
) -> Plan:
    """Lay out units, batches and each annotator's seeded order (qualification first, checks mixed in)."""
    rng = random.Random(config.seed)
    main = build_units(protocol, dialogues, candidates)
    if not main:
        if protocol.level == "dialogue":
            raise InputError("nothing to annotate: no dialogues")
        raise InputError(f'nothing to annotate: protocol "{protocol.name}" rates responses, and no candidates '
                         "were given (--candidates)")  # fmt: skip
    rng.shuffle(main)
    batches = [main[i : i + config.batch_size] for i in range(0, len(main), config.batch_size)]
    quals = build_units(protocol, dialogues, qualification, "qualification") if qualification else []
    checks = build_units(protocol, dialogues, attention, "attention") if attention else []
    check_attention(config, bool(checks))
    annotators = list(config.annotators)
    order: dict[str, list[tuple[Unit, int]]] = defaultdict(list)
    unused_checks = {a: rng.sample(checks, len(checks)) for a in annotators}  # never twice to one annotator
    for a in annotators:
        order[a].extend((u, 0) for u in rng.sample(quals, len(quals)))
    holders: dict[str, list[str]] = defaultdict(list)  # unit -> its annotators
    for a, ids in assign([u.id for u in main], annotators, config.per_item, rng.randrange(2**31)).items():
        for unit_id in ids:
            holders[unit_id].append(a)
    place = {a: i for i, a in enumerate(annotators)}
    short = 0
    for b, batch in enumerate(batches, start=1):
        in_batch: dict[str, list[Unit]] = defaultdict(list)  # annotator -> their units of the batch, in its order
        for u in batch:
            for a in holders[u.id]:
                in_batch[a].append(u)
        for a in sorted(in_batch, key=place.__getitem__):  # in the order of --annotators, as the seeded draws go
            mine, given = in_batch[a], min(config.attention_per_batch, len(unused_checks[a]))
            mine += [unused_checks[a].pop() for _ in range(given)]
            short += given < config.attention_per_batch
            rng.shuffle(mine)
            order[a].extend((u, b) for u in mine)
    return Plan(main, batches, quals, checks, order, short)


def create_study(
    study_dir: str | Path,
    protocol: Protocol,
    dialogues: dict[str, Dialogue],
    candidates: Sequence[Candidate],
    config: StudyConfig,
    *,
    qualification: tuple[Sequence[Candidate], Sequence[Rating]] | None = None,
    attention: tuple[Sequence[Candidate], Sequence[Rating]] | None = None,
    db_url: str | None = None,
) -> dict[str, Any]:
    """Write the study database and ``access.json`` (the per-annotator and admin tokens).

    Everything is checked before anything is written (see :func:`check_config`); a failure leaves nothing.

    Returns:
        A summary with the counts of units, items, batches and assignments, of annotators given no main
        unit (more annotators than units times ``per_item``), and of units showing one text as two of their
        candidates (two systems that said the same; the first such unit named).
    """
    gold = list(qualification[1]) if qualification else []
    check_config(config, sorted({r.annotator for r in gold}), qualification=qualification is not None)
    if qualification:
        _check_threshold(config, gold)
    folder = Path(study_dir)
    url = db_url or store.db_url(folder)
    db_file = store.sqlite_file(url)
    if (folder / "access.json").exists():  # a study whose database --db put elsewhere: its tokens would be lost
        raise InputError("a study already exists here; choose another folder", path=folder / "access.json")
    if db_file is not None and db_file.exists():
        if db_url is not None:
            raise InputError("already exists; give --db a file that does not exist yet", path=db_file, field="--db")
        raise InputError("a study already exists here; choose another folder", path=db_file)
    plan = plan_study(protocol, dialogues, candidates, config, qualification[0] if qualification else (),
                      attention[0] if attention else ())  # fmt: skip
    gold_rows = _gold_rows(protocol, plan.units(), qualification, "qualification")
    gold_rows += _gold_rows(protocol, plan.units(), attention, "attention")
    folder.mkdir(parents=True, exist_ok=True)
    tokens = {a: secrets.token_urlsafe(24) for a in config.annotators}
    admin_token = secrets.token_urlsafe(32)
    access: dict[str, Any] = {"admin": admin_token, "annotators": tokens}
    if db_url:  # the default, the folder's own study.db, is not written: the folder can be moved or copied
        access["db_url"] = db_url
    with store.all_or_nothing(url) as engine:
        with engine.begin() as conn:
            store.metadata.create_all(conn)
            _write_meta(conn, protocol, config, plan)
            _write_people(conn, tokens, admin_token, sorted({r.annotator for r in gold}), qualified=not plan.quals)
            _write_units(conn, plan)
            if gold_rows:
                conn.execute(store.gold.insert(), gold_rows)
        # the tokens are written before the database appears: a study.db is never there without its access.json
        with atomic_write(folder / "access.json", private=True) as handle:
            json.dump(access, handle, indent=2)
    return {
        "units": len(plan.main),
        "items": sum(len(u.items) for u in plan.main),
        "batches": len(plan.batches),
        "annotators": len(config.annotators),
        "assignments": sum(len(v) for v in plan.order.values()),
        "qualification_units": len(plan.quals),
        "attention_units": len(plan.checks),
        "annotators_without_main_units": sum(not any(b for _, b in plan.order.get(a, ())) for a in config.annotators),
        "units_with_repeated_text": len(repeated := repeated_texts(plan.main)),
        "first_repeated_text": repeated[0] if repeated else "",
        "batches_short_of_attention_checks": plan.short_of_checks,
    }


def read_access(study_dir: str | Path) -> tuple[dict[str, Any], str]:
    """Return a study folder's ``access.json`` (its tokens) and its database's URL, checked before any work.

    The database is the folder's own ``study.db`` unless ``access.json`` names another (``study
    create --db``), so a study folder can be moved or copied: a copy reads and writes its own
    database, never the original's.

    Raises:
        InputError: No ``access.json`` (not a study folder); one that is not a study's (not JSON,
            no tokens); or a SQLite database that is not there (which would otherwise be created
            empty) or is not a study's (damaged, emptied, another program's).
    """
    path = Path(study_dir) / "access.json"
    if Path(study_dir).is_file():  # it said "t.csv/access.json: not found"
        raise InputError("is a file, not a study folder (`dialeval study create` makes one)", path=study_dir)
    if not path.is_file():
        raise InputError("not found: not a study folder (`dialeval study create` makes one)", path=path)
    try:
        access = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise InputError(f"not valid JSON ({json_problem(exc)})", path=path, line=exc.lineno) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot be read: {exc}", path=path) from None
    if not isinstance(access, dict):
        raise InputError("not a study's access file: expected a JSON object", path=path)
    for key, kind in (("admin", str), ("annotators", dict), ("db_url", str)):
        if (key in access or key != "db_url") and not isinstance(access.get(key), kind):
            raise InputError(f"not a study's access file: expected {kind.__name__}", path=path, field=key)
    url = str(access.get("db_url") or store.db_url(study_dir))
    db = store.sqlite_file(url)
    if db is not None and not db.is_file():
        raise InputError(f"the study's database {db} is not there", path=path)
    if db is not None and (why := store.not_a_study(db)):  # it was a traceback in the first query
        raise InputError(why, path=db)
    return access, url


def _write_meta(conn: sa.Connection, protocol: Protocol, config: StudyConfig, plan: Plan) -> None:
    conn.execute(
        store.study_meta.insert(),
        [
            {"key": "config", "value": asdict(config)},
            {"key": "protocol", "value": protocol.model_dump()},
            # keys the opaque item and unit ids annotators see (see dialeval.human.app.public_id)
            {"key": "blind_key", "value": secrets.token_hex(16)},
            # the protocol's show_tag value per unit (e.g. the requested style)
            {"key": "unit_notes", "value": {u.id: u.note for u in plan.units().values() if u.note}},
            # the units whose reference is a system's response, shown once as that system's (the report says so)
            {"key": "reference_as", "value": {u.id: u.reference_as for u in plan.units().values() if u.reference_as}},
        ],
    )


def _write_people(
    conn: sa.Connection, tokens: dict[str, str], admin_token: str, references: list[str], *, qualified: bool
) -> None:
    """Insert the workers (qualified at once when there is no qualification batch), the admin and the references."""
    rows = [{"id": a, "token_sha256": store.token_hash(t), "role": "annotator", "qualified": qualified or None}
            for a, t in tokens.items()]  # fmt: skip
    rows.append({"id": ADMIN, "token_sha256": store.token_hash(admin_token), "role": "admin", "qualified": None})
    # references never log in: their token is a random one nobody knows
    rows += [{"id": r, "token_sha256": store.token_hash(secrets.token_urlsafe(32)), "role": "reference",
              "qualified": True} for r in references]  # fmt: skip
    conn.execute(store.annotators.insert(), rows)


def _write_units(conn: sa.Connection, plan: Plan) -> None:
    unit_batch = {u.id: b for b, batch in enumerate(plan.batches, start=1) for u in batch}
    item_rows = [
        {"id": it["id"], "unit_id": u.id, "kind": u.kind, "batch": unit_batch.get(u.id, 0), "position": pos,
         "system": it["system"], "dialogue_id": u.dialogue.id, "context": u.context,
         "knowledge": list(u.dialogue.knowledge), "text": it["text"]}
        for u in plan.units().values()
        for pos, it in enumerate(u.items)
    ]  # fmt: skip
    conn.execute(store.items.insert(), item_rows)
    conn.execute(
        store.assignments.insert(),
        [
            {"annotator": a, "unit_id": u.id, "batch": b, "kind": u.kind, "position": pos}
            for a, units in plan.order.items()
            for pos, (u, b) in enumerate(units)
        ],
    )


def _gold_rows(
    protocol: Protocol,
    units: dict[str, Unit],
    source: tuple[Sequence[Candidate], Sequence[Rating]] | None,
    kind: str,
) -> list[dict[str, Any]]:
    if not source:
        return []
    known = {it["id"] for u in units.values() for it in u.items}
    rows = []
    for r in source[1]:
        item = f"{kind}:{r.item_id}"
        if item not in known:
            raise InputError(f"{kind} rating names unknown item {r.item_id!r}", field="item_id")
        value = gold_answer(protocol, r, kind)
        rows.append({"annotator": r.annotator, "item_id": item, "criterion": r.dimension, "value": value})
    return rows


def gold_answer(protocol: Protocol, rating: Rating, kind: str) -> str:
    """Return a qualification or attention rating's answer as the study stores it; refuse one the protocol lacks.

    Raises:
        InputError: The protocol has no such dimension, or the value is not one of its answers (each named,
            with what the protocol has), or the rating is "I don't know" and the criterion has no such option.

    An "I don't know" rating (``dont_know``) is the criterion's own "I don't know" option, whatever its value.

    Example:
        >>> from dialeval.human.protocol import load_protocol
        >>> p = load_protocol("mousavi-turn")
        >>> gold_answer(p, Rating(item_id="i", dimension="Listening", annotator="r", value="positive"), "attention")
        'positive'
        >>> gold_answer(p, Rating(item_id="i", dimension="Listen", annotator="r", value="positive"), "attention")
        Traceback (most recent call last):
        ...
        dialeval.errors.InputError: field "dimension": protocol mousavi-turn has no dimension "Listen" (did you ...
    """
    names = [c.name for c in protocol.criteria]
    if rating.dimension not in names:  # it said "attention rating has unknown dimension 'X'", naming neither
        close = closest(rating.dimension, names)
        hint = f' (did you mean "{close}"?)' if close else ""
        raise InputError(f'protocol {protocol.name} has no dimension "{rating.dimension}"{hint}; its dimensions: '
                         f"{', '.join(names)}", field="dimension")  # fmt: skip
    answer = protocol.criterion(rating.dimension).answer
    if rating.dont_know:  # the protocol's own "I don't know" option: it was the literal "dont_know", whatever its value
        if (unsure := next((o.value for o in answer.options if o.dont_know), None)) is None:
            raise InputError(f"{kind} rating is \"I don't know\" (dont_know: true), but {rating.dimension} has no "
                             "\"I don't know\" answer", field="dont_know")  # fmt: skip
        return unsure
    value = answer.canonical(_as_answer(rating.value))
    if value is None:
        allowed = ", ".join(o.value for o in answer.options) if answer.type == "choice" else answer.scale
        raise InputError(f"{kind} rating value {rating.value!r} is not an answer of {rating.dimension} ({allowed})",
                         field="value")  # fmt: skip
    return value


def _as_answer(value: float | str | None) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)
