"""Certified randomizers for the respondent's screen: an ES module that draws exactly from the certified integer
table with the browser's or Node's cryptographic generator (docs/theory.md section 7.5).

The module holds the table of :func:`designer.exact_table.exact_table` (counts over 2^32 per input, certified
within the budget in exact arithmetic) and one function, ``sample(input, randomWords)``: it takes one 32-bit word
from ``crypto.getRandomValues`` (or from ``randomWords``, for tests) and returns the answer whose cumulative counts
bracket it, so every answer has exactly its certified probability; no float, no modulo, no ``Math.random``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from .exact_table import DENOMINATOR, ExactTable, exact_table
from .mechanism import Mechanism

__all__ = ["ExportedRandomizer", "export_html", "export_js", "export_platform", "platform_script", "randomizer_for"]


@dataclass(frozen=True)
class ExportedRandomizer:
    """A table ready to export: the certified table and the answer labels the analyst will receive."""

    table: ExactTable
    answers: tuple[str, ...]


def randomizer_for(mech: Mechanism, *, epsilon: float | None = None, semantics: Any = "sldp",
                   allocation: Any = "uniform") -> ExportedRandomizer:
    """The certified table of ``mech`` for export: set answers under ``sldp`` (labels ``{yes,no}``, which
    ``designer estimate`` reads), precise answers of the credal member ``allocation`` under ``wldp``."""
    from .sampling import precise_distributions
    from .vocabulary import Semantics

    sem = Semantics.parse(semantics, "semantics")
    if sem is Semantics.WLDP:
        table = exact_table(mech, epsilon=epsilon, semantics="wldp",
                            probabilities=precise_distributions(mech, allocation), outputs=tuple(mech.frame))
    else:
        table = exact_table(mech, epsilon=epsilon, semantics=sem)
    return ExportedRandomizer(table=table, answers=table.outputs)


def export_js(randomizer: ExportedRandomizer) -> str:
    """The ES module's text (no dependency; a few KB for 16 inputs)."""
    table = randomizer.table
    certificate = {"method": "exact", "arithmetic": "integer counts over 2^32", "sha256": table.sha256,
                   "mixWeight": table.mix_weight, "maxChange": table.max_change,
                   "losses": [loss.value for loss in table.semantics.losses]}
    from . import __version__

    counts = ",\n  ".join(json.dumps([int(c) for c in row]) for row in table.counts)
    return f"""// A certified randomizer written by designer {__version__} (its docs/theory.md, section 7.5).
// Each row of `counts` sums to `denominator`; an answer's probability is its count / denominator, exactly.
// The table is within eps = {table.epsilon!r} nats ({table.semantics.value}), decided in exact arithmetic.
export const inputs = {json.dumps(list(table.inputs), ensure_ascii=False)};
export const answers = {json.dumps(list(randomizer.answers), ensure_ascii=False)};
export const denominator = {DENOMINATOR};
export const counts = [
  {counts}
];
export const epsilon = {table.epsilon!r};
export const semantics = {json.dumps(table.semantics.value)};
export const certificate = Object.freeze({json.dumps(certificate)});

function word(randomWords) {{
  if (randomWords !== undefined) {{
    const w = randomWords[0];
    if (!Number.isInteger(w) || w < 0 || w >= denominator) {{
      throw new RangeError("randomWords[0] must be an integer in [0, 2^32)");
    }}
    return w;
  }}
  const buffer = new Uint32Array(1);
  globalThis.crypto.getRandomValues(buffer); // the platform's CSPRNG
  return buffer[0];
}}

// The reported answer for a respondent whose true answer is `input`: one uniform 32-bit word, and the answer
// whose cumulative counts bracket it.
export function sample(input, randomWords) {{
  const x = inputs.indexOf(input);
  if (x < 0) {{
    throw new RangeError("unknown input " + JSON.stringify(input) + "; the inputs are " + JSON.stringify(inputs));
  }}
  const w = word(randomWords);
  const row = counts[x];
  let total = 0;
  for (let j = 0; j < row.length; j++) {{
    total += row[j];
    if (w < total) {{
      return answers[j];
    }}
  }}
  throw new Error("the table's rows must sum to the denominator");
}}
"""


#: The page's style (hashed into its Content-Security-Policy).
PAGE_STYLE = """
body { font: 18px/1.5 system-ui, sans-serif; margin: 0; background: #f6f7f9; color: #1b1f24; }
main { max-width: 34rem; margin: 0 auto; padding: 1.5rem 1rem; }
h1 { font-size: 1.35rem; line-height: 1.3; }
fieldset { border: 1px solid #c5cad3; border-radius: 8px; padding: 0.75rem 1rem; background: #fff; }
legend { font-weight: 600; padding: 0 0.25rem; }
label { display: flex; gap: 0.6rem; align-items: center; padding: 0.45rem 0; cursor: pointer; }
input[type=radio] { width: 1.25rem; height: 1.25rem; }
button { font: inherit; margin-top: 1rem; padding: 0.7rem 1.2rem; border: 0; border-radius: 8px;
         background: #1f5fbf; color: #fff; min-width: 12rem; }
button:focus-visible, input:focus-visible { outline: 3px solid #f2a900; outline-offset: 2px; }
.note { color: #4a5260; font-size: 0.95rem; }
.report { font-size: 1.6rem; font-weight: 700; background: #fff; border: 2px solid #1f5fbf; border-radius: 8px;
          padding: 0.75rem 1rem; display: inline-block; }
""".strip()

#: The page's script (hashed into its Content-Security-Policy): builds the choices from the JSON table with
#: textContent (labels are never parsed as markup), draws with crypto.getRandomValues, then removes every trace
#: of the true answer from the page before showing the report.
PAGE_SCRIPT = """
"use strict";
(function () {
  const t = JSON.parse(document.getElementById("table").textContent);
  document.getElementById("question").textContent = t.question;
  const choices = document.getElementById("choices");
  t.inputs.forEach(function (label, i) {
    const row = document.createElement("label");
    const radio = document.createElement("input");
    radio.type = "radio";
    radio.name = "truth";
    radio.value = String(i);
    radio.required = true;
    const text = document.createElement("span");
    text.textContent = label;
    row.appendChild(radio);
    row.appendChild(text);
    choices.appendChild(row);
  });
  function draw(x) {
    const buffer = new Uint32Array(1);
    crypto.getRandomValues(buffer);
    const w = buffer[0];
    let total = 0;
    for (let j = 0; j < t.counts[x].length; j++) {
      total += t.counts[x][j];
      if (w < total) { return t.answers[j]; }
    }
    throw new Error("the table's rows must sum to the denominator");
  }
  const form = document.getElementById("ask");
  form.addEventListener("submit", function (event) {
    event.preventDefault();
    const chosen = form.querySelector("input[name=truth]:checked");
    if (!chosen) { return; }
    const report = draw(Number(chosen.value));
    form.remove(); // the true answer leaves the page here: only the report remains
    const result = document.getElementById("result");
    document.getElementById("report").textContent = report;
    result.hidden = false;
    const heading = document.getElementById("result-heading");
    heading.focus();
    const send = document.getElementById("send");
    if (t.submitUrl || t.postMessage) {
      send.hidden = false;
      send.addEventListener("click", function () {
        const body = JSON.stringify({ report: report, table: t.sha256 });
        if (t.postMessage && window.parent !== window) {
          window.parent.postMessage({ designerReport: report, table: t.sha256 }, t.postMessage);
        }
        if (t.submitUrl) {
          fetch(t.submitUrl, { method: "POST", headers: { "Content-Type": "application/json" }, body: body,
                               credentials: "omit" });
        }
        send.disabled = true;
        send.textContent = "Sent";
      });
    }
  });
})();
""".strip()


def _csp_hash(text: str) -> str:
    import base64
    import hashlib

    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode() + "'"


def export_html(randomizer: ExportedRandomizer, *, question: str = "Your answer", submit_url: str | None = None,
                post_message: str | None = None) -> str:
    """One self-contained page (works offline, from ``file://``): the respondent picks the true answer, the page
    draws the report with ``crypto.getRandomValues`` from the certified table and shows only the report.

    The Content-Security-Policy allows the page's own style and script (by hash) and no network at all, or only
    ``submit_url`` (its origin, for ``fetch``) when given; ``post_message`` names the origin of an embedding survey
    that receives ``{designerReport, table}``. Every label reaches the page as JSON (``<`` escaped) and becomes
    text with ``textContent``.
    """
    from html import escape
    from urllib.parse import urlsplit

    table = randomizer.table
    connect = "'none'"
    if submit_url is not None:
        parts = urlsplit(submit_url)
        if parts.scheme != "https" or not parts.netloc:
            raise ValueError(f"submit URL must be an https:// address, got {submit_url!r}")
        connect = f"{parts.scheme}://{parts.netloc}"
    data = {"question": question, "inputs": list(table.inputs), "answers": list(randomizer.answers),
            "counts": [[int(c) for c in row] for row in table.counts], "denominator": DENOMINATOR,
            "epsilon": table.epsilon, "semantics": table.semantics.value, "sha256": table.sha256,
            "submitUrl": submit_url, "postMessage": post_message}
    payload = _script_json(data)
    policy = (f"default-src 'none'; style-src {_csp_hash(PAGE_STYLE)}; script-src {_csp_hash(PAGE_SCRIPT)}; "
              f"connect-src {connect}; img-src 'none'; form-action 'none'; base-uri 'none'")
    return f"""<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="{escape(policy)}">
<title>{escape(question)}</title>
<style>{PAGE_STYLE}</style>
</head>
<body>
<main>
<h1 id="question"></h1>
<form id="ask">
<p class="note" id="how">Choose your true answer. It stays on this device: the page draws a randomized report from
it, and only the report is shown and sent.</p>
<fieldset aria-describedby="how"><legend>Your true answer</legend><div id="choices"></div></fieldset>
<button type="submit">Randomize my answer</button>
</form>
<section id="result" hidden aria-live="polite">
<h2 id="result-heading" tabindex="-1">Your randomized report</h2>
<p class="report" id="report"></p>
<p class="note">Your true answer is no longer on this page. Only this report is recorded.</p>
<button type="button" id="send" hidden>Send the report</button>
</section>
<p class="note">Certified randomizer: eps = {table.epsilon:.4g} nats ({escape(table.semantics.value)}), table SHA-256
<code>{table.sha256[:16]}</code>&hellip;, drawn with the browser's cryptographic generator.</p>
</main>
<script type="application/json" id="table">{payload}</script>
<script>{PAGE_SCRIPT}</script>
</body>
</html>
"""


#: The platform snippet's script: the same table and draw as the page, wired to the platform's hooks by
#: ``{hooks}`` (set the field, enable the platform's Next button).
PLATFORM_SCRIPT = """
(function (question) {{
  var t = {table};
  var box = document.getElementById("rr-choices");
  t.inputs.forEach(function (label, i) {{
    var row = document.createElement("label");
    var radio = document.createElement("input");
    radio.type = "radio";
    radio.name = "rr-truth";
    radio.value = String(i);
    var text = document.createElement("span");
    text.textContent = " " + label;
    row.appendChild(radio);
    row.appendChild(text);
    row.style.display = "block";
    box.appendChild(row);
  }});
  {before}
  document.getElementById("rr-draw").addEventListener("click", function () {{
    var chosen = box.querySelector("input[name=rr-truth]:checked");
    if (!chosen) {{ return; }}
    var x = Number(chosen.value);
    var buffer = new Uint32Array(1);
    window.crypto.getRandomValues(buffer); // the browser's CSPRNG, not the platform's randomizer
    var w = buffer[0], total = 0, report = null;
    for (var j = 0; j < t.counts[x].length; j++) {{
      total += t.counts[x][j];
      if (w < total) {{ report = t.answers[j]; break; }}
    }}
    document.getElementById("rr-form").remove(); // the true answer is never submitted
    document.getElementById("rr-report").textContent = report;
    document.getElementById("rr-result").hidden = false;
    {after}
  }});
}})({question});
""".strip()

PLATFORM_HTML = """<div id="rr-form">
<p>Choose your true answer. It stays on this device: only a randomized report is recorded.</p>
<div id="rr-choices" role="radiogroup" aria-label="Your true answer"></div>
<button type="button" id="rr-draw">Randomize my answer</button>
</div>
<div id="rr-result" hidden aria-live="polite"><p>Your randomized report: <strong id="rr-report"></strong></p></div>"""


def _script_json(data: Any) -> str:
    """JSON that can sit inside a ``<script>`` element: ``<`` and ``>`` escaped, so no label closes it."""
    return json.dumps(data, ensure_ascii=False).replace("<", "\\u003c").replace(">", "\\u003e")


def _table_json(randomizer: ExportedRandomizer) -> str:
    table = randomizer.table
    return _script_json({"inputs": list(table.inputs), "answers": list(randomizer.answers),
                         "counts": [[int(c) for c in row] for row in table.counts], "sha256": table.sha256})


def platform_script(randomizer: ExportedRandomizer, platform: str, field: str = "rr_report") -> str:
    """The JavaScript a survey platform runs for the question (``qualtrics`` or ``limesurvey``)."""
    if platform == "qualtrics":
        before = "question.disableNextButton();"
        after = (f"Qualtrics.SurveyEngine.setEmbeddedData({json.dumps(field)}, report);\n"
                 f"    if (Qualtrics.SurveyEngine.setJSEmbeddedData) {{ "
                 f"Qualtrics.SurveyEngine.setJSEmbeddedData({json.dumps(field)}, report); }}\n"
                 "    question.enableNextButton();")
        body = PLATFORM_SCRIPT.format(table=_table_json(randomizer), before=before, after=after, question="this")
        return "Qualtrics.SurveyEngine.addOnload(function () {\n" + body + "\n});"
    if platform == "limesurvey":
        before = ("var field = document.querySelector('#question{QID} input[type=text]');\n"
                  "  field.readOnly = true;\n  field.closest('.answer-container, .answer').hidden = true;\n"
                  "  var next = document.getElementById('ls-button-submit');\n  if (next) { next.disabled = true; }")
        after = ("field.value = report;\n    field.dispatchEvent(new Event('change', { bubbles: true }));\n"
                 "    if (next) { next.disabled = false; }")
        return PLATFORM_SCRIPT.format(table=_table_json(randomizer), before=before, after=after, question="null")
    raise ValueError(f"platform must be 'qualtrics' or 'limesurvey', got {platform!r}")


def export_platform(randomizer: ExportedRandomizer, platform: str, *, question: str = "Your answer",
                    mechanism: str = "MECHANISM", field: str = "rr_report") -> str:
    """Step-by-step set-up text (Markdown) for Qualtrics or LimeSurvey, with the question's HTML and JavaScript.

    The draw uses the browser's ``crypto.getRandomValues`` on the certified table, never the platform's own
    randomizer (Qualtrics' and LimeSurvey's randomizers are for assignment to blocks and questions: not
    cryptographic, and their probabilities are not the table's). The report lands in one field whose column
    in the platform's CSV export ``designer estimate`` reads as it is.
    """
    table = randomizer.table
    script = platform_script(randomizer, platform, field)
    head = (f"# {question}: a certified randomizer for {'Qualtrics' if platform == 'qualtrics' else 'LimeSurvey'}\n\n"
            f"Table: {len(table.inputs)} inputs, answers {', '.join(randomizer.answers)}; within eps = "
            f"{table.epsilon:.6g} nats ({table.semantics.value}), counts over 2^32 certified exactly; SHA-256 "
            f"{table.sha256}. The draw uses the browser's cryptographic generator (crypto.getRandomValues), not the "
            "platform's randomizer, which is neither cryptographic nor exact.\n\n")
    if platform == "qualtrics":
        steps = f"""## Set up (once)

1. Survey flow: add **Set Embedded Data** at the top with the field `{field}` (no value). In the simple layout
   name it `__js_{field}`.
2. Add a question of type **Text / Graphic** (it records nothing). In its text, switch to the HTML view and
   paste the HTML below. Put the question on a page of its own.
3. Question behaviour: **JavaScript**; replace everything with the script below.
4. Ask the true answer nowhere else: every question's response is recorded.
5. Preview: Next stays disabled until the respondent draws; the page then shows only the report.
6. Data & Analysis: export CSV; then `designer estimate export.csv --mechanism {mechanism} --column {field}`
   (the export's two extra header rows are recognised and skipped).
"""
    else:
        steps = f"""## Set up (once)

1. Add a question of type **Short free text** with the code `{field.replace('_', '')}`; it will hold the report.
2. In its question text (source view), paste the HTML below, then the script inside `<script>` tags. The
   global setting "Filter HTML for XSS" must be off for the script to run (Global settings, Security).
3. Ask the true answer nowhere else: every question's response is recorded.
4. Preview: Next stays disabled until the respondent draws; the field is filled with the report and hidden.
5. Responses: export CSV; then `designer estimate export.csv --mechanism {mechanism} --column
   {field.replace('_', '')}`.
"""
    return (head + steps + "\n## HTML (question text)\n\n```html\n" + PLATFORM_HTML + "\n```\n\n## JavaScript\n\n"
            "```javascript\n" + script + "\n```\n")
