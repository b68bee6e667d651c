"""Throughput of the dialeval lexical suite against a plain per-item loop over the same libraries.

Items come from DailyDialog++ (test): per context, the five good responses are
the references and the adversarial and random negative responses are the
hypotheses. Both sides run in this process, interleaved, on ``--slices`` disjoint
slices of the items; the script prints per-family medians per slice, the sums and
the ratio baseline / dialeval of the sums (>= 1.0 means dialeval is no slower), and
checks that both sides produced the same values.

    .venv/bin/python benchmarks/bench_lexical.py            # 10,000 items
    .venv/bin/python benchmarks/bench_lexical.py --n 2000 --slices 5
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import time
from collections import Counter
from collections.abc import Callable

import numpy as np
from common import POSITIVE, data_file  # benchmarks/ is on sys.path

from dialeval.metrics.base import Metric, MetricInput
from dialeval.metrics.functional.meteor import _memo_tools
from dialeval.metrics.lexical import Bleu, Chrf, Distinct, Length, Meteor, Rouge, SacreBleu, WordF1
from dialeval.metrics.wordnet import load_wordnet

DATA = "corpora/dailydialog_plusplus/test.json"  # in the shared data folder


def load_items(n: int) -> list[MetricInput]:
    path = data_file(DATA)
    items: list[MetricInput] = []
    for line in path.read_text().splitlines():
        rec = json.loads(line)
        refs = tuple(rec["positive_responses"])
        for hyp in rec["adversarial_negative_responses"] + rec["random_negative_responses"]:
            items.append(MetricInput(response=hyp, references=refs))
    if n > len(items):
        raise SystemExit(f"error: only {len(items)} items in {path}: give --n {len(items)} or fewer")
    return items[:n]


# ---- the baseline: what a user writes without dialeval, one item at a time ----

_PUNCT = re.compile(r"[!\"#$%&()*+,\-./:;<=>?@\[\]\\^`{|}~_']")
_ART = re.compile(r"\b(a|an|the)\b")


def _parlai_f1(pred: str, gold: str) -> float:
    p = _ART.sub(" ", _PUNCT.sub(" ", pred.lower())).split()
    g = _ART.sub(" ", _PUNCT.sub(" ", gold.lower())).split()
    same = sum((Counter(p) & Counter(g)).values())
    if same == 0:
        return 0.0
    prec, rec = same / len(p), same / len(g)
    return 2 * prec * rec / (prec + rec)


def _distinct(text: str, n: int) -> float:
    toks = text.split()
    grams = [tuple(toks[i : i + n]) for i in range(len(toks) - n + 1)]
    return len(set(grams)) / len(grams) if grams else 0.0


def baselines() -> dict[str, Callable[[list[MetricInput]], dict[str, list[float]]]]:
    import sacrebleu
    from nltk.tokenize import NLTKWordTokenizer
    from nltk.translate.bleu_score import SmoothingFunction, sentence_bleu
    from nltk.translate.meteor_score import meteor_score
    from rouge_score.rouge_scorer import RougeScorer

    tok = NLTKWordTokenizer()
    smooth = SmoothingFunction().method1
    scorer = RougeScorer(["rouge1", "rouge2", "rougeL"])
    wordnet = load_wordnet()

    def bleu(items: list[MetricInput]) -> dict[str, list[float]]:
        out: dict[str, list[float]] = {f"bleu{n}": [] for n in (1, 2, 3, 4)}
        for it in items:
            refs = [tok.tokenize(r.lower()) for r in it.references]
            hyp = tok.tokenize(it.response.lower())
            for n in (1, 2, 3, 4):
                out[f"bleu{n}"].append(sentence_bleu(refs, hyp, (1 / n,) * n, smoothing_function=smooth))
        return out

    def rouge(items: list[MetricInput]) -> dict[str, list[float]]:
        scores = [scorer.score_multi(list(it.references), it.response) for it in items]
        return {k: [s[k].fmeasure for s in scores] for k in ("rouge1", "rouge2", "rougeL")}

    return {
        "bleu": bleu,
        "sacrebleu": lambda items: {
            "sacrebleu": [sacrebleu.sentence_bleu(it.response, list(it.references)).score for it in items]
        },
        "chrf": lambda items: {
            "chrfpp": [sacrebleu.sentence_chrf(it.response, list(it.references), word_order=2).score
                       for it in items]
        },
        "rouge": rouge,
        "meteor": lambda items: {
            "meteor": [meteor_score([tok.tokenize(r) for r in it.references], tok.tokenize(it.response),
                                    wordnet=wordnet) for it in items]
        },
        "f1": lambda items: {
            "word_f1": [max(_parlai_f1(it.response, r) for r in it.references) for it in items]
        },
        "distinct": lambda items: {
            "distinct1": [_distinct(it.response, 1) for it in items],
            "distinct2": [_distinct(it.response, 2) for it in items],
        },
        "length": lambda items: {"length": [float(len(it.response.split())) for it in items]},
    }


def run_dialeval(metric: Metric, items: list[MetricInput]) -> dict[str, list[float]]:
    """Score in the scorer's batches (``metric.batch_size``), as ``dialeval score`` does."""
    _memo_tools.cache_clear()  # cold WordNet/stemmer memo on every run: no help from earlier slices
    out: dict[str, list[float]] = {k: [] for k in metric.outputs}
    for start in range(0, len(items), metric.batch_size):
        values = metric.compute(items[start : start + metric.batch_size])
        for k in metric.outputs:
            out[k].extend(values[k])  # type: ignore[arg-type]
    return out


def parser() -> argparse.ArgumentParser:
    """Return the options of this benchmark."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=POSITIVE, default=10_000, help="number of items")
    parser.add_argument("--slices", type=POSITIVE, default=5, help="timed runs, each on a disjoint slice")
    return parser


def main() -> None:
    args = parser().parse_args()

    items = load_items(args.n)
    size = -(-len(items) // args.slices)
    slices = [items[i : i + size] for i in range(0, len(items), size)]
    metrics: list[Metric] = [Bleu(), SacreBleu(), Chrf(), Rouge(), Meteor(), WordF1(), Distinct(), Length()]
    base = baselines()
    for m in metrics:  # warm-up: imports, WordNet load, scorer construction on both sides
        run_dialeval(m, items[:20])
        base[m.name](items[:20])

    times: dict[str, dict[str, list[float]]] = {m.name: {"baseline": [], "dialeval": []} for m in metrics}
    for part in slices:
        for m in metrics:  # the two sides alternate, family by family, slice by slice
            t0 = time.perf_counter()
            ref_values = base[m.name](part)
            t1 = time.perf_counter()
            our_values = run_dialeval(m, part)
            t2 = time.perf_counter()
            times[m.name]["baseline"].append(t1 - t0)
            times[m.name]["dialeval"].append(t2 - t1)
            for k in m.outputs:
                np.testing.assert_allclose(our_values[k], ref_values[k], rtol=0, atol=1e-9, err_msg=k)

    print(f"{len(items)} items from DailyDialog++ test, timed in {len(slices)} slices of <= {size}")
    print("seconds per slice (median) and in all (sum); ratio = baseline / dialeval of the sums")
    print(f"{'family':<10} {'base med':>9} {'dial med':>9} {'base sum':>9} {'dial sum':>9} {'ratio':>6}")
    total_b = total_d = 0.0
    for name, t in times.items():
        b, d = sum(t["baseline"]), sum(t["dialeval"])
        total_b, total_d = total_b + b, total_d + d
        mb, md = statistics.median(t["baseline"]), statistics.median(t["dialeval"])
        print(f"{name:<10} {mb:>9.3f} {md:>9.3f} {b:>9.3f} {d:>9.3f} {b / d:>6.2f}")
    print(f"{'total':<10} {'':>9} {'':>9} {total_b:>9.3f} {total_d:>9.3f} {total_b / total_d:>6.2f}")
    print("values: dialeval == baseline for every family and item (atol 1e-9)")


if __name__ == "__main__":
    main()
