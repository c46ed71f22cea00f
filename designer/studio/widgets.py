"""The studio's page parts: fields with their message beside them, and the guard every output goes through (an
error is shown once, in words; nothing is ever shown or logged as a traceback)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from shiny import ui
from shiny.types import SilentException

from ..exceptions import DesignerError, FieldError, NotReadyError
from .session import Lab
from .state import internal_error

__all__ = ["Ctx", "Guard", "alert", "field_box", "file_box", "message", "note", "number_box", "step_note", "text_area"]


def message(field: str) -> Any:
    """The place of a field's message, right below it (the field names it in ``aria-describedby``)."""
    return ui.output_ui(f"{field}_msg")


def _described(tag: Any, field: str, described: str | None = None, **attrs: str) -> Any:
    """``tag`` with its input element described by the field's message (``described``: the ids that describe it),
    and ``attrs`` added."""
    children: list[Any] = list(tag.children)
    for child in children:
        if getattr(child, "name", None) in ("input", "textarea") and child.attrs.get("id") == field:
            child.attrs["aria-describedby"] = described or f"{field}_msg"
            child.attrs.update(attrs)
    return tag


def field_box(field: str, label: str, value: str = "", *, placeholder: str | None = None) -> Any:
    """A text field with its message below it."""
    return ui.div(_described(ui.input_text(field, label, value, placeholder=placeholder), field), message(field))


def number_box(field: str, label: str, value: str = "", *, described: str | None = None) -> Any:
    """A field for a number, typed in the user's locale (read by :func:`designer.studio.fields.read_number`)."""
    tag = _described(ui.input_text(field, label, value), field, described, inputmode="decimal", spellcheck="false")
    return ui.div(tag, message(field))


def text_area(field: str, label: str, value: str = "", rows: int = 4) -> Any:
    return ui.div(_described(ui.input_text_area(field, label, value, rows=rows), field), message(field))


def file_box(field: str, label: str, accept: list[str]) -> Any:
    """A file upload with its message below it; Shiny's read-only name box is kept out of the Tab order."""
    tag = ui.input_file(field, label, accept=accept)
    return ui.div(tag, message(field))


def alert(text: str) -> Any:
    return ui.p(text, {"class": "studio-error", "role": "alert"})


def note(text: str) -> Any:
    return ui.p(text, {"class": "studio-note"}) if text else None


@dataclass
class Guard:
    """Runs an output's computation and turns what can go wrong into one line on the page.

    A :class:`~designer.exceptions.FieldError` is shown next to its field only (the output shows nothing); a
    :class:`~designer.exceptions.NotReadyError` shows its reason once (a failed design in step 2, a missing question
    or a compact design at the top of the step); a library error is shown by the output that owns it (``owner``);
    anything else is logged as one line with an id, and the page says so.
    """

    lab: Lab

    def __call__(self, compute: Callable[[], Any], where: str, *, owner: bool = True) -> Any:
        try:
            return compute()
        except SilentException:
            raise
        except FieldError:
            return None  # said once, next to its field
        except NotReadyError as exc:
            if exc.reason == "design":  # the design failed: step 2 says why, the other outputs nothing
                return alert(str(exc)) if owner else None
            if exc.reason in ("question", "listed"):
                return None  # said once, at the top of the step
            return note(str(exc))
        except DesignerError as exc:
            return alert(self.lab.clean(exc)) if owner else None
        except Exception as exc:  # anything else: one line in the log with an id, never a traceback
            return alert(internal_error(exc, where))

    def text(self, compute: Callable[[], str], where: str) -> str:
        """A computation giving text (a download, a command list): errors as plain sentences."""
        try:
            return compute()
        except SilentException:
            raise
        except (NotReadyError, FieldError) as exc:
            return str(exc)
        except DesignerError as exc:
            return self.lab.clean(exc)
        except Exception as exc:
            return internal_error(exc, where)


def step_note(lab: Lab, study: Any, step: str) -> Any:
    """The one line at the top of a step that cannot go on: no question, no design at this budget, or a design
    kept in compact form (the outputs below it then show nothing, so that the reason is said once)."""
    try:
        if step == "budget":
            lab.design(study)
        else:
            lab.listed(study)
    except NotReadyError as exc:
        if exc.reason == "design":
            return None if step == "budget" else note("No design at this budget: step 2 says why.")
        if exc.reason == "listed":
            return None if step == "budget" else ui.p(str(exc), {"class": "studio-warning", "role": "status"})
        return note(str(exc))
    return None


@dataclass
class Ctx:
    """What every step's server reads: Shiny's input and session, the session's state (``study()``, a reactive
    calculation) and lab, the guard, and the few values set by buttons and uploads."""

    input: Any
    session: Any
    study: Callable[[], Any]
    lab: Lab
    guard: Guard
    values: dict[str, Any]
