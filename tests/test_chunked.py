"""Regression on data read in chunks (designer.regression.chunked, regress on large files and Parquet datasets):
counted distinct rows and streamed Newton passes give the in-memory fit of every row, under every variance
choice; a survey replicated m times gives the same coefficients and standard errors divided by sqrt(m); errors
name the data's line; a Dask cluster gives one machine's answer."""

from __future__ import annotations

import json
import os

import numpy as np
import pandas as pd
import pytest

import designer.regression.chunked as chunked
from designer import Mechanism
from designer.cli import main
from designer.estimation.sampling import randomize
from designer.regression import regress
from designer.regression.chunked import regress_chunks

GWRR = "examples/mechanisms/gwrr.csv"
WARNER = Mechanism(np.array([[0.8, 0.2], [0.2, 0.8]]), inputs=["yes", "no"], frame=["yes", "no"], focal=[1, 2])


def _survey(n: int = 6000, seed: int = 3) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    x = rng.normal(size=n)
    c = rng.integers(0, 3, n)
    truth = np.where(rng.random(n) < 1 / (1 + np.exp(-(0.6 * x - 0.4 + 0.5 * c))), "yes", "no")
    answers = np.array(WARNER.columns)[randomize(WARNER, truth, rng=rng)]
    return pd.DataFrame({"a": answers, "x": x, "c": c, "xr": x.round(1), "school": rng.integers(0, 30, n),
                         "w": rng.uniform(0.5, 2.0, n), "times": rng.integers(1, 4, n)})


def _chunks(data: pd.DataFrame, size: int):
    return lambda: ((s, data.iloc[s:s + size].reset_index(drop=True)) for s in range(0, len(data), size))


def _same(a, b, tol: float) -> None:
    np.testing.assert_allclose(a.params, b.params, rtol=0, atol=tol)
    np.testing.assert_allclose(a.coefficients["stderr"], b.coefficients["stderr"], rtol=tol)
    assert (a.n, a.status, a.variance, a.dropped) == (b.n, b.status, b.variance, b.dropped)
    assert a.loglik == pytest.approx(b.loglik, rel=1e-12, abs=1e-9)


@pytest.mark.parametrize("options", [{}, {"cov": "opg"}, {"cov": "robust"}, {"cluster": "school"},
                                     {"weights": "times", "weight_kind": "frequency", "cov": "robust"}])
def test_counted_rows_give_the_fit_of_every_row(options):
    data = _survey()
    whole = regress("a ~ xr + C(c)", data, WARNER, **options)
    counted = regress_chunks("a ~ xr + C(c)", _chunks(data, 700), WARNER, columns=list(data.columns), **options)
    _same(counted, whole, 1e-10)


@pytest.mark.parametrize("options", [{}, {"cov": "opg"}, {"cov": "robust"}, {"cluster": "school"},
                                     {"weights": "w"}, {"weights": "times", "weight_kind": "frequency"}])
def test_streamed_newton_passes_give_the_fit_of_every_row(monkeypatch, options):
    """Continuous covariates (no row repeats): the likelihood's sums over chunks, one pass a Newton step, from
    the fit of a small sample (so the passes do the work)."""
    monkeypatch.setattr(chunked, "SAMPLE_ROWS", 300)
    data = _survey()
    whole = regress("a ~ x + C(c)", data, WARNER, **options)
    streamed = regress_chunks("a ~ x + C(c)", _chunks(data, 500), WARNER, columns=list(data.columns),
                              max_patterns=100, **options)
    _same(streamed, whole, 1e-9)
    assert whole.lr_statistic == pytest.approx(streamed.lr_statistic, rel=1e-9, nan_ok=True)


def test_streamed_fit_of_precise_answers_and_three_inputs(monkeypatch):
    monkeypatch.setattr(chunked, "SAMPLE_ROWS", 300)
    rng = np.random.default_rng(8)
    mech = Mechanism(np.array([[0.6, 0.2, 0.2], [0.2, 0.6, 0.2], [0.2, 0.2, 0.6]]), inputs=["a", "b", "c"],
                     frame=["a", "b", "c"], focal=[1, 2, 4])
    x = rng.normal(size=4000)
    eta = np.column_stack([0.5 * x, -0.3 * x + 0.2, np.zeros_like(x)])
    p = np.exp(eta) / np.exp(eta).sum(axis=1, keepdims=True)
    truth = np.array(["a", "b", "c"])[(rng.random(4000)[:, None] > p.cumsum(axis=1)).sum(axis=1)]
    data = pd.DataFrame({"r": np.array(mech.columns)[randomize(mech, truth, rng=rng)], "x": x})
    whole = regress("r ~ x", data, mech, reference="c")
    streamed = regress_chunks("r ~ x", _chunks(data, 900), mech, columns=["r", "x"], reference="c", max_patterns=50)
    _same(streamed, whole, 1e-9)
    assert list(streamed.coefficients["outcome"]) == ["a", "a", "b", "b"]


def test_a_replicated_survey_in_parquet_gives_the_same_coefficients_and_smaller_errors(tmp_path, capsys):
    """The issue's check at a size a test can afford: a 2,000-row survey replicated 500 times (10^6 rows, in row
    groups of 2,000), read in chunks: the coefficients of the survey (1e-8) and standard errors / sqrt(500)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    small = pd.read_csv("examples/regress.csv", dtype={"response": str})
    table = pa.Table.from_pandas(small, preserve_index=False)
    path = tmp_path / "big.parquet"
    with pq.ParquetWriter(path, table.schema) as writer:
        for _ in range(500):
            writer.write_table(table)
    args = ["--mechanism", GWRR, "--formula", "response ~ age + religious", "--format", "json"]
    assert main(["regress", "examples/regress.csv", *args]) == 0
    one = json.loads(capsys.readouterr().out)
    assert main(["regress", str(path), *args, "--chunk-rows", "100000"]) == 0
    many = json.loads(capsys.readouterr().out)
    assert many["n"] == 500 * one["n"] and many["status"] == one["status"] == "converged"
    for a, b in zip(one["coefficients"], many["coefficients"]):
        assert b["estimate"] == pytest.approx(a["estimate"], abs=1e-8)
        assert b["stderr"] * np.sqrt(500) == pytest.approx(a["stderr"], rel=1e-6)
    assert many["loglik"] == pytest.approx(500 * one["loglik"], rel=1e-10)


def test_a_dataset_folder_a_large_file_and_chunks_agree(tmp_path, capsys):
    data = _survey(3000)
    data.to_csv(tmp_path / "d.csv", index=False)
    folder = tmp_path / "parts"
    folder.mkdir()
    for i in range(3):
        data.iloc[i * 1000:(i + 1) * 1000].to_parquet(folder / f"part-{i}.parquet")
    outputs = []
    for source, extra in [("d.csv", []), ("d.csv", ["--chunk-rows", "1000"]), ("parts", [])]:
        assert main(["regress", str(tmp_path / source), "--mechanism", "examples/mechanisms/warner-80.csv",
                     "--formula", "a ~ x + C(c)", "--format", "json", *extra]) == 0
        out = json.loads(capsys.readouterr().out)
        outputs.append(out)
    for out in outputs[1:]:
        assert out["n"] == outputs[0]["n"] and out["status"] == outputs[0]["status"]
        for a, b in zip(out["coefficients"], outputs[0]["coefficients"]):
            assert a["estimate"] == pytest.approx(b["estimate"], abs=1e-9)
            assert a["stderr"] == pytest.approx(b["stderr"], rel=1e-9)


def test_errors_in_a_later_chunk_name_the_data_line(tmp_path, capsys):
    data = pd.read_csv("examples/regress.csv", dtype={"response": str})
    bad = data.copy()
    bad.loc[1500, "response"] = "{maybe}"
    bad.to_csv(tmp_path / "bad.csv", index=False)
    args = ["--mechanism", GWRR, "--formula", "response ~ age + religious", "--chunk-rows", "1000"]
    assert main(["regress", str(tmp_path / "bad.csv"), *args]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"designer: error: {tmp_path / 'bad.csv'}: line 1502: ") and "'{maybe}'" in err
    assert err.count("\n") == 1
    gap = data.copy()
    gap.loc[1700, "age"] = np.nan
    gap.to_csv(tmp_path / "gap.csv", index=False)
    assert main(["regress", str(tmp_path / "gap.csv"), *args]) == 2
    assert "line 1702: no value in column 'age'" in capsys.readouterr().err
    assert main(["regress", str(tmp_path / "gap.csv"), *args, "--missing", "drop", "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["dropped"] == 1
    text = data.astype({"age": object})
    text.loc[1900, "age"] = "old"
    text.to_csv(tmp_path / "text.csv", index=False)
    assert main(["regress", str(tmp_path / "text.csv"), *args]) == 2
    assert "line 1902" in capsys.readouterr().err


def test_what_streamed_passes_cannot_fit_is_refused_with_the_reason(monkeypatch):
    data = _survey(2000)
    with pytest.raises(chunked.RegressionError, match="streamed Newton steps, which do not cover --penalty"):
        regress_chunks("a ~ x", _chunks(data, 500), WARNER, columns=list(data.columns), max_patterns=10,
                       penalty="firth")


def test_the_streamed_fit_leaves_no_temporary_files(tmp_path, monkeypatch):
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.setattr(chunked, "SAMPLE_ROWS", 300)
    data = _survey(2000)
    regress_chunks("a ~ x", _chunks(data, 500), WARNER, columns=list(data.columns), max_patterns=10)
    assert os.listdir(tmp_path) == []


def _here_and_on_a_cluster(tmp_path, capsys, extra: list[str]) -> tuple[dict, dict]:
    """The JSON of regress on a 3-part dataset here, and on a local Dask cluster of two worker processes."""
    distributed = pytest.importorskip("distributed")
    data = _survey(3000)
    folder = tmp_path / "parts"
    folder.mkdir()
    for i in range(3):
        data.iloc[i * 1000:(i + 1) * 1000].to_parquet(folder / f"part-{i}.parquet")
    args = ["regress", str(folder), "--mechanism", "examples/mechanisms/warner-80.csv", *extra, "--format", "json"]
    assert main(args) == 0
    local = json.loads(capsys.readouterr().out)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                                  silence_logs=50) as cluster:
        assert main([*args, "--scheduler", cluster.scheduler_address]) == 0, capsys.readouterr().err
        remote = json.loads(capsys.readouterr().out)
    for a, b in zip(local["coefficients"], remote["coefficients"]):
        assert a["estimate"] == pytest.approx(b["estimate"], abs=1e-10)
        assert a["stderr"] == pytest.approx(b["stderr"], rel=1e-9)
    return local, remote


def test_a_dask_cluster_counts_the_parts_and_gives_one_machines_fit(tmp_path, capsys):
    local, remote = _here_and_on_a_cluster(tmp_path, capsys, ["--formula", "a ~ xr + C(c)"])
    assert {k: v for k, v in local.items() if k != "coefficients"} == \
        {k: v for k, v in remote.items() if k != "coefficients"}


CALLED: list[str] = []


def _sequential(function, items, **shared):
    CALLED.append(function.__name__)
    return [function(*item, **shared) for item in items]


def _parts_plan(tmp_path, data: pd.DataFrame, parts: int = 3, answers: str = "a"):
    """A plan over ``parts`` Parquet files of ``data`` whose map runs each part's task here in turn, as a Dask
    cluster's workers would."""
    from designer.regression.regress_input import part_chunks
    from designer.regression.remote import ClusterPlan

    folder = tmp_path / "parts"
    folder.mkdir()
    size = -(-len(data) // parts)
    paths = []
    for i in range(parts):
        path = folder / f"part-{i}.parquet"
        data.iloc[i * size:(i + 1) * size].to_parquet(path)
        paths.append(str(path))
    needed = list(data.columns)
    return ClusterPlan(map=_sequential, parts=tuple(paths), reader=part_chunks,
                       reader_kwargs={"needed": needed, "answers": answers, "chunk_rows": 700})


@pytest.mark.parametrize(("formula", "options"), [("a ~ x + C(c)", {}), ("a ~ x + np.log(w)", {"cov": "robust"}),
                                                  ("a ~ x", {"cluster": "school"}),
                                                  ("a ~ x + C(c)", {"weights": "times", "weight_kind": "frequency"}),
                                                  ("a ~ center(x)", {})])
def test_the_passes_of_a_cluster_plan_give_the_fit_of_every_row(tmp_path, monkeypatch, formula, options):
    """Every pass run part by part (a plan whose map runs the tasks in turn, as a cluster would): the first pass,
    the Newton passes (each worker rebuilding the design from the reference frame) and the last; a stateful
    transform (center) passes here instead, with the same answer."""
    monkeypatch.setattr(chunked, "SAMPLE_ROWS", 300)
    data = _survey(3000)
    data["c"] = np.array(["north", "south", "east"])[data["c"].to_numpy()]  # text levels, not all in the sample
    plan = _parts_plan(tmp_path, data)
    whole = regress(formula, data, WARNER, **options)
    CALLED.clear()
    remote = regress_chunks(formula, _chunks(data, 500), WARNER, columns=list(data.columns), max_patterns=100,
                            plan=plan, **options)
    _same(remote, whole, 1e-9)
    assert CALLED[0] == "scan_part"
    if "center" in formula:  # learns the mean from the data it sees: the passes ran here
        assert CALLED == ["scan_part"]
    else:
        assert "part_sums" in CALLED and "part_final" in CALLED


def test_a_streamed_fit_on_a_dask_cluster_is_one_machines(tmp_path, capsys):
    local, remote = _here_and_on_a_cluster(tmp_path, capsys, ["--formula", "a ~ x + C(c)", "--max-distinct", "100",
                                                              "--cov", "robust"])
    assert (local["n"], local["status"]) == (remote["n"], remote["status"])


def test_a_workers_error_names_its_part_and_the_row_in_it(tmp_path, monkeypatch):
    """A bad answer after a dropped row, in the second part, found by a Newton pass on a worker: the message names
    the part and the row's place in it (21st row), not its place among the rows kept (20th)."""
    monkeypatch.setattr(chunked, "SAMPLE_ROWS", 300)
    data = _survey(3000)
    data.loc[1009, "x"] = np.nan
    data.loc[1020, "a"] = "{maybe}"
    plan = _parts_plan(tmp_path, data)
    with pytest.raises(chunked.RegressionError) as info:
        regress_chunks("a ~ x", _chunks(data, 500), WARNER, columns=list(data.columns), max_patterns=10,
                       plan=plan, missing="drop")
    assert str(info.value).startswith(f"{plan.parts[1]}: row 21: ") and "'{maybe}'" in str(info.value)
