"""The studio in Debian's Chromium (Playwright): the whole path by keyboard and mouse, every number against the
CLI's, downloads read back by the CLI, no request leaving 127.0.0.1, axe-core and a 420 px wide layout.

One studio server and one browser for the module. Skipped, with the reason, when Shiny, Playwright or a
Chromium is missing.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import pytest

pytest.importorskip("shiny", reason="the studio needs Shiny for Python (pip install shiny)")
sync_api = pytest.importorskip("playwright.sync_api",
                               reason="the browser tests need Playwright (pip install playwright)")

from designer._internal.render import fmt  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
GWRR = ROOT / "problems" / "gwrr-dont-know.toml"
CHROMIUM = next((p for p in ("/usr/bin/chromium", shutil.which("chromium"), shutil.which("chromium-browser"))
                 if p and os.path.exists(p)), None)
if CHROMIUM is None:
    pytest.skip("no Chromium found (apt-get install -y chromium)", allow_module_level=True)

DESIGNER = [sys.executable, "-m", "designer"]
TIMEOUT = 30_000


def cli(*args: str, cwd: Path | None = None) -> str:
    out = subprocess.run([*DESIGNER, *args], capture_output=True, text=True, cwd=cwd, timeout=120)
    assert out.returncode == 0, out.stderr
    return out.stdout


def cli_json(*args: str, cwd: Path | None = None) -> dict:
    return json.loads(cli(*args, "--format", "json", cwd=cwd))


@pytest.fixture(scope="module")
def server():
    proc = subprocess.Popen([*DESIGNER, "studio", str(GWRR), "--no-browser", "--port", "0"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT)
    address = None
    deadline = time.monotonic() + 60
    assert proc.stderr is not None
    while time.monotonic() < deadline:
        line = proc.stderr.readline()
        found = re.search(r"(http://127\.0\.0\.1:\d+/)", line)
        if found:
            address = found.group(1)
            break
        if proc.poll() is not None:
            break
    if address is None:
        proc.kill()
        pytest.fail(f"the studio did not start: {proc.stderr.read()}")
    yield address
    proc.terminate()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()


@pytest.fixture(scope="module")
def browser():
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        yield b
        b.close()


class Visit:
    """A page on the studio that records every request; anything not on 127.0.0.1 is blocked and kept."""

    def __init__(self, browser, address: str, width: int = 1100) -> None:
        self.context = browser.new_context(viewport={"width": width, "height": 900}, accept_downloads=True)
        self.page = self.context.new_page()
        self.page.set_default_timeout(TIMEOUT)
        self.outside: list[str] = []
        self.address = address

        def route(r):
            if r.request.url.startswith("http://127.0.0.1:") or r.request.url.startswith(("data:", "blob:", "about:")):
                r.continue_()
            else:
                self.outside.append(r.request.url)
                r.abort()

        self.context.route("**/*", route)
        self.page.on("request", lambda req: None if req.url.startswith(
            ("http://127.0.0.1:", "ws://127.0.0.1:", "data:", "blob:", "about:")) else self.outside.append(req.url))
        self.page.on("websocket", lambda ws: None if ws.url.startswith("ws://127.0.0.1:") else self.outside.append(
            ws.url))
        self.page.goto(address)
        self.page.wait_for_selector("#design_matrix", state="attached")

    def step(self, value: str) -> None:
        """Open a step by keyboard: focus its tab and press Enter."""
        self.page.focus(f"a[data-value='{value}']")
        self.page.keyboard.press("Enter")
        self.page.wait_for_selector(f"a[data-value='{value}'].active")

    def matrix(self) -> list[list[str]]:
        self.page.wait_for_selector("#design_matrix table")
        return self.page.eval_on_selector_all(
            "#design_matrix tbody tr", "rows => rows.map(r => Array.from(r.children).map(c => c.textContent))")

    def wait_matrix_change(self, before: list[list[str]]) -> list[list[str]]:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            self.page.wait_for_timeout(150)
            if not self.page.query_selector("#design_matrix.recalculating") and self.matrix() != before:
                return self.matrix()
        raise AssertionError("the design matrix did not change")

    def idle(self) -> None:
        self.page.wait_for_function("() => Array.from(document.querySelectorAll('.recalculating'))"
                                    ".every(e => e.offsetParent === null)")
        self.page.wait_for_timeout(200)

    def download(self, button: str, folder: Path) -> Path:
        with self.page.expect_download() as info:
            self.page.click(f"#{button}")
        target = folder / info.value.suggested_filename
        info.value.save_as(target)
        return target

    def close(self) -> None:
        self.context.close()


@pytest.fixture(scope="module")
def visit(server, browser):
    v = Visit(browser, server)
    yield v
    v.close()
    assert v.outside == [], f"requests left 127.0.0.1: {v.outside}"


def cli_matrix(eps: float) -> list[list[str]]:
    data = cli_json("design", str(GWRR), "--eps", repr(eps))
    return [[x, *(fmt(v, 8) for v in row)] for x, row in zip(data["inputs"], data["matrix"])]


def test_matrix_is_the_clis_and_follows_the_budget(visit):
    visit.step("budget")
    first = visit.matrix()
    assert first == cli_matrix(1.0)
    assert first[0][1:] == ["0.58484686", "0.21515314", "0.2"]
    # typed into the number box (keyboard)
    visit.page.fill("#epsilon", "2")
    visit.page.keyboard.press("Tab")
    second = visit.wait_matrix_change(first)
    assert second == cli_matrix(2.0)
    # the slider by keyboard: one step right is 2.05
    visit.page.focus("#epsilon_slider")
    visit.page.keyboard.press("ArrowRight")
    third = visit.wait_matrix_change(second)
    assert visit.page.input_value("#epsilon") == "2.05"
    assert third == cli_matrix(2.05)
    # back to 1 with the mouse on the box
    visit.page.click("#epsilon")
    visit.page.fill("#epsilon", "1")
    visit.page.keyboard.press("Enter")
    assert visit.wait_matrix_change(third) == cli_matrix(1.0)


def test_certificate_variance_and_closed_forms_are_the_clis(visit):
    visit.step("budget")
    visit.idle()
    table = cli("design", str(GWRR), "--eps", "1").splitlines()
    cert = next(line for line in table if line.startswith("certified: "))
    var = next(line for line in table if line.startswith("variance "))
    assert visit.page.inner_text("#certificate").strip() == cert
    assert visit.page.inner_text("#variance").strip() == var
    assert "0.58484686" in visit.page.inner_text("#truthful")
    compare = cli_json("compare", str(GWRR), "--eps", "1")["rows"][0]
    rows = visit.page.eval_on_selector_all(
        "#closed_forms tbody tr", "rows => rows.map(r => Array.from(r.children).map(c => c.textContent))")
    gwrr = next(r for r in rows if r[0].startswith("GWRR"))
    assert gwrr[2] == fmt(compare["p_closed"], 8)
    assert gwrr[3] == fmt(compare["variance_closed"], 8)
    krr = next(r for r in rows if r[0] == "2-RR")
    assert float(krr[2]) == pytest.approx(1 / (1 + 1 / 2.718281828459045), rel=1e-7)  # e/(e+1)
    # the worst-case tab: credal bounds of the CLI, the trade-off curve drawn
    visit.page.click("a[data-value='worst_case']")
    visit.page.wait_for_selector("#credal_table table")
    visit.page.wait_for_selector("#tradeoff_plot img")
    text = visit.page.inner_text("#credal_table")
    assert fmt(0.584846862904004, 6) in text and fmt(0.7848468629040041, 6) in text
    visit.page.click("a[data-value='this_budget']")


def test_survey_numbers_are_the_clis(visit, tmp_path):
    visit.step("field")
    mech = visit.download("download_mechanism", tmp_path)
    visit.step("survey")
    visit.page.fill("#target_width", "0.03")
    visit.page.keyboard.press("Tab")
    plan = cli_json("plan", str(mech), "--width", "0.03", "--prior", "yes=0.5,no=0.5")
    visit.page.wait_for_function(f"() => document.querySelector('#plan_width_n') && document.querySelector("
                                 f"'#plan_width_n').textContent.includes('{plan['n']} respondents')")
    visit.page.fill("#plan_n", "2500")
    visit.page.keyboard.press("Tab")
    at_n = cli_json("plan", str(mech), "--n", "2500", "--width", "0.05")["width_at_n"]["width"]
    visit.page.wait_for_function(f"() => document.querySelector('#plan_n_width') && "
                                 f"document.querySelector('#plan_n_width').textContent === '{fmt(at_n, 6)}'")
    power = cli_json("plan", str(mech), "--detect", "0.1")
    assert f"{power['n']} respondents" in visit.page.inner_text("#plan_power_n")
    # a questionnaire: this question with Warner's under a budget of 2
    visit.page.click("#split_with + .selectize-control .selectize-input")
    visit.page.keyboard.type("warner")
    visit.page.keyboard.press("Enter")
    visit.page.wait_for_selector("#split_with + .selectize-control .item[data-value$='warner.toml']")
    dropdown = visit.page.locator("#split_with + .selectize-control .selectize-dropdown")
    for _ in range(5):  # a loaded machine may still be opening the list when Escape comes: close it for sure
        visit.page.keyboard.press("Escape")
        try:
            dropdown.wait_for(state="hidden", timeout=3_000)
            break
        except sync_api.TimeoutError:
            continue
    visit.page.click("#split_run")
    visit.page.wait_for_selector("#split_table", timeout=60_000)
    rows = visit.page.eval_on_selector_all("#split_table tbody tr", "rows => rows.map(r => r.children[1].textContent)")
    assert len(rows) == 2 and sum(float(r) for r in rows) == pytest.approx(2.0, rel=1e-5)


def test_field_downloads_are_read_back_by_the_cli(visit, tmp_path):
    visit.step("field")
    visit.idle()
    mech = visit.download("download_mechanism", tmp_path)
    data = json.loads(mech.read_text())
    assert data["release"]["epsilon"] == 1.0
    assert cli_json("audit", str(mech))  # the CLI reads it, with its certificate checked
    problem = visit.download("download_problem", tmp_path)
    assert cli_matrix(1.0) == [[x, *(fmt(v, 8) for v in row)] for x, row in zip(
        data["inputs"], cli_json("design", str(problem), "--eps", "1")["matrix"])]
    page = visit.download("download_page", tmp_path)
    assert "<html" in page.read_text().lower()
    frame = visit.page.frame_locator("#page_iframe")
    frame.locator("input[type=radio]").first.check()  # the exported page itself, live in its frame
    for button in ("download_qualtrics", "download_limesurvey"):
        assert "Math.random" not in visit.download(button, tmp_path).read_text()
    visit.page.select_option("#device", "die")
    visit.page.click("#device_run")
    visit.page.wait_for_selector("#device_matrix")
    device = cli_json("design", str(GWRR), "--eps", "1", "--device", "die")
    cells = visit.page.eval_on_selector_all("#device_matrix tbody td", "cs => cs.map(c => c.textContent)")
    assert cells == [v for row in device["matrix_exact"] for v in row]
    card = visit.download("download_card", tmp_path)
    assert "<html" in card.read_text().lower()
    commands = visit.download("download_commands", tmp_path).read_text()
    assert "designer design problem.toml --eps 1 --out mechanism.json" in commands
    # the command lines on screen run as they are next to the downloads
    work = tmp_path / "replay"
    work.mkdir()
    shutil.copy(problem, work / "problem.toml")
    line = next(li for li in visit.page.inner_text("#cli_commands").splitlines() if li.startswith("designer design"))
    assert json.loads(cli(*line.split()[1:], cwd=work))["matrix"] == data["matrix"]


def test_answers_give_the_clis_estimates(visit, tmp_path):
    visit.step("field")
    mech = visit.download("download_mechanism", tmp_path)
    cli("synthesize", str(GWRR), "--n", "3000", "--prior", "yes=0.3,no=0.7", "--seed", "4", "--out",
        str(tmp_path / "truth.csv"))
    cli("randomize", str(tmp_path / "truth.csv"), "--mechanism", str(mech), "--column", "answer", "--out",
        str(tmp_path / "answers.csv"), "--seed", "5", "--simulation")
    expected = cli_json("estimate", str(tmp_path / "answers.csv"), "--mechanism", str(mech))
    visit.step("answers")
    visit.page.set_input_files("#answers_file", str(tmp_path / "answers.csv"))
    visit.page.wait_for_selector("#estimate_table table")
    assert visit.page.inner_text("#estimate_status") == expected["status"]
    rows = visit.page.eval_on_selector_all(
        "#estimate_table tbody tr", "rows => rows.map(r => Array.from(r.children).map(c => c.textContent))")
    for row in rows:
        x = row[0]
        assert row[1:] == [fmt(expected[c][x], 8) for c in ("estimate", "stderr", "ci_low", "ci_high")]
    visit.page.wait_for_selector("#estimate_plot img")
    # a microdata release of the true answers, with its manifest
    visit.page.set_input_files("#truth_file", str(tmp_path / "truth.csv"))
    visit.page.click("#release_run")
    visit.page.wait_for_selector("#release_summary")
    release = visit.download("download_release", tmp_path)
    with zipfile.ZipFile(release) as z:
        names = sorted(z.namelist())
        z.extractall(tmp_path / "release")
    assert names == ["released.csv", "released.csv.manifest.json"]
    manifest = json.loads((tmp_path / "release" / "released.csv.manifest.json").read_text())
    assert "answer" in json.dumps(manifest)
    back = cli_json("estimate", str(tmp_path / "release" / "released.csv"), "--mechanism", str(mech))
    assert back["status"] == "converged" and back["n"] == 3000


def test_an_uploaded_mechanism_is_used_as_it_is(visit, tmp_path):
    five = tmp_path / "five.json"
    cli("design", str(ROOT / "problems" / "survey-5-options.toml"), "--eps", "2", "--out", str(five))
    data = json.loads(five.read_text())
    visit.step("question")
    visit.page.set_input_files("#problem_file", str(five))
    visit.page.wait_for_function("() => document.querySelector('#inputs').value.startsWith('never')")
    visit.step("budget")
    visit.page.wait_for_function("() => document.querySelectorAll('#design_matrix tbody tr').length === 5")
    assert visit.matrix() == [[x, *(fmt(v, 8) for v in row)] for x, row in zip(data["inputs"], data["matrix"])]
    assert "stated in the file" in visit.page.inner_text("#certificate")
    visit.step("field")
    got = visit.download("download_mechanism", tmp_path / "back")
    assert json.loads(got.read_text())["matrix"] == data["matrix"]
    visit.step("question")
    visit.page.set_input_files("#problem_file", str(GWRR))
    visit.page.wait_for_function("() => document.querySelector('#inputs').value === 'yes, no'")
    visit.page.wait_for_selector(".studio-ok")


def test_question_from_an_uploaded_problem(visit):
    visit.step("question")
    visit.page.set_input_files("#problem_file", str(ROOT / "problems" / "warner.toml"))
    visit.page.wait_for_function("() => document.querySelector('#inputs').value === 'yes, no' && "
                                 "document.querySelector('#answers').value.includes('yes')")
    visit.step("budget")
    before = visit.matrix()
    data = cli_json("design", str(ROOT / "problems" / "warner.toml"), "--eps", "1")
    expected = [[x, *(fmt(v, 8) for v in row)] for x, row in zip(data["inputs"], data["matrix"])]
    got = before if before == expected else visit.wait_matrix_change(before)
    assert got == expected
    # edit the question by keyboard: three inputs, a don't-know answer
    visit.step("question")
    visit.page.fill("#inputs", "low, mid, high")
    visit.page.fill("#answers", "low\nmid\nhigh\nlow | mid | high")
    visit.page.keyboard.press("Tab")
    visit.page.wait_for_selector(".studio-ok")
    visit.step("budget")
    visit.page.wait_for_function("() => document.querySelectorAll('#design_matrix tbody tr').length === 3")
    assert [r[0] for r in visit.matrix()] == ["low", "mid", "high"]
    visit.step("question")
    visit.page.fill("#inputs", "only")
    visit.page.keyboard.press("Tab")
    visit.page.wait_for_selector(".studio-error")
    # back to the GWRR problem for the other tests
    visit.page.set_input_files("#problem_file", str(GWRR))
    visit.page.wait_for_selector(".studio-ok")


@pytest.fixture(scope="module")
def axe_source(tmp_path_factory):
    folder = tmp_path_factory.mktemp("axe")
    npm = shutil.which("npm")
    if npm is None:
        pytest.skip("axe-core cannot be had: no npm")
    got = subprocess.run([npm, "install", "--no-audit", "--no-fund", "--silent", "--prefix", str(folder), "axe-core"],
                         capture_output=True, text=True, timeout=180)
    script = folder / "node_modules" / "axe-core" / "axe.min.js"
    if got.returncode != 0 or not script.exists():
        pytest.skip(f"axe-core cannot be had (npm install failed: {got.stderr.strip()[:200]})")
    return script.read_text()


@pytest.mark.parametrize("width", [1100, 420])
def test_every_step_is_accessible_and_fits(browser, server, axe_source, width, tmp_path):
    v = Visit(browser, server, width=width)
    try:
        for step in ("question", "budget", "survey", "field", "answers"):
            v.step(step)
            v.idle()
            v.page.screenshot(path=str(tmp_path / f"{step}-{width}.png"), full_page=True)
            v.page.add_script_tag(content=axe_source)
            result = v.page.evaluate("async () => await axe.run(document, {runOnly: ['wcag2a', 'wcag2aa']})")
            assert len(result["passes"]) > 10  # axe ran its rules on the page
            problems = [(x["id"], [n["target"] for n in x["nodes"]][:3]) for x in result["violations"]]
            assert problems == [], f"{step} at {width}px: {problems}"
            overflow = v.page.evaluate("() => document.documentElement.scrollWidth")
            assert overflow <= width + 1, f"{step} is {overflow}px wide at {width}px"
        # the checker itself: an unlabelled box is caught
        v.page.evaluate("() => document.body.appendChild(Object.assign(document.createElement('input'), "
                        "{type: 'text', id: 'unlabelled'}))")
        result = v.page.evaluate("async () => await axe.run(document, {runOnly: ['wcag2a', 'wcag2aa']})")
        assert "label" in {x["id"] for x in result["violations"]}
    finally:
        v.close()
    assert v.outside == []


def tab_to(page, selector: str, limit: int = 80) -> None:
    """Press Tab until ``selector`` has the focus (keyboard only)."""
    trail = []
    for _ in range(limit):
        page.keyboard.press("Tab")
        if page.evaluate("s => document.activeElement && document.activeElement.matches(s)", selector):
            return
        trail.append(page.evaluate("() => document.activeElement.tagName + '#' + document.activeElement.id"))
    raise AssertionError(f"{selector} cannot be reached with the Tab key: {trail[:30]}")


def test_keyboard_only(browser, server):
    v = Visit(browser, server)
    try:
        page = v.page
        page.evaluate("() => document.activeElement && document.activeElement.blur()")
        tab_to(page, "a[data-value='question']")  # the tab list is one stop; arrows move along it
        page.keyboard.press("ArrowRight")
        page.wait_for_selector("a[data-value='budget'].active")
        before = v.matrix()
        tab_to(page, "#epsilon")
        page.keyboard.press("Control+A")
        page.keyboard.type("1.5")
        page.keyboard.press("Tab")  # on to the slider
        assert page.evaluate("() => document.activeElement.id") == "epsilon_slider"
        page.keyboard.press("ArrowLeft")
        after = v.wait_matrix_change(before)
        assert page.input_value("#epsilon") == "1.45"
        assert after == cli_matrix(1.45)
        # every control of every step is reached by Tab from its step's tab
        controls = {"question": ["#bundled-selectized, #bundled", "#problem_file", "#inputs", "#answers", "#dont_know",
                                 "#prior_unknown", "#prior", "input[name='semantics']", "#objective"],
                    "survey": ["#target_width", "#level", "#plan_n", "#detect", "#power", "#alpha", "#split_run"],
                    "field": ["#device", "#device_run", "#page_question", "#download_mechanism",
                              "#download_problem", "#download_commands"],
                    "answers": ["#answers_file", "#answer_column", "#estimate_level", "#truth_file", "#release_run",
                                "#download_release"]}
        for step, selectors in controls.items():
            page.focus("#steps a.active")
            for _ in range(5):
                if page.query_selector(f"a[data-value='{step}'].active"):
                    break
                page.keyboard.press("ArrowRight" if step != "question" else "ArrowLeft")
            page.wait_for_selector(f"a[data-value='{step}'].active")
            v.idle()
            page.wait_for_function("() => !document.querySelector('.tab-pane.active a.shiny-download-link.disabled')")
            for selector in selectors:
                tab_to(page, selector)
    finally:
        v.close()
    assert v.outside == []
