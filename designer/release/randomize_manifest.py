"""randomize's release written all or nothing: the randomized rows, the stratum designs, the drawn channels of
repaired variables and the manifest that records them (docs/theory.md section 7.5)."""

from __future__ import annotations

import datetime
import json
from fractions import Fraction
from typing import Any, NamedTuple

from .randomize_parts import Drawn, Stratified, folder_out
from .sources import source_name


class Release(NamedTuple):
    """Everything the manifest records beside the rows."""

    args: Any
    variables: list[tuple[str, str]]
    tables: list[Any]
    totals: dict[str, Fraction]
    prior: Any
    warnings: list[str]
    drawn: dict[str, str]
    ledger: dict[str, Any] | None = None


def write_release(args: Any, manifest: str, designs_dir: str, release: Release, source: Any, *, inp: Any,
                  staging: Any, written: list[str], names: list[str]
                  ) -> tuple[int, dict[str, dict[str, str]], str]:
    """The randomized rows, the stratum designs, the drawn channels and the manifest, made whole in ``staging`` (a
    :class:`~designer.release.staging.Staging`) and placed together, the data last: nothing is left when anything
    fails, and a release killed while placing its files is undone by the next one (docs/theory.md section 7.5).
    Returns the rows, the stratum design files and the random source's name."""
    import os

    from .randomize_parts import Task, sha256_of, write_dataset, write_rows
    from .sinks import open_sink
    from .staging import Placement

    task = Task(inp.name, release.variables, release.tables, args.strata, written, names)
    parts: list[dict[str, Any]] | None = None
    if folder_out(args):
        staged = staging.path("data")
        n, parts, name = write_dataset(inp, staged, staging, task, seed=args.seed, scheduler=args.scheduler,
                                       keep_order=args.keep_order)
        output: dict[str, Any] = {"path": _relative(args.out, manifest), "kind": "a folder of Parquet parts",
                                  "rows": n}
    else:
        staged = staging.path("data" + os.path.splitext(args.out)[1].lower())
        sink = open_sink(args.out, staged, names, inp.meta, written)
        try:
            n = write_rows(inp, sink, staging, task, source, seed=args.seed, keep_order=args.keep_order)
            sink.close()
        except BaseException:
            sink.abandon()
            raise
        name = source.name
        output = {"path": _relative(args.out, manifest), "rows": n, "sha256": sha256_of(staged)}
    output.update(frame_record([staged] if parts is None else [os.path.join(staged, p["part"]) for p in parts]))
    placements = []
    strata = {c: t for (c, _), t in zip(release.variables, release.tables) if isinstance(t, Stratified)}
    files: dict[str, dict[str, str]] = {}
    if strata:
        files = _write_stratum_designs(staging.path("designs"), designs_dir, strata)
        placements.append(Placement(staging.path("designs"), designs_dir))
    hashes = {}
    for i, ((column, _), entry) in enumerate(zip(release.variables, release.tables)):
        if column in release.drawn:
            path = staging.path(f"drawn-{i}.json")
            _write_drawn(entry, path, args.semantics)
            placements.append(Placement(path, release.drawn[column]))
            hashes[column] = sha256_of(path)
    record = _manifest(release, name, n, files, hashes, manifest)
    record["output"] = output
    if release.ledger is not None:
        record["ledger"] = release.ledger
    if parts is not None:
        record["parts"] = parts
    with open(staging.path("manifest.json"), "x", encoding="utf-8") as f:
        f.write(json.dumps(record, indent=2) + "\n")
    placements += [Placement(staging.path("manifest.json"), manifest), Placement(staged, args.out)]
    staging.commit(placements)
    return n, files, name


def frame_record(files: list[str]) -> dict[str, Any]:
    """The canonical SHA-256 of the released rows (``frame_sha256``, :mod:`designer._internal.canonical`) read back
    from the staged files as pandas reads their format, by which a DataFrame is checked against the manifest; null
    with a reason when the rows cannot be read back so."""
    from ..tables.digests import released_sha256

    try:
        return {"frame_sha256": released_sha256(files), "frame_sha256_of": FRAME_SHA256_OF}
    except Exception as exc:  # a figure for the reader: null with its reason (house style 20)
        return {"frame_sha256": None, "frame_sha256_of": f"not computed: {' '.join(str(exc).split())[:160]}"}


#: What the manifest's ``frame_sha256`` is of.
FRAME_SHA256_OF = ("the released rows as pandas reads them, in the released order, columns sorted by name, each cell "
                   "as text (designer._internal.canonical, docs/guide/release.md)")


def _relative(path: str, manifest: str) -> str:
    """``path`` as the manifest records it: relative to the manifest's folder (where readers resolve it) when it lies
    under that folder, else absolute."""
    import os

    full = os.path.abspath(path)
    relative = os.path.relpath(full, os.path.dirname(os.path.abspath(manifest)))
    return full if relative == os.pardir or relative.startswith(os.pardir + os.sep) else relative


def _write_drawn(entry: Drawn, path: str, semantics: str) -> None:
    """The channel a repaired variable is drawn from, as a mechanism file (masses ``count / 2^32``, each exact in a
    double) with its release: what estimate and regress must use instead of the design."""
    from ..mechanism import Mechanism
    from ..optimal.problem import DesignProblem
    from ..vocabulary import Semantics

    table = entry.table
    precise = semantics == "wldp"
    focal = [1 << j for j in range(len(table.outputs))] if precise else list(entry.mechanism.focal)
    frame = list(table.outputs) if precise else list(entry.mechanism.frame)
    mech = Mechanism(table.counts / table.denominator, inputs=entry.mechanism.inputs, frame=frame, focal=focal)
    problem = DesignProblem(inputs=tuple(mech.inputs), epsilon=table.epsilon, semantics=Semantics.SLDP)
    _write_released(mech, path, problem, table.certificate, False)


def _write_released(mech: Any, path: str, problem: Any, certificate: Any, overwrite: bool, table: Any = None
                    ) -> None:
    """A released mechanism as a JSON file: its ``release`` (epsilon, semantics, certificate), the problem's
    ``[answers]`` words and an invariant design's exact ``table`` (what ``designer design --out NAME.json``
    writes)."""
    from .._internal.io import atomic_write_text
    from .._internal.render import render_json
    from ..certificate import certificate_fields
    from ..optimal.result import exact_block
    from .files import RELEASE_KEY, release_block

    obj = mech.to_json_dict()
    obj[RELEASE_KEY] = release_block(certificate.epsilon, problem.semantics, certificate_fields(certificate))
    words = dict(getattr(problem, "answers", ()) or ())
    if words:
        obj["answers"] = {w: list(labels) for w, labels in words.items()}
    if table is not None:
        obj["exact"] = exact_block(table)
    atomic_write_text(path, render_json(obj) + "\n", overwrite=overwrite)


def _write_stratum_designs(staged: str, folder: str, stratified: dict[str, Stratified]) -> dict[str, dict[str, str]]:
    """Each stratum's design as a JSON mechanism file (with its release and exact table) in the new folder
    ``staged``, to be placed as ``folder``. Returns each stratum's file by its place under ``folder``."""
    import os
    import re

    os.mkdir(staged)
    names: dict[str, dict[str, str]] = {}
    used: set[str] = set()
    for column, entry in stratified.items():
        for stratum, (_, mech, _, _, result) in entry.designs.items():
            stem = re.sub(r"[^A-Za-z0-9_.-]+", "_", f"{column}-{stratum}").strip(".") or "stratum"
            name, i = f"{stem}.json", 1
            while name.lower() in used:
                i += 1
                name = f"{stem}-{i}.json"
            used.add(name.lower())
            _write_released(mech, os.path.join(staged, name), result.problem, result.certificate, False,
                            result.exact_table)
            names.setdefault(column, {})[stratum] = os.path.join(folder, name)
    return names


#: What the manifest says of the rows' order.
ROW_ORDER_SHUFFLED = ("a uniformly random permutation of the input's rows, drawn with the random source (the order of "
                      "a file is a function of its data and is not released)")
ROW_ORDER_KEPT = ("the input's order (--keep-order): the order of a file is a function of its data, and a file sorted "
                  "or grouped by a randomized column gives its true values away")

#: The fields of a certificate's detail that say whether and how the design was repaired.
REPAIR_FIELDS = ("repaired", "mix_weight", "reference", "violation_before_repair", "summary")


def _certificate(table: Any, detail: dict[str, Any] | None, repair: dict[str, Any] | None) -> dict[str, Any]:
    """The manifest's certificate of a drawn table: the table's own record, whose repair fields are the design's
    when the table is the design (an invariant design's exact counts, or the design rounded without a mix), and
    state the violation the mix repaired when it is a repaired channel."""
    record = table.certificate_record()
    if repair is not None:  # the table's own line (Certificate.describe), then why and how it was repaired
        record.update(violation_before_repair=repair["violation"],
                      summary=f"{table.certificate.describe()}; {repair['why']}, so {table.mix_weight:.3g} of the "
                              f"{record['reference']} was mixed in: the drawn channel is not the design "
                              "(drawn_mechanism)")
    elif table.mix_weight == 0 and detail:
        record.update({k: detail[k] for k in REPAIR_FIELDS if k in detail})
        record["summary"] = f"{detail.get('summary', '')} (the design's certificate; the table: {table.arithmetic})"
    return record


def _manifest(release: Release, source: str, n: int, files: dict[str, dict[str, str]], hashes: dict[str, str],
              manifest: str) -> dict[str, Any]:
    import os

    from .._version import __version__
    from .randomize_parts import sha256_of
    from .randomize_priors import invariance_record

    args = release.args

    def design(path: Any) -> dict[str, Any]:
        """The design a variable names: its path (relative to the manifest's folder) and its file's SHA-256."""
        if not isinstance(path, str | os.PathLike):
            return {"design": source_name(path)}
        from .._internal.bundled import resolve

        file = os.fspath(resolve(path, ("mechanism", "problem")))  # a bare name: designer's own file
        if not os.path.exists(path):  # recorded as named, not where this installation keeps it
            return {"design": os.fspath(path), "design_sha256": sha256_of(file)}
        return {"design": _relative(file, manifest), "design_sha256": sha256_of(file)}

    def output(column: str) -> str:
        """The column of the randomized file holding the variable's answers."""
        return column if args.variable else "response"

    def variable(column: str, path: str, entry: Any) -> dict[str, Any]:
        if isinstance(entry, Stratified):
            return {"column": column, "output_column": output(column), **design(path), "drawn_from": "strata",
                    "epsilon": entry.epsilon,
                    "strata_column": args.strata,
                    "strata": [{"stratum": s, "design_file": _relative(files[column][s], manifest),
                                "budget_from": basis,
                                "epsilon": t.epsilon, "sha256": t.sha256, "outputs": list(t.outputs),
                                "certificate": _certificate(t, _detail(result), None),
                                **invariance_record(args, column, s, prior, mech, release.prior)}
                               for s, (t, mech, basis, prior, result) in entry.designs.items()]}
        record = {"column": column, "output_column": output(column), **design(path),
                  "drawn_from": "drawn_mechanism" if column in release.drawn else "design",
                  "budget_from": entry.basis,
                  "epsilon": entry.table.epsilon,
                  "sha256": entry.table.sha256, "outputs": list(entry.table.outputs),
                  "certificate": _certificate(entry.table, entry.certificate, entry.repair),
                  **invariance_record(args, column, "", entry.prior, entry.mechanism, release.prior)}
        if column in release.drawn:
            record["drawn_mechanism"] = {"path": _relative(release.drawn[column], manifest), "sha256": hashes[column],
                                         "why": entry.repair["why"] if entry.repair else ""}
        return record

    totals = release.totals
    out = {
        "designer": __version__, "date": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "random_source": source, "rows": n, "semantics": args.semantics,
        "allocation": args.allocation if args.semantics == "wldp" else None,
        "row_order": ROW_ORDER_KEPT if args.keep_order else ROW_ORDER_SHUFFLED,
        "paths": "relative to this manifest's folder",
        "variables": [variable(c, p, entry) for (c, p), entry in zip(release.variables, release.tables)],
        "epsilon_total": float(max(totals.values())), "epsilon_total_exact": str(max(totals.values())),
        "epsilon_shafer_total": float(totals["shafer"]),
        "epsilon_walley_total": float(totals["walley"]) if args.semantics == "wldp" else None,
        "note": "losses add across the variables of one respondent and the published prior (Lemma 3.3, Lemma 3.15); "
                "a stratified variable randomizes each respondent by its stratum's design only; no seed is recorded",
        "warnings": release.warnings,
    }
    if release.prior is not None:
        out["prior_release"] = release.prior.record()
    return out


def _detail(result: Any) -> dict[str, Any] | None:
    from ..certificate import certificate_fields

    return certificate_fields(result.certificate)["certificate_detail"] if result.certificate else None
