import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from designer import setfunctions as sf

from .conftest import brute_bel, brute_commonality, brute_pl, mass_matrices


@settings(max_examples=60, deadline=None)
@given(mass_matrices(k_max=3, l_max=6))
def test_transforms_match_direct_subset_sums(m):
    n = m.shape[1]
    bel, pl, q = sf.bel_from_mass(m), sf.pl_from_mass(m), sf.commonality_from_mass(m)
    for r in range(m.shape[0]):
        for E in range(n):
            assert bel[r, E] == pytest.approx(brute_bel(m[r], E), abs=1e-13)
            assert pl[r, E] == pytest.approx(brute_pl(m[r], E), abs=1e-13)
            assert q[r, E] == pytest.approx(brute_commonality(m[r], E), abs=1e-13)


@settings(max_examples=60, deadline=None)
@given(mass_matrices(k_max=4, l_max=6))
def test_moebius_round_trips(m):
    assert np.max(np.abs(sf.mass_from_bel(sf.bel_from_mass(m)) - m)) < 1e-12
    assert np.max(np.abs(sf.mass_from_pl(sf.pl_from_mass(m)) - m)) < 1e-12
    assert np.max(np.abs(sf.mass_from_commonality(sf.commonality_from_mass(m)) - m)) < 1e-12


@pytest.mark.parametrize("l", [0, 1, 3, 4, 5, 9])
def test_zeta_matches_inclusion_matrix_on_arbitrary_vectors(l):
    # Also general (signed, unnormalised) set functions, and the block path (l >= 4).
    rng = np.random.default_rng(l)
    n = 1 << l
    v = rng.normal(size=(2, n))
    sets = np.arange(n)
    inc = ((sets[:, None] & ~sets[None, :]) == 0).astype(float)  # inc[B, E] = B subset E
    np.testing.assert_allclose(sf.subset_zeta(v), v @ inc, atol=1e-12)
    np.testing.assert_allclose(sf.superset_zeta(v), v @ inc.T, atol=1e-12)
    np.testing.assert_allclose(sf.subset_zeta(sf.subset_zeta(v), inverse=True), v, atol=1e-12)
    np.testing.assert_allclose(sf.superset_zeta(sf.superset_zeta(v), inverse=True), v, atol=1e-12)


def test_one_dimensional_input_and_no_mutation():
    m = np.array([0, 0.5, 0.25, 0.25])
    before = m.copy()
    np.testing.assert_allclose(sf.bel_from_mass(m), [0, 0.5, 0.25, 1.0])
    np.testing.assert_allclose(sf.pl_from_mass(m), [0, 0.75, 0.5, 1.0])
    np.testing.assert_array_equal(m, before)


def test_exact_integer_transform():
    m = np.array([[0, 3, 2, 5]], dtype=object)
    assert list(sf.subset_zeta(m)[0]) == [0, 3, 2, 10]
    assert all(isinstance(v, int) for v in sf.subset_zeta(m)[0])


def test_bad_lengths_are_refused():
    with pytest.raises(ValueError, match="2\\*\\*l"):
        sf.bel_from_mass(np.ones(3))
    with pytest.raises(ValueError, match="scalar"):
        sf.bel_from_mass(1.0)


def test_masks_and_labels():
    frame = ["a", "b", "c"]
    assert sf.subset_mask(["c", "a"], frame) == 0b101
    assert sf.mask_labels(0b101, frame) == ("a", "c")
    assert list(sf.popcount([0, 1, 3, 7, 255])) == [0, 1, 2, 3, 8]
    with pytest.raises(ValueError, match="unknown label 'd'"):
        sf.subset_mask(["d"], frame)
    with pytest.raises(ValueError):
        sf.mask_labels(8, frame)


@given(st.integers(1, 20))
def test_frame_size(l):
    assert sf.frame_size(1 << l) == l
