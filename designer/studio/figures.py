"""The studio's tables and figures as HTML and inline SVG, drawn in microseconds on the server.

Each figure comes in two sizes, one for wide screens and one for phones (the page shows the one that fits, so
its text stays legible at 420 px), with its legend in HTML below it; each table scrolls sideways inside a
labelled region with a visible cue and a first column that stays in view.
"""

from __future__ import annotations

import html
import math
from typing import Any

from .._internal.render import fmt

__all__ = ["answer_labels", "curve_figure", "estimate_figure", "legend", "matrix_table", "scroll_table",
           "tradeoff_figure"]

BLUE, GREY, RED = "#1f4e79", "#595959", "#b00020"
#: (viewBox width, height, font size) of the two sizes: wide screens and phones.
SIZES = {"wide": (640, 300, 12), "narrow": (360, 300, 13)}


def answer_labels(mech: Any, released: Any = None) -> list[str]:
    """Each column of ``mech`` in the respondent's words ("I don't know", "one of: a, b")."""
    from ..devices import answer_words

    named: dict[frozenset[str], str] = {}
    result = getattr(released, "result", None)
    words = dict(getattr(getattr(result, "problem", None), "answers", ()) or ())
    loaded = getattr(released, "loaded", None)
    if loaded is not None:
        words = dict(loaded.words or {})
    for word, labels in reversed(list(words.items())):
        named[frozenset(labels)] = str(word)
    return [answer_words(tuple(s), tuple(mech.frame), named) for s in mech.focal_sets]


def scroll_table(table: str, label: str, uid: str) -> str:
    """``table`` inside a region that scrolls sideways: keyboard-focusable, labelled, with a cue the page shows
    while columns are out of view (``studio.js``)."""
    return (f'<div class="studio-scroll" role="region" tabindex="0" aria-label="{html.escape(label)}" '
            f'id="{uid}">{table}</div><p class="studio-scroll-cue" data-for="{uid}" hidden>Scroll the table sideways '
            "for more columns &#8594;</p>")


def matrix_table(mech: Any, released: Any, uid: str) -> str:
    """The mechanism as a table: a row per true answer, a column per answer (in words), the chances to 8
    significant digits as ``designer design`` prints them."""
    heads = "".join(f'<th scope="col">{html.escape(w)}</th>' for w in answer_labels(mech, released))
    rows = "".join(
        f'<tr><th scope="row">{html.escape(x)}</th>' + "".join(f"<td>{fmt(v, 8)}</td>" for v in row) + "</tr>"
        for x, row in zip(mech.inputs, mech.matrix))
    table = ('<table class="table table-sm studio-matrix"><caption>Chance of each reported answer (columns) for '
             'each true answer (rows)</caption><thead><tr><th scope="col">true answer</th>'
             f"{heads}</tr></thead><tbody>{rows}</tbody></table>")
    return scroll_table(table, "The design's chances", uid)


def legend(items: list[tuple[str, str, str]]) -> str:
    """An HTML legend: (name, colour, dash pattern) per line."""
    out = []
    for name, color, dash in items:
        swatch = (f'<svg width="28" height="10" aria-hidden="true" focusable="false"><line x1="1" x2="27" y1="5" '
                  f'y2="5" stroke="{color}" stroke-width="3" stroke-dasharray="{dash}"/></svg>')
        out.append(f"<li>{swatch} {html.escape(name)}</li>")
    return f'<ul class="studio-legend">{"".join(out)}</ul>'


def _both(draw: Any, title: str) -> str:
    """The figure in its two sizes; the page shows one of them."""
    return "".join(f'<div class="studio-fig studio-fig-{size}">{draw(size, title)}</div>' for size in SIZES)


def _svg_open(size: str, height: int, title: str, uid: str) -> list[str]:
    width, _, font = SIZES[size]
    return [f'<svg viewBox="0 0 {width} {height}" width="100%" role="img" aria-labelledby="{uid}-{size}" '
            f'xmlns="http://www.w3.org/2000/svg" style="max-width:{width * 1.25:.0f}px;font-size:{font}px">',
            f'<title id="{uid}-{size}">{html.escape(title)}</title>']


def curve_figure(points: list[tuple[float, float | None]], mark: tuple[float, float | None] | None,
                 references: dict[str, list[float]], grid: tuple[float, ...], name: str) -> str:
    """Mean variance per respondent of the question's designs against the budget (log scale), the textbook
    designs dashed, the current budget marked; with its legend."""
    dashes = ("6 4", "2 3", "8 3 2 3")
    series = [(name, [(e, v) for e, v in points if v is not None and math.isfinite(v) and v > 0], BLUE, "")]
    for (ref, values), dash in zip(references.items(), dashes):
        series.append((ref, [(e, v) for e, v in zip(grid, values) if math.isfinite(v) and v > 0], GREY, dash))
    here: tuple[float, float] | None = None
    if mark is not None and mark[1] is not None and math.isfinite(mark[1]) and mark[1] > 0:
        here = (mark[0], mark[1])
    values = [v for _, pts, _, _ in series for _, v in pts] + ([here[1]] if here else [])
    xs = [e for _, pts, _, _ in series for e, _ in pts] + ([mark[0]] if mark else [])
    if not values or not xs:
        return '<p class="studio-note">No finite variance to draw at these budgets.</p>'
    lo, hi = math.floor(math.log10(min(values))), math.ceil(math.log10(max(values)))
    hi = hi if hi > lo else lo + 1
    x1 = max(xs) * 1.02

    def draw(size: str, title: str) -> str:
        width, height, font = SIZES[size]
        left, right, top, bottom = 12 + 5 * font, 12, 12, 3 * font + 8

        def px(e: float) -> float:
            return left + e / x1 * (width - left - right)

        def py(v: float) -> float:
            return top + (hi - math.log10(v)) / (hi - lo) * (height - top - bottom)

        out = _svg_open(size, height, title, "curve")
        out.append(f'<rect x="{left}" y="{top}" width="{width - left - right}" height="{height - top - bottom}" '
                   'fill="none" stroke="#444"/>')
        step = max(1, math.ceil((hi - lo) / 6))
        for d in range(lo, hi + 1, step):
            y = py(10.0**d)
            out.append(f'<line x1="{left}" x2="{width - right}" y1="{y:.1f}" y2="{y:.1f}" stroke="#ddd"/>'
                       f'<text x="{left - 4}" y="{y + font / 3:.1f}" text-anchor="end">1e{d}</text>')
        for t in range(0, int(x1) + 1):
            x = px(t)
            out.append(f'<line x1="{x:.1f}" x2="{x:.1f}" y1="{top}" y2="{height - bottom}" stroke="#eee"/>'
                       f'<text x="{x:.1f}" y="{height - bottom + font + 4}" text-anchor="middle">{t}</text>')
        out.append(f'<text x="{(left + width - right) / 2:.0f}" y="{height - 4}" text-anchor="middle">budget epsilon '
                   "(nats)</text>")
        out.append(f'<text transform="translate({font + 2} {(top + height - bottom) / 2:.0f}) rotate(-90)" '
                   'text-anchor="middle">mean variance per respondent</text>')
        for _, pts, color, dash in series:
            if pts:
                path = " ".join(f"{px(e):.1f},{py(v):.1f}" for e, v in pts)
                out.append(f'<polyline points="{path}" fill="none" stroke="{color}" stroke-width="2.5" '
                           f'stroke-dasharray="{dash}"/>')
        if here is not None:
            x, y = px(here[0]), py(here[1])
            anchor = "end" if x > width * 0.7 else "start"
            dx = -9 if anchor == "end" else 9
            out.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="6" fill="{RED}" class="curve-mark"/>'
                       f'<text x="{x + dx:.1f}" y="{y - 8:.1f}" fill="{RED}" text-anchor="{anchor}">'
                       f"epsilon {here[0]:g}</text>")
        out.append("</svg>")
        return "".join(out)

    title = ("Mean variance of the estimated shares per respondent against the budget (log scale); textbook designs "
             "dashed; the current budget marked")
    items = [(n, c, d) for n, _, c, d in series] + ([(f"this budget ({here[0]:g})", RED, "1 0")] if here else [])
    return _both(draw, title) + legend(items)


def tradeoff_figure(t: Any) -> str:
    """The trade-off curve of :func:`designer.tradeoff` (type II against type I error of the most powerful test
    between two true answers) with the bound the budget guarantees."""
    rows = t.rows
    alpha = [r[0] for r in rows]
    beta = [r[1] for r in rows]
    bound = [r[3] for r in rows]

    def draw(size: str, title: str) -> str:
        width, _, font = SIZES[size]
        left, top, bottom = 5 * font, 10, 3 * font + 8
        side = min(width - left - 20, 260)
        height = top + side + bottom

        def p(a: float, b: float) -> str:
            return f"{left + a * side:.1f},{top + (1 - b) * side:.1f}"

        out = _svg_open(size, height, title, "tradeoff")
        out.append(f'<rect x="{left}" y="{top}" width="{side}" height="{side}" fill="none" stroke="#444"/>')
        for v in (0, 0.5, 1):
            out.append(f'<text x="{left + v * side:.1f}" y="{top + side + font + 4}" text-anchor="middle">{v:g}'
                       f'</text><text x="{left - 4}" y="{top + (1 - v) * side + font / 3:.1f}" '
                       f'text-anchor="end">{v:g}</text>')
        out.append(f'<text x="{left + side / 2:.0f}" y="{height - 4}" text-anchor="middle">chance of a false alarm'
                   "</text>")
        out.append(f'<text transform="translate({font + 2} {top + side / 2:.0f}) rotate(-90)" '
                   'text-anchor="middle">chance of missing</text>')
        out.append(f'<polyline points="{" ".join(p(a, b) for a, b in zip(alpha, beta))}" fill="none" '
                   f'stroke="{BLUE}" stroke-width="2.5"/>')
        out.append(f'<polyline points="{" ".join(p(a, b) for a, b in zip(alpha, bound))}" fill="none" '
                   f'stroke="{RED}" stroke-width="2" stroke-dasharray="6 4"/>')
        out.append("</svg>")
        return "".join(out)

    title = (f"Chance of missing against chance of a false alarm when telling {t.null} from {t.alt} by one answer, "
             "with the least the budget allows")
    return _both(draw, title) + legend([("the best possible test", BLUE, ""),
                                        ("the least the budget allows", RED, "6 4")])


def estimate_figure(rows: list[tuple[str, float | None, float | None, float | None]], level: float, *,
                    expected: list[float] | None = None, uid: str = "estimates") -> str:
    """The estimated shares (dots) with their intervals (lines), one row per true answer, on [0, 1]; with
    ``expected``, the shares the answers were simulated from (red ticks)."""
    def draw(size: str, title: str) -> str:
        width, _, font = SIZES[size]
        label = min(160, max(len(r[0]) for r in rows) * font * 0.62 + 12)
        left, right, top, row_h = label, 16, 8, font * 2.2
        height = int(top + row_h * len(rows) + 3 * font + 8)

        def px(v: float) -> float:
            return left + min(max(v, 0.0), 1.0) * (width - left - right)

        out = _svg_open(size, height, title, uid)
        for v in (0, 0.25, 0.5, 0.75, 1):
            x = px(v)
            out.append(f'<line x1="{x:.1f}" x2="{x:.1f}" y1="{top}" y2="{top + row_h * len(rows):.1f}" '
                       f'stroke="#ddd"/><text x="{x:.1f}" y="{top + row_h * len(rows) + font + 4:.1f}" '
                       f'text-anchor="middle">{v:g}</text>')
        for i, (name, est, low, high) in enumerate(rows):
            y = top + row_h * (i + 0.5)
            shown = name if len(name) <= 24 else name[:23] + "\u2026"
            out.append(f'<text x="{left - 8}" y="{y + font / 3:.1f}" text-anchor="end">{html.escape(shown)}</text>')
            if low is not None and high is not None:
                out.append(f'<line x1="{px(low):.1f}" x2="{px(high):.1f}" y1="{y:.1f}" y2="{y:.1f}" stroke="{BLUE}" '
                           'stroke-width="3"/>')
            if est is not None:
                out.append(f'<circle cx="{px(est):.1f}" cy="{y:.1f}" r="5" fill="{BLUE}"/>')
            if expected is not None:
                x = px(expected[i])
                out.append(f'<line x1="{x:.1f}" x2="{x:.1f}" y1="{y - font * 0.8:.1f}" y2="{y + font * 0.8:.1f}" '
                           f'stroke="{RED}" stroke-width="2"/>')
        out.append(f'<text x="{(left + width - right) / 2:.0f}" y="{height - 4}" text-anchor="middle">share</text>')
        out.append("</svg>")
        return "".join(out)

    title = f"Estimated share of each true answer (dots) with its {level * 100:g}% interval (lines)"
    if expected is not None:
        title += "; the shares the answers were simulated from (red ticks)"
    return _both(draw, title)
