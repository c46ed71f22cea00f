"""Benchmark: where users wait, each row beside a baseline run in the same process.

* General WLDP designs (truthful, eps = 1): ``design()`` (Walley rows generated where they bind) against the
  full program (every pair-event row with its belief variables, HiGHS IPM: the engine's program before row
  generation), both solved here; objective difference. The full program is skipped above ``--full-max``
  inputs (k = 12 takes about a minute and 1.4 GiB).
* MLE from set answers, k = 16, eps = 0.5, a designed chi2 mechanism (8,008 focal sets): the Newton method on
  the active face (``estimate_sldp``'s default, stopping on the KKT conditions) against plain EM (the same
  stopping rule as before: change below 1e-13 or 200,000 iterations), with both KKT violations.

* Exact certificates of symmetric WLDP designs (k = 100, 1000, 5000): the compact Walley check (float filter
  of proven error, falling-factorial integers inside its band) against the same decision in Fractions with
  binomials from ``math.comb`` (not run at k = 5000: hours); each design's time and peak memory in a fresh
  process, against the goals (k = 5000 under 2 GB; SLDP without any dense map).
* Precise chi2 design under WLDP at k = 5000 (goal 10 s): the design, and its variance by FFT against the
  dense ``k x k`` factorization.
* The field pipeline at 10^7 answers: ``randomize`` (labels to rows, one draw each) against the per-row masked
  draw it replaced, and ``response_counts`` against ``np.bincount``.

Run: ``python benchmarks/speed.py [--wldp 8,10,12] [--full-max 10] [--only certificates,precise,pipeline]``
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np


def wldp_rows(sizes: list[int], full_max: int) -> None:
    from designer._internal.solvers import solve_lp
    from designer.exceptions import DesignWarning
    from designer.optimal import DesignProblem, design
    from designer.optimal.programs import linear_program

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
    from designer.estimation.shares import em, estimate_sldp, kkt_violation
    from designer.optimal import DesignProblem, design

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


def _comb_check(mech, eps: float) -> bool:
    """The compact Walley decision in Fractions, binomials from math.comb (the baseline)."""
    from fractions import Fraction
    from math import comb

    from designer._internal.exact import ratio_at_most_exp

    k = mech.k
    a = [Fraction(float(v)) for v in mech.A]
    b = [Fraction(float(v)) for v in mech.B]
    used_a = [s for s in range(1, k + 1) if a[s - 1]]
    used_b = [s for s in range(1, k) if b[s - 1]]
    total = sum(a) + sum(b)

    def bel_in(t: int) -> Fraction:
        return (sum((a[s - 1] * comb(t - 1, s - 1) / comb(k - 1, s - 1) for s in used_a), Fraction(0))
                + sum((b[s - 1] * comb(t - 1, s) / comb(k - 1, s) for s in used_b), Fraction(0)))

    def bel_out(t: int) -> Fraction:
        return sum((b[s - 1] * comb(t, s) / comb(k - 1, s) for s in used_b), Fraction(0))

    for t in range(1, k):
        pairs = [(total - bel_out(k - t), bel_out(t)), (total - bel_in(k - t), bel_in(t))]
        pairs += [(total - bel_out(k - t), bel_in(t))] if t >= 2 else []
        pairs += [(total - bel_in(k - t), bel_out(t))] if t <= k - 2 else []
        for pl, bel in pairs:
            ratio = pl / bel if bel else None
            if pl and (ratio is None or not ratio_at_most_exp(ratio.numerator, ratio.denominator, eps)):
                return False
    return True


_CHILD = """
import sys, time
from designer.optimal import DesignProblem, design
k, sem, obj = int(sys.argv[1]), sys.argv[2], sys.argv[3]
p = DesignProblem(inputs=tuple(f"v{i}" for i in range(k)), epsilon=1.0, semantics=sem, objective=obj)
t0 = time.perf_counter()
r = design(p)
seconds = time.perf_counter() - t0
peak = [line for line in open("/proc/self/status") if line.startswith("VmHWM")][0].split()[1]
print(seconds, int(peak) / 2**20, r.certificate.method)
"""


def certificate_rows() -> None:
    import subprocess
    import sys

    from designer.optimal import DesignProblem, compact_exact, design

    print("\nsymmetric designs, eps = 1: exact certificate of the Walley loss (ours: float filter + falling-factorial")
    print("integers; baseline: Fractions with math.comb), and the whole design in a fresh process")
    print(f"{'sem':>5} {'objective':>9} {'k':>5} {'cert (s)':>9} {'exact sizes':>11} {'comb (s)':>9} {'ratio':>8} "
          f"{'design (s)':>10} {'peak (GiB)':>10} certificate")
    for sem, objective, k in (("wldp", "truthful", 100), ("wldp", "truthful", 1000), ("wldp", "truthful", 5000),
                              ("sldp", "truthful", 5000), ("sldp", "chi2", 5000)):
        cert, base, counts = "", "", {}
        if sem == "wldp":
            mech = design(DesignProblem(inputs=tuple(f"v{i}" for i in range(k)), epsilon=1.0, semantics=sem)).compact
            t0 = time.perf_counter()
            assert compact_exact.walley_private(mech, 1.0, counts=counts)
            ours = time.perf_counter() - t0
            cert = f"{ours:9.4f}"
            if k <= 1000:
                t0 = time.perf_counter()
                assert _comb_check(mech, 1.0)
                slow = time.perf_counter() - t0
                base = f"{slow:9.2f} {slow / ours:7.0f}x"
            else:
                base = f"{'skipped':>9} {'':>8}"
        out = subprocess.run([sys.executable, "-c", _CHILD, str(k), sem, objective], capture_output=True, text=True,
                             check=True).stdout.split()
        exact = str(counts.get("exact", "")) if counts else ""
        print(f"{sem:>5} {objective:>9} {k:>5} {cert or '-':>9} {exact or '-':>11} {base or '-':>18} "
              f"{float(out[0]):10.2f} {float(out[1]):10.2f} {out[2]}")


def precise_rows() -> None:
    import designer.estimation.shares as estimation
    from designer.optimal import DesignProblem, design

    k = 5000
    print(f"\nprecise chi2 design under WLDP, k = {k}, eps = 1 (goal: under 10 s)")
    p = DesignProblem(inputs=tuple(f"v{i}" for i in range(k)), epsilon=1.0, semantics="wldp", objective="chi2")
    t0 = time.perf_counter()
    r = design(p)
    total = time.perf_counter() - t0
    t0 = time.perf_counter()
    fast = estimation.estimator_variance(r.mechanism)
    ours = time.perf_counter() - t0
    spectrum = estimation._circulant_spectrum
    estimation._circulant_spectrum = lambda *args: None  # the dense k x k factorization
    try:
        t0 = time.perf_counter()
        dense = estimation.estimator_variance(r.mechanism)
        base = time.perf_counter() - t0
    finally:
        estimation._circulant_spectrum = spectrum
    print(f"design {total:.2f} s ({r.certificate.method} certificate, {r.path}); variance by FFT {ours:.3f} s, "
          f"dense {base:.2f} s ({base / ours:.0f}x), relative difference {abs(fast - dense) / dense:.1e}")


def pipeline_rows() -> None:
    import designer.estimation.sampling as sampling
    from designer import Q_kRR
    from designer.estimation.shares import response_counts

    n = 10**7
    mech = Q_kRR(1.0, ["a", "b", "c", "d", "e"])
    truth = sampling.synthetic_answers(list(mech.inputs), np.full(5, 0.2), n, rng=1)
    print(f"\nfield pipeline, 5 answers, n = {n:,}, best of 3 (goal: randomize under 1 s)")

    def best(func, *args):
        times = []
        for _ in range(3):
            t0 = time.perf_counter()
            out = func(*args)
            times.append(time.perf_counter() - t0)
        return min(times), out

    ours, answers = best(sampling.randomize, mech, truth, 2)
    few = sampling.FEW_COLUMNS
    sampling.FEW_COLUMNS = 0  # the draw grouped by row with a boolean mask per row (before)
    try:
        base, before = best(sampling.randomize, mech, truth, 2)
    finally:
        sampling.FEW_COLUMNS = few
    assert np.array_equal(answers, before)
    print(f"randomize         {ours:7.3f} s   grouped draw {base:7.3f} s   ratio {base / ours:5.1f}x   same answers")
    ours, counts = best(response_counts, mech, answers)
    base, plain = best(np.bincount, answers, None, len(mech.focal))
    assert np.array_equal(counts, plain)
    print(f"response_counts   {ours:7.3f} s   np.bincount  {base:7.3f} s   ratio {ours / base:5.1f}x (ours / bincount)")
    try:
        import multi_freq_ldpy  # noqa: F401
    except ImportError:
        print("(multi-freq-ldpy is not installed: its GRR row is skipped)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--wldp", default="8,10,12")
    parser.add_argument("--full-max", type=int, default=10)
    parser.add_argument("--only", default="", help="comma-separated: wldp, mle, certificates, precise, pipeline")
    args = parser.parse_args()
    parts = set(args.only.split(",")) if args.only else {"wldp", "mle", "certificates", "precise", "pipeline"}
    if "wldp" in parts:
        wldp_rows([int(v) for v in args.wldp.split(",")], args.full_max)
    if "mle" in parts:
        mle_rows()
    if "certificates" in parts:
        certificate_rows()
    if "precise" in parts:
        precise_rows()
    if "pipeline" in parts:
        pipeline_rows()


if __name__ == "__main__":
    main()
