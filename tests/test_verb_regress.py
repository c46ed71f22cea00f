"""The regress front door (designer/verbs/regress_verb.py): the CLI's numbers on the README's and the guide's regress
examples, from a path and from a DataFrame, in chunks, with Firth's penalty, under separation; conf_int against the
printed intervals and an independent normal quantile; bad input as one line."""

import json
import math
from statistics import NormalDist

import numpy as np
import pandas as pd
import pytest

from designer import Mechanism
from designer.cli import main
from designer.exceptions import DataError, DesignerError, RegressionError
from designer.regression.fit_result import RegressionResult
from designer.regression.sensitivity_result import SensitivityResult
from designer.results import FitStatus, Result, render
from designer.verbs.regress_verb import regress

M = "examples/mechanisms/"
#: logistf 1.26 (Heinze and Ploner), ``logistf(case ~ age + oc + vic + vicl + vis + dia, data = sex2)``.
LOGISTF = [0.12025405, -1.10598131, -0.06881673, 2.26887464, -2.11140817, -0.78831694, 3.09601166]
SEX2 = "response ~ age + oc + vic + vicl + vis + dia"

#: (positional data, keywords, the same command's flags), from docs/guide/regress.md and docs/guide/large-data.md.
EXAMPLES = {
    "guide": ("examples/regress.csv", dict(mechanism=M + "gwrr.csv", formula="response ~ age + religious",
                                           reference="no"),
              ["--mechanism", M + "gwrr.csv", "--formula", "response ~ age + religious", "--reference", "no"]),
    "large-data": ("examples/regress.csv", dict(mechanism=M + "gwrr.csv", formula="response ~ age + religious",
                                                reference="no", chunk_rows=1000),
                   ["--mechanism", M + "gwrr.csv", "--formula", "response ~ age + religious", "--reference", "no",
                    "--chunk-rows", "1000"]),
    "firth": ("examples/data/sex2-answers.csv", dict(mechanism=M + "identity.csv", formula=SEX2, penalty="firth"),
              ["--mechanism", M + "identity.csv", "--formula", SEX2, "--penalty", "firth"]),
    "split-sample": ("examples/data/split-sample.csv",
                     dict(mechanism={"a": M + "warner-80.csv", "b": M + "warner-65.csv"}, group="arm",
                          noncompliance="carriers:no", formula="response ~ 1"),
                     ["--mechanism", "a=" + M + "warner-80.csv", "--mechanism", "b=" + M + "warner-65.csv", "--group",
                      "arm", "--noncompliance", "carriers:no", "--formula", "response ~ 1"]),
    "minarets": ("examples/data/minarets.csv",
                 dict(mechanism={"1": M + "sld-2of12.csv", "2": M + "sld-10of12.csv", "0": M + "identity.csv"},
                      group="condition", noncompliance="carriers:no", share_groups=["1", "2"],
                      formula="answer ~ RRdesign * leftRight.c"),
                 ["--mechanism", "1=" + M + "sld-2of12.csv", "--mechanism", "2=" + M + "sld-10of12.csv",
                  "--mechanism", "0=" + M + "identity.csv", "--group", "condition", "--noncompliance", "carriers:no",
                  "--share-groups", "1,2", "--formula", "answer ~ RRdesign * leftRight.c"]),
    "unrelated": ("examples/data/unrelated-question.csv",
                  dict(mechanism={"1": M + "unrelated-75.csv", "2": M + "unrelated-30.csv"}, group="group",
                       unrelated="yes", formula="answer ~ x"),
                  ["--mechanism", "1=" + M + "unrelated-75.csv", "--mechanism", "2=" + M + "unrelated-30.csv",
                   "--group", "group", "--unrelated", "yes", "--formula", "answer ~ x"]),
}


def _cli(capsys, args, fmt="json"):
    code = main(["regress", *map(str, args), "--format", fmt])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _fit(data, keywords):
    keywords = dict(keywords)
    return regress(keywords.pop("formula"), data, keywords.pop("mechanism"), **keywords)


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_the_front_door_prints_what_the_command_prints(scratch, capsys, name):
    data, keywords, flags = EXAMPLES[name]
    fit = _fit(data, keywords)
    assert isinstance(fit, RegressionResult) and isinstance(fit, Result)
    assert isinstance(fit.status, FitStatus) and fit.status is FitStatus.CONVERGED
    for fmt in ("json", "csv", "table"):
        code, out, err = _cli(capsys, [data, *flags], fmt)
        assert code == 0 and err == ""
        assert render(fit, fmt) + "\n" == out
    assert fit.to_dict() == json.loads(_cli(capsys, [data, *flags])[1])


def test_the_guides_example_keeps_the_numbers_the_command_printed_before_the_front_door(scratch):
    """``designer regress examples/regress.csv ... --reference no --format json`` as printed by the command before
    it called the front door (main 1883f8a)."""
    data, keywords, _ = EXAMPLES["guide"]
    out = _fit(data, keywords).to_dict()
    assert out["loglik"] == pytest.approx(-2106.7861318064, abs=1e-8) and out["lr_test"]["df"] == 2
    assert out["lr_test"]["statistic"] == pytest.approx(62.83506687922363, rel=1e-9)
    np.testing.assert_allclose([c["estimate"] for c in out["coefficients"]],
                               [3.1438861868864993, -0.03173172688032621, -0.5965798030061936], rtol=1e-9)
    np.testing.assert_allclose([c["stderr"] for c in out["coefficients"]],
                               [0.5730267778446047, 0.007705436430272417, 0.10613337276816719], rtol=1e-9)


def test_published_numbers_through_the_front_door(scratch):
    """RRreg's minaret model (JSS 2018 section 4.3: logLik -1051.466) and logistf's Firth fit of sex2."""
    data, keywords, _ = EXAMPLES["minarets"]
    assert _fit(data, keywords).loglik == pytest.approx(-1051.46644979, abs=1e-6)
    data, keywords, _ = EXAMPLES["firth"]
    firth = _fit(data, keywords)
    assert firth.penalty == "firth" and firth.status is FitStatus.CONVERGED
    np.testing.assert_allclose(firth.coefficients["estimate"], LOGISTF, atol=1e-6, rtol=0)


def test_a_frame_and_in_memory_mechanisms_give_the_files_fit(scratch):
    path_fit = regress("response ~ age + religious", "examples/regress.csv", M + "gwrr.csv", reference="no")
    frame = pd.read_csv("examples/regress.csv", dtype={"response": str})
    mech = Mechanism.read(M + "gwrr.csv")
    frame_fit = regress("response ~ age + religious", frame, mech, reference="no")
    assert frame_fit.mechanism_label == "(in memory)" and path_fit.mechanism_label == M + "gwrr.csv"
    np.testing.assert_array_equal(frame_fit.params, path_fit.params)
    for key in ("n", "loglik", "aic", "bic", "status", "coefficients", "lr_test"):
        assert frame_fit.to_dict()[key] == path_fit.to_dict()[key]
    # several designs as Mechanism objects, keyed by the group column's values
    data, keywords, _ = EXAMPLES["split-sample"]
    by_path = _fit(data, keywords)
    objects = {name: Mechanism.read(path) for name, path in keywords["mechanism"].items()}
    by_object = regress("response ~ 1", pd.read_csv(data, dtype={"response": str}), objects, group="arm",
                        noncompliance="carriers:no")
    assert by_object.mechanism_label == "a=(in memory), b=(in memory)"
    np.testing.assert_allclose(by_object.params, by_path.params, rtol=0, atol=1e-12)
    assert by_object.noncompliance["share"] == pytest.approx(by_path.noncompliance["share"], abs=1e-12)


def test_a_design_result_is_its_mechanism(scratch):
    """examples/mechanisms/gwrr.csv is the design of problems/gwrr-dont-know.toml (epsilon 1, don't-know 0.2)."""
    from designer import design
    from designer.optimal.problem_toml import load_problem

    designed = design(load_problem("problems/gwrr-dont-know.toml"))
    fit = regress("response ~ age", "examples/regress.csv", designed)
    from_file = regress("response ~ age", "examples/regress.csv", M + "gwrr.csv")
    np.testing.assert_allclose(fit.params, from_file.params, rtol=0, atol=1e-6)
    assert fit.mechanism_label == "(in memory)"


def test_a_large_file_is_read_in_chunks_and_gives_the_in_memory_fit(scratch, monkeypatch, capsys):
    """A CSV file above the in-memory size is counted in chunks (no statsmodels object, which would hold every row):
    the fit of every row, and the command's output with --chunk-rows; few distinct rows allowed: streamed Newton."""
    from designer.regression import regress_input

    memory = regress("response ~ age + religious", "examples/regress.csv", M + "gwrr.csv", reference="no")
    assert memory.statsmodels is not None
    monkeypatch.setattr(regress_input, "IN_MEMORY_BYTES", 1000)
    counted = regress("response ~ age + religious", "examples/regress.csv", M + "gwrr.csv", reference="no")
    assert counted.statsmodels is None and counted.status is FitStatus.CONVERGED
    np.testing.assert_allclose(counted.params, memory.params, rtol=0, atol=1e-9)
    np.testing.assert_allclose(counted.conf_int(), memory.conf_int(), rtol=0, atol=1e-9)
    streamed = regress("response ~ age", "examples/regress.csv", M + "gwrr.csv", chunk_rows=1000, max_distinct=5)
    in_memory = regress("response ~ age", pd.read_csv("examples/regress.csv", dtype={"response": str}),
                        Mechanism.read(M + "gwrr.csv"))
    np.testing.assert_allclose(streamed.params, in_memory.params, rtol=0, atol=1e-8)
    code, out, _ = _cli(capsys, ["examples/regress.csv", "--mechanism", M + "gwrr.csv", "--formula", "response ~ age",
                                 "--chunk-rows", "1000", "--max-distinct", "5"])
    assert code == 0 and json.loads(out) == json.loads(render(streamed, "json"))


def test_separation_is_the_status_and_the_command_exits_3(scratch, capsys):
    """logistf's sex2 without the penalty: dia separates the cases (status separation, its estimate infinite, no
    interval), and the command prints the same fit and exits 3."""
    fit = regress(SEX2, "examples/data/sex2-answers.csv", M + "identity.csv")
    assert fit.status is FitStatus.SEPARATION and not fit.converged
    dia = list(fit.coefficients["term"]).index("dia")
    assert math.isinf(fit.coefficients["estimate"][dia]) and np.isnan(fit.conf_int()[dia]).all()
    assert any("dia" in w for w in fit.warnings)
    code, out, _ = _cli(capsys, ["examples/data/sex2-answers.csv", "--mechanism", M + "identity.csv", "--formula",
                                 SEX2])
    assert code == 3 and json.loads(out) == json.loads(render(fit, "json"))
    assert json.loads(out)["status"] == "separation"


def test_conf_int_is_the_printed_interval_and_any_level_is_estimate_and_z_stderr(scratch, capsys):
    data, keywords, flags = EXAMPLES["guide"]
    fit = _fit(data, keywords)
    printed = json.loads(_cli(capsys, [data, *flags])[1])["coefficients"]
    np.testing.assert_array_equal(fit.conf_int(), [[c["ci_low"], c["ci_high"]] for c in printed])
    assert fit.conf_int().shape == (len(printed), 2)
    z = NormalDist().inv_cdf(0.95)  # a 90% two-sided interval
    est, se = fit.coefficients["estimate"].to_numpy(), fit.coefficients["stderr"].to_numpy()
    np.testing.assert_allclose(fit.conf_int(0.9), np.column_stack([est - z * se, est + z * se]), rtol=1e-12)
    # at the 90% level the command prints the same intervals
    at90 = json.loads(_cli(capsys, [data, *flags, "--level", "0.9"])[1])["coefficients"]
    np.testing.assert_allclose(fit.conf_int(0.9), [[c["ci_low"], c["ci_high"]] for c in at90], rtol=1e-12)
    with pytest.raises(DesignerError, match="level"):
        fit.conf_int(1.5)


def test_wldp_without_a_member_is_the_range_over_members(scratch, capsys):
    with open("examples/regress.csv") as f:
        text = f.read().replace('"{yes,no}"', "{yes}").replace("{yes,no}", "{yes}")
    with open("precise.csv", "w") as f:
        f.write(text)
    ranges = regress("response ~ age", "precise.csv", M + "gwrr.csv", semantics="wldp")
    assert isinstance(ranges, SensitivityResult) and ranges.status is FitStatus.NOT_IDENTIFIED
    flags = ["precise.csv", "--mechanism", M + "gwrr.csv", "--formula", "response ~ age", "--semantics", "wldp"]
    for fmt in ("json", "csv", "table"):
        code, out, _ = _cli(capsys, flags, fmt)
        assert code == 0 and render(ranges, fmt) + "\n" == out
    member = regress("response ~ age", "precise.csv", M + "gwrr.csv", semantics="wldp", allocation="uniform")
    assert isinstance(member, RegressionResult)
    np.testing.assert_array_equal(ranges.ranges["estimate[uniform]"], member.coefficients["estimate"])
    for refused, flag in ((dict(penalty="firth"), "^penalty"), (dict(weights="age"), "^weights"),
                          (dict(method="em"), "^method=em"), (dict(noncompliance="carriers:no"), "non-compliance")):
        with pytest.raises(DesignerError, match=flag):  # a flag of one fit is refused, never ignored
            regress("response ~ age", "precise.csv", M + "gwrr.csv", semantics="wldp", **refused)
    widest, one = ranges.conf_int(), member.conf_int()  # the widest interval holds the member's (NaN: a member ran off)
    assert np.all((widest[:, 0] <= one[:, 0]) | np.isnan(widest[:, 0]))
    assert np.all((widest[:, 1] >= one[:, 1]) | np.isnan(widest[:, 1]))
    members = ranges.ranges[[c for c in ranges.ranges.columns if c.startswith("estimate[")]].to_numpy()
    ran_off = ~np.isfinite(members).all(axis=1)  # lambda = 0 separates: intercept and age run off together
    assert ran_off.any() and np.array_equal(np.isnan(widest).any(axis=1), ran_off)


@pytest.mark.parametrize(("call", "error", "words"), [
    (lambda: regress("response ~ nosuch", "examples/regress.csv", M + "gwrr.csv"), RegressionError,
     "examples/regress.csv: formula names 'nosuch', which is not a column"),
    (lambda: regress("response ~ age + (", "examples/regress.csv", M + "gwrr.csv"), RegressionError, "formula"),
    (lambda: regress("age", "examples/regress.csv", M + "gwrr.csv"), DesignerError, "must read 'response ~ x1"),
    (lambda: regress("nosuch ~ age", "examples/regress.csv", M + "gwrr.csv"), RegressionError, "nosuch"),
    (lambda: regress("response ~ age", "missing.csv", M + "gwrr.csv"), DataError, "missing.csv: no such file"),
    (lambda: regress("response ~ age", "examples/regress.csv", None), DesignerError, "give mechanism=FILE"),
    (lambda: regress("response ~ age", "examples/regress.csv", 3), DesignerError, "mechanism must be"),
    (lambda: regress("response ~ age", [1, 2], M + "gwrr.csv"), DesignerError, "DataFrame"),
    (lambda: regress("response ~ age", pd.DataFrame({"age": [1]}), M + "gwrr.csv"), RegressionError, "response"),
    (lambda: regress("response ~ age", "examples/regress.csv", M + "gwrr.csv", level=2), DesignerError, "level"),
    (lambda: regress("response ~ age", "examples/regress.csv", M + "gwrr.csv", chunk_rows=0), DesignerError,
     "chunk_rows must be a whole number"),
    (lambda: regress("response ~ age", pd.DataFrame({"response": ["{yes}"], "age": [1]}), M + "gwrr.csv",
                     chunk_rows=1000), DesignerError, "DataFrame"),
])
def test_bad_input_is_one_line(scratch, call, error, words):
    with pytest.raises(error) as caught:
        call()
    assert words in str(caught.value) and "\n" not in str(caught.value)


def test_a_bad_row_of_a_file_names_its_line_and_of_a_frame_its_row(scratch):
    with open("bad.csv", "w") as f:
        f.write("age,response\n30,{yes}\n40,{maybe}\n")
    with pytest.raises(RegressionError, match=r"^bad.csv: line 3: "):
        regress("response ~ age", "bad.csv", M + "gwrr.csv")
    with pytest.raises(RegressionError, match=r"^data row 2: "):
        regress("response ~ age", pd.read_csv("bad.csv", dtype={"response": str}), M + "gwrr.csv")


def test_the_guides_worked_example_from_a_release_and_its_manifest(scratch, capsys):
    """docs/guide/regress.md's worked example: true answers from a known logit (age 0.03, region s 0.8, intercept
    -2), designed, randomized; the front door recovers them, gives the command's cluster-robust fit, and reads the
    mechanism from randomize's manifest as well as from the file."""
    for command in (["synthesize", "problems/gwrr-dont-know.toml", "--n", "20000", "--prior", "yes=0.3", "--covariate",
                     "age=integer(18,80)", "--covariate", "region=category(n:0.6,s:0.4)", "--effect", "yes:age=0.03",
                     "--effect", "yes:region[s]=0.8", "--effect", "yes:Intercept=-2", "--seed", "1", "--out",
                     "people.csv"],
                    ["design", "problems/gwrr-dont-know.toml", "--out", "gwrr.json"],
                    ["randomize", "people.csv", "--mechanism", "gwrr.json", "--column", "answer", "--keep",
                     "age,region", "--out", "people-answers.csv", "--seed", "2", "--simulation"]):
        assert main(command) == 0
    capsys.readouterr()
    fit = regress("response ~ age + C(region)", "people-answers.csv", "gwrr.json")
    table = fit.coefficients.set_index("term")
    for term, truth in (("Intercept", -2.0), ("C(region)[T.s]", 0.8), ("age", 0.03)):
        assert abs(table.loc[term, "estimate"] - truth) < 3 * table.loc[term, "stderr"]
    flags = ["people-answers.csv", "--mechanism", "gwrr.json", "--formula", "response ~ age", "--cluster", "region"]
    clustered = regress("response ~ age", "people-answers.csv", "gwrr.json", cluster="region")
    code, out, _ = _cli(capsys, flags)
    assert code == 0 and clustered.to_dict() == json.loads(out)
    assert clustered.to_dict()["variance"].startswith("cluster-robust") and clustered.cluster == "region"
    released = regress("response ~ age + C(region)", "people-answers.csv", manifest="people-answers.csv.manifest.json")
    np.testing.assert_array_equal(released.params, fit.params)
    with pytest.raises(DesignerError, match="not both"):
        regress("response ~ age", "people-answers.csv", "gwrr.json", manifest="people-answers.csv.manifest.json")


def test_the_command_imports_neither_statsmodels_nor_scipy_stats(scratch):
    """statsmodels' results object is built when first read (RegressionResult.statsmodels), p-values come from
    scipy.special: the command prints a fit without either (pandas and patsy read the data and the formula)."""
    import subprocess
    import sys

    code = ("import sys\nfrom designer.cli import main\n"
            f"rc = main(['regress', 'examples/regress.csv', '--mechanism', '{M}gwrr.csv', '--formula', "
            "'response ~ age + religious', '--format', 'json'])\n"
            "print(rc, sorted(m for m in ('statsmodels', 'scipy.stats', 'cvxpy', 'matplotlib') if m in sys.modules))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert proc.stdout.strip().splitlines()[-1] == "0 []"
    fit = regress("response ~ age + religious", "examples/regress.csv", M + "gwrr.csv")
    assert fit.statsmodels is not None and "Randomized-response regression" in str(fit.statsmodels_summary())
