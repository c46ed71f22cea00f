"""The studio's session: one state object (:class:`Study`) from which every panel, download, command line,
script and report is derived, and the :class:`Lab` that computes what the state asks for through the library's
front doors (:func:`designer.design`, :func:`designer.plan`, :func:`designer.export`,
:func:`designer.estimate`, :func:`designer.randomize`, :func:`designer.tradeoff` and the credal sets), keeping
their Result objects (no command-line parser, no JSON text in between).

A new question makes a new :class:`Study`; nothing computed for an older one is shown, offered for download or
listed as a command, because everything is looked up by the state's keys.
"""

from __future__ import annotations

import contextlib
import hashlib
import math
import os
import secrets
import shutil
import sys
import warnings
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from ..exceptions import DesignerError, DesignWarning
from .fields import FieldError, toml_text

__all__ = [
    "BUNDLED",
    "CURVE_GRID",
    "BlockedError",
    "Identification",
    "Lab",
    "Loaded",
    "NoDesignError",
    "PlanAsk",
    "Released",
    "Study",
    "Upload",
    "internal_error",
    "plain_error",
]

#: Problems shipped with the repository (``problems/*.toml``), when the studio runs from a checkout.
BUNDLED = Path(__file__).resolve().parents[2] / "problems"
#: The budgets of the privacy/accuracy curve (nats).
CURVE_GRID = (0.25, 0.5, 0.75, 1.0, 1.25, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0)
#: A share counts as not identified in practice when its variance is this many times the mean variance of
#: k-ary randomized response at the same budget and prior (the textbook design, which identifies every share).
PRACTICAL_RATIO = 1e4
#: Rows of two inputs that differ by no more than this in any chance "answer alike".
ALIKE = 1e-6
#: Results kept per session (designs, plans, exports, estimates), oldest dropped first.
CACHE_SIZE = 256

T = TypeVar("T")


class BlockedError(Exception):
    """A panel that cannot show anything yet, with the reason in plain words (not an error of a field: those
    are shown next to their field, once)."""


class NoDesignError(BlockedError):
    """The design at this budget failed (the library's message): step 2 shows it; the other steps point there."""


class NoQuestionError(BlockedError):
    """No design to compute: a field of the question or the budget has a value to fix (shown next to it)."""


class NotListedError(BlockedError):
    """The design is kept in compact form: the steps that need its list of answers say so once, at their top."""


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
            digest = hashlib.sha256(f.read()).hexdigest()
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
class Identification:
    """Whether a design identifies every share, share by share, and what to do when it does not.

    A share is not identified when its variance per respondent is infinite, or when it is more than
    :data:`PRACTICAL_RATIO` times the mean variance of k-ary randomized response at the same budget and prior:
    its answers then differ from another input's only by chances of the order of float rounding, and no survey
    could be large enough.
    """

    inputs: tuple[str, ...]
    share_variances: tuple[float, ...]
    mean_variance: float
    textbook: float
    poor: tuple[str, ...]
    alike: tuple[tuple[str, ...], ...]
    fix: str
    fix_objective: str | None = None
    per_share: bool = True

    @property
    def ok(self) -> bool:
        return not self.poor

    def words(self) -> str:
        """The red flag's sentence (empty when every share is identified)."""
        if self.ok:
            return ""
        shares = _listing(self.poor)
        if self.alike:
            why = "; ".join(f"{_listing(g)} are answered alike (their chances differ by less than one in a million)"
                            for g in self.alike)
        else:
            why = "the answers carry (almost) no information about them"
        finite = [v for x, v in zip(self.inputs, self.share_variances) if x in self.poor and math.isfinite(v)]
        size = ""
        if finite and len(finite) == len(self.poor):
            n = 1.959963984540054**2 * max(finite) / 0.05**2
            size = (f" Estimating {'it' if len(self.poor) == 1 else 'them'} to within 0.05 would take about "
                    f"{n:.1e} respondents (a textbook design at this budget: about "
                    f"{math.ceil(1.959963984540054**2 * self.textbook / 0.05**2):,}).")
        return (f"This design does not identify the share{'s' if len(self.poor) > 1 else ''} of {shares}: {why}."
                f"{size}")


def _listing(names: tuple[str, ...] | list[str]) -> str:
    names = list(names)
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


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


class Lab:
    """One session's calls of the library, cached by the state's keys, and its working folder.

    Parameters
    ----------
    workdir : str
        A private folder of the session: mechanism files, exports and releases are written there (removed when
        the session ends).
    """

    def __init__(self, workdir: str) -> None:
        self.workdir = workdir
        self._cache: OrderedDict[tuple[Any, ...], Any] = OrderedDict()
        self._releases: dict[tuple[Any, ...], Any] = {}
        self.names: dict[str, str] = {}

    # -- the cache ----------------------------------------------------------------------------------
    def cached(self, key: tuple[Any, ...], compute: Callable[[], T]) -> T:
        """``compute()`` once per ``key`` (an error is kept too, so a bad request is not solved again)."""
        if key in self._cache:
            self._cache.move_to_end(key)
            value = self._cache[key]
        else:
            try:
                value = ("ok", compute())
            except (DesignerError, BlockedError, FieldError, OSError) as exc:
                value = ("error", exc)
            self._cache[key] = value
            while len(self._cache) > CACHE_SIZE:
                self._cache.popitem(last=False)
        if value[0] == "error":
            raise value[1]
        result: T = value[1]
        return result

    def clean(self, exc: BaseException) -> str:
        return plain_error(exc, {**self.names, self.workdir + os.sep: ""})

    # -- the design ---------------------------------------------------------------------------------
    def design(self, study: Study) -> Any:
        """The certified design of the study's problem (:func:`designer.design`), or :class:`BlockedError`."""
        if study.problem is None:
            raise NoQuestionError("No design yet: the question in step 1 has a field to fix.")
        if study.epsilon is None:
            raise NoQuestionError("No design yet: the budget in step 2 has a value to fix.")
        return self.cached(("design", study.problem_text), lambda: self._design(study.problem))

    def _designer(self, problem: Any) -> Callable[[], Any]:
        return lambda: self._design(problem)

    def _design(self, problem: Any) -> Any:
        try:
            return _quiet(lambda: _front().design(problem))
        except DesignerError as exc:
            raise NoDesignError(self.clean(exc)) from None

    def released(self, study: Study) -> Released:
        """The design the later steps use, with its mechanism file written (as ``designer design --out``)."""
        if study.loaded is not None:
            loaded = study.loaded
            mech = loaded.mechanism
            release = loaded.release
            eps = float(release.epsilon) if release is not None else math.nan
            semantics = "wldp" if release is not None and str(release.semantics) == "wldp" else "sldp"
            prior = np.full(mech.k, 1.0 / mech.k)
            self.names[loaded.upload.path] = "mechanism.json" if loaded.upload.name.endswith(".json") else (
                "mechanism.csv")
            return Released(mech, loaded.upload.path, eps, semantics, prior, loaded=loaded)
        result = self.design(study)
        return self.cached(("released", study.problem_text), lambda: self._write(result))

    def _write(self, result: Any) -> Released:
        from ..cli._common import write_mechanism

        problem = result.problem
        semantics = "wldp" if str(problem.semantics) == "wldp" else "sldp"
        prior = np.asarray(problem.prior, dtype=float)
        if result.mechanism is None:
            return Released(None, "", float(problem.epsilon), semantics, prior, result=result,
                            certificate=result.certificate)
        key = hashlib.sha256(toml_text_of(problem).encode()).hexdigest()[:12]
        path = os.path.join(self.workdir, f"mechanism-{key}.json")
        write_mechanism(result.mechanism, path, problem, result.certificate, overwrite=True, table=result.exact_table)
        self.names[path] = "mechanism.json"
        return Released(result.mechanism, path, float(problem.epsilon), semantics, prior, result=result,
                        certificate=result.certificate)

    def listed(self, study: Study) -> Released:
        """:meth:`released`, refused in words when the design is kept in compact form (steps 3 to 5 need its
        list of answers)."""
        released = self.released(study)
        if released.mechanism is None:
            from ..optimal.engine import EXPAND_INPUTS

            k = released.result.problem.k
            raise NotListedError(f"A design for {k} true answers that may be answered with any set of them is "
                               "computed in compact form (how much goes to answer sets of each size). designer "
                               "writes, plans, fields and analyses such a design only up to "
                               f"{EXPAND_INPUTS} true answers, as the command line does. Ask at most "
                               f"{EXPAND_INPUTS} true answers, or list in step 1 the answers a respondent may give "
                               "and the expected shares.")
        return released

    def identification(self, study: Study) -> Identification:
        """Whether the design on screen identifies every share (see :class:`Identification`)."""
        released = self.released(study)
        return self.cached(("identification", study.design_key), lambda: identify(released))

    def curve(self, study: Study, *, seconds: float = 8.0) -> list[tuple[float, float | None]]:
        """(budget, mean variance) of the question's designs over :data:`CURVE_GRID`; stops designing new budgets
        after ``seconds`` (a large problem gets the part of the curve that was ready)."""
        import time

        if study.problem is None or study.data is None:
            raise BlockedError("No curve without a question.")
        out = []
        start = time.perf_counter()
        for eps in CURVE_GRID:
            text = toml_text({**study.data, "epsilon": eps})
            if time.perf_counter() - start > seconds and ("design", text) not in self._cache:
                break
            try:
                r = self.cached(("design", text), self._designer(study.problem.replace(epsilon=eps)))
            except (DesignerError, BlockedError):
                continue
            out.append((eps, r.variance))
        return out

    # -- the survey ---------------------------------------------------------------------------------
    def plan_width(self, study: Study) -> Any:
        """Respondents for every share's interval to have the asked half-width (:func:`designer.plan`)."""
        ask = study.plan
        if ask.width is None or ask.level is None:
            raise BlockedError("")
        released = self.listed(study)
        return self.cached(("plan_width", study.design_key, ask.width, ask.level), lambda: _front().plan(
            released.source, width=ask.width, level=ask.level, semantics=released.semantics,
            prior=released.prior_text()))

    def plan_n(self, study: Study) -> Any:
        """The half-width with the asked number of respondents."""
        ask = study.plan
        if ask.n is None or ask.level is None:
            raise BlockedError("")
        released = self.listed(study)
        return self.cached(("plan_n", study.design_key, ask.n, ask.level), lambda: _front().plan(
            released.source, n=ask.n, width=0.05, level=ask.level, semantics=released.semantics,
            prior=released.prior_text()))

    def plan_power(self, study: Study) -> Any:
        """Respondents to detect a change in the first share with the asked power."""
        ask = study.plan
        if ask.detect is None or ask.power is None or ask.alpha is None:
            raise BlockedError("")
        released = self.listed(study)
        return self.cached(("plan_power", study.design_key, ask.detect, ask.power, ask.alpha), lambda: _front().plan(
            released.source, detect=ask.detect, power=ask.power, alpha=ask.alpha, semantics=released.semantics,
            prior=released.prior_text()))

    def split(self, study: Study) -> Any:
        """The questionnaire's budget split between this question and the chosen bundled ones."""
        if not study.split_run:
            raise BlockedError("")
        if study.data is None or study.loaded is not None:
            raise BlockedError("A loaded mechanism is not a question to split a budget over; load a problem.")
        if not study.split_with:
            raise FieldError("split_with", "Questions asked with this one: choose at least one")
        if study.split_total is None:
            raise BlockedError("")
        text = self.survey_text(study)
        return self.cached(("split", text), lambda: self._split(text))

    def survey_text(self, study: Study) -> str:
        """The questionnaire file (``survey.toml``) of the split: this question and the chosen ones."""
        from ..optimal.problem_toml import read_toml

        assert study.data is not None and study.split_total is not None
        semantics = str(study.data.get("semantics", "sldp"))
        lines = [toml_text({"name": "questionnaire", "epsilon": study.split_total, "semantics": semantics})]
        seen: set[str] = set()
        questions = [study.data, *(read_toml(p) for p in study.split_with)]
        for i, q in enumerate(questions, start=1):
            body = {k: v for k, v in q.items() if k not in ("epsilon", "semantics", "name")}
            name = str(q.get("name") or f"question{i}")
            name = name if name not in seen else f"{name}-{i}"
            seen.add(name)
            text = "\n[[question]]\n"
            for line in toml_text({"name": name, **body}).splitlines():
                text += (f"[question.{line[1:]}" if line.startswith("[") else line) + "\n"
            lines.append(text)
        return "".join(lines)

    def _split(self, text: str) -> Any:
        path = os.path.join(self.workdir, "survey.toml")
        Path(path).write_text(text, encoding="utf-8")
        self.names[path] = "survey.toml"
        return _quiet(lambda: _front().plan(path))

    # -- the field ----------------------------------------------------------------------------------
    def device(self, study: Study) -> tuple[Any, str]:
        """The design on the chosen device's grid and its printed card (what ``designer design --device D
        --instructions card.html`` writes)."""
        if study.device is None:
            raise BlockedError("")
        if study.problem is None or study.loaded is not None:
            raise BlockedError("A device design starts from a question, not from a loaded mechanism.")
        device = study.device
        return self.cached(("device", study.problem_text, device), lambda: _device(study.problem, device))

    def export(self, study: Study, to: str) -> Any:
        """The respondent's page or a platform's text (:func:`designer.export`)."""
        released = self.listed(study)
        question = study.page_question
        return self.cached(("export", study.design_key, to, question), lambda: _quiet(
            lambda: _front().export(released.path, to=to, question=question)))

    # -- the answers --------------------------------------------------------------------------------
    def estimate(self, study: Study) -> Any:
        """The shares from the uploaded answers (:func:`designer.estimate`)."""
        if study.answers is None:
            raise BlockedError("")
        if study.estimate_level is None:
            raise BlockedError("")
        released = self.listed(study)
        up = study.answers
        self.names[up.path] = up.name
        return self.cached(("estimate", study.design_key, up.digest, study.answer_column, study.estimate_level),
                           lambda: _quiet(lambda: _front().estimate(up.path, released.path, column=study.answer_column,
                                                                   level=study.estimate_level,
                                                                   semantics=released.semantics)))

    def release_key(self, study: Study) -> tuple[Any, ...] | None:
        if study.truth is None or study.design_key is None:
            return None
        return (study.design_key, study.truth.digest, study.truth_column)

    def release(self, study: Study, *, draw: bool = False) -> tuple[Any, str]:
        """The microdata release of the uploaded true answers (:func:`designer.randomize`): drawn when ``draw``,
        else the one drawn before for this very state (:class:`BlockedError` when none was). Returns the result and
        the folder holding ``released.csv``, its manifest and ``mechanism.json``."""
        key = self.release_key(study)
        if key is None:
            raise BlockedError("")
        if not draw:
            if key not in self._releases:
                raise BlockedError("")
            drawn: tuple[Any, str] = self._releases[key]
            return drawn
        released = self.listed(study)
        truth = study.truth
        assert truth is not None
        self.names[truth.path] = truth.name
        folder = os.path.join(self.workdir, f"release-{len(self._releases) + 1}")
        os.makedirs(folder)
        shutil.copyfile(released.path, os.path.join(folder, "mechanism.json"))
        # relative names, as the command line run next to the downloads writes them into the manifest
        with contextlib.chdir(folder):
            result = _quiet(lambda: _front().randomize(truth.path, "mechanism.json", out="released.csv",
                                                       column=study.truth_column))
        self._releases = {key: (result, folder)}  # only the release of the current state is kept
        return result, folder

    # -- the worst case -----------------------------------------------------------------------------
    def credal(self, study: Study) -> Any:
        released = self.listed(study)
        if len(released.mechanism.frame) > 6:
            raise BlockedError(f"With {len(released.mechanism.frame)} answers there are "
                          f"{2 ** len(released.mechanism.frame) - 1:,} events, too many to list here; "
                          "the command line lists them (designer credal mechanism.json).")
        from ..verbs.credal_verb import credal

        return self.cached(("credal", study.design_key), lambda: credal(released.mechanism))

    def tradeoff(self, study: Study) -> Any:
        released = self.listed(study)
        mech = released.mechanism
        return self.cached(("tradeoff", study.design_key), lambda: _front().tradeoff(
            mech, null=mech.inputs[0], alt=mech.inputs[1], points=101))


def toml_text_of(problem: Any) -> str:
    """A stable text of a problem for naming its files (its description and budget)."""
    return f"{problem.describe()}|{problem.epsilon!r}|{list(problem.prior)!r}"


def _front() -> Any:
    """The package's front doors (:mod:`designer`), imported when first needed."""
    import designer

    return designer


def _quiet(compute: Callable[[], T]) -> T:
    """``compute()`` with the library's design warnings silenced (they are in the result's ``warnings``)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DesignWarning)
        return compute()


def _device(problem: Any, device_text: str) -> tuple[Any, str]:
    """The design on a device's grid with its printed card (HTML), as ``designer design --device`` makes them."""
    from ..devices import grid_design, make_rules, parse_device, render

    device = parse_device(device_text)
    g = _quiet(lambda: grid_design(problem, device))
    rules = make_rules(device, g.counts, problem.inputs)
    title = f"{problem.name or 'Instructions'}: {device.name}"
    card = render(device, rules, g.focal_sets, problem.frame, "html", title, words=dict(problem.answers),
                  epsilon=problem.epsilon)
    return g, card


def identify(released: Released) -> Identification:
    """The :class:`Identification` of a released design at its planning prior."""
    from ..closed_forms import krr_variance

    mech = released.mechanism
    result = released.result
    prior = np.asarray(released.prior, dtype=float)
    eps = released.epsilon
    k = len(prior)
    textbook = krr_variance(eps, k, prior=prior) if math.isfinite(eps) and eps > 0 else math.inf
    per = getattr(result, "share_variances", None) if result is not None else None
    per_share = True
    if per is not None:
        shares = np.asarray(per, dtype=float)
    elif mech is not None and released.semantics == "sldp":
        from ..estimation.shares import estimator_variance

        shares = np.asarray(estimator_variance(mech, prior, reduce="none"), dtype=float)
    else:
        value = result.variance if result is not None and result.variance is not None else math.nan
        shares = np.full(k, value, dtype=float)
        per_share = False
    inputs = tuple(result.problem.inputs if result is not None else mech.inputs)
    limit = PRACTICAL_RATIO * textbook
    poor = tuple(x for x, v in zip(inputs, shares) if not math.isnan(v) and not v <= limit)
    alike: list[tuple[str, ...]] = []
    if poor and mech is not None:
        groups: list[list[int]] = []
        for i in range(mech.k):
            for g in groups:
                if float(np.max(np.abs(mech.matrix[g[0]] - mech.matrix[i]))) <= ALIKE:
                    g.append(i)
                    break
            else:
                groups.append([i])
        alike = [tuple(mech.inputs[i] for i in g) for g in groups if len(g) > 1]
    fix, objective = _fix(released, poor)
    mean = float(np.mean(shares)) if shares.size else math.nan
    if result is not None and result.variance is not None:
        mean = float(result.variance)  # the number the command line prints
    return Identification(inputs, tuple(float(v) for v in shares), mean, float(textbook), poor, tuple(alike), fix,
                          objective, per_share)


def _fix(released: Released, poor: tuple[str, ...]) -> tuple[str, str | None]:
    """What to do about a design that does not identify every share, and the objective that would."""
    from ..vocabulary import Objective

    if not poor:
        return "", None
    result = released.result
    if result is None:
        return ("Design one for your question instead: edit the question in step 1 (the studio then designs a "
                "mechanism that estimates every share).", None)
    current = str(result.problem.objective)
    known = {o.value for o in Objective}
    for better in ("variance", "max_variance"):
        if better in known and current != better:
            from .words import objective_words

            return (f"Fix: in step 1, choose \"{objective_words(better).split(':')[0]}\" as what the design should "
                    "favour (it keeps every share estimable), or raise the budget.", better)
    if current != "truthful" and "truthful" in known:
        return ("Fix: in step 1, choose \"Most respondents report exactly their true answer\" as what the design "
                "should favour, or give flatter expected shares, or raise the budget.", "truthful")
    return ("Fix: raise the budget, or allow more answers (step 1), so that every true answer is answered "
            "differently.", None)
