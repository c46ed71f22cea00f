"""Figure 4 of the paper: pessimistic and optimistic trade-offs under Walley's semantics (Thm 3.18, Cor 3.19).

T_pe (minimax test) and T_op are computed from Q_2x3(p, q) for one and two answers and drawn with the
bounds f_pe, f_op at the mechanism's own eps_W (and the Cor 3.19 bounds for two answers).

Run: ``python examples/plot_tradeoff_wldp.py [--out DIR] [--p 0.6 --q 0.2]`` -> DIR/figure4_wldp_tradeoff.png
"""

from __future__ import annotations

import argparse
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
    eps = d.eps_walley(mech)
    a = np.linspace(0, 1, 201)
    fig, axes = plt.subplots(1, 2, figsize=(10, 4.8), sharey=True)
    for ax, m, n in ((axes[0], mech, 1), (axes[1], d.power(mech, 2), 2)):
        pe = tradeoff(m, "yes", "no", "pessimistic", a)
        op = tradeoff(m, "yes", "no", "optimistic", a)
        ax.plot(a, pe, color="C0", lw=2, label="T_pe (minimax test)")
        ax.plot(a, op, color="C1", lw=2, label="T_op")
        if n == 1:
            ax.plot(a, bound("pessimistic", eps, a), "--", color="C0", label=f"f_pe, eps_W = {eps:.3f}")
            ax.plot(a, bound("optimistic", eps, a), "--", color="C1", label="f_op")
        else:
            ax.plot(a, bound("pessimistic", 2 * eps, a), "--", color="C0", label="f_pe at 2 eps_W (Lemma 3.15)")
            ax.plot(a, bound("optimistic", 2 * eps, a), "--", color="C1", label="f_op at 2 eps_W")
            ax.plot(a, np.clip(two_fold_bound("pessimistic", eps, a), 0, 1), ":", color="C0",
                    label="f^{2,pe} (Cor 3.19)")
            ax.plot(a, np.clip(two_fold_bound("optimistic", eps, a), 0, 1), ":", color="C1",
                    label="f^{2,op} as printed (Cor 3.19): not a bound")
        ax.plot([0, 1], [1, 0], color="grey", lw=0.8)
        ax.set(title=f"Q_2x3({args.p:g}, {args.q:g}), {n} answer{'s' if n > 1 else ''}", xlabel="type I error",
               xlim=(0, 1), ylim=(0, 1))
        ax.legend(fontsize=7, loc="upper right")
    axes[0].set_ylabel("type II error")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    path = out / "figure4_wldp_tradeoff.png"
    fig.savefig(path, dpi=110, bbox_inches="tight")
    plt.close(fig)
    print(f"wrote {path} (eps_W = {eps:.4f})")
    return path


if __name__ == "__main__":
    main()
