"""The session as code that reproduces the screen through the library's front doors: one list of cells (a heading
in words and the Python under it), written as a Python script (:func:`script`) or a Jupyter notebook
(:func:`notebook`). Each cell prints what one panel of the screen shows, in the screen's words and to its digits,
and nothing the screen does not show.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from ..exceptions import DesignerError, NotReadyError
from .fields import FieldError, toml_text
from .session import Lab
from .state import Study

__all__ = ["Cell", "cells", "notebook", "script"]

T = TypeVar("T")

#: The helpers every reproduction starts with: the screen's number formats.
_FORMATS = '''def fmt(x, digits):
    """A number as the studio shows it: `digits` significant digits."""
    x = float(x)
    return ("inf" if x > 0 else "-inf") if x in (float("inf"), float("-inf")) else f"{x:.{digits}g}"


def number(x):
    """A variance as the studio shows it: 8 significant digits, or "infinite"."""
    return "infinite" if float(x) == float("inf") else fmt(x, 8)'''


@dataclass(frozen=True)
class Cell:
    """A heading (Markdown, the screen's words) and the code under it."""

    words: str
    code: str


def _get(compute: Callable[[], T]) -> T | None:
    try:
        return compute()
    except (NotReadyError, DesignerError, FieldError, OSError):
        return None


def cells(study: Study, lab: Lab, *, here: str) -> list[Cell]:
    """The cells reproducing what the screen shows for ``study``; ``here`` is the Python expression of the folder
    holding the downloads (``Path(__file__).resolve().parent`` in a script, ``Path.cwd()`` in a notebook)."""
    released = _get(lambda: lab.released(study))
    head = [f"# The designer studio session \"{study.name}\", reproduced through designer's front doors.",
            "", "from pathlib import Path", "import tempfile", "", "import designer", "", f"HERE = {here}", "",
            _FORMATS]
    out = [Cell(f"# {study.name}\n\nThe designer studio session, reproduced with designer's Python functions: each "
                "cell prints what one panel of the studio showed, to the same digits.", "\n".join(head))]
    if released is None:
        out.append(Cell("No design yet: the studio had fields to fix.", "print('no design yet')"))
        return out
    if study.loaded is not None:
        name = "mechanism.json" if study.loaded.upload.name.lower().endswith(".json") else "mechanism.csv"
        out.append(Cell(f"## The design\n\nThe loaded file {study.loaded.upload.name}, used as it is (downloaded as "
                        f"{name}).", f"design = HERE / {name!r}\nmechanism = design\nprint('mechanism:', design.name)"))
    else:
        assert study.data is not None
        code = [f"PROBLEM = {toml_text(study.data)!r}",
                "with tempfile.TemporaryDirectory() as folder:",
                "    problem_file = Path(folder) / 'problem.toml'",
                "    problem_file.write_text(PROBLEM, encoding='utf-8')",
                "    design = designer.design(problem_file)"]
        if released.mechanism is not None:
            code += ["mechanism = design.mechanism",
                     "print('The chances of each reported answer (columns) for each true answer (rows):')",
                     "for x, row in zip(mechanism.inputs, mechanism.matrix):",
                     "    print(x, *(fmt(v, 8) for v in row))"]
        ident = _get(lambda: lab.identification(study))
        if ident is not None:
            code += ["shares = design.share_variances",
                     "mean = design.variance if design.variance is not None else sum(shares.values()) / len(shares)",
                     "print('Mean variance of the estimated shares, per respondent:', number(mean))"]
            if ident.per_share:
                code += ["for x, v in shares.items():", "    print('  variance of the share of', x + ':', number(v))"]
        if released.mechanism is not None:
            code += ["prior = design.problem.prior",
                     "truthful = sum(p * mechanism.row(x).get((x,), 0.0) for p, x in zip(prior, mechanism.inputs))",
                     "print('Share of respondents who report exactly their true answer:', fmt(truthful, 8))"]
        out.append(Cell("## The design\n\nThe question as the studio wrote it (problem.toml), designed and certified.",
                        "\n".join(code)))
    if released.mechanism is None:
        return out
    if _get(lambda: lab.audit(study)) is not None:
        out.append(Cell("## Its privacy, both ways\n\nHow much more likely one answer can be under one true answer "
                        "than under another, with set answers kept as given, and if they are later made precise.",
                        "losses = designer.audit(mechanism).losses\n"
                        "for name, how in (('shafer', 'Set answers kept as given'), "
                        "('walley', 'If set answers are later made precise')):\n"
                        "    w = losses.get(name)\n"
                        "    if w is not None:\n"
                        "        print(how + ': a budget of', fmt(w.eps, 6), 'nats')"))
    out += _plan_cells(study, lab, released)
    if _get(lambda: lab.export(study, "html")) is not None:
        out.append(Cell("## The respondent's page", f"page = designer.export(design, to='html', "
                        f"question={study.page_question!r})\nprint('table SHA-256:', page.randomizer.table.sha256)"))
    if _get(lambda: lab.estimate(study)) is not None and study.answers is not None:
        out.append(Cell("## The estimated shares\n\nFrom the answers file, put next to this one.",
                        f"answers = HERE / {study.answers.name!r}\n"
                        "if answers.exists():\n"
                        f"    fit = designer.estimate(answers, design, column={study.answer_column!r}, "
                        f"level={study.estimate_level!r}, semantics={released.semantics!r})\n"
                        "    d = fit.to_dict()\n"
                        "    print(f'{fit.n:,} answers read, {fit.dropped:,} dropped')\n"
                        "    if 'estimate' in d:\n"
                        "        for x in d['estimate']:\n"
                        "            cells = [d[c].get(x) for c in ('estimate', 'stderr', 'ci_low', 'ci_high')]\n"
                        "            print(x, *('n/a' if v is None else fmt(v, 8) for v in cells))\n"
                        "    else:\n"
                        "        for x in d['lower']:\n"
                        "            print(x, fmt(d['lower'][x], 8), fmt(d['upper'][x], 8))\n"
                        "else:\n"
                        "    print(f'(put {answers.name} next to this file to repeat the estimate)')"))
    return out


def _plan_cells(study: Study, lab: Lab, released: Any) -> list[Cell]:
    ask = study.plan
    keywords = f"semantics={released.semantics!r}, prior={released.prior_text()!r}"
    width = _get(lambda: lab.plan_width(study))
    at_n = _get(lambda: lab.plan_n(study))
    out = []
    code = []
    if width is not None:
        both = at_n is not None and at_n.width_at_n is not None
        code += [f"plan = designer.plan(design, width={ask.width!r}, {f'n={ask.n!r}, ' if both else ''}"
                 f"level={ask.level!r}, {keywords})",
                 f"print(f'{{plan.n:,}} respondents give every share a {{fmt({ask.level!r} * 100, 4)}}% interval of "
                 f"half-width at most {{fmt({ask.width!r}, 6)}} (reached: {{fmt(plan.achieved_width, 6)}}).')"]
        if both:
            code += ["w = plan.width_at_n",
                     "print(f'With {w.n:,} respondents every share\\'s {fmt(w.level * 100, 4)}% interval has '",
                     "      f'half-width {fmt(w.width, 6)}.')"]
    power = _get(lambda: lab.plan_power(study))
    if power is not None:
        code += [f"test = designer.plan(design, detect={ask.detect!r}, power={ask.power!r}, alpha={ask.alpha!r}, "
                 f"{keywords})",
                 f"print(f'{{test.n:,}} respondents detect a change of {{fmt({ask.detect!r}, 4)}} in the share of "
                 f"{{test.share}} (from {{fmt(test.null, 4)}}) with power {{fmt({ask.power!r}, 4)}} at test level "
                 f"{{fmt({ask.alpha!r}, 4)}}.')"]
    if code:
        out.append(Cell("## The survey plan", "\n".join(code)))
    preview = _get(lambda: lab.preview(study))
    if preview is not None:
        out.append(Cell(
            "## Preview: a simulated survey of the planned size\n\nTrue answers drawn from the expected shares, "
            "randomized with the design and estimated as the real answers will be; the seed makes it reproducible.",
            "import numpy as np\nimport pandas as pd\n\n"
            f"n, seed, level = plan.n, {preview.seed!r}, {ask.level!r}\n"
            f"expected = np.asarray({[float(v) for v in released.prior]!r})\n"
            f"inputs = {list(released.mechanism.inputs)!r}\n"
            "rng = np.random.default_rng(seed)\n"
            "truth = rng.choice(len(inputs), size=n, p=expected / expected.sum())\n"
            "frame = pd.DataFrame({'answer': np.asarray(inputs, dtype=object)[truth]})\n"
            "simulated = designer.randomize(frame, design, column='answer', seed=int(rng.integers(2**32)), "
            "simulation=True, "
            f"semantics={released.semantics!r})\n"
            "fit = designer.estimate(simulated.frame, design, column='response', level=level, "
            f"semantics={released.semantics!r})\n"
            "d = fit.to_dict()\n"
            "print(f'A simulated survey of {n:,} respondents (seed {seed}):')\n"
            "for i, x in enumerate(inputs):\n"
            "    drawn = (truth == i).mean()\n"
            "    if 'estimate' in d:\n"
            "        print(x, fmt(expected[i], 8), fmt(drawn, 8), fmt(d['estimate'][x], 8), fmt(d['ci_low'][x], 8), "
            "fmt(d['ci_high'][x], 8))\n"
            "    else:\n"
            "        print(x, fmt(expected[i], 8), fmt(drawn, 8), fmt(d['lower'][x], 8), fmt(d['upper'][x], 8))"))
    return out


def script(study: Study, lab: Lab) -> str:
    """A Python script that reproduces the screen through the front doors (:func:`designer.design`,
    :func:`designer.plan`, :func:`designer.export`, :func:`designer.estimate`) and prints what the screen shows."""
    parts = ["#!/usr/bin/env python3"]
    for cell in cells(study, lab, here="Path(__file__).resolve().parent"):
        parts += ["", "# " + "\n# ".join(cell.words.replace("#", "").strip().splitlines()), cell.code]
    return "\n".join(parts).replace("\n# \n", "\n#\n") + "\n"


def notebook(study: Study, lab: Lab) -> str:
    """The same cells as a Jupyter notebook (nbformat 4), to run in the folder of the downloads."""
    import nbformat
    from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

    nb = new_notebook()
    for cell in cells(study, lab, here="Path.cwd()"):
        nb.cells += [new_markdown_cell(cell.words), new_code_cell(cell.code)]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.metadata["language_info"] = {"name": "python"}
    nbformat.validate(nb)
    return str(nbformat.writes(nb))
