"""The fast paths of round 2's speed work against the plain computations they replace: the pl repair of
rarely said elements (exact fractions), the column-wise draw (the per-row draw, same answers), integer answer
counting (np.bincount), the FFT variance of circulant designs (the dense factorization), the column-wise
Shafer loss (the pairwise maximum), and a precise design stored within its budget (no repair)."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

import designer as d
import designer.estimation.sampling as sampling
import designer.estimation.shares as estimation
from designer.exceptions import InvalidMechanismError
from designer.optimal import DesignProblem, design
from designer.optimal.precise import cyclic_design
from designer.privacy import _max_ratio, _max_ratio_same
from designer.setfunctions import pl_from_mass


def _rare_rows(rng: np.random.Generator, k: int, l: int) -> np.ndarray:
    """Rows where some elements are said only through tiny masses (pl of 1e-10 .. 1e-300), or never."""
    n = 1 << l
    rows = np.zeros((k, n))
    for r in range(k):
        m = rng.random(n) * (rng.random(n) < 0.5)
        rare = rng.choice(l, size=int(rng.integers(0, l + 1)), replace=False)
        for e in rare:
            m[(np.arange(n) >> e) & 1 == 1] = 0.0
        for e in rare:
            if rng.random() < 0.7:
                m[1 << e] = 10.0 ** -float(rng.integers(10, 300))
        m[0] = 0.0
        if m.sum() == 0:
            m[n - 1] = 1.0
        rows[r] = m / m.sum()
    return rows


@pytest.mark.parametrize("seed", range(6))
def test_pl_of_rarely_said_elements_is_accurate_and_zeros_are_exact(seed: int) -> None:
    rng = np.random.default_rng(seed)
    l = int(rng.integers(3, 9))
    rows = _rare_rows(rng, int(rng.integers(1, 5)), l)
    pl = pl_from_mass(rows)
    worst = 0.0
    for r in range(rows.shape[0]):
        masses = [Fraction(float(v)) for v in rows[r]]
        for e in range(1 << l):
            exact = sum((masses[b] for b in range(1 << l) if b & e), Fraction(0))
            if exact == 0:
                assert pl[r, e] == 0.0
            else:
                worst = max(worst, abs(float((Fraction(float(pl[r, e])) - exact) / exact)))
    assert worst < 1e-12


def test_columnwise_draw_gives_the_answers_of_the_per_row_draw(monkeypatch: pytest.MonkeyPatch) -> None:
    mech = d.Q_kRR(1.0, ["a", "b", "c", "d"])
    truth = sampling.synthetic_answers(list(mech.inputs), [0.1, 0.2, 0.3, 0.4], 20_000, rng=3)
    from designer.guarantees import exact_table

    fast = sampling.randomize(mech, truth, rng=9)
    monkeypatch.setattr(exact_table, "FEW_COLUMNS", 0)
    slow = sampling.randomize(mech, truth, rng=9)
    assert np.array_equal(fast, slow)
    assert np.array_equal(estimation.response_counts(mech, fast), np.bincount(slow, minlength=len(mech.focal)))


def test_integer_answers_out_of_range_are_named() -> None:
    mech = d.Q_kRR(1.0, ["a", "b", "c"])
    with pytest.raises(InvalidMechanismError, match="answer 3: column index 5 out of range"):
        estimation.response_counts(mech, np.array([0, 1, 5]))


@pytest.mark.parametrize(("k", "size"), [(7, 2), (12, 5), (30, 8), (9, 1)])
def test_circulant_variance_by_fft_equals_the_dense_factorization(k: int, size: int,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    labels = [f"v{i}" for i in range(k)]
    mech = d.Mechanism(cyclic_design(k, size, 0.8), inputs=labels, frame=labels, focal=[1 << i for i in range(k)])
    assert estimation._circulant_spectrum(mech.matrix, np.full(k, 1 / k)) is not None
    fast = estimation.estimator_variance(mech, reduce="none")
    monkeypatch.setattr(estimation, "_circulant_spectrum", lambda *args: None)
    dense = estimation.estimator_variance(mech, reduce="none")
    np.testing.assert_allclose(fast, dense, rtol=1e-10)
    # a skewed prior is not the circulant case
    assert estimation._circulant_spectrum(mech.matrix, np.arange(1, k + 1) / (k * (k + 1) / 2)) is None


def test_singular_circulant_is_not_identified() -> None:
    high = (np.arange(4)[:, None] - np.arange(4)[None, :]) % 4 < 2  # k = 4, d = 2: singular
    m = np.where(high, np.e, 1.0)
    mech = d.Mechanism(m / m.sum(axis=1, keepdims=True), inputs=list("abcd"), frame=list("abcd"), focal=[1, 2, 4, 8])
    assert estimation.estimator_variance(mech) == np.inf


def test_columnwise_shafer_loss_is_the_pairwise_maximum() -> None:
    rng = np.random.default_rng(11)
    for _ in range(3000):
        v = rng.integers(0, 4, size=(int(rng.integers(2, 5)), int(rng.integers(1, 5)))).astype(float)
        if rng.random() < 0.3:
            v *= 1e-300
        assert _max_ratio_same(v) == _max_ratio(v, v)


def test_precise_design_is_stored_within_its_budget() -> None:
    k = 60
    result = design(DesignProblem(inputs=tuple(f"v{i}" for i in range(k)), epsilon=1.0, semantics="wldp",
                                  objective="chi2"))
    assert not result.certificate.repaired
    assert d.is_private(result.mechanism, 1.0, semantics="wldp", exact=True)
