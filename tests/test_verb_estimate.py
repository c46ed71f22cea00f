"""The estimate front door (designer/verbs/estimate_verb.py): the CLI's numbers on the README's and the guide's
estimate examples, from a path, a DataFrame and a list; several groups and non-compliance; weights and clusters
(frequency weights against the replicated rows); conf_int against the printed intervals and an independent normal
quantile; bad input as one line; the status a FitStatus."""

import json
import math
from pathlib import Path
from statistics import NormalDist

import numpy as np
import pandas as pd
import pytest

from designer.cli import main
from designer.constructors import Q_2x3
from designer.estimation.groups import GroupEstimate
from designer.estimation.share_results import ShareEstimates
from designer.estimation.shares import Estimate
from designer.exceptions import DataError, DesignerError, InvalidArgumentTypeError
from designer.release.files import open_mechanism_file
from designer.results import FitStatus, Result, render
from designer.verbs.estimate_verb import estimate


def read_mechanism(path):
    return open_mechanism_file(path).mechanism

ROOT = Path(__file__).resolve().parents[1]
M = ROOT / "examples" / "mechanisms"
DATA = ROOT / "examples" / "data"


def _run(capsys, *args):
    code = main([str(a) for a in args])
    captured = capsys.readouterr()
    assert code in (0, 3), captured.err
    return code, captured.out


@pytest.fixture(scope="module")
def field(tmp_path_factory):
    """The README's and the guide's pipelines (design, synthesize, randomize), their files by name."""
    import contextlib
    import io

    d = tmp_path_factory.mktemp("field")
    commands = [
        ["design", ROOT / "problems/survey-5-options.toml", "--eps", "2", "--out", d / "five.csv"],
        ["synthesize", ROOT / "problems/survey-5-options.toml", "--n", "10000", "--seed", "1", "--out",
         d / "five-truth.csv"],
        ["randomize", d / "five-truth.csv", "--mechanism", d / "five.csv", "--column", "answer", "--out",
         d / "five-answers.csv", "--seed", "2", "--simulation"],
        ["synthesize", ROOT / "problems/gwrr-dont-know.toml", "--n", "10000", "--prior", "yes=0.3,no=0.7", "--seed",
         "1", "--out", d / "truth.csv"],
        ["randomize", d / "truth.csv", "--mechanism", M / "q2x3.csv", "--column", "answer", "--out",
         d / "answers.csv", "--seed", "2", "--simulation"],
        ["randomize", ROOT / "examples/answers.csv", "--mechanism", M / "q2x3.csv", "--column", "answer", "--out",
         d / "responses.csv", "--keep", "id,region", "--seed", "7", "--simulation"],
        ["randomize", ROOT / "examples/answers.csv", "--mechanism", M / "q2x3.csv", "--column", "answer", "--out",
         d / "precise.csv", "--semantics", "wldp", "--allocation", "0.5", "--seed", "3", "--simulation"],
    ]
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        for command in commands:
            assert main([str(a) for a in command]) == 0, command
    return d


#: (data, mechanism, keywords, the command's flags): the estimate lines of README.md and docs/guide/estimate.md.
def _examples(d):
    split = {"a": str(M / "warner-80.csv"), "b": str(M / "warner-65.csv")}
    unrelated = {"1": str(M / "unrelated-75.csv"), "2": str(M / "unrelated-30.csv")}
    q2x3 = str(M / "q2x3.csv")
    return {
        "readme": (d / "five-answers.csv", str(d / "five.csv"), {}, ["--mechanism", d / "five.csv"]),
        "guide": (d / "answers.csv", q2x3, {}, ["--mechanism", q2x3]),
        "guide-test": (d / "answers.csv", q2x3, {"test": "yes=0.3"}, ["--mechanism", q2x3, "--test", "yes=0.3"]),
        "guide-cluster": (d / "responses.csv", q2x3, {"cluster": "region"}, ["--mechanism", q2x3, "--cluster",
                                                                             "region"]),
        "split-sample": (DATA / "split-sample.csv", split, {"group": "arm", "noncompliance": "carriers:no"},
                         ["--mechanism", "a=" + split["a"], "--mechanism", "b=" + split["b"], "--group", "arm",
                          "--noncompliance", "carriers:no"]),
        "unrelated": (DATA / "unrelated-question.csv", unrelated, {"column": "answer", "group": "group",
                                                                   "unrelated": "yes"},
                      ["--column", "answer", "--mechanism", "1=" + unrelated["1"], "--mechanism",
                       "2=" + unrelated["2"], "--group", "group", "--unrelated", "yes"]),
        "wldp": (d / "precise.csv", q2x3, {"semantics": "wldp"}, ["--mechanism", q2x3, "--semantics", "wldp"]),
        "manifest": (d / "answers.csv", None, {"manifest": d / "answers.csv.manifest.json"},
                     ["--manifest", d / "answers.csv.manifest.json"]),
    }


@pytest.mark.parametrize("name", ["readme", "guide", "guide-test", "guide-cluster", "split-sample", "unrelated",
                                  "wldp", "manifest"])
def test_the_front_door_prints_what_the_command_prints(field, capsys, name):
    data, mechanism, keywords, flags = _examples(field)[name]
    result = estimate(data, mechanism, **keywords)
    assert isinstance(result, ShareEstimates) and isinstance(result, Result)
    assert isinstance(result.status, FitStatus)
    for fmt in ("json", "csv", "table"):
        code, out = _run(capsys, "estimate", data, *flags, "--format", fmt)
        assert render(result, fmt) == out.rstrip("\n"), fmt
        assert code == (3 if result.status is FitStatus.NOT_CONVERGED else 0)
    printed = json.loads(_run(capsys, "estimate", data, *flags, "--format", "json")[1])
    assert json.loads(json.dumps(result.to_dict())) == printed
    if name != "wldp":  # the printed intervals are conf_int's
        low = [printed["ci_low"][x] for x in result.inputs]
        high = [printed["ci_high"][x] for x in result.inputs]
        np.testing.assert_array_equal(result.conf_int(), np.column_stack([low, high]))
        np.testing.assert_array_equal(result.conf_int(result.level), result.conf_int())


def test_readme_example_lands_near_the_prior(field):
    """The README says the estimates land within their intervals of the prior 0.1, 0.2, 0.3, 0.25, 0.15; each
    interval is estimate -+ z stderr with z from the standard library's normal quantile."""
    result = estimate(field / "five-answers.csv", field / "five.csv")
    assert result.status is FitStatus.CONVERGED and result.n == 10000
    z = NormalDist().inv_cdf(0.975)
    expected = np.column_stack([np.clip(result.estimate - z * result.stderr, 0, 1),
                                np.clip(result.estimate + z * result.stderr, 0, 1)])
    np.testing.assert_allclose(result.conf_int(), expected, rtol=1e-12, atol=1e-15)
    prior = [0.1, 0.2, 0.3, 0.25, 0.15]
    assert np.all(np.abs(result.estimate - prior) < 4 * result.stderr)


def test_a_frame_and_a_list_give_the_files_numbers(field):
    path = field / "answers.csv"
    q = read_mechanism(str(M / "q2x3.csv"))
    from_file = estimate(path, M / "q2x3.csv").to_dict()
    frame = pd.read_csv(path, dtype=str)
    answers = frame["response"].tolist()
    columns = [q.columns.index(a) for a in answers]  # column indices, as sampling.randomize returns them
    tuples = [tuple(a.strip("{}").split(",")) for a in answers]  # label tuples
    for data in (frame, answers, np.array(columns), columns, tuples, frame["response"]):
        got = estimate(data, q).to_dict()
        assert got == from_file
    assert estimate(frame.rename(columns={"response": "r"}), q, column="r").to_dict() == from_file


def test_one_design_given_to_two_groups_is_the_one_designs_fit(field):
    """The groups' joint fit (a stacked mechanism, another code path) equals the plain fit when every group answers
    through the same design (standard errors from the observed information in both)."""
    frame = pd.read_csv(field / "responses.csv", dtype=str)
    q = Q_2x3(0.6, 0.2)
    one = estimate(frame, q, cov="oim")
    two = estimate(frame, {region: q for region in sorted(set(frame["region"]))}, group="region")
    assert isinstance(two.fit, GroupEstimate) and isinstance(two.status, FitStatus)
    assert set(two.to_dict()["groups"]) == set(frame["region"])
    np.testing.assert_allclose(two.estimate, one.estimate, atol=1e-8)
    np.testing.assert_allclose(two.stderr, one.stderr, rtol=1e-6)
    np.testing.assert_allclose(two.conf_int(), one.conf_int(), atol=1e-6)


def test_non_compliance_from_a_frame_and_in_memory_mechanisms(field, capsys):
    frame = pd.read_csv(DATA / "split-sample.csv", dtype=str)
    mechs = {"a": read_mechanism(str(M / "warner-80.csv")), "b": read_mechanism(str(M / "warner-65.csv"))}
    for scope in ("carriers", "everyone"):
        got = estimate(frame, mechs, group="arm", noncompliance=f"{scope}:no").to_dict()
        _, out = _run(capsys, "estimate", DATA / "split-sample.csv", "--mechanism", f"a={M / 'warner-80.csv'}",
                      "--mechanism", f"b={M / 'warner-65.csv'}", "--group", "arm", "--noncompliance", f"{scope}:no",
                      "--format", "json")
        printed = json.loads(out)
        got = json.loads(json.dumps(got))
        sizes = {k: v["n"] for k, v in printed.pop("groups").items()}
        assert {k: v["n"] for k, v in got.pop("groups").items()} == sizes
        assert got == printed
        assert printed["noncompliance"]["scope"] == scope


def test_frequency_weights_are_the_replicated_rows(field):
    """``weight_kind="frequency"``: a row of weight f is f respondents (docs/guide/estimate.md), so the fit is the
    one of the replicated answers, standard errors included."""
    frame = pd.read_csv(field / "responses.csv", dtype=str).iloc[:200]
    weights = np.random.default_rng(4).integers(1, 5, len(frame))
    weighted = estimate(frame.assign(w=weights), Q_2x3(0.6, 0.2), weights="w", weight_kind="frequency")
    replicated = estimate(np.repeat(frame["response"].to_numpy(), weights).tolist(), Q_2x3(0.6, 0.2), cov="oim")
    assert weighted.n == replicated.n == int(weights.sum())
    np.testing.assert_allclose(weighted.estimate, replicated.estimate, atol=1e-10)
    np.testing.assert_allclose(weighted.stderr, replicated.stderr, rtol=1e-8)
    assert weighted.to_dict()["weights"] == "w" and weighted.to_dict()["weight_kind"] == "frequency"


def test_weights_and_clusters_from_a_frame_give_the_files_numbers(field, capsys):
    path = field / "responses.csv"
    frame = pd.read_csv(path, dtype=str)
    frame["w"] = np.random.default_rng(5).uniform(0.5, 3.0, len(frame)).round(3)  # numbers, not text
    frame.to_csv(field / "weighted.csv", index=False)
    got = estimate(frame, M / "q2x3.csv", weights="w", cluster="region", test="yes=0.3")
    _, out = _run(capsys, "estimate", field / "weighted.csv", "--mechanism", M / "q2x3.csv", "--weights", "w",
                  "--cluster", "region", "--test", "yes=0.3", "--format", "json")
    printed = json.loads(out)
    assert json.loads(json.dumps(got.to_dict())) == printed
    assert printed["variance"].startswith("cluster-robust sandwich over 3 clusters")
    assert printed["test"]["lr"] is None  # a pseudo-likelihood: no likelihood ratio
    assert got.status is FitStatus.CONVERGED


def test_conf_int_at_another_level_is_the_commands_at_that_level(field, capsys, tmp_path):
    dont_know = tmp_path / "dk.csv"
    pd.DataFrame({"response": ["{yes,no}"] * 30}).to_csv(dont_know, index=False)
    for path in (field / "answers.csv", dont_know):
        result = estimate(path, M / "q2x3.csv")
        printed = json.loads(_run(capsys, "estimate", path, "--mechanism", M / "q2x3.csv", "--level", "0.8",
                                  "--format", "json")[1])
        expected = np.column_stack([[printed["ci_low"][x] for x in result.inputs],
                                    [printed["ci_high"][x] for x in result.inputs]])
        np.testing.assert_array_equal(result.conf_int(0.8), expected)
    assert estimate(dont_know, M / "q2x3.csv").status is FitStatus.NOT_IDENTIFIED


def test_the_fits_are_results_with_an_enum_status(field):
    result = estimate(field / "answers.csv", M / "q2x3.csv")
    fit = result.fit
    assert isinstance(fit, Estimate) and isinstance(fit, Result) and fit.status is FitStatus.CONVERGED
    assert fit.to_dict()["status"] == "converged" and fit.table()[0][0] == "input"
    np.testing.assert_array_equal(fit.conf_int(), result.conf_int())
    wldp = estimate(field / "precise.csv", M / "q2x3.csv", semantics="wldp")
    assert wldp.status is FitStatus.EXACT and wldp.conf_int().shape == (2, 2)
    with pytest.raises(DesignerError):
        Estimate(("a",), *[np.zeros(1)] * 4, n=1, loglik=0.0, method="newton", iterations=0, level=0.95,
                 status="fine")


def test_a_parquet_folder_through_a_parts_map_gives_the_files_numbers(field):
    frame = pd.read_csv(field / "answers.csv", dtype=str)
    folder = field / "parts"
    folder.mkdir(exist_ok=True)
    frame.iloc[:3000].to_parquet(folder / "part-0.parquet")
    frame.iloc[3000:].to_parquet(folder / "part-1.parquet")
    calls = []

    def parts_map(function, items):
        calls.append(len(items))
        return [function(*item) for item in items]

    from_file = estimate(field / "answers.csv", M / "q2x3.csv").to_dict()
    assert estimate(folder, M / "q2x3.csv", scheduler=parts_map).to_dict() == from_file
    assert calls == [2]
    with pytest.raises(DesignerError, match=r"is one file: drop scheduler$"):
        estimate(field / "answers.csv", M / "q2x3.csv", scheduler=parts_map)


@pytest.mark.parametrize("data, keywords, words", [
    (pd.DataFrame({"answer": ["{yes}"]}), {}, "data: no column 'response'"),
    (["{yes}", "{no}", "{maybe}"], {}, "data: row 3:"),
    ([0, 1, 7], {}, "data: row 3: index 7 out of range"),
    (["{yes}", "", "{no}"], {}, "data: row 2: no answer in column 'response'"),
    (pd.DataFrame({"response": ["{yes}", "{no}"], "w": [1.0, -2.0]}), {"weights": "w"},
     "data: row 2: weight"),
    (pd.DataFrame({"response": ["{yes}", "{no}"], "g": ["a", "z"]}), {"group": "g"}, "data: row 2: group 'z'"),
    (["", ""], {"missing": "drop"}, "data: no answers to estimate from"),
    ({"response": ["{yes}"]}, {}, "data must be a file path"),
])
def test_bad_input_is_one_line(data, keywords, words):
    q = Q_2x3(0.6, 0.2)
    mechanism = {"a": q} if "group" in keywords else q
    with pytest.raises(DataError) as info:
        estimate(data, mechanism, **keywords)
    assert words in str(info.value) and "\n" not in str(info.value)


def test_bad_options_are_one_line(field):
    q = Q_2x3(0.6, 0.2)
    answers = ["{yes}", "{no}", "{yes,no}"] * 10
    for keywords, words in [({"test": "yes=2"}, "strictly between 0 and 1"), ({"test": "maybe=0.3"}, "not an input"),
                            ({"semantics": "wldp", "weights": "w"}, "apply to set answers"),
                            ({"level": 1.5}, "level must be in (0, 1)"), ({"missing": "skip"}, "missing must be"),
                            ({"method": "magic"}, "method must be"),
                            ({"noncompliance": "carriers:no", "unrelated": "yes"}, "two models")]:
        with pytest.raises(DesignerError, match=None) as info:
            estimate(answers, q, **keywords)
        assert words in str(info.value) and "\n" not in str(info.value), keywords
    with pytest.raises(InvalidArgumentTypeError, match="mechanism must be"):
        estimate(answers, 3.5)
    with pytest.raises(DesignerError, match=r"^give mechanism or manifest"):
        estimate(answers, q, manifest=field / "answers.csv.manifest.json")
    with pytest.raises(DesignerError, match=r"^give mechanism=FILE"):
        estimate(answers)
    assert math.isclose(estimate(answers, q, method="em").estimate.sum(), 1.0)
