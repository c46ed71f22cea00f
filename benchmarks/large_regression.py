"""Regression on data of any size (``regress`` on Parquet, read in chunks), against today's in-memory fit of the
same rows in the same run, each in a fresh process (peak memory is the process's).

Two data sets of ``--rows`` rows (default 10^7) with 5 covariates, a Warner design at eps = ln 4:

* *replicated*: a 10^4-row survey repeated; the counted distinct rows are fitted (the coefficients equal the
  survey's, the standard errors are the survey's divided by sqrt(rows / 10^4));
* *continuous*: fresh normal covariates, no row repeats; streamed Newton passes.

The goals (issue 27): under 60 s and under 1.5 GB for 10^7 rows. Run::

    .venv/bin/python benchmarks/large_regression.py [--rows 10000000] [--folder /tmp/designer-bench]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
WARNER = ROOT / "examples" / "mechanisms" / "warner-80.csv"
FORMULA = "a ~ x0 + x1 + x2 + x3 + x4"
#: The goals for 10^7 rows (issue 27).
GOAL_SECONDS, GOAL_GIB = 60, 1.5
BETA = np.array([0.5, -0.3, 0.2, 0.0, 0.4])


def _answers(rng: np.random.Generator, x: np.ndarray) -> np.ndarray:
    from designer import Mechanism
    from designer.estimation.sampling import randomize

    mech = Mechanism.read(WARNER)
    truth = np.where(rng.random(len(x)) < 1 / (1 + np.exp(-(x @ BETA - 0.2))), "yes", "no")
    return np.array(mech.columns)[randomize(mech, truth, rng=rng)]


def write_data(folder: Path, rows: int) -> tuple[Path, Path, Path]:
    """The 10^4-row survey, its replication to ``rows`` rows and ``rows`` continuous rows (Parquet)."""
    import pandas as pd
    import pyarrow as pa
    import pyarrow.parquet as pq

    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(5)
    x = rng.normal(size=(10_000, 5))
    small = pd.DataFrame({"a": _answers(rng, x), **{f"x{i}": x[:, i] for i in range(5)}})
    paths = folder / "survey.parquet", folder / f"replicated-{rows}.parquet", folder / f"continuous-{rows}.parquet"
    small.to_parquet(paths[0])
    table = pa.Table.from_pandas(small, preserve_index=False)
    if not paths[1].exists():
        with pq.ParquetWriter(paths[1], table.schema) as writer:
            for _ in range(rows // 10_000):
                writer.write_table(table)
    if not paths[2].exists():
        with pq.ParquetWriter(paths[2], table.schema) as writer:
            for start in range(0, rows, 500_000):
                k = min(500_000, rows - start)
                x = rng.normal(size=(k, 5))
                part = pd.DataFrame({"a": _answers(rng, x), **{f"x{i}": x[:, i] for i in range(5)}})
                writer.write_table(pa.Table.from_pandas(part, preserve_index=False))
    return paths


#: Appended to each child's code: its own peak resident set (KiB) as the last line of stderr.
PEAK = "\nimport resource, sys; print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, file=sys.stderr)"


def _run(code: str) -> tuple[float, float, dict]:
    """Seconds, peak resident GiB and the JSON ``python -c code`` prints, in a fresh process."""
    t0 = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", code + PEAK], capture_output=True, text=True, check=True, cwd=ROOT)
    seconds = time.perf_counter() - t0
    return seconds, int(done.stderr.strip().splitlines()[-1]) / 2**20, json.loads(done.stdout)


def chunked(path: Path) -> tuple[float, float, dict]:
    code = ("from designer.cli import main\n"
            f"assert main(['regress', {str(path)!r}, '--mechanism', {str(WARNER)!r}, '--formula', {FORMULA!r}, "
            "'--format', 'json']) == 0")
    return _run(code)


def in_memory(path: Path) -> tuple[float, float, dict]:
    code = ("import json, pandas as pd; from designer import Mechanism; from designer.regression import regress; "
            f"d = pd.read_parquet({str(path)!r}); f = regress({FORMULA!r}, d, Mechanism.read({str(WARNER)!r})); "
            "print(json.dumps({'estimate': f.params.tolist(), 'stderr': f.coefficients['stderr'].tolist()}))")
    return _run(code)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=float, default=1e7)
    parser.add_argument("--folder", default="/tmp/designer-bench")
    parser.add_argument("--no-baseline", action="store_true", help="skip the in-memory fits (10^8 rows)")
    args = parser.parse_args()
    rows = int(args.rows)
    survey, replicated, continuous = write_data(Path(args.folder), rows)
    missed = []
    _, _, one = chunked(survey)
    print(f"regress, {rows:,} rows, 5 covariates, Warner design (ours: read in chunks; baseline: today's "
          "in-memory fit of the same rows; fresh processes)")
    print(f"{'data':>11} {'path':>14} {'ours (s)':>9} {'peak GiB':>9} {'memory (s)':>11} {'peak GiB':>9} "
          f"{'ratio':>7} {'max |diff|':>11}")
    for name, path, how in (("replicated", replicated, "counted rows"), ("continuous", continuous, "streamed")):
        seconds, peak, fit = chunked(path)
        if rows <= 10**7 and (seconds > GOAL_SECONDS or peak > GOAL_GIB):
            missed.append(f"{name}: {seconds:.0f} s, {peak:.2f} GiB (goal: under {GOAL_SECONDS} s and {GOAL_GIB} GiB)")
        estimate = np.array([c["estimate"] for c in fit["coefficients"]])
        if args.no_baseline:
            base = "skipped"
            print(f"{name:>11} {how:>14} {seconds:9.1f} {peak:9.2f} {base:>11}")
        else:
            b_seconds, b_peak, base_fit = in_memory(path)
            diff = float(np.abs(estimate - np.array(base_fit["estimate"])).max())
            print(f"{name:>11} {how:>14} {seconds:9.1f} {peak:9.2f} {b_seconds:11.1f} {b_peak:9.2f} "
                  f"{b_seconds / seconds:6.1f}x {diff:11.1e}")
        if name == "replicated":
            m = rows / 10_000
            se = np.array([c["stderr"] for c in fit["coefficients"]])
            se_one = np.array([c["stderr"] for c in one["coefficients"]])
            coef_one = np.array([c["estimate"] for c in one["coefficients"]])
            print(f"{'':>11} replicated vs the 10^4-row survey: coefficients within "
                  f"{np.abs(estimate - coef_one).max():.1e}, standard errors x sqrt({m:g}) within "
                  f"{np.abs(se * np.sqrt(m) / se_one - 1).max():.1e} (relative)")
    if os.environ.get("KEEP_DATA") is None:
        for path in (replicated, continuous):
            path.unlink()
    if missed:
        print("missed: " + "; ".join(missed))
        sys.exit(1)


if __name__ == "__main__":
    main()
