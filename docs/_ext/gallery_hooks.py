"""The gallery's hooks (named by string in conf.py, so Sphinx can cache the configuration).

The example scripts write PNG files and close their figures, so the matplotlib scraper would find none: each
script is given an output folder of its own (``reset_argv``) and ``png_scraper`` hands the gallery the PNG files
the script wrote there, in the order it wrote them.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

OUT = Path(__file__).resolve().parents[1] / "_build" / "gallery-output"


def reset_argv(gallery_conf: dict[str, Any], script_vars: dict[str, Any]) -> list[str]:
    """Point a script's output at a folder of its own: ``--out DIR`` where the script takes it, else ``--plot
    DIR/NAME.png`` where it draws only when asked (affairs.py); a script with neither runs without arguments (its
    open matplotlib figures are scraped as usual)."""
    source = Path(script_vars["src_file"])
    out = OUT / source.stem
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    text = source.read_text()
    # Relative to the folder the gallery runs the script in (its own): the page prints no absolute build path.
    shown = Path(os.path.relpath(out, source.parent))
    if '"--out"' in text:
        return ["--out", str(shown)]
    if '"--plot"' in text:
        return ["--plot", str(shown / f"{source.stem}.png")]
    return []


def png_scraper(block: Any, block_vars: dict[str, Any], gallery_conf: dict[str, Any]) -> str:
    from sphinx_gallery.scrapers import figure_rst

    out = OUT / Path(block_vars["src_file"]).stem
    pngs = sorted(out.glob("*.png"), key=lambda p: (p.stat().st_mtime, p.name)) if out.exists() else []
    names = []
    for png, target in zip(pngs, block_vars["image_path_iterator"]):
        shutil.copyfile(png, target)
        names.append(str(target))
    for png in pngs:  # each file once, even if a script had several code blocks
        png.unlink()
    return figure_rst(names, gallery_conf["src_dir"])
