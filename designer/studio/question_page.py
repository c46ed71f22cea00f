"""Step 1 of the studio, the question: the true answers, the answers a respondent may give, the expected shares,
how set answers are read and what the design favours; or a bundled problem, a problem file or a mechanism file."""

from __future__ import annotations

import os
from typing import Any

from shiny import reactive, render, ui

from ..exceptions import DesignerError
from .fields import Form, carried, fields_of, fresh_question, loaded_words
from .phrases import OBJECTIVE_CHOICES, SEMANTICS_WORDS, objective_words, term
from .state import Loaded, Upload
from .widgets import Ctx, field_box, file_box, message, note, text_area

__all__ = ["DEFAULT_PROBLEM", "bundled_choices", "mechanism_fields", "objective_choices", "question_server",
           "question_ui", "read_mechanism", "read_problem"]


#: The question ``designer studio`` starts from without a file: yes/no, the most accurate shares on average, no
#: "don't know" share, no expected shares, no title (the user gives it one).
DEFAULT_PROBLEM = fresh_question(["yes", "no"])


def bundled_choices() -> dict[str, str]:
    """The problem files that come with designer (:func:`designer._internal.bundled.bundled`): path -> name."""
    from .._internal.bundled import bundled

    return {b.path: b.name for b in bundled("problem").values()}


def objective_choices(data: dict[str, Any]) -> dict[str, str]:
    """The objectives the form offers for a problem: those the library knows, in words; a scoring table's only
    when the problem has one."""
    from ..vocabulary import Objective

    known = {o.value for o in Objective}
    out = {}
    for value in OBJECTIVE_CHOICES:
        if value not in known:
            continue
        if value == "gain" and "gain" not in data:
            continue
        if value.endswith("_utility") and "utility" not in data:
            continue
        out[value] = objective_words(value).split(":")[0]
    current = str(data.get("objective", ""))
    if current and current not in out and current in known:
        out[current] = objective_words(current).split(":")[0]
    return out


def read_problem(path: str, shown: str) -> dict[str, Any]:
    """The TOML dictionary of a problem file, checked as ``designer`` checks it."""
    from ..optimal.problem_toml import parse_problem, read_toml

    try:
        data = read_toml(path)
        parse_problem(data, source=shown)
    except DesignerError as exc:
        raise DesignerError(" ".join(str(exc).replace(path, shown).split())) from None
    return data


def read_mechanism(upload: Upload) -> Loaded:
    """A mechanism file (CSV or JSON), checked against the release it states."""
    from ..release.files import open_mechanism_file

    try:
        file = open_mechanism_file(upload.path)
    except (DesignerError, OSError) as exc:
        raise DesignerError(f"{upload.name}: {' '.join(str(exc).replace(upload.path, upload.name).split())}") from None
    return Loaded(upload, file.mechanism, file.release, dict(file.words or {}))


def mechanism_fields(mech: Any) -> dict[str, Any]:
    """A problem dictionary describing a loaded mechanism (its inputs and answer sets)."""
    data: dict[str, Any] = {"name": "mechanism", "inputs": list(mech.inputs), "epsilon": 1.0}
    if list(mech.frame) != list(mech.inputs):
        data["frame"] = list(mech.frame)
    focal = [list(s) for s in mech.focal_sets]
    if focal:
        data["structure"] = {"focal_sets": focal}
    return data


def question_ui(data: dict[str, Any]) -> Any:
    f = fields_of(data)
    semantics_help = ui.HTML(
        f"<p class=\"studio-note\" id=\"semantics_help\">{term('SLDP', 'q-sldp')}: the analyst keeps a set answer "
        "such as \"don't know\" as it was given. "
        f"{term('WLDP', 'q-wldp')}: someone later turns a set answer into one precise answer (an interviewer, a "
        "coding rule); privacy must then hold however they do it, which costs more. Choose SLDP when the "
        "questionnaire keeps set answers and the analysis uses them.</p>")
    return ui.nav_panel(
        "1. The question",
        ui.h2("The question", id="step_question_heading", tabindex="-1"),
        ui.p("Who answers what? Start from a bundled question or your own file, or write the question here."),
        ui.div(
            {"class": "studio-row"},
            ui.input_select("bundled", "Start from a bundled question", {"": "(keep the current question)",
                                                                          **bundled_choices()}),
            file_box("problem_file", "Or load a problem file (.toml) or a mechanism file (.json, .csv)",
                     [".toml", ".json", ".csv"]),
        ),
        ui.output_ui("loaded_note"),
        field_box("title", "Title of the question (names the report and the downloads' comments)", f.title,
                  placeholder="e.g. smoking at work"),
        field_box("inputs", "True answers, separated by commas", f.inputs),
        text_area("answers", "Answers a respondent may give, one per line; a line such as \"yes | no\" is a set "
                  "answer (\"don't know\", \"one of these\"); blank: any answer or set", f.answers, rows=4),
        field_box("dont_know", "Share of respondents told to answer \"don't know\" (blank: the design decides)",
                  f.dont_know),
        ui.input_checkbox("prior_unknown", "The true shares are unknown (design for equal shares)", f.prior_unknown),
        field_box("prior", "Expected true shares, in the order of the true answers (e.g. 0.3, 0.7)", f.prior),
        ui.input_radio_buttons("semantics", "How set answers are read", SEMANTICS_WORDS, selected=f.semantics),
        message("semantics"),
        semantics_help,
        ui.input_select("objective", "What the design should favour", objective_choices(data), selected=f.objective),
        message("objective"),
        ui.output_ui("objective_note"),
        ui.output_ui("question_status"),
        value="question",
    )


def push_fields(ctx: Ctx, data: dict[str, Any], *, keep_inputs: bool = False) -> None:
    """Fill the form from ``data``; until the browser reports the new values, the form is read as ``data``.
    With ``keep_inputs`` the true answers are left as the user is typing them (a new question)."""
    f = fields_of(data)
    session = ctx.session
    ctx.values["pushed"] = f
    ctx.values["pushed_live_inputs"] = keep_inputs
    if not keep_inputs:
        ui.update_text("inputs", value=f.inputs, session=session)
    ui.update_text("title", value=f.title, session=session)
    ui.update_text_area("answers", value=f.answers, session=session)
    ui.update_text("dont_know", value=f.dont_know, session=session)
    ui.update_text("prior", value=f.prior, session=session)
    ui.update_checkbox("prior_unknown", value=f.prior_unknown, session=session)
    ui.update_radio_buttons("semantics", selected=f.semantics, session=session)
    ui.update_select("objective", choices=objective_choices(data), selected=f.objective, session=session)


def question_server(ctx: Ctx) -> None:
    """Serve step 1: loading a question starts a new generation (uploads and results of the old one are gone)."""
    input, guard = ctx.input, ctx.guard
    question = ctx.values["question"]

    def start(data: dict[str, Any], loaded: Loaded | None, words: str, eps: float | None,
              keep_inputs: bool = False) -> None:
        old = question.get()
        question.set({"base": data, "loaded": loaded, "note": words, "generation": old["generation"] + 1})
        push_fields(ctx, data, keep_inputs=keep_inputs)
        if eps is not None:
            from .fields import num

            ctx.values["pushed_eps"] = num(eps)
            ui.update_text("epsilon", value=num(eps), session=ctx.session)
        for key in ("answers", "truth", "device", "split"):
            ctx.values[key].set(None)

    def load(path: str, shown: str) -> None:
        if path.lower().endswith(".toml"):
            data = read_problem(path, shown)
            start(data, None, loaded_words(data, shown), float(data["epsilon"]) if "epsilon" in data else None)
            return
        loaded = read_mechanism(Upload.of(path, shown))
        eps = float(loaded.release.epsilon) if loaded.release is not None else None
        start(mechanism_fields(loaded.mechanism), loaded,
              f"Loaded the mechanism {shown}: the next steps use it as it is (editing the question or the budget "
              "designs a new one).", eps)

    @reactive.effect
    @reactive.event(input.inputs, ignore_init=True)
    def _new_question() -> None:
        """True answers typed anew start a fresh question: what the loaded one carried is cleared, and said."""
        with reactive.isolate():
            q = question.get()
        base = q["base"]
        labels = [x.strip() for x in str(input.inputs()).split(",") if x.strip()]
        if len(labels) < 2 or labels == list(base["inputs"]) or ctx.values.get("pushed") is not None:
            return
        gone = carried(base, labels)
        if not gone and q["loaded"] is None:
            return
        was = base.get("name") or ("the loaded mechanism" if q["loaded"] is not None else "the question")
        words = (f"A new question: it starts from the defaults. Cleared from {was}: " + "; ".join(gone) + "."
                 if gone else "A new question: it starts from the defaults.")
        start(fresh_question(labels, str(input.semantics() or "sldp")), None, words, None, keep_inputs=True)
        ui.update_select("bundled", selected="", session=ctx.session)

    @reactive.effect
    @reactive.event(input.prior, ignore_init=True)
    def _prior_typed() -> None:
        """Expected shares typed in: they are known (the box "unknown" is unticked)."""
        if str(input.prior() or "").strip() and input.prior_unknown() and ctx.values.get("pushed") is None:
            ui.update_checkbox("prior_unknown", value=False, session=ctx.session)

    def refuse(text: str) -> None:
        ctx.values["load_error"].set(text)

    @reactive.effect
    @reactive.event(input.bundled, ignore_init=True)
    def _bundled() -> None:
        path = input.bundled()
        if not path:
            return
        ctx.values["load_error"].set("")
        try:
            load(path, os.path.basename(path))
        except DesignerError as exc:
            refuse(ctx.lab.clean(exc))
        except Exception as exc:
            from .state import internal_error

            refuse(internal_error(exc, "loading a bundled question"))

    @reactive.effect
    @reactive.event(input.problem_file)
    def _upload() -> None:
        files = input.problem_file()
        if not files:
            return
        ctx.values["load_error"].set("")
        try:
            load(files[0]["datapath"], os.path.basename(files[0]["name"]))
        except DesignerError as exc:
            refuse(ctx.lab.clean(exc))
        except Exception as exc:
            from .state import internal_error

            refuse(internal_error(exc, "loading a file"))

    @render.ui
    def problem_file_msg() -> Any:
        text = ctx.values["load_error"].get()
        return ui.p(text, {"class": "studio-error", "role": "alert"}) if text else None

    @render.ui
    def loaded_note() -> Any:
        q = question.get()
        return ui.p(q["note"], {"class": "studio-note", "role": "status", "data-generation": str(q["generation"])})

    @render.ui
    def objective_note() -> Any:
        value = input.objective()
        return note(objective_words(value)) if value else None

    @render.ui
    def question_status() -> Any:
        def show() -> Any:
            study = ctx.study()
            if study.loaded is not None:
                return note("The loaded mechanism is used as it is.")
            if study.problem is None:
                general = study.errors.get("question")
                return (ui.p(general, {"class": "studio-error", "role": "alert"}) if general
                        else note("Fix the marked field to go on."))
            p = study.problem
            sets = len((study.data or {}).get("structure", {}).get("focal_sets") or ()) or None
            answers = f"{sets} answers a respondent may give" if sets else "any answer or set of answers"
            return ui.p(f"Ready to design: {p.k} true answers, {answers}.", {"class": "studio-ok"})
        return guard(show, "the question's status")


def form_of(input: Any) -> Form:
    """The question's fields as the page holds them."""
    return Form(inputs=input.inputs(), answers=input.answers(), dont_know=input.dont_know(), prior=input.prior(),
                prior_unknown=bool(input.prior_unknown()), semantics=input.semantics(), objective=input.objective(),
                title=input.title())

