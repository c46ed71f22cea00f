"""What a published distribution promises: its name, version, URLs, license and citation agree with the code and
files, and the release workflow publishes what was checked.

The wheel itself is built and installed into a clean environment by .ci/run (step 4), which runs every command of
the README, the site's first pages and the ``--help`` examples from an empty folder; these checks are the fast half.
"""

from __future__ import annotations

import ast
import pathlib
import re
import shutil
import subprocess
import sys
import tomllib

import pytest

import designer
from designer import _version

ROOT = pathlib.Path(__file__).resolve().parent.parent
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]


def test_the_distribution_name_is_not_the_unrelated_designer():
    assert PROJECT["name"] == "designer-ldp" == _version.DISTRIBUTION  # show_versions reads its metadata
    assert PROJECT["scripts"] == {"designer": "designer.cli:main"}


def test_the_version_is_read_from_its_own_module():
    setuptools = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    assert "version" in PROJECT["dynamic"] and "version" not in PROJECT
    assert setuptools["dynamic"]["version"] == {"attr": "designer._version.__version__"}
    assert re.fullmatch(r"\d+\.\d+\.\d+", _version.__version__)
    assert designer.__version__ is _version.__version__  # re-exported, not written twice


def test_no_module_imports_the_version_from_the_package_root():
    """``from .. import __version__`` would import the package root (every public name's table) from a lower layer."""
    offenders = []
    for path in sorted((ROOT / "designer").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and any(a.name == "__version__" for a in node.names):
                root = node.module in (None, "designer") if node.level else node.module == "designer"
                if root and path != ROOT / "designer" / "__init__.py":
                    offenders.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert offenders == []
    assert "__version__ = " not in (ROOT / "designer" / "__init__.py").read_text()


def test_project_urls_are_the_one_constant_the_code_uses():
    assert PROJECT["urls"] == _version.URLS
    assert set(_version.URLS) == {"Documentation", "Source", "Changelog", "Issues"}
    assert _version.URLS["Documentation"] == _version.DOCS_URL
    assert all(url.startswith("https://") for url in _version.URLS.values())
    # the URLs are written once in the package: nothing else in designer/ spells them
    for path in (ROOT / "designer").rglob("*.py"):
        if path.name != "_version.py":
            assert "readthedocs.io" not in path.read_text() and "github.com/" not in path.read_text(), path


def test_help_and_dash_dash_help_name_the_documentation_site():
    assert _version.DOCS_URL in (designer.__doc__ or "")
    out = subprocess.run([sys.executable, "-m", "designer", "--help"], capture_output=True, text=True, check=True)
    assert f"Documentation: {_version.DOCS_URL}" in out.stdout


def test_the_release_workflow_checks_the_tag_then_publishes_by_trusted_publishing():
    text = (ROOT / ".github" / "workflows" / "release.yml").read_text()
    assert re.search(r'^  push:\n    tags: \["v\*"\]$', text, flags=re.M)  # only a version tag releases
    assert "designer/_version.py" in text and '"v${version}"' in text  # the tag is checked against the version
    assert "python -m build" in text and "twine check --strict" in text
    assert "pypa/gh-action-pypi-publish" in text and "id-token: write" in text
    assert "password" not in text and "PYPI_TOKEN" not in text  # trusted publishing: no stored token
    build, publish = text.split("\n  publish:")
    assert "gh-action-pypi-publish" not in build and "needs: build" in publish


def test_contributing_has_the_release_checklist():
    text = (ROOT / "CONTRIBUTING.md").read_text()
    checklist = " ".join(text.split("## Releasing", 1)[1].split())
    for step in ("designer/_version.py", "CITATION.cff", "CHANGELOG.md", "make dist", "twine check", "git tag",
                 "pending publisher"):
        assert step in checklist, step


def test_the_license_file_matches_the_license_field():
    assert PROJECT["license"] == "MIT"
    assert PROJECT["license-files"] == ["LICENSE"]
    text = (ROOT / "LICENSE").read_text()
    assert text.startswith("MIT License") and "WITHOUT WARRANTY OF ANY KIND" in text


def test_citation_cites_the_paper_and_this_version():
    text = (ROOT / "CITATION.cff").read_text()
    assert re.search(r"^cff-version: 1\.2\.0$", text, flags=re.M)
    assert re.search(rf"^version: {re.escape(designer.__version__)}$", text, flags=re.M)
    paper = text.split("preferred-citation:", 1)[1]
    assert 'title: "Local Differential Privacy for Belief Functions"' in paper
    assert re.findall(r"family-names: (\w+)", paper) == ["Li", "Zhou", "Qin", "Xu"]
    assert re.search(r"^  year: 2022$", paper, flags=re.M) and "AAAI" in paper


def test_changelog_names_the_current_version():
    assert f"## {designer.__version__}" in (ROOT / "CHANGELOG.md").read_text()


def test_the_sdist_carries_the_problems_and_examples_the_docs_use():
    manifest = (ROOT / "MANIFEST.in").read_text().splitlines()
    for folder in ("problems", "examples", "tests", "docs"):
        assert f"graft {folder}" in manifest
    assert "prune docs/_build" in manifest


def test_the_packages_are_found_and_the_bundled_folders_mapped():
    """setup.py finds the packages under designer/ (a new one ships without an edit) and adds problems/ and
    examples/, which pyproject maps into the package."""
    tool = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    assert "packages" not in tool  # computed in setup.py
    assert tool["package-dir"] == {"designer.problems": "problems", "designer.examples": "examples"}
    assert "find_packages(include=[\"designer\", \"designer.*\"])" in (ROOT / "setup.py").read_text()


def test_the_wheel_carries_the_problems_and_examples(tmp_path):
    """Built from a copy of the sources (setuptools' backend, as ``make dist`` runs it), the wheel holds every problem,
    mechanism, questionnaire and data file under designer/, and nothing generated."""
    import shutil
    import zipfile

    pytest.importorskip("setuptools", minversion="77", reason="the build backend of pyproject.toml (make dist and "
                        ".ci/run's step 4 build the wheel in an isolated environment)")
    source = tmp_path / "source"
    for name in ("designer", "problems", "examples"):
        shutil.copytree(ROOT / name, source / name, ignore=shutil.ignore_patterns("__pycache__", "output"))
    for name in ("pyproject.toml", "setup.py", "README.md", "LICENSE", "MANIFEST.in"):
        shutil.copy(ROOT / name, source / name)
    code = "import sys; from setuptools import build_meta; print(build_meta.build_wheel(sys.argv[1]))"
    out = subprocess.run([sys.executable, "-c", code, str(tmp_path / "dist")], cwd=source, capture_output=True,
                         text=True, check=True, timeout=300)
    wheel = tmp_path / "dist" / out.stdout.strip().splitlines()[-1]
    names = set(zipfile.ZipFile(wheel).namelist())
    expected = {f"designer/problems/{p.name}" for p in (ROOT / "problems").glob("*.toml")}
    expected |= {str(p.relative_to(ROOT)) for p in (ROOT / "designer").rglob("__init__.py")}  # every package
    for folder in ("examples", "examples/mechanisms", "examples/data", "examples/surveys"):
        expected |= {f"designer/{folder}/{p.name}" for p in (ROOT / folder).iterdir()
                     if p.suffix in (".csv", ".toml", ".json")}
    assert expected <= names, sorted(expected - names)
    assert len(expected) >= 27  # 8 problems, 10 mechanisms, 8 data files, 1 questionnaire
    assert not [n for n in names if "__pycache__" in n or "/output/" in n or n.startswith(("problems/", "examples/"))]
    metadata = zipfile.ZipFile(wheel).read(next(n for n in names if n.endswith("/METADATA"))).decode()
    for label, url in _version.URLS.items():
        assert f"Project-URL: {label}, {url}" in metadata


def test_the_pages_spell_the_urls_of_the_one_constant():
    """README, CONTRIBUTING and the install page name the repository by designer._version's URL, and say plainly
    that the distribution is not on the package index yet (until a release is published)."""
    for name in ("README.md", "CONTRIBUTING.md", "docs/guide/install.md"):
        text = (ROOT / name).read_text()
        for url in re.findall(r"https://(?:github\.com|[\w-]+\.readthedocs\.io)[^\s)`'\"]*", text):
            assert any(url.startswith(known) for known in _version.URLS.values()), (name, url)
    for name in ("README.md", "docs/guide/install.md"):
        text = " ".join((ROOT / name).read_text().split())
        assert "not on the package index yet" in text and "pip install ." in text and "make dist" in text
        assert f"git clone {_version.SOURCE_URL}" in text


def _pins(path: pathlib.Path) -> dict[str, str]:
    return {name.lower(): version for name, version in
            re.findall(r"^([A-Za-z0-9_.-]+)==([^\s\\]+)", path.read_text(), flags=re.M)}


def test_the_runtime_lock_is_the_full_lock_without_the_toolchain():
    """make demo installs requirements/lock-runtime.txt: the same versions as lock.txt (make test's), every runtime
    dependency, none of the test extra's tools."""
    runtime, full = _pins(ROOT / "requirements/lock-runtime.txt"), _pins(ROOT / "requirements/lock.txt")
    assert runtime and all(full.get(name) == version for name, version in runtime.items())
    required = {re.split(r"[<>=!~\[ ]", d, maxsplit=1)[0].lower() for d in PROJECT["dependencies"]}
    assert required <= set(runtime)
    tools = {re.split(r"[<>=!~\[ ]", d, maxsplit=1)[0].lower() for d in PROJECT["optional-dependencies"]["test"]}
    assert not tools & set(runtime) and tools <= set(full)
    makefile = (ROOT / "Makefile").read_text()
    assert re.search(r"^demo: \$\(RUNTIME_STAMP\)$", makefile, flags=re.M)
    assert re.search(r"^test: \$\(STAMP\)$", makefile, flags=re.M)
    assert "--constraint $(LOCK)" in makefile and "-o $(RUNTIME_LOCK)" in makefile  # make lock writes both


@pytest.mark.skipif(shutil.which("make") is None, reason="no make on this machine")
def test_make_dist_installs_build_alone(tmp_path):
    """``make dist`` builds in an isolated environment: it installs ``build`` and neither the runtime lock nor the
    test toolchain (issue 58). Run dry (``make -n``) with the Makefile alone: a prerequisite on the locks or on
    pyproject.toml would have no rule here and fail."""
    (tmp_path / "Makefile").write_text((ROOT / "Makefile").read_text())
    out = subprocess.run(["make", "-n", "dist"], cwd=tmp_path, capture_output=True, text=True, check=False)
    assert out.returncode == 0, out.stderr
    installs = [line for line in out.stdout.splitlines() if "pip install" in line]
    assert installs and all("'build>=1.2'" in line and " -r " not in line and " -e " not in line
                            for line in installs), out.stdout
    assert "python -m build --outdir dist" in out.stdout
