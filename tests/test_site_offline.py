"""The built site works offline and prints flags as typed (issue 58); run after ``make docs``.

The maths is typeset by the MathJax shipped in ``_static/mathjax`` (the ``docs`` extra's sphinx-mathjax-offline):
the theory page is opened in headless Chromium with every request off this machine refused, and its formulas
come out as MathJax containers with no raw TeX left. Flags keep their two hyphens (``smartquotes = False``):
no page prints an en dash where an option's ``--`` was. No page prints the absolute folder it was built in.
Skipped when the site is not built (``make docs``) or Chromium / Playwright is missing.
"""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SITE = ROOT / "docs" / "_build" / "html"
THEORY = SITE / "theory.html"

pytestmark = pytest.mark.skipif(not THEORY.is_file(), reason="the site is not built (make docs)")

#: An en dash or an em dash where a flag's hyphens were: ``–kind``, ``—out``.
_DASHED_FLAG = re.compile(r"[\u2013\u2014][a-z][a-z0-9-]*")


def _pages() -> list[Path]:
    return sorted(p for p in SITE.rglob("*.html") if "_static" not in p.parts)


def test_no_flag_is_printed_with_an_en_dash():
    dashed = {str(p.relative_to(SITE)): found for p in _pages() if (found := _DASHED_FLAG.findall(p.read_text()))}
    assert dashed == {}
    cli = (SITE / "reference" / "cli.html").read_text()
    assert "--kind" in cli and "--epsilon" in cli


def test_the_maths_is_served_by_the_site():
    scripts = re.findall(r'<script[^>]*src="([^"]*mathjax[^"]*)"', THEORY.read_text(), flags=re.I)
    assert scripts and all(not s.startswith(("http:", "https:", "//")) for s in scripts), scripts
    assert all((THEORY.parent / s).is_file() for s in scripts)
    assert not [p for p in _pages() if "cdn.jsdelivr.net" in p.read_text()]


def test_no_page_prints_the_build_folder():
    assert [str(p.relative_to(SITE)) for p in _pages() if str(ROOT) in p.read_text()] == []


@pytest.mark.timeout(120)
def test_theory_page_is_typeset_with_the_network_off(tmp_path):
    sync_api = pytest.importorskip("playwright.sync_api", reason="needs Playwright (pip install playwright)")
    chromium = next((p for p in ("/usr/bin/chromium", shutil.which("chromium")) if p and os.path.exists(p)), None)
    if chromium is None:
        pytest.skip("no Chromium found (apt-get install -y chromium)")
    refused: list[str] = []

    def route(r):
        if r.request.url.startswith(("file:", "data:", "blob:", "about:")):
            r.continue_()
        else:
            refused.append(r.request.url)
            r.abort()

    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.route("**/*", route)
            page.goto(THEORY.as_uri())
            page.wait_for_function("() => window.MathJax && MathJax.startup && MathJax.startup.promise", timeout=60_000)
            page.evaluate("() => MathJax.startup.promise")
            containers = page.locator("mjx-container").count()
            text = page.locator("article").inner_text()
            page.screenshot(path=str(tmp_path / "theory.png"))
        finally:
            browser.close()
    formulas = THEORY.read_text().count('class="math')
    assert formulas > 100 and containers >= formulas, (containers, formulas)
    raw = re.findall(r"\\\(|\\\[|\\frac|\\mathrm|\\sum|\$\$", text)
    assert raw == [], raw[:5]
    assert not [u for u in refused if "mathjax" in u.lower()]
