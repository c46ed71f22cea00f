"""``randomize`` chunk by chunk: the draw of one chunk, and the released rows written in a uniformly random order
(docs/theory.md section 7.8) to one file or, for a Parquet dataset folder, to a new folder of parts, locally or on
a Dask cluster (one task per input part, then one per output part).

Each unit of work draws from its own random source: the operating system's CSPRNG on the machine that draws it,
or, in a seeded simulation, the unit's child of the seed (:class:`numpy.random.SeedSequence`), so the same seed gives
the same release however the parts are scheduled. Up to :data:`MEMORY_ROWS` rows are shuffled in memory; more are
shuffled in two passes through bucket files of released values (:mod:`designer.release.shuffle`) in the release's
staging folder, never holding a true answer.
"""

from __future__ import annotations

import os
from typing import Any, NamedTuple

import numpy as np

from .._internal.io import file_sha256 as sha256_of
from ..tables.inputs import CHUNK_ROWS
from .arrow_arrays import concat_tables, positions, strings

#: Rows shuffled in memory; a larger input is shuffled through bucket files of about :data:`BUCKET_ROWS` rows.
MEMORY_ROWS = 2_000_000
BUCKET_ROWS = 1_000_000


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

    from ..tables.inputs import is_columnar

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


def draw_chunk(text: Any, line: int, path: str, variables: list[tuple[str, Any]], tables: list[Any],
               strata: str | None, source: Any) -> list[Any]:
    """The randomized values of every variable of one chunk (first row at file ``line``; ``text`` maps a column to
    its cells as text): each row's true value drawn through its table (its stratum's under ``strata``) with words
    of ``source``."""
    drawn = []
    for (column, _), entry in zip(variables, tables):
        first = next(iter(entry.designs.values())) if isinstance(entry, Stratified) else entry
        rows = input_codes(text[column], first[1].inputs, path, line, f"an input of the mechanism (column {column!r})")
        if isinstance(entry, Stratified):
            assert strata is not None
            groups = np.asarray(text[strata], dtype=object)
            out = np.empty(len(rows), dtype=object)
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

    values = np.asarray(values, dtype=object)
    codes = label_indices(values, labels)
    bad = np.flatnonzero(codes < 0)
    if bad.size:
        folds: dict[str, list[int]] = {}
        for i, label in enumerate(labels):
            folds.setdefault(fold_word(label), []).append(i)
        loose = {w: js[0] for w, js in folds.items() if len(js) == 1}
        for index in bad.tolist():
            codes[index] = loose.get(fold_word(str(values[index])), -1)
        bad = np.flatnonzero(codes < 0)
    if bad.size:
        row = int(bad[0])
        raise DataError(f"{path}: line {first_line + row}: {values[row]!r} is not {what} {list(labels)}; "
                        f"{bad.size} such row(s) in this part of the file")
    return codes


class Task(NamedTuple):
    """What every unit of a release's work needs (sent to Dask workers as it is): how messages name the input,
    the variables and their tables, the stratum column, the columns copied out as stored and the output's names
    (the copied columns, then the randomized ones)."""

    path: str
    variables: list[tuple[str, Any]]
    tables: list[Any]
    strata: str | None
    written: list[str]
    names: list[str]

    @property
    def text(self) -> list[str]:
        """The columns read as text: the answers to randomize and the stratum column."""
        return [*(c for c, _ in self.variables), *([self.strata] if self.strata else [])]


def released(chunk: Any, task: Task, source: Any) -> Any:
    """One chunk's released rows as an Arrow table: the copied columns as stored, then each variable's randomized
    answers as text."""
    import pyarrow as pa

    drawn = draw_chunk(chunk.text, chunk.line, task.path, task.variables, task.tables, task.strata, source)
    columns = [chunk.kept.column(k) for k in task.written] + [strings(d.tolist()) for d in drawn]
    return pa.table(columns, names=task.names)


def _one_batch(table: Any) -> Any:
    import pyarrow as pa

    batches = table.combine_chunks().to_batches()
    if len(batches) == 1:
        return batches[0]
    if not batches:
        return pa.RecordBatch.from_arrays([pa.array([], type=f.type) for f in table.schema], schema=table.schema)
    return pa.Table.from_batches(batches).combine_chunks().to_batches()[0]


def spill(table: Any, buckets: int, keys: Any, path: str) -> str:
    """``table``'s rows in ``buckets`` uniform random buckets, written to the Arrow file ``path`` as one record batch
    per bucket (rows of released values only)."""
    import pyarrow as pa

    from .shuffle import bucket_labels

    labels = bucket_labels(table.num_rows, buckets, keys)
    order = np.argsort(labels, kind="stable")
    ordered = table.take(positions(order)).combine_chunks()
    counts = np.bincount(labels, minlength=buckets)
    with pa.OSFile(path, "wb") as f, pa.ipc.new_file(f, ordered.schema) as writer:
        start = 0
        for count in counts.tolist():
            writer.write_batch(_one_batch(ordered.slice(start, count)))
            start += count
    return path


def gather(files: list[str], bucket: int) -> Any:
    """Bucket ``bucket`` of every spilled file, in order, as one table."""
    import pyarrow as pa

    batches = []
    for path in files:
        with pa.memory_map(path) as source:
            batches.append(pa.Table.from_batches([pa.ipc.open_file(source).get_batch(bucket)]))
    return concat_tables(batches).combine_chunks()


def write_rows(inp: Any, sink: Any, staging: Any, task: Task, source: Any, *, seed: Any, keep_order: bool,
               chunk_rows: int = CHUNK_ROWS) -> int:
    """Every row of ``inp`` released into ``sink`` in a uniformly random order (in the input's order with
    ``keep_order``): in memory up to :data:`MEMORY_ROWS` rows, else through bucket files in ``staging``. Returns
    the rows."""
    from .shuffle import bucket_count, keys_for, uniform_permutation

    if keep_order:
        for chunk in inp.chunks(chunk_rows):
            sink.write(released(chunk, task, source))
        return int(sink.rows)
    bound = inp.rows_bound()
    if bound <= MEMORY_ROWS:
        table = concat_tables([released(chunk, task, source) for chunk in inp.chunks(chunk_rows)])
        table = table.take(positions(uniform_permutation(table.num_rows, keys_for(seed))))
        for start in range(0, table.num_rows, chunk_rows):
            sink.write(table.slice(start, chunk_rows))
        return int(table.num_rows)
    buckets = bucket_count(bound, BUCKET_ROWS)
    labels = keys_for(seed, 0)
    files = [spill(released(chunk, task, source), buckets, labels, staging.path(f"spill-{c:06d}.arrow"))
             for c, chunk in enumerate(inp.chunks(chunk_rows))]
    for j in range(buckets):
        table = gather(files, j)
        if table.num_rows:
            sink.write(table.take(positions(uniform_permutation(table.num_rows, keys_for(seed, 1, j)))))
    return int(sink.rows)


def draw_in_memory(inp: Any, task: Task, source: Any, *, seed: Any, keep_order: bool) -> tuple[list[Any], Any]:
    """A DataFrame's randomized answers (one object array per variable, in the frame's order) and the order its
    rows are released in (a uniform permutation, the same as :func:`write_rows` draws for the same seed)."""
    from .shuffle import keys_for, uniform_permutation

    parts = [draw_chunk(chunk.text, chunk.line, task.path, task.variables, task.tables, task.strata, source)
             for chunk in inp.chunks(len(inp.frame))]
    drawn = [np.concatenate([p[i] for p in parts]) for i in range(len(task.variables))]
    n = len(inp.frame)
    order = np.arange(n, dtype=np.int64) if keep_order else uniform_permutation(n, keys_for(seed))
    return drawn, order


def _spill_part(part: str, first_line: int, prefix: str, seed: Any, buckets: int, *, task: Task,
                chunk_rows: int) -> tuple[int, list[str], str]:
    """Pass one over a dataset's part (what a Dask worker computes): its rows drawn from the part's own random
    source and spilled into ``buckets`` bucket files ``prefix-NNNNNN.arrow``. Returns the rows, the files and the
    source's name."""
    from ..guarantees.exact_table import OsRandom, SeededRandom
    from .rows import ReleaseInput
    from .shuffle import keys_for

    source: Any = OsRandom() if seed is None else SeededRandom(seed)
    keys = keys_for(seed)
    inp = ReleaseInput(part, part, task.text, task.written)
    rows, files = 0, []
    for c, chunk in enumerate(inp.part_chunks(part, chunk_rows, first_line)):
        files.append(spill(released(chunk, task._replace(path=part), source), buckets, keys,
                           f"{prefix}-{c:06d}.arrow"))
        rows += chunk.rows
    return rows, files, source.name


def _write_part(bucket: int, files: list[str], target: str, seed: Any, keep_order: bool) -> tuple[int, str]:
    """Pass two (what a Dask worker computes): one output part from one bucket of the spilled files, its rows in a
    uniform random order (in the order spilled with ``keep_order``). Returns the rows and the file's SHA-256."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from .shuffle import keys_for, uniform_permutation
    from .sinks import order_free

    writer: Any = None
    rows = 0
    with open(target, "xb") as f:
        try:
            pieces = [gather(files, bucket)] if not keep_order else (gather([p], bucket) for p in files)
            for table in pieces:
                if not keep_order:
                    table = table.take(positions(uniform_permutation(table.num_rows, keys_for(seed, 1, bucket))))
                table = order_free(table)
                if writer is None:
                    writer = pq.ParquetWriter(f, table.schema)
                writer.write_table(table.cast(writer.schema) if table.schema != writer.schema else table)
                rows += table.num_rows
            if writer is not None:
                writer.close()
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
            from ..exceptions import DataError

            raise DataError(f"{target}: cannot be written as Parquet ({' '.join(str(exc).split())[:200]})") from None
        finally:
            if writer is not None:
                writer.is_open = False  # never finished by the collector once the file is closed
    return rows, sha256_of(target)


def write_dataset(inp: Any, folder: str, staging: Any, task: Task, *, seed: Any, scheduler: str | None,
                  keep_order: bool, chunk_rows: int = CHUNK_ROWS) -> tuple[int, list[dict[str, Any]], str]:
    """A Parquet dataset folder released into the new folder ``folder`` (staged): pass one draws each input part and
    spills its rows into bucket files, pass two writes each bucket, uniformly permuted, as one output part
    ``part-NNNNN.parquet`` (its rows are a uniform random sample of the rows: the input's parts and their names say
    nothing about the output's). With ``keep_order``, one output part per input part, rows in the input's order.
    On the Dask cluster at ``scheduler``, or here. Returns the rows, each part's record (name, rows, SHA-256) and
    the random source's name."""
    from ..tables.inputs import ColumnarFile
    from .shuffle import bucket_count

    parts = inp.parts
    seeds: list[Any] = [None] * len(parts) if seed is None else np.random.SeedSequence(seed).spawn(len(parts))
    firsts, line = [], 2
    for part in parts:
        firsts.append(line)
        line += int(ColumnarFile(part).num_rows or 0)
    buckets = 1 if keep_order else bucket_count(line - 2, BUCKET_ROWS)
    os.makedirs(staging.path("spill"))
    os.mkdir(folder)
    items = [(p, first, staging.path("spill", f"p{i:06d}"), s, buckets)
             for i, (p, first, s) in enumerate(zip(parts, firsts, seeds))]
    passes = _map(scheduler, _spill_part, items, task=task, chunk_rows=chunk_rows)
    spilled = [f for _, files, _ in passes for f in files]
    if keep_order:
        units = [(0, files, os.path.join(folder, f"part-{i:05d}.parquet"), seed, True)
                 for i, (_, files, _) in enumerate(passes) if files]
    else:
        units = [(j, spilled, os.path.join(folder, f"part-{j:05d}.parquet"), seed, False) for j in range(buckets)]
    written = _map(scheduler, _write_part, units)
    records = []
    for (_, _, target, _, _), (rows, sha) in zip(units, written):
        if rows:
            records.append({"part": os.path.basename(target), "rows": rows, "sha256": sha})
        else:
            os.unlink(target)
    name = passes[0][2] if passes else ""
    if seed is not None:
        name += f", one child of the seed per part ({len(parts)} parts)"
    return sum(r for r, _, _ in passes), records, name


def _map(scheduler: str | None, function: Any, items: list[tuple[Any, ...]], **shared: Any) -> list[Any]:
    if not scheduler:
        return [function(*item, **shared) for item in items]
    from ..regression.regress_input import map_on_cluster

    return map_on_cluster(scheduler, function, items, **shared)
