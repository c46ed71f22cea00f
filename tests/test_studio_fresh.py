"""The studio started without a problem, in Chromium (Playwright): it opens a question with the defaults (the most
accurate shares on average, no "don't know" share), a question typed after loading a bundled one drops what that one
carried and says so, the preview of the survey is drawn, and a German browser sees numbers with decimal commas.

One studio server (``designer studio`` with no file) and one browser for the module. Skipped, with the reason, when
Shiny, Playwright or a Chromium is missing.
"""

from __future__ import annotations

import pytest

from tests import studio_browser
from tests.studio_browser import Studio, Visit, axe_script, cli_json

browser = studio_browser.browser


@pytest.fixture(scope="module")
def fresh():
    s = Studio()
    yield s
    s.stop()


def g(x: float) -> str:
    return f"{float(x):.8g}"


def test_a_fresh_studio_designs_for_the_estimate_without_a_dont_know_share(browser, fresh, tmp_path):
    v = Visit(browser, fresh.address)
    try:
        assert v.page.input_value("#dont_know") == "" and v.page.input_value("#objective") == "variance"
        problem = tmp_path / "problem.toml"
        problem.write_text('inputs = ["yes", "no"]\nepsilon = 1.0\nobjective = "variance"\n')
        want = cli_json("design", str(problem))
        assert v.matrix() == [[x, *(g(m) for m in row)] for x, row in zip(want["inputs"], want["matrix"])]
        # a bundled question, then a question of one's own: what the bundled one carried is cleared and named
        v.settle(lambda: v.page.select_option("#bundled", label="gwrr-dont-know"))
        assert v.page.input_value("#dont_know") == "0.2" and v.page.input_value("#objective") == "truthful"
        v.type("#inputs", "never, sometimes, often")
        v.page.wait_for_function("() => document.querySelector('#dont_know').value === ''")
        said = v.text("#loaded_note")
        assert "truthful" in said and "0.2" in said and "gwrr-dont-know" in said
        assert v.page.input_value("#objective") == "variance" and v.page.input_value("#title") == ""
        v.idle()
        assert [r[0] for r in v.matrix()] == ["never", "sometimes", "often"]
        # the preview: a simulated survey of the planned size, with its figure, and no accessibility violation
        v.step("survey")
        v.page.wait_for_selector("#preview_text")
        assert "respondents (seed 1)" in v.text("#preview_text")
        assert v.page.query_selector("#preview_result svg") is not None
        v.page.add_script_tag(content=axe_script(tmp_path))
        result = v.page.evaluate("async () => await axe.run(document, {runOnly: ['wcag2a', 'wcag2aa']})")
        assert [x["id"] for x in result["violations"]] == []
    finally:
        v.close()
    assert v.outside == []


def test_a_german_browser_sees_decimal_commas(browser, fresh):
    v = Visit(browser, fresh.address, locale="de-DE")
    try:
        v.step("budget")
        v.page.wait_for_function("() => document.querySelector('#truthful_text') && "
                                 "/\\d,\\d/.test(document.querySelector('#truthful_text').innerText)")
        shown = v.matrix()
        assert all("," in c and "." not in c for r in shown for c in r[1:] if c not in ("0", "1"))
        assert "2,72x" in v.text("#eps_words_text")
    finally:
        v.close()
