"""The studio without a browser: its backend against the CLI, its problem files, its form, and the
``designer studio`` command's refusals (exit 2, one line)."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import tomllib
from pathlib import Path

import numpy as np
import pytest

from designer._internal.render import fmt
from designer.cli import build_parser

pytest.importorskip("shiny", reason="the studio needs Shiny for Python (pip install shiny)")

from designer.studio.backend import Backend, StudioError, num, textbook_designs, toml_text
from designer.studio.budget_page import matrix_html
from designer.studio.question_page import apply_fields, fields_of

ROOT = Path(__file__).resolve().parents[1]
PROBLEMS = sorted((ROOT / "problems").glob("*.toml"))


def cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "designer", *args], capture_output=True, text=True, cwd=cwd,
                          timeout=120)


def cli_json(*args: str) -> dict:
    out = cli(*args, "--format", "json")
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


@pytest.mark.parametrize("path", PROBLEMS, ids=lambda p: p.stem)
def test_problem_files_are_written_back_as_read(path):
    data = tomllib.loads(path.read_text())
    assert tomllib.loads(toml_text(data)) == data
    assert tomllib.loads(toml_text(apply_fields(data, fields_of(data)))) == data  # the form changes nothing


def test_toml_keys_and_strings_are_quoted():
    data = {"name": 'a "quoted" name', "inputs": ["ja", "nein"], "gain": {"ja": {"{ja}": 1.0, "{ja,nein}": 0.5}}}
    assert tomllib.loads(toml_text(data)) == data


def test_the_form_makes_the_problem():
    base = {"name": "q", "inputs": ["yes", "no"], "epsilon": 1.0}
    values = {"inputs": "low, mid, high", "answers": "low\nmid\nhigh\nlow | mid | high", "dont_know": "1/10",
              "prior": "0.2, 0.3, 0.5", "prior_unknown": False, "semantics": "wldp", "objective": "chi2"}
    data = apply_fields(base, values)
    assert data == {"name": "q", "inputs": ["low", "mid", "high"], "epsilon": 1.0, "prior": [0.2, 0.3, 0.5],
                    "semantics": "wldp", "objective": "chi2",
                    "structure": {"focal_sets": [["low"], ["mid"], ["high"], ["low", "mid", "high"]],
                                  "dont_know": 0.1}}
    assert "prior" not in apply_fields(base, {**values, "prior_unknown": True})
    bad_fields = (("inputs", "one", "inputs"), ("dont_know", "lots", "don't-know"), ("prior", "a, b", "prior"))
    for key, bad, said in bad_fields:
        with pytest.raises(StudioError, match=said):
            apply_fields(base, {**values, key: bad})


def test_numbers_reach_the_cli_without_loss():
    assert [num(x) for x in (1.0, 0.15, 2.05, 1 / 3, 1e-05)] == ["1", "0.15", "2.05", repr(1 / 3), "1e-05"]


@pytest.mark.parametrize("name, eps", [("gwrr-dont-know", 1.0), ("gwrr-dont-know-wldp", 2.5),
                                       ("survey-5-options", 2.05), ("warner", 1 / 3)])
def test_designs_and_plans_are_the_clis(tmp_path, name, eps):
    path = ROOT / "problems" / f"{name}.toml"
    backend = Backend(str(tmp_path), build_parser)
    problem = backend.set_problem(backend.read_problem(str(path)))
    current = backend.design(problem, eps)
    expected = cli_json("design", str(path), "--eps", num(eps))
    assert current.result.to_dict()["matrix"] == expected["matrix"]
    assert current.result.to_dict()["variance"] == expected["variance"]
    assert backend.design(problem, eps) is current  # cached per budget
    # the written mechanism is the CLI's --out file, certificate included
    out = tmp_path / "cli.json"
    assert cli("design", str(path), "--eps", num(eps), "--out", str(out)).returncode == 0
    mine = json.loads(Path(current.path).read_text())
    theirs = json.loads(out.read_text())
    assert mine["matrix"] == theirs["matrix"] and mine["release"]["epsilon"] == theirs["release"]["epsilon"]
    html = matrix_html(current.mechanism)
    assert html.count("<tr>") == 1 + len(expected["inputs"])
    assert all(fmt(v, 8) in html for row in expected["matrix"] for v in row)
    prior = ",".join(f"{x}={float(v)!r}" for x, v in zip(problem.inputs, problem.prior))
    sem = "wldp" if str(problem.semantics) == "wldp" else "sldp"
    plan = backend.plan_width(current.path, 0.04, 0.9, sem, prior)
    assert plan["n"] == cli_json("plan", str(out), "--width", "0.04", "--level", "0.9", "--semantics", sem,
                                 "--prior", prior)["n"]
    assert "--width 0.04 --level 0.9" in backend.command_lines()


def test_textbook_designs_are_the_closed_forms_of_compare(tmp_path):
    path = ROOT / "problems" / "gwrr-dont-know.toml"
    backend = Backend(str(tmp_path), build_parser)
    problem = backend.set_problem(backend.read_problem(str(path)))
    for eps in (0.5, 1.0, 3.0):
        rows = {name.split(",")[0]: (p, v) for name, _, p, v in textbook_designs(problem, eps)}
        row = cli_json("compare", str(path), "--eps", num(eps))["rows"][0]
        assert rows["GWRR"] == pytest.approx((row["p_closed"], row["variance_closed"]), rel=1e-12)
        e = np.exp(eps)
        assert rows["Warner"][0] == pytest.approx(e / (1 + e), rel=1e-12)
        p = e / (1 + e)  # Eq 1 at pi = 0.5
        assert rows["Warner"][1] == pytest.approx(0.25 + p * (1 - p) / (2 * p - 1) ** 2, rel=1e-12)
    k5 = backend.set_problem(backend.read_problem(str(ROOT / "problems" / "survey-5-options.toml")))
    krr = {name: p for name, _, p, _ in textbook_designs(k5, 2.0)}
    assert krr["5-RR"] == pytest.approx(np.exp(2) / (np.exp(2) + 4), rel=1e-12)


def test_bad_requests_are_one_line(tmp_path):
    backend = Backend(str(tmp_path), build_parser)
    with pytest.raises(StudioError, match="inputs"):
        backend.set_problem({"inputs": ["a", "a"], "epsilon": 1.0})
    with pytest.raises(StudioError, match=r"nothing\.toml"):
        backend.read_problem(str(tmp_path / "nothing.toml"))
    with pytest.raises(StudioError, match=r"bad\.csv"):
        (tmp_path / "bad.csv").write_text("not a mechanism\n")
        backend.read_mechanism(str(tmp_path / "bad.csv"), "bad.csv")


def test_studio_command_refuses_bad_files_and_busy_ports(tmp_path):
    out = cli("studio", str(tmp_path / "missing.toml"), "--no-browser", "--port", "0")
    assert out.returncode == 2 and out.stderr.count("\n") == 1 and "missing.toml" in out.stderr
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        out = cli("studio", "--no-browser", "--port", str(port))
    assert out.returncode == 2 and f"--port {port}" in out.stderr and "Traceback" not in out.stderr


def test_studio_without_shiny_says_what_to_install():
    code = ("import sys; sys.modules['shiny'] = None\n"
            "from designer.cli import main\n"
            "sys.exit(main(['studio', '--no-browser']))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 2 and "pip install 'designer-ldp[studio]'" in out.stderr
    helped = subprocess.run([sys.executable, "-c", "import sys; sys.modules['shiny'] = None\n"
                             "from designer.cli import main; sys.exit(main(['--help']))"],
                            capture_output=True, text=True, timeout=60)
    assert helped.returncode == 0 and "studio" in helped.stdout
    assert "shiny" not in subprocess.run([sys.executable, "-c", "import designer.cli, sys; print(sorted(sys.modules))"],
                                         capture_output=True, text=True, timeout=60).stdout


def test_a_file_uploaded_again_under_its_name_is_read_again(tmp_path):
    path = ROOT / "problems" / "gwrr-dont-know.toml"
    backend = Backend(str(tmp_path), build_parser)
    current = backend.design(backend.set_problem(backend.read_problem(str(path))), 1.0)
    answers = tmp_path / "answers.csv"
    got = []
    for rows in (["{yes}"] * 30 + ["{no}"] * 10 + ['"{yes,no}"'] * 10, ["{yes}"] * 10 + ["{no}"] * 30):
        answers.write_text("response\n" + "\n".join(rows) + "\n")
        mine = backend.estimate(str(answers), "answers.csv", current.path, "response", 0.95, "sldp")
        theirs = cli_json("estimate", str(answers), "--mechanism", current.path)
        assert mine["estimate"] == theirs["estimate"] and mine["status"] == theirs["status"]
        got.append(mine["estimate"]["yes"])
    assert got[0] > 0.5 > got[1]
    assert backend.command_lines().splitlines()[-1] == ("designer estimate answers.csv --mechanism mechanism.json "
                                                        "--column response --level 0.95 --semantics sldp --format json")
