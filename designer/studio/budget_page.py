"""Step 2 of the studio, the budget: the budget in plain words, the certified design at it with its certificate
and accuracy, the textbook designs beside it, the accuracy over budgets and, on a tab, the worst case (the least
and most chance of each set of answers) and how well anyone could tell two true answers apart."""

from __future__ import annotations

import html
from typing import Any

import numpy as np
from shiny import reactive, render, ui

from .._internal.render import fmt
from ..exceptions import NotReadyError
from .figures import curve_figure, matrix_table, scroll_table, tradeoff_figure
from .phrases import NAMES, certificate_words, high_loss_warning, odds_factor, term, with_terms
from .phrases import eps_words as budget_words
from .session import CURVE_GRID
from .widgets import Ctx, note, number_box

__all__ = ["budget_server", "budget_ui", "textbook_designs"]

EPS_MIN, EPS_MAX, EPS_STEP = 0.05, 8.0, 0.05


def budget_ui(epsilon: str) -> Any:
    box = number_box("epsilon", "Privacy budget epsilon (nats)", epsilon, described="epsilon_msg eps_words")
    return ui.nav_panel(
        "2. The budget",
        ui.h2("The budget", id="step_budget_heading", tabindex="-1"),
        ui.output_ui("step_note_budget"),
        ui.div(
            {"class": "studio-row"},
            box,
            ui.div({"class": "form-group shiny-input-container"},
                   ui.tags.label("Budget slider", {"for": "epsilon_slider", "class": "control-label"}),
                   ui.tags.input(type="range", id="epsilon_slider", min=EPS_MIN, max=EPS_MAX, step=EPS_STEP,
                                 value=epsilon, **{"class": "form-range", "aria-valuetext": f"epsilon {epsilon}"})),
        ),
        ui.output_ui("eps_words"),
        ui.navset_tab(
            ui.nav_panel(
                "This budget",
                ui.h3("The certified design"),
                ui.output_ui("design_matrix"),
                ui.output_ui("certificate"),
                ui.output_ui("variance"),
                ui.output_ui("truthful"),
                ui.h3("Textbook designs at this budget"),
                ui.output_ui("closed_forms"),
                ui.h3("Accuracy over budgets"),
                ui.output_ui("curve_plot"),
                value="this_budget",
            ),
            ui.nav_panel(
                "Worst case",
                ui.h3("How much can one answer reveal?"),
                ui.output_ui("audit_text"),
                ui.h3("The least and the most chance of each set of answers"),
                ui.p("Whatever a set answer is taken to mean, each true answer gives each set of answers at least the "
                     "first chance and at most the second.", {"class": "studio-note"}),
                ui.output_ui("credal_table"),
                ui.h3("How well could anyone tell two true answers apart?"),
                ui.output_ui("tradeoff_pair"),
                ui.output_ui("tradeoff_plot"),
                value="worst_case",
            ),
            id="budget_tabs",
        ),
        value="budget",
    )


def textbook_designs(problem: Any, eps: float) -> list[tuple[str, float, float]]:
    """(name, truthful chance, mean variance per respondent at the prior) of the textbook designs at ``eps``:
    Warner's and the don't-know design of :func:`designer.closed_forms.gwrr_sldp` for two true answers, k-ary
    randomized response for any number."""
    from .._internal.numeric import rr_probabilities
    from ..closed_forms import gwrr_sldp, krr_variance, warner_variance
    from ..exceptions import DesignerError

    rows = []
    prior = np.asarray(problem.prior, dtype=float)
    if problem.k == 2:
        p = rr_probabilities(eps, 1)[0]
        rows.append(("Warner", p, warner_variance(p, float(prior[0]))))
        c = 1.0 - (problem.dont_know or 0.0)
        try:
            pg, qg = gwrr_sldp(eps, c)
            rows.append((f"With don't know ({fmt(1 - c, 6)})", pg, _gwrr_variance(pg, qg, float(prior[0]))))
        except DesignerError:
            pass
    p = rr_probabilities(eps, problem.k - 1)[0]
    rows.append((f"{problem.k}-ary randomized response", p, krr_variance(eps, problem.k, prior=prior)))
    return rows


def _gwrr_variance(p: float, q: float, pi: float) -> float:
    """Per-respondent variance of the estimate of Q_2x3(p, q)'s share (Thm 3.10, n -> infinity)."""
    if p == q:
        return float("inf")
    return (-((pi - 0.5) ** 2) + 0.25 * ((p + q) / (p - q)) ** 2) / (p + q)


def budget_server(ctx: Ctx) -> None:
    lab, guard = ctx.lab, ctx.guard

    @render.ui
    def eps_words() -> Any:
        def show() -> Any:
            study = ctx.study()
            if study.epsilon is None:
                return None
            semantics = "wldp" if study.problem is not None and str(study.problem.semantics) == "wldp" else "sldp"
            parts = [ui.p(ui.HTML(f"{term('budget', 'b-eps', 'In plain words')}: "
                                  f"{html.escape(budget_words(study.epsilon, semantics))} The budget is counted in "
                                  f"{term('nats', 'b-nats')}."),
                          {"class": "studio-words", "id": "eps_words_text"})]
            warning = high_loss_warning(study.epsilon)
            if warning:
                parts.append(ui.p(warning, {"class": "studio-warning", "id": "high_loss", "role": "status"}))
            return ui.div(*parts)
        return guard(show, "the budget in words")

    @ctx.session.output(suspend_when_hidden=False)  # on the page from the start, whichever step is open
    @render.ui
    def design_matrix() -> Any:
        def show() -> Any:
            study = ctx.study()
            released = lab.released(study)
            if released.mechanism is None:
                return ui.div(ui.HTML(_compact(released.result)), note(_reason(lab, study)))
            if len(released.mechanism.focal) > 512:
                raise NotReadyError(f"{released.mechanism.k} x {len(released.mechanism.focal)} chances: too many to "
                                   "show; download the mechanism in step 4.")
            return ui.div(ui.HTML(matrix_table(released.mechanism, released, "matrix_scroll")),
                          *design_notes(released))
        return guard(show, "the design")

    @ctx.session.output(suspend_when_hidden=False)
    @render.ui
    def certificate() -> Any:
        def show() -> Any:
            released = lab.released(ctx.study())
            if released.certificate is not None:
                parts = [ui.p(ui.HTML(with_terms(certificate_words(released.certificate), "cert")),
                              id="certificate_text")]
                gap = getattr(released.result, "optimality_gap", None)
                if str(released.result.status) == "local" and gap is not None:
                    parts.append(note(f"designer proved this design within {gap * 100:.2g}% of the best possible "
                                      "at this budget, but not the best."))
                return ui.div(*parts)
            if released.loaded is not None and released.loaded.release is not None:
                return ui.p(f"The file states its release (epsilon {released.epsilon:g}); designer checked it exactly "
                            "when it read the file.", id="certificate_text")
            return note("The file states no release (budget and certificate): designer cannot vouch for it.")
        return guard(show, "the certificate", owner=False)

    @ctx.session.output(suspend_when_hidden=False)
    @render.ui
    def variance() -> Any:
        def show() -> Any:
            study = ctx.study()
            ident = lab.identification(study)
            rows = "".join(f'<tr><th scope="row">{html.escape(x)}</th><td>{_number(v)}</td></tr>'
                           for x, v in zip(ident.inputs, ident.share_variances))
            table = ('<table class="table table-sm" id="share_variances"><caption>Variance of each share\'s '
                     'estimate, per respondent (divide by the number of respondents)</caption><thead><tr>'
                     f'<th scope="col">share of</th><th scope="col">variance</th></tr></thead><tbody>{rows}'
                     "</tbody></table>")
            head = ui.HTML(f'<p id="variance_text">{term("variance", "b-var", "Mean variance of the estimated shares")}'
                           f', {term("per respondent", "b-per")}: '
                           f"<strong>{_number(ident.mean_variance)}</strong></p>")
            if not ident.per_share:
                return head
            return ui.div(head, ui.HTML(scroll_table(table, "Variance of each share", "variance_scroll")))
        return guard(show, "the variance", owner=False)

    @ctx.session.output(suspend_when_hidden=False)
    @render.ui
    def truthful() -> Any:
        def show() -> Any:
            study = ctx.study()
            released = lab.listed(study)
            mech = released.mechanism
            prior = np.asarray(released.prior, dtype=float)
            share = sum(prior[i] * mech.row(x).get((x,), 0.0) for i, x in enumerate(mech.inputs))
            return ui.p(f"{NAMES['truthful'].capitalize()}: {fmt(share, 8)}", id="truthful_text")
        return guard(show, "the truthful share", owner=False)

    @render.ui
    def closed_forms() -> Any:
        def show() -> Any:
            study = ctx.study()
            if study.problem is None or study.epsilon is None:
                raise NotReadyError("A loaded mechanism has no question to compare with." if study.loaded else "")
            rows = textbook_designs(study.problem, study.epsilon)
            body = "".join(f'<tr><th scope="row">{html.escape(n)}</th><td>{fmt(p, 8)}</td><td>{_number(v)}</td></tr>'
                           for n, p, v in rows)
            table = ('<table class="table table-sm" id="closed_forms_table"><caption>Textbook designs at this budget'
                     f'</caption><thead><tr><th scope="col">design</th><th scope="col">{NAMES["truthful"]}</th>'
                     f'<th scope="col">{NAMES["mean_variance"]}</th></tr></thead><tbody>{body}</tbody></table>')
            return ui.HTML(scroll_table(table, "Textbook designs", "closed_forms_scroll"))
        return guard(show, "the textbook designs")

    @render.ui
    def curve_plot() -> Any:
        def show() -> Any:
            study = ctx.study()
            if study.problem is None:
                raise NotReadyError("A loaded mechanism is drawn at its own budget only." if study.loaded else "")
            points, complete = lab.curve(study)
            if not complete:  # the rest of the curve in a moment: the page stays free for the slider meanwhile
                reactive.invalidate_later(0.05)
            names = [name for name, *_ in textbook_designs(study.problem, 1.0)]
            refs = {name: [textbook_designs(study.problem, e)[i][2] for e in CURVE_GRID]
                    for i, name in enumerate(names)}
            mark = None
            try:
                mark = (study.epsilon, lab.design(study).variance)
            except Exception:
                pass
            drawing = [] if complete else [note(f"Drawing the curve: {len(points)} of {len(CURVE_GRID)} budgets so "
                                               "far.")]
            return ui.div(ui.HTML(curve_figure(points, mark, refs, CURVE_GRID, "the certified design")), *drawing)
        return guard(show, "the curve", owner=False)

    @render.ui
    def credal_table() -> Any:
        def show() -> Any:
            study = ctx.study()
            c = lab.credal(study)
            d = c.to_dict()
            frame = c.mechanism.frame
            events = [" or ".join(x for i, x in enumerate(frame) if m >> i & 1) for m in range(1, 1 << len(frame))]
            heads = "".join(f'<th scope="col">{html.escape(e)}</th>' for e in events)
            body = "".join(
                f'<tr><th scope="row">{html.escape(x)}</th>'
                + "".join(f"<td>{fmt(b, 6)} to {fmt(p, 6)}</td>" for b, p in zip(bel, pl)) + "</tr>"
                for x, bel, pl in zip(d["inputs"], d["bel"], d["pl"]))
            table = ('<table class="table table-sm"><caption>Least to most chance of each set of answers, per true '
                     f'answer</caption><thead><tr><th scope="col">true answer</th>{heads}</tr></thead>'
                     f"<tbody>{body}</tbody></table>")
            return ui.HTML(scroll_table(table, "Least and most chances", "credal_scroll"))
        return guard(show, "the worst case", owner=False)

    @render.ui
    def audit_text() -> Any:
        def show() -> Any:
            losses = lab.audit(ctx.study()).losses
            rows = []
            for name, how in (("shafer", "with set answers kept as given (SLDP)"),
                              ("walley", "however set answers are later made precise (WLDP)")):
                w = losses.get(name)
                if w is None:
                    continue
                how = how[0].upper() + how[1:]
                if w.x is None or not w.eps < float("inf"):
                    rows.append(ui.tags.li(f"{how}: one answer can rule out a true answer, so this reading is not "
                                           "private at any budget."))
                    continue
                event = " or ".join(w.event or ())
                rows.append(ui.tags.li(f"{how}: at most {odds_factor(w.eps)} times (the answer "
                                       f"{event!r} from a true {w.x} against a true {w.x2}; a budget of "
                                       f"{fmt(w.eps, 6)})."))
            return ui.div(ui.p("Checked for this design: how much more likely one answer can be under one true "
                               "answer than under another."), ui.tags.ul(*rows), id="audit_result")
        return guard(show, "the audit", owner=False)

    @render.ui
    def tradeoff_pair() -> Any:
        def show() -> Any:
            t = lab.tradeoff(ctx.study())
            i = min(range(len(t.rows)), key=lambda j: abs(t.rows[j][0] - 0.05))
            alpha, _, power, bound = t.rows[i]
            return ui.p(f"Telling a true {t.null} from a true {t.alt} from one answer: a test that wrongly says "
                        f"{t.alt} for {fmt(alpha * 100, 3)}% of true {t.null} finds at most {fmt(power * 100, 3)}% of "
                        f"true {t.alt} with this design; the budget allows at most {fmt((1 - bound) * 100, 3)}%.",
                        id="tradeoff_text")
        return guard(show, "the trade-off", owner=False)

    @render.ui
    def tradeoff_plot() -> Any:
        return guard(lambda: ui.HTML(tradeoff_figure(lab.tradeoff(ctx.study()))), "the trade-off figure",
                     owner=False)


def _number(v: float) -> str:
    return "infinite" if v == float("inf") else fmt(v, 8)


def _compact(result: Any) -> str:
    """A design kept in compact form: how much of each row goes to answer sets of each size."""
    compact = result.compact
    rows = "".join(f'<tr><th scope="row">{s + 1}</th><td>{fmt(compact.A[s], 8)}</td><td>{fmt(compact.B[s], 8)}'
                   "</td></tr>" for s in range(compact.k) if compact.A[s] > 0 or compact.B[s] > 0)
    table = ('<table class="table table-sm"><caption>Chance of answering a set of each size that holds the true '
             'answer, and one that does not</caption><thead><tr><th scope="col">answer sets of size</th>'
             '<th scope="col">with the true answer</th><th scope="col">without it</th></tr></thead>'
             f"<tbody>{rows}</tbody></table>")
    return scroll_table(table, "The design in compact form", "compact_scroll")


def _reason(lab: Any, study: Any) -> str:
    try:
        lab.listed(study)
    except NotReadyError as exc:
        return str(exc)
    return ""


def design_notes(released: Any) -> list[Any]:
    """Below the design: the columns as the respondent's page words them, and why "I don't know" is missing when
    the question allowed it and the best design does not use it."""
    from .figures import answer_labels

    mech = released.mechanism
    words = answer_labels(mech, released)
    out: list[Any] = []
    if any(w.startswith("one of:") for w in words):
        out.append(ui.p(ui.HTML("The columns are the answers exactly as the respondent's page reports them; "
                                + with_terms("an answer such as \"one of: a, b\" says only that the true answer is a "
                                             "or b (the randomizer picks it, not the respondent).", "m-oneof")),
                        {"class": "studio-note", "id": "matrix_words"}))
    problem = getattr(released.result, "problem", None)
    frame = tuple(mech.frame)
    if problem is None or len(frame) < 2 or any(set(s) == set(frame) for s in mech.focal_sets):
        return out
    whole = (1 << len(frame)) - 1  # the bitmask of the whole frame: "I don't know"
    allowed = problem.focal_sets is None or whole in problem.focal_sets
    if allowed or problem.dont_know is not None:
        out.append(note("\"I don't know\" is not among the answers: the best design at this budget does not use it. "
                        "In a design, \"I don't know\" is an answer the randomizer may report, not the place where "
                        "people who do not know their answer are recorded; ask about those in the questionnaire."))
    return out
