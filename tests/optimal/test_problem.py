import math

import numpy as np
import pytest

from designer import InvalidProblemError
from designer.optimal import DesignProblem, load_problem


def write(tmp_path, text, name="p.toml"):
    p = tmp_path / name
    p.write_text(text)
    return p


def test_bundled_problems_load():
    import pathlib

    files = sorted(pathlib.Path("problems").glob("*.toml"))
    assert len(files) >= 5
    for f in files:
        problem = load_problem(f)
        assert problem.name and problem.epsilon > 0


def test_full_toml(tmp_path):
    p = write(tmp_path, '''
name = "t"
inputs = ["yes", "no"]
frame = ["yes", "no"]
prior = [0.25, 0.75]
epsilon = 2
semantics = "WLDP"
objective = "gain"
[structure]
dont_know_max = 0.3
lie_max = 0.4
focal_sets = [["yes"], ["no"], "{yes,no}"]
[gain]
yes = { "{yes}" = 1.0, "{yes,no}" = 0.5 }
no = { "{no}" = 1.0 }
''')
    pb = load_problem(p)
    assert pb.semantics == "wldp" and pb.epsilon == 2.0
    np.testing.assert_allclose(pb.prior, [0.25, 0.75])
    assert pb.focal_sets == (1, 2, 3)
    assert pb.gain[0, 3] == 0.5 and pb.gain[1, 2] == 1.0 and pb.gain[1, 1] == 0.0


@pytest.mark.parametrize(
    "text,match",
    [
        ('inputs = ["a", "b"]\nepsilon = 1\nepsilom = 2\n', "unknown key 'epsilom'"),
        ('inputs = ["a", "b"]\nepsilon = 1\n[structure]\ndontknow = 0.2\n', "did you mean 'structure.dont_know'"),
        ('inputs = ["a", "b"]\nepsilon = "1"\n', "key 'epsilon': expected a finite number > 0"),
        ('inputs = ["a", "b"]\nepsilon = 0\n', "key 'epsilon'"),
        ('inputs = ["a", "b"]\nepsilon = -1\n', "key 'epsilon'"),
        ('inputs = ["a", "b"]\nepsilon = nan\n', "key 'epsilon'"),
        ('inputs = ["a", "b"]\nepsilon = inf\n', "key 'epsilon'"),
        ('inputs = ["a", "b"]\nepsilon = 1\nprior = [0.5, 0.6]\n', "key 'prior': expected 2 non-negative numbers"),
        ('inputs = ["a", "b"]\nepsilon = 1\nprior = [1.0]\n', "key 'prior'"),
        ('inputs = ["a", "b"]\nepsilon = 1\nsemantics = "bayes"\n', "key 'semantics'"),
        ('inputs = ["a", "b"]\nepsilon = 1\nobjective = "fun"\n', "key 'objective'"),
        ('inputs = ["a", "b"]\nepsilon = 1\n[structure]\nfocal_sets = [["a", "z"]]\n', "not in the frame"),
        ('inputs = ["a", "b"]\nepsilon = 1\n[structure]\ndont_know = 1.5\n', "structure.dont_know"),
        ('inputs = ["a", "b"]\nepsilon = 1\n[structure]\ndont_know = 0.1\nfocal_sets = [["a"], ["b"]]\n',
         "not among the focal sets"),
        ('inputs = ["a", "a"]\nepsilon = 1\n', "duplicate"),
        ('inputs = "a"\nepsilon = 1\n', "key 'inputs'"),
        ('epsilon = 1\n', "missing key 'inputs'"),
        ('inputs = ["a", "b"]\n', "missing key 'epsilon'"),
        ('inputs = ["a", "b"]\nepsilon = 1\nobjective = "gain"\n', "needs a \\[gain\\] table"),
        ('inputs = ["a", "b"]\nepsilon = 1\nobjective = "gain"\n[gain]\nc = { "{a}" = 1 }\n', "not inputs"),
        ('inputs = ["a", "b"]\nframe = ["x", "y"]\nepsilon = 1\n', "have no frame label"),
        ('inputs = ["a", "b"\nepsilon = 1\n', "not valid TOML"),
        ('', "missing key 'inputs'"),
    ],
)
def test_bad_toml_names_file_and_key(tmp_path, text, match):
    p = write(tmp_path, text)
    with pytest.raises(InvalidProblemError, match=match) as info:
        load_problem(p)
    assert str(p) in str(info.value)
    assert "\n" not in str(info.value)


def test_non_utf8_and_missing_file(tmp_path):
    p = tmp_path / "bad.toml"
    p.write_bytes(b'inputs = ["\xe9"]\nepsilon = 1\n')
    with pytest.raises(InvalidProblemError, match="not UTF-8"):
        load_problem(p)
    with pytest.raises(InvalidProblemError, match="no such file"):
        load_problem(tmp_path / "nope.toml")


def test_python_object_validation():
    with pytest.raises(InvalidProblemError, match="epsilon"):
        DesignProblem(objective="truthful", inputs=("a", "b"), epsilon=math.nan)
    with pytest.raises(InvalidProblemError, match="prior"):
        DesignProblem(objective="truthful", inputs=("a", "b"), epsilon=1.0, prior=[0.2, 0.2])
    pb = DesignProblem(objective="truthful", inputs=("a", "b"), epsilon=1.0)
    assert pb.frame == ("a", "b") and list(pb.prior) == [0.5, 0.5]
    assert pb.replace(epsilon=2.0).epsilon == 2.0
