"""The export command: a certified randomizer for the respondent's screen (docs/theory.md section 7.5)."""

from __future__ import annotations

import argparse

from ._common import add_format


def cmd_export(args: argparse.Namespace) -> str:
    from ..results import render
    from ..verbs.export_verb import export

    result = export(args.mechanism, to=args.to, out=args.out, question=args.question, lang=args.lang,
                    strings=args.strings, submit_url=args.submit_url, post_message=args.post_message,
                    semantics=args.semantics, allocation=args.allocation, force=args.force, device=args.device,
                    denominator=args.denominator, show_device=args.show_device)
    return render(result, args.format)


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
