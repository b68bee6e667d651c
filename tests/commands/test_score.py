"""``dialeval score``: what it prints beside the Score records it writes.

Through the real CLI (typer's runner, in process), with a metric of the test's own registered as a plugin
registers one (docs/extending.md): the only built-in metric with free text in its signature is ``likelihood``
(its prompt template), which loads a language model.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest
from tests.commands.cli_runner import invoke

from dialeval.jsonl import read_jsonl
from dialeval.metrics.base import METRICS, Metric, MetricInput, MetricValues
from dialeval.schema import Score


@dataclass(frozen=True)
class _PromptConfig:
    template: str = "{context}"


class _PromptLength(Metric):
    """Words of the response (the template only signs the run, as a prompt template signs ``likelihood``)."""

    name = "prompt_length_test"
    outputs = ("prompt_length_test",)
    Config = _PromptConfig

    def compute(self, items: Sequence[MetricInput]) -> MetricValues:
        return {"prompt_length_test": [float(len(i.response.split())) for i in items]}


@pytest.fixture
def prompt_metric(monkeypatch: pytest.MonkeyPatch) -> str:
    """Register :class:`_PromptLength` for the test only (the registry has no unregister)."""
    monkeypatch.setitem(METRICS._items, _PromptLength.name, _PromptLength)
    return _PromptLength.name


def test_a_signature_with_brackets_is_printed_as_written(prompt_metric: str, tmp_path: Path) -> None:
    """A Llama-style template ("[INST] {context} [/INST]") in a signature was read as rich markup: "[/INST]"
    ended the run in a MarkupError traceback after the scores were written, and "[red]" vanished from the line."""
    table = tmp_path / "t.csv"
    table.write_text("context,response\nHi,Hello there\n", encoding="utf-8")
    out = tmp_path / "s.jsonl"
    for template in ("[INST] {context} [/INST]", "[red]{context}"):
        res = invoke("score", "--path", table, "--response-col", "response", "--context-col", "context", "-m",
                     prompt_metric, "-p", f"{prompt_metric}.template={template}", "-o", out, "--no-cache")  # fmt: skip
        assert res.exit_code == 0, res.output
        signature = next(iter(read_jsonl(out, Score))).signature
        assert f"template:{template}|" in signature  # the record's, as given
        assert signature in res.output  # the printed line holds it, brackets and all


def test_a_long_prompt_template_is_no_path_too_long(prompt_metric: str, tmp_path: Path) -> None:
    """A -p value is looked up as a file the run reads (a model): one over 255 bytes (a prompt template of a few
    sentences) was refused, "error: You are a...: too long a name for the file system", and nothing ran."""
    table = tmp_path / "t.csv"
    table.write_text("context,response\nHi,Hello there\n", encoding="utf-8")
    template = "You are a careful and friendly assistant. " * 8 + "The conversation so far: {context}"
    assert len(template.encode()) > 255  # NAME_MAX, the longest name of a file
    out = tmp_path / "s.jsonl"
    res = invoke("score", "--path", table, "--response-col", "response", "--context-col", "context", "-m",
                 prompt_metric, "-p", f"{prompt_metric}.template={template}", "-o", out, "--no-cache")  # fmt: skip
    assert res.exit_code == 0, res.output
    assert f"template:{template}|" in next(iter(read_jsonl(out, Score))).signature


def test_an_item_without_a_reference_is_named_by_its_file_and_line(tmp_path: Path) -> None:
    """bleu on a table where some rows have no reference named the first such item by its internal id,
    'item "t-0001:unknown"', which is in no column of the table; it names the file and line of its first row."""
    csv = tmp_path / "t.csv"  # the header is line 1; the quoted context of the first row spans lines 2-3
    csv.write_text('context,response,reference\n"Hi\nthere",Hello,Hey\nHow are you?,fine,\nHow are you?,fine,\n',
                   encoding="utf-8")  # fmt: skip
    jsonl = tmp_path / "t.jsonl"
    rows = [{"context": "Hi", "response": "Hello", "reference": "Hey"},
            {"context": "How are you?", "response": "fine", "reference": None}]
    jsonl.write_text("".join(json.dumps(row) + "\n" for row in rows))
    for table, line in ((csv, 4), (jsonl, 2)):
        res = invoke("score", "--path", table, "--response-col", "response", "--context-col", "context",
                     "--reference-col", "reference", "-m", "bleu", "-o", tmp_path / "s.jsonl",
                     "--no-cache")  # fmt: skip
        assert res.exit_code == 2, res.output
        said = " ".join(res.output.split())  # the error as one line, however the terminal wrapped it
        assert 'metric "bleu" cannot run here: 1 of 2 items has no reference ' in said
        assert said.endswith(f'(the first: {table}:{line}, response "fine")'), said
