"""Writing a released mechanism file: JSON with its release block (the guarantee it carries), or CSV without it.

Shared by ``designer design --out`` and the studio (a layer below both: the studio never imports the command line).
"""

from __future__ import annotations

from typing import Any

__all__ = ["write_mechanism"]


def write_mechanism(mech: Any, path: str, problem: Any, certificate: Any, overwrite: bool, table: Any = None) -> str:
    """Write a released mechanism: JSON for a ``.json`` name, with its ``release`` (epsilon, semantics and the
    certificate, :mod:`designer.release.files`), the problem's ``[answers]`` words and an invariant design's exact
    ``table`` (``exact``); CSV otherwise, which keeps none of them.

    Parameters
    ----------
    mech : Mechanism
        The released mechanism (docs/theory.md, section 7.4).
    path : str
        The file to write (``.json`` keeps the release block).
    problem : DesignProblem
        The problem it was designed for (its semantics and answer words).
    certificate : Certificate
        The design's certificate (its epsilon and checks).
    overwrite : bool
        Replace an existing file.
    table : optional
        An invariant design's exact table.

    Returns
    -------
    str
        A note when a CSV file drops the answer words or the exact table (else ``""``).

    Examples
    --------
    >>> import json, os, tempfile
    >>> import designer
    >>> from designer.release.mechanism_out import write_mechanism
    >>> result = designer.design(designer.DesignProblem(inputs=("yes", "no"), epsilon=1.0))
    >>> path = os.path.join(tempfile.mkdtemp(), "mechanism.json")
    >>> write_mechanism(result.mechanism, path, result.problem, result.certificate, overwrite=False)
    ''
    >>> json.load(open(path))["release"]["epsilon"]
    1.0
    """
    from .._internal.io import atomic_write_text
    from .._internal.render import render_json
    from ..optimal.result import certificate_fields
    from .files import RELEASE_KEY, release_block

    words = dict(getattr(problem, "answers", ()) or ())
    if path.lower().endswith(".json"):
        obj = mech.to_json_dict()
        obj[RELEASE_KEY] = release_block(certificate.epsilon, problem.semantics, certificate_fields(certificate))
        if words:
            obj["answers"] = {w: list(labels) for w, labels in words.items()}
        if table is not None:
            from ..optimal.result import exact_block

            obj["exact"] = exact_block(table)
        atomic_write_text(path, render_json(obj) + "\n", overwrite=overwrite)
        return ""
    mech.write(path, overwrite=overwrite)
    stem = path[:-4] if path.lower().endswith(".csv") else path
    if table is not None:
        return (f"a CSV file keeps the masses as decimals, not the invariant design's exact table; write "
                f"{stem}.json to keep it (randomize and export draw from it, keeping the prior exactly)")
    return f"the problem's [answers] words are not kept in a CSV file; write {stem}.json to keep them" if words else ""
