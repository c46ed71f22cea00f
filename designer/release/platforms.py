"""Certified randomizers inside survey platforms (Qualtrics, LimeSurvey): the question's HTML and JavaScript, with
the exported table and the one draw of :mod:`designer.release.exports`, and step-by-step set-up text (docs/theory.md
section 7.5)."""

from __future__ import annotations

import json
from collections.abc import Mapping

from .exports import CRYPTO_WORD_JS, DRAW_JS, ExportedRandomizer, script_json

__all__ = ["PLATFORM_HTML", "PLATFORM_SCRIPT", "PLATFORM_TEMPLATE", "export_platform", "platform_html",
           "platform_script"]


#: The platform snippet's script: the same table and draw as the page, wired to the platform's hooks by
#: ``{hooks}`` (set the field, enable the platform's Next button).
PLATFORM_SCRIPT = """
(function (question) {{
  var t = {table};
  {draw}
  var box = document.getElementById("rr-choices");
  t.inputWords.forEach(function (label, i) {{
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
    var column = designerDraw(t.draw, x, designerCryptoWord);
    var report = t.answers[column]; // the label the field records (designer estimate reads it)
    document.getElementById("rr-form").remove(); // the true answer is never submitted
    document.getElementById("rr-report").textContent = t.words[column]; // shown in the respondent's words
    document.getElementById("rr-result").hidden = false;
    {after}
  }});
}})({question});
""".strip()

#: The question's HTML (``{how}``, ``{legend}``, ``{draw}``, ``{result}``, ``{privacy}``: the respondent's texts).
PLATFORM_TEMPLATE = """<div id="rr-form">
<p>{how}</p>
<div id="rr-choices" role="radiogroup" aria-label="{legend}"></div>
<button type="button" id="rr-draw">{draw}</button>
</div>
<div id="rr-result" hidden aria-live="polite"><p>{result}: <strong id="rr-report"></strong></p></div>
<p>{privacy}</p>"""


def platform_html(epsilon: float = 1.0, *, lang: str = "en", strings: Mapping[str, str] | None = None) -> str:
    """The question's HTML in ``lang`` (``strings`` overriding texts), with the privacy sentence of ``epsilon``
    (:mod:`designer.devices.words`).

    Examples
    --------
    >>> from designer.release.platforms import platform_html
    >>> platform_html(1.0).startswith('<div id="rr-form">')
    True
    """
    from html import escape

    from ..devices.words import privacy_sentence, respondent_strings

    texts = respondent_strings(lang, strings)
    return PLATFORM_TEMPLATE.format(how=escape(texts["how_sent"]), legend=escape(texts["legend"]),
                                    draw=escape(texts["draw"]), result=escape(texts["result"]),
                                    privacy=escape(privacy_sentence(epsilon, texts, lang=lang)))


#: The question's HTML in English at eps = 1 (the shape every language shares).
PLATFORM_HTML = platform_html()


def _table_json(randomizer: ExportedRandomizer, texts: Mapping[str, str] | None = None) -> str:
    table = randomizer.table
    words, input_words = randomizer.words(texts)
    return script_json({"inputs": list(table.inputs), "inputWords": list(input_words),
                        "answers": list(randomizer.answers), "words": list(words),
                         "counts": [[int(c) for c in row] for row in table.counts],
                         "denominators": [int(d) for d in table.row_denominators], "draw": table.plan.record(),
                         "sha256": table.sha256})


def _indented_draw() -> str:
    return (DRAW_JS + "\n" + CRYPTO_WORD_JS).replace("\n", "\n  ")


def platform_script(randomizer: ExportedRandomizer, platform: str, field: str = "rr_report", *,
                    texts: Mapping[str, str] | None = None) -> str:
    """The JavaScript a survey platform runs for the question (``qualtrics`` or ``limesurvey``): the respondent
    sees the report in words (``texts``' language), the field records its label.

    Examples
    --------
    >>> import designer
    >>> from designer.release.exports import randomizer_for
    >>> randomizer = randomizer_for(designer.Q_2x3(0.6, 0.2))
    >>> from designer.release.platforms import platform_script
    >>> platform_script(randomizer, "qualtrics").startswith("Qualtrics.SurveyEngine.addOnload(")
    True
    """
    if platform == "qualtrics":
        before = "question.disableNextButton();"
        after = (f"Qualtrics.SurveyEngine.setEmbeddedData({json.dumps(field)}, report);\n"
                 f"    if (Qualtrics.SurveyEngine.setJSEmbeddedData) {{ "
                 f"Qualtrics.SurveyEngine.setJSEmbeddedData({json.dumps(field)}, report); }}\n"
                 "    question.enableNextButton();")
        body = PLATFORM_SCRIPT.format(table=_table_json(randomizer, texts), before=before, after=after, question="this",
                                      draw=_indented_draw())
        return "Qualtrics.SurveyEngine.addOnload(function () {\n" + body + "\n});"
    if platform == "limesurvey":
        before = ("var field = document.querySelector('#question{QID} input[type=text]');\n"
                  "  field.readOnly = true;\n  field.closest('.answer-container, .answer').hidden = true;\n"
                  "  var next = document.getElementById('ls-button-submit');\n  if (next) { next.disabled = true; }")
        after = ("field.value = report;\n    field.dispatchEvent(new Event('change', { bubbles: true }));\n"
                 "    if (next) { next.disabled = false; }")
        return PLATFORM_SCRIPT.format(table=_table_json(randomizer, texts), before=before, after=after, question="null",
                                      draw=_indented_draw())
    raise ValueError(f"platform must be 'qualtrics' or 'limesurvey', got {platform!r}")


def export_platform(randomizer: ExportedRandomizer, platform: str, *, question: str = "Your answer",
                    mechanism: str = "MECHANISM", field: str = "rr_report", lang: str = "en",
                    strings: Mapping[str, str] | None = None) -> str:
    """Step-by-step set-up text (Markdown) for Qualtrics or LimeSurvey, with the question's HTML and JavaScript.

    The draw uses the browser's ``crypto.getRandomValues`` on the certified table, never the platform's own
    randomizer (Qualtrics' and LimeSurvey's randomizers are for assignment to blocks and questions: not
    cryptographic, and their probabilities are not the table's). The report lands in one field whose column
    in the platform's CSV export ``designer estimate`` reads as it is.

    Examples
    --------
    >>> import designer
    >>> from designer.release.exports import randomizer_for
    >>> randomizer = randomizer_for(designer.Q_2x3(0.6, 0.2))
    >>> from designer.release.platforms import export_platform
    >>> export_platform(randomizer, "qualtrics").splitlines()[0]
    '# Your answer: a certified randomizer for Qualtrics'
    """
    from ..devices.words import respondent_strings

    table = randomizer.table
    texts = respondent_strings(lang, strings)
    script = platform_script(randomizer, platform, field, texts=texts)
    head = (f"# {question}: a certified randomizer for {'Qualtrics' if platform == 'qualtrics' else 'LimeSurvey'}\n\n"
            f"Table: {len(table.inputs)} inputs, answers {', '.join(randomizer.answers)}; within eps = "
            f"{table.epsilon:.6g} nats ({table.semantics.value}), {table.arithmetic} certified exactly; SHA-256 "
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
    html = platform_html(table.epsilon, lang=lang, strings=strings)
    return (head + steps + "\n## HTML (question text)\n\n```html\n" + html + "\n```\n\n## JavaScript\n\n"
            "```javascript\n" + script + "\n```\n")
