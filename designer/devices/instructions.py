"""Instructions a respondent follows: which outcomes of the device give which answer, for each true answer.

For every input the device's outcomes are split among the answers with exactly the designed counts, in few
cases (two dice by their sum when the counts allow it, otherwise by red/blue ranges; cards by rank when the
counts are multiples of four), and :func:`verify` enumerates every outcome through the rule to check the
counts. Rendered as plain text, Markdown, or a printable HTML card per input.
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from ..exceptions import InvalidArgumentError
from .device import Device
from .words import plain_answer, privacy_sentence

__all__ = ["Rule", "answer_words", "make_rules", "render", "verify"]

#: Search budget of the two-dice "by sums" assignment (exact cover of the 11 sums).
_SUM_SEARCH_NODES = 200_000


@dataclass(frozen=True)
class Rule:
    """For one true answer: the outcome positions (0-based, in the device's order) of each answer column.

    Examples
    --------
    >>> from designer import devices
    >>> rule = devices.Rule("yes", ((0, 1, 2, 3), (4, 5)))  # on a die: 1-4 answer the first set, 5-6 the second
    >>> [len(outcomes) for outcomes in rule.outcomes]
    [4, 2]
    """

    input: str
    outcomes: tuple[tuple[int, ...], ...]


def answer_words(members: tuple[str, ...], frame: tuple[str, ...],
                 named: Mapping[frozenset[str], str] | None = None) -> str:
    """What the respondent says: the ``[answers]`` word of the set (``named``) where given, else the label, "I don't
    know" for the whole frame, or "one of: a, b" (:func:`designer.devices.words.plain_answer`).

    Examples
    --------
    >>> from designer import devices
    >>> devices.answer_words(("yes",), ("yes", "no")), devices.answer_words(("yes", "no"), ("yes", "no"))
    ('yes', "I don't know")
    """
    return plain_answer(members, frame, named=named)


def _by_sums(counts: NDArray[np.int64]) -> list[list[int]] | None:
    """Assign whole sums of two dice (sizes 1, 2, ..., 6, ..., 1) to the columns with exactly ``counts``."""
    sizes = {s: 6 - abs(s - 7) for s in range(2, 13)}
    order = sorted(sizes, key=lambda s: -sizes[s])
    left = [int(c) for c in counts]
    chosen: list[list[int]] = [[] for _ in counts]
    nodes = [0]

    def place(i: int) -> bool:
        nodes[0] += 1
        if nodes[0] > _SUM_SEARCH_NODES:
            return False
        if i == len(order):
            return all(v == 0 for v in left)
        s = order[i]
        for j in range(len(left)):
            if left[j] >= sizes[s]:
                left[j] -= sizes[s]
                chosen[j].append(s)
                if place(i + 1):
                    return True
                chosen[j].pop()
                left[j] += sizes[s]
        return False

    if not place(0):
        return None
    return [sorted(p for p in range(36) if p // 6 + p % 6 + 2 in sums) for sums in chosen]


def make_rules(device: Device, counts: NDArray[np.int64], inputs: tuple[str, ...]) -> list[Rule]:
    """One :class:`Rule` per input with exactly ``counts[x, j]`` outcomes for column ``j``.

    Examples
    --------
    >>> import designer
    >>> from designer import devices
    >>> spinner = devices.parse_device("spinner:10")
    >>> problem = designer.DesignProblem(inputs=("yes", "no"), epsilon=1.0, dont_know=0.2, objective="truthful")
    >>> grid = devices.grid_design(problem, spinner)
    >>> rules = devices.make_rules(spinner, grid.counts, problem.inputs)
    >>> rules[0]  # a yes: sectors 1-6 answer {yes}, 7-8 {no}, 9-10 "I don't know" (0-based positions)
    Rule(input='yes', outcomes=((0, 1, 2, 3, 4, 5), (6, 7), (8, 9)))
    """
    rules = []
    for x, row in zip(inputs, counts):
        groups: list[list[int]] | None = None
        if device.kind == "dice2":
            groups = _by_sums(row)
        if groups is None and device.kind == "cards" and all(int(c) % 4 == 0 for c in row):
            ranks, groups = 0, []
            for c in row:  # whole ranks, any suit
                take = list(range(ranks, ranks + int(c) // 4))
                groups.append(sorted(s * 13 + r for r in take for s in range(4)))
                ranks += int(c) // 4
        if groups is None:
            start, groups = 0, []
            for c in row:  # consecutive outcomes in the device's order
                groups.append(list(range(start, start + int(c))))
                start += int(c)
        rules.append(Rule(x, tuple(tuple(g) for g in groups)))
    return rules


def verify(device: Device, rules: list[Rule], counts: NDArray[np.int64]) -> bool:
    """Enumerate every outcome through each rule: each outcome gives one answer, with the designed counts.

    Examples
    --------
    >>> import designer
    >>> from designer import devices
    >>> spinner = devices.parse_device("spinner:10")
    >>> problem = designer.DesignProblem(inputs=("yes", "no"), epsilon=1.0, dont_know=0.2, objective="truthful")
    >>> grid = devices.grid_design(problem, spinner)
    >>> devices.verify(spinner, devices.make_rules(spinner, grid.counts, problem.inputs), grid.counts)
    True
    """
    for rule, row in zip(rules, counts):
        answer = np.full(device.denominator, -1)
        for j, group in enumerate(rule.outcomes):
            for p in group:
                if not 0 <= p < device.denominator or answer[p] != -1:
                    return False
                answer[p] = j
        if np.any(answer < 0) or not np.array_equal(np.bincount(answer, minlength=len(row)), row):
            return False
    return True


def _cases(device: Device, rule: Rule, columns: list[str]) -> list[tuple[str, str, int]]:
    return [(columns[j], device.describe(list(g)), len(g)) for j, g in enumerate(rule.outcomes) if g]


def render(device: Device, rules: list[Rule], focal_sets: list[tuple[str, ...]], frame: tuple[str, ...],
           fmt: str = "text", title: str = "", *, words: Mapping[str, Sequence[str]] | None = None,
           epsilon: float | None = None) -> str:
    """The instructions as ``text``, ``markdown`` or ``html`` (a printable card per true answer), every answer in
    the respondent's words (the ``[answers]`` ``words``, word -> frame labels, where given; "I don't know", "one
    of: a, b"), with the guarantee of ``epsilon`` as a sentence (:func:`designer.devices.words.privacy_sentence`)
    when given, never set notation or a budget in nats.

    Examples
    --------
    >>> import designer
    >>> from designer import devices
    >>> spinner = devices.parse_device("spinner:10")
    >>> problem = designer.DesignProblem(inputs=("yes", "no"), epsilon=1.0, dont_know=0.2, objective="truthful")
    >>> grid = devices.grid_design(problem, spinner)
    >>> rules = devices.make_rules(spinner, grid.counts, problem.inputs)
    >>> card = devices.render(spinner, rules, [("yes",), ("no",), ("yes", "no")], ("yes", "no"))
    >>> print("\\n".join(card.splitlines()[:6]))
    Spin the spinner (sectors 1 to 10) unseen.
    <BLANKLINE>
    If your true answer is 'yes':
      answer 'yes' if sector 1-6  (6 of 10)
      answer 'no' if sector 7-8  (2 of 10)
      answer "I don't know" if sector 9-10  (2 of 10)
    """
    named = {frozenset(labels): str(w) for w, labels in reversed(list((words or {}).items()))}
    columns = [answer_words(s, frame, named) for s in focal_sets]
    privacy = privacy_sentence(epsilon) if epsilon is not None else ""
    d = device.denominator
    if fmt == "text":
        lines = [title, device.how_to(), ""] if title else [device.how_to(), ""]
        for rule in rules:
            lines.append(f"If your true answer is {rule.input!r}:")
            lines += [f"  answer {a!r} if {w}  ({n} of {d})" for a, w, n in _cases(device, rule, columns)]
            lines.append("")
        if privacy:
            lines.append(privacy)
        return "\n".join(lines).rstrip() + "\n"
    if fmt == "markdown":
        lines = [f"# {title}" if title else "# Instructions", "", device.how_to(), ""]
        for rule in rules:
            lines += [f"## If your true answer is *{rule.input}*", "", "| answer | when | outcomes |",
                      "| --- | --- | ---: |"]
            lines += [f"| {a} | {w} | {n}/{d} |" for a, w, n in _cases(device, rule, columns)]
            lines.append("")
        if privacy:
            lines += [privacy, ""]
        return "\n".join(lines)
    if fmt != "html":
        raise InvalidArgumentError(f"format must be 'text', 'markdown' or 'html', got {fmt!r}")
    palette = ["#cfe8ff", "#ffd9c2", "#d7f2d0", "#efd6f7", "#fff2b3", "#d9dde3", "#c8f0ec", "#f7d4dc"]
    cards = []
    for rule in rules:
        rows = "".join(f'<tr><td style="background:{palette[columns.index(a) % len(palette)]}"><b>'
                       f"{html.escape(a)}</b></td><td>{html.escape(w)}</td><td class=n>{n}/{d}</td></tr>"
                       for a, w, n in _cases(device, rule, columns))
        grid = ""
        if device.kind == "dice2":
            answer = {p: j for j, g in enumerate(rule.outcomes) for p in g}
            cells = "".join(
                "<tr><th>red " + str(r + 1) + "</th>" + "".join(
                    f'<td style="background:{palette[answer[r * 6 + b] % len(palette)]}">'
                    f"{html.escape(columns[answer[r * 6 + b]][:12])}</td>" for b in range(6)) + "</tr>"
                for r in range(6))
            head = "<tr><th></th>" + "".join(f"<th>blue {b + 1}</th>" for b in range(6)) + "</tr>"
            grid = f'<table class="grid">{head}{cells}</table>'
        cards.append(f'<section class="card"><h2>If your true answer is <em>{html.escape(rule.input)}</em></h2>'
                     f"<p>{html.escape(device.how_to())}</p><table class=rules><tr><th>answer</th><th>when</th>"
                     f"<th>chance</th></tr>{rows}</table>{grid}"
                     '<p class="small">Keep the outcome to yourself; only your answer is recorded.'
                     f'{" " + html.escape(privacy) if privacy else ""}</p></section>')
    style = ("body{font-family:system-ui,sans-serif;margin:1.5em;color:#222}"
             ".card{border:2px solid #444;border-radius:10px;padding:1em 1.4em;margin:0 auto 1.5em;max-width:44em;"
             "page-break-after:always}h1{font-size:1.4em}h2{font-size:1.15em;margin-top:0}"
             "table{border-collapse:collapse;margin:.6em 0}td,th{border:1px solid #bbb;padding:.3em .6em;"
             "text-align:left}td.n{text-align:right}.grid td{text-align:center;font-size:.85em;min-width:4.2em}"
             ".small{font-size:.85em;color:#555}@media print{body{margin:0}.card{border-width:1px}}")
    return (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>{html.escape(title or "card")}'
            f"</title><style>{style}</style></head><body><h1>{html.escape(title)}</h1>{''.join(cards)}</body></html>\n")
