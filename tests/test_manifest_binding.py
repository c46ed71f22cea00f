"""Attacks on a release's manifest (issue 56, item 2; docs/guide/release.md, "Manifests"): a part added to a folder
release after it, a manifest whose parts list is empty, a forged DataFrame of the release's length, a manifest nested
200,000 deep, a named pipe or /dev/zero as --manifest, a repaired release estimated through its plain design, and a
kept copy of the randomized column. Each is refused in one line with exit status 2. The canonical SHA-256 of a frame
is checked on random frames: equal for the same cells whatever the column order and index, different when one cell
changes."""

from __future__ import annotations

import hashlib
import json
import os
import string
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from designer.cli import main
from designer.exceptions import DesignerError

ROOT = Path(__file__).resolve().parents[1]
WARNER = ROOT / "examples" / "mechanisms" / "warner-80.csv"


def _run(capsys, *argv) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def _one_line_refusal(code: int, out: str, err: str) -> None:
    assert code == 2 and out == "" and err.count("\n") == 1 and err.startswith("designer: error: "), (code, err)
    assert "Traceback" not in err and "RecursionError" not in err


def _truth(path: Path, n: int = 240) -> None:
    rng = np.random.default_rng(5)
    answers = np.where(rng.random(n) < 0.3, "yes", "no")
    path.write_text("id,answer\n" + "".join(f"{i},{a}\n" for i, a in enumerate(answers)))


@pytest.fixture
def release(tmp_path, capsys) -> Path:
    _truth(tmp_path / "truth.csv")
    assert _run(capsys, "randomize", tmp_path / "truth.csv", "--mechanism", WARNER, "--column", "answer", "--keep",
                "id", "--out", tmp_path / "r.csv")[0] == 0
    return tmp_path


def test_a_part_added_after_a_folder_release_and_an_empty_parts_list_are_refused(tmp_path, capsys):
    (tmp_path / "ds").mkdir()
    frame = pd.DataFrame({"id": range(300), "answer": ["yes" if i % 3 == 0 else "no" for i in range(300)]})
    frame.iloc[:150].to_parquet(tmp_path / "ds" / "a.parquet")
    frame.iloc[150:].to_parquet(tmp_path / "ds" / "b.parquet")
    code, _, err = _run(capsys, "randomize", tmp_path / "ds", "--variable", f"answer={WARNER}", "--out",
                        tmp_path / "out")
    assert code == 0, err
    manifest = tmp_path / "out.manifest.json"
    record = json.loads(manifest.read_text())
    parts = sorted(p.name for p in (tmp_path / "out").iterdir())
    assert [p["part"] for p in record["parts"]] == parts and sum(p["rows"] for p in record["parts"]) == 300
    for p in record["parts"]:  # each part with its SHA-256, recomputed here
        assert p["sha256"] == hashlib.sha256((tmp_path / "out" / p["part"]).read_bytes()).hexdigest()
    assert _run(capsys, "estimate", tmp_path / "out", "--manifest", manifest, "--column", "answer")[0] == 0
    # a part of "yes" answers dropped in after the release
    pd.DataFrame({"answer": ["{yes}"] * 3000}).to_parquet(tmp_path / "out" / "part-99999.parquet")
    code, out, err = _run(capsys, "estimate", tmp_path / "out", "--manifest", manifest, "--column", "answer")
    _one_line_refusal(code, out, err)
    assert "part-99999.parquet" in err and "does not list" in err
    (tmp_path / "out" / "part-99999.parquet").unlink()
    record["parts"] = []
    manifest.write_text(json.dumps(record))
    code, out, err = _run(capsys, "estimate", tmp_path / "out", "--manifest", manifest, "--column", "answer")
    _one_line_refusal(code, out, err)
    assert "lists no parts" in err


def test_a_forged_dataframe_of_the_same_length_is_refused(release):
    from designer import estimate

    manifest = release / "r.csv.manifest.json"
    real = pd.read_csv(release / "r.csv")
    fit = estimate(real, manifest=manifest)  # the release read as pandas reads it
    shuffled_columns = real[list(reversed(real.columns))].set_axis(range(1000, 1000 + len(real)))
    assert estimate(shuffled_columns, manifest=manifest).estimate.tolist() == fit.estimate.tolist()
    forged = real.copy()
    forged["response"] = "{yes}"  # the same length, every answer changed
    with pytest.raises(DesignerError, match="is not the release"):
        estimate(forged, manifest=manifest)
    one = real.copy()
    one.loc[0, "response"] = "{no}" if one.loc[0, "response"] == "{yes}" else "{yes}"  # a single answer changed
    with pytest.raises(DesignerError, match="is not the release"):
        estimate(one, manifest=manifest)
    with pytest.raises(DesignerError, match="is not the release"):
        estimate(real.iloc[::-1], manifest=manifest)  # the rows reordered


def test_a_manifest_nested_200000_deep_is_one_line(release, capsys):
    deep = release / "deep.json"
    deep.write_text('{"variables": ' + "[" * 200_000 + "]" * 200_000 + "}")
    code, out, err = _run(capsys, "estimate", release / "r.csv", "--manifest", deep)
    _one_line_refusal(code, out, err)
    assert "nested more than" in err


@pytest.mark.timeout(60)
@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes")
def test_a_named_pipe_or_a_device_as_manifest_is_refused_without_waiting(release, capsys):
    fifo = release / "pipe.json"
    os.mkfifo(fifo)
    code, out, err = _run(capsys, "estimate", release / "r.csv", "--manifest", fifo)
    _one_line_refusal(code, out, err)
    assert "is a named pipe, not a regular file" in err
    code, out, err = _run(capsys, "estimate", release / "r.csv", "--manifest", "/dev/zero")
    _one_line_refusal(code, out, err)
    assert "is a device, not a regular file" in err and "too large" not in err


def test_a_repaired_release_is_not_estimated_through_its_plain_design(tmp_path, capsys):
    gwrr = tmp_path / "gwrr.json"
    assert _run(capsys, "design", ROOT / "problems" / "gwrr-dont-know.toml", "--out", gwrr)[0] == 0
    _truth(tmp_path / "truth.csv", 400)
    assert _run(capsys, "randomize", tmp_path / "truth.csv", "--mechanism", gwrr, "--column", "answer", "--out",
                tmp_path / "r.csv", "--semantics", "wldp", "--allocation", "1", "--repair")[0] == 0
    manifest = tmp_path / "r.csv.manifest.json"
    drawn = tmp_path / json.loads(manifest.read_text())["variables"][0]["drawn_mechanism"]["path"]
    for command, extra in (("estimate", ["--semantics", "wldp"]), ("regress", ["--formula", "response ~ 1"])):
        code, out, err = _run(capsys, command, tmp_path / "r.csv", "--mechanism", gwrr, *extra)
        _one_line_refusal(code, out, err)
        assert "drawn from a repaired channel" in err and f"--manifest {manifest}" in err
    assert _run(capsys, "estimate", tmp_path / "r.csv", "--manifest", manifest, "--semantics", "wldp")[0] == 0
    assert _run(capsys, "estimate", tmp_path / "r.csv", "--mechanism", drawn, "--semantics", "wldp")[0] == 0


def test_an_exact_copy_of_the_randomized_column_is_not_kept(tmp_path, capsys):
    rows = "".join(f"{i},{'yes' if i % 4 else 'no'},{'yes' if i % 4 else 'no'},{i % 7}\n" for i in range(200))
    (tmp_path / "t.csv").write_text("id,answer,shadow,age\n" + rows)
    code, out, err = _run(capsys, "randomize", tmp_path / "t.csv", "--mechanism", WARNER, "--column", "answer",
                          "--keep", "id,shadow,age", "--out", tmp_path / "r.csv")
    _one_line_refusal(code, out, err)
    assert "'answer'" in err and "'shadow'" in err and "'age'" not in err.split("drop")[1]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.csv"]  # nothing written, not even the ledger
    from designer import randomize

    frame = pd.read_csv(tmp_path / "t.csv")
    with pytest.raises(DesignerError, match="verbatim as 'shadow'"):
        randomize(frame, str(WARNER), column="answer", keep=["id", "shadow"], seed=1, simulation=True)
    almost = frame.assign(shadow=frame["answer"].where(frame.index != 5, "maybe"))  # one row differs: kept
    assert randomize(almost, str(WARNER), column="answer", keep=["shadow"], seed=1, simulation=True).n == 200


_CELLS = st.one_of(st.none(), st.integers(-10**6, 10**6), st.text(string.ascii_letters + "{},", max_size=6),
                   st.floats(allow_nan=False, allow_infinity=False, width=32))


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 4).flatmap(lambda k: st.tuples(
    st.lists(st.lists(_CELLS, min_size=k, max_size=k), min_size=1, max_size=12), st.randoms(use_true_random=False))))
def test_the_canonical_hash_of_a_frame(case):
    from designer._internal.canonical import frame_sha256

    rows, rnd = case
    k = len(rows[0])
    frame = pd.DataFrame({f"c{j}": pd.Series([r[j] for r in rows], dtype=object) for j in range(k)})
    columns = list(frame.columns)
    rnd.shuffle(columns)
    index = list(range(len(frame)))
    rnd.shuffle(index)
    same = frame[columns].set_axis([i * 7 + 3 for i in index])  # the columns permuted, another index
    assert frame_sha256(same) == frame_sha256(frame)
    i, j = rnd.randrange(len(frame)), rnd.randrange(k)
    cell = frame.iat[i, j]
    changed = frame.copy()
    changed.iat[i, j] = "x" + str(cell) if cell is not None else "0"
    assert frame_sha256(changed) != frame_sha256(frame)
