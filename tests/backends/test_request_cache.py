"""The request cache names its file when SQLite cannot use it: one line, never a traceback."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from dialeval.backends.cache import RequestCache
from dialeval.backends.llamacpp import free_port
from dialeval.cli import app
from dialeval.errors import InputError


def test_a_damaged_request_cache_is_one_error_naming_the_file(tmp_path: Path) -> None:
    path = tmp_path / "req.sqlite"
    path.write_bytes(b"not an SQLite file " * 64)  # longer than one SQLite page, so SQLite reads its header
    with pytest.raises(InputError) as caught:
        RequestCache(path)
    assert str(caught.value) == (f"{path}: is not a request cache (SQLite: file is not a database); delete it "
                                 "(its answers are asked again)")


def test_judge_run_with_a_damaged_request_cache_says_so_in_one_line(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """``$DIALEVAL_CACHE/judge_requests.sqlite`` damaged was a ``sqlite3.DatabaseError`` traceback out of the run.
    The cache is opened before any request: the server's URL is a closed port, never asked."""
    monkeypatch.setenv("DIALEVAL_CACHE", str(tmp_path / "cache"))
    damaged = tmp_path / "cache" / "judge_requests.sqlite"
    damaged.parent.mkdir()
    damaged.write_bytes(b"not an SQLite file " * 64)
    out = tmp_path / "scores.jsonl"
    args = ["judge", "run", "--protocol", "lmstyle-appropriateness", "--limit", "1", "--out", str(out), "--no-cache",
            "-p", "backend=openai-compatible", "-p", f"base_url=http://127.0.0.1:{free_port()}/v1", "-p", "model=m"]
    res = CliRunner().invoke(app, args, terminal_width=300)
    assert res.exit_code == 2, res.output
    assert [line for line in res.output.splitlines() if line.startswith("error:")] == [
        f"error: {damaged}: is not a request cache (SQLite: file is not a database); delete it (its answers are "
        "asked again)"
    ], res.output
    assert "Traceback" not in res.output and not out.exists()


@pytest.mark.parametrize("stored", ["not json", "null", "[1]", '{"tokens": []}', '{"text": null}', '{"text": 5}',
                                    '{"text": "a", "prompt_tokens": "x"}', '{"text": "a", "tokens": 5}'])
def test_a_row_whose_answer_is_unreadable_is_asked_again(tmp_path: Path, stored: str) -> None:
    """An answer row that is not a cached completion (edited by hand, written by another tool, or damaged) ended
    the judge run in a traceback at the lookup: json's JSONDecodeError, a TypeError for null or a list, a KeyError
    for a missing "text", a ValueError for a count that is no number; a "text" of null was served as the answer
    "None". It is now a miss: the request is sent again
    and its answer replaces the row, as the score cache does with a row it cannot read."""
    from dialeval.backends.base import ChatRequest, Completion

    cache = RequestCache(tmp_path / "req.sqlite")
    request = ChatRequest(messages=(("user", "hi"),), seed=3)
    cache.put("sig", request, Completion(text="hello"))
    cache._db.execute("UPDATE completions SET answer = ?", (stored,))
    cache._db.commit()
    assert cache.get("sig", request) is None
    cache.put("sig", request, Completion(text="again"))
    got = cache.get("sig", request)
    assert got is not None and got.text == "again"
    cache.close()
