"""``designer sweep``: grids of designs, serial, with joblib and on a local Dask cluster (issue: sweeps)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from designer.cli import main
from designer.closed_forms import gwrr_sldp
from designer.optimal import DesignProblem, load_problem
from designer.optimal.sweep import SWEEP_COLUMNS, sweep, sweep_grid

GWRR = "problems/gwrr-dont-know.toml"
GRID = ["--epsilon", "0.1:5:50", "--dont-know", "0:0.5:6"]


@pytest.fixture(scope="module")
def serial_csv(tmp_path_factory):
    out = tmp_path_factory.mktemp("sweep") / "serial.csv"
    assert main(["sweep", GWRR, *GRID, "--out", str(out), "--quiet", "--format", "csv"]) == 0
    return out


def test_serial_sweep_matches_cor_3_12(serial_csv):
    df = pd.read_csv(serial_csv)
    assert list(df.columns) == list(SWEEP_COLUMNS) and len(df) == 300
    assert (df["status"] == "optimal").all()
    # grid order: epsilon fastest
    assert np.allclose(df["epsilon"].to_numpy()[:50], np.linspace(0.1, 5, 50))
    assert np.allclose(df["dont_know"].to_numpy()[::50], np.linspace(0, 0.5, 6))
    for row in df.itertuples():
        p, _ = gwrr_sldp(row.epsilon, 1.0 - row.dont_know)  # truthful objective = p (uniform prior)
        assert row.objective_value == pytest.approx(p, abs=1e-9)
        assert row.eps_shafer <= row.epsilon + 1e-12  # float log of a ratio certified exactly <= e^eps
        assert row.certificate == "exact"


def test_joblib_sweep_gives_an_identical_csv(serial_csv, tmp_path):
    out = tmp_path / "parallel.csv"
    assert main(["sweep", GWRR, *GRID, "--jobs", "2", "--out", str(out), "--quiet"]) == 0
    assert out.read_bytes() == serial_csv.read_bytes()


def test_dask_sweep_on_a_local_cluster_gives_an_identical_csv(serial_csv, tmp_path):
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                                  silence_logs=50) as cluster:
        out = tmp_path / "dask.csv"
        code = main(["sweep", GWRR, *GRID, "--scheduler", cluster.scheduler_address, "--out", str(out), "--quiet"])
        assert code == 0
    assert out.read_bytes() == serial_csv.read_bytes()


def test_plot_has_one_curve_per_dont_know_value(tmp_path, monkeypatch):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from designer.optimal import sweep as sweep_module

    captured = {}
    real_close = plt.close

    def keep(fig=None):
        if fig is not None:
            ax = fig.axes[0]
            captured["curves"] = [(line.get_label(), line.get_xdata(), line.get_ydata()) for line in ax.lines]
            captured["xlabel"] = ax.get_xlabel()
        real_close(fig)

    monkeypatch.setattr(plt, "close", keep)
    png = tmp_path / "sweep.png"
    assert main(["sweep", GWRR, "--epsilon", "0.5:3:6", "--dont-know", "0:0.5:6", "--plot", str(png),
                 "--quiet"]) == 0
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert len(captured["curves"]) == 6 and captured["xlabel"] == "epsilon (nats)"
    labels = [c[0] for c in captured["curves"]]
    assert labels == [f"don't know = {v:g}" for v in np.linspace(0, 0.5, 6)]
    for _, x, y in captured["curves"]:
        assert np.allclose(x, np.linspace(0.5, 3, 6)) and np.all(np.diff(y) > 0)
    assert sweep_module.SWEEP_COLUMNS[0] == "epsilon"


def test_infeasible_points_are_rows_not_failures(capsys):
    problem = load_problem(GWRR).replace(semantics="wldp")
    df = sweep(problem, [0.5, 1.0], dont_know=[0.0, 0.4])
    status = df["status"].tolist()
    assert status == ["optimal", "optimal", "infeasible", "optimal"]  # c = 0.6 needs eps >= ln(1.4/0.6)
    assert math.isnan(df.loc[2, "objective_value"]) and "tanh" in df.loc[2, "message"]


def test_grid_and_argument_errors(tmp_path, capsys):
    base = DesignProblem(objective="truthful", inputs=("yes", "no"), epsilon=1.0)
    assert len(sweep_grid(base, [1, 2], [0, 0.1, 0.2])) == 6
    cases = [
        (["--epsilon", "0:1:3"], "a finite number > 0"),
        (["--epsilon", "1,nan"], "a finite number > 0"),
        (["--epsilon", "1:2"], "start:stop:count"),
        (["--epsilon", "1", "--dont-know", "0,1"], "in [0, 1)"),
        (["--epsilon", "1", "--jobs", "0"], "--jobs"),
        (["--epsilon", "1", "--scheduler", "not an address"], "not a scheduler address"),
        (["--epsilon", "1", "--scheduler", "tcp://127.0.0.1:1"], "cannot reach"),
        (["--epsilon", "1", "--out", GWRR], "never overwritten"),
    ]
    for extra, match in cases:
        code = main(["sweep", GWRR, *extra, "--quiet"])
        err = capsys.readouterr().err
        assert code == 2 and err.count("\n") == 1 and match in err, (extra, err)


def test_json_and_table_formats(capsys):
    import json

    assert main(["sweep", GWRR, "--epsilon", "1,2", "--format", "json", "--quiet"]) == 0
    obj = json.loads(capsys.readouterr().out)
    assert [r["epsilon"] for r in obj["rows"]] == [1.0, 2.0] and obj["rows"][0]["status"] == "optimal"
    assert main(["sweep", GWRR, "--epsilon", "1,2", "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "2 of 2 designs certified" in out and "objective_value" in out
