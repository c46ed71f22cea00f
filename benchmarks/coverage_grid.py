"""Coverage grid of the shares' 95% intervals (issue 55 item 6): for each cell (k inputs, budget eps, true share of
the first input, respondents n, and plain / sampling-weighted / clustered answers) R replications drawn from
designer's default design of the problem; the coverage of the first share's reported interval (Wald, or the
profile likelihood's near an edge: docs/theory.md section 8.4) and of the plain Wald interval, with the Monte
Carlo error ``sqrt(p (1 - p) / R)``. Writes a CSV and a PNG (coverage per cell with its 2-MC-error bar and the
0.94-0.96 band).

    .venv/bin/python benchmarks/coverage_grid.py --replications 2000 --out benchmarks/coverage
    .venv/bin/python benchmarks/coverage_grid.py --quick   # the smaller grid run for benchmarks/README.md
"""

from __future__ import annotations

import argparse
import functools
import itertools
import math
import sys
import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import designer
from designer.estimation.shares import estimate_sldp
from designer.estimation.survey_design import SurveyCounts, estimate_survey

FULL: dict[str, list[Any]] = {"k": [2, 4, 8], "eps": [0.25, 1.0, 4.0], "share": [0.001, 0.01, 0.1, 0.5, 0.999],
                              "n": [50, 2_000, 100_000],
        "variant": ["plain", "weights", "clusters"]}
QUICK = [  # (k, eps, share, n, variant): the cells first, then edges and survey variants
    (4, 1.0, 0.002, 20_000, "plain"), (4, 1.0, 0.01, 20_000, "plain"), (3, 0.5, 0.988, 2_000, "plain"),
    (5, 2.0, 0.01, 20_000, "plain"), (2, 1.0, 0.001, 50, "plain"), (2, 4.0, 0.5, 50, "plain"),
    (8, 1.0, 0.001, 100_000, "plain"), (4, 0.25, 0.1, 2_000, "plain"), (4, 1.0, 0.3, 2_000, "weights"),
    (4, 1.0, 0.3, 2_000, "clusters"), (4, 1.0, 0.01, 2_000, "weights"),
]


@functools.cache
def _mechanism(k: int, eps: float) -> designer.Mechanism:
    mech = designer.design(designer.DesignProblem(inputs=tuple(f"x{j}" for j in range(k)), epsilon=eps)).mechanism
    assert mech is not None
    return mech


def run_cell(k: int, eps: float, share: float, n: int, variant: str, reps: int, rng: np.random.Generator
             ) -> dict[str, float]:
    mech = _mechanism(k, eps)
    truth = np.full(k, (1 - share) / (k - 1))
    truth[0] = share
    probs = truth @ mech.matrix
    hits = {"reported": 0, "wald": 0}
    used = 0
    z = 1.959963984540054
    for _ in range(reps):
        if variant == "plain":
            fit = estimate_sldp(mech, rng.multinomial(n, probs).astype(float))
        else:
            codes = rng.choice(probs.size, size=n, p=probs)
            if variant == "weights":
                counts = SurveyCounts.from_rows(probs.size, codes, weights=rng.lognormal(0, 0.5, n))
            else:
                counts = SurveyCounts.from_rows(probs.size, codes, cluster=rng.integers(0, 40, n))
            fit = estimate_survey(mech, counts)
        if str(fit.status) not in {"converged", "boundary"}:
            continue
        used += 1
        hits["reported"] += int(fit.ci_low[0] <= share <= fit.ci_high[0])
        se = fit.stderr[0]
        if math.isfinite(se):
            hits["wald"] += int(max(fit.estimate[0] - z * se, 0) <= share <= min(fit.estimate[0] + z * se, 1))
    out: dict[str, float] = {"k": k, "eps": eps, "share": share, "n": n, "replications": used}
    for name, count in hits.items():
        p = count / used if used else math.nan
        out[name] = p
        out[f"{name}_mc"] = math.sqrt(p * (1 - p) / used) if used else math.nan
    out["variant"] = variant  # type: ignore[assignment]
    return out


def figure(rows: list[dict[str, float]], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(max(6.0, 0.8 * len(rows)), 4.4))
    xs = np.arange(len(rows))
    for offset, name, colour in ((-0.15, "reported", "C0"), (0.15, "wald", "C3")):
        ax.errorbar(xs + offset, [r[name] for r in rows], yerr=[2 * r[f"{name}_mc"] for r in rows], fmt="o",
                    color=colour, label=f"{name} interval (2 MC errors)")
    ax.axhspan(0.94, 0.96, color="0.85", label="0.94-0.96")
    ax.axhline(0.95, color="0.4", lw=0.8)
    ax.set_xticks(xs, [f"k {r['k']:g}, eps {r['eps']:g}\nshare {r['share']:g}\nn {r['n']:,.0f}\n{r['variant']}"
                       for r in rows], fontsize=6)
    ax.set_ylabel("coverage of the first share")
    ax.set_ylim(max(0.0, min(min(r["reported"], r["wald"]) for r in rows) - 0.05), 1.0)
    ax.legend(fontsize=7, loc="lower left")
    fig.tight_layout()
    fig.savefig(path, dpi=130)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--replications", type=int, default=2000)
    parser.add_argument("--quick", action="store_true", help="the QUICK cells instead of the full grid")
    parser.add_argument("--out", default="benchmarks/coverage", help="stem of the CSV and PNG written")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    rng = np.random.default_rng(args.seed)
    cells: list[tuple[int, float, float, int, str]] = QUICK if args.quick else [
        (int(k), float(e), float(s), int(n), str(v)) for k, e, s, n, v in itertools.product(
            FULL["k"], FULL["eps"], FULL["share"], FULL["n"], FULL["variant"])]
    rows = []
    print("k,eps,share,n,variant,replications,reported,reported_mc,wald,wald_mc,seconds")
    for cell in cells:
        start = time.perf_counter()
        row = run_cell(*cell, args.replications, rng)
        rows.append(row)
        print(",".join(str(row[c]) if isinstance(row[c], str) else f"{row[c]:g}" for c in
                       ("k", "eps", "share", "n", "variant", "replications", "reported", "reported_mc", "wald",
                        "wald_mc")) + f",{time.perf_counter() - start:.0f}", flush=True)
    figure(rows, Path(f"{args.out}.png"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
