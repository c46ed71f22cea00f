"""The studio in Debian's Chromium (Playwright): every number on screen against the command line's (run as a
separate process), downloads read back by the command line, axe-core at 1280 and 420 px on every step, the whole
path by keyboard only, and no request leaving 127.0.0.1.

One studio server and one browser for the module; the findings of issue 50 are in test_studio_findings.py.
Skipped, with the reason, when Shiny, Playwright or a Chromium is missing.
"""

from __future__ import annotations

import json
import math
import shlex
import zipfile
from pathlib import Path

import pytest

from designer._internal.render import fmt
from tests import studio_browser
from tests.studio_browser import (
    FIVE,
    GWRR,
    PROBLEMS,
    Studio,
    Visit,
    axe_script,
    cli,
    cli_json,
    sync_api,
    tab_to,
)

browser = studio_browser.browser  # the module's Chromium and studio server (fixtures, used by name)
server = studio_browser.server
STEPS = ("question", "budget", "survey", "field", "answers")


@pytest.fixture(scope="module")
def visit(server, browser):
    v = Visit(browser, server.address)
    yield v
    v.close()
    assert v.outside == [], f"requests left 127.0.0.1: {v.outside}"


def cli_matrix(eps: float, problem: Path = GWRR) -> list[list[str]]:
    data = cli_json("design", str(problem), "--eps", repr(eps))
    return [[x, *(fmt(v, 8) for v in row)] for x, row in zip(data["inputs"], data["matrix"])]


def rows(v: Visit, selector: str) -> list[list[str]]:
    return v.page.eval_on_selector_all(f"{selector} tbody tr",
                                       "rs => rs.map(r => Array.from(r.children).map(c => c.textContent))")


def test_matrix_is_the_clis_and_follows_the_budget(visit):
    visit.step("budget")
    first = visit.matrix()
    assert first == cli_matrix(1.0)
    assert first[0][1:] == ["0.58484686", "0.21515314", "0.2"]
    visit.type("#epsilon", "2")  # typed into the box (keyboard)
    second = visit.wait_matrix_change(first)
    assert second == cli_matrix(2.0)
    visit.page.focus("#epsilon_slider")  # the slider by keyboard: one step right is 2.05
    visit.settle(lambda: visit.page.keyboard.press("ArrowRight"))
    third = visit.wait_matrix_change(second)
    assert visit.page.input_value("#epsilon") == "2.05"
    assert third == cli_matrix(2.05)
    visit.type("#epsilon", "1")
    assert visit.wait_matrix_change(third) == cli_matrix(1.0)


def test_certificate_variance_and_textbook_designs_are_the_clis(visit):
    visit.step("budget")
    data = cli_json("design", str(GWRR), "--eps", "1")
    assert f"within the budget {data['epsilon']:g}" in visit.text("#certificate_text")
    assert visit.text("#variance_text").endswith(fmt(data["variance"], 8))
    assert "0.58484686" in visit.text("#truthful_text")
    compare = cli_json("compare", str(GWRR), "--eps", "1")["rows"][0]
    table = rows(visit, "#closed_forms")
    gwrr = next(r for r in table if r[0].startswith("With don't know"))
    assert gwrr[1:] == [fmt(compare["p_closed"], 8), fmt(compare["variance_closed"], 8)]
    krr = next(r for r in table if r[0].startswith("2-ary"))
    assert float(krr[1]) == pytest.approx(math.e / (1 + math.e), rel=1e-7)
    visit.page.wait_for_selector("#curve_plot svg .curve-mark")
    # the worst case: the command line's credal sets and trade-off
    visit.page.click("a[data-value='worst_case']")
    visit.idle()
    credal = cli_json("credal", str(_mechanism(visit)))
    text = visit.text("#credal_table")
    assert all(f"{fmt(b, 6)} to {fmt(p, 6)}" in text for b, p in zip(credal["bel"][0], credal["pl"][0]))
    audit = cli_json("audit", str(_mechanism(visit)))
    visit.page.click("a[data-value='worst_case']")
    visit.idle()
    text = visit.text("#audit_result")
    for loss in ("eps_shafer", "eps_walley"):
        assert f"a budget of {fmt(audit[loss], 6)})" in text
    visit.page.wait_for_selector("#tradeoff_plot svg")
    visit.page.click("a[data-value='this_budget']")


def _mechanism(visit: Visit) -> Path:
    import tempfile

    visit.step("field")
    got = visit.download("download_mechanism", Path(tempfile.mkdtemp(prefix="studio-mech-")))
    visit.step("budget")
    return got


def test_survey_numbers_are_the_clis(visit, tmp_path):
    visit.step("field")
    mech = visit.download("download_mechanism", tmp_path)
    visit.step("survey")
    visit.type("#target_width", "0.03")
    plan = cli_json("plan", str(mech), "--width", "0.03", "--prior", "yes=0.5,no=0.5")
    visit.page.wait_for_function(f"() => document.querySelector('#plan_width_n').textContent === "
                                 f"'{plan['n']:,} respondents'")
    visit.type("#plan_n", "2,500")  # thousands as the locale groups them
    at_n = cli_json("plan", str(mech), "--n", "2500", "--width", "0.05")["width_at_n"]["width"]
    assert visit.text("#plan_n_width") == fmt(at_n, 6)
    power = cli_json("plan", str(mech), "--detect", "0.1")
    assert visit.text("#plan_power_n") == f"{power['n']:,} respondents"
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
    # the click goes to the button itself: a list still open on a loaded machine would take a pointer click
    visit.settle(lambda: visit.page.locator("#split_run").dispatch_event("click"))
    visit.page.wait_for_selector("#split_table", timeout=120_000)
    budgets = [float(r[1]) for r in rows(visit, "#split_table")]
    assert len(budgets) == 2 and sum(budgets) == pytest.approx(2.0, rel=1e-5)
    visit.step("field")
    survey = visit.download("download_survey", tmp_path)
    assert sum(q["epsilon"] for q in cli_json("plan", str(survey))["allocation"]) == pytest.approx(2.0, rel=1e-5)


def test_field_downloads_are_read_back_by_the_cli(visit, tmp_path):
    visit.step("field")
    mech = visit.download("download_mechanism", tmp_path)
    data = json.loads(mech.read_text())
    assert data["release"]["epsilon"] == 1.0
    assert cli_json("audit", str(mech))  # the command line reads it, its certificate checked
    problem = visit.download("download_problem", tmp_path)
    assert cli_json("design", str(problem))["matrix"] == data["matrix"]
    page = visit.download("download_page", tmp_path).read_text()
    theirs = tmp_path / "theirs.html"
    cli("export", str(mech), "--to", "html", "--out", str(theirs))
    assert page == theirs.read_text()
    frame = visit.page.frame_locator("#page_iframe")
    frame.locator("input[type=radio]").first.check()  # the exported page itself, live in its frame
    frame.locator("button").first.click()
    for button in ("download_qualtrics", "download_limesurvey"):
        assert "Math.random" not in visit.download(button, tmp_path).read_text()
    visit.page.select_option("#device", "die")
    visit.settle(lambda: visit.page.click("#device_run"))
    visit.page.wait_for_selector("#device_matrix", timeout=120_000)
    device = cli_json("design", str(GWRR), "--eps", "1", "--device", "die")
    cells = visit.page.eval_on_selector_all("#device_matrix tbody td", "cs => cs.map(c => c.textContent)")
    assert cells == [v for row in device["matrix_exact"] for v in row]
    assert "<html" in visit.download("download_card", tmp_path).read_text().lower()


def test_answers_give_the_clis_estimates(visit, tmp_path):
    visit.step("field")
    mech = visit.download("download_mechanism", tmp_path)
    cli("synthesize", str(GWRR), "--n", "3000", "--prior", "yes=0.3,no=0.7", "--seed", "4", "--out",
        str(tmp_path / "truth.csv"))
    cli("randomize", str(tmp_path / "truth.csv"), "--mechanism", str(mech), "--column", "answer", "--out",
        str(tmp_path / "answers.csv"), "--seed", "5", "--simulation")
    expected = cli_json("estimate", str(tmp_path / "answers.csv"), "--mechanism", str(mech))
    visit.step("answers")
    assert visit.page.evaluate("() => document.querySelector('#estimate_plot').getBoundingClientRect().height") < 5
    visit.upload("#answers_file", tmp_path / "answers.csv")
    visit.page.wait_for_selector("#estimate_status")
    assert visit.text("#estimate_status") == expected["status"].replace("_", " ")
    for row in rows(visit, "#estimate_table"):
        assert row[1:] == [fmt(expected[c][row[0]], 8) for c in ("estimate", "stderr", "ci_low", "ci_high")]
    visit.page.wait_for_selector("#estimate_plot svg")
    # a microdata release of the true answers, with its manifest and the mechanism it names
    visit.upload("#truth_file", tmp_path / "truth.csv")
    visit.settle(lambda: visit.page.click("#release_run"))
    visit.page.wait_for_selector("#release_summary")
    release = visit.download("download_release", tmp_path)
    with zipfile.ZipFile(release) as z:
        names = sorted(z.namelist())
        z.extractall(tmp_path / "release")
    assert names == ["mechanism.json", "released.csv", "released.csv.manifest.json"]
    manifest = json.loads((tmp_path / "release" / "released.csv.manifest.json").read_text())
    assert manifest["variables"][0]["design"] == "mechanism.json" and manifest["rows"] == 3000
    assert "/tmp" not in json.dumps(manifest)
    back = cli_json("estimate", "released.csv", "--manifest", "released.csv.manifest.json", cwd=tmp_path / "release")
    assert back["status"] == "converged" and back["n"] == 3000


def test_an_uploaded_mechanism_is_used_as_it_is(visit, tmp_path):
    five = tmp_path / "five.json"
    cli("design", str(FIVE), "--eps", "2", "--out", str(five))
    data = json.loads(five.read_text())
    visit.step("question")
    visit.upload("#problem_file", five)
    visit.page.wait_for_function("() => document.querySelector('#inputs').value.startsWith('never')")
    visit.step("budget")
    visit.page.wait_for_function("() => document.querySelectorAll('#design_matrix tbody tr').length === 5")
    assert visit.matrix() == [[x, *(fmt(v, 8) for v in row)] for x, row in zip(data["inputs"], data["matrix"])]
    assert "states its release" in visit.text("#certificate")
    visit.step("field")
    assert json.loads(visit.download("download_mechanism", tmp_path / "back").read_text())["matrix"] == data["matrix"]
    visit.step("budget")  # a new budget designs a new mechanism for the file's question
    visit.type("#epsilon", "1.5")
    visit.page.wait_for_function("() => document.querySelector('#certificate_text') && document.querySelector("
                                 "'#certificate_text').innerText.includes('within the budget 1.5')")
    visit.step("field")
    problem = visit.download("download_problem", tmp_path / "new")
    mine = visit.matrix()
    assert mine == [[x, *(fmt(v, 8) for v in row)] for x, row in zip(
        data["inputs"], cli_json("design", str(problem))["matrix"])]
    visit.step("question")
    visit.upload("#problem_file", GWRR)
    visit.page.wait_for_function("() => document.querySelector('#inputs').value === 'yes, no'")
    visit.page.wait_for_selector(".studio-ok")


def test_a_question_written_in_the_form(visit):
    visit.step("question")
    visit.upload("#problem_file", PROBLEMS / "warner.toml")
    visit.page.wait_for_function("() => document.querySelector('#answers').value.includes('yes')")
    visit.step("budget")
    visit.page.wait_for_function("() => document.querySelectorAll('#design_matrix thead th').length === 3")
    assert visit.matrix() == cli_matrix(1.0, PROBLEMS / "warner.toml")
    visit.step("question")  # three true answers and a don't-know answer, by keyboard
    visit.page.check("#prior_unknown")
    visit.type("#inputs", "low, mid, high")
    visit.page.fill("#answers", "low\nmid\nhigh\nlow | mid | high")
    visit.settle(lambda: visit.page.keyboard.press("Tab"))
    visit.page.wait_for_selector(".studio-ok")
    visit.step("budget")
    visit.page.wait_for_function("() => document.querySelectorAll('#design_matrix tbody tr').length === 3")
    assert [r[0] for r in visit.matrix()] == ["low", "mid", "high"]
    visit.step("question")
    visit.type("#inputs", "only")
    assert "at least two" in visit.text("#inputs_msg")
    visit.upload("#problem_file", GWRR)
    visit.page.wait_for_selector(".studio-ok")


@pytest.mark.heavy
@pytest.mark.parametrize("width", [1280, 420])
def test_every_step_is_accessible_and_fits(browser, server, width, tmp_path):
    axe = axe_script(tmp_path)
    v = Visit(browser, server.address, width=width)
    try:
        for step in STEPS:
            v.step(step)
            v.page.add_script_tag(content=axe)
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
        assert v.failed == []
    finally:
        v.close()
    assert v.outside == []


@pytest.mark.heavy
def test_the_whole_path_by_keyboard_only(browser, tmp_path):
    """From the page's load to the report, nothing but the keyboard: the question's prior, the budget by the box and
    the slider, Next through the steps, an upload through the file chooser (opened with Enter) and the downloads."""
    studio = Studio(str(GWRR))
    v = Visit(browser, studio.address)
    page = v.page
    try:
        mech_path = tmp_path / "mech.json"
        cli("design", str(GWRR), "--eps", "1.45", "--out", str(mech_path))
        cli("synthesize", str(GWRR), "--n", "1000", "--prior", "yes=0.3,no=0.7", "--seed", "6", "--out",
            str(tmp_path / "truth.csv"))
        cli("randomize", str(tmp_path / "truth.csv"), "--mechanism", str(mech_path), "--column", "answer", "--out",
            str(tmp_path / "answers.csv"), "--seed", "7", "--simulation")
        page.evaluate("() => document.activeElement && document.activeElement.blur()")
        tab_to(page, "#prior")
        page.keyboard.press("Control+A")
        v.settle(lambda: (page.keyboard.type("0.3, 0.7"), page.keyboard.press("Enter")))
        tab_to(page, "#step_next")
        v.settle(lambda: page.keyboard.press("Enter"))
        page.wait_for_selector("#steps a[data-value='budget'].active")
        before = v.matrix()
        tab_to(page, "#epsilon")
        page.keyboard.press("Control+A")
        page.keyboard.type("1.5")
        page.keyboard.press("Tab")  # on to the slider
        assert page.evaluate("() => document.activeElement.id") == "epsilon_slider"
        v.settle(lambda: page.keyboard.press("ArrowLeft"))
        after = v.wait_matrix_change(before)
        assert page.input_value("#epsilon") == "1.45"
        data = cli_json("design", str(GWRR), "--eps", "1.45", "--prior", "0.3,0.7")
        assert after == [[x, *(fmt(m, 8) for m in row)] for x, row in zip(data["inputs"], data["matrix"])]
        for step in ("survey", "field", "answers"):
            tab_to(page, "#step_next")
            v.settle(lambda: page.keyboard.press("Enter"))
            page.wait_for_selector(f"#steps a[data-value='{step}'].active")
            if step == "survey":
                tab_to(page, "#target_width")
                page.keyboard.press("Control+A")
                v.settle(lambda: (page.keyboard.type("0.04"), page.keyboard.press("Enter")))
                page.wait_for_selector("#plan_width_n")
            if step == "field":
                tab_to(page, "#download_mechanism")
                with page.expect_download() as info:
                    page.keyboard.press("Enter")
                info.value.save_as(tmp_path / "mechanism.json")
        tab_to(page, "#answers_file")
        with page.expect_file_chooser() as chooser:
            page.keyboard.press("Space")
        v.settle(lambda: chooser.value.set_files(str(tmp_path / "answers.csv")))
        page.wait_for_selector("#estimate_status")
        for button, name in (("#download_report", "report.html"), ("#download_script", "studio_session.py")):
            tab_to(page, button)
            with page.expect_download() as info:
                page.keyboard.press("Enter")
            info.value.save_as(tmp_path / name)
        report = (tmp_path / "report.html").read_text()
        assert "1.45" in report and v.text("#plan_width_n").split()[0] in report
        script = (tmp_path / "studio_session.py").read_text()
        assert "width=0.04" in script and "answers.csv" in script
        line = next(li for li in v.text("#cli_commands").splitlines() if li.startswith("designer plan")
                    and "--width 0.04" in li)
        (tmp_path / "mechanism.json").rename(tmp_path / "dl-mechanism.json")
        (tmp_path / "dl").mkdir()
        (tmp_path / "dl-mechanism.json").rename(tmp_path / "dl" / "mechanism.json")
        out = json.loads(cli(*shlex.split(line)[1:], "--format", "json", cwd=tmp_path / "dl"))
        assert f"{out['n']:,} respondents" == v.text("#plan_width_n")
    finally:
        v.close()
        studio.stop()
    assert v.outside == []


@pytest.mark.heavy
def test_no_request_leaves_the_machine(browser, tmp_path):
    """Every step, the exported page used in its frame, the device card, an upload and every download: each request
    is on 127.0.0.1 (the page's own, data: or blob:)."""
    studio = Studio(str(PROBLEMS / "warner.toml"))
    v = Visit(browser, studio.address)
    try:
        for step in STEPS:
            v.step(step)
        v.step("field")
        frame = v.page.frame_locator("#page_iframe")
        frame.locator("input[type=radio]").first.check()
        frame.locator("button").first.click()
        v.page.select_option("#device", "cards")
        v.settle(lambda: v.page.click("#device_run"))
        v.page.wait_for_selector("#device_matrix", timeout=120_000)
        for button in ("download_mechanism", "download_page", "download_card", "download_problem"):
            v.download(button, tmp_path)
        v.step("answers")
        for button in ("download_report", "download_script", "download_commands"):
            v.download(button, tmp_path)
        v.page.request.get(studio.address + "favicon.ico")
        assert v.failed == []
    finally:
        v.close()
        studio.stop()
    assert v.outside == [], v.outside
    assert all(not name.startswith("http") for name in v.outside)
