"""The first field day (data part): answers as the field writes them, one reader for every command (same line
numbers, separators sniffed, the wrong kind of file named), R habits in formulas, text in a numeric column,
missing values by choice. Each test fails on the code before the change."""

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from designer.cli import main
from designer.estimation.answers import AnswerVocabulary
from designer.estimation.sampling import randomize
from designer.estimation.shares import response_columns
from designer.exceptions import InvalidArgumentError, InvalidMechanismError
from designer.mechanism import Mechanism
from designer.regression import regress

ROOT = Path(__file__).resolve().parents[1]
GWRR = ROOT / "examples" / "mechanisms" / "gwrr.csv"


def _run(argv, capsys):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(scope="module")
def survey():
    """400 respondents through the GWRR mechanism (yes / no / don't know), with an age and a region."""
    rng = np.random.default_rng(11)
    mech = Mechanism.read(GWRR)
    age = rng.integers(18, 80, 400)
    truth = np.where(rng.random(400) < 1 / (1 + np.exp(-(age - 50) / 10)), "yes", "no")
    cols = randomize(mech, truth, rng)
    sets = [mech.columns[j] for j in cols]
    words = [{"{yes}": "yes", "{no}": "no", "{yes,no}": "I don't know"}[s] for s in sets]
    return mech, pd.DataFrame({"age": age, "region": rng.choice(["n", "s"], 400), "response": sets,
                               "words": words})


def test_every_spelling_of_an_answer_maps_to_its_column():
    mech = Mechanism.read(GWRR)
    v = AnswerVocabulary(mech)
    yes, no, dk = (mech.columns.index(c) for c in ("{yes}", "{no}", "{yes,no}"))
    cases = {"{yes}": yes, "yes": yes, " Yes ": yes, "YES": yes, "{no}": no, "no": no, "{yes,no}": dk,
             "{no, yes}": dk, "I don't know": dk, "I don\u2019t know": dk, "don't know": dk, "dont know": dk,
             "DK": dk, "do not  know": dk, "maybe": -1, "{maybe}": -1, "": -1, "{}": -1}
    assert {w: v.column(w) for w in cases} == cases


def test_card_words_for_a_partial_set_and_own_words():
    frame = ["a", "b", "c"]
    mech = Mechanism.from_dict({"a": {("a",): 0.5, ("a", "b"): 0.3, ("a", "b", "c"): 0.2},
                                "b": {("b",): 0.5, ("a", "b"): 0.3, ("a", "b", "c"): 0.2},
                                "c": {("c",): 0.8, ("a", "b", "c"): 0.2}}, frame=frame)
    v = AnswerVocabulary(mech, {"weiss nicht": frame, "a oder b": ["b", "a"]})
    ab, full = mech.focal_sets.index(("a", "b")), mech.focal_sets.index(("a", "b", "c"))
    assert v.column("one of: a, b") == ab == v.column("A oder B") and v.column("Weiss nicht") == full
    with pytest.raises(InvalidArgumentError, match="not an answer of the mechanism"):
        AnswerVocabulary(mech, {"x": ["b", "c"]})
    with pytest.raises(InvalidArgumentError, match="already means"):
        AnswerVocabulary(mech, {"a": ["b"]})


def test_labels_differing_only_in_case_are_matched_exactly():
    mech = Mechanism(np.array([[0.6, 0.4], [0.4, 0.6]]), inputs=["Yes", "yes"], frame=["Yes", "yes"],
                     focal=[1, 2])
    v = AnswerVocabulary(mech)
    assert v.column("Yes") == 0 and v.column("yes") == 1 and v.column("YES") == -1


def test_response_columns_reads_words_and_says_what_to_write():
    mech = Mechanism.read(GWRR)
    assert list(response_columns(mech, ["yes", "I don't know", "{no}"])) == [
        mech.columns.index("{yes}"), mech.columns.index("{yes,no}"), mech.columns.index("{no}")]
    with pytest.raises(InvalidMechanismError, match=r"answer 2: 'perhaps'.*\{yes\}.*don't know"):
        response_columns(mech, ["yes", "perhaps"])


def test_estimate_and_regress_read_the_cards_words(survey, tmp_path, capsys):
    _, df = survey
    sets, words = tmp_path / "sets.csv", tmp_path / "words.csv"
    df[["age", "response"]].to_csv(sets, index=False)
    df[["age", "words"]].rename(columns={"words": "response"}).to_csv(words, index=False)
    a = json.loads(_run(["estimate", sets, "--mechanism", GWRR, "--format", "json"], capsys)[1])
    b = json.loads(_run(["estimate", words, "--mechanism", GWRR, "--format", "json"], capsys)[1])
    assert a["estimate"] == b["estimate"] and a["n"] == b["n"] == 400
    fa = json.loads(_run(["regress", sets, "--mechanism", GWRR, "--formula", "response ~ age", "--format", "json"],
                         capsys)[1])
    fb = json.loads(_run(["regress", words, "--mechanism", GWRR, "--formula", "response ~ age", "--format", "json"],
                         capsys)[1])
    assert fa["coefficients"] == fb["coefficients"]


def test_a_problems_answers_words_travel_with_the_json_mechanism(tmp_path, capsys):
    problem = tmp_path / "q.toml"
    problem.write_text((ROOT / "problems" / "gwrr-dont-know.toml").read_text()
                       + '\n[answers]\n"Weiss nicht" = ["yes", "no"]\n"Ja" = ["yes"]\n"Nein" = ["no"]\n')
    mech_path = tmp_path / "m.json"
    code, _, err = _run(["design", problem, "--out", mech_path], capsys)
    assert code == 0, err
    assert json.loads(mech_path.read_text())["answers"]["Weiss nicht"] == ["yes", "no"]
    data = tmp_path / "a.csv"
    data.write_text("response\nJa\nNein\nweiss nicht\nJa\n")
    code, out, err = _run(["estimate", data, "--mechanism", mech_path, "--format", "json"], capsys)
    assert code == 0, err and json.loads(out)["n"] == 4
    code, _, err = _run(["design", problem, "--out", tmp_path / "m.csv"], capsys)
    assert code == 0 and "not kept in a CSV file" in err


def test_the_same_bad_cell_has_the_same_line_in_estimate_and_regress(tmp_path, capsys):
    data = tmp_path / "d.csv"
    data.write_text("age,response\n30,{yes}\n40,{no}\n50,{maybe}\n")
    _, _, e1 = _run(["estimate", data, "--mechanism", GWRR], capsys)
    _, _, e2 = _run(["regress", data, "--mechanism", GWRR, "--formula", "response ~ age"], capsys)
    assert "line 4: " in e1 and "line 4: " in e2 and "'{maybe}'" in e1 and "'{maybe}'" in e2


def test_semicolon_files_read_and_the_wrong_kind_of_file_is_named(survey, tmp_path, capsys):
    _, df = survey
    comma, semi = tmp_path / "c.csv", tmp_path / "s.csv"
    df[["age", "response"]].to_csv(comma, index=False)
    df[["age", "response"]].to_csv(semi, index=False, sep=";")
    for command in (["estimate"], ["regress", "--formula", "response ~ age"]):
        a = _run([command[0], comma, "--mechanism", GWRR, *command[1:], "--format", "json"], capsys)[1]
        b = _run([command[0], semi, "--mechanism", GWRR, *command[1:], "--format", "json"], capsys)[1]
        assert json.loads(a) == json.loads(b)
    for command in (["estimate"], ["regress", "--formula", "response ~ age"],
                    ["randomize", "--column", "x", "--out", tmp_path / "o.csv"]):
        code, _, err = _run([command[0], ROOT / "problems" / "warner.toml", "--mechanism", GWRR, *command[1:]],
                            capsys)
        assert code == 2 and "looks like a TOML file" in err, err


def test_text_in_a_numeric_column_is_an_error_not_dummies(survey, tmp_path, capsys):
    _, df = survey
    bad = df[["age", "response"]].astype({"age": object}).copy()
    bad.loc[56, "age"] = "unknown"
    path = tmp_path / "d.csv"
    bad.to_csv(path, index=False)
    code, _, err = _run(["regress", path, "--mechanism", GWRR, "--formula", "response ~ age"], capsys)
    assert code == 2 and "column 'age'" in err and "line 58" in err and "'unknown'" in err and "C(age)" in err
    code, _, err = _run(["regress", path, "--mechanism", GWRR, "--formula", "response ~ C(region)"], capsys)
    assert code == 2  # no region column here: named, not guessed
    bad["region"] = df["region"]
    bad.to_csv(path, index=False)
    assert _run(["regress", path, "--mechanism", GWRR, "--formula", "response ~ C(region)"], capsys)[0] == 0


def test_missing_values_by_choice_as_rs_na_omit(survey, tmp_path, capsys):
    mech, df = survey
    holes = df[["age", "region", "response"]].astype({"age": float}).copy()
    holes.loc[[3, 10, 200], "age"] = np.nan
    holes.loc[[5, 10], "response"] = np.nan
    holes.loc[[7], "region"] = np.nan  # not in the formula: kept, as na.omit on the model frame does
    path = tmp_path / "d.csv"
    holes.to_csv(path, index=False)
    code, _, err = _run(["regress", path, "--mechanism", GWRR, "--formula", "response ~ age"], capsys)
    assert code == 2 and "line 5" in err and "--missing drop" in err
    code, out, err = _run(["regress", path, "--mechanism", GWRR, "--formula", "response ~ age", "--missing", "drop",
                           "--format", "json"], capsys)
    assert code == 0, err
    fit = json.loads(out)
    complete = holes.dropna(subset=["age", "response"])
    reference = regress("response ~ age", complete.reset_index(drop=True), mech)
    assert fit["dropped"] == 4 and fit["n"] == 396 == reference.n
    assert np.allclose([c["estimate"] for c in fit["coefficients"]], reference.coefficients["estimate"], atol=1e-9)
    code, out, err = _run(["estimate", path, "--mechanism", GWRR, "--missing", "drop", "--format", "json"], capsys)
    assert code == 0 and json.loads(out)["dropped"] == 2 and json.loads(out)["n"] == 398
    code, _, err = _run(["estimate", path, "--mechanism", GWRR], capsys)
    assert code == 2 and "line 7: no answer" in err


def test_r_formulas_dotted_names_and_squares(survey):
    mech, df = survey
    r_style = df[["age", "response"]].rename(columns={"age": "cov.age", "response": "rr.q1"})
    a = regress("rr.q1 ~ cov.age + I(cov.age^2)", r_style, mech)
    plain = df[["age", "response"]].assign(age2=df["age"] ** 2)
    b = regress("response ~ age + age2", plain, mech)
    assert list(a.coefficients["term"]) == ["Intercept", "cov.age", "I(cov.age ** 2)"]
    assert np.allclose(a.coefficients["estimate"], b.coefficients["estimate"], rtol=1e-6, atol=1e-10)


def test_simulated_covariates_and_effects_are_recovered_by_regress(tmp_path, capsys):
    """synthesize -> randomize -> regress from the CLI alone: the true effects lie in the 99.9% intervals."""
    truth, answers, mech = tmp_path / "t.csv", tmp_path / "r.csv", tmp_path / "m.csv"
    problem = ROOT / "problems" / "gwrr-dont-know.toml"
    code, _, err = _run(["synthesize", problem, "--n", "20000", "--prior", "yes=0.3", "--covariate",
                         "age=integer(18,80)", "--covariate", "region=category(n:0.6,s:0.4)", "--effect",
                         "yes:age=0.03", "--effect", "yes:region[s]=0.8", "--effect", "yes:Intercept=-2", "--seed",
                         "1", "--out", truth], capsys)
    assert code == 0, err
    assert truth.read_text().splitlines()[0] == "id,age,region,answer"
    assert _run(["design", problem, "--out", mech], capsys)[0] == 0
    assert _run(["randomize", truth, "--mechanism", mech, "--column", "answer", "--keep", "age,region", "--out",
                 answers, "--seed", "2", "--simulation"], capsys)[0] == 0
    code, out, err = _run(["regress", answers, "--mechanism", mech, "--formula", "response ~ age + C(region)",
                           "--level", "0.999", "--format", "json"], capsys)
    assert code == 0, err
    coef = {c["term"]: c for c in json.loads(out)["coefficients"]}
    for term, value in (("Intercept", -2.0), ("age", 0.03), ("C(region)[T.s]", 0.8)):
        assert coef[term]["ci_low"] < value < coef[term]["ci_high"], (term, coef[term])


@pytest.mark.parametrize("flags, message", [
    (["--covariate", "age=normal(45)"], "normal takes 2"),
    (["--covariate", "age=gamma(1,2)"], "write NAME=normal"),
    (["--covariate", "age=normal(45,12)", "--effect", "no:age=1"], "other than the reference"),
    (["--covariate", "age=normal(45,12)", "--effect", "yes:height=1"], "no covariate 'height'"),
    (["--covariate", "r=category(a,b)", "--effect", "yes:r[a]=1"], "the first level"),
    (["--covariate", "answer=normal(0,1)"], "names must differ"),
])
def test_bad_covariate_specs_are_one_line(flags, message, tmp_path, capsys):
    code, _, err = _run(["synthesize", ROOT / "problems" / "warner.toml", "--n", "10", "--out", tmp_path / "t.csv",
                         *flags], capsys)
    assert code == 2 and message in err and err.count("\n") == 1, err


def test_randomize_reads_true_answers_as_the_field_writes_them(tmp_path, capsys):
    """'Yes', ' no ' and 'YES' are the inputs yes and no (one label each); the draw equals the one from the exact
    labels with the same seed; an unknown answer names its line."""
    exact, loose = tmp_path / "exact.csv", tmp_path / "loose.csv"
    exact.write_text("id,answer\n1,yes\n2,no\n3,yes\n4,no\n")
    loose.write_text("id,answer\n1,Yes\n2, no \n3,YES\n4,No\n")
    outs = []
    for src in (exact, loose):
        out = tmp_path / f"r-{src.stem}.csv"
        code, _, err = _run(["randomize", src, "--mechanism", GWRR, "--column", "answer", "--keep", "id", "--out", out,
                             "--seed", "3", "--simulation"], capsys)
        assert code == 0, err
        outs.append(out.read_text())
    assert outs[0] == outs[1]
    bad = tmp_path / "bad.csv"
    bad.write_text("id,answer\n1,yes\n2,maybe\n")
    code, _, err = _run(["randomize", bad, "--mechanism", GWRR, "--column", "answer", "--out", tmp_path / "x.csv"],
                        capsys)
    assert code == 2 and "line 3: 'maybe'" in err
