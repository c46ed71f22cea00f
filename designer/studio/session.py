"""The studio's lab: what the session's state (:class:`~designer.studio.state.Study`) asks for, computed through the
library's front doors (:func:`designer.design`, :func:`designer.plan`, :func:`designer.export`,
:func:`designer.estimate`, :func:`designer.randomize`, :func:`designer.tradeoff` and the credal sets), keeping their
Result objects (no command-line parser, no JSON text in between).

Results are cached by the state's keys, so a new question makes new results and nothing computed for an older
state is shown, offered for download or listed as a command.
"""

from __future__ import annotations

import contextlib
import hashlib
import math
import os
import shutil
import warnings
from collections import OrderedDict
from collections.abc import Callable
from typing import Any, TypeVar

import numpy as np

from .._internal.io import atomic_write_text
from ..exceptions import DesignerError, DesignWarning, FieldError, NotReadyError
from .estimable import Identification, identify
from .fields import toml_text
from .state import Loaded, Released, Study, Upload, internal_error, plain_error

__all__ = ["CURVE_GRID", "Lab", "Loaded", "Released", "Study", "Upload", "internal_error", "mechanism_name"]

#: The budgets of the privacy/accuracy curve (nats).
CURVE_GRID = (0.25, 0.5, 0.75, 1.0, 1.25, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0)
#: Results kept per session (designs, plans, exports, estimates), oldest dropped first.
CACHE_SIZE = 256

T = TypeVar("T")


def mechanism_name(study: Study) -> str:
    """The name the studio gives the design's file next to the downloads: ``mechanism.json``, or ``mechanism.csv``
    when the question is a loaded CSV mechanism file (used as it is, so it keeps its kind)."""
    loaded = study.loaded
    return "mechanism.csv" if loaded is not None and not loaded.upload.name.lower().endswith(".json") else (
        "mechanism.json")


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
        self._curve_time: dict[str, float] = {}
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
            except (DesignerError, NotReadyError, FieldError, OSError) as exc:
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
        """The certified design of the study's problem (:func:`designer.design`), or :class:`NotReadyError`."""
        if study.problem is None:
            raise NotReadyError("No design yet: the question in step 1 has a field to fix.", "question")
        if study.epsilon is None:
            raise NotReadyError("No design yet: the budget in step 2 has a value to fix.", "question")
        return self.cached(("design", study.problem_text), lambda: self._design(study.problem))

    def _designer(self, problem: Any) -> Callable[[], Any]:
        return lambda: self._design(problem)

    def _design(self, problem: Any) -> Any:
        try:
            return _quiet(lambda: _front().design(problem))
        except DesignerError as exc:
            raise NotReadyError(self.clean(exc), "design") from None

    def released(self, study: Study) -> Released:
        """The design the later steps use, with its mechanism file written (as ``designer design --out``)."""
        if study.loaded is not None:
            loaded = study.loaded
            mech = loaded.mechanism
            release = loaded.release
            eps = float(release.epsilon) if release is not None else math.nan
            semantics = "wldp" if release is not None and str(release.semantics) == "wldp" else "sldp"
            prior = np.full(mech.k, 1.0 / mech.k)
            self.names[loaded.upload.path] = mechanism_name(study)
            return Released(mech, loaded.upload.path, eps, semantics, prior, loaded=loaded)
        result = self.design(study)
        return self.cached(("released", study.problem_text), lambda: self._write(result))

    def _write(self, result: Any) -> Released:
        from ..release.mechanism_out import write_mechanism

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
            raise NotReadyError(f"A design for {k} true answers that may be answered with any set of them is "
                                "computed in compact form (how much goes to answer sets of each size). designer "
                                "writes, plans, fields and analyses such a design only up to "
                                f"{EXPAND_INPUTS} true answers, as the command line does. Ask at most "
                                f"{EXPAND_INPUTS} true answers, or list in step 1 the answers a respondent may give "
                                "and the expected shares.", "listed")
        return released

    def identification(self, study: Study) -> Identification:
        """Whether the design on screen identifies every share (see :class:`Identification`)."""
        released = self.released(study)
        return self.cached(("identification", study.design_key), lambda: identify(released))

    def curve(self, study: Study, *, seconds: float = 0.5, limit: float = 30.0
              ) -> tuple[list[tuple[float, float | None]], bool]:
        """(budget, mean variance) of the question's designs over :data:`CURVE_GRID`, and whether the curve is
        complete. Designs new budgets for about ``seconds`` a call (the page asks again until it is complete, so
        that a slider move never waits for the whole curve), and gives up on the budgets left after ``limit``
        seconds in all (a large problem gets the part of the curve that was ready)."""
        import time

        if study.problem is None or study.data is None:
            raise NotReadyError("No curve without a question.")
        spent = self._curve_time.setdefault(study.problem_text, 0.0)
        out = []
        complete = True
        start = time.perf_counter()
        for eps in CURVE_GRID:
            text = toml_text({**study.data, "epsilon": eps})
            if ("design", text) not in self._cache and (
                    time.perf_counter() - start > seconds or spent + time.perf_counter() - start > limit):
                complete = spent + time.perf_counter() - start > limit
                if not complete:
                    break
                continue
            try:
                r = self.cached(("design", text), self._designer(study.problem.replace(epsilon=eps)))
            except (DesignerError, NotReadyError):
                continue
            out.append((eps, r.variance))
        self._curve_time[study.problem_text] = spent + time.perf_counter() - start
        return out, complete

    # -- the survey ---------------------------------------------------------------------------------
    def plan_width(self, study: Study) -> Any:
        """Respondents for every share's interval to have the asked half-width (:func:`designer.plan`)."""
        ask = study.plan
        if ask.width is None or ask.level is None:
            raise NotReadyError("")
        released = self.listed(study)
        return self.cached(("plan_width", study.design_key, ask.width, ask.level), lambda: _front().plan(
            released.source, width=ask.width, level=ask.level, semantics=released.semantics,
            prior=released.prior_text()))

    def plan_n(self, study: Study) -> Any:
        """The half-width with the asked number of respondents (planned with the target half-width the screen
        shows: one plan gives both, as ``designer plan --n N --width W`` does)."""
        ask = study.plan
        if ask.n is None or ask.level is None:
            raise NotReadyError("")
        if ask.width is None:
            raise NotReadyError("Type the half-width of the target interval too (above).")
        released = self.listed(study)
        return self.cached(("plan_n", study.design_key, ask.n, ask.width, ask.level), lambda: _front().plan(
            released.source, n=ask.n, width=ask.width, level=ask.level, semantics=released.semantics,
            prior=released.prior_text()))

    def preview(self, study: Study) -> Any:
        """A simulated survey of the planned size at the expected shares, randomized and estimated through the
        front doors (:func:`designer.studio.preview.simulate`), reproducible by its seed."""
        from .preview import PREVIEW_MAX, simulate

        ask = study.plan
        if ask.seed is None or ask.level is None:
            raise NotReadyError("")
        plan = self.plan_width(study)
        released = self.listed(study)
        if plan.n > PREVIEW_MAX:
            raise NotReadyError(f"The planned survey has {plan.n:,} respondents: too many to simulate here (at most "
                                f"{PREVIEW_MAX:,}); the command line simulates any size (designer synthesize, then "
                                "designer randomize --simulation and designer estimate).")
        inputs = tuple(released.mechanism.inputs)
        seed, level = int(ask.seed), float(ask.level)
        return self.cached(("preview", study.design_key, plan.n, seed, level), lambda: simulate(
            released.source, inputs, released.prior, n=plan.n, seed=seed, level=level, semantics=released.semantics))

    def plan_power(self, study: Study) -> Any:
        """Respondents to detect a change in the first share with the asked power."""
        ask = study.plan
        if ask.detect is None or ask.power is None or ask.alpha is None:
            raise NotReadyError("")
        released = self.listed(study)
        return self.cached(("plan_power", study.design_key, ask.detect, ask.power, ask.alpha), lambda: _front().plan(
            released.source, detect=ask.detect, power=ask.power, alpha=ask.alpha, semantics=released.semantics,
            prior=released.prior_text()))

    def split(self, study: Study) -> Any:
        """The questionnaire's budget split between this question and the chosen bundled ones."""
        if not study.split_run:
            raise NotReadyError("")
        if study.data is None or study.loaded is not None:
            raise NotReadyError("A loaded mechanism is not a question to split a budget over; load a problem.")
        if not study.split_with:
            raise FieldError("split_with", "Questions asked with this one: choose at least one")
        if study.split_total is None:
            raise NotReadyError("")
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
        atomic_write_text(path, text, overwrite=True)
        self.names[path] = "survey.toml"
        return _quiet(lambda: _front().plan(path))

    # -- the field ----------------------------------------------------------------------------------
    def device(self, study: Study) -> tuple[Any, str]:
        """The design on the chosen device's grid and its printed card (what ``designer design --device D
        --instructions card.html`` writes)."""
        if study.device is None:
            raise NotReadyError("")
        if study.problem is None or study.loaded is not None:
            raise NotReadyError("A device design starts from a question, not from a loaded mechanism.")
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
            raise NotReadyError("")
        if study.estimate_level is None:
            raise NotReadyError("")
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
        else the one drawn before for this very state (:class:`NotReadyError` when none was). Returns the result and
        the folder holding ``released.csv``, its manifest and the mechanism file (``mechanism.json``, or
        ``mechanism.csv`` for a loaded CSV mechanism: a file keeps its kind, the manifest names it)."""
        key = self.release_key(study)
        if key is None:
            raise NotReadyError("")
        if not draw:
            if key not in self._releases:
                raise NotReadyError("")
            drawn: tuple[Any, str] = self._releases[key]
            return drawn
        released = self.listed(study)
        truth = study.truth
        assert truth is not None
        self.names[truth.path] = truth.name
        folder = os.path.join(self.workdir, f"release-{len(self._releases) + 1}")
        os.makedirs(folder)
        mech = mechanism_name(study)
        shutil.copyfile(released.path, os.path.join(folder, mech))
        # relative names, as the command line run next to the downloads writes them into the manifest
        with contextlib.chdir(folder):
            result = _quiet(lambda: _front().randomize(truth.path, mech, out="released.csv",
                                                       column=study.truth_column))
        self._releases = {key: (result, folder)}  # only the release of the current state is kept
        return result, folder

    # -- the worst case -----------------------------------------------------------------------------
    def credal(self, study: Study) -> Any:
        released = self.listed(study)
        if len(released.mechanism.frame) > 6:
            raise NotReadyError(f"With {len(released.mechanism.frame)} answers there are "
                          f"{2 ** len(released.mechanism.frame) - 1:,} events, too many to list here; "
                          "the command line lists them (designer credal mechanism.json).")
        from ..verbs.credal_verb import credal

        return self.cached(("credal", study.design_key), lambda: credal(released.mechanism))

    def audit(self, study: Study) -> Any:
        """Every privacy loss of the design on screen, with the answers attaining it (:func:`designer.audit`)."""
        released = self.listed(study)
        return self.cached(("audit", study.design_key), lambda: _front().audit(released.mechanism))

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
