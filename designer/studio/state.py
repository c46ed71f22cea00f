"""The studio's one state per session (:class:`Study`), built afresh from the page's fields on every change, and
what it holds: uploads, a loaded mechanism file, the survey's figures, and the design the later steps use
(:class:`Released`). Every panel, download, command line, script and report is derived from a :class:`Study`."""

from __future__ import annotations

import hashlib
import os
import secrets
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Loaded", "PlanAsk", "Released", "Study", "Upload", "internal_error", "plain_error"]


def internal_error(exc: BaseException, where: str) -> str:
    """Log one line with an id to the server's log (standard error) and return the sentence the page shows."""
    uid = secrets.token_hex(3)
    detail = " ".join(str(exc).split())[:300]
    print(f"designer studio: error {uid} in {where}: {type(exc).__name__}: {detail}", file=sys.stderr, flush=True)
    return (f"Something went wrong inside designer while computing this (error {uid}); the studio's log has one "
            "line with this id. The other steps still work.")


def plain_error(exc: BaseException, names: Mapping[str, str] | None = None) -> str:
    """A library error as the page shows it: one line, the session's working paths replaced by the names the
    user knows."""
    text = " ".join(str(exc).split())
    for path, shown in (names or {}).items():
        text = text.replace(path, shown)
    return text.replace("designer: error: ", "")


@dataclass(frozen=True)
class Upload:
    """An uploaded file: where Shiny saved it, its name on the user's machine, and its content's digest."""

    path: str
    name: str
    digest: str

    @classmethod
    def of(cls, path: str, name: str) -> Upload:
        with open(path, "rb") as f:
            digest = hashlib.file_digest(f, "sha256").hexdigest()  # in blocks: an answers file may be large
        return cls(path, os.path.basename(name), digest)


@dataclass(frozen=True)
class Loaded:
    """A mechanism file loaded to be used as it is."""

    upload: Upload
    mechanism: Any
    release: Any
    words: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class PlanAsk:
    """The survey step's figures as typed (``None`` where a field cannot be read: its message says why)."""

    width: float | None = 0.05
    level: float | None = 0.95
    n: int | None = 1000
    detect: float | None = 0.1
    power: float | None = 0.8
    alpha: float | None = 0.05
    seed: int | None = 1


@dataclass(frozen=True)
class Study:
    """Everything the session holds: the question, the budget, the survey's figures, the field's choices and the
    uploads. Built afresh from the page's fields on every change; every output reads only this.

    Attributes
    ----------
    data : dict
        The problem as a problem file holds it (with the current budget and name); ``None`` when a field of the
        question cannot be read.
    problem_text : str
        ``data`` written as ``problem.toml`` (the key of its designs).
    problem : DesignProblem or None
    loaded : Loaded or None
        A mechanism file used as it is (the question and the budget match the file's).
    epsilon : float or None
    errors : dict of str to str
        Field id -> the one message shown next to it.
    generation : int
        Counts the questions loaded in the session: an upload belongs to one generation.
    """

    data: dict[str, Any] | None
    problem_text: str
    problem: Any
    loaded: Loaded | None
    epsilon: float | None
    errors: Mapping[str, str]
    plan: PlanAsk = field(default_factory=PlanAsk)
    split_with: tuple[str, ...] = ()
    split_total: float | None = 2.0
    split_run: int = 0
    device: str | None = None
    page_question: str = "Your answer"
    answers: Upload | None = None
    answer_column: str = "response"
    estimate_level: float | None = 0.95
    truth: Upload | None = None
    truth_column: str = "answer"
    generation: int = 0

    @property
    def name(self) -> str:
        if self.loaded is not None:
            return self.loaded.upload.name
        return str((self.data or {}).get("name") or "question")

    @property
    def design_key(self) -> tuple[str, ...] | None:
        """What identifies the design on screen (None when there is none to compute)."""
        if self.loaded is not None:
            return ("loaded", self.loaded.upload.digest)
        if self.problem is None or self.epsilon is None:
            return None
        return ("design", self.problem_text)


@dataclass(frozen=True)
class Released:
    """The design the later steps use: designed for the question (``result``) or loaded from a file.

    Attributes
    ----------
    mechanism : Mechanism or None
        None for a design kept in compact form (too many answer sets to list).
    path : str
        The mechanism file (JSON with its release block) in the session's folder; empty without a mechanism.
    epsilon : float
    semantics : str
        ``"sldp"`` or ``"wldp"``: how the answers are analysed.
    prior : (k,) ndarray
        The shares the survey is planned at (the problem's; equal shares for a loaded file).
    """

    mechanism: Any
    path: str
    epsilon: float
    semantics: str
    prior: Any
    result: Any = None
    loaded: Loaded | None = None
    certificate: Any = None

    @property
    def source(self) -> Any:
        """What the front doors are handed: the design's result, or the loaded mechanism."""
        return self.result if self.result is not None else self.mechanism

    def prior_text(self) -> str:
        return ",".join(f"{x}={float(v)!r}" for x, v in zip(self.mechanism.inputs, self.prior))
