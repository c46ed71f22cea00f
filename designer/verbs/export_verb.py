"""``designer.export``: a certified randomizer for the respondent's screen, from a mechanism file, a problem or an
in-memory design.

The front door of ``designer export``: it finds the design (:func:`designer.release.sources.design_of`, or a TOML
problem designed on a device's grid), builds the certified exact table the page draws from
(:func:`designer.release.exports.randomizer_for`), writes the text (an ES module, a self-contained page, or a
survey platform's set-up text) and returns an :class:`Exported` result.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from .._internal.keywords import read_allocation, say, shown
from ..exceptions import InvalidArgumentError, InvalidArgumentTypeError
from ..results import FitStatus, Result, TableData

__all__ = ["Exported", "export"]

#: What ``to`` may be.
TARGETS = ("js", "html", "qualtrics", "limesurvey")
#: The languages of the respondent's fixed texts.
LANGUAGES = ("en", "fr", "de")


@dataclass(frozen=True)
class Exported(Result):
    """An exported randomizer: the text written and the certified table it draws from.

    Attributes
    ----------
    text : str
        The ES module, the page or the set-up text.
    out : str or None
        The file it was written to (None: not written).
    to : {"js", "html", "qualtrics", "limesurvey"}
    randomizer : ExportedRandomizer
        The certified exact table (``randomizer.table``: :class:`~designer.guarantees.exact_table.ExactTable`) and
        the answers the page shows.
    status : FitStatus
        ``EXACT``: the table is decided in integer arithmetic.
    warnings : tuple of str

    Examples
    --------
    >>> import designer
    >>> module = designer.export(designer.Q_WRR(1.0), to="js")
    >>> module.to, module.out, module.text.startswith("// A certified randomizer")
    ('js', None, True)
    """

    text: str
    out: str | None
    to: str
    randomizer: Any
    status: FitStatus = FitStatus.EXACT
    warnings: tuple[str, ...] = field(default=())

    title = "Export"

    def __post_init__(self) -> None:
        self._check_status()

    @property
    def bytes(self) -> int:
        """Size of the text in UTF-8 bytes."""
        return len(self.text.encode())

    def to_dict(self) -> dict[str, Any]:
        """The ``designer export --format json`` object."""
        table = self.randomizer.table
        out: dict[str, Any] = {"out": self.out, "to": self.to, "sha256": table.sha256, "epsilon": table.epsilon,
                               "semantics": table.semantics.value, "denominator": table.denominator,
                               "max_change": table.max_change, "inputs": list(table.inputs),
                               "answers": list(self.randomizer.answers), "bytes": self.bytes}
        if self.randomizer.objective is not None:
            name, designed, drawn = self.randomizer.objective
            out.update(objective=name, objective_value=designed, table_objective_value=drawn)
        return out

    def table(self) -> TableData:
        """The ``--format csv`` row: the file, the target, the table's hash, budget and size."""
        table = self.randomizer.table
        return (["out", "to", "sha256", "epsilon", "semantics", "inputs", "answers", "bytes"],
                [[self.out, self.to, table.sha256, table.epsilon, table.semantics.value, len(table.inputs),
                  len(self.randomizer.answers), self.bytes]])

    def summary(self) -> str:
        """The ``--format table`` text: what was written, the certificate, the objective's cost and the largest
        change of a probability by the table."""
        table = self.randomizer.table
        what = {"html": "a self-contained page", "js": "an ES module"}.get(
            self.to, f"{self.to} set-up text with the question's HTML and JavaScript,")
        where = f"wrote {self.out}" if self.out is not None else "exported"
        lines = [f"{where} ({self.bytes} bytes): {what} drawing exactly from its table; SHA-256 {table.sha256}",
                 *table.certificate.lines()]  # 'certified: ...', the line every certificate prints
        if self.randomizer.objective is not None:
            name, designed, drawn = self.randomizer.objective
            change = abs(drawn - designed) / abs(designed) if designed else abs(drawn - designed)
            lines.append(f"objective {name}: {designed:.10g} designed, {drawn:.10g} as drawn (the table's cost: "
                         f"{100 * change:.2g}%)")
        lines.append(f"largest change of a probability by the table: {table.max_change:.3g}")
        lines += [f"warning: {w}" for w in self.warnings]
        return "\n".join(lines)


def export(mechanism: Any, *, to: str = "js", out: str | os.PathLike[str] | None = None,
           question: str = "Your answer", lang: str = "en",
           strings: str | os.PathLike[str] | Mapping[str, str] | None = None, submit_url: str | None = None,
           post_message: str | None = None, semantics: str = "sldp", allocation: str | float = "uniform",
           force: bool = False, device: str | None = None, denominator: int | None = None,
           show_device: bool = False) -> Exported:
    """Export a certified randomizer: the page, module or survey text draws each answer exactly from the
    mechanism's table of integer counts, certified within the budget (Def 3.1; docs/theory.md section 7.5).

    Keywords are ``designer export``'s flags (``--submit-url`` is ``submit_url``) with the same defaults.

    Parameters
    ----------
    mechanism : str, path-like, DesignProblem, DesignResult, CertifiedMechanism or Mechanism
        A mechanism file (CSV or JSON, whose release is checked), a TOML problem (designed here, on ``device``'s
        grid if given), or an in-memory design of ``k`` inputs and ``F`` answer sets.
    to : {"js", "html", "qualtrics", "limesurvey"}
        An ES module with ``sample(input)``, a self-contained page, or a survey platform's set-up text.
    out : str or path-like, optional
        The file to write (atomically; an existing file only with ``force``). Without it nothing is written and
        the text is in the result.
    question : str
        html and platforms: the question above the choices.
    lang : {"en", "fr", "de"}
        The language of the respondent's fixed texts.
    strings : str, path-like or mapping of str to str, optional
        Texts replacing the fixed ones of ``lang`` (a ``.json`` or ``.toml`` file, or the mapping itself; keys of
        :data:`designer.devices.words.STRINGS`). Not for ``js``.
    submit_url, post_message : str, optional
        html: an ``https://`` address the page may POST the report to; the origin of an embedding page that
        receives it by ``postMessage``.
    semantics : {"sldp", "wldp"}
        ``sldp``: report answer sets; ``wldp``: precise answers of the ``allocation`` member.
    allocation : "uniform" or float in [0, 1]
    force : bool
        Replace an existing ``out``.
    device : str, optional
        With a TOML problem: design it on a device's grid (``die``, ``dice2``, ``cards``, ``coins:N``,
        ``spinner:D``) and draw with exactly its fractions.
    denominator : int, optional
        With a TOML problem: design it on a grid of ``denominator`` outcomes.
    show_device : bool
        html with ``device``: the page throws the device and shows its outcome.

    Returns
    -------
    Exported
        ``to_dict()`` is the ``--format json`` object; ``text`` the exported text.

    Raises
    ------
    InvalidArgumentError
        A bad keyword or an existing ``out`` (one line naming it); a bad mechanism file is an
        :class:`~designer.exceptions.InvalidMechanismError`.

    Examples
    --------
    A self-contained web page for the mechanism ``Q_2x3(0.6, 0.2)`` (the text is written to ``out`` when given):

    >>> import designer
    >>> page = designer.export(designer.Q_2x3(0.6, 0.2), to="html", question="Have you ever cheated on an exam?")
    >>> page.text.startswith("<!doctype html>"), page.to_dict()["denominator"] == 2**53
    (True, True)
    >>> round(page.to_dict()["epsilon"], 4)  # certified within its Shafer loss, ln 3
    1.0986
    """
    from .._internal.io import atomic_writer
    from ..release.exports import device_view, export_html, export_js, randomizer_for
    from ..release.platforms import export_platform
    from ..release.sources import source_name

    if to not in TARGETS:
        raise InvalidArgumentError(f"{shown('to')} must be one of {', '.join(TARGETS)}, got {to!r}")
    if lang not in LANGUAGES:
        raise InvalidArgumentError(f"{shown('lang')} must be one of {', '.join(LANGUAGES)}, got {lang!r}")
    if semantics not in ("sldp", "wldp"):
        raise InvalidArgumentError(f"{shown('semantics')} must be sldp or wldp, got {semantics!r}")
    chosen = read_allocation(allocation, shown("allocation"))
    name = source_name(mechanism)
    path = os.fspath(out) if out is not None else None
    if path is not None:
        from .._internal.keywords import check_output

        check_output(path, [p for p in (mechanism, strings, device) if isinstance(p, str | os.PathLike)], force)
    if show_device and (to != "html" or (device is None and denominator is None)):
        raise InvalidArgumentError(say("{show_device} is for {to=html} with {device} (the page throws the device it "
                                       "was designed on)"))
    texts = _strings(strings, to)
    mech, epsilon, problem, grid, exact, words = _design(mechanism, device, denominator)
    try:
        randomizer = randomizer_for(mech, epsilon=epsilon, semantics=semantics, allocation=chosen,
                                    problem=problem, exact=exact, words=words)
    except ValueError as exc:
        raise InvalidArgumentError(f"{name}: {exc}") from None
    if to == "html":
        try:
            view = device_view(grid) if show_device else None
        except ValueError as exc:
            raise InvalidArgumentError(f"{shown('show_device')}: {exc}") from None
        try:
            text = export_html(randomizer, question=question, submit_url=submit_url, post_message=post_message,
                               device=view, lang=lang, strings=texts)
        except ValueError as exc:
            raise InvalidArgumentError(f"{shown('submit_url')}: {exc}") from None
    elif to in ("qualtrics", "limesurvey"):
        text = export_platform(randomizer, to, question=question, mechanism=name, lang=lang, strings=texts)
    else:
        text = export_js(randomizer)
    if path is not None:
        with atomic_writer(path, overwrite=force) as binary:
            binary.write(text.encode())
    return Exported(text=text, out=path, to=to, randomizer=randomizer)


def _strings(strings: Any, to: str) -> dict[str, str] | None:
    """The texts replacing the fixed ones (None without any); a bad file or mapping is one line naming it."""
    from ..devices.words import _PLACEHOLDERS, STRINGS, read_strings

    if strings is None:
        return None
    if to == "js":
        raise InvalidArgumentError(say("{strings}: the ES module shows no text; give it with {to=html}, qualtrics or "
                                       "limesurvey"))
    if isinstance(strings, Mapping):  # the checks read_strings makes on a file's table
        if not all(isinstance(v, str) for v in strings.values()):
            raise InvalidArgumentError(f"{shown('strings')}: expected a mapping of text keys to strings, e.g. "
                                       "{'draw': 'Draw'}")
        unknown = sorted(str(k) for k in set(strings) - set(STRINGS["en"]))
        if unknown:
            raise InvalidArgumentError(f"{shown('strings')}: unknown key {unknown[0]!r}; the keys are "
                                       f"{', '.join(STRINGS['en'])}")
        for key, mark in _PLACEHOLDERS.items():
            if key in strings and mark not in strings[key]:
                raise InvalidArgumentError(f"{shown('strings')}: key {key!r} must contain {mark}")
        return {str(k): v for k, v in strings.items()}
    if not isinstance(strings, str | os.PathLike):
        raise InvalidArgumentTypeError(f"{shown('strings')} must be a file's path or a mapping, got "
                                       f"{type(strings).__name__}")
    try:
        return read_strings(os.fspath(strings))
    except InvalidArgumentError as exc:
        raise InvalidArgumentError(f"{shown('strings')} {exc}") from None


def _design(mechanism: Any, device: str | None, denominator: int | None
            ) -> tuple[Any, float | None, Any, Any, Any, dict[str, tuple[str, ...]] | None]:
    """The mechanism to export, the budget it is certified within (None: its own loss), the problem it was
    designed for (None for a mechanism file), the grid design (None without ``device``), an invariant design's
    exact table and a mechanism file's answer words: a problem is designed here, on ``device`` if given."""
    from ..optimal.problem import DesignProblem
    from ..release.sources import design_of, source_name

    if isinstance(mechanism, str | os.PathLike):
        from .._internal.bundled import resolve

        mechanism = resolve(mechanism, ("mechanism", "problem"))  # a file that exists, else designer's own by name
    path = os.fspath(mechanism) if isinstance(mechanism, str | os.PathLike) else None
    problem: Any = None
    if path is not None and path.endswith(".toml"):
        from ..optimal.problem_toml import load_problem

        problem = load_problem(path)
    elif isinstance(mechanism, DesignProblem):
        problem = mechanism
    if problem is None or (device is None and denominator is None):
        if problem is None and (device is not None or denominator is not None):
            raise InvalidArgumentError(f"{shown('device')} designs a TOML problem on the device's grid; "
                                       f"{source_name(mechanism)} is a mechanism (design it with 'designer design "
                                       "PROBLEM --device ... --out FILE', whose fractions the export keeps)")
        found = design_of(problem if problem is not None else mechanism)
        words = None
        if found.problem is None and path is not None and path.lower().endswith(".json"):
            from ..release.files import open_mechanism_file

            words = dict(open_mechanism_file(path).words) or None
        return found.mechanism, found.epsilon, found.problem, None, found.exact, words
    from ..devices import grid_design, parse_device

    if device is not None and denominator is not None:
        raise InvalidArgumentError(say("give {device} or {denominator}, not both (a device fixes its denominator)"))
    grid = grid_design(problem, parse_device(device, denominator))
    return grid.mechanism, problem.epsilon, problem, grid, None, None
