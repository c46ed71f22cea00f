"""Benchmark: design time of the general and the symmetric path against the straightforward model.

Problems: k = l answers, all focal sets, uniform prior, eps = 1, objective truthful (and chi2 for the
symmetric path). Each case runs in a fresh process (time limit, peak memory). The baseline, written here,
is the obvious cvxpy model: a dense 2**l x 2**l inclusion matrix for bel and one constraint block per
ordered pair of inputs; it cannot even be built beyond l of about 16, which the table says.

Prints: path, semantics, objective, size, ours (s), peak memory, baseline (s or "> limit"), ratio and
the objective difference.

Then epsilon sweeps on asymmetric problems: every budget designed cold (a fresh cvxpy model) against one
warm-start session (HiGHS started from the previous optimal basis).

Run: ``python benchmarks/design.py [--general 4,6,8,10,12] [--symmetric 10,100,1000,5000] [--timeout 600]
[--sweep sldp:truthful:12,...]``
"""

from __future__ import annotations

import argparse
import math
import multiprocessing as mp
import resource
import sys
import time

import numpy as np


def ours(k: int, semantics: str, objective: str, path: str, queue: mp.Queue) -> None:
    from designer.optimal import DesignProblem, design

    t0 = time.perf_counter()
    r = design(DesignProblem(inputs=tuple(f"v{i}" for i in range(k)), epsilon=1.0, semantics=semantics,
                             objective=objective), path=path)
    queue.put((time.perf_counter() - t0, r.objective_value, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
               r.certificate.method))


def sweep_pair(k: int, semantics: str, objective: str, count: int, prior: str, queue: mp.Queue) -> None:
    """Design ``count`` budgets in 0.5..2 cold (a fresh cvxpy model each) and with one warm-start session."""
    import warnings

    from designer._internal.solvers import WarmStart
    from designer.exceptions import DesignWarning
    from designer.optimal import DesignProblem, design

    # Timing only: chi2 optima at this prior lump inputs together, which each design would warn about.
    warnings.simplefilter("ignore", DesignWarning)
    pi = np.full(k, 1.0 / k) if prior == "uniform" else np.arange(1, k + 1) / (k * (k + 1) / 2)
    base = DesignProblem(inputs=tuple(f"v{i}" for i in range(k)), epsilon=1.0, semantics=semantics,
                         objective=objective, prior=pi)
    grid = np.linspace(0.5, 2.0, count)
    design(base.replace(epsilon=0.4))  # imports and first-call costs outside both timings
    t0 = time.perf_counter()
    cold = [design(base.replace(epsilon=float(e))).objective_value for e in grid]
    t1 = time.perf_counter()
    warm = WarmStart()
    results = [design(base.replace(epsilon=float(e)), warm=warm) for e in grid]
    t2 = time.perf_counter()
    hot = [r.objective_value for r in results]
    started = sum(r.solver == "HIGHS (warm start)" for r in results)  # designs that started from a stored basis
    queue.put((t1 - t0, t2 - t1, float(np.max(np.abs(np.subtract(cold, hot)))), started))


def dense_baseline(k: int, semantics: str, objective: str, path: str, queue: mp.Queue) -> None:
    """The straightforward model: dense inclusion matrices, one constraint block per input pair."""
    import cvxpy as cp

    del path
    t0 = time.perf_counter()
    n = 1 << k
    sets = np.arange(1, n)
    all_sets = np.arange(n)
    inc = ((sets[None, :] & ~all_sets[:, None]) == 0).astype(float)  # inc[E, B] = B subset E (dense)
    M = cp.Variable((k, n - 1), nonneg=True)
    cons = [cp.sum(M, axis=1) == 1]
    e = math.e
    if semantics == "sldp":
        for x in range(k):
            for x2 in range(k):
                if x != x2:
                    cons.append(M[x, :] <= e * M[x2, :])
    else:
        bel = M @ inc.T
        proper = np.arange(1, n - 1)
        comp = (n - 1) ^ proper
        for x in range(k):
            for x2 in range(k):
                if x != x2:
                    cons.append(1 - bel[x, comp] <= e * bel[x2, proper])
    truth = np.array([1 << x for x in range(k)]) - 1  # column of {y(x)}
    prob = cp.Problem(cp.Maximize(sum(M[x, truth[x]] for x in range(k)) / k), cons)
    prob.solve(solver="HIGHS")
    queue.put((time.perf_counter() - t0, float(prob.value), resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, ""))


def run(target, args: tuple, timeout: float) -> tuple | None:
    ctx = mp.get_context("spawn")
    queue: mp.Queue = ctx.Queue()
    proc = ctx.Process(target=target, args=(*args, queue))
    proc.start()
    proc.join(timeout)
    if proc.is_alive():
        proc.terminate()
        proc.join()
        return None
    return None if queue.empty() else queue.get()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--general", default="4,6,8,10,12", help="k = l sizes of the general path")
    parser.add_argument("--symmetric", default="10,100,1000,5000", help="k of the symmetric path")
    parser.add_argument("--semantics", default="sldp,wldp")
    parser.add_argument("--timeout", type=float, default=600.0, help="time limit per run (s)")
    parser.add_argument("--sweep", default="sldp:truthful:8,sldp:truthful:12,sldp:chi2:12,sldp:chi2:14,"
                        "wldp:truthful:8,sldp:truthful:1000:uniform,wldp:truthful:1000:uniform",
                        help="epsilon sweeps, semantics:objective:k[:uniform] (empty: none)")
    parser.add_argument("--sweep-count", type=int, default=10, help="budgets per sweep (default 10)")
    args = parser.parse_args(argv)
    print(f"k = l, all focal sets, uniform prior, eps = 1; limit {args.timeout:g} s per run; memory = peak RSS")
    header = (f"{'path':<9} {'sem':<5} {'objective':<9} {'k':>5} {'ours (s)':>9} {'mem (MiB)':>10} "
              f"{'baseline (s)':>13} {'ratio':>9} {'obj diff':>9}  certificate")
    print(header)
    cases = []
    for sem in args.semantics.split(","):
        cases += [("general", sem, "truthful", int(k)) for k in args.general.split(",") if k]
    for sem in args.semantics.split(","):
        for objective in ("truthful", "chi2"):
            # (chi2 under WLDP is a precise design: a regular pattern of the best subset size, any k)
            cases += [("symmetric", sem, objective, int(k)) for k in args.symmetric.split(",") if k]
    for path, sem, objective, k in cases:
        mine = run(ours, (k, sem, objective, path), args.timeout)
        if mine is None:
            print(f"{path:<9} {sem:<5} {objective:<9} {k:>5} {'> ' + format(args.timeout, 'g'):>9}", flush=True)
            continue
        t, value, rss, cert = mine
        if objective == "truthful" and k <= 16:
            base = run(dense_baseline, (k, sem, objective, path), args.timeout)
            if base is None:
                base_s, ratio, diff = f"> {args.timeout:g}", f"> {args.timeout / t:.0f}x", "-"
            else:
                base_s, ratio, diff = f"{base[0]:.2f}", f"{base[0] / t:.1f}x", f"{abs(base[1] - value):.1e}"
        else:
            base_s, ratio, diff = "n/a (2**k)" if k > 16 else "n/a", "-", "-"
        print(f"{path:<9} {sem:<5} {objective:<9} {k:>5} {t:>9.2f} {rss / 1024:>10.0f} {base_s:>13} {ratio:>9} "
              f"{diff:>9}  {cert}", flush=True)
    if args.sweep:
        print(f"\nepsilon sweeps: {args.sweep_count} budgets in 0.5..2, k = l, prior 1..k normalised (symmetric "
              "path: uniform);\ncold = a fresh cvxpy model per budget, warm = one WarmStart session (HiGHS called "
              "directly,\nfrom the previous basis where that pays: staircase and size-class programs)")
        print(f"{'sem':<5} {'objective':<9} {'prior':<7} {'k':>5} {'cold (s)':>9} {'warm (s)':>9} {'ratio':>7} "
              f"{'max obj diff':>13} {'warm solves':>12}")
        for item in args.sweep.split(","):
            sem, objective, k, *rest = item.split(":")
            prior = rest[0] if rest else "1..k"
            res = run(sweep_pair, (int(k), sem, objective, args.sweep_count, prior), args.timeout)
            if res is None:
                print(f"{sem:<5} {objective:<9} {prior:<7} {k:>5} {'> ' + format(args.timeout, 'g'):>9}", flush=True)
                continue
            cold, warm, diff, nwarm = res
            print(f"{sem:<5} {objective:<9} {prior:<7} {k:>5} {cold:>9.2f} {warm:>9.2f} {cold / warm:>6.1f}x "
                  f"{diff:>13.1e} {nwarm:>12}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
