import importlib
import importlib.util
import pathlib
import subprocess
import sys

import numpy as np
import pytest

import designer

from .layers import LAYERS, LAYOUT, drawing, layer_of

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


def _module_imports() -> dict[str, set[str]]:
    """Every module of designer/ and the designer modules it imports (at any depth in the file)."""
    import ast

    root = ROOT / "designer"
    graph: dict[str, set[str]] = {}
    for path in sorted(root.rglob("*.py")):
        parts = path.with_suffix("").relative_to(root).parts
        module = ".".join(p for p in parts if p != "__init__")
        package = module if path.name == "__init__.py" else module.rpartition(".")[0]
        deps: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.level:
                base = package.split(".") if package else []
                base = base[: len(base) - (node.level - 1)] if node.level > 1 else base
                target = ".".join([*base, node.module] if node.module else base)
                deps |= {f"{target}.{a.name}".strip(".") for a in node.names} if node.module is None else {target}
            elif isinstance(node, ast.ImportFrom | ast.Import):
                names = [node.module] if isinstance(node, ast.ImportFrom) else [a.name for a in node.names]
                deps |= {n.removeprefix("designer.") for n in names if n and n.startswith("designer.")}
        graph[module] = {d for d in deps if d and d != module}
    return graph


def _layer(module: str) -> int:
    return layer_of(module)


def test_a_layer_names_packages_and_top_level_modules_only():
    """A package is one floor: the table names ``release``, never ``release.files``, and each name once."""
    names = [name for layer, _ in LAYERS for name in layer]
    assert [n for n in names if "." in n] == []
    assert len(names) == len(set(names))
    top = {p.stem for p in (ROOT / "designer").iterdir() if p.suffix == ".py" and p.stem != "__init__"}
    top |= {p.name for p in (ROOT / "designer").iterdir() if (p / "__init__.py").is_file()}
    assert set(names) == top


def test_a_package_is_one_floor():
    """Every module of a package has the package's layer, however deep (``release.files`` is ``release``'s)."""
    assert layer_of("release.files") == layer_of("release") == layer_of("release.randomize_run")
    assert layer_of("estimation.simulation") == layer_of("estimation")
    assert layer_of("guarantees.exact_table") < layer_of("optimal") < layer_of("release")
    with pytest.raises(KeyError):
        layer_of("nowhere.module")


def test_lower_layers_do_not_import_upper_ones():
    graph = _module_imports()
    for module, deps in graph.items():
        if module == "":  # designer/__init__.py loads names lazily for users
            continue
        for dep in deps:
            if dep.split(".")[0] in ("__version__", ""):
                continue
            assert _layer(dep) <= _layer(module), f"{module} (layer {_layer(module)}) imports {dep}"


def test_no_import_circle():
    imports = _module_imports()
    graph = {m: {d for d in deps if d in imports} for m, deps in imports.items() if m}
    state: dict[str, int] = {}

    def visit(node: str, path: list[str]) -> None:
        state[node] = 1
        for nxt in sorted(graph.get(node, ())):
            if nxt == "":
                continue
            assert state.get(nxt) != 1, "import circle: " + " -> ".join([*path, node, nxt])
            if nxt not in state:
                visit(nxt, [*path, node])
        state[node] = 2

    for module in sorted(graph):
        if module not in state:
            visit(module, [])


def test_no_circle_between_packages():
    """Between top-level names (a package is one node), no name reaches itself: ``_internal`` never imports
    ``budget`` (which imports ``_internal``), nor ``studio`` ``cli``."""
    graph: dict[str, set[str]] = {}
    for module, deps in _module_imports().items():
        head = module.split(".")[0]
        for dep in deps:
            other = dep.split(".")[0]
            if module and other and other not in (head, "__version__"):
                graph.setdefault(head, set()).add(other)

    def reaches(start: str) -> set[str]:
        seen, todo = set(), [start]
        while todo:
            for nxt in graph.get(todo.pop(), ()):
                if nxt not in seen:
                    seen.add(nxt)
                    todo.append(nxt)
        return seen

    circles = {(a, b) for a in graph for b in graph[a] if a in reaches(b)}
    assert circles == set(), f"package circles: {sorted(circles)}"


def _docstring_lines(text: str) -> int:
    """How many lines of ``text`` (a module's source) are docstrings (the module's, its classes' and functions')."""
    import ast

    lines = set()
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value,
                                                                                                    str):
                lines.update(range(first.lineno, (first.end_lineno or first.lineno) + 1))
    return len(lines)


def test_no_module_over_500_lines():
    """At most 500 lines of code per module (one job each); the docstrings, which carry the runnable Examples every
    public callable has (tests/test_docstring_examples.py), are not counted, and no module passes 800 lines in all."""
    for path in (ROOT / "designer").rglob("*.py"):
        text = path.read_text()
        total = len(text.splitlines())
        assert total - _docstring_lines(text) <= 500, path
        assert total <= 800, path


def test_docstring_lines_are_counted_once_each():
    text = 'def f():\n    """One.\n\n    Two.\n    """\n    return 1\n\n\nclass C:\n    """C."""\n'
    assert _docstring_lines(text) == 5


def test_readme_python_examples_run():
    text = (ROOT / "README.md").read_text()
    blocks = [b.split("```", 1)[0] for b in text.split("```python")[1:]]
    assert blocks, "README has no python example"
    for block in blocks:
        exec(compile(block, "README.md", "exec"), {})


@pytest.mark.lint
def test_ruff_clean():
    if importlib.util.find_spec("ruff") is None:
        pytest.skip("ruff is not installed (it is in the 'test' extra)")
    cmd = [sys.executable, "-m", "ruff", "check", "designer", "tests", "benchmarks", "examples"]
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr


@pytest.mark.lint
def test_mypy_clean():
    if importlib.util.find_spec("mypy") is None:
        pytest.skip("mypy is not installed (it is in the 'test' extra)")
    proc = subprocess.run([sys.executable, "-m", "mypy"], cwd=ROOT, capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def readme_commands() -> list[str]:
    text = (ROOT / "README.md").read_text()
    lines = []
    for block in text.split("```sh")[1:]:
        for line in block.split("```", 1)[0].splitlines():
            if line.startswith("designer "):
                lines.append(line.split("  #", 1)[0].strip())
    return lines


def test_readme_commands_run(scratch, capsys):
    """Every ``designer`` line of the README runs, in order (the guide's lines: tests/test_docs_commands.py, which
    also checks that the README and the guide together show every command)."""
    import shlex

    from designer.cli import main

    commands = readme_commands()
    assert len(commands) >= 8
    for line in commands:
        code = main([*shlex.split(line)[1:], "--quiet"])
        captured = capsys.readouterr()
        assert code == 0, (line, captured.err)
        assert captured.out.strip(), line
    for made in ("five.csv", "five-truth.csv", "five-answers.csv"):
        assert (scratch / made).stat().st_size > 0, made


def test_help_examples_run(scratch, capsys):
    import shlex

    from designer.cli import COMMANDS, main

    for name, _, example, _, _ in COMMANDS:  # in order: randomize writes what estimate reads
        if name == "studio":  # serves a web app until it is stopped: tests/test_studio.py drives it in a browser
            continue
        argv = shlex.split(example)[1:]
        if name == "sweep":
            argv[argv.index("0.1:5:50")] = "0.5:2:4"  # the same command on a smaller grid
        code = main(argv)
        assert code == 0, (example, capsys.readouterr().err)


@pytest.mark.parametrize("argv", [["--help"], ["--version"], ["--version", "--verbose"],
                                  ["audit", "examples/mechanisms/q2x3.csv"]])
def test_fast_commands_do_not_import_heavy_libraries(argv):
    """The CLI starts fast: help, version and an audit never load cvxpy, matplotlib, scipy or pandas."""
    code = (f"import sys\nfrom designer.cli import main\nmain({argv!r})\n"
            "print(sorted({m.split('.')[0] for m in sys.modules} & {'cvxpy', 'matplotlib', 'scipy', 'pandas'}))")
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=False)
    assert proc.stdout.strip().splitlines()[-1] == "[]", proc.stdout + proc.stderr


def test_every_error_class_lives_in_exceptions_py():
    """One family in one place: a class deriving from an exception or warning outside designer/exceptions.py is a
    second home (a private BaseException used as a signal, the CLI's SIGTERM, is not an error)."""
    import ast

    import designer.exceptions as exceptions

    names = {n for n in dir(exceptions) if isinstance(getattr(exceptions, n), type)}
    strays = []
    for path in (ROOT / "designer").rglob("*.py"):
        if path.name == "exceptions.py":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ClassDef):
                bases = {b.id if isinstance(b, ast.Name) else getattr(b, "attr", "") for b in node.bases}
                if bases & (names | {"Exception", "ValueError", "TypeError", "RuntimeError", "UserWarning"}):
                    strays.append(f"{path.relative_to(ROOT)}:{node.lineno} {node.name}")
    assert strays == []
    from designer.devices import DeviceError
    from designer.planning import PlanningError

    assert PlanningError is exceptions.PlanningError and DeviceError is exceptions.DeviceError


def test_designer_design_is_a_plain_function():
    """``from designer import design`` is the function (house 4: no module made callable); the engine lives in
    ``designer.optimal``."""
    import inspect

    from designer import design
    from designer.optimal import DesignProblem
    from designer.optimal.engine import design as engine_design

    assert inspect.isfunction(design) and not inspect.ismodule(designer.design)
    problem = DesignProblem(objective="truthful", inputs=("yes", "no"), epsilon=1.0)
    assert np.array_equal(design(problem).mechanism.matrix, engine_design(problem).mechanism.matrix)


def test_no_module_name_repeats_and_the_top_is_small():
    names = [p.stem for p in (ROOT / "designer").rglob("*.py") if p.name != "__init__.py"]
    names += [p.name for p in (ROOT / "designer").rglob("*") if p.is_dir() and p.name != "__pycache__"]
    repeated = sorted({n for n in names if names.count(n) > 1})
    assert repeated == []
    top = [p.name for p in (ROOT / "designer").iterdir() if p.name != "__pycache__"]
    assert len(top) <= 28, sorted(top)  # with _version.py (issue 51) and tables/, the reading layer (issue 60)


def test_the_layout_drawing_is_the_layer_table():
    """docs/layout.md shows tests/layers.py's table as written by ``python -m tests.layers``."""
    block = LAYOUT.read_text().split("```\n", 1)[1].split("```", 1)[0]
    assert block == drawing(), "run: python -m tests.layers"


def test_every_module_has_a_layer():
    for module in _module_imports():
        if module:
            layer_of(module)


def test_no_function_hands_its_locals_on():
    """Finding 5 of the house review: regress handed locals() to a helper that read ten names from it, so a
    renamed variable was a runtime KeyError mypy could not see. No module calls locals() or vars() without an
    argument."""
    import ast

    for path in sorted((ROOT / "designer").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("locals", "vars"):
                assert node.args, f"{path}: {node.func.id}() at line {node.lineno}"


def test_one_table_of_public_names():
    """designer/__init__.py's ``_PUBLIC`` is the table; ``__all__`` is made from it and the type checkers'
    imports name the same names from the same modules."""
    import ast

    tree = ast.parse((ROOT / "designer" / "__init__.py").read_text())
    checked = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and getattr(node.test, "id", "") == "TYPE_CHECKING":
            for stmt in node.body:
                assert isinstance(stmt, ast.ImportFrom) and stmt.level == 1
                for alias in stmt.names:
                    checked[alias.name] = stmt.module
    assert checked == designer._EXPORTS
    assert designer.__all__ == sorted(designer._EXPORTS)
