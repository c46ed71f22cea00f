"""
Regression from randomized answers: Fair's affairs survey
=========================================================

Who had an affair? Fair's 1974 survey of 6,366 women, asked through a designed yes / no / don't-know mechanism.

The data (Fair, "A theory of extramarital affairs", 1978) ship with statsmodels; nothing is copied here. The
answer "had an affair" (affairs > 0) is randomized with the optimal SLDP design of
``problems/gwrr-dont-know.toml`` (don't-know mass 0.2) at the budget given, in a seeded simulation, and the
logistic regression of the true answer on age, years married, religiousness, education and the marriage
rating is fitted from the randomized answers alone. It is printed beside the ordinary logistic regression on the
true answers: the ratio of standard errors is the price of privacy. Everything goes through designer's front
doors: ``designer.design``, ``designer.randomize`` and ``designer.regress``.

Run: ``python examples/affairs.py [--epsilon 2] [--seed 1] [--plot affairs.png]``.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pandas as pd
import statsmodels.api as sm
import statsmodels.formula.api as smf

import designer

try:
    HERE = Path(__file__).resolve().parent
except NameError:  # the documentation's gallery runs the script from examples/ without __file__
    HERE = Path.cwd()
FORMULA = "~ age + yrs_married + religious + educ + rate_marriage"


def fair_data() -> pd.DataFrame:
    """Fair's survey from statsmodels, with the true answer ``had_affair`` in {yes, no}."""
    data = sm.datasets.fair.load_pandas().data
    return data.assign(had_affair=np.where(data["affairs"] > 0, "yes", "no"))


def fit_both(epsilon: float = 2.0, seed: int = 1) -> tuple[pd.DataFrame, dict[str, object]]:
    """The two regressions side by side (one row per term) and facts about the run."""
    data = fair_data()
    result = designer.design(HERE.parent / "problems" / "gwrr-dont-know.toml", epsilon=epsilon)
    mech = result.mechanism
    assert mech is not None, result.status
    # the release is in a random order under a fresh index (docs/theory.md section 7.8): the covariates travel
    # with it as kept columns, the only way to pair a randomized answer with its respondent's covariates
    covariates = ["age", "yrs_married", "religious", "educ", "rate_marriage"]
    drawn = designer.randomize(data, result, column="had_affair", keep=covariates, seed=seed, simulation=True)
    private = designer.regress("response " + FORMULA, drawn.frame, result, reference="no")
    truth = smf.logit("y " + FORMULA, data.assign(y=(data["had_affair"] == "yes").astype(float))).fit(disp=0)
    ci = truth.conf_int()
    table = pd.DataFrame({
        "term": private.coefficients["term"],
        "true_estimate": truth.params.to_numpy(), "true_stderr": truth.bse.to_numpy(),
        "true_ci_low": ci[0].to_numpy(), "true_ci_high": ci[1].to_numpy(),
        "private_estimate": private.coefficients["estimate"].to_numpy(),
        "private_stderr": private.coefficients["stderr"].to_numpy(),
        "private_ci_low": private.coefficients["ci_low"].to_numpy(),
        "private_ci_high": private.coefficients["ci_high"].to_numpy(),
    })
    table["stderr_ratio"] = table["private_stderr"] / table["true_stderr"]
    facts = {"n": private.n, "epsilon": epsilon, "seed": seed, "share_yes": float((data["had_affair"] == "yes").mean()),
             "matrix": mech.matrix, "columns": mech.columns, "converged": private.converged,
             "lr_pvalue": private.lr_pvalue, "variance_ratio_expected": result.variance}
    return table, facts


def plot(table: pd.DataFrame, facts: dict[str, object], path: str) -> None:
    """Coefficients with both 95% intervals (true answers vs randomized answers)."""
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(2, 3, figsize=(10, 4.6), sharey=True)
    for ax, (_, row) in zip(axes.ravel(), table.iterrows()):
        for y, who, colour in ((1, "true", "tab:blue"), (0, "private", "tab:red")):
            est = row[f"{who}_estimate"]
            ax.errorbar([est], [y], xerr=[[est - row[f"{who}_ci_low"]], [row[f"{who}_ci_high"] - est]], fmt="o",
                        color=colour, capsize=4)
        ax.axvline(0.0, color="0.6", lw=0.8)
        ax.set_title(f"{row['term']}  (stderr x{row['stderr_ratio']:.2f})", fontsize=9)
        ax.set_ylim(-0.6, 1.6)
        ax.tick_params(labelsize=8)
    axes[0, 0].set_yticks([1, 0], ["true answers\n(ordinary logit)", "randomized\n(designer)"])
    fig.supxlabel("log-odds of having had an affair, with 95% Wald intervals", fontsize=9)
    fig.suptitle(f"Fair (1974), n = {facts['n']}: answers randomized by the yes / no / don't-know design "
                 f"at eps = {facts['epsilon']:g} (don't-know mass 0.2, seed {facts['seed']})", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=150)
    plt.close(fig)


def main() -> None:
    parser = argparse.ArgumentParser(description=("Who had an affair? Fair's 1974 survey of 6,366 women, asked "
                                                  "through a designed yes / no / don't-know mechanism."))
    parser.add_argument("--epsilon", type=float, default=2.0)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--plot", help="write the coefficient plot (PNG)")
    args = parser.parse_args()
    table, facts = fit_both(args.epsilon, args.seed)
    print(f"Fair's affairs survey: n = {facts['n']}, {facts['share_yes']:.1%} had an affair; answers randomized "
          f"at eps = {args.epsilon:g} (seed {args.seed}) through")
    print(pd.DataFrame(facts["matrix"], index=["yes", "no"], columns=facts["columns"]).round(6).to_string())
    with pd.option_context("display.width", 160, "display.float_format", "{:.4f}".format):
        print(table[["term", "true_estimate", "true_stderr", "private_estimate", "private_stderr",
                     "stderr_ratio"]].to_string(index=False))
    if args.plot:
        plot(table, facts, args.plot)
        print(f"plot written to {args.plot}")


if __name__ == "__main__":
    main()
