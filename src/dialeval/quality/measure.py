"""Measurements for docs/quality.md: the stress table of the ``quality`` outputs on USR-TC.

``python -m dialeval.quality.measure stress --contexts N`` perturbs the first N USR-TC
contexts' responses exactly as ``dialeval stress`` does (:func:`dialeval.stress.run.perturb_items`,
seeded per candidate), computes the quality features of the originals and the copies once
(cached in ``<cache>/quality-stress.json``, keyed by the heads and the LM), applies the
shipped ensemble, and prints, per perturbation and output, the share of pairs in which
the original scores higher (ties half) with :func:`dialeval.stress.run.compare`.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from typing import Any

#: The perturbations of the issue's stress target.
STRESS = ("other-context", "negation", "repetition", "truncation")


def stress_table(contexts: int, perturbations: Sequence[str] = STRESS, seed: int = 0) -> list[dict[str, Any]]:
    """Return one row per (perturbation, output): n pairs, fraction original better, mean drop and CI, AUROC."""
    from dialeval.data.catalog import load_benchmark
    from dialeval.metrics.base import build_inputs
    from dialeval.metrics.quality import QualityMetric, combine
    from dialeval.paths import cache_dir
    from dialeval.quality.ensemble import _load_cache, _save_cache
    from dialeval.stress.run import compare, perturb_items

    bench = load_benchmark("usr-tc").head(contexts)
    got = perturb_items(bench.candidates, bench.dialogues, list(perturbations), seed)
    dialogues = {**bench.dialogues, **got.dialogues}
    cands = list(bench.candidates) + [c for name in perturbations for c in got.copies[name]]
    metric = QualityMetric(device="cpu")
    path = cache_dir() / "quality-stress.json"
    key = metric.features_key()
    known = _load_cache(path, key)
    todo = [c for c in cands if c.id not in known]
    for start in range(0, len(todo), metric.batch_size):
        part = todo[start : start + metric.batch_size]
        feats = metric.features(build_inputs(part, dialogues))
        for n, c in enumerate(part):
            known[c.id] = {k: v[n] for k, v in feats.items()}
        _save_cache(path, key, known)
    _, _, ens, names = metric.loaded()
    rows = []
    by_id = {c.id: c for c in bench.candidates}
    for name in perturbations:
        copies = got.copies[name]
        orig = [known[c.id.rsplit("~", 1)[0]] for c in copies]
        pert = [known[c.id] for c in copies]
        ctx = [by_id[c.id.rsplit("~", 1)[0]].context_id for c in copies]
        cols: dict[str, tuple[list[Any], list[Any]]] = {
            "quality": (combine(_columns(orig, names), ens, names), combine(_columns(pert, names), ens, names)),
            "quality_sensible": ([r["sensible_p"] for r in orig], [r["sensible_p"] for r in pert]),
            "quality_fluent": ([r["fluent_p"] for r in orig], [r["fluent_p"] for r in pert]),
            "quality_specific": ([r["lm_context_gain"] for r in orig], [r["lm_context_gain"] for r in pert]),
        }
        for output, (a, b) in cols.items():
            keep = [i for i in range(len(a)) if a[i] is not None and b[i] is not None]
            res = compare([a[i] for i in keep], [b[i] for i in keep], [ctx[i] for i in keep], seed=seed)
            rows.append({"perturbation": name, "output": output, "n": len(keep), **res})
    return rows


def _columns(rows: Sequence[dict[str, Any]], names: Sequence[str]) -> dict[str, list[Any]]:
    return {n: [r.get(n) for r in rows] for n in names}


def main(argv: Sequence[str] | None = None) -> None:
    """Command line: ``stress --contexts N``; prints a Markdown table and the JSON rows."""
    ap = argparse.ArgumentParser(prog="python -m dialeval.quality.measure")
    ap.add_argument("what", choices=["stress"])
    ap.add_argument("--contexts", type=int, default=60)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    rows = stress_table(args.contexts, seed=args.seed)
    print("| perturbation | output | pairs | original better | mean drop [95% CI] | AUROC |")
    print("|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['perturbation']} | {r['output']} | {r['n']} | {r['fraction']:.3f} | "
              f"{r['drop']:.3f} [{r['ci_low']:.3f}, {r['ci_high']:.3f}] | {r['auroc']:.3f} |")
    print(json.dumps(rows))


if __name__ == "__main__":
    main()
