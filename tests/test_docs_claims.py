"""What the pages say about the code, checked against the code: the defaults they state and the exit statuses they
promise (issue 51: no page states a default, exit code or output that differs from the code's; the output blocks
are checked by test_docs_commands.py).

Exit statuses: the table of docs/reference/conventions.md must list exactly the statuses the scenarios below end
with, and every sentence of a page or the README that says a command exits with a status must be claimed here by a
scenario that ends with that status. Defaults: each stated default is read off the page and compared with the value
the code uses.
"""

from __future__ import annotations

import contextlib
import dataclasses
import io
import pathlib
import re
import sys
from collections.abc import Callable

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"


def _page(name: str) -> str:
    return (ROOT / name).read_text()


def _main(argv: list[str]) -> int:
    from designer.cli import main

    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        return main([*argv, "--quiet"])


# -- exit statuses --------------------------------------------------------------------------------------------------

def _raising(monkeypatch: pytest.MonkeyPatch, exc: BaseException) -> int:
    """``designer design`` with the design verb raising ``exc``: what main makes of it."""
    import designer.verbs.design_verb as verb

    def fail(*args: object, **kwargs: object) -> None:
        raise exc

    monkeypatch.setattr(verb, "design", fail)
    return _main(["design", "problems/warner.toml"])


def _done(scratch: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> int:
    return _main(["audit", "examples/mechanisms/q2x3.csv"])


def _bad_flag(scratch: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> int:
    return _main(["design", "problems/warner.toml", "--epsilon", "-1"])


def _bad_problem_file(scratch: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> int:
    (scratch / "bad.toml").write_text('name = "bad"\ninputs = ["yes", "no"]\nepsilon = -1\n')
    return _main(["design", "bad.toml"])


def _infeasible(scratch: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> int:
    # a binary WLDP design holds a don't-know mass of at most tanh(eps / 2) (docs/theory.md, section 4)
    (scratch / "infeasible.toml").write_text('name = "x"\ninputs = ["yes", "no"]\nepsilon = 0.1\n'
                                             'semantics = "wldp"\n[structure]\ndont_know = 0.9\n')
    return _main(["design", "infeasible.toml"])


def _solver_failed(scratch: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> int:
    from designer import SolverError

    return _raising(monkeypatch, SolverError("HiGHS stopped: iteration limit"))


def _not_certified(scratch: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> int:
    from designer import CertificationError

    return _raising(monkeypatch, CertificationError("no repair within the tolerance"))


def _tampered_release(scratch: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> int:
    import json

    assert _main(["design", "problems/gwrr-dont-know.toml", "--out", "g.json"]) == 0
    data = json.loads((scratch / "g.json").read_text())
    data["matrix"][0][0] += 0.05
    data["matrix"][0][1] -= 0.05  # rows still sum to 1; the loss now exceeds the stated budget
    (scratch / "g.json").write_text(json.dumps(data))
    assert _main(["audit", "g.json"]) == 0  # audit reports it
    return _main(["plan", "g.json", "--width", "0.05"])


def _seed_zero(scratch: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> int:
    # a replayable seed (0 included: the mutant ``if args.seed:`` let it through) needs --simulation
    status = _main(["randomize", "examples/answers.csv", "--mechanism", "examples/mechanisms/q2x3.csv",
                    "--column", "answer", "--seed", "0", "--out", "released.csv"])
    assert not (scratch / "released.csv").exists()
    return status


def _off_grid(scratch: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> int:
    return _main(["design", "problems/gwrr-dont-know.toml", "--device", "dice2", "--dont-know", "0.2"])


def _estimate_not_converged(scratch: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> int:
    import designer.verbs.estimate_verb as verb
    from designer import FitStatus

    real = verb.estimate
    monkeypatch.setattr(verb, "estimate", lambda *a, **k: dataclasses.replace(real(*a, **k),
                                                                               status=FitStatus.NOT_CONVERGED))
    return _main(["estimate", "examples/answers.csv", "--mechanism", "examples/mechanisms/q2x3.csv",
                  "--column", "answer"])


def _regress_separation(scratch: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> int:
    rows = [f"{x},{{yes}}" for x in range(1, 30)] + [f"{-x},{{no}}" for x in range(1, 30)]
    (scratch / "separated.csv").write_text("x,response\n" + "\n".join(rows) + "\n")
    return _main(["regress", "separated.csv", "--mechanism", "examples/mechanisms/identity.csv",
                  "--formula", "response ~ x"])


def _regress_not_identified(scratch: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> int:
    rows = [f"{x},{x + 1e-4 * (x % 3)},{{{'yes' if x % 4 < 2 else 'no'}}}" for x in range(1, 41)]
    (scratch / "aliased.csv").write_text("x,x2,response\n" + "\n".join(rows) + "\n")
    return _main(["regress", "aliased.csv", "--mechanism", "examples/mechanisms/identity.csv",
                  "--formula", "response ~ x + x2"])


def _internal_error(scratch: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> int:
    return _raising(monkeypatch, RuntimeError("a bug"))


def _interrupted(scratch: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> int:
    return _raising(monkeypatch, KeyboardInterrupt())


def _terminated(scratch: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> int:
    from designer.cli import _Terminated

    return _raising(monkeypatch, _Terminated())


def _studio_without_shiny(scratch: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> int:
    monkeypatch.setitem(sys.modules, "shiny", None)  # ``import shiny`` raises ImportError: no server starts
    return _main(["studio", "problems/gwrr-dont-know.toml", "--no-browser"])


Scenario = Callable[[pathlib.Path, pytest.MonkeyPatch], int]
def _manifest_not_a_file(scratch: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> int:
    # docs/guide/release.md: a device as --manifest is refused without being read (not "problem too large")
    assert _main(["randomize", "examples/answers.csv", "--mechanism", "examples/mechanisms/q2x3.csv", "--column",
                  "answer", "--out", "r.csv"]) == 0
    return _main(["estimate", "r.csv", "--manifest", "/dev/zero"])


def _budget_cap(scratch: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> int:
    # docs/guide/release.md: a second release of the same answers past --budget-cap (ln 4 each, cap 2)
    release = ["randomize", "examples/data/three-questions.csv", "--mechanism", "examples/mechanisms/warner-80.csv",
               "--column", "drugs", "--budget-cap", "2"]
    assert _main([*release, "--out", "first.csv"]) == 0
    return _main([*release, "--out", "second.csv"])


def _not_a_ledger(scratch: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> int:
    # docs/guide/release.md: a file at the ledger's path that is not a ledger is refused, never replaced
    (scratch / "notes.json").write_text('{"kind": "notes"}')
    status = _main(["randomize", "examples/answers.csv", "--mechanism", "examples/mechanisms/q2x3.csv", "--column",
                    "answer", "--out", "r.csv", "--ledger", "notes.json"])
    assert (scratch / "notes.json").read_text() == '{"kind": "notes"}' and not (scratch / "r.csv").exists()
    return status


SCENARIOS: dict[str, Scenario] = {
    "done": _done, "bad flag": _bad_flag, "bad problem file": _bad_problem_file, "infeasible": _infeasible,
    "solver failed": _solver_failed, "not certified": _not_certified, "tampered release": _tampered_release,
    "off the device's grid": _off_grid, "seed 0 without --simulation": _seed_zero,
    "estimate not converged": _estimate_not_converged,
    "regress separation": _regress_separation, "regress not identified": _regress_not_identified,
    "internal error": _internal_error, "Ctrl-C": _interrupted,
    "SIGTERM": _terminated, "studio without Shiny": _studio_without_shiny,
    "manifest not a file": _manifest_not_a_file, "budget cap": _budget_cap, "not a ledger": _not_a_ledger,
}

#: The conventions page's table: each status and the scenarios that end with it.
CONVENTIONS = {0: ["done"], 1: ["solver failed", "not certified"],
               2: ["bad flag", "bad problem file", "infeasible", "tampered release", "off the device's grid",
                   "seed 0 without --simulation", "manifest not a file", "budget cap", "not a ledger"],
               3: ["estimate not converged", "regress separation", "regress not identified"],
               70: ["internal error"], 130: ["Ctrl-C"],
               143: ["SIGTERM"]}

#: Every sentence of the pages that states an exit status: (page, words just before the status, scenario). A
#: scenario of None marks a statement no test here can run (a server stopped by Ctrl-C), with the reason.
STATEMENTS: list[tuple[str, str, str | None]] = [
    ("README.md", "Bad input is one line naming the file or flag and the fix, exit status", "bad flag"),
    ("docs/guide/design.md", "naming the file, the key and what was expected (exit status", "bad problem file"),
    ("docs/guide/design.md", "prints that line and exits", "infeasible"),
    ("docs/guide/design.md", "the command prints the reason and exits", "solver failed"),
    ("docs/guide/design.md", "a file whose masses were changed after the release is refused (exit", "tampered release"),
    ("docs/guide/devices.md", "7/36 (0.1944) or 8/36 (0.2222) ...\"), exit", "off the device's grid"),
    ("docs/mutation.md", "Tests now refuse `--seed 0` without `--simulation` (exit", "seed 0 without --simulation"),
    ("docs/guide/estimate.md", "`estimate` exits with", "estimate not converged"),
    ("docs/guide/regress.md", "`regress` exits with", "regress separation"),
    ("docs/troubleshooting.md", "when the status is `separation` or `not_converged` the command exits",
     "regress separation"),
    ("docs/studio.md", "says what to install and exits with status", "studio without Shiny"),
    ("docs/guide/install.md", "only that environment on the PATH (each must exit", "done"),  # success is 0
    ("docs/studio.md", "Ctrl-C stops it (exit status", None),  # the server handles SIGINT itself: needs a server
    ("docs/studio.md", "a SIGTERM gives", None),
    ("docs/guide/release.md", "refused in one line without being waited on (exit status", "manifest not a file"),
    ("docs/guide/release.md", "nothing is written, and the command ends with exit status", "budget cap"),
    ("docs/guide/release.md", "is never replaced: the refusal is one line with exit status", "not a ledger"),
]
_STATUS = re.compile(r"\b(?:exit(?:s|ed)?(?: with)?(?: status)?|gives) (\d+)\b")


def _statements() -> list[tuple[str, str, int]]:
    """``(page, text before the status, status)`` for every statement of an exit status in the pages."""
    found = []
    for path in [ROOT / "README.md", *sorted(DOCS.rglob("*.md"))]:
        if "_build" in path.parts or path.name == "theory.md":
            continue
        text = " ".join(path.read_text().split())
        for match in _STATUS.finditer(text):
            if match.group(0).startswith("gives") and "SIGTERM" not in text[match.start() - 12:match.start()]:
                continue
            found.append((str(path.relative_to(ROOT)), text[max(0, match.start() - 90):match.end()],
                          int(match.group(1))))
    return found


def test_the_conventions_table_lists_the_statuses_the_cli_ends_with():
    text = _page("docs/reference/conventions.md")
    rows = re.findall(r"^\| ([\d, ]+) \| ", text, flags=re.M)
    listed = {int(s) for row in rows for s in row.split(",")}
    assert listed == set(CONVENTIONS)
    assert sorted(name for names in CONVENTIONS.values() for name in names) == sorted(SCENARIOS.keys() -
                                                                                       {"studio without Shiny"})


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_each_scenario_ends_with_its_status(name, scratch, monkeypatch):
    expected = [status for status, names in CONVENTIONS.items() if name in names]
    claimed = [text for _, text, scenario in STATEMENTS if scenario == name]
    assert expected or claimed, name
    status = SCENARIOS[name](scratch, monkeypatch)
    if expected:
        assert status == expected[0], (name, status)
    for page, words, scenario in STATEMENTS:
        if scenario == name:
            stated = [s for p, text, s in _statements() if p == page and words in text]
            assert stated, f"{page} no longer says '{words} N': update STATEMENTS"
            assert stated == [status] * len(stated), f"{page}: '{words} {stated}' but the command exits {status}"


def test_every_stated_exit_status_is_claimed():
    """A page that states an exit status the scenarios do not check fails here (the scenario test compares the
    status of each claimed statement with the command's)."""
    for page, text, _ in _statements():
        assert any(p == page and words in text for p, words, _ in STATEMENTS), (
            f"{page}: '...{text}' states an exit status no test checks: add it to STATEMENTS")


# -- defaults -------------------------------------------------------------------------------------------------------

def _default(dataclass: type, field: str) -> object:
    value = dataclass.__dataclass_fields__[field].default  # type: ignore[attr-defined]
    return getattr(value, "value", value)


def _flag_default(command: str, flag: str) -> object:
    import argparse

    from designer.cli import build_parser

    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    return next(a.default for a in sub.choices[command]._actions if flag in a.option_strings)


def _plan_default(field: str) -> object:
    from designer.planning import PlanRequest

    return _default(PlanRequest, field)


def _survey_objective() -> object:
    from designer.planning.survey_plan import load_survey

    survey = load_survey(str(ROOT / "examples" / "surveys" / "two-questions.toml"))  # its questions name none
    return {q.objective.value for q in survey.questions}


def _problem() -> object:
    from designer import DesignProblem

    return DesignProblem(inputs=("a", "b", "c"), epsilon=1.0)


def _number(text: str) -> float:
    return float(text)


#: (page, pattern whose groups are the stated defaults, the code's defaults as the page writes them).
DEFAULTS: list[tuple[str, str, Callable[[], tuple[object, ...]]]] = [
    ("docs/guide/plan.md", r"`--level` \(default ([\d.]+)\)", lambda: (_plan_default("level"),)),
    ("docs/guide/plan.md", r"`--power` \(default ([\d.]+)\), `--alpha` \(default ([\d.]+)\)",
     lambda: (_plan_default("power"), _plan_default("alpha"))),
    ("docs/guide/plan.md", r"--alternative two-sided\|greater\|less` \(default ([\w-]+)\)",
     lambda: (_plan_default("alternative"),)),
    ("docs/guide/plan.md", r"`--null-difference`\s+\(default ([\d.]+)\)", lambda: (_plan_default("null_difference"),)),
    ("docs/guide/plan.md", r"`--null-variance pooled\|null` \(default (\w+)\)",
     lambda: (_plan_default("null_variance"),)),
    ("docs/guide/plan.md", r"the objective\s+defaults to (\w+)", lambda: tuple(_survey_objective())),  # type: ignore[arg-type]
    ("docs/reference/conventions.md", r"`--format table\|json\|csv` \((\w+) by default\)",
     lambda: tuple({_flag_default(c, "--format") for c in ("design", "audit", "estimate", "regress", "plan")})),
    ("docs/guide/release.md", r"`--min-stratum` rows \(default (\d+)\)", lambda: (_flag_default("randomize",
                                                                                                "--min-stratum"),)),
    ("docs/guide/estimate.md", r"`--weight-kind (\w+)`, the default", lambda: (_flag_default("estimate",
                                                                                             "--weight-kind"),)),
    ("docs/guide/design.md", r"frame = \[\"yes\", \"no\"\]\s+# Y; defaults to (inputs)",
     lambda: ("inputs",) if _problem().frame == _problem().inputs else ("not the inputs",)),  # type: ignore[attr-defined]
    ("docs/guide/design.md", r'objective = "truthful"\s+# default "(\w+)"', lambda: (_problem().objective.value,)),
    ("docs/guide/design.md", r"prior = \[0.5, 0.5\]\s+# default (uniform)",
     lambda: ("uniform",) if list(_problem().prior) == [1 / 3] * 3 else ("not uniform",)),  # type: ignore[attr-defined]
    ("docs/guide/design.md", r"By default the linear programs go to (\w+), called directly, and the variance "
     r"objectives' conic programs to (\w+)",
     lambda: tuple({"HIGHS": "HiGHS", "CLARABEL": "Clarabel"}.get(s, s) for s in (
         __import__("designer").design(_problem().replace(objective="truthful")).solver,
         __import__("designer").design(_problem().replace(objective="variance")).solver))),
]


@pytest.mark.parametrize(("page", "pattern", "code"), DEFAULTS,
                         ids=[f"{page.rsplit('/', 1)[-1]}-{i}" for i, (page, _, _) in enumerate(DEFAULTS)])
def test_a_stated_default_is_the_codes(page, pattern, code):
    match = re.search(pattern, " ".join(_page(page).split()))
    assert match, f"{page} no longer states this default ({pattern}): update DEFAULTS"
    stated = match.groups()
    expected = code()
    assert len(stated) == len(expected), (page, stated, expected)
    for s, e in zip(stated, expected, strict=True):
        assert s == str(e) or (isinstance(e, float) and _number(s) == e), f"{page} says {s}, the code's default is {e}"


def test_the_problem_file_on_design_md_names_every_objective():
    from designer.vocabulary import Objective

    text = _page("docs/guide/design.md")
    block = text[text.index('objective = "truthful"'):text.index("[structure]")]
    assert set(re.findall(r'"(\w+)"', block)) == {o.value for o in Objective}


def test_the_bundled_problems_are_described_with_their_own_objective():
    """design.md lists the bundled problems, some with their objective in parentheses: it is the file's."""
    from designer import load_problem
    from designer.vocabulary import Objective

    text = " ".join(_page("docs/guide/design.md").split())
    described = re.findall(r"`([\w-]+)\.toml` \(([^)]*)\)", text)
    assert len(described) >= 4
    for name, words in described:
        named = [w for w in re.findall(r"[\w]+", words) if w in {o.value for o in Objective}]
        if named:
            assert named == [load_problem(str(ROOT / "problems" / f"{name}.toml")).objective.value], (name, named)


def test_which_design_states_the_default_objective_and_semantics():
    """The page names the defaults of DesignProblem: in a sentence with "default", the first objective and the first
    semantics it names are the code's (those of a problem that names neither, so a change of default fails here until
    the page follows)."""
    from designer import DesignProblem
    from designer.vocabulary import Objective, Semantics

    plain = DesignProblem(inputs=("a", "b"), epsilon=1.0)  # the objective's default is resolved on construction
    objective, semantics = plain.objective.value, plain.semantics.value
    text = " ".join(_page("docs/guide/which-design.md").split())
    sentences = [s for s in re.split(r"(?<=\.)\s+(?=[A-Z*])", text) if "default" in s.lower()]
    named_objectives = [m for s in sentences for m in re.findall(r"`(\w+)`", s) if m in {o.value for o in Objective}]
    named_semantics = [m.lower() for s in sentences for m in re.findall(r"\b(SLDP|WLDP)\b", s)]
    assert named_objectives and named_objectives[0] == objective, (named_objectives, objective)
    assert named_semantics and named_semantics[0] == semantics, (named_semantics, semantics)
    assert {s.value for s in Semantics} >= {semantics}
