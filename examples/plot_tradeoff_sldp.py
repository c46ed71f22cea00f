"""Figure 1 of the paper: type I / type II trade-offs under Shafer's semantics (Thm 3.5, Cor 3.6).

For Q_2x3(p, q) the two Thm 3.5 curves (min beta_lo with alpha_up <= a, max beta_up with alpha_lo >= a)
are computed from the mechanism, for one answer and for two answers (the product mechanism), and drawn
with the bounds u, U of the paper at the mechanism's own eps_S (and the Cor 3.6 bounds for two answers).

Run: ``python examples/plot_tradeoff_sldp.py [--out DIR] [--p 0.6 --q 0.2]`` -> DIR/figure1_sldp_tradeoff.png
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np

import designer as d
from designer.hypothesis_tests import bound, tradeoff, two_fold_bound


def main(argv: list[str] | None = None) -> Path:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=str(Path(__file__).parent / "output"))
    parser.add_argument("--p", type=float, default=0.6)
    parser.add_argument("--q", type=float, default=0.2)
    args = parser.parse_args(argv)
    mech = d.Q_2x3(args.p, args.q)
    eps = d.eps_shafer(mech)
    two = d.power(mech, 2)
    a = np.linspace(0, 1, 201)
    fig, axes = plt.subplots(1, 2, figsize=(10, 4.8), sharey=True)
    for ax, m, n in ((axes[0], mech, 1), (axes[1], two, 2)):
        lower = tradeoff(m, "yes", "no", "shafer_lower", a)
        upper = tradeoff(m, "yes", "no", "shafer_upper", a)
        ax.fill_between(a, lower, upper, color="C0", alpha=0.15, label="attainable [beta_lo, beta_up]")
        ax.plot(a, lower, color="C0", lw=2, label="min beta_lo, alpha_up <= a")
        ax.plot(a, upper, color="C1", lw=2, label="max beta_up, alpha_lo >= a")
        if n == 1:
            ax.plot(a, bound("shafer_lower", eps, a), "--", color="C0", label=f"u(a), eps_S = {eps:.3f}")
            ax.plot(a, bound("shafer_upper", eps, a), "--", color="C1", label="U(a)")
        else:
            ax.plot(a, bound("shafer_lower", 2 * eps, a), "--", color="C0", label="u at 2 eps_S (Lemma 3.3)")
            ax.plot(a, bound("shafer_upper", 2 * eps, a), "--", color="C1", label="U at 2 eps_S")
            ax.plot(a, np.clip(two_fold_bound("shafer_lower", eps, a), 0, 1), ":", color="C0", label="u^2 (Cor 3.6)")
            ax.plot(a, np.clip(two_fold_bound("shafer_upper", eps, a), 0, 1), ":", color="C1",
                    label="U^2 as printed (Cor 3.6): not a bound")
        ax.plot([0, 1], [1, 0], color="grey", lw=0.8)
        ax.set(title=f"Q_2x3({args.p:g}, {args.q:g}), {n} answer{'s' if n > 1 else ''}", xlabel="type I error",
               xlim=(0, 1), ylim=(0, 1))
        ax.legend(fontsize=7, loc="upper right")
    axes[0].set_ylabel("type II error")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    path = out / "figure1_sldp_tradeoff.png"
    fig.savefig(path, dpi=110, bbox_inches="tight")
    plt.close(fig)
    print(f"wrote {path} (eps_S = {eps:.4f} = ln({args.p:g}/{args.q:g}) = {math.log(args.p / args.q):.4f})")
    return path


if __name__ == "__main__":
    main()
