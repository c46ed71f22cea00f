"""Step 5 of the studio, the answers: estimates with intervals and the fit's status from an uploaded file of
randomized answers, and a microdata release (randomized true answers) with its manifest."""

from __future__ import annotations

import html
import io
import os
import shutil
import zipfile
from typing import Any

from shiny import reactive, render, req, ui

from .._internal.render import fmt
from .backend import StudioError
from .figures import estimate_figure

__all__ = ["answers_server", "answers_ui"]

ACCEPT = [".csv", ".tsv", ".txt", ".parquet", ".json"]


def answers_ui() -> Any:
    return ui.nav_panel(
        "5. The answers",
        ui.h2("The answers"),
        ui.h3("Estimate the shares"),
        ui.p("Upload the randomized answers collected with this design (one row per respondent)."),
        ui.div({"class": "studio-row studio-end"},
               ui.input_file("answers_file", "Randomized answers (CSV or a format designer reads)", accept=ACCEPT),
               ui.input_text("answer_column", "Column of the answers", "response"),
               ui.input_numeric("estimate_level", "Confidence level", 0.95, min=0.5, max=0.999, step=0.01)),
        ui.output_ui("estimate_table"),
        ui.output_plot("estimate_plot", height="260px"),
        ui.h3("Release microdata"),
        ui.p("Upload the true answers: each is randomized with this design (never stored), and the release comes "
             "with its manifest (what was drawn, with which table, within which budget)."),
        ui.div({"class": "studio-row studio-end"},
               ui.input_file("truth_file", "True answers (CSV)", accept=ACCEPT),
               ui.input_text("truth_column", "Column of the true answers", "answer"),
               ui.input_action_button("release_run", "Randomize for release")),
        ui.output_ui("release_result"),
        ui.download_button("download_release", "Release and manifest (ZIP)"),
        value="answers",
    )


def _saved(state: Any, files: Any, prefix: str) -> tuple[str, str]:
    name = os.path.basename(files[0]["name"])
    target = os.path.join(state.backend.workdir, f"{prefix}-{name}")
    shutil.copyfile(files[0]["datapath"], target)
    return target, name


def answers_server(input: Any, output: Any, session: Any, state: Any, problem: Any, current: Any,
                   mechanism_path: Any) -> None:
    backend = state.backend
    released: reactive.Value[tuple[str, str] | None] = reactive.Value(None)

    @reactive.calc
    def semantics() -> str:
        result = problem()
        c = current()
        sem = str(result[1].semantics) if result is not None else (
            str(c.release.semantics) if c.release is not None else "sldp")
        return "wldp" if sem == "wldp" else "sldp"

    @reactive.calc
    def estimate() -> Any:
        files = input.answers_file()
        req(files)
        path, name = _saved(state, files, "answers")
        level = input.estimate_level()
        if not isinstance(level, (int, float)) or not 0 < level < 1:
            raise StudioError("confidence level: type a number between 0 and 1, e.g. 0.95")
        column = input.answer_column().strip() or "response"
        return backend.estimate(path, name, mechanism_path(), column, float(level), semantics())

    @output(suspend_when_hidden=False)
    @render.ui
    def estimate_table() -> Any:
        try:
            data = estimate()
        except StudioError as exc:
            return ui.p(str(exc), {"class": "studio-error", "role": "alert"})
        cols = [c for c in ("estimate", "stderr", "ci_low", "ci_high") if isinstance(data.get(c), dict)]
        heads = "".join(f'<th scope="col">{c}</th>' for c in cols)
        body = "".join(
            f'<tr><th scope="row">{html.escape(x)}</th>'
            + "".join(f"<td>{'n/a' if data[c].get(x) is None else fmt(data[c][x], 8)}</td>" for c in cols) + "</tr>"
            for x in data["estimate"])
        warnings = "".join(f'<p class="studio-note">warning: {html.escape(w)}</p>' for w in data.get("warnings", []))
        return ui.HTML(
            f'<p class="studio-status">status: <strong id="estimate_status">{html.escape(str(data["status"]))}'
            f"</strong>; {data['n']} answers read, {data.get('dropped', 0)} dropped; "
            f"{fmt(data['level'] * 100, 4)}% intervals</p>"
            f'<table class="table table-sm"><caption>Estimated true shares</caption><thead><tr>'
            f'<th scope="col">true answer</th>{heads}</tr></thead><tbody>{body}</tbody></table>{warnings}')

    @render.plot(alt="Estimated shares with their confidence intervals")
    def estimate_plot() -> Any:
        try:
            data = estimate()
        except StudioError:
            req(False)
        return estimate_figure(data)

    @render.ui
    @reactive.event(input.release_run)
    def release_result() -> Any:
        try:
            files = input.truth_file()
            if not files:
                raise StudioError("upload the true answers first")
            path, name = _saved(state, files, "truth")
            out, manifest, text = backend.release(path, name, mechanism_path(), input.truth_column().strip()
                                                  or "answer")
        except StudioError as exc:
            return ui.p(str(exc), {"class": "studio-error", "role": "alert"})
        released.set((out, manifest))
        return ui.pre(text, id="release_summary")

    @render.download(filename="release.zip")
    def download_release() -> Any:
        got = released()
        req(got is not None)
        assert got is not None  # for the type checker: req() stopped otherwise
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w") as z:
            for p in got:
                z.write(p, os.path.basename(p))
        yield buffer.getvalue()
