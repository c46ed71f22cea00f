"""Errors name what the caller gave: a front door's keyword from Python (``width must be ...``), the flag from the
command line (``--width must be ...``), through one mechanism (:func:`designer._internal.keywords.shown`, switched to
flags by :func:`~designer._internal.keywords.flag_names` while ``designer.cli.main`` runs a command); and each value
written as a person writes it is read by one function of :mod:`designer._internal.keywords`."""

from __future__ import annotations

import math
import re
import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

import designer
from designer._internal import keywords
from designer._internal.keywords import (
    flag_names,
    read_allocation,
    read_budgets,
    read_number,
    read_prior,
    read_values,
    say,
    shown,
)
from designer.budget import check_budget
from designer.cli import main
from designer.exceptions import DesignerError, InvalidArgumentError

ROOT = Path(__file__).resolve().parents[1]
WARNER = str(ROOT / "problems" / "warner.toml")
Q2X3 = str(ROOT / "examples" / "mechanisms" / "q2x3.csv")
ANSWERS = str(ROOT / "examples" / "answers.csv")
#: A flag as the command line writes it (``--width``, ``--null-variance``).
FLAG = re.compile(r"(?<![\w-])--[a-z]")


def _python_error(call) -> str:
    with pytest.raises(DesignerError) as info:
        call()
    return str(info.value)


def _cli_error(capsys, *argv: str) -> str:
    assert main(list(argv)) == 2
    err = capsys.readouterr().err
    assert err.startswith("designer: error: ") and err.count("\n") == 1, err
    return err.removeprefix("designer: error: ").strip()


@pytest.fixture
def responses(tmp_path):
    """Answers randomized through Q_2x3 (a seeded simulation)."""
    out = tmp_path / "responses.csv"
    designer.randomize(ANSWERS, mechanism=Q2X3, column="answer", out=out, seed=7, simulation=True)
    return str(out)


# (verb, its call from Python, the same from the command line, the keyword's words, the flag's words)
def _cases(tmp_path, responses):
    out = str(tmp_path / "r.csv")
    return [
        ("design", lambda: designer.design(WARNER, prior="yes=2"),
         ["design", WARNER, "--prior", "yes=2"],
         "prior 'yes=2': the named shares exceed 1 or are negative",
         "--prior 'yes=2': the named shares exceed 1 or are negative"),
        ("estimate", lambda: designer.estimate(responses, mechanism=Q2X3, column="response", test="maybe=0.3"),
         ["estimate", responses, "--mechanism", Q2X3, "--column", "response", "--test", "maybe=0.3"],
         "test 'maybe=0.3': 'maybe' is not an input; the inputs are ['yes', 'no']",
         "--test 'maybe=0.3': 'maybe' is not an input; the inputs are ['yes', 'no']"),
        ("regress", lambda: designer.regress("answer ~ region", ANSWERS, Q2X3, semantics="wldp", allocation="x"),
         ["regress", ANSWERS, "--formula", "answer ~ region", "--mechanism", Q2X3, "--semantics", "wldp",
          "--allocation", "x"],
         "allocation must be 'uniform' or a number in [0, 1], got 'x'",
         "--allocation must be 'uniform' or a number in [0, 1], got 'x'"),
        ("plan", lambda: designer.plan(WARNER, width=0.03, seed=1),
         ["plan", WARNER, "--width", "0.03", "--seed", "1"],
         "seed seeds the simulation of check; add check=REPS or drop seed",
         "--seed seeds the simulation of --check; add --check REPS or drop --seed"),
        ("randomize", lambda: designer.randomize(ANSWERS, mechanism=Q2X3, column="answer", out=out,
                                                 semantics="wldp", allocation="x", seed=7, simulation=True),
         ["randomize", ANSWERS, "--mechanism", Q2X3, "--column", "answer", "--out", out, "--semantics", "wldp",
          "--allocation", "x", "--seed", "7", "--simulation"],
         "allocation must be 'uniform' or a number in [0, 1], got 'x'",
         "--allocation must be 'uniform' or a number in [0, 1], got 'x'"),
        ("export", lambda: designer.export(Q2X3, to="js", semantics="wldp", allocation="x"),
         ["export", Q2X3, "--to", "js", "--out", str(tmp_path / "x.js"), "--semantics", "wldp", "--allocation", "x"],
         "allocation must be 'uniform' or a number in [0, 1], got 'x'",
         "--allocation must be 'uniform' or a number in [0, 1], got 'x'"),
    ]


@pytest.mark.parametrize("verb", ["design", "estimate", "regress", "plan", "randomize", "export"])
def test_a_bad_keyword_is_named_as_a_keyword_from_python_and_as_a_flag_from_the_command_line(
        verb, tmp_path, responses, capsys):
    case = next(c for c in _cases(tmp_path, responses) if c[0] == verb)
    _, call, argv, from_python, from_cli = case
    said = _python_error(call)
    assert said == from_python and not FLAG.search(said), said
    assert _cli_error(capsys, *argv) == from_cli
    assert not (tmp_path / "r.csv").exists()


@pytest.mark.parametrize(("kwargs", "said"), [
    ({"width": 0.7}, "width must be a half-width in (0, 0.5) (0.5 covers every share; e.g. 0.03), got 0.7"),
    ({"width": 0.03, "prior": "yes=x"}, "prior 'yes=x': write 2 numbers (e.g. 0.3,0.7 or 1/3,2/3) or label=value "
                                        "pairs"),
    ({"width": 0.03, "power": 0.9}, "power has no effect on this plan: it belongs to a power plan (detect); drop it"),
    ({"detect": 0.1, "curve_plot": "x.png"}, "curve_detect and curve_plot belong to a power curve: add "
                                             "curve=N1:N2:COUNT"),
    ({"width": 0.03, "grid": "0:3:6"}, "grid '0:3:6': every value must be a finite number > 0, got 0.0"),
    ({"width": 0.03, "n": 10, "epsilon": 1.0}, "epsilon has no effect on this plan: n with width searches the "
                                               "smallest budget (drop epsilon), and the power keywords belong to "
                                               "detect; drop it"),
    ({}, "say what to plan: width=W (sample size), n=N width=W (smallest budget with a problem file; the half-width "
         "at n with a mechanism file), detect=D [power=P] (power)"),
])
def test_plan_keywords_are_named_as_keywords(kwargs, said):
    assert _python_error(lambda: designer.plan(WARNER, **kwargs)) == said


def test_plan_without_a_source_names_the_argument_and_the_groups_as_python_writes_them(capsys):
    assert _python_error(lambda: designer.plan(width=0.03)) == (
        "give a source (problem, questionnaire or mechanism file) or mechanism={NAME: FILE}")
    assert _cli_error(capsys, "plan", "--width", "0.03") == (
        "give a SOURCE (problem, questionnaire or mechanism file) or --mechanism NAME=FILE")


def test_the_mechanism_is_the_studios_and_threads_name_keywords():
    """Only inside flag_names are flags shown; it is undone on the way out, even by an error."""
    assert shown("null_variance") == "null_variance" and shown("width", "W") == "width=W"
    assert shown("force", True) == "force=True" and shown("mechanism", ("NAME=FILE", "{NAME: FILE}")) == (
        "mechanism={NAME: FILE}")
    with pytest.raises(RuntimeError), flag_names():
        assert shown("null_variance") == "--null-variance" and shown("width", "W") == "--width W"
        assert shown("force", True) == "--force" and shown("mechanism", ("NAME=FILE", "{}")) == "--mechanism NAME=FILE"
        with flag_names(False):
            assert shown("width") == "width"
        assert shown("width") == "--width"
        raise RuntimeError
    assert shown("width") == "width"
    template = "{seed} seeds {check}; add {check=REPS}, {curve=N1:N2:COUNT}, a {SOURCE}, the {keywords}: {n}"
    assert say(template, n=3) == "seed seeds check; add check=REPS, curve=N1:N2:COUNT, a source, the keywords: 3"
    with flag_names():
        assert say(template, n=3) == ("--seed seeds --check; add --check REPS, --curve N1:N2:COUNT, a SOURCE, the "
                                      "flags: 3")


# --- one reader per value -------------------------------------------------------------------------------------------

@given(st.integers(-10**6, 10**6), st.integers(1, 10**6))
def test_a_fraction_is_read_exactly_and_rounded_once(num, den):
    assert read_number(f" {num} / {den} ") == float(Fraction(num, den))
    assert read_number(f"{num}") == float(num)


@pytest.mark.parametrize("text", ["", "abc", "1/0", "1/x", "--1"])
def test_what_is_not_a_number_is_refused_with_value_error(text):
    with pytest.raises(ValueError):
        read_number(text)


@given(st.floats(0.01, 100), st.floats(0.01, 100), st.integers(1, 60))
def test_a_grid_is_evenly_spaced_inclusive_and_a_list_is_as_written(start, stop, count):
    if count == 1:
        stop = start
    grid = read_values(f"{start!r}:{stop!r}:{count}", "--x", low=0.0, high=math.inf)
    assert len(grid) == count and grid[0] == start and math.isclose(grid[-1], stop, abs_tol=1e-12 * max(start, stop))
    assert read_values(f"{start!r},{stop!r}", "x", low=0.0, high=math.inf) == [start, stop]
    assert read_values([start, stop], "x", low=0.0, high=math.inf) == [start, stop]


@pytest.mark.parametrize(("text", "said"), [
    ("0.1:5:20000", "grid '0.1:5:20000': 20000 values is more than 10000; use a coarser grid"),
    ("1:2", "grid '1:2': write start:stop:count (e.g. 0.1:5:50) or a list 0.5,1,2"),
    ("1:2:1", "grid '1:2:1': write start:stop:count (e.g. 0.1:5:50) or a list 0.5,1,2"),
    (" , ", "grid ' , ': no values; write start:stop:count or a list 0.5,1,2"),
    ("0,1", "grid '0,1': every value must be a finite number > 0, got 0.0"),
    ("1,1e999", "grid '1,1e999': every value must be a finite number > 0, got inf"),
])
def test_a_bad_budget_grid_says_why(text, said):
    with pytest.raises(InvalidArgumentError) as info:
        read_budgets(text, "grid")
    assert str(info.value) == said


@given(st.lists(st.floats(allow_nan=True, allow_infinity=True, width=64), min_size=1, max_size=5))
def test_a_budget_grid_takes_what_the_one_budget_rule_takes(budgets):
    def budget_ok(v):
        try:
            check_budget(v)
        except InvalidArgumentError:
            return False
        return True

    ok = all(budget_ok(v) for v in budgets)
    text = ",".join(repr(v) for v in budgets)
    try:
        assert read_budgets(text, "--eps") == [float(v) for v in budgets]
        assert ok
    except InvalidArgumentError:
        assert not ok


@pytest.mark.parametrize(("given", "inputs", "default", "expected"), [
    (None, ("a", "b"), None, [0.5, 0.5]),
    (None, ("a", "b"), (0.2, 0.8), [0.2, 0.8]),
    ("0.3,0.7", ("a", "b"), None, [0.3, 0.7]),
    ("1/3,2/3", ("a", "b"), None, [1 / 3, 2 / 3]),
    ("b=0.7,a=0.3", ("a", "b"), None, [0.3, 0.7]),
    ("a=0.5", ("a", "b", "c"), (0.2, 0.2, 0.6), [0.5, 0.5 * 0.25, 0.5 * 0.75]),
    ("a=0.4", ("a", "b", "c"), None, [0.4, 0.3, 0.3]),
    ({"a": 0.5}, ("a", "b", "c"), (0.2, 0.2, 0.6), [0.5, 0.5 * 0.25, 0.5 * 0.75]),
    ((0.25, 0.75), ("a", "b"), None, [0.25, 0.75]),
])
def test_a_prior_is_read_in_every_form_it_is_written(given, inputs, default, expected):
    assert read_prior(given, inputs, "prior", default) == pytest.approx(expected, abs=1e-15)


@pytest.mark.parametrize(("given", "said"), [
    ("a=0.3,c=0.7", "--prior 'a=0.3,c=0.7': unknown inputs ['c']; the inputs are ['a', 'b']"),
    ("0.3", "--prior '0.3': 1 values for 2 inputs ['a', 'b']"),
    ("x,y", "--prior 'x,y': write 2 numbers (e.g. 0.3,0.7 or 1/3,2/3) or label=value pairs"),
    ("0.5,0.6", "--prior '0.5,0.6': the shares must be non-negative and sum to 1"),
    ("a=1.5", "--prior 'a=1.5': the named shares exceed 1 or are negative"),
    ({"a": "x"}, "--prior {'a': 'x'}: write 2 numbers (e.g. 0.3,0.7 or 1/3,2/3) or label=value pairs"),
])
def test_a_bad_prior_says_why_naming_the_name_given(given, said):
    with pytest.raises(InvalidArgumentError) as info:
        read_prior(given, ("a", "b"), "--prior")
    assert str(info.value) == said


def test_named_items_are_one_group_each(capsys):
    assert keywords.read_named(["a=x.csv", " b = y.csv "], "--mechanism", "why") == {"a": "x.csv", "b": "y.csv"}
    assert keywords.read_named(["x.csv"], "--mechanism", "why") == {"": "x.csv"}
    with pytest.raises(InvalidArgumentError, match=r"^--mechanism 'y.csv': why$"):
        keywords.read_named(["a=x.csv", "y.csv"], "--mechanism", "why")
    with pytest.raises(InvalidArgumentError, match=r"^mechanism: group 'a' is given twice$"):
        keywords.read_named(["a=x.csv", "a=y.csv"], "mechanism", "why")
    with pytest.raises(InvalidArgumentError, match=r"^mechanism 'y.csv': a plan with several designs names each group"):
        designer.plan(mechanism=[f"a={Q2X3}", "y.csv"], width=0.05)
    assert _cli_error(capsys, "plan", "--mechanism", f"a={Q2X3}", "--mechanism", "y.csv", "--width", "0.05") == (
        "--mechanism 'y.csv': with several mechanisms write NAME=FILE, NAME the value of the --group column for the "
        "respondents who used FILE")


def test_names_are_comma_separated_and_none_is_empty(capsys):
    assert keywords.read_names(" a, b ") == ["a", "b"]
    for text in ("", "a,,b", " , "):
        with pytest.raises(ValueError):
            keywords.read_names(text)
    with pytest.raises(InvalidArgumentError, match=r"^share_groups: expected comma-separated group names, got 'a,'$"):
        designer.plan(mechanism={"a": Q2X3, "b": Q2X3}, width=0.05, unrelated="yes", unknown_share=0.3,
                      share_groups="a,")
    assert main(["plan", "--mechanism", f"a={Q2X3}", "--mechanism", f"b={Q2X3}", "--width", "0.05", "--unrelated",
                 "yes", "--unknown-share", "0.3", "--share-groups", "a,"]) == 2
    assert "argument --share-groups: expected comma-separated group names, got 'a,'" in capsys.readouterr().err


@pytest.mark.parametrize(("given", "expected"), [("uniform", "uniform"), ("0.5", 0.5), ("1/4", 0.25), (1, 1.0),
                                                 (0.0, 0.0)])
def test_an_allocation_is_uniform_or_a_number(given, expected):
    assert read_allocation(given, "allocation") == expected


@pytest.mark.parametrize("given", ["x", "", None, True, [0.5]])
def test_a_bad_allocation_is_refused_naming_the_name_given(given):
    with pytest.raises(InvalidArgumentError, match=r"^--allocation must be 'uniform' or a number in \[0, 1\], got "):
        read_allocation(given, "--allocation")


def test_the_readers_are_light_and_the_command_line_imports_no_planning():
    """The command line reads its values with the same readers, without importing numpy or planning/."""
    code = ("import sys, designer._internal.keywords, designer.cli._common; "
            "print(sorted(m for m in ('numpy', 'designer.planning') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
    assert {name for name in keywords.__all__ if name.startswith("read_")} == {
        "read_allocation", "read_budgets", "read_named", "read_named_prior", "read_names", "read_number", "read_prior",
        "read_real", "read_values", "read_whole"}
