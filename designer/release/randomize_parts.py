"""``randomize`` chunk by chunk and part by part: the draw of one chunk, and a Parquet dataset randomized into a
new dataset folder one part at a time, locally or on a Dask cluster (one part a task). Each part draws from its
own random source: the operating system's CSPRNG on the machine that draws it, or, in a seeded simulation, the
part's child of the seed (:class:`numpy.random.SeedSequence`), so the same seed gives the same release however
the parts are scheduled."""

from __future__ import annotations

import hashlib
import os
from typing import Any, NamedTuple

import numpy as np


class Stratified(NamedTuple):
    """One variable's designs, one per stratum (an invariant problem with ``--strata``): stratum name to
    ``(table, mechanism, basis, prior kept, design result)``."""

    designs: dict[str, tuple[Any, Any, str, Any, Any]]

    @property
    def epsilon(self) -> float:
        """The variable's loss per respondent: a respondent meets one stratum's design, so the largest of them."""
        return max(t.epsilon for t, *_ in self.designs.values())


class Drawn(NamedTuple):
    """One variable's release: the exact table drawn from, the design's mechanism, where its budget comes from, the
    prior an invariant design keeps, the design's certificate detail, and (with --repair) the file the drawn
    channel is written to."""

    table: Any
    mechanism: Any
    basis: str
    prior: Any
    certificate: dict[str, Any] | None
    repair: dict[str, Any] | None = None


def folder_out(args: Any) -> bool:
    """A dataset folder randomized into a new folder of parts (``--out`` without a CSV or Parquet suffix)."""
    import os

    from ..estimation.survey_files import is_columnar

    return os.path.isdir(args.answers) and not (is_columnar(args.out) or args.out.lower().endswith(".csv"))


def epsilon_of(entry: Any) -> float:
    return float(entry.epsilon if isinstance(entry, Stratified) else entry[0].epsilon)


def categories_table(mech: Any, epsilon: float | None, exact: tuple[Any, Any]) -> Any:
    """An invariant design's certified table, releasing the categories themselves (``b``, not ``{b}``: PRAM's
    microdata)."""
    import dataclasses

    from ..guarantees.exact_table import exact_table

    table = exact_table(mech, epsilon=epsilon, semantics="sldp", exact=exact)
    return dataclasses.replace(table, outputs=tuple(s[0] for s in mech.focal_sets))


def draw_chunk(chunk: Any, line: int, path: str, variables: list[tuple[str, str]], tables: list[Any],
               strata: str | None, source: Any) -> list[Any]:
    """The randomized values of every variable of one chunk (first row at file ``line``): each row's true value
    drawn through its table (its stratum's under ``strata``) with words of ``source``."""

    drawn = []
    for (column, _), entry in zip(variables, tables):
        first = next(iter(entry.designs.values())) if isinstance(entry, Stratified) else entry
        rows = input_codes(chunk[column], first[1].inputs, path, line, f"an input of the mechanism (column {column!r})")
        if isinstance(entry, Stratified):
            assert strata is not None
            groups = chunk[strata].to_numpy(dtype=object)
            out = np.empty(len(chunk), dtype=object)
            for stratum in dict.fromkeys(groups.tolist()):
                table = entry.designs[stratum][0]
                mask = groups == stratum
                out[mask] = np.asarray(table.outputs, dtype=object)[table.sample(rows[mask], source)]
            drawn.append(out)
        else:
            table = entry[0]
            drawn.append(np.asarray(table.outputs, dtype=object)[table.sample(rows, source)])
    return drawn


def input_codes(values: Any, labels: Any, path: str, first_line: int, what: str) -> Any:
    """Index of every true value in ``labels`` (vectorised), matched as :mod:`designer.estimation.answers` matches
    words: exactly, else regardless of case and spacing when that names one label; an unknown value is one
    :class:`~designer.exceptions.DataError` naming its line."""
    from ..estimation.answers import fold_word
    from ..estimation.sampling import label_indices
    from ..exceptions import DataError

    codes = label_indices(values, labels)
    bad = np.flatnonzero(codes < 0)
    if bad.size:
        folds: dict[str, list[int]] = {}
        for i, label in enumerate(labels):
            folds.setdefault(fold_word(label), []).append(i)
        loose = {w: js[0] for w, js in folds.items() if len(js) == 1}
        for index in bad.tolist():
            codes[index] = loose.get(fold_word(str(values.iloc[index])), -1)
        bad = np.flatnonzero(codes < 0)
    if bad.size:
        row = int(bad[0])
        raise DataError(f"{path}: line {first_line + row}: {values.iloc[row]!r} is not {what} {list(labels)}; "
                        f"{bad.size} such row(s) in this part of the file")
    return codes


def sha256_of(path: str) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def write_randomized(source_path: str, out_path: str, source: Any, *, columns: list[str], written: list[str],
                     names: list[str], variables: list[tuple[str, str]], tables: list[Any], strata: str | None
                     ) -> int:
    """``source_path``'s rows randomized into the new file ``out_path`` (CSV, Parquet or Arrow by its name; the
    ``written`` columns copied, each variable drawn with words of ``source``), atomically. Returns the rows."""
    from .._internal.io import atomic_writer
    from ..estimation.survey_files import column_meta, read_chunks, table_sink

    n = 0
    with atomic_writer(out_path, overwrite=False) as binary:
        # the kept columns' value labels, descriptions and numeric types, written back where the format holds them
        sink = table_sink(out_path, binary, names, meta=column_meta(source_path, written))
        for line, chunk in read_chunks(source_path, columns):
            drawn = draw_chunk(chunk, line, source_path, variables, tables, strata, source)
            sink.write([chunk[k].to_numpy(dtype=object) for k in written] + drawn)
            n += len(chunk)
        sink.close()
    return n


def randomize_part(source_path: str, out_path: str, *, seed: Any, **task: Any) -> tuple[int, str, str]:
    """One part of a dataset randomized into ``out_path`` (:func:`write_randomized`; what a Dask worker
    computes) from its own random source. Returns the rows, the file's SHA-256 and the source's name."""
    from ..guarantees.exact_table import OsRandom, SeededRandom

    source: Any = OsRandom() if seed is None else SeededRandom(seed)
    n = write_randomized(source_path, out_path, source, **task)
    return n, sha256_of(out_path), source.name


def randomize_dataset(folder: str, out: str, *, scheduler: str | None, seed: int | None, **task: Any
                      ) -> tuple[int, list[dict[str, Any]], str]:
    """Every part of the dataset ``folder`` randomized into the same relative name under the new folder ``out``
    (built in a temporary folder beside it and renamed into place: nothing is left when interrupted), on the Dask
    cluster at ``scheduler`` or here. Returns the rows, each part's record (name, rows, SHA-256) and the random
    source's name."""
    from .._internal.io import atomic_folder
    from ..estimation.survey_files import dataset_parts

    parts = dataset_parts(folder)
    relative = [os.path.relpath(p, folder) for p in parts]
    seeds: list[Any] = [None] * len(parts) if seed is None else np.random.SeedSequence(seed).spawn(len(parts))
    with atomic_folder(out, prefix=".randomize-") as work:
        targets = [os.path.join(work, r) for r in relative]
        for target in targets:
            os.makedirs(os.path.dirname(target), exist_ok=True)
        if scheduler:
            results = _on_cluster(scheduler, parts, targets, seeds, task)
        else:
            results = [randomize_part(p, t, seed=s, **task) for p, t, s in zip(parts, targets, seeds)]
    records = [{"part": r, "rows": rows, "sha256": sha} for r, (rows, sha, _) in zip(relative, results)]
    name = results[0][2] if results else ""
    if seed is not None:
        name += f", one child of the seed per part ({len(parts)} parts)"
    return sum(r[0] for r in results), records, name


def _on_cluster(scheduler: str, parts: list[str], targets: list[str], seeds: list[Any], task: dict[str, Any]
                ) -> list[tuple[int, str, str]]:
    from ..regression.regress_input import map_on_cluster

    return map_on_cluster(scheduler, _part_task, list(zip(parts, targets, seeds)), **task)


def _part_task(source_path: str, out_path: str, seed: Any, **task: Any) -> tuple[int, str, str]:
    return randomize_part(source_path, out_path, seed=seed, **task)
