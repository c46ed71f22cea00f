"""The release checks, each stated as the property it protects (written for the mutants that survived the
mutation suite: docs/mutation.md, benchmarks/mutation/report.md).

A seed is a number like any other, and 0 is a seed: ``--seed 0`` without ``--simulation`` is a release drawn from
a replayable source and must be refused; with ``--simulation`` it draws reproducibly and is warned about.
"""

from __future__ import annotations

import pandas as pd
import pytest

from designer.cli import main
from designer.exceptions import DesignerError
from designer.release.randomize_run import SEED_WARNING
from designer.verbs.randomize_verb import randomize

Q2X3 = "examples/mechanisms/q2x3.csv"
ANSWERS = "examples/answers.csv"
FRAME = pd.DataFrame({"answer": ["yes", "no", "yes", "no", "no", "yes"]})


# ---------------------------------------------------------------- a seed of 0 is a seed

def test_seed_zero_without_simulation_is_refused_on_the_command_line(scratch, capsys) -> None:
    """The issue's survivor: ``if args.seed`` for ``if args.seed is not None`` let ``--seed 0`` release a draw
    anyone can replay. Exit 2, one line naming --simulation, and nothing written."""
    assert main(["randomize", ANSWERS, "--mechanism", Q2X3, "--column", "answer", "--out", "out.csv",
                 "--seed", "0"]) == 2
    err = capsys.readouterr().err
    assert "--simulation" in err and "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert not list(scratch.glob("out.csv*"))


@pytest.mark.parametrize("out", ["x.csv", None])
def test_seed_zero_without_simulation_is_refused_by_the_library(scratch, out) -> None:
    """The same refusal for a file and for a DataFrame drawn in memory (``out`` None): both go through the one
    check of the request."""
    data = ANSWERS if out else FRAME
    with pytest.raises(DesignerError, match="add --simulation"):
        randomize(data, Q2X3, column="answer", out=out, seed=0)
    assert not list(scratch.glob("x.csv*"))


def test_seed_zero_simulation_is_seeded_reproducible_and_warned(scratch, capsys) -> None:
    """With --simulation, seed 0 draws from the seeded generator (the same file twice, the manifest says so) and
    carries the seed's warning, as any other seed does."""
    for name in ("a.csv", "b.csv"):
        assert main(["randomize", ANSWERS, "--mechanism", Q2X3, "--column", "answer", "--out", name,
                     "--seed", "0", "--simulation"]) == 0
        assert SEED_WARNING in capsys.readouterr().err
    assert (scratch / "a.csv").read_bytes() == (scratch / "b.csv").read_bytes()
    result = randomize(ANSWERS, Q2X3, column="answer", out="c.csv", seed=0, simulation=True)
    assert result.random_source.startswith("seeded simulation") and SEED_WARNING in result.warnings
    assert (scratch / "c.csv").read_bytes() == (scratch / "a.csv").read_bytes()


def test_seed_zero_in_memory_is_seeded_reproducible_and_warned() -> None:
    """The DataFrame path: seed 0 gives the same rows and order twice, from the seeded generator, warned."""
    first = randomize(FRAME, Q2X3, column="answer", seed=0, simulation=True)
    again = randomize(FRAME, Q2X3, column="answer", seed=0, simulation=True)
    assert first.random_source.startswith("seeded simulation") and SEED_WARNING in first.warnings
    assert first.frame.index.tolist() == again.frame.index.tolist()
    assert first.frame["response"].tolist() == again.frame["response"].tolist()
    unseeded = randomize(FRAME, Q2X3, column="answer")
    assert unseeded.random_source.startswith("os.urandom") and SEED_WARNING not in unseeded.warnings
