"""Designs over the problem space (issue 57), at scale: random SLDP problems (2-5 inputs, budgets 0.1-5, priors
drawn from a Dirichlet, exact or capped don't-know masses, lying bounds, random focal families, four objectives),
each checked by tests/optimal/test_design_space.py's independent oracles (the belief of every event, the structure in
rational arithmetic, an independent LP over every eps-SLDP design for each "infeasible"). Prints the outcomes, the
slowest designs and every broken invariant or failure outside the refusal classes; exits 1 when there is one.

    .venv/bin/python benchmarks/design_space.py --problems 2000 --seed 0
"""

from __future__ import annotations

import argparse
import collections
import sys
import time
import traceback
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from designer.optimal import DesignProblem
from tests.optimal.test_design_space import check_design

OBJECTIVES = ("variance", "max_variance", "truthful", "chi2")


def draw(rng: np.random.Generator) -> tuple[dict, str]:
    """One problem's fields and its objective."""
    k = int(rng.integers(2, 6))
    fields: dict = {"inputs": tuple(f"x{i}" for i in range(k)),
                    "epsilon": float(rng.choice([0.1, 0.25, 0.5, 1.0, 2.0, 3.0, 5.0]))}
    if rng.random() < 0.7:
        prior = np.clip(rng.dirichlet(np.full(k, 0.7)), 0.01, None)
        fields["prior"] = tuple(prior / prior.sum())
    shape = rng.random()
    if shape < 0.2:
        fields["dont_know"] = float(rng.choice([0.05, 0.2, 0.5]))
    elif shape < 0.4:
        fields["dont_know_max"] = float(rng.choice([0.05, 0.25, 0.6]))
    if rng.random() < 0.4:
        fields["lie_max"] = float(rng.choice([0.02, 0.1, 0.3, 0.6]))
    if rng.random() < 0.3:
        full = (1 << k) - 1
        family = {int(m) for m in rng.integers(1, full + 1, size=int(rng.integers(1, 2 * k + 1)))}
        if "dont_know" in fields:
            family.add(full)
        fields["focal_sets"] = tuple(sorted(family))
    return fields, str(rng.choice(OBJECTIVES))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--problems", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    outcomes: collections.Counter[str] = collections.Counter()
    broken: list[str] = []
    slow: list[tuple[float, str]] = []
    start = time.perf_counter()
    for _ in range(args.problems):
        fields, objective = draw(rng)
        t0 = time.perf_counter()
        try:
            outcomes[check_design(DesignProblem(**fields), objective)] += 1
        except AssertionError as error:
            broken.append(f"{fields} {objective}: invariant {error}")
        except Exception:  # what the run counts: a failure outside the refusal classes
            broken.append(f"{fields} {objective}: {traceback.format_exc(limit=2)}")
        slow.append((time.perf_counter() - t0, f"{fields} {objective}"))
    slow.sort(reverse=True)
    print(f"problems {args.problems} in {time.perf_counter() - start:.0f} s; {dict(outcomes)}; broken {len(broken)}")
    print("slowest: " + "; ".join(f"{s:.1f} s" for s, _ in slow[:5]))
    print(f"the slowest: {slow[0][1]}" if slow else "")
    for line in broken[:20]:
        print(line)
    return 1 if broken else 0


if __name__ == "__main__":
    raise SystemExit(main())
