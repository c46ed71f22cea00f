"""The studio's Shiny application: five steps in tabs, one working folder and one backend per session."""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
from collections.abc import Callable
from typing import Any

from shiny import App, reactive, ui

from .answers_page import answers_server, answers_ui
from .backend import Backend, StudioError
from .budget_page import budget_server, budget_ui
from .field_page import field_server, field_ui
from .question_page import DEFAULT_PROBLEM, State, mechanism_fields, question_server, question_ui
from .survey_page import survey_server, survey_ui

__all__ = ["make_app"]

CSS = """
body { font-size: 1rem; }
.container-fluid { max-width: 1200px; padding: 0.5rem 1rem; }
.studio-row { display: flex; flex-wrap: wrap; gap: 0 1.5rem; align-items: flex-start; }
.studio-row.studio-end { align-items: flex-end; }
.studio-row > * { flex: 1 1 18rem; min-width: 0; }
.shiny-input-container:not(.shiny-input-container-inline) { width: 100%; max-width: 40rem; }
.studio-matrix td, .studio-matrix th { font-variant-numeric: tabular-nums; }
.table { display: block; overflow-x: auto; max-width: 100%; }
.studio-frame { width: 100%; height: 26rem; border: 1px solid #888; background: #fff; }
.studio-note { color: #333; }
.studio-error { color: #a00000; font-weight: 600; }
.studio-ok { color: #1b5e20; }
.studio-downloads { display: flex; flex-wrap: wrap; gap: 0.5rem; margin-bottom: 1rem; }
.nav-tabs { flex-wrap: wrap; }
pre { white-space: pre-wrap; word-break: break-word; }
img { max-width: 100%; height: auto; }
:focus-visible { outline: 3px solid #1f4e79; outline-offset: 2px; }
h1 { font-size: 1.6rem; } h2 { font-size: 1.35rem; } h3 { font-size: 1.1rem; margin-top: 1.2rem; }
"""


def initial(file: str | None) -> tuple[dict[str, Any], float, bool]:
    """The problem dictionary the studio starts from, its budget, and whether ``file`` is a mechanism."""
    from .question_page import bundled_choices

    if file is None:
        bundled = {v: k for k, v in bundled_choices().items()}
        if "gwrr-dont-know" in bundled:
            file = bundled["gwrr-dont-know"]
        else:
            return DEFAULT_PROBLEM, 1.0, False
    if file.lower().endswith(".toml"):
        data = Backend.read_problem(file)
        return data, float(data.get("epsilon", 1.0)), False
    current = Backend.read_mechanism(file, file)
    eps = current.epsilon if current.release is not None else 1.0
    return mechanism_fields(current.mechanism), eps, True


def make_app(file: str | None, parser: Callable[[], argparse.ArgumentParser]) -> App:
    """The studio as a Shiny :class:`~shiny.App`, starting from ``file`` (a problem TOML or mechanism file);
    ``parser`` builds the CLI's parser (``designer.cli.build_parser``), which runs the verbs.

    Raises
    ------
    StudioError
        When ``file`` cannot be read (the message names it).
    """
    data, eps, is_mechanism = initial(file)
    page = ui.page_fluid(
        ui.tags.style(CSS),
        ui.h1("designer studio"),
        ui.p("Design a randomized-response question step by step: every number is certified by designer, "
             "exactly as the command line computes it."),
        ui.navset_tab(question_ui(data), budget_ui(eps), survey_ui(), field_ui(), answers_ui(), id="steps"),
        title="designer studio",
        lang="en",
    )

    def server(input: Any, output: Any, session: Any) -> None:
        workdir = tempfile.mkdtemp(prefix="designer-studio-")
        session.on_ended(lambda: shutil.rmtree(workdir, ignore_errors=True))
        backend = Backend(workdir, parser)
        state = State(backend, reactive.Value(data), reactive.Value(None), reactive.Value(""))
        if is_mechanism and file is not None:
            try:
                loaded = backend.read_mechanism(file, file)
                backend.names[file] = os.path.basename(file)
                state.loaded.set(loaded)
                state.message.set(f"Loaded the mechanism {os.path.basename(file)}: the next steps use it as it "
                                  "is (edit the question to design a new one).")
            except StudioError as exc:
                state.message.set(str(exc))
        elif file is not None:
            state.message.set(f"Loaded the problem {os.path.basename(file)}.")
        problem = question_server(input, output, session, state)
        current, mechanism_path, epsilon = budget_server(input, output, session, state, problem)
        survey_server(input, output, session, state, problem, current, mechanism_path)
        field_server(input, output, session, state, problem, current, mechanism_path, epsilon)
        answers_server(input, output, session, state, problem, current, mechanism_path)

    return App(page, server)
