"""Benchmark: design time of the general path against the straightforward dense cvxpy model.

For k = l in SIZES (all 2**l - 1 focal sets, objective truthful, eps = 1, uniform prior) it times
``designer.design`` (sparse blocks, certification included) and a baseline written here: the obvious
cvxpy model with a dense 2**l x 2**l inclusion matrix for bel and one constraint block per ordered pair
of inputs, run in a subprocess with a time limit. Prints size, ours (s), baseline (s or "> timeout"),
ratio and the objective difference.

Run: ``python benchmarks/design.py [--sizes 4,6,8] [--semantics wldp,sldp] [--timeout 600]``.
"""

from __future__ import annotations

import argparse
import math
import multiprocessing as mp
import sys
import time

import numpy as np

from designer.design import DesignProblem, design


def dense_baseline(k: int, l: int, eps: float, semantics: str, queue: mp.Queue) -> None:
    """The straightforward model: dense inclusion matrices, one constraint block per input pair."""
    import cvxpy as cp

    t0 = time.perf_counter()
    n = 1 << l
    sets = np.arange(1, n)
    all_sets = np.arange(n)
    inc = ((sets[None, :] & ~all_sets[:, None]) == 0).astype(float)  # inc[E, B] = B subset E (dense)
    M = cp.Variable((k, n - 1), nonneg=True)
    cons = [cp.sum(M, axis=1) == 1]
    e = math.exp(eps)
    if semantics == "sldp":
        for x in range(k):
            for x2 in range(k):
                if x != x2:
                    cons.append(M[x, :] <= e * M[x2, :])
    else:
        bel = M @ inc.T  # (k, 2**l)
        proper = np.arange(1, n - 1)
        comp = (n - 1) ^ proper
        for x in range(k):
            for x2 in range(k):
                if x != x2:
                    cons.append(1 - bel[x, comp] <= e * bel[x2, proper])
    truth = np.array([1 << x for x in range(k)]) - 1  # column of {y(x)}
    objective = cp.Maximize(sum(M[x, truth[x]] for x in range(k)) / k)
    prob = cp.Problem(objective, cons)
    prob.solve(solver="HIGHS")
    queue.put((time.perf_counter() - t0, float(prob.value)))


def run_baseline(k: int, l: int, eps: float, semantics: str, timeout: float) -> tuple[float | None, float]:
    ctx = mp.get_context("spawn")
    queue: mp.Queue = ctx.Queue()
    proc = ctx.Process(target=dense_baseline, args=(k, l, eps, semantics, queue))
    proc.start()
    proc.join(timeout)
    if proc.is_alive():
        proc.terminate()
        proc.join()
        return None, math.nan
    if queue.empty():
        return None, math.nan
    return queue.get()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="4,6,8")
    parser.add_argument("--semantics", default="wldp,sldp")
    parser.add_argument("--timeout", type=float, default=600.0, help="baseline time limit per size (s)")
    parser.add_argument("--eps", type=float, default=1.0)
    args = parser.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",")]
    print(f"design time, k = l, all focal sets, truthful, eps = {args.eps}, baseline limit {args.timeout:g} s")
    print(f"{'sem':<5} {'k=l':>4} {'ours (s)':>9} {'baseline (s)':>13} {'ratio':>8} "
          f"{'objective diff':>15}  certificate")
    for semantics in args.semantics.split(","):
        for size in sizes:
            labels = tuple(f"v{i}" for i in range(size))
            t0 = time.perf_counter()
            result = design(DesignProblem(inputs=labels, epsilon=args.eps, semantics=semantics))
            ours = time.perf_counter() - t0
            base_t, base_obj = run_baseline(size, size, args.eps, semantics, args.timeout)
            if base_t is None:
                base, ratio, diff = f"> {args.timeout:g}", f"> {args.timeout / ours:.0f}x", "-"
            else:
                base, ratio = f"{base_t:.2f}", f"{base_t / ours:.1f}x"
                diff = f"{abs(base_obj - result.objective_value):.2e}"
            print(f"{semantics:<5} {size:>4} {ours:>9.2f} {base:>13} {ratio:>8} {diff:>15}  "
                  f"{result.certificate.method}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
