"""Reading a large rated table with the collector's default thresholds vs inside ``fewer_collections``.

Data: a seeded table of ``--contexts`` contexts x 5 systems (one row each: context, response, system, a 1-5
rating), written as CSV and read by ``load_table`` as ``--path`` reads it, in this process: once with CPython's
thresholds (700, 10, 10), once inside :func:`dialeval.bulk.fewer_collections`, alternating, ``--repeats`` times
each, nothing read before kept; medians are reported. Both sides read the same benchmark (checked after).

Run: .venv/bin/python benchmarks/bench_collections.py [--contexts 20000] [--repeats 3]
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import gc
import random
import statistics
import tempfile
import time
from pathlib import Path

from common import POSITIVE  # benchmarks/ is on sys.path

from dialeval.bulk import fewer_collections
from dialeval.data.generic import ColumnMapping, load_table

MAPPING = ColumnMapping(response="response", context="context", system="system", ratings={"q": "Overall"},
                        scale="1-5")  # fmt: skip


def write_table(path: Path, n_contexts: int, seed: int = 0) -> None:
    rng = random.Random(seed)
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["context", "response", "system", "q"])
        for i in range(n_contexts):
            context = f"context {i}\n" + " ".join(rng.choice("abcdefg") for _ in range(8))
            for s in range(5):
                response = " ".join(rng.choice("hijklmn") for _ in range(rng.randint(1, 12)))
                writer.writerow([context, response, f"s{s}", rng.randint(1, 5)])


def parser() -> argparse.ArgumentParser:
    """Return the options of this benchmark."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--contexts", type=POSITIVE, default=20000)
    parser.add_argument("--repeats", type=POSITIVE, default=3)
    return parser


def main() -> None:
    args = parser().parse_args()
    assert gc.get_threshold()[0] == 700, "run it in a plain interpreter: the baseline is CPython's default"
    with tempfile.TemporaryDirectory() as tmp:
        table = Path(tmp) / "rated.csv"
        write_table(table, args.contexts)
        times: dict[str, list[float]] = {"default": [], "fewer": []}
        for _ in range(args.repeats):
            for side in times:  # nothing read before is alive: each read starts from the same heap
                gc.collect()
                start = time.perf_counter()
                with fewer_collections() if side == "fewer" else contextlib.nullcontext():
                    load_table(table, MAPPING)
                times[side].append(time.perf_counter() - start)
        with fewer_collections():
            fewer_read = load_table(table, MAPPING)
        default_read = load_table(table, MAPPING)
    assert (fewer_read.candidates, fewer_read.ratings) == (default_read.candidates, default_read.ratings)
    default, fewer = (statistics.median(times[k]) for k in ("default", "fewer"))
    rows = args.contexts * 5
    print(f"{rows:,} rows ({args.contexts:,} contexts x 5 systems), medians of {args.repeats}:")
    print(f"default thresholds {default:.2f} s; fewer_collections {fewer:.2f} s; {default / fewer:.2f}x")


if __name__ == "__main__":
    main()
