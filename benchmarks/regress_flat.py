"""Flat directions of small randomized-response logits (issue 55 item 4): how many fits that said ``converged``
before the search for terms the likelihood does not bound now say ``not_identified`` (a 0.95 likelihood-ratio
interval unbounded on one side) or ``not_converged`` (the log-likelihood at infinity above the estimate's), and the
standard errors the flagged terms had. Each surveyed fit is run twice: with the search and with it switched off.

    .venv/bin/python benchmarks/regress_flat.py --fits 1000 --seed 123
"""

from __future__ import annotations

import argparse
import collections
import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from designer import Mechanism
from designer.exceptions import RegressionError
from designer.regression import flat, regress


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fits", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=123)
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    draws = np.random.default_rng(args.seed)
    moved: collections.Counter[tuple[str, str]] = collections.Counter()
    errors: dict[str, list[float]] = {"not_identified": [], "not_converged": []}
    search = flat.LimitSearch.terms
    for _ in range(args.fits):
        n = int(draws.integers(10, 201))
        c = int(draws.integers(1, 3))
        p = float(draws.choice([0.6, 0.7, 0.8, 0.9]))
        strength = float(draws.choice([0.5, 2.0, 6.0]))
        rng = np.random.default_rng(int(draws.integers(2**32)))
        x = np.round(rng.normal(size=(n, c)), 2)
        beta = rng.normal(scale=strength, size=c + 1)
        truth = (rng.random(n) < 1 / (1 + np.exp(-(beta[0] + x @ beta[1:])))).astype(int)
        answers = np.where(rng.random(n) < p, truth, 1 - truth)
        data = pd.DataFrame({f"x{j}": x[:, j] for j in range(c)})
        data["r"] = np.array(["a", "b"])[answers]
        mech = Mechanism(np.array([[p, 1 - p], [1 - p, p]]), inputs=["a", "b"], frame=["a", "b"], focal=[1, 2])
        formula = "r ~ " + " + ".join(f"x{j}" for j in range(c))
        try:
            new = regress(formula, data, mech, reference="a")
            flat.LimitSearch.terms = lambda self, functions, candidates=None, back=None: []  # type: ignore[method-assign]
            old = regress(formula, data, mech, reference="a")
        except RegressionError:
            continue
        finally:
            flat.LimitSearch.terms = search  # type: ignore[method-assign]
        moved[(str(old.status), str(new.status))] += 1
        if new.flat and str(old.status) == "converged" and str(new.status) in errors:
            se = old.coefficients["stderr"].to_numpy()[[t.index for t in new.flat]]
            errors[str(new.status)] += [float(s) for s in se if np.isfinite(s)]
    print("status without the search -> with it: fits")
    for (before, after), count in sorted(moved.items()):
        print(f"  {before} -> {after}: {count}")
    for status, values in errors.items():
        if values:
            v = np.array(values)
            print(f"standard errors the flagged terms had ({status}): {v.size} terms, min {v.min():.3g}, "
                  f"median {np.median(v):.3g}, max {v.max():.3g}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
