"""Designs for non-compliance within a budget against the textbook designs made private: prints the README's
Markdown table (docs/theory.md section 10.3).

The lie detector (carriers:no, textbook p = 2/12 and 10/12) and cheater detection (everyone:no, textbook forced
yes 0.3 and 0.7), planned at a prevalence of 0.3 with a fifth of the carriers (of everyone) answering no
regardless. The textbook designs are not private at any budget (a carrier never answers no); made eps-private by
answering uniformly at random with the smallest probability that suffices, with halves. designer chooses both
groups' binary mechanisms and the split, each certified eps-private in exact arithmetic. Respondents: for a 0.95
interval of half-width 0.05 on the prevalence.

    python examples/noncompliance_designs.py
"""

from __future__ import annotations

import math

from designer.planning.noncompliance_design import design_for_noncompliance, textbook_within_budget

PRIOR, SHARE, WIDTH = 0.3, 0.2, 0.05
CASES = (("lie detector", "carriers:no", (2 / 12, 10 / 12)), ("cheater detection", "everyone:no", (0.3, 0.7)))
BUDGETS = (1.0, 2.0, 4.0)


def _n(variance: float) -> int:
    return math.ceil(1.959963984540054**2 * variance / WIDTH**2)


def table() -> str:
    rows = ["| design | eps | designer: group 1 P(yes given yes), P(yes given no), share | group 2 | respondents: "
            "designer | textbook made private | ratio |",
            "|---|---|---|---|---|---|---|"]
    for name, rule, textbook in CASES:
        for eps in BUDGETS:
            d = design_for_noncompliance(eps, rule, prior=PRIOR, share=SHARE, starts=12)
            _, variance = textbook_within_budget(textbook, rule, eps, prior=PRIOR, share=SHARE)
            groups = [f"{m.matrix[0, 0]:.3f}, {m.matrix[1, 0]:.3f}, {f:.2f}" for m, f in
                      zip(d.mechanisms.values(), d.fractions)]
            rows.append(f"| {name} | {eps:g} | {groups[0]} | {groups[1]} | {_n(d.variance)} | {_n(variance)} | "
                        f"{_n(variance) / _n(d.variance):.2f} |")
    return "\n".join(rows)


if __name__ == "__main__":
    print(table())
