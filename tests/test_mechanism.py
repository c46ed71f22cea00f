import json
import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings

import designer as d
from designer import InvalidMechanismError, Mechanism

from .conftest import mass_matrices

Q = [[0, 0.6, 0.2, 0.2], [0, 0.2, 0.6, 0.2]]


def test_dense_and_sparse_forms_agree():
    dense = Mechanism(Q, inputs=["yes", "no"], frame=["yes", "no"])
    sparse = Mechanism([[0.6, 0.2, 0.2], [0.2, 0.6, 0.2]], inputs=["yes", "no"], frame=["yes", "no"],
                       focal=[1, 2, 3])
    assert dense.allclose(sparse)
    np.testing.assert_array_equal(dense.mass, np.array(Q))
    assert dense.focal_sets == [("yes",), ("no",), ("yes", "no")]
    assert dense.columns == ["{yes}", "{no}", "{yes,no}"]
    assert not dense.is_bayesian
    assert dense.row("yes") == {("yes",): 0.6, ("no",): 0.2, ("yes", "no"): 0.2}


def test_zero_columns_are_dropped_and_sets_sorted():
    mech = Mechanism([[0.5, 0.5, 0.0]], focal=[3, 1, 2], frame=["a", "b"])
    assert list(mech.focal) == [1, 3]
    assert mech.is_bayesian is False


def test_arrays_are_read_only():
    mech = d.Q_WRR(1.0)
    with pytest.raises(ValueError):
        mech.matrix[0, 0] = 1.0


@pytest.mark.parametrize(
    "kwargs,match",
    [
        (dict(mass=[[0, 0.5, 0.6, 0]]), "sum to 1"),
        (dict(mass=[[0, -0.1, 1.1, 0]]), "negative"),
        (dict(mass=[[0.1, 0.4, 0.5, 0]]), "empty set"),
        (dict(mass=[[0, np.nan, 0.5, 0.5]]), "finite"),
        (dict(mass=[[0, np.inf, 0.5, 0.5]]), "finite"),
        (dict(mass=[[0, 0.5, 0.5]]), "2\\*\\*l columns"),
        (dict(mass=[0, 0.5, 0.5, 0]), "2-D"),
        (dict(mass=[[0, 0.5, 0.5, 0]] * 2, inputs=["a", "a"]), "duplicate label 'a'"),
        (dict(mass=[[0, 0.5, 0.5, 0]], inputs=["a", "b"]), "2 input labels for 1 rows"),
        (dict(mass=[[0, 0.5, 0.5, 0]], frame=["a", "b", "c"]), "frame of 2 elements"),
        (dict(mass=[[0, 0.5, 0.5, 0]], frame=["a", "a"]), "duplicate label"),
        (dict(mass=[[0, 0.5, 0.5, 0]], frame=["a", "b,c"]), "may not contain"),
        (dict(mass=[[0.5, 0.5]], focal=[1, 1]), "appears twice"),
        (dict(mass=[[0.5, 0.5]], focal=[1, 0]), "positive integers"),
        (dict(mass=[[0.5, 0.5]], focal=[1, 4], frame=["a", "b"]), "not a subset"),
        (dict(mass=[["a", "b"]], focal=[1, 2]), "numeric"),
    ],
)
def test_validation_errors(kwargs, match):
    mass = kwargs.pop("mass")
    with pytest.raises(InvalidMechanismError, match=match):
        Mechanism(mass, **kwargs)


def test_row_sum_tolerance_is_1e_9():
    Mechanism([[0, 0.5, 0.5 + 5e-10, 0]])
    with pytest.raises(InvalidMechanismError, match="sums to"):
        Mechanism([[0, 0.5, 0.5 + 5e-9, 0]])


@settings(max_examples=40, deadline=None)
@given(mass_matrices(k_max=4, l_max=5))
def test_csv_json_and_frame_round_trips(tmp_path_factory, m):
    mech = Mechanism(m)
    folder = tmp_path_factory.mktemp("io")
    def as_sets(m):
        return {x: {frozenset(s): v for s, v in m.row(x).items()} for x in m.inputs}

    mech.write(folder / "m.json")
    back = Mechanism.read(folder / "m.json")
    assert back.frame == mech.frame and back.inputs == mech.inputs
    np.testing.assert_array_equal(back.matrix, mech.matrix)  # exact float round trip
    # A CSV names the sets, not the frame order (nor labels no focal set uses): same masses by set.
    mech.write(folder / "m.csv")
    assert as_sets(Mechanism.read(folder / "m.csv")) == as_sets(mech)
    again = Mechanism.from_frame(mech.to_frame(), frame=mech.frame)
    assert again.allclose(mech, atol=0)


def test_to_frame_layout():
    df = d.Q_2x3(0.6, 0.2).to_frame()
    assert list(df.columns) == ["{yes}", "{no}", "{yes,no}"]
    assert list(df.index) == ["yes", "no"] and df.index.name == "input"
    # input as a column is accepted too
    back = Mechanism.from_frame(df.reset_index())
    assert back.allclose(d.Q_2x3(0.6, 0.2))


def test_hand_written_csv(tmp_path):
    p = tmp_path / "q.csv"
    p.write_text("input, {yes}, {no}, {no, yes}\nyes, 3/5, 1/5, 0.2\nno,0.2,0.6,1/5\n")
    mech = Mechanism.read(p)
    assert mech.frame == ("yes", "no")
    assert mech.allclose(d.Q_2x3(0.6, 0.2), atol=1e-15)


@pytest.mark.parametrize(
    "text,match",
    [
        ("", "empty"),
        ("input,{yes},{no}\n", "no rows"),
        ("x,{yes},{no}\nyes,1,0\n", "first column must be 'input'"),
        ("input,{yes},{no}\nyes,1\n", "row 2 has 2 fields"),
        ("input,{yes},{no}\nyes,abc,0\n", "'abc' is not a number"),
        ("input,{yes},{no}\nyes,,1\n", "empty cell"),
        ("input,{yes},{no}\nyes,0.5,0.6\nno,0.5,0.5\n", "sums to"),
        ("input,{yes},yes\nyes,0.5,0.5\n", "not a focal set"),
        ("input,{yes},{yes}\nyes,0.5,0.5\n", "two columns"),
        ("input,{},{yes}\nyes,0.5,0.5\n", "empty set"),
        ("input,{yes},{no}\nyes,0.5,0.5\nyes,0.5,0.5\n", "duplicate label 'yes'"),
        ("input,{yes},{no}\nyes,nan,1\n", "finite"),
        ("input,{yes},{no}\nyes,-0.5,1.5\n", "negative"),
    ],
)
def test_bad_csv(tmp_path, text, match):
    p = tmp_path / "bad.csv"
    p.write_text(text)
    with pytest.raises(InvalidMechanismError, match=match) as info:
        Mechanism.read(p)
    assert str(p) in str(info.value)


def test_bad_files(tmp_path):
    with pytest.raises(InvalidMechanismError, match="no such file"):
        Mechanism.read(tmp_path / "missing.csv")
    p = tmp_path / "latin1.csv"
    p.write_bytes(b"input,{oui},{non}\nnon,0.5,0.5\n" + b"\xe9\n")
    with pytest.raises(InvalidMechanismError, match="not UTF-8"):
        Mechanism.read(p)
    p = tmp_path / "m.json"
    p.write_text("{not json")
    with pytest.raises(InvalidMechanismError, match="not valid JSON"):
        Mechanism.read(p)
    p.write_text(json.dumps({"inputs": ["a"], "matrix": [[1.0]]}))
    with pytest.raises(InvalidMechanismError, match="focal_sets"):
        Mechanism.read(p)


def test_json_records_layout(tmp_path):
    p = tmp_path / "m.json"
    p.write_text(json.dumps([{"input": "yes", "{yes}": 0.75, "{no}": 0.25},
                             {"input": "no", "{yes}": 0.25, "{no}": 0.75}]))
    assert Mechanism.read(p).allclose(d.Q_WRR(math.log(3)))


def test_atomic_write_refuses_to_overwrite_when_asked(tmp_path):
    p = tmp_path / "m.csv"
    d.Q_WRR(1.0).to_csv(p)
    with pytest.raises(FileExistsError):
        d.Q_WRR(2.0).to_csv(p, overwrite=False)
    assert Mechanism.read(p).allclose(d.Q_WRR(1.0))
    assert sorted(x.name for x in tmp_path.iterdir()) == ["m.csv"]  # no temporary left behind


def test_from_dict():
    mech = Mechanism.from_dict({"yes": {("yes",): 0.6, "no": 0.2, "{yes,no}": 0.2},
                                "no": {"yes": 0.2, ("no",): 0.6, ("no", "yes"): 0.2}})
    assert mech.allclose(d.Q_2x3(0.6, 0.2))
    with pytest.raises(InvalidMechanismError, match="unknown label"):
        Mechanism.from_dict({"a": {"z": 1.0}}, frame=["a"])


def test_set_functions_of_a_mechanism():
    mech = d.Q_2x3(0.6, 0.2)
    np.testing.assert_allclose(mech.bel(), [[0, 0.6, 0.2, 1], [0, 0.2, 0.6, 1]])
    np.testing.assert_allclose(mech.pl(), [[0, 0.8, 0.4, 1], [0, 0.4, 0.8, 1]])
    np.testing.assert_allclose(mech.commonality(), [[1, 0.8, 0.4, 0.2], [1, 0.4, 0.8, 0.2]])


def test_pl_structural_zeros_are_exact():
    # Row 0 only uses {y0}; pl_0 of sets avoiding y0 must be exactly 0, not rounding noise.
    m = np.zeros((2, 8))
    m[0, 1] = 1.0
    m[1, [1, 2, 4]] = [0.1, 0.3, 0.6]
    pl = Mechanism(m).pl()
    assert pl[0, 2] == 0.0 and pl[0, 4] == 0.0 and pl[0, 6] == 0.0


def test_constructors():
    e = math.exp(1.0)
    np.testing.assert_allclose(d.Q_WRR(1.0).matrix, [[e / (e + 1), 1 / (e + 1)], [1 / (e + 1), e / (e + 1)]])
    g = d.Q_GWRR(1.0, 0.8)
    np.testing.assert_allclose(g.matrix[0], [0.8 * e / (e + 1), 0.8 / (e + 1), 0.2])
    lam = d.Q_lambda(0.6, 0.2, 1.0)
    np.testing.assert_allclose(lam.matrix, [[0.8, 0.2], [0.2, 0.8]])
    assert d.eps_shafer(lam) == pytest.approx(d.eps_walley(d.Q_2x3(0.6, 0.2)))  # lambda = 1 is the Walley loss
    krr = d.Q_kRR(2.0, ["a", "b", "c"])
    assert krr.inputs == krr.frame == ("a", "b", "c")
    assert krr.is_bayesian
    for bad in (lambda: d.Q_2x3(0.7, 0.5), lambda: d.Q_GWRR(1.0, 0.0), lambda: d.Q_kRR(1.0, 1),
                lambda: d.Q_lambda(0.6, 0.2, 1.5), lambda: d.Q_WRR(-1.0)):
        with pytest.raises(ValueError):
            bad()


def test_dense_limit_is_a_clear_error():
    big = d.power(d.Q_WRR(1.0), 5)  # frame of 32 elements, 32 focal sets
    assert big.l == 32
    with pytest.raises(InvalidMechanismError, match="too many"):
        big.bel()
    assert d.eps_shafer(big) == pytest.approx(5.0)  # works on the focal sets


def test_frame_from_pandas_keeps_string_labels():
    df = pd.DataFrame({"input": ["1", "2"], "{1}": [0.75, 0.25], "{2}": [0.25, 0.75]})
    mech = Mechanism.from_frame(df)
    assert mech.inputs == ("1", "2") and mech.frame == ("1", "2")
