"""The exported page in a real browser: Debian's Chromium, headless, driven through the DevTools protocol over a
pipe (``--remote-debugging-pipe``: no driver, no extra package). The respondent's flow by keyboard alone, no
request leaves the page, the true answer is gone from the DOM after the draw, a label holding markup stays text,
and the page is photographed (the screenshot is kept under the test's folder and was looked at)."""

from __future__ import annotations

import base64
import json
import os
import select
import shutil
import subprocess
from typing import Any

import pytest

from designer import Mechanism
from designer.cli import main
from designer.release.exports import export_html, randomizer_for

BROWSER = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.skipif(BROWSER is None, reason="no Chromium on this machine (.ci/run installs Debian's)")

EVIL = "<img src=x onerror=window.pwned=1>"


class Browser:
    """A headless Chromium and one page, commanded by DevTools messages (JSON, NUL-terminated) on fds 3 and 4."""

    def __init__(self, binary: str, profile: str) -> None:
        to_browser_r, self._to_browser = os.pipe()
        self._from_browser, from_browser_w = os.pipe()

        def wire() -> None:  # in the child: the protocol reads fd 3 and writes fd 4
            a, b = os.dup(to_browser_r), os.dup(from_browser_w)
            os.dup2(a, 3)
            os.dup2(b, 4)

        self.proc = subprocess.Popen(
            [binary, "--headless", "--no-sandbox", "--disable-gpu", "--remote-debugging-pipe", "--no-first-run",
             f"--user-data-dir={profile}", "--window-size=420,800", "about:blank"],
            pass_fds=(3, 4), preexec_fn=wire,  # 3 and 4 stay open: the child closes fds after preexec_fn
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.close(to_browser_r)
        os.close(from_browser_w)
        self._buffer = b""
        self._next = 0
        self.events: list[dict[str, Any]] = []
        target = self.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        self.session = self.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        for domain in ("Page", "Network", "Runtime"):
            self.call(f"{domain}.enable", session=True)

    def _read(self, timeout: float = 30.0) -> dict[str, Any]:
        while b"\0" not in self._buffer:
            ready, _, _ = select.select([self._from_browser], [], [], timeout)
            if not ready:
                raise TimeoutError("Chromium did not answer")
            chunk = os.read(self._from_browser, 1 << 16)
            if not chunk:
                raise RuntimeError("Chromium closed the pipe")
            self._buffer += chunk
        message, self._buffer = self._buffer.split(b"\0", 1)
        return json.loads(message)

    def call(self, method: str, params: dict[str, Any] | None = None, *, session: bool = False) -> dict[str, Any]:
        self._next += 1
        message: dict[str, Any] = {"id": self._next, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = self.session
        os.write(self._to_browser, json.dumps(message).encode() + b"\0")
        while True:
            reply = self._read()
            if reply.get("id") == self._next:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            self.events.append(reply)

    def wait_for(self, method: str) -> None:
        while not any(e.get("method") == method for e in self.events):
            self.events.append(self._read())

    def evaluate(self, expression: str, *, wait: bool = False) -> Any:
        result = self.call("Runtime.evaluate", {"expression": expression, "returnByValue": True,
                                                "awaitPromise": wait}, session=True)
        return result["result"].get("value")

    def key(self, key: str, code: str, vk: int, text: str = "") -> None:
        for kind in ("keyDown", "keyUp"):
            params = {"type": kind, "key": key, "code": code, "windowsVirtualKeyCode": vk}
            if text and kind == "keyDown":
                params["text"] = text
            self.call("Input.dispatchKeyEvent", params, session=True)

    def close(self) -> None:
        self.proc.kill()
        self.proc.wait(timeout=10)
        os.close(self._to_browser)
        os.close(self._from_browser)


@pytest.fixture
def browser(tmp_path):
    assert BROWSER is not None
    b = Browser(BROWSER, str(tmp_path / "profile"))
    yield b
    b.close()


def _page(tmp_path, **kwargs) -> str:
    mech = Mechanism([[0.6, 0.2, 0.2], [0.2, 0.6, 0.2]], inputs=["yes", EVIL], frame=["yes", EVIL],
                     focal=[1, 2, 3])
    path = tmp_path / "page.html"
    path.write_text(export_html(randomizer_for(mech), question="Have you <em>ever</em> cheated?", **kwargs))
    return path.as_uri()


def test_the_page_works_by_keyboard_offline_and_forgets_the_true_answer(tmp_path, browser):
    url = _page(tmp_path)
    browser.call("Page.navigate", {"url": url}, session=True)
    browser.wait_for("Page.loadEventFired")
    assert browser.evaluate("document.title") == "Have you <em>ever</em> cheated?"
    assert browser.evaluate("document.querySelectorAll('img, em').length") == 0  # labels are text, not markup
    assert browser.evaluate("[...document.querySelectorAll('label span')].map(s => s.textContent)") == ["yes", EVIL]
    assert browser.evaluate("document.querySelectorAll('input[type=radio]').length") == 2
    shot = browser.call("Page.captureScreenshot", {"format": "png"}, session=True)
    (tmp_path / "page-before.png").write_bytes(base64.b64decode(shot["data"]))
    browser.key("Tab", "Tab", 9)  # into the radio group
    browser.key(" ", "Space", 32, " ")  # choose the first answer
    browser.key("ArrowDown", "ArrowDown", 40)  # move to the second (the label with markup)
    assert browser.evaluate("document.querySelector('input[name=truth]:checked').value") == "1"
    browser.key("Tab", "Tab", 9)  # to the button
    browser.key("Enter", "Enter", 13, "\r")
    report = browser.evaluate("document.getElementById('report').textContent")
    assert report in ("yes", EVIL, "I don't know")  # the respondent's words, never {yes,...}
    assert "Nothing is sent from this page" in browser.evaluate("document.getElementById('after').textContent")
    assert browser.evaluate("document.getElementById('result').hidden") is False
    assert browser.evaluate("document.activeElement.id") == "result-heading"
    # the true answer is gone: no radio, no form, nothing checked anywhere in the DOM
    assert browser.evaluate("document.querySelectorAll('input, form').length") == 0
    shown = browser.evaluate("document.querySelector('main').outerHTML")
    assert "checked" not in shown and 'name="truth"' not in shown
    shot = browser.call("Page.captureScreenshot", {"format": "png"}, session=True)
    (tmp_path / "page-after.png").write_bytes(base64.b64decode(shot["data"]))
    requests = [e["params"]["request"]["url"] for e in browser.events if e.get("method") == "Network.requestWillBeSent"]
    assert requests == [url]  # the page itself, nothing else
    assert browser.evaluate("typeof window.pwned") == "undefined"


def test_a_submit_url_is_the_only_address_the_page_may_reach(tmp_path, browser):
    url = _page(tmp_path, submit_url="https://survey.example.org/collect")
    browser.call("Page.navigate", {"url": url}, session=True)
    browser.wait_for("Page.loadEventFired")
    policy = browser.evaluate("document.querySelector('meta[http-equiv]').content")
    assert "connect-src https://survey.example.org;" in policy and "default-src 'none'" in policy
    blocked = browser.evaluate("""(async () => { try { await fetch('https://elsewhere.example.net/x'); return 'sent'; }
                                  catch (e) { return 'blocked'; } })()""", wait=True)
    assert blocked == "blocked"  # the policy refuses the fetch before any request is made
    requests = [e["params"]["request"]["url"] for e in browser.events if e.get("method") == "Network.requestWillBeSent"]
    assert all(not r.startswith("https://elsewhere") for r in requests)


def test_export_html_cli(tmp_path, capsys):
    out = tmp_path / "q.html"
    assert main(["export", "examples/mechanisms/q2x3.csv", "--to", "html", "--out", str(out), "--question",
                 "Did you?"]) == 0
    assert "a self-contained page" in capsys.readouterr().out
    import html

    page = html.unescape(out.read_text())
    assert "Content-Security-Policy" in page and "connect-src 'none'" in page and "Math.random" not in page
    assert main(["export", "examples/mechanisms/q2x3.csv", "--to", "html", "--out", str(tmp_path / "x.html"),
                 "--submit-url", "http://plain.example.org"]) == 2
    assert "https://" in capsys.readouterr().err


def test_the_submitted_data_hold_the_report_only(tmp_path, browser):
    """The submit address is intercepted (DevTools Fetch domain) before anything leaves the machine: the page
    POSTs exactly {report, table} and nothing else."""
    url = _page(tmp_path, submit_url="https://survey.example.org/collect")
    browser.call("Fetch.enable", {"patterns": [{"urlPattern": "https://survey.example.org/*"}]}, session=True)
    browser.call("Page.navigate", {"url": url}, session=True)
    browser.wait_for("Page.loadEventFired")
    browser.evaluate("document.querySelector('input[name=truth]').click();"
                     "document.querySelector('form button').click();")
    report = browser.evaluate("document.getElementById('report').textContent")
    browser.evaluate("document.getElementById('send').click()")
    cors = [{"name": "Access-Control-Allow-Origin", "value": "*"},
            {"name": "Access-Control-Allow-Methods", "value": "POST"},
            {"name": "Access-Control-Allow-Headers", "value": "Content-Type"}]
    seen: list[dict] = []
    while not any(p["request"]["method"] == "POST" for p in seen):
        browser.wait_for("Fetch.requestPaused")
        for event in [e for e in browser.events if e.get("method") == "Fetch.requestPaused"]:
            browser.events.remove(event)
            paused = event["params"]
            seen.append(paused)  # a JSON POST from a file:// page is preflighted (OPTIONS) first
            browser.call("Fetch.fulfillRequest", {"requestId": paused["requestId"], "responseCode": 204,
                                                  "responseHeaders": cors}, session=True)
    post = next(p for p in seen if p["request"]["method"] == "POST")
    body = json.loads(post["request"]["postData"])
    label = {"yes": "{yes}", EVIL: "{" + EVIL + "}", "I don't know": "{yes," + EVIL + "}"}[report]
    assert set(body) == {"report", "table"} and body["report"] == label  # the label designer estimate reads
    assert {p["request"]["method"] for p in seen} <= {"OPTIONS", "POST"}


@pytest.mark.parametrize("case", ["q2x3", "five-options", "die"])
def test_the_module_draws_fit_the_table_in_chromium(tmp_path, browser, case):
    """The ES module's own code, run by Chromium's engine with its crypto: 40,000 draws per input fit the table
    (two words over 2^53, or a die design's thirds with rejection of the words past the limit)."""
    from scipy.stats import chisquare

    from designer import DesignProblem, design
    from designer.constructors import Q_2x3
    from designer.devices import grid_design, parse_device
    from designer.release.exports import export_js

    if case == "q2x3":
        mech = Q_2x3(0.6, 0.2)
    elif case == "five-options":
        five = tuple(f"o{i}" for i in range(5))
        mech = design(DesignProblem(inputs=five, epsilon=1.5, objective="chi2", dont_know_max=0.2)).mechanism
    else:
        problem = DesignProblem(inputs=("yes", "no"), epsilon=1.0, objective="chi2", dont_know_max=0.3)
        mech = grid_design(problem, parse_device("die")).mechanism
    randomizer = randomizer_for(mech)
    assert (randomizer.table.denominator == 3) is (case == "die")
    code = export_js(randomizer).replace("export const ", "const ").replace("export function ", "function ")
    browser.call("Page.navigate", {"url": "about:blank"}, session=True)
    draws = 40_000
    tallies = browser.evaluate(code + f"""
        ;(() => {{ const out = {{}};
          for (const x of inputs) {{ const t = Object.fromEntries(answers.map(a => [a, 0]));
            for (let i = 0; i < {draws}; i++) t[sample(x)] += 1; out[x] = t; }}
          return out; }})()""")
    table = randomizer.table
    for x, label in enumerate(table.inputs):
        observed = [tallies[label][a] for a in randomizer.answers]
        keep = table.counts[x] > 0
        assert sum(o for o, k in zip(observed, keep) if not k) == 0
        assert chisquare([o for o, k in zip(observed, keep) if k],
                         table.counts[x][keep] / table.denominator * draws).pvalue > 1e-6


def test_a_shown_die_gives_the_report_its_card_gives(tmp_path, browser):
    """--show-device: the page throws the die design's die, shows the outcome and reports what the printed card's
    rules give for it (checked against the rules, not the page's table), 300 times with the page reloaded; the
    outcomes are the die's six faces, each answer's share fits the table, and the outcome is gone once sent."""
    from scipy.stats import chisquare

    from designer import DesignProblem
    from designer.devices import grid_design, make_rules, parse_device
    from designer.release.exports import device_view

    problem = DesignProblem(inputs=("yes", "no"), epsilon=1.0, objective="chi2", dont_know_max=0.3)
    g = grid_design(problem, parse_device("die"))
    randomizer = randomizer_for(g.mechanism)
    path = tmp_path / "die.html"
    path.write_text(export_html(randomizer, question="Ever?", device=device_view(g), post_message="https://x.org"))
    rules = make_rules(g.device, g.counts, problem.inputs)
    from designer.devices import answer_words

    card = {}  # (input, face) -> the answer the card gives, in the card's words
    for x, rule in enumerate(rules):
        for focal, positions in zip(g.focal_sets, rule.outcomes):
            for p in positions:
                card[x, str(p + 1)] = answer_words(tuple(focal), problem.frame)
    faces, reports = [], []
    for _ in range(80):
        browser.call("Page.navigate", {"url": path.as_uri()}, session=True)
        browser.evaluate("document.readyState === 'complete' || new Promise(r => addEventListener('load', r))",
                         wait=True)
        said = browser.evaluate("""(() => { document.querySelector('input[value="0"]').click();
            document.querySelector('button[type=submit]').click();
            return [document.getElementById('outcome').textContent, document.getElementById('report').textContent,
                    document.getElementById('outcome').hidden]; })()""")
        assert said[0].startswith("The die shows ") and said[2] is False
        face = said[0].removeprefix("The die shows ").rstrip(".")
        assert said[1] == card[0, face]
        faces.append(face)
        reports.append(said[1])
    assert set(faces) <= {"1", "2", "3", "4", "5", "6"} and len(set(faces)) >= 5
    shot = browser.call("Page.captureScreenshot", {"format": "png"}, session=True)
    (tmp_path / "die-after.png").write_bytes(base64.b64decode(shot["data"]))
    table = randomizer.table
    observed = [reports.count(a) for a in randomizer.words()[0]]
    assert chisquare(observed, table.counts[0] / table.denominator * len(reports)).pvalue > 1e-4
    browser.evaluate("document.getElementById('send').click()")
    assert browser.evaluate("document.getElementById('outcome')") is None
