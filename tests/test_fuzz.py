"""Fuzzing the readers (hypothesis): any text either parses into a valid object or raises the package's
own one-line error; never another exception, never a silently invalid object."""

from __future__ import annotations

import json
import math

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from designer import Mechanism
from designer.exceptions import DesignerError
from designer.optimal import DesignProblem, load_problem

FUZZ = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])

CELLS = st.one_of(
    st.sampled_from(["yes", "no", "{yes}", "{no}", "{yes,no}", "{}", "input", "0.5", "1", "0", "-0.1", "nan",
                     "inf", "1/2", "3/0", "", " ", "\"{yes,no}\"", "1e400", "0x10", "{yes;no}", "{{yes}}"]),
    st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=6),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
)


@st.composite
def csv_texts(draw):
    width = draw(st.integers(1, 5))
    rows = draw(st.lists(st.lists(CELLS, min_size=1, max_size=width + 1), min_size=0, max_size=5))
    return "\n".join(",".join(r) for r in rows) + draw(st.sampled_from(["", "\n", "\r\n"]))


def check_valid(mech: Mechanism) -> None:
    m = mech.matrix
    assert m.shape == (mech.k, len(mech.focal)) and mech.k >= 1
    assert np.all(np.isfinite(m)) and np.all(m >= 0)
    assert np.allclose(m.sum(axis=1), 1.0, atol=1e-6)
    assert len(set(mech.inputs)) == mech.k and len(set(mech.frame)) == mech.l


@FUZZ
@given(csv_texts())
def test_mechanism_csv_reader(text):
    try:
        mech = Mechanism.from_csv_text(text, source="fuzz.csv")
    except DesignerError as exc:
        assert "\n" not in str(exc).strip() and "fuzz.csv" in str(exc)
        return
    check_valid(mech)


@FUZZ
@given(st.binary(max_size=200))
def test_mechanism_file_reader_on_bytes(tmp_path_factory, data):
    path = tmp_path_factory.mktemp("fuzz") / "m.csv"
    path.write_bytes(data)
    try:
        mech = Mechanism.read(path)
    except DesignerError as exc:
        assert str(path) in str(exc)
        return
    check_valid(mech)


JSON_VALUES = st.recursive(
    st.one_of(st.none(), st.booleans(), st.floats(allow_nan=True), st.integers(-3, 3),
              st.sampled_from(["yes", "no", "x", ""])),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(
        st.sampled_from(["inputs", "frame", "focal_sets", "matrix", "other"]), children, max_size=4),
    max_leaves=20,
)


@FUZZ
@given(st.fixed_dictionaries({}, optional={
    "inputs": JSON_VALUES | st.just(["yes", "no"]),
    "frame": JSON_VALUES | st.just(["yes", "no"]),
    "focal_sets": JSON_VALUES | st.just([["yes"], ["no"]]),
    "matrix": JSON_VALUES | st.lists(st.lists(st.floats(-1, 2) | st.just(math.nan), min_size=2, max_size=2),
                                     min_size=2, max_size=2),
}))
def test_mechanism_json_reader(obj):
    text = json.dumps(obj)
    try:
        mech = Mechanism.from_json_obj(json.loads(text), source="fuzz.json")
    except DesignerError as exc:
        assert "fuzz.json" in str(exc)
        return
    check_valid(mech)


TOML_LINES = st.sampled_from([
    'inputs = ["yes", "no"]', 'inputs = ["a", "a"]', "inputs = []", 'frame = ["yes", "no"]', 'frame = ["y"]',
    "epsilon = 1.0", "epsilon = 0", "epsilon = -1", "epsilon = nan", "epsilon = inf", 'epsilon = "1"',
    "prior = [0.5, 0.5]", "prior = [1.5, -0.5]", "prior = [0.2]", 'semantics = "wldp"', 'semantics = "x"',
    'objective = "chi2"', 'objective = "gain"', 'objective = "nope"', "[structure]", "dont_know = 0.2",
    "dont_know = 2", "dont_know_max = 0.1", "lie_max = -1", "lie_max = 0.3", 'focal_sets = [["yes"], ["no"]]',
    'focal_sets = [["maybe"]]', "focal_sets = []", "[gain]", 'yes = { "{yes}" = 1.0 }', "[utility]",
    "yes = { yes = 1.0, no = 0.0 }", "unknown = 3", "name = 5", 'name = "x"', "= broken", "[structure",
])


@FUZZ
@given(st.lists(TOML_LINES, max_size=10))
def test_problem_reader(tmp_path_factory, lines):
    path = tmp_path_factory.mktemp("fuzz") / "fuzz.toml"
    path.write_text("\n".join(lines) + "\n")
    try:
        problem = load_problem(path)
    except DesignerError as exc:
        assert "fuzz.toml" in str(exc) and "\n" not in str(exc).strip()
        return
    assert isinstance(problem, DesignProblem)
    assert problem.epsilon > 0 and math.isfinite(problem.epsilon)
    assert np.isclose(problem.prior.sum(), 1.0) and np.all(problem.prior >= 0)
    assert len(set(problem.inputs)) == problem.k


VALID_CSV = [["input", "{yes}", "{no}", "\"{yes,no}\""], ["yes", "0.6", "0.2", "0.2"], ["no", "0.2", "0.6", "0.2"]]


@FUZZ
@given(st.integers(0, 2), st.integers(0, 3), CELLS)
def test_mechanism_csv_reader_on_one_changed_cell(row, col, cell):
    rows = [list(r) for r in VALID_CSV]
    rows[row][col] = cell
    text = "\n".join(",".join(r) for r in rows) + "\n"
    try:
        mech = Mechanism.from_csv_text(text, source="fuzz.csv")
    except DesignerError as exc:
        assert "fuzz.csv" in str(exc)
        return
    check_valid(mech)
