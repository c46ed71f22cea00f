"""The budget ledger (issue 56, item 4; docs/guide/release.md, "The budget ledger"): a second release of the same
data states the composed loss exactly (twice the first's: the losses add), ``--budget-cap`` refuses a release past
the cap in one line with exit status 2 and writes nothing, ``designer audit --ledger`` prints the history, and the
ledger holds keyed fingerprints, never the values. The expected sums are computed here with fractions."""

from __future__ import annotations

import contextlib
import io
import json
import math
import os
import stat
import tempfile
from fractions import Fraction
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from designer.cli import main

ROOT = Path(__file__).resolve().parents[1]
WARNER = ROOT / "examples" / "mechanisms" / "warner-80.csv"
Q2X3 = ROOT / "examples" / "mechanisms" / "q2x3.csv"


def _run(capsys, *argv) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def _truth(path: Path, n: int = 150) -> None:
    path.write_text("id,answer\n" + "".join(f"{i},{'yes' if (i * 7) % 5 < 2 else 'no'}\n" for i in range(n)))


def test_a_second_release_states_the_composed_loss_and_the_cap_refuses_a_third(tmp_path, capsys):
    _truth(tmp_path / "truth.csv")
    release = ["randomize", tmp_path / "truth.csv", "--mechanism", WARNER, "--column", "answer", "--keep", "id"]
    code, _, err = _run(capsys, *release, "--out", tmp_path / "r1.csv")
    assert code == 0 and "released before" not in err
    ledger = tmp_path / "designer-ledger.json"  # beside the input by default
    first = json.loads(ledger.read_text())["releases"][0]
    eps = Fraction(first["loss_exact"])
    assert float(eps) == pytest.approx(1.3862943611198906)  # ln 4, Warner's design at 0.8
    code, _, err = _run(capsys, *release, "--out", tmp_path / "r2.csv")
    assert code == 0 and "released before" in err and f"exactly {2 * eps}" in err
    manifest = json.loads((tmp_path / "r2.csv.manifest.json").read_text())
    assert Fraction(manifest["ledger"]["composed_epsilon_exact"]) == 2 * eps
    assert manifest["ledger"]["earlier_releases"] == [1]
    # a published manifest names its ledger by file name only, never the local folder it is in
    assert manifest["ledger"]["path"] == "designer-ledger.json"
    assert os.sep not in manifest["ledger"]["path"] and "/" not in manifest["ledger"]["path"]
    assert str(tmp_path) not in json.dumps(manifest["ledger"])
    # another file's answers under the same column name: not the same data, nothing composed
    (tmp_path / "other.csv").write_text("id,answer\n" + "".join(f"{i},no\n" for i in range(150)))
    code, _, err = _run(capsys, "randomize", tmp_path / "other.csv", "--mechanism", WARNER, "--column", "answer",
                        "--out", tmp_path / "o.csv")
    assert code == 0 and "released before" not in err
    # the cap: a third release of the truth would compose to 3 eps, past 2.5 eps
    cap = float(2.5 * eps)
    code, out, err = _run(capsys, *release, "--out", tmp_path / "r3.csv", "--budget-cap", f"{cap:.6f}")
    assert code == 2 and out == "" and err.count("\n") == 1 and "--budget-cap" in err and "#1, #2" in err
    assert not (tmp_path / "r3.csv").exists() and not (tmp_path / "r3.csv.manifest.json").exists()
    assert len(json.loads(ledger.read_text())["releases"]) == 3  # r1, r2, o; the refused one is not recorded
    code, out, err = _run(capsys, "audit", "--ledger", ledger)
    assert code == 0 and err == ""
    lines = out.splitlines()
    assert len(lines) == 4 and lines[1].startswith("#1 ") and lines[2].startswith("#2 ") and "r2.csv" in lines[2]
    # --format json: one JSON object (the releases, the composed loss per data fingerprint), nothing on stderr
    code, out, err = _run(capsys, "audit", "--ledger", ledger, "--format", "json")
    assert code == 0 and err == ""
    history = json.loads(out)
    assert [r["release"] for r in history["releases"]] == [1, 2, 3] and "key" not in out
    data = {d["fingerprint"]: d for d in history["data"]}
    truth = history["releases"][0]["variables"][0]["fingerprint"]
    assert data[truth]["releases"] == [1, 2] and data[truth]["columns"] == ["answer"]
    assert Fraction(data[truth]["composed_exact"]) == 2 * eps and data[truth]["composed"] == float(2 * eps)
    other = history["releases"][2]["variables"][0]["fingerprint"]
    assert other != truth and Fraction(data[other]["composed_exact"]) == eps and data[other]["releases"] == [3]
    # a cap the third release fits under passes, and a separate ledger does not see the others
    assert _run(capsys, *release, "--out", tmp_path / "r4.csv", "--budget-cap", f"{float(3 * eps) + 1e-9:.12f}")[0] == 0
    code, _, err = _run(capsys, *release, "--out", tmp_path / "r5.csv", "--ledger", tmp_path / "elsewhere.json")
    assert code == 0 and "released before" not in err


def test_the_ledger_holds_keyed_fingerprints_never_the_values(tmp_path, capsys):
    (tmp_path / "t.csv").write_text("answer\n" + "".join(f"{'yes' if i % 2 else 'no'}\n" for i in range(40)))
    old = os.umask(0o077)
    try:
        assert _run(capsys, "randomize", tmp_path / "t.csv", "--mechanism", WARNER, "--column", "answer", "--out",
                    tmp_path / "r.csv", "--ledger", tmp_path / "l.json")[0] == 0
    finally:
        os.umask(old)
    assert stat.S_IMODE(os.stat(tmp_path / "l.json").st_mode) == 0o600  # the umask honoured
    text = (tmp_path / "l.json").read_text()
    record = json.loads(text)
    assert set(record) == {"kind", "version", "key", "note", "releases"}
    assert set(record["releases"][0]["variables"][0]) == {"column", "fingerprint", "design", "epsilon_exact",
                                                          "epsilon"}
    fingerprint = record["releases"][0]["variables"][0]["fingerprint"]
    assert len(fingerprint) == 64 and all(c in "0123456789abcdef" for c in fingerprint)
    import hashlib
    import hmac

    # not an unkeyed hash of the column; the ledger's own key reproduces it (position, length, text per row)
    data = b"".join(i.to_bytes(8, "little") + (2 + i % 2).to_bytes(8, "little") + (b"yes" if i % 2 else b"no")
                    for i in range(40))
    assert hashlib.sha256(b"designer-fingerprint-v1" + data).hexdigest() != fingerprint
    key = bytes.fromhex(record["key"])
    assert hmac.new(key, b"designer-fingerprint-v1" + data, hashlib.sha256).hexdigest() == fingerprint
    assert sorted(p.name for p in tmp_path.iterdir()) == ["l.json", "r.csv", "r.csv.manifest.json", "t.csv"]


def test_bad_ledgers_are_one_line(tmp_path, capsys):
    _truth(tmp_path / "t.csv", 30)
    (tmp_path / "bad.json").write_text('{"kind": "something else"}')
    for ledger, words in ((tmp_path / "bad.json", "not a budget ledger"), ("/dev/zero", "not a regular file")):
        code, out, err = _run(capsys, "randomize", tmp_path / "t.csv", "--mechanism", Q2X3, "--column", "answer",
                              "--out", tmp_path / "r.csv", "--ledger", ledger)
        assert code == 2 and out == "" and err.count("\n") == 1 and words in err
    code, out, err = _run(capsys, "audit", "--ledger", tmp_path / "none.json")
    assert code == 2 and "no such budget ledger" in err
    code, out, err = _run(capsys, "audit")
    assert code == 2 and "--ledger" in err


def test_the_ledger_is_owner_only_whatever_the_umask_and_never_replaces_another_file(tmp_path, capsys, monkeypatch):
    """The ledger holds its key: 0600 under umask 022 (and on a rewrite of a ledger left 0644); a file that stopped
    being a ledger is not replaced; an interrupted write leaves the old ledger and no temporary file."""
    from designer.exceptions import DataError
    from designer.release.ledger import Ledger

    (tmp_path / "t.csv").write_text("answer\n" + "".join(f"{'yes' if i % 3 else 'no'}\n" for i in range(30)))
    ledger = tmp_path / "designer-ledger.json"
    old = os.umask(0o022)
    try:
        for out in ("r1.csv", "r2.csv"):
            assert _run(capsys, "randomize", tmp_path / "t.csv", "--mechanism", WARNER, "--column", "answer",
                        "--out", tmp_path / out)[0] == 0
            assert stat.S_IMODE(os.stat(ledger).st_mode) == 0o600
            os.chmod(ledger, 0o644)  # as an earlier designer left it: the next write makes it owner-only again
        assert stat.S_IMODE(os.stat(ledger).st_mode) == 0o644
        Ledger.open(str(ledger)).record({"answer": "f"}, {}, {"answer": Fraction(1)}, Fraction(1), "r.csv", "m")
        assert stat.S_IMODE(os.stat(ledger).st_mode) == 0o600
    finally:
        os.umask(old)
    before = ledger.read_bytes()
    listing = sorted(p.name for p in tmp_path.iterdir())
    # interrupted at the rename: the old ledger, and nothing else, is left
    opened = Ledger.open(str(ledger))

    def interrupted(src, dst):
        raise KeyboardInterrupt

    with monkeypatch.context() as m:
        m.setattr(os, "replace", interrupted)
        with pytest.raises(KeyboardInterrupt):
            opened.record({"answer": "g"}, {}, {"answer": Fraction(1)}, Fraction(1), "r.csv", "m")
    assert ledger.read_bytes() == before and sorted(p.name for p in tmp_path.iterdir()) == listing
    # the file became something else between the release's start and its record: refused, left as it is
    ledger.write_text('{"kind": "a colleague\'s notes"}')
    with pytest.raises(DataError, match="no longer a budget ledger"):
        opened.record({"answer": "g"}, {}, {"answer": Fraction(1)}, Fraction(1), "r.csv", "m")
    assert ledger.read_text() == '{"kind": "a colleague\'s notes"}'


_LOSSES = {"warner-80.csv": math.log(4), "q2x3.csv": math.log(3)}  # Shafer losses: ln(0.8/0.2), ln(0.6/0.2)


def _quiet(argv: list) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main([*map(str, argv), "--quiet"])
    return code, out.getvalue(), err.getvalue()


@settings(max_examples=10, deadline=None)
@given(st.lists(st.sampled_from(["yes", "no"]), min_size=1, max_size=50),
       st.lists(st.sampled_from(sorted(_LOSSES)), min_size=1, max_size=3),
       st.integers(1, 40), st.integers(1, 9))
def test_the_composed_loss_is_the_exact_sum_and_the_cap_refuses_past_it(answers, designs, tenths, denominator):
    """Random small frames (one answer throughout: zero counts), released 1 to 3 times under a random cap: each
    release's composed loss is the exact sum of the losses of the releases recorded so far, and a release past the
    cap is one line, exit status 2, with no output file."""
    cap = Fraction(tenths * 3, denominator * 4)  # 0.08 to 30 nats: from below one release to above three
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        (root / "t.csv").write_text("id,answer\n" + "".join(f"{i},{a}\n" for i, a in enumerate(answers)))
        recorded: list[Fraction] = []
        for i, design in enumerate(designs):
            out = root / f"r{i}.csv"
            code, stdout, err = _quiet(["randomize", root / "t.csv", "--mechanism", ROOT / "examples" / "mechanisms" /
                                        design, "--column", "answer", "--keep", "id", "--out", out, "--budget-cap",
                                        f"{cap.numerator}/{cap.denominator}"])
            if code == 2:
                assert stdout == "" and err.count("\n") == 1 and "--budget-cap" in err, err
                assert not out.exists() and not Path(f"{out}.manifest.json").exists()
                # refused only when past the cap: this design's loss (as an earlier release recorded it, or its
                # closed form) brings the sum above it
                assert sum(recorded, Fraction(0)) + Fraction(_LOSSES[design]) > cap - Fraction(1, 10**9)
                continue
            assert code == 0, err
            ledger = json.loads(Path(f"{out}.manifest.json").read_text())["ledger"]
            loss = Fraction(ledger["release_epsilon_exact"])
            assert float(loss) == pytest.approx(_LOSSES[design], rel=1e-12)
            recorded.append(loss)
            assert Fraction(ledger["composed_epsilon_exact"]) == sum(recorded, Fraction(0)) <= cap
            assert ledger["earlier_releases"] == list(range(1, len(recorded)))
            assert ("released before" in err) == (len(recorded) > 1)
        # a refused release is not recorded: no ledger at all when every release was refused
        assert (root / "designer-ledger.json").exists() == bool(recorded)
        if recorded:
            record = json.loads((root / "designer-ledger.json").read_text())
            assert [Fraction(r["loss_exact"]) for r in record["releases"]] == recorded
            code, stdout, err = _quiet(["audit", "--ledger", root / "designer-ledger.json", "--format", "json"])
            assert code == 0 and err == ""
            (data,) = json.loads(stdout)["data"]
            assert Fraction(data["composed_exact"]) == sum(recorded, Fraction(0))
