"""The export command: a certified randomizer for the respondent's screen (docs/theory.md section 7.5)."""

from __future__ import annotations

import argparse
from typing import Any

from .._internal.render import render_csv, render_json
from ._common import CommandError, add_format, check_out


def cmd_export(args: argparse.Namespace) -> str:
    from .._internal.io import atomic_writer
    from ..release.exports import device_view, export_html, export_js, randomizer_for
    from ..release.platforms import export_platform

    check_out(args.out, [args.mechanism], args.force)
    if args.show_device and (args.to != "html" or (args.device is None and args.denominator is None)):
        raise CommandError("--show-device is for --to html with --device (the page throws the device it was "
                           "designed on)")
    texts = _strings(args)
    mech, epsilon, problem, grid, exact = _design(args)
    words = _file_words(args.mechanism) if problem is None else None
    try:
        randomizer = randomizer_for(mech, epsilon=epsilon, semantics=args.semantics, allocation=args.allocation,
                                    problem=problem, exact=exact, words=words)
    except ValueError as exc:
        raise CommandError(f"{args.mechanism}: {exc}") from None
    if args.to == "html":
        try:
            view = device_view(grid) if args.show_device else None
        except ValueError as exc:
            raise CommandError(f"--show-device: {exc}") from None
        try:
            text = export_html(randomizer, question=args.question, submit_url=args.submit_url,
                               post_message=args.post_message, device=view, lang=args.lang, strings=texts)
        except ValueError as exc:
            raise CommandError(f"--submit-url: {exc}") from None
    elif args.to in ("qualtrics", "limesurvey"):
        text = export_platform(randomizer, args.to, question=args.question, mechanism=args.mechanism,
                               lang=args.lang, strings=texts)
    else:
        text = export_js(randomizer)
    with atomic_writer(args.out, overwrite=args.force) as binary:
        binary.write(text.encode())
    table = randomizer.table
    summary: dict[str, Any] = {"out": args.out, "to": args.to, "sha256": table.sha256, "epsilon": table.epsilon,
                               "semantics": table.semantics.value, "denominator": table.denominator,
                               "max_change": table.max_change, "inputs": list(table.inputs),
                               "answers": list(randomizer.answers), "bytes": len(text.encode())}
    if randomizer.objective is not None:
        name, designed, drawn = randomizer.objective
        summary.update(objective=name, objective_value=designed, table_objective_value=drawn)
    if args.format == "json":
        return render_json(summary)
    if args.format == "csv":
        return render_csv(["out", "to", "sha256", "epsilon", "semantics", "inputs", "answers", "bytes"],
                          [[args.out, args.to, table.sha256, table.epsilon, table.semantics.value, len(table.inputs),
                            len(randomizer.answers), summary["bytes"]]])
    what = {"html": "a self-contained page", "js": "an ES module"}.get(args.to, f"{args.to} set-up text with "
                                                                            "the question's HTML and JavaScript,")
    lines = [f"wrote {args.out} ({summary['bytes']} bytes): {what} drawing exactly from {table.arithmetic}, "
             f"certified within eps = {table.epsilon:.6g} ({table.semantics.value}); SHA-256 {table.sha256}"]
    if randomizer.objective is not None:
        name, designed, drawn = randomizer.objective
        change = abs(drawn - designed) / abs(designed) if designed else abs(drawn - designed)
        lines.append(f"objective {name}: {designed:.10g} designed, {drawn:.10g} as drawn (the table's cost: "
                     f"{100 * change:.2g}%)")
    lines.append(f"largest change of a probability by the table: {table.max_change:.3g}")
    return "\n".join(lines)


def _strings(args: argparse.Namespace) -> dict[str, str] | None:
    """The ``--strings`` file's texts (None without one); a bad file is one line naming it (exit 2)."""
    from ..devices.words import read_strings
    from ..exceptions import InvalidArgumentError

    if args.strings is None:
        return None
    if args.to == "js":
        raise CommandError("--strings: the ES module shows no text; give it with --to html, qualtrics or limesurvey")
    try:
        return read_strings(args.strings)
    except InvalidArgumentError as exc:
        raise CommandError(f"--strings {exc}") from None


def _file_words(path: str) -> dict[str, tuple[str, ...]] | None:
    """The ``answers`` words a JSON mechanism file keeps (the problem's ``[answers]``), None for CSV."""
    if not path.lower().endswith(".json"):
        return None
    from ..release.files import open_mechanism_file

    return dict(open_mechanism_file(path).words) or None


def _design(args: argparse.Namespace) -> tuple[Any, float | None, Any, Any, Any]:
    """The mechanism to export, the budget it is certified within (None: its own loss), the problem it was
    designed for (None for a mechanism file), the grid design (None without ``--device``) and an invariant
    design's exact table (None for others): a TOML problem is designed on the fly, on ``--device`` if given."""
    from .randomize_command import design_of

    if not args.mechanism.endswith(".toml"):
        if args.device is not None or args.denominator is not None:
            raise CommandError(f"--device designs a TOML problem on the device's grid; {args.mechanism} is a "
                               "mechanism file (design it with 'designer design PROBLEM --device ... --out FILE', "
                               "whose fractions the export keeps)")
        found = design_of(args.mechanism)
        return found.mechanism, found.epsilon, None, None, found.exact
    from ..optimal import design
    from ..optimal.problem_toml import load_problem

    problem = load_problem(args.mechanism)
    if args.device is None and args.denominator is None:
        result = design(problem)
        exact = None if result.exact_table is None else (result.exact_table.counts, result.exact_table.denominators)
        return result.mechanism, problem.epsilon, problem, None, exact
    from ..devices import grid_design, parse_device

    if args.device is not None and args.denominator is not None:
        raise CommandError("give --device or --denominator, not both (a device fixes its denominator)")
    grid = grid_design(problem, parse_device(args.device, args.denominator))
    return grid.mechanism, problem.epsilon, problem, grid, None


def _configure_export(p: argparse.ArgumentParser) -> None:
    p.add_argument("mechanism", help="mechanism CSV or JSON file, or a TOML problem (designed on the fly)")
    p.add_argument("--to", choices=("js", "html", "qualtrics", "limesurvey"), default="js",
                   help="js: an ES module with sample(input); html: a self-contained page for the respondent; "
                        "qualtrics, limesurvey: step-by-step set-up text with the question's HTML and JavaScript")
    p.add_argument("--question", default="Your answer", help="html: the question shown above the choices")
    p.add_argument("--lang", choices=("en", "fr", "de"), default="en",
                   help="html, qualtrics, limesurvey: the language of the respondent's fixed texts (the buttons, "
                        "the privacy sentence, 'I don't know'); default en")
    p.add_argument("--strings", metavar="FILE", help="html, qualtrics, limesurvey: a .json or .toml file of texts "
                                                     "replacing the fixed ones of --lang (keys as in "
                                                     "designer.devices.words.STRINGS, e.g. draw = \"Tirer\")")
    p.add_argument("--submit-url", help="html: an https:// address the page may POST the report to (JSON "
                                        "{report, table}); default: no network at all")
    p.add_argument("--post-message", metavar="ORIGIN", help="html: the origin of an embedding survey page that "
                                                           "receives {designerReport, table} by postMessage")
    p.add_argument("--out", required=True, help="the file to write")
    p.add_argument("--semantics", choices=("sldp", "wldp"), default="sldp",
                   help="sldp: report focal sets; wldp: precise answers of the --allocation member")
    p.add_argument("--allocation", default="uniform", help="wldp: 'uniform' or lambda in [0, 1]")
    p.add_argument("--force", action="store_true", help="replace an existing --out")
    p.add_argument("--device", help="with a TOML problem: design it on a device's grid (die, dice2, cards, "
                                    "coins:N, spinner:D) and draw with exactly its fractions")
    p.add_argument("--denominator", type=int, help="with a TOML problem: design it on a grid of D outcomes")
    p.add_argument("--show-device", action="store_true",
                   help="html with --device: the page throws the device and shows its outcome (which gives the "
                        "report by the printed card's rules) to the respondent; it is never sent")
    add_format(p)
