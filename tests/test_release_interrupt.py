"""No true value on disk after any interruption, and outputs that appear together or not at all (docs/theory.md
section 7.5): randomize killed (SIGKILL, SIGTERM) at many points of its run, from the command line, from Python
with a DataFrame, and through the bucket files of a large release. After every kill no file in the output folder
or in $TMPDIR holds a planted true value (a column never kept, and the randomized answers spelt as only the input
spells them); the data is never there without its manifest; what a killed run left is removed by the next run to
the same output (its clean-up, then a whole second run), which ends with exactly the data and the manifest."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from designer.release.staging import clean_remains, output_lock

ROOT = Path(__file__).resolve().parents[1]
ROWS = 20_000
KILLS = 4

#: The true values planted in the input: a column never written (one marker a row) and the answers as only the
#: input spells them (the mechanism's inputs are yes and no, matched regardless of case).
MARKERS = (b"MARKER-", b"YeS", b"nO\n", b"nO,")

CLI = ("import sys\n"
       "from designer.cli import main\n"
       "sys.exit(main(sys.argv[1:]))\n")
BUCKETS = ("import sys\n"
           "import designer.release.randomize_parts as parts\n"
           "parts.MEMORY_ROWS, parts.BUCKET_ROWS = 1_000, 2_000\n"
           "from designer.cli import main\n"
           "sys.exit(main(sys.argv[1:]))\n")
FRAME = ("import sys\n"
         "import pandas as pd\n"
         "import designer\n"
         "frame = pd.read_csv(sys.argv[1], dtype=str, keep_default_na=False)\n"
         "designer.randomize(frame, sys.argv[2], column='answer', keep='id', out=sys.argv[3])\n")


@pytest.fixture(scope="module")
def truth(tmp_path_factory):
    folder = tmp_path_factory.mktemp("input")
    rng = np.random.default_rng(0)
    answers = rng.choice(["YeS", "nO"], ROWS)
    with open(folder / "truth.csv", "w") as f:
        f.write("id,secret,answer\n" + "".join(f"{i},MARKER-{i:07d},{a}\n" for i, a in enumerate(answers)))
    (folder / "m.csv").write_text("input,{yes},{no}\nyes,0.75,0.25\nno,0.25,0.75\n")
    return folder


def _argv(kind: str, truth: Path, out: Path) -> list[str]:
    if kind == "frame":
        return [sys.executable, "-c", FRAME, str(truth / "truth.csv"), str(truth / "m.csv"), str(out)]
    return [sys.executable, "-c", CLI if kind == "cli" else BUCKETS, "randomize", str(truth / "truth.csv"),
            "--mechanism", str(truth / "m.csv"), "--column", "answer", "--keep", "id", "--out", str(out)]


def _files(*folders: Path) -> list[Path]:
    return [Path(root) / name for folder in folders for root, _, names in os.walk(folder) for name in names]


def _holding_truth(*folders: Path) -> list[str]:
    found = []
    for path in _files(*folders):
        try:
            data = path.read_bytes()
        except OSError:  # removed while we looked
            continue
        found += [f"{path}: {m!r}" for m in MARKERS if m in data]
    return found


@pytest.mark.heavy
@pytest.mark.parametrize("kind", ["cli", "frame", "buckets"])
def test_no_true_value_on_disk_and_outputs_together_after_any_kill(tmp_path, truth, kind):
    out_dir, tmp_dir = tmp_path / "out", tmp_path / "tmp"
    out_dir.mkdir()
    tmp_dir.mkdir()
    env = {**os.environ, "TMPDIR": str(tmp_dir), "PYTHONPATH": str(ROOT)}
    out = out_dir / "r.csv"
    manifest = out_dir / "r.csv.manifest.json"
    start = time.monotonic()
    subprocess.run(_argv(kind, truth, out), env=env, check=True, capture_output=True, cwd=tmp_path)
    whole = time.monotonic() - start  # how long a run takes here: the kills are spread over it
    assert not _holding_truth(out_dir, tmp_dir)
    for path in (out, manifest):
        path.unlink()
    rng = np.random.default_rng(1)
    for sig in (signal.SIGKILL, signal.SIGTERM):
        for delay in np.sort(rng.uniform(0.1, 1.1, KILLS)) * whole:
            proc = subprocess.Popen(_argv(kind, truth, out), env=env, stdout=subprocess.DEVNULL,
                                    stderr=subprocess.DEVNULL, cwd=tmp_path)
            time.sleep(float(delay))
            proc.send_signal(sig)
            proc.wait()
            leaked = _holding_truth(out_dir, tmp_dir)
            assert not leaked, leaked
            assert manifest.exists() or not out.exists()  # the data is placed last, never without its manifest
            with output_lock(str(out)):  # what the next run does first
                clean_remains(str(out))
            names = sorted(p.name for p in out_dir.iterdir() if p.name != "designer-ledger.json")  # the ledger
            assert names in ([], ["r.csv", "r.csv.manifest.json"]), names  # finished, or nothing left
            assert os.listdir(tmp_dir) == []
            for path in (out, manifest):
                path.unlink(missing_ok=True)
    proc = subprocess.Popen(_argv(kind, truth, out), env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            cwd=tmp_path)
    time.sleep(0.6 * whole)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    subprocess.run(_argv(kind, truth, out), env=env, check=False, capture_output=True, cwd=tmp_path)
    assert sorted(p.name for p in out_dir.iterdir() if p.name != "designer-ledger.json") == ["r.csv",
                                                                                             "r.csv.manifest.json"]
