"""Helpers of the studio's browser tests: a studio server with its log kept, Debian's Chromium through Playwright,
and a page that records every request (anything not on 127.0.0.1 is blocked and kept) and every failed response.

Imported by tests/test_studio.py and tests/test_studio_findings.py; skipped (with the reason) when Shiny,
Playwright or a Chromium is missing.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("shiny", reason="the studio needs Shiny for Python (pip install shiny)")
sync_api = pytest.importorskip("playwright.sync_api",
                               reason="the browser tests need Playwright (pip install playwright)")

ROOT = Path(__file__).resolve().parents[1]
PROBLEMS = ROOT / "problems"
GWRR = PROBLEMS / "gwrr-dont-know.toml"
FIVE = PROBLEMS / "survey-5-options.toml"
SKEWED = "0.4, 0.3, 0.15, 0.1, 0.05"
CHROMIUM = next((p for p in ("/usr/bin/chromium", shutil.which("chromium"), shutil.which("chromium-browser"))
                 if p and os.path.exists(p)), None)
DESIGNER = [sys.executable, "-m", "designer"]
TIMEOUT = 60_000
LOCAL = ("http://127.0.0.1:", "ws://127.0.0.1:", "data:", "blob:", "about:")


def need_chromium() -> str:
    if CHROMIUM is None:
        pytest.skip("no Chromium found (apt-get install -y chromium)")
    return CHROMIUM


def cli(*args: str, cwd: Path | None = None) -> str:
    out = subprocess.run([*DESIGNER, *args], capture_output=True, text=True, cwd=cwd or ROOT, timeout=300)
    assert out.returncode == 0, out.stderr
    return out.stdout


def cli_json(*args: str, cwd: Path | None = None) -> Any:
    return json.loads(cli(*args, "--format", "json", cwd=cwd))


class Studio:
    """``designer studio FILE --no-browser --port 0`` with its standard error kept in a file (the server's log)."""

    def __init__(self, *args: str) -> None:
        self.folder = tempfile.mkdtemp(prefix="studio-test-")
        self.log_path = Path(self.folder) / "server.log"
        self._log = open(self.log_path, "w")
        self.proc = subprocess.Popen([*DESIGNER, "studio", *args, "--no-browser", "--port", "0"], cwd=ROOT,
                                     stdout=subprocess.DEVNULL, stderr=self._log, text=True)
        deadline = time.monotonic() + 90
        self.address = ""
        while time.monotonic() < deadline and not self.address:
            found = re.search(r"(http://127\.0\.0\.1:\d+/)", self.log())
            if found:
                self.address = found.group(1)
            elif self.proc.poll() is not None:
                break
            time.sleep(0.1)
        if not self.address:
            log = self.log()
            self.stop()
            pytest.fail(f"the studio did not start: {log}")

    def log(self) -> str:
        return self.log_path.read_text()

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=15)
        self._log.close()
        shutil.rmtree(self.folder, ignore_errors=True)


class Visit:
    """A page on the studio that records every request; anything not on 127.0.0.1 is blocked and kept, and every
    response of status 400 or more is kept."""

    def __init__(self, browser: Any, address: str, width: int = 1280, locale: str = "en-US") -> None:
        self.context = browser.new_context(viewport={"width": width, "height": 900}, accept_downloads=True,
                                           locale=locale)
        self.page = self.context.new_page()
        self.page.set_default_timeout(TIMEOUT)
        self.outside: list[str] = []
        self.failed: list[str] = []
        self.address = address

        def route(r: Any) -> None:
            if r.request.url.startswith(LOCAL):
                r.continue_()
            else:
                self.outside.append(r.request.url)
                r.abort()

        self.context.route("**/*", route)
        self.page.on("request", lambda req: None if req.url.startswith(LOCAL) else self.outside.append(req.url))
        self.page.on("websocket", lambda ws: None if ws.url.startswith("ws://127.0.0.1:") else self.outside.append(
            ws.url))
        self.page.on("response", lambda r: self.failed.append(f"{r.status} {r.url}") if r.status >= 400 else None)
        # counts the server's idle signals: after a change, wait for the round trip it starts (see type())
        self.page.add_init_script("window.__idle = 0; document.addEventListener('DOMContentLoaded', () => "
                                  "{ if (window.jQuery) { jQuery(document).on('shiny:idle', () => window.__idle++); } "
                                  "});")
        self.page.goto(address)
        self.page.wait_for_selector("#design_matrix table", state="attached")
        self.idle()

    def step(self, value: str) -> None:
        """Open a step by keyboard: focus its tab and press Enter."""
        self.page.focus(f"#steps a[data-value='{value}']")
        self.page.keyboard.press("Enter")
        self.page.wait_for_selector(f"#steps a[data-value='{value}'].active")
        self.idle()

    def matrix(self) -> list[list[str]]:
        self.page.wait_for_selector("#design_matrix table", state="attached")
        return self.page.eval_on_selector_all(
            "#design_matrix tbody tr", "rows => rows.map(r => Array.from(r.children).map(c => c.textContent))")

    def wait_matrix_change(self, before: list[list[str]]) -> list[list[str]]:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            self.page.wait_for_timeout(150)
            if not self.page.query_selector("#design_matrix.recalculating") and self.matrix() != before:
                return self.matrix()
        raise AssertionError("the design matrix did not change")

    def idle(self) -> None:
        """Wait until Shiny has nothing left to compute."""
        self.page.wait_for_function("() => !document.documentElement.classList.contains('shiny-busy') && "
                                    "Array.from(document.querySelectorAll('.recalculating'))"
                                    ".every(e => e.offsetParent === null)")
        self.page.wait_for_timeout(300)
        self.page.wait_for_function("() => !document.documentElement.classList.contains('shiny-busy')")

    def type(self, selector: str, text: str) -> None:
        """Type into a field by keyboard and leave it (Shiny reads a text field when it changes); wait for the
        server's answer."""
        self.page.fill(selector, "")
        self.page.focus(selector)
        self.page.keyboard.type(text)
        self.settle(lambda: self.page.keyboard.press("Enter"))

    def settle(self, act: Any) -> None:
        """Do ``act()`` and wait until the server has answered it (its next idle signal), then until idle."""
        before = self.page.evaluate("() => window.__idle || 0")
        act()
        try:
            self.page.wait_for_function("n => (window.__idle || 0) > n", arg=before, timeout=15_000)
        except sync_api.TimeoutError:
            pass  # the change started no computation
        self.idle()

    def text(self, selector: str) -> str:
        el = self.page.query_selector(selector)
        return el.inner_text() if el is not None else ""

    def download(self, button: str, folder: Path) -> Path:
        self.page.wait_for_selector(f"#{button}:not(.disabled)")
        with self.page.expect_download() as info:
            self.page.click(f"#{button}")
        folder.mkdir(parents=True, exist_ok=True)
        target = folder / info.value.suggested_filename
        info.value.save_as(target)
        return target

    def upload(self, selector: str, path: Path) -> None:
        self.settle(lambda: self.page.set_input_files(selector, str(path)))

    def close(self) -> None:
        self.context.close()


def launch(playwright: Any) -> Any:
    return playwright.chromium.launch(executable_path=need_chromium(), args=["--no-sandbox"])


@pytest.fixture(scope="module")
def browser() -> Any:
    """Debian's Chromium, one per test module."""
    with sync_api.sync_playwright() as p:
        b = launch(p)
        yield b
        b.close()


@pytest.fixture(scope="module")
def server() -> Any:
    """``designer studio problems/gwrr-dont-know.toml``, one per test module."""
    s = Studio(str(GWRR))
    yield s
    s.stop()


def axe_script(folder: Path) -> str:
    """axe-core's script, installed with npm into ``folder`` (skips, with the reason, when it cannot be had)."""
    cache = Path(os.environ.get("DESIGNER_AXE_CACHE", Path(tempfile.gettempdir()) / "designer-axe-core"))
    script = cache / "node_modules" / "axe-core" / "axe.min.js"
    if not script.exists():
        npm = shutil.which("npm")
        if npm is None:
            pytest.skip("axe-core cannot be had: no npm (install node and npm)")
        cache.mkdir(parents=True, exist_ok=True)
        got = subprocess.run([npm, "install", "--no-audit", "--no-fund", "--silent", "--prefix", str(cache),
                              "axe-core"], capture_output=True, text=True, timeout=300)
        if got.returncode != 0 or not script.exists():
            pytest.skip(f"axe-core cannot be had (npm install failed: {got.stderr.strip()[:200]})")
    return script.read_text()


def tab_to(page: Any, selector: str, limit: int = 120) -> list[str]:
    """Press Tab until ``selector`` has the focus (keyboard only); returns the stops passed on the way."""
    trail = []
    for _ in range(limit):
        page.keyboard.press("Tab")
        if page.evaluate("s => document.activeElement && document.activeElement.matches(s)", selector):
            return trail
        trail.append(page.evaluate("() => { const e = document.activeElement; return e.tagName + '#' + e.id + '.' + "
                                   "(e.className || '') }"))
    raise AssertionError(f"{selector} cannot be reached with the Tab key: {trail[:40]}")
