"""A partitioned Parquet dataset of ``--rows`` rows (default 10^8; a 10^4-row survey repeated, in ``--parts``
parts) on a local Dask cluster (``--workers`` processes): ``estimate`` counts the answers and ``regress`` counts
the distinct rows part by part on the cluster; the baseline is the same command on one process here, in the same
run (the fits agree to the printed difference). Run::

    .venv/bin/python benchmarks/cluster.py [--rows 100000000] [--parts 20] [--workers 2]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import shutil
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
WARNER = str(ROOT / "examples" / "mechanisms" / "warner-80.csv")
FORMULA = "a ~ x0 + x1 + C(region)"


def write_dataset(folder: Path, rows: int, parts: int) -> None:
    import pandas as pd
    import pyarrow as pa
    import pyarrow.parquet as pq

    from designer import Mechanism
    from designer.estimation.sampling import randomize

    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(9)
    n = 10_000
    x = rng.normal(size=(n, 2)).round(2)
    region = rng.choice(["north", "south", "east"], n)
    truth = np.where(rng.random(n) < 1 / (1 + np.exp(-(0.5 * x[:, 0] - 0.3 * x[:, 1] + (region == "east")))),
                     "yes", "no")
    mech = Mechanism.read(WARNER)
    answers = np.array(mech.columns)[randomize(mech, truth, rng=rng)]
    table = pa.Table.from_pandas(pd.DataFrame({"a": answers, "x0": x[:, 0], "x1": x[:, 1], "region": region}),
                                 preserve_index=False)
    per_part = rows // parts
    for p in range(parts):
        with pq.ParquetWriter(folder / f"part-{p:03d}.parquet", table.schema) as writer:
            for _ in range(per_part // n):
                writer.write_table(table)


def _run(argv: list[str]) -> tuple[float, dict]:
    from designer.cli import main

    out = io.StringIO()
    t0 = time.perf_counter()
    with contextlib.redirect_stdout(out):
        code = main([*argv, "--format", "json"])
    seconds = time.perf_counter() - t0
    assert code == 0, argv
    return seconds, json.loads(out.getvalue())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=float, default=1e8)
    parser.add_argument("--parts", type=int, default=20)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--folder", default="/tmp/designer-cluster-bench")
    args = parser.parse_args()
    import distributed

    rows, folder = int(args.rows), Path(args.folder)
    t0 = time.perf_counter()
    write_dataset(folder, rows, args.parts)
    print(f"{rows:,} rows in {args.parts} Parquet parts written in {time.perf_counter() - t0:.0f} s; a local Dask "
          f"cluster of {args.workers} worker processes (this machine); baseline: one process here")
    print(f"{'command':>9} {'cluster (s)':>12} {'one process (s)':>16} {'ratio':>7}  agreement")
    with distributed.LocalCluster(n_workers=args.workers, threads_per_worker=1, processes=True,
                                  dashboard_address=None, silence_logs=50) as cluster:
        address = cluster.scheduler_address
        for name, argv in (("estimate", ["estimate", str(folder), "--mechanism", WARNER, "--column", "a"]),
                           ("regress", ["regress", str(folder), "--mechanism", WARNER, "--formula", FORMULA])):
            remote_s, remote = _run([*argv, "--scheduler", address])
            local_s, local = _run(argv)
            if name == "estimate":
                diff = max(abs(a - b) for a, b in zip(remote["estimate"].values(), local["estimate"].values())) \
                    if isinstance(remote["estimate"], dict) else 0.0
            else:
                diff = max(abs(a["estimate"] - b["estimate"])
                           for a, b in zip(remote["coefficients"], local["coefficients"]))
            print(f"{name:>9} {remote_s:12.1f} {local_s:16.1f} {local_s / remote_s:6.2f}x  "
                  f"n = {remote['n']:,}, largest difference {diff:.1e}")
    shutil.rmtree(folder)


if __name__ == "__main__":
    main()
