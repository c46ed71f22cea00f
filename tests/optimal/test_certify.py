"""Direct tests of the certifier: cleaning, the mixing-weight search, the structure check, the release rule."""

import math
from fractions import Fraction

import numpy as np
import pytest

import designer as d
from designer.optimal import DesignProblem, design
from designer.optimal.certify import (
    CertificationError,
    certify,
    clean_solution,
    smallest_mix_weight,
    structure_ok,
)

BINARY = ("yes", "no")


def test_clean_solution_clips_noise_and_renormalises():
    cols = np.array([[0.5, -1e-15, 0.5 + 1e-12], [1e-14, 0.3, 0.7]])
    out = clean_solution(cols)
    assert out[0, 1] == 0.0 and out[1, 0] == 0.0  # negatives and entries below 1e-13 are noise
    assert np.allclose(out.sum(axis=1), 1.0, rtol=0, atol=1e-15)


def test_clean_solution_fixes_the_dont_know_mass_exactly():
    cols = np.array([[0.58, 0.22, 0.2000000001], [0.21, 0.59, 0.1999999999]])
    out = clean_solution(cols, fixed_full=0.2, full_index=2)
    assert np.all(out[:, 2] == 0.2)
    assert np.allclose(out[:, :2].sum(axis=1), 0.8, rtol=0, atol=1e-15)


def test_clean_solution_zeroes_forbidden_entries():
    cols = np.array([[0.9, 1e-9, 0.1], [1e-9, 0.9, 0.1]])
    forbidden = np.array([[False, True, False], [True, False, False]])
    out = clean_solution(cols, forbidden=forbidden)
    assert out[0, 1] == 0.0 and out[1, 0] == 0.0


@pytest.mark.parametrize("threshold", [0.0, 1e-15, 3.7e-12, 2e-6, 0.31, 0.999])
def test_smallest_mix_weight_finds_the_threshold(threshold):
    calls = []

    def passes(t):
        calls.append(t)
        return t >= threshold

    t = smallest_mix_weight(passes)
    assert passes(t)
    assert t >= threshold
    # within the resolution of the search: 12 bisection steps inside one decade
    assert t <= max(threshold * (1 + 10 / 2**12), 1e-15)
    assert len(calls) < 40


def test_structure_ok_is_exact_on_the_lying_bound():
    problem = DesignProblem(objective="truthful", inputs=BINARY, epsilon=1.0, lie_max=0.3)
    over = d.Mechanism([[0.7, 0.30000000000000004], [0.3, 0.7]], inputs=BINARY, frame=BINARY, focal=[1, 2])
    assert Fraction(0.30000000000000004) > Fraction(0.3)
    assert not structure_ok(problem, over)
    at = d.Mechanism([[0.7, 0.3], [0.3, 0.7]], inputs=BINARY, frame=BINARY, focal=[1, 2])
    assert structure_ok(problem, at)


def test_structure_ok_checks_focal_sets_and_dont_know():
    q = d.Q_GWRR(1.0, 0.8)
    assert structure_ok(DesignProblem(objective="truthful", inputs=BINARY, epsilon=1.0, dont_know=0.2), q) == bool(
        np.all(q.matrix[:, 2] == 0.2))
    assert not structure_ok(DesignProblem(objective="truthful", inputs=BINARY, epsilon=1.0, dont_know=0.1), q)
    assert not structure_ok(DesignProblem(objective="truthful", inputs=BINARY, epsilon=1.0, focal_sets=[1, 2]), q)


def test_refusal_when_no_repair_is_accepted():
    mech = d.Mechanism([[1.0, 0.0], [0.0, 1.0]], inputs=BINARY, frame=BINARY, focal=[1, 2])
    with pytest.raises(CertificationError, match="costs more objective"):
        certify(mech, DesignProblem(objective="truthful", inputs=BINARY, epsilon=1.0), accept=lambda m: False)


@pytest.mark.parametrize("eps", [1e-12, 1e-6, 1.316632, 30.0, 34.6, 100.0, 700.0])
def test_gwrr_designs_at_every_budget_a_float_holds(eps):
    r = design(DesignProblem(objective="truthful", inputs=BINARY, epsilon=eps, dont_know=0.2))
    p_closed = 0.8 / (1 + math.exp(-eps)) if eps < 700 else 0.8
    assert r.objective_value == pytest.approx(p_closed, rel=1e-6)
    assert d.is_private(r.mechanism, eps, exact=True)
    assert np.all(r.mechanism.matrix[:, -1] == 0.2)
