"""What the answers identify, checked against computations written differently from designer's.

- ``identified_set`` (Walley semantics, precise answers) solves an LP over the shares and the allocation of each
  input's set masses to the set's elements. Here the same set is written without allocations: the answer
  distributions reachable from shares ``pi`` are those ``q`` with ``q(A) >= sum_x pi_x bel_x(A)`` for every
  event ``A`` (the core of the mixed belief function), an LP over ``(pi, q)`` with one row per event.
- ``identified_interval`` against an LP that holds the fitted distribution on the observed answers exactly.
- ``_pseudo_variance`` against the variance of the model in which the inputs the answers cannot tell apart are
  merged into one (a full-rank model, inverted directly), and its thresholds on a chosen information.
- ``_bonferroni_bands`` against ``statistics.NormalDist``.
"""

from __future__ import annotations

from statistics import NormalDist

import numpy as np
import pytest
from scipy.optimize import linprog

from designer import Mechanism
from designer.estimation import identification as ident
from designer.estimation.mle import mle_newton
from designer.exceptions import InvalidArgumentError, InvalidMechanismError


def _beliefs(mech: Mechanism) -> tuple[list[int], np.ndarray]:
    """Every non-empty event of the frame and each input's belief in it, ``(k, 2^l - 1)``."""
    events = list(range(1, 2**mech.l))
    bel = np.array([[sum(mech.matrix[x, j] for j, b in enumerate(mech.focal) if int(b) & ~e == 0)
                     for e in events] for x in range(mech.k)])
    return events, bel


def _core_program(mech: Mechanism, f: np.ndarray, band: np.ndarray | None):
    """Rows of the LP over ``(pi, q, t)``: ``q`` in the core of ``sum pi_x bel_x``, ``t >= |q - f|``."""
    k, l = mech.k, mech.l
    events, bel = _beliefs(mech)
    nv = k + 2 * l
    a_ub, b_ub = [], []
    for i, e in enumerate(events):  # sum_x pi_x bel_x(A) - q(A) <= 0
        row = np.zeros(nv)
        row[:k] = bel[:, i]
        row[k:k + l] = [-1.0 if e >> y & 1 else 0.0 for y in range(l)]
        a_ub.append(row)
        b_ub.append(0.0)
    for y in range(l):  # q_y - f_y <= t_y and f_y - q_y <= t_y
        for sign in (1.0, -1.0):
            row = np.zeros(nv)
            row[k + y], row[k + l + y] = sign, -1.0
            a_ub.append(row)
            b_ub.append(sign * f[y])
    a_eq = np.zeros((2, nv))
    a_eq[0, :k] = 1.0
    a_eq[1, k:k + l] = 1.0
    bounds = [(0, None)] * (k + l) + ([(0, b) for b in band] if band is not None else [(0, None)] * l)
    return np.array(a_ub), np.array(b_ub), a_eq, np.array([1.0, 1.0]), bounds


def _independent_set(mech: Mechanism, counts: np.ndarray, level: float | None):
    """(lower, upper, misfit) from the core program; the misfit is the least ``sum |q - f|`` when the bands
    (or the exact frequencies) miss every reachable distribution."""
    n = counts.sum()
    f = counts / n
    k, l = mech.k, mech.l
    band = np.zeros(l)
    if level is not None:
        z = NormalDist().inv_cdf(1 - (1 - level) / (2 * l))
        band = z * np.sqrt(np.maximum(f * (1 - f), 1 / n) / n)
    a_ub, b_ub, a_eq, b_eq, bounds = _core_program(mech, f, band)
    misfit = 0.0
    if linprog(np.zeros(len(bounds)), A_ub=a_ub, b_ub=b_ub, A_eq=a_eq, b_eq=b_eq, bounds=bounds,
               method="highs").status != 0:
        bounds = [(0, None)] * len(bounds)
        cost = np.r_[np.zeros(k + l), np.ones(l)]
        misfit = linprog(cost, A_ub=a_ub, b_ub=b_ub, A_eq=a_eq, b_eq=b_eq, bounds=bounds, method="highs").fun
        a_ub = np.vstack([a_ub, cost])
        b_ub = np.r_[b_ub, misfit * (1 + 1e-9) + 1e-12]
    lower, upper = np.zeros(k), np.zeros(k)
    for j in range(k):
        c = np.zeros(len(bounds))
        c[j] = 1.0
        lower[j] = linprog(c, A_ub=a_ub, b_ub=b_ub, A_eq=a_eq, b_eq=b_eq, bounds=bounds, method="highs").fun
        upper[j] = -linprog(-c, A_ub=a_ub, b_ub=b_ub, A_eq=a_eq, b_eq=b_eq, bounds=bounds, method="highs").fun
    return lower, upper, misfit


def _random_mechanism(rng: np.random.Generator) -> Mechanism:
    k, l = int(rng.integers(2, 4)), int(rng.integers(2, 5))
    subsets = rng.choice(np.arange(1, 2**l), size=int(rng.integers(2, min(2**l - 1, 6) + 1)), replace=False)
    m = rng.random((k, subsets.size)) ** 2
    m[rng.random(m.shape) < 0.3] = 0.0
    m[:, m.sum(axis=0) == 0] = 0.5  # every focal set carries some mass
    m[m.sum(axis=1) == 0, 0] = 1.0  # and every input some set
    m /= m.sum(axis=1, keepdims=True)
    return Mechanism(m, inputs=[f"u{i}" for i in range(k)], frame=[f"v{i}" for i in range(l)],
                     focal=[int(b) for b in subsets])


def test_identified_set_matches_the_core_program_on_random_mechanisms():
    """60 mechanisms with set-valued answers over frames of 2-4 labels and inputs that are not frame labels;
    answer counts from a reachable distribution (rounded, so sometimes just off it) or from anywhere."""
    rng = np.random.default_rng(20261125)
    misfits = 0
    for case in range(60):
        mech = _random_mechanism(rng)
        if case % 3 == 2:  # any distribution: often unreachable
            q = rng.dirichlet(np.ones(mech.l))
        else:
            pi = rng.dirichlet(np.ones(mech.k))
            q = np.zeros(mech.l)
            for x in range(mech.k):
                for j, b in enumerate(mech.focal):
                    members = [y for y in range(mech.l) if int(b) >> y & 1]
                    q[members] += pi[x] * mech.matrix[x, j] * rng.dirichlet(np.ones(len(members)))
        n = int(rng.choice([30, 1000, 100_000]))
        counts = np.round(q * n)
        if counts.sum() == 0:
            counts[0] = 1
        for level in (None, 0.9):
            got = ident.identified_set(mech, counts, level=level)
            lower, upper, misfit = _independent_set(mech, counts, level)
            assert got.misfit == pytest.approx(misfit, abs=1e-7), (case, level)
            assert np.allclose(got.lower, np.clip(lower, 0, 1), atol=1e-6), (case, level, got.lower, lower)
            assert np.allclose(got.upper, np.clip(upper, 0, 1), atol=1e-6), (case, level, got.upper, upper)
            assert got.level == level and got.n == round(counts.sum()) and got.inputs == mech.inputs
            misfits += misfit > 0
    assert misfits >= 10  # both branches are exercised


def test_identified_set_off_the_reachable_distributions_uses_the_closest_ones():
    """Every input answers {v0} with probability at least 0.2, so no population answers v0 less often; at
    f(v0) = 0.05 the closest reachable distribution is (0.2, 0.8), at L1 distance 0.3, reached only when
    nobody holds u0 (whose answer v0 has probability 0.6)."""
    mech = Mechanism([[0.6, 0.2, 0.2], [0.2, 0.6, 0.2]], inputs=["u0", "u1"], frame=["v0", "v1"],
                     focal=[0b01, 0b10, 0b11])
    got = ident.identified_set(mech, [5, 95], level=None)
    assert got.misfit == pytest.approx(0.3, abs=1e-9)
    assert got.lower == pytest.approx([0, 1], abs=1e-7) and got.upper == pytest.approx([0, 1], abs=1e-7)
    with_bands = ident.identified_set(mech, [5, 95], level=0.95)  # bands of n = 100 do not reach 0.2 either
    assert with_bands.misfit == pytest.approx(0.3, abs=1e-9) and with_bands.level == 0.95 and with_bands.n == 100


def test_identified_set_refuses_counts_and_levels_out_of_their_domain():
    mech = Mechanism([[0.6, 0.2, 0.2], [0.2, 0.6, 0.2]], inputs=["u0", "u1"], frame=["v0", "v1"],
                     focal=[0b01, 0b10, 0b11])
    message = "^counts must be 2 non-negative numbers with a positive total$"
    for bad in ([1, 2, 3], [-1, 5], [0, 0]):
        with pytest.raises(InvalidMechanismError, match=message):
            ident.identified_set(mech, bad)
    assert ident.identified_set(mech, [0, 1], level=None).n == 1  # a zero count and one answer are data
    assert ident.identified_set(mech, [0.5, 0.25], level=None).n == 1
    for level in (0.0, 1.0, 1.5):
        with pytest.raises(InvalidArgumentError, match=rf"^level must lie in \(0, 1\), got {level}$"):
            ident.identified_set(mech, [3, 4], level=level)


def test_bonferroni_bands_against_normal_quantiles():
    freq = np.array([0.5, 0.3, 0.2, 0.0])
    for n, level in ((100.0, 0.95), (2500.0, 0.8)):
        z = NormalDist().inv_cdf(1 - (1 - level) / (2 * freq.size))
        expected = [z * np.sqrt(max(p * (1 - p), 1 / n) / n) for p in freq]
        assert ident._bonferroni_bands(freq, n, level) == pytest.approx(expected, rel=1e-12)
    # the floor 1/n applies exactly where p (1 - p) < 1/n
    tiny = ident._bonferroni_bands(np.array([0.001, 0.999, 0.5]), 100.0, 0.9)
    assert tiny[0] == pytest.approx(tiny[1], rel=1e-12) and tiny[0] < tiny[2]


def test_extremes_clip_to_the_unit_interval_and_name_the_failing_program():
    low, high = ident._extremes(2, 2, A_eq=np.array([[1.0, -1.0]]), b_eq=[0.0], bounds=(-3, 4))
    assert list(low) == [0.0, 0.0] and list(high) == [1.0, 1.0]
    low, high = ident._extremes(1, 1, bounds=(0.25, 0.5))
    assert low[0] == pytest.approx(0.25) and high[0] == pytest.approx(0.5)
    low, high = ident._extremes(1, 1, bounds=(1.5, 4))  # a range above [0, 1] clips to its top
    assert low[0] == 1.0 == high[0]
    low, high = ident._extremes(1, 1, bounds=(-4, -1.5))  # and one below to its bottom
    assert low[0] == 0.0 == high[0]
    low, high = ident._extremes(1, 1, bounds=(0.25, 0.5))
    assert low[0] == pytest.approx(0.25) and high[0] == pytest.approx(0.5)
    for bounds in ((0, None), (None, 0)):  # one of the two programs is unbounded, the other is not
        with pytest.raises(InvalidMechanismError, match=r"^the identified-set program failed \(Unbounded\)$"):
            ident._extremes(1, 1, bounds=bounds)


def _exact_interval(m: np.ndarray, counts: np.ndarray, pi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each share's range over the simplex with ``pi . m(E)`` equal to the fit's on the observed answers."""
    seen = counts > 0
    k = m.shape[0]
    a_eq = np.vstack([m[:, seen].T, np.ones(k)])
    b_eq = np.r_[pi @ m[:, seen], 1.0]
    low, high = np.zeros(k), np.zeros(k)
    for j in range(k):
        c = np.eye(k)[j]
        low[j] = linprog(c, A_eq=a_eq, b_eq=b_eq, bounds=(0, 1), method="highs").fun
        high[j] = -linprog(-c, A_eq=a_eq, b_eq=b_eq, bounds=(0, 1), method="highs").fun
    return low, high


@pytest.mark.parametrize("counts", [[40, 25, 0], [1, 30, 1], [12, 0, 3]])
def test_identified_interval_holds_the_fit_on_the_observed_answers_only(counts):
    """Four inputs, three answers, one answer sometimes unseen: the unseen answer's probability is free, and
    an answer seen once counts as seen."""
    m = np.array([[0.6, 0.3, 0.1], [0.1, 0.6, 0.3], [0.3, 0.1, 0.6], [0.2, 0.2, 0.6]])
    c = np.array(counts, dtype=float)
    pi, _, _ = mle_newton(m, c)
    low, high = ident.identified_interval(m, c, pi)
    exact_low, exact_high = _exact_interval(m, c, pi)
    assert low == pytest.approx(exact_low, abs=1e-6) and high == pytest.approx(exact_high, abs=1e-6)


@pytest.mark.parametrize("counts", [[30, 20, 0, 0], [30, 20, 1, 1]])
def test_identified_interval_with_two_rare_answers(counts):
    """Inputs 0 and 1 answer alike on the first two answers and differ on the last two. Unseen, those two are
    free (only their sum is fixed), so 0 and 1 trade shares; each seen once, they pin both shares down."""
    m = np.array([[0.5, 0.2, 0.2, 0.1], [0.5, 0.2, 0.1, 0.2], [0.2, 0.5, 0.15, 0.15]])
    c = np.array(counts, dtype=float)
    pi, _, _ = mle_newton(m, c)
    low, high = ident.identified_interval(m, c, pi)
    exact_low, exact_high = _exact_interval(m, c, pi)
    assert low == pytest.approx(exact_low, abs=1e-6) and high == pytest.approx(exact_high, abs=1e-6)
    assert bool(high[0] - low[0] > 0.1) is (counts[2] == 0)


def test_identified_interval_of_a_rare_answer_keeps_a_positive_band():
    """A fitted probability of 1e-6 on an answer seen once: the band 1e-8 f + 1e-12 is still positive."""
    m = np.array([[1.0, 0.0], [0.0, 1.0], [0.5, 0.5]])
    c = np.array([1.0, 999_999.0])
    pi, _, _ = mle_newton(m, c)
    low, high = ident.identified_interval(m, c, pi)
    exact_low, exact_high = _exact_interval(m, c, pi)
    assert low == pytest.approx(exact_low, abs=1e-6) and high == pytest.approx(exact_high, abs=1e-6)


def _merged_variance(r_ab: np.ndarray, r_c: np.ndarray, counts: np.ndarray) -> float:
    """Variance of ``t = pi_c`` in the two-input model with rows ``r_ab`` and ``r_c``, from the observed
    information per answer ``sum_E f_E (r_c(E) - r_ab(E))^2 / p_E^2`` at the maximum of the likelihood."""
    seen = counts > 0
    f = counts[seen] / counts.sum()
    a, b = r_ab[seen], r_c[seen]
    grid = np.linspace(0, 1, 200_001)
    loglik = (np.log(np.outer(1 - grid, a) + np.outer(grid, b)) * f).sum(axis=1)
    t = grid[np.argmax(loglik)]
    for _ in range(50):  # Newton from the grid's best point, kept in [0, 1] (a maximum on the boundary stays)
        p = (1 - t) * a + t * b
        t = min(1.0, max(0.0, t + (f * (b - a) / p).sum() / (f * (b - a) ** 2 / p**2).sum()))
    p = (1 - t) * a + t * b
    info = (f * (b - a) ** 2 / p**2).sum()
    return 1.0 / (counts.sum() * info)


@pytest.mark.parametrize("counts", [[400, 200, 400], [1, 30, 70], [250, 0, 90]])
def test_pseudo_variance_of_an_identified_share_is_the_merged_model_variance(counts):
    """Inputs a and b give the same answers: pi_a and pi_b have no variance (NaN), pi_c has the variance of
    the model in which a and b are one input."""
    r_ab, r_c = np.array([0.7, 0.2, 0.1]), np.array([0.1, 0.2, 0.7])
    m = np.vstack([r_ab, r_ab, r_c])
    c = np.array(counts, dtype=float)
    pi, _, _ = mle_newton(m, c)
    var = ident._pseudo_variance(m, c, pi)
    assert np.all(np.isnan(var[:2]))
    assert var[2] == pytest.approx(_merged_variance(r_ab, r_c, c), rel=1e-6)
    assert not ident._identified_by(m, c, pi)


def _with_information(monkeypatch, info: np.ndarray) -> None:
    monkeypatch.setattr(ident, "_reduced_information", lambda m, counts, pi: np.asarray(info, dtype=float))


def _shares(k: int) -> np.ndarray:
    """Share j in the tangent coordinates d_1..d_{k-1} (d_k = -sum): e_j, and -1's for the last."""
    return np.array([[1.0 if i == j else 0.0 for i in range(k - 1)] if j < k - 1 else [-1.0] * (k - 1)
                     for j in range(k)]).T


@pytest.mark.parametrize("diag, n", [([4.0, 0.25], 10.0), ([3.0, 2e-15], 7.0), ([0.02, 5e-3, 1e-20], 1.0),
                                     ([1e-3, 1e-14], 3.0), ([1e-3, 1e-10], 3.0), ([1.0, 1e-12], 2.0)])
def test_pseudo_variance_on_a_chosen_information(monkeypatch, diag, n):
    """With a diagonal information the pseudo-inverse is written by hand: eigenvalues at most 1e-12 of the
    largest are dropped, a share is reached when its functional has no part along a dropped one."""
    info = np.diag(diag)
    _with_information(monkeypatch, info)
    k = len(diag) + 1
    counts = np.r_[n, np.zeros(2)]
    keep = np.array(diag) > 1e-12 * max(diag)
    inverse = np.diag([1 / v if kept else 0.0 for v, kept in zip(diag, keep)])
    expected = []
    for c in _shares(k).T:
        reached = np.all(c[~keep] == 0)
        expected.append(c @ inverse @ c / n if reached else np.nan)
    got = ident._pseudo_variance(np.ones((k, 3)) / 3, counts, np.ones(k) / k)
    assert np.array_equal(np.isnan(got), np.isnan(expected))
    assert got[~np.isnan(got)] == pytest.approx(np.array(expected)[~np.isnan(expected)], rel=1e-12)


@pytest.mark.parametrize("along2, reached", [(1e-12, True), (3e-12, False)])
def test_pseudo_variance_reaches_a_share_within_1e12_of_its_functional(monkeypatch, along2, reached):
    """Three inputs; the information is singular along ``u``, chosen so that the last share's functional
    ``(-1, -1)`` (squared norm 2) has squared part ``along2`` along ``u``: reached up to 2e-12, not beyond."""
    delta = np.sqrt(2 * along2)  # u ~ (1 + delta, -1) / norm: (u . (-1, -1))^2 = delta^2 / norm^2 ~ delta^2 / 2
    u = np.array([1 + delta, -1.0])
    u /= np.linalg.norm(u)
    v = np.array([-u[1], u[0]])
    _with_information(monkeypatch, 2.0 * np.outer(v, v))
    n = 5.0
    got = ident._pseudo_variance(np.ones((3, 2)) / 2, np.array([n, 0.0]), np.ones(3) / 3)
    assert np.all(np.isnan(got[:2]))
    c = np.array([-1.0, -1.0])
    assert float((u @ c) ** 2) == pytest.approx(along2, rel=1e-6)
    if reached:
        assert got[2] == pytest.approx((v @ c) ** 2 / 2.0 / n, rel=1e-9)
    else:
        assert np.isnan(got[2])


def test_an_unseen_answer_nobody_gives_adds_no_information():
    """Answer 2 comes only from input 2, whose fitted share is 0, and is not seen: its probability 0 must not
    enter the information (0/0); the seen answers identify all three shares."""
    m = np.array([[0.8, 0.2, 0.0], [0.2, 0.8, 0.0], [0.0, 0.5, 0.5]])
    counts, pi = np.array([5.0, 5.0, 0.0]), np.array([0.5, 0.5, 0.0])
    assert ident._identified_by(m, counts, pi)


def test_pseudo_variance_of_a_zero_information_reaches_nothing(monkeypatch):
    _with_information(monkeypatch, np.zeros((2, 2)))
    assert np.all(np.isnan(ident._pseudo_variance(np.ones((3, 2)) / 2, np.array([5.0, 5.0]), np.ones(3) / 3)))


@pytest.mark.parametrize("diag, identified", [([0.5, 0.4], True), ([1.0, 1e-12], False), ([1e-3, 2e-15], True),
                                              ([1e-3, 5e-16], False), ([0.0, 0.0], False), ([1e4, 1e-10], False)])
def test_identified_by_compares_the_smallest_eigenvalue_with_1e12_of_the_largest(monkeypatch, diag, identified):
    _with_information(monkeypatch, np.diag(diag))  # so many answers that no standard error exceeds 1
    assert ident._identified_by(np.ones((3, 2)) / 2, np.array([5e16, 5e16]), np.ones(3) / 3) is identified


@pytest.mark.parametrize("n, identified", [(1e4, True), (9.9e3, False)])
def test_identified_by_refuses_a_standard_error_above_the_shares_range(monkeypatch, n, identified):
    """Two inputs: the tangent information is 1 x 1, so the eigenvalue ratio cannot fail; the variance of the
    share, 1 / (n I), must not exceed 1 (its range [0, 1]). Here I = 1e-4 per answer: n = 1e4 gives exactly 1."""
    _with_information(monkeypatch, np.array([[1e-4]]))
    assert ident._identified_by(np.ones((2, 2)) / 2, np.array([n / 2, n / 2]), np.ones(2) / 2) is identified
    se = np.array([1.0, np.nextafter(1.0, 2.0), np.nan, np.inf, 0.3])
    assert ident.weakly_identified(se).tolist() == [False, True, True, True, False]


def test_identified_by_on_small_designs():
    one_answer = np.array([[1.0], [1.0]])
    assert not ident._identified_by(one_answer, np.array([10.0]), np.array([0.5, 0.5]))
    twins = np.array([[0.7, 0.3], [0.7, 0.3]])
    assert not ident._identified_by(twins, np.array([7.0, 3.0]), np.array([0.5, 0.5]))
    assert ident._identified_by(np.array([[0.3, 0.7]]), np.array([3.0, 7.0]), np.array([1.0]))
    weak = np.array([[0.55, 0.45], [0.45, 0.55]])  # Warner at p = 0.55: information 0.04 per answer
    assert ident._identified_by(weak, np.array([50.0, 50.0]), np.array([0.5, 0.5]))


def test_indistinguishable_inputs_against_the_column_space():
    """Input x can be told apart exactly when e_x lies in the span of the mechanism's columns (the null space
    of M' is orthogonal to it): checked with ranks on 200 random matrices, some with twin or mixed rows."""
    rng = np.random.default_rng(5)
    seen = set()
    for _ in range(200):
        k, answers = int(rng.integers(2, 6)), int(rng.integers(1, 6))
        m = rng.dirichlet(np.ones(answers), size=k)
        if rng.random() < 0.4 and k > 2:
            m[1] = m[0]
        if rng.random() < 0.3 and k > 3:
            m[3] = 0.5 * m[0] + 0.5 * m[2]
        rank = np.linalg.matrix_rank(m)
        expected = tuple(x for x in range(k)
                         if np.linalg.matrix_rank(np.column_stack([m, np.eye(k)[x]])) > rank)
        assert ident.indistinguishable_inputs(m) == expected
        seen.add(len(expected))
    assert {0, 2}.issubset(seen)
    assert ident.indistinguishable_inputs([[0.7, 0.3], [0.3, 0.7]]) == ()
    assert ident.indistinguishable_inputs([[1, 0], [1, 0]]) == (0, 1)  # a list of integers is a matrix too
    # rows 1e-12 apart are twins at the default tolerance 1e-9 (singular values below 1e-9 of the largest)
    assert ident.indistinguishable_inputs([[0.7, 0.3], [0.7 + 1e-12, 0.3 - 1e-12]]) == (0, 1)
    assert ident.indistinguishable_inputs([[0.7, 0.3], [0.7 + 1e-12, 0.3 - 1e-12]], tol=1e-14) == ()


def test_unidentified_intervals_keep_wald_intervals_for_reached_shares():
    """a and b are twins, c is identified: c's interval is its Wald interval clipped to [0, 1]; a's and b's
    cover their identified intervals; the endpoints of every interval lie in [0, 1]."""
    r_ab, r_c = np.array([0.7, 0.2, 0.1]), np.array([0.1, 0.2, 0.7])
    m = np.vstack([r_ab, r_ab, r_c])
    for counts, level in (([400, 200, 400], 0.95), ([0, 1, 99], 0.9), ([99, 1, 0], 0.99)):
        c = np.array(counts, dtype=float)
        pi, _, _ = mle_newton(m, c)
        low, high, se, ci_low, ci_high = ident.unidentified_intervals(m, c, pi, level)
        z = NormalDist().inv_cdf(0.5 + level / 2)
        assert se[2] == pytest.approx(np.sqrt(_merged_variance(r_ab, r_c, c)), rel=1e-6)
        assert ci_low[2] == pytest.approx(max(0.0, pi[2] - z * se[2]), abs=1e-9)
        assert ci_high[2] == pytest.approx(min(1.0, pi[2] + z * se[2]), abs=1e-9)
        assert np.all(np.isnan(se[:2]))
        assert np.all(ci_low <= low + 1e-12) and np.all(ci_high >= high - 1e-12)
        assert np.all((ci_low >= 0) & (ci_high <= 1))


# ---------------------------------------------------------------------------- two inputs barely told apart
def _two(d: float) -> Mechanism:
    return Mechanism(np.array([[0.5, 0.5], [0.5 + d, 0.5 - d]]), inputs=["yes", "no"], frame=["yes", "no"],
                     focal=[1, 2])


def test_two_inputs_whose_rows_differ_by_5e8_are_not_identified():
    """Today's code: status converged with a standard error of 316,354 on a share (the ratio test of a 1 x 1
    information cannot fail)."""
    from designer.estimation.shares import estimate_sldp

    for counts in (np.array([520.0, 480.0]), np.array([500.0, 500.0]), np.array([480.0, 520.0])):
        est = estimate_sldp(_two(5e-8), counts)
        assert est.status == "not_identified"
        assert np.all(np.isnan(est.stderr))
        assert any("'yes', 'no'" in w and "[0, 1]" in w for w in est.warnings)
        assert np.all(est.ci_low <= est.estimate) and np.all(est.estimate <= est.ci_high)


@pytest.mark.parametrize("factor, identified", [(0.99, True), (1.01, False)])
def test_a_standard_error_just_above_the_shares_range_is_not_identified(factor, identified):
    """Warner's design with truthful probability 1/2 + d: the MLE's standard error at an interior estimate is
    ``sqrt(f (1 - f) / n) / (2d)`` (the inversion estimator's). ``d`` is chosen so that it is 0.99 or 1.01."""
    from designer.estimation.shares import estimate_sldp

    n, f = 10_000, 0.5
    d = np.sqrt(f * (1 - f) / n) / 2 / factor
    mech = Mechanism(np.array([[0.5 + d, 0.5 - d], [0.5 - d, 0.5 + d]]), inputs=["yes", "no"],
                     frame=["yes", "no"], focal=[1, 2])
    est = estimate_sldp(mech, np.array([n * f, n * (1 - f)]))
    assert est.estimate[0] == pytest.approx(0.5, abs=1e-9)
    if identified:
        assert est.status == "converged" and est.stderr[0] == pytest.approx(factor, rel=1e-9)
    else:
        assert est.status == "not_identified" and np.all(np.isnan(est.stderr))


@pytest.mark.parametrize("fmt", ["table", "json", "csv"])
def test_the_cli_says_not_identified_for_rows_5e8_apart(tmp_path, capsys, fmt):
    from designer.cli import main

    path, data = tmp_path / "m.csv", tmp_path / "r.csv"
    _two(5e-8).to_csv(path)
    data.write_text("response\n" + "{yes}\n" * 520 + "{no}\n" * 480)
    code = main(["estimate", str(data), "--mechanism", str(path), "--format", fmt])
    out = capsys.readouterr().out
    assert code == 0 and "not" in out and "converged" not in out.split("status")[1][:30]
    assert "316354" not in out and "213912" not in out
