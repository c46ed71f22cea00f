"""SPSS, Stata and SAS files (estimation/stat_files.py): read with their value labels as the answer words, giving
the estimates of the same data in CSV; written by the sink with the labels of the columns kept; a corrupt file is
one error line."""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from designer.cli import main
from designer.exceptions import DataError
from designer.tables.inputs import read_chunks
from designer.tables.stat_files import ColumnMeta
from designer.tables.writers import column_meta, table_sink

pyreadstat = pytest.importorskip("pyreadstat")

ROOT = Path(__file__).resolve().parents[1]
MECH = str(ROOT / "examples/mechanisms/q2x3.csv")
DRAW = ""  # set by _dyadic_mechanism
ANSWERS = {1: "yes", 2: "no", 3: "{yes,no}"}
REGIONS = {1: "north", 2: "south", 3: "east"}

@pytest.fixture(scope="module", autouse=True)
def _dyadic_mechanism(tmp_path_factory):
    """The mechanism randomize draws from: masses of 2^-k, drawn exactly over 2^32 (nothing mixed in)."""
    global DRAW
    path = tmp_path_factory.mktemp("mechanism") / "dyadic.csv"
    path.write_text('input,{yes},{no},"{yes,no}"\nyes,0.5,0.25,0.25\nno,0.25,0.5,0.25\n')
    DRAW = str(path)



def _survey(n: int = 400, seed: int = 3) -> pd.DataFrame:
    """Codes: the answer (1 yes, 2 no, 3 don't know) drawn with a logit in age, a region, an id."""
    rng = np.random.default_rng(seed)
    age = rng.integers(18, 80, n)
    p_yes = 1 / (1 + np.exp(-(age - 45) / 15))
    answer = np.where(rng.random(n) < 0.2, 3, np.where(rng.random(n) < p_yes, 1, 2))
    return pd.DataFrame({"id": np.arange(1, n + 1), "age": age, "region": rng.integers(1, 4, n), "smoke": answer})


def _as_words(codes: pd.DataFrame) -> pd.DataFrame:
    return codes.assign(region=codes.region.map(REGIONS), smoke=codes.smoke.map(ANSWERS))


def _write_all(folder: Path, codes: pd.DataFrame) -> dict[str, Path]:
    labels = {"smoke": ANSWERS, "region": REGIONS}
    paths = {k: folder / f"survey.{k}" for k in ("csv", "sav", "zsav", "dta")}
    _as_words(codes).to_csv(paths["csv"], index=False)
    pyreadstat.write_sav(codes, paths["sav"], variable_value_labels=labels, column_labels={"smoke": "Do you smoke?"})
    pyreadstat.write_sav(codes, paths["zsav"], variable_value_labels=labels, compress=True)
    pyreadstat.write_dta(codes, paths["dta"], variable_value_labels=labels)
    return paths


def _json(argv: list[str], capsys, codes: tuple[int, ...] = (0,)) -> dict:
    code = main([*argv, "--format", "json"])
    out, err = capsys.readouterr()
    assert code in codes, err
    return json.loads(out)


def _same(a, b, tol: float) -> bool:
    """Two JSON numbers equal to ``tol`` (an infinite one written "inf"/"-inf", a missing one null)."""
    if a is None or b is None or isinstance(a, str) or isinstance(b, str):
        return a == b
    return a == pytest.approx(b, abs=tol)


def test_labelled_files_give_the_csv_estimates(tmp_path, capsys):
    paths = _write_all(tmp_path, _survey())
    estimate = {k: _json(["estimate", str(p), "--mechanism", MECH, "--column", "smoke"], capsys)
                for k, p in paths.items()}
    # the answers are not drawn through the mechanism: the logit's likelihood rises to infinity along a split in
    # age (`separation`, exit 3, above the finite mode at -379.408): every format gives that verdict
    regress = {k: _json(["regress", str(p), "--mechanism", MECH, "--formula", "smoke ~ age + C(region)"], capsys,
                        (0, 3)) for k, p in paths.items()}
    chunks = {k: _json(["regress", str(p), "--mechanism", MECH, "--formula", "smoke ~ age + C(region)",
                        "--chunk-rows", "1000"], capsys, (0, 3)) for k, p in paths.items()}
    reference = estimate.pop("csv")
    assert reference["status"] == "converged" and 0.05 < reference["estimate"]["yes"] < 0.95
    for obj in estimate.values():
        assert obj["n"] == reference["n"] == 400 and obj["status"] == reference["status"]
        for word in ("yes", "no"):
            assert obj["estimate"][word] == pytest.approx(reference["estimate"][word], abs=1e-12)
            assert obj["stderr"][word] == pytest.approx(reference["stderr"][word], abs=1e-12)
    for fits in (regress, chunks):
        first = fits.pop("csv")
        terms = [c["term"] for c in first["coefficients"]]
        assert len(terms) == 4 and terms[0] == "Intercept" and terms[-1] == "age"
        assert first["status"] in ("converged", "separation")
        for fit in fits.values():
            assert fit["n"] == first["n"] and fit["status"] == first["status"]
            assert fit["loglik"] == pytest.approx(first["loglik"], abs=1e-8)
            assert [c["term"] for c in fit["coefficients"]] == terms
            for a, b in zip(fit["coefficients"], first["coefficients"]):
                assert _same(a["estimate"], b["estimate"], 1e-6 * max(1.0, abs(float(b["estimate"]))))
                assert _same(a["stderr"], b["stderr"], 1e-8)


def test_chunks_of_a_labelled_file_are_the_csv_rows(tmp_path):
    """Read in chunks of 7 rows (row_offset / row_limit): the same text, row for row, as the CSV."""
    paths = _write_all(tmp_path, _survey(50))
    names = ["smoke", "region", "id"]
    text = [c for _, c in read_chunks(str(paths["csv"]), names)]  # a small CSV: the standard library's rows
    expected = pd.DataFrame({name: [str(v) for chunk in text for v in chunk[name]] for name in names})
    for kind in ("sav", "dta"):
        got = list(read_chunks(str(paths[kind]), names, chunk_rows=7))
        assert [line for line, _ in got] == list(range(2, 52, 7))
        frame = pd.concat([pd.DataFrame(c) for _, c in got]).reset_index(drop=True)
        assert frame.to_dict("list") == expected.reset_index(drop=True).to_dict("list")


def test_sas_transport_and_missing_values(tmp_path, capsys):
    """A SAS transport file (no labels: words stored as text) and a missing cell (NaN code) dropped as in CSV."""
    words = _as_words(_survey(200))
    words.loc[[3, 10], "smoke"] = ""
    words.to_csv(tmp_path / "s.csv", index=False)
    pyreadstat.write_xport(words, tmp_path / "s.xpt")
    codes = _survey(200).astype({"smoke": float})
    codes.loc[[3, 10], "smoke"] = np.nan
    pyreadstat.write_sav(codes, tmp_path / "s.sav", variable_value_labels={"smoke": ANSWERS})
    runs = [_json(["estimate", str(tmp_path / f"s.{k}"), "--mechanism", MECH, "--column", "smoke", "--missing",
                   "drop"], capsys) for k in ("csv", "xpt", "sav")]
    for obj in runs[1:]:
        assert obj["n"] == runs[0]["n"] == 198
        assert obj["estimate"]["yes"] == pytest.approx(runs[0]["estimate"]["yes"], abs=1e-12)
    assert main(["estimate", str(tmp_path / "s.sav"), "--mechanism", MECH, "--column", "smoke"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "s.sav" in err


def test_a_code_without_a_label_is_its_number(tmp_path, capsys):
    codes = _survey(30)
    codes.loc[4, "smoke"] = 9
    pyreadstat.write_sav(codes, tmp_path / "c.sav", variable_value_labels={"smoke": ANSWERS})
    assert main(["estimate", str(tmp_path / "c.sav"), "--mechanism", MECH, "--column", "smoke"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "c.sav" in err and "line 6" in err and "'9'" in err


@pytest.mark.parametrize("suffix", [".sav", ".zsav", ".por", ".dta", ".sas7bdat", ".xpt"])
@pytest.mark.parametrize("content", [b"", b"\x00" * 64, b"id,smoke\n1,yes\n", bytes(range(256)) * 4, "truncated"])
def test_corrupt_files_are_one_line(tmp_path, capsys, suffix, content):
    path = tmp_path / f"bad{suffix}"
    if content == "truncated":
        pyreadstat.write_sav(_survey(100), tmp_path / "whole.sav")
        content = (tmp_path / "whole.sav").read_bytes()[:700]
        os.remove(tmp_path / "whole.sav")
    path.write_bytes(content)
    for argv in (["estimate", str(path), "--mechanism", MECH, "--column", "smoke"],
                 ["regress", str(path), "--mechanism", MECH, "--formula", "smoke ~ age"],
                 ["randomize", str(path), "--mechanism", DRAW, "--column", "smoke", "--out", str(tmp_path / "o.csv")]):
        code = main(argv)
        out, err = capsys.readouterr()
        assert code == 2, err
        assert out == "" and err.count("\n") == 1 and str(path) in err
    assert sorted(os.listdir(tmp_path)) == [path.name]


def test_randomize_reads_and_writes_statistics_files(tmp_path, capsys):
    codes = _survey(300)
    paths = _write_all(tmp_path, codes.assign(smoke=codes.smoke.clip(upper=2)))  # true answers: yes or no
    for kind in ("sav", "dta"):
        out = tmp_path / f"released.{kind}"
        assert main(["randomize", str(paths[kind]), "--mechanism", DRAW, "--column", "smoke", "--keep", "id",
                     "--out", str(out), "--simulation", "--seed", "4"]) == 0, capsys.readouterr().err
        capsys.readouterr()
        frame, _ = getattr(pyreadstat, f"read_{kind}")(str(out))
        assert list(frame.columns) == ["id", "response"] and len(frame) == 300
        assert set(frame.response) <= {"{yes}", "{no}", "{yes,no}"}
        obj = _json(["estimate", str(out), "--mechanism", DRAW], capsys)
        assert obj["n"] == 300


def _read_back(path: Path) -> tuple[pd.DataFrame, object]:
    reader = pyreadstat.read_dta if path.suffix == ".dta" else pyreadstat.read_sav
    return reader(str(path))


@pytest.mark.parametrize("suffix", [".sav", ".zsav", ".dta"])
def test_the_sink_keeps_the_labels_of_the_kept_columns(tmp_path, suffix):
    """What randomize's call writes: the kept columns' codes and labels as in the input, numbers as numbers, the
    randomized column as text."""
    from designer._internal.io import atomic_writer

    codes = _survey(40)
    codes.loc[5, "region"] = 7  # a code without a label stays that code
    source = tmp_path / "in.sav"
    pyreadstat.write_sav(codes.astype({"region": float}), source,
                         variable_value_labels={"smoke": ANSWERS, "region": REGIONS},
                         column_labels={"region": "Where do you live?", "id": "respondent"})
    meta = column_meta(str(source), ["id", "region"])
    assert meta.value_labels == {"region": {float(k): v for k, v in REGIONS.items()}}
    assert meta.numeric == {"id", "region"} and meta.column_labels == {"region": "Where do you live?",
                                                                       "id": "respondent"}
    out = tmp_path / f"out{suffix}"
    names = ["id", "region", "response"]
    with atomic_writer(out, overwrite=False) as binary:
        sink = table_sink(str(out), binary, names, meta=meta)
        for _, chunk in read_chunks(str(source), ["id", "region"], chunk_rows=16):
            sink.write([chunk["id"], chunk["region"], np.array(["{yes}"] * len(chunk["id"]), dtype=object)])
        sink.close()
    frame, back = _read_back(out)
    assert list(frame.columns) == names
    assert frame["id"].tolist() == codes["id"].astype(float).tolist()
    assert frame["region"].tolist() == codes["region"].astype(float).tolist()
    assert {float(k): v for k, v in back.variable_value_labels["region"].items()} == {
        float(k): v for k, v in REGIONS.items()}
    assert "response" not in back.variable_value_labels and set(frame["response"]) == {"{yes}"}
    assert back.column_names_to_labels["region"] == "Where do you live?"


def test_the_sink_refuses_what_the_format_cannot_name(tmp_path):
    for suffix, name in ((".sav", "my column"), (".dta", "x" * 33), (".sav", "1st"), (".sav", "BY")):
        with open(tmp_path / "o.bin", "wb") as binary, pytest.raises(DataError, match=f"{name!r}"):
            table_sink(str(tmp_path / f"o{suffix}"), binary, ["id", name])
    for suffix in (".xpt", ".sas7bdat", ".por"):
        with open(tmp_path / "o.bin", "wb") as binary, pytest.raises(DataError, match="does not write"):
            table_sink(str(tmp_path / f"o{suffix}"), binary, ["id"])


def test_a_labelled_column_holding_another_word_is_written_as_text(tmp_path):
    out = tmp_path / "o.dta"
    with open(out, "wb") as binary:
        sink = table_sink(str(out), binary, ["smoke"], meta=ColumnMeta(value_labels={"smoke": {1.0: "yes"}}))
        sink.write([np.array(["yes", "maybe"], dtype=object)])
        sink.close()
    frame, back = _read_back(out)
    assert frame["smoke"].tolist() == ["yes", "maybe"] and not back.variable_value_labels


def test_pyreadstat_is_not_imported_by_the_cli():
    import subprocess
    import sys

    code = "import sys, designer.cli; designer.cli.build_parser(); print('pyreadstat' in sys.modules)"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert proc.stdout.strip() == "False"


def test_a_crash_of_the_reader_is_one_error_line(tmp_path, monkeypatch, capsys):
    """The C reader under pyreadstat crashes on some damaged files (a segmentation fault found by the fuzz test):
    it runs in a child process, so designer says which file and exits 2 instead of dying without a word."""
    import ctypes

    from designer.tables.stat_files import StatFile

    pyreadstat.write_sav(_survey(10), tmp_path / "s.sav")
    monkeypatch.setattr(StatFile, "_metadata", lambda self: ctypes.string_at(0))  # reads address 0: SIGSEGV
    assert main(["estimate", str(tmp_path / "s.sav"), "--mechanism", MECH, "--column", "smoke"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1 and "s.sav" in err and "SIGSEGV" in err
