"""Issue 57: designs over the problem space, not over examples. Random problems (2-4 inputs, budgets 0.1-5, skewed
priors, exact or capped don't-know masses, lying bounds, focal families, four objectives) must each end in one of
two ways:

- a released design that is eps-SLDP and meets its structure, both checked here by code that shares nothing with
  designer (the belief of every event from the matrix, rational arithmetic for the lie and don't-know masses), and is
  called ``optimal`` only with a proved gap within 1e-6; or
- a refusal a user can act on (:class:`InvalidProblemError` or :class:`InfeasibleDesignError`, exit 2); an
  :class:`InfeasibleDesignError` only where an independent linear program over every eps-SLDP design with the
  structure (scipy's ``linprog``, written here) finds none.

Never a solver's or a certificate's failure (exit 1) on a valid problem. The cases below the hypothesis test are the
ones a hunt over 600 random problems found failing before (each with its seed's problem).
"""

from __future__ import annotations

import math
import warnings
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy.optimize import linprog

import designer
from designer.exceptions import InfeasibleDesignError, InvalidProblemError
from designer.optimal import DesignProblem


def _labels(k: int) -> tuple[str, ...]:
    return tuple(f"x{i}" for i in range(k))


def _subsets(mask: int) -> list[int]:
    return [s for s in range(1, mask + 1) if s & mask == s]


def shafer_loss_ok(matrix: np.ndarray, focal: list[int], eps: float, l: int) -> bool:
    """Every event's belief ``bel_x(A) = sum_{F subset of A} M[x, F]`` within ``e^eps`` between any two inputs."""
    bound = math.exp(eps) * (1 + 1e-12)
    for event in range(1, 1 << l):
        inside = [j for j, f in enumerate(focal) if f & event == f]
        bel = matrix[:, inside].sum(axis=1) if inside else np.zeros(matrix.shape[0])
        if bel.max() > bound * bel.min() + 1e-15:
            return False
    return True


def structure_ok(problem: DesignProblem, matrix: np.ndarray, focal: list[int]) -> bool:
    """Focal sets allowed, the don't-know mass exact (or capped) and the lie masses capped, in rational arithmetic."""
    full = (1 << problem.l) - 1
    if problem.focal_sets is not None and not set(focal) <= set(problem.focal_sets):
        return False
    for x in range(problem.k):
        row = [Fraction(float(v)) for v in matrix[x]]
        dk = sum((v for v, f in zip(row, focal) if f == full), Fraction(0))
        if problem.dont_know is not None and dk != Fraction(problem.dont_know):
            return False
        if problem.dont_know_max is not None and dk > Fraction(problem.dont_know_max):
            return False
        lie = sum((v for v, f in zip(row, focal) if not (f >> x) & 1), Fraction(0))
        if problem.lie_max is not None and lie > Fraction(problem.lie_max):
            return False
    return True


def general_feasible(problem: DesignProblem) -> bool:
    """Whether any eps-SLDP mechanism meets the structure: a feasibility LP over ``M[x, F]`` for every allowed ``F``
    (inputs = frame), one row per event and ordered pair of inputs."""
    k, l = problem.k, problem.l
    full = (1 << l) - 1
    family = list(problem.focal_sets) if problem.focal_sets is not None else list(range(1, full + 1))
    F = len(family)
    nv = k * F
    e = math.exp(problem.epsilon)
    a_ub, b_ub, a_eq, b_eq = [], [], [], []
    for x in range(k):
        row = np.zeros(nv)
        row[x * F:(x + 1) * F] = 1
        a_eq.append(row)
        b_eq.append(1.0)
    for event in range(1, full):
        inside = [j for j, f in enumerate(family) if f & event == f]
        for x in range(k):
            for y in range(k):
                if x != y and inside:
                    row = np.zeros(nv)
                    row[[x * F + j for j in inside]] = 1
                    row[[y * F + j for j in inside]] -= e
                    a_ub.append(row)
                    b_ub.append(0.0)
    for x in range(k):
        at_full = [x * F + j for j, f in enumerate(family) if f == full]
        if problem.dont_know is not None:
            row = np.zeros(nv)
            row[at_full] = 1
            if not at_full and problem.dont_know > 0:
                return False
            if at_full:
                a_eq.append(row)
                b_eq.append(problem.dont_know)
        if problem.dont_know_max is not None and at_full:
            row = np.zeros(nv)
            row[at_full] = 1
            a_ub.append(row)
            b_ub.append(problem.dont_know_max)
        if problem.lie_max is not None:
            row = np.zeros(nv)
            row[[x * F + j for j, f in enumerate(family) if not (f >> x) & 1]] = 1
            a_ub.append(row)
            b_ub.append(problem.lie_max)
    out = linprog(np.zeros(nv), A_ub=np.array(a_ub) if a_ub else None, b_ub=b_ub or None, A_eq=np.array(a_eq),
                  b_eq=b_eq, bounds=(0, None), method="highs")
    return bool(out.status == 0)


def check_design(problem: DesignProblem, objective: str) -> str:
    """Design ``problem`` and check the outcome; returns ``'released'`` or ``'refused'``."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            result = designer.design(problem, objective=objective)
        except InfeasibleDesignError as error:
            assert not general_feasible(problem), f"said infeasible, but an eps-SLDP design exists: {error}"
            return "refused"
        except InvalidProblemError as error:
            assert str(error).strip(), "a refusal needs its reason"
            return "refused"
    mech = result.mechanism
    assert mech is not None
    matrix = np.asarray(mech.matrix, dtype=float)
    focal = [int(f) for f in mech.focal]
    assert np.all(matrix >= 0)
    assert all(sum(Fraction(float(v)) for v in row) == 1 for row in matrix) or np.allclose(matrix.sum(1), 1, atol=1e-15)
    assert shafer_loss_ok(matrix, focal, problem.epsilon, problem.l), "the released design breaks the budget"
    assert structure_ok(problem, matrix, focal), "the released design breaks the structure"
    if str(result.status) == "optimal" and result.optimality_gap is not None:
        assert result.optimality_gap <= 1e-6
    return "released"


@st.composite
def problems(draw: st.DrawFn) -> tuple[DesignProblem, str]:
    k = draw(st.integers(2, 4))
    kw: dict = {"inputs": _labels(k), "epsilon": draw(st.sampled_from([0.1, 0.25, 0.5, 1.0, 2.0, 5.0]))}
    if draw(st.booleans()):
        raw = np.array(draw(st.lists(st.floats(0.01, 1.0), min_size=k, max_size=k)))
        kw["prior"] = tuple(raw / raw.sum())
    shape = draw(st.sampled_from(["none", "dont_know", "dont_know_max"]))
    if shape == "dont_know":
        kw["dont_know"] = draw(st.sampled_from([0.05, 0.2, 0.5]))
    elif shape == "dont_know_max":
        kw["dont_know_max"] = draw(st.sampled_from([0.05, 0.25, 0.6]))
    if draw(st.booleans()):
        kw["lie_max"] = draw(st.sampled_from([0.02, 0.1, 0.3, 0.6]))
    if draw(st.integers(0, 2)) == 0:
        full = (1 << k) - 1
        family = set(draw(st.lists(st.integers(1, full), min_size=1, max_size=2 * k)))
        if "dont_know" in kw:
            family.add(full)
        kw["focal_sets"] = tuple(sorted(family))
    objective = draw(st.sampled_from(["variance", "max_variance", "truthful", "chi2"]))
    return DesignProblem(**kw), objective


# derandomized: the same 30 problems on every run (the suite must not fail by the draw); the benchmark
# (benchmarks/design_space.py) draws new ones at scale, and what it finds becomes a case below
@settings(max_examples=30, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(case=problems())
def test_every_problem_is_released_certified_or_refused_with_its_reason(case: tuple[DesignProblem, str]) -> None:
    problem, objective = case
    assert check_design(problem, objective) in {"released", "refused"}


# the hunt's failures before this change (exit 1: a solver's or a certificate's failure on a valid problem)
RELEASED = [
    # a lying bound met by the conic solver to 2.5e-9: the repair references sat only 1e-6 inside the bound
    (dict(inputs=("yes", "no"), epsilon=0.25, prior=(0.209, 0.791), lie_max=0.1), "variance"),
    (dict(inputs=_labels(2), epsilon=0.1, prior=(0.844, 0.156), lie_max=0.1), "max_variance"),
    # the solver's answer 3.8e-6 over the lying bound on a nearly flat objective: released with its proved gap
    (dict(inputs=_labels(3), epsilon=0.1, lie_max=0.02), "max_variance"),
    # Clarabel stopped on the restricted program (NumericalError, MaxIterations): the fallback solver
    (dict(inputs=_labels(4), epsilon=2.0, prior=(0.448, 0.474, 0.04, 0.038), lie_max=0.3,
          focal_sets=(1, 3, 5, 8, 10, 14)), "max_variance"),
    (dict(inputs=_labels(4), epsilon=0.5, prior=(0.206, 0.068, 0.64, 0.086), dont_know=0.05,
          focal_sets=(2, 4, 10, 11, 13, 15)), "max_variance"),
    # the first restricted program's columns met no row sums under the focal sets (PrimalInfeasible)
    (dict(inputs=_labels(5), epsilon=0.5, prior=(0.023, 0.255, 0.01, 0.44, 0.272), focal_sets=(7, 12, 13, 19, 29)),
     "variance"),
    # near the lying bound's feasibility threshold (0.285): the answer broke the bound by 6e-4 and the budget by
    # 0.0085 nats and no reference met the structure (found by the hypothesis test above)
    (dict(inputs=_labels(4), epsilon=0.25, lie_max=0.3, focal_sets=(1, 7, 10, 13)), "variance"),
    # two of a restricted program's columns reported one set ("a focal set appears twice": an internal error)
    (dict(inputs=_labels(4), epsilon=0.5, dont_know_max=0.6, focal_sets=(1, 3, 5, 7, 10, 11)), "max_variance"),
    # the restricted program's class holds only "don't know" (Clarabel and SCS failed on it): k-RR's columns assigned
    # to the allowed sets (gap 1e-4)
    (dict(inputs=_labels(3), epsilon=0.1, prior=(0.114, 0.874, 0.012), focal_sets=(5, 6, 7)), "variance"),
    # a repair accepted within 1e-6 of the optimum plus 1e-12 absolute: `optimal` beside a gap of 1.00000000008e-6
    # (benchmarks/design_space.py --seed 11)
    (dict(inputs=_labels(3), epsilon=2.0, prior=(0.39515187996265205, 0.19596665657425372, 0.40888146346309423),
          lie_max=0.3), "truthful"),
]


@pytest.mark.parametrize(("fields", "objective"), RELEASED)
def test_found_failures_are_released_and_certified(fields: dict, objective: str) -> None:
    assert check_design(DesignProblem(**fields), objective) == "released"


def test_a_structure_at_its_feasibility_threshold_is_released() -> None:
    # k = 4 near the lying bound's threshold: the conic answer breaks the budget by 0.0078 nats and answers x1 and x3
    # alike to 4e-5; the most truthful design answers them alike exactly. Before: CertificationError (exit 1). The
    # separating reference (an average of linear-program designs pulling each pair apart) is feasible and of full
    # rank, and it beats the conic answer's repair (variance 13,522 with a mixing weight at its least)
    problem = DesignProblem(inputs=_labels(4), epsilon=0.25, lie_max=0.3, focal_sets=(1, 2, 5, 11, 14))
    assert general_feasible(problem)
    assert check_design(problem, "variance") == "released"
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no reference's own warning reaches the user
        result = designer.design(problem, objective="variance")
    matrix = np.asarray(result.mechanism.matrix, dtype=float)
    assert np.linalg.matrix_rank(matrix) == 4  # every share identified
    assert math.isfinite(result.objective_value) and result.objective_value < 13_000
    assert str(result.status) == "local" and result.optimality_gap is not None and result.bound is not None
    assert "separating design" in result.path


REFUSED = [
    # chi2 over staircase answers the focal sets cannot hold (HiGHS failed explaining it at epsilon 32): a design
    # exists, so the refusal names the class, not the budget
    (dict(inputs=_labels(5), epsilon=2.0, focal_sets=(2, 7, 15, 17)), "chi2", "staircase answers"),
    (dict(inputs=_labels(5), epsilon=5.0, focal_sets=(8, 16, 17, 19, 20, 24, 26)), "chi2", "staircase answers"),
    # four answer sets cannot tell five inputs apart
    (dict(inputs=_labels(5), epsilon=2.0, focal_sets=(2, 7, 15, 17)), "variance", "rank at most 4"),
    # a fixed don't-know mass leaves one free set for two inputs
    (dict(inputs=_labels(2), epsilon=0.25, dont_know=0.05, focal_sets=(1, 3)), "max_variance", "rank at most 1"),
    (dict(inputs=_labels(2), epsilon=2.0, focal_sets=(2,)), "max_variance", "rank at most 1"),
    # only the whole frame allowed: every design constant (HiGHS failed on an empty program; an identifiability
    # refusal said "infeasible")
    (dict(inputs=_labels(3), epsilon=5.0, focal_sets=(7,)), "chi2", "only the whole frame"),
    (dict(inputs=_labels(2), epsilon=5.0, lie_max=0.6, focal_sets=(3,)), "variance", "separates any two inputs"),
    # the lying bound and the focal sets leave the staircase answers only "don't know": Clarabel and SCS both
    # failed on the restricted program (exit 1), or a solver's row residue of 1e-4 was released as a design
    (dict(inputs=_labels(3), epsilon=0.5, prior=(0.0258, 0.7637, 0.2105), lie_max=0.1, focal_sets=(1, 3, 5, 7)),
     "max_variance", "only the constant"),
]


@pytest.mark.parametrize(("fields", "objective", "reason"), REFUSED)
def test_found_failures_are_refused_with_the_true_reason(fields: dict, objective: str, reason: str) -> None:
    problem = DesignProblem(**fields)
    assert general_feasible(problem)  # a design exists: the refusal must not say otherwise
    with pytest.raises(InvalidProblemError, match=reason):
        designer.design(problem, objective=objective)


def test_general_infeasibility_is_explained_with_what_would_fix_it() -> None:
    problem = DesignProblem(inputs=_labels(3), epsilon=0.25, prior=(0.438, 0.454, 0.108), dont_know_max=0.05,
                            lie_max=0.1)
    assert not general_feasible(problem)
    with pytest.raises(InfeasibleDesignError, match="epsilon >="):
        designer.design(problem, objective="variance")


def test_focal_sets_may_be_given_as_label_sets() -> None:
    by_labels = DesignProblem(inputs=("a", "b", "c"), epsilon=1.0, focal_sets=[["a"], ["b", "c"], "c", ["a", "b", "c"]])
    assert by_labels.focal_sets == (1, 4, 6, 7)
    by_masks = DesignProblem(inputs=("a", "b", "c"), epsilon=1.0, focal_sets=(1, 6, 4, 7))
    assert by_labels.focal_sets == by_masks.focal_sets
    for bad in ([["z"]], [[]], [True], [[1]]):
        with pytest.raises(InvalidProblemError, match=r"structure\.focal_sets"):
            DesignProblem(inputs=("a", "b", "c"), epsilon=1.0, focal_sets=bad)


@settings(max_examples=40, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(case=problems(), share=st.sampled_from([0.9, 0.99, 0.999]))
def test_a_separating_reference_is_private_within_the_structure_and_of_full_rank(
        case: tuple[DesignProblem, str], share: float) -> None:
    from designer.optimal.references import separating_reference

    problem, _ = case
    reference = separating_reference(problem, share)
    if reference is None:  # no design at this share, or the average does not identify every share
        return
    matrix = np.asarray(reference.matrix, dtype=float)
    focal = [int(f) for f in reference.focal]
    assert np.all(matrix >= 0) and np.allclose(matrix.sum(axis=1), 1.0, atol=1e-12)
    assert np.linalg.matrix_rank(matrix) == problem.k
    assert shafer_loss_ok(matrix, focal, problem.epsilon, problem.l)
    if problem.dont_know is not None:  # fixed to the solver's tolerance; certification sets it exactly
        full = (1 << problem.l) - 1
        dont_know = matrix[:, focal.index(full)] if full in focal else np.zeros(problem.k)
        assert np.allclose(dont_know, problem.dont_know, atol=1e-8)
    else:
        assert structure_ok(problem, matrix, focal)
