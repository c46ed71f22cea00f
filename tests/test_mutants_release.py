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


# ---------------------------------------------------------------- the composed budget, compared exactly

from fractions import Fraction  # noqa: E402

Q2X3_STATED = Fraction("1.0986122886681096")  # ln 3 as the drawn table states it: its shortest decimal


def test_the_budget_is_compared_exactly_with_the_composed_loss() -> None:
    """--budget equal to the composed loss (the table's budget as stated) is met; the least decimal step below it
    is refused, in one line that gives the sum and the budget."""
    result = randomize(FRAME, Q2X3, column="answer", budget="1.0986122886681096")
    assert result.totals == {"shafer": Q2X3_STATED, "walley": Fraction(0)}
    with pytest.raises(DesignerError, match=r"^the release composes to 1\.09861 nats per respondent \(the sum of "
                                            r"1\.099\), above --budget 1\.09861$"):
        randomize(FRAME, Q2X3, column="answer", budget="1.0986122886681095")


def test_variables_add_their_budgets_exactly_and_wldp_states_both_losses() -> None:
    """Two variables drawn independently: the Shafer budgets add exactly (Lemma 3.3); under wldp the certificate
    bounds both losses and the Walley total is the same sum (Lemma 3.15), else it is 0."""
    frame = pd.DataFrame({"a": ["yes", "no", "yes"], "b": ["no", "no", "yes"]})
    pairs = [("a", Q2X3), ("b", Q2X3)]
    sldp = randomize(frame, variable=pairs)
    assert sldp.totals == {"shafer": 2 * Q2X3_STATED, "walley": Fraction(0)}
    assert sldp.certificate.exact_budget == 2 * Q2X3_STATED and len(sldp.certificate.parts) == 2
    wldp = randomize(frame, variable=pairs, semantics="wldp")
    shafer = wldp.totals["shafer"]
    assert wldp.totals == {"shafer": shafer, "walley": shafer} and shafer == 2 * wldp.certificate.parts[0].exact_budget
    assert [str(loss) for loss in wldp.certificate.losses] == ["shafer", "walley"]
    assert all([str(loss) for loss in part.losses] == ["shafer", "walley"] for part in wldp.certificate.parts)
    with pytest.raises(DesignerError, match=r"^the release composes to 2\.19722 nats per respondent \(the sum of "
                                            r"1\.099, 1\.099\), above --budget 2$"):
        randomize(frame, variable=pairs, budget=2)


def test_the_prior_flags_are_refused_apart_in_words(scratch) -> None:
    with pytest.raises(DesignerError, match=r"^--invariant-prior data publishes a prior computed from the file being "
                                            r"released: give --prior-budget EPS0"):
        randomize(ANSWERS, Q2X3, column="answer", out="x.csv", invariant_prior="data")
    with pytest.raises(DesignerError, match=r"^--prior-budget is the budget of a prior read from the file: give it "
                                            r"with --invariant-prior data$"):
        randomize(ANSWERS, Q2X3, column="answer", out="x.csv", prior_budget="0.5")
    assert not list(scratch.glob("x.csv*"))


# ---------------------------------------------------------------- the published prior's budget in the composed loss

INVARIANT = 'inputs = ["a", "b", "c"]\nepsilon = 1.0\ninvariant = true\n'


def _categories(path, n: int = 600) -> None:
    import numpy as np

    cats = np.random.default_rng(2).choice(["a", "b", "c"], size=n, p=[0.5, 0.3, 0.2])
    path.write_text("id,cat\n" + "".join(f"{i},{c}\n" for i, c in enumerate(cats)))


def test_the_published_priors_budget_adds_to_each_loss_it_bounds(tmp_path) -> None:
    """A prior read from the file is published with noise at --prior-budget: its budget adds to the Shafer loss,
    and to the Walley loss under wldp only (under sldp no Walley loss is stated: 0, not the prior's 1/2)."""
    problem, data = tmp_path / "p.toml", tmp_path / "cats.csv"
    problem.write_text(INVARIANT)
    _categories(data)
    sldp = randomize(str(data), variable=[("cat", str(problem))], invariant_prior="data", prior_budget="1/2",
                     out=str(tmp_path / "s.csv"), seed=1, simulation=True)
    assert sldp.totals == {"shafer": Fraction(3, 2), "walley": Fraction(0)} and sldp.prior_budget == Fraction(1, 2)
    wldp = randomize(str(data), variable=[("cat", str(problem))], invariant_prior="data", prior_budget="1/2",
                     out=str(tmp_path / "w.csv"), seed=1, simulation=True, semantics="wldp")
    assert wldp.totals == {"shafer": Fraction(3, 2), "walley": Fraction(3, 2)}
    with pytest.raises(DesignerError, match=r"^the release composes to 1\.5 nats per respondent \(the sum of 1, the "
                                            r"prior's 0\.5\), above --budget 1\.4$"):
        randomize(str(data), variable=[("cat", str(problem))], invariant_prior="data", prior_budget="1/2",
                  out=str(tmp_path / "b.csv"), budget="1.4", seed=1, simulation=True)
    assert not (tmp_path / "b.csv").exists()


def test_a_dataframe_with_a_prior_budget_is_refused_for_writing_files_not_for_the_flags() -> None:
    """--prior-budget with --invariant-prior data is a valid pair: a DataFrame drawn in memory is refused only
    because a published prior needs files."""
    with pytest.raises(DesignerError, match=r"^strata, invariant_prior='data', prior_budget, repair, manifest, designs "
                                            r"and scheduler write files"):
        randomize(FRAME, Q2X3, column="answer", invariant_prior="data", prior_budget="1/2")


def test_the_refusals_of_the_request_in_full() -> None:
    with pytest.raises(DesignerError, match=r"^--seed lets anyone who knows the seed undo the draw: add --simulation "
                                            r"to say this is a simulation, or leave --seed out \(the default draws "
                                            r"from the operating system's CSPRNG\)$"):
        randomize(FRAME, Q2X3, column="answer", seed=0)
    with pytest.raises(DesignerError, match=r"\(added to the composed loss\), or keep the problem's prior "
                                            r"\(--invariant-prior problem\)$"):
        randomize(FRAME, Q2X3, column="answer", invariant_prior="data")


def test_keeping_the_order_is_warned_about() -> None:
    kept = randomize(FRAME, Q2X3, column="answer", keep_order=True)
    assert kept.row_order == "kept"
    assert [w for w in kept.warnings if "writes the rows in the input's order" in w and "gives its true values "
            "away" in w]
    assert not [w for w in randomize(FRAME, Q2X3, column="answer").warnings if "input's order" in w]
