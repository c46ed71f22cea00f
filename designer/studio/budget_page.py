"""Step 2 of the studio, the budget: the certified design at the chosen epsilon, its figures, closed forms,
the privacy/accuracy curve and, on a tab, the worst-case (credal) bounds and the trade-off curve."""

from __future__ import annotations

import html
import math
from typing import Any

import numpy as np
from shiny import reactive, render, req, ui

from .._internal.render import fmt
from .backend import Current, StudioError, textbook_designs, variance_words
from .figures import curve_svg, tradeoff_figure

__all__ = ["CURVE_GRID", "budget_server", "budget_ui", "matrix_html"]

#: The budgets of the privacy/accuracy curve (nats).
CURVE_GRID = [0.25, 0.5, 0.75, 1.0, 1.25, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0]
#: Widest matrix shown as a table (answer sets).
MAX_COLUMNS = 512
EPS_MIN, EPS_MAX, EPS_STEP = 0.05, 8.0, 0.05

#: Keeps the slider and the number box together in the browser (no round trip to the server).
SLIDER_JS = """
document.addEventListener('input', function (e) {
  var box = document.getElementById('epsilon'), bar = document.getElementById('epsilon_slider');
  if (e.target === bar) { box.value = bar.value; box.dispatchEvent(new Event('change', {bubbles: true})); }
  if (e.target === box && box.value !== '' && !isNaN(box.value)) { bar.value = box.value; }
});
document.addEventListener('change', function (e) {
  var box = document.getElementById('epsilon'), bar = document.getElementById('epsilon_slider');
  if (e.target === box && box.value !== '' && !isNaN(box.value)) { bar.value = box.value; }
});
$(document).on('shiny:inputchanged', function (e) {
  if (e.name === 'epsilon' && e.value !== null) {
    var bar = document.getElementById('epsilon_slider'); if (bar) { bar.value = e.value; }
  }
});
"""


def matrix_html(mech: Any, words: dict[tuple[str, ...], str] | None = None) -> str:
    """The mechanism as an HTML table: one row per true answer, one column per answer set, masses to 8
    significant digits as ``designer design`` prints them."""
    words = words or {}
    heads = "".join(f'<th scope="col">{html.escape(words.get(tuple(s), c))}</th>'
                    for s, c in zip(mech.focal_sets, mech.columns))
    rows = "".join(
        f'<tr><th scope="row">{html.escape(x)}</th>' + "".join(f"<td>{fmt(v, 8)}</td>" for v in row) + "</tr>"
        for x, row in zip(mech.inputs, mech.matrix))
    return ('<table class="table table-sm studio-matrix"><caption>Chance of each reported answer (columns) '
            'for each true answer (rows)</caption><thead><tr><th scope="col">true answer</th>'
            f"{heads}</tr></thead><tbody>{rows}</tbody></table>")


def budget_ui(epsilon: float) -> Any:
    return ui.nav_panel(
        "2. The budget",
        ui.h2("The budget"),
        ui.div(
            {"class": "studio-row"},
            ui.input_numeric("epsilon", "Privacy budget epsilon (nats)", epsilon, min=EPS_MIN, step=EPS_STEP),
            ui.div({"class": "form-group shiny-input-container"},
                   ui.tags.label("Budget slider", {"for": "epsilon_slider", "class": "control-label"}),
                   ui.tags.input(type="range", id="epsilon_slider", min=EPS_MIN, max=EPS_MAX, step=EPS_STEP,
                                 value=epsilon, **{"class": "form-range"})),
        ),
        ui.tags.script(SLIDER_JS),
        ui.navset_tab(
            ui.nav_panel(
                "This budget",
                ui.div({"class": "studio-row"},
                       ui.div(ui.h3("Certified design"), ui.output_ui("design_matrix"),
                              ui.output_text("certificate", inline=False),
                              ui.output_text("variance", inline=False),
                              ui.output_text("truthful", inline=False)),
                       ui.div(ui.h3("Closed forms at this budget"), ui.output_ui("closed_forms"))),
                ui.h3("Privacy and accuracy over budgets"),
                ui.output_ui("curve_plot"),
                value="this_budget",
            ),
            ui.nav_panel(
                "Worst case",
                ui.h3("Worst-case (credal) bounds"),
                ui.p("bel: the least chance of a set of answers; pl: the most, whatever a set answer meant.",
                     {"class": "studio-note"}),
                ui.output_ui("credal_table"),
                ui.h3("How well could anyone tell two true answers apart?"),
                ui.output_ui("tradeoff_pair"),
                ui.output_plot("tradeoff_plot", height="320px"),
                value="worst_case",
            ),
            id="budget_tabs",
        ),
        value="budget",
    )


def budget_server(input: Any, output: Any, session: Any, state: Any, problem: Any) -> Any:
    """Serve step 2; returns the reactive :class:`~designer.studio.backend.Current` (design at the budget)."""
    backend = state.backend

    @reactive.calc
    def epsilon() -> float:
        eps = input.epsilon()
        if eps is None or not isinstance(eps, (int, float)) or not math.isfinite(eps) or eps <= 0:
            raise StudioError("epsilon: type a budget above 0 (in nats), e.g. 1")
        return float(eps)

    @reactive.calc
    def current() -> Current:
        loaded = state.loaded()
        result = problem()
        if result is None and loaded is not None:
            return loaded
        return backend.design(result[1], epsilon())

    def guarded(fn: Any) -> Any:
        try:
            return fn()
        except StudioError as exc:
            return ui.p(str(exc), {"class": "studio-error", "role": "alert"})

    @output(suspend_when_hidden=False)  # on the page from the start, whichever step is open
    @render.ui
    def design_matrix() -> Any:
        def show() -> Any:
            c = current()
            if c.mechanism is None:
                return ui.p("The design is kept in compact form (too many answer sets to list).")
            if len(c.mechanism.focal) > MAX_COLUMNS:
                return ui.p(f"{c.mechanism.k} x {len(c.mechanism.focal)} mechanism: too wide to show; download it "
                            "in step 4.")
            words = {tuple(s): w for w, s in (getattr(c.result.problem, "answers", ()) or ())} if c.result else {}
            return ui.HTML(matrix_html(c.mechanism, words))
        return guarded(show)

    def text_of(fn: Any) -> str:
        try:
            return str(fn(current()))
        except StudioError as exc:
            return str(exc)

    @output(suspend_when_hidden=False)
    @render.text
    def certificate() -> str:
        def line(c: Current) -> str:
            if c.result is not None:
                return f"certified: {c.result.certificate.describe()}"
            return (f"stated in the file: {c.release.describe()}, checked when it was read" if c.release
                    else "the file states no release (epsilon, semantics, certificate)")
        return text_of(line)

    @output(suspend_when_hidden=False)
    @render.text
    def variance() -> str:
        def line(c: Current) -> str:
            r = c.result
            if r is None:
                return "variance: plan the survey (step 3) for the variance of a loaded mechanism"
            if r.variance is None:
                return f"variance: {r.variance_note}"
            prior = ", ".join(f"{x}={fmt(float(v), 4)}" for x, v in zip(r.problem.inputs, r.problem.prior))
            return (f"variance {fmt(r.variance, 8)} per respondent at prior {prior}: "
                    f"{variance_words(r.variance_kind)} (divide by n for a survey of n)")
        return text_of(line)

    @output(suspend_when_hidden=False)
    @render.text
    def truthful() -> str:
        def line(c: Current) -> str:
            mech = c.mechanism
            prior = (np.asarray(c.result.problem.prior, dtype=float) if c.result is not None
                     else np.full(mech.k, 1.0 / mech.k))
            share = 0.0
            for i, x in enumerate(mech.inputs):
                share += prior[i] * mech.row(x).get((x,), 0.0)
            return f"truthful share: {fmt(share, 8)} of respondents report exactly their true answer"
        return text_of(line)

    @render.ui
    def closed_forms() -> Any:
        def show() -> Any:
            result = problem()
            if result is None:
                return ui.p("A loaded mechanism has no problem to compare with.")
            rows = textbook_designs(result[1], epsilon())
            body = "".join(f"<tr><th scope=\"row\">{html.escape(n)}</th><td>{html.escape(ref)}</td>"
                           f"<td>{fmt(p, 8)}</td><td>{fmt(v, 8)}</td></tr>" for n, ref, p, v in rows)
            return ui.HTML('<table class="table table-sm" id="closed_forms_table"><caption>Textbook designs at this '
                           'budget (variance per respondent at the prior)</caption><thead><tr>'
                           '<th scope="col">design</th><th scope="col">source</th><th scope="col">truthful</th>'
                           f'<th scope="col">variance</th></tr></thead><tbody>{body}</tbody></table>')
        return guarded(show)

    @reactive.calc
    def curve_points() -> Any:
        result = problem()
        req(result is not None)
        names = [name for name, *_ in textbook_designs(result[1], 1.0)]
        refs = {name: [textbook_designs(result[1], e)[i][3] for e in CURVE_GRID] for i, name in enumerate(names)}
        return backend.curve(result[1], CURVE_GRID), refs

    @render.ui
    def curve_plot() -> Any:
        points, refs = curve_points()
        try:
            here = current()
        except StudioError:
            here = None
        mark = (here.epsilon, here.result.variance) if here is not None and here.result is not None else None
        return ui.HTML(curve_svg(points, mark, refs, CURVE_GRID))

    @reactive.calc
    def mechanism_path() -> str:
        c = current()
        if not c.path:
            raise StudioError("the design is kept in compact form; the next steps need a listed mechanism")
        return c.path

    @render.ui
    def credal_table() -> Any:
        def show() -> Any:
            data = backend.credal(mechanism_path())
            heads = "".join(f'<th scope="col">{html.escape(e)}</th>' for e in data["events"])
            body = "".join(
                f'<tr><th scope="row">{html.escape(x)}</th>'
                + "".join(f"<td>{fmt(b, 6)} to {fmt(p, 6)}</td>" for b, p in zip(bel, pl)) + "</tr>"
                for x, bel, pl in zip(data["inputs"], data["bel"], data["pl"]))
            return ui.HTML('<table class="table table-sm"><caption>bel to pl of each event, per true answer'
                           f'</caption><thead><tr><th scope="col">true answer</th>{heads}</tr></thead>'
                           f"<tbody>{body}</tbody></table>")
        return guarded(show)

    @reactive.calc
    def tradeoff() -> Any:
        mech = current().mechanism
        req(mech is not None)
        return backend.tradeoff(mechanism_path(), mech.inputs[0], mech.inputs[1])

    @render.ui
    def tradeoff_pair() -> Any:
        def show() -> Any:
            t = tradeoff()
            i = min(range(len(t["alpha"])), key=lambda j: abs(t["alpha"][j] - 0.05))
            return ui.p(f"{t['title']}. At level alpha = {fmt(t['alpha'][i], 4)} the most powerful test has "
                        f"power {fmt(t['power'][i], 6)}; the budget allows at most {fmt(1 - t['bound'][i], 6)}.")
        return guarded(show)

    @render.plot(alt="Type II error against type I error of the most powerful test between the first two "
                     "inputs, with the bound the budget guarantees")
    def tradeoff_plot() -> Any:
        try:
            t = tradeoff()
        except StudioError:
            req(False)
        return tradeoff_figure(t)

    return current, mechanism_path, epsilon
