"""The randomize front door (designer.verbs.randomize_verb.randomize): the CLI's files and numbers on the guide's
examples (seeded), designs as paths and as objects, a DataFrame in memory or into a file, bad input on one line."""

from __future__ import annotations

import json
from fractions import Fraction

import pandas as pd
import pytest

from designer.cli import main
from designer.exceptions import DesignerError
from designer.guarantees.certified import CertifiedMechanism
from designer.mechanism import Mechanism
from designer.results import FitStatus, Result, render
from designer.verbs.randomize_verb import randomize

Q2X3 = "examples/mechanisms/q2x3.csv"
ANSWERS = "examples/answers.csv"
THREE = "examples/data/three-questions.csv"


def _manifest(path: str) -> dict:
    record = json.loads(open(path).read())
    record.pop("date")
    record["output"].pop("path")  # the output's own name
    record.pop("ledger")  # each release here keeps its own budget ledger
    return record


def _cli(capsys, argv: list[str]) -> dict:
    assert main([*argv, "--format", "json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_the_guides_seeded_example_gives_the_clis_file_and_numbers(scratch, capsys) -> None:
    # docs/guide/estimate.md
    printed = _cli(capsys, ["randomize", ANSWERS, "--mechanism", Q2X3, "--column", "answer", "--out", "cli.csv",
                            "--keep", "id,region", "--seed", "7", "--simulation", "--ledger", "cli.ledger.json"])
    result = randomize(ANSWERS, Q2X3, column="answer", out="lib.csv", keep="id,region", seed=7, simulation=True,
                       ledger="lib.ledger.json")
    assert isinstance(result, Result) and result.status is FitStatus.EXACT
    got = result.to_dict()
    for key, name in (("out", "csv"), ("manifest", "csv.manifest.json")):
        assert got.pop(key) == f"lib.{name}" and printed.pop(key) == f"cli.{name}"
    assert got == printed
    assert (scratch / "lib.csv").read_bytes() == (scratch / "cli.csv").read_bytes()
    assert _manifest("lib.csv.manifest.json") == _manifest("cli.csv.manifest.json")
    for fmt in ("table", "csv"):
        assert main(["randomize", ANSWERS, "--mechanism", Q2X3, "--column", "answer", "--out", f"c.{fmt}.csv",
                     "--seed", "7", "--simulation", "--format", fmt, "--ledger", f"c.{fmt}.ledger.json"]) == 0
        shown = capsys.readouterr().out
        again = randomize(ANSWERS, Q2X3, column="answer", out=f"l.{fmt}.csv", seed=7, simulation=True,
                          ledger=f"l.{fmt}.ledger.json")
        assert render(again, fmt).rstrip("\n").replace("l.", "c.") == shown.rstrip("\n")


def test_several_variables_compose_their_certificates(scratch, capsys) -> None:
    # docs/guide/release.md: three variables, --budget 5 (drawn by the operating system: compare the numbers)
    printed = _cli(capsys, ["randomize", THREE, "--variable", "drugs=examples/mechanisms/warner-80.csv",
                            "--variable", "tax=examples/mechanisms/q2x3.csv", "--variable",
                            "party=problems/pram-party.toml", "--keep", "id", "--budget", "5", "--out", "cli.csv",
                            "--ledger", "cli.ledger.json"])
    designs = {"drugs": "examples/mechanisms/warner-80.csv", "tax": Q2X3, "party": "problems/pram-party.toml"}
    result = randomize(THREE, designs, keep=["id"], budget=5, out="lib.csv", ledger="lib.ledger.json")
    got = result.to_dict()
    for key in ("out", "manifest", "random_source"):
        got.pop(key), printed.pop(key)
    assert got == printed
    # the composed loss is the product certificate of the variables': their budgets added exactly
    parts = [Fraction(repr(v)) for v in printed["variables"].values()]
    assert result.certificate.exact_budget == sum(parts) == result.epsilon_total
    assert len(result.certificate.parts) == 3
    manifest = _manifest("lib.csv.manifest.json")
    assert manifest["epsilon_total_exact"] == str(sum(parts))
    assert manifest["epsilon_total"] == printed["epsilon_total"]


def test_objects_as_designs(scratch) -> None:
    mech = Mechanism.read(Q2X3)
    by_path = randomize(ANSWERS, Q2X3, column="answer", out="a.csv", seed=3, simulation=True)
    by_object = randomize(ANSWERS, mech, column="answer", out="b.csv", seed=3, simulation=True)
    assert (scratch / "a.csv").read_bytes() == (scratch / "b.csv").read_bytes()
    assert by_object.to_dict()["variables"] == by_path.to_dict()["variables"]
    certified = CertifiedMechanism.certify(mech, 2.0)
    result = randomize(ANSWERS, certified, column="answer", out="c.csv", seed=3, simulation=True)
    assert result.to_dict()["epsilon_total"] == 2.0
    assert _manifest("c.csv.manifest.json")["variables"][0]["design"] == "the CertifiedMechanism given"


def test_a_frame_in_memory_and_into_a_file(scratch) -> None:
    frame = pd.read_csv(ANSWERS)
    into_file = randomize(frame, Q2X3, column="answer", out="f.csv", seed=5, simulation=True)
    from_file = randomize(ANSWERS, Q2X3, column="answer", out="g.csv", seed=5, simulation=True)
    assert (scratch / "f.csv").read_bytes() == (scratch / "g.csv").read_bytes()
    assert into_file.to_dict()["n"] == from_file.to_dict()["n"] == len(frame)
    in_memory = randomize(frame, Q2X3, column="answer", keep="id", seed=5, simulation=True)
    assert in_memory.out is None and in_memory.frame is not None
    written = pd.read_csv(scratch / "g.csv", keep_default_na=False, dtype=str)
    assert list(in_memory.frame.columns) == ["id", "response"]
    assert in_memory.frame["response"].tolist() == written["response"].tolist()  # one seed, one draw
    assert in_memory.to_dict()["epsilon_total"] == from_file.to_dict()["epsilon_total"]


@pytest.mark.parametrize("kwargs, match", [
    ({"column": "answer"}, "out: give the new file"),
    ({"column": "answer", "out": "x.csv", "seed": 3}, "add --simulation"),
    ({"column": "answer", "out": "x.csv", "semantics": "both"}, "semantics must be"),
    ({"column": "answer", "out": "x.csv", "budget": "-1"}, "budget must be"),
    ({"column": "answer", "out": "x.csv", "budget": 0.5}, "above --budget 0.5"),
    ({"out": "x.csv"}, "give --mechanism and --column"),
    ({"column": "answer", "out": "no/such/x.csv"}, "does not exist"),
    ({"column": "answer", "out": "x.csv", "keep": "answer"}, "--keep names 'answer'"),
    ({"column": "answer", "out": "x.csv", "invariant_prior": "maybe"}, "invariant_prior must be"),
])
def test_bad_inputs_one_line(scratch, kwargs, match) -> None:
    with pytest.raises(DesignerError, match=match) as info:
        randomize(ANSWERS, Q2X3, **kwargs)
    assert "\n" not in str(info.value)
    assert not list(scratch.glob("x.csv*"))


def test_bad_data_and_designs_one_line(scratch) -> None:
    with pytest.raises(DesignerError, match="data must be"):
        randomize(42, Q2X3, column="answer", out="x.csv")
    with pytest.raises(DesignerError, match="mechanism must be"):
        randomize(ANSWERS, 42, column="answer", out="x.csv")
    with pytest.raises(DesignerError, match="no column 'nope'"):
        randomize(pd.read_csv(ANSWERS), Q2X3, column="nope")
    bad = pd.DataFrame({"answer": ["yes", "perhaps"]})
    with pytest.raises(DesignerError, match="the DataFrame given: line 3: 'perhaps'") as info:
        randomize(bad, Q2X3, column="answer", out="y.csv")
    assert "designer-randomize-" not in str(info.value) and not list(scratch.glob("y.csv*"))
    (scratch / "x.csv").write_text("taken\n")
    with pytest.raises(DesignerError, match="already exists"):
        randomize(ANSWERS, Q2X3, column="answer", out="x.csv")
    assert (scratch / "x.csv").read_text() == "taken\n"
