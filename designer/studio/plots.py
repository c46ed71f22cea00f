"""The studio's figures (matplotlib, drawn on the server and sent as images)."""

from __future__ import annotations

import math
from typing import Any

__all__ = ["curve_figure", "estimate_figure", "tradeoff_figure"]


def _figure() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    fig = Figure(figsize=(6, 3.2), layout="constrained")
    return fig, fig.add_subplot()


def curve_figure(points: list[tuple[float, float | None, float]], mark: tuple[float, float | None] | None,
                 references: dict[str, list[float]]) -> Any:
    """Variance per respondent of the certified designs against epsilon, closed forms dashed, ``mark`` the
    current budget."""
    fig, ax = _figure()
    finite = [(e, v) for e, v, _ in points if v is not None and math.isfinite(v)]
    if finite:
        ax.plot([e for e, _ in finite], [v for _, v in finite], "o-", color="#1f4e79", label="certified design")
    grid = [e for e, _, _ in points]
    for (name, values), style in zip(references.items(), ("--", ":", "-.")):
        pts = [(e, v) for e, v in zip(grid, values) if math.isfinite(v)]
        if pts and len(values) == len(grid):
            ax.plot([e for e, _ in pts], [v for _, v in pts], style, color="#777777", label=name)
    if mark is not None and mark[1] is not None and math.isfinite(mark[1]):
        ax.plot([mark[0]], [mark[1]], "D", color="#c00000", markersize=9, label=f"eps = {mark[0]:g}")
    ax.set_yscale("log")
    ax.set_xlabel("budget epsilon (nats)")
    ax.set_ylabel("variance per respondent")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    return fig


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
