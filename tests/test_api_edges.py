"""Wrong values through the Python API: a clear exception naming the argument, never a hang or a wrong answer."""

import math

import numpy as np
import pytest

import designer as d
from designer.estimation import hypothesis_tests as ht
from designer.optimal import DesignProblem


def test_power_beyond_memory_is_refused_at_once():
    with pytest.raises(d.InvalidMechanismError, match="focal sets"):
        d.power(d.Q_2x3(0.6, 0.2), 40)


def test_constructors_at_budgets_a_float_cannot_represent():
    assert d.Q_WRR(700).matrix[0, 1] > 0
    with pytest.raises(ValueError, match="underflows"):
        d.Q_WRR(1000)


def test_bounds_refuse_negative_budgets():
    with pytest.raises(ValueError, match="eps"):
        ht.bound("pessimistic", -1.0, [0.1])
    assert np.all(ht.bound("pessimistic", math.inf, [0.1, 0.5]) == 0.0)


@pytest.mark.parametrize("focal", [[1.5], [True], ["a"]])
def test_focal_sets_must_be_integer_masks(focal):
    with pytest.raises(d.InvalidProblemError, match="focal_sets"):
        DesignProblem(objective="truthful", inputs=("yes", "no"), epsilon=1.0, focal_sets=focal)


def test_estimate_refuses_a_level_outside_zero_one():
    from designer.estimation.shares import estimate_sldp

    with pytest.raises(ValueError, match="level"):
        estimate_sldp(d.Q_2x3(0.6, 0.2), [10, 20, 5], level=1.5)


def test_nothing_identified_means_whole_intervals_and_no_stderr():
    from designer.estimation.shares import estimate_sldp

    est = estimate_sldp(d.Q_2x3(0.6, 0.2), [0, 0, 50])  # every answer "don't know"
    assert est.status == "not_identified" and np.all(np.isnan(est.stderr))
    assert np.all(est.ci_low == 0) and np.all(est.ci_high == 1)
    assert np.all(est.identified_low == 0) and np.all(est.identified_high == 1)


def test_json_labels_must_be_labels():
    obj = {"inputs": ["a", "b"], "frame": ["a", "b"], "focal_sets": [["a,b"], ["a"]], "matrix": [[0.5, 0.5]] * 2}
    with pytest.raises(d.InvalidMechanismError, match="brace or comma"):
        d.Mechanism.from_json_obj(obj)
    ints = {"inputs": ["x", "y"], "frame": [1, 2], "focal_sets": [[1], [2]], "matrix": [[0.75, 0.25], [0.25, 0.75]]}
    assert d.Mechanism.from_json_obj(ints).frame == ("1", "2")


def test_work_beyond_memory_is_refused_before_it_starts():
    from designer.optimal import design

    labels = tuple(f"a{i}" for i in range(20_000))
    with pytest.raises(d.InvalidProblemError, match="sldp"):
        design(DesignProblem(objective="truthful", inputs=labels, epsilon=1.0, semantics="wldp"))
    wide = d.Mechanism(np.full((8, 3), 1 / 3), focal=[1, 2, 1 << 23])
    with pytest.raises(d.InvalidMechanismError, match="smaller frame"):
        wide.bel()


def test_problems_compare_by_value():
    """Two problems that state the same design are equal and hash alike, whatever their names; one number
    apart, they differ (the prior, epsilon, a structure bound)."""
    from designer.optimal import DesignProblem

    base = {"inputs": ("yes", "no"), "epsilon": 1.0}
    a, b = DesignProblem(**base, name="first"), DesignProblem(**base, source="x.toml")
    assert a == b and hash(a) == hash(b) and len({a, b}) == 1
    assert a != DesignProblem(**base, prior=[0.3, 0.7])
    assert a != DesignProblem(objective="truthful", inputs=("yes", "no"), epsilon=1.0 + 1e-12)
    assert a != DesignProblem(**base, dont_know_max=0.2)
    assert a != "not a problem"
