"""``dialeval benchmark`` and ``dialeval score`` end to end on USR Topical-Chat."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from scipy import stats
from typer.testing import CliRunner

from dialeval.cli import app
from dialeval.jsonl import read_jsonl
from dialeval.schema import Score

runner = CliRunner()


def _raw_length_and_overall(shared_data: Path, n_contexts: int) -> tuple[np.ndarray, np.ndarray]:
    raw = json.loads((shared_data / "usr" / "usr_topical_chat.json").read_text())
    lengths, overall = [], []
    for ctx in raw[:n_contexts]:
        for r in ctx["responses"]:
            lengths.append(len(r["response"].split()))
            overall.append(np.mean(r["Overall"]))
    return np.array(lengths, float), np.array(overall, float)


def test_benchmark_writes_scores_and_a_table_matching_scipy(tmp_path: Path, shared_data: Path) -> None:
    out = tmp_path / "run"
    res = runner.invoke(
        app, ["benchmark", "--metrics", "length,sacrebleu", "--limit", "10", "--boot", "200", "-o", str(out), "--json"]
    )
    assert res.exit_code == 0, res.output
    payload = json.loads(res.output)
    scores = read_jsonl(out / "scores.jsonl", Score)
    assert len(scores) == 60 * 2  # 10 contexts x 6 systems x 2 outputs
    assert {s.metric for s in scores} == {"length", "sacrebleu"}
    assert all(s.signature.startswith(s.metric) for s in scores)
    rows = {(r["metric"], r["level"], r["method"]): r for r in payload["rows"]}
    x, y = _raw_length_and_overall(shared_data, 10)
    row = rows[("length", "turn", "pearson")]
    assert abs(row["value"] - stats.pearsonr(x, y).statistic) < 1e-12
    assert row["n_items"] == 60
    assert row["ci_low"] <= row["value"] <= row["ci_high"]
    run = json.loads((out / "run.json").read_text())
    assert set(run["metrics"]) == {"length", "sacrebleu"}
    assert run["counts"]["contexts"] == 10
    assert "| length |" in (out / "table.md").read_text()


def test_unknown_metric_and_dimension_are_clear_errors(tmp_path: Path) -> None:
    res = runner.invoke(app, ["benchmark", "--metrics", "sacrebelu", "--limit", "2", "-o", str(tmp_path)])
    assert res.exit_code == 2
    assert 'did you mean "sacrebleu"' in res.output
    res = runner.invoke(app, ["benchmark", "--dimension", "Funny", "--metrics", "length", "-o", str(tmp_path)])
    assert res.exit_code == 2
    assert 'no dimension "Funny"' in res.output
    assert not (tmp_path / "scores.jsonl").exists()


def test_parameter_typos_and_bad_values_are_clear_errors(tmp_path: Path) -> None:
    base = ["benchmark", "--metrics", "bleu,length", "--limit", "1", "-o", str(tmp_path / "run")]
    res = runner.invoke(app, [*base, "-p", "bleu.smoothng=none"], terminal_width=200)
    assert res.exit_code == 2
    assert 'metric "bleu" has no parameter "smoothng"' in res.output and "smoothing" in res.output
    res = runner.invoke(app, [*base, "-p", "modle=x"], terminal_width=200)
    assert res.exit_code == 2 and "no metric of this run has the parameter modle" in res.output
    res = runner.invoke(app, [*base, "-p", "bleu.lowercase=maybe"], terminal_width=200)
    assert res.exit_code == 2 and "bleu.lowercase='maybe'" in res.output
    assert not (tmp_path / "run").exists()  # nothing written before the parameters were checked
    res = runner.invoke(app, [*base, "-p", "bleu.lowercase=no", "--boot", "0"], terminal_width=200)
    assert res.exit_code == 0, res.output
    assert "lowercase:no" in json.loads((tmp_path / "run" / "run.json").read_text())["metrics"]["bleu"]["signature"]


def test_reference_metric_on_reference_free_records_is_refused(tmp_path: Path) -> None:
    (tmp_path / "d.jsonl").write_text('{"id": "d", "turns": [{"speaker": "A", "text": "hi"}]}\n')
    (tmp_path / "c.jsonl").write_text('{"id": "c", "dialogue_id": "d", "turn_index": 1, "system": "s", "text": "yo"}\n')
    args = ["score", "--dialogues", str(tmp_path / "d.jsonl"), "--candidates", str(tmp_path / "c.jsonl")]
    res = runner.invoke(app, [*args, "-m", "rouge", "-o", str(tmp_path / "s.jsonl")])
    assert res.exit_code == 2 and "1 of 1 item has no reference" in res.output  # "1 of 1 items have"
    res = runner.invoke(app, [*args, "-m", "length", "-o", str(tmp_path / "s.jsonl")])
    assert res.exit_code == 0, res.output
    assert [s.value for s in read_jsonl(tmp_path / "s.jsonl", Score)] == [1.0]


def test_meta_ceiling_and_paired_comparison_match_a_hand_computation(tmp_path: Path, shared_data: Path) -> None:
    scores = tmp_path / "scores.jsonl"
    res = runner.invoke(app, ["score", "-m", "length,distinct", "--limit", "20", "-o", str(scores), "--json"])
    assert res.exit_code == 0, res.output
    res = runner.invoke(
        app,
        ["meta", str(scores), "-b", "usr-tc", "-l", "turn", "--method", "spearman", "--boot", "200",
         "-m", "length,distinct1", "--ceiling", "--compare", "length,distinct1", "--json"],
    )  # fmt: skip
    assert res.exit_code == 0, res.output
    payload = json.loads(res.output)
    raw = json.loads((shared_data / "usr" / "usr_topical_chat.json").read_text())[:20]
    # Independent: per-response mean Overall, word counts and distinct-1 from the raw file, scipy Spearman.
    responses = [r for ctx in raw for r in ctx["responses"]]
    human = np.array([np.mean(r["Overall"]) for r in responses])
    length = np.array([len(r["response"].split()) for r in responses], float)
    d1 = np.array([len(set(t)) / len(t) if (t := r["response"].split()) else 0.0 for r in responses])
    diff = stats.spearmanr(length, human).statistic - stats.spearmanr(d1, human).statistic
    paired = payload["paired"]
    assert abs(paired["difference"] - diff) < 1e-9 and paired["n_items"] == 120
    assert paired["ci_low"] <= paired["difference"] <= paired["ci_high"]
    # Ceiling: each annotator against the mean of the others on the items they share, Spearman, averaged.
    pairs: dict[str, tuple[list[float], list[float]]] = {}
    for ctx in raw:
        for r in ctx["responses"]:
            for i, who in enumerate(ctx["annotators"]):
                own, others = pairs.setdefault(who, ([], []))
                own.append(r["Overall"][i])
                others.append(float(np.mean([v for j, v in enumerate(r["Overall"]) if j != i])))
    taus = [stats.spearmanr(a, b).statistic for a, b in pairs.values() if len(a) > 1 and np.ptp(a) and np.ptp(b)]
    ceiling = next(r for r in payload["rows"] if r["metric"] == "human" and r["method"] == "spearman")
    assert abs(ceiling["value"] - float(np.mean(taus))) < 1e-9
    for compare in ("length", "length,length"):  # one metric, or one metric against itself (it gave p = 0.5)
        res = runner.invoke(app, ["meta", str(scores), "-b", "usr-tc", "--compare", compare])
        assert res.exit_code == 2 and "--compare takes two different metrics" in res.output
    # An empty list was read as "no test" and the command exited 0 without the test it was asked for.
    for compare in ("", "length,"):
        res = runner.invoke(app, ["meta", str(scores), "-b", "usr-tc", "--compare", compare])
        assert res.exit_code == 2 and 'field "--compare": empty metric name' in res.output


def test_meta_refuses_its_comparisons_before_reading_any_scores(tmp_path: Path) -> None:
    """A bad --compare or --compare-paper is the one error, though the scores file is missing too."""
    missing = str(tmp_path / "missing.jsonl")
    res = runner.invoke(app, ["meta", missing, "-b", "usr-tc", "--compare", "length"])
    assert res.exit_code == 2 and "--compare takes two different metrics" in res.output
    res = runner.invoke(app, ["meta", missing, "-b", "usr-tc", "--compare-paper", "table9"])
    assert res.exit_code == 2 and 'unknown published table "table9"' in res.output
    assert "file not found" not in res.output


def test_meta_breaks_down_by_a_dialogue_tag(tmp_path: Path, shared_data: Path) -> None:
    """Scores carry their dialogue's domain and tags, so `--by domain` works on a catalog benchmark."""
    scores = tmp_path / "s.jsonl"
    res = runner.invoke(app, ["score", "-b", "usr-tc", "-m", "length", "--limit", "5", "-o", str(scores), "--no-cache"])
    assert res.exit_code == 0, res.output
    assert {s.tags.get("domain") for s in read_jsonl(scores, Score)} == {"topical-chat"}
    res = runner.invoke(app, ["meta", str(scores), "-b", "usr-tc", "--by", "domain", "--boot", "0", "--json"])
    assert res.exit_code == 0, res.output
    rows = {
        r["group"]: r
        for r in json.loads(res.output)["rows"]
        if (r["metric"], r["level"], r["method"]) == ("length", "turn", "pearson")
    }
    assert set(rows) == {"all", "domain=topical-chat"}
    x, y = _raw_length_and_overall(shared_data, 5)
    assert rows["domain=topical-chat"]["value"] == pytest.approx(stats.pearsonr(x, y).statistic, abs=1e-12)


def test_a_dimension_rated_per_dialogue_is_reported_per_dialogue_by_default(tmp_path: Path) -> None:
    """DSTC9 rates whole dialogues: the default levels (turn, system) gave three n/a turn columns, said
    "constant input or fewer than 2 values", and no dialogue level; meta did the same on its scores. Its
    overall rating, "human (overall)", is the default dimension: the commands asked for -d."""
    dim = ["--boot", "0", "--json"]
    res = runner.invoke(app, ["benchmark", "-b", "dstc9", *dim, "-m", "length", "--limit", "300", "-o", str(tmp_path)])
    assert res.exit_code == 0, res.output
    rows = json.loads(res.output)["rows"]
    assert [r["level"] for r in rows] == ["dialogue"] * 3  # the first 300 contexts are one system's: no system level
    assert all(r["value"] is not None and "without rating" not in r["note"] for r in rows)
    assert {r["dimension"] for r in rows} == {"human (overall)"}
    res = runner.invoke(app, ["meta", str(tmp_path / "scores.jsonl"), "-b", "dstc9", *dim])
    assert res.exit_code == 0, res.output
    figures = [(r["level"], r["value"]) for r in rows]
    assert [(r["level"], r["value"]) for r in json.loads(res.output)["rows"]] == figures
    res = runner.invoke(app, ["meta", str(tmp_path / "scores.jsonl"), "-b", "dstc9", *dim, "-l", "turn"])
    assert {r["note"] for r in json.loads(res.output)["rows"]} == {
        'undefined: "human (overall)" is rated per dialogue, not per item: use the dialogue level'
    }


def test_benchmark_ranks_the_model_metrics_next_to_the_lexical_ones(tmp_path: Path, shared_data: Path) -> None:
    out = tmp_path / "run"
    families = "length,embedding,likelihood,bertscore,style"
    res = runner.invoke(app, ["benchmark", "--metrics", families, "--limit", "2", "--boot", "0", "--level", "turn",
                              "--method", "pearson", "-o", str(out), "--json", "--no-cache"])  # fmt: skip
    assert res.exit_code == 0, res.output
    # stdout only: a first load of the packaged GGUF prints a conversion progress bar on stderr
    rows = {r["metric"]: r for r in json.loads(res.stdout)["rows"]}
    outputs = {"length", "sbert_ref", "sbert_context", "lm_likelihood", "lm_likelihood_uncond", "lm_context_gain",
               "bertscore_p", "bertscore_r", "bertscore_f1", "style_strength"}  # fmt: skip
    assert outputs <= set(rows)
    _, human = _raw_length_and_overall(shared_data, 2)
    scores = read_jsonl(out / "scores.jsonl", Score)
    for metric in outputs:  # each row is the plain Pearson of the written scores with the raw human means
        values = np.array([s.value for s in scores if s.metric == metric], dtype=float)
        assert len(values) == 12 and np.isfinite(values).all()
        assert rows[metric]["value"] == pytest.approx(stats.pearsonr(values, human).statistic, abs=1e-9)
    table = (out / "table.md").read_text()
    assert "| lm_likelihood |" in table and "| bertscore_f1 |" in table and "| length |" in table


def test_benchmark_says_when_quality_was_fitted_on_the_benchmark(tmp_path: Path) -> None:
    """The shipped quality ensemble saw usr-tc's ratings: the table is followed by that note and the held-out figure."""
    res = runner.invoke(
        app, ["benchmark", "-m", "quality,length", "--limit", "1", "--boot", "20", "-o", str(tmp_path), "-q"]
    )
    assert res.exit_code == 0, res.output
    text = " ".join(res.output.split())
    from dialeval.metrics.quality import BUNDLED

    card = json.loads((BUNDLED / "quality" / "card.json").read_text())
    held = next(r for r in card["leave_one_benchmark_out"] if r["benchmark"] == "usr-tc")["quality"]["spearman"]
    assert "quality was fitted on usr-tc's ratings" in text
    assert f"fitted without usr-tc, its turn Spearman there is {held:.3f}" in text


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["benchmark", "-m", "length", "--seed", "-1"], 'field "--seed": must be >= 0, got -1'),
        (["meta", "{scores}", "-b", "usr-tc", "--seed", "-1"], 'field "--seed": must be >= 0, got -1'),
        (["stress", "-m", "length", "--seed", "-1"], 'field "--seed": must be >= 0, got -1'),
        (["stress", "-m", "length", "--boot", "-1"], 'field "--n-boot": must be >= 0'),
        (["train", "--train", "usr-tc", "--test", "usr-pc", "--seed", "-1"], 'field "--seed": must be >= 0, got -1'),
        (["generate", "--seed", "-1"], 'field "--seed": must be >= 0, got -1'),
        (["judge", "run", "--protocol", "dialogadv", "-p", "seed=-1"],
         "judge:dialogadv.seed=-1: must be between 0 and 4293966292 (seed + k + the retry's offset stay 32-bit)"),
        # seeds are 32-bit (llama.cpp's); torch's manual_seed overflowed at 2**64
        (["benchmark", "-m", "length", "--seed", str(2**32)],
         'field "--seed": must be at most 4,294,967,295 (seeds are 32-bit), got 4,294,967,296'),
        (["generate", "--seed", str(2**64)], 'field "--seed": must be at most 4,294,967,295'),
        (["judge", "run", "--protocol", "dialogadv", "-p", f"seed={2**32}"],
         "judge:dialogadv.seed=4294967296: must be between 0 and 4293966292"),
        # HTTP 400 for each request from llama.cpp; an OverflowError traceback; a request llama.cpp never answered
        (["judge", "run", "--protocol", "dialogadv", "-p", f"max_tokens={2**31}"],
         "judge:dialogadv.max_tokens=2147483648: must be between 1 and 2147483647"),
        (["judge", "run", "--protocol", "dialogadv", "-p", f"in_flight={10**20}"],
         f"judge:dialogadv.in_flight={10**20}: must be between 0 and 1024"),
        (["judge", "run", "--protocol", "dialogadv", "-p", "top_logprobs=21"],
         "judge:dialogadv.top_logprobs=21: must be between 0 and 20"),
        # k samples per item: the requests were built until memory ran out, silently (killed after 60 s)
        (["judge", "run", "--protocol", "dialogadv", "-p", "mode=sample", "-p", f"k={10**20}"],
         f"judge:dialogadv.k={10**20}: must be between 1 and 1000 (samples per item)"),
        (["lmstyle", "--judge-k", "1001"], 'field "--judge-k": must be at most 1,000 samples per response, got 1,001'),
    ],
    ids=["benchmark", "meta", "stress", "stress-boot", "train", "generate", "judge", "benchmark-32", "generate-64",
         "judge-32", "judge-max-tokens", "judge-in-flight", "judge-top-logprobs", "judge-k", "lmstyle-judge-k"],
)
def test_a_seed_resample_count_or_request_size_out_of_range_is_refused_before_any_work(
    tmp_path: Path, args: list[str], message: str
) -> None:
    """numpy takes no negative seed: benchmark, meta, stress and train stopped in its ValueError after the
    scoring (stress --boot -1 too). llama.cpp reads a negative seed as a random one: generate and the judge
    gave other responses on every run under the same signature."""
    scores = tmp_path / "s.jsonl"
    scores.write_text('{"item_id": "x", "metric": "length", "value": 1.0}\n')
    out = tmp_path / "out"
    limit = {"meta": [], "generate": ["--n", "1"], "lmstyle": ["--n", "1"]}.get(args[0], ["--limit", "1"])
    output = {"meta": [], "judge": ["--out", str(out)]}.get(args[0], ["-o", str(out)])
    res = runner.invoke(app, [*(a.format(scores=scores) for a in args), *limit, *output])
    assert res.exit_code == 2 and message in res.output, res.output
    assert not out.exists()


def test_a_rerun_into_a_folder_removes_an_earlier_meta_paired_test(tmp_path: Path) -> None:
    """meta --compare length,sacrebleu -o OUT, then benchmark -m chrf -o OUT: compare.json stayed, and dialeval report
    showed its paired test of length and sacrebleu under the new table of chrf, as that run's."""
    out = tmp_path / "run"
    args = ["--limit", "4", "--boot", "20", "-o", str(out)]
    assert runner.invoke(app, ["benchmark", "--metrics", "length,sacrebleu", *args]).exit_code == 0
    res = runner.invoke(app, ["meta", str(out / "scores.jsonl"), "-b", "usr-tc", "--compare", "length,sacrebleu",
                              "--boot", "20", "-o", str(out)])  # fmt: skip
    assert res.exit_code == 0 and (out / "compare.json").is_file(), res.output
    res = runner.invoke(app, ["benchmark", "--metrics", "chrf", *args], terminal_width=300)
    assert res.exit_code == 0, res.output
    assert f"removed {out}/{{compare.json}}: an earlier run's, which this run does not write" in res.output
    assert not (out / "compare.json").exists()
    report = tmp_path / "report.md"
    assert runner.invoke(app, ["report", str(out), "-o", str(report)]).exit_code == 0
    assert "paired test" not in report.read_text()


def test_benchmark_says_which_values_read_a_text_in_part(tmp_path: Path) -> None:
    """USR Topical-Chat's first context has a fact of more than 256 word pieces (all-minilm-l6-v2's tokenizer: 339),
    which the encoder reads in part: the main job's sbert_knowledge read 30 such facts with nothing said, and the
    tokenizer's own 'longer than the specified maximum' line was on stderr."""
    res = runner.invoke(app, ["benchmark", "-b", "usr-tc", "--limit", "1", "-m", "embedding", "--boot", "0",
                              "-o", str(tmp_path / "b"), "--no-cache"])  # fmt: skip
    assert res.exit_code == 0, res.output
    said = " ".join(res.output.split())
    assert ("note sbert_knowledge: 6 of 6 values read a text in part (a fact or persona line read to its first 256 "
            "word pieces (the encoder's limit))") in said  # fmt: skip
    assert "sbert_ref:" not in said  # the stderr line the cut check no longer causes: tests/metrics/test_embedding.py
    scores = [json.loads(x) for x in (tmp_path / "b" / "scores.jsonl").read_text().splitlines()]
    assert sum("cut" in s["extras"] for s in scores) == 6


def test_the_lines_under_the_table_go_into_table_md_and_run_json(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A metric not run (here one the scoring is made to skip), in-sample and cut notes were printed under the table
    only: table.md had the warnings alone and run.json none of them, so `dialeval report` could not show them. Both
    now hold every line --json gives as its notes, and the report shows run.json's."""
    import dialeval.commands.benchmark as command

    real = command.score_request
    monkeypatch.setattr(command, "score_request", lambda *a: (real(*a)[0], {"bleurt": "needs bleurt-pytorch"}))
    out = tmp_path / "run"
    res = runner.invoke(app, ["benchmark", "-m", "length", "--limit", "3", "--boot", "20", "-o", str(out), "--json"])
    assert res.exit_code == 0, res.output
    said = json.loads(res.stdout)["notes"]
    assert said[0] == "not run bleurt: needs bleurt-pytorch" and any("20 resamples" in line for line in said[1:])
    assert json.loads((out / "run.json").read_text())["notes"] == said
    table = (out / "table.md").read_text()
    assert all(f"\n{line}\n" in table for line in said)
    assert runner.invoke(app, ["report", str(out), "-o", str(tmp_path / "r.md")]).exit_code == 0
    report = (tmp_path / "r.md").read_text()
    assert all(report.count(f"\n{line}\n") == 1 for line in said)  # the warnings once: not recomputed beside them


def test_the_data_warnings_are_said_on_the_screen_and_under_the_table(tmp_path: Path, shared_data: Path) -> None:
    """A catalog benchmark read from a file whose sha256 is not the catalog's was warned of nowhere on the screen
    (only `score --json` listed it), and benchmark's --json notes, table.md and run.json never held a warning of
    the data (an unread column of a user's table neither). Each is now said once on the screen and kept with the
    lines under the table."""
    raw = json.loads((shared_data / "usr/pc_usr_data.json").read_text())
    raw[0]["responses"][0]["Overall"] = [1, 1, 1]  # as tests/data/test_catalog.py edits a release
    given = tmp_path / "pc_usr_data.json"
    given.write_text(json.dumps(raw))
    warning = f"{given}: sha256 differs from the catalog's (a different release?)"
    argv = ["benchmark", "-b", "usr-pc", "--path", str(given), "-m", "length", "--limit", "3", "--boot", "0"]
    shown = runner.invoke(app, [*argv, "-o", str(tmp_path / "a")])
    assert shown.exit_code == 0, shown.output
    assert shown.output.replace("\n", "").count(warning) == 1  # wrapped or not, once
    res = runner.invoke(app, [*argv, "-o", str(tmp_path / "b"), "--json"])
    assert res.exit_code == 0, res.output
    said = json.loads(res.stdout)["notes"]
    assert said.count(warning) == 1
    assert json.loads((tmp_path / "b/run.json").read_text())["notes"] == said
    assert f"\n{warning}\n" in (tmp_path / "b/table.md").read_text()
