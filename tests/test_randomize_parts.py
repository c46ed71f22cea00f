"""randomize on a partitioned Parquet dataset: part by part into a new folder of parts whose rows are a uniform
random permutation of all the rows (here or on a Dask cluster), the same seeded simulation however the parts are
scheduled (one child of the seed per part), the manifest naming every part with its SHA-256, the released answers
drawn from the certified table (chi-square), and the refusals."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from designer.cli import main

WARNER = "examples/mechanisms/warner-80.csv"


def _dataset(folder: Path, n: int = 400, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    data = pd.DataFrame({"id": np.arange(1, n + 1), "drugs": np.where(rng.random(n) < 0.3, "yes", "no"),
                         "region": rng.choice(["north", "south"], n)})
    (folder / "sub").mkdir(parents=True)
    data.iloc[: n // 3].to_parquet(folder / "a.parquet")
    data.iloc[n // 3: 2 * n // 3].to_parquet(folder / "sub" / "b.parquet")
    data.iloc[2 * n // 3:].to_parquet(folder / "c.parquet")
    return data


def _parts(folder: Path) -> dict[str, pd.DataFrame]:
    return {str(p.relative_to(folder)): pd.read_parquet(p) for p in sorted(folder.rglob("*.parquet"))}


def test_a_seeded_dataset_is_the_same_here_and_on_a_dask_cluster(tmp_path, capsys):
    distributed = pytest.importorskip("distributed")
    _dataset(tmp_path / "ds")
    args = ["randomize", str(tmp_path / "ds"), "--variable", f"drugs={WARNER}", "--keep", "id", "--seed", "7",
            "--simulation"]
    assert main([*args, "--out", str(tmp_path / "here")]) == 0
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                                  silence_logs=50) as cluster:
        assert main([*args, "--out", str(tmp_path / "there"), "--scheduler", cluster.scheduler_address]) == 0
    capsys.readouterr()
    here, there = _parts(tmp_path / "here"), _parts(tmp_path / "there")
    assert list(here) == ["part-00000.parquet"] == list(there)  # the input's parts and names are not released
    for name in here:
        pd.testing.assert_frame_equal(here[name], there[name])
    first = json.loads((tmp_path / "here.manifest.json").read_text())
    second = json.loads((tmp_path / "there.manifest.json").read_text())
    assert first["parts"] == second["parts"] and first["rows"] == 400
    for part in first["parts"]:
        digest = hashlib.sha256((tmp_path / "here" / part["part"]).read_bytes()).hexdigest()
        assert part["sha256"] == digest and part["rows"] == len(here[part["part"]])
    assert "one child of the seed per part (3 parts)" in first["random_source"]
    assert "seed" not in json.dumps(first["parts"])


def test_a_released_dataset_keeps_ids_and_draws_from_the_certified_table(tmp_path, capsys):
    from scipy.stats import chisquare

    data = _dataset(tmp_path / "ds", n=30_000, seed=2)
    assert main(["randomize", str(tmp_path / "ds"), "--variable", f"drugs={WARNER}", "--keep", "id", "--out",
                 str(tmp_path / "out")]) == 0
    capsys.readouterr()
    released = pd.concat(_parts(tmp_path / "out").values())  # kept columns as stored: integers
    assert str(released["id"].dtype) == "int64"
    assert released["id"].tolist() != data["id"].tolist()  # shuffled
    released = released.sort_values("id").reset_index(drop=True)
    assert released["id"].tolist() == data["id"].tolist()
    assert set(released.columns) == {"id", "drugs"}
    for truth, p_yes in (("yes", 0.8), ("no", 0.2)):
        got = released.loc[data["drugs"] == truth, "drugs"]
        counts = [(got == "{yes}").sum(), (got == "{no}").sum()]
        assert sum(counts) == len(got)
        assert chisquare(counts, [len(got) * p_yes, len(got) * (1 - p_yes)]).pvalue > 1e-4


def test_a_dataset_into_one_file_and_the_refusals(tmp_path, capsys):
    _dataset(tmp_path / "ds")
    assert main(["randomize", str(tmp_path / "ds"), "--variable", f"drugs={WARNER}", "--keep", "id,region",
                 "--out", str(tmp_path / "one.parquet")]) == 0
    one = pd.read_parquet(tmp_path / "one.parquet")
    order = [*range(1, 134), *range(267, 401), *range(134, 267)]  # the parts in name order: a, c, sub/b
    assert len(one) == 400 and sorted(one["id"].tolist()) == list(range(1, 401))  # the integer ids stay integers
    assert one["id"].tolist() != order  # in a uniformly random order
    capsys.readouterr()
    assert main(["randomize", str(tmp_path / "ds"), "--variable", f"drugs={WARNER}", "--keep", "id,region",
                 "--out", str(tmp_path / "kept.parquet"), "--keep-order"]) == 0
    assert pd.read_parquet(tmp_path / "kept.parquet")["id"].tolist() == order
    assert "--keep-order writes the rows in the input's order" in capsys.readouterr().err
    for name in ("kept.parquet", "kept.parquet.manifest.json"):
        (tmp_path / name).unlink()
    capsys.readouterr()
    (tmp_path / "taken").mkdir()
    assert main(["randomize", str(tmp_path / "ds"), "--variable", f"drugs={WARNER}", "--out",
                 str(tmp_path / "taken")]) == 2
    assert "already exists" in capsys.readouterr().err
    assert main(["randomize", "examples/data/three-questions.csv", "--variable", f"drugs={WARNER}", "--out",
                 str(tmp_path / "x.csv"), "--scheduler", "tcp://127.0.0.1:1"]) == 2
    assert "--scheduler randomizes a Parquet dataset part by part" in capsys.readouterr().err
    assert not (tmp_path / "x.csv").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["designer-ledger.json", "ds", "one.parquet",
                                                          "one.parquet.manifest.json", "taken"]


def test_a_bad_row_in_a_part_names_the_part_and_leaves_no_folder(tmp_path, capsys):
    data = _dataset(tmp_path / "ds")
    broken = data.iloc[2 * 400 // 3:].copy()
    broken.iloc[5, broken.columns.get_loc("drugs")] = "perhaps"
    broken.to_parquet(tmp_path / "ds" / "c.parquet")
    assert main(["randomize", str(tmp_path / "ds"), "--variable", f"drugs={WARNER}", "--out",
                 str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert "c.parquet" in err and "'perhaps'" in err and err.count("\n") == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ds"]
