"""A small, complete CSV file of plain columns is read for a regression without pandas
(designer/regression/plain_table.py), by the one CSV reader and the one set of typing rules (designer/tables/cells.py)
the DataFrame path uses: every column it gives equals that path's column for the same file, and ``designer regress``
gives the same fit, the same output and the same errors through either path (issue 51, item 8: start-up; issue 60:
one set of typing rules)."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import designer
from designer.cli import main
from designer.exceptions import DesignerError
from designer.regression import plain_table
from designer.regression.plain_table import PlainTable, read_plain_table
from designer.regression.regress_input import read_frame
from designer.tables.cells import MISSING_WORDS, TRUTH_WORDS

ROOT = Path(__file__).resolve().parents[1]
GWRR = str(ROOT / "examples" / "mechanisms" / "gwrr.csv")
SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


def _write(path: Path, header: list[str], rows: list[list[str]], sep: str = ",") -> Path:
    with open(path, "w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh, delimiter=sep, lineterminator="\n")
        writer.writerow(header)
        writer.writerows(rows)
    return path


def _same_column(ours: np.ndarray, theirs: pd.Series) -> None:
    """The same type and the same values, bit for bit (a float's sign of zero included)."""
    values = theirs.to_numpy()
    if ours.dtype == object:
        assert values.dtype == object or theirs.dtype == "str", theirs.dtype
        assert [str(v) for v in values] == ours.tolist()
        assert all(isinstance(v, str) for v in values)
    else:
        assert values.dtype == ours.dtype, (values.dtype, ours.dtype)
        assert np.array_equal(values.view(np.int64), ours.view(np.int64))


# cells as people and programs write them: whole numbers in every spelling, decimals with and without exponents,
# words (some of them missing-value or true/false words, some numbers in other scripts), padded cells
_digits = st.text("0123456789", min_size=1, max_size=20)
_whole = st.builds(lambda sign, d: sign + d, st.sampled_from(["", "-", "+"]), _digits)
_decimal = st.builds(lambda sign, a, b, e: f"{sign}{a}.{b}{e}", st.sampled_from(["", "-", "+"]),
                     st.text("0123456789", max_size=9), st.text("0123456789", max_size=9),
                     st.sampled_from(["", "e5", "E-3", "e+22", "e-22", "e23", "e-30", "e308", "e400"]))
_word = st.one_of(st.sampled_from(sorted(MISSING_WORDS | set(TRUTH_WORDS) | {"inf", "-inf", "Infinity", "1_000", "0x1F",
                                                                        "١٢", "1,5", "north", "I don't know"})),
                  st.text(st.characters(codec="utf-8", exclude_categories=("Cs", "Cc")), min_size=1, max_size=6))
_cell = st.one_of(_whole, _decimal, _word, st.builds(lambda c: f" {c}", _whole), st.builds(lambda c: f"{c} ", _word))
_column = st.one_of(st.lists(_whole, min_size=1, max_size=8), st.lists(st.one_of(_whole, _decimal), min_size=1,
                                                                        max_size=8),
                    st.lists(_word, min_size=1, max_size=8), st.lists(_cell, min_size=1, max_size=8))


@SETTINGS
@given(columns=st.lists(_column, min_size=1, max_size=3), answers=st.lists(st.sampled_from(
    ["yes", "no", "{yes}", "{no}", "{yes,no}", "I don't know"] * 8 + ["NA", " yes", ""]), min_size=8, max_size=8),
       sep=st.sampled_from([",", ";", "\t"]), qualtrics=st.booleans())
def test_a_plain_table_is_the_frame_pandas_reads(columns, answers, sep, qualtrics, tmp_path_factory):
    """Every column read_plain_table gives equals read_frame's, and so does the line of the first row; a table it
    leaves to read_frame has a missing cell, or a text column with a number in it."""
    n = len(answers)
    columns = [(c * n)[:n] for c in columns]
    header = ["response", *(f"x{j}" for j in range(len(columns)))]
    rows = [[a, *(c[i] for c in columns)] for i, a in enumerate(answers)]
    if qualtrics:
        rows = [["Your answer", *("Question" for _ in columns)],
                ['{"ImportId":"QID1"}', *('{"ImportId":"QID2"}' for _ in columns)], *rows]
    path = str(_write(tmp_path_factory.mktemp("table") / "t.csv", header, rows, sep))
    formula = "response ~ " + " + ".join(header[1:])
    table = read_plain_table(path, "response", formula)
    frame = read_frame(path, "response", formula)
    if table is None:  # a missing cell, or a text cell Python reads as a number (the plain path's doubt)
        assert frame.isna().any(axis=None) or any(_number(v) for c in header[1:]
                                                  if not pd.api.types.is_numeric_dtype(frame[c]) for v in frame[c])
        return
    assert table.first_line == frame.attrs["first_line"]
    assert table.columns == ["response", *header[1:]]
    assert table["response"].tolist() == frame["response"].tolist()
    for name in header[1:]:
        _same_column(table[name], frame[name])


def _number(cell: str) -> bool:
    try:
        float(cell)
    except ValueError:
        return False
    return True


def _fit(argv: list[str], monkeypatch, capsys, *, small: bool) -> tuple[int, str, str]:
    """``designer regress`` through the plain reader (``small``) or through pandas'."""
    monkeypatch.setattr(plain_table, "PLAIN_BYTES", 1 << 20 if small else -1)
    rc = main(["regress", *argv])
    out, err = capsys.readouterr()
    return rc, out, err


@pytest.fixture
def survey(tmp_path) -> Path:
    """A survey with dotted, decimal, text and whole-number covariates, its answers drawn through GWRR."""
    rng = np.random.default_rng(5)
    n = 600
    age = rng.integers(18, 80, n)
    score = np.round(rng.normal(0, 1, n), 3)
    region = rng.choice(["north", "south", "east"], n)
    truth = np.where(rng.random(n) < 1 / (1 + np.exp(1 - 0.02 * age + 0.5 * score)), "yes", "no")
    people = pd.DataFrame({"answer": truth, "cov.age": age, "score": score, "region": region})
    drawn = designer.randomize(people, GWRR, column="answer", keep="cov.age,score,region", seed=3, simulation=True,
                               keep_order=True)
    return _write(tmp_path / "survey.csv", ["response", "cov.age", "score", "region"],
                  [[str(v) for v in row] for row in drawn.frame[["response", "cov.age", "score", "region"]]
                   .itertuples(index=False)])


@pytest.mark.parametrize("flags", [
    ["--formula", "response ~ cov.age + score + region"],
    ["--formula", "response ~ C(region) + score - 1", "--format", "json"],
    ["--formula", "response ~ 1", "--format", "csv"],
    ["--formula", "response ~ cov.age + C(region)", "--penalty", "firth", "--format", "json"],
    ["--formula", "response ~ score", "--method", "em", "--level", "0.9", "--format", "json"],
    ["--formula", "response ~ score", "--cov", "opg", "--format", "json"],
    ["--formula", "response ~ score + region", "--reference", "yes", "--format", "json"],
])
def test_regress_is_the_same_through_either_reader(survey, flags, monkeypatch, capsys):
    argv = [str(survey), "--mechanism", GWRR, *flags]
    assert _fit(argv, monkeypatch, capsys, small=True) == _fit(argv, monkeypatch, capsys, small=False)


def test_the_library_gives_the_same_fit_and_table(survey, monkeypatch):
    formula = "response ~ cov.age + score + region"
    light = designer.regress(formula, str(survey), GWRR)
    assert isinstance(read_plain_table(str(survey), "response", formula), PlainTable)
    monkeypatch.setattr(plain_table, "PLAIN_BYTES", -1)
    heavy = designer.regress(formula, str(survey), GWRR)
    assert light.to_dict() == heavy.to_dict()
    pd.testing.assert_frame_equal(light.coefficients, heavy.coefficients)
    assert light.predict(pd.read_csv(survey)).equals(heavy.predict(pd.read_csv(survey)))
    assert np.array_equal(light.conf_int(0.8), heavy.conf_int(0.8), equal_nan=True)


@pytest.mark.parametrize(("edit", "plain"), [
    (lambda rows: rows, True),
    (lambda rows: [rows[0], *rows[1:3], [rows[3][0], "", *rows[3][2:]], *rows[4:]], False),  # an empty cell
    (lambda rows: [rows[0], *rows[1:3], [rows[3][0], "NA", *rows[3][2:]], *rows[4:]], False),  # a missing word
    (lambda rows: [rows[0], *rows[1:3], [rows[3][0], " 41", *rows[3][2:]], *rows[4:]], True),  # a padded cell
    (lambda rows: [rows[0], *rows[1:3], rows[3][:2], *rows[4:]], False),  # a short row
    (lambda rows: [[rows[0][0], "score", *rows[0][2:]], *rows[1:]], False),  # a repeated column name
    (lambda rows: [rows[0], *rows[1:3], [rows[3][0], "41.0000000000000001", *rows[3][2:]], *rows[4:]], True),
    (lambda rows: [rows[0], *rows[1:3], [rows[3][0], rows[3][1], rows[3][2], "7"], *rows[4:]], False),  # a number

])
def test_only_a_file_beyond_doubt_is_read_without_pandas(survey, edit, plain, tmp_path, monkeypatch, capsys):
    """What the plain path leaves to the DataFrame path goes there: the same result, the same error."""
    with open(survey, newline="") as fh:
        rows = list(csv.reader(fh))
    edited = edit(rows)
    path = str(_write(tmp_path / "edited.csv", edited[0], edited[1:]))
    formula = "response ~ cov.age + score + region"
    assert (read_plain_table(path, "response", formula) is not None) == plain
    argv = [path, "--mechanism", GWRR, "--formula", formula, "--format", "json"]
    assert _fit(argv, monkeypatch, capsys, small=True) == _fit(argv, monkeypatch, capsys, small=False)
    assert _fit([*argv, "--missing", "drop"], monkeypatch, capsys, small=True) == \
        _fit([*argv, "--missing", "drop"], monkeypatch, capsys, small=False)


def test_a_file_above_plain_bytes_goes_to_pandas(survey, monkeypatch):
    """Beyond PLAIN_BYTES the DataFrame path serves as fast, pandas' import included."""
    formula = "response ~ cov.age + score"
    size = survey.stat().st_size
    monkeypatch.setattr(plain_table, "PLAIN_BYTES", size)
    assert read_plain_table(str(survey), "response", formula) is not None
    monkeypatch.setattr(plain_table, "PLAIN_BYTES", size - 1)
    assert read_plain_table(str(survey), "response", formula) is None


def test_formulas_that_need_patsy_are_not_plain(survey):
    for formula in ("response ~ cov.age:region", "response ~ I(score^2)", "response ~ np.log(cov.age)",
                    "response ~ 0", "response ~ nothere"):
        assert read_plain_table(str(survey), "response", formula) is None, formula


def test_an_unknown_answer_names_the_same_line(survey, tmp_path, monkeypatch, capsys):
    """The error of a bad answer names the file's line, a Qualtrics export's two header rows counted."""
    with open(survey, newline="") as fh:
        rows = list(csv.reader(fh))
    rows[7][0] = "perhaps"
    plain = _write(tmp_path / "bad.csv", rows[0], rows[1:])
    qualtrics = _write(tmp_path / "bad-qualtrics.csv", rows[0], [["Q"] * 4, ['{"ImportId":"QID1"}'] * 4, *rows[1:]])
    for path, line in ((plain, 8), (qualtrics, 10)):
        argv = [str(path), "--mechanism", GWRR, "--formula", "response ~ score"]
        light = _fit(argv, monkeypatch, capsys, small=True)
        assert light == _fit(argv, monkeypatch, capsys, small=False)
        assert light[0] == 2 and f"line {line}:" in light[2] and "perhaps" in light[2]


def test_a_plain_table_is_refused_where_it_cannot_serve():
    """The fit refuses a PlainTable beside groups, weights or clusters (the front door never passes one there)."""
    table = PlainTable({"response": np.array(["yes", "no"], dtype=object), "w": np.array([1, 2])})
    mech = designer.Q_WRR(1.0)
    with pytest.raises(DesignerError, match="PlainTable"):
        designer.regression.regress("response ~ 1", table, mech, weights="w")
    with pytest.raises(DesignerError, match="missing must be one of"):
        designer.regression.regress("response ~ 1", table, mech, missing="keep")


def test_json_of_the_plain_path_is_valid(survey, monkeypatch, capsys):
    rc, out, _ = _fit([str(survey), "--mechanism", GWRR, "--formula", "response ~ score", "--format", "json"],
                      monkeypatch, capsys, small=True)
    assert rc == 0 and json.loads(out)["status"] == "converged"


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(columns=st.lists(_column, min_size=1, max_size=2), answers=st.lists(st.sampled_from(
    ["yes", "no", "{yes}", "{no}", "{yes,no}", "I don't know", " yes"]), min_size=8, max_size=40),
       sep=st.sampled_from([",", ";"]), categorical=st.booleans(), output=st.sampled_from(["text", "json"]))
def test_any_small_table_fits_the_same_through_either_path(columns, answers, sep, categorical, output, tmp_path_factory,
                                                           monkeypatch, capsys):
    """Over tables of any cells (numbers in every spelling, words, missing and padded cells): ``designer regress``
    says the same thing, exit status, output and errors, whether the file is read by the plain path or by the
    DataFrame path (the plain path declines what it does not take)."""
    n = len(answers)
    columns = [(c * n)[:n] for c in columns]
    header = ["response", *(f"x{j}" for j in range(len(columns)))]
    path = _write(tmp_path_factory.mktemp("fit") / "t.csv", header,
                  [[a, *(c[i] for c in columns)] for i, a in enumerate(answers)], sep)
    terms = [f"C({h})" if categorical and j == 0 else h for j, h in enumerate(header[1:])]
    argv = [str(path), "--mechanism", GWRR, "--formula", "response ~ " + " + ".join(terms), "--format", output]
    light = _fit(argv, monkeypatch, capsys, small=True)
    assert light == _fit(argv, monkeypatch, capsys, small=False)
    assert light[0] in (0, 2, 3), light


@pytest.mark.parametrize("index", [None, "text"])
def test_a_column_called_design_is_a_column(index):
    """A PlainTable hands its design to the fit through an attribute ``design``; a DataFrame's column of that name
    (with any index) is data, not a design: the fit is the one of the same frame with the column renamed."""
    rng = np.random.default_rng(2)
    n = 300
    frame = pd.DataFrame({"response": rng.choice(["{yes}", "{no}", "{yes,no}"], n), "age": rng.integers(18, 80, n),
                          "design": rng.choice(["a", "b"], n)})
    if index:
        frame.index = [f"r{i}" for i in range(n)]
    fits = [designer.regress(f"response ~ age + {c}", frame.rename(columns={"design": c}), GWRR)
            for c in ("design", "plan")]
    assert str(fits[0].status) == str(fits[1].status)
    assert np.allclose(fits[0].params, fits[1].params)
