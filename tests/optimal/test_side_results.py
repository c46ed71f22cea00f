"""Side results never veto a design: a figure that cannot be computed is reported absent, with the reason.

The variance a design reports is a figure for the reader; the release rule is the certificate and the
optimum. When the figure fails (here forced: :func:`reported_variance` raises), ``design``, ``compare``,
``sweep`` and the Python result still release the certified design, with ``variance`` ``None`` (JSON
``null``) and a note saying why.
"""

import io
import json
import shlex

import pandas as pd
import pytest

from designer.cli import main
from designer.optimal import DesignProblem, design, objectives

from ..conftest import exact_losses_within


@pytest.fixture
def broken_variance(monkeypatch):
    def fail(*args, **kwargs):
        raise ArithmeticError("a deliberately broken variance")

    monkeypatch.setattr(objectives, "reported_variance", fail)


def test_python_result_keeps_the_design(broken_variance):
    problem = DesignProblem(objective="truthful", inputs=("yes", "no"), epsilon=1.0, dont_know=0.2)
    result = design(problem)
    assert result.variance is None and result.variance_kind == "unavailable"
    assert "deliberately broken" in result.variance_note
    assert result.mechanism is not None and exact_losses_within(result.mechanism, 1.0, ["shafer"])
    obj = result.to_dict()
    assert obj["variance"] is None and "deliberately broken" in obj["variance_note"] and obj["certified"] is True


@pytest.mark.parametrize("line", ["design problems/gwrr-dont-know.toml",
                                  "design problems/survey-5-options.toml",
                                  "compare problems/gwrr-dont-know.toml --eps 0.5,1",
                                  "compare problems/warner.toml --eps 1",
                                  "sweep problems/gwrr-dont-know.toml --epsilon 0.5,1"])
def test_commands_release_with_the_variance_absent(broken_variance, line, capsys):
    for fmt in ("json", "csv", "table"):
        code = main([*shlex.split(line), "--quiet", "--format", fmt])
        out, err = capsys.readouterr()
        assert code == 0, err
        if fmt == "json":
            obj = json.loads(out, parse_constant=lambda c: pytest.fail(f"{c} in JSON"))
            rows = obj.get("rows", [obj])
            assert all(r["variance"] is None or r["variance"] != r["variance"] for r in rows)
            assert "deliberately broken" in out
        elif fmt == "csv":
            table = pd.read_csv(io.StringIO(out))
            if "variance" in table:  # design's CSV is the mechanism itself
                assert table["variance"].isna().all()
        else:
            assert "deliberately broken" in out or "not computed" in out


def test_inputs_outside_the_frame_are_designed_under_wldp_and_both():
    """The issue's example: WLDP gain problem whose inputs are not frame labels (was refused)."""
    import numpy as np

    gain = np.zeros((3, 16))
    gain[0, 0b0011], gain[0, 0b1111], gain[1, 0b0110], gain[2, 0b1100] = 1.0, 0.5, 1.0, 1.0
    for semantics in ("wldp", "both"):
        problem = DesignProblem(inputs=("u0", "u1", "u2"), frame=("v0", "v1", "v2", "v3"), epsilon=1.0,
                                semantics=semantics, objective="gain", gain=gain)
        result = design(problem)
        assert exact_losses_within(result.mechanism, 1.0, problem.semantics.losses)
        assert result.variance is not None and result.variance > 0
        assert result.variance_kind in ("wldp_uniform_member", "wldp_precise_mle")
