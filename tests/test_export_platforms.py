"""Survey-platform exports: the Qualtrics and LimeSurvey snippets run in Chromium against stand-ins for the
platforms' page hooks, and a Qualtrics CSV export (two extra header rows) goes into estimate and regress as it is."""

from __future__ import annotations

import json

import numpy as np
import pytest

from designer.cli import main
from designer.constructors import Q_2x3
from designer.release.exports import randomizer_for
from designer.release.platforms import PLATFORM_HTML, platform_script
from tests.test_export_page import BROWSER, Browser

QUALTRICS_STANDIN = """<script>
window.recorded = {};
window.nextEnabled = null;
var question = { disableNextButton: function () { window.nextEnabled = false; },
                 enableNextButton: function () { window.nextEnabled = true; } };
window.Qualtrics = { SurveyEngine: {
  addOnload: function (f) { document.addEventListener("DOMContentLoaded", function () { f.call(question); }); },
  setEmbeddedData: function (key, value) { window.recorded[key] = value; } } };
</script>"""

LIMESURVEY_STANDIN = """<div id="question42"><div class="answer-container">
<input type="text" name="rrreport"></div></div>
<button id="ls-button-submit">Next</button>"""


def _run(tmp_path, page: str) -> Browser:
    path = tmp_path / "survey.html"
    path.write_text(page)
    assert BROWSER is not None
    browser = Browser(BROWSER, str(tmp_path / "profile"))
    browser.call("Page.navigate", {"url": path.as_uri()}, session=True)
    browser.wait_for("Page.loadEventFired")
    return browser


@pytest.mark.skipif(BROWSER is None, reason="no Chromium on this machine (.ci/run installs Debian's)")
@pytest.mark.parametrize("platform", ["qualtrics", "limesurvey"])
def test_the_platform_snippet_records_the_report_only(tmp_path, platform):
    randomizer = randomizer_for(Q_2x3(0.6, 0.2))
    script = platform_script(randomizer, platform)
    if platform == "qualtrics":
        page = f"<!doctype html><html><head>{QUALTRICS_STANDIN}</head><body>{PLATFORM_HTML}<script>{script}</script>"
    else:
        script = script.replace("{QID}", "42")  # LimeSurvey fills the question id in before the page is sent
        page = f"<!doctype html><html><body>{LIMESURVEY_STANDIN}{PLATFORM_HTML}<script>{script}</script>"
    browser = _run(tmp_path, page + "</body></html>")
    try:
        before = ("window.nextEnabled" if platform == "qualtrics"
                  else "!document.getElementById('ls-button-submit').disabled")
        assert browser.evaluate(before) is False  # no way forward before the draw
        assert browser.evaluate("document.querySelectorAll('input[name=rr-truth]').length") == 2
        browser.evaluate("document.querySelector('input[name=rr-truth][value=\"1\"]').click();"
                         "document.getElementById('rr-draw').click();")
        shown = browser.evaluate("document.getElementById('rr-report').textContent")
        words = randomizer.words()[0]
        assert shown in words and shown in ("yes", "no", "I don't know")  # words on screen, never {yes,no}
        report = randomizer.answers[words.index(shown)]  # the label the field records
        assert browser.evaluate("document.querySelectorAll('input[name=rr-truth]').length") == 0
        if platform == "qualtrics":
            assert browser.evaluate("window.recorded") == {"rr_report": report}
            assert browser.evaluate("window.nextEnabled") is True
        else:
            assert browser.evaluate("document.querySelector('#question42 input').value") == report
            assert browser.evaluate("document.getElementById('ls-button-submit').disabled") is False
    finally:
        browser.close()


def _qualtrics_csv(path, rows) -> None:
    """A Qualtrics export: the header, the question texts, the import ids, then the responses."""
    header = ["StartDate", "ResponseId", "age", "rr_report"]
    texts = ["Start Date", "Response ID", "How old are you?", "rr_report"]
    ids = ['"{""ImportId"":""startDate""}"', '"{""ImportId"":""_recordId""}"', '"{""ImportId"":""QID2_TEXT""}"',
           '"{""ImportId"":""rr_report""}"']
    lines = [",".join(header), ",".join(texts), ",".join(ids)]
    lines += [f"2026-11-25 10:{i % 60:02d}:00,R_{i},{age},\"{answer}\"" for i, (age, answer) in enumerate(rows)]
    path.write_text("\n".join(lines) + "\n")


def test_a_qualtrics_export_goes_into_estimate_and_regress(tmp_path, capsys):
    rng = np.random.default_rng(3)
    answers = rng.choice(["{yes}", "{no}", "{yes,no}"], 300, p=[0.4, 0.4, 0.2])
    rows = list(zip(rng.integers(18, 80, 300), answers))
    export, clean = tmp_path / "qualtrics.csv", tmp_path / "clean.csv"
    _qualtrics_csv(export, rows)
    clean.write_text("age,rr_report\n" + "".join(f"{a},\"{r}\"\n" for a, r in rows))
    mech = tmp_path / "q.csv"
    Q_2x3(0.6, 0.2).to_csv(mech)
    outs = []
    for path in (export, clean):
        assert main(["estimate", str(path), "--mechanism", str(mech), "--column", "rr_report", "--format",
                     "json"]) == 0
        outs.append(json.loads(capsys.readouterr().out))
    assert outs[0] == outs[1] and outs[0]["n"] == 300
    fits = []
    for path in (export, clean):
        assert main(["regress", str(path), "--mechanism", str(mech), "--formula", "rr_report ~ age", "--format",
                     "json"]) == 0
        fits.append(json.loads(capsys.readouterr().out)["coefficients"])
    assert fits[0] == fits[1]


def test_export_platform_cli(tmp_path, capsys):
    for platform in ("qualtrics", "limesurvey"):
        out = tmp_path / f"{platform}.md"
        assert main(["export", "examples/mechanisms/q2x3.csv", "--to", platform, "--out", str(out)]) == 0
        capsys.readouterr()
        text = out.read_text()
        assert "crypto.getRandomValues" in text and "Math.random" not in text and "designer estimate" in text
        assert "not the platform's randomizer" in text
