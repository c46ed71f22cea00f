"""
Privacy against accuracy: Figures 2, 3 and 5 of the paper
=========================================================

Privacy loss against estimation error, with simulations on the formulas.

* Figure 2: Shafer semantics, GWRR with answer mass c (don't-know 1 - c): eps_S against the variance of
  pi_hat (Thm 3.10 exact, and the paper's approximation nu_S), simulated with Eq 2.
* Figure 3: sample sizes n = 10, 100, 500, 1000 at don't-know 0.1: mean and spread of pi_hat against eps.
* Figure 5: the two semantics compared for Q_2x3(p, q) with don't-know 0.2: for each mechanism the
  rectangle of all its redistributions Q_lambda (corners (eps_O, nu_O) and (eps_W, nu_W)), the Q_lambda
  curve inside it, the Shafer point (eps_S, nu_S) and Warner's curve; lambda = 0 and 1 simulated.

Run: ``python examples/plot_estimation.py [--out DIR] [--reps 2000] [--figure 2|3|5|all]``; each figure
writes ``figureN_*.png`` and ``figureN_*.csv`` into DIR (default examples/output).
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

import designer as d
from designer import closed_forms as cf
from designer.estimation.simulation import simulate

PI = 0.3  # true proportion of "yes"

try:
    HERE = Path(__file__).resolve().parent
except NameError:  # the documentation's gallery runs the script from examples/ without __file__
    HERE = Path.cwd()


def figure2(out: Path, reps: int, seed: int = 2) -> Path:
    n = 100
    eps_grid = np.linspace(0.25, 4.0, 40)
    eps_sim = np.array([0.5, 1.0, 2.0, 3.0])
    rows = []
    fig, (ax, rel) = plt.subplots(2, 1, figsize=(7.5, 7), sharex=True, height_ratios=(3, 1.4))
    for i, c in enumerate((1.0, 0.9, 0.8, 0.7, 0.6)):
        exact = np.array([cf.q2x3_variance_exact(*cf.gwrr_sldp(e, c), PI, n) for e in eps_grid])
        approx = np.array([cf.q2x3_nu_shafer(*cf.gwrr_sldp(e, c), PI, n) for e in eps_grid])
        ax.plot(eps_grid, exact, color=f"C{i}", label=f"answer mass c = {c:g} (don't-know {1 - c:.1f})")
        rel.plot(eps_grid, 100 * (approx - exact) / exact, color=f"C{i}")
        sims = []
        for e in eps_sim:
            p, q = cf.gwrr_sldp(e, c)
            est = simulate(d.Q_2x3(p, q), [PI, 1 - PI], n, reps, seed, estimator="eq2")["yes"]
            sims.append(float(est.var(ddof=1)))
        ax.plot(eps_sim, sims, "o", color=f"C{i}", ms=5)
        rows += [{"c": c, "epsilon": e, "variance_exact": v, "variance_approx": a, "simulated": math.nan}
                 for e, v, a in zip(eps_grid, exact, approx)]
        rows += [{"c": c, "epsilon": e, "variance_exact": cf.q2x3_variance_exact(*cf.gwrr_sldp(e, c), PI, n),
                  "variance_approx": cf.q2x3_nu_shafer(*cf.gwrr_sldp(e, c), PI, n), "simulated": s}
                 for e, s in zip(eps_sim, sims)]
    ax.plot([], [], "o", color="grey", label=f"simulated ({reps} surveys, Eq 2 estimator)")
    ax.set(yscale="log", ylabel="Var(pi_hat | answered)",
           title=f"Figure 2: don't-know in Shafer's semantics, GWRR (Cor 3.12), pi = {PI}, n = {n}\n"
                 "lines: Thm 3.10 exact; dots: simulation")
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
    rel.axhline(0.0, color="grey", lw=0.8)
    rel.set(xlabel="privacy loss eps_S (Def 3.1)", ylabel="nu_S vs exact (%)",
            title="the paper's approximation nu_S, relative to the exact variance", )
    rel.title.set_fontsize(9)
    return _save(fig, pd.DataFrame(rows), out, "figure2_dont_know_tradeoff")


def figure3(out: Path, reps: int, seed: int = 3) -> Path:
    c = 0.9
    eps_grid = np.array([0.25, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0])
    rows = []
    fig, ax = plt.subplots(figsize=(6, 4.5))
    for i, n in enumerate((10, 100, 500, 1000)):
        means, sds, formula = [], [], []
        for e in eps_grid:
            p, q = cf.gwrr_sldp(e, c)
            est = simulate(d.Q_2x3(p, q), [PI, 1 - PI], n, reps, seed, estimator="eq2")["yes"].dropna()
            means.append(float(est.mean()))
            sds.append(float(est.std(ddof=1)))
            formula.append(math.sqrt(cf.q2x3_variance_exact(p, q, PI, n)))
            rows.append({"n": n, "epsilon": e, "mean": means[-1], "sd_simulated": sds[-1], "sd_thm_3_10": formula[-1]})
        shift = (i - 1.5) * 0.04
        ax.errorbar(eps_grid + shift, means, yerr=sds, fmt="o", color=f"C{i}", ms=4, capsize=2, label=f"n = {n}")
        ax.plot(eps_grid + shift, PI + np.array(formula), "_", color=f"C{i}", ms=10)
        ax.plot(eps_grid + shift, PI - np.array(formula), "_", color=f"C{i}", ms=10)
    ax.axhline(PI, color="grey", lw=0.8)
    ax.set(xlabel="privacy budget eps", ylabel="estimate pi_hat (mean +- sd)", ylim=(-1, 1.6),
           title=f"Figure 3: sample size; GWRR, pi = {PI}, don't-know {1 - c:.1f}, {reps} surveys per point\n"
                 "bars: simulated mean +- sd; ticks: pi +- sd of Thm 3.10")
    ax.title.set_fontsize(9)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
    return _save(fig, pd.DataFrame(rows), out, "figure3_sample_size")


def figure5(out: Path, reps: int, seed: int = 5) -> Path:
    """Each Q_2x3(p, q) is drawn as the rectangle [eps_O, eps_W] x [nu_O, nu_W] that holds every one of its
    redistributions Q_lambda (Warner's mechanism with truthful probability a in [p, 1 - q]); the curve inside
    is the Q_lambda themselves (each a mechanism), the filled marker is the Shafer point (eps_S, nu_S)."""
    from matplotlib.patches import Rectangle

    n, dk = 100, 0.2
    rows = []
    fig, ax = plt.subplots(figsize=(8.5, 5.2))
    eps = np.linspace(0.05, 4, 200)
    ax.plot(eps, [cf.warner_variance(math.exp(e) / (1 + math.exp(e)), PI, n) for e in eps], color="black",
            lw=1.2, label="Warner (Ex 3.7, Eq 1)")
    for i, p in enumerate((0.55, 0.6, 0.65, 0.7)):
        q = 1 - dk - p
        e_o, e_w = cf.q2x3_eps_optimistic(p, q), cf.q2x3_eps_walley(p, q)
        v_o, v_w = cf.q2x3_nu_optimistic(p, q, PI, n), cf.q2x3_nu_walley(p, q, PI, n)
        colour = f"C{i}"
        ax.add_patch(Rectangle((e_o, v_o), e_w - e_o, v_w - v_o, facecolor=colour, alpha=0.12, edgecolor=colour,
                               lw=1.2, label=f"Q_2x3({p:g}, {q:.2g}): all Q_lambda"))
        truthful = np.linspace(p, 1 - q, 50)  # Q_lambda = Warner at truthful probability a
        ax.plot([abs(math.log(a / (1 - a))) for a in truthful], [cf.warner_variance(a, PI, n) for a in truthful],
                "-", color=colour, lw=2.2)
        ax.plot(cf.q2x3_eps_shafer(p, q), cf.q2x3_nu_shafer(p, q, PI, n), "o", color=colour, ms=7, mec="black")
        sims = {}
        for lam in (0.0, 1.0):
            sims[lam] = simulate(d.Q_2x3(p, q), [PI, 1 - PI], n, reps, seed, estimator="inversion",
                                 semantics="wldp", allocation=lam)["yes"].var(ddof=1)
        a0, a1 = p, 1 - q
        ax.plot([abs(math.log(a0 / (1 - a0))), abs(math.log(a1 / (1 - a1)))], [sims[0.0], sims[1.0]], "x",
                color="black", ms=6)
        rows.append({"p": p, "q": q, "eps_S": cf.q2x3_eps_shafer(p, q), "nu_S": cf.q2x3_nu_shafer(p, q, PI, n),
                     "eps_O": e_o, "nu_O": v_o, "eps_W": e_w, "nu_W": v_w,
                     "nu_lambda0_simulated": sims[0.0], "nu_lambda1_simulated": sims[1.0]})
    ax.plot([], [], "-", color="grey", lw=2.2, label="Q_lambda, lambda from 0 (left, top) to 1")
    ax.plot([], [], "o", color="grey", mec="black", label="Shafer point (eps_S, nu_S)")
    ax.plot([], [], "x", color="black", label=f"simulated, lambda = 0 and 1 ({reps} surveys)")
    ax.set(yscale="log", xlabel="privacy loss (eps_S for the Shafer point, a Q_lambda's own loss otherwise)",
           ylabel="variance of pi_hat", xlim=(0, 3.2),
           title=f"Figure 5: the two semantics; pi = {PI}, n = {n}, don't-know mass {dk}\nrectangle corners: "
                 "(eps_O, nu_O) best case, (eps_W, nu_W) worst case (Cor 3.20); no single mechanism is at either")
    ax.title.set_fontsize(9)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
    return _save(fig, pd.DataFrame(rows), out, "figure5_semantics")


def _save(fig: plt.Figure, table: pd.DataFrame, out: Path, name: str) -> Path:
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"{name}.png"
    fig.savefig(path, dpi=110, bbox_inches="tight")
    plt.close(fig)
    table.to_csv(out / f"{name}.csv", index=False)
    print(f"wrote {path} and {name}.csv")
    return path


def main(argv: list[str] | None = None) -> list[Path]:
    parser = argparse.ArgumentParser(description=("Figures 2, 3 and 5 of the paper: privacy loss against estimation "
                                                  "error, with simulations on the formulas."))
    parser.add_argument("--out", default=str(HERE / "output"))
    parser.add_argument("--reps", type=int, default=2000, help="simulated surveys per point (default 2000)")
    parser.add_argument("--figure", choices=("2", "3", "5", "all"), default="all")
    args = parser.parse_args(argv)
    out = Path(args.out)
    todo = {"2": figure2, "3": figure3, "5": figure5}
    chosen = todo if args.figure == "all" else {args.figure: todo[args.figure]}
    return [f(out, args.reps) for f in chosen.values()]


if __name__ == "__main__":
    main()
