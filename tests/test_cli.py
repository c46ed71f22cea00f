import json
import math
import subprocess
import sys

import pytest

import designer as d
from designer.cli import main


def run(argv, capsys):
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def test_audit_json(tmp_path, capsys):
    p = tmp_path / "q.csv"
    d.Q_2x3(0.6, 0.2).to_csv(p)
    code, out, err = run(["audit", str(p), "--format", "json"], capsys)
    assert code == 0 and err == ""
    obj = json.loads(out)
    assert obj["inputs"] == ["yes", "no"] and obj["frame"] == ["yes", "no"]
    assert obj["eps_shafer"] == pytest.approx(math.log(3))
    assert obj["eps_walley"] == pytest.approx(math.log(4))
    assert {"eps_bel", "eps_pl"} <= set(obj)


def test_audit_infinite_loss_is_the_string_inf(tmp_path, capsys):
    p = tmp_path / "q.csv"
    p.write_text("input,{a},{b}\nx,1,0\ny,0.5,0.5\n")
    code, out, _ = run(["audit", str(p), "--format", "json"], capsys)
    assert code == 0
    assert json.loads(out)["eps_shafer"] == "inf"


def test_audit_table_and_csv(capsys):
    code, out, _ = run(["audit", "examples/mechanisms/q2x3.csv"], capsys)
    assert code == 0 and "eps_walley" in out and "1.38629" in out
    code, out, _ = run(["audit", "examples/mechanisms/gwrr.csv", "--format", "csv"], capsys)
    assert code == 0 and out.splitlines()[0].startswith("loss,eps")


@pytest.mark.parametrize(
    "content,match",
    [("input,{yes},{no}\nyes,0.5,0.6\n", "sums to"), ("", "empty"), (None, "no such file")],
)
def test_audit_errors_are_one_line_exit_2(tmp_path, capsys, content, match):
    p = tmp_path / "bad.csv"
    if content is not None:
        p.write_text(content)
    code, out, err = run(["audit", str(p)], capsys)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith("designer: error: ") and match in err
    assert str(p) in err


def test_console_script_runs():
    proc = subprocess.run([sys.executable, "-m", "designer", "audit", "examples/mechanisms/q2x3.csv",
                           "--format", "json"], capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["eps_bel"] == pytest.approx(math.log(3))


def test_help_lists_commands(capsys):
    with pytest.raises(SystemExit) as info:
        main(["--help"])
    assert info.value.code == 0
    assert "audit" in capsys.readouterr().out
