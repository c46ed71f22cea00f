"""Many-level categoricals: the sparse design matrix gives the dense one's fit (estimates, standard errors,
status, Firth's penalty, prevalence), finds the same dependent column, and is chosen only for large designs.
Speed and memory at 1,000 levels x 200,000 respondents are measured in benchmarks/regression.py."""

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

import designer.regression.design as design
from designer import Q_GWRR, Mechanism
from designer.estimation.sampling import randomize
from designer.exceptions import RegressionError
from designer.regression import regress

THREE = Mechanism.from_dict({
    "a": {("a",): 0.5, ("b",): 0.1, ("c",): 0.1, ("a", "b"): 0.1, ("a", "b", "c"): 0.2},
    "b": {("a",): 0.1, ("b",): 0.5, ("c",): 0.1, ("a", "b"): 0.1, ("a", "b", "c"): 0.2},
    "c": {("a",): 0.1, ("b",): 0.1, ("c",): 0.5, ("a", "b"): 0.1, ("a", "b", "c"): 0.2},
}, frame=["a", "b", "c"])


def _data(mech: Mechanism, n: int, levels: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    region = rng.integers(0, levels, n)
    x = rng.normal(size=n)
    k = mech.k
    eta = np.zeros((n, k))
    eta[:, :-1] = 0.3 * x[:, None] + rng.normal(0, 0.5, (levels, k - 1))[region]
    p = np.exp(eta) / np.exp(eta).sum(axis=1, keepdims=True)
    truth = (p.cumsum(axis=1) > rng.random((n, 1))).argmax(axis=1)
    answers = randomize(mech, [mech.inputs[t] for t in truth], rng=rng)
    return pd.DataFrame({"response": np.asarray(mech.columns, dtype=object)[answers], "x": x,
                         "region": [f"r{r:03d}" for r in region]})


def _both(monkeypatch, *args, **kwargs):
    monkeypatch.setattr(design, "SPARSE_CELLS", 10**18)
    dense = regress(*args, **kwargs)
    monkeypatch.setattr(design, "SPARSE_CELLS", 0)
    sparse = regress(*args, **kwargs)
    return dense, sparse


@pytest.mark.parametrize("mech", [Q_GWRR(1.0, 0.8), THREE], ids=["binary", "three"])
def test_sparse_and_dense_designs_give_the_same_fit(monkeypatch, mech):
    data = _data(mech, 20000, 20, seed=1)
    dense, sparse = _both(monkeypatch, "response ~ x + C(region)", data, mech)
    assert dense.statsmodels is not None and sparse.statsmodels is None
    assert sparse.status == dense.status == "converged"
    np.testing.assert_allclose(sparse.params, dense.params, rtol=0, atol=1e-8)
    np.testing.assert_allclose(sparse.coefficients["stderr"], dense.coefficients["stderr"], rtol=1e-8)
    pd.testing.assert_frame_equal(sparse.prevalence(data, by="region"), dense.prevalence(data, by="region"),
                                  rtol=1e-7, atol=1e-10)


def test_firths_penalty_through_a_sparse_design(monkeypatch):
    mech = Q_GWRR(1.0, 0.8)
    data = _data(mech, 3000, 30, seed=2)
    dense, sparse = _both(monkeypatch, "response ~ x + C(region)", data, mech, penalty="firth")
    assert sparse.status == dense.status
    np.testing.assert_allclose(sparse.params, dense.params, rtol=0, atol=1e-7)


def test_a_dependent_column_is_named_by_both_paths(monkeypatch):
    data = _data(Q_GWRR(1.0, 0.8), 2000, 20, seed=3)
    data["twice"] = 2 * data["x"]
    for cells in (10**18, 0):
        monkeypatch.setattr(design, "SPARSE_CELLS", cells)
        with pytest.raises(RegressionError, match="'twice' is a linear combination"):
            regress("response ~ x + C(region) + twice", data, Q_GWRR(1.0, 0.8))


def test_the_sparse_path_is_taken_only_for_large_mostly_zero_designs(monkeypatch):
    import patsy

    data = _data(Q_GWRR(1.0, 0.8), 500, 50, seed=4)
    info = design.design_info("x + C(region)", data, patsy.EvalEnvironment([{"np": np}]))
    assert not sp.issparse(design.build_rows(info, data))  # 500 x 51 cells: small
    monkeypatch.setattr(design, "SPARSE_CELLS", 1000)
    assert sp.issparse(design.build_rows(info, data))  # large and 3 non-zeros in 51 a row
    dense_info = design.design_info("x + I(x**2) + I(x**3)", data, patsy.EvalEnvironment([{"np": np}]))
    assert not sp.issparse(design.build_rows(dense_info, data))  # large but dense: stays dense
    z = design.build_rows(info, data, sparse=True)
    np.testing.assert_array_equal(z.toarray(), design.build_rows(info, data, sparse=False))
    w = np.random.default_rng(0).random(len(data))
    np.testing.assert_allclose(design.weighted_gram(z, w), design.weighted_gram(z.toarray(), w), rtol=1e-12)
    np.testing.assert_allclose(design.column_norms(z), design.column_norms(z.toarray()), rtol=1e-12)
    gram = design.weighted_gram(z, w)
    np.testing.assert_allclose(design.leverages(z, gram), design.leverages(z.toarray(), gram), rtol=1e-9)
    assert list(design.constant_columns(z)) == list(design.constant_columns(z.toarray())) == [0]
