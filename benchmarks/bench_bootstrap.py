"""Cluster bootstrap: vectorised (dialeval.meta.bootstrap) vs a per-resample loop calling scipy.stats.

Data: 1,700 contexts x 6 systems = 10,200 items from a seeded generator; the metric is
continuous, the human score is the mean of three 1-5 ratings (many ties, as in real data).
1,000 resamples of contexts. Both sides use the same resample counts; the scipy loop is
timed on the first ``--loop`` resamples and scaled to 1,000 (printed as such). Each
timing is repeated ``--repeats`` times after an untimed warm-up run and the median is reported. The script also checks
that both sides give the same correlations on the looped resamples.

``--human continuous`` makes the human score continuous too (every value distinct, as a reward model's or a
mean over many raters would be): the case whose rank layout held a levels x levels matrix (Kendall: 97 s
and 7 GB for 8,000 items and 200 resamples; 16,000 ran out of memory) before the Fenwick layout.

Run: .venv/bin/python benchmarks/bench_bootstrap.py [--loop 100] [--repeats 3] [--human continuous]
"""

from __future__ import annotations

import argparse

import numpy as np
from common import POSITIVE  # benchmarks/ is on sys.path
from scipy import stats
from timing import median_time  # benchmarks/ is on sys.path

from dialeval.meta.bootstrap import draw_counts, weighted_correlation

SCIPY = {"pearson": stats.pearsonr, "spearman": stats.spearmanr, "kendall": stats.kendalltau}
# scipy.stats.pearsonr costs ~15 ms per call on these 10,200 values (it works in extended precision), far
# more than the arithmetic; a second Pearson baseline loops np.corrcoef so the ratio is not flattered.
BASELINES = {
    **{m: lambda x, y, f=f: f(x, y).statistic for m, f in SCIPY.items()},
    "pearson (np.corrcoef loop)": lambda x, y: np.corrcoef(x, y)[0, 1],
}


def make_data(n_contexts: int = 1700, n_systems: int = 6, seed: int = 0, human_kind: str = "ratings"):
    rng = np.random.default_rng(seed)
    quality = rng.normal(size=(n_contexts, n_systems)) + rng.normal(size=n_systems)
    metric = quality + rng.normal(scale=1.5, size=quality.shape)
    ratings = np.clip(np.round(3 + quality[..., None] + rng.normal(size=(*quality.shape, 3))), 1, 5)
    human = ratings.mean(axis=-1) if human_kind == "ratings" else quality + rng.normal(size=quality.shape)
    codes = np.repeat(np.arange(n_contexts), n_systems)
    return metric.ravel(), human.ravel(), codes, n_systems


def scipy_loop(x, y, counts, size, baseline):
    fn = BASELINES[baseline]
    offsets = np.arange(size)
    out = np.empty(len(counts))
    for b, row in enumerate(counts):
        drawn = np.repeat(np.arange(len(row)), row)
        rows = (drawn[:, None] * size + offsets).ravel()  # clusters are contiguous blocks of `size` rows
        out[b] = fn(x[rows], y[rows])
    return out


def parser() -> argparse.ArgumentParser:
    """Return the options of this benchmark."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n-boot", type=POSITIVE, default=1000)
    parser.add_argument("--loop", type=POSITIVE, default=100, help="resamples the scipy loop runs (scaled to --n-boot)")
    parser.add_argument("--repeats", type=POSITIVE, default=3)
    parser.add_argument("--human", choices=("ratings", "continuous"), default="ratings",
                        help="the mean of three 1-5 ratings (13 values), or a continuous score")  # fmt: skip
    return parser


def main() -> None:
    options = parser()
    args = options.parse_args()
    if args.loop > args.n_boot:  # the loop would run --n-boot resamples and be scaled as if it ran --loop
        options.error(f"argument --loop: at most --n-boot ({args.n_boot}), got {args.loop}")
    x, y, codes, size = make_data(human_kind=args.human)
    counts = draw_counts(int(codes.max()) + 1, args.n_boot, seed=0)
    print(f"{len(x)} items, {codes.max() + 1} contexts, {len(np.unique(y))} human values, {args.n_boot} resamples; "
          f"scipy loop on {args.loop}, scaled")  # fmt: skip
    print(f"{'kind':<27} {'vectorised s':>13} {'loop s':>8} {'ratio':>7} {'max |diff|':>11}")
    total_vec = total_loop = 0.0
    for baseline in BASELINES:
        method = baseline.split()[0]
        vec_s, vec = median_time(lambda m=method: weighted_correlation(x, y, codes, counts, m), args.repeats)
        loop_s, loop = median_time(lambda b=baseline: scipy_loop(x, y, counts[: args.loop], size, b), args.repeats)
        loop_s *= args.n_boot / args.loop
        if baseline in SCIPY:
            total_vec, total_loop = total_vec + vec_s, total_loop + loop_s
        diff = float(np.max(np.abs(vec[: args.loop] - loop)))
        print(f"{baseline:<27} {vec_s:>13.3f} {loop_s:>8.3f} {loop_s / vec_s:>6.1f}x {diff:>11.1e}")
    print(f"{'scipy, all three':<27} {total_vec:>13.3f} {total_loop:>8.3f} {total_loop / total_vec:>6.1f}x")


if __name__ == "__main__":
    main()
