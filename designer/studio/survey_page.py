"""Step 3 of the studio, the survey: respondents for a target half-width or a test, the half-width with a given
number, and a questionnaire's budget split across questions (:func:`designer.plan`)."""

from __future__ import annotations

import html
from typing import Any

from shiny import reactive, render, ui

from .._internal.render import fmt
from ..exceptions import NotReadyError
from .figures import BLUE, RED, estimate_figure, legend, scroll_table
from .phrases import NAMES, with_terms
from .question_page import bundled_choices
from .widgets import Ctx, message, number_box

__all__ = ["survey_server", "survey_ui"]

#: How a plan's variance is computed, in words (the plan's ``accuracy.formula``).
FORMULA_WORDS = {
    "warner": "the exact variance of this design's estimate",
    "thm_3_10": "the exact variance of this design's estimate",
    "asymptotic": "the large-sample variance of the estimate",
}


def survey_ui() -> Any:
    return ui.nav_panel(
        "3. The survey",
        ui.h2("The survey", id="step_survey_heading", tabindex="-1"),
        ui.output_ui("step_note_survey"),
        ui.p("How many respondents does the design at this budget need?"),
        ui.div(
            {"class": "studio-row"},
            ui.div(ui.h3("For a target interval"),
                   number_box("target_width", "Half-width of every share's interval (e.g. 0.05)", "0.05"),
                   number_box("level", "Confidence level", "0.95"),
                   ui.output_ui("plan_width_result")),
            ui.div(ui.h3("With a given number"),
                   number_box("plan_n", "Respondents", "1000"),
                   ui.output_ui("plan_n_result")),
            ui.div(ui.h3("For a test"),
                   number_box("detect", "Change in the first share to detect", "0.1"),
                   number_box("power", "Power", "0.8"),
                   number_box("alpha", "Test level", "0.05"),
                   ui.output_ui("plan_power_result")),
        ),
        ui.h3("Preview: what a survey of the planned size would report"),
        ui.p("designer draws the planned number of true answers from the expected shares, randomizes each with the "
             "design and estimates the shares exactly as it will from the real answers. The same seed gives the same "
             "survey; another seed, another survey."),
        number_box("preview_seed", "Seed of the simulated survey", "1"),
        ui.output_ui("preview_result"),
        ui.h3("A questionnaire: one budget split across questions"),
        ui.input_selectize("split_with", "Questions asked with this one", bundled_choices(), multiple=True),
        message("split_with"),
        number_box("split_total", "Budget of the whole questionnaire (nats)", "2"),
        ui.input_action_button("split_run", "Split the budget"),
        ui.output_ui("split_result"),
        value="survey",
    )


def survey_server(ctx: Ctx) -> None:
    input, lab, guard = ctx.input, ctx.lab, ctx.guard

    @render.ui
    def plan_width_result() -> Any:
        def show() -> Any:
            study = ctx.study()
            plan = lab.plan_width(study)
            level = study.plan.level or 0
            return ui.div(
                ui.p(ui.strong(f"{plan.n:,} respondents", id="plan_width_n"),
                     f" give every share a {fmt(level * 100, 4)}% interval of half-width at most "
                     f"{fmt(study.plan.width or 0, 6)} (reached: {fmt(plan.achieved_width, 6)})."),
                _basis(plan))
        return guard(show, "the sample size", owner=True)

    @render.ui
    def plan_n_result() -> Any:
        def show() -> Any:
            study = ctx.study()
            w = lab.plan_n(study).width_at_n
            return ui.p(f"With {w.n:,} respondents every share's {fmt(w.level * 100, 4)}% interval has half-width ",
                        ui.strong(fmt(w.width, 6), id="plan_n_width"), ".")
        return guard(show, "the half-width")

    @render.ui
    def plan_power_result() -> Any:
        def show() -> Any:
            study = ctx.study()
            plan = lab.plan_power(study)
            ask = study.plan
            return ui.p(ui.strong(f"{plan.n:,} respondents", id="plan_power_n"),
                        f" detect a change of {fmt(ask.detect or 0, 4)} in the share of {plan.share} (from "
                        f"{fmt(plan.null, 4)}) with power {fmt(ask.power or 0, 4)} at test level "
                        f"{fmt(ask.alpha or 0, 4)}.")
        return guard(show, "the power")

    @render.ui
    def preview_result() -> Any:
        def show() -> Any:
            study = ctx.study()
            p = lab.preview(study)
            return ui.HTML(preview_html(p, "preview"))
        return guard(show, "the preview", owner=False)

    @reactive.effect
    @reactive.event(input.split_run)
    def _split() -> None:
        ctx.values["split"].set(input.split_run())

    @render.ui
    def split_result() -> Any:
        def show() -> Any:
            study = ctx.study()
            d = lab.split(study).to_dict()
            rows = "".join(f'<tr><th scope="row">{html.escape(q["question"])}</th><td>{fmt(q["epsilon"], 6)}</td>'
                           f'<td>{fmt(q["variance"], 6)}</td><td>{fmt(q["equal_split_variance"], 6)}</td></tr>'
                           for q in d["allocation"])
            table = ('<table class="table table-sm" id="split_table"><caption>Budget per question (nats) and the '
                     f'{NAMES["mean_variance"]}, against an equal split</caption><thead><tr>'
                     '<th scope="col">question</th><th scope="col">budget</th><th scope="col">variance</th>'
                     f'<th scope="col">with an equal split</th></tr></thead><tbody>{rows}</tbody></table>')
            return ui.div(ui.HTML(scroll_table(table, "The questionnaire's split", "split_scroll")),
                          ui.p(f"Sum of the variances: {fmt(d['total_variance'], 6)} (with an equal split: "
                               f"{fmt(d['equal_split_total_variance'], 6)})."))
        return guard(show, "the questionnaire's split")

    def split_message(field: str) -> str | None:
        if field != "split_with":
            return None
        try:
            lab.split(ctx.study())
        except NotReadyError:
            return None
        except Exception as exc:
            return str(exc) if getattr(exc, "field", None) == "split_with" else None
        return None

    ctx.values.setdefault("derived", []).append(split_message)


def _basis(plan: Any) -> Any:
    """Which variance the plan used, in words."""
    formula = getattr(getattr(plan, "accuracy", None), "formula", None)
    value = getattr(formula, "value", str(formula))
    words = FORMULA_WORDS.get(value)
    if words is None:
        return None
    largest = max(plan.accuracy.per_share)
    share = plan.accuracy.mechanism.inputs[list(plan.accuracy.per_share).index(largest)]
    return ui.p(ui.HTML(with_terms(f"The plan uses {words}. {NAMES['largest_variance'].capitalize()}: "
                                   f"{fmt(largest, 8)} (the share of {share}).", "s-basis")), {"class": "studio-note"})


def preview_html(p: Any, uid: str) -> str:
    """The simulated survey as the page and the report show it: a sentence, a table and a figure."""
    level = p.fit.level
    rows = p.rows()
    covered = p.covered()
    body = "".join(
        f'<tr><th scope="row">{html.escape(x)}</th><td>{fmt(e, 8)}</td><td>{fmt(d, 8)}</td>'
        + ("<td></td>" if est is None else f"<td>{fmt(est, 8)}</td>")
        + f"<td>{'' if lo is None else fmt(lo, 8)}</td><td>{'' if hi is None else fmt(hi, 8)}</td>"
        + f"<td>{'yes' if c else 'no'}</td></tr>"
        for (x, est, lo, hi), e, d, c in zip(rows, p.expected, p.drawn, covered))
    table = ('<table class="table table-sm"><caption>A simulated survey: expected and drawn shares, the estimates '
             f'and their {fmt(level * 100, 4)}% intervals</caption><thead><tr><th scope="col">true answer</th>'
             '<th scope="col">expected share</th><th scope="col">share among the drawn</th>'
             '<th scope="col">estimated share</th><th scope="col">interval from</th><th scope="col">to</th>'
             '<th scope="col">interval holds the expected share</th></tr></thead>'
             f"<tbody>{body}</tbody></table>")
    held = sum(covered)
    words = (f'<p id="{uid}_text">A simulated survey of <strong>{p.n:,}</strong> respondents (seed {p.seed}): '
             f"{held} of {len(covered)} intervals hold the expected share. A real survey of this size gives "
             "estimates this close, give or take; each interval misses its share in about "
             f"{fmt((1 - level) * 100, 4)}% of surveys.</p>")
    figure = estimate_figure(rows, level, expected=[float(v) for v in p.expected], uid=uid)
    key = legend([("estimated share (dot) and its interval", BLUE, ""), ("expected share", RED, "")])
    return words + scroll_table(table, "The simulated survey", f"{uid}_scroll") + figure + key
