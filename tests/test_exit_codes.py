"""Exit statuses: only designer's own errors (and argparse) mean bad input; a bug looks like a bug."""

import pytest

from designer.cli import EXIT_INTERNAL, EXIT_USAGE, main
from designer.optimal import engine


@pytest.mark.parametrize("exc", [ValueError("boom"), TypeError("boom"), KeyError("boom"), ZeroDivisionError()])
def test_an_internal_error_is_not_bad_input(monkeypatch, capsys, exc):
    def broken(*args, **kwargs):
        raise exc

    monkeypatch.setattr(engine, "_solve", broken, raising=True)
    code = main(["design", "problems/warner.toml"])
    out, err = capsys.readouterr()
    assert code == EXIT_INTERNAL == 70 and out == ""
    assert err.count("\n") == 1 and err.startswith("designer: internal error: " + type(exc).__name__)
    assert "please report" in err and "--debug" in err and "Traceback" not in err


def test_debug_shows_the_traceback(monkeypatch, capsys):
    def broken(*args, **kwargs):
        raise ValueError("boom")

    monkeypatch.setattr(engine, "_solve", broken)
    for argv in (["--debug", "design", "problems/warner.toml"], ["design", "problems/warner.toml", "--debug"]):
        assert main(argv) == EXIT_INTERNAL
        err = capsys.readouterr().err
        assert "Traceback" in err and "ValueError: boom" in err and err.rstrip().endswith("--debug for the traceback)")


def test_designer_errors_are_bad_input(capsys):
    assert main(["design", "problems/warner.toml", "--eps", "-1"]) == EXIT_USAGE
    assert main(["audit", "no-such-file.csv"]) == EXIT_USAGE
    err = capsys.readouterr().err
    assert "internal" not in err and err.count("\n") == 2


def test_library_argument_errors_are_designer_errors():
    """The library's own argument checks raise DesignerError subclasses, still catchable as ValueError."""
    from designer import closed_forms
    from designer.exceptions import DesignerError

    with pytest.raises(DesignerError) as info:
        closed_forms.q2x3_mle(0, 0, 0.6, 0.2)
    assert isinstance(info.value, ValueError)


@pytest.mark.parametrize("argv", [
    ["simulate", "examples/mechanisms/warner-80.csv", "--seed", "-1", "--reps", "2", "--n", "10"],
    ["synthesize", "examples/mechanisms/warner-80.csv", "--n", "10", "--seed", "-5", "--out", "never.csv"],
    ["plan", "problems/warner.toml", "--width", "0.05", "--check", "10", "--seed", "-2"],
    ["randomize", "examples/data/three-questions.csv", "--variable", "drugs=examples/mechanisms/warner-80.csv",
     "--simulation", "--seed", "-3", "--out", "never.csv"],
    ["randomize", "examples/data/three-questions.csv", "--variable", "drugs=examples/mechanisms/warner-80.csv",
     "--budget", "nan", "--out", "never.csv"],
    ["plan", "problems/warner.toml", "--detect", "0.1", "--groups", "2", "--null-difference", "inf"],
])
def test_flag_values_numpy_or_a_comparison_would_choke_on_are_usage_errors(capsys, argv):
    """A negative seed reached numpy (an internal error, exit 70) and --budget nan passed every comparison (a
    release above any budget was written): each flag now has its parser, and the error names the flag."""
    import os

    assert main(argv) == EXIT_USAGE
    err = capsys.readouterr().err
    flag = next(a for a in argv if a in ("--seed", "--budget", "--null-difference"))
    assert err.startswith(f"designer: error: argument {flag}:") and err.count("\n") == 1
    assert not os.path.exists("never.csv")
