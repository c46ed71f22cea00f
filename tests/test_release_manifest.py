"""A manifest is bound to what it describes (docs/theory.md section 7.6): it records its output's SHA-256 and rows
and each design file's SHA-256, with paths relative to its own folder; estimate and regress --manifest refuse, in
one line and exit 2, another release's manifest, a design file swapped or overwritten after the release, a repaired
column whose drawn channel was deleted from the manifest, and resolve relative paths against the manifest's folder,
not the current one. The hashes are recomputed here with hashlib."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import pandas as pd
import pytest

from designer.cli import main
from designer.exceptions import DesignerError

ROOT = Path(__file__).resolve().parents[1]
Q2X3 = ROOT / "examples" / "mechanisms" / "q2x3.csv"
WARNER = ROOT / "examples" / "mechanisms" / "warner-80.csv"


def _run(capsys, *argv) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def _truth(path: Path, n: int) -> None:
    path.write_text("id,answer\n" + "".join(f"{i},{'yes' if i % 3 else 'no'}\n" for i in range(n)))


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture
def two_releases(tmp_path, capsys):
    """Release a (200 rows) and release b (400 rows) of the same design."""
    (tmp_path / "design.csv").write_bytes(Q2X3.read_bytes())
    for name, n in (("a", 200), ("b", 400)):
        _truth(tmp_path / f"{name}-truth.csv", n)
        assert _run(capsys, "randomize", tmp_path / f"{name}-truth.csv", "--mechanism", tmp_path / "design.csv",
                    "--column", "answer", "--out", tmp_path / f"{name}.csv")[0] == 0
    return tmp_path


def test_a_manifest_records_its_output_and_design_by_their_hashes(two_releases):
    manifest = json.loads((two_releases / "a.csv.manifest.json").read_text())
    output = {k: v for k, v in manifest["output"].items() if not k.startswith("frame_sha256")}
    assert output == {"path": "a.csv", "rows": 200, "sha256": _sha(two_releases / "a.csv")}
    assert manifest["rows"] == 200 and manifest["paths"] == "relative to this manifest's folder"
    record = manifest["variables"][0]
    assert record["design"] == "design.csv" and record["design_sha256"] == _sha(two_releases / "design.csv")
    assert record["drawn_from"] == "design"


@pytest.mark.parametrize("command", ["estimate", "regress"])
def test_another_releases_manifest_is_refused(two_releases, capsys, command):
    extra = ["--formula", "response ~ 1"] if command == "regress" else []
    code, out, err = _run(capsys, command, two_releases / "b.csv", "--manifest", two_releases / "a.csv.manifest.json",
                          *extra)
    assert code == 2 and out == "" and err.count("\n") == 1
    assert "is not the release" in err and "200 rows" in err
    code, out, err = _run(capsys, command, two_releases / "a.csv", "--manifest", two_releases / "a.csv.manifest.json",
                          *extra, "--format", "json")
    # the release's own manifest is accepted: the fit runs (an unseeded release of 200 answers leaves the intercept's
    # likelihood-ratio interval unbounded about 1 time in 750: `not_identified`, exit 3)
    assert code in (0, 3) and json.loads(out)["status"], err
    with pytest.raises(DesignerError, match="a release of 200 rows, not these 400"):
        from designer import estimate

        estimate(pd.read_csv(two_releases / "b.csv"), manifest=two_releases / "a.csv.manifest.json")


def test_a_design_swapped_or_overwritten_after_the_release_is_refused(two_releases, capsys):
    design = two_releases / "design.csv"
    design.write_bytes(WARNER.read_bytes())  # swapped for another design
    code, out, err = _run(capsys, "estimate", two_releases / "a.csv", "--manifest",
                          two_releases / "a.csv.manifest.json")
    assert code == 2 and out == "" and err.count("\n") == 1
    assert "SHA-256 differs" in err and "swapped or changed after the release" in err
    design.write_bytes(Q2X3.read_bytes().replace(b"0.6", b"0.60"))  # the same masses, other bytes
    assert _run(capsys, "estimate", two_releases / "a.csv", "--manifest", two_releases / "a.csv.manifest.json")[0] == 2
    design.unlink()
    code, _, err = _run(capsys, "estimate", two_releases / "a.csv", "--manifest", two_releases / "a.csv.manifest.json")
    assert code == 2 and "is missing" in err


def test_a_deleted_drawn_channel_is_refused(tmp_path, capsys):
    gwrr = tmp_path / "gwrr.json"
    assert _run(capsys, "design", ROOT / "problems" / "gwrr-dont-know.toml", "--out", gwrr)[0] == 0
    _truth(tmp_path / "truth.csv", 300)
    assert _run(capsys, "randomize", tmp_path / "truth.csv", "--mechanism", gwrr, "--column", "answer", "--out",
                tmp_path / "r.csv", "--semantics", "wldp", "--allocation", "1", "--repair")[0] == 0
    path = tmp_path / "r.csv.manifest.json"
    assert _run(capsys, "estimate", tmp_path / "r.csv", "--manifest", path)[0] == 0
    manifest = json.loads(path.read_text())
    assert manifest["variables"][0]["drawn_from"] == "drawn_mechanism"
    # the repaired channel's certificate in the words of every other certificate, then why it was repaired
    summary = manifest["variables"][0]["certificate"]["summary"]
    assert re.match(r"\d[\d.]*-private \((Shafer|Walley)( and Walley)? loss(es)?\), checked exactly \(integer "
                    r"counts over [^;]*\); .*, so [\d.e-]+ of the .* was mixed in: the drawn channel is not the design",
                    summary)
    assert "loss <=" not in summary
    del manifest["variables"][0]["drawn_mechanism"]
    path.write_text(json.dumps(manifest))
    for command, extra in (("estimate", []), ("regress", ["--formula", "response ~ 1"])):
        code, out, err = _run(capsys, command, tmp_path / "r.csv", "--manifest", path, *extra)
        assert code == 2 and out == "" and err.count("\n") == 1
        assert "drawn from a repaired channel, but the manifest no longer names it" in err


def test_relative_paths_are_read_from_the_manifests_folder(tmp_path, capsys, monkeypatch):
    """Released from inside its folder with relative names, analysed from elsewhere, where a file of the design's
    name holds another design: the manifest's folder decides."""
    release = tmp_path / "release"
    release.mkdir()
    (release / "design.csv").write_bytes(Q2X3.read_bytes())
    _truth(release / "truth.csv", 300)
    monkeypatch.chdir(release)
    assert _run(capsys, "randomize", "truth.csv", "--mechanism", "design.csv", "--column", "answer", "--out",
                "r.csv")[0] == 0
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "design.csv").write_bytes(WARNER.read_bytes())
    monkeypatch.chdir(elsewhere)
    code, out, err = _run(capsys, "estimate", "../release/r.csv", "--manifest", "../release/r.csv.manifest.json",
                          "--format", "json")
    assert code == 0, err
    code, direct, err = _run(capsys, "estimate", "../release/r.csv", "--mechanism", release / "design.csv",
                             "--format", "json")
    assert code == 0, err
    assert json.loads(out)["estimate"] == json.loads(direct)["estimate"]  # the release's design, not ./design.csv


def test_the_printed_regress_command_quotes_every_stratum(tmp_path, capsys):
    """A stratum's name is data: the printed command quotes it for the shell (it once ran a command)."""
    import shlex

    problem = tmp_path / "party.toml"
    problem.write_text((ROOT / "problems" / "pram-party.toml").read_text())
    regions = ["north; touch pwned", "south $(id)"]
    rows = [(i, ["left", "centre", "right", "other"][i % 4], regions[i % 2]) for i in range(200)]
    (tmp_path / "t.csv").write_text("id,party,region\n" + "".join(f"{i},{p},{r}\n" for i, p, r in rows))
    code, out, err = _run(capsys, "randomize", tmp_path / "t.csv", "--variable", f"party={problem}", "--strata",
                          "region", "--invariant-prior", "data", "--prior-budget", "1", "--out", tmp_path / "r.csv")
    assert code == 0, err
    line = next(x for x in out.splitlines() if "designer regress" in x)
    words = shlex.split(line.split(": ", 1)[1])
    assert words[:2] == ["designer", "regress"] and "--formula" in words
    assert {w.split("=", 1)[0] for w, before in zip(words[1:], words) if before == "--mechanism"} == set(regions)
    assert not (tmp_path / "pwned").exists()


def test_a_bundled_design_is_recorded_by_its_name_not_where_designer_is_installed(tmp_path, capsys, monkeypatch):
    """A design named as a bundled file (``--mechanism warner-80``) is recorded as that name and the file's SHA-256:
    no absolute path of this installation (a user name, a virtual environment) goes into a published manifest, and
    estimate --manifest finds the bundled file again; another name is refused in one line."""
    monkeypatch.chdir(tmp_path)
    _truth(tmp_path / "truth.csv", 60)
    assert _run(capsys, "randomize", "truth.csv", "--mechanism", "warner-80", "--column", "answer",
                "--out", "r.csv")[0] == 0
    text = (tmp_path / "r.csv.manifest.json").read_text()
    record = json.loads(text)["variables"][0]
    assert record["design"] == "warner-80" and record["design_sha256"] == _sha(WARNER)
    assert str(ROOT) not in text and "site-packages" not in text and "/designer/" not in text
    code, out, err = _run(capsys, "estimate", "r.csv", "--manifest", "r.csv.manifest.json", "--format", "json")
    assert code == 0, err
    assert json.loads(out)["n"] == 60
    (tmp_path / "m2.json").write_text(text.replace('"warner-80"', '"warner-90"'))
    code, _, err = _run(capsys, "estimate", "r.csv", "--manifest", "m2.json")
    assert code == 2 and "warner-90" in err and len(err.strip().splitlines()) == 1
