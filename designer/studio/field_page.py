"""Step 4 of the studio, the field: the design on a die, dice, cards, coins or a spinner with its printed card,
the respondent's page live in a frame, and the files the field needs (only those the current state has)."""

from __future__ import annotations

import html
from collections.abc import Callable
from typing import Any

from shiny import reactive, render, ui

from .._internal.render import fmt
from ..exceptions import NotReadyError
from .fields import toml_text
from .figures import answer_labels, scroll_table
from .state import internal_error
from .widgets import Ctx

__all__ = ["DEVICES", "field_server", "field_ui"]

DEVICES = {"die": "one die", "dice2": "two dice", "cards": "a pack of cards", "coins:3": "three coins",
           "spinner:12": "a spinner with 12 sectors"}
#: The field's downloads: element id -> (file name, what it is).
DOWNLOADS = {
    "download_mechanism": ("mechanism.json", "Mechanism with its certificate (JSON)"),
    "download_page": ("page.html", "Respondent's page (HTML)"),
    "download_qualtrics": ("qualtrics.txt", "Qualtrics snippet"),
    "download_limesurvey": ("limesurvey.txt", "LimeSurvey snippet"),
    "download_card": ("card.html", "Printed card (HTML)"),
    "download_problem": ("problem.toml", "Question file (TOML)"),
    "download_survey": ("survey.toml", "Questionnaire file (TOML)"),
}


def field_ui() -> Any:
    return ui.nav_panel(
        "4. The field",
        ui.h2("The field", id="step_field_heading", tabindex="-1"),
        ui.output_ui("step_note_field"),
        ui.h3("On paper: a device and a printed card"),
        ui.div({"class": "studio-row"},
               ui.input_select("device", "Device the respondent uses", DEVICES),
               ui.div(ui.input_action_button("device_run", "Design for this device"), style="padding-top: 2rem")),
        ui.output_ui("device_result"),
        ui.h3("Online: the respondent's page"),
        ui.input_text("page_question", "Question shown on the page", "Your answer"),
        ui.output_ui("page_frame"),
        ui.h3("Downloads"),
        ui.output_ui("field_downloads"),
        value="field",
    )


def field_server(ctx: Ctx) -> None:
    input, lab, guard, output = ctx.input, ctx.lab, ctx.guard, ctx.session.output

    @reactive.effect
    @reactive.event(input.device_run)
    def _device() -> None:
        ctx.values["device"].set(input.device())

    @render.ui
    def device_result() -> Any:
        def show() -> Any:
            study = ctx.study()
            g, card = lab.device(study)
            labels = answer_labels(g.mechanism)
            heads = "".join(f'<th scope="col">{html.escape(c)}</th>' for c in labels)
            exact = g.to_dict()["matrix_exact"]
            rows = "".join(f'<tr><th scope="row">{html.escape(x)}</th>' + "".join(f"<td>{e}</td>" for e in row)
                           + "</tr>" for x, row in zip(g.mechanism.inputs, exact))
            table = (f'<table class="table table-sm" id="device_matrix"><caption>The design on '
                     f"{html.escape(DEVICES.get(study.device or '', study.device or ''))}: exact chances</caption>"
                     f'<thead><tr><th scope="col">true answer</th>{heads}</tr></thead><tbody>{rows}</tbody></table>')
            variance = "infinite" if g.variance is None else fmt(g.variance, 8)
            return ui.div(
                ui.HTML(scroll_table(table, "The design on the device", "device_scroll")),
                ui.p(f"Mean variance of the estimated shares, per respondent: {variance} (the design without a "
                     f"device: {fmt(g.continuous_variance or float('nan'), 8)})."),
                *(ui.p(n, {"class": "studio-note"}) for n in g.notes),
                ui.tags.iframe(srcdoc=card, title="Preview of the printed card", **{"class": "studio-frame"}))
        return guard(show, "the device design")

    @render.ui
    def page_frame() -> Any:
        def show() -> Any:
            page = lab.export(ctx.study(), "html")
            return ui.div(ui.tags.iframe(srcdoc=page.text, title="The respondent's page, as exported",
                                         id="page_iframe", **{"class": "studio-frame"}),
                          ui.p(f"Each answer is drawn with the design's exact chances (table SHA-256 "
                               f"{page.randomizer.table.sha256[:16]}...).", {"class": "studio-note"}))
        return guard(show, "the respondent's page")

    def available() -> dict[str, str]:
        """The downloads the current state has, and why the others are missing."""
        study = ctx.study()
        out: dict[str, str] = {}
        try:
            lab.listed(study)
        except NotReadyError as exc:
            out["download_mechanism"] = {"design": "no design at this budget (step 2 says why)",
                                         "listed": "the design is kept in compact form (see above)"}.get(
                                             exc.reason, "no design yet")
        except Exception:
            out["download_mechanism"] = "no design at this budget (step 2 says why)"
        for key in ("download_page", "download_qualtrics", "download_limesurvey"):
            if "download_mechanism" in out:
                out[key] = "no mechanism to draw from"
        if "download_mechanism" not in out:
            try:
                lab.export(study, "html")
            except Exception:
                for key in ("download_page", "download_qualtrics", "download_limesurvey"):
                    out[key] = "designer cannot make the page for this design (the message above says why)"
        if study.device is None:
            out["download_card"] = "design for a device first (above)"
        if study.data is None or study.loaded is not None:
            out["download_problem"] = "a loaded mechanism has no question file" if study.loaded else "fix step 1"
        if not study.split_run:
            out["download_survey"] = "split a questionnaire's budget first (step 3)"
        return out

    @render.ui
    def field_downloads() -> Any:
        def show() -> Any:
            missing = available()
            buttons = [ui.download_button(key, label) for key, (_, label) in DOWNLOADS.items() if key not in missing]
            notes = [ui.p(f"{DOWNLOADS[key][1]}: {why}", {"class": "studio-unavailable"})
                     for key, why in missing.items()]
            return ui.div({"class": "studio-downloads"}, *buttons, *notes)
        return guard(show, "the downloads")

    def mechanism_name() -> str:
        loaded = ctx.study().loaded
        return "mechanism.csv" if loaded is not None and not loaded.upload.name.lower().endswith(".json") else (
            "mechanism.json")

    def serve(key: str, make: Callable[[], bytes]) -> None:
        filename = DOWNLOADS[key][0]

        @output(id=key)
        @render.download(filename=mechanism_name if key == "download_mechanism" else filename)
        def _download() -> Any:
            try:
                yield make()
            except Exception as exc:  # the button is offered only when this works; say so if it did not
                yield internal_error(exc, f"the download {filename}").encode()

    def mechanism_bytes() -> bytes:
        with open(lab.listed(ctx.study()).path, "rb") as f:
            return f.read()

    def export_bytes(to: str) -> Callable[[], bytes]:
        return lambda: lab.export(ctx.study(), to).text.encode()

    serve("download_mechanism", mechanism_bytes)
    serve("download_page", export_bytes("html"))
    serve("download_qualtrics", export_bytes("qualtrics"))
    serve("download_limesurvey", export_bytes("limesurvey"))
    serve("download_card", lambda: lab.device(ctx.study())[1].encode())
    serve("download_problem", lambda: toml_text(ctx.study().data).encode())
    serve("download_survey", lambda: lab.survey_text(ctx.study()).encode())
