"""The studio's plain words: the budget as odds, the certificate, the objectives, the glossary of the few
technical terms the page keeps (SLDP, WLDP, variance), and one name for each number the page shows.

Nothing here computes a design; the functions turn the library's results into sentences for people who do
not read the paper (no theorem numbers, no "Shafer loss", no "MLE" on the page).
"""

from __future__ import annotations

import html
import math
from typing import Any

__all__ = ["GLOSSARY", "NAMES", "OBJECTIVE_CHOICES", "SEMANTICS_WORDS", "certificate_words", "eps_words",
           "high_loss_warning", "objective_words", "odds_factor", "term", "with_terms"]

#: One name per number shown on the page (and in the report and the script's comments).
NAMES = {
    "mean_variance": "mean variance of the estimated shares, per respondent",
    "share_variance": "variance of this share's estimate, per respondent",
    "largest_variance": "largest variance of a share's estimate, per respondent",
    "truthful": "share of respondents who report exactly their true answer",
}

#: The glossary behind the page's tooltips: (term, what it means in plain words).
GLOSSARY = {
    "SLDP": "Set answers kept as given: a \"don't know\" or \"one of these\" answer is stored and analysed as it "
            "was given, and privacy compares the chances of giving each answer.",
    "WLDP": "Set answers later made precise: someone (the respondent, an interviewer, a coding rule) turns a set "
            "answer into one precise answer before anyone analyses it; privacy must hold however that is done, "
            "which costs more of the budget.",
    "variance": "How much an estimated share would vary from survey to survey with one respondent; divide by "
                "the number of respondents for a survey's variance. Smaller is better; infinite means the share "
                "cannot be estimated from the answers at all.",
    "nats": "The unit of the privacy budget: a loss of epsilon nats means one answer changes the odds between two "
            "true answers by at most e to the power epsilon (1 nat: 2.72 times; 2 nats: 7.39 times).",
    "per respondent": "For a survey of one respondent: divide by the number of respondents for a survey's variance. "
                      "So the number can be above 1 although a share lies between 0 and 1.",
    "rational arithmetic": "Checked with exact fractions, not rounded decimals: the budget holds exactly, not just up "
                           "to rounding.",
    "mixed into the solver's answer": "The numerical solver's design missed the budget by a rounding error; designer "
                                      "blended in that share of a more private design so that the exact check passes.",
    "large-sample": "The normal approximation to the estimate: accurate when the survey has hundreds of respondents "
                    "or more, and every share is not too close to 0 or 1.",
    "one of": "A set answer: the randomizer reports \"one of: a, b\", which says only that the true answer is a or b. "
              "The respondent does not choose it; the page shows it in these words.",
    "budget": "The privacy budget epsilon (in nats): the larger it is, the more a respondent's answer may say "
              "about their true answer. At epsilon 1 an answer changes the odds between any two true answers by "
              "at most e^1 = 2.7 times.",
}

SEMANTICS_WORDS = {
    "sldp": "Set answers are kept as given (SLDP)",
    "wldp": "Set answers are later made precise by someone else (WLDP, stricter)",
    "both": "Private in either reading (SLDP and WLDP)",
}

#: The objectives the form offers, in the order shown: value -> what it favours, in words. ``variance`` and
#: ``max_variance`` are listed when the library knows them (:class:`designer.vocabulary.Objective`).
OBJECTIVE_CHOICES = ("variance", "max_variance", "chi2", "truthful", "gain", "worst_case_utility",
                     "best_case_utility")
_OBJECTIVE_SHORT = {
    "variance": "The most accurate shares on average (smallest mean variance)",
    "max_variance": "The most accurate least accurate share (smallest largest variance)",
    "chi2": "Most information in the answers, weighted by the expected shares",
    "truthful": "Most respondents report exactly their true answer",
    "gain": "Your own scoring table (from the problem file)",
    "worst_case_utility": "Worst-case utility (from the problem file's utility table)",
    "best_case_utility": "Best-case utility (from the problem file's utility table)",
}


def objective_words(value: str) -> str:
    """The objective in the form's words, followed by the library's own meaning of it
    (:attr:`designer.vocabulary.Objective.meaning`) where it has one, with the jargon replaced."""
    from ..vocabulary import Objective

    short = _OBJECTIVE_SHORT.get(value, value)
    try:
        meaning = Objective.parse(value).meaning
    except (ValueError, KeyError, AttributeError):
        return short
    return f"{short}: {_plain(meaning)}"


def _plain(text: str) -> str:
    """A library sentence without the terms the page avoids."""
    for word, plain in (("smaller MLE variance", "smaller variance"), ("MLE variance", "variance"),
                        ("the MLE", "the estimate"), ("MLE", "estimate"), ("chi-square information", "information"),
                        ("prior-weighted", "weighted by the expected shares")):
        text = text.replace(word, plain)
    return text


def odds_factor(eps: float) -> str:
    """``e^eps`` as the page writes a factor, rounded up (a bound stays a bound): three significant digits below
    100 (``1.06``, ``2.72``, ``7.39``), whole numbers up to a million (``149``), then powers of ten."""
    if eps > 700:
        return "more than 1e304"
    factor = math.exp(eps)
    if factor >= 1e6:
        power = math.floor(math.log10(factor))
        return f"{math.ceil(factor / 10.0**power * 100) / 100:g}e{power}"
    if factor >= 100:
        return f"{math.ceil(factor * (1 - 1e-12)):,}"
    scale = 10.0 ** (2 - math.floor(math.log10(factor)))
    return f"{math.ceil(factor * scale * (1 - 1e-12)) / scale:g}"


def eps_words(eps: float, semantics: str = "sldp") -> str:
    """The budget in plain words: how much one answer may change the odds between two true answers."""
    factor = odds_factor(eps)
    how = ("however a set answer is later made precise" if semantics == "wldp" else
           "whichever answer they give")
    return (f"A respondent's answer changes the odds between any two true answers by at most {factor}x "
            f"(e to the power {eps:g}), {how}.")


def high_loss_warning(eps: float) -> str:
    """The warning the command line gives above :data:`designer.release.randomize_run.HIGH_LOSS` nats
    (``designer randomize``), in the same words; empty at or below it."""
    from ..release.randomize_run import HIGH_LOSS

    if not eps > HIGH_LOSS:
        return ""
    return (f"This budget is above {HIGH_LOSS:g} nats: an answer may be {math.exp(min(eps, 700)):.3g} times likelier "
            "under one true answer than under another, so the randomization protects little.")


def certificate_words(certificate: Any) -> str:
    """What the certificate promises, in plain words (:class:`designer.certificate.Certificate`)."""
    from ..vocabulary import Loss

    read = {Loss.SHAFER: "with set answers kept as given (SLDP)",
            Loss.WALLEY: "with set answers later made precise (WLDP)"}
    how = " and ".join(read.get(loss, loss.value) for loss in certificate.losses)
    text = (f"Certified private within the budget {certificate.epsilon:g} {how}: checked exactly, in "
            f"{certificate.arithmetic}, before it is released.")
    if certificate.parts:
        text += f" The budget is the sum of {len(certificate.parts)} certified parts."
    if certificate.repaired:
        text += (f" To pass that check, {certificate.mix_weight:.2g} of a more private design was mixed into the "
                 "solver's answer.")
    return text


def with_terms(text: str, uid: str) -> str:
    """``text`` as HTML, each glossary term's first mention (nats, per respondent, rational arithmetic, ...) given
    its tooltip (:func:`term`); ``uid`` makes the tooltips' ids unique on the page."""
    out = html.escape(text)
    for i, word in enumerate(("nats", "per respondent", "rational arithmetic", "mixed into the solver's answer",
                              "large-sample", "one of")):
        shown = html.escape(word)
        at = out.find(shown)
        if at >= 0:
            out = out[:at] + term(word, f"{uid}-{i}") + out[at + len(shown):]
    return out


def term(word: str, uid: str, shown: str | None = None) -> str:
    """HTML of a glossary term with its tooltip: focusable (keyboard) and read by screen readers through
    ``aria-describedby``; ``uid`` makes the tooltip's id unique on the page."""
    tip = f"tip-{uid}"
    return (f'<span class="studio-term" tabindex="0" aria-describedby="{tip}">{html.escape(shown or word)}'
            f'<span class="studio-tip" role="tooltip" id="{tip}">{html.escape(GLOSSARY[word])}</span></span>')
