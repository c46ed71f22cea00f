"""The studio's figures (matplotlib, drawn on the server and sent as images)."""

from __future__ import annotations

import math
from typing import Any

__all__ = ["curve_svg", "estimate_figure", "tradeoff_figure"]


def _figure() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    fig = Figure(figsize=(6, 3.2), layout="constrained")
    return fig, fig.add_subplot()


def curve_svg(points: list[tuple[float, float | None, float]], mark: tuple[float, float | None] | None,
              references: dict[str, list[float]], grid: list[float]) -> str:
    """Variance per respondent of the certified designs against epsilon (log scale), closed forms dashed,
    ``mark`` the current budget: an inline SVG, drawn in microseconds so that a slider move waits for no
    plotting library."""
    import html

    width, height, left, right, top, bottom = 640, 300, 62, 150, 12, 42
    series = [("certified design", [(e, v) for e, v, _ in points if v is not None and math.isfinite(v) and v > 0],
               "#1f4e79", "")]
    for (name, values), dash in zip(references.items(), ("6 4", "2 3", "8 3 2 3")):
        series.append((name, [(e, v) for e, v in zip(grid, values) if math.isfinite(v) and v > 0], "#777777", dash))
    values = [v for _, pts, _, _ in series for _, v in pts]
    if mark is not None and mark[1] is not None and math.isfinite(mark[1]) and mark[1] > 0:
        values.append(mark[1])
    xs = [e for _, pts, _, _ in series for e, _ in pts] + ([mark[0]] if mark else [])
    if not values or not xs:
        return '<p>No finite variance to draw at these budgets.</p>'
    lo, hi = math.floor(math.log10(min(values))), math.ceil(math.log10(max(values)))
    hi = hi if hi > lo else lo + 1
    x0, x1 = 0.0, max(xs) * 1.02

    def px(e: float) -> float:
        return left + (e - x0) / (x1 - x0) * (width - left - right)

    def py(v: float) -> float:
        return top + (hi - math.log10(v)) / (hi - lo) * (height - top - bottom)

    out = [f'<svg viewBox="0 0 {width} {height}" width="100%" role="img" aria-labelledby="curve_title" '
           f'xmlns="http://www.w3.org/2000/svg" style="max-width:{width}px;font-size:11px">',
           '<title id="curve_title">Variance per respondent of the certified design against the budget '
           '(log scale), closed forms dashed, the current budget marked</title>',
           f'<rect x="{left}" y="{top}" width="{width - left - right}" height="{height - top - bottom}" '
           'fill="none" stroke="#444"/>']
    for d in range(lo, hi + 1):
        y = py(10.0**d)
        out.append(f'<line x1="{left}" x2="{width - right}" y1="{y:.1f}" y2="{y:.1f}" stroke="#ddd"/>'
                   f'<text x="{left - 6}" y="{y + 4:.1f}" text-anchor="end">1e{d}</text>')
    for t in range(0, int(x1) + 1):
        x = px(t)
        out.append(f'<line x1="{x:.1f}" x2="{x:.1f}" y1="{top}" y2="{height - bottom}" stroke="#eee"/>'
                   f'<text x="{x:.1f}" y="{height - bottom + 16}" text-anchor="middle">{t}</text>')
    out.append(f'<text x="{(left + width - right) / 2:.0f}" y="{height - 6}" text-anchor="middle">budget epsilon '
               '(nats)</text>')
    out.append(f'<text transform="translate(14 {(top + height - bottom) / 2:.0f}) rotate(-90)" '
               'text-anchor="middle">variance per respondent</text>')
    for i, (name, pts, color, dash) in enumerate(series):
        if pts:
            path = " ".join(f"{px(e):.1f},{py(v):.1f}" for e, v in pts)
            out.append(f'<polyline points="{path}" fill="none" stroke="{color}" stroke-width="2" '
                       f'stroke-dasharray="{dash}"/>')
        y = top + 14 + 16 * i
        out.append(f'<line x1="{width - right + 8}" x2="{width - right + 30}" y1="{y - 4}" y2="{y - 4}" '
                   f'stroke="{color}" stroke-width="2" stroke-dasharray="{dash}"/>'
                   f'<text x="{width - right + 34}" y="{y}">{html.escape(name[:18])}</text>')
    if mark is not None and mark[1] is not None and math.isfinite(mark[1]) and mark[1] > 0:
        x, y = px(mark[0]), py(mark[1])
        out.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="6" fill="#c00000" id="curve_mark"/>'
                   f'<text x="{x + 9:.1f}" y="{y - 8:.1f}" fill="#c00000">eps = {mark[0]:g}</text>')
    out.append("</svg>")
    return "".join(out)


def tradeoff_figure(t: dict[str, Any]) -> Any:
    """The trade-off curve (type II against type I error) of ``designer tradeoff``'s JSON, with its bound."""
    fig, ax = _figure()
    ax.plot(t["alpha"], t["beta"], "-", color="#1f4e79", label="most powerful test")
    ax.plot(t["alpha"], t["bound"], "--", color="#c00000", label="bound of the budget")
    ax.set_xlabel("type I error alpha")
    ax.set_ylabel("type II error beta")
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    return fig


def estimate_figure(data: dict[str, Any]) -> Any:
    """The estimated shares with their intervals (``designer estimate``'s JSON)."""
    fig, ax = _figure()
    names = list(data["estimate"])
    est = [data["estimate"][x] for x in names]
    low = [data.get("ci_low", {}).get(x) for x in names]
    high = [data.get("ci_high", {}).get(x) for x in names]
    ys = range(len(names))
    ax.plot(est, list(ys), "o", color="#1f4e79", label="estimate")
    for y, lo, hi in zip(ys, low, high):
        if lo is not None and hi is not None:
            ax.plot([lo, hi], [y, y], "-", color="#1f4e79")
    ax.set_yticks(list(ys), names)
    ax.set_xlim(0, 1)
    ax.set_xlabel(f"share ({data.get('level', 0.95):g} interval)")
    ax.grid(True, axis="x", alpha=0.3)
    return fig
