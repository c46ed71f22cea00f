"""A released mechanism file carries its guarantee (epsilon, semantics, certificate), and every command that reads
it re-checks the guarantee exactly: a file whose masses were changed after the release is refused by the
commands that use it and reported by audit. The verdicts are checked against the losses computed with
Fractions and 60-digit logarithms, not against designer's own exact check."""

import json
import math
from decimal import Decimal, getcontext
from fractions import Fraction
from pathlib import Path

import pytest

from designer.cli import main
from designer.release.files import read_mechanism_file

ROOT = Path(__file__).resolve().parents[1]
getcontext().prec = 60


def _run(argv, capsys):
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def _shafer_loss_exceeds(matrix, eps):
    """Some ratio of two inputs' masses on one column above e^eps, in Fractions and 60-digit decimals."""
    bound = Decimal(eps).exp()
    for row in matrix:
        for other in matrix:
            for a, b in zip(row, other):
                fa, fb = Fraction(a), Fraction(b)
                if fa > 0 and (fb == 0 or Decimal(fa.numerator * fb.denominator)
                               / Decimal(fb.numerator * fa.denominator) > bound):
                    return True
    return False


@pytest.mark.parametrize(("problem", "extra"), [("gwrr-dont-know.toml", []),
                                                ("gwrr-dont-know-wldp.toml", []),
                                                ("gwrr-dont-know.toml", ["--device", "spinner:10"]),
                                                ("survey-5-options.toml", ["--epsilon", "1.5"])])
def test_a_written_design_states_its_release_and_reads_back(tmp_path, capsys, problem, extra):
    out = tmp_path / "mech.json"
    code, _, _ = _run(["design", str(ROOT / "problems" / problem), *extra, "--out", str(out)], capsys)
    assert code == 0
    obj = json.loads(out.read_text())
    release = obj["release"]
    assert release["certified"] is True and release["certificate"] == "exact"
    assert release["semantics"] in ("sldp", "wldp", "both") and release["epsilon"] > 0
    assert set(release["certificate_detail"]) >= {"losses", "arithmetic", "summary"}
    assert not _shafer_loss_exceeds(obj["matrix"], release["epsilon"]) or release["semantics"] == "wldp"
    _, stated = read_mechanism_file(out)
    assert stated is not None and stated.epsilon == release["epsilon"]
    code, text, _ = _run(["audit", str(out)], capsys)
    assert code == 0 and "re-checked exactly: met" in text


def _tampered(tmp_path, capsys):
    """gwrr-dont-know at eps = 1 written as JSON, then 0.01 of 'no's mass moved from {yes} to {no}."""
    out = tmp_path / "gwrr.json"
    assert _run(["design", str(ROOT / "problems" / "gwrr-dont-know.toml"), "--out", str(out)], capsys)[0] == 0
    obj = json.loads(out.read_text())
    columns = obj["columns"]
    no = obj["inputs"].index("no")
    obj["matrix"][no][columns.index("{yes}")] -= 0.01
    obj["matrix"][no][columns.index("{no}")] += 0.01
    assert _shafer_loss_exceeds(obj["matrix"], 1.0)  # the edit breaks the budget
    out.write_text(json.dumps(obj))
    return out


def test_a_file_changed_after_its_release_is_refused_where_it_is_used(tmp_path, capsys):
    out = _tampered(tmp_path, capsys)
    answers = tmp_path / "answers.csv"
    answers.write_text("response\n{yes}\n{no}\n{yes,no}\n{no}\n")
    for argv in (["estimate", str(answers), "--mechanism", str(out)],
                 ["credal", str(out)],
                 ["simulate", str(out), "--n", "100", "--reps", "10", "--seed", "1"]):
        code, stdout, err = _run(argv, capsys)
        assert code == 2 and stdout == ""
        assert err.count("\n") == 1 and str(out) in err
        assert "states Shafer loss <= 1 (sldp)" in err and "changed after designer certified" in err


def test_audit_reports_a_broken_release_instead_of_refusing(tmp_path, capsys):
    out = _tampered(tmp_path, capsys)
    code, text, _ = _run(["audit", str(out)], capsys)
    assert code == 0 and "re-checked exactly: NOT met: Shafer loss" in text
    code, text, _ = _run(["audit", str(out), "--format", "json"], capsys)
    audit = json.loads(text)
    assert audit["release"] == {"epsilon": 1.0, "semantics": "sldp", "met": False, "unmet": ["shafer"]}
    assert audit["eps_shafer"] > 1.0


def test_a_release_exactly_at_its_budget_is_met_and_one_ulp_over_is_not(tmp_path):
    # Warner at p = e/(1+e): the Shafer loss is 1 to rounding; the exact check decides which side the floats are
    p = math.e / (1 + math.e)
    verdicts = set()
    for q in (p, math.nextafter(p, 2.0), math.nextafter(p, 0.0)):
        obj = {"inputs": ["yes", "no"], "frame": ["yes", "no"], "focal_sets": [["yes"], ["no"]],
               "matrix": [[q, 1 - q], [1 - q, q]], "release": {"epsilon": 1.0, "semantics": "sldp"}}
        path = tmp_path / "w.json"
        path.write_text(json.dumps(obj))
        over = _shafer_loss_exceeds(obj["matrix"], 1.0)
        verdicts.add(over)
        if over:
            with pytest.raises(Exception, match="changed after designer certified"):
                read_mechanism_file(path)
        else:
            assert read_mechanism_file(path)[1] is not None
    assert verdicts == {True, False}  # both sides of the budget were tried


@pytest.mark.parametrize(("release", "needle"), [
    ("[1, 2]", "must be an object"),
    ('{"epsilon": -1, "semantics": "sldp"}', "epsilon must be a positive number"),
    ('{"epsilon": "one", "semantics": "sldp"}', "epsilon must be a positive number"),
    ('{"epsilon": 1, "semantics": "shafer"}', "semantics must be one of"),
])
def test_a_malformed_release_is_one_line_naming_the_file(tmp_path, capsys, release, needle):
    path = tmp_path / "m.json"
    path.write_text('{"inputs": ["yes", "no"], "focal_sets": [["yes"], ["no"]], "matrix": [[0.6, 0.4], [0.4, 0.6]], '
                    f'"release": {release}}}')
    code, stdout, err = _run(["audit", str(path)], capsys)
    assert code == 2 and stdout == "" and err.count("\n") == 1
    assert str(path) in err and "release" in err and needle in err


@pytest.mark.parametrize("command", ["estimate", "regress", "randomize"])
def test_every_command_reads_a_mechanism_file_once(tmp_path, capsys, monkeypatch, command):
    """One reader: the masses, the release, the exact table and the answer words come from one read of the file
    (before, estimate read it three times and randomize twice)."""
    import sys

    import designer._internal.io

    mech = tmp_path / "mech.json"
    assert _run(["design", str(ROOT / "problems" / "gwrr-dont-know.toml"), "--out", str(mech)], capsys)[0] == 0
    obj = json.loads(mech.read_text())
    data = tmp_path / "answers.csv"
    answers = [label for label in ("yes", "no") for _ in range(30)] + ["{yes,no}"] * 10
    data.write_text("answer,x,truth\n" + "".join(f"{a if ',' not in a else chr(34) + a + chr(34)},{i % 3},"
                                                   f"{'yes' if i % 2 else 'no'}\n" for i, a in enumerate(answers)))
    reads: list[str] = []
    real = designer._internal.io.read_text

    def counted(path, *args, **kwargs):
        reads.append(str(path))
        return real(path, *args, **kwargs)

    for name, module in list(sys.modules.items()):  # every module's name for the one text reader
        if name.startswith("designer") and getattr(module, "read_text", None) is real:
            monkeypatch.setattr(module, "read_text", counted)
    argv = {"estimate": ["estimate", str(data), "--mechanism", str(mech), "--column", "answer"],
            "regress": ["regress", str(data), "--mechanism", str(mech), "--formula", "answer ~ x"],
            "randomize": ["randomize", str(data), "--variable", f"truth={mech}", "--out",
                          str(tmp_path / "release.csv")]}[command]
    code, _, err = _run(argv, capsys)
    assert code in (0, 3), err
    assert reads.count(str(mech)) == 1, reads
    assert obj["release"]["certificate"] == "exact"
