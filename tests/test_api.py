import importlib
import importlib.util
import pathlib
import subprocess
import sys

import pytest

import designer

ROOT = pathlib.Path(__file__).resolve().parent.parent


def test_every_public_name_exists():
    for name in designer.__all__:
        assert hasattr(designer, name), name
    assert len(set(designer.__all__)) == len(designer.__all__)


@pytest.mark.parametrize("module", ["setfunctions", "mechanism", "privacy", "composition", "constructors"])
def test_module_all_is_true(module):
    mod = importlib.import_module(f"designer.{module}")
    for name in mod.__all__:
        assert hasattr(mod, name), f"{module}.{name}"


def test_lower_layers_do_not_import_upper_ones():
    order = ["setfunctions", "mechanism", "constructors", "privacy", "composition", "cli"]
    for i, lower in enumerate(order):
        text = (ROOT / "designer" / f"{lower}.py").read_text()
        for upper in order[i + 1:]:
            if (lower, upper) == ("constructors", "privacy"):
                continue
            assert f"from .{upper} import" not in text and f"from . import {upper}" not in text, (lower, upper)


def test_readme_python_examples_run():
    text = (ROOT / "README.md").read_text()
    blocks = [b.split("```", 1)[0] for b in text.split("```python")[1:]]
    assert blocks, "README has no python example"
    for block in blocks:
        exec(compile(block, "README.md", "exec"), {})


def test_ruff_clean():
    if importlib.util.find_spec("ruff") is None:
        pytest.skip("ruff is not installed (it is in the 'test' extra)")
    cmd = [sys.executable, "-m", "ruff", "check", "designer", "tests", "benchmarks", "examples"]
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
