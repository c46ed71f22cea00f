"""Step 1 of the studio, the question: inputs, answers, prior, semantics, or a bundled or uploaded file."""

from __future__ import annotations

import copy
import os
import shutil
from dataclasses import dataclass, field
from typing import Any

from shiny import reactive, render, ui

from .backend import BUNDLED, Backend, Current, StudioError, num

__all__ = ["DEFAULT_PROBLEM", "State", "fields_of", "question_server", "question_ui"]

DEFAULT_PROBLEM: dict[str, Any] = {"name": "question", "inputs": ["yes", "no"], "epsilon": 1.0,
                                   "semantics": "sldp", "objective": "truthful", "structure": {"dont_know": 0.2}}

SEMANTICS_WORDS = {
    "sldp": "SLDP: a set answer is kept as it is (\"don't know\" stays \"don't know\")",
    "wldp": "WLDP: a set answer may later be turned into one precise answer by someone else (stricter)",
    "both": "Both: private in either reading",
}
OBJECTIVE_WORDS = {
    "truthful": "truthful: most respondents report exactly their true answer",
    "chi2": "chi2: the most accurate estimate of the shares",
    "gain": "gain: your own scoring table (from the file)",
    "worst_case_utility": "worst-case utility (from the file's [utility] table)",
    "best_case_utility": "best-case utility (from the file's [utility] table)",
}
PLAIN_WORDS = (
    "Under SLDP the analyst stores a set answer such as \"don't know\" as it was given, and privacy compares the "
    "chances of giving each set. Under WLDP a set answer stands for a precise answer decided later (by the "
    "respondent, an interviewer or a coding rule nobody controls): privacy must then hold however the set is "
    "resolved, which costs more. Choose SLDP when the questionnaire keeps set answers and the analysis uses "
    "them; choose WLDP when they are turned into precise answers before anyone sees them."
)


@dataclass
class State:
    """What the steps share: the session's backend, the loaded problem (its TOML dictionary) or mechanism."""

    backend: Backend
    base: reactive.Value[dict[str, Any]]
    loaded: reactive.Value[Current | None]
    message: reactive.Value[str]
    pushed: dict[str, Any] = field(default_factory=dict)
    synced: bool = True


def bundled_choices() -> dict[str, str]:
    """The bundled problem files by name (empty outside a checkout)."""
    if not BUNDLED.is_dir():
        return {}
    return {str(p): p.stem for p in sorted(BUNDLED.glob("*.toml"))}


def _set_line(members: list[str]) -> str:
    return " | ".join(members)


def fields_of(data: dict[str, Any]) -> dict[str, Any]:
    """The question's form fields for a problem dictionary."""
    structure = data.get("structure", {})
    focal = structure.get("focal_sets")
    dk = structure.get("dont_know")
    prior = data.get("prior")
    return {
        "inputs": ", ".join(data["inputs"]),
        "answers": "\n".join(_set_line(list(s)) for s in focal) if focal else "",
        "dont_know": "" if dk is None else num(dk),
        "prior": "" if prior is None else ", ".join(num(v) for v in prior),
        "prior_unknown": prior is None,
        "semantics": str(data.get("semantics", "sldp")),
        "objective": str(data.get("objective", "truthful")),
    }


def _number(text: str, what: str) -> float:
    try:
        from fractions import Fraction

        return float(Fraction(text.strip()))
    except (ValueError, ZeroDivisionError):
        raise StudioError(f"{what}: expected a number such as 0.2 or 1/5, got {text.strip()!r}") from None


def apply_fields(base: dict[str, Any], values: dict[str, Any]) -> dict[str, Any]:
    """The problem dictionary of ``base`` with the form's ``values``; a field that cannot be read raises
    :class:`StudioError` naming it."""
    data = copy.deepcopy(base)
    inputs = [x.strip() for x in str(values["inputs"]).split(",") if x.strip()]
    if len(inputs) < 2:
        raise StudioError("inputs: give at least two true answers, separated by commas (yes, no)")
    if inputs != list(base["inputs"]):
        if list(base.get("frame", base["inputs"])) == list(base["inputs"]):
            data.pop("frame", None)
        for key in ("gain", "utility", "answers", "strata"):  # tables written for the old labels
            data.pop(key, None)
    data["inputs"] = inputs
    structure = dict(data.get("structure", {}))
    lines = [line for line in str(values["answers"]).splitlines() if line.strip()]
    if lines:
        structure["focal_sets"] = [[m.strip() for m in line.replace(",", "|").split("|") if m.strip()]
                                   for line in lines]
    else:
        structure.pop("focal_sets", None)
    if str(values["dont_know"]).strip():
        structure["dont_know"] = _number(values["dont_know"], "don't-know share")
    else:
        structure.pop("dont_know", None)
    if structure:
        data["structure"] = structure
    else:
        data.pop("structure", None)
    if values["prior_unknown"] or not str(values["prior"]).strip():
        data.pop("prior", None)
    else:
        data["prior"] = [_number(v, "prior") for v in str(values["prior"]).split(",")]
    for key, default in (("semantics", "sldp"), ("objective", "truthful")):
        if key in data or values[key] != default:
            data[key] = values[key]
    return data


def question_ui(data: dict[str, Any]) -> Any:
    f = fields_of(data)
    return ui.nav_panel(
        "1. The question",
        ui.h2("The question"),
        ui.p("Who answers what? Start from a bundled problem or your own file, or write the question here."),
        ui.div(
            {"class": "studio-row"},
            ui.input_select("bundled", "Start from a bundled problem", {"": "(keep the current question)",
                                                                         **bundled_choices()}),
            ui.input_file("problem_file", "Or load a problem (.toml) or mechanism file (.json, .csv)",
                          accept=[".toml", ".json", ".csv"]),
        ),
        ui.output_ui("loaded_note"),
        ui.input_text("inputs", "True answers (inputs), separated by commas", f["inputs"]),
        ui.input_text_area("answers", "Answers a respondent may give, one per line; a set such as "
                           "\"yes | no\" means \"don't know\" or \"one of these\" (blank: any set)",
                           f["answers"], rows=4),
        ui.input_text("dont_know", "Share of respondents told to answer \"don't know\" (blank: free)",
                      f["dont_know"]),
        ui.input_checkbox("prior_unknown", "The true shares are unknown (design for equal shares)",
                          f["prior_unknown"]),
        ui.input_text("prior", "Expected true shares, in the order of the inputs (e.g. 0.3, 0.7)", f["prior"]),
        ui.input_radio_buttons("semantics", "How set answers are read", SEMANTICS_WORDS, selected=f["semantics"]),
        ui.p(PLAIN_WORDS, {"class": "studio-note"}),
        ui.input_select("objective", "What the design should favour", OBJECTIVE_WORDS, selected=f["objective"]),
        ui.output_ui("question_status"),
        value="question",
    )


def _values(input: Any) -> dict[str, Any]:
    return {"inputs": input.inputs(), "answers": input.answers(), "dont_know": input.dont_know(),
            "prior": input.prior(), "prior_unknown": bool(input.prior_unknown()), "semantics": input.semantics(),
            "objective": input.objective()}


def _same(a: dict[str, Any], b: dict[str, Any]) -> bool:
    return all(str(a[k]).strip() == str(b[k]).strip() for k in a)


def push_fields(state: State, data: dict[str, Any], session: Any) -> None:
    """Fill the form from ``data``; until the browser reports the new values the form is read as ``data``."""
    f = fields_of(data)
    state.pushed, state.synced = f, False
    ui.update_text("inputs", value=f["inputs"], session=session)
    ui.update_text_area("answers", value=f["answers"], session=session)
    ui.update_text("dont_know", value=f["dont_know"], session=session)
    ui.update_text("prior", value=f["prior"], session=session)
    ui.update_checkbox("prior_unknown", value=f["prior_unknown"], session=session)
    ui.update_radio_buttons("semantics", selected=f["semantics"], session=session)
    ui.update_select("objective", selected=f["objective"], session=session)


def mechanism_fields(mech: Any) -> dict[str, Any]:
    """A problem dictionary describing a loaded mechanism (its inputs and answer sets)."""
    focal = [list(s) for s in mech.focal_sets]
    data: dict[str, Any] = {"name": "mechanism", "inputs": list(mech.inputs), "epsilon": 1.0}
    if list(mech.frame) != list(mech.inputs):
        data["frame"] = list(mech.frame)
    if focal:
        data["structure"] = {"focal_sets": focal}
    return data


def question_server(input: Any, output: Any, session: Any, state: State) -> Any:
    """Serve step 1; returns the reactive problem (a :class:`DesignProblem`, or an error shown on screen)."""

    def load(path: str, shown: str) -> None:
        backend = state.backend
        if path.lower().endswith(".toml"):
            data = backend.read_problem(path)
            state.loaded.set(None)
            state.base.set(data)
            push_fields(state, data, session)
            if "epsilon" in data:
                ui.update_numeric("epsilon", value=float(data["epsilon"]), session=session)
            state.message.set(f"Loaded the problem {shown}.")
        else:
            current = backend.read_mechanism(path, shown)
            backend.names[path] = shown
            data = mechanism_fields(current.mechanism)
            state.base.set(data)
            push_fields(state, data, session)
            state.loaded.set(current)
            if current.release is not None:
                ui.update_numeric("epsilon", value=current.epsilon, session=session)
            state.message.set(f"Loaded the mechanism {shown}: the next steps use it as it is "
                              "(edit the question to design a new one).")

    @reactive.effect
    @reactive.event(input.bundled, ignore_init=True)
    def _bundled() -> None:
        if input.bundled():
            try:
                load(input.bundled(), os.path.basename(input.bundled()))
            except StudioError as exc:
                state.message.set(str(exc))

    @reactive.effect
    @reactive.event(input.problem_file)
    def _upload() -> None:
        files = input.problem_file()
        if not files:
            return
        name = os.path.basename(files[0]["name"])
        target = os.path.join(state.backend.workdir, "upload-" + name.replace(os.sep, "_"))
        shutil.copyfile(files[0]["datapath"], target)
        try:
            load(target, name)
        except StudioError as exc:
            state.message.set(str(exc))

    @reactive.calc
    def problem() -> Any:
        values = _values(input)
        if not state.synced:
            if _same(values, state.pushed):
                state.synced = True
            else:
                values = state.pushed
        if state.loaded() is not None and _same(values, fields_of(state.base())):
            return None  # a loaded mechanism, used as it is
        data = apply_fields(state.base(), values)
        problem = state.backend.set_problem(data)
        return data, problem

    @reactive.effect
    def _edited() -> None:
        try:
            result = problem()
        except StudioError:
            return
        if result is not None and state.loaded() is not None:
            with reactive.isolate():
                state.loaded.set(None)

    @render.ui
    def loaded_note() -> Any:
        return ui.p(state.message(), {"class": "studio-note", "role": "status"}) if state.message() else None

    @render.ui
    def question_status() -> Any:
        try:
            result = problem()
        except StudioError as exc:
            return ui.p(f"Not yet a problem designer can solve: {exc}", {"class": "studio-error", "role": "alert"})
        if result is None:
            return ui.p("The loaded mechanism is used as it is.", {"class": "studio-note"})
        return ui.p(f"A valid problem: {result[1].describe()}", {"class": "studio-ok"})

    return problem
