"""LMStyle Table 1 side by side: sample-level Pearson/Kendall of SBERT and NLL with human appropriateness,
and of style ACC with human style strength, per task and overall, on the LMStyle MTurk data.

Usage: .venv/bin/python benchmarks/bench_lmstyle_table1.py

Ours: SBERT = ``sbert_ref`` (all-MiniLM-L6-v2), NLL = ``lm_likelihood`` (100/NLL
with SmolLM2-135M-Instruct; the paper used Bloom-7b1), ACC = ``style_match`` with
VADER / the Heylighen-Dewaele F-score (the paper used SiEBERT / a GYAFC RoBERTa);
``style_strength`` is shown too. Sample level = per-HIT correlation over the four
systems, averaged over HITs (``dialeval.meta.correlate``); Overall = mean of the
four tasks, as in the paper. Scores are cached in ``cache_dir()/lmstyle-scores.sqlite``.
"""

from __future__ import annotations

import argparse
import time

from common import data_file  # benchmarks/ is on sys.path

from dialeval.cache import ScoreCache
from dialeval.data.lmstyle import load_lmstyle_mturk
from dialeval.meta.correlate import correlation_table
from dialeval.metrics.embedding import EmbeddingMetric
from dialeval.metrics.likelihood import LikelihoodMetric
from dialeval.metrics.style import StyleMetric
from dialeval.paths import cache_dir
from dialeval.published import load_table
from dialeval.scoring import score_candidates

TASKS = ("Formal", "Informal", "Positive", "Negative")


def parser() -> argparse.ArgumentParser:
    """Return the options of this benchmark (none: a stray argument, or --help, runs nothing)."""
    return argparse.ArgumentParser(description=__doc__.splitlines()[0])


def main() -> None:
    parser().parse_args()
    bench = load_lmstyle_mturk(data_file("lmstyle/Batch_results_develop.csv"))
    cache = ScoreCache(cache_dir() / "lmstyle-scores.sqlite")
    scores = []
    for metric in (EmbeddingMetric(), LikelihoodMetric()):
        t = time.perf_counter()
        scores += score_candidates(metric, bench.candidates, bench.dialogues, cache=cache)
        print(f"{metric.name}: {len(bench.candidates)} items in {time.perf_counter() - t:.1f} s")
    for task in TASKS:
        subset = [c for c in bench.candidates if c.tags.get("task") == task]
        scores += score_candidates(StyleMetric(target=task.lower()), subset, bench.dialogues, cache=cache)
    ours = {"SBERT": ("sbert_ref", "appropriateness"), "NLL": ("lm_likelihood", "appropriateness"),
            "ACC%": ("style_match", "style"), "strength": ("style_strength", "style")}  # fmt: skip
    table = {}
    for paper_name, (metric, dim) in ours.items():
        rows = correlation_table(
            scores, bench.ratings, dimension=dim, metrics=[metric], levels=("sample",),
            methods=("pearson", "kendall"), n_boot=0, by="task",
        )  # fmt: skip
        for r in rows:
            table[(paper_name, r.method, r.group)] = r.value
    paper = load_table("lmstyle-table1")
    print(f"\n{paper.title}\nours: packaged models (see docstring); paper: {paper.citation}\n")
    for method in ("pearson", "kendall"):
        print(f"{method:8s} {'':9s}" + "".join(f"{t:>16s}" for t in (*TASKS, "Overall")))
        for name in ours:
            vals = [table.get((name, method, f"task={t}")) for t in TASKS]
            got = [100 * v if v is not None else float("nan") for v in vals]
            got.append(sum(got) / len(got))
            pub = paper.rows[method].get(name)
            pubs = pub or [None] * len(got)
            cells = [f"{g:6.1f} | " + ("  -  " if p is None else f"{p:5.1f}") for g, p in zip(got, pubs, strict=True)]
            print(f"{'':8s} {name:9s}" + "".join(f"{c:>16s}" for c in cells))
        print()
    print("cells: ours | paper (x100)")


if __name__ == "__main__":
    main()
