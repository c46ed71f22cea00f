"""Parquet in and out (pyarrow): the same survey as CSV and as Parquet gives the same output, byte for byte in
JSON; missing values and numbers in a Parquet column read as a CSV cell would."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from designer.cli import main

Q2X3 = "examples/mechanisms/q2x3.csv"


def _json(args, capsys):
    assert main([*args, "--format", "json"]) == 0, capsys.readouterr().err
    return json.loads(capsys.readouterr().out)


def test_randomize_writes_parquet_and_estimate_reads_it(tmp_path, capsys):
    csv_out, pq_out = tmp_path / "r.csv", tmp_path / "r.parquet"
    for out in (csv_out, pq_out):
        assert main(["randomize", "examples/answers.csv", "--mechanism", Q2X3, "--column", "answer", "--keep",
                     "id,region", "--out", str(out), "--seed", "5", "--simulation"]) == 0
    capsys.readouterr()
    as_csv = pd.read_csv(csv_out, dtype=str)
    as_parquet = pd.read_parquet(pq_out)
    assert as_parquet.equals(as_csv)
    for extra in ([], ["--cluster", "region"]):
        assert _json(["estimate", str(pq_out), "--mechanism", Q2X3, *extra], capsys) == \
            _json(["estimate", str(csv_out), "--mechanism", Q2X3, *extra], capsys)


def test_regress_reads_parquet(tmp_path, capsys):
    data = pd.read_csv("examples/regress.csv", dtype={"response": str})
    path = tmp_path / "regress.parquet"
    data.to_parquet(path)
    args = ["--mechanism", "examples/mechanisms/gwrr.csv", "--formula", "response ~ age + religious", "--reference",
            "no"]
    assert _json(["regress", str(path), *args], capsys)["coefficients"] == \
        _json(["regress", "examples/regress.csv", *args], capsys)["coefficients"]


def test_parquet_cells_read_as_csv_cells(tmp_path, capsys):
    """Integer labels read as their text, a missing answer is missing (an error naming its row, or dropped)."""
    from designer import Mechanism

    mech = Mechanism([[0.75, 0.25], [0.25, 0.75]], inputs=["1", "2"], frame=["1", "2"], focal=[1, 2])
    mech_path = tmp_path / "m.csv"
    mech.to_csv(mech_path)
    path = tmp_path / "a.parquet"
    pd.DataFrame({"response": pd.array([1, 2, None, 2, 1], dtype="Int64")}).to_parquet(path)
    assert main(["estimate", str(path), "--mechanism", str(mech_path)]) == 2
    assert "line 4: no answer in column 'response'" in capsys.readouterr().err
    out = _json(["estimate", str(path), "--mechanism", str(mech_path), "--missing", "drop"], capsys)
    assert out["n"] == 4 and out["dropped"] == 1
    bad = tmp_path / "bad.parquet"
    bad.write_text("not parquet")
    assert main(["estimate", str(bad), "--mechanism", Q2X3]) == 2
    err = capsys.readouterr().err
    assert "not a readable Parquet file" in err and err.count("\n") == 1
    assert main(["estimate", str(path), "--mechanism", str(mech_path), "--column", "answer"]) == 2
    assert "no column 'answer'" in capsys.readouterr().err


@pytest.mark.parametrize("rows", [0])
def test_an_empty_parquet_file_is_named(tmp_path, capsys, rows):
    path = tmp_path / "empty.parquet"
    pd.DataFrame({"response": pd.Series([], dtype=str)}).to_parquet(path)
    assert main(["estimate", str(path), "--mechanism", Q2X3]) == 2
    assert "no rows" in capsys.readouterr().err


def _dataset(tmp_path, parts: int = 3):
    """examples/answers.csv randomized once, then split into Parquet parts (one folder per region, as a
    partitioned dataset is laid out)."""
    import numpy as np

    from designer import Q_2x3
    from designer.estimation.sampling import randomize

    data = pd.read_csv("examples/answers.csv", dtype=str)
    q = Q_2x3(0.6, 0.2)
    data["response"] = [q.columns[j] for j in randomize(q, data["answer"].to_numpy(), rng=4)]
    folder = tmp_path / "dataset"
    for i, idx in enumerate(np.array_split(np.arange(len(data)), parts)):
        (folder / f"part={i}").mkdir(parents=True)
        data.iloc[idx][["id", "response"]].to_parquet(folder / f"part={i}" / "data.parquet")
    whole = tmp_path / "whole.csv"
    data[["id", "response"]].to_csv(whole, index=False)
    return folder, whole


def test_a_folder_of_parquet_parts_is_the_whole_file(tmp_path, capsys):
    folder, whole = _dataset(tmp_path)
    assert _json(["estimate", str(folder), "--mechanism", Q2X3], capsys) == \
        _json(["estimate", str(whole), "--mechanism", Q2X3], capsys)
    assert main(["estimate", str(whole), "--mechanism", Q2X3, "--scheduler", "tcp://127.0.0.1:1"]) == 2
    assert "is one file: drop --scheduler" in capsys.readouterr().err
    empty = tmp_path / "empty"
    empty.mkdir()
    assert main(["estimate", str(empty), "--mechanism", Q2X3]) == 2
    assert "without .parquet parts" in capsys.readouterr().err


def test_the_parts_counted_on_a_dask_cluster_give_the_same_estimate(tmp_path, capsys):
    distributed = pytest.importorskip("distributed")
    folder, whole = _dataset(tmp_path, parts=4)
    local = _json(["estimate", str(whole), "--mechanism", Q2X3], capsys)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                                  silence_logs=50) as cluster:
        remote = _json(["estimate", str(folder), "--mechanism", Q2X3, "--scheduler", cluster.scheduler_address],
                       capsys)
    assert remote == local


def test_synthesize_writes_parquet_with_typed_columns(tmp_path, capsys):
    """The same draw as the CSV (same seed), ids and covariates as numbers, categories and answers as text; a
    file of fewer rows than a chunk and one of several chunks."""
    for n in ("50", "70000"):
        args = ["synthesize", "problems/warner.toml", "--n", n, "--covariate", "age=normal(45,12)", "--covariate",
                "region=category(n:0.6,s:0.4)", "--covariate", "k=integer(1,5)", "--effect", "yes:age=0.03",
                "--seed", "3"]
        assert main([*args, "--out", str(tmp_path / f"s{n}.csv")]) == 0
        assert main([*args, "--out", str(tmp_path / f"s{n}.parquet")]) == 0
        capsys.readouterr()
        as_csv = pd.read_csv(tmp_path / f"s{n}.csv")
        as_parquet = pd.read_parquet(tmp_path / f"s{n}.parquet")
        assert str(as_parquet["id"].dtype) == "int64" and str(as_parquet["age"].dtype) == "float64"
        assert str(as_parquet["k"].dtype) == "int64"
        text = {"region": object, "answer": object}
        pd.testing.assert_frame_equal(as_parquet.astype(text), as_csv.astype(text))


def test_arrow_ipc_files_are_read_and_written_like_parquet(tmp_path, capsys):
    """Arrow IPC (Feather v2: .arrow, .feather) in for estimate, regress and randomize, out for randomize and
    synthesize: the same JSON as CSV in, the same table as Parquet out."""
    import pyarrow as pa
    import pyarrow.feather as feather
    import pyarrow.parquet as pq

    answers = pd.read_csv("examples/answers.csv", dtype=str)
    arrow = tmp_path / "answers.arrow"
    feather.write_feather(answers, arrow)
    assert _json(["estimate", str(arrow), "--mechanism", Q2X3, "--column", "answer"], capsys) == \
        _json(["estimate", "examples/answers.csv", "--mechanism", Q2X3, "--column", "answer"], capsys)
    data = pd.read_csv("examples/regress.csv", dtype={"response": str})
    feather.write_feather(data, tmp_path / "regress.feather")
    args = ["--mechanism", "examples/mechanisms/gwrr.csv", "--formula", "response ~ age + religious"]
    here = _json(["regress", str(tmp_path / "regress.feather"), *args], capsys)
    there = _json(["regress", "examples/regress.csv", *args], capsys)
    assert [c["estimate"] for c in here["coefficients"]] == pytest.approx([c["estimate"] for c in
                                                                           there["coefficients"]], abs=1e-12)
    for suffix in ("parquet", "arrow"):
        assert main(["randomize", str(arrow), "--mechanism", Q2X3, "--column", "answer", "--keep", "id", "--out",
                     str(tmp_path / f"r.{suffix}"), "--seed", "5", "--simulation"]) == 0
        assert main(["synthesize", "problems/warner.toml", "--n", "300", "--seed", "2", "--covariate",
                     "age=normal(40,10)", "--out", str(tmp_path / f"s.{suffix}")]) == 0
    capsys.readouterr()
    with pa.ipc.open_file(tmp_path / "r.arrow") as reader:
        assert reader.read_all().equals(pq.read_table(tmp_path / "r.parquet"))
    assert feather.read_table(tmp_path / "s.arrow").equals(pq.read_table(tmp_path / "s.parquet"))


def test_a_dataset_folder_reads_as_one_file_with_its_lines_counted_across_parts(tmp_path):
    """read_chunks over a folder: several chunks per part, the first line of each chunk counting every row of the
    parts before it (the header is line 1)."""
    from designer.tables.inputs import read_chunks

    data = pd.DataFrame({"id": [str(i) for i in range(1, 26)]})
    (tmp_path / "ds").mkdir()
    for i, (start, stop) in enumerate(((0, 7), (7, 18), (18, 25))):
        data.iloc[start:stop].to_parquet(tmp_path / "ds" / f"p{i}.parquet")
    chunks = list(read_chunks(str(tmp_path / "ds"), ["id"], chunk_rows=3))
    for line, chunk in chunks:
        assert chunk["id"].tolist() == [str(line - 1 + j) for j in range(len(chunk["id"]))]
    assert sum(len(c["id"]) for _, c in chunks) == 25
