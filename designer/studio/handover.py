"""What the studio hands on, all from the session's one state (:class:`~designer.studio.session.Study`): the shell
commands that reproduce the screen next to the downloaded files, a Python script that reproduces it through the
library's front doors, and a self-contained HTML report (printable to PDF) like ``designer plan --report``'s.

Each part appears only when the screen shows it for the current state: a part the state cannot compute is left
out (its panel says why), never taken from an earlier state.
"""

from __future__ import annotations

import datetime
import html
import re
import shlex
from collections.abc import Callable
from typing import Any, TypeVar

from .._internal.render import fmt
from ..exceptions import DesignerError, NotReadyError
from .fields import FieldError, num
from .notebook_cells import script
from .phrases import NAMES, SEMANTICS_WORDS, certificate_words, eps_words, high_loss_warning, objective_words
from .session import CURVE_GRID, Lab, Study

__all__ = ["GLOSSARY_WORDS", "commands", "localized", "plan_assumptions", "report", "script"]

T = TypeVar("T")
#: A number the studio writes (grouped thousands or a decimal point; 4.49x too), not part of a name or a version.
_NUMBER = re.compile(r"(^|[^\w.,])(\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+\.\d+(?:e[+-]?\d+)?)(?![A-Za-wyz0-9_]|[.,]\d)")
EXPORTS = {"html": "page.html", "qualtrics": "qualtrics.txt", "limesurvey": "limesurvey.txt"}


def _get(compute: Callable[[], T]) -> T | None:
    """A part of the state, or None when the state does not give it (the panel says why)."""
    try:
        return compute()
    except (NotReadyError, DesignerError, FieldError, OSError):
        return None


def _q(text: str) -> str:
    return shlex.quote(text)


def _exporter(lab: Lab, study: Study, to: str) -> Callable[[], Any]:
    return lambda: lab.export(study, to)


def commands(study: Study, lab: Lab) -> str:
    """The ``designer`` command lines behind the screen, to run next to the downloaded files."""
    released = _get(lambda: lab.released(study))
    lines = ["# designer studio: the command lines behind the screen; run them next to the downloaded files"]
    if released is None:
        return "\n".join([*lines, "# (no design yet: fix the fields the page marks)"]) + "\n"
    if study.loaded is not None:
        mech = "mechanism.json" if study.loaded.upload.name.lower().endswith(".json") else "mechanism.csv"
        lines.append(f"# {mech} is the loaded file {study.loaded.upload.name}, used as it is")
    else:
        mech = "mechanism.json"
        lines.append("designer design problem.toml --out mechanism.json --force")
        lines.append(f"designer sweep problem.toml --epsilon {','.join(num(e) for e in CURVE_GRID)} --format json")
    if released.mechanism is None:
        return "\n".join(lines) + "\n"
    if _get(lambda: lab.audit(study)) is not None:
        lines.append(f"designer audit {mech}")
    common = f"--semantics {released.semantics} --prior {_q(released.prior_text())}"
    ask = study.plan
    if _get(lambda: lab.plan_width(study)) is not None:
        at_n = f" --n {ask.n}" if _get(lambda: lab.plan_n(study)) is not None else ""
        lines.append(f"designer plan {mech} --width {num(ask.width or 0)}{at_n} --level {num(ask.level or 0)} {common}")
    if _get(lambda: lab.plan_power(study)) is not None:
        lines.append(f"designer plan {mech} --detect {num(ask.detect or 0)} --power {num(ask.power or 0)} "
                     f"--alpha {num(ask.alpha or 0)} {common}")
    if _get(lambda: lab.split(study)) is not None:
        lines.append("designer plan survey.toml")
    if _get(lambda: lab.device(study)) is not None:
        lines.append(f"designer design problem.toml --device {_q(study.device or '')} --instructions card.html --force")
    for to, out in EXPORTS.items():
        if _get(_exporter(lab, study, to)) is not None:
            lines.append(f"designer export {mech} --to {to} --question {_q(study.page_question)} --out {out} --force")
    if _get(lambda: lab.estimate(study)) is not None and study.answers is not None:
        lines.append(f"designer estimate {_q(study.answers.name)} --mechanism {mech} --column "
                     f"{_q(study.answer_column)} --level {num(study.estimate_level or 0)} --semantics "
                     f"{released.semantics}")
    if _get(lambda: lab.release(study)) is not None and study.truth is not None:
        lines.append(f"designer randomize {_q(study.truth.name)} --mechanism {mech} --column "
                     f"{_q(study.truth_column)} --out released.csv")
    return "\n".join(lines) + "\n"


# -- the report -----------------------------------------------------------------------------------------------
_REPORT_STYLE = """
.flag { background: #fdecea; border-left: 4px solid #b00020; padding: 0.6em 1em; color: #5f0010; }
.scroll { overflow-x: auto; max-width: 100%; } pre { white-space: pre-wrap; font-size: 0.85em; background: #f6f6f6;
  padding: 0.6em; overflow-wrap: anywhere; }
table { max-width: 100%; } th { overflow-wrap: break-word; } td.num, table.wide td + td { white-space: nowrap; }
table.wide { font-size: 0.8em; } table.wide th, table.wide td { padding: 0.2em 0.35em; }
.studio-fig-narrow { display: none; } ul.studio-legend { list-style: none; padding: 0; }
dl.glossary dt { font-weight: 600; margin-top: 0.4em; } dl.glossary dd { margin-left: 1.2em; }
@media print { .scroll { overflow: visible; } table.wide { width: 100%; font-size: 0.72em; }
  pre { font-size: 0.75em; } }
"""


def localized(page: str, decimal: str = ".", group: str = ",") -> str:
    """``page`` (HTML) with the numbers of its text written with the locale's ``decimal`` mark and thousands
    ``group`` (as the studio's page shows them); tags, styles and command lines (``<pre>``) are left as they are.

    Examples
    --------
    >>> from designer.studio.handover import localized
    >>> localized("<p>6,247 respondents; 0.5848 (designer 0.2.0)</p><pre>--width 0.03</pre>", ",", ".")
    '<p>6.247 respondents; 0,5848 (designer 0.2.0)</p><pre>--width 0.03</pre>'
    """
    if decimal == "." and group == ",":
        return page
    table = str.maketrans({".": decimal, ",": group})
    pieces = re.split(r"(<pre>.*?</pre>|<style>.*?</style>|<[^>]*>)", page, flags=re.S)
    return "".join(p if p.startswith("<") else _NUMBER.sub(lambda m: m.group(1) + m.group(2).translate(table), p)
                   for p in pieces)


def report(study: Study, lab: Lab, *, decimal: str = ".", group: str = ",") -> str:
    """The session as one self-contained HTML page, printable to PDF: the question, the budget in words, the
    design and its certificate, the plan, the field instructions, the estimates with intervals, and how to
    reproduce them; its numbers written with the browser's ``decimal`` mark and thousands ``group``."""
    return localized(_report(study, lab), decimal, group)


def _report(study: Study, lab: Lab) -> str:
    from .._version import __version__
    from ..planning.report import html_page, html_table

    e = html.escape
    parts = [f"<h1>Survey design: {e(study.name)}</h1>",
             f'<p class="note">Made with designer studio {e(__version__)} on '
             f"{datetime.date.today().isoformat()}. Every number below was certified or computed by designer; the "
             "command lines, the Python script and the notebook at the end reproduce them.</p>"]
    released = _get(lambda: lab.released(study))
    parts += _question_part(study, html_table)
    if study.epsilon is not None:
        semantics = released.semantics if released is not None else "sldp"
        parts += ["<h2>The privacy budget</h2>",
                  f'<p class="key">epsilon = {study.epsilon:g}. {e(eps_words(study.epsilon, semantics))}</p>']
        warning = high_loss_warning(study.epsilon)
        if warning:
            parts.append(f'<p class="flag">{e(warning)}</p>')
    if released is None:
        parts.append("<p>No design: the studio had fields to fix.</p>")
        return html_page(f"designer studio: {study.name}", parts, style=_REPORT_STYLE)
    parts += _guarantee_part(study, lab, released)
    parts += _design_part(study, lab, released, html_table)
    if released.mechanism is not None:
        parts += _respondent_part(study, released)
        parts += _plan_part(study, lab, html_table)
        parts += _preview_part(study, lab)
        parts += _field_part(study, lab)
        parts += _estimate_part(study, lab, html_table)
    parts += ["<h2>Reproduce it</h2>",
              "<p>Next to the downloaded files (problem.toml, mechanism.json and the answers), these command lines "
              "give the same numbers; the Python script studio_session.py and the notebook studio_session.ipynb do "
              "the same through designer's functions.</p>", f"<pre>{e(commands(study, lab))}</pre>"]
    parts += _glossary_part()
    return html_page(f"designer studio: {study.name}", parts, style=_REPORT_STYLE)


def _question_part(study: Study, table: Callable[..., str]) -> list[str]:
    from ..devices import answer_words

    data = study.data or {}
    problem = study.problem
    if study.loaded is not None:
        mech = study.loaded.mechanism
        return ["<h2>The question</h2>", f"<p>The mechanism file {html.escape(study.loaded.upload.name)}, used as it "
                f"is: true answers {html.escape(', '.join(mech.inputs))}.</p>"]
    if problem is None:
        return ["<h2>The question</h2>", "<p>The question had fields to fix.</p>"]
    rows = [["True answers", ", ".join(problem.inputs)]]
    focal = (data.get("structure") or {}).get("focal_sets")
    if focal:
        rows.append(["Answers a respondent may give",
                     "; ".join(answer_words(tuple(s), problem.frame) for s in focal)])
    else:
        rows.append(["Answers a respondent may give", "any answer or set of answers"])
    if problem.dont_know is not None:
        rows.append(["Share told to answer \"don't know\"", fmt(problem.dont_know, 6)])
    rows.append(["Expected shares", ", ".join(f"{x} {fmt(float(p), 4)}" for x, p in zip(problem.inputs,
                                                                                       problem.prior))
                 + ("" if "prior" in data else " (equal: the shares are unknown)")])
    rows.append(["How set answers are read", SEMANTICS_WORDS.get(str(problem.semantics), str(problem.semantics))])
    rows.append(["What the design favours", objective_words(str(problem.objective))])
    return ["<h2>The question</h2>", table(["", "this survey"], rows)]


def _design_part(study: Study, lab: Lab, released: Any, table: Callable[..., str]) -> list[str]:
    e = html.escape
    parts = ["<h2>The design</h2>"]
    mech = released.mechanism
    if mech is not None:
        from .figures import answer_labels

        heads = answer_labels(mech, released)
        if len(heads) > 7 and mech.k < len(heads):  # a wide design is printed with a row per reported answer
            body = table(["reported answer", *(f"true {x}" for x in mech.inputs)],
                         [[w, *(fmt(v, 8) for v in col)] for w, col in zip(heads, mech.matrix.T)])
            how = "Each column: the chances of each reported answer (rows) for a respondent with that true answer."
        else:
            body = table(["true answer", *heads], [[x, *(fmt(v, 8) for v in row)]
                                                   for x, row in zip(mech.inputs, mech.matrix)])
            how = "Each row: the chances of each reported answer for a respondent with that true answer."
        if max(len(heads), mech.k) > 6:
            body = body.replace("<table>", '<table class="wide">', 1)
        parts.append('<div class="scroll">' + body + "</div>")
        parts.append(f'<p class="note">{how}</p>')
    else:
        parts.append(f"<p>{e(str(_get(lambda: lab.listed(study)) or ''))}</p>")
    ident = _get(lambda: lab.identification(study))
    if ident is not None:
        parts.append(f"<p>{e(NAMES['mean_variance']).capitalize()}: {fmt(ident.mean_variance, 8)}.</p>")
        if ident.per_share:
            parts += ["<h3>Variance of each share</h3>",
                      table(["share of", "variance of its estimate, per respondent", "standard error with n "
                             "respondents"],
                            [[x, _variance(v), "infinite" if v == float("inf") else f"{fmt(v ** 0.5, 6)} / √n"]
                             for x, v in zip(ident.inputs, ident.share_variances)]),
                      '<p class="note">A variance per respondent is the variance of the estimate from a survey of '
                      "one respondent; a survey of n respondents has the variance divided by n, so the number can "
                      "be above 1 although a share lies between 0 and 1.</p>"]
        if not ident.ok:
            parts.append(f'<p class="flag">{e(ident.words())} {e(ident.fix)}</p>')
    if released.certificate is not None:
        parts.append(f"<h3>Its certificate</h3><p>{e(certificate_words(released.certificate))}</p>")
    elif released.loaded is not None and released.loaded.release is not None:
        parts.append(f"<h3>Its certificate</h3><p>The file states its release (epsilon {released.epsilon:g}); "
                     "designer checked it exactly when the file was read.</p>")
    return parts


def _variance(v: float) -> str:
    return "infinite" if v == float("inf") else fmt(v, 8)


def _guarantee_part(study: Study, lab: Lab, released: Any) -> list[str]:
    """Both privacy guarantees in words: with set answers kept as given, and if they are later made precise."""
    from .phrases import odds_factor

    audit = _get(lambda: lab.audit(study)) if released.mechanism is not None else None
    if audit is None:
        return []
    losses = audit.losses
    parts = ["<h2>What the respondents are promised</h2>"]
    items = []
    for name, how in (("shafer", "With the set answers kept as given (as the analysis here uses them)"),
                      ("walley", "If the set answers are later made precise (by the respondent, an interviewer or "
                                 "a coding rule that turns \"one of: a, b\" into a or b)")):
        w = losses.get(name)
        if w is None:
            continue
        if not w.eps < float("inf"):
            items.append(f"<li>{html.escape(how)}: one answer can rule out a true answer; no privacy in this "
                         "reading.</li>")
            continue
        items.append(f"<li>{html.escape(how)}: the privacy loss is {fmt(w.eps, 6)} nats: an answer changes the odds "
                     f"between any two true answers by at most {odds_factor(w.eps)}x.</li>")
    parts.append(f"<ul>{''.join(items)}</ul>")
    shafer, walley = losses.get("shafer"), losses.get("walley")
    if shafer is not None and walley is not None and walley.eps > shafer.eps * (1 + 1e-9):
        parts.append('<p class="flag">Keep the set answers as they were given: if the set answers are later made '
                     f"precise, the loss rises from {fmt(shafer.eps, 6)} to {fmt(walley.eps, 6)} nats "
                     f"({odds_factor(shafer.eps)}x to {odds_factor(walley.eps)}x).</p>")
    return parts


def _respondent_part(study: Study, released: Any) -> list[str]:
    """The design as the respondent sees it: the answers the page may report, in its words, and the chances."""
    from .figures import answer_labels

    mech = released.mechanism
    words = answer_labels(mech, released)
    e = html.escape
    parts = ["<h2>The design as the respondent sees it</h2>",
             f"<p>The question: <q>{e(study.page_question)}</q>. The respondent gives their true answer privately; "
             "the page (or the printed card) then reports one of these answers in its place, drawn with the "
             "design's chances:</p>",
             "<ul>" + "".join(f"<li><q>{e(w)}</q></li>" for w in words) + "</ul>"]
    if any(w.startswith("one of:") for w in words):
        parts.append('<p class="note">An answer such as <q>one of: a, b</q> says only that the true answer is a or '
                     "b; the respondent does not choose it, the randomizer does.</p>")
    problem = getattr(released.result, "problem", None)
    frame = tuple(mech.frame)
    uses_dont_know = any(set(s) == set(frame) for s in mech.focal_sets)
    whole = (1 << len(frame)) - 1  # the bitmask of the whole frame: "I don't know"
    if problem is not None and not uses_dont_know and len(frame) > 1 and (
            problem.focal_sets is None or whole in problem.focal_sets or problem.dont_know is not None):
        parts.append(_DONT_KNOW_NOTE)
    lines = []
    for x, row in zip(mech.inputs, mech.matrix):
        shares = ", ".join(f"<q>{e(w)}</q> {fmt(v * 100, 4)}%" for w, v in zip(words, row) if v > 0)
        lines.append(f"<li>True answer {e(x)}: {shares}.</li>")
    parts.append(f"<p>What is reported, by true answer:</p><ul>{''.join(lines)}</ul>")
    return parts


_DONT_KNOW_NOTE = ("<p class=\"note\">\"I don't know\" is not among the answers: the best design at this budget does "
                   "not use it. In this design \"I don't know\" would be an answer the randomizer may report, not "
                   "the place where people who do not know are recorded; people who do not know their answer are a "
                   "question for the questionnaire, not for the randomizer.</p>")


def _preview_part(study: Study, lab: Lab) -> list[str]:
    preview = _get(lambda: lab.preview(study))
    if preview is None:
        return []
    from .survey_page import preview_html

    return ["<h2>Preview: a simulated survey of the planned size</h2>",
            "<p>True answers drawn from the expected shares, randomized with the design and estimated as the real "
            "answers will be (reproducible by its seed).</p>",
            preview_html(preview, "report_preview").replace(' xmlns="http://www.w3.org/2000/svg"', "")]  # inline SVG


GLOSSARY_WORDS = {
    "nats": "The unit of the privacy budget epsilon: a loss of epsilon nats means one answer changes the odds between "
            "two true answers by at most e^epsilon times (1 nat: 2.72 times).",
    "variance per respondent": "The variance of an estimated share from a survey of one respondent; with n "
                               "respondents divide it by n. It can be above 1.",
    "certified in rational arithmetic": "designer checked every privacy loss of the design with exact fractions, "
                                        "not rounded decimals, before releasing it.",
    "mixed into the solver's answer": "The numerical solver's design missed the budget by a rounding error; designer "
                                      "blended in a little of a more private design so that the exact check passes.",
    "large-sample": "The interval uses the normal approximation to the estimate, accurate when the survey has many "
                    "respondents (hundreds or more).",
}


def _glossary_part() -> list[str]:
    items = "".join(f"<dt>{html.escape(k)}</dt><dd>{html.escape(v)}</dd>" for k, v in GLOSSARY_WORDS.items())
    return ["<h2>Words used here</h2>", f'<dl class="glossary">{items}</dl>']


def _plan_part(study: Study, lab: Lab, table: Callable[..., str]) -> list[str]:
    rows = []
    width = _get(lambda: lab.plan_width(study))
    if width is not None:
        rows.append([f"Respondents for every share's {fmt(study.plan.level or 0, 4)} interval to be within "
                     f"±{fmt(study.plan.width or 0, 6)}", f"{width.n:,}"])
    at_n = _get(lambda: lab.plan_n(study))
    if at_n is not None and at_n.width_at_n is not None:
        rows.append([f"Half-width of every share's interval with {at_n.width_at_n.n:,} respondents",
                     fmt(at_n.width_at_n.width, 6)])
    power = _get(lambda: lab.plan_power(study))
    if power is not None:
        rows.append([f"Respondents to detect a change of {fmt(study.plan.detect or 0, 4)} in the share of "
                     f"{power.share} (power {fmt(study.plan.power or 0, 4)}, level {fmt(study.plan.alpha or 0, 4)})",
                     f"{power.n:,}"])
    parts = ["<h2>The survey plan</h2>", table(["", "respondents or half-width"], rows)] if rows else []
    if width is not None:
        parts += ["<h3>Assumptions</h3>", "<ul>" + "".join(f"<li>{html.escape(a)}</li>" for a in
                                                          plan_assumptions(study, lab, width)) + "</ul>"]
    split = _get(lambda: lab.split(study))
    if split is not None:
        d = split.to_dict()
        parts += ["<h3>The questionnaire's budget</h3>",
                  table(["question", "budget", NAMES["mean_variance"], "with an equal split"],
                        [[q["question"], fmt(q["epsilon"], 6), fmt(q["variance"], 6), fmt(q["equal_split_variance"], 6)]
                         for q in d["allocation"]])]
    return parts


def _field_part(study: Study, lab: Lab) -> list[str]:
    parts = ["<h2>In the field</h2>"]
    page = _get(lambda: lab.export(study, "html"))
    if page is not None:
        parts.append("<p><b>Online:</b> the respondent's page (page.html, or the Qualtrics and LimeSurvey snippets) "
                     "shows the question, takes the true answer and reports an answer drawn with the design's exact "
                     f"chances (table SHA-256 {html.escape(page.randomizer.table.sha256)}).</p>")
    device = _get(lambda: lab.device(study))
    if device is not None:
        g, card = device
        body = card.split("<body>", 1)[-1].rsplit("</body>", 1)[0]
        parts += [f"<p><b>On paper:</b> the design on {html.escape(g.device.name)}; the printed card:</p>",
                  f'<div class="card">{body}</div>']
    return parts


def _estimate_part(study: Study, lab: Lab, table: Callable[..., str]) -> list[str]:
    fit = _get(lambda: lab.estimate(study))
    if fit is None or study.answers is None:
        return []
    rows = estimate_rows(fit)
    return ["<h2>The estimated shares</h2>",
            f"<p>From {html.escape(study.answers.name)}: {fit.n:,} answers; fit {html.escape(status_words(fit))}; "
            f"{fmt(fit.level * 100, 4)}% intervals.</p>",
            table(["true answer", "estimated share", "standard error", "interval from", "to"], rows)]


def plan_assumptions(study: Study, lab: Lab, plan: Any) -> list[str]:
    """What the plan assumes, in words."""
    released = lab.listed(study)
    formula = str(getattr(getattr(plan.accuracy, "formula", None), "value", plan.accuracy.formula))
    how = ("the exact variance of this design's estimate" if formula in ("warner", "thm_3_10") else
           "the large-sample variance of the estimate (normal approximation)")
    prior = ", ".join(f"{x} {fmt(float(p), 4)}" for x, p in zip(released.mechanism.inputs, released.prior))
    return [f"The true shares are the expected ones ({prior}); the plan holds for every share at these shares.",
            "Respondents are drawn independently (a simple random sample) and every one answers through the "
            "randomizer with the design's chances (no one refuses or skips it).",
            f"The interval of each share is a {fmt((study.plan.level or 0) * 100, 4)}% interval from {how}.",
            ("The analysis keeps the set answers as given." if released.semantics == "sldp" else
             "The set answers are made precise before the analysis; only an interval of each share is identified."),
            "Nobody answers twice and the answers are not weighted; with weights or clusters the survey needs more "
            "respondents (its design effect)."]


def status_words(fit: Any) -> str:
    """The status of an estimate in words (every format shows it)."""
    return str(fit.status).replace("_", " ")


def estimate_rows(fit: Any) -> list[list[str]]:
    """Each input's estimate, standard error and interval as the page prints them (8 significant digits; an
    identified set's bounds for precise answers)."""
    d = fit.to_dict()
    if "estimate" not in d:  # precise answers: each share's identified interval
        return [[x, "", "", fmt(d["lower"][x], 8), fmt(d["upper"][x], 8)] for x in d["lower"]]
    out = []
    for x in d["estimate"]:
        cells = [d[c].get(x) for c in ("estimate", "stderr", "ci_low", "ci_high")]
        out.append([x, *("n/a" if v is None else fmt(v, 8) for v in cells)])
    return out
