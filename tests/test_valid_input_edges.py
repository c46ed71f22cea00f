"""Inputs just past the cases the commands were written for (a review's hunt over files and the input space,
2026-12-08): each either gives the answer the same data give elsewhere, or one line and exit 2 (3 for a fit that
ended in separation), never an internal error, a silently different answer, or a file left behind."""

from __future__ import annotations

import os

import numpy as np
import pandas as pd
import pytest

import designer
from designer.cli import main
from designer.exceptions import DesignerError

Q2X3 = "examples/mechanisms/q2x3.csv"
GWRR = "examples/mechanisms/gwrr.csv"


def _refused(capsys, argv: list[str], code: int = 2) -> str:
    assert main(argv) == code
    err = capsys.readouterr().err
    assert "internal error" not in err and "Traceback" not in err, err
    return err


# ---------------------------------------------------------------- estimate

def test_integers_that_are_also_labels_are_refused_not_read_as_indices(scratch) -> None:
    """A sequence's integers are indices of the mechanism; where the mechanism's labels are integers too, ``1``
    could be either, and the two readings give each other's shares: refused, naming the labels. Where the labels
    are words, integers are indices as documented, and the DataFrame of the same integers reads them as labels."""
    with open("w10.csv", "w", encoding="utf-8") as f:
        f.write("input,{1},{0}\n1,0.8,0.2\n0,0.2,0.8\n")
    codes = np.random.default_rng(0).choice([1, 0], size=400, p=[0.7, 0.3])
    with pytest.raises(DesignerError, match="ambiguous"):
        designer.estimate(pd.Series(codes), "w10.csv")
    as_labels = designer.estimate(pd.DataFrame({"response": codes}), "w10.csv")
    as_text = designer.estimate(pd.Series(codes).astype(str), "w10.csv")
    assert as_labels.to_frame()["estimate"].tolist() == pytest.approx(as_text.to_frame()["estimate"].tolist())
    warner = designer.estimate(pd.Series(codes), "examples/mechanisms/warner-80.csv")  # labels yes/no: indices
    share_of_index_0 = float(np.mean(codes == 0))
    assert warner.to_frame()["estimate"].iloc[0] == pytest.approx((share_of_index_0 - 0.2) / 0.6, abs=1e-6)


def test_a_column_in_two_roles_is_read_once(scratch, capsys) -> None:
    """``--weights w --cluster w`` (a weight that is also the cluster's id) is the fit of the two columns named
    apart."""
    with open("two.csv", "w", encoding="utf-8") as f:
        f.write("response,w,c\n" + "".join(f"{a},{w},{w}\n" for a, w in
                                           [("{yes}", 1), ("{no}", 2), ('"{yes,no}"', 1), ("{no}", 3)] * 5))
    assert main(["estimate", "two.csv", "--mechanism", Q2X3, "--weights", "w", "--cluster", "w",
                 "--format", "json"]) == 0
    same = capsys.readouterr().out
    assert main(["estimate", "two.csv", "--mechanism", Q2X3, "--weights", "w", "--cluster", "c",
                 "--format", "json"]) == 0
    apart = capsys.readouterr().out
    assert same.replace('"c"', '"w"') == apart.replace('"c"', '"w"')


def test_frequency_weights_past_the_largest_number_are_refused(scratch, capsys) -> None:
    with open("big.csv", "w", encoding="utf-8") as f:
        f.write("response,w\n{yes},1e308\n{no},1e308\n")
    err = _refused(capsys, ["estimate", "big.csv", "--mechanism", Q2X3, "--weights", "w", "--weight-kind",
                            "frequency"])
    assert "big.csv" in err and "'w'" in err and err.count("\n") == 1


def test_a_level_below_one_half_is_a_level(scratch, capsys) -> None:
    """A fit on the boundary gets profile intervals at any level in (0, 1), 0.3 included."""
    with open("edge.csv", "w", encoding="utf-8") as f:
        f.write("response\n" + "{yes}\n" * 2 + "{no}\n" * 20 + '"{yes,no}"\n' * 30)
    assert main(["estimate", "edge.csv", "--mechanism", Q2X3, "--level", "0.3", "--format", "json"]) == 0
    assert '"boundary"' in capsys.readouterr().out


def test_a_share_held_at_its_edge_exits_as_separation_in_estimates_words(capsys) -> None:
    """The one-share fit whose share runs to 0 ends in separation: exit 3 (docs/reference/conventions.md), and the
    advice does not name regress's --penalty, which estimate does not have."""
    err_out = _refused(capsys, ["estimate", "examples/data/split-sample.csv", "--mechanism",
                                "a=examples/mechanisms/warner-80.csv", "--mechanism",
                                "b=examples/mechanisms/warner-65.csv", "--group", "arm", "--noncompliance",
                                "carriers:no", "--share-groups", "a"], code=3)
    assert "--penalty" not in err_out


# ---------------------------------------------------------------- regress

REGRESS = pd.read_csv(os.path.join(os.path.dirname(__file__), "..", "examples", "regress.csv"))


@pytest.mark.parametrize("kind", ["datetime", "timedelta"])
def test_dates_and_durations_are_refused_naming_the_column(kind: str) -> None:
    frame = REGRESS.copy()
    frame["age"] = (pd.to_datetime("2000-01-01", utc=True) + pd.to_timedelta(frame.age, unit="D")
                    if kind == "datetime" else pd.to_timedelta(frame.age, unit="s"))
    with pytest.raises(DesignerError, match="column 'age' holds dates or times"):
        designer.regress("response ~ age", frame, "gwrr")


def _params(formula: str, frame: pd.DataFrame) -> list[float]:
    from designer.regression import RegressionResult

    fit = designer.regress(formula, frame, "gwrr")
    assert isinstance(fit, RegressionResult)
    return [float(p) for p in fit.params]


def test_pandas_dtypes_and_names_read_as_their_plain_values() -> None:
    """A nullable boolean covariate fits as the plain booleans; a column named by an integer is named by its
    text; answers as label tuples are the answers ``{a,b}``; a name given to two columns is refused."""
    base = REGRESS.copy()
    base["flag"] = base.religious > 2
    plain = _params("response ~ age + flag", base)
    assert _params("response ~ age + flag", base.assign(flag=base.flag.astype("boolean"))) == pytest.approx(
        plain, rel=1e-12)
    assert _params("response ~ Q('2') + flag", base.rename(columns={"age": 2})) == pytest.approx(plain, rel=1e-12)
    tuples = base.assign(response=base.response.map(lambda s: tuple(s.strip("{}").split(","))))
    assert _params("response ~ age + flag", tuples) == pytest.approx(plain, rel=1e-12)
    twice = base[["response", "age", "flag", "religious"]].set_axis(["response", "age", "flag", "age"], axis=1)
    with pytest.raises(DesignerError, match="more than one column named 'age'"):
        designer.regress("response ~ age", twice, "gwrr")


def test_a_column_typed_differently_in_two_parts_is_refused(scratch, capsys) -> None:
    """A dataset folder whose parts store ``age`` as numbers in one and text in the other: one line naming the
    column (it was an internal error)."""
    os.mkdir("clash")
    REGRESS.iloc[:1000].to_parquet("clash/a.parquet", index=False)
    REGRESS.iloc[1000:].assign(age=REGRESS.age.iloc[1000:].astype(str)).to_parquet("clash/b.parquet", index=False)
    err = _refused(capsys, ["regress", "clash", "--mechanism", GWRR, "--formula", "response ~ age"])
    assert "column 'age'" in err and err.count("\n") == 1


# ---------------------------------------------------------------- files: the ledger, export's inputs

@pytest.mark.parametrize("ledger", ["nofolder/ledger.json", "out.csv", "out.csv.manifest.json"])
def test_a_ledger_that_cannot_be_kept_stops_the_release_before_anything_is_written(scratch, capsys,
                                                                                      ledger: str) -> None:
    """A ledger in a missing folder, or at the path of the release's own files, is refused before the draw:
    nothing is written (the release would otherwise be placed unrecorded, its budget spent without a trace)."""
    before = set(os.listdir("."))
    err = _refused(capsys, ["randomize", "examples/answers.csv", "--mechanism", Q2X3, "--column", "answer",
                            "--out", "out.csv", "--ledger", ledger, "--quiet"])
    assert "ledger" in err
    assert set(os.listdir(".")) == before


def test_a_bundled_input_keeps_its_ledger_beside_the_output(scratch) -> None:
    """designer's own example files (in a source checkout, examples/ is outside the package folder) never get a
    ledger beside them: it goes beside the output."""
    from importlib import resources

    from designer.release.ledger import LEDGER_NAME, default_ledger_path

    own = os.path.join(str(resources.files("designer.examples")), "answers.csv")
    assert default_ledger_path(own, "out/r.csv") == os.path.join(os.path.abspath("out"), LEDGER_NAME)
    assert default_ledger_path("examples/answers.csv", "r.csv") == os.path.join(os.path.abspath("examples"),
                                                                                 LEDGER_NAME)


def test_export_never_replaces_its_strings_file(scratch, capsys) -> None:
    with open("strings.toml", "w", encoding="utf-8") as f:
        f.write('title = "A question"\n')
    _refused(capsys, ["export", Q2X3, "--to", "html", "--strings", "strings.toml", "--out", "strings.toml",
                      "--force"])
    with open("strings.toml", encoding="utf-8") as f:
        assert f.read() == 'title = "A question"\n'


def test_frequency_weights_test_as_the_replicated_rows_do(scratch, capsys) -> None:
    """Frequency weights are replicated rows: the likelihood-ratio test of a share is the one of the rows written
    out (docs/guide/estimate.md), not dropped as for sampling weights' pseudo-likelihood."""
    with open("weighted.csv", "w", encoding="utf-8") as f:
        f.write('response,w\n{yes},30\n{no},50\n"{yes,no}",20\n')
    with open("rows.csv", "w", encoding="utf-8") as f:
        f.write("response\n" + "{yes}\n" * 30 + "{no}\n" * 50 + '"{yes,no}"\n' * 20)
    assert main(["estimate", "weighted.csv", "--mechanism", Q2X3, "--weights", "w", "--weight-kind", "frequency",
                 "--test", "yes=0.3"]) == 0
    weighted = capsys.readouterr().out.strip().splitlines()[-1]
    assert main(["estimate", "rows.csv", "--mechanism", Q2X3, "--test", "yes=0.3"]) == 0
    assert weighted == capsys.readouterr().out.strip().splitlines()[-1]
    assert "likelihood ratio 0.2099" in weighted


def test_too_few_clusters_give_no_cluster_robust_standard_errors(capsys) -> None:
    """Two clusters for two parameters (each group its own cluster, the share and the unrelated question's share):
    each cluster's scores sum to 0 at the estimate and the sandwich is 0; no standard errors, and the reason (it
    said converged with standard errors of 2e-16 and intervals of width 0)."""
    assert main(["estimate", "examples/data/unrelated-question.csv", "--column", "answer", "--mechanism",
                 "1=examples/mechanisms/unrelated-75.csv", "--mechanism", "2=examples/mechanisms/unrelated-30.csv",
                 "--group", "group", "--unrelated", "yes", "--cluster", "group", "--format", "json"]) == 0
    out = capsys.readouterr().out
    assert "2 clusters give a cluster-robust variance of rank at most 1" in out
    assert "e-16" not in out


# ---------------------------------------------------------------- plan

def test_a_size_too_small_for_its_normal_approximation_is_flagged(capsys) -> None:
    """Planning a share of 0.001 with no noise gives 2 respondents (the asymptotic variance is tiny), a size whose
    own simulation covers 0.005: the plan says so. An ordinary plan says nothing."""
    assert main(["plan", "examples/mechanisms/identity.csv", "--width", "0.05", "--prior", "0.001,0.999",
                 "--format", "json"]) == 0
    import json

    out = json.loads(capsys.readouterr().out)
    assert out["n"] == 2 and "0.002 expected respondents" in out["small_sample_warning"]
    assert main(["plan", "examples/mechanisms/identity.csv", "--width", "0.05"]) == 0
    assert "warning" not in capsys.readouterr().out


def test_identification_of_a_function_does_not_depend_on_its_scale() -> None:
    """Whether ``c' theta`` is identified is a ratio of variances, the same for ``t c`` at any ``t``: functions of
    1e-300 to 1e300 (a coefficient on a covariate's own scale of 1e-300..1e300) get the verdict of ``c``, without an
    overflow to inf; a zero function is identified (its variance is 0); a function along a weak direction is not."""
    from designer.regression.status import Spectrum

    info = np.diag([4.0, 1.0, 1e-14])  # the third direction is weak
    spectrum = Spectrum.of(info, np.ones(3))
    functions = np.array([[1.0, 0.5, 0.0], [0.0, 0.0, 1.0], [0.0, 0.0, 0.0], [1.0, 0.0, 1e-3]])
    verdict = spectrum.identified(functions).tolist()
    assert verdict == [True, False, True, False]
    for t in (1e-300, 1e-150, 1e150, 1e300):
        with np.errstate(all="raise"):
            assert spectrum.identified(t * functions).tolist() == verdict
    assert spectrum.identified(functions[0]).tolist() == [True]  # one function as a vector
    # each function on its own scale: a weak one of 1e-300 beside a strong one of 1e300 is still weak
    with np.errstate(all="raise"):
        assert spectrum.identified(np.array([[1e300, 0.0, 0.0], [0.0, 0.0, 1e-300]])).tolist() == [True, False]
