"""No command cuts a name or a number in what it prints, in an 80-column terminal or a pipe (issue 15, part 2).

Each command runs as a user runs it: a subprocess with ``COLUMNS=80`` and stdout a pipe (not a TTY). The
names and numbers expected on the screen are read from the files the command wrote (its .jsonl), formatted
as the screen formats them (three decimals), and must appear whole; a rich table that had to shrink a column
would show "…" instead.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from io import StringIO
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from rich.cells import cell_len
from rich.console import Console
from tests.judges.conftest import llama_url

from dialeval.commands.tables import ScreenTable, to_rich
from dialeval.meta.wide import pivot

__all__ = ["llama_url"]  # the shared llama.cpp server fixture

CUT = "\u2026"  # "…", what rich prints where it cut a cell


def dialeval(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLUMNS": "80", "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
           "DIALEVAL_CACHE": str(cwd / "cache"), "DIALEVAL_SCORE_CACHE": str(cwd / "scores.sqlite")}  # fmt: skip
    env.pop("FORCE_COLOR", None)
    code = "from dialeval.cli import app; app()"
    proc = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, env=env, cwd=cwd,
                          timeout=600)  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "Traceback" not in proc.stderr
    return proc


def whole(text: str, names: set[str], numbers: set[str]) -> None:
    """Every name and number appears as a whole in ``text``, and nothing was cut with "…"."""
    assert CUT not in text, text
    assert names, "nothing to look for"
    missing = sorted(n for n in names | numbers if n not in text)
    assert not missing, (missing, text)


def lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in path.read_text().splitlines() if x.strip()]


def number(v: float | None) -> str:
    return "n/a" if v is None or v != v else f"{v:.3f}"


def correlation_numbers(rows: list[dict[str, Any]]) -> set[str]:
    out = set()
    for r in rows:
        out.add(number(r["value"]))
        if r.get("ci_low") is not None and r.get("ci_high") is not None:
            out.add(f"[{r['ci_low']:.3f}, {r['ci_high']:.3f}]")
    return out


@pytest.mark.parametrize("width", [80, 60, 40])
def test_the_benchmark_table_keeps_model_metric_names_and_numbers_whole(width: int) -> None:
    """The renderer of `benchmark` and `meta` with the long names of the model metrics, at 80 columns and less."""
    names = ["bertscore_r", "bertscore_f", "sbert_ref", "lm_likelihood", "judge:cpdscore-simple.score"]
    rows = [
        SimpleNamespace(
            metric=m,
            level=lv,
            method=meth,
            value=-0.5 + i / 7,
            ci_low=-0.987 + i / 9,
            ci_high=0.5 + i / 11,
            p_value=0.01,
            group="all",
            n_items=10,
            n_groups=5,
        )
        for i, m in enumerate(names)
        for lv in ("turn", "system")
        for meth in ("pearson", "spearman", "kendall")
    ]
    con = Console(file=StringIO(), width=width)
    con.print(to_rich(pivot(rows), "usr-tc: correlation with human Overall (360 items, ranked by turn pearson)"))
    text = con.file.getvalue()  # type: ignore[attr-defined]
    assert max(len(line) for line in text.splitlines()) <= width
    whole(text, set(names), {number(r.value) for r in rows} | {f"[{r.ci_low:.3f}, {r.ci_high:.3f}]" for r in rows})


def test_a_screen_table_too_narrow_for_a_grid_prints_one_cell_per_line() -> None:
    table = ScreenTable("t", ["metric"], ["shuffle", "drop-words"], [(["lm_likelihood"], ["0.512", "-0.125"])])
    con = Console(file=StringIO(), width=29)  # frame 1 + name 13 + 3 + "drop-words" 10 + 3 = 30 columns needed
    con.print(table)
    assert [line.rstrip() for line in con.file.getvalue().splitlines()] == [  # type: ignore[attr-defined]
        "t", "lm_likelihood  shuffle: 0.512", "lm_likelihood  drop-words:", "-0.125"]  # fmt: skip



@pytest.mark.parametrize("width", range(40, 121))
def test_a_group_in_wide_characters_is_not_cut_at_any_width(width: int) -> None:
    """A CJK character takes two columns of a terminal and was counted as one: a group named in Japanese (a
    dialogue tag's value) made blocks wider than the console, and rich cut the group and the figures with "…"
    (at 60 and 80 columns; at 70 and 90 they happened to fit)."""
    cells = ["0.512 [0.401, 0.611]", "0.900 [0.700, 1.000]"]
    table = ScreenTable("demo", ["group", "metric"], ["turn spearman", "system spearman"],
                        [(["日本語の対話データ群", "bertscore_r"], cells)])  # fmt: skip
    con = Console(file=StringIO(), width=width)
    con.print(table)
    text = con.file.getvalue()  # type: ignore[attr-defined]
    assert CUT not in text and "日本語の対話データ群" in text, text
    assert max(cell_len(line) for line in text.splitlines()) <= width, text


@pytest.fixture(scope="module")
def bench(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, subprocess.CompletedProcess[str]]:
    root = tmp_path_factory.mktemp("screen")
    proc = dialeval("benchmark", "-b", "usr-tc", "-m", "bleu,rouge,chrf,length,distinct", "--limit", "4",
                    "--boot", "50", "-o", str(root / "bench"), cwd=root)  # fmt: skip
    return root, proc


def test_benchmark(bench: tuple[Path, subprocess.CompletedProcess[str]]) -> None:
    root, proc = bench
    rows = lines(root / "bench" / "table.jsonl")
    whole(proc.stdout, {r["metric"] for r in rows}, correlation_numbers(rows))
    assert "[95% CI]" in proc.stdout  # over columns of figures with CIs (none: tests/commands/test_meta_messages.py)


def test_meta(bench: tuple[Path, subprocess.CompletedProcess[str]]) -> None:
    root, _ = bench
    proc = dialeval("meta", str(root / "bench" / "scores.jsonl"), "-b", "usr-tc", "--boot", "50",
                    "--level", "turn,system", "-o", str(root / "meta"), cwd=root)  # fmt: skip
    rows = lines(root / "meta" / "table.jsonl")
    whole(proc.stdout, {r["metric"] for r in rows}, correlation_numbers(rows))


def test_stress(bench: tuple[Path, subprocess.CompletedProcess[str]]) -> None:
    root, _ = bench
    perturb = "negation,number-swap,date-swap,other-context,repetition,truncation,too-long,speaker-swap"
    proc = dialeval("stress", "-b", "usr-tc", "-m", "bleu,length", "--perturb", perturb, "--limit", "2", "--boot", "20",
                    "--subsets", "none", "--plot", "none",
                    "-o", str(root / "stress"), cwd=root)  # fmt: skip
    rows = lines(root / "stress" / "stress.jsonl")
    whole(proc.stdout, {r["metric"] for r in rows} | {r["perturbation"] for r in rows},
          {number(r["fraction"]) for r in rows})  # fmt: skip


def test_stress_ranking(tmp_path: Path) -> None:
    proc = dialeval("stress", "-b", "dailydialog++", "-m", "bleu,rouge,length", "--limit", "3", "--boot", "20",
                    "-o", str(tmp_path / "ranking"), cwd=tmp_path)  # fmt: skip
    rows = lines(tmp_path / "ranking" / "ranking.jsonl")
    whole(proc.stdout, {r["metric"] for r in rows} | {f"good > {r['negatives']}" for r in rows},
          {number(r["fraction"]) for r in rows})  # fmt: skip


def test_train(bench: tuple[Path, subprocess.CompletedProcess[str]]) -> None:
    root, _ = bench
    proc = dialeval("train", "--model", "tfidf-lr", "--train", "usr-pc", "--test", "usr-tc", "--dimension", "Overall",
                    "--limit", "6", "--n-boot", "20", "--no-save", "-o", str(root / "train"), cwd=root)  # fmt: skip
    rows = lines(root / "train" / "results.jsonl")
    numbers = {number(r[k]) for r in rows for k in ("spearman", "pearson", "accuracy") if r.get(k) is not None}
    whole(proc.stdout, {r["model"] for r in rows} | {r["split"] for r in rows}, numbers)


def test_data_list(tmp_path: Path) -> None:
    from dialeval.data.catalog import list_benchmarks

    proc = dialeval("data", "list", cwd=tmp_path)
    entries = list_benchmarks()
    whole(proc.stdout, {e.name for e in entries}, {str(e.items) for e in entries if e.items is not None})


def test_study_report(tmp_path: Path) -> None:
    from tests.human.conftest import make_study

    make_study(tmp_path / "study")
    proc = dialeval("study", "report", str(tmp_path / "study"), "--output", str(tmp_path / "report"),
                    "--n-boot", "10", cwd=tmp_path)  # fmt: skip
    whole(proc.stdout, {str(tmp_path / "report.md"), str(tmp_path / "report.html")}, set())


def test_the_judge_run_summary_fits_80_columns() -> None:
    """The fast twin of test_judge_run: the summary renderer with a long output name and large counts."""
    from dialeval.judges.cli import summary_table

    summary = {"protocol": "cpdscore-simple-ref", "items": 123456, "calls": 987654, "parse_failures": 12,
               "prompt_tokens": 123456789, "seconds": 1234.56}  # fmt: skip
    values = {"judge:cpdscore-simple-ref.appropriateness": [0.123456, None, 0.5], "judge:x.score": [None]}
    con = Console(file=StringIO(), width=80)
    con.print(summary_table(summary, values))
    text = con.file.getvalue()  # type: ignore[attr-defined]
    whole(text, set(values), {"0.312", "123456", "987654", "123456789", "1234.56"})


def test_judge_list_fits_80_columns(tmp_path: Path) -> None:
    """It printed a table 200 columns wide whatever the terminal; the output names are read from --json."""
    entries = json.loads(dialeval("judge", "list", "--json", cwd=tmp_path).stdout)
    text = dialeval("judge", "list", cwd=tmp_path).stdout
    assert max(len(line) for line in text.splitlines()) <= 80, text
    assert all(line == line.rstrip() for line in text.splitlines())  # rich padded each wrapped line to the width
    whole(text, {e["name"] for e in entries} | {o for e in entries for o in e["outputs"]}, set())


@pytest.mark.slow
def test_judge_run(tmp_path: Path, llama_url: str) -> None:
    """The judge asks the tests' shared llama.cpp server (SmolLM2) over HTTP, as `-p base_url=` lets a user do."""
    out = tmp_path / "judge.jsonl"
    proc = dialeval("judge", "run", "--protocol", "lmstyle-appropriateness", "--benchmark", "usr-tc", "--limit", "1",
                    "-p", "backend=openai-compatible", "-p", f"base_url={llama_url}", "-p", "model=smollm2",
                    "-p", "k=1", "-p", "max_tokens=8", "--out", str(out), "--no-cache", cwd=tmp_path)  # fmt: skip
    values: dict[str, list[float]] = {}
    for s in lines(out):
        values.setdefault(s["metric"], []).extend([s["value"]] if s["value"] is not None else [])
    summary = json.loads(out.with_suffix(".jsonl.summary.json").read_text())
    counts = {str(v) for k, v in summary.items() if isinstance(v, int) and not isinstance(v, bool)}
    whole(proc.stdout, set(values), {number(sum(v) / len(v)) for v in values.values() if v} | counts)


@pytest.mark.slow
def test_lmstyle(tmp_path: Path, llama_url: str) -> None:
    """Tables 2/4/5 are printed as Markdown text (never wrapped or cut); fast twin: test_lmstyle_markdown_cells."""
    proc = dialeval("lmstyle", "--model", f"smollm2@{llama_url}", "--n", "1", "--datasets", "dd",
                    "--styles", "formal,positive", "--max-tokens", "10",
                    "--metrics", "style,sacrebleu", "-o", str(tmp_path / "lm"), cwd=tmp_path)  # fmt: skip
    cells = lines(tmp_path / "lm" / "lmstyle_tables.jsonl")
    names = {c["model"] for c in cells} | {c["column"] for c in cells}
    whole(proc.stdout, names, {f"{c['value']:.1f}" for c in cells if c["value"] is not None})


def test_lmstyle_markdown_cells() -> None:
    from dialeval.lmstyle.tables import LayoutTable

    table = LayoutTable("table4", "Table 4", ["ACC% formal", "BLEU formal"], [(("dd", "smollm2-135m-instruct"), "ours",
                        [12.345, 100.0])], [[None, "3/4"]])  # fmt: skip
    assert "| dd | smollm2-135m-instruct | ours | 12.3 | 100.0 (3/4) |" in table.to_markdown()
