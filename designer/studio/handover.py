"""What the studio hands on, all from the session's one state (:class:`~designer.studio.session.Study`): the shell
commands that reproduce the screen next to the downloaded files, a Python script that reproduces it through the
library's front doors, and a self-contained HTML report (printable to PDF) like ``designer plan --report``'s.

Each part appears only when the screen shows it for the current state: a part the state cannot compute is left
out (its panel says why), never taken from an earlier state.
"""

from __future__ import annotations

import datetime
import html
import shlex
from collections.abc import Callable
from typing import Any, TypeVar

from .._internal.render import fmt
from ..exceptions import DesignerError, NotReadyError
from .cells import script
from .fields import FieldError, num
from .phrases import NAMES, SEMANTICS_WORDS, certificate_words, eps_words, high_loss_warning, objective_words
from .session import CURVE_GRID, Lab, Study

__all__ = ["commands", "report", "script"]

T = TypeVar("T")
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
.scroll { overflow-x: auto; } pre { white-space: pre-wrap; font-size: 0.85em; background: #f6f6f6; padding: 0.6em; }
"""


def report(study: Study, lab: Lab) -> str:
    """The session as one self-contained HTML page, printable to PDF: the question, the budget in words, the
    design and its certificate, the plan, the field instructions, the estimates with intervals, and how to
    reproduce them."""
    from .._version import __version__
    from ..planning.report import html_page, html_table

    e = html.escape
    parts = [f"<h1>Survey design: {e(study.name)}</h1>",
             f'<p class="note">Made with designer studio {e(__version__)} on '
             f"{datetime.date.today().isoformat()}. Every number below was certified or computed by designer; the "
             "command lines and the Python script at the end reproduce them.</p>"]
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
    parts += _design_part(study, lab, released, html_table)
    if released.mechanism is not None:
        parts += _plan_part(study, lab, html_table)
        parts += _field_part(study, lab)
        parts += _estimate_part(study, lab, html_table)
    parts += ["<h2>Reproduce it</h2>",
              "<p>Next to the downloaded files (problem.toml, mechanism.json and the answers), these command lines "
              "give the same numbers; the Python script studio_session.py does the same through designer's "
              "functions.</p>", f"<pre>{e(commands(study, lab))}</pre>"]
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
        parts.append('<div class="scroll">' + table(["true answer", *heads],
                                                    [[x, *(fmt(v, 8) for v in row)]
                                                     for x, row in zip(mech.inputs, mech.matrix)]) + "</div>")
        parts.append('<p class="note">Each row: the chances of each reported answer for a respondent with that true '
                     "answer.</p>")
    else:
        parts.append(f"<p>{e(str(_get(lambda: lab.listed(study)) or ''))}</p>")
    ident = _get(lambda: lab.identification(study))
    if ident is not None:
        parts.append(f"<p>{e(NAMES['mean_variance']).capitalize()}: {fmt(ident.mean_variance, 8)}.</p>")
        if not ident.ok:
            parts.append(f'<p class="flag">{e(ident.words())} {e(ident.fix)}</p>')
    if released.certificate is not None:
        parts.append(f"<h3>Its certificate</h3><p>{e(certificate_words(released.certificate))}</p>")
    elif released.loaded is not None and released.loaded.release is not None:
        parts.append(f"<h3>Its certificate</h3><p>The file states its release (epsilon {released.epsilon:g}); "
                     "designer checked it exactly when the file was read.</p>")
    return parts


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
