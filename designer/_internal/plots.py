"""Every figure the package draws: PNG files written atomically (matplotlib, loaded on first use).

Each figure states its parameters in its title and keeps its legend off the data (outside the axes).
"""

from __future__ import annotations

import io
from typing import TYPE_CHECKING, Any

from .io import atomic_write_bytes

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["figure_png", "plot_sweep", "plot_tradeoff", "save_figure"]


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def figure_png(fig: Any, *, dpi: int = 120) -> bytes:
    """``fig`` rendered to PNG bytes (tight bounding box); the figure is closed."""
    plt = _pyplot()
    buf = io.BytesIO()
    try:
        fig.savefig(buf, format="png", dpi=dpi, bbox_inches="tight")
    finally:
        plt.close(fig)
    return buf.getvalue()


def save_figure(fig: Any, path: str, *, overwrite: bool = True) -> None:
    """Render ``fig`` to PNG and write it to ``path`` atomically; the figure is closed."""
    atomic_write_bytes(path, figure_png(fig), overwrite=overwrite)


def plot_sweep(df: pd.DataFrame, path: str, *, title: str = "", ylabel: str = "objective",
               overwrite: bool = True) -> None:
    """Draw a sweep's objective against epsilon, one curve per don't-know value, to a PNG.

    Parameters
    ----------
    df : pandas.DataFrame
        A :func:`~designer.optimal.sweep.sweep` table.
    path : str
        PNG file to write (replaced atomically only with ``overwrite``).
    """
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(7, 4.5))
    key = df["dont_know"].fillna(-1.0)
    for value in dict.fromkeys(key.tolist()):
        part = df[key == value]
        label = "don't know: problem's own" if value < 0 else f"don't know = {value:g}"
        ax.plot(part["epsilon"], part["objective_value"], marker=".", ms=4, lw=1.5, label=label)
    ax.set(xlabel="epsilon (nats)", ylabel=ylabel, title=title)
    ax.grid(alpha=0.3)
    ax.legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0)
    save_figure(fig, path, overwrite=overwrite)


def plot_tradeoff(df: pd.DataFrame, path: str, *, title: str, overwrite: bool = True) -> None:
    """Draw a trade-off curve (type II against type I error) and its bound to a PNG.

    Parameters
    ----------
    df : pandas.DataFrame
        Columns ``alpha``, ``beta`` and ``bound``.
    """
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(6.5, 5))
    ax.plot(df["alpha"], df["beta"], label="curve of the mechanism", lw=2)
    ax.plot(df["alpha"], df["bound"], "--", label="bound from its epsilon")
    ax.plot([0, 1], [1, 0], ":", color="grey", lw=1, label="no information")
    ax.set(xlabel="type I error alpha", ylabel="type II error beta", xlim=(0, 1), ylim=(0, 1), title=title)
    ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0, fontsize="small")
    save_figure(fig, path, overwrite=overwrite)
