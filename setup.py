"""The package list, computed (pyproject.toml holds everything else): every package under designer/, found, and the
repository's problems/ and examples/ (with its data folders) as designer.problems and designer.examples, which
pyproject.toml's package-dir maps to those top-level folders. A package added under designer/ ships without an edit."""

from pathlib import Path

from setuptools import find_packages, setup

EXAMPLES = sorted(p.name for p in Path(__file__).parent.joinpath("examples").iterdir()
                  if p.is_dir() and p.name not in ("__pycache__", "output"))

setup(packages=[*find_packages(include=["designer", "designer.*"]), "designer.problems", "designer.examples",
                *(f"designer.examples.{name}" for name in EXAMPLES)])
