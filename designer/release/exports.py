"""Certified randomizers for the respondent's screen: an ES module that draws exactly from the certified integer
table with the browser's or Node's cryptographic generator (docs/theory.md section 7.5).

The module holds the table of :func:`designer.guarantees.exact_table.exact_table` (counts over 2^53 per input, over a
device
design's own denominator, or over an invariant design's per-row denominators; certified within the budget in exact
arithmetic), its :class:`~designer.guarantees.exact_table.DrawPlan` (thresholds as 32-bit halves) and one function,
``sample(input, randomWords)``: it reads one number of one or two 32-bit words from ``crypto.getRandomValues`` (or
from ``randomWords``, for tests), again while it is at or above the row's rejection limit, and returns the answer
whose thresholds bracket it, exactly as the Python sampler does for the same words: every answer has exactly its
certified probability; no float, no modulo bias, no ``Math.random``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..exceptions import CertificationError
from ..guarantees.exact_table import ExactTable, exact_table
from ..mechanism import Mechanism

__all__ = ["CRYPTO_WORD_JS", "DRAW_JS", "DeviceView", "ExportedRandomizer", "device_view", "export_html",
           "export_js", "randomizer_for", "script_json"]


@dataclass(frozen=True)
class ExportedRandomizer:
    """A table ready to export: the certified table and the answer labels the analyst will receive.

    Attributes
    ----------
    table : ExactTable
    answers : tuple of str
        The labels the analyst receives (``{yes,no}``, which ``designer estimate`` reads).
    objective : tuple of (str, float, float) or None
        The problem's objective, its value at the design and at the exported table (the rounding's cost); None
        without a problem, or for a precise member (under ``wldp`` the objective is the mass function's).
    sets, frame : each answer's frame labels, and the frame (for the respondent's words).
    named : tuple of (word, labels)
        The ``[answers]`` words of the problem or the mechanism file.

    Examples
    --------
    >>> import designer
    >>> from designer.release.exports import randomizer_for
    >>> randomizer = randomizer_for(designer.Q_2x3(0.6, 0.2))
    >>> randomizer.table.inputs, round(randomizer.table.epsilon, 6)
    (('yes', 'no'), 1.098612)
    """

    table: ExactTable
    answers: tuple[str, ...]
    objective: tuple[str, float, float] | None = None
    sets: tuple[tuple[str, ...], ...] = ()
    frame: tuple[str, ...] = ()
    named: tuple[tuple[str, tuple[str, ...]], ...] = ()

    def words(self, strings: Any = None) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """The answers and the inputs in the respondent's words (:func:`designer.devices.words.plain_answer`: the
        ``[answers]`` word of a set where given, "I don't know", "one of: a, b"), in the language of ``strings``."""
        from ..devices.words import plain_answer

        named = {frozenset(labels): word for word, labels in reversed(self.named)}  # the first word given wins
        frame = self.frame or tuple(self.table.inputs)
        sets = self.sets or tuple((a,) for a in self.answers)
        answers = tuple(plain_answer(s, frame, named=named, strings=strings) for s in sets)
        inputs = tuple(named.get(frozenset((x,)), x) for x in self.table.inputs)
        return answers, inputs


def randomizer_for(mech: Mechanism, *, epsilon: float | None = None, semantics: Any = "sldp",
                   allocation: Any = "uniform", problem: Any = None, exact: Any = None,
                   words: Any = None) -> ExportedRandomizer:
    """The certified table of ``mech`` for export: set answers under ``sldp`` (labels ``{yes,no}``, which
    ``designer estimate`` reads), precise answers of the credal member ``allocation`` under ``wldp``.

    With the ``problem`` ``mech`` was designed for (a :class:`~designer.DesignProblem`), an ``sldp`` export
    reports the objective at the design and at the table: what rounding to the table's grid costs. ``exact``: an
    invariant design's table (counts, per-row denominators), drawn from as it is. ``words``: the ``[answers]``
    words (word -> frame labels; default the ``problem``'s), which the page shows the respondent.

    Examples
    --------
    >>> import designer
    >>> from designer.release.exports import randomizer_for
    >>> randomizer = randomizer_for(designer.Q_2x3(0.6, 0.2))
    >>> randomizer.answers, randomizer.table.denominator == 2**53
    (('{yes}', '{no}', '{yes,no}'), True)
    """
    from ..estimation.sampling import precise_distributions
    from ..optimal.objectives import objective_value
    from ..vocabulary import Semantics

    sem = Semantics.parse(semantics, "semantics")
    given = words if words is not None else dict(getattr(problem, "answers", ()) or ())
    named = tuple((str(w), tuple(labels)) for w, labels in dict(given).items())
    if sem is Semantics.WLDP:
        table = exact_table(mech, epsilon=epsilon, semantics="wldp", exact=exact,
                            probabilities=precise_distributions(mech, allocation), outputs=tuple(mech.frame))
        return ExportedRandomizer(table=table, answers=table.outputs, sets=tuple((f,) for f in mech.frame),
                                  frame=tuple(mech.frame), named=named)
    table = exact_table(mech, epsilon=epsilon, semantics=sem, exact=exact)
    objective = None
    if problem is not None:
        drawn = Mechanism(table.counts / table.row_denominators[:, None], inputs=mech.inputs, frame=mech.frame,
                          focal=[int(b) for b in mech.focal])
        objective = (problem.objective.value, objective_value(problem, mech), objective_value(problem, drawn))
    return ExportedRandomizer(table=table, answers=table.outputs, objective=objective,
                              sets=tuple(tuple(s) for s in mech.focal_sets), frame=tuple(mech.frame), named=named)


def export_js(randomizer: ExportedRandomizer) -> str:
    """The ES module's text (no dependency; a few KB for 16 inputs).

    Examples
    --------
    >>> import designer
    >>> from designer.release.exports import randomizer_for
    >>> randomizer = randomizer_for(designer.Q_2x3(0.6, 0.2))
    >>> from designer.release.exports import export_js
    >>> export_js(randomizer).startswith("// A certified randomizer written by designer")
    True
    """
    table = randomizer.table
    certificate = table.certificate_record()
    from .._version import __version__

    counts = ",\n  ".join(json.dumps([int(c) for c in row]) for row in table.counts)
    plan = table.plan.record()
    return f"""// A certified randomizer written by designer {__version__} (its docs/theory.md, section 7.5).
// Each row of `counts` sums to its entry of `denominators` (all `denominator` unless that is null); an answer's
// probability is its count / the row's denominator, exactly
// ({table.arithmetic}).
// A draw reads `words` 32-bit words as one number W (the first word the most significant), reads again while W is at
// or above the row's entry of `limits`, and answers with the number of the row's `cuts` at or below W (limits and
// cuts are [high, low] 32-bit halves of integers below 2^64, exact in JavaScript's numbers; designer's own counts
// are at most 2^53, exact too).
// The table is within eps = {table.epsilon!r} nats ({table.semantics.value}), decided in exact arithmetic.
export const inputs = {json.dumps(list(table.inputs), ensure_ascii=False)};
export const answers = {json.dumps(list(randomizer.answers), ensure_ascii=False)};
export const denominators = {json.dumps([int(d) for d in table.row_denominators])};
export const denominator = {"null" if table.denominators else table.denominator};
export const counts = [
  {counts}
];
export const words = {plan["words"]};
export const limits = {json.dumps(plan["limits"])};
export const cuts = {json.dumps(plan["cuts"])};
export const epsilon = {table.epsilon!r};
export const semantics = {json.dumps(table.semantics.value)};
export const certificate = Object.freeze({json.dumps(certificate)});

{DRAW_JS}

// The next of the test's words, checked, or a word from the platform's CSPRNG.
function nextWord(randomWords) {{
  let i = 0;
  return function () {{
    if (randomWords === undefined) {{
      const buffer = new Uint32Array(1);
      globalThis.crypto.getRandomValues(buffer); // the platform's CSPRNG
      return buffer[0];
    }}
    if (i >= randomWords.length) {{
      throw new RangeError("randomWords ran out: every word given was at or above the rejection limit");
    }}
    const w = randomWords[i++];
    if (!Number.isInteger(w) || w < 0 || w >= 4294967296) {{
      throw new RangeError("randomWords must be integers in [0, 2^32)");
    }}
    return w;
  }};
}}

// The reported answer for a respondent whose true answer is `input`: numbers of `words` uniform 32-bit words
// until one is below the row's limit, and the answer whose thresholds bracket it.
export function sample(input, randomWords) {{
  const x = inputs.indexOf(input);
  if (x < 0) {{
    throw new RangeError("unknown input " + JSON.stringify(input) + "; the inputs are " + JSON.stringify(inputs));
  }}
  return answers[designerDraw({{ words: words, limits: limits, cuts: cuts }}, x, nextWord(randomWords))];
}}
"""


#: The one draw every export runs (the module, the page, the platform snippet; ES5, so any survey platform runs
#: it), the Python sampler's (:class:`designer.guarantees.exact_table.DrawPlan`): ``designerDraw(plan, x,
#: nextWord)`` reads ``plan.words`` words as one number ``[high, low]`` (high 0 for one word), again while it is at
#: or above ``plan.limits[x]``, and returns the number of ``plan.cuts[x]`` at or below it; ``designerOutcome``: one
#: of a device's ``denominator`` equally likely outcomes (at most 100,000) from one word, rejecting the words at or
#: above the largest multiple of it below 2^32. Integers below 2^33 only, so every operation on doubles is exact.
DRAW_JS = """
function designerDraw(plan, x, nextWord) {
  var limit = plan.limits[x], cuts = plan.cuts[x], high, low, j = 0;
  do {
    high = plan.words === 2 ? nextWord() : 0;
    low = nextWord();
  } while (high > limit[0] || (high === limit[0] && low >= limit[1]));
  while (j < cuts.length && (cuts[j][0] < high || (cuts[j][0] === high && cuts[j][1] <= low))) { j++; }
  return j;
}
function designerOutcome(denominator, nextWord) {
  var scale = (4294967296 - 4294967296 % denominator) / denominator;
  var w = nextWord();
  while (w >= scale * denominator) { w = nextWord(); }
  return (w - w % scale) / scale;
}
""".strip()

#: The page's and the platform snippet's source of words.
CRYPTO_WORD_JS = """
function designerCryptoWord() {
  var buffer = new Uint32Array(1);
  window.crypto.getRandomValues(buffer); // the browser's CSPRNG, not a survey platform's randomizer
  return buffer[0];
}
""".strip()

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
.outcome { font-size: 1.1rem; background: #fff8e1; border-left: 4px solid #f2a900; padding: 0.4rem 0.75rem; }
.report { font-size: 1.6rem; font-weight: 700; background: #fff; border: 2px solid #1f5fbf; border-radius: 8px;
          padding: 0.75rem 1rem; display: inline-block; }
""".strip()

#: The page's script (hashed into its Content-Security-Policy): builds the choices from the JSON table with
#: textContent (labels are never parsed as markup), draws with crypto.getRandomValues, then removes every trace
#: of the true answer from the page before showing the report in the respondent's words (``t.words``); what is
#: sent is the report's label (``t.answers``), which ``designer estimate`` reads.
PAGE_SCRIPT = """
"use strict";
(function () {
  const t = JSON.parse(document.getElementById("table").textContent);
  document.getElementById("question").textContent = t.question;
  const choices = document.getElementById("choices");
  t.inputWords.forEach(function (label, i) {
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
  DRAW_JS_HERE
  function draw(x) { // the report's column, and the device's outcome when the page shows one
    if (t.device) {
      const outcome = designerOutcome(t.device.outcomes.length, designerCryptoWord);
      return { column: t.device.answerOf[x][outcome], outcome: t.device.outcomes[outcome] };
    }
    return { column: designerDraw(t.draw, x, designerCryptoWord), outcome: null };
  }
  const form = document.getElementById("ask");
  form.addEventListener("submit", function (event) {
    event.preventDefault();
    const chosen = form.querySelector("input[name=truth]:checked");
    if (!chosen) { return; }
    const drawn = draw(Number(chosen.value));
    const report = t.answers[drawn.column];
    form.remove(); // the true answer leaves the page here: only the report remains
    const result = document.getElementById("result");
    document.getElementById("report").textContent = t.words[drawn.column];
    const shown = document.getElementById("outcome");
    if (drawn.outcome !== null) {
      shown.textContent = t.device.says + " " + drawn.outcome + ".";
      shown.hidden = false;
    }
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
        send.textContent = t.sentText;
        shown.remove(); // the outcome with the report could tell the true answer: gone once sent
      });
    }
  });
})();
""".strip().replace("DRAW_JS_HERE", (DRAW_JS + "\n" + CRYPTO_WORD_JS).replace("\n", "\n  "))


def _csp_hash(text: str) -> str:
    import base64
    import hashlib

    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode() + "'"


@dataclass(frozen=True)
class DeviceView:
    """A device design's outcomes as the page shows them (``--show-device``): the page throws the device for the
    respondent and shows the outcome, which gives the report by the printed card's rules.

    Attributes
    ----------
    says : str
        The words before an outcome ("The die shows").
    outcomes : tuple of str
        Each of the ``D`` equally likely outcomes in words, in the device's order.
    answer_of : tuple of tuple of int
        ``(k, D)``: per input, the answer column each outcome gives (the card's rules).
    kind : str
        The device's kind (``die``, ...), whose words before an outcome the page's language gives.

    Examples
    --------
    >>> from designer.release.exports import DeviceView
    >>> view = DeviceView("The die shows", ("1", "2", "3", "4", "5", "6"), ((0, 0, 0, 1, 1, 2), (0, 0, 1, 1, 1, 2)))
    >>> [view.answer_of[0].count(column) for column in range(3)]  # a yes: 3 faces {yes}, 2 {no}, 1 don't know
    [3, 2, 1]
    """

    says: str
    outcomes: tuple[str, ...]
    answer_of: tuple[tuple[int, ...], ...]
    kind: str = ""


#: Largest device the page shows (its table grows as inputs x outcomes).
MAX_SHOWN_OUTCOMES = 360
_SAYS = {"die": "The die shows", "dice2": "The dice show", "cards": "The card drawn is", "coins": "The coins read",
         "spinner": "The spinner stops at sector", "grid": "The number drawn is"}


def device_view(g: Any) -> DeviceView:
    """The :class:`DeviceView` of a :class:`~designer.devices.GridDesign`: its outcomes in the device's words and,
    per input, each outcome's answer by the rules of its printed instructions (:func:`~designer.devices.make_rules`,
    checked by enumeration).

    Examples
    --------
    GWRR with don't-know 0.2 on a die (a sixth): for each input, the answer column of each face:

    >>> import designer
    >>> from designer import devices
    >>> from designer.release.exports import device_view
    >>> problem = designer.DesignProblem(inputs=("yes", "no"), epsilon=1.0, dont_know=0.2, objective="truthful")
    >>> view = device_view(devices.grid_design(problem, devices.parse_device("die")))
    >>> view.says, view.outcomes, view.answer_of
    ('The die shows', ('1', '2', '3', '4', '5', '6'), ((0, 0, 0, 1, 1, 2), (0, 0, 1, 1, 1, 2)))
    """
    from ..devices import make_rules, verify

    device = g.device
    if device.denominator > MAX_SHOWN_OUTCOMES:
        raise ValueError(f"the page shows devices of up to {MAX_SHOWN_OUTCOMES} outcomes; {device.name} has "
                         f"{device.denominator}")
    rules = make_rules(device, g.counts, g.problem.inputs)
    if not verify(device, rules, g.counts):
        raise ValueError("internal check failed: the device's rules do not give the designed counts")
    column = {tuple(s): j for j, s in enumerate(g.mechanism.focal_sets)}
    answer_of = []
    for rule in rules:
        row = [-1] * device.denominator
        for focal, positions in zip(g.focal_sets, rule.outcomes):
            for p in positions:
                row[p] = column[tuple(focal)]
        answer_of.append(tuple(row))
    return DeviceView(says=_SAYS[device.kind], outcomes=tuple(device.outcome(p) for p in range(device.denominator)),
                      answer_of=tuple(answer_of), kind=device.kind)


def export_html(randomizer: ExportedRandomizer, *, question: str = "Your answer", submit_url: str | None = None,
                post_message: str | None = None, device: DeviceView | None = None, lang: str = "en",
                strings: Mapping[str, str] | None = None) -> str:
    """One self-contained page (works offline, from ``file://``): the respondent picks the true answer, the page
    draws the report with ``crypto.getRandomValues`` from the certified table and shows only the report.

    The page speaks the respondent's words (:mod:`designer.devices.words`): the answers as the problem's
    ``[answers]`` words, "I don't know" or "one of: a, b", never set notation; the guarantee as a sentence; the
    fixed texts in ``lang`` (``en``, ``fr``, ``de``) with ``strings`` overriding any of them. It says a report is
    recorded only when it is sent somewhere (``submit_url`` or ``post_message``); what is sent is the report's
    label (``{yes,no}``, which ``designer estimate`` reads) with the table's SHA-256, which stay in the page's
    JSON data, not in its text.

    The Content-Security-Policy allows the page's own style and script (by hash) and no network at all, or only
    ``submit_url`` (its origin, for ``fetch``) when given; ``post_message`` names the origin of an embedding survey
    that receives ``{designerReport, table}``. Every label reaches the page as JSON (``<`` escaped) and becomes
    text with ``textContent``. With ``device`` (a device design's :func:`device_view`, checked against the table)
    the page draws one of the device's outcomes, shows it, and reports what the card's rules give for it; the
    outcome is removed when the report is sent.

    Examples
    --------
    >>> import designer
    >>> from designer.release.exports import randomizer_for
    >>> randomizer = randomizer_for(designer.Q_2x3(0.6, 0.2))
    >>> from designer.release.exports import export_html
    >>> page = export_html(randomizer, question="Have you ever cheated on an exam?")
    >>> page.startswith("<!doctype html>"), "Have you ever cheated on an exam?" in page
    (True, True)
    """
    from html import escape
    from urllib.parse import urlsplit

    from ..devices.words import privacy_sentence, respondent_strings

    texts = respondent_strings(lang, strings)
    table = randomizer.table
    connect = "'none'"
    if submit_url is not None:
        parts = urlsplit(submit_url)
        if parts.scheme != "https" or not parts.netloc:
            raise ValueError(f"submit URL must be an https:// address, got {submit_url!r}")
        connect = f"{parts.scheme}://{parts.netloc}"
    words, input_words = randomizer.words(texts)
    data = {"question": question, "inputs": list(table.inputs), "inputWords": list(input_words),
            "answers": list(randomizer.answers), "words": list(words),
            "counts": [[int(c) for c in row] for row in table.counts],
            "denominators": [int(d) for d in table.row_denominators], "draw": table.plan.record(),
            "epsilon": table.epsilon, "semantics": table.semantics.value, "sha256": table.sha256,
            "submitUrl": submit_url, "postMessage": post_message, "sentText": texts["sent"], "device": None}
    if device is not None:
        d = len(device.outcomes)
        for x, row in enumerate(device.answer_of):  # the outcomes' answers must be the table's counts, exactly
            tally = np.bincount(np.asarray(row), minlength=table.counts.shape[1])
            if min(row) < 0 or not np.array_equal(tally * table.row_denominators[x], table.counts[x] * d):
                raise CertificationError(f"the device's outcomes for input {table.inputs[x]!r} do not give the "
                                         "certified table")
        data["device"] = {"says": texts.get(device.kind, device.says), "outcomes": list(device.outcomes),
                          "answerOf": [list(row) for row in device.answer_of]}
    sent = submit_url is not None or post_message is not None
    payload = script_json(data)
    policy = (f"default-src 'none'; style-src {_csp_hash(PAGE_STYLE)}; script-src {_csp_hash(PAGE_SCRIPT)}; "
              f"connect-src {connect}; img-src 'none'; form-action 'none'; base-uri 'none'")
    return f"""<!doctype html>
<html lang="{escape(lang)}">
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
<p class="note" id="how">{escape(texts["how_sent" if sent else "how"])}</p>
<fieldset aria-describedby="how"><legend>{escape(texts["legend"])}</legend><div id="choices"></div></fieldset>
<button type="submit">{escape(texts["draw"])}</button>
</form>
<section id="result" hidden aria-live="polite">
<h2 id="result-heading" tabindex="-1">{escape(texts["result"])}</h2>
<p class="outcome" id="outcome" hidden></p>
<p class="report" id="report"></p>
<p class="note" id="after">{escape(texts["gone"])} {escape(texts["recorded" if sent else "not_sent"])}</p>
<button type="button" id="send" hidden>{escape(texts["send"])}</button>
</section>
<p class="note" id="privacy">{escape(privacy_sentence(table.epsilon, texts, lang=lang))}</p>
</main>
<script type="application/json" id="table">{payload}</script>
<script>{PAGE_SCRIPT}</script>
</body>
</html>
"""


def script_json(data: Any) -> str:
    """JSON that can sit inside a ``<script>`` element: ``<`` and ``>`` escaped, so no label closes it.

    Examples
    --------
    >>> from designer.release.exports import script_json
    >>> print(script_json({"label": "</script>"}))  # a label cannot close the page's script element
    {"label": "\\u003c/script\\u003e"}
    """
    return json.dumps(data, ensure_ascii=False).replace("<", "\\u003c").replace(">", "\\u003e")
