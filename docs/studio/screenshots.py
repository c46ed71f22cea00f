"""Regenerate the screenshots of docs/studio.md: ``python docs/studio/screenshots.py`` (needs shiny, Playwright
and Debian's Chromium). Starts ``designer studio problems/gwrr-dont-know.toml`` on a free local port, walks the
five steps with the answers of a simulated survey, and writes docs/studio/*.png."""

from __future__ import annotations

import re
import subprocess
import sys
import tempfile
from pathlib import Path

from playwright.sync_api import sync_playwright

ROOT = Path(__file__).resolve().parents[2]
OUT = Path(__file__).resolve().parent
DESIGNER = [sys.executable, "-m", "designer"]


def main() -> None:
    work = Path(tempfile.mkdtemp(prefix="studio-shots-"))
    proc = subprocess.Popen([*DESIGNER, "studio", "problems/gwrr-dont-know.toml", "--no-browser", "--port", "0"],
                            cwd=ROOT, stderr=subprocess.PIPE, text=True)
    assert proc.stderr is not None
    address = None
    while address is None and proc.poll() is None:
        found = re.search(r"(http://127\.0\.0\.1:\d+/)", proc.stderr.readline())
        address = found.group(1) if found else None
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=["--no-sandbox"])
            page = browser.new_page(viewport={"width": 1100, "height": 900}, accept_downloads=True)
            page.set_default_timeout(60_000)
            page.goto(address)
            page.wait_for_selector("#loaded_note p")
            page.screenshot(path=str(OUT / "1-question.png"), full_page=True)
            page.click("a[data-value='budget']")
            page.wait_for_selector("#curve_plot svg")
            page.screenshot(path=str(OUT / "2-budget.png"), full_page=True)
            page.click("a[data-value='worst_case']")
            page.wait_for_selector("#tradeoff_plot img")
            page.screenshot(path=str(OUT / "2-worst-case.png"), full_page=True)
            page.click("a[data-value='this_budget']")
            page.click("a[data-value='field']")
            with page.expect_download() as info:
                page.click("#download_mechanism")
            mech = work / "mechanism.json"
            info.value.save_as(mech)
            page.click("a[data-value='survey']")
            page.wait_for_selector("#plan_width_n")
            page.click("#split_with + .selectize-control .selectize-input")
            page.keyboard.type("warner")
            page.keyboard.press("Enter")
            page.keyboard.press("Escape")
            page.click("#split_run")
            page.wait_for_selector("#split_table")
            page.screenshot(path=str(OUT / "3-survey.png"), full_page=True)
            page.click("a[data-value='field']")
            page.click("#device_run")
            page.wait_for_selector("#device_matrix")
            page.wait_for_timeout(500)
            page.screenshot(path=str(OUT / "4-field.png"), full_page=True)
            subprocess.run([*DESIGNER, "synthesize", "problems/gwrr-dont-know.toml", "--n", "2000", "--prior",
                            "yes=0.3,no=0.7", "--seed", "1", "--out", str(work / "truth.csv")], cwd=ROOT, check=True)
            subprocess.run([*DESIGNER, "randomize", str(work / "truth.csv"), "--mechanism", str(mech), "--column",
                            "answer", "--out", str(work / "answers.csv"), "--seed", "2", "--simulation"],
                           cwd=ROOT, check=True, capture_output=True)
            page.click("a[data-value='answers']")
            page.set_input_files("#answers_file", str(work / "answers.csv"))
            page.wait_for_selector("#estimate_plot img")
            page.screenshot(path=str(OUT / "5-answers.png"), full_page=True)
            narrow = browser.new_page(viewport={"width": 420, "height": 900})
            narrow.goto(address)
            narrow.click("a[data-value='budget']")
            narrow.wait_for_selector("#curve_plot svg")
            narrow.screenshot(path=str(OUT / "2-budget-420px.png"), full_page=False)
            browser.close()
    finally:
        proc.terminate()
        proc.wait(timeout=10)


if __name__ == "__main__":
    main()
