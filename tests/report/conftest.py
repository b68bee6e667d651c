"""Results folders for the report tests: a real benchmark run, a real LMStyle run, a stress file, a study export."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from dialeval.cli import app
from dialeval.jsonl import write_jsonl
from dialeval.schema import Rating

ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"
HOSTILE = "<script>alert(1)</script> & | _ % $"


def invoke(args: list[str]) -> str:
    with pytest.MonkeyPatch.context() as mp:  # the command line that run.json and the report record
        mp.setattr("sys.argv", ["dialeval", *args])
        res = CliRunner().invoke(app, args)
    assert res.exit_code == 0, res.output
    return res.output


@pytest.fixture(scope="session")
def results(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Path]]:
    root = tmp_path_factory.mktemp("results")
    mp = pytest.MonkeyPatch()
    mp.setenv("DIALEVAL_CACHE", str(root / "cache"))
    bench = root / "bench"
    invoke(["benchmark", "--metrics", "sacrebleu,length,chrf", "--limit", "12", "--boot", "50",
            "--level", "turn,system", "-o", str(bench)])  # fmt: skip
    lm = root / "lmstyle"
    invoke(["lmstyle", "--limit", "1", "--datasets", "dd", "--styles", "formal,positive", "--max-tokens", "10",
            "--metrics", "style,sacrebleu", "--compare-paper", "-o", str(lm)])  # fmt: skip
    stress = [{"metric": m, "perturbation": p, "value": v}
              for m, base in (("sacrebleu", 0.9), ("length", 0.2), (HOSTILE, 0.5))
              for p, v in (("shuffle", base), ("drop-words", base / 2), ("copy-context", 1 - base))]  # fmt: skip
    (bench / "stress.jsonl").write_text("".join(json.dumps(r) + "\n" for r in stress))
    ratings = [Rating(item_id=f"i{i}", dimension=dim, annotator=f"a{a}", value=float((i + a * (dim == "Correct")) % 3),
                      reasons=["repetition"] if (i + a) % 4 == 0 else ["off-topic"] if i % 5 == 0 else [])
               for i in range(12) for a in range(3) for dim in ("Appropriateness", "Correct")]  # fmt: skip
    write_jsonl(root / "study.jsonl", ratings)
    yield {"bench": bench, "lmstyle": lm, "study": root / "study.jsonl", "root": root}
    mp.undo()
