"""A self-contained HTML page of a plan: the problem, the design, its losses and certificate, the sample size,
the price of privacy in respondents (table and inline PNG), and the questionnaire's allocation."""

from __future__ import annotations

import base64
import html
from typing import Any

__all__ = ["STYLE", "allocation_figure", "html_page", "html_table", "plan_report", "sample_size_figure"]

#: The style of designer's HTML reports (the plan's, the studio's): one page, printable to PDF.
STYLE = """
body { font-family: system-ui, -apple-system, 'Segoe UI', sans-serif; margin: 2em auto; max-width: 62em;
       color: #222; line-height: 1.45; padding: 0 1em; }
h3 { font-size: 1.05em; margin-bottom: 0.2em; }
h1 { font-size: 1.6em; margin-bottom: 0.2em; } h2 { font-size: 1.2em; margin-top: 1.6em;
     border-bottom: 1px solid #ccc; padding-bottom: 0.2em; }
table { border-collapse: collapse; margin: 0.6em 0; } th, td { padding: 0.25em 0.7em; border: 1px solid #ddd; }
th { background: #f3f5f8; text-align: left; } td.num { text-align: right; font-variant-numeric: tabular-nums; }
.key { font-size: 1.25em; background: #eef6ee; border-left: 4px solid #3a7; padding: 0.6em 1em; }
.note { color: #555; font-size: 0.92em; } img { max-width: 100%; border: 1px solid #eee; }
@media print { body { margin: 0; max-width: none; } h2 { break-after: avoid; }
               table, img, .key { break-inside: avoid; } }
"""


def _cell(value: Any) -> str:
    if isinstance(value, float):
        return f'<td class="num">{value:.6g}</td>'
    if isinstance(value, int) and not isinstance(value, bool):
        return f'<td class="num">{value}</td>'
    return f"<td>{html.escape(str(value))}</td>"


def html_table(headers: list[str], rows: list[list[Any]]) -> str:
    """An HTML table of a report: floats to 6 significant digits and integers right-aligned, text escaped.

    Examples
    --------
    >>> from designer.planning.report import html_table
    >>> html_table(["share", "value"], [["yes", 0.25]])
    '<table><tr><th>share</th><th>value</th></tr><tr><td>yes</td><td class="num">0.25</td></tr></table>'
    """
    head = "".join(f"<th>{html.escape(h)}</th>" for h in headers)
    body = "".join("<tr>" + "".join(_cell(v) for v in row) + "</tr>" for row in rows)
    return f"<table><tr>{head}</tr>{body}</table>"


def sample_size_figure(rows: list[dict[str, Any]], title: str) -> bytes:
    """PNG of the sample size against the budget (the price of privacy in respondents)."""
    from .._internal.plots import _pyplot, figure_png

    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(7, 4))
    points = [(r["epsilon"], r["n"]) for r in rows if r.get("n")]
    if points:
        ax.plot([p[0] for p in points], [p[1] for p in points], "o-", color="C0")
    ax.set(yscale="log", xlabel="privacy budget eps (nats)", ylabel="respondents needed", title=title)
    ax.title.set_fontsize(9)
    ax.grid(True, which="both", alpha=0.3)
    return figure_png(fig, dpi=110)


def power_curve_figure(rows: list[dict[str, Any]], title: str, *, power: float, n: int, groups: int) -> bytes:
    """PNG of the test's power against the respondents (per group with two), one line per difference to detect,
    the power wanted dashed and the planned ``n`` marked."""
    from .._internal.plots import _pyplot, figure_png

    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(7, 4))
    for i, d in enumerate(dict.fromkeys(r["detect"] for r in rows)):
        points = [(r["n"], r["power"]) for r in rows if r["detect"] == d]
        ax.plot([p[0] for p in points], [p[1] for p in points], "o-", ms=3, color=f"C{i % 10}",
                label=f"difference {d:g}")
    ax.axhline(power, ls="--", color="0.4", lw=1, label=f"power wanted ({power:g})")
    ax.axvline(n, ls=":", color="0.4", lw=1, label=f"planned n = {n:,}")
    ax.set(ylim=(0, 1.02), xlabel="respondents" + (" per group" if groups == 2 else ""), ylabel="power",
           title=title)
    ax.title.set_fontsize(9)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0)
    return figure_png(fig, dpi=110)


def allocation_figure(allocation: Any, title: str) -> bytes:
    """PNG of each question's variance against its budget (log scale), with the chosen split and the equal
    split marked: the picture of why the budget goes where it goes."""
    from .._internal.plots import _pyplot, figure_png

    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(7, 4))
    equal = allocation.survey.epsilon / len(allocation.survey.questions)
    for i, (q, curve, e, v) in enumerate(zip(allocation.survey.questions, allocation.curves, allocation.epsilons,
                                             allocation.variances)):
        points = [(x, y) for x, y in curve.items() if x > 0 and y < float("inf")]
        color = f"C{i % 10}"
        if points:
            ax.plot([p[0] for p in points], [p[1] for p in points], "-", color=color, alpha=0.8, label=q.name)
        if v < float("inf"):
            ax.plot([e], [v], "o", color=color, markersize=7)
    ax.axvline(equal, color="0.5", linestyle=":", label=f"equal split ({equal:.3g})")
    ax.set(yscale="log", xlabel="budget of the question, eps (nats)", ylabel="variance per respondent", title=title)
    ax.title.set_fontsize(9)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    return figure_png(fig, dpi=110)


def _png(data: bytes, alt: str) -> str:
    return f'<img alt="{html.escape(alt)}" src="data:image/png;base64,{base64.b64encode(data).decode()}">'


def _number(value: float) -> str | float:
    return "inf (no design identifies every share)" if value == float("inf") else value


def _questionnaire(allocation: Any) -> list[str]:
    """The questionnaire section: the split beside the equal split, the figure, each question's design."""
    from ..optimal.problem import DesignProblem

    survey = allocation.survey
    parts = ["<h2>The questionnaire's budget</h2>"]
    rows = [[q.name, w, e, _number(v), _number(eq)] for q, w, e, v, eq in zip(
        survey.questions, survey.weights, allocation.epsilons, allocation.variances,
        allocation.equal_split_variances)]
    parts.append(html_table(["question", "weight", "epsilon", "variance", "variance, equal split"], rows))
    joint = allocation.joint
    lines = [f"best split: weighted total variance {allocation.total_variance:.6g}",
             f"equal split (eps {survey.epsilon / len(survey.questions):.4g} each): "
             + (f"{allocation.equal_split_total_variance:.6g}" if allocation.equal_split_total_variance < float("inf")
                else "infinite: " + "; ".join(f"{q.name}: {r}" for q, r in zip(survey.questions, allocation.reasons)
                                              if r)),
             f"one joint question: {joint['total_variance']:.6g} ({allocation.joint_note})" if joint
             else f"one joint question: not compared ({allocation.joint_note})"]
    parts.append("<ul>" + "".join(f"<li>{html.escape(t)}</li>" for t in lines) + "</ul>")
    if allocation.curves:
        parts.append(_png(allocation_figure(allocation, f"{survey.name}: variance against each question's budget"),
                          "variance of each question against its budget"))
    parts.append("<h2>Each question's design</h2>")
    for q, e, acc, basis in zip(survey.questions, allocation.epsilons, allocation.accuracies or
                                [None] * len(survey.questions), allocation.bases or [None] * len(survey.questions)):
        assert isinstance(q, DesignProblem)
        parts.append(f"<h3>{html.escape(q.name)}: eps = {e:.4g}</h3>")
        parts.append(f'<p class="note">{html.escape(q.replace(epsilon=round(e, 12)).describe())}; prior '
                     + html.escape(", ".join(f"{x} = {p:.4g}" for x, p in zip(q.inputs, q.prior)))
                     + (f"; {html.escape(basis.words)}" if basis is not None else "") + "</p>")
        if acc is None:
            parts.append("<p>No expanded design at this budget (see the variance above).</p>")
            continue
        mech = acc.mechanism
        if len(mech.focal) <= 40:
            parts.append(html_table(["true answer", *mech.columns],
                                [[x, *(float(v) for v in row)] for x, row in zip(mech.inputs, mech.matrix)]))
        parts.append(html_table(["share", "variance per respondent"],
                            [[x, _number(float(v))] for x, v in zip(mech.inputs, acc.per_share)]))
    return parts


def plan_report(summary: dict[str, Any], *, design: Any = None, by_epsilon: list[dict[str, Any]] | None = None,
                allocation: Any = None) -> str:
    """The HTML page (no external resources: the figure is an inline PNG)."""
    parts = [f"<h1>Survey plan: {html.escape(str(summary.get('title', 'designer')))}</h1>",
             f'<p class="note">{html.escape(str(summary.get("subtitle", "")))}</p>']
    if summary.get("headline"):
        parts.append(f'<p class="key">{html.escape(summary["headline"])}</p>')
    for line in summary.get("details", []):
        parts.append(f"<p>{html.escape(line)}</p>")
    if design is not None and design.mechanism is not None:
        mech = design.mechanism
        parts.append("<h2>The design</h2>")
        parts.append(f"<p>{html.escape(design.problem.describe())}</p>")
        if len(mech.focal) <= 40:
            parts.append(html_table(["true answer", *mech.columns],
                                [[x, *(float(v) for v in row)] for x, row in zip(mech.inputs, mech.matrix)]))
        parts.append(html_table(["privacy loss", "value", "meaning"], [
            ["eps_shafer", float(design.eps_shafer), "set answers (Def 3.1)"],
            ["eps_walley", float(design.eps_walley), "precise answers (Def 3.13)"]]))
        parts.append(f"<p><b>Certificate:</b> {html.escape(design.certificate.describe())}</p>")
    if summary.get("rows"):
        parts.append("<h2>The plan</h2>")
        parts.append(html_table(["quantity", "value"], summary["rows"]))
    if by_epsilon:
        parts.append("<h2>The price of privacy in respondents</h2>")
        parts.append(html_table(["epsilon", "variance per respondent", "respondents", "why not reachable"],
                            [[r["epsilon"], _number(r["variance"]), r["n"] if r["n"] else "not reachable",
                              r.get("reason", "")] for r in by_epsilon]))
        parts.append(_png(sample_size_figure(by_epsilon, str(summary.get("figure_title", ""))),
                          "respondents against epsilon"))
    if allocation is not None:
        parts += _questionnaire(allocation)
    parts.append('<p class="note">Made by designer; the mathematics is in docs/theory.md of the repository.</p>')
    return html_page("designer plan", parts)


def html_page(title: str, parts: list[str], *, style: str = "") -> str:
    """A self-contained HTML page of ``parts`` (no external resources) in :data:`STYLE`, plus ``style``.

    Examples
    --------
    >>> from designer.planning.report import html_page
    >>> html_page("plan", ["<p>n = 100</p>"]).startswith("<!DOCTYPE html>")
    True
    """
    return (f"<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{html.escape(title)}</title>"
            f"<style>{STYLE}{style}</style></head><body>{''.join(parts)}</body></html>\n")
