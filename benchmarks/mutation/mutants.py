"""Mutation testing of the modules that decide privacy and inference (docs/mutation.md).

mutmut (pinned in pyproject.toml) changes the code one small edit at a time and runs the tests against each
change; a change no test notices (a *survivor*) is a missing test or an *equivalent* change. This script runs
mutmut module by module, each against its own test files (``targets.toml`` beside it), and keeps the verdicts:

    python benchmarks/mutation/mutants.py run [MODULE ...]   # full runs, one module at a time (make mutants)
    python benchmarks/mutation/mutants.py run MODULE --survivors   # only last run's survivors, after new tests
    python benchmarks/mutation/mutants.py report             # report.md from results/*.json
    python benchmarks/mutation/mutants.py changed [--base REV]   # the CI step: mutants of the changed lines

``run`` writes ``results/MODULE.json`` (every survivor with its diff) and rewrites ``report.md``: the score per
module and every survivor, each either marked equivalent in ``equivalent.toml`` (with its reason) or listed as
unexplained. ``changed`` mutates only the lines that differ from a base commit (``--base``, else
``$MUTATION_BASE``, else the commit recorded in ``base`` beside this script when it is an ancestor of HEAD, else
HEAD's first parent) in the target modules and exits 1 on a survivor that ``equivalent.toml`` does not explain.

Each module runs in its own folder under ``build/mutation/`` (mutmut copies the sources into ``mutants/`` there
and keeps its verdicts, so a second run is incremental), with at most two children and ``nice``.
"""

from __future__ import annotations

import argparse
import datetime
import fnmatch
import json
import os
import re
import shutil
import subprocess
import sys
import time
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
#: Entries of the checkout never linked into a module's scratch folder (mutmut copies what it needs from there).
NOT_LINKED = {".git", "build", "mutants", ".venv", ".tools", ".hypothesis", ".pytest_cache", "dist", ".ci",
              ".ruff_cache", ".mypy_cache"}
#: mutmut's verdicts by exit code (mutmut.stats.status_by_exit_code, repeated so the parent need not import it).
STATUS = {1: "killed", 3: "killed", 0: "survived", 5: "no tests", 33: "no tests", 34: "skipped", 35: "suspicious",
          36: "timeout", 24: "timeout", -24: "timeout", 152: "timeout", 255: "timeout", 37: "type check",
          -11: "segfault", 2: "interrupted", None: "not checked"}
#: The verdicts that count against a module: a change the tests did not notice.
LIVE = ("survived", "no tests")


# ---------------------------------------------------------------- configuration


@dataclass
class Target:
    """One module to mutate: its file, the functions to mutate (all when empty) and the tests run against it."""

    name: str
    path: str
    tests: list[str]
    functions: list[str] = field(default_factory=list)
    note: str = ""

    @property
    def dotted(self) -> str:
        return self.path[:-3].replace("/", ".")

    def patterns(self) -> list[str]:
        """mutmut's mutant-name globs for the functions of this target (``Class.method`` or ``function``)."""
        if not self.functions:
            return [f"{self.dotted}.*"]
        out = []
        for f in self.functions:
            cls, _, meth = f.rpartition(".")
            out.append(f"{self.dotted}.xǁ{cls}ǁ{meth}__mutmut_*" if cls else f"{self.dotted}.x_{f}__mutmut_*")
        return out

    def owns(self, mutant: str) -> bool:
        return any(fnmatch.fnmatchcase(mutant, p) for p in self.patterns())


@dataclass
class Settings:
    root: Path
    folder: Path  # the folder of targets.toml: equivalent.toml, results/, report.md, base
    targets: dict[str, Target]
    pytest_args: list[str]
    max_children: int
    changed_tests_budget: int  # the CI step: at most this many mutants (evenly spread over the changed lines)

    @property
    def equivalent_file(self) -> Path:
        return self.folder / "equivalent.toml"


def load(root: Path, targets_file: Path | None = None) -> Settings:
    path = targets_file or root / "benchmarks" / "mutation" / "targets.toml"
    data = tomllib.loads(path.read_text())
    run = data.get("run", {})
    targets = {name: Target(name=name, path=t["path"], tests=list(t["tests"]), functions=list(t.get("functions", [])),
                            note=t.get("note", ""))
               for name, t in data["module"].items()}
    return Settings(root=root, folder=path.parent, targets=targets, pytest_args=list(run.get("pytest_args", [])),
                    max_children=min(2, int(run.get("max_children", 2))),
                    changed_tests_budget=int(run.get("changed_mutants", 150)))


def equivalents(settings: Settings) -> list[dict[str, Any]]:
    """The reviewed equivalent mutants: ``function`` (mutmut's mangled name without the number), the ``removed``
    and ``added`` lines of its diff (stripped), and the ``reason``."""
    if not settings.equivalent_file.exists():
        return []
    return list(tomllib.loads(settings.equivalent_file.read_text()).get("equivalent", []))


# ---------------------------------------------------------------- diffs


def function_of(mutant: str) -> str:
    """``pkg.mod.x_f__mutmut_3`` -> ``pkg.mod.x_f``: the mutated function, stable across runs."""
    return mutant.partition("__mutmut_")[0]


def diff_lines(diff: str) -> tuple[list[str], list[str]]:
    """The removed and added lines of a unified diff, stripped (what identifies a mutant across runs)."""
    removed = [line[1:].strip() for line in diff.splitlines() if line.startswith("-") and not line.startswith("---")]
    added = [line[1:].strip() for line in diff.splitlines() if line.startswith("+") and not line.startswith("+++")]
    return removed, added


def explained(mutant: str, diff: str, marks: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The entry of ``equivalent.toml`` that marks this mutant, if any."""
    removed, added = diff_lines(diff)
    for mark in marks:
        if mark["function"] == function_of(mutant) and list(mark["removed"]) == removed and \
                list(mark["added"]) == added:
            return mark
    return None


# ---------------------------------------------------------------- one mutmut run (in a child process)


def scratch_folder(settings: Settings, name: str) -> Path:
    """``build/mutation/NAME``: links to the checkout's entries, mutmut's ``mutants/`` beside them."""
    folder = settings.root / "build" / "mutation" / name
    folder.mkdir(parents=True, exist_ok=True)
    for entry in settings.root.iterdir():
        if entry.name in NOT_LINKED:
            continue
        link = folder / entry.name
        if not link.is_symlink():
            if link.exists():
                shutil.rmtree(link) if link.is_dir() else link.unlink()
            link.symlink_to(entry)
    return folder


def mutmut_child(spec_file: str) -> int:
    """Run mutmut in the current folder as ``spec_file`` says (JSON: ``paths``, ``tests``, ``patterns``,
    ``lines``, ``pytest_args``, ``max_children``, ``out``) and write every mutant's verdict and diff to ``out``."""
    spec = json.loads(Path(spec_file).read_text())
    import mutmut.__main__ as mm
    import mutmut.configuration as mc
    from mutmut.mutation.data import SourceFileMutationData
    from mutmut.mutation.diff_apply import get_diff_for_mutant
    from mutmut.state import state

    cfg = mc.config()
    cfg.only_mutate = list(spec["paths"])
    cfg.pytest_add_cli_args_test_selection = list(spec["tests"])
    cfg.pytest_add_cli_args = [*cfg.pytest_add_cli_args, *spec["pytest_args"]]
    if spec.get("lines") is not None:  # the changed lines: mutmut mutates the nodes that start on them
        state()._covered_lines = {str((Path("mutants") / p).absolute()): set(lines)
                                  for p, lines in spec["lines"].items()}
    names = list(spec["patterns"])
    started = time.monotonic()
    try:
        mm._run(names, spec["max_children"])
    except SystemExit as exc:
        if exc.code not in (0, None):
            raise
    out: dict[str, Any] = {"seconds": time.monotonic() - started, "mutants": {}}
    for path in spec["paths"]:
        data = SourceFileMutationData(path=path)
        data.load()
        for key, code in data.exit_code_by_key.items():
            if not any(fnmatch.fnmatchcase(key, p) for p in names):
                continue
            status = STATUS.get(code, "suspicious")
            entry: dict[str, Any] = {"status": status, "path": path}
            if status != "killed":
                entry["diff"] = get_diff_for_mutant(key, path=path)
            out["mutants"][key] = entry
    Path(spec["out"]).write_text(json.dumps(out, indent=1, sort_keys=True))
    return 0


def run_mutmut(settings: Settings, folder_name: str, paths: list[str], tests: list[str], patterns: list[str],
               lines: dict[str, list[int]] | None = None, fresh: bool = False) -> dict[str, Any]:
    """One mutmut run in its scratch folder (a child process under ``nice -n 10``); the verdicts it wrote."""
    folder = scratch_folder(settings, folder_name)
    missing = [t for t in tests if not (settings.root / t.split("::")[0]).exists()]
    if missing:
        print(f"note: no test file {', '.join(missing)} (left out)", flush=True)
        tests = [t for t in tests if t not in missing]
    if fresh and (folder / "mutants").exists():
        shutil.rmtree(folder / "mutants")
    spec = {"paths": paths, "tests": tests, "patterns": patterns, "lines": lines, "pytest_args": settings.pytest_args,
            "max_children": settings.max_children, "out": str(folder / "verdicts.json")}
    (folder / "spec.json").write_text(json.dumps(spec))
    (folder / "verdicts.json").unlink(missing_ok=True)
    niceness = os.environ.get("MUTATION_NICE", "10")  # the machine is shared: mutants yield to other work
    command = ["nice", "-n", niceness, sys.executable, str(Path(__file__).resolve()), "_child",
               str(folder / "spec.json")]
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    log = folder / "mutmut.log"
    print(f"   mutmut's output: {log.relative_to(settings.root)}", flush=True)
    with open(log, "w") as out:
        done = subprocess.run(command, cwd=folder, env=env, stdout=out, stderr=subprocess.STDOUT, check=False)
    if done.returncode != 0 or not (folder / "verdicts.json").exists():
        tail = log.read_text(errors="replace").replace("\r", "\n").splitlines()[-40:]
        print("\n".join(tail), file=sys.stderr)
        raise SystemExit(f"mutmut failed in {folder} (exit {done.returncode}); the end of its output is above")
    result: dict[str, Any] = json.loads((folder / "verdicts.json").read_text())
    return result


# ---------------------------------------------------------------- full runs and the report


def git(root: Path, *args: str) -> str | None:
    done = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, check=False)
    return done.stdout.strip() if done.returncode == 0 else None


def run_modules(settings: Settings, names: list[str], survivors_only: bool, functions: list[str] | None = None
                ) -> None:
    unknown = [n for n in names if n not in settings.targets]
    if unknown:
        raise SystemExit(f"unknown module(s) {', '.join(unknown)}: choose from {', '.join(settings.targets)}")
    for name in names or list(settings.targets):
        target = settings.targets[name]
        results_file = settings.folder / "results" / f"{name}.json"
        previous = json.loads(results_file.read_text()) if results_file.exists() else None
        patterns = target.patterns()
        if survivors_only:
            if previous is None:
                raise SystemExit(f"{name}: no earlier run to take survivors from (run it in full first)")
            whole = Target(name, target.path, target.tests, list(functions or [])).patterns() if functions else []
            patterns = [m for m, v in previous["mutants"].items() if v["status"] != "killed"
                        and not any(fnmatch.fnmatchcase(m, p) for p in whole)] + whole
            if not patterns:
                print(f"== {name}: no survivors to run again")
                continue
        print(f"== {name}: {target.path} ({len(patterns)} pattern(s)), tests {' '.join(target.tests)}", flush=True)
        got = run_mutmut(settings, name, [target.path], target.tests, patterns)
        if survivors_only and previous is not None:
            merged = {m: v for m, v in previous["mutants"].items()  # a function run again: its new mutants only
                      if not any(fnmatch.fnmatchcase(m, p) for p in whole)}
            merged.update(got["mutants"])
            record = {**previous, "mutants": merged, "rerun": {
                "date": datetime.date.today().isoformat(), "commit": git(settings.root, "rev-parse", "--short",
                                                                         "HEAD"),
                "mutants": len(got["mutants"]), "seconds": round(got["seconds"])}}
        else:
            record = {"module": name, "path": target.path, "tests": target.tests, "functions": target.functions,
                      "date": datetime.date.today().isoformat(),
                      "commit": git(settings.root, "rev-parse", "--short", "HEAD"),
                      "seconds": round(got["seconds"]), "max_children": settings.max_children,
                      "mutants": got["mutants"]}
        results_file.parent.mkdir(exist_ok=True)
        results_file.write_text(json.dumps(record, indent=1, sort_keys=True) + "\n")
        counts = _counts(record["mutants"], equivalents(settings))
        print(f"== {name}: {counts['total']} mutants, {counts['killed']} killed, {counts['equivalent']} equivalent, "
              f"{counts['timeout']} time-outs, {counts['unexplained']} unexplained ({record['seconds']} s)")
        write_report(settings)


def _counts(mutants: dict[str, Any], marks: list[dict[str, Any]]) -> dict[str, int]:
    out = {"total": len(mutants), "killed": 0, "timeout": 0, "equivalent": 0, "unexplained": 0}
    for name, v in mutants.items():
        if v["status"] == "killed":
            out["killed"] += 1
        elif v["status"] == "timeout":
            out["timeout"] += 1
        elif explained(name, v.get("diff", ""), marks):
            out["equivalent"] += 1
        else:
            out["unexplained"] += 1
    return out


def write_report(settings: Settings) -> Path:
    """``report.md``: the score per module and every mutant that was not killed, with its diff and verdict."""
    marks = equivalents(settings)
    used: set[int] = set()
    records = []
    for name in settings.targets:
        f = settings.folder / "results" / f"{name}.json"
        if f.exists():
            records.append(json.loads(f.read_text()))
    lines = ["# Mutation report", "",
             "Written by `benchmarks/mutation/mutants.py` (`make mutants`); docs/mutation.md says how to read it. "
             "*Score*: the share of mutants that the module's tests kill or time out, the equivalent ones left out "
             "of the count. *Unexplained*: a survivor that no test kills and `equivalent.toml` does not explain: a "
             "missing test.", "",
             "| module | run on | mutants | killed | time-outs | equivalent | unexplained | score | minutes |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for r in records:
        c = _counts(r["mutants"], marks)
        denominator = c["total"] - c["equivalent"]
        score = 100.0 * (c["killed"] + c["timeout"]) / denominator if denominator else 100.0
        when = f"{r['commit']} {r['date']}" + (f" (survivors again on {r['rerun']['commit']})" if "rerun" in r else "")
        lines.append(f"| `{r['module']}` | {when} | {c['total']} | {c['killed']} | {c['timeout']} | "
                     f"{c['equivalent']} | {c['unexplained']} | {score:.1f}% | {r['seconds'] / 60:.0f} |")
    missing = [n for n in settings.targets if not (settings.folder / "results" / f"{n}.json").exists()]
    if missing:
        lines += ["", f"Not run with this script yet: {', '.join(f'`{n}`' for n in missing)} (the figures of earlier "
                  "rounds, run with `mutmut run` against the whole mutation suite, are in docs/mutation.md)."]
    for r in records:
        target = settings.targets[r["module"]]
        lines += ["", f"## `{r['module']}`", "",
                  f"`{r['path']}`" + (f", functions {', '.join(f'`{f}`' for f in target.functions)}"
                                      if target.functions else ", every function") +
                  f"; tests {', '.join(f'`{t}`' for t in r['tests'])}." + (f" {target.note}" if target.note else "")]
        rows = [(n, v) for n, v in sorted(r["mutants"].items(), key=lambda kv: _order(kv[0]))
                if v["status"] != "killed"]
        if not rows:
            lines += ["", "Every mutant killed."]
        for n, v in rows:
            mark = explained(n, v.get("diff", ""), marks)
            if mark is not None:
                used.add(id(mark))
                verdict = f"equivalent: {mark['reason']}"
            elif v["status"] == "timeout":
                verdict = "time-out (the tests ran past mutmut's limit: counted as killed)"
            else:
                verdict = f"**unexplained** ({v['status']})"
            body = "\n".join(line for line in v.get("diff", "").splitlines() if not line.startswith(("---", "+++")))
            lines += ["", f"- `{n}`: {verdict}", "", "  ```diff", *[f"  {line}" for line in body.splitlines()],
                      "  ```"]
    stale = [m for m in marks if id(m) not in used and any(
        m["function"].startswith(settings.targets[r["module"]].dotted + ".") for r in records)]
    if stale:
        lines += ["", "## Marks that match no survivor", "",
                  "Entries of `equivalent.toml` whose mutant no longer survives or no longer exists (the code or "
                  "the tests changed); remove them when the run is current.", ""]
        lines += [f"- `{m['function']}`: `{' / '.join(m['removed'])}` -> `{' / '.join(m['added'])}`" for m in stale]
    out = settings.folder / "report.md"
    out.write_text("\n".join(lines) + "\n")
    return out


def _order(name: str) -> tuple[str, int]:
    head, _, number = name.rpartition("__mutmut_")
    return head, int(number) if number.isdigit() else 0


# ---------------------------------------------------------------- the CI step: mutants of the changed lines


def choose_base(settings: Settings, given: str | None) -> tuple[str | None, str]:
    """The commit the change is measured from, and why: ``--base``/``$MUTATION_BASE``; else the commit recorded
    in ``base`` when it is an ancestor of HEAD; else HEAD's first parent (for a merge: what the merged branch
    brought); None when there is none (not a git checkout, a single commit, a shallow clone)."""
    if git(settings.root, "rev-parse", "--git-dir") is None:
        return None, "not a git checkout"
    head = git(settings.root, "rev-parse", "HEAD")
    for rev, why in ((given, "given"), (os.environ.get("MUTATION_BASE"), "$MUTATION_BASE")):
        if rev:
            commit = git(settings.root, "rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}")
            if commit is None:
                raise SystemExit(f"mutation base {rev!r} ({why}) is not a commit of this checkout")
            return commit, f"{why} {rev}"
    recorded = settings.folder / "base"
    if recorded.exists():
        rev = recorded.read_text().strip()
        commit = git(settings.root, "rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}") if rev else None
        if commit and commit != head and subprocess.run(
                ["git", "-C", str(settings.root), "merge-base", "--is-ancestor", commit, "HEAD"],
                check=False).returncode == 0:
            return commit, f"the recorded base {rev[:12]} ({recorded.relative_to(settings.root)})"
        print(f"note: the recorded base {rev[:12] or '(empty)'} is not an earlier commit of HEAD; using HEAD's first "
              "parent", flush=True)
    parent = git(settings.root, "rev-parse", "--verify", "--quiet", "HEAD^1")
    if parent is None:
        return None, "HEAD has no parent in this checkout (a first commit or a shallow clone)"
    return parent, "HEAD's first parent"


def changed_lines(settings: Settings, base: str, paths: list[str]) -> dict[str, list[int]]:
    """The lines of each path that differ from ``base`` (the working tree's numbering): added or modified lines;
    a deletion marks nothing (there is no code left to mutate)."""
    text = git(settings.root, "diff", "--no-ext-diff", "--no-color", "-U0", base, "--", *paths) or ""
    out: dict[str, list[int]] = {}
    current = None
    for line in text.splitlines():
        if line.startswith("+++ "):
            current = line[6:] if line.startswith("+++ b/") else None
        elif line.startswith("@@") and current:
            m = re.match(r"@@ -\S+ \+(\d+)(?:,(\d+))? @@", line)
            if m:
                start, count = int(m.group(1)), int(m.group(2) or 1)
                out.setdefault(current, []).extend(range(start, start + count))
    return {p: sorted(set(v)) for p, v in out.items() if v}


def planned_mutants(settings: Settings, path: str, lines: list[int]) -> list[str]:
    """The names mutmut gives the mutants that start on ``lines`` of ``path`` (without running anything)."""
    from mutmut.mutation.file_mutation import mutate_file_contents
    from mutmut.utils.format_utils import get_mutant_name

    code = (settings.root / path).read_text()
    mutated = mutate_file_contents(path, code, set(lines))
    return [get_mutant_name(Path(path), name) for name in mutated.mutant_names]


def run_changed(settings: Settings, base_arg: str | None) -> int:
    started = time.monotonic()
    base, why = choose_base(settings, base_arg)
    if base is None:
        print(f"mutation of the changed lines: nothing to compare ({why}); set MUTATION_BASE=REV to choose a base")
        return 0
    print(f"mutation of the changed lines since {base[:12]} ({why})", flush=True)
    by_path = {t.path: t for t in settings.targets.values()}
    lines = changed_lines(settings, base, sorted(by_path))
    plan: dict[str, list[str]] = {}
    for path, changed in lines.items():
        names = [n for n in planned_mutants(settings, path, changed)
                 if any(t.owns(n) for t in settings.targets.values() if t.path == path)]
        if names:
            plan[path] = names
        print(f"  {path}: {len(changed)} changed line(s), {len(names)} mutant(s)", flush=True)
    total = sum(len(v) for v in plan.values())
    if not total:
        print("mutation of the changed lines: no mutant on a changed line of the target modules; nothing to run")
        return 0
    chosen = [n for names in plan.values() for n in names]
    skipped = 0
    if total > settings.changed_tests_budget:  # evenly spread: every stretch of the change keeps some mutants
        step = total / settings.changed_tests_budget
        keep = {chosen[int(i * step)] for i in range(settings.changed_tests_budget)}
        skipped = total - len(keep)
        chosen = [n for n in chosen if n in keep]
    tests = sorted({t for p in plan for target in settings.targets.values() if target.path == p
                    for t in target.tests})
    got = run_mutmut(settings, "changed", sorted(plan), tests, chosen,
                     lines={p: lines[p] for p in plan}, fresh=True)
    marks = equivalents(settings)
    live = {n: v for n, v in got["mutants"].items()
            if v["status"] in LIVE and not explained(n, v.get("diff", ""), marks)}
    counted = {s: sum(v["status"] == s for v in got["mutants"].values()) for s in ("killed", "timeout")}
    print(f"mutation of the changed lines: {len(got['mutants'])} mutants, {counted['killed']} killed, "
          f"{counted['timeout']} time-outs, {len(live)} survivor(s) unexplained"
          + (f"; {skipped} of {total} not run (more than {settings.changed_tests_budget}: `make mutants` runs them)"
             if skipped else "") + f" ({time.monotonic() - started:.0f} s)")
    for n, v in sorted(live.items()):
        print(f"\nsurvivor {n} ({v['status']}):\n{v['diff']}\n"
              "kill it with a test that states the property it breaks, or, if no input can tell it from the code, add "
              f"to {settings.equivalent_file.relative_to(settings.root)}:\n{stub(n, v['diff'])}")
    return 1 if live else 0


def stub(name: str, diff: str) -> str:
    """The ``equivalent.toml`` entry that would mark this mutant (its reason left to write)."""
    removed, added = diff_lines(diff)
    return (f"[[equivalent]]\nfunction = {json.dumps(function_of(name))}\nremoved = {json.dumps(removed)}\n"
            f"added = {json.dumps(added)}\nreason = \"...\"")


def show_unexplained(settings: Settings, names: list[str]) -> int:
    """Print every unexplained survivor of the last runs, its diff and the mark it would need if equivalent."""
    marks = equivalents(settings)
    count = 0
    for name in names or list(settings.targets):
        f = settings.folder / "results" / f"{name}.json"
        if not f.exists():
            continue
        for n, v in sorted(json.loads(f.read_text())["mutants"].items(), key=lambda kv: _order(kv[0])):
            if v["status"] in LIVE and not explained(n, v.get("diff", ""), marks):
                count += 1
                print(f"# {n} ({v['status']})\n{v.get('diff', '')}\n{stub(n, v.get('diff', ''))}\n")
    print(f"{count} unexplained survivor(s)")
    return 0


# ---------------------------------------------------------------- command line


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--root", type=Path, default=HERE.parent.parent, help="the checkout (default: this one)")
    parser.add_argument("--targets", type=Path, help="the targets file (default ROOT/benchmarks/mutation/targets.toml)")
    sub = parser.add_subparsers(dest="command", required=True)
    p_run = sub.add_parser("run", help="run modules in full, one at a time, and rewrite the report")
    p_run.add_argument("modules", nargs="*", help="module names of targets.toml (default: every one)")
    p_run.add_argument("--survivors", action="store_true", help="only the mutants the last run did not kill")
    p_run.add_argument("--functions", nargs="+", metavar="NAME",
                       help="with --survivors: also every mutant of these functions (changed since the run)")
    sub.add_parser("report", help="rewrite report.md from results/")
    p_show = sub.add_parser("unexplained", help="print the unexplained survivors, each with the mark it would need")
    p_show.add_argument("modules", nargs="*")
    p_changed = sub.add_parser("changed", help="mutate the lines changed since a base commit; exit 1 on a survivor")
    p_changed.add_argument("--base", help="the base commit (default: $MUTATION_BASE, the recorded base, HEAD^1)")
    p_child = sub.add_parser("_child")
    p_child.add_argument("spec")
    args = parser.parse_args(argv)
    if args.command == "_child":
        return mutmut_child(args.spec)
    settings = load(args.root.resolve(), args.targets.resolve() if args.targets else None)
    if args.command == "run":
        run_modules(settings, args.modules, args.survivors, args.functions)
    elif args.command == "report":
        print(write_report(settings))
    elif args.command == "unexplained":
        return show_unexplained(settings, args.modules)
    else:
        return run_changed(settings, args.base)
    return 0


if __name__ == "__main__":
    sys.exit(main())
