"""The export front door (designer.verbs.export_verb.export): the CLI's files and numbers on the guide's examples,
from a path and from objects, and bad input refused on one line."""

from __future__ import annotations

import json
import os
import stat

import pytest

from designer import DesignProblem, design
from designer.cli import main
from designer.exceptions import DesignerError
from designer.guarantees.certified import CertifiedMechanism
from designer.mechanism import Mechanism
from designer.results import FitStatus, Result, render
from designer.verbs.export_verb import Exported, export

Q2X3 = "examples/mechanisms/q2x3.csv"

#: docs/guide/field.md's export commands (the die's page is drawn from a grid design: slower, run once).
GUIDE = [
    (Q2X3, {"to": "js"}, "q2x3.js"),
    (Q2X3, {"to": "html", "question": "Have you ever cheated on an exam?"}, "q2x3.html"),
    (Q2X3, {"to": "qualtrics"}, "q2x3-qualtrics.md"),
    ("problems/gwrr-dont-know.toml", {"device": "die", "show_device": True, "to": "html"}, "die.html"),
]


def _argv(mechanism: str, kwargs: dict, out: str, fmt: str) -> list[str]:
    argv = ["export", mechanism, "--out", out, "--format", fmt]
    for key, value in kwargs.items():
        flag = "--" + key.replace("_", "-")
        argv += [flag] if value is True else [flag, str(value)]
    return argv


@pytest.mark.parametrize("mechanism, kwargs, name", GUIDE)
def test_the_guides_examples_give_the_clis_files_and_numbers(scratch, capsys, mechanism, kwargs, name) -> None:
    assert main(_argv(mechanism, kwargs, f"cli-{name}", "json")) == 0
    printed = json.loads(capsys.readouterr().out)
    result = export(mechanism, out=f"lib-{name}", **kwargs)
    assert isinstance(result, Exported) and isinstance(result, Result)
    assert result.status is FitStatus.EXACT and result.warnings == ()
    got = result.to_dict()
    assert got.pop("out") == f"lib-{name}" and printed.pop("out") == f"cli-{name}"
    assert got == printed
    lib, cli = (scratch / f"lib-{name}").read_bytes(), (scratch / f"cli-{name}").read_bytes()
    assert lib == cli
    assert result.text.encode() == lib


def test_table_and_csv_outputs_are_the_clis(scratch, capsys) -> None:
    for fmt in ("table", "csv"):
        assert main(_argv(Q2X3, {"to": "js"}, f"cli-{fmt}.js", fmt)) == 0
        printed = capsys.readouterr().out
        result = export(Q2X3, to="js", out=f"cli-{fmt}.js", force=True)
        assert render(result, fmt).rstrip("\n") == printed.rstrip("\n")


def test_objects_give_the_files_numbers(scratch) -> None:
    from designer.optimal import load_problem

    by_path = export(Q2X3, to="js")
    mech = Mechanism.read(Q2X3)
    assert export(mech, to="js").text == by_path.text  # a bare mechanism: its own loss, as the CSV file
    problem = load_problem("problems/gwrr-dont-know.toml")
    from_toml = export("problems/gwrr-dont-know.toml", to="js")
    from_problem = export(problem, to="js")
    result = design(problem)
    from_result = export(result, to="js")
    assert from_problem.to_dict() == from_toml.to_dict() == from_result.to_dict()
    assert from_result.to_dict()["objective"] == problem.objective.value
    certified = export(CertifiedMechanism.of(result), to="js")
    assert certified.to_dict()["sha256"] == from_result.to_dict()["sha256"]
    assert certified.to_dict()["epsilon"] == problem.epsilon


def test_without_out_nothing_is_written(scratch) -> None:
    before = sorted(os.listdir(scratch))
    result = export(Q2X3, to="html", question="Q?")
    assert sorted(os.listdir(scratch)) == before
    assert result.out is None and result.to_dict()["out"] is None and "<html" in result.text.lower()
    assert result.summary().startswith("exported (")


def test_strings_as_a_mapping_or_a_file(scratch) -> None:
    (scratch / "fr.json").write_text(json.dumps({"draw": "Tirer"}))
    by_file = export(Q2X3, to="html", strings="fr.json")
    by_mapping = export(Q2X3, to="html", strings={"draw": "Tirer"})
    assert by_file.text == by_mapping.text and "Tirer" in by_mapping.text


def test_written_atomically_with_the_umask_and_never_replaced(scratch) -> None:
    old = os.umask(0o027)
    try:
        export(Q2X3, to="js", out="q.js")
    finally:
        os.umask(old)
    assert stat.S_IMODE(os.stat(scratch / "q.js").st_mode) == 0o640
    with pytest.raises(DesignerError, match="already exists"):
        export(Q2X3, to="js", out="q.js")
    export(Q2X3, to="js", out="q.js", force=True)
    assert not [p for p in os.listdir(scratch) if p.startswith(".")]


@pytest.mark.parametrize("kwargs, match", [
    ({"to": "pdf"}, "to must be one of"),
    ({"lang": "xx"}, "lang must be one of"),
    ({"semantics": "both"}, "semantics must be"),
    ({"allocation": "half"}, "allocation must"),
    ({"to": "js", "strings": {"draw": "x"}}, "strings: the ES module"),
    ({"to": "html", "strings": {"nope": "x"}}, "unknown key 'nope'"),
    ({"to": "js", "show_device": True}, "show_device is for to=html"),
    ({"device": "die"}, "device designs a TOML problem"),
    ({"out": "no/such/folder/q.js"}, "does not exist"),
])
def test_bad_inputs_one_line(scratch, kwargs, match) -> None:
    with pytest.raises(DesignerError, match=match) as info:
        export(Q2X3, **kwargs)
    assert "\n" not in str(info.value)


def test_bad_mechanisms_one_line(scratch) -> None:
    with pytest.raises(DesignerError) as info:
        export(42)
    assert "mechanism must be" in str(info.value) and "\n" not in str(info.value)
    with pytest.raises(DesignerError, match=r"no-such\.csv"):
        export("no-such.csv")
    with pytest.raises(DesignerError, match="an input of this command"):
        export(Q2X3, out=Q2X3, force=True)


def test_a_problem_object_on_a_device() -> None:
    problem = DesignProblem(objective="truthful", inputs=("yes", "no"), epsilon=1.0)
    result = export(problem, to="js", device="die")
    assert 6 % result.to_dict()["denominator"] == 0  # drawn with the die's sixths (reduced where they allow)
