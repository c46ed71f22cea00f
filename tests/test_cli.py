import json
import math
import os
import subprocess
import sys

import numpy as np
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
    assert main(["--help"]) == 0  # main returns the exit status, --help included
    assert "audit" in capsys.readouterr().out


def test_design_json_has_the_documented_keys(capsys):
    code, out, err = run(["design", "problems/gwrr-dont-know.toml", "--format", "json"], capsys)
    assert code == 0, err
    obj = json.loads(out)
    for key in ("inputs", "frame", "focal_sets", "matrix", "objective_value", "eps_shafer", "eps_walley",
                "certified", "certificate"):
        assert key in obj
    assert obj["certified"] is True and obj["certificate"] in ("exact", "float")
    assert obj["focal_sets"] == [["yes"], ["no"], ["yes", "no"]]
    e = math.e
    assert obj["matrix"][0][0] == pytest.approx(0.8 * e / (e + 1), abs=1e-9)
    assert obj["eps_shafer"] <= 1.0 + 1e-12


def test_design_overrides_and_out_file_round_trip(tmp_path, capsys):
    out_file = tmp_path / "m.csv"
    code, out, err = run(["design", "problems/gwrr-dont-know.toml", "--epsilon", "2", "--out", str(out_file)],
                         capsys)
    assert code == 0, err
    assert "certified" in out and "Cor" not in err
    code, out, err = run(["audit", str(out_file), "--format", "json"], capsys)
    assert code == 0
    assert json.loads(out)["eps_shafer"] == pytest.approx(2.0, abs=1e-9)
    # an existing file is not replaced without --force, and an input never
    code, _, err = run(["design", "problems/gwrr-dont-know.toml", "--out", str(out_file)], capsys)
    assert code == 2 and "already exists" in err
    code, _, err = run(["design", "problems/gwrr-dont-know.toml", "--out", "problems/gwrr-dont-know.toml",
                        "--force"], capsys)
    assert code == 2 and "never overwritten" in err
    code, _, _ = run(["design", "problems/gwrr-dont-know.toml", "--out", str(out_file), "--force",
                      "--semantics", "wldp"], capsys)
    assert code == 0


def test_design_csv_format_is_the_mechanism_csv(capsys):
    code, out, _ = run(["design", "problems/warner.toml", "--format", "csv"], capsys)
    assert code == 0
    assert out.splitlines()[0] == "input,{yes},{no}"


def test_design_infeasible_is_one_line_exit_2(capsys):
    code, out, err = run(["design", "problems/gwrr-dont-know-wldp.toml", "--epsilon", "0.1"], capsys)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and "2/(1+e^eps)" in err


def test_design_bad_toml_names_file_and_key(tmp_path, capsys):
    p = tmp_path / "bad.toml"
    p.write_text('inputs = ["a", "b"]\nepsilon = -1\n')
    code, _, err = run(["design", str(p)], capsys)
    assert code == 2 and str(p) in err and "'epsilon'" in err and err.count("\n") == 1


def test_compare_table_json_csv(capsys):
    code, out, err = run(["compare", "problems/gwrr-dont-know.toml", "--eps", "0.1:5:5", "--format", "json"],
                         capsys)
    assert code == 0, err
    rows = json.loads(out)["rows"]
    assert [r["epsilon"] for r in rows] == pytest.approx([0.1, 1.325, 2.55, 3.775, 5.0])
    assert all(r["diff"] <= 1e-9 for r in rows)
    code, out, _ = run(["compare", "problems/gwrr-dont-know.toml", "--eps", "0.5,1"], capsys)
    assert code == 0 and "Cor 3.12" in out
    code, out, _ = run(["compare", "problems/gwrr-dont-know-wldp.toml", "--eps", "0.1,1", "--format", "csv"],
                       capsys)
    assert code == 0 and "infeasible" in out
    code, _, err = run(["compare", "problems/gwrr-dont-know.toml", "--eps", "1:x"], capsys)
    assert code == 2 and "start:stop:count" in err


def test_compare_kary(capsys):
    code, out, err = run(["compare", "problems/frequency-16.toml", "--eps", "1,2", "--format", "json"], capsys)
    assert code == 0, err
    for row in json.loads(out)["rows"]:
        assert row["diff"] <= 1e-6
    code, _, err = run(["compare", "problems/survey-5-options.toml", "--eps", "1"], capsys)
    assert code == 2 and "no closed form" in err


def test_tradeoff_json_and_plot(tmp_path, capsys):
    png = tmp_path / "t.png"
    code, out, err = run(["tradeoff", "examples/mechanisms/q2x3.csv", "--null", "yes", "--alt", "no",
                          "--kind", "optimistic", "--points", "11", "--format", "json", "--plot", str(png)], capsys)
    assert code == 0, err
    obj = json.loads(out)
    assert len(obj["alpha"]) == len(obj["beta"]) == len(obj["bound"]) == 11
    assert all(b <= bd + 1e-9 for b, bd in zip(obj["beta"], obj["bound"]))
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    code, _, err = run(["tradeoff", "examples/mechanisms/q2x3.csv", "--null", "yes", "--alt", "maybe"], capsys)
    assert code == 2 and "unknown input 'maybe'" in err


def test_credal_command(capsys):
    code, out, err = run(["credal", "examples/mechanisms/q2x3.csv", "--gamble", "yes=1,no=0", "--format", "json"],
                         capsys)
    assert code == 0, err
    obj = json.loads(out)
    assert obj["lower_expectation"] == pytest.approx([0.6, 0.2])
    assert obj["upper_expectation"] == pytest.approx([0.8, 0.4])
    code, _, err = run(["credal", "examples/mechanisms/q2x3.csv", "--gamble", "yes=high"], capsys)
    assert code == 2 and "not a number" in err


def test_examples_draw_the_figures(tmp_path):
    import importlib.util

    spec = importlib.util.spec_from_file_location("plot_tradeoff", "examples/plot_tradeoff.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    paths = module.main(["--out", str(tmp_path)])
    assert [p.name for p in paths] == ["figure1_sldp_tradeoff.png", "figure4_wldp_tradeoff.png"]
    for path in paths:
        assert path.read_bytes()[:4] == b"\x89PNG"


def _answers(tmp_path, n=20_000, seed=0):
    x = np.random.default_rng(seed).choice(["yes", "no"], n, p=[0.3, 0.7])
    p = tmp_path / "answers.csv"
    p.write_text("id,answer,region\n" + "".join(f"{i},{a},r{i % 3}\n" for i, a in enumerate(x)))
    return p


def test_randomize_estimate_round_trip(tmp_path, capsys):
    answers = _answers(tmp_path)
    out = tmp_path / "responses.csv"
    code, _, err = run(["randomize", str(answers), "--mechanism", "examples/mechanisms/q2x3.csv", "--column",
                        "answer", "--out", str(out), "--seed", "4", "--simulation", "--keep", "id,region"], capsys)
    assert code == 0, err
    header = out.read_text().splitlines()[0]
    assert header == "id,region,response"  # never the true answer
    code, text, err = run(["estimate", str(out), "--mechanism", "examples/mechanisms/q2x3.csv", "--format",
                           "json"], capsys)
    assert code == 0, err
    obj = json.loads(text)
    assert set(obj) >= {"estimate", "stderr", "ci_low", "ci_high"}
    assert abs(obj["estimate"]["yes"] - 0.3) <= 3 * obj["stderr"]["yes"]
    assert obj["ci_low"]["yes"] <= 0.3 <= obj["ci_high"]["yes"] or abs(obj["estimate"]["yes"] - 0.3) < 0.02
    # an existing output is refused, and nothing is changed
    before = out.read_bytes()
    code, _, err = run(["randomize", str(answers), "--mechanism", "examples/mechanisms/q2x3.csv", "--column",
                        "answer", "--out", str(out)], capsys)
    assert code == 2 and "already exists" in err and out.read_bytes() == before


def test_randomize_without_seed_uses_fresh_randomness(tmp_path, capsys):
    answers = _answers(tmp_path, n=200)
    outs = []
    for name in ("a.csv", "b.csv"):
        code, _, err = run(["randomize", str(answers), "--mechanism", "examples/mechanisms/q2x3.csv", "--column",
                            "answer", "--out", str(tmp_path / name)], capsys)
        assert code == 0, err
        outs.append((tmp_path / name).read_text())
    assert outs[0] != outs[1]


def test_randomize_wldp_and_estimate_interval(tmp_path, capsys):
    answers = _answers(tmp_path)
    out = tmp_path / "precise.csv"
    code, _, err = run(["randomize", str(answers), "--mechanism", "examples/mechanisms/q2x3.csv", "--column",
                        "answer", "--out", str(out), "--seed", "1", "--simulation", "--semantics", "wldp",
                        "--allocation", "0.5"],
                       capsys)
    assert code == 0, err
    code, text, err = run(["estimate", str(out), "--mechanism", "examples/mechanisms/q2x3.csv", "--semantics",
                           "wldp", "--format", "json"], capsys)
    assert code == 0, err
    obj = json.loads(text)
    assert obj["lower"]["yes"] <= 0.3 <= obj["upper"]["yes"]


@pytest.mark.parametrize("argv,match", [
    (["--column", "nope"], "no column 'nope'"),
    (["--column", "answer", "--keep", "answer"], "never written out"),
    (["--column", "region"], "is not an input"),
])
def test_randomize_errors(tmp_path, capsys, argv, match):
    answers = _answers(tmp_path, n=10)
    out = tmp_path / "r.csv"
    code, _, err = run(["randomize", str(answers), "--mechanism", "examples/mechanisms/q2x3.csv", "--out", str(out),
                        *argv], capsys)
    assert code == 2 and match in err and err.count("\n") == 1
    assert not out.exists()


def test_estimate_rejects_unknown_responses(tmp_path, capsys):
    p = tmp_path / "r.csv"
    p.write_text("response\n{yes}\n{maybe}\n")
    code, _, err = run(["estimate", str(p), "--mechanism", "examples/mechanisms/q2x3.csv"], capsys)
    assert code == 2 and "{maybe}" in err


def test_estimation_figures_and_their_csv(tmp_path):
    import importlib.util

    spec = importlib.util.spec_from_file_location("plot_estimation", "examples/plot_estimation.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    paths = module.main(["--out", str(tmp_path), "--reps", "200"])
    assert len(paths) == 3
    for path in paths:
        assert path.read_bytes()[:4] == b"\x89PNG"
        assert path.with_suffix(".csv").read_text().count("\n") >= 5
    import pandas as pd

    fig5 = pd.read_csv(paths[2].with_suffix(".csv"))  # lambda = 0 is the worst corner, lambda = 1 the best one
    assert np.all(fig5["nu_O"] <= fig5["nu_S"]) and np.all(fig5["nu_S"] <= fig5["nu_W"])
    assert np.all(np.abs(fig5["nu_lambda0_simulated"] / fig5["nu_W"] - 1) < 0.4)
    assert np.all(np.abs(fig5["nu_lambda1_simulated"] / fig5["nu_O"] - 1) < 0.4)


def test_randomize_formats(tmp_path, capsys):
    answers = _answers(tmp_path, n=50)
    out = tmp_path / "r.csv"
    code, text, err = run(["randomize", str(answers), "--mechanism", "examples/mechanisms/q2x3.csv", "--column",
                           "answer", "--out", str(out), "--seed", "2", "--simulation", "--format", "json"], capsys)
    assert code == 0, err
    summary = json.loads(text)
    assert {k: summary[k] for k in ("n", "out", "manifest", "random_source")} == {
        "n": 50, "out": str(out), "manifest": f"{out}.manifest.json",
        "random_source": "seeded simulation (numpy PCG64)"}
    assert summary["variables"] == {"answer": summary["epsilon_total"]} and "seed" not in summary
    assert "anyone who knows the seed can undo it" in err


@pytest.mark.parametrize("stage", ["drawing", "writing"])
def test_interrupted_randomize_leaves_no_output(tmp_path, capsys, monkeypatch, stage):
    import designer._internal.io
    import designer.guarantees.exact_table

    def interrupt(*args, **kwargs):
        raise KeyboardInterrupt

    if stage == "drawing":
        monkeypatch.setattr(designer.guarantees.exact_table.ExactTable, "sample", interrupt)
    else:  # after part of the temporary file was written, before the rename
        monkeypatch.setattr(designer._internal.io.os, "fsync", interrupt)
    answers = _answers(tmp_path, n=2000)
    out = tmp_path / "responses.csv"
    code, _, err = run(["randomize", str(answers), "--mechanism", "examples/mechanisms/q2x3.csv", "--column",
                        "answer", "--out", str(out)], capsys)
    assert code == 130 and "interrupted" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["answers.csv"]  # no output, no temporary file


def test_simulate_matches_warner_variance(tmp_path, capsys):
    est = tmp_path / "estimates.csv"
    code, text, err = run(["simulate", "examples/mechanisms/gwrr.csv", "--n", "500", "--reps", "4000",
                           "--prior", "yes=0.3,no=0.7", "--seed", "3", "--format", "json", "--out", str(est),
                           "--quiet"], capsys)
    assert code == 0, err
    obj = json.loads(text)
    rows = {r["input"]: r for r in obj["rows"]}
    assert obj["used_surveys"] == 4000
    assert abs(rows["yes"]["bias"]) < 4 * math.sqrt(rows["yes"]["variance"] / 4000)
    assert rows["yes"]["ratio"] == pytest.approx(1.0, abs=0.1)  # within Monte Carlo error of 1/(n I)
    import pandas as pd

    df = pd.read_csv(est)
    assert df.shape == (4000, 2) and np.allclose(df.sum(axis=1), 1.0)
    code, text, _ = run(["simulate", "examples/mechanisms/q2x3.csv", "--n", "200", "--reps", "500",
                         "--estimator", "eq2", "--seed", "1", "--quiet"], capsys)
    assert code == 0 and "closed_form" in text and "estimator eq2" in text
    code, text, _ = run(["simulate", "examples/mechanisms/q2x3.csv", "--n", "200", "--reps", "300",
                         "--semantics", "wldp", "--allocation", "0", "--seed", "1", "--format", "csv",
                         "--quiet"], capsys)
    assert code == 0 and text.splitlines()[0].startswith("input,true,mean,bias,variance")


@pytest.mark.parametrize("argv,match", [
    (["--prior", "0.5,0.6"], "sum to 1"),
    (["--prior", "maybe=1"], "unknown inputs"),
    (["--prior", "0.2,0.3,0.5"], "3 values for 2 inputs"),
    (["--n", "0"], "argument --n: must be a whole number from 1"),
    (["--reps", "1"], "argument --reps"),
    (["--estimator", "eq2", "--semantics", "wldp"], "Eq 2"),
    (["--allocation", "lots", "--semantics", "wldp"], "--allocation"),
])
def test_simulate_errors_are_one_line(capsys, argv, match):
    code, out, err = run(["simulate", "examples/mechanisms/q2x3.csv", "--reps", "10", *argv], capsys)
    assert code == 2 and out == "" and err.count("\n") == 1 and match in err, err


def test_progress_bars_only_on_a_terminal_and_not_with_quiet(monkeypatch, capsys):
    import argparse

    from designer.cli import show_progress

    monkeypatch.setattr(sys.stderr, "isatty", lambda: True, raising=False)
    assert show_progress(argparse.Namespace(quiet=False))
    assert not show_progress(argparse.Namespace(quiet=True))
    monkeypatch.setattr(sys.stderr, "isatty", lambda: False, raising=False)
    assert not show_progress(argparse.Namespace(quiet=False))
    # a sweep on a "terminal" draws its bar on stderr, never on stdout
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True, raising=False)
    assert main(["sweep", "problems/gwrr-dont-know.toml", "--epsilon", "1,2", "--format", "csv"]) == 0
    out, err = capsys.readouterr()
    assert out.startswith("epsilon,") and "designing" in err


def test_every_command_has_format_and_quiet():
    from designer.cli import COMMANDS, build_parser

    parser = build_parser()
    for name, *_ in COMMANDS:
        sub = parser._subparsers._group_actions[0].choices[name]
        options = {o for a in sub._actions for o in a.option_strings}
        assert {"--format", "--quiet"} <= options, name


def _designer(*args):
    import shutil
    import subprocess

    exe = shutil.which("designer", path=os.path.dirname(sys.executable))
    command = [exe, *args] if exe else [sys.executable, "-m", "designer", *args]
    return subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=_default_signals)


def _default_signals() -> None:
    """In the child: SIGINT and SIGTERM as a shell would give them (a test worker's own disposition or mask, which
    a child inherits across exec, would otherwise decide whether a Ctrl-C reaches designer)."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, [signal.SIGINT, signal.SIGTERM])


def test_ctrl_c_stops_a_long_solve(tmp_path):
    """A sweep of 40 budgets over the truthful WLDP program of 20 answers (answer sets priced, each budget HiGHS
    solves of seconds, about five minutes in all; a problem naming no objective is a variance design, too quick to
    interrupt): SIGINT cancels HiGHS, exit 130, one line."""
    import signal
    import time

    labels = ", ".join(f'"a{i}"' for i in range(20))
    prior = ", ".join(str((i + 1) / 210) for i in range(20))
    problem = tmp_path / "w20.toml"
    problem.write_text(f'inputs = [{labels}]\nepsilon = 1.0\nsemantics = "wldp"\nobjective = "truthful"\n'
                       f'prior = [{prior}]\n')
    proc = _designer("sweep", str(problem), "--eps", "0.5:3:40")
    maps = f"/proc/{proc.pid}/maps"
    deadline = time.monotonic() + 60
    while os.path.exists(maps) and time.monotonic() < deadline:  # wait until HiGHS is loaded (a busy machine
        with open(maps) as f:                                     # starts slowly), then into the solve
            if "highs" in f.read().lower():
                break
        time.sleep(0.1)
    time.sleep(2.0)
    for _ in range(4):  # a loaded machine may still be importing when the first Ctrl-C comes: press it again
        proc.send_signal(signal.SIGINT)
        try:
            out, err = proc.communicate(timeout=15)
            break
        except subprocess.TimeoutExpired:
            continue
    else:
        proc.kill()
        pytest.fail("designer did not stop after four Ctrl-C")
    assert proc.returncode == 130 and err.strip() == "designer: interrupted" and out == ""


def test_sigterm_during_randomize_leaves_nothing(tmp_path):
    import signal
    import time

    rng = np.random.default_rng(0)
    answers = tmp_path / "answers.csv"
    out = tmp_path / "responses.csv"
    for rows in (3_000_000, 6_000_000, 12_000_000):  # a loaded machine may finish before the signal: larger
        answers.write_text("answer\n" + "\n".join(rng.choice(["yes", "no"], rows)) + "\n")
        proc = _designer("randomize", str(answers), "--mechanism", "examples/mechanisms/q2x3.csv", "--column",
                         "answer", "--out", str(out))
        deadline = time.time() + 30
        while (time.time() < deadline and proc.poll() is None
               and not any(p.name.startswith(".responses.csv.") for p in tmp_path.iterdir())):
            time.sleep(0.02)  # until the temporary output exists
        if proc.poll() is not None:  # done before the signal could be sent: not what is tested here
            proc.communicate(timeout=30)
            out.unlink(missing_ok=True)
            continue
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=30)
        if proc.returncode == 0:  # finished between the last look and the signal
            out.unlink(missing_ok=True)
            continue
        assert proc.returncode == 143 and "terminated" in err
        assert sorted(p.name for p in tmp_path.iterdir()) == ["answers.csv"]
        return
    pytest.fail("randomize finished before SIGTERM three times: the machine is too fast or too loaded to test")
