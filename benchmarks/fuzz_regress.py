"""The regress verifier's full run (issue 55 item 5): the problems tests/test_regress_verifier.py draws (Warner's
design, a forced design, k-RR at three inputs; 25-250 respondents; a covariate at scales 1e-150..1e150 and offsets up
to 1e6; a factor with an unused level; frequency weights), drawn here by a seeded generator, each checked by that
test's independent oracle. Prints what happened to the fits, the broken invariants and the exceptions outside
``RegressionError``; exits 1 when there is one.

    .venv/bin/python benchmarks/fuzz_regress.py --fits 10000 --seconds 1800 --seed 0
"""

from __future__ import annotations

import argparse
import sys
import warnings
from collections.abc import Callable
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import fuzz_loop  # benchmarks/, beside this script

from tests.test_regress_verifier import DESIGNS, check


def draw(rng: np.random.Generator) -> tuple:
    """One problem, as the test's hypothesis strategy draws it."""
    design = str(rng.choice(sorted(DESIGNS)))
    matrix = DESIGNS[design]
    return (design, matrix, matrix.shape[0], int(rng.integers(25, 251)), int(rng.integers(0, 2**31 - 1)),
            10.0 ** float(rng.choice([-150, -20, 0, 3, 20, 150])), float(rng.choice([0.0, 0.0, 1e3, 1e6])),
            bool(rng.integers(0, 2)), bool(rng.integers(0, 2)))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fits", type=int, default=10_000)
    parser.add_argument("--seconds", type=float, default=1800.0, help="stop after this long (the count run is printed)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    rng = np.random.default_rng(args.seed)

    def one() -> tuple[object, Callable[[], str]]:
        problem = draw(rng)
        return (problem[0], *problem[3:]), lambda: str(check(problem))

    done, elapsed, outcomes, broken = fuzz_loop.run(one, args.fits, args.seconds)
    print(f"fits {done} in {elapsed:.0f} s; {dict(outcomes)}; broken {len(broken)}")
    for line in broken[:20]:
        print(line)
    return 1 if broken else 0


if __name__ == "__main__":
    raise SystemExit(main())
