"""Benchmark: ``estimate`` and ``randomize`` on a large answers file beside a plain reading of the same column.

Writes, once, an answers file of ``--rows`` respondents (``id``, ``answer`` the true value ``yes``/``no``,
``response`` a set answer ``{yes}``, ``{no}`` or ``{yes,no}`` of the bundled design ``q2x3``) as CSV and as Parquet
in ``--folder`` (default: a folder under the system's temporary directory, kept between runs), then times, each
step in a fresh process (one at a time, at low priority) so that its peak memory is its own:

* ``estimate`` of the ``response`` column (``designer.estimate``: the one CSV reader, the counts, the fit);
* the reference for it: the same column read by ``pyarrow.csv.read_csv`` (or ``pyarrow.parquet.read_table``), its
  cells dictionary-encoded and counted with ``numpy.bincount`` (no checks, no fit), and by ``pandas.read_csv``
  with ``value_counts``;
* ``randomize`` of the ``answer`` column into a new CSV file (``designer.randomize``, a seed, ``simulation``:
  the ledger's pass over the input, the draw, the shuffle, the writer);
* the reference for it: ``pyarrow.csv.read_csv`` of the column and ``pyarrow.csv.write_csv`` of it (a copy, no
  draw).

Each line gives the seconds of the step's work (imports done before the clock starts) on the wall clock and in
CPU time (``time.process_time``, every thread of the process: on a loaded machine the wall clock of a process at
low priority says little), the ratios of CPU times to the step's references (``estimate`` to the pyarrow and
pandas counts, ``randomize`` to the pyarrow copy and the pandas count) and the process's peak resident memory
(``resource.getrusage``). Compare the ratios, not the seconds, between runs on a shared machine.

Run: ``python benchmarks/large_files.py [--rows 10000000] [--folder DIR]``
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import resource
import subprocess
import sys
import tempfile
import time
from typing import Any

ROOT = pathlib.Path(__file__).resolve().parents[1]
MECHANISM = ROOT / "examples" / "mechanisms" / "q2x3.csv"
#: The steps, in the order they run, and the references each is compared with (none: it is a reference).
STEPS: dict[str, tuple[str, ...]] = {
    "pyarrow-count-csv": (), "pandas-count-csv": (), "estimate-csv": ("pyarrow-count-csv", "pandas-count-csv"),
    "pyarrow-count-parquet": (), "estimate-parquet": ("pyarrow-count-parquet",),
    "pyarrow-copy-csv": (), "randomize-csv": ("pyarrow-copy-csv", "pandas-count-csv"),
}


def generate(folder: pathlib.Path, rows: int) -> tuple[pathlib.Path, pathlib.Path]:
    """``answers-ROWS.csv`` and ``.parquet`` in ``folder`` (written once; kept when present)."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.csv as pacsv
    import pyarrow.parquet as pq

    csv, parquet = folder / f"answers-{rows}.csv", folder / f"answers-{rows}.parquet"
    if csv.exists() and parquet.exists():
        return csv, parquet
    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(1)
    truth = rng.random(rows) < 0.3  # 30% yes
    # q2x3: yes -> {yes} .6, {no} .2, {yes,no} .2; no -> {yes} .2, {no} .6, {yes,no} .2
    u = rng.random(rows)
    code = np.where(truth, np.where(u < 0.6, 0, np.where(u < 0.8, 1, 2)), np.where(u < 0.2, 0, np.where(u < 0.8, 1, 2)))
    words = np.array(["{yes}", "{no}", "{yes,no}"])
    table = pa.table({"id": np.arange(1, rows + 1), "answer": np.where(truth, "yes", "no"), "response": words[code]})
    pacsv.write_csv(table, csv, pacsv.WriteOptions(quoting_style="needed"))
    pq.write_table(table, parquet)
    return csv, parquet


def _count_arrow(table: Any) -> Any:
    import numpy as np

    column = table.column("response").combine_chunks().dictionary_encode()
    return np.bincount(column.indices.to_numpy(), minlength=len(column.dictionary))


def run_step(step: str, csv: pathlib.Path, parquet: pathlib.Path, work: pathlib.Path) -> dict[str, Any]:
    """One step's seconds and peak memory (in this process)."""
    import numpy as np  # noqa: F401  (imports before the clock)
    import pandas as pd
    import pyarrow.csv as pacsv
    import pyarrow.parquet as pq

    import designer

    data = parquet if step.endswith("parquet") else csv
    start, cpu = time.perf_counter(), time.process_time()
    if step.startswith("pyarrow-count"):
        table = (pq.read_table(data, columns=["response"]) if data == parquet else
                 pacsv.read_csv(data, convert_options=pacsv.ConvertOptions(include_columns=["response"])))
        n = int(_count_arrow(table).sum())
    elif step == "pandas-count-csv":
        n = int(pd.read_csv(data, usecols=["response"])["response"].value_counts().sum())
    elif step.startswith("estimate"):
        n = int(designer.estimate(str(data), str(MECHANISM)).n)
    elif step == "pyarrow-copy-csv":
        table = pacsv.read_csv(data, convert_options=pacsv.ConvertOptions(include_columns=["answer"]))
        pacsv.write_csv(table, work / "copy.csv")
        n = table.num_rows
    elif step == "randomize-csv":
        out = work / "released.csv"
        n = int(designer.randomize(str(data), str(MECHANISM), column="answer", out=str(out), seed=1,
                                   simulation=True, ledger=str(work / "ledger.json")).n)
    else:
        raise SystemExit(f"unknown step {step!r}")
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # kB on Linux
    return {"step": step, "seconds": seconds, "cpu": cpu, "rows": n, "peak_mb": peak}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--folder", default=os.path.join(tempfile.gettempdir(), "designer-large-files"))
    parser.add_argument("--step", help=argparse.SUPPRESS)  # one step, in a child process
    parser.add_argument("--work", help=argparse.SUPPRESS)
    parser.add_argument("--only", help="comma-separated steps to run (default: all)")
    args = parser.parse_args()
    folder = pathlib.Path(args.folder)
    if args.step:
        csv, parquet = folder / f"answers-{args.rows}.csv", folder / f"answers-{args.rows}.parquet"
        print(json.dumps(run_step(args.step, csv, parquet, pathlib.Path(args.work))))
        return
    start = time.perf_counter()
    csv, parquet = generate(folder, args.rows)
    print(f"{args.rows:,} rows: {csv} ({csv.stat().st_size / 2**20:.0f} MB), {parquet.name} "
          f"({parquet.stat().st_size / 2**20:.0f} MB); ready in {time.perf_counter() - start:.1f} s")
    steps = [s for s in STEPS if not args.only or s in args.only.split(",")]
    seconds: dict[str, float] = {}
    for step in steps:
        with tempfile.TemporaryDirectory(dir=folder) as work:
            child = subprocess.run([sys.executable, __file__, "--rows", str(args.rows), "--folder", str(folder),
                                    "--step", step, "--work", work], capture_output=True, text=True, check=False,
                                   preexec_fn=lambda: os.nice(10))
        if child.returncode:
            print(f"{step:24} failed: {child.stderr.strip().splitlines()[-1:]}")
            continue
        result = json.loads(child.stdout.strip().splitlines()[-1])
        seconds[step] = result["cpu"]
        ratio = ", ".join(f"{result['cpu'] / seconds[r]:.1f} x {r}" for r in STEPS[step] if r in seconds)
        print(f"{step:22} {result['seconds']:7.2f} s {result['cpu']:7.2f} s cpu  {ratio:50} "
              f"peak {result['peak_mb']:5.0f} MB  ({result['rows']:,} rows)")


if __name__ == "__main__":
    main()
