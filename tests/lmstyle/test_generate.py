"""Real generation with the packaged SmolLM2 through llama.cpp: seeded reruns, the signature, the cache, the CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.commands.cli_runner import invoke, refused
from tests.test_cli import _interrupt
from typer.testing import CliRunner

from dialeval.cli import app
from dialeval.jsonl import read_jsonl
from dialeval.lmstyle.generate import GenerationSettings, generate_styled, make_generator
from dialeval.lmstyle.prompt import read_pairs
from dialeval.schema import Candidate

pytest.importorskip("xllamacpp")
SETTINGS = GenerationSettings(temperature=0.8, max_tokens=12, seed=7)


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("DIALEVAL_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache"


def test_seeded_generation_is_deterministic_and_signed(shared_data: Path, cache: Path) -> None:
    backend, label = make_generator("smollm2")
    data = {"dd": read_pairs(shared_data, "dd")}
    runs = [generate_styled(backend, label, data, ["formal", "negative"], 2, SETTINGS, use_cache=False, in_flight=1)
            for _ in range(2)]  # fmt: skip
    first, second = ([c.text for c in r.candidates] for r in runs)
    assert first == second and len(first) == 4
    assert sum(1 for t in first if t) >= 2  # the model answers most of them
    assert all("###" not in t and "\n" not in t for t in first)  # cut at the stop strings
    sig = runs[0].signature
    for part in ("temperature:0.8", "max_tokens:12", "stop:###,\\n", "seed:7", "prompt:lmstyle-fig3",
                 "backend:llamacpp:SmolLM2-135M-Instruct"):  # fmt: skip
        assert part in sig
    c = runs[0].candidates[0]
    assert {k: v for k, v in c.tags.items() if k != "cut"} == {"dataset": "dd", "style": "formal", "task": "Formal",
                                                                "model": "smollm2"}  # fmt: skip
    # 12 tokens cut some: each of those is tagged, the others are not
    cut = [r for r in runs[0].candidates if r.tags.get("cut") == "max_tokens"]
    assert len(cut) == runs[0].counts["cut_by_max_tokens"] and all(set(r.tags) <= {*c.tags, "cut"} for r in cut)
    assert c.references == [data["dd"][0].reference] and c.system == "smollm2" and c.turn_index == 1
    assert runs[0].dialogues[c.dialogue_id].turns[0].text == data["dd"][0].query
    # another seed is another request: it is not answered from the first one's cache entry
    cached = generate_styled(backend, label, data, ["formal"], 1, SETTINGS, use_cache=True)
    again = generate_styled(backend, label, data, ["formal"], 1, SETTINGS, use_cache=True)
    assert cached.counts["calls"] == 1 and again.counts["calls"] == 0 and again.counts["cache_hits"] == 1
    assert again.candidates[0].text == first[0]


def test_lmstyle_command_writes_rescorable_records(
    shared_data: Path, cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "run"
    args = ["lmstyle", "--n", "1", "--datasets", "dd", "--styles", "informal", "--max-tokens", "10",  # --n still read
            "--metrics", "style,sacrebleu", "--compare-paper", "--output", str(out)]  # fmt: skip
    monkeypatch.setattr("sys.argv", ["dialeval", *args])
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 0, res.output
    assert "### Table 4: formality tasks per dataset" in res.output
    assert "| Daily Dialog | smollm2 | ours |" in res.output and "| Daily Dialog | Vicuna-13B | paper |" in res.output
    cands = read_jsonl(out / "candidates.jsonl", Candidate)
    assert [c.id for c in cands] == ["lmstyle-dd-0000:informal:smollm2"]
    run = json.loads((out / "run.json").read_text())
    assert run["kind"] == "lmstyle" and run["command"].startswith("dialeval lmstyle --n 1")
    assert "max_tokens:10" in run["generation"]["smollm2"]["signature"]
    assert set(run["metrics"]) == {"style:informal", "sacrebleu"}
    scores = [json.loads(line) for line in (out / "scores.jsonl").read_text().splitlines()]
    assert {s["metric"] for s in scores} == {"style_match", "style_strength", "sacrebleu"}
    rescored = tmp_path / "rescored.jsonl"
    records = ["--dialogues", str(out / "dialogues.jsonl"), "--candidates", str(out / "candidates.jsonl")]
    res = CliRunner().invoke(app, ["score", *records, "--metrics", "sacrebleu", "-o", str(rescored)])
    assert res.exit_code == 0, res.output
    assert json.loads(rescored.read_text().splitlines()[0])["value"] == next(
        s["value"] for s in scores if s["metric"] == "sacrebleu"
    )


def test_lmstyle_resumes_from_the_score_cache_and_computes_only_what_is_missing(
    shared_data: Path, cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run killed after some batches were committed leaves a partial score cache (made here by deleting
    committed rows): the rerun computes only the missing items and writes the scores of a fresh run."""
    from tests.partial_cache import count_computed, drop_cached

    from dialeval.metrics.lexical import SacreBleu

    computed = count_computed(monkeypatch, SacreBleu)
    args = ["lmstyle", "--limit", "3", "--datasets", "dd", "--styles", "informal,formal", "--max-tokens", "8",
            "--metrics", "sacrebleu,style"]  # fmt: skip

    def run(out: str, score_cache: Path) -> str:
        res = CliRunner().invoke(app, [*args, "--cache", str(score_cache), "--output", str(tmp_path / out)])
        assert res.exit_code == 0, res.output
        return (tmp_path / out / "scores.jsonl").read_text()

    scores = tmp_path / "scores.sqlite"
    run("first", scores)
    everything = len(computed)
    assert everything >= 4  # 6 responses, fewer if the model repeats itself
    deleted = drop_cached(scores, "sacrebleu", 2)
    assert deleted == 2
    computed.clear()
    resumed = run("resumed", scores)
    assert len(computed) == deleted
    computed.clear()
    fresh = run("fresh", tmp_path / "fresh.sqlite")
    assert len(computed) == everything
    assert resumed == fresh
    run_info = json.loads((tmp_path / "resumed" / "run.json").read_text())
    assert run_info["cache"] == str(scores) and run_info["engine"] == {"engine": "local"}


def test_generate_command_rejects_bad_settings(tmp_path: Path) -> None:
    res = CliRunner().invoke(app, ["generate", "--max-tokens", "0", "-o", str(tmp_path)])
    assert res.exit_code == 2 and "--max-tokens" in res.output
    res = CliRunner().invoke(app, ["generate", "--styles", "polite", "-o", str(tmp_path)])
    assert res.exit_code == 2 and 'unknown style "polite"' in res.output
    # a negative temperature was sent to the backend, which sampled anyway; --limit 0 said "generating 0 responses"
    # and --n -1 "generating -8 responses" before the dataset refused them
    # "--datasets dd," was read as dd; "--styles ''" said "need at least one dataset and one style"
    # "inf" was refused as "must be 0 (greedy) or more", which it is
    for args, message in ((["--temperature", "-1"], 'field "--temperature": must be 0 (greedy) or a larger finite '
                                                    "number, got -1.0"),
                          (["--temperature", "inf"], 'field "--temperature": must be 0 (greedy) or a larger finite '
                                                     "number, got inf"),
                          (["--limit", "-1"], 'field "--limit": must be at least 1, got -1'),
                          # refused after the model loaded and "generating 996 responses", as 'field "n"'
                          (["--datasets", "bst", "--limit", "996"],
                           'BST/query.txt: field "--limit": must be between 1 and 995, got 996 (1000 query lines, '
                           "the last 5 of them the shots)"),
                          (["--datasets", "dd,"], 'field "--datasets": empty dataset name in "dd," (name 2 of 2)'),
                          (["--styles", ""], 'field "--styles": empty style name'),
                          # it named "dataset", a field of no option
                          (["--datasets", "dd,xx"], 'field "--datasets": unknown dataset "xx"; known: dd, bst'),
                          # refused only after generating with it twice
                          (["--model", "smollm2", "--model", "smollm2"],
                           'field "--model": model "smollm2" is given twice')):  # fmt: skip
        res = CliRunner().invoke(app, ["generate", *args, "-o", str(tmp_path / "g")])
        assert res.exit_code == 2 and message in res.output and "generating" not in res.output, res.output
    assert not (tmp_path / "g").exists()


def test_a_name_given_twice_and_an_empty_stop_are_refused(tmp_path: Path) -> None:
    """--styles formal,Formal once generated the same style twice (then was deduplicated silently), and
    --datasets dd,dd was deduplicated silently; each is now refused, as a name given twice is by every command.
    --stop '' ran, and every one of its responses came back empty."""
    for args, message in ((["--styles", "formal,Formal"], 'field "--styles": style "formal" is given twice'),
                          (["--datasets", "dd,dd"], 'field "--datasets": dataset "dd" is given twice'),
                          (["--stop", ""], 'field "--stop": an empty stop string ends every response before it'),
                          (["--stop", "x", "--stop", "x"], 'field "--stop": stop string "x" is given twice'),
                          (["--max-tokens", "0"], 'field "--max-tokens": must be at least 1, got 0'),
                          # "'unicodeescape' codec can't decode bytes in position 0-2: truncated \xXX escape"
                          (["--stop", "\\x4"], 'field "--stop": "\\x4" holds an escape that is cut short or unknown '
                                               "(truncated \\xXX escape); write a backslash as \\\\"),
                          (["--stop", "a\\"], 'field "--stop": "a\\" holds an escape that is cut short or unknown'),
                          # every request came back HTTP 400 from llama.cpp, and the run wrote 0 candidates, exit 0
                          (["--max-tokens", str(2**31)], 'field "--max-tokens": must be at most 2,147,483,647 '
                                                         "(llama.cpp's is a C int), got 2,147,483,648")):  # fmt: skip
        res = CliRunner().invoke(app, ["generate", "--limit", "1", *args, "-o", str(tmp_path / "g")])
        assert res.exit_code == 2 and message in " ".join(res.output.split()), res.output
    assert not (tmp_path / "g").exists()


def test_a_metric_given_twice_is_refused_before_generating(tmp_path: Path) -> None:
    """lmstyle -m style -m style scored every response twice: scores.jsonl held each style_match and style_strength
    twice and summary.jsonl said "ACC% scored 2/2" of one response. It is now refused, as score and benchmark refuse
    a metric given twice, before any model loads."""
    args = ["lmstyle", "--limit", "1", "--datasets", "dd", "--styles", "formal", "-m", "style", "-m", "sacrebleu",
            "-m", "style", "-o", str(tmp_path / "l")]  # fmt: skip
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 2, res.output
    assert 'field "--metrics": metric "style" is given twice' in res.output
    assert "generating" not in res.output and not (tmp_path / "l").exists()


def test_the_judge_settings_are_checked_before_generating(tmp_path: Path) -> None:
    """A --judge-k below 1 or a --judge-model that is not there stopped lmstyle only after every response was
    generated (--judge-k 0 named "--param"); given while -m leaves the judge out, they were ignored, and when both
    were given the error named --judge-k only."""
    base = ["lmstyle", "--limit", "1", "--datasets", "dd", "--styles", "formal", "-o", str(tmp_path / "l")]
    for args, message in ((["--judge-k", "0"], 'field "--judge-k": must be at least 1, got 0'),
                          (["-m", "judge", "--judge-model", str(tmp_path / "no.gguf")],
                           f'{tmp_path / "no.gguf"}: field "--judge-model": model file not found (give a GGUF file)'),
                          (["-m", "style", "--judge-k", "3"], 'field "--judge-k": sets the judge, which -m leaves out'),
                          (["-m", "style", "--judge-model", "x.gguf"],
                           'field "--judge-model": sets the judge, which -m leaves out'),
                          # it named --judge-k only, as if --judge-model had been taken
                          (["-m", "style", "--judge-model", "x.gguf", "--judge-k", "2"],
                           'field "--judge-model": sets the judge, which -m leaves out (as does --judge-k, given '
                           "too)")):  # fmt: skip
        res = CliRunner().invoke(app, [*base, *args])
        assert res.exit_code == 2 and message in " ".join(res.output.split()), res.output
        assert "generating" not in res.output
    assert not (tmp_path / "l").exists()


def test_an_empty_model_spec_is_refused_naming_its_option(tmp_path: Path) -> None:
    """--judge-model "" (an unset shell variable) ran the packaged smollm2 judge while run.json recorded its model
    as "", and --model "" generated with smollm2; an empty value is refused, as --stop "" and --output "" are."""
    base = ["--limit", "1", "--datasets", "dd", "--styles", "formal", "-o", str(tmp_path / "l")]
    for args, option in ((["lmstyle", "-m", "judge", "--judge-model", ""], "--judge-model"),
                         (["lmstyle", "-m", "judge", "--judge-model", "  "], "--judge-model"),
                         (["generate", "--model", ""], "--model")):  # fmt: skip
        line = refused(invoke(*args, *base), f'field "{option}": is empty; give smollm2 (packaged), a GGUF file')
        assert "generating" not in line
    assert not (tmp_path / "l").exists()


def test_every_model_is_checked_before_the_first_generates(tmp_path: Path) -> None:
    """A second --model that was not there, or a second name of the first one, ended the run after the first
    model had generated all its responses; a path that was not there said only "not a local model directory".
    A second model at a URL that is not http(s) ended it there too, and @URL with no name said 'field "model":
    ... needs model (-p model=...)', an option generate does not take."""
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "a").mkdir()  # another folder of the same name: the same label
    base = ["generate", "--limit", "1", "--datasets", "dd", "--styles", "formal", "-o", str(tmp_path / "g")]
    cases = ((["--model", "smollm2", "--model", "gpt2"],
              'gpt2: field "--model": not found: give smollm2 (packaged), a GGUF file, a transformers model folder '
              "or NAME@URL (an OpenAI-compatible server)"),
             (["--model", "smollm"],  # a slip of the packaged model's name: it was the same list, with no hint
              'smollm: field "--model": not found; did you mean "smollm2" (packaged)? Else give a GGUF file, '),
             (["--model", "smollm2", "--model", str(tmp_path / "a"), "--model", str(tmp_path / "b" / "a")],
              'field "--model": model "a" is listed twice'),
             (["--model", "smollm2", "--model", "m@file:///srv/v1"],
              "cannot reach file:///srv/v1: the URL must start with http:// or https://"),
             (["--model", "smollm2", "--model", "@http://127.0.0.1:9/v1"],
              'field "--model": names no model before "@": give NAME@URL, NAME as the server knows it'))  # fmt: skip
    for args, message in cases:
        res = CliRunner().invoke(app, [*base, *args])
        assert res.exit_code == 2 and message in " ".join(res.output.split()), res.output
        assert "generating" not in res.output
    assert not (tmp_path / "g").exists()


def test_generate_says_what_it_did_in_words(tmp_path: Path) -> None:
    """The summary per model was a Python dict's repr ({'signature': ..., 'cache_hits': 0, ...})."""
    args = ["generate", "--limit", "1", "--datasets", "dd", "--styles", "formal", "--max-tokens", "2",
            "--temperature", "0", "--no-cache", "-o", str(tmp_path)]  # fmt: skip
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 0, res.output
    info = json.loads((tmp_path / "generation.json").read_text())["models"]["smollm2"]
    line = " ".join(res.output.split())
    assert (f"smollm2: 1 response: 1 generated ({info['completion_tokens']} tokens), 0 from the request cache, "
            f"{info['empty']} empty, 1 cut by --max-tokens; {info['seconds']} s; signature {info['signature']}"
            ) in line  # fmt: skip
    assert info["cut_by_max_tokens"] == 1  # its 2 tokens are --max-tokens 2: the model was cut, not done
    assert "{" not in res.output



@pytest.mark.parametrize("command", ["generate", "lmstyle"])
def test_an_output_folder_whose_records_are_its_query_file_is_refused(tmp_path: Path, command: str) -> None:
    """OUTPUT/dialogues.jsonl is a hard link to the --data query file: one error line before any model is built
    (a missing .gguf here), and the query file is unchanged."""
    data = tmp_path / "data"
    query, ref = data / "lmstyle" / "BST" / "query.txt", data / "lmstyle" / "BST" / "ref" / "ref.txt"
    ref.parent.mkdir(parents=True)
    query.write_text("".join(f"question {i} ?\n" for i in range(8)))
    ref.write_text("".join(f"answer {i} .\n" for i in range(8)))
    before = query.read_bytes()
    out = tmp_path / "run"
    out.mkdir()
    (out / "dialogues.jsonl").hardlink_to(query)
    res = invoke(command, "--data", data, "--datasets", "bst", "--styles", "formal", "--limit", "1",
                 "--model", tmp_path / "missing.gguf", "--no-cache", "-o", out)  # fmt: skip
    line = refused(res, f'{out / "dialogues.jsonl"}: field "--output"', f"is the file given to --data ({query})")
    assert "destroy the input" in line
    assert query.read_bytes() == before
    assert sorted(p.name for p in out.iterdir()) == ["dialogues.jsonl"]

def test_lmstyle_with_three_backends_and_every_metric(
    shared_data: Path, cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, llama_url: str
) -> None:
    """Three generators in one command (in process, NAME@URL on the llama.cpp server, a transformers folder),
    all five metrics, the judge on the server; every model gets its rows, summary and generation signature."""
    from dialeval.models.loading import _converted_dir, resolve_lm_source

    folder = _converted_dir(resolve_lm_source("smollm2-135m"))
    out = tmp_path / "run"
    args = ["lmstyle", "--limit", "1", "--datasets", "dd", "--styles", "formal,positive", "--max-tokens", "8",
            "--model", "smollm2", "--model", f"served@{llama_url}", "--model", str(folder),
            "--judge-model", f"served@{llama_url}", "--judge-k", "1",
            "--metrics", "style,sacrebleu,embedding,likelihood,judge", "--output", str(out)]  # fmt: skip
    monkeypatch.setattr("sys.argv", ["dialeval", *args])
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 0, res.output
    labels = ["smollm2", "served", folder.name]
    cands = read_jsonl(out / "candidates.jsonl", Candidate)
    assert sorted(c.system for c in cands) == sorted(labels * 2)  # 1 query x 2 styles per model
    run = json.loads((out / "run.json").read_text())
    assert set(run["generation"]) == set(labels)
    assert run["generation"]["served"]["signature"] != run["generation"]["smollm2"]["signature"]
    scores = [json.loads(line) for line in (out / "scores.jsonl").read_text().splitlines()]
    metrics = {s["metric"] for s in scores}
    assert {"style_match", "sacrebleu", "sbert_ref", "lm_likelihood", "judge:lmstyle-appropriateness"} <= metrics
    judged = [s for s in scores if s["metric"] == "judge:lmstyle-appropriateness"]
    assert len(judged) == 6 and all(s["value"] is None or 0 <= s["value"] <= 100 for s in judged)
    assert run["judge"]["responses"] == 6 and run["judge"]["scored"] == sum(s["value"] is not None for s in judged)
    summary = [json.loads(line) for line in (out / "summary.jsonl").read_text().splitlines()]
    assert sorted(r["model"] for r in summary) == sorted(labels)
    for label in labels:
        assert f"| Daily Dialog | {label} | ours |" in res.output


def test_json_prints_what_the_commands_wrote(tmp_path: Path) -> None:
    """generate and lmstyle had no --json (train, benchmark, stress, score, meta and judge run have it): generate
    prints generation.json, lmstyle its run.json, its table cells and its summary rows, and nothing else."""
    base = ["--limit", "1", "--datasets", "dd", "--styles", "formal", "--max-tokens", "2", "--temperature", "0"]
    res = CliRunner().invoke(app, ["generate", *base, "--json", "-o", str(tmp_path / "g")])
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout) == json.loads((tmp_path / "g" / "generation.json").read_text())
    res = CliRunner().invoke(app, ["lmstyle", *base, "-m", "style,sacrebleu", "--json", "-o", str(tmp_path / "l")])
    assert res.exit_code == 0, res.output
    printed, out = json.loads(res.stdout), tmp_path / "l"
    assert printed["run"] == json.loads((out / "run.json").read_text())
    assert printed["tables"] == [json.loads(x) for x in (out / "lmstyle_tables.jsonl").read_text().splitlines()]
    assert printed["summary"] == [json.loads(x) for x in (out / "summary.jsonl").read_text().splitlines()]


def test_failed_generation_requests_say_why_and_exit_1(tmp_path: Path, cache: Path, llama_url: str) -> None:
    """A real proxy on 127.0.0.1 answers the first request HTTP 400 and forwards the other to the llama.cpp
    server. generate wrote the response that came back, said "1 failed (not written)" without the reason,
    and exited 0. It now writes the same, names the reason and exits 1; a rerun asks again for the failed one
    only (the other is in the request cache), and --allow-failures exits 0."""
    from tests.judges.test_fault_injection import FaultProxy

    proxy = FaultProxy(llama_url, {1: "400"})
    out = tmp_path / "g"
    args = ["generate", "--limit", "1", "--datasets", "dd", "--styles", "formal,informal", "--max-tokens", "4",
            "--temperature", "0", "--model", f"served@{proxy.url}", "-o", str(out)]  # fmt: skip
    try:
        res = CliRunner().invoke(app, args, terminal_width=400)
        assert res.exit_code == 1, res.output
        errors = [line for line in res.output.splitlines() if line.startswith("error:")]
        assert errors == ['error: 1 of 2 responses was not generated because requests failed (served: 1 x HTTP 400: '
                          '{"error": "injected"}); the 1 that came back was written; rerun to try the failed ones '
                          "again, or pass --allow-failures to accept them"], res.output  # fmt: skip
        line = " ".join(res.output.split())
        assert ('served: 2 responses: 1 generated (4 tokens), 0 from the request cache, 0 empty, 1 cut by '
                '--max-tokens, 1 failed (not written: 1 x HTTP 400: {"error": "injected"})') in line
        info = json.loads((out / "generation.json").read_text())["models"]["served"]
        assert (info["requests"], info["failed"], info["failures"]) == (2, 1, {'HTTP 400: {"error": "injected"}': 1})
        assert len(read_jsonl(out / "candidates.jsonl", Candidate)) == 1

        res = CliRunner().invoke(app, [*args, "--allow-failures"])
        assert res.exit_code == 0, res.output
        assert proxy.seen == 3  # the failed request only: the other came from the request cache
        assert len(read_jsonl(out / "candidates.jsonl", Candidate)) == 2
        assert "failures" not in json.loads((out / "generation.json").read_text())["models"]["served"]
    finally:
        proxy.close()


def test_lmstyle_exits_1_when_generation_fails_and_writes_what_came_back(tmp_path: Path, cache: Path) -> None:
    """Every request answered HTTP 400 by a real server on 127.0.0.1: lmstyle wrote its tables over no response
    and exited 0. It now writes them, counts the failures by reason in run.json, and exits 1 unless
    --allow-failures."""
    from tests.judges.test_fault_injection import FaultProxy

    proxy = FaultProxy("http://127.0.0.1:9/v1", dict.fromkeys(range(1, 100), "400"))
    out = tmp_path / "l"
    args = ["lmstyle", "--limit", "1", "--datasets", "dd", "--styles", "formal", "-m", "style",
            "--model", f"served@{proxy.url}", "-o", str(out)]  # fmt: skip
    try:
        res = CliRunner().invoke(app, args, terminal_width=400)
        assert res.exit_code == 1, res.output
        assert "error: 1 of 1 response was not generated because requests failed (served: 1 x HTTP 400" in res.output
        assert '{"error": "injected"}); none came back; rerun' in res.output
        assert "Traceback" not in res.output
        run = json.loads((out / "run.json").read_text())
        assert run["generation"]["served"]["failures"] == {'HTTP 400: {"error": "injected"}': 1}
        assert (out / "table.md").exists() and read_jsonl(out / "candidates.jsonl", Candidate) == []
        res = CliRunner().invoke(app, [*args, "--allow-failures"])
        assert res.exit_code == 0, res.output
        heading = (out / "table.md").read_text().splitlines()[0]  # it said "n=1 per dataset and style"
        assert heading == "# LMStyle benchmark, 0 of 1 response scored (n=1 per dataset and style; 1 generation failed)"
    finally:
        proxy.close()


def test_table_md_counts_the_responses_scored_after_a_failed_generation(
    tmp_path: Path, cache: Path, llama_url: str
) -> None:
    """A real proxy on 127.0.0.1 answers the first of two generation requests HTTP 400 and forwards the other to the
    llama.cpp server; --allow-failures accepts it. table.md's heading said "n=1 per dataset and style" over the one
    response that came back; it now says 1 of the 2 responses asked for was scored, and why the other was not.
    Its cells averaged the response that came back without a word, and the failed style's cell was a bare "-": each
    cell now reads how many of the responses asked for it averages ("(1/2)")."""
    from tests.judges.test_fault_injection import FaultProxy

    proxy = FaultProxy(llama_url, {1: "400"})
    out = tmp_path / "l"
    args = ["lmstyle", "--limit", "1", "--datasets", "dd", "--styles", "formal,informal", "--max-tokens", "4",
            "--temperature", "0", "-m", "style", "--model", f"served@{proxy.url}", "-o", str(out), "--allow-failures"]
    try:
        res = CliRunner().invoke(app, args, terminal_width=400)
        assert res.exit_code == 0, res.output
    finally:
        proxy.close()
    # 1 dataset x 2 styles x --limit 1 = 2 asked for, 1 refused by the proxy: one response, scored once
    assert len(read_jsonl(out / "candidates.jsonl", Candidate)) == 1
    assert sorted(json.loads(x)["metric"] for x in (out / "scores.jsonl").read_text().splitlines()) == [
        "style_match", "style_strength"]
    heading = (out / "table.md").read_text().splitlines()[0]
    assert heading == "# LMStyle benchmark, 1 of 2 responses scored (n=1 per dataset and style; 1 generation failed)"
    # the cells said nothing of it: Table 2's Formality ACC% averaged the one response of the two asked for, and the
    # failed style's Table 4 cell was a bare "-". Each now reads how many of the responses asked for it averages.
    (back,) = read_jsonl(out / "candidates.jsonl", Candidate)
    kept = back.tags["style"]
    lost = next(s for s in ("formal", "informal") if s != kept)  # the proxy refuses the first request to arrive
    scores = [json.loads(line) for line in (out / "scores.jsonl").read_text().splitlines()]
    acc = 100.0 * next(s["value"] for s in scores if s["metric"] == "style_match")  # ACC% of the one response
    lines = (out / "lmstyle_tables.jsonl").read_text().splitlines()
    cells = {(c["table"], c["column"]): (c["value"], c["scored"]) for c in map(json.loads, lines)}
    assert cells[("table2", "Formality ACC%")] == (acc, "1/2")
    assert cells[("table4", f"{lost.title()} ACC%")] == (None, "0/1")
    assert cells[("table4", f"{kept.title()} ACC%")] == (acc, None)  # all the responses asked for: as before
    # -m style: the metrics not run, and the styles not asked for, are empty cells with no count, as before
    assert cells[("table4", f"{lost.title()} BLEU")] == cells[("table5", "Positive ACC%")] == (None, None)
    columns = {"formal": ["- (0/1)", "-", "-", "-", "-"], "informal": [f"{acc:.1f}", "-", "-", "-", "-"]}
    if lost == "informal":
        columns = {"formal": columns["informal"], "informal": columns["formal"]}
    md = (out / "table.md").read_text()
    assert f"| Daily Dialog | served | ours | {' | '.join(columns['formal'] + columns['informal'])} |" in md
    assert f"| served | ours | {acc:.1f} (1/2) | - | - | - | - | - |" in md
    # Table 2 averages the Formal and Informal styles asked for (it said "the Informal style only" where formal failed)
    title = next(json.loads(line)["title"] for line in lines if json.loads(line)["table"] == "table2")
    assert title == "Table 2: formality and sentiment tasks, Daily Dialog only, the Formal and Informal styles only"


def test_lmstyle_exits_1_when_judge_requests_fail(tmp_path: Path, cache: Path) -> None:
    """The judge's server answers every request HTTP 400 (a real server on 127.0.0.1): the judge scores are null
    and say why, and lmstyle exited 0. It now exits 1 with the judge's line, as judge run does."""
    from tests.judges.test_fault_injection import FaultProxy

    proxy = FaultProxy("http://127.0.0.1:9/v1", dict.fromkeys(range(1, 100), "400"))
    out = tmp_path / "l"
    args = ["lmstyle", "--limit", "1", "--datasets", "dd", "--styles", "formal", "--max-tokens", "2",
            "--temperature", "0", "-m", "judge", "--judge-model", f"j@{proxy.url}", "-o", str(out)]  # fmt: skip
    try:
        res = CliRunner().invoke(app, args, terminal_width=400)
        assert res.exit_code == 1, res.output
        assert "error: 1 item(s) got no score because judge requests failed (1 x request failed: HTTP 400" in res.output
        judged = [json.loads(x) for x in (out / "scores.jsonl").read_text().splitlines()]
        assert [(s["value"], s["extras"]["error"].startswith("request failed: HTTP 400")) for s in judged] == [
            (None, True)]
        res = CliRunner().invoke(app, [*args, "--allow-failures"])
        assert res.exit_code == 0, res.output
    finally:
        proxy.close()


def test_a_stop_string_beyond_ascii_is_kept_as_given(tmp_path: Path, cache: Path) -> None:
    """--stop é was read through Python's unicode_escape codec, which takes text for Latin-1 bytes: it became
    "Ã©", which no response holds, so it stopped nothing, and the signature recorded "Ã©". Escapes still work."""
    args = ["generate", "--limit", "1", "--datasets", "dd", "--styles", "formal", "--max-tokens", "2",
            "--temperature", "0", "--stop", "é", "--stop", "。", "--stop", "\\n", "-o", str(tmp_path / "g")]
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 0, res.output
    signature = json.loads((tmp_path / "g" / "generation.json").read_text())["models"]["smollm2"]["signature"]
    assert "|stop:é,。,\\n|" in signature, signature


def test_an_interrupted_generation_says_what_was_kept_and_a_rerun_resumes(tmp_path: Path, cache: Path) -> None:
    """A real SIGINT after the first response: generate said only "interrupted". It now says that nothing was
    written and that the request cache keeps the responses so far; the rerun takes the first from it."""
    from tests.test_cli import SIGINT_AT_SECOND_REQUEST, _run_patched

    patch = SIGINT_AT_SECOND_REQUEST
    args = ["generate", "--limit", "1", "--datasets", "dd", "--styles", "formal,informal", "--max-tokens", "2",
            "--temperature", "0", "-o", "g"]  # fmt: skip
    res = _run_patched(tmp_path, patch, args)
    assert res.returncode == 130, res.stderr
    assert res.stderr.splitlines()[-1] == ("interrupted; nothing written to g; the responses generated so far are "
                                           "kept in the request cache, so a rerun resumes")  # fmt: skip
    assert not (tmp_path / "g").exists()
    res = _run_patched(tmp_path, "", args)
    assert res.returncode == 0, res.stderr
    assert "2 responses: 1 generated" in res.stderr and "1 from the request cache" in res.stderr


def test_lmstyle_interrupted_while_scoring_writes_nothing(
    tmp_path: Path, cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """lmstyle wrote the generated records before scoring them; it now writes its seven files together at the end, so
    an interrupt while scoring writes nothing (the request and score caches keep what was done)."""
    monkeypatch.setattr("dialeval.lmstyle.score.score_generated", _interrupt)
    out = tmp_path / "l"
    args = ["lmstyle", "--limit", "1", "--datasets", "dd", "--styles", "formal", "--max-tokens", "2", "-m", "style",
            "-o", str(out)]  # fmt: skip
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 130, res.output
    assert res.output.splitlines()[-1] == (f"interrupted; nothing written to {out}; the items scored so far are kept "
                                           "in the score cache, so a rerun resumes")  # fmt: skip
    assert not out.exists()


def _fail_to_load(*args: object, **kwargs: object) -> None:
    from dialeval.errors import InputError

    raise InputError("cannot be loaded", field="--metrics")


@pytest.mark.parametrize(("scoring", "code"), [(_interrupt, 130), (_fail_to_load, 2)])
def test_lmstyle_failing_while_scoring_keeps_the_earlier_run(
    tmp_path: Path, cache: Path, monkeypatch: pytest.MonkeyPatch, scoring: object, code: int
) -> None:
    """A rerun into an earlier run's folder removed the earlier run's scores.jsonl, tables and run.json (and a
    generate run's generation.json) and replaced its records before scoring: an interrupt or an error while
    scoring lost them all, leaving the new records alone. Every earlier file now stays as it was."""
    out = tmp_path / "l"
    out.mkdir()
    earlier = ("dialogues.jsonl", "candidates.jsonl", "scores.jsonl", "table.md", "lmstyle_tables.jsonl",
               "summary.jsonl", "run.json", "generation.json")  # fmt: skip
    for name in earlier:
        (out / name).write_text(f"an earlier run's {name}\n")
    monkeypatch.setattr("dialeval.lmstyle.score.score_generated", scoring)
    args = ["lmstyle", "--limit", "1", "--datasets", "dd", "--styles", "formal", "--max-tokens", "2", "-m", "style",
            "-o", str(out)]  # fmt: skip
    res = CliRunner().invoke(app, args)
    assert res.exit_code == code, res.output
    assert {p.name: p.read_text() for p in out.iterdir()} == {name: f"an earlier run's {name}\n" for name in earlier}


def test_generate_writes_its_three_files_or_none(tmp_path: Path, cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """dialogues.jsonl and candidates.jsonl were renamed into place before generation.json was written: a failed
    last write left the new records beside an earlier run's generation.json. (A full disk cannot be made here:
    the write of generation.json is made to fail as a full disk fails it.)"""
    import errno

    from dialeval.atomic import WriteError

    out = tmp_path / "g"
    out.mkdir()
    for name in ("dialogues.jsonl", "candidates.jsonl", "generation.json"):
        (out / name).write_text("an earlier run's\n")

    def disk_full(path: Path, payload: object) -> None:
        raise WriteError.of(path, OSError(errno.ENOSPC, "No space left on device"))

    monkeypatch.setattr("dialeval.lmstyle.cli.write_json", disk_full)
    args = ["generate", "--limit", "1", "--datasets", "dd", "--styles", "formal", "--max-tokens", "2", "-o", str(out)]
    res = CliRunner().invoke(app, args)  # the command line prints it as one line (DialevalApp); here it is raised
    assert isinstance(res.exception, WriteError) and res.exception.path == str(out / "generation.json")
    assert {p.name: p.read_text() for p in out.iterdir()} == dict.fromkeys(
        ("dialogues.jsonl", "candidates.jsonl", "generation.json"), "an earlier run's\n"
    )


def test_generate_and_lmstyle_over_each_others_folder_leave_no_file_of_other_records(
    tmp_path: Path, cache: Path
) -> None:
    """generate into an lmstyle run's folder replaced its dialogues and candidates and kept its scores.jsonl,
    tables and run.json, which were of the records it replaced (dialeval report showed them as these); lmstyle into
    a generate folder kept generation.json, the settings and counts of another generation. Each is now removed,
    and a line says so."""
    out = tmp_path / "run"
    out.mkdir()
    earlier = ("scores.jsonl", "table.md", "lmstyle_tables.jsonl", "summary.jsonl", "run.json")
    for name in ("dialogues.jsonl", "candidates.jsonl", *earlier):
        (out / name).write_text("an earlier run's\n")
    base = ["--limit", "1", "--datasets", "dd", "--styles", "positive", "--max-tokens", "2", "--temperature", "0",
            "-o", str(out)]  # fmt: skip
    res = CliRunner().invoke(app, ["generate", *base], terminal_width=400)
    assert res.exit_code == 0, res.output
    assert sorted(p.name for p in out.iterdir()) == ["candidates.jsonl", "dialogues.jsonl", "generation.json"]
    assert f"removed {out}/{{{', '.join(earlier)}}}: an earlier run's, which this run does not write" in res.output
    res = CliRunner().invoke(app, ["lmstyle", *base, "-m", "style"], terminal_width=400)
    assert res.exit_code == 0, res.output
    assert sorted(p.name for p in out.iterdir()) == sorted(("dialogues.jsonl", "candidates.jsonl", *earlier))
    assert f"removed {out}/{{generation.json}}: an earlier run's, which this run does not write" in res.output


_LMSTYLE_RUN = '{"schema_version": 1, "kind": "lmstyle", "command": "dialeval lmstyle", "metrics": {}}\n'
_BENCHMARK_RUN = '{"schema_version": 1, "kind": "benchmark", "benchmark": "usr-tc", "metrics": {}}\n'


@pytest.mark.parametrize(
    ("earlier", "removed"),
    [  # an lmstyle run without its lmstyle_tables.jsonl (deleted, or its renames stopped before it): removed
        ({"scores.jsonl": "s\n", "table.md": "t\n", "summary.jsonl": "{}\n", "run.json": _LMSTYLE_RUN},
         ["scores.jsonl", "table.md", "summary.jsonl", "run.json"]),
        ({"scores.jsonl": "s\n", "table.md": "t\n", "run.json": _LMSTYLE_RUN},
         ["scores.jsonl", "table.md", "run.json"]),
        ({"scores.jsonl": "s\n", "summary.jsonl": "{}\n"}, ["scores.jsonl", "summary.jsonl"]),
        # another command's files, or files no run of lmstyle marks as its own: kept
        ({"scores.jsonl": "s\n", "table.md": "t\n", "table.jsonl": "{}\n", "run.json": _BENCHMARK_RUN}, []),
        ({"scores.jsonl": "s\n", "table.md": "t\n"}, []),
    ],
)
def test_generate_removes_an_earlier_lmstyle_run_that_lacks_its_tables(
    tmp_path: Path, cache: Path, earlier: dict[str, str], removed: list[str]
) -> None:
    """generate into an lmstyle run's folder removed its scores.jsonl, table.md, summary.jsonl and run.json only
    when its lmstyle_tables.jsonl was there: without it they stayed beside the new records, of the records
    replaced. They are now removed when the folder shows an lmstyle run (its summary.jsonl, or a run.json of kind
    lmstyle), as a whole run's are; another command's files, and files nothing marks as lmstyle's, stay."""
    out = tmp_path / "run"
    out.mkdir()
    for name, text in {"dialogues.jsonl": "d\n", "candidates.jsonl": "c\n", **earlier}.items():
        (out / name).write_text(text)
    args = ["generate", "--limit", "1", "--datasets", "dd", "--styles", "positive", "--max-tokens", "2",
            "--temperature", "0", "-o", str(out)]  # fmt: skip
    res = CliRunner().invoke(app, args, terminal_width=400)
    assert res.exit_code == 0, res.output
    kept = sorted({"dialogues.jsonl", "candidates.jsonl", "generation.json", *earlier} - set(removed))
    assert sorted(p.name for p in out.iterdir()) == kept
    assert all((out / name).read_text() == earlier[name] for name in earlier if name not in removed)
    said = f"removed {out}/{{{', '.join(removed)}}}: an earlier run's, which this run does not write"
    assert (said in res.output) == bool(removed), res.output


def test_a_response_cut_by_max_tokens_is_counted_and_said(tmp_path: Path) -> None:
    """A response the backend ended at --max-tokens (finish_reason "length": "I would be delighted to") was
    written and scored as a whole one, and generation.json and the command's line said nothing of it. Each
    model's summary now counts them, and the line says how many."""
    from dialeval.backends.base import Backend, ChatRequest, Completion
    from dialeval.lmstyle.cli import _counts
    from dialeval.lmstyle.prompt import Pair

    class Cut(Backend):
        signature = "cut"

        def chat(self, request: ChatRequest) -> Completion:
            said = "delighted" in request.prompt.split("###Speaker:")[-1]
            return Completion(text=" I would be delighted to", finish_reason="length" if said else "stop")

    data = {"dd": [Pair("delighted?", "yes"), Pair("other?", "no"), *(Pair(str(i), str(i)) for i in range(5))]}
    got = generate_styled(Cut(), "m", data, ["formal", "informal"], 2, SETTINGS, use_cache=False)
    assert len(got.candidates) == 4
    assert got.summary()["cut_by_max_tokens"] == 2  # the two styles of the first query
    assert ", 0 empty, 2 cut by --max-tokens;" in _counts(got.summary())
    # each cut response says so in candidates.jsonl (it said nothing); the others carry no such tag
    assert [c.tags.get("cut") for c in got.candidates] == ["max_tokens", "max_tokens", None, None]


def test_table_md_counts_the_responses_cut_by_max_tokens(tmp_path: Path) -> None:
    """table.md said nothing of responses cut by --max-tokens: a reader could not tell that its rows average
    cut ones. Its summary (and summary.jsonl) now has a "cut" column beside "empty" when any was cut."""
    out = tmp_path / "l"
    args = ["lmstyle", "--limit", "1", "--datasets", "dd", "--styles", "formal", "--max-tokens", "2",
            "--temperature", "0", "-m", "style", "--no-cache", "-o", str(out)]  # fmt: skip
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 0, res.output
    assert json.loads((out / "run.json").read_text())["generation"]["smollm2"]["cut_by_max_tokens"] == 1
    assert [c.tags["cut"] for c in read_jsonl(out / "candidates.jsonl", Candidate)] == ["max_tokens"]
    row = json.loads((out / "summary.jsonl").read_text())
    assert (row["responses"], row["empty"], row["cut"]) == (1, 0, 1)
    assert "| model | responses | empty | cut | ACC% |" in (out / "table.md").read_text()


def test_control_characters_in_a_response_are_replaced_counted_and_said() -> None:
    """A server's answer holding a NUL, an escape sequence and a form feed went into candidates.jsonl as they came
    (and on to CSV tables and the human app). Each control character but tab, line feed and carriage return is now
    U+FFFD, as a lone surrogate is; the responses holding any are counted and the line says how many."""
    from dialeval.backends.base import Backend, ChatRequest, Completion
    from dialeval.lmstyle.cli import _counts
    from dialeval.lmstyle.prompt import Pair

    class Noisy(Backend):
        signature = "noisy"

        def chat(self, request: ChatRequest) -> Completion:
            if "noisy" in request.prompt.split("###Speaker:")[-1]:
                return Completion(text=" Sure\x00 thing\x1b[31m ok\x0cend\x7f\tyes\r!")
            return Completion(text=" Fine .")

    data = {"dd": [Pair("noisy?", "yes"), Pair("other?", "no"), *(Pair(str(i), str(i)) for i in range(5))]}
    got = generate_styled(Noisy(), "m", data, ["formal"], 2, SETTINGS, use_cache=False)
    # written out by hand: NUL, ESC, FF and DEL each one U+FFFD; tab and CR kept; the other response untouched
    assert [c.text for c in got.candidates] == ["Sure\ufffd thing\ufffd[31m ok\ufffdend\ufffd\tyes\r!", "Fine ."]
    assert got.summary()["control_characters"] == 1
    assert ", 0 empty, 1 with control characters (written as U+FFFD);" in _counts(got.summary())
    clean = generate_styled(Noisy(), "m", {"dd": data["dd"][1:]}, ["formal"], 1, SETTINGS, use_cache=False)
    assert "control_characters" not in clean.summary()  # generation.json unchanged where there were none
