"""No released byte carries the input order (issue 56, item 1): a file and random permutations of it are released
into every format and through a DataFrame, and nothing in the output's encoding (the frame's index, a kept
column's dictionary indices, row groups, statistics, metadata, the row order) correlates with the input position."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import designer

N = 400
#: |Spearman rho| above this is a correlation (4 standard deviations of rho for 400 independent rows).
RHO = 0.2


def _rho(a: np.ndarray, b: np.ndarray) -> float:
    """Spearman's rank correlation, written out (ranks of distinct values)."""
    ra, rb = np.argsort(np.argsort(a)), np.argsort(np.argsort(b))
    if np.all(ra == ra[0]) or np.all(rb == rb[0]):
        return 0.0
    return float(np.corrcoef(ra, rb)[0, 1])


def _input(order: np.ndarray) -> pa.Table:
    """Rows in ``order``: ``pos`` (the input position), ``tag`` dictionary-encoded in first-appearance order (its
    index is the position), and the answers; schema metadata naming a pandas index."""
    pos = np.arange(N)
    answers = np.where(order % 3 == 0, "yes", "no")
    tags = pa.array([f"t{int(p):04d}" for p in order]).dictionary_encode()
    table = pa.table({"pos": pa.array(pos), "tag": tags, "answer": pa.array(answers)})
    return table.replace_schema_metadata({b"pandas": b'{"index_columns": ["pos"]}'})


def _encodings(path, fmt: str) -> dict[str, np.ndarray]:
    """Every per-row feature of the output's encoding, and the input position of each output row."""
    out: dict[str, np.ndarray] = {}
    if fmt == "arrow":
        table = pa.ipc.open_file(pa.memory_map(str(path))).read_all()
        assert table.schema.metadata is None
    elif fmt == "parquet":
        file = pq.ParquetFile(str(path))
        table = file.read()
        assert b"pandas" not in (file.schema_arrow.metadata or {})
        groups = np.concatenate([np.full(file.metadata.row_group(g).num_rows, g)
                                 for g in range(file.metadata.num_row_groups)])
        out["row group"] = groups
    else:
        import csv

        with open(path, newline="") as fh:
            rows = list(csv.DictReader(fh))
        table = pa.table({"pos": [int(r["pos"]) for r in rows], "tag": [r["tag"] for r in rows]})
    tag = table.column("tag").combine_chunks()
    if pa.types.is_dictionary(tag.type):
        out["dictionary index"] = tag.indices.to_numpy(zero_copy_only=False)
    out["row"] = np.arange(table.num_rows)
    out["pos"] = table.column("pos").to_numpy()
    return out


@pytest.mark.parametrize("fmt", ["parquet", "arrow", "csv"])
def test_no_encoding_of_a_released_file_follows_the_input_position(tmp_path, fmt):
    rng = np.random.default_rng(7)
    for k, order in enumerate([np.arange(N), rng.permutation(N), rng.permutation(N)]):
        source = tmp_path / f"in{k}.parquet"
        pq.write_table(_input(order), source)
        out = tmp_path / f"out{k}.{fmt}"
        designer.randomize(str(source), "warner-80", column="answer", keep=["pos", "tag"], out=str(out), seed=k + 1,
                           simulation=True)
        enc = _encodings(out, fmt)
        input_position = enc.pop("pos")
        assert sorted(input_position.tolist()) == list(range(N))
        assert "dictionary index" not in enc  # a kept dictionary is written as its values
        for name, feature in enc.items():
            assert abs(_rho(feature, input_position)) < RHO, (fmt, k, name)


def test_a_released_frame_has_a_fresh_index_and_sorted_categories():
    import pandas as pd

    frame = pd.DataFrame({"pos": np.arange(N), "answer": np.where(np.arange(N) % 3 == 0, "yes", "no"),
                          "city": pd.Categorical([f"c{i}" for i in range(N)], categories=[f"c{i}" for i in
                                                                                            range(N)][::-1])})
    released = designer.randomize(frame, "warner-80", column="answer", keep=["pos", "city"], seed=3,
                                  simulation=True).frame
    assert released.index.tolist() == list(range(N))
    assert list(released["city"].cat.categories) == sorted(f"c{i}" for i in range(N))
    assert abs(_rho(released["pos"].to_numpy(), np.arange(N))) < RHO
    kept = designer.randomize(frame, "warner-80", column="answer", keep=["pos"], seed=3, simulation=True,
                              keep_order=True).frame
    assert kept.index.tolist() == list(range(N)) and kept["pos"].tolist() == list(range(N))


@pytest.mark.parametrize(("name", "words"), [("x.xlsx", "does not write .xlsx"), ("x.tsv", "does not write .tsv"),
                                             ("x.sas7bdat", "reads this format but does not write it")])
def test_an_output_designer_does_not_write_is_refused(tmp_path, capsys, name, words):
    from designer.cli import main

    source = tmp_path / "in.csv"
    source.write_text("answer\nyes\nno\n")
    code = main(["randomize", str(source), "--mechanism", "warner-80", "--column", "answer", "--out",
                 str(tmp_path / name), "--seed", "1", "--simulation"])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and words in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.csv"]


@pytest.mark.parametrize("suffix", [".sav", ".dta"])
def test_a_time_past_what_spss_or_stata_give_back_is_refused(tmp_path, capsys, suffix):
    import datetime

    from designer.cli import main

    pytest.importorskip("pyreadstat")
    source = tmp_path / "in.parquet"
    pq.write_table(pa.table({"when": pa.array([datetime.datetime(9999, 12, 31, 23, 59, 59, 999999),
                                               datetime.datetime(2020, 1, 1)], pa.timestamp("us")),
                             "answer": ["yes", "no"]}), source)
    code = main(["randomize", str(source), "--mechanism", "warner-80", "--column", "answer", "--keep", "when",
                 "--out", str(tmp_path / f"out{suffix}"), "--seed", "1", "--simulation"])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "'when' holds 9999-12-31 23:59:59.999999" in err
