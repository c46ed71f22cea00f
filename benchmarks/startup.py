"""Benchmark: wall time of every everyday command beside the start-up of numpy and scipy.optimize, same run.

The baseline is ``python -c "import numpy, scipy.optimize"`` (what any command solving a program must import);
each command runs in a fresh process (``python -m designer ...``) on a bundled problem or a small file:

* ``--help``; ``design`` of a bundled problem; ``audit`` of a bundled mechanism; ``plan`` of Warner's design;
* ``randomize`` and ``estimate`` of a 10,000-row survey (synthesized in a scratch folder before the timing);
* ``regress`` of the 2,000-row example (examples/regress.csv); ``export`` of a mechanism as an ES module.

Every time is the median of ``--repeats`` runs; beside it the difference from the baseline's median and the
ratio. Goal (issues 41 and 51): every command within 0.4 s of the baseline on files under 10 MB; the script exits
with status 1 naming the commands that miss it. estimate, randomize and regress read a CSV file through
designer's one reader, ``pyarrow.csv`` (designer/tables/csv_text.py), not pandas (regress reads a small file of
plain columns in designer/regression/plain_table.py), and regress builds a plain formula's matrix without patsy.
Timings on a shared, loaded machine say little: compare the ratios of one run.

The commands run with their bytecode caches, as an installed designer does (pip writes them at install, an
editable install at its first import): ``PYTHONDONTWRITEBYTECODE`` is removed from the children's environment,
and the warm-up run writes the caches (with it set, about 60 of a regression's modules are compiled from source on
every run, a quarter of a second that no installed copy pays). ``python -X importtime`` shows what a command
imports::

    python -X importtime -m designer audit examples/mechanisms/q2x3.csv 2>&1 | sort -t'|' -k2 -n | tail

Run: ``python benchmarks/startup.py [--repeats 5]``
"""

from __future__ import annotations

import argparse
import itertools
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: Goal of issue 41: a command's median within this many seconds of the baseline's.
GOAL = 0.4
BASELINE = [sys.executable, "-c", "import numpy, scipy.optimize"]
#: The children's environment: bytecode caches written and read, as an installed copy has them.
ENVIRONMENT = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def commands(scratch: Path) -> list[tuple[str, list[str]]]:
    """The everyday commands, each as a name and its arguments after ``designer``."""
    q2x3 = str(ROOT / "examples" / "mechanisms" / "q2x3.csv")
    return [
        ("--help", ["--help"]),
        ("design", ["design", str(ROOT / "problems" / "gwrr-dont-know.toml"), "--eps", "1"]),
        ("audit", ["audit", q2x3]),
        ("plan", ["plan", str(ROOT / "problems" / "warner.toml"), "--prior", "yes=0.3,no=0.7", "--width", "0.02"]),
        ("randomize", ["randomize", str(scratch / "truth.csv"), "--mechanism", q2x3, "--column", "answer",
                       "--out", str(scratch / "responses-{run}.csv"), "--keep", "id", "--seed", "2", "--simulation"]),
        ("estimate", ["estimate", str(scratch / "responses.csv"), "--mechanism", q2x3]),
        ("regress", ["regress", str(ROOT / "examples" / "regress.csv"), "--mechanism",
                     str(ROOT / "examples" / "mechanisms" / "gwrr.csv"), "--formula", "response ~ age + religious",
                     "--reference", "no"]),
        ("export", ["export", q2x3, "--to", "js", "--out", str(scratch / "q2x3.js"), "--force"]),
    ]


#: Numbers the runs: ``{run}`` in an argument becomes the run's number (randomize refuses an existing --out).
RUNS = itertools.count()


def wall_time(argv: list[str], cwd: Path) -> float:
    """Seconds from start to exit of one fresh process (its output discarded; a failure stops the benchmark)."""
    return timed(argv, cwd)[0]


def timed(argv: list[str], cwd: Path) -> tuple[float, float]:
    """Wall seconds and CPU seconds (user + system, the process and the children it waited for) of one fresh
    process. The CPU time moves much less than the wall time when other work shares the machine."""
    run = str(next(RUNS))
    argv = [a.replace("{run}", run) for a in argv]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run(argv, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, check=False,
                          env=ENVIRONMENT)
    elapsed = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise SystemExit(f"startup.py: {' '.join(argv[1:])} failed (exit {proc.returncode}): {proc.stderr.strip()}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return elapsed, cpu


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5, help="runs per command; the median is shown (default 5)")
    repeats = max(1, parser.parse_args().repeats)
    designer = [sys.executable, "-m", "designer"]
    with tempfile.TemporaryDirectory(prefix="designer-startup-") as folder:
        scratch = Path(folder)
        wall_time([*designer, "synthesize", "--prior", "yes=0.3,no=0.7", "--n", "10000", "--seed", "1",
                   "--out", str(scratch / "truth.csv")], ROOT)
        wall_time([*designer, "randomize", str(scratch / "truth.csv"), "--mechanism", str(ROOT / "examples" /
                   "mechanisms" / "q2x3.csv"), "--column", "answer", "--out", str(scratch / "responses.csv"),
                   "--seed", "2", "--simulation"], ROOT)
        for _, argv in commands(scratch):  # the file cache warm
            wall_time([*designer, *argv], ROOT)
        # Rounds: the baseline and every command once per round, so that a machine growing busier moves all alike.
        runs = [(None, BASELINE)] + [(name, [*designer, *argv]) for name, argv in commands(scratch)]
        times: dict[str | None, list[float]] = {name: [] for name, _ in runs}
        cpus: dict[str | None, list[float]] = {name: [] for name, _ in runs}
        for _ in range(repeats):
            for name, argv in runs:
                wall, cpu = timed(argv, ROOT)
                times[name].append(wall)
                cpus[name].append(cpu)
        base, base_cpu = statistics.median(times[None]), statistics.median(cpus[None])
        print(f"start-up of everyday commands, median of {repeats} fresh processes each; baseline "
              f"'python -c \"import numpy, scipy.optimize\"' {base:.3f} s wall, {base_cpu:.3f} s CPU in the same "
              f"rounds (goal: wall within {GOAL} s of it; the CPU columns move less on a shared machine)")
        print(f"{'command':<10} {'time (s)':>9} {'minus base':>11} {'ratio':>7}  {'cpu (s)':>8} {'minus base':>11} "
              f"{'ratio':>7}  goal")
        missed = []
        for name, _ in runs[1:]:
            t, c = statistics.median(times[name]), statistics.median(cpus[name])
            ok = t - base <= GOAL
            if not ok:
                missed.append(str(name))
            print(f"{name:<10} {t:9.3f} {t - base:+11.3f} {t / base:6.2f}x  {c:8.3f} {c - base_cpu:+11.3f} "
                  f"{c / base_cpu:6.2f}x  {'met' if ok else 'MISSED'}")
        sys.stdout.flush()
    if missed:
        print(f"startup.py: {', '.join(missed)} took more than {GOAL} s beyond the baseline", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
