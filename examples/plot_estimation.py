"""Figures 2, 3 and 5 of the paper: privacy loss against estimation error, with simulations on the formulas.

* Figure 2: Shafer semantics, GWRR with answer mass c (don't-know 1 - c): eps_S against the variance of
  pi_hat (Thm 3.10 exact, and the paper's approximation nu_S), simulated with Eq 2.
* Figure 3: sample sizes n = 10, 100, 500, 1000 at don't-know 0.1: mean and spread of pi_hat against eps.
* Figure 5: the two semantics compared for Q_2x3(p, q) with don't-know 0.2: (eps_S, nu_S), (eps_W, nu_W),
  (eps_O, nu_O) and Warner's curve; Walley points simulated with the lambda = 0 and 1 allocations.

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
from designer.simulation import simulate

PI = 0.3  # true proportion of "yes"


def figure2(out: Path, reps: int, seed: int = 2) -> Path:
    n = 100
    eps_grid = np.linspace(0.25, 4.0, 40)
    eps_sim = np.array([0.5, 1.0, 2.0, 3.0])
    rows = []
    fig, ax = plt.subplots(figsize=(6, 4.5))
    for i, c in enumerate((1.0, 0.9, 0.8, 0.7, 0.6)):
        exact = [cf.q2x3_variance_exact(*cf.gwrr_sldp(e, c), PI, n) for e in eps_grid]
        approx = [cf.q2x3_nu_shafer(*cf.gwrr_sldp(e, c), PI, n) for e in eps_grid]
        ax.plot(eps_grid, exact, color=f"C{i}", label=f"c = {c:g} (Thm 3.10)")
        ax.plot(eps_grid, approx, ":", color=f"C{i}")
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
    ax.set(yscale="log", xlabel="privacy loss eps_S", ylabel=f"Var(pi_hat | answered), n = {n}",
           title="Figure 2: don't-know in Shafer's semantics (dots: simulation, dotted: nu_S)")
    ax.legend(fontsize=8)
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
           title="Figure 3: sample size, don't-know 0.1 (bars: simulation, ticks: Thm 3.10)")
    ax.legend(fontsize=8)
    return _save(fig, pd.DataFrame(rows), out, "figure3_sample_size")


def figure5(out: Path, reps: int, seed: int = 5) -> Path:
    n, dk = 100, 0.2
    rows = []
    for p in np.linspace(0.53, 0.78, 11):  # the paper assumes p > 1/2 (nu_W diverges at 1/2)
        q = 1 - dk - p
        if p <= q:
            continue
        sim_w = simulate(d.Q_2x3(p, q), [PI, 1 - PI], n, reps, seed, estimator="inversion", semantics="wldp",
                         allocation=0.0)["yes"].var(ddof=1)
        sim_o = simulate(d.Q_2x3(p, q), [PI, 1 - PI], n, reps, seed, estimator="inversion", semantics="wldp",
                         allocation=1.0)["yes"].var(ddof=1)
        rows.append({"p": p, "q": q, "eps_S": cf.q2x3_eps_shafer(p, q), "nu_S": cf.q2x3_nu_shafer(p, q, PI, n),
                     "eps_W": cf.q2x3_eps_walley(p, q), "nu_W": cf.q2x3_nu_walley(p, q, PI, n),
                     "eps_O": cf.q2x3_eps_optimistic(p, q),
                     "nu_O": cf.q2x3_nu_optimistic(p, q, PI, n), "nu_W_simulated": sim_w, "nu_O_simulated": sim_o})
    df = pd.DataFrame(rows)
    fig, ax = plt.subplots(figsize=(6, 4.5))
    eps = np.linspace(0.05, 4, 100)
    ax.plot(eps, [cf.warner_variance(math.exp(e) / (1 + math.exp(e)), PI, n) for e in eps], color="black",
            label="Warner (Eq 1)")
    ax.plot(df.eps_S, df.nu_S, "o-", label="Shafer (eps_S, nu_S)")
    ax.plot(df.eps_W, df.nu_W, "s-", label="Walley worst (eps_W, nu_W)")
    ax.plot(df.eps_O, df.nu_O, "^-", label="Walley best (eps_O, nu_O)")
    ax.plot(df.eps_W, df.nu_W_simulated, "x", color="C1", label="simulated, lambda = 0")
    ax.plot(df.eps_O, df.nu_O_simulated, "x", color="C2", label="simulated, lambda = 1")
    ax.set(yscale="log", xlabel="privacy loss", ylabel=f"variance of pi_hat, n = {n}",
           title="Figure 5: the two semantics, don't-know 0.2")
    ax.legend(fontsize=8)
    return _save(fig, df, out, "figure5_semantics")


def _save(fig: plt.Figure, table: pd.DataFrame, out: Path, name: str) -> Path:
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"{name}.png"
    fig.savefig(path, dpi=110, bbox_inches="tight")
    plt.close(fig)
    table.to_csv(out / f"{name}.csv", index=False)
    print(f"wrote {path} and {name}.csv")
    return path


def main(argv: list[str] | None = None) -> list[Path]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=str(Path(__file__).parent / "output"))
    parser.add_argument("--reps", type=int, default=2000, help="simulated surveys per point (default 2000)")
    parser.add_argument("--figure", choices=("2", "3", "5", "all"), default="all")
    args = parser.parse_args(argv)
    out = Path(args.out)
    todo = {"2": figure2, "3": figure3, "5": figure5}
    chosen = todo if args.figure == "all" else {args.figure: todo[args.figure]}
    return [f(out, args.reps) for f in chosen.values()]


if __name__ == "__main__":
    main()
