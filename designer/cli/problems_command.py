"""The problems command: the design problems (and example files) that come with designer, and a copy to start from.

``designer problems`` lists them (table, JSON or CSV); ``designer problems copy NAME [DEST]`` writes one into the
current folder (or DEST), atomically and never over an existing file without ``--force``. Any command that takes a
file takes these by their bare names (:mod:`designer._internal.bundled`).
"""

from __future__ import annotations

import argparse
import os
from dataclasses import dataclass
from typing import Any

from .._internal.bundled import KINDS, Bundled, bundled, find, unknown
from ..results import FitStatus, Result, TableData
from ._common import CommandError, add_format, check_out

#: The columns of a problem's row; the other kinds show name, kind, file, size and description.
PROBLEM_COLUMNS = ["name", "objective", "semantics", "epsilon", "inputs", "description"]
OTHER_COLUMNS = ["name", "kind", "file", "bytes", "description"]


def description(path: str) -> str:
    """A bundled problem's one line: the first sentence of the comment at the top of its file (up to the first
    ``:``, ``;`` or ``.`` that ends a clause)."""
    lines = []
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            if not line.startswith("#"):
                break
            lines.append(line.lstrip("#").strip())
    text = " ".join(lines)
    ends = [i for i in (text.find(": "), text.find("; "), text.find(". ")) if i >= 0]
    return (text[: min(ends)] if ends else text).rstrip(".:; ")


def _summary(item: Bundled) -> dict[str, Any]:
    """One row of the listing: a problem's objective, semantics, budget and inputs; a mechanism's inputs and answer
    sets; a data file's columns; a questionnaire's questions."""
    if item.kind == "problem":
        from ..optimal.problem_toml import load_problem

        problem = load_problem(item.path)
        inputs = list(problem.inputs)
        shown = ", ".join(inputs) if len(inputs) <= 5 else f"{len(inputs)}: {inputs[0]}, ..., {inputs[-1]}"
        return {"name": item.name, "kind": KINDS[item.kind].word, "objective": str(problem.objective),
                "semantics": str(problem.semantics), "epsilon": float(problem.epsilon), "inputs": shown,
                "description": description(item.path), "file": item.where, "bytes": os.path.getsize(item.path)}
    if item.kind == "mechanism":
        from ..mechanism import Mechanism

        mech = Mechanism.read(item.path)
        text = f"{len(mech.inputs)} inputs ({', '.join(mech.inputs)}), {len(mech.columns)} answer sets"
    elif item.kind == "survey":
        from ..planning.survey_plan import load_survey

        survey = load_survey(item.path)
        text = f"a questionnaire of {len(survey.questions)} questions ({', '.join(q.name for q in survey.questions)})"
    else:
        from ..tables.csv_text import csv_tables, sniff

        header, sep = sniff(item.path)
        rows = sum(t.num_rows for _, t in csv_tables(item.path, header[:1], 1 << 20, header=header, sep=sep))
        text = f"{rows} rows; columns {', '.join(header)}"
    return {"name": item.name, "kind": KINDS[item.kind].word, "file": item.where,
            "bytes": os.path.getsize(item.path), "description": text}


@dataclass(frozen=True)
class BundledFiles(Result):
    """The files of one kind (or all kinds) that come with designer, one row each."""

    kind: str
    rows: tuple[dict[str, Any], ...]
    status: FitStatus = FitStatus.EXACT
    warnings: tuple[str, ...] = ()

    @property
    def title(self) -> str:  # type: ignore[override]
        what = "Design problems" if self.kind == "problem" else "Files"
        return f"{what} that come with designer, read by their bare names ('designer problems copy NAME' writes one " \
               "here)"

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "files": [dict(row) for row in self.rows]}

    def table(self) -> TableData:
        columns = PROBLEM_COLUMNS if self.kind == "problem" else OTHER_COLUMNS
        return columns, [[row.get(c) for c in columns] for row in self.rows]


def list_bundled(kind: str) -> BundledFiles:
    """The bundled files of ``kind`` (``problem``, ``mechanism``, ``data``, ``survey`` or ``all``)."""
    kinds = list(KINDS) if kind == "all" else [kind]
    return BundledFiles(kind, tuple(_summary(item) for k in kinds for item in bundled(k).values()))


def copy_bundled(name: str, dest: str | None, force: bool) -> str:
    """Write the bundled file ``name`` to ``dest`` (a file, or a folder to put it in; default: the current folder
    under the file's own name), atomically; refused when the target exists unless ``force``."""
    from .._internal.io import atomic_write_bytes

    item = find(name, tuple(KINDS))
    if item is None:
        raise CommandError(unknown(name, tuple(KINDS)))
    filename = os.path.basename(item.path)
    target = dest or filename
    if os.path.isdir(target):
        target = os.path.join(target, filename)
    check_out(target, [], force, advice="choose another name or pass --force to replace it")
    with open(item.path, "rb") as fh:
        data = fh.read()
    try:
        atomic_write_bytes(target, data, overwrite=force)
    except FileExistsError:
        raise CommandError(f"{target}: already exists; choose another name or pass --force to replace it") from None
    stem = os.path.splitext(target)[0]
    then = {"problem": f"designer design {stem}", "mechanism": f"designer audit {target}",
            "survey": f"designer plan {target}", "data": f"designer estimate {target} --mechanism ..."}[item.kind]
    return f"wrote {target} (designer's {item.where}); edit it, then: {then}"


def cmd_problems(args: argparse.Namespace) -> str:
    from ..results import render

    if args.action == "copy":
        if not args.name:
            raise CommandError("problems copy: give the NAME of the file to copy (designer problems lists them)")
        return copy_bundled(args.name, args.dest, args.force)
    if args.name or args.dest or args.force:
        raise CommandError("problems: NAME, DEST and --force go with 'copy' (designer problems copy NAME [DEST])")
    return render(list_bundled(args.kind), args.format)


def _configure_problems(p: argparse.ArgumentParser) -> None:
    p.add_argument("action", nargs="?", choices=("list", "copy"), default="list",
                   help="list (default): the problems (or --kind) that come with designer; copy NAME [DEST]: write "
                        "one to start from")
    p.add_argument("name", nargs="?", help="copy: the bare name of the file (gwrr-dont-know, three-by-four, ...)")
    p.add_argument("dest", nargs="?", help="copy: the file or folder to write (default: NAME's own file name here)")
    p.add_argument("--kind", choices=(*KINDS, "all"), default="problem",
                   help="list: problem (default), survey (questionnaires), mechanism, data, or all of them")
    p.add_argument("--force", action="store_true", help="copy: replace an existing DEST")
    add_format(p)
