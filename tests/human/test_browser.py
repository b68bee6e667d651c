"""End to end in Debian's chromium driven by Playwright: annotate, close, reopen, find the answers; hostile text."""

from __future__ import annotations

import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from playwright.sync_api import BrowserContext, Page, sync_playwright
from tests.human.conftest import HOSTILE, ROOT_ARTIFACTS, Server, make_study, start_server

FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


@pytest.fixture
def browser(tmp_path: Path) -> Iterator[BrowserContext]:
    # a fresh --user-data-dir per test: Playwright passes it through launch_persistent_context
    with sync_playwright() as pw:
        context = pw.chromium.launch_persistent_context(
            str(tmp_path / "profile"),
            executable_path="/usr/bin/chromium",
            headless=True,
            args=FLAGS,
            viewport={"width": 1280, "height": 900},
        )
        # it is Debian's chromium that runs, not a downloaded browser
        debian = subprocess.run(["/usr/bin/chromium", "--version"], capture_output=True, text=True).stdout
        assert context.browser is not None and context.browser.version in debian
        yield context
        context.close()


def open_page(browser: BrowserContext, server: Server, token: str) -> Page:
    page = browser.new_page()
    page.goto(f"{server.base}/#token={token}")
    page.wait_for_selector("#main:not([hidden])")
    return page


def test_annotate_with_keyboard_and_mouse_close_and_resume(browser: BrowserContext, tmp_path: Path) -> None:
    access = make_study(tmp_path / "s", annotators=("a01", "a02"), per_item=1, batch_size=3)
    server = start_server(tmp_path / "s")
    try:
        token = access["annotators"]["a01"]
        page = open_page(browser, server, token)
        assert page.text_content("#criterion") == "Appropriateness"
        assert "Item 1 of 36" in (page.text_content("#step-label") or "")  # 3 units x 3 candidates x 4 criteria
        # keyboard: "1" = Yes on item 1, then Enter to move on
        page.keyboard.press("1")
        page.wait_for_selector("#status:has-text('Saved.')")
        page.keyboard.press("Enter")
        # mouse: "No" on item 2, then tick the Incoherence explanation (Table 1)
        page.click("#options label:nth-child(2)")
        page.wait_for_selector("#reasons input[value=Incoherence]")
        page.evaluate("document.getElementById('status').textContent = ''")
        page.check("#reasons input[value=Incoherence]")
        page.wait_for_selector("#status:has-text('Saved.')")
        page.keyboard.press("ArrowRight")
        # "I don't know" is saved only with an explanation
        page.keyboard.press("3")
        page.wait_for_selector("#status:has-text('Please explain')")
        page.fill("#free-text", "I cannot tell who is speaking")
        page.wait_for_selector("#status:has-text('Saved.')")
        ROOT_ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ROOT_ARTIFACTS / "annotation_page.png"), full_page=True)
        page.close()

        # the server holds exactly what the browser answered
        tasks = httpx.get(f"{server.base}/api/tasks", headers={"Authorization": f"Bearer {token}"}).json()
        answers: dict[str, Any] = {
            it["id"]: it["answers"]["Appropriateness"]
            for u in tasks["units"]
            for it in u["items"]
            if "Appropriateness" in it["answers"]
        }
        first_unit = tasks["units"][0]["items"]
        assert [answers[it["id"]]["value"] for it in first_unit] == ["positive", "negative", "dont_know"]
        assert answers[first_unit[1]["id"]]["reasons"] == ["Incoherence"]
        assert answers[first_unit[2]["id"]]["free_text"] == "I cannot tell who is speaking"

        # reopen: the page resumes at the first unanswered step and shows earlier answers
        page = open_page(browser, server, token)
        assert "Item 4 of 36" in (page.text_content("#step-label") or "")
        assert page.text_content("#progress-text") == "3 / 36 answered"
        page.keyboard.press("ArrowLeft")
        page.keyboard.press("ArrowLeft")
        assert page.is_checked("#options input[value=negative]")
        assert page.is_checked("#reasons input[value=Incoherence]")
        page.close()

        # the admin dashboard lists progress per annotator
        admin = browser.new_page()
        admin.goto(f"{server.base}/admin#token={access['admin']}")
        admin.wait_for_selector("#progress-table tbody tr")
        cells = admin.locator("#progress-table tbody tr").first.locator("td").all_text_contents()
        assert cells[:3] == ["a01", "3", "36"]
        # one annotator so far: alpha and kappa are "–" and the note says why (there was no reason)
        admin.wait_for_selector("#agreement-table tbody tr")
        cells = admin.locator("#agreement-table tbody tr").first.locator("td").all_text_contents()
        assert cells[3:5] == ["–", "–"] and cells[5].startswith("alpha is undefined: no item is rated by 2"), cells
        admin.close()
    finally:
        server.proc.terminate()
        server.proc.wait(timeout=10)


def test_admin_dashboard_asks_again_only_after_an_answer(browser: BrowserContext, tmp_path: Path) -> None:
    """A large study's agreement takes seconds (20 s for 1,080,000 answers), and the dashboard asked for it every
    10 s whatever happened, piling requests up on the server. Here the page runs on Playwright's fake clock and
    the agreement answer is held back: 35 s of page time make one request (four before), and the next comes 10 s
    after the answer."""
    access = make_study(tmp_path / "s")
    server = start_server(tmp_path / "s")
    held: list[Any] = []
    try:
        page = browser.new_page()
        page.clock.install()
        page.route("**/api/admin/agreement", lambda route: held.append(route))
        page.goto(f"{server.base}/admin#token={access['admin']}")
        page.wait_for_selector("#progress-table tbody tr")
        page.clock.run_for(35_000)
        page.wait_for_timeout(1_500)  # real time: the requests the timers started reach the route
        assert len(held) == 1
        held[0].continue_()
        page.wait_for_timeout(500)
        page.clock.run_for(10_000)
        page.wait_for_timeout(1_500)
        assert len(held) == 2
        held[1].continue_()
        page.close()
    finally:
        server.kill()


def test_hostile_dialogue_text_is_shown_literally_and_runs_nothing(browser: BrowserContext, tmp_path: Path) -> None:
    access = make_study(tmp_path / "h", hostile=True, annotators=("a01",), per_item=1, batch_size=6)
    server = start_server(tmp_path / "h")
    try:
        page = browser.new_page()
        dialogs: list[str] = []
        page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
        page.goto(f"{server.base}/#token={access['annotators']['a01']}")
        page.wait_for_selector("#main:not([hidden])")
        # walk to the unit that holds the hostile context and candidate
        for _ in range(80):  # 6 units x 3 candidates x 4 criteria = 72 steps
            if HOSTILE in (page.text_content("#candidate") or ""):
                break
            page.keyboard.press("ArrowRight")
        assert page.text_content("#candidate") == HOSTILE
        assert HOSTILE in (page.text_content("#context") or "")
        assert page.evaluate("window.__pwned") is None
        assert page.locator("#context img, #context script, #candidate img, #candidate b").count() == 0
        assert dialogs == []
        page.close()
    finally:
        server.proc.terminate()
        server.proc.wait(timeout=10)


def test_lmstyle_sliders_show_all_responses_and_save_with_keyboard(browser: BrowserContext, tmp_path: Path) -> None:
    from tests.human.conftest import dialogues_and_candidates

    from dialeval.human.design import StudyConfig, create_study
    from dialeval.human.protocol import load_protocol

    proto = load_protocol("lmstyle-sliders")
    dialogues, candidates = dialogues_and_candidates(n_contexts=2)
    candidates = [c.model_copy(update={"tags": {"task": "Formal"}}) for c in candidates]  # the requested style
    cfg = StudyConfig(proto.name, proto.version, ("a01",), per_item=1, batch_size=2, seed=0)
    create_study(tmp_path / "l", proto, dialogues, candidates, cfg)
    import json

    token = json.loads((tmp_path / "l" / "access.json").read_text())["annotators"]["a01"]
    server = start_server(tmp_path / "l")
    try:
        page = open_page(browser, server, token)
        assert page.text_content("#unit-note") == "Requested style: Formal"  # style strength needs the style
        assert page.locator("#siblings li").count() == 2  # every response of the context is on screen
        assert page.locator("#siblings li.current").text_content() == page.text_content("#candidate")
        page.focus("#slider")
        for _ in range(5):
            page.keyboard.press("ArrowRight")  # 50 -> 55, moves the slider, not the step
        page.wait_for_selector("#status:has-text('Saved.')")
        assert page.text_content("#criterion") == "Appropriateness"
        # "Saved." can show for an intermediate value (54) before the last key press is saved: poll the server.
        value = None
        for _ in range(50):
            tasks = httpx.get(f"{server.base}/api/tasks", headers={"Authorization": f"Bearer {token}"}).json()
            value = tasks["units"][0]["items"][0]["answers"].get("Appropriateness", {}).get("value")
            if value == "55":
                break
            time.sleep(0.1)
        assert value == "55"
        page.close()
    finally:
        server.proc.terminate()
        server.proc.wait(timeout=10)


def test_study_report_renders_in_the_browser(browser: BrowserContext, tmp_path: Path) -> None:
    from tests.human.test_cli import annotated_study
    from typer.testing import CliRunner

    from dialeval.cli import app

    study = annotated_study(tmp_path)
    args = ["study", "report", str(study), "--output", str(tmp_path / "report"), "--n-boot", "50"]
    rep = CliRunner().invoke(app, args)
    assert rep.exit_code == 0, rep.output
    page = browser.new_page()
    page.goto((tmp_path / "report.html").as_uri())
    headings = page.locator("h2").all_text_contents()
    assert len(headings) >= 3
    # the checklist and the Table 3 analogue are there as rendered tables, with the numbers of the study
    assert page.locator("table").count() >= 2
    body = page.inner_text("body")
    assert "Workers recruited" in body and "12 EUR per hour" in body
    assert page.locator("td", has_text="Yes 100.0%").count() >= 1
    ROOT_ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ROOT_ARTIFACTS / "study_report.png"), full_page=False)
    page.close()


def test_study_from_cli_through_the_browser_to_report_and_meta(browser: BrowserContext, tmp_path: Path) -> None:
    """The whole path: export USR-TC records, `study create`, two annotators rate in chromium (keyboard only),
    `study export`, `study report`, `dialeval score`, `dialeval meta` on the study's own ratings."""
    import json

    import numpy as np
    from scipy import stats
    from typer.testing import CliRunner

    from dialeval.cli import app
    from dialeval.jsonl import read_jsonl
    from dialeval.schema import Candidate, Rating

    cli = CliRunner()

    def run(*args: str) -> str:
        res = cli.invoke(app, list(args), terminal_width=200)
        assert res.exit_code == 0, res.output
        return res.output

    data, study = tmp_path / "usr2", tmp_path / "study"
    run("data", "export", "-b", "usr-tc", "--limit", "2", "-o", str(data))
    run("study", "create", str(study), "--dialogues", str(data / "dialogues.jsonl"), "--candidates",
        str(data / "candidates.jsonl"), "--protocol", "comperdial", "--annotators", "2", "--per-item", "2",
        "--seed", "3")
    texts = {c.text: c.id for c in read_jsonl(data / "candidates.jsonl", Candidate)}
    typed: dict[tuple[str, str], int] = {}
    access = json.loads((study / "access.json").read_text())
    server = start_server(study)
    try:
        for name, token in access["annotators"].items():
            page = open_page(browser, server, token)
            for step in range(12):  # 2 contexts x 6 systems, one criterion (Overall, 1-5)
                assert f"Item {step + 1} of 12" in (page.text_content("#step-label") or "")
                item = texts[page.text_content("#candidate") or ""]
                value = 3 + (len(item) + (name == "a02")) % 3  # 3-5: low scores ask for reasons
                page.evaluate("document.getElementById('status').textContent = ''")
                page.keyboard.press(str(value))
                page.wait_for_selector("#status:has-text('Saved.')")
                typed[(name, item)] = value
                page.keyboard.press("Enter")
            assert page.text_content("#progress-text") == "12 / 12 answered"
            page.close()
    finally:
        server.proc.terminate()
        server.proc.wait(timeout=10)

    run("study", "export", str(study), "-o", str(tmp_path / "ratings.jsonl"), "--numeric")
    ratings = read_jsonl(tmp_path / "ratings.jsonl", Rating)
    assert {(r.annotator, r.item_id): r.value for r in ratings} == {k: float(v) for k, v in typed.items()}
    run("study", "report", str(study), "--output", str(tmp_path / "report"), "--n-boot", "50")
    assert "Mean score per model" in (tmp_path / "report.md").read_text()
    run("score", "--dialogues", str(data / "dialogues.jsonl"), "--candidates", str(data / "candidates.jsonl"),
        "-m", "length", "--no-cache", "-o", str(tmp_path / "scores.jsonl"))
    out = run("meta", str(tmp_path / "scores.jsonl"), "--ratings", str(tmp_path / "ratings.jsonl"), "-d", "Overall",
              "--level", "turn", "--method", "pearson", "--boot", "0", "--json")
    (row,) = [r for r in json.loads(out)["rows"] if r["metric"] == "length"]
    cands = read_jsonl(data / "candidates.jsonl", Candidate)
    lengths = [len(c.text.split()) for c in cands]
    human = [np.mean([typed[(a, c.id)] for a in ("a01", "a02")]) for c in cands]
    assert row["n_items"] == 12
    assert row["value"] == pytest.approx(stats.pearsonr(lengths, human).statistic, abs=1e-12)


def test_enter_on_a_focused_button_does_what_the_button_says(browser: BrowserContext, tmp_path: Path) -> None:
    """A keyboard user who tabs to "Previous" and presses Enter goes back; the page-wide Enter (next item)
    swallowed the key and went forward (Item 2 -> Item 3)."""
    access = make_study(tmp_path / "s", annotators=("a01",), per_item=1, batch_size=6)
    server = start_server(tmp_path / "s")
    try:
        page = open_page(browser, server, access["annotators"]["a01"])
        page.keyboard.press("Enter")
        assert "Item 2 of" in (page.text_content("#step-label") or "")
        page.focus("#prev")
        page.keyboard.press("Enter")
        assert "Item 1 of" in (page.text_content("#step-label") or "")
        page.focus("#next")
        page.keyboard.press("Enter")  # once: the button's click, not the button's and the page's
        assert "Item 2 of" in (page.text_content("#step-label") or "")
        page.close()
    finally:
        server.kill()


def test_a_save_that_lands_after_moving_on_leaves_the_new_item_alone(browser: BrowserContext, tmp_path: Path) -> None:
    """"No" then Enter at once: the answer's save is held back (as on a slow network) until item 2 is shown.
    When it landed it drew item 1's "Why?" box (whose ticks saved to item 1) on item 2, which has no answer."""
    access = make_study(tmp_path / "s", annotators=("a01",), per_item=1, batch_size=6)
    server = start_server(tmp_path / "s")
    held: list[Any] = []
    try:
        page = open_page(browser, server, access["annotators"]["a01"])
        page.route("**/api/answers", lambda route: held.append(route))
        page.keyboard.press("2")
        for _ in range(100):
            if held:
                break
            page.wait_for_timeout(50)
        page.keyboard.press("Enter")
        assert "Item 2 of" in (page.text_content("#step-label") or "")
        held[0].continue_()
        page.wait_for_selector("#progress-text:text-matches('^1 / ')")  # the save has landed
        assert page.is_hidden("#reasons-box")
        assert page.locator("#reasons input").count() == 0
        assert page.text_content("#status") != "Saved."  # nothing was saved on item 2
        page.keyboard.press("ArrowLeft")  # item 1 shows its own answer and its reasons
        assert page.is_checked("#options input[value=negative]") and page.is_visible("#reasons-box")
        page.close()
    finally:
        server.kill()


def _saved_answers(server: Server, token: str, want: int) -> dict[str, Any]:
    """Poll the server until it holds ``want`` answers (a save is asynchronous); return them by item."""
    answers: dict[str, Any] = {}
    for _ in range(100):
        tasks = httpx.get(f"{server.base}/api/tasks", headers={"Authorization": f"Bearer {token}"}).json()
        answers = {it["id"]: it["answers"]["Appropriateness"] for u in tasks["units"] for it in u["items"]
                   if "Appropriateness" in it["answers"]}  # fmt: skip
        if len(answers) >= want and all(a["free_text"] for a in answers.values()):
            break
        time.sleep(0.1)
    return answers


def test_an_explanation_typed_just_before_leaving_the_item_is_saved(browser: BrowserContext, tmp_path: Path) -> None:
    """Typing is saved 400 ms after the last key. The page's clock is Playwright's fake one, so that timer never
    fires by itself: what is saved is what leaving the item saves. Before, "Next" left the timer running, and when
    it fired it read the next item's (empty) explanation off the page: the typed text was lost, an "I don't know"
    was never saved; a reload lost it too."""
    access = make_study(tmp_path / "s", annotators=("a01",), per_item=1, batch_size=6)
    server = start_server(tmp_path / "s")
    token = access["annotators"]["a01"]
    try:
        page = browser.new_page()
        page.clock.install()
        page.goto(f"{server.base}/#token={token}")
        page.wait_for_selector("#main:not([hidden])")
        page.keyboard.press("2")  # No, saved at once without an explanation
        page.wait_for_selector("#status:has-text('Saved.')")
        page.fill("#free-text", "off topic")
        page.click("#next")
        page.keyboard.press("3")  # I don't know: saved once explained
        page.wait_for_selector("#status:has-text('Please explain')")
        page.fill("#free-text", "cannot tell")
        page.click("#next")
        page.keyboard.press("2")
        page.wait_for_selector("#status:has-text('Saved.')")
        page.fill("#free-text", "rude")
        page.reload()
        page.wait_for_selector("#main:not([hidden])")
        answers = _saved_answers(server, token, 3)
        assert sorted((a["value"], a["free_text"]) for a in answers.values()) == [
            ("dont_know", "cannot tell"), ("negative", "off topic"), ("negative", "rude")]  # fmt: skip
        page.close()
    finally:
        server.kill()


def test_a_long_unbroken_response_wraps_inside_its_pane(browser: BrowserContext, tmp_path: Path) -> None:
    """A degenerate response ("haha" x 1500, no space) widened the grid's column to 30,000 px: the candidate
    ran off the 1280 px window (read by scrolling sideways) and squeezed the dialogue to a sliver."""
    import json

    from tests.human.conftest import dialogues_and_candidates

    from dialeval.human.design import StudyConfig, create_study
    from dialeval.human.protocol import load_protocol

    proto = load_protocol("mousavi-turn")
    dialogues, candidates = dialogues_and_candidates(n_contexts=1)
    candidates[0] = candidates[0].model_copy(update={"text": "ha" * 1500})
    cfg = StudyConfig(proto.name, proto.version, ("a01",), per_item=1, batch_size=1, seed=0)
    create_study(tmp_path / "l", proto, dialogues, candidates, cfg)
    token = json.loads((tmp_path / "l" / "access.json").read_text())["annotators"]["a01"]
    server = start_server(tmp_path / "l")
    try:
        page = open_page(browser, server, token)
        for _ in range(3):  # one unit of 3 candidates (m1, m2, the reference), first criterion
            if (page.text_content("#candidate") or "").startswith("haha"):
                break
            page.keyboard.press("ArrowRight")
        assert page.text_content("#candidate") == "ha" * 1500
        assert page.evaluate("document.documentElement.scrollWidth") <= 1280  # the viewport's width
        for pane in ("#candidate", "#context-pane", "#next"):
            box = page.locator(pane).bounding_box()
            assert box is not None and box["x"] + box["width"] <= 1280, (pane, box)
        dialogue = page.locator("#context-pane").bounding_box()
        assert dialogue is not None and dialogue["width"] > 400  # half the page, less the gap; it was 150
        page.close()
    finally:
        server.kill()


def answer_qualification(page: Page, *, agree: bool) -> None:
    """Answer the 12 steps of the qualification unit by keys: d5's m1, m2 and reference x 4 criteria.

    The references (conftest) say m1 positive and m2 negative everywhere; the worker agrees with them or says
    the opposite.
    """
    for step in range(12):
        assert f"Item {step + 1} of 12 (qualification)" == page.text_content("#step-label")
        text = page.text_content("#candidate") or ""
        page.evaluate("document.getElementById('status').textContent = ''")
        page.keyboard.press("2" if text.startswith("m2:") == agree else "1")
        page.wait_for_selector("#status:has-text('Saved.')")
        if step < 11:
            page.keyboard.press("Enter")


def test_a_worker_who_fails_qualification_is_told_so(browser: BrowserContext, tmp_path: Path) -> None:
    """A worker who failed read "main batches open once you pass it", on the finished batch and after a reload,
    though the decision is final: the page now says that no main batch will open."""
    access = make_study(tmp_path / "q", qualification=True, annotators=("a01",), per_item=1)
    server = start_server(tmp_path / "q")
    try:
        page = open_page(browser, server, access["annotators"]["a01"])
        answer_qualification(page, agree=False)
        page.wait_for_selector("#message:has-text('You did not pass the qualification batch')")
        page.reload()
        page.wait_for_selector("#message:has-text('You did not pass the qualification batch')")
        assert page.text_content("#step-label") == "Item 12 of 12 (qualification)"  # no main item was opened
        page.close()
    finally:
        server.kill()


def test_a_worker_who_qualifies_goes_on_to_the_main_batches(browser: BrowserContext, tmp_path: Path) -> None:
    """The answer that completes the qualification batch qualifies the worker on the server; the page went on
    showing the finished batch (12 / 12 answered, "main batches open once you pass it") until it was reloaded."""
    access = make_study(tmp_path / "q", qualification=True, annotators=("a01",), per_item=1)
    server = start_server(tmp_path / "q")
    try:
        page = open_page(browser, server, access["annotators"]["a01"])
        answer_qualification(page, agree=True)
        page.wait_for_selector("#message:has-text('You qualified')")
        # 5 main units (d0-d4) x 3 candidates x 4 criteria follow the 12 qualification steps
        assert page.text_content("#step-label") == "Item 13 of 72"
        assert page.text_content("#progress-text") == "12 / 72 answered"
        page.keyboard.press("1")
        page.wait_for_selector("#progress-text:has-text('13 / 72 answered')")  # a main answer is taken
        page.close()
    finally:
        server.kill()


def test_an_explanation_of_invisible_characters_is_refused_in_the_page(browser: BrowserContext, tmp_path: Path) -> None:
    """The page checked an "I don't know" explanation with JavaScript's trim(), which keeps a zero-width space and
    the Hangul filler; the server's visible() refuses them. One of only those passed the page's check and the
    server answered 422. The page now asks for an explanation as the server would, and sends nothing."""
    access = make_study(tmp_path / "s", annotators=("a01",), per_item=1, batch_size=6)
    server = start_server(tmp_path / "s")
    token = access["annotators"]["a01"]
    try:
        page = open_page(browser, server, token)
        sent: list[str] = []
        page.on("request", lambda r: sent.append(r.method) if r.url.endswith("/api/answers") else None)
        page.keyboard.press("3")  # I don't know
        page.wait_for_selector("#status:has-text('Please explain')")
        page.evaluate("document.getElementById('status').textContent = ''")
        page.fill("#free-text", "\u200b\u3164\ufeff \u2060")
        page.wait_for_selector("#status:has-text('Please explain')")
        assert sent == []
        page.fill("#free-text", "\u200bcannot tell")
        page.wait_for_selector("#status:has-text('Saved.')")
        assert [a["free_text"] for a in _saved_answers(server, token, 1).values()] == ["\u200bcannot tell"]
        page.close()
    finally:
        server.kill()


def test_an_unexplained_dont_know_is_not_counted_as_answered(browser: BrowserContext, tmp_path: Path) -> None:
    """"I don't know" is kept in the page, unsaved, until it is explained; the progress bar counted it as answered
    once the worker moved on ("1 / 72 answered" with nothing saved), so a worker could see every step done and close
    the page."""
    access = make_study(tmp_path / "s", annotators=("a01",), per_item=1, batch_size=3)
    server = start_server(tmp_path / "s")
    try:
        page = open_page(browser, server, access["annotators"]["a01"])
        assert page.text_content("#progress-text") == "0 / 72 answered"  # 6 units x 3 candidates x 4 criteria
        page.keyboard.press("3")  # I don't know
        page.wait_for_selector("#status:has-text('Please explain')")
        page.keyboard.press("ArrowRight")
        assert page.text_content("#progress-text") == "0 / 72 answered"
        page.keyboard.press("ArrowLeft")
        page.fill("#free-text", "cannot tell")
        page.wait_for_selector("#status:has-text('Saved.')")
        assert page.text_content("#progress-text") == "1 / 72 answered"
        page.close()
    finally:
        server.kill()
