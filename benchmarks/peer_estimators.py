"""Finite samples: designer's estimators beside the published LDP libraries' at the same design, n and eps.

At k-RR (GRR: the true input with probability e^eps / (e^eps + k - 1), any other with 1 / (e^eps + k - 1)):
designer's maximum-likelihood estimate (``estimate_sldp``), designer's posterior mean under a uniform Dirichlet
prior (``designer.estimation.posterior``), multi-freq-ldpy's GRR estimators (``GRR_Aggregator_MI``, the unbiased
inversion with its normalisation; ``GRR_Aggregator_IBU``, the iterative Bayesian update) and pure-ldp's direct
encoding (``DEServer``, the unbiased inversion). MSE per respondent: ``n * sum_x (pi_hat_x - pi_x)^2`` averaged over
the replications, beside the asymptotic prediction ``sum_x Var_x`` of the MLE (``closed_forms.krr_variance``); and the
coverage of designer's 95% intervals (the MLE's, the posterior's credible intervals) over all shares.

The peers run in their own environment, never as dependencies of designer::

    python3 -m venv benchmarks/.peers-venv
    benchmarks/.peers-venv/bin/pip install multi-freq-ldpy pure-ldp
    .venv/bin/python benchmarks/peer_estimators.py --reps 100      # k 16, eps 0.5, n 10^4, skewed truth

(the script puts the peers' site-packages after designer's on the path; without them it runs designer's alone).
Single process; a replication takes about a second.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
for site in sorted((ROOT / "benchmarks" / ".peers-venv" / "lib").glob("python*/site-packages")):
    sys.path.append(str(site))  # after designer's own: designer's numpy and scipy win

from designer import Mechanism  # noqa: E402
from designer.estimation.posterior import posterior_shares  # noqa: E402
from designer.estimation.shares import estimate_sldp  # noqa: E402


def krr(k: int, eps: float) -> Mechanism:
    p = np.exp(eps) / (np.exp(eps) + k - 1)
    q = 1 / (np.exp(eps) + k - 1)
    matrix = np.full((k, k), q) + np.eye(k) * (p - q)
    names = [f"v{i:02d}" for i in range(k)]
    return Mechanism(matrix, inputs=names, frame=names, focal=[1 << i for i in range(k)])


def skewed(k: int) -> np.ndarray:
    """A geometric truth: each share 0.7 of the one before."""
    w = 0.7 ** np.arange(k)
    return w / w.sum()


def peers() -> dict[str, object]:
    found: dict[str, object] = {}
    try:
        from multi_freq_ldpy.pure_frequency_oracles.GRR import GRR_Aggregator_IBU, GRR_Aggregator_MI

        found["multi-freq-ldpy MI"] = lambda reports, k, eps: GRR_Aggregator_MI(reports, k, eps)
        found["multi-freq-ldpy IBU"] = lambda reports, k, eps: GRR_Aggregator_IBU(reports, k, eps)
    except ImportError as exc:
        print(f"multi-freq-ldpy not found ({exc}); see the docstring", file=sys.stderr)
    try:
        from pure_ldp.frequency_oracles.direct_encoding import DEServer

        def pure(reports: np.ndarray, k: int, eps: float) -> np.ndarray:
            server = DEServer(epsilon=eps, d=k, index_mapper=lambda x: x)
            server.aggregate_all(list(reports))
            return np.array([server.estimate(i) for i in range(k)]) / len(reports)
        found["pure-ldp DE"] = pure
    except ImportError as exc:
        print(f"pure-ldp not found ({exc}); see the docstring", file=sys.stderr)
    return found


def run(k: int, eps: float, n: int, reps: int, seed: int) -> None:
    mech = krr(k, eps)
    truth = skewed(k)
    from designer import closed_forms as cf

    predicted = k * float(cf.krr_variance(eps, k, 1, truth, reduce="mean"))  # type: ignore[arg-type]
    rng = np.random.default_rng(seed)
    others = peers()
    errors: dict[str, list[float]] = {name: [] for name in ["designer MLE", "designer posterior", *others]}
    covered = {"designer MLE": 0, "designer posterior": 0}
    start = time.perf_counter()
    failed = 0
    for _ in range(reps):
        true_counts = rng.multinomial(n, truth)
        counts = sum(rng.multinomial(c, mech.matrix[x]) for x, c in enumerate(true_counts))
        try:
            fit = estimate_sldp(mech, counts)
        except ValueError:  # issue 55 item 2: the profile interval's root search (estimation/boundary.py)
            failed += 1
            continue
        post = posterior_shares(mech.matrix, counts, prior=1.0,
                                seed=int(rng.integers(2**31)))
        errors["designer MLE"].append(n * float(np.sum((fit.estimate - truth) ** 2)))
        errors["designer posterior"].append(n * float(np.sum((post.mean - truth) ** 2)))
        covered["designer MLE"] += int(np.sum((fit.ci_low <= truth) & (truth <= fit.ci_high)))
        covered["designer posterior"] += int(np.sum((post.ci_low <= truth) & (truth <= post.ci_high)))
        reports = rng.permutation(np.repeat(np.arange(k), counts))
        for name, estimator in others.items():
            est = np.asarray(estimator(reports, k, eps), dtype=np.float64)  # type: ignore[operator]
            errors[name].append(n * float(np.sum((est - truth) ** 2)))
    print(f"k = {k}, eps = {eps}, n = {n}, {reps} replications, truth 0.7^x normalised "
          f"({time.perf_counter() - start:.0f} s); asymptotic MSE of the MLE {predicted:.2f} per respondent; "
          f"{failed} replication(s) left out: the MLE's interval search raised ValueError")
    reps -= failed
    print("| estimator | MSE per respondent | +- | coverage of 95% intervals |")
    print("|---|---|---|---|")
    for name, values in errors.items():
        v = np.asarray(values)
        cover = f"{covered[name] / (reps * k):.3f}" if name in covered else ""
        print(f"| {name} | {v.mean():.2f} | {v.std(ddof=1) / np.sqrt(v.size):.2f} | {cover} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--k", type=int, default=16)
    parser.add_argument("--eps", type=float, default=0.5)
    parser.add_argument("--n", type=int, default=10_000)
    parser.add_argument("--reps", type=int, default=100)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    run(args.k, args.eps, args.n, args.reps, args.seed)


if __name__ == "__main__":
    main()
