"""Benchmark: time to plan, with the number of designs solved, each beside a plain baseline in the same run.

* sample size (Warner, eps = 1): designer.planning (one certified design, Eq 1) against the closed form alone;
* smallest budget (Warner, n = 2000, w = 0.03): bisection over certified designs against a plain bisection
  over the closed form (no design), and the difference of the two answers;
* allocation over 3 questions (binary with don't-know, binary, 3 answers; eps = 3): designer.planning.allocate
  (global search on tabulated curves + refinement on designs) against a plain grid search over the simplex of
  splits at step 0.05 on certified designs (every grid point designed).

Run: ``python benchmarks/planning.py``
"""

from __future__ import annotations

import itertools
import math
import time
import warnings
from pathlib import Path

import numpy as np
from scipy.stats import norm

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    from designer import load_problem
    from designer.exceptions import DesignWarning
    from designer.optimal import design
    from designer.planning import accuracy_of, allocate, parse_survey, sample_size, smallest_budget

    warnings.simplefilter("ignore", DesignWarning)
    z = float(norm.ppf(0.975))
    warner = load_problem(ROOT / "problems" / "warner.toml").replace(prior=np.array([0.3, 0.7]))
    design(warner)  # imports and solver start-up out of the way
    print(f"{'task':<44} {'ours (s)':>9} {'designs':>8} {'baseline (s)':>13} {'ours/base':>9}  agreement")

    t0 = time.perf_counter()
    n = sample_size(accuracy_of(design(warner).mechanism, "sldp", [0.3, 0.7]), 0.02).n
    ours = time.perf_counter() - t0
    t0 = time.perf_counter()
    p = math.e / (1 + math.e)
    closed = math.ceil(z**2 * (0.21 + p * (1 - p) / (2 * p - 1) ** 2) / 0.02**2)
    base = time.perf_counter() - t0
    print(f"{'sample size, Warner eps = 1, w = 0.02':<44} {ours:9.3f} {1:8d} {base:13.6f} {ours / base:7.0f}x  "
          f"n {n} vs {closed}")

    t0 = time.perf_counter()
    plan = smallest_budget(warner, 2000, 0.03)
    eps, solved = plan.epsilon, plan.designs_solved
    ours = time.perf_counter() - t0
    t0 = time.perf_counter()
    lo, hi = 0.0, 20.0
    while hi - lo > 2e-4:
        mid = (lo + hi) / 2
        e = math.exp(mid)
        ok = z * math.sqrt((0.21 + e / (e - 1) ** 2) / 2000) <= 0.03
        lo, hi = (lo, mid) if ok else (mid, hi)
    base = time.perf_counter() - t0
    print(f"{'smallest budget, Warner n = 2000, w = 0.03':<44} {ours:9.3f} {solved:8d} {base:13.6f} "
          f"{ours / base:7.0f}x  eps {eps:.5f} vs {hi:.5f}")

    survey = parse_survey({"name": "three", "epsilon": 3.0, "question": [
        {"name": "drugs", "inputs": ["yes", "no"], "prior": [0.1, 0.9], "structure": {"dont_know": 0.1}},
        {"name": "vote", "inputs": ["yes", "no"], "prior": [0.45, 0.55]},
        {"name": "income", "inputs": ["low", "mid", "high"], "prior": [0.5, 0.3, 0.2]}]})
    t0 = time.perf_counter()
    result = allocate(survey, joint=False)
    ours = time.perf_counter() - t0
    t0 = time.perf_counter()
    cache: dict[tuple[int, float], float] = {}

    def v(i: int, e: float) -> float:
        key = (i, round(e, 9))
        if key not in cache:
            cache[key] = design(survey.questions[i].replace(epsilon=key[1])).variance if e > 0 else math.inf
        return cache[key]

    step, best = 0.05, (math.inf, None)
    for a, b in itertools.product(np.arange(step, 3.0, step), repeat=2):
        c = 3.0 - a - b
        if c > 1e-9:
            total = v(0, a) + v(1, b) + v(2, c)
            best = min(best, (total, (a, b, c)), key=lambda t: t[0])
    base = time.perf_counter() - t0
    print(f"{'allocation, 3 questions, eps = 3':<44} {ours:9.3f} {result.designs_solved:8d} {base:13.3f} "
          f"{ours / base:7.2f}x  total {result.total_variance:.5f} vs grid {best[0]:.5f} "
          f"({len(cache)} designs, step {step})")
    print(f"{'':<44} split {tuple(round(e, 4) for e in result.epsilons)} vs grid "
          f"{tuple(round(float(e), 2) for e in best[1])}")


if __name__ == "__main__":
    main()
