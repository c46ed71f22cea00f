"""The estimate verifier's full run (issue 55 item 5): random problems, designer's designs, multinomial data; every
fit checked by tests/test_estimate_fuzz.py's independent oracles and invariants (`not_converged` on valid data is one).
Prints the statuses, the broken invariants and the exceptions outside designer's error classes, each with the case
(k, eps, objective, log10 n, kind, seed) that reproduces it; exits 1 when any invariant broke.

    .venv/bin/python benchmarks/fuzz_estimate.py --fits 100000 --seconds 3600 --ends 0.05
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import fuzz_loop  # benchmarks/, beside this script

from tests.test_estimate_fuzz import OBJECTIVES, draw_case, verify


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fits", type=int, default=100_000)
    parser.add_argument("--seconds", type=float, default=3600.0, help="stop after this long (the count run is printed)")
    parser.add_argument("--ends", type=float, default=0.05, help="fraction of fits whose profile ends are recomputed")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)

    def one() -> tuple[object, Callable[[], str]]:
        k = int(rng.integers(2, 9))
        eps = float(rng.choice([0.1, 0.25, 0.5, 1.0, 2.0, 5.0]))
        objective = str(rng.choice(OBJECTIVES))
        log_n = float(rng.uniform(1.0, 6.0))
        kind = str(rng.choice(["plain", "plain", "single", "weights"]))
        seed = int(rng.integers(2**32))  # the case's own draws: printed with a failure, to run it again

        def check() -> str:
            own = np.random.default_rng(seed)
            mech, counts = draw_case(own, k, eps, objective, log_n, kind)
            status = verify(mech, counts, own, ends=bool(own.random() < args.ends))
            # tests/test_estimate_fuzz.py's invariant: valid data always reaches the maximum
            assert status != "not_converged", "not_converged on valid data"
            return status
        return (k, eps, objective, round(log_n, 15), kind, seed), check

    done, elapsed, statuses, broken = fuzz_loop.run(one, args.fits, args.seconds)
    print(f"fits {done} in {elapsed:.0f} s; statuses {dict(statuses)}; broken {len(broken)}")
    for line in broken[:20]:
        print(line)
    return 1 if broken else 0


if __name__ == "__main__":
    raise SystemExit(main())
