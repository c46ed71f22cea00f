"""A formula of plain terms is built without patsy (designer/regression/plain_terms.py): the same column names and
the same matrix as patsy's, checked on random data and formulas, and the same regression (issue 51, item 8)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import patsy
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from designer.exceptions import RegressionError
from designer.regression import design as design_module
from designer.regression.plain_terms import PlainDesign, plain_design

ROOT = Path(__file__).resolve().parents[1]
TERMS = ["age", "score", "region", "smoker", "C(grade)", "C(region)", "C(smoker)", 'Q("cov.x")', "grade"]


def _patsy(rhs: str, data: pd.DataFrame) -> tuple[list[str], np.ndarray]:
    matrix = patsy.dmatrix(rhs, data, NA_action="raise", eval_env=patsy.EvalEnvironment([{"np": np}]))
    return list(matrix.design_info.column_names), np.asarray(matrix, dtype=np.float64)


@st.composite
def frames(draw: st.DrawFn) -> pd.DataFrame:
    n = draw(st.integers(1, 12))
    words = draw(st.lists(st.sampled_from(["north", "south", "east", "West", "a b", "ü"]), min_size=1, max_size=4,
                          unique=True))
    return pd.DataFrame({
        "age": draw(st.lists(st.integers(-5, 90), min_size=n, max_size=n)),
        "score": draw(st.lists(st.floats(-1e6, 1e6, allow_nan=False), min_size=n, max_size=n)),
        "region": draw(st.lists(st.sampled_from(words), min_size=n, max_size=n)),
        "smoker": draw(st.lists(st.booleans(), min_size=n, max_size=n)),
        "grade": draw(st.lists(st.integers(1, 4), min_size=n, max_size=n)),
        "cov.x": draw(st.lists(st.integers(0, 3), min_size=n, max_size=n)),
    })


@st.composite
def formulas(draw: st.DrawFn) -> str:
    terms = draw(st.lists(st.sampled_from(TERMS), min_size=1, max_size=5))
    head = draw(st.sampled_from(["", "1 + ", "0 + "]))
    tail = draw(st.sampled_from(["", " + 1", " - 1", " + 0", "-1"]))
    return head + draw(st.sampled_from([" + ", "+"])).join(terms) + tail


@settings(max_examples=300, deadline=None)
@given(data=frames(), rhs=formulas())
def test_the_matrix_is_patsys(data, rhs):
    plain = plain_design(rhs, data)
    assert isinstance(plain, PlainDesign), rhs
    names, matrix = _patsy(rhs, data)
    assert plain.column_names == names, rhs
    np.testing.assert_array_equal(plain.build(data), matrix)


@settings(max_examples=100, deadline=None)
@given(data=frames(), rhs=formulas())
def test_new_data_is_built_with_the_fitted_levels(data, rhs):
    """A prediction's rows: patsy's design of the fitted data applied to other rows with the same levels."""
    plain = plain_design(rhs, data)
    assert plain is not None
    info = patsy.dmatrix(rhs, data, NA_action="raise", eval_env=patsy.EvalEnvironment([{"np": np}])).design_info
    part = data.iloc[::-1].iloc[: max(1, len(data) // 2)]
    expected = np.asarray(patsy.build_design_matrices([info], part, NA_action="raise")[0], dtype=np.float64)
    np.testing.assert_array_equal(plain.build(part), expected)


@pytest.mark.parametrize("rhs", ["age:region", "age*region", "I(age**2)", "np.log(score + 1e7)", "age - score",
                                 "C(score)", "region - 0", "center(age)", "age +", "", "unknown", "age + (region)"])
def test_anything_else_is_left_to_patsy(rhs):
    data = pd.DataFrame({"age": [1, 2, 3], "score": [0.5, 1.5, 2.5], "region": ["a", "b", "a"]})
    assert plain_design(rhs, data) is None
    if rhs and rhs not in ("age +", "unknown", "region - 0"):
        info = design_module.design_info(rhs, data)
        assert not isinstance(info, PlainDesign)
        names, matrix = _patsy(rhs, data)
        assert list(info.column_names) == names
        np.testing.assert_array_equal(design_module.build_rows(info, data), matrix)


def test_a_level_the_fit_never_saw_is_one_error():
    data = pd.DataFrame({"region": ["a", "b", "a"]})
    plain = plain_design("region", data)
    assert plain is not None
    with pytest.raises(RegressionError, match=r"region has the value 'c', which is none of the levels .*\['a', 'b'\]"):
        plain.build(pd.DataFrame({"region": ["a", "c"]}))


@pytest.mark.parametrize("formula", ["response ~ age + religious", "response ~ age + C(religious)",
                                     "response ~ C(religious) - 1", "response ~ 1"])
def test_the_regression_is_the_same_as_through_patsy(formula, monkeypatch):
    import designer as d

    plain = d.regress(formula, ROOT / "examples/regress.csv", ROOT / "examples/mechanisms/gwrr.csv", reference="no")
    monkeypatch.setattr("designer.regression.plain_terms.plain_design", lambda rhs, data: None)
    through_patsy = d.regress(formula, ROOT / "examples/regress.csv", ROOT / "examples/mechanisms/gwrr.csv",
                              reference="no")
    assert plain.to_dict() == through_patsy.to_dict()


def test_regress_of_a_plain_formula_imports_no_patsy(tmp_path):
    code = ("import sys\nfrom designer.cli import main\nrc = main(['regress', 'regress', '--mechanism', 'gwrr', "
            "'--formula', 'response ~ age + C(religious)', '--reference', 'no'])\nprint(rc, 'patsy' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, check=True)
    assert out.stdout.strip().splitlines()[-1] == "0 False"
