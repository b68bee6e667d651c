"""The HTML report in Debian's chromium (Playwright): tables and decoded images shown, nothing fetched; a screenshot."""

from __future__ import annotations

import subprocess
from pathlib import Path

from playwright.sync_api import sync_playwright
from tests.report.conftest import ARTIFACTS, HOSTILE, invoke

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run"]  # fmt: skip


def test_report_renders_in_chromium(results: dict[str, Path], tmp_path: Path) -> None:
    out = tmp_path / "report.html"
    invoke(["report", str(results["bench"]), str(results["lmstyle"]), "--study", str(results["study"]), "-o", str(out)])
    requests: list[str] = []
    with sync_playwright() as pw:
        context = pw.chromium.launch_persistent_context(
            str(tmp_path / "profile"), executable_path="/usr/bin/chromium", headless=True, args=FLAGS,
            viewport={"width": 1280, "height": 900},
        )  # fmt: skip
        debian = subprocess.run(["/usr/bin/chromium", "--version"], capture_output=True, text=True).stdout
        assert context.browser is not None and context.browser.version in debian
        page = context.new_page()
        page.on("request", lambda r: requests.append(r.url))
        page.goto(out.as_uri())
        page.wait_for_load_state("load")
        images = page.eval_on_selector_all(
            "img", "els => els.map(e => ({ok: e.complete, w: e.naturalWidth, h: e.naturalHeight, alt: e.alt}))"
        )
        assert len(images) == 6
        assert all(i["ok"] and i["w"] > 200 and i["h"] > 100 for i in images), images
        captions = page.eval_on_selector_all("table caption", "els => els.map(e => e.textContent)")
        assert any("correlation of each metric with human Overall" in c for c in captions)
        assert any("LMStyle Table 2" in c for c in captions) and any("Signatures" in c for c in captions)
        assert page.locator("table").count() >= 9 and page.locator("table tbody tr").count() > 30
        # the study export carries no signature: one line says so, where an empty table was
        assert page.get_by_text("Signatures: none in this folder").count() == 1
        # the stress table: metrics as rows, perturbations as columns, the hostile metric name as text
        stress = page.locator("table", has=page.locator("caption", has_text="Stress test: share of pairs"))
        assert stress.locator("thead th").all_text_contents() == ["metric", "shuffle", "drop-words", "copy-context"]
        assert stress.locator("tbody tr").count() == 3
        assert HOSTILE in stress.locator("tbody").inner_text()
        assert page.locator("script").count() == 0 and page.locator("pre").first.is_visible()
        ARTIFACTS.mkdir(exist_ok=True)
        clip = {"x": 0, "y": 0, "width": 1280, "height": 1800}
        page.screenshot(path=str(ARTIFACTS / "report.png"), full_page=True, clip=clip)  # type: ignore[arg-type]
        context.close()
    assert all(u.startswith(("file:", "data:")) for u in requests), requests
    assert (ARTIFACTS / "report.png").stat().st_size > 20_000
