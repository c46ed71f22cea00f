"""How much better than the textbook designs: designer's ``variance`` and ``max_variance`` designs beside k-RR, the
best d-subset selection, OUE, and Warner / GWRR at two inputs, all computed by today's code in this run.

Figures are per respondent (divide by n for n respondents): the mean over the k shares of Var(pi_hat_x), and the
largest of them, of the maximum-likelihood estimate from each design's own outputs at the prior (OUE also with its
textbook per-item estimator). Beside each peer's figure, its ratio to designer's design for that figure: the factor
of respondents the peer needs for the same precision. Priors: uniform, the bundled 5-option file's skewed prior
(k = 5), and a Dirichlet(0.5) draw per k (seeded, every share at least 0.005); budgets 0.5, 1, 2, 4; k = 2, 3, 5, 8.

Run::

    .venv/bin/python benchmarks/peers.py             # the two tables, as text
    .venv/bin/python benchmarks/peers.py --markdown  # as docs/guide/peers.md shows them
    .venv/bin/python benchmarks/peers.py --check     # also: every design within 1e-6 of the independent reference
                                                     # (tests/optimal/variance_reference.py) and never worse than
                                                     # a peer; exit 1 otherwise
    .venv/bin/python benchmarks/peers.py --sweep 60  # the larger check instead of the tables: 60 random problems
                                                     # (k = 3..8, Dirichlet 0.5 / 1 / 5, shares >= 0.005, eps
                                                     # 0.25..5), both objectives, as tests/optimal does for 13

Goal (issue 48): no peer better than designer's design for its figure, anywhere in the table.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from designer import closed_forms as cf  # noqa: E402

KS = (2, 3, 5, 8)
BUDGETS = (0.5, 1.0, 2.0, 4.0)
SKEWED = (0.4, 0.3, 0.15, 0.1, 0.05)
#: The don't-know mass of GWRR's column (problems/gwrr-dont-know.toml's 0.2).
DONT_KNOW = 0.2
GWRR = f"GWRR (don't know {DONT_KNOW:g})"
FIGURES = {"variance": ("mean", "Mean share variance per respondent"),
           "max_variance": ("max", "Largest share variance per respondent")}


def dirichlet_draw(k: int, seed: int = 48) -> tuple[float, ...]:
    """A Dirichlet(0.5) prior over k inputs, every share at least 0.005 (the range the designs are checked on)."""
    pi = 0.005 + (1 - 0.005 * k) * np.random.default_rng([seed, k]).dirichlet([0.5] * k)
    return tuple(float(v) for v in pi)


def priors(ks: Iterable[int]) -> list[tuple[str, tuple[float, ...]]]:
    out = []
    for k in ks:
        out.append(("uniform", (1.0 / k,) * k))
        if k == len(SKEWED):
            out.append(("skewed", SKEWED))
        out.append(("Dirichlet(0.5)", dirichlet_draw(k)))
    return out


def optimum(prior: Sequence[float], eps: float, objective: str, reference: bool) -> tuple[np.ndarray, str]:
    """The share variances of designer's design for ``objective`` and its status, with the gap when it is not
    ``optimal`` (or, with ``reference``, those of the independent reference's optimum:
    tests/optimal/variance_reference.py)."""
    if reference:
        from tests.optimal.variance_reference import optimal_variance

        return optimal_variance(np.array(prior), eps, objective).share_variances, "optimal"
    import designer

    k = len(prior)
    problem = designer.DesignProblem(inputs=tuple(f"v{i}" for i in range(k)), epsilon=eps, prior=np.array(prior),
                                     objective=objective)
    result = designer.design(problem)
    shares = result.share_variances
    assert shares is not None
    status = str(result.status)
    if result.status != designer.FitStatus.OPTIMAL:
        status += f", gap {result.optimality_gap:.2g}"
    return np.array([shares[x] for x in problem.inputs]), status


@dataclass
class Row:
    prior_name: str
    prior: tuple[float, ...]
    eps: float
    ours: dict[str, np.ndarray]  # objective -> share variances of that design
    status: dict[str, str]  # objective -> the design's status ("optimal", or "local, gap ...")
    peers: dict[str, dict[str, float | None]]  # figure -> peer -> value (None: not defined at this k)
    best_d: dict[str, int]


def peer_figures(prior: tuple[float, ...], eps: float, reduce: str) -> tuple[dict[str, float | None], int]:
    k = len(prior)
    d = cf.subset_selection_best_d(eps, k, prior, estimator="mle", reduce=reduce)
    out: dict[str, float | None] = {
        "k-RR": float(cf.krr_variance(eps, k, prior=prior, reduce=reduce)),
        "best d-subset": float(cf.subset_selection_variance(eps, k, d, prior=prior, estimator="mle", reduce=reduce)),
        "OUE (MLE)": float(cf.oue_variance(eps, k, prior=prior, estimator="mle", reduce=reduce)),
        "OUE (textbook)": float(cf.oue_variance(eps, k, prior=prior, reduce=reduce)),
        "Warner": None, GWRR: None}
    if k == 2:  # both shares have the same variance
        out["Warner"] = cf.gwrr_variance(eps, 1.0, prior[0])
        out[GWRR] = cf.gwrr_variance(eps, 1.0 - DONT_KNOW, prior[0])
    return out, d


def compute(ks: Sequence[int] = KS, budgets: Sequence[float] = BUDGETS, reference: bool = False) -> list[Row]:
    rows = []
    for name, prior in priors(ks):
        for eps in budgets:
            designs = {obj: optimum(prior, eps, obj, reference) for obj in FIGURES}
            peers, best_d = {}, {}
            for obj, (reduce, _) in FIGURES.items():
                peers[obj], best_d[obj] = peer_figures(prior, eps, reduce)
            rows.append(Row(name, prior, eps, {obj: v for obj, (v, _) in designs.items()},
                            {obj: st for obj, (_, st) in designs.items()}, peers, best_d))
    return rows


def fmt(v: float) -> str:
    return f"{v:.4g}"


def table(rows: Sequence[Row], objective: str) -> tuple[list[str], list[list[str]]]:
    """One figure's table: designer's two designs, then each peer with its ratio to the design for this figure."""
    reduce, _ = FIGURES[objective]
    other = "max_variance" if objective == "variance" else "variance"
    headers = ["prior", "k", "eps", f"`{objective}` design", f"`{other}` design", "k-RR", "best d-subset", "d",
               "OUE (MLE)", "OUE (textbook)"]
    body = []
    for r in rows:
        ours = float(getattr(np, reduce)(r.ours[objective]))
        figures = r.peers[objective]
        twin = float(getattr(np, reduce)(r.ours[other]))
        body.append([r.prior_name, str(len(r.prior)), f"{r.eps:g}", fmt(ours) + status_note(r.status[objective]),
                     cell(twin, ours) + status_note(r.status[other]),
                     cell(figures["k-RR"], ours), cell(figures["best d-subset"], ours), str(r.best_d[objective]),
                     cell(figures["OUE (MLE)"], ours), cell(figures["OUE (textbook)"], ours)])
    return headers, body


def status_note(status: str) -> str:
    """Nothing for an optimal design; its status and gap otherwise (a design is never shown without them)."""
    return "" if status == "optimal" else f" ({status})"


def binary_table(rows: Sequence[Row]) -> tuple[list[str], list[list[str]]]:
    """Two answers: Warner and GWRR beside the optimum (both shares have the same variance, so both figures agree)."""
    headers = ["prior", "eps", "optimum", "Warner", GWRR]
    body = []
    for r in rows:
        if len(r.prior) != 2:
            continue
        ours = float(np.mean(r.ours["variance"]))
        figures = r.peers["variance"]
        body.append([f"{r.prior_name} ({r.prior[0]:.3f}, {r.prior[1]:.3f})", f"{r.eps:g}",
                     fmt(ours) + status_note(r.status["variance"]),
                     cell(figures["Warner"], ours), cell(figures[GWRR], ours)])
    return headers, body


def cell(v: float | None, ours: float) -> str:
    """A figure and its ratio to designer's: the factor of respondents it needs for the same precision."""
    return "" if v is None else f"{fmt(v)} ({v / ours:.2f}x)"


def tables(rows: Sequence[Row]) -> list[tuple[str, tuple[list[str], list[list[str]]]]]:
    out = [(f"{title} (ratio: the peer's figure over the `{objective}` design's)", table(rows, objective))
           for objective, (_, title) in FIGURES.items()]
    if any(len(r.prior) == 2 for r in rows):
        out.append(("Two answers: Warner and GWRR, both figures (ratio: over the optimum)", binary_table(rows)))
    return out


def markdown(rows: Sequence[Row]) -> str:
    parts = []
    for title, (headers, body) in tables(rows):
        parts.append(f"**{title}**\n")
        parts.append("| " + " | ".join(headers) + " |")
        parts.append("|" + "---|" * len(headers))
        parts.extend("| " + " | ".join(c) + " |" for c in body)
        parts.append("")
    parts.append(draws_line(sorted({len(r.prior) for r in rows})))
    return "\n".join(parts) + "\n"


def draws_line(ks: Iterable[int]) -> str:
    """The line under the tables naming the Dirichlet(0.5) priors."""
    draws = {k: ", ".join(f"{v:.3f}" for v in dirichlet_draw(k)) for k in ks}
    return "Dirichlet(0.5) draws: " + "; ".join(f"k = {k}: ({d})" for k, d in draws.items()) + "."


def text(rows: Sequence[Row]) -> str:
    parts = []
    for title, (headers, body) in tables(rows):
        widths = [max(len(h), *(len(c[i]) for c in body)) for i, h in enumerate(headers)]
        parts.append(title)
        parts.append("  ".join(h.rjust(w) for h, w in zip(headers, widths)))
        parts.extend("  ".join(c.rjust(w) for c, w in zip(cells, widths)) for cells in body)
        parts.append("")
    return "\n".join(parts)


def check(rows: Sequence[Row]) -> list[str]:
    """Every design against the independent reference (1e-6 relative) and against each MLE peer."""
    from tests.optimal.variance_reference import optimal_variance

    problems = []
    for r in rows:
        for objective, (reduce, _) in FIGURES.items():
            ours = float(getattr(np, reduce)(r.ours[objective]))
            ref = optimal_variance(np.array(r.prior), r.eps, objective).value
            where = f"{objective} at {r.prior_name}, k = {len(r.prior)}, eps = {r.eps:g}"
            if r.status[objective] != "optimal":
                problems.append(f"{where}: the design is {r.status[objective]}")
            if abs(ours - ref) > 1e-6 * ref:
                problems.append(f"{where}: {ours!r} against the reference's {ref!r}")
            for name, v in r.peers[objective].items():
                if v is not None and name != "OUE (textbook)" and v < ours * (1 - 1e-9):
                    problems.append(f"{where}: {name} has {v!r}, better than the design's {ours!r}")
    return problems


def sweep(count: int, seed: int = 2026, reference: bool = False) -> list[str]:
    """``count`` random problems of the issue's range, both objectives: design against reference and peers."""
    from tests.optimal.variance_reference import optimal_variance

    rng = np.random.default_rng(seed)
    problems, worst = [], 0.0
    for _ in range(count):
        k, alpha, eps = int(rng.integers(3, 9)), float(rng.choice([0.5, 1.0, 5.0])), float(rng.uniform(0.25, 5))
        prior = tuple(float(v) for v in 0.005 + (1 - 0.005 * k) * rng.dirichlet([alpha] * k))
        for objective, (reduce, _) in FIGURES.items():
            shares, status = optimum(prior, eps, objective, reference)
            ours = float(getattr(np, reduce)(shares))
            ref = optimal_variance(np.array(prior), eps, objective).value
            worst = max(worst, abs(ours - ref) / ref)
            where = f"{objective}, k = {k}, Dirichlet({alpha:g}), eps = {eps:.3f}"
            if status != "optimal":
                problems.append(f"{where}: the design is {status}")
            if abs(ours - ref) > 1e-6 * ref:
                problems.append(f"{where}: {ours!r} against the reference's {ref!r}")
            figures, _ = peer_figures(prior, eps, reduce)
            for name, v in figures.items():
                if v is not None and name != "OUE (textbook)" and v < ours * (1 - 1e-9):
                    problems.append(f"{where}: {name} has {v!r}, better than the design's {ours!r}")
    print(f"{2 * count} designs: largest relative difference from the reference {worst:.2e}")
    return problems


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--markdown", action="store_true", help="print the tables as docs/guide/peers.md shows them")
    parser.add_argument("--check", action="store_true", help="compare every design with the independent reference")
    parser.add_argument("--reference", action="store_true",
                        help="use the independent reference's optimum instead of designer's designs")
    parser.add_argument("--k", type=int, nargs="+", default=list(KS), help="numbers of inputs (default 2 3 5 8)")
    parser.add_argument("--sweep", type=int, metavar="N", help="check N random problems instead of the tables")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    if args.sweep:
        problems = sweep(args.sweep, reference=args.reference)
        for line in problems:
            print(f"peers.py: {line}", file=sys.stderr)
        print(f"{len(problems)} problems in {time.perf_counter() - start:.1f} s", file=sys.stderr)
        return 1 if problems else 0
    rows = compute(args.k, BUDGETS, reference=args.reference)
    print(markdown(rows) if args.markdown else text(rows), end="")
    if args.check:
        problems = check(rows)
        for line in problems:
            print(f"peers.py: {line}", file=sys.stderr)
        print(f"checked {2 * len(rows)} designs against the reference and the peers in "
              f"{time.perf_counter() - start:.1f} s: {len(problems)} problems", file=sys.stderr)
        return 1 if problems else 0
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
