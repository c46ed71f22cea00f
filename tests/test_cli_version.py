"""``designer --version`` and ``designer --version --verbose`` / ``designer.show_versions()`` (issue 58), and what
``designer studio --help`` says about the studio's extra.

The oracle for the dependencies is ``pyproject.toml`` itself (read with tomllib) and the installed metadata
(importlib.metadata), not designer's own reading of them.
"""

from __future__ import annotations

import importlib.metadata
import io
import pathlib
import platform
import re
import sys
import tomllib

import pytest

import designer
from designer.cli import main

ROOT = pathlib.Path(__file__).resolve().parent.parent
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]


def _name(requirement: str) -> str:
    return re.split(r"[<>=!~;\[ ]", requirement, maxsplit=1)[0]


def _rows(text: str) -> dict[str, str]:
    """``{name: value}`` of the indented ``  name  value`` lines."""
    return dict(line.split(None, 1) for line in text.splitlines() if line.startswith("  "))


def run(argv, capsys):
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def test_version_prints_one_line_on_stdout(capsys):
    assert run(["--version"], capsys) == (0, f"designer {designer.__version__}\n", "")


@pytest.mark.parametrize("argv", [["--version", "--verbose"], ["--verbose", "--version"]])
def test_version_verbose_names_python_the_platform_and_every_dependency(argv, capsys):
    code, out, err = run(argv, capsys)
    assert code == 0 and err == ""
    assert out.splitlines()[0] == f"designer {designer.__version__}"
    rows = _rows(out)
    assert rows["python"].startswith(platform.python_version())
    assert rows["executable"] == sys.executable and rows["platform"] == platform.platform()
    assert pathlib.Path(rows["designer"]) == pathlib.Path(designer.__file__).resolve().parent
    runtime = [_name(r) for r in PROJECT["dependencies"]]
    optional = [_name(r) for extra in ("studio", "dask") for r in PROJECT["optional-dependencies"][extra]]
    assert {"numpy", "scipy", "pandas", "cvxpy", "highspy", "clarabel", "pyarrow"} <= set(runtime)
    for name in runtime:
        assert rows[name] == importlib.metadata.version(name), name
    for name in optional:
        assert name in rows, name
    # the test and docs toolchains are the developers', not designer's
    assert "pytest" not in rows and "sphinx" not in rows
    # the runtime dependencies come before the optional ones, under their headings
    assert out.index("dependencies:") < out.index("  numpy") < out.index("optional (") < out.index(f"  {optional[0]}")
    # the same text as the public function's
    text = io.StringIO()
    designer.show_versions(text)
    assert text.getvalue() == out


def test_a_missing_optional_package_says_not_installed(monkeypatch, capsys):
    real = importlib.metadata.version

    def version(name: str) -> str:
        if name == "shiny":
            raise importlib.metadata.PackageNotFoundError(name)
        return real(name)

    monkeypatch.setattr(importlib.metadata, "version", version)
    code, out, _ = run(["--version", "--verbose"], capsys)
    assert code == 0 and _rows(out)["shiny"] == "not installed"
    assert _rows(out)["numpy"] == real("numpy")


def test_without_metadata_it_still_prints_the_system(monkeypatch, capsys):
    def requires(name: str) -> list[str]:
        raise importlib.metadata.PackageNotFoundError(name)

    monkeypatch.setattr(importlib.metadata, "requires", requires)
    code, out, err = run(["--version", "--verbose"], capsys)
    assert code == 0 and err == ""
    assert "python" in _rows(out) and "metadata not found" in _rows(out)["designer-ldp"]


def test_show_versions_prints_on_stdout_by_default(capsys):
    designer.show_versions()
    out, err = capsys.readouterr()
    assert out.startswith(f"designer {designer.__version__}\n") and err == ""


@pytest.mark.parametrize(("argv", "says"), [
    (["--verbose"], "designer: error: argument --verbose: goes with --version ('designer --version --verbose')"),
    (["--version", "audit", "q2x3"], "designer: error: argument --version: takes no command"),
    (["audit", "q2x3", "--version"], "--version takes no command: 'designer --version'"),
    (["audit", "q2x3", "--verbose"], "--verbose goes with --version: 'designer --version --verbose'"),
])
def test_version_flags_misplaced_are_one_line_and_exit_2(argv, says, capsys):
    code, out, err = run(argv, capsys)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and says in err, err
    assert "did you mean --ver" not in err  # never the flag that was given


def test_studio_help_says_it_needs_its_extra(capsys):
    code, out, _ = run(["studio", "--help"], capsys)
    assert code == 0
    assert "pip install 'designer-ldp[studio]'" in out and "Shiny for Python" in out
    code, out, _ = run(["--help"], capsys)
    assert code == 0 and re.search(r"studio .*needs the studio extra", out)
