"""Step 3 of the studio, the survey: respondents for a target width or power, the width at a given n, and a
questionnaire's budget split across questions."""

from __future__ import annotations

from typing import Any

import numpy as np
from shiny import reactive, render, ui

from .._internal.render import fmt
from .backend import StudioError
from .question_page import bundled_choices

__all__ = ["survey_server", "survey_ui"]


def survey_ui() -> Any:
    return ui.nav_panel(
        "3. The survey",
        ui.h2("The survey"),
        ui.p("How many respondents does the design at this budget need?"),
        ui.div(
            {"class": "studio-row"},
            ui.div(ui.h3("For a target interval"),
                   ui.input_numeric("target_width", "Half-width of every share's interval", 0.05, min=0.001,
                                    max=0.5, step=0.005),
                   ui.input_numeric("level", "Confidence level", 0.95, min=0.5, max=0.999, step=0.01),
                   ui.output_ui("plan_width_result")),
            ui.div(ui.h3("With a given number"),
                   ui.input_numeric("plan_n", "Respondents", 1000, min=1, step=100),
                   ui.output_ui("plan_n_result")),
            ui.div(ui.h3("For a test"),
                   ui.input_numeric("detect", "Difference in the first share to detect", 0.1, min=0.001, max=0.99,
                                    step=0.01),
                   ui.input_numeric("power", "Power", 0.8, min=0.05, max=0.999, step=0.05),
                   ui.input_numeric("alpha", "Test level", 0.05, min=0.001, max=0.5, step=0.01),
                   ui.output_ui("plan_power_result")),
        ),
        ui.h3("A questionnaire: one budget split across questions"),
        ui.input_selectize("split_with", "Questions asked with this one", bundled_choices(), multiple=True),
        ui.input_numeric("split_total", "Budget of the whole questionnaire (nats)", 2.0, min=0.05, step=0.1),
        ui.input_action_button("split_run", "Split the budget"),
        ui.output_ui("split_result"),
        value="survey",
    )


def _error(exc: Exception) -> Any:
    return ui.p(str(exc), {"class": "studio-error", "role": "alert"})


def _positive(value: Any, what: str, high: float | None = None) -> float:
    if not isinstance(value, (int, float)) or not value > 0 or (high is not None and not value < high):
        bound = f" and below {high:g}" if high is not None else ""
        raise StudioError(f"{what}: type a number above 0{bound}")
    return float(value)


def survey_server(input: Any, output: Any, session: Any, state: Any, problem: Any, current: Any,
                  mechanism_path: Any) -> None:
    backend = state.backend

    @reactive.calc
    def basis() -> tuple[str, str, str]:
        """The mechanism file, its semantics and the prior at which to plan (the problem's, else equal)."""
        c = current()
        path = mechanism_path()
        result = problem()
        if result is not None:
            p = result[1]
            prior, semantics = np.asarray(p.prior, dtype=float), str(p.semantics)
        else:
            prior = np.full(c.mechanism.k, 1.0 / c.mechanism.k)
            semantics = str(c.release.semantics) if c.release is not None else "sldp"
        semantics = "wldp" if semantics == "wldp" else "sldp"
        return path, semantics, ",".join(f"{x}={float(v)!r}" for x, v in zip(c.mechanism.inputs, prior))

    @render.ui
    def plan_width_result() -> Any:
        try:
            path, sem, prior = basis()
            width = _positive(input.target_width(), "half-width", 1.0)
            level = _positive(input.level(), "confidence level", 1.0)
            data = backend.plan_width(path, width, level, sem, prior)
        except StudioError as exc:
            return _error(exc)
        return ui.p(ui.strong(f"{data['n']} respondents"),
                    f" give every share a {fmt(level * 100, 4)}% interval of half-width at most {fmt(width, 6)} "
                    f"(reached: {fmt(data['achieved_width'], 6)}; {data['formula']}).",
                    id="plan_width_n")

    @render.ui
    def plan_n_result() -> Any:
        try:
            path, sem, prior = basis()
            n = input.plan_n()
            if not isinstance(n, (int, float)) or n < 1 or int(n) != n:
                raise StudioError("respondents: type a whole number of at least 1")
            level = _positive(input.level(), "confidence level", 1.0)
            data = backend.plan_at_n(path, int(n), level, sem, prior)
        except StudioError as exc:
            return _error(exc)
        w = data["width_at_n"]
        return ui.p(f"With {w['n']} respondents every share's {fmt(w['level'] * 100, 4)}% interval has half-width ",
                    ui.strong(fmt(w["width"], 6), id="plan_n_width"), ".")

    @render.ui
    def plan_power_result() -> Any:
        try:
            path, sem, prior = basis()
            detect = _positive(input.detect(), "difference", 1.0)
            power = _positive(input.power(), "power", 1.0)
            alpha = _positive(input.alpha(), "test level", 1.0)
            data = backend.plan_power(path, detect, power, alpha, sem, prior)
        except StudioError as exc:
            return _error(exc)
        return ui.p(ui.strong(f"{data['n']} respondents", id="plan_power_n"),
                    f" detect a change of {fmt(detect, 4)} in the share of {data['share']} "
                    f"(null {fmt(data['null'], 4)})"
                    f" with power {fmt(power, 4)} at level {fmt(alpha, 4)} ({data['formula']}).")

    @render.ui
    @reactive.event(input.split_run)
    def split_result() -> Any:
        try:
            result = problem()
            if result is None:
                raise StudioError("a loaded mechanism is not a question to split a budget over; load a problem")
            others = [backend.read_problem(p) for p in input.split_with()]
            if not others:
                raise StudioError("choose at least one more question to ask with this one")
            total = _positive(input.split_total(), "questionnaire budget")
            data = backend.plan_split([result[0], *others], total, str(result[1].semantics))
        except StudioError as exc:
            return _error(exc)
        rows = "".join(f"<tr><th scope=\"row\">{q['question']}</th><td>{fmt(q['epsilon'], 6)}</td>"
                       f"<td>{fmt(q['variance'], 6)}</td><td>{fmt(q['equal_split_variance'], 6)}</td></tr>"
                       for q in data["allocation"])
        return ui.HTML('<table class="table table-sm" id="split_table"><caption>Budget per question (nats) and '
                       'variance per respondent, against an equal split</caption><thead><tr>'
                       '<th scope="col">question</th><th scope="col">epsilon</th><th scope="col">variance</th>'
                       f'<th scope="col">equal split</th></tr></thead><tbody>{rows}</tbody></table>'
                       f"<p>total variance {fmt(data['total_variance'], 6)} (equal split "
                       f"{fmt(data['equal_split_total_variance'], 6)})</p>")
