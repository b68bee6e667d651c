"""The four recipes of docs/extending.md, each added the documented way and run through the CLI.

The plugin packages are made as pip would lay them out: a package folder and a ``.dist-info``
folder with ``entry_points.txt`` on ``PYTHONPATH`` (``importlib.metadata`` finds entry points
there exactly as in site-packages), so no ``pip install`` runs in the test.
"""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from scipy.stats import spearmanr

REPO = Path(__file__).resolve().parents[1]
DOC = (REPO / "docs" / "extending.md").read_text(encoding="utf-8")


def doc_block(start: str) -> str:
    """Return the fenced block of docs/extending.md whose first line is ``start`` (the doc's own text)."""
    for block in DOC.split("```")[1::2]:
        body = block.split("\n", 1)[1]
        if body.startswith(start):
            return body
    raise AssertionError(f"no block starting {start!r} in docs/extending.md")


def make_plugin(site: Path, name: str, modules: dict[str, str], entry_points: str) -> None:
    """Lay out a plugin distribution under ``site``: its modules and a dist-info with entry points."""
    for rel, code in modules.items():
        path = site / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(code, encoding="utf-8")
    info = site / f"{name}-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.1\n", encoding="utf-8")
    (info / "entry_points.txt").write_text(entry_points, encoding="utf-8")


def dialeval(*args: str | Path, cwd: Path, site: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "COLUMNS": "120"}
    if site is not None:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(site), env.get("PYTHONPATH", "")]))
    done = subprocess.run(
        [sys.executable, "-c", "from dialeval.cli import app; app()", *map(str, args)],
        cwd=cwd, env=env, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    assert "Traceback" not in done.stderr
    return done


def toml_entry_points(start: str) -> str:
    """The doc's ``[project.entry-points."GROUP"]`` block as an entry_points.txt section."""
    block = doc_block(start)
    lines = [ln for ln in block.splitlines() if ln.strip() and not ln.startswith("#")]
    group = lines[0].split('"')[1]
    return f"[{group}]\n" + "\n".join(ln.replace('"', "") for ln in lines[1:]) + "\n"


def test_metric_recipe_plugin_scores_through_the_cli(tmp_path: Path) -> None:
    site = tmp_path / "site"
    make_plugin(
        site, "dialeval_toy", {"dialeval_toy/__init__.py": doc_block("# dialeval_toy/__init__.py")},
        toml_entry_points("# its pyproject.toml"),
    )  # fmt: skip
    dialeval("data", "export", "-b", "usr-tc", "--limit", "2", "-o", tmp_path / "rec", cwd=tmp_path)
    dialeval(
        "score", "--dialogues", tmp_path / "rec" / "dialogues.jsonl", "--candidates",
        tmp_path / "rec" / "candidates.jsonl", "-m", "toy_len", "-p", "toy_len.unit=words",
        "--no-cache", "-o", tmp_path / "scores.jsonl", cwd=tmp_path, site=site,
    )  # fmt: skip
    cands = [json.loads(ln) for ln in (tmp_path / "rec" / "candidates.jsonl").read_text().splitlines()]
    scores = [json.loads(ln) for ln in (tmp_path / "scores.jsonl").read_text().splitlines()]
    # independent: str.split word counts of the exported candidate texts
    assert {s["item_id"]: s["value"] for s in scores} == {c["id"]: float(len(c["text"].split())) for c in cands}
    assert len(scores) == len(cands) == 12
    assert scores[0]["signature"].startswith("toy_len|unit:words|")


def test_loader_recipe_plugin_benchmarks_through_the_cli(tmp_path: Path) -> None:
    site = tmp_path / "site"
    modules = {"dialeval_toy/__init__.py": "", "dialeval_toy/data.py": doc_block("# dialeval_toy/data.py")}
    make_plugin(site, "dialeval_toy", modules, toml_entry_points('[project.entry-points."dialeval.datasets"]'))
    rows = [
        {"context": "Hi!\nHello, how are you?", "reply": "Fine, thanks, and you?", "quality": "5"},
        {"context": "Where do you live?", "reply": "Paris.", "quality": "2"},
        {"context": "Do you like tea?", "reply": "Yes, green tea in the morning is my favourite.", "quality": "4"},
        {"context": "What is your job?", "reply": "I teach.", "quality": "3"},
        {"context": "Any plans today?", "reply": "No.", "quality": "1"},
    ]
    with (tmp_path / "toy.csv").open("w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=["context", "reply", "quality"])
        w.writeheader()
        w.writerows(rows)
    shown = dialeval("data", "show", "-b", "toy", "--path", tmp_path / "toy.csv", cwd=tmp_path, site=site)
    assert "toy" in shown.stdout and "Overall" in shown.stdout
    dialeval(
        "benchmark", "-b", "toy", "--path", tmp_path / "toy.csv", "-m", "length", "--boot", "0",
        "--no-cache", "-o", tmp_path / "run", cwd=tmp_path, site=site,
    )  # fmt: skip
    table = [json.loads(ln) for ln in (tmp_path / "run" / "table.jsonl").read_text().splitlines()]
    row = next(r for r in table if r["metric"] == "length" and r["level"] == "turn" and r["method"] == "spearman")
    expected = spearmanr([len(r["reply"].split()) for r in rows], [int(r["quality"]) for r in rows]).statistic
    assert row["value"] == pytest.approx(expected, abs=1e-12)


def test_study_protocol_recipe_creates_a_study(tmp_path: Path) -> None:
    (tmp_path / "toy-study.yaml").write_text(doc_block("# toy-study.yaml"), encoding="utf-8")
    dialeval("data", "export", "-b", "usr-tc", "--limit", "2", "-o", tmp_path / "records", cwd=tmp_path)
    done = dialeval(
        "study", "create", tmp_path / "study", "--path", tmp_path / "records", "--protocol",
        tmp_path / "toy-study.yaml", "--annotators", "2", "--per-item", "2", "--seed", "0", "--json", cwd=tmp_path,
    )  # fmt: skip
    summary = json.loads(done.stdout.strip().splitlines()[0])
    # 2 contexts x 6 systems, one criterion, no ground truth added; each unit to both annotators
    assert (summary["units"], summary["items"], summary["annotators"]) == (2, 12, 2)
    assert summary["assignments"] == 4


@pytest.mark.slow
def test_judge_protocol_recipe_scores_with_the_packaged_model(tmp_path: Path) -> None:
    pytest.importorskip("xllamacpp")
    (tmp_path / "toy-judge.yaml").write_text(doc_block("# toy-judge.yaml"), encoding="utf-8")
    dialeval(
        "judge", "run", "--protocol", tmp_path / "toy-judge.yaml", "-b", "usr-tc", "--limit", "1",
        "--no-cache", "--out", tmp_path / "judge.jsonl", cwd=tmp_path,
    )  # fmt: skip
    scores = [json.loads(ln) for ln in (tmp_path / "judge.jsonl").read_text().splitlines()]
    main = [s for s in scores if s["metric"] == "judge:custom"]  # a protocol given as a file is judge:custom
    assert len({s["item_id"] for s in main}) == 6
    assert all(s["value"] is not None and 1 <= s["value"] <= 5 for s in main)
    assert all("protocol:toy-judge" in s["signature"] for s in main)


def test_judge_protocol_recipe_file_is_valid(tmp_path: Path) -> None:
    """Fast twin of the judge recipe: the documented file loads through the protocol model."""
    from dialeval.judges.protocol import load_protocol

    path = tmp_path / "toy-judge.yaml"
    path.write_text(textwrap.dedent(doc_block("# toy-judge.yaml")), encoding="utf-8")
    proto = load_protocol(path)
    assert proto.name == "toy-judge"
    assert "Rate the response from 1 to 5" in proto.messages[0][1]
