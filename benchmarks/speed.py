"""Benchmark: where users wait, each row beside a baseline run in the same process.

* General WLDP designs (truthful, eps = 1): ``design()`` (Walley rows generated where they bind) against the
  full program (every pair-event row with its belief variables, HiGHS IPM: the engine's program before row
  generation), both solved here; objective difference. The full program is skipped above ``--full-max``
  inputs (k = 12 takes about a minute and 1.4 GiB).
* MLE from set answers, k = 16, eps = 0.5, a designed chi2 mechanism (8,008 focal sets): the Newton method on
  the active face (``estimate_sldp``'s default, stopping on the KKT conditions) against plain EM (the same
  stopping rule as before: change below 1e-13 or 200,000 iterations), with both KKT violations.

Run: ``python benchmarks/speed.py [--wldp 8,10,12] [--full-max 10]``
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np


def wldp_rows(sizes: list[int], full_max: int) -> None:
    from designer.design import DesignProblem, design
    from designer.design.programs import linear_program
    from designer.exceptions import DesignWarning
    from designer.solvers import solve_lp

    warnings.simplefilter("ignore", DesignWarning)
    print("general WLDP design, truthful, eps = 1 (ours: design() with generated rows; baseline: full program)")
    print(f"{'k = l':>5} {'prior':>8} {'ours (s)':>9} {'full (s)':>9} {'ratio':>7} {'obj diff':>9}  path")
    for k in sizes:
        for prior_name in ("uniform", "1..k"):
            prior = None if prior_name == "uniform" else np.arange(1, k + 1) / (k * (k + 1) / 2)
            p = DesignProblem(inputs=tuple(f"v{i}" for i in range(k)), epsilon=1.0, semantics="wldp",
                              objective="truthful", **({"prior": prior} if prior is not None else {}))
            t0 = time.perf_counter()
            r = design(p, path="general")
            ours = time.perf_counter() - t0
            if k <= full_max:
                t0 = time.perf_counter()
                full = solve_lp(linear_program(p), options={"solver": "ipm"})
                base = time.perf_counter() - t0
                diff = abs(full.objective - r.solver_objective)
                print(f"{k:>5} {prior_name:>8} {ours:9.2f} {base:9.2f} {base / ours:6.1f}x {diff:9.1e}  {r.path}")
            else:
                print(f"{k:>5} {prior_name:>8} {ours:9.2f} {'skipped':>9} {'':>7} {'':>9}  {r.path}")


def mle_rows() -> None:
    from designer.design import DesignProblem, design
    from designer.estimation import em, estimate_sldp, kkt_violation

    mech = design(DesignProblem(inputs=tuple(f"v{i}" for i in range(16)), epsilon=0.5, objective="chi2")).mechanism
    estimate_sldp(mech, np.ones(len(mech.focal)))  # imports out of the way
    print("\nMLE, k = 16, eps = 0.5, chi2 design with 8,008 focal sets (ours: Newton on the active face; baseline: EM)")
    print(f"{'n':>8} {'seed':>4} {'ours (s)':>9} {'steps':>6} {'KKT':>8} {'EM (s)':>8} {'EM iters':>9} {'EM KKT':>8} "
          f"{'ratio':>7}")
    for n in (10**5, 10**6):
        for seed in range(3):
            rng = np.random.default_rng(seed)
            counts = rng.multinomial(n, rng.dirichlet(np.ones(16)) @ mech.matrix).astype(float)
            t0 = time.perf_counter()
            est = estimate_sldp(mech, counts)
            ours = time.perf_counter() - t0
            t0 = time.perf_counter()
            pi, iterations = em(mech.matrix, counts)
            base = time.perf_counter() - t0
            print(f"{n:>8} {seed:>4} {ours:9.3f} {est.iterations:>6} {est.kkt_violation:8.1e} {base:8.2f} "
                  f"{iterations:>9} {kkt_violation(mech.matrix, counts, pi):8.1e} {base / ours:6.0f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--wldp", default="8,10,12")
    parser.add_argument("--full-max", type=int, default=10)
    args = parser.parse_args()
    wldp_rows([int(v) for v in args.wldp.split(",")], args.full_max)
    mle_rows()


if __name__ == "__main__":
    main()
