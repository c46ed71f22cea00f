"""The command line starts fast and decides things once (issue 41, item 7).

* every everyday command imports only what it needs (a fresh process per command: ``sys.modules`` after it ran);
* a command imports its own module and none of the others' (``designer.cli`` builds one command's options);
* the normal quantile comes from the standard library, checked against an independent 50-digit computation;
* one rule for a budget: the flag, the grids, ``Budget`` and ``check_epsilon`` accept and refuse the same values;
* every input error is caught once, in ``main``: a ``DataError`` keeps its own words, a worker's error on a Dask
  cluster is not wrapped again;
* ``simulate`` and ``synthesize`` print through :func:`designer.results.render`.
"""

from __future__ import annotations

import argparse
import ast
import csv
import json
import math
import subprocess
import sys
from decimal import Decimal, getcontext
from pathlib import Path
from statistics import NormalDist

import pytest

from designer import Budget
from designer._internal.keywords import read_budgets
from designer._internal.numeric import chi2_sf, normal_cdf, normal_quantile, two_sided_z
from designer._internal.validation import check_epsilon
from designer.budget import check_budget
from designer.cli import _one_line, build_parser, main
from designer.cli._common import epsilon_arg
from designer.exceptions import DataError, DesignerError, InvalidArgumentError
from designer.results import FitStatus, render

ROOT = Path(__file__).resolve().parents[1]
Q2X3 = str(ROOT / "examples" / "mechanisms" / "q2x3.csv")
HEAVY = {"cvxpy", "matplotlib", "statsmodels", "scipy.stats", "pandas", "pyarrow", "patsy", "sklearn"}


def _imported_after(argv: list[str], cwd: Path, watch: set[str]) -> tuple[int, list[str]]:
    """Run ``designer argv`` in a fresh process; its exit status and which of ``watch`` it imported."""
    code = (f"import sys\nfrom designer.cli import main\nrc = main({argv!r})\n"
            f"print(rc, sorted(m for m in {sorted(watch)!r} if m in sys.modules))")
    proc = subprocess.run([sys.executable, "-c", code], cwd=cwd, capture_output=True, text=True, check=False)
    last = proc.stdout.strip().splitlines()[-1]
    rc, _, names = last.partition(" ")
    return int(rc), ast.literal_eval(names)


@pytest.mark.parametrize(("argv", "allowed"), [
    (["--help"], set()),
    (["--version"], set()),
    (["design", "--help"], set()),
    (["audit", Q2X3], set()),
    (["credal", Q2X3, "--gamble", "yes=1,no=0"], set()),
    (["design", "problems/gwrr-dont-know.toml", "--eps", "1"], set()),
    (["design", "problems/warner.toml", "--eps", "1", "--format", "json"], set()),
    (["compare", "problems/warner.toml", "--eps", "0.5,1"], set()),
    (["plan", "problems/warner.toml", "--prior", "yes=0.3,no=0.7", "--width", "0.02"], set()),
    (["export", Q2X3, "--to", "js", "--out", "{tmp}/q2x3.js"], set()),
    (["synthesize", "--prior", "yes=0.3,no=0.7", "--n", "50", "--seed", "1", "--out", "{tmp}/t.csv"], set()),
    (["problems"], set()),
    (["design", "gwrr-dont-know", "--eps", "1"], set()),
    (["audit", "three-by-four"], set()),
    # estimate, randomize and regress read a file through Arrow (designer/tables/, pyarrow.csv for CSV: about
    # 0.03 s, benchmarks/startup.py), never through pandas
    (["estimate", "regress", "--mechanism", "gwrr"], {"pyarrow"}),
    (["randomize", "answers", "--mechanism", "q2x3", "--column", "answer", "--out", "{tmp}/r.csv", "--seed", "1",
      "--simulation"], {"pyarrow"}),
    (["randomize", "answers", "--mechanism", "q2x3", "--column", "answer", "--keep", "id", "--out", "{tmp}/k.csv",
      "--seed", "1", "--simulation"], {"pyarrow"}),
    # regress builds a plain formula's matrix without pandas or patsy, in every output format; a formula that is
    # not plain goes through pandas and patsy
    (["regress", "regress", "--mechanism", "gwrr", "--formula", "response ~ age + C(religious)", "--reference", "no"],
     {"pyarrow"}),
    (["regress", "regress", "--mechanism", "gwrr", "--formula", "response ~ age + religious", "--format", "json"],
     {"pyarrow"}),
    (["regress", "regress", "--mechanism", "gwrr", "--formula", "response ~ age", "--format", "csv", "--penalty",
      "firth"], {"pyarrow"}),
    (["regress", "regress", "--mechanism", "gwrr", "--formula", "response ~ age:religious"],
     {"pandas", "pyarrow", "patsy"}),
])
def test_everyday_commands_import_no_heavy_library(argv, allowed, tmp_path):
    """No cvxpy, matplotlib, statsmodels, scipy.stats (a z quantile is the standard library's), pandas, pyarrow or
    patsy for a design of a bundled problem, an audit, a plan, an export, the listing of the bundled problems, or an
    estimate, a randomize or a regression of a small file (pyarrow only: designer/tables/)."""
    argv = [a.replace("{tmp}", str(tmp_path)) for a in argv]
    rc, heavy = _imported_after(argv, ROOT, HEAVY)
    assert rc == 0
    assert sorted(set(heavy) - allowed) == []


def test_help_and_version_import_neither_numpy_nor_a_command_module():
    """``designer --help`` lists every command from the table in designer/cli/__init__.py, importing none of them."""
    watch = {"numpy", "designer.cli.design_commands", "designer.cli.estimate_command", "designer.cli.plan_commands",
             "designer.cli.randomize_command", "designer.cli.mechanism_commands", "designer.cli.survey_commands"}
    for argv in (["--help"], ["--version"]):
        rc, seen = _imported_after(argv, ROOT, watch)
        assert rc == 0 and seen == []
    rc, seen = _imported_after(["audit", Q2X3], ROOT, watch)
    assert rc == 0 and seen == ["designer.cli.mechanism_commands", "numpy"]


def test_estimate_of_a_small_file_reads_no_scipy_stats(tmp_path):
    answers = tmp_path / "answers.csv"
    answers.write_text("response\n" + "\n".join(["{yes}", "{no}", "\"{yes,no}\""] * 30) + "\n")
    rc, heavy = _imported_after(["estimate", str(answers), "--mechanism", Q2X3], ROOT, HEAVY)
    assert rc == 0 and "scipy.stats" not in heavy


def test_estimate_of_a_small_file_reads_no_pandas(tmp_path):
    """A CSV file is read with pyarrow.csv (designer/tables/csv_text.py), never with pandas."""
    answers = tmp_path / "answers.csv"
    answers.write_text("response\n" + "\n".join(["{yes}", "{no}", "\"{yes,no}\""] * 30) + "\n")
    rc, heavy = _imported_after(["estimate", str(answers), "--mechanism", Q2X3], ROOT, HEAVY)
    assert rc == 0 and "pandas" not in heavy


def test_one_command_parser_is_the_full_parser_for_that_command():
    """``main`` builds only the command it runs; its options, defaults and help are those of the full parser."""
    full = build_parser()
    full_sub = next(a for a in full._actions if isinstance(a, argparse._SubParsersAction))
    for name, child in full_sub.choices.items():
        alone = build_parser(only=name)
        sub = next(a for a in alone._actions if isinstance(a, argparse._SubParsersAction))
        assert sub.choices[name].format_help() == child.format_help(), name
        others = [n for n in sub.choices if n != name]
        assert all(len(sub.choices[n]._actions) == 2 for n in others)  # -h and --debug: not configured
    assert build_parser(only="").format_help() == full.format_help()


def test_main_finds_the_command_after_designers_own_options(capsys):
    assert main(["--debug", "audit", Q2X3, "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["inputs"] == ["yes", "no"]
    assert main(["nonsense"]) == 2
    assert "invalid choice: 'nonsense'" in capsys.readouterr().err


# --- the normal quantile ---------------------------------------------------------------------------------------

getcontext().prec = 60
_PI = Decimal("3.14159265358979323846264338327950288419716939937510582097494")


def _phi_decimal(x: Decimal) -> Decimal:
    """Phi(x) to about 55 digits: 1/2 + phi(x) (x + x^3/3 + x^5/15 + ...), the series that converges for every x."""
    if x == 0:
        return Decimal("0.5")
    term = total = x
    n = 0
    while True:
        n += 1
        term = term * x * x / (2 * n + 1)
        total += term
        if abs(term) < Decimal(10) ** -56 * abs(total):
            break
    return Decimal("0.5") + (-(x * x) / 2).exp() / (2 * _PI).sqrt() * total


def _quantile_decimal(p: Decimal) -> float:
    """Phi^-1(p) by Newton's method in 60-digit decimals, rounded once to a float."""
    x = Decimal(repr(NormalDist().inv_cdf(float(p))))  # a start within 1e-15; Newton doubles the digits
    for _ in range(200):
        step = (_phi_decimal(x) - p) / ((-(x * x) / 2).exp() / (2 * _PI).sqrt())
        x -= max(min(step, Decimal(1)), Decimal(-1))  # damped far out, Newton near the root
        if abs(step) < Decimal(10) ** -40:
            break
    return float(x)


@pytest.mark.parametrize("level", [0.5, 0.6827, 0.8, 0.9, 0.95, 0.975, 0.99, 0.995, 0.999, 1 - 1e-6, 1 - 1e-10,
                                   0.123456789, 0.7777])
def test_two_sided_z_against_fifty_digit_arithmetic(level):
    """Within one unit in the last place of the quantile of the exact binary ``0.5 + level / 2``."""
    truth = _quantile_decimal(Decimal("0.5") + Decimal(level) / 2)
    z = two_sided_z(level)
    assert abs(z - truth) <= math.ulp(truth)


@pytest.mark.parametrize("p", [1e-20, 1e-8, 0.001, 0.025, 0.1, 0.3, 0.5, 0.7, 0.9, 0.975, 0.999999])
def test_normal_quantile_against_fifty_digit_arithmetic(p):
    truth = _quantile_decimal(Decimal(p))
    assert abs(normal_quantile(p) - truth) <= math.ulp(truth)


def test_the_far_tails_against_scipy():
    """Beyond where the series above cancels (it would need hundreds of digits): scipy's ndtri and erfc agree."""
    special = pytest.importorskip("scipy.special")
    for p in (1e-300, 1e-200, 1e-100, 1e-50):
        assert normal_quantile(p) == pytest.approx(float(special.ndtri(p)), rel=1e-14)
        assert normal_cdf(normal_quantile(p)) == pytest.approx(p, rel=1e-12)
    for statistic, df in ((0.0, 1), (3.84, 1), (50.0, 1), (700.0, 1), (0.5, 2), (11.07, 5), (300.0, 7)):
        assert chi2_sf(statistic, df) == pytest.approx(float(special.chdtrc(df, statistic)), rel=1e-12)
    assert math.isnan(chi2_sf(math.nan, 1)) and math.isnan(chi2_sf(math.nan, 3))


def test_normal_cdf_and_chi2_sf_against_closed_forms():
    """Phi(-x) = 1 - Phi(x); a chi-square(1) tail at z^2 is the two-sided normal tail at z; chi-square(2) has the
    tail e^(-x/2)."""
    for x in (0.0, 0.3, 1.0, 1.959963984540054, 4.0):
        assert normal_cdf(-x) + normal_cdf(x) == pytest.approx(1.0, abs=1e-16)
        assert chi2_sf(x * x, 1) == pytest.approx(2 * normal_cdf(-x), rel=1e-15)
        assert chi2_sf(x, 2) == pytest.approx(math.exp(-x / 2), rel=1e-14)
    assert chi2_sf(1.959963984540054**2, 1) == pytest.approx(0.05, rel=1e-14)


def test_normal_quantile_is_antisymmetric_and_refuses_outside_zero_one():
    for p in (0.01, 0.2, 0.4999):
        assert normal_quantile(p) == -normal_quantile(1 - p) or abs(normal_quantile(p) + normal_quantile(1 - p)) \
            <= 2 * math.ulp(normal_quantile(p))  # 1 - p is rounded: the two quantiles are of different numbers
    assert normal_quantile(0.5) == 0.0 and math.copysign(1, normal_quantile(0.5)) == 1
    for bad in (0.0, 1.0, -0.1, 1.5, math.nan):
        with pytest.raises(InvalidArgumentError):
            normal_quantile(bad)
    for bad in (0.0, 1.0, math.nan, 2.0):
        with pytest.raises(InvalidArgumentError):
            two_sided_z(bad)


def test_two_sided_z_agrees_with_scipy():
    """Near: scipy takes the quantile of 0.5 + level / 2 rounded, about 1e-14 away at 0.999 (ours is within one
    unit of the exact quantile, tested above)."""
    scipy_stats = pytest.importorskip("scipy.stats")
    for level in (0.5, 0.8, 0.9, 0.95, 0.99, 0.999):
        assert two_sided_z(level) == pytest.approx(float(scipy_stats.norm.ppf(0.5 + level / 2)), rel=2e-14, abs=0)


# --- one rule for a budget -------------------------------------------------------------------------------------

BUDGET_TEXTS = ["1", "0.5", "7/3", "1e-300", "700", "1e308", "0", "-1", "-0.0", "1e400", "nan", "inf", "-inf",
                "1/0", "abc", "", " 2 ", "5e-324"]


@pytest.mark.parametrize("text", BUDGET_TEXTS)
def test_the_flag_the_grid_and_budget_accept_the_same_budgets(text):
    """``--epsilon``, ``--eps`` grids and :class:`Budget` are one rule (:func:`check_budget`)."""
    try:
        number = float(Decimal(text.strip())) if "/" not in text else None
    except ArithmeticError:
        number = None
    if "/" in text:
        num, den = text.split("/")
        number = float(num) / float(den) if float(den) else None
    budget_ok = number is not None and _accepts(Budget, number)
    assert _accepts(epsilon_arg, text) is budget_ok
    if text.strip():
        assert _accepts(lambda t: read_budgets(t, "--eps"), text) is budget_ok
    if number is not None:
        assert _accepts(check_budget, number) is _accepts(check_epsilon, number) is budget_ok
        assert budget_ok is (math.isfinite(number) and number > 0)  # the rule itself, written out


def _accepts(check, value) -> bool:
    try:
        check(value)
    except (argparse.ArgumentTypeError, DesignerError, ValueError):
        return False
    return True


def test_a_refused_budget_is_shown_as_written():
    for value, shown in ((0, "0"), (-0.5, "-0.5"), (math.inf, "inf"), ("1", "'1'"), (None, "None"), (True, "True"),
                         (10**400, "an integer of 401 digits")):
        with pytest.raises(InvalidArgumentError, match=rf"^epsilon must be a finite number > 0, got {shown}$"):
            check_budget(value)
    np = pytest.importorskip("numpy")
    with pytest.raises(InvalidArgumentError, match=r"got -1\.0$"):
        Budget(np.float64(-1.0))


def test_the_grid_flag_is_named_eps_in_compare_and_sweep(capsys):
    for command in ("compare", "sweep"):
        assert main([command, "problems/warner.toml", "--eps", "0,1"]) == 2
        assert capsys.readouterr().err.strip() == ("designer: error: --eps '0,1': every value must be a finite "
                                                   "number > 0, got 0.0")
    with pytest.raises(InvalidArgumentError, match=r"^--eps '1e999,1': every value must be a finite number > 0, "
                                                   r"got inf$"):
        read_budgets("1e999,1", "--eps")


# --- errors caught once ----------------------------------------------------------------------------------------

def test_a_data_error_keeps_its_words_and_other_errors_name_the_first_input():
    args = argparse.Namespace(mechanism=["a=m1.csv", "b=m2.csv"], responses="answers.csv")
    assert _one_line(DataError("answers.csv: line 3: 'maybe' is not an answer"), args) == \
        "answers.csv: line 3: 'maybe' is not an answer"
    assert _one_line(DataError("the frame has no column 'x'"), args) == "the frame has no column 'x'"
    assert _one_line(DesignerError("the mechanisms'\n inputs differ"), args) == "m1.csv: the mechanisms' inputs differ"
    assert _one_line(DesignerError("m2.csv: not a mechanism"), args) == "m2.csv: not a mechanism"
    assert _one_line(DesignerError("--level must be in (0, 1)"), args) == "--level must be in (0, 1)"
    assert _one_line(OSError("disk full"), args) == "disk full"


def test_a_bad_answer_in_randomize_is_one_data_error_line(tmp_path, capsys):
    truth = tmp_path / "truth.csv"
    truth.write_text("id,answer\n1,yes\n2,perhaps\n")
    code = main(["randomize", str(truth), "--mechanism", Q2X3, "--column", "answer", "--out",
                 str(tmp_path / "r.csv")])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1
    assert err.startswith(f"designer: error: {truth}: line 3: 'perhaps' is not an input of the mechanism")


def test_a_scheduler_error_is_not_wrapped_again():
    """``map_on_cluster`` lets the address check's DesignerError through as raised (main prints it once)."""
    pytest.importorskip("distributed")
    from designer.regression.regress_input import map_on_cluster

    with pytest.raises(DesignerError, match="is not a scheduler address") as info:
        map_on_cluster("not an address", print, [])
    assert type(info.value) is DesignerError


# --- simulate and synthesize render through designer.results.render -------------------------------------------

def test_simulate_prints_its_result_in_every_format(capsys):
    from designer.cli.survey_commands import SimulationSummary

    argv = ["simulate", Q2X3, "--n", "200", "--reps", "40", "--prior", "yes=0.3,no=0.7", "--seed", "3"]
    outs = {}
    for fmt in ("table", "json", "csv"):
        assert main([*argv, "--format", fmt]) == 0
        outs[fmt] = capsys.readouterr().out.rstrip("\n")
    data = json.loads(outs["json"])
    assert list(data) == ["n", "reps", "used_surveys", "estimator", "semantics", "prior", "rows"]
    assert (data["n"], data["reps"], data["prior"]) == (200, 40, {"yes": 0.3, "no": 0.7})
    for row in data["rows"]:
        assert row["bias"] == pytest.approx(row["mean"] - row["true"], abs=1e-15)
        assert row["ratio"] == pytest.approx(row["variance"] / row["closed_form"])
    rows = list(csv.DictReader(outs["csv"].splitlines()))
    assert [r["input"] for r in rows] == ["yes", "no"]
    assert [float(r["mean"]) for r in rows] == [r["mean"] for r in data["rows"]]
    assert outs["table"].startswith("40 simulated surveys of 200 respondents (sldp, estimator mle; 40 usable)")
    result = SimulationSummary(n=200, reps=40, used_surveys=40, estimator="mle", semantics="sldp",
                               prior={"yes": 0.3, "no": 0.7}, columns=tuple(rows[0]),
                               rows=tuple(tuple(r.values()) for r in data["rows"]))
    assert result.status is FitStatus.EXACT and json.loads(render(result, "json")) == data


def test_synthesize_prints_its_result_in_every_format(tmp_path, capsys):
    outs = {}
    for fmt in ("table", "json", "csv"):
        out = tmp_path / f"truth-{fmt}.csv"
        assert main(["synthesize", "--prior", "yes=1/4,no=3/4", "--n", "120", "--seed", "1", "--out", str(out),
                     "--format", fmt]) == 0
        outs[fmt] = capsys.readouterr().out.rstrip("\n")
        with out.open() as fh:
            assert sum(1 for _ in csv.DictReader(fh)) == 120
    assert json.loads(outs["json"]) == {"n": 120, "out": str(tmp_path / "truth-json.csv"), "column": "answer",
                                        "prior": {"yes": 0.25, "no": 0.75}, "seed": 1, "covariates": [],
                                        "effects": []}
    assert outs["csv"].splitlines() == ["label,prior", "yes,0.25", "no,0.75"]
    assert outs["table"] == (f"120 synthetic respondents written to {tmp_path / 'truth-table.csv'} (columns id, "
                             "answer), prior yes=0.25, no=0.75")
