"""Regenerate the screenshots of docs/studio.md: ``python docs/studio/screenshots.py`` (needs shiny, Playwright and
Debian's Chromium). Starts ``designer studio problems/gwrr-dont-know.toml`` on a free local port, walks the five
steps with the answers of a simulated survey at 1280 and at 420 px, shows the red flag of the bundled 5-option
question at a skewed prior, and writes docs/studio/*.png."""

from __future__ import annotations

import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from playwright.sync_api import sync_playwright

ROOT = Path(__file__).resolve().parents[2]
OUT = Path(__file__).resolve().parent
DESIGNER = [sys.executable, "-m", "designer"]
STEPS = ("question", "budget", "survey", "field", "answers")


def idle(page: Any) -> None:
    page.wait_for_timeout(400)
    page.wait_for_function("() => !document.documentElement.classList.contains('shiny-busy') && Array.from("
                           "document.querySelectorAll('.recalculating')).every(e => e.offsetParent === null)")
    page.wait_for_timeout(600)


def walk(browser: Any, address: str, width: int, work: Path) -> None:
    """The five steps at ``width`` px: a device design, the plans, the answers of a simulated survey."""
    suffix = "" if width >= 1000 else f"-{width}px"
    page = browser.new_page(viewport={"width": width, "height": 900}, accept_downloads=True)
    page.set_default_timeout(120_000)
    page.goto(address)
    page.wait_for_selector("#loaded_note p")
    idle(page)
    page.screenshot(path=str(OUT / f"1-question{suffix}.png"), full_page=True)
    page.click("#step_next")
    page.wait_for_selector("#curve_plot .studio-legend")
    page.wait_for_function("() => !document.querySelector('#curve_plot').innerText.includes('Drawing the curve')")
    idle(page)
    page.screenshot(path=str(OUT / f"2-budget{suffix}.png"), full_page=True)
    if not suffix:
        page.click("a[data-value='worst_case']")
        page.wait_for_selector("#tradeoff_plot .studio-legend")
        idle(page)
        page.screenshot(path=str(OUT / "2-worst-case.png"), full_page=True)
        page.click("a[data-value='this_budget']")
    page.click("#step_next")
    page.wait_for_selector("#plan_width_n")
    page.click("#split_with + .selectize-control .selectize-input")
    page.keyboard.type("warner")
    page.keyboard.press("Enter")
    page.keyboard.press("Escape")
    page.click("#split_run")
    page.wait_for_selector("#split_table")
    idle(page)
    page.screenshot(path=str(OUT / f"3-survey{suffix}.png"), full_page=True)
    page.click("#step_next")
    page.click("#device_run")
    page.wait_for_selector("#device_matrix")
    idle(page)
    page.screenshot(path=str(OUT / f"4-field{suffix}.png"), full_page=True)
    with page.expect_download() as info:
        page.click("#download_mechanism")
    mech = work / f"mechanism{suffix}.json"
    info.value.save_as(mech)
    subprocess.run([*DESIGNER, "synthesize", "problems/gwrr-dont-know.toml", "--n", "2000", "--prior",
                    "yes=0.3,no=0.7", "--seed", "1", "--out", str(work / f"truth{suffix}.csv")], cwd=ROOT, check=True)
    subprocess.run([*DESIGNER, "randomize", str(work / f"truth{suffix}.csv"), "--mechanism", str(mech), "--column",
                    "answer", "--out", str(work / f"answers{suffix}.csv"), "--seed", "2", "--simulation"],
                   cwd=ROOT, check=True, capture_output=True)
    page.click("#step_next")
    page.set_input_files("#answers_file", str(work / f"answers{suffix}.csv"))
    page.wait_for_selector("#estimate_plot .studio-fig", state="attached")
    idle(page)
    page.screenshot(path=str(OUT / f"5-answers{suffix}.png"), full_page=True)
    page.close()


def flag(browser: Any, address: str) -> None:
    """The bundled 5-option question at the prior 0.4, 0.3, 0.15, 0.1, 0.05 and eps 2, designed for chi2: flagged."""
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    page.set_default_timeout(120_000)
    page.goto(address)
    page.wait_for_selector("#loaded_note p")
    page.set_input_files("#problem_file", str(ROOT / "problems" / "survey-5-options.toml"))
    page.wait_for_function("() => document.querySelector('#inputs').value.startsWith('never')")
    idle(page)
    page.fill("#prior", "0.4, 0.3, 0.15, 0.1, 0.05")
    page.keyboard.press("Enter")
    idle(page)
    page.select_option("#objective", "chi2")  # the file designs for the variance; chi2 lumps often and always
    idle(page)
    page.click("#step_next")
    page.wait_for_selector("#identification_flag")
    idle(page)
    page.screenshot(path=str(OUT / "2-budget-flag.png"), full_page=False)
    page.close()


def main() -> None:
    work = Path(tempfile.mkdtemp(prefix="studio-shots-"))
    proc = subprocess.Popen([*DESIGNER, "studio", "problems/gwrr-dont-know.toml", "--no-browser", "--port", "0"],
                            cwd=ROOT, stderr=subprocess.PIPE, text=True)
    assert proc.stderr is not None
    address = None
    while address is None and proc.poll() is None:
        found = re.search(r"(http://127\.0\.0\.1:\d+/)", proc.stderr.readline())
        address = found.group(1) if found else None
    if address is None:
        raise SystemExit("the studio did not start")
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=["--no-sandbox"])
            for width in (1280, 420):
                walk(browser, address, width, work)
            flag(browser, address)
            browser.close()
    finally:
        proc.terminate()
        proc.wait(timeout=10)


if __name__ == "__main__":
    main()
