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


# ---------------------------------------------------------------- the table each variable is drawn from (_table)
#
# Each test states what a release draws from; the expected counts are worked out in Fractions from the masses and
# the mixing weight (the smallest 2^-48 * 2^j that certifies), never read from designer.

import math  # noqa: E402

import numpy as np  # noqa: E402

import designer  # noqa: E402
from designer.guarantees.certified import CertifiedMechanism  # noqa: E402
from designer.release import randomize_run  # noqa: E402
from designer.release.randomize_run import _table  # noqa: E402
from designer.release.sources import Design  # noqa: E402
from designer.vocabulary import Semantics  # noqa: E402

W = 2**53
Q = designer.Q_2x3(0.6, 0.2)  # {yes} .6, {no} .2, {yes,no} .2 for yes; Shafer loss ln 3
TAIL = (", or pass --repair to release the mixed channel (written beside the output; estimate and regress use it "
        "with --manifest)")


def _near(counts, masses) -> bool:
    """Counts over 2^53 within two units of ``masses`` (Fractions) times 2^53, each row summing to 2^53."""
    want = [[m * W for m in row] for row in masses]
    return all(int(s) == W for s in np.asarray(counts).sum(axis=1)) and all(
        abs(int(c) - w) <= 2 for crow, wrow in zip(counts.tolist(), want) for c, w in zip(crow, wrow))


def _stated(monkeypatch, mech, epsilon) -> None:
    """A design stating ``epsilon`` below its mechanism's loss (what no designer output does, but a table must
    still not draw from it unseen)."""
    monkeypatch.setattr(randomize_run, "design_of",
                        lambda source, prior=None: Design(mech, epsilon, "the stated budget (test)"))


def test_a_wldp_release_draws_its_allocations_precise_answers_and_refuses_a_mix_by_default() -> None:
    """Under wldp the table is the chosen member's precise answers (allocation 1: "don't know" goes to the truth,
    .8/.2), over the frame's labels; at the certificate's budget ln 3 < ln 4 it needs a quarter of the uniform
    Bayesian row (1/8 gives 0.8 - 0.3/8 over 0.2 + 0.3/8 > 3), so without --repair (the default) it is refused in
    words naming the member's own loss and the budget."""
    cert = CertifiedMechanism.certify(Q, epsilon=math.log(3))
    source = "the CertifiedMechanism given"
    with pytest.raises(DesignerError) as refused:
        _table(cert, "wldp", "1")
    assert str(refused.value) == (
        f"{source}: its 1 allocation's precise answers have Shafer loss 1.38629 > the budget 1.09861: drawing within "
        "the budget would mix in 0.25 of a uniform row (masses moving by up to 0.075), so the answers would not "
        f"follow {source} and estimates made with it would be biased; design the mechanism for WLDP (designer design "
        "PROBLEM --semantics wldp), choose an --allocation within the budget" + TAIL)
    drawn = _table(cert, "wldp", "1", repair=True)
    mixed = Fraction(3, 4) * Fraction(4, 5) + Fraction(1, 4) * Fraction(1, 2)  # 29/40
    assert drawn.table.outputs == ("yes", "no") and drawn.table.semantics is Semantics.WLDP
    assert _near(drawn.table.counts, [[mixed, 1 - mixed], [1 - mixed, mixed]])
    assert drawn.table.mix_weight == 0.25 and abs(drawn.table.max_change - 0.075) < 1e-15
    assert drawn.table.epsilon == float(cert.epsilon) and drawn.mechanism is Q and drawn.prior is None
    assert drawn.basis == "the certificate's budget (the CertifiedMechanism given)"
    assert drawn.certificate is not None and drawn.certificate["summary"].startswith("1.09861-private")
    assert set(drawn.repair) == {"why", "violation"}
    assert drawn.repair["why"] == "its 1 allocation's precise answers have Shafer loss 1.38629 > the budget 1.09861"
    assert abs(drawn.repair["violation"] - (math.log(4) - math.log(3))) < 1e-12


def test_a_wldp_release_within_its_budget_draws_the_member_unmixed() -> None:
    """The uniform allocation of Q_2x3 is .7/.3 (Shafer loss ln 7/3 < ln 3): drawn as it is, with the design's
    basis and certificate, no repair."""
    cert = CertifiedMechanism.certify(Q, epsilon=math.log(3))
    drawn = _table(cert, "wldp", "uniform")
    assert _near(drawn.table.counts, [[Fraction(7, 10), Fraction(3, 10)], [Fraction(3, 10), Fraction(7, 10)]])
    assert drawn.table.outputs == ("yes", "no") and drawn.repair is None and drawn.prior is None
    assert drawn.basis == "the certificate's budget (the CertifiedMechanism given)"
    assert drawn.certificate is not None and drawn.certificate["summary"].startswith("1.09861-private")


def test_an_allocation_that_is_not_a_number_is_refused_by_its_name() -> None:
    with pytest.raises(DesignerError, match=r"^allocation must be 'uniform' or a number in \[0, 1\], got 'half'$"):
        _table(Q, "wldp", "half", repair=False)


def test_an_sldp_design_over_its_stated_budget_is_refused_or_repaired_with_its_violation(monkeypatch) -> None:
    """A design stating eps = 1 for Q_2x3 (loss ln 3): a mix of 1/16 of the uniform row over the three answers
    leaves (.5625 + 1/48) / (.1875 + 1/48) = 2.8 > e, 1/8 certifies (17/30 over 13/60 = 2.62); refused without
    --repair, else drawn mixed with the violation ln 3 - 1."""
    _stated(monkeypatch, Q, 1.0)
    source = "the Mechanism given"
    with pytest.raises(DesignerError) as refused:
        _table(Q, "sldp", "uniform")
    assert str(refused.value) == (
        f"{source}: its masses exceed eps = 1 once written as integer counts over 2^53: drawing within the budget "
        "would mix in 0.125 of a uniform row (masses moving by up to 0.0333), so the answers would not follow "
        f"{source} and estimates made with it would be biased; design it again (designer design)" + TAIL)
    drawn = _table(Q, "sldp", "uniform", repair=True)
    big, small = Fraction(7, 8) * Fraction(3, 5) + Fraction(1, 24), Fraction(7, 8) * Fraction(1, 5) + Fraction(1, 24)
    assert (big, small) == (Fraction(17, 30), Fraction(13, 60))
    assert _near(drawn.table.counts, [[big, small, small], [small, big, small]])
    assert drawn.table.mix_weight == 0.125 and drawn.table.semantics is Semantics.SLDP
    assert drawn.repair == {"why": "its masses exceed eps = 1 once written as integer counts over 2^53",
                            "violation": drawn.repair["violation"]}
    assert abs(drawn.repair["violation"] - (math.log(3) - 1)) < 1e-12
    assert drawn.basis == "the stated budget (test)" and drawn.mechanism is Q and drawn.certificate is None


def test_a_design_no_mix_can_certify_is_refused_naming_it(monkeypatch) -> None:
    """At eps = 0.1 even half the uniform row leaves (.3 + 1/6) / (.1 + 1/6) = 1.75 > e^0.1."""
    _stated(monkeypatch, Q, 0.1)
    with pytest.raises(DesignerError) as refused:
        _table(Q, "sldp", "uniform", repair=True)
    assert str(refused.value) == ("the Mechanism given: no table over 2^53 of this mechanism is within eps = 0.1 even "
                                  "mixed half with the uniform row: the mechanism is not within that budget")


def test_a_loss_no_budget_covers_is_refused_for_the_design_and_for_its_member(monkeypatch) -> None:
    """A mass of 0 for one input where another has a positive one, with no stated budget: refused in words naming
    the ratio (for wldp, the member's: allocation 1 puts yes's "don't know" on {yes}, leaving m_yes({no}) = 0)."""
    zero = designer.Mechanism(np.array([[0.8, 0.0, 0.2], [0.2, 0.6, 0.2]]), inputs=["yes", "no"],
                              frame=["yes", "no"], focal=[1, 2, 3])
    tail = (" is infinite (a mass of 0 for one input where another has a positive one): no budget covers it; give "
            "every answer a positive mass for every input, or design the mechanism (designer design)")
    with pytest.raises(DesignerError) as refused:
        _table(zero, "sldp", "uniform")
    assert str(refused.value) == "the Mechanism given: m_no({no}) / m_yes({no})" + tail
    member = designer.Mechanism(np.array([[0.9, 0.0, 0.1], [0.2, 0.6, 0.2]]), inputs=["yes", "no"],
                                frame=["yes", "no"], focal=[1, 2, 3])  # the member's ratio, in the frame's labels
    with pytest.raises(DesignerError) as refused:
        _table(member, "wldp", "1")
    assert str(refused.value) == "the Mechanism given: m_no({no}) / m_yes({no})" + tail
    _stated(monkeypatch, Q, math.log(3))  # a file's path names the design in the refusal
    with pytest.raises(DesignerError, match=r"^examples/mechanisms/q2x3\.csv: its 1 allocation's precise answers "):
        _table(Q2X3, "wldp", "1")


def test_an_invariant_design_draws_its_own_integer_table_and_keeps_the_data_prior() -> None:
    """An invariant design (PRAM) is drawn from its own counts over a_x M per row, releasing the categories
    themselves; a prior read from the data (1/2, 1/3, 1/6) is the one the design keeps, and its rows' denominators
    are in the prior's proportions 3 : 2 : 1."""
    problem = designer.DesignProblem(inputs=["a", "b", "c"], epsilon=1.0, invariant=True)
    prior = [Fraction(1, 2), Fraction(1, 3), Fraction(1, 6)]
    drawn = _table(problem, "sldp", "uniform", prior)
    assert drawn.table.outputs == ("a", "b", "c") and tuple(drawn.prior) == tuple(prior)
    dens = drawn.table.denominators
    assert len(dens) == 3 and dens[0] == 3 * dens[2] and dens[1] == 2 * dens[2]
    assert [int(s) for s in drawn.table.counts.sum(axis=1)] == list(dens) and drawn.table.mix_weight == 0.0
    assert drawn.basis == "the problem's budget (the DesignProblem given)" and drawn.repair is None
    assert drawn.certificate is not None and drawn.certificate["summary"].startswith("1-private")
    plain = _table(problem, "sldp", "uniform")
    assert tuple(plain.prior) == (Fraction(1, 3),) * 3 and plain.table.outputs == ("a", "b", "c")


def test_a_table_is_the_design_up_to_the_drawn_tolerance_and_whenever_it_is_unmixed(monkeypatch) -> None:
    """The design's own loss needs a mix of 2^-48 doubled a few times (Q_2x3's member under allocation 1): drawn
    when its largest change is at most DRAWN_TOLERANCE (at it exactly, too), refused one step below; a table
    rounded with no mix at all (Q_2x3 under sldp at its own loss) is the design whatever the tolerance."""
    plain = _table(Q, "wldp", "1")
    assert 0 < plain.table.mix_weight < 1e-12 and plain.repair is None
    assert plain.basis == "the mechanism's own loss" and plain.certificate is None
    monkeypatch.setattr(randomize_run, "DRAWN_TOLERANCE", plain.table.max_change)
    assert _table(Q, "wldp", "1").repair is None
    monkeypatch.setattr(randomize_run, "DRAWN_TOLERANCE", math.nextafter(plain.table.max_change, 0))
    with pytest.raises(DesignerError, match=r"^the Mechanism given: its 1 allocation's precise answers have Shafer "
                                            r"loss 1\.38629 > the budget 1\.38629: "):
        _table(Q, "wldp", "1")
    monkeypatch.setattr(randomize_run, "DRAWN_TOLERANCE", -1.0)
    unmixed = _table(Q, "sldp", "uniform")
    assert unmixed.table.mix_weight == 0.0 and unmixed.repair is None


# ---------------------------------------------------------------- the budget of a prior read from the file

import argparse  # noqa: E402
from types import SimpleNamespace  # noqa: E402

from designer.release.randomize_priors import exact_budget_arg, noisy_priors  # noqa: E402
from designer.release.rows import ReleaseInput  # noqa: E402

ABC = designer.DesignProblem(inputs=["a", "b", "c"], epsilon=1.0, invariant=True)
# 20 rows, categories a b c; strata n (lines 2-13, 12 rows) and s (lines 14-21, 8 rows)
ROWS = pd.DataFrame({"x": list("aabbcabcaa") * 2, "y": list("abcabcabca") * 2, "r": ["n"] * 12 + ["s"] * 8})
SEEDED = "seeded simulation (Python's Mersenne twister; never a release)"


def _priors(budget, *, strata=None, min_stratum=5, seed=1, wanted=("x", "y")):
    args = SimpleNamespace(strata=strata, prior_budget=budget, min_stratum=min_stratum, seed=seed)
    inp = ReleaseInput(ROWS, "the DataFrame given", [*wanted, *([strata] if strata else [])], [])
    return noisy_priors(args, {c: ABC for c in wanted}, inp)


def test_a_budget_flag_is_the_rational_written_and_refused_in_words() -> None:
    """--prior-budget, --budget and --budget-cap: kept as the rational written; refused with the reason
    (stated_budget's, without its 'a budget ' prefix), as not a number, or as no budget when a number's digits
    cannot be read."""
    assert exact_budget_arg("0.1") == Fraction(1, 10) and exact_budget_arg(" 7/3 ") == Fraction(7, 3)
    for text, words in [("0", "must be > 0, got '0'"), ("1/0", "its denominator must not be 0, got '1/0'"),
                        ("inf", "must be between 1e-300 and 1.798e+308 nats, got 'inf'"),
                        ("abc", "'abc' is not a number (e.g. 0.5 or 1/2)"),
                        ("1/x", "'1/x' is not a number (e.g. 0.5 or 1/2)")]:
        with pytest.raises(argparse.ArgumentTypeError) as refused:
            exact_budget_arg(text)
        assert str(refused.value) == words
    long = "1." + "0" * 5000  # a number, but more digits than Python reads into an integer (4,300)
    with pytest.raises(argparse.ArgumentTypeError) as refused:
        exact_budget_arg(long)
    assert str(refused.value) == f"must be a budget > 0 in nats, got {long!r}"


def test_the_prior_budget_is_split_evenly_over_the_columns_and_seeded_only_in_a_simulation() -> None:
    """Two columns share --prior-budget 2 (1 each, the noise's scale 2 / 1); with a seed the noise is a simulation's
    (the same seed, the same noisy counts; each column and stratum its own), without one the OS's CSPRNG."""
    first, release = _priors(Fraction(2))
    assert first == {"": 2} and release.epsilon == 2 and release.per_column == 1 and release.columns == ("x", "y")
    assert release.source == SEEDED and set(release.noisy) == {("x", ""), ("y", "")}
    assert _priors(Fraction(2))[1].noisy == release.noisy
    first, strata = _priors(Fraction(2), strata="r", seed=5)
    assert first == {"n": 2, "s": 14}
    assert set(strata.noisy) == {("x", "n"), ("x", "s"), ("y", "n"), ("y", "s")}
    assert _priors(Fraction(2), strata="r", seed=5)[1].noisy == strata.noisy
    assert all(len(v) == 3 for v in strata.noisy.values())
    unseeded = _priors(Fraction(2), seed=None)[1]
    assert unseeded.source == "secrets.randbelow (the operating system's CSPRNG)"
    assert set(unseeded.noisy) == {("x", ""), ("y", "")} and all(len(v) == 3 for v in unseeded.noisy.values())


def test_too_few_rows_for_a_prior_are_refused_naming_the_file_or_the_stratum() -> None:
    """--min-stratum is a least number of rows: exactly that many are enough, one fewer is refused."""
    assert _priors(Fraction(2), min_stratum=20)[1].per_column == 1
    tail = (": a prior read from so few rows says too much about each of them and too little about the population; "
            "merge strata, give the priors in the problem's [strata] table, or lower --min-stratum")
    with pytest.raises(DesignerError) as refused:
        _priors(Fraction(2), min_stratum=21)
    assert str(refused.value) == "the DataFrame given: the file has 20 rows, fewer than --min-stratum 21" + tail
    assert _priors(Fraction(2), strata="r", min_stratum=8)[1].per_column == 1
    with pytest.raises(DesignerError) as refused:
        _priors(Fraction(2), strata="r", min_stratum=9)
    assert str(refused.value) == ("the DataFrame given: stratum 's' (column 'r', from line 14) has 8 rows, fewer than "
                                  "--min-stratum 9" + tail)


def test_a_prior_budget_whose_noise_would_drown_the_counts_is_refused_at_its_exact_edge() -> None:
    """The mean noise 1 / sinh(share / 2) may not exceed the mean count rows / k: refused when share / 2 < asinh(k /
    rows), accepted at equality (the budget 2 columns x 2 asinh(3/20) exactly), with the least budget that passes
    rounded up to three digits."""
    edge = 2 * Fraction(2 * math.asinh(3 / 20))  # two columns
    assert _priors(edge)[1].per_column == edge / 2
    with pytest.raises(DesignerError, match=r"^prior_budget=0\.597772: the noise on each count"):
        _priors(edge - Fraction(1, 10**30))
    with pytest.raises(DesignerError) as refused:
        _priors(Fraction(1, 10))
    assert f"{1 / math.sinh(0.025):.3g}" == "40" and f"{20 / 3:.3g}" == "6.67"
    assert f"{4 * math.asinh(0.15):.6f}" == "0.597772"  # given as 0.598, rounded up
    assert str(refused.value) == (
        "prior_budget=0.1: the noise on each count of column 'x' would have mean size 40, more than the mean count "
        "6.67 of the file (20 rows, 3 categories): the published prior would be mostly noise; give prior_budget at "
        "least 0.598 or use the problem's prior (invariant_prior=problem)")
    with pytest.raises(DesignerError) as refused:
        _priors(Fraction(1, 10), strata="r")
    assert f"{4 * math.asinh(3 / 12):.6f}" == "0.989866"  # given as 0.99, rounded up
    assert str(refused.value) == (
        "prior_budget=0.1: the noise on each count of column 'x' would have mean size 40, more than the mean count "
        "4 of stratum 'n' (column 'r', from line 2) (12 rows, 3 categories): the published prior would be mostly "
        "noise; give prior_budget at least 0.99 or use the problem's prior (invariant_prior=problem)")
