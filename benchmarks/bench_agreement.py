"""Agreement bootstrap: draws read in blocks (dialeval.meta.agreement) vs the loop over copied columns it replaced.

Data: a study from a seeded generator, ``--items`` items each rated by 3 of ``--annotators`` (20) on a 1-5 scale (a
true value plus noise), as ``study report`` and ``study import-agreement`` see it. 1,000 resamples of items
(``draw_counts``, as the bootstrap draws them). The loop baseline copies each resample's columns and calls the
point statistic, as ``bootstrap`` did before the thirty-eighth session; it is timed on the first ``--loop``
resamples and scaled to 1,000 (printed as such). Each timing is repeated ``--repeats`` times after an untimed
warm-up run and the median is reported. The script also checks that both sides give the same statistic on the
looped resamples; for Cohen's kappa they differ where the loop counted a pair that shares one item drawn twice
(kappa 0 or none), which the resamples no longer do, so its last column shows that change.

Run: .venv/bin/python benchmarks/bench_agreement.py [--items 300 3000 30000] [--annotators 20] [--loop 50] [--repeats 3]
"""

from __future__ import annotations

import argparse
from functools import partial

import numpy as np
from common import POSITIVE  # benchmarks/ is on sys.path
from timing import median_time  # benchmarks/ is on sys.path

from dialeval.meta.agreement import (
    bootstrap,
    fleiss_kappa,
    fleiss_kappa_over_draws,
    krippendorff_alpha,
    krippendorff_alpha_over_draws,
    mean_pairwise_cohen_kappa,
    mean_pairwise_cohen_kappa_over_draws,
)
from dialeval.meta.bootstrap import draw_counts
from dialeval.quality.argtypes import count

STATISTICS = {
    **{
        f"alpha {lv}": (partial(krippendorff_alpha, level=lv), partial(krippendorff_alpha_over_draws, level=lv))
        for lv in ("nominal", "ordinal", "interval")
    },
    "Fleiss' kappa": (fleiss_kappa, fleiss_kappa_over_draws),
    "Cohen's kappa, mean of pairs": (mean_pairwise_cohen_kappa, mean_pairwise_cohen_kappa_over_draws),
}


def make_study(n_items: int, n_annotators: int = 20, per_item: int = 3, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    truth = rng.integers(1, 6, size=n_items)
    m = np.full((n_annotators, n_items), np.nan)
    for j in range(n_items):
        who = rng.choice(n_annotators, size=per_item, replace=False)
        m[who, j] = np.clip(truth[j] + rng.integers(-1, 2, size=per_item), 1, 5)
    return m


def loop(point, m: np.ndarray, counts: np.ndarray) -> np.ndarray:
    out = np.empty(len(counts))
    for b, row in enumerate(counts):
        try:
            out[b] = point(m[:, np.repeat(np.arange(m.shape[1]), row)])
        except ValueError:
            out[b] = np.nan
    return out


def parser() -> argparse.ArgumentParser:
    """Return the options of this benchmark."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=POSITIVE, nargs="+", default=[300, 3000, 30000])
    parser.add_argument("--annotators", type=count(3), default=20, help="at least 3: each item is rated by 3")
    parser.add_argument("--n-boot", type=POSITIVE, default=1000)
    parser.add_argument("--loop", type=POSITIVE, default=50, help="resamples the loop runs (scaled to --n-boot)")
    parser.add_argument("--repeats", type=POSITIVE, default=3)
    return parser


def main() -> None:
    args = parser().parse_args()
    print(f"{args.annotators} annotators, 3 per item; {args.n_boot} resamples; the loop on {args.loop}, scaled;",
          f"medians of {args.repeats}")
    print(f"{'items':>6} {'statistic':<29} {'blocks s':>9} {'loop s':>8} {'ratio':>7} {'max |diff|':>11}")
    for n_items in args.items:
        m = make_study(n_items, args.annotators)
        counts = draw_counts(m.shape[1], args.loop, seed=0)
        for name, (point, over_draws) in STATISTICS.items():
            fast_s, _ = median_time(lambda f=over_draws, m=m: bootstrap(f, m, n_boot=args.n_boot), args.repeats)
            loop_s, slow = median_time(lambda p=point, m=m, c=counts: loop(p, m, c), args.repeats)
            loop_s *= args.n_boot / args.loop
            diff = float(np.nanmax(np.abs(over_draws(m, counts.astype(float)) - slow)))
            print(f"{n_items:>6} {name:<29} {fast_s:>9.3f} {loop_s:>8.2f} {loop_s / fast_s:>6.1f}x {diff:>11.1e}")


if __name__ == "__main__":
    main()
