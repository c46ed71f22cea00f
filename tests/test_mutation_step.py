"""The CI step that mutates the changed lines (benchmarks/mutation/mutants.py ``changed``), tested on a throw-away
git repository: a change that adds a line whose mutant no test notices fails the step, naming the survivor and
its diff; a test that kills it, or a reviewed mark in equivalent.toml, lets it pass; a change that touches no
target, or a checkout with nothing to compare, runs nothing.

No designer code is mutated here: the repository holds a small package of its own.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import tempfile
import textwrap
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "benchmarks" / "mutation" / "mutants.py"
pytest.importorskip("mutmut")


def _module():
    spec = importlib.util.spec_from_file_location("mutation_script", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    assert spec.loader is not None
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


mutants = _module()

# An empty configuration of git's own (not /dev/null: a machine where it is not empty has been seen).
_EMPTY_CONFIG = Path(tempfile.mkdtemp(prefix="mutation-step-")) / "gitconfig"
_EMPTY_CONFIG.write_text("")
GIT_ENV = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.invalid", "GIT_CONFIG_GLOBAL": str(_EMPTY_CONFIG),
           "GIT_CONFIG_SYSTEM": str(_EMPTY_CONFIG)}


def _git(repo: Path, *args: str) -> str:
    done = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, check=True,
                          env={**os.environ, **GIT_ENV})
    return done.stdout.strip()


def _commit(repo: Path, files: dict[str, str], message: str) -> str:
    for name, text in files.items():
        path = repo / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", message)
    return _git(repo, "rev-parse", "HEAD")


def _step(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "MUTATION_BASE"}
    return subprocess.run([sys.executable, str(SCRIPT), "--root", str(repo), "changed", *args], capture_output=True,
                          text=True, env={**env, **GIT_ENV, "MUTATION_NICE": "0"}, timeout=550, check=False)


BASE_FILES = {
    "pyproject.toml": """\
        [tool.mutmut]
        source_paths = ["pkg"]
        [tool.pytest.ini_options]
        addopts = "-q"
        """,
    "pkg/__init__.py": "",
    "pkg/rules.py": """\
        def double(x):
            return 2 * x
        """,
    "tests/__init__.py": "",
    "tests/test_rules.py": """\
        from pkg.rules import double


        def test_double():
            assert double(3) == 6
        """,
    "benchmarks/mutation/targets.toml": """\
        [run]
        max_children = 1
        [module.rules]
        path = "pkg/rules.py"
        tests = ["tests/test_rules.py"]
        """,
    "README.md": "a package\n",
}

# An adult check whose tests never try the boundary: `age > 18` and `age >= 19` survive them.
ADULT = textwrap.dedent("""\
    def double(x):
        return 2 * x


    def adult(age):
        return age >= 18
    """)
ADULT_TESTS = textwrap.dedent("""\
    from pkg.rules import adult, double


    def test_double():
        assert double(3) == 6


    def test_adult():
        assert adult(40) and not adult(3)
    """)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q")
    _commit(repo, BASE_FILES, "base")
    return repo


@pytest.mark.heavy
@pytest.mark.timeout(600)  # two mutmut runs in child processes: about 15 s on an idle machine
def test_a_surviving_mutant_on_a_changed_line_fails_the_step_and_a_test_that_kills_it_passes(repo: Path) -> None:
    _commit(repo, {"pkg/rules.py": ADULT, "tests/test_rules.py": ADULT_TESTS}, "adult, tested away from 18")
    failed = _step(repo)
    assert failed.returncode == 1, failed.stdout + failed.stderr
    out = failed.stdout
    assert "since" in out and "HEAD's first parent" in out
    assert "pkg/rules.py: 4 changed line(s), 2 mutant(s)" in out
    assert "survivor pkg.rules.x_adult__mutmut_" in out
    assert "-    return age >= 18" in out and "+    return age > 18" in out
    assert 'function = "pkg.rules.x_adult"' in out  # the mark to paste once the survivor is shown equivalent
    assert "double" not in out.split("mutation of the changed lines: ")[-1].split("survivor")[0]  # unchanged: not run
    # the boundary tested: every mutant of the changed lines is killed
    _commit(repo, {"tests/test_rules.py": ADULT_TESTS + "\n\ndef test_adult_at_18():\n"
                   "    assert adult(18) and not adult(17)\n"}, "the boundary")
    passed = _step(repo, "--base", "HEAD~2")
    assert passed.returncode == 0, passed.stdout + passed.stderr
    assert "0 survivor(s) unexplained" in passed.stdout and " killed" in passed.stdout


def test_a_reviewed_mark_explains_exactly_its_survivor(repo: Path) -> None:
    """A mark in equivalent.toml names the function and the diff's removed and added lines: it explains that
    mutant and no other (another function, another replacement), whatever mutmut's number for it."""
    mark = textwrap.dedent("""\
        [[equivalent]]
        function = "pkg.rules.x_adult"
        removed = ["return age > 17"]
        added = ["return age >= 17"]
        reason = "ages are whole numbers: none lies between 17 and 18"
        """)
    (repo / "benchmarks/mutation/equivalent.toml").write_text(mark)
    marks = mutants.equivalents(mutants.load(repo))
    diff = ("--- pkg/rules.py\n+++ pkg/rules.py\n@@ -1,2 +1,2 @@\n def adult(age):\n-    return age > 17\n"
            "+    return age >= 17")
    assert mutants.explained("pkg.rules.x_adult__mutmut_7", diff, marks)["reason"].startswith("ages are whole")
    assert mutants.explained("pkg.rules.x_child__mutmut_7", diff, marks) is None
    assert mutants.explained("pkg.rules.x_adult__mutmut_7", diff.replace(">= 17", "> 18"), marks) is None


def test_nothing_to_mutate_when_the_change_misses_the_targets(repo: Path) -> None:
    _commit(repo, {"README.md": "a package, documented\n"}, "docs only")
    done = _step(repo)
    assert done.returncode == 0 and "no mutant on a changed line of the target modules" in done.stdout


def test_nothing_to_compare_on_a_first_commit_or_outside_git(tmp_path: Path, repo: Path) -> None:
    done = _step(repo)  # one commit: HEAD has no parent
    assert done.returncode == 0 and "nothing to compare (HEAD has no parent" in done.stdout
    plain = tmp_path / "plain"
    plain.mkdir()
    for name, text in BASE_FILES.items():
        (plain / name).parent.mkdir(parents=True, exist_ok=True)
        (plain / name).write_text(textwrap.dedent(text))
    done = _step(plain)
    assert done.returncode == 0 and "nothing to compare (not a git checkout)" in done.stdout


def test_the_base_is_the_recorded_commit_when_it_is_an_ancestor(repo: Path) -> None:
    first = _git(repo, "rev-parse", "HEAD")
    _commit(repo, {"README.md": "two\n"}, "two")
    _commit(repo, {"README.md": "three\n"}, "three")
    settings = mutants.load(repo)
    assert mutants.choose_base(settings, None)[1] == "HEAD's first parent"
    (repo / "benchmarks/mutation/base").write_text(first + "\n")
    base, why = mutants.choose_base(settings, None)
    assert base == first and why.startswith("the recorded base")
    (repo / "benchmarks/mutation/base").write_text("0" * 40 + "\n")  # not a commit here: the first parent
    assert mutants.choose_base(settings, None)[0] == _git(repo, "rev-parse", "HEAD~1")
    with pytest.raises(SystemExit, match="is not a commit"):
        mutants.choose_base(settings, "no-such-branch")


def test_changed_lines_are_the_new_sides_lines(repo: Path) -> None:
    _commit(repo, {"pkg/rules.py": ADULT}, "adult")
    settings = mutants.load(repo)
    assert mutants.changed_lines(settings, _git(repo, "rev-parse", "HEAD~1"), ["pkg/rules.py"]) == \
        {"pkg/rules.py": [3, 4, 5, 6]}
    _commit(repo, {"pkg/rules.py": ADULT.replace("    return 2 * x\n", "")}, "a line removed")
    # a deletion leaves no line to mutate
    assert mutants.changed_lines(settings, _git(repo, "rev-parse", "HEAD~1"), ["pkg/rules.py"]) == {}


def test_the_projects_targets_are_the_mutmut_configuration() -> None:
    """pyproject.toml's [tool.mutmut] lists every target module and test file of targets.toml (a plain `mutmut
    run` covers the same modules), and every listed test file exists."""
    settings = mutants.load(ROOT)
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["mutmut"]
    assert sorted(config["only_mutate"]) == sorted({t.path for t in settings.targets.values()})
    tests = {t.split("::")[0] for target in settings.targets.values() for t in target.tests}  # a test's file
    assert sorted(config["pytest_add_cli_args_test_selection"]) == sorted(tests)
    assert [t for t in tests if not (ROOT / t).exists()] == []
    assert all((ROOT / t.path).exists() for t in settings.targets.values())
