"""What a published distribution promises: its name, version, license and citation agree with the code and files.

The wheel itself is built and installed into a clean environment by .ci/run (step 4), which runs ``designer
--help`` and a design from it; these checks are the fast half.
"""

from __future__ import annotations

import pathlib
import re
import tomllib

import designer

ROOT = pathlib.Path(__file__).resolve().parent.parent
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]


def test_the_distribution_name_is_not_the_unrelated_designer():
    assert PROJECT["name"] == "designer-ldp"
    assert PROJECT["scripts"] == {"designer": "designer.cli:main"}


def test_the_version_is_read_from_the_package():
    setuptools = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    assert "version" in PROJECT["dynamic"] and "version" not in PROJECT
    assert setuptools["dynamic"]["version"] == {"attr": "designer.__version__"}
    assert re.fullmatch(r"\d+\.\d+\.\d+", designer.__version__)


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
