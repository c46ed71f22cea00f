"""The documentation's promises: every command line and Python block of the user guide runs and prints what the page
shows, the pages cover every command, the README stays short, and the generated reference pages name every public
name, command and flag.

Each guide page runs in a scratch copy of examples/ and problems/, its ``designer`` lines in order (a page's later
lines read what its earlier lines wrote), then its Python blocks; the pages run as separate tests, so
``pytest -n 2`` spreads them over both workers.

**Output blocks.** A page shows what its code prints with the line ``<!-- output -->`` followed directly by a
```` ```text ```` block: the whole output of the nearest code block above the marker (of a ```` ```sh ```` block,
the standard output of its last ``designer`` line; of a ```` ```python ```` block, what it prints), as the page
runs here. The test compares it with the real output, timings aside (a design's ``...; 0.36 s`` and JSON
``"seconds"``); ``python -m docs._ext.refresh_outputs`` (from the repository root) rewrites every block from the
real output, ``--check`` lists the stale ones. Show only output that is the same on every run: a line that draws
without ``--seed`` (a real release) or reads such a draw gets no block. A ```` ```console ```` session (``$
designer ...`` lines with what they print, stdout then stderr, and ``$ echo $?`` with the exit status) is checked
and rewritten the same way: the place for commands that fail.
"""

from __future__ import annotations

import argparse
import difflib
import pathlib
import re
import shlex
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "docs" / "_ext"))  # the docs' own modules, as conf.py loads them
import designer_docs as docs_gen  # noqa: E402
import refresh_outputs  # noqa: E402

GUIDE = ROOT / "docs" / "guide"
#: The guide, and every other page of docs/ (the other pages' command lines are run too).
PAGES = refresh_outputs.pages()
#: Commands shown but not run here: the studio serves a web app until it is stopped (tests/ drive it in a browser).
NOT_RUN = refresh_outputs.NOT_RUN


def shell_lines(path: pathlib.Path) -> list[str]:
    return docs_gen.shell_lines(path.read_text())


def run_lines(path: pathlib.Path) -> list[str]:
    return [line for line in shell_lines(path) if line.split()[1] not in NOT_RUN]


def python_blocks(path: pathlib.Path) -> list[str]:
    return [code for _, code in refresh_outputs.python_blocks(path.read_text())]


def test_the_guide_has_pages_with_commands():
    assert len(list(GUIDE.glob("*.md"))) >= 10
    assert sum(len(shell_lines(p)) for p in PAGES) >= 40


def _check_output(page, shown, source, out, scratch, what):
    if source not in shown:
        return
    real = refresh_outputs.comparable(refresh_outputs.normalise(out, scratch))
    expected = refresh_outputs.comparable(shown[source].text)
    diff = "".join(difflib.unified_diff(expected.splitlines(True), real.splitlines(True), "page", "real"))
    assert real == expected, (f"{page.name}: the output block of {what} is not what it prints "
                              f"(python -m docs._ext.refresh_outputs rewrites it):\n{diff}")


@pytest.mark.parametrize("page", [p for p in PAGES if run_lines(p) or python_blocks(p)
                                  or refresh_outputs.console_blocks(p.read_text())], ids=lambda p: p.stem)
def test_guide_page_runs(page, scratch, capsys):
    """Every line exits 0 and prints something, every Python block runs, and each output block is the real output
    of the line or block above it."""
    from designer.cli import main

    shown = {block.source: block for block in refresh_outputs.output_blocks(page.read_text())}
    for index, line in enumerate(shell_lines(page)):
        if line.split()[1] in NOT_RUN:
            continue
        code = main([*shlex.split(line)[1:], "--quiet"])
        captured = capsys.readouterr()
        assert code == 0, (page.name, line, captured.err)
        assert captured.out.strip(), (page.name, line)
        _check_output(page, shown, ("line", index), captured.out, scratch, f"`{line}`")
        for flag in ("--out", "--plot", "--curve-plot", "--report", "--instructions"):
            argv = shlex.split(line)
            if flag in argv:
                written = scratch / argv[argv.index(flag) + 1]
                assert written.exists() and (written.is_dir() or written.stat().st_size > 0), (line, flag)
    for index, block in enumerate(python_blocks(page)):
        exec(compile(block, str(page), "exec"), {})
        _check_output(page, shown, ("python", index), capsys.readouterr().out, scratch, f"Python block {index + 1}")
    for session in refresh_outputs.console_blocks(page.read_text()):
        shown[session.source] = session
        _check_output(page, shown, session.source, refresh_outputs.run_console(session.text), scratch,
                      f"console session {session.source[1] + 1}")


#: The front doors (issue 51): the guide's Python blocks import designer (and its credal module) only, and the
#: gallery takes these names from ``designer`` itself, never a second function of the same name from a submodule.
FRONT_DOORS = {"design", "estimate", "regress", "plan", "randomize", "export", "audit", "tradeoff"}
GALLERY = [*sorted((ROOT / "examples").glob("plot_*.py")), ROOT / "examples" / "affairs.py"]


def _designer_imports(code: str) -> list[tuple[str, list[str]]]:
    """``(module, names)`` of every import of a designer module in ``code`` (names empty for ``import m``)."""
    import ast

    found = []
    for node in ast.walk(ast.parse(code)):
        if isinstance(node, ast.Import):
            found += [(alias.name, []) for alias in node.names if alias.name.split(".")[0] == "designer"]
        elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "designer":
            found.append((node.module or "", [alias.name for alias in node.names]))
    return found


@pytest.mark.parametrize("page", sorted(GUIDE.glob("*.md")), ids=lambda p: p.stem)
def test_the_guide_uses_the_front_doors_only(page):
    for block in python_blocks(page):
        for module, _ in _designer_imports(block):
            assert module in ("designer", "designer.credal"), f"{page.name} imports {module}: use the front doors"


def test_the_gallery_uses_the_front_doors_and_public_modules_only():
    public = {name for name, _ in docs_gen.public_namespaces()}
    for script in GALLERY:
        for module, names in _designer_imports(script.read_text()):
            assert module in public, f"{script.name} imports {module}, which is not public"
            if module != "designer":
                assert not FRONT_DOORS & set(names), f"{script.name} takes {FRONT_DOORS & set(names)} from {module}"


def test_the_readme_and_the_guide_show_every_command():
    from designer.cli import COMMANDS

    readme = docs_gen.shell_lines((ROOT / "README.md").read_text())
    shown = {line.split()[1] for line in readme} | {line.split()[1] for p in PAGES for line in shell_lines(p)}
    assert shown >= {name for name, *_ in COMMANDS}


def test_every_figure_a_page_shows_is_drawn_by_one_of_its_lines():
    """The site draws a guide page's figures with the page's own command lines (docs/_ext/designer_docs.py)."""
    for page in PAGES:
        shown = set(re.findall(r"_generated/figures/([\w.-]+\.png)", page.read_text()))
        written = set()
        for line in shell_lines(page):
            argv = shlex.split(line)
            written |= {argv[i + 1] for i, a in enumerate(argv[:-1]) if a in docs_gen.FIGURE_FLAGS}
        assert shown <= written, (page.name, shown - written)


def test_guide_links_point_at_pages_that_exist():
    for page in [*PAGES, ROOT / "README.md", ROOT / "docs" / "index.md"]:
        for target in re.findall(r"\]\(([^)#:\s]+\.md)(?:#[\w-]+)?\)", page.read_text()):
            assert (page.parent / target).exists(), (page.name, target)


def test_the_citation_page_is_read_from_citation_cff():
    """docs/citing.md shows BibTeX generated from CITATION.cff at build time: the paper and the software, with the
    file's title, authors, year and version."""
    import yaml

    cff = yaml.safe_load((ROOT / "CITATION.cff").read_text())
    bib = docs_gen.citation_bibtex()
    paper, software = bib.split("\n@")
    cited = cff["preferred-citation"]
    assert paper.startswith("@inproceedings{") and cited["title"] in paper and str(cited["year"]) in paper
    assert all(a["family-names"] in paper for a in cited["authors"])
    assert software.startswith("software{") and cff["title"] in software
    assert f"version = {{{cff['version']}}}" in software
    assert "_generated/citation.bib" in (ROOT / "docs" / "citing.md").read_text()


def test_readme_is_at_most_250_lines():
    assert len((ROOT / "README.md").read_text().splitlines()) <= 250


def test_api_reference_names_every_public_name(tmp_path):
    """Every name of designer.__all__ and of each public module's __all__ is on the API page: as an entry of its
    own, or as a link to the page of the same object under an earlier namespace."""
    page = tmp_path / "api.rst"
    docs_gen.write_api(page)
    text = page.read_text()
    namespaces = docs_gen.public_namespaces()
    assert namespaces[0][0] == "designer"
    assert {name for name, _ in namespaces} >= {"designer", "designer.privacy", "designer.optimal"}
    sections = re.split(r"\n``(designer[\w.]*)``\n-+\n", text)
    by_module = dict(zip(sections[1::2], sections[2::2]))
    for module, names in namespaces:
        body = by_module[module]
        listed = set(re.findall(r"^   (\w+)$", body, flags=re.M))
        linked = set(re.findall(rf":py:obj:`{re.escape(module)}\.(\w+) <", body))
        assert set(names) == listed | linked, module
        assert not listed & linked, module


def test_cli_reference_names_every_command_flag_and_default(tmp_path):
    from designer.cli import build_parser

    page = tmp_path / "cli.rst"
    docs_gen.write_cli(page)
    text = page.read_text()
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    sections = dict(re.findall(r"\ndesigner (\w+)\n-+\n(.*?)(?=\n\.\. _cli-|\Z)", text, flags=re.S))
    assert set(sections) == set(sub.choices)
    for name, child in sub.choices.items():
        for action in child._actions:
            if action.help == argparse.SUPPRESS or isinstance(action, argparse._HelpAction):
                continue
            for option in action.option_strings:
                assert f"``{option}" in sections[name] or f", {option}" in sections[name], (name, option)
            default = docs_gen._default(action)
            if default is not None:
                assert f"default: ``{default}``" in sections[name], (name, action.dest, default)


def test_a_kkt_violation_at_round_off_compares_equal_and_a_larger_one_does_not():
    """Output blocks show a fit's KKT violation; below 1e-12 it is the build's round-off and compares as such."""
    same = refresh_outputs.comparable
    assert same("converged (KKT violation 2.2e-16); 0.95") == same("converged (KKT violation 0.0e+00); 0.95")
    assert same("(KKT violation 1e-12)") == same("(KKT violation 0)")
    assert same("(KKT violation 3.1e-05)") != same("(KKT violation 0)")
    assert same("(KKT violation 2e-12)") != same("(KKT violation 0)")
