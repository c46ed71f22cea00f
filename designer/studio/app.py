"""The studio's Shiny application: a guided path of five steps (Next/Back, a progress line), one state per
session (:class:`~designer.studio.session.Study`, built from the page's fields) and one lab computing from it."""

from __future__ import annotations

import math
import re
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from shiny import App, reactive, render, ui
from shiny.types import SilentException

from ..exceptions import DesignerError, FieldError
from .answers_page import answers_server, answers_ui
from .assets import CSS, SCRIPT
from .budget_page import budget_server, budget_ui
from .field_page import field_server, field_ui
from .fields import Form, apply_fields, fields_of, loaded_words, num, read_count, read_number, toml_text
from .question_page import (
    DEFAULT_PROBLEM,
    form_of,
    mechanism_fields,
    question_server,
    question_ui,
    read_mechanism,
    read_problem,
)
from .session import Lab
from .state import PlanAsk, Study, Upload, internal_error
from .survey_page import survey_server, survey_ui
from .widgets import Ctx, Guard, step_note

__all__ = ["STEPS", "make_app"]

#: The steps, in order: (value of the tab, name in the progress line).
STEPS = (("question", "the question"), ("budget", "the budget"), ("survey", "the survey"), ("field", "the field"),
         ("answers", "the answers"))
#: Fields whose messages the page shows (``FIELD_msg`` below each one).
FIELDS = ("title", "inputs", "answers", "dont_know", "prior", "semantics", "objective", "epsilon", "target_width",
          "level", "plan_n", "detect", "power", "alpha", "preview_seed", "split_with", "split_total", "answers_file",
          "answer_column", "estimate_level", "truth_file", "truth_column")


def initial(file: str | None) -> tuple[dict[str, Any], str, Any]:
    """The problem dictionary the studio starts from, the note saying so, and a loaded mechanism (or None)."""
    import os

    if file is None:
        return dict(DEFAULT_PROBLEM), ("A new question with the defaults: the most accurate shares on average, no "
                                       "\"don't know\" share, equal expected shares. Type your own, or start from a "
                                       "bundled question or a file."), None
    shown = os.path.basename(file)
    if file.lower().endswith(".toml"):
        data = read_problem(file, shown)
        return data, loaded_words(data, shown), None
    loaded = read_mechanism(Upload.of(file, shown))
    data = mechanism_fields(loaded.mechanism)
    if loaded.release is not None:
        data["epsilon"] = float(loaded.release.epsilon)
    return data, (f"Loaded the mechanism {shown}: the next steps use it as it is (editing the question or the "
                  "budget designs a new one)."), loaded


def page(data: dict[str, Any]) -> Any:
    eps = num(float(data.get("epsilon", 1.0)))
    return ui.page_fluid(
        ui.head_content(ui.tags.link(rel="icon", type="image/svg+xml", href="favicon.ico"),
                        ui.tags.style(CSS), ui.tags.script(SCRIPT)),
        ui.h1("designer studio"),
        ui.p("Design a randomized-response question step by step: every number is certified or computed by "
             "designer, exactly as the command line computes it."),
        ui.output_ui("progress"),
        ui.output_ui("design_flag"),
        ui.navset_tab(question_ui(data), budget_ui(eps), survey_ui(), field_ui(), answers_ui(), id="steps"),
        ui.tags.nav({"class": "studio-steps", "aria-label": "Steps"},
                    ui.input_action_button("step_back", "Back", disabled=True),
                    ui.input_action_button("step_next", "Next: 2. the budget", class_="btn-primary")),
        title="designer studio",
        lang="en",
    )


def _decimal(input: Any) -> str:
    try:
        mark = input.client_decimal()
    except Exception:  # not reported yet (the first render)
        return "."
    return "," if mark == "," else "."


def _problem_field(message: str) -> str:
    """The field a problem's refusal belongs to, from the key it names."""
    key = re.search(r"key '([\w.]+)'", message)
    name = key.group(1) if key else ""
    for pattern, field in (("prior", "prior"), ("dont_know", "dont_know"), ("focal_sets", "answers"),
                           ("lie_max", "answers"), ("inputs", "inputs"), ("frame", "inputs"), ("epsilon", "epsilon"),
                           ("semantics", "semantics"), ("objective", "objective")):
        if pattern in name or (not name and pattern in message):
            return field
    return "question"


def build_study(ctx: Ctx) -> Study:
    """The session's state from the page's fields, read in the user's locale; each field's problem recorded
    against it."""
    input, values = ctx.input, ctx.values
    decimal = _decimal(input)
    q = values["question"].get()
    base, loaded = q["base"], q["loaded"]
    errors: dict[str, str] = {}
    form = form_of(input)
    pushed: Form | None = values.get("pushed")
    if pushed is not None:
        if values.get("pushed_live_inputs"):  # a new question: the true answers are the ones being typed
            pushed = replace(pushed, inputs=form.inputs)
        if form == pushed:
            values["pushed"] = None
        else:
            form = pushed
    eps_text = input.epsilon()
    if values.get("pushed_eps") is not None:
        if eps_text.strip() == values["pushed_eps"]:
            values["pushed_eps"] = None
        else:
            eps_text = values["pushed_eps"]
    epsilon = None
    try:
        epsilon = _budget(eps_text, decimal)
    except FieldError as exc:
        errors[exc.field] = str(exc)
    data = problem = None
    text = ""
    use_loaded = None
    if loaded is not None and form == fields_of(base) and (
            epsilon is None or loaded.release is None or epsilon == float(loaded.release.epsilon)):
        use_loaded = loaded
    else:
        try:
            data = apply_fields(base, form, decimal=decimal)
            data["epsilon"] = float(epsilon if epsilon is not None else data.get("epsilon", 1.0))
            text = toml_text(data)
            from ..optimal.problem_toml import parse_problem

            problem = parse_problem(data)
        except FieldError as exc:
            errors[exc.field] = str(exc)
            data = None
        except DesignerError as exc:
            message = ctx.lab.clean(exc)
            errors[_problem_field(message)] = message
            data = None
    plan = PlanAsk(
        width=_read(errors, lambda: read_number(input.target_width(), "target_width", "Half-width", decimal=decimal,
                                                low=0, high=0.5)),
        level=_read(errors, lambda: read_number(input.level(), "level", "Confidence level", decimal=decimal, low=0,
                                                high=1)),
        n=_read(errors, lambda: read_count(input.plan_n(), "plan_n", "Respondents", decimal=decimal)),
        detect=_read(errors, lambda: read_number(input.detect(), "detect", "Difference to detect", decimal=decimal,
                                                 low=0, high=1)),
        power=_read(errors, lambda: read_number(input.power(), "power", "Power", decimal=decimal, low=0, high=1)),
        alpha=_read(errors, lambda: read_number(input.alpha(), "alpha", "Test level", decimal=decimal, low=0,
                                                high=0.5)),
        seed=_read(errors, lambda: read_count(input.preview_seed(), "preview_seed", "Seed", decimal=decimal, low=0,
                                              high=2**32 - 1)),
    )
    split_total = _read(errors, lambda: _budget(input.split_total(), decimal, "split_total",
                                                "Budget of the questionnaire"))
    level = _read(errors, lambda: read_number(input.estimate_level(), "estimate_level", "Confidence level",
                                              decimal=decimal, low=0, high=1))
    return Study(data=data, problem_text=text, problem=problem, loaded=use_loaded, epsilon=epsilon, errors=errors,
                 plan=plan, split_with=tuple(input.split_with() or ()), split_total=split_total,
                 split_run=values["split"].get() or 0, device=values["device"].get(),
                 page_question=(input.page_question() or "").strip() or "Your answer",
                 answers=values["answers"].get(), answer_column=(input.answer_column() or "").strip() or "response",
                 estimate_level=level, truth=values["truth"].get(),
                 truth_column=(input.truth_column() or "").strip() or "answer", generation=q["generation"])


def _read(errors: dict[str, str], compute: Callable[[], Any]) -> Any:
    try:
        return compute()
    except FieldError as exc:
        errors[exc.field] = str(exc)
        return None


def _budget(text: Any, decimal: str, field: str = "epsilon", what: str = "Budget") -> float:
    """A budget as typed: a number in the locale, then the library's one rule (a finite number > 0)."""
    from ..budget import check_budget

    value = read_number(text, field, what, decimal=decimal)
    try:
        return check_budget(value, what)
    except DesignerError:
        raise FieldError(field, f"{what}: type a number above 0 (in nats), e.g. 1; not {str(text).strip()}") from None


def make_app(file: str | None) -> App:
    """The studio as a Shiny :class:`~shiny.App`, starting from ``file`` (a problem TOML or mechanism file).

    Raises
    ------
    DesignerError
        When ``file`` cannot be read (the message names it).
    """
    data, first_note, first_loaded = initial(file)

    def server(input: Any, output: Any, session: Any) -> None:
        workdir = tempfile.mkdtemp(prefix="designer-studio-")
        session.on_ended(lambda: shutil.rmtree(workdir, ignore_errors=True))
        lab = Lab(workdir)
        guard = Guard(lab)
        values: dict[str, Any] = {
            "question": reactive.Value({"base": data, "loaded": first_loaded, "note": first_note, "generation": 0}),
            "answers": reactive.Value(None), "truth": reactive.Value(None), "device": reactive.Value(None),
            "split": reactive.Value(None), "released": reactive.Value(0), "load_error": reactive.Value(""),
            "pushed": None, "pushed_eps": None, "pushed_live_inputs": False,
        }
        ctx = Ctx(input, session, lambda: None, lab, guard, values)

        @reactive.calc
        def study() -> Study:
            try:
                return build_study(ctx)
            except SilentException:
                raise
            except Exception as exc:  # never a traceback: one line in the log, the page says it once
                q = values["question"].get()
                return Study(None, "", None, None, None, {"question": internal_error(exc, "reading the page")},
                             generation=q["generation"])

        ctx.study = study
        _serve_frame(ctx, output)
        question_server(ctx)
        budget_server(ctx)
        survey_server(ctx)
        field_server(ctx)
        answers_server(ctx)

    return App(page(data), server)


def _serve_frame(ctx: Ctx, output: Any) -> None:
    """The parts around the steps: the progress line, the red flag, Next/Back and every field's message."""
    input, guard = ctx.input, ctx.guard
    names = [v for v, _ in STEPS]

    @output(suspend_when_hidden=False)
    @render.ui
    def progress() -> Any:
        step = input.steps() or "question"
        i = names.index(step) if step in names else 0
        return ui.div(
            {"class": "studio-progress-line"},
            ui.p(f"Step {i + 1} of {len(STEPS)}: {STEPS[i][1]}.", id="progress_text", role="status"),
            ui.div({"class": "studio-bar", "role": "progressbar", "aria-valuemin": "1",
                    "aria-valuemax": str(len(STEPS)), "aria-valuenow": str(i + 1),
                    "aria-label": "Progress through the five steps"},
                   ui.tags.span(style=f"width: {100 * (i + 1) / len(STEPS):.0f}%")))

    @reactive.effect
    def _labels() -> None:
        step = input.steps() or "question"
        i = names.index(step) if step in names else 0
        ui.update_action_button("step_back", label=f"Back: {i}. {STEPS[i - 1][1]}" if i else "Back",
                                disabled=i == 0, session=ctx.session)
        ui.update_action_button("step_next", label=f"Next: {i + 2}. {STEPS[i + 1][1]}" if i + 1 < len(STEPS)
                                else "Next", disabled=i + 1 == len(STEPS), session=ctx.session)

    async def move(by: int) -> None:
        step = input.steps() or "question"
        i = min(max((names.index(step) if step in names else 0) + by, 0), len(STEPS) - 1)
        ui.update_navset("steps", selected=names[i], session=ctx.session)
        await ctx.session.send_custom_message("studio_focus", {"id": f"step_{names[i]}_heading"})

    @reactive.effect
    @reactive.event(input.step_next)
    async def _next() -> None:
        await move(1)

    @reactive.effect
    @reactive.event(input.step_back)
    async def _back() -> None:
        await move(-1)

    @output(suspend_when_hidden=False)
    @render.ui
    def design_flag() -> Any:
        def show() -> Any:
            study = ctx.study()
            if study.design_key is None:
                return None
            ident = ctx.lab.identification(study)
            if ident.ok:
                return None
            parts: list[Any] = [ui.strong("This design cannot estimate every share. "), ident.words(), " ", ident.fix]
            if ident.fix_objective is not None and study.loaded is None:
                parts += [" ", ui.input_action_button("fix_objective", "Apply the fix", class_="btn-sm btn-danger")]
            return ui.div({"class": "studio-flag", "role": "alert", "id": "identification_flag"}, *parts)
        return guard(show, "the identification flag", owner=False)

    @reactive.effect
    @reactive.event(input.fix_objective)
    def _fix() -> None:
        try:
            study = ctx.study()
            ident = ctx.lab.identification(study)
        except Exception:
            return
        if ident.fix_objective is not None:
            ui.update_select("objective", selected=ident.fix_objective, session=ctx.session)

    @reactive.effect
    async def _slider() -> None:
        eps = ctx.study().epsilon
        if eps is not None and math.isfinite(eps):
            await ctx.session.send_custom_message("studio_eps", {"value": eps})

    for field in FIELDS:
        _field_message(ctx, output, field)
    for step in names[1:]:
        _step_note(ctx, output, step)


def _step_note(ctx: Ctx, output: Any, step: str) -> None:
    @output(id=f"step_note_{step}")
    @render.ui
    def _note() -> Any:
        return ctx.guard(lambda: step_note(ctx.lab, ctx.study(), step), f"the note of step {step}")


def _field_message(ctx: Ctx, output: Any, field: str) -> None:
    @output(id=f"{field}_msg", suspend_when_hidden=False)
    @render.ui
    def _message() -> Any:
        try:
            study = ctx.study()
            text = study.errors.get(field)
            for derived in ctx.values.get("derived", []):
                text = text or derived(field)
        except Exception as exc:
            text = internal_error(exc, f"the message of {field}")
        return ui.p(text, {"class": "studio-error", "role": "alert"}) if text else None
