"""
Trade-offs of tests: Figures 1 and 4 of the paper
=================================================

Type I / type II trade-offs of Q_2x3(p, q), one and two answers.

* Figure 1 (Shafer, Thm 3.5, Cor 3.6): min beta_lo with alpha_up <= a and max beta_up with alpha_lo >= a,
  with the bounds u, U at the mechanism's own eps_S.
* Figure 4 (Walley, Thm 3.18, Cor 3.19): T_pe (minimax test) and T_op with f_pe, f_op at eps_W.

Curves are computed from the mechanism (two answers: the product mechanism); the bounds are drawn at eps
and, for two answers, at 2 eps (Lemmas 3.3, 3.15), as printed in Cor 3.6 / 3.19 (the printed upper two-fold
bounds are not bounds) and corrected (``two_fold_bound(..., corrected=True)``: the upper curve is the
reflection of the lower one, ``1 - lower(1 - alpha)``). Every bound is drawn through its kinks.

Run: ``python examples/plot_tradeoff.py [--out DIR] [--p 0.6 --q 0.2] [--figure 1|4|all]``
-> DIR/figure1_sldp_tradeoff.png, DIR/figure4_wldp_tradeoff.png
"""

from __future__ import annotations

import argparse
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np

import designer as d
from designer.estimation.hypothesis_tests import bound, bound_kinks, two_fold_bound

FIGURES = {
    "1": ("sldp", "figure1_sldp_tradeoff", d.eps_shafer, "eps_S",
          (("shafer_lower", "least type II error of tests with upper type I error <= alpha", "lower bound u"),
           ("shafer_upper", "largest type II error of tests with lower type I error >= alpha", "upper bound U")),
          "Cor 3.6", "Shafer semantics (set answers), Thm 3.5"),
    "4": ("wldp", "figure4_wldp_tradeoff", d.eps_walley, "eps_W",
          (("pessimistic", "minimax test (worst credal members), T_pe", "lower bound f_pe"),
           ("optimistic", "optimistic test (best credal members), T_op", "upper bound f_op")),
          "Cor 3.19", "Walley semantics (precise answers), Thm 3.18"),
}

try:
    HERE = Path(__file__).resolve().parent
except NameError:  # the documentation's gallery runs the script from examples/ without __file__
    HERE = Path.cwd()


def curve_beta(mech: d.Mechanism, kind: str, alphas: np.ndarray) -> np.ndarray:
    """The curve ``kind`` of the test of yes against no (``designer.tradeoff``, exact at its 401 levels and its
    kinks, linear between them) at ``alphas``."""
    rows = np.array(d.tradeoff(mech, null="yes", alt="no", kind=kind, points=401).rows)
    return np.interp(alphas, rows[:, 0], rows[:, 1])


def draw(figure: str, mech: d.Mechanism, title: str, out: Path) -> Path:
    _, name, loss, loss_name, curves, corollary, semantics = FIGURES[figure]
    eps = loss(mech)
    a = np.union1d(np.linspace(0, 1, 401), np.concatenate([bound_kinks(k, n * eps) for k, _, _ in curves
                                                            for n in (1, 2)]))
    fig, axes = plt.subplots(1, 2, figsize=(11, 5.6), sharey=True)
    for ax, m, n in ((axes[0], mech, 1), (axes[1], d.power(mech, 2), 2)):
        betas = [curve_beta(m, kind, a) for kind, _, _ in curves]
        if figure == "1":
            ax.fill_between(a, betas[0], betas[1], color="C0", alpha=0.12, label="attainable type II errors")
        for i, ((kind, label, bname), beta) in enumerate(zip(curves, betas)):
            ax.plot(a, beta, color=f"C{i}", lw=2.2, label=label)
            ax.plot(a, bound(kind, n * eps, a), "--", color=f"C{i}",
                    label=f"{bname} at {loss_name} = {eps:.3f}" if n == 1
                    else f"{bname} at 2 x {loss_name} (composition)")
            if n == 2:
                upper = kind in ("shafer_upper", "optimistic")
                printed = np.clip(two_fold_bound(kind, eps, a), 0, 1)
                ax.plot(a, printed, ":", color=f"C{i}", lw=1.5,
                        label=f"{bname} for two answers as printed in {corollary}"
                        + (" (fails: the curve crosses it)" if upper else ""))
                if upper:
                    ax.plot(a, two_fold_bound(kind, eps, a, corrected=True), "-.", color="C3", lw=1.3,
                            label=f"{bname} for two answers, corrected: 1 - lower(1 - alpha)")
        ax.plot([0, 1], [1, 0], color="grey", lw=0.8, label="no information (beta = 1 - alpha)")
        ax.set(title=f"{n} answer{'s' if n > 1 else ''} per respondent", xlabel="type I error alpha",
               xlim=(0, 1), ylim=(0, 1))
        ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.13), ncol=1, frameon=False)
    axes[0].set_ylabel("type II error beta")
    fig.suptitle(f"Figure {figure}: {semantics}; {title} (don't-know {1 - mech.matrix[0, :2].sum():.2g}), "
                 f"{loss_name} = {eps:.4f}", fontsize=10)
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"{name}.png"
    fig.savefig(path, dpi=110, bbox_inches="tight")
    plt.close(fig)
    print(f"wrote {path} ({loss_name} = {eps:.4f})")
    return path


def main(argv: list[str] | None = None) -> list[Path]:
    parser = argparse.ArgumentParser(description=("Figures 1 and 4 of the paper: type I / type II trade-offs of "
                                                  "Q_2x3(p, q), one and two answers."))
    parser.add_argument("--out", default=str(HERE / "output"))
    parser.add_argument("--p", type=float, default=0.6)
    parser.add_argument("--q", type=float, default=0.2)
    parser.add_argument("--figure", choices=("1", "4", "all"), default="all")
    args = parser.parse_args(argv)
    mech = d.Q_2x3(args.p, args.q)
    figures = ("1", "4") if args.figure == "all" else (args.figure,)
    return [draw(f, mech, f"Q_2x3({args.p:g}, {args.q:g})", Path(args.out)) for f in figures]


if __name__ == "__main__":
    main()
