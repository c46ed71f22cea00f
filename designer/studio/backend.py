"""The studio's one door to the library: every design, plan, export, estimate and release the studio shows.

Designs are computed by :func:`designer.optimal.engine.design` (the function ``designer design`` calls, so the
numbers are the CLI's by construction) and cached per budget. The other verbs (plan, credal, tradeoff, device
designs, export, estimate, randomize) run the CLI's own command functions in this process with
``--format json`` and the studio reads their JSON: the estimator choice and the survey reader live there
today. When the library grows front doors for these verbs (``designer.estimate``, ``designer.plan``, ...)
each ``_verb`` call below becomes one call of them; nothing else in the studio calls the library.

Every call is recorded as the exact ``designer`` command line that reproduces it, with the studio's working
files named as the downloads name them (``problem.toml``, ``mechanism.json``, ...).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import math
import os
import re
import shlex
import warnings
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..exceptions import CommandError, DesignerError, DesignWarning

__all__ = ["BUNDLED", "Backend", "Current", "StudioError", "num", "textbook_designs", "toml_text", "variance_words"]

#: Problems shipped with the repository (``problems/*.toml``), when the studio runs from a checkout.
BUNDLED = Path(__file__).resolve().parents[2] / "problems"
#: Designs kept per session (one per budget and problem).
CACHE_SIZE = 512
_BARE_KEY = re.compile(r"^[A-Za-z0-9_-]+$")


#: A problem with what the user asked for, shown on screen as one line (never a traceback); the CLI's
#: one-line error, so that ``designer studio`` reports a bad FILE or --port as every command does (exit 2).
StudioError = CommandError


def _toml_key(key: str) -> str:
    return key if _BARE_KEY.match(key) else json.dumps(key)


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    if isinstance(value, (float, np.floating)):
        return repr(float(value))
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{_toml_key(k)} = {_toml_value(v)}" for k, v in value.items()) + " }"
    raise StudioError(f"cannot write {value!r} to a problem file")


def toml_text(data: dict[str, Any]) -> str:
    """A problem file (TOML) for ``data``, the dictionary :func:`tomllib.loads` gives for it.

    Plain keys first, then one ``[table]`` per dictionary value (its dictionary values as inline tables),
    so that ``tomllib.loads(toml_text(d)) == d`` for every problem the studio writes.
    """
    lines = [f"{_toml_key(k)} = {_toml_value(v)}" for k, v in data.items() if not isinstance(v, dict)]
    for key, table in data.items():
        if isinstance(table, dict):
            lines += ["", f"[{_toml_key(key)}]"]
            lines += [f"{_toml_key(k)} = {_toml_value(v)}" for k, v in table.items()]
    return "\n".join(lines) + "\n"


def _gwrr_variance(p: float, q: float, pi: float) -> float:
    """Per-respondent variance of the MLE of Q_2x3(p, q) (Thm 3.10, n -> inf)."""
    if p == q:
        return math.inf
    return (-((pi - 0.5) ** 2) + 0.25 * ((p + q) / (p - q)) ** 2) / (p + q)


def textbook_designs(problem: Any, eps: float) -> list[tuple[str, str, float, float]]:
    """(name, reference, truthful probability, variance per respondent) of the textbook designs at ``eps``:
    Warner (Ex 3.7, Eq 1) and GWRR (Cor 3.12) for two inputs, k-RR for any number."""
    from .._internal.numeric import rr_probabilities
    from .._internal.render import fmt
    from ..closed_forms import gwrr_sldp, krr_variance, warner_variance

    rows = []
    prior = np.asarray(problem.prior, dtype=float)
    if problem.k == 2:
        p = rr_probabilities(eps, 1)[0]
        rows.append(("Warner", "Ex 3.7, Eq 1", p, warner_variance(p, float(prior[0]))))
        c = 1.0 - (problem.dont_know or 0.0)
        try:
            pg, qg = gwrr_sldp(eps, c)
            rows.append((f"GWRR, answer mass {fmt(c, 6)}", "Cor 3.12", pg, _gwrr_variance(pg, qg, float(prior[0]))))
        except DesignerError:
            pass
    p = rr_probabilities(eps, problem.k - 1)[0]
    rows.append((f"{problem.k}-RR", "k-ary randomized response", p, krr_variance(eps, problem.k, prior=prior)))
    return rows


def variance_words(kind: str) -> str:
    """What a design's variance is, in the words ``designer design`` prints after it."""
    from ..optimal.objectives import VARIANCE_KINDS

    return str(VARIANCE_KINDS[kind])


@dataclass(frozen=True)
class Current:
    """What the budget step shows: a designed (or loaded) mechanism and its figures.

    ``result`` is the :class:`~designer.optimal.result.DesignResult` of a design (``None`` for a loaded
    mechanism file); ``path`` the mechanism JSON with its release block, which every later verb reads.
    """

    mechanism: Any
    path: str
    epsilon: float
    result: Any = None
    release: Any = None


def num(x: float) -> str:
    """A number as a command line takes it, without loss (``1`` for 1.0, ``0.15`` for 0.15)."""
    text = repr(float(x))
    return text[:-2] if text.endswith(".0") else text


def _short(path: str, names: dict[str, str]) -> str:
    return names.get(path, os.path.basename(path))


class Backend:
    """One session's calls of the library, its working folder and the command lines that reproduce them.

    Parameters
    ----------
    workdir : str
        A private folder of the session: the problem file, designed mechanisms and exports are written there.
    parser : callable
        Builds the CLI's argument parser (``designer.cli.build_parser``), handed in by the CLI that starts the
        studio: the studio sits beside the CLI and does not import it.
    """

    def __init__(self, workdir: str, parser: Callable[[], argparse.ArgumentParser]) -> None:
        self.workdir = workdir
        self._parser = parser
        self._designs: OrderedDict[tuple[str, float], Any] = OrderedDict()
        self._verbs: dict[tuple[str, ...], Any] = {}
        #: The command line of each kind of call, newest last (shown under "the exact CLI commands").
        self.commands: OrderedDict[str, str] = OrderedDict()
        self.names: dict[str, str] = {}
        self.problem_path = os.path.join(workdir, "problem.toml")
        self.names[self.problem_path] = "problem.toml"
        self._problem_text = ""

    # -- the question --------------------------------------------------------------------------------
    def set_problem(self, data: dict[str, Any]) -> Any:
        """Check ``data`` as ``designer`` checks a problem file, write it to ``problem.toml`` and return the
        :class:`~designer.optimal.problem.DesignProblem`; a bad problem raises :class:`StudioError`."""
        from .._internal.io import atomic_write_text
        from ..optimal.problem_toml import parse_problem

        text = toml_text(data)
        try:
            problem = parse_problem(data, source=self.problem_path)
        except DesignerError as exc:
            raise StudioError(" ".join(str(exc).replace(self.problem_path + ": ", "").split())) from None
        if text != self._problem_text:
            atomic_write_text(self.problem_path, text, overwrite=True)
            self._problem_text = text
        return problem

    @staticmethod
    def read_problem(path: str) -> dict[str, Any]:
        """The TOML dictionary of a problem file (errors as :class:`StudioError`)."""
        from ..optimal.problem_toml import parse_problem, read_toml

        try:
            data = read_toml(path)
            parse_problem(data, source=path)
        except DesignerError as exc:
            raise StudioError(" ".join(str(exc).split())) from None
        return data

    @staticmethod
    def read_mechanism(path: str, shown: str) -> Current:
        """A mechanism file (CSV or JSON) as the budget step shows it, checked against the release it states."""
        from ..release.files import open_mechanism_file

        try:
            file = open_mechanism_file(path)
        except (DesignerError, OSError) as exc:
            raise StudioError(f"{shown}: {' '.join(str(exc).replace(path, shown).split())}") from None
        eps = file.release.epsilon if file.release is not None else math.nan
        return Current(file.mechanism, path, eps, None, file.release)

    # -- the budget ----------------------------------------------------------------------------------
    def design(self, problem: Any, epsilon: float, *, record: bool = True) -> Current:
        """The certified design of ``problem`` at ``epsilon`` (``designer design problem.toml --eps E``),
        cached per problem and budget; the mechanism JSON is written as ``design --out`` writes it."""
        from ..cli._common import write_mechanism
        from ..optimal.engine import design

        epsilon = float(epsilon)
        key = (self._problem_text, epsilon)
        if record:
            self.commands["design"] = (f"designer design problem.toml --eps {num(epsilon)} --out mechanism.json "
                                       "--format json")
        if key in self._designs:
            self._designs.move_to_end(key)
            return self._designs[key]
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", DesignWarning)
                result = design(problem.replace(epsilon=epsilon))
        except DesignerError as exc:
            raise StudioError(" ".join(str(exc).split())) from None
        path = ""
        if result.mechanism is not None:
            path = os.path.join(self.workdir, f"mechanism-{len(self._designs)}-{num(epsilon)}.json")
            write_mechanism(result.mechanism, path, result.problem, result.certificate, overwrite=True,
                            table=result.exact_table)
            self.names[path] = "mechanism.json"
        current = Current(result.mechanism, path, epsilon, result)
        self._designs[key] = current
        while len(self._designs) > CACHE_SIZE:
            self._designs.popitem(last=False)
        return current

    def curve(self, problem: Any, grid: list[float], *, seconds: float = 8.0
              ) -> list[tuple[float, float | None, float]]:
        """(epsilon, variance per respondent, objective) of the designs over ``grid`` (cached designs); stops
        designing new budgets after ``seconds`` (a large problem gets the part of the curve that was ready)."""
        import time

        out = []
        start = time.perf_counter()
        for eps in grid:
            if time.perf_counter() - start > seconds and (self._problem_text, float(eps)) not in self._designs:
                break
            try:
                r = self.design(problem, eps, record=False).result
            except StudioError:
                continue
            out.append((eps, r.variance, r.objective_value))
        self.commands["curve"] = (f"designer sweep problem.toml --epsilon {','.join(f'{num(e)}' for e in grid)} "
                                  "--format json")
        return out

    # -- the other verbs, run in process -------------------------------------------------------------
    def _verb(self, kind: str, argv: list[str], *, record: bool = True, cache: bool = True) -> str:
        """Run ``designer ARGV`` in this process and return its output (errors as :class:`StudioError`)."""
        # a file read again after an upload under the same name is a new call: its stamp is part of the key
        key = tuple(argv) + tuple(str(os.stat(a).st_mtime_ns) for a in argv if os.path.isfile(a))
        if record:
            self.commands[kind] = "designer " + " ".join(shlex.quote(_short(a, self.names)) for a in argv)
        if cache and key in self._verbs:
            return str(self._verbs[key])
        parser = self._parser()
        err = io.StringIO()
        try:
            with contextlib.redirect_stderr(err), warnings.catch_warnings():
                warnings.simplefilter("ignore", DesignWarning)
                args = parser.parse_args(argv)
                text = str(args.func(args))
        except SystemExit:
            raise StudioError(self._clean(err.getvalue())) from None
        except (DesignerError, OSError) as exc:
            raise StudioError(self._clean(str(exc))) from None
        if cache:
            self._verbs[key] = text
        return text

    def _clean(self, message: str) -> str:
        message = message.replace("designer: error: ", "")
        for path, shown in self.names.items():
            message = message.replace(path, shown)
        return " ".join(message.replace(self.workdir + os.sep, "").split())

    def verb_json(self, kind: str, argv: list[str], *, record: bool = True) -> Any:
        """``designer ARGV --format json``, parsed."""
        return json.loads(self._verb(kind, [*argv, "--format", "json"], record=record))

    def credal(self, path: str) -> Any:
        return self.verb_json("credal", ["credal", path])

    def tradeoff(self, path: str, null: str, alt: str, points: int = 101) -> Any:
        return self.verb_json("tradeoff", ["tradeoff", path, "--null", null, "--alt", alt, "--points", str(points)])

    def plan_width(self, path: str, width: float, level: float, semantics: str, prior: str) -> Any:
        """Respondents for a target half-width (``designer plan mechanism.json --width W``)."""
        return self.verb_json("plan_width", ["plan", path, "--width", f"{num(width)}", "--level", f"{num(level)}",
                                             "--semantics", semantics, "--prior", prior])

    def plan_at_n(self, path: str, n: int, level: float, semantics: str, prior: str) -> Any:
        """The half-width with ``n`` respondents (``designer plan mechanism.json --n N --width W``)."""
        return self.verb_json("plan_n", ["plan", path, "--n", str(n), "--width", "0.05", "--level", f"{num(level)}",
                                         "--semantics", semantics, "--prior", prior])

    def plan_power(self, path: str, detect: float, power: float, alpha: float, semantics: str, prior: str) -> Any:
        """Respondents to detect a difference in the first share (``designer plan mechanism.json --detect D``)."""
        return self.verb_json("plan_power", ["plan", path, "--detect", f"{num(detect)}", "--power", f"{num(power)}",
                                             "--alpha", f"{num(alpha)}", "--semantics", semantics, "--prior", prior])

    def plan_split(self, questions: list[dict[str, Any]], total: float, semantics: str) -> Any:
        """Split ``total`` over a questionnaire (``designer plan survey.toml``): one ``[[question]]`` each."""
        from .._internal.io import atomic_write_text

        lines = [f"name = \"questionnaire\"\nepsilon = {total!r}\nsemantics = {json.dumps(semantics)}\n"]
        seen: set[str] = set()
        for i, q in enumerate(questions, start=1):
            body = {k: v for k, v in q.items() if k not in ("epsilon", "semantics", "name")}
            name = str(q.get("name") or f"question{i}")
            name = name if name not in seen else f"{name}-{i}"
            seen.add(name)
            table = toml_text({"name": name, **body})
            text = "\n[[question]]\n"
            for line in table.splitlines():
                text += (f"[question.{line[1:]}" if line.startswith("[") else line) + "\n"
            lines.append(text)
        path = os.path.join(self.workdir, "survey.toml")
        atomic_write_text(path, "".join(lines), overwrite=True)
        self.names[path] = "survey.toml"
        return self.verb_json("plan_split", ["plan", path])

    def device(self, epsilon: float, device: str) -> tuple[Any, str]:
        """The design on a device's grid and its printed card (``design --device D --instructions card.html``)."""
        card = os.path.join(self.workdir, f"card-{re.sub(r'[^a-z0-9]+', '-', device)}-{num(epsilon)}.html")
        self.names[card] = "card.html"
        data = self.verb_json("device", ["design", self.problem_path, "--eps", f"{num(epsilon)}", "--device", device,
                                         "--instructions", card, "--force"])
        return data, Path(card).read_text(encoding="utf-8")

    def export(self, path: str, to: str, question: str = "Your answer") -> str:
        """The exported page or platform snippet of a mechanism file (``designer export``), as text."""
        suffix = {"html": "html", "qualtrics": "qualtrics.txt", "limesurvey": "limesurvey.txt", "js": "js"}[to]
        stamp = os.stat(path).st_mtime_ns
        out = os.path.join(self.workdir, f"export-{abs(hash((path, stamp, to, question)))}.{suffix}")
        self.names[out] = f"page.{suffix}" if to == "html" else suffix
        if not os.path.exists(out):
            self._verb(f"export_{to}", ["export", path, "--to", to, "--question", question, "--out", out, "--force"])
        else:
            self.commands[f"export_{to}"] = ("designer export mechanism.json --to " + to + " --question "
                                             + shlex.quote(question) + " --out " + self.names[out])
        return Path(out).read_text(encoding="utf-8")

    def estimate(self, answers: str, shown: str, path: str, column: str, level: float, semantics: str) -> Any:
        """Estimates with intervals and the fit's status (``designer estimate FILE --mechanism M``)."""
        self.names[answers] = shown
        return self.verb_json("estimate", ["estimate", answers, "--mechanism", path, "--column", column,
                                           "--level", f"{num(level)}", "--semantics", semantics])

    def release(self, truth: str, shown: str, path: str, column: str) -> tuple[str, str, str]:
        """Randomize true answers into a microdata release with its manifest (``designer randomize``): returns
        the released CSV, its manifest and the command's summary."""
        self.names[truth] = shown
        out = os.path.join(self.workdir, "released.csv")
        manifest = out + ".manifest.json"
        for p in (out, manifest):
            if os.path.exists(p):
                os.unlink(p)
        self.names[out] = "released.csv"
        self.names[manifest] = "released.csv.manifest.json"
        argv = ["randomize", truth, "--mechanism", path, "--column", column, "--out", out, "--format", "json"]
        text = self._verb("release", argv, cache=False)  # a release is drawn afresh every time
        return out, manifest, text

    def command_lines(self) -> str:
        """The command lines that reproduce the screen, in the order of the steps."""
        order = ["design", "curve", "credal", "tradeoff", "plan_width", "plan_n", "plan_power", "plan_split",
                 "device", "export_html", "export_qualtrics", "export_limesurvey", "estimate", "release"]
        keys = sorted(self.commands, key=lambda k: order.index(k) if k in order else len(order))
        return "\n".join(self.commands[k] for k in keys)
