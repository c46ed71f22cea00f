"""Step 4 of the studio, the field: device designs with the printed card, the respondent's page in a frame,
and every file to take away (mechanism, page, platform snippets, card, problem, the command lines)."""

from __future__ import annotations

import os
from typing import Any

from shiny import reactive, render, req, ui

from .._internal.render import fmt
from .backend import StudioError

__all__ = ["field_server", "field_ui"]

DEVICES = {"die": "one die", "dice2": "two dice", "cards": "a pack of cards", "coins:3": "three coins",
           "spinner:12": "a spinner with 12 sectors"}


def field_ui() -> Any:
    return ui.nav_panel(
        "4. The field",
        ui.h2("The field"),
        ui.h3("On paper: a device and a printed card"),
        ui.div({"class": "studio-row studio-end"},
               ui.input_select("device", "Device the respondent uses", DEVICES),
               ui.input_action_button("device_run", "Design for this device")),
        ui.output_ui("device_result"),
        ui.h3("Online: the respondent's page"),
        ui.input_text("page_question", "Question shown on the page", "Your answer"),
        ui.output_ui("page_frame"),
        ui.h3("Downloads"),
        ui.div({"class": "studio-downloads"},
               ui.download_button("download_mechanism", "Mechanism with its certificate (JSON)"),
               ui.download_button("download_page", "Respondent's page (HTML)"),
               ui.download_button("download_qualtrics", "Qualtrics snippet"),
               ui.download_button("download_limesurvey", "LimeSurvey snippet"),
               ui.download_button("download_card", "Printed card (HTML)"),
               ui.download_button("download_problem", "Problem file (TOML)"),
               ui.download_button("download_survey", "Questionnaire file (TOML, after a split)"),
               ui.download_button("download_commands", "Command lines (shell)")),
        ui.h3("The same with the command line"),
        ui.p("Run these next to the downloaded files to reproduce every number on screen:"),
        ui.output_code("cli_commands"),
        value="field",
    )


def field_server(input: Any, output: Any, session: Any, state: Any, problem: Any, current: Any,
                 mechanism_path: Any, epsilon: Any) -> None:
    backend = state.backend
    device_card: reactive.Value[tuple[str, str] | None] = reactive.Value(None)

    def _device_design(device: str) -> tuple[dict[str, Any], str]:
        if problem() is None:
            raise StudioError("a device design starts from a problem, not a loaded mechanism")
        return backend.device(epsilon(), device)

    @render.ui
    @reactive.event(input.device_run)
    def device_result() -> Any:
        try:
            data, card = _device_design(input.device())
        except StudioError as exc:
            return ui.p(str(exc), {"class": "studio-error", "role": "alert"})
        device_card.set((input.device(), card))
        heads = "".join(f'<th scope="col">{c}</th>' for c in data["columns"])
        rows = "".join(f'<tr><th scope="row">{x}</th>' + "".join(f"<td>{e}</td>" for e in row) + "</tr>"
                       for x, row in zip(data["inputs"], data["matrix_exact"]))
        variance = data.get("variance")
        return ui.div(
            ui.HTML(f'<table class="table table-sm" id="device_matrix"><caption>The design on '
                    f'{DEVICES[input.device()]}: exact chances</caption><thead><tr><th scope="col">true answer</th>'
                    f"{heads}</tr></thead><tbody>{rows}</tbody></table>"),
            ui.p(f"variance {fmt(variance, 8) if variance is not None else 'n/a'} per respondent "
                 f"(continuous design: {fmt(data.get('continuous_variance') or float('nan'), 8)}); "
                 f"certified: {data.get('certificate', 'no')}"),
            *(ui.p(f"note: {n}", {"class": "studio-note"}) for n in data.get("notes") or []),
            ui.tags.iframe(srcdoc=card, title="Preview of the printed card", **{"class": "studio-frame"}),
        )

    @reactive.calc
    def page() -> str:
        question = input.page_question().strip() or "Your answer"
        return backend.export(mechanism_path(), "html", question)

    @render.ui
    def page_frame() -> Any:
        try:
            text = page()
        except StudioError as exc:
            return ui.p(str(exc), {"class": "studio-error", "role": "alert"})
        return ui.tags.iframe(srcdoc=text, title="The respondent's page, as exported", id="page_iframe",
                              **{"class": "studio-frame"})

    @render.download(filename=lambda: "mechanism.json" if mechanism_path().endswith(".json") else "mechanism.csv")
    def download_mechanism() -> Any:
        yield open(mechanism_path(), "rb").read()

    @render.download(filename="page.html")
    def download_page() -> Any:
        yield page().encode()

    @render.download(filename="qualtrics.txt")
    def download_qualtrics() -> Any:
        yield backend.export(mechanism_path(), "qualtrics", input.page_question().strip() or "Your answer").encode()

    @render.download(filename="limesurvey.txt")
    def download_limesurvey() -> Any:
        yield backend.export(mechanism_path(), "limesurvey", input.page_question().strip() or "Your answer").encode()

    @render.download(filename="card.html")
    def download_card() -> Any:
        got = device_card()
        card = got[1] if got is not None else _device_design(input.device())[1]
        yield card.encode()

    @render.download(filename="problem.toml")
    def download_problem() -> Any:
        req(os.path.exists(backend.problem_path))
        yield open(backend.problem_path, "rb").read()

    @render.download(filename="survey.toml")
    def download_survey() -> Any:
        path = os.path.join(backend.workdir, "survey.toml")
        req(os.path.exists(path))
        yield open(path, "rb").read()

    @render.download(filename="commands.sh")
    def download_commands() -> Any:
        yield ("# designer studio: the command lines behind the screen\n" + backend.command_lines() + "\n").encode()

    @render.code
    def cli_commands() -> str:
        try:
            current()
            page()
        except StudioError:
            pass
        device_card()
        input.steps()  # the survey and answers steps add lines: read them again whenever a step opens
        return backend.command_lines()
