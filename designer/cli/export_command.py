"""The export command: a certified randomizer for the respondent's screen (docs/theory.md section 7.5)."""

from __future__ import annotations

import argparse
from typing import Any

from .._render import render_csv, render_json
from ._common import CommandError, add_format, check_out


def cmd_export(args: argparse.Namespace) -> str:
    from .._io import atomic_writer
    from ..exports import export_html, export_js, export_platform, randomizer_for
    from .randomize_command import design_of

    check_out(args.out, [args.mechanism], args.force)
    mech, epsilon, _ = design_of(args.mechanism)
    try:
        randomizer = randomizer_for(mech, epsilon=epsilon, semantics=args.semantics, allocation=args.allocation)
    except ValueError as exc:
        raise CommandError(f"{args.mechanism}: {exc}") from None
    if args.to == "html":
        try:
            text = export_html(randomizer, question=args.question, submit_url=args.submit_url,
                               post_message=args.post_message)
        except ValueError as exc:
            raise CommandError(f"--submit-url: {exc}") from None
    elif args.to in ("qualtrics", "limesurvey"):
        text = export_platform(randomizer, args.to, question=args.question, mechanism=args.mechanism)
    else:
        text = export_js(randomizer)
    with atomic_writer(args.out, overwrite=args.force) as binary:
        binary.write(text.encode())
    table = randomizer.table
    summary: dict[str, Any] = {"out": args.out, "to": args.to, "sha256": table.sha256, "epsilon": table.epsilon,
                               "semantics": table.semantics.value, "inputs": list(table.inputs),
                               "answers": list(randomizer.answers), "bytes": len(text.encode())}
    if args.format == "json":
        return render_json(summary)
    if args.format == "csv":
        return render_csv(["out", "to", "sha256", "epsilon", "semantics", "inputs", "answers", "bytes"],
                          [[args.out, args.to, table.sha256, table.epsilon, table.semantics.value, len(table.inputs),
                            len(randomizer.answers), summary["bytes"]]])
    what = {"html": "a self-contained page", "js": "an ES module"}.get(args.to, f"{args.to} set-up text with "
                                                                            "the question's HTML and JavaScript,")
    return (f"wrote {args.out} ({summary['bytes']} bytes): {what} drawing exactly from a table over 2^32 "
            f"certified within eps = {table.epsilon:.6g} ({table.semantics.value}); SHA-256 {table.sha256}")


def _configure_export(p: argparse.ArgumentParser) -> None:
    p.add_argument("mechanism", help="mechanism CSV or JSON file, or a TOML problem (designed on the fly)")
    p.add_argument("--to", choices=("js", "html", "qualtrics", "limesurvey"), default="js",
                   help="js: an ES module with sample(input); html: a self-contained page for the respondent; "
                        "qualtrics, limesurvey: step-by-step set-up text with the question's HTML and JavaScript")
    p.add_argument("--question", default="Your answer", help="html: the question shown above the choices")
    p.add_argument("--submit-url", help="html: an https:// address the page may POST the report to (JSON "
                                        "{report, table}); default: no network at all")
    p.add_argument("--post-message", metavar="ORIGIN", help="html: the origin of an embedding survey page that "
                                                           "receives {designerReport, table} by postMessage")
    p.add_argument("--out", required=True, help="the file to write")
    p.add_argument("--semantics", choices=("sldp", "wldp"), default="sldp",
                   help="sldp: report focal sets; wldp: precise answers of the --allocation member")
    p.add_argument("--allocation", default="uniform", help="wldp: 'uniform' or lambda in [0, 1]")
    p.add_argument("--force", action="store_true", help="replace an existing --out")
    add_format(p)
