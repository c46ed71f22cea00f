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


def readme_commands() -> list[str]:
    text = (ROOT / "README.md").read_text()
    lines = []
    for block in text.split("```sh")[1:]:
        for line in block.split("```", 1)[0].splitlines():
            if line.startswith("designer "):
                lines.append(line.split("  #", 1)[0].strip())
    return lines


@pytest.fixture
def scratch(tmp_path, monkeypatch):
    """A working folder holding copies of examples/ and problems/, as the README's commands expect."""
    import shutil

    for folder in ("examples", "problems"):
        shutil.copytree(ROOT / folder, tmp_path / folder, ignore=shutil.ignore_patterns("output"))
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_readme_documents_every_command_and_its_examples_run(scratch, capsys):
    import shlex

    from designer.cli import COMMANDS, main

    commands = readme_commands()
    assert {c.split()[1] for c in commands} >= {name for name, *_ in COMMANDS}
    for line in commands:
        code = main([*shlex.split(line)[1:], "--quiet"])
        captured = capsys.readouterr()
        assert code == 0, (line, captured.err)
        assert captured.out.strip(), line
    for made in ("freq16.csv", "tradeoff.png", "responses.csv", "precise.csv", "sweep.csv", "sweep.png"):
        assert (scratch / made).stat().st_size > 0, made


def test_help_examples_run(scratch, capsys):
    import shlex

    from designer.cli import COMMANDS, main

    for name, _, example, _, _ in COMMANDS:  # in order: randomize writes what estimate reads
        argv = shlex.split(example)[1:]
        if name == "sweep":
            argv[argv.index("0.1:5:50")] = "0.5:2:4"  # the same command on a smaller grid
        code = main(argv)
        assert code == 0, (example, capsys.readouterr().err)
