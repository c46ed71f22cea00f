"""Step 5 of the studio, the answers: the estimated shares with their intervals and the fit's status from an
uploaded file of randomized answers (:func:`designer.estimate`), a microdata release of uploaded true answers
(:func:`designer.randomize`), and what to hand on: the report, the Python script and the command lines."""

from __future__ import annotations

import io
import os
import re
import zipfile
from typing import Any

from shiny import reactive, render, ui

from .._internal.render import fmt
from ..exceptions import DesignerError, NotReadyError
from ..tables.inputs import ARROW_SUFFIXES, STAT_SUFFIXES
from .figures import estimate_figure, scroll_table
from .handover import commands, estimate_rows, report, script, status_words
from .notebook_cells import notebook
from .session import mechanism_name
from .state import Upload, internal_error
from .widgets import Ctx, field_box, file_box, number_box

__all__ = ["answers_server", "answers_ui"]

#: What the answer boxes take: every file designer's reading layer reads (:mod:`designer.tables.inputs`), and a
#: JSON file so that a mechanism given here by mistake is named as such.
ACCEPT = [".csv", ".tsv", ".txt", ".parquet", ".pq", *ARROW_SUFFIXES, *STAT_SUFFIXES, ".json"]


def answers_ui() -> Any:
    return ui.nav_panel(
        "5. The answers",
        ui.h2("The answers", id="step_answers_heading", tabindex="-1"),
        ui.output_ui("step_note_answers"),
        ui.h3("Estimate the shares"),
        ui.p("Upload the randomized answers collected with this design (one row per respondent)."),
        ui.div({"class": "studio-row"},
               ui.output_ui("answers_file_box"),
               field_box("answer_column", "Column of the answers", "response"),
               number_box("estimate_level", "Confidence level", "0.95")),
        ui.output_ui("estimate_table"),
        ui.output_ui("estimate_plot"),
        ui.h3("Release microdata"),
        ui.p("Upload the true answers: each is randomized with this design (the true answers are never stored), and "
             "the release comes with its manifest (what was drawn, with which table, within which budget)."),
        ui.div({"class": "studio-row"},
               ui.output_ui("truth_file_box"),
               field_box("truth_column", "Column of the true answers", "answer"),
               ui.div(ui.input_action_button("release_run", "Randomize for release"), style="padding-top: 2rem")),
        ui.output_ui("release_result"),
        ui.h3("Hand on"),
        ui.p("The report holds the question, the budget in words, the design and its certificate, the plan, the field "
             "instructions and the estimates (print it to PDF from the browser); the script and the notebook "
             "reproduce the numbers with designer's Python functions (run the notebook in the folder of the "
             "downloads); the command lines do it from a terminal, next to the downloads."),
        ui.div({"class": "studio-downloads"},
               ui.download_button("download_report", "Report (HTML, printable)"),
               ui.download_button("download_script", "Python script"),
               ui.download_button("download_notebook", "Jupyter notebook"),
               ui.download_button("download_commands", "Command lines (shell)")),
        ui.output_code("cli_commands"),
        value="answers",
    )


def answers_server(ctx: Ctx) -> None:
    input, lab, guard, output = ctx.input, ctx.lab, ctx.guard, ctx.session.output

    # the file boxes are drawn afresh for each question: an upload belongs to the question it was made for
    @render.ui
    def answers_file_box() -> Any:
        ctx.values["question"].get()
        return file_box("answers_file", "Randomized answers (CSV or a format designer reads)", ACCEPT)

    @render.ui
    def truth_file_box() -> Any:
        ctx.values["question"].get()
        return file_box("truth_file", "True answers (CSV or a format designer reads)", ACCEPT)

    def take(field: str, key: str) -> None:
        try:
            files = getattr(input, field)()
            if files:
                ctx.values[key].set(Upload.of(files[0]["datapath"], files[0]["name"]))
        except OSError as exc:  # the upload vanished: one line in the log, the page says so below the field
            ctx.values["release_error"].set({"key": None, "truth_file": internal_error(exc, "an upload")})

    @reactive.effect
    @reactive.event(input.answers_file)
    def _answers() -> None:
        take("answers_file", "answers")

    @reactive.effect
    @reactive.event(input.truth_file)
    def _truth() -> None:
        take("truth_file", "truth")

    @render.ui
    def estimate_table() -> Any:
        def show() -> Any:
            fit = lab.estimate(ctx.study())
            rows = estimate_rows(fit)
            precise = "estimate" not in fit.to_dict()
            heads = (["share from", "to"] if precise else
                     ["estimated share", "standard error", f"{fmt(fit.level * 100, 4)}% interval from", "to"])
            cells = (lambda r: r[3:]) if precise else (lambda r: r[1:])
            body = "".join(f'<tr><th scope="row">{_e(r[0])}</th>' + "".join(f"<td>{c}</td>" for c in cells(r))
                           + "</tr>" for r in rows)
            table = ('<table class="table table-sm"><caption>Estimated true shares</caption><thead><tr>'
                     '<th scope="col">true answer</th>' + "".join(f'<th scope="col">{h}</th>' for h in heads)
                     + f"</tr></thead><tbody>{body}</tbody></table>")
            warnings = [ui.p(f"Note: {w}", {"class": "studio-note"}) for w in fit.warnings]
            return ui.div(
                ui.p("Fit: ", ui.strong(status_words(fit), id="estimate_status"),
                     f"; {fit.n:,} answers read, {fit.dropped:,} dropped; {fmt(fit.level * 100, 4)}% intervals."),
                ui.HTML(scroll_table(table, "Estimated shares", "estimate_scroll")), *warnings)
        return guard(show, "the estimate")

    @render.ui
    def estimate_plot() -> Any:
        def show() -> Any:
            fit = lab.estimate(ctx.study())
            d = fit.to_dict()
            if "estimate" in d:
                rows = [(x, d["estimate"][x], d["ci_low"].get(x), d["ci_high"].get(x)) for x in d["estimate"]]
            else:
                rows = [(x, None, d["lower"][x], d["upper"][x]) for x in d["lower"]]
            return ui.HTML(estimate_figure(rows, fit.level))
        return guard(show, "the estimate's figure", owner=False)

    def upload_message(field: str) -> str | None:
        """A refusal of the uploaded answers, next to the field it is about (the file, or its column)."""
        if field not in ("answers_file", "answer_column", "truth_file", "truth_column"):
            return None
        study = ctx.study()
        try:
            if field.startswith("answer"):
                lab.estimate(study)
            else:
                error = ctx.values["release_error"].get()
                return error.get(field) if error and error.get("key") == lab.release_key(study) else None
        except (NotReadyError, KeyError):
            return None
        except DesignerError as exc:
            text = lab.clean(exc)
            about_column = bool(re.search(r"\bcolumn\b", text, re.I))
            return text if about_column == field.endswith("column") else None
        except Exception as exc:
            return internal_error(exc, "reading the answers") if field == "answers_file" else None
        return None

    ctx.values.setdefault("derived", []).append(upload_message)
    ctx.values["release_error"] = reactive.Value(None)

    @reactive.effect
    @reactive.event(input.release_run)
    def _release() -> None:
        study = ctx.study()
        key = lab.release_key(study)
        ctx.values["release_error"].set(None)
        if key is None:
            ctx.values["release_error"].set({"key": None, "truth_file": "True answers: upload them first"})
            ctx.values["released"].set(ctx.values["released"].get() + 1)
            return
        try:
            lab.release(study, draw=True)
        except NotReadyError:
            pass
        except DesignerError as exc:
            text = lab.clean(exc)
            field = "truth_column" if re.search(r"\bcolumn\b", text, re.I) else "truth_file"
            ctx.values["release_error"].set({"key": key, field: text})
        except Exception as exc:
            ctx.values["release_error"].set({"key": key, "truth_file": internal_error(exc, "the release")})
        ctx.values["released"].set(ctx.values["released"].get() + 1)

    @render.ui
    def release_result() -> Any:
        ctx.values["released"].get()

        def show() -> Any:
            study = ctx.study()
            result, _ = lab.release(study)
            d = result.to_dict()
            lines = [f"{d['n']:,} true answers randomized into released.csv, within the budget "
                     f"{d['epsilon_total']:g} per respondent; the manifest says what was drawn, with which table."]
            lines += [f"Note: {w}" for w in d.get("warnings") or []]
            return ui.div(*(ui.p(t, id="release_summary" if i == 0 else None) for i, t in enumerate(lines)),
                          ui.download_button("download_release", "Release, manifest and mechanism (ZIP)"))
        return guard(show, "the release")

    @output(id="download_release")
    @render.download(filename="release.zip")
    def _download_release() -> Any:
        try:
            _, folder = lab.release(ctx.study())
            buffer = io.BytesIO()
            with zipfile.ZipFile(buffer, "w") as z:
                for name in ("released.csv", "released.csv.manifest.json", mechanism_name(ctx.study())):
                    z.write(os.path.join(folder, name), name)
            yield buffer.getvalue()
        except Exception as exc:
            yield internal_error(exc, "the release download").encode()

    @output(id="download_report")
    @render.download(filename="report.html")
    def _download_report() -> Any:
        decimal, group = _marks(input)
        yield guard.text(lambda: report(ctx.study(), lab, decimal=decimal, group=group), "the report").encode()

    @output(id="download_script")
    @render.download(filename="studio_session.py")
    def _download_script() -> Any:
        yield guard.text(lambda: script(ctx.study(), lab), "the script").encode()

    @output(id="download_notebook")
    @render.download(filename="studio_session.ipynb")
    def _download_notebook() -> Any:
        yield guard.text(lambda: notebook(ctx.study(), lab), "the notebook").encode()

    @output(id="download_commands")
    @render.download(filename="commands.sh")
    def _download_commands() -> Any:
        yield guard.text(lambda: commands(ctx.study(), lab), "the command lines").encode()

    @render.code
    def cli_commands() -> str:
        ctx.values["released"].get()
        return guard.text(lambda: commands(ctx.study(), lab), "the command lines")



def _e(text: str) -> str:
    import html

    return html.escape(text)


def _marks(input: Any) -> tuple[str, str]:
    """The browser's decimal mark and thousands group (``"."`` and ``","`` until the page has said)."""
    try:
        decimal, group = str(input.client_decimal()), str(input.client_group())
    except Exception:  # not reported yet
        return ".", ","
    return ("," if decimal == "," else "."), (group if group in (",", ".", " ", "\u00a0", "\u202f", "'", "\u2019")
                                              else ",")
