"""Plans for a survey split between several designs (designer.planning.split), against closed forms.

- Two Warner groups: the per-respondent information is sum_g f_g (2 p_g - 1)^2 / (lambda_g (1 - lambda_g)).
- Two groups with one unknown share are just identified: the prevalence is a linear function of the groups' yes
  rates, so its variance is the delta method's on two binomial proportions (RRreg's RRuni formulas with n_g =
  f_g n): the unrelated question with an unknown prevalence, cheater detection, the lie detector.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from scipy.stats import norm

from designer.cli import main
from designer.constructors import Q_WRR
from designer.mechanism import Mechanism
from designer.planning.sizes import VarianceFormula, power_at, sample_size
from designer.planning.split import group_sizes, split_accuracy, split_variances

LABELS = dict(inputs=["yes", "no"], frame=["yes", "no"], focal=[1, 2])
P = (0.8, 0.65)
WARNER = {"a": Q_WRR(math.log(P[0] / (1 - P[0]))), "b": Q_WRR(math.log(P[1] / (1 - P[1])))}


def _m(yes_if_yes: float, yes_if_no: float) -> Mechanism:
    return Mechanism(np.array([[yes_if_yes, 1 - yes_if_yes], [yes_if_no, 1 - yes_if_no]]), **LABELS)


def _warner_information(fractions, pi):
    lam = [pi * p + (1 - pi) * (1 - p) for p in P]
    return sum(f * (2 * p - 1) ** 2 / (l * (1 - l)) for f, p, l in zip(fractions, P, lam))


@pytest.mark.parametrize("split", [(0.4, 0.6), (0.5, 0.5), (0.9, 0.1)])
def test_two_warner_groups_against_their_information(split):
    acc, design = split_accuracy(WARNER, fractions=dict(zip("ab", split)), prior=[0.3, 0.7])
    variance = 1 / _warner_information(split, 0.3)
    assert acc.per_share == pytest.approx([variance, variance], rel=1e-10)
    n = sample_size(acc, 0.03).n
    assert n == math.ceil(norm.ppf(0.975) ** 2 * variance / 0.03**2)
    sizes = design.to_dict(n)["designs"]
    assert [sizes[g]["n"] for g in "ab"] == [math.ceil(f * n - 1e-9) for f in split]
    assert all(sizes[g]["n"] >= f * n for g, f in zip("ab", split))


def test_without_an_unknown_share_the_best_split_is_the_most_informative_group():
    acc, design = split_accuracy(WARNER, prior=[0.3, 0.7])
    assert design.chosen and list(design.fractions) == [1.0, 0.0]
    assert acc.variance == pytest.approx(1 / _warner_information((1, 0), 0.3), rel=1e-12)
    assert group_sizes(design.fractions, 100) == [100, 0]


def _two_proportions(f, lam, coef):
    """Variance per respondent of coef[0] lambda_1 + coef[1] lambda_2 with f_g n respondents in group g."""
    return sum(c**2 * l * (1 - l) / fg for c, l, fg in zip(coef, lam, f))


@pytest.mark.parametrize("fractions", [(0.5, 0.5), (0.3, 0.7)])
def test_unrelated_question_with_unknown_prevalence(fractions):
    p, pi, s = (0.75, 0.3), 0.35, 0.3
    mechs = {"1": _m(p[0] + (1 - p[0]) / 2, (1 - p[0]) / 2), "2": _m(0.3 + 0.7 * 0.1, 0.7 * 0.1)}
    acc, _ = split_accuracy(mechs, fractions=dict(zip("12", fractions)), prior=[pi, 1 - pi], unrelated="yes",
                            share=s)
    lam = [pg * pi + (1 - pg) * s for pg in p]
    expected = _two_proportions(fractions, lam, [(1 - p[1]) / (p[0] - p[1]), -(1 - p[0]) / (p[0] - p[1])])
    assert acc.per_share[0] == pytest.approx(expected, rel=1e-9)


def test_cheater_detection_and_the_lie_detector():
    # cheater detection: users yes, non-users yes with p_g, a share gamma of everyone no; the honest users
    # theta = (p2 lambda_1 - p1 lambda_2) / (p2 - p1) (RRuni's CDM pi)
    p, f, gamma, pi = (0.3, 0.7), (0.45, 0.55), 0.15, 0.4
    mechs = {"1": _m(1, p[0]), "2": _m(1, p[1])}
    acc, _ = split_accuracy(mechs, fractions=dict(zip("12", f)), prior=[pi, 1 - pi], noncompliance="everyone:no",
                            share=gamma)
    theta = (1 - gamma) * pi
    lam = [theta + (1 - gamma) * (1 - pi) * pg for pg in p]
    assert acc.per_share[0] == pytest.approx(_two_proportions(f, lam, [p[1] / (p[1] - p[0]), -p[0] / (p[1] - p[0])]),
                                             rel=1e-9)
    # the lie detector (RRreg's coding): pi = 1 + (lambda_2 - lambda_1) / (p2 - p1)
    p, t, pi = (2 / 12, 10 / 12), 0.65, 0.8
    mechs = {"1": _m(1, 1 - p[0]), "2": _m(1, 1 - p[1])}
    acc, _ = split_accuracy(mechs, fractions={"1": f[0], "2": f[1]}, prior=[pi, 1 - pi], noncompliance="carriers:no",
                            share=1 - t)
    lam = [pi * t + (1 - pi) * (1 - pg) for pg in p]
    assert acc.per_share[0] == pytest.approx(_two_proportions(f, lam, [-1 / (p[1] - p[0]), 1 / (p[1] - p[0])]),
                                             rel=1e-9)


def test_the_chosen_split_is_the_best_on_a_grid_and_power_uses_the_model():
    mechs = {"1": _m(1, 1 - 2 / 12), "2": _m(1, 1 - 10 / 12)}
    acc, design = split_accuracy(mechs, prior=[0.6, 0.4], noncompliance="carriers:no", share=0.3)
    grid = [split_accuracy(mechs, fractions={"1": f, "2": 1 - f}, prior=[0.6, 0.4], noncompliance="carriers:no",
                           share=0.3)[0].variance for f in np.linspace(0.01, 0.99, 197)]
    assert acc.variance <= min(grid) * (1 + 1e-9)
    assert 0.05 < design.fractions[0] < 0.95
    # one-sample Wald power at n, the variances under the null (0.6) and the alternative (0.7) from the model
    v0, v1 = (split_accuracy(mechs, fractions=dict(zip("12", design.fractions)), prior=[x, 1 - x],
                             noncompliance="carriers:no", share=0.3)[0].per_share[0] for x in (0.6, 0.7))
    z = norm.ppf(0.975)
    expected = norm.cdf((0.1 * math.sqrt(800) - z * math.sqrt(v0)) / math.sqrt(v1)) + \
        norm.cdf((-0.1 * math.sqrt(800) - z * math.sqrt(v0)) / math.sqrt(v1))
    assert power_at(acc, 800, 0.1) == pytest.approx(expected, rel=1e-9)


def test_plan_cli_with_several_mechanisms(tmp_path, capsys):
    files = []
    for name, mech in WARNER.items():
        target = tmp_path / f"{name}.csv"
        mech.to_csv(target)
        files += ["--mechanism", f"{name}={target}"]
    args = ["plan", *files, "--split", "a=2,b=3", "--prior", "yes=0.3", "--width", "0.03"]
    assert main([*args, "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    n = math.ceil(norm.ppf(0.975) ** 2 / _warner_information((0.4, 0.6), 0.3) / 0.03**2)
    assert out["n"] == n and out["designs"]["a"]["n"] == math.ceil(0.4 * n - 1e-9)
    assert out["n_total"] == out["designs"]["a"]["n"] + out["designs"]["b"]["n"] and out["split"] == "given"
    assert main([*args, "--format", "csv"]) == 0
    assert capsys.readouterr().out.splitlines()[0] == "group,mechanism,fraction,n"
    for extra, words in ((["--noncompliance", "carriers:no"], "--unknown-share S: a design with an unknown share"),
                         (["--split", "a=1,c=1"], "the split must give every group a fraction"),
                         (["--split", "a=x"], "--split 'a=x': write NAME=SIZE"),
                         (["--check", "10"], "--check has no effect on a plan with several mechanisms")):
        assert main([*args, *extra]) == 2
        err = capsys.readouterr().err
        assert words in err and len(err.strip().splitlines()) == 1, err
    assert main(["plan", str(tmp_path / "a.csv"), "--width", "0.03", "--split", "a=1"]) == 2
    assert "--split belongs to a plan with several mechanisms" in capsys.readouterr().err


def _numeric_variances(groups, fractions, prior, share, scope, answer_col, applies):
    """Each share's variance per respondent from the information of the stacked answer probabilities, built here
    from the rule's definition and differentiated numerically in (pi_1 .. pi_{k-1}, s)."""
    k = len(prior)

    def q(theta):
        pi = np.append(theta[:-1], 1 - theta[:-1].sum())
        s = theta[-1]
        out = []
        for m, f, on in zip(groups, fractions, applies):
            rows = np.array(m, dtype=float)
            if on:
                point = np.eye(rows.shape[1])[answer_col]
                if scope == "everyone":
                    rows = (1 - s) * rows + s * point
                else:  # carriers: input 0 holds the trait
                    rows[0] = (1 - s) * rows[0] + s * point
            out.append(f * pi @ rows)
        return np.concatenate(out)

    theta = np.append(np.asarray(prior[:-1], dtype=float), share)
    h = 1e-6
    jac = np.column_stack([(q(theta + h * e) - q(theta - h * e)) / (2 * h) for e in np.eye(k)])
    info = jac.T @ (jac / q(theta)[:, None])
    cov = np.linalg.inv(info)
    c = np.zeros((k, k))
    c[:-1, :-1] = np.eye(k - 1)
    c[-1, :-1] = -1
    if scope == "everyone":
        c[:, :-1] *= 1 - share
        c[:, -1] = -np.asarray(prior)
    return np.diag(c @ cov @ c.T)


def test_three_inputs_cheater_detection_against_a_numerical_information():
    labels = dict(inputs=["a", "b", "c"], frame=["a", "b", "c"], focal=[1, 2, 4])
    m1 = [[0.6, 0.2, 0.2], [0.2, 0.6, 0.2], [0.2, 0.2, 0.6]]
    m2 = [[0.3, 0.4, 0.3], [0.1, 0.3, 0.6], [0.5, 0.1, 0.4]]
    mechs = {"1": Mechanism(np.array(m1), **labels), "2": Mechanism(np.array(m2), **labels)}
    prior = [0.2, 0.3, 0.5]
    for share in (0.1, 0.0):
        acc, _ = split_accuracy(mechs, fractions={"1": 0.35, "2": 0.65}, prior=prior, noncompliance="everyone:c",
                                share=share)
        expected = _numeric_variances([m1, m2], [0.35, 0.65], prior, share, "everyone", 2, [True, True])
        np.testing.assert_allclose(acc.per_share, expected, rtol=1e-6)


def test_share_groups_leave_the_direct_question_out():
    """The lie detector in two groups and a direct question (answers taken as given): --share-groups 1,2."""
    m1, m2, direct = [[1, 0], [1 - 2 / 12, 2 / 12]], [[1, 0], [1 - 10 / 12, 10 / 12]], [[1, 0], [0, 1]]
    mechs = {"1": _m(1, 1 - 2 / 12), "2": _m(1, 1 - 10 / 12), "0": _m(1, 0)}
    fractions = {"1": 0.35, "2": 0.4, "0": 0.25}
    acc, design = split_accuracy(mechs, fractions=fractions, prior=[0.6, 0.4], noncompliance="carriers:no",
                                 share=0.3, share_groups=["1", "2"])
    expected = _numeric_variances([m1, m2, direct], [0.35, 0.4, 0.25], [0.6, 0.4], 0.3, "carriers", 1,
                                  [True, True, False])
    np.testing.assert_allclose(acc.per_share, expected, rtol=1e-6)
    assert design.to_dict(100)["unknown_share"] == {"scope": "carriers", "answer": "no", "assumed": 0.3,
                                                    "groups": ["1", "2"]}
    every = split_accuracy(mechs, fractions=fractions, prior=[0.6, 0.4], noncompliance="carriers:no", share=0.3)[0]
    assert every.variance != pytest.approx(acc.variance, rel=1e-3)


def test_one_group_split_is_the_groups_own_accuracy_in_either_semantics():
    from designer.constructors import Q_2x3
    from designer.planning.sizes import accuracy_of

    dont_know = Q_2x3(0.6, 0.1)
    for semantics in ("sldp", "wldp"):
        acc, _ = split_accuracy({"a": dont_know, "b": WARNER["a"]}, fractions={"a": 1.0, "b": 0.0},
                                prior=[0.3, 0.7], semantics=semantics)
        assert acc.per_share == pytest.approx(accuracy_of(dont_know, semantics, [0.3, 0.7]).per_share, rel=1e-12)
        assert list(acc.mechanism.inputs) == ["yes", "no"]
        assert acc.formula is VarianceFormula.ASYMPTOTIC  # a split's plan is asymptotic, even with one group left


@pytest.mark.parametrize(("kwargs", "words"), [
    ({"mechanisms": {}}, "^give at least one mechanism$"),
    ({"noncompliance": "carriers:no", "unrelated": "yes", "share": 0.1},
     "^noncompliance and unrelated are two models of one unknown share; give one$"),
    ({"noncompliance": "carriers:no"}, "^a design with an unknown share is planned at an assumed value of it: give "
                                       r"share \(the variance of the prevalence depends on it\)$"),
    ({"noncompliance": "carriers:no", "share": 1.0}, "^share "),
    ({"noncompliance": "carriers:no", "share": -0.1}, "^share "),
    ({"share": 0.1}, "^share and share_groups describe an unknown share: give noncompliance or unrelated$"),
    ({"share_groups": ["a"]}, "^share and share_groups describe an unknown share"),
    ({"fractions": {"a": 1.0}}, "^the split must give every group a fraction"),
    ({"fractions": {"a": 0.5, "b": 0.25, "c": 0.25}}, "^the split must give every group a fraction"),
    ({"fractions": {"a": 1.5, "b": -0.5}}, "^fraction of a "),
    ({"fractions": {"a": -0.5, "b": 1.5}}, "^fraction of a "),
    ({"fractions": {"a": 0.5, "b": 0.6}}, "^the fractions sum to 1.1; they must sum to 1$"),
])
def test_bad_plans_are_refused_with_the_reason(kwargs, words):
    from designer.exceptions import DesignerError

    options = {"mechanisms": WARNER, "prior": [0.3, 0.7], **kwargs}
    with pytest.raises(DesignerError, match=words):
        split_accuracy(options.pop("mechanisms"), **options)


def test_fractions_within_rounding_of_one_are_accepted():
    _, design = split_accuracy(WARNER, fractions={"a": 0.4, "b": 0.6 + 5e-10}, prior=[0.3, 0.7])
    assert design.fractions[1] == pytest.approx(0.6, abs=1e-9) and not design.chosen


def test_the_best_split_follows_the_semantics():
    """A design with a don't-know answer is the better group for set answers, Warner's for precise ones."""
    from designer.constructors import Q_2x3
    from designer.planning.sizes import accuracy_of

    warner = Q_WRR(math.log(0.62 / 0.38))
    mechs = {"a": Q_2x3(0.6, 0.1), "b": warner}
    assert list(split_accuracy(mechs, prior=[0.3, 0.7])[1].fractions) == [1.0, 0.0]
    acc, design = split_accuracy(mechs, prior=[0.3, 0.7], semantics="wldp")
    assert list(design.fractions) == [0.0, 1.0] and design.to_dict()["split"] == "chosen (smallest variance)"
    np.testing.assert_allclose(acc.model([0.5, 0.5]), accuracy_of(warner, "wldp", [0.5, 0.5]).per_share, rtol=1e-12)
    half, halves = split_accuracy(mechs, fractions={"a": 0.5, "b": 0.5}, prior=[0.3, 0.7], semantics="wldp")
    np.testing.assert_allclose(half.model([0.5, 0.5]), split_variances(halves, [0.5, 0.5], "wldp"), rtol=1e-12)
    assert half.model([0.5, 0.5])[0] > split_variances(halves, [0.5, 0.5], "sldp")[0] * 1.01
    assert design.to_dict() == {"designs": {"a": {"fraction": 0.0, "n": None}, "b": {"fraction": 1.0, "n": None}},
                                "split": "chosen (smallest variance)"}


def test_an_unrelated_question_plan_names_its_share():
    mechs = {"1": _m(0.875, 0.125), "2": _m(0.65, 0.35)}
    _, design = split_accuracy(mechs, fractions={"1": 0.5, "2": 0.5}, prior=[0.3, 0.7], unrelated="yes", share=0.3)
    assert design.to_dict(10)["unknown_share"] == {"scope": "unrelated", "answer": "yes", "assumed": 0.3,
                                                   "groups": ["1", "2"]}
    assert design.to_dict(10)["split"] == "given" and design.to_dict(10)["n_total"] == 10


def test_an_unknown_share_is_planned_for_set_answers_only():
    from designer.exceptions import DesignerError

    mechs = {"1": _m(1, 1 - 2 / 12), "2": _m(1, 1 - 10 / 12)}
    with pytest.raises(DesignerError, match=r"^a design with an unknown share is planned for set answers "
                                            r"\(semantics sldp\)$"):
        split_accuracy(mechs, prior=[0.6, 0.4], noncompliance="carriers:no", share=0.3, semantics="wldp")
