"""Measurements for docs/quality.md: the stress table on USR-TC and the dialogue level on DSTC9.

``python -m dialeval.quality.measure stress --contexts N`` perturbs the first N USR-TC
contexts' responses exactly as ``dialeval stress`` does (:func:`dialeval.stress.run.perturb_items`,
seeded per candidate), computes the quality features of the originals and the copies once
(cached in ``<cache>/quality-stress.json``, keyed by the heads and the LM), applies the
shipped ensemble, and prints, per perturbation and output, the share of pairs in which
the original scores higher (ties half) with :func:`dialeval.stress.run.compare`.

``python -m dialeval.quality.measure dialogue --per-system K`` scores every system turn of
the first K DSTC9 interactive dialogues of each of the 11 bots (cached in
``<cache>/quality-dstc9.json``) and correlates, at dialogue and system level, the human
"overall" rating with the plain mean of the turn ``quality`` and with the dialogue-level
features of :func:`dialogue_features` (fixed before the measurement; nothing is fitted on DSTC9).

Both run as ``dialeval quality measure stress|dialogue`` too, where an error is one line.
``--card PATH`` also writes the rows into a bundle's ``quality/card.json`` under
``measured.stress`` or ``measured.dialogue`` (:func:`record`), with the command, the date, the
version and the machine, so that the shipped card carries these figures beside its
leave-one-benchmark-out ones. The card is read before the measurement, so a bad path fails at once.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from dialeval.schema import Candidate
from dialeval.words import figure, with_ci

#: The perturbations of the issue's stress target.
STRESS = ("other-context", "negation", "repetition", "truncation")


def stress_table(
    contexts: int, perturbations: Sequence[str] = STRESS, seed: int = 0, views: str | None = None,
    ensemble: str | None = None,
) -> list[dict[str, Any]]:
    """Return one row per (perturbation, output): n pairs, fraction original better, mean drop and CI, AUROC.

    Besides the outputs, ``quality`` again on the pairs whose original people rated below the scale's
    midpoint and on the rest (:func:`original_ratings`): a perturbed copy of a reply people already
    rated poor need not be worse.

    ``views``: also the view logits of this trained cross-encoder folder (rows ``view_*``);
    ``ensemble``: this ``ensemble.json`` instead of the shipped one (a candidate's).
    """
    from dialeval.data.catalog import load_benchmark
    from dialeval.metrics.quality import QualityMetric, combine
    from dialeval.stress.run import compare, perturb_items

    bench = load_benchmark("usr-tc").head(contexts)
    got = perturb_items(bench.candidates, bench.dialogues, list(perturbations), seed)
    dialogues = {**bench.dialogues, **got.dialogues}
    cands = list(bench.candidates) + [c for name in perturbations for c in got.copies[name]]
    metric = QualityMetric(device="cpu", views=views or "", ensemble=ensemble or "",
                           large_heads=_large_beside(ensemble))
    known = cached_features(metric, cands, dialogues, "quality-stress-views.json" if views else "quality-stress.json",
                            views=views)  # fmt: skip
    _, _, ens, names = metric.loaded()
    rows = []
    by_id = {c.id: c for c in bench.candidates}
    human, middle = original_ratings(bench)
    for name in perturbations:
        copies = got.copies[name]
        orig = [known[c.id.rsplit("~", 1)[0]] for c in copies]
        pert = [known[c.id] for c in copies]
        ctx = [by_id[c.id.rsplit("~", 1)[0]].context_id for c in copies]
        cols: dict[str, tuple[list[Any], list[Any]]] = {
            "quality": (combine(_columns(orig, names), ens, names), combine(_columns(pert, names), ens, names)),
        }
        heads = ["sensible_p", "fluent_p", "large_sensible", "large_fluent"]  # what sub_scores reads
        subs = [metric.sub_scores(_columns(part, heads)) for part in (orig, pert)]
        cols["quality_sensible"] = (subs[0][0], subs[1][0])
        cols["quality_fluent"] = (subs[0][1], subs[1][1])
        if views:
            from dialeval.metrics.quality import VIEW_FEATURES

            for v in VIEW_FEATURES:
                cols[v] = ([r[v] for r in orig], [r[v] for r in pert])
        rated = [human.get(c.id.rsplit("~", 1)[0]) for c in copies]
        for label, side in ((f"rated < {middle:g}", False), (f"rated >= {middle:g}", True)):
            a, b = cols["quality"]
            cols[f"quality, original {label}"] = ([v if r is not None and (r >= middle) == side else None
                                                  for v, r in zip(a, rated, strict=True)], b)  # fmt: skip
        for output, (a, b) in cols.items():
            keep = [i for i in range(len(a)) if a[i] is not None and b[i] is not None]
            res = compare([a[i] for i in keep], [b[i] for i in keep], [ctx[i] for i in keep], seed=seed)
            rows.append({"perturbation": name, "output": output, "n": len(keep), **res})
    return rows


def original_ratings(bench: Any) -> tuple[dict[str, float], float]:
    """Return each item's mean rating on the benchmark's default dimension, and that scale's midpoint.

    Example:
        >>> from dialeval.data.benchmark import Benchmark
        >>> from dialeval.schema import Rating
        >>> r = [Rating(item_id="x", dimension="Overall", annotator=a, value=v, scale="1-5")
        ...      for a, v in (("a", 2), ("b", 3))]
        >>> original_ratings(Benchmark("g", {}, [], r))
        ({'x': 2.5}, 3.0)
    """
    dim = bench.dimension()
    values: dict[str, list[float]] = {}
    for r in bench.ratings:
        if r.dimension == dim and not r.dont_know:
            values.setdefault(r.item_id, []).append(r.value)
    low, high = (float(x) for x in bench.dimensions()[dim].split("-"))
    return {k: sum(v) / len(v) for k, v in values.items()}, (low + high) / 2


def dialogue_features(turns: Sequence[tuple[float, bool]]) -> dict[str, float]:
    """Return the dialogue-level features of one dialogue's system turns ``(quality, repeats an earlier own turn)``.

    * ``quality_mean``: the plain mean of the turn scores (what ``--level dialogue`` reports for ``quality``);
    * ``quality_min``: the worst turn (one bad answer can spoil a conversation);
    * ``not_repeating``: the share of turns that repeat none of the speaker's earlier turns;
    * ``quality_dialogue``: the mean of the metric's ``quality_dialogue`` output (a repeated turn counts 0).

    Example:
        >>> f = dialogue_features([(0.6, False), (0.4, False), (0.2, True)])
        >>> {k: round(v, 3) for k, v in f.items()}
        {'quality_mean': 0.4, 'quality_min': 0.2, 'not_repeating': 0.667, 'quality_dialogue': 0.333}
    """
    q = [v for v, _ in turns]
    n = len(turns)
    return {"quality_mean": sum(q) / n, "quality_min": min(q), "not_repeating": sum(not r for _, r in turns) / n,
            "quality_dialogue": sum(0.0 if r else v for v, r in turns) / n}  # fmt: skip


def dialogue_table(
    per_system: int, n_boot: int = 1000, seed: int = 0, views: str | None = None, ensemble: str | None = None
) -> list[Any]:
    """Return correlation rows (dialogue and system level, Spearman and Pearson) on DSTC9 interactive.

    ``views`` and ``ensemble``: a candidate's cross-encoder folder and ``ensemble.json`` (None: the shipped ones).

    The first ``per_system`` dialogues of each bot (in file order) are scored; each
    dialogue-level feature is given to every system turn of its dialogue, so the
    dialogue mean that :func:`dialeval.meta.correlate.correlation_table` takes is the feature.
    """
    from dialeval.data.catalog import load_benchmark
    from dialeval.meta.correlate import correlation_table
    from dialeval.metrics.base import build_inputs
    from dialeval.metrics.quality import repeats_own_turn
    from dialeval.schema import Score

    bench = load_benchmark("dstc9")
    order: dict[str, list[str]] = {}
    for c in bench.candidates:
        ids = order.setdefault(c.system, [])
        if c.dialogue_id not in ids:
            ids.append(c.dialogue_id)
    keep = {d for ids in order.values() for d in ids[:per_system]}
    cands = [c for c in bench.candidates if c.dialogue_id in keep]
    quality = _turn_quality(cands, bench.dialogues, "quality-dstc9.json", views, ensemble)
    repeated = {c.id: repeats_own_turn(i) for c, i in zip(cands, build_inputs(cands, bench.dialogues), strict=True)}
    by_dialogue: dict[str, list[Candidate]] = {}
    for c in cands:
        by_dialogue.setdefault(c.dialogue_id, []).append(c)
    scores = []
    for did, turns in by_dialogue.items():
        feats = dialogue_features([(quality[c.id], repeated[c.id]) for c in turns])
        for c in turns:
            for name, value in {"quality": quality[c.id], **feats}.items():
                scores.append(Score(item_id=c.id, metric=name, value=value, dialogue_id=did,
                                    context_id=c.context_id, system=c.system))  # fmt: skip
    ratings = [r for r in bench.ratings if r.item_id in keep]
    return correlation_table(scores, ratings, dimension="human (overall)", levels=("dialogue", "system"),
                             methods=("spearman", "pearson"), n_boot=n_boot, seed=seed)  # fmt: skip


def cached_features(
    metric: Any, cands: Sequence[Candidate], dialogues: Any, cache_name: str, views: str | None = None
) -> dict[str, Any]:
    """Return ``metric.features`` of every candidate by id, through ``<cache>/<cache_name>``.

    Keyed by the heads and the LM, and by the files of ``views`` (a cross-encoder folder) when given.
    """
    import hashlib

    from dialeval.metrics.base import build_inputs
    from dialeval.paths import cache_dir
    from dialeval.quality.ensemble import _load_cache, _save_cache

    path = cache_dir() / cache_name
    key = metric.features_key()
    if views:
        files = sorted(Path(views).glob("*"))
        key += ":" + hashlib.sha256(b"".join(f.read_bytes() for f in files)).hexdigest()[:16]
    known = _load_cache(path, key)
    todo = [c for c in cands if c.id not in known]
    for start in range(0, len(todo), metric.batch_size):
        part = todo[start : start + metric.batch_size]
        feats = metric.features(build_inputs(part, dialogues), views=bool(views) or None)
        for n, c in enumerate(part):
            known[c.id] = {k: v[n] for k, v in feats.items()}
        _save_cache(path, key, known)
        print(f"features {start + len(part)}/{len(todo)}", file=sys.stderr, flush=True)
    return known


def _turn_quality(cands: Sequence[Candidate], dialogues: Any, cache_name: str, views: str | None = None,
                  ensemble: str | None = None) -> dict[str, float]:  # fmt: skip
    """Return the ``quality`` of every candidate, its features cached by the heads', views' and LM's key."""
    from dialeval.metrics.quality import QualityMetric, combine

    metric = QualityMetric(device="cpu", views=views or "", ensemble=ensemble or "",
                           large_heads=_large_beside(ensemble))
    known = cached_features(metric, cands, dialogues, cache_name)
    _, _, ens, names = metric.loaded()
    rows = [known[c.id] for c in cands]
    return dict(zip([c.id for c in cands], combine(_columns(rows, names), ens, names), strict=True))


def record(card: Path, what: str, rows: Sequence[dict[str, Any]], command: str) -> None:
    """Write ``rows`` into ``card`` under ``measured.<what>``, with how they were measured; keep the rest.

    A NaN in a row is written as null (JSON has no NaN). The card is replaced atomically: on a
    failure it is left as it was.

    Raises:
        InputError: ``card`` cannot be read or is not a JSON object (naming the file and the line).

    Example:
        >>> import tempfile
        >>> card = Path(tempfile.mkdtemp()) / "card.json"
        >>> _ = card.write_text('{"model": "ridge"}')
        >>> record(card, "stress", [{"perturbation": "negation", "fraction": 0.9}], "measure stress")
        >>> saved = json.loads(card.read_text())
        >>> saved["model"], saved["measured"]["stress"]["rows"], saved["measured"]["stress"]["command"]
        ('ridge', [{'perturbation': 'negation', 'fraction': 0.9}], 'measure stress')
    """
    import datetime

    from dialeval import __version__
    from dialeval.atomic import atomic_write
    from dialeval.quality.recipes import machine

    saved = read_card(card)
    now = datetime.datetime.now(datetime.UTC).replace(microsecond=0).isoformat()
    saved.setdefault("measured", {})[what] = {
        "command": command, "date": now, "dialeval": __version__, "machine": machine(),
        "rows": _nulled(rows),
    }  # fmt: skip
    with atomic_write(card) as f:
        f.write(json.dumps(saved, indent=1, allow_nan=False) + "\n")


def _nulled(rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Return ``rows`` with each NaN as None (JSON has no NaN)."""
    return [{k: None if v != v else v for k, v in r.items()} for r in rows]


def read_card(card: Path) -> dict[str, Any]:
    """Return the JSON object in ``card`` (checked before a measurement, so that a bad path fails at once).

    Raises:
        InputError: ``card`` cannot be read or is not a JSON object (naming the file and the line).
    """
    from dialeval.errors import InputError

    try:
        saved = json.loads(card.read_text(encoding="utf-8"))
    except OSError as exc:
        raise InputError(f"cannot read the card: {exc.strerror}", path=card, field="--card") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        line = exc.lineno if isinstance(exc, json.JSONDecodeError) else None
        raise InputError(f"not a JSON card: {exc}", path=card, line=line, field="--card") from None
    if not isinstance(saved, dict):
        raise InputError(f"not a JSON object but a {type(saved).__name__}", path=card, field="--card")
    return saved


def _large_beside(ensemble: str | None) -> str:
    """Return the ``heads-large`` folder of the bundle an ``ensemble.json`` is in ("" = none: the shipped ones)."""
    folder = Path(ensemble).parent.parent / "heads-large" if ensemble else None
    return str(folder) if folder is not None and folder.is_dir() else ""


def _columns(rows: Sequence[dict[str, Any]], names: Sequence[str]) -> dict[str, list[Any]]:
    return {n: [r.get(n) for r in rows] for n in names}


def main(argv: Sequence[str] | None = None, prog: str = "python -m dialeval.quality.measure") -> None:
    """Command line: ``stress --contexts N`` or ``dialogue --per-system K``; prints Markdown and the JSON rows."""
    from dialeval.quality.argtypes import SEED, count

    ap = argparse.ArgumentParser(prog=prog)
    ap.add_argument("what", choices=["stress", "dialogue"])
    ap.add_argument("--contexts", type=count(1), default=60, help="stress: the first N contexts of USR-TC (default 60)")
    ap.add_argument("--per-system", type=count(1), default=20,
                    help="dialogue: the first K dialogues of each DSTC9 bot (default 20)")
    ap.add_argument("--seed", type=SEED, default=0, help="seed of the perturbations and the bootstrap (default 0)")
    models = ap.add_mutually_exclusive_group()  # --bundle sets the views: a --views beside it was dropped, silently
    models.add_argument("--views", default=None, help="also the views of this trained cross-encoder folder")
    models.add_argument("--bundle", type=Path, default=None,
                        help="a candidate folder as `quality experiment --ship` writes it (its views/ and quality/)")
    ap.add_argument("--card", type=Path, default=None, help="also write the rows into this card.json (measured.WHAT)")
    argv = list(sys.argv[1:] if argv is None else argv)
    args = ap.parse_args(argv)
    command = " ".join([prog, *argv])
    if args.card is not None:
        read_card(args.card)
    ensemble = None
    if args.bundle is not None:
        args.views, ensemble = str(args.bundle / "views"), str(args.bundle / "quality" / "ensemble.json")
    if args.what == "dialogue":
        table = dialogue_table(args.per_system, seed=args.seed, views=args.views, ensemble=ensemble)
        print("| feature | level | method | value [95% CI] | units |")
        print("|---|---|---|---|---|")
        for r in table:
            print(f"| {r.metric} | {r.level} | {r.method} | {with_ci(r.value, r.ci_low, r.ci_high)} | {r.n_groups} |")
        if args.card is not None:
            record(args.card, "dialogue", [r.to_dict() for r in table], command)
        return
    rows = stress_table(args.contexts, seed=args.seed, views=args.views, ensemble=ensemble)
    print("| perturbation | output | pairs | original better | mean drop [95% CI] | AUROC |")
    print("|---|---|---|---|---|---|")
    for r in rows:  # a perturbation with no pair printed "nan" in every cell, and NaN (no JSON) in the line below
        print(f"| {r['perturbation']} | {r['output']} | {r['n']} | {figure(r['fraction'])} | "
              f"{with_ci(r['drop'], r['ci_low'], r['ci_high'])} | {figure(r['auroc'])} |")
    print(json.dumps(_nulled(rows), allow_nan=False))
    if args.card is not None:
        record(args.card, "stress", rows, command)


if __name__ == "__main__":
    from dialeval.quality.cli import module_main

    module_main("dialeval.quality.measure")
