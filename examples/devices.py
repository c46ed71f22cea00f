"""Designs a respondent can run with a die, two dice, cards, coins or a spinner, and what the device costs.

1. The GWRR problem with a don't-know answer (problems/gwrr-dont-know.toml: SLDP, truthful, don't-know mass 0.2)
   on each device at several budgets: the truthful probability, the variance per respondent and the cost
   against the continuous optimum. A device whose grid cannot hold 0.2 exactly uses the nearest multiple of
   1/D (stated in the table).
2. k-ary truthful and gain problems (k = 3..5) on two dice (D = 36) and a deck of cards (D = 52): the grid
   optimum (proven, MIP gap 0) against the continuous optimum.
3. The card for eps = 1 with two dice (written with --card FILE, HTML).

Run: ``python examples/devices.py [--card card.html]``
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from designer import load_problem
from designer.devices import grid_design, make_rules, parse_device, render, verify
from designer.optimal import DesignProblem

ROOT = Path(__file__).resolve().parents[1]
DEVICES = ("die", "coins:3", "spinner:10", "dice2", "cards", "coins:6")
BUDGETS = (0.5, 1.0, 2.0, 3.0)


def gwrr_table() -> list[dict[str, object]]:
    base = load_problem(ROOT / "problems" / "gwrr-dont-know.toml")
    rows = []
    for name in DEVICES:
        device = parse_device(name)
        d = device.denominator
        dk = round(0.2 * d) / d
        for eps in BUDGETS:
            problem = base.replace(epsilon=eps, dont_know=dk)
            g = grid_design(problem, device, find_within_1pct=False)
            assert verify(device, make_rules(device, g.counts, problem.inputs), g.counts)
            rows.append({"device": name, "D": d, "dont_know": f"{round(0.2 * d)}/{d}", "eps": eps,
                         "truthful": g.objective_value, "continuous": g.continuous_objective_value,
                         "cost_%": 100 * g.objective_cost, "variance": g.variance, "variance_ratio": g.variance_ratio})
    return rows


def kary_table() -> list[dict[str, object]]:
    rows = []
    for k in (3, 4, 5):
        inputs = tuple("abcde"[:k])
        rng = np.random.default_rng(k)
        gain = np.zeros((k, 1 << k))
        for x in range(k):
            for m in range(1, 1 << k):
                gain[x, m] = (1.0 if m == 1 << x else 0.0) + (0.3 * rng.random() if m >> x & 1 else 0.0)
        for objective in ("truthful", "gain"):
            problem = DesignProblem(inputs=inputs, epsilon=1.0, objective=objective,
                                    gain=gain if objective == "gain" else None)
            for name in ("dice2", "cards"):
                g = grid_design(problem, parse_device(name), find_within_1pct=False)
                rows.append({"k": k, "objective": objective, "device": name, "grid": g.objective_value,
                             "continuous": g.continuous_objective_value, "cost_%": 100 * g.objective_cost,
                             "proven_optimal": g.optimal, "symmetric": g.symmetric})
    return rows


def card(path: str) -> None:
    device = parse_device("dice2")
    problem = load_problem(ROOT / "problems" / "gwrr-dont-know.toml").replace(epsilon=1.0, dont_know=7 / 36)
    g = grid_design(problem, device, find_within_1pct=False)
    rules = make_rules(device, g.counts, problem.inputs)
    Path(path).write_text(render(device, rules, g.focal_sets, problem.frame, "html",
                                 "Yes / no / don't know with two dice, eps = 1"))
    print(render(device, rules, g.focal_sets, problem.frame, "text"))


def main() -> None:
    import pandas as pd

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--card", help="write the two-dice card for eps = 1 (HTML)")
    args = parser.parse_args()
    with pd.option_context("display.width", 160, "display.float_format", "{:.4f}".format):
        print("GWRR with don't-know 0.2 (nearest multiple of 1/D), SLDP, truthful:")
        print(pd.DataFrame(gwrr_table()).to_string(index=False))
        print("\nk-ary problems at eps = 1 (uniform prior), grid optimum against the continuous optimum:")
        print(pd.DataFrame(kary_table()).to_string(index=False))
    if args.card:
        print()
        card(args.card)


if __name__ == "__main__":
    main()
