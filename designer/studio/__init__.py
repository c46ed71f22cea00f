"""designer studio: the whole design in a local web app (Shiny for Python), for people who do not use a
command line.

``designer studio [FILE] [--port P] [--no-browser]`` serves it on 127.0.0.1 only; nothing leaves the
machine (Shiny serves its own scripts and styles). The steps: the question, the budget, the survey, the
field and the answers (docs/studio.md). Every number comes from the library, computed as the CLI computes
it (:mod:`designer.studio.backend`, the studio's one door to the library).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable

__all__ = ["serve"]

HOST = "127.0.0.1"


def serve(file: str | None, *, parser: Callable[[], argparse.ArgumentParser], port: int = 8000,
          open_browser: bool = True) -> None:
    """Serve the studio on ``127.0.0.1:port`` until interrupted, starting from ``file``.

    Parameters
    ----------
    file : str, optional
        A problem (TOML) or mechanism file (JSON or CSV) to load at the start.
    port : int
        The local port; 0 picks a free one.
    parser : callable
        Builds the CLI's argument parser (``designer.cli.build_parser``); the studio runs the CLI's verbs with it.
    open_browser : bool
        Open the system's browser at the address once the server listens.
    """
    import socket
    import sys
    import threading
    import warnings
    import webbrowser

    import uvicorn

    from .app import make_app
    from .backend import StudioError

    # render.download is the Core API's download handler; its deprecation note is for Shiny Express.
    warnings.filterwarnings("ignore", message=r"render\.download is deprecated")
    warnings.filterwarnings("ignore", message=r".*layout engine is not compatible with shiny")
    app = make_app(file, parser)  # a bad FILE is refused before the port is looked at
    if port:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
            try:
                probe.bind((HOST, port))
            except OSError as exc:
                raise StudioError(f"--port {port}: cannot listen on {HOST}:{port} ({exc.strerror}); "
                                  "choose another port or --port 0 for a free one") from None
    config = uvicorn.Config(app, host=HOST, port=port, log_level="warning", ws="auto")
    server = uvicorn.Server(config)

    def announce() -> None:
        while not server.started:
            if server.should_exit:
                return
            threading.Event().wait(0.05)
        bound = port
        for s in server.servers:
            for sock in s.sockets:
                bound = sock.getsockname()[1]
        address = f"http://{HOST}:{bound}/"
        print(f"designer studio at {address} (Ctrl-C stops it)", file=sys.stderr, flush=True)
        if open_browser:
            webbrowser.open(address)

    threading.Thread(target=announce, daemon=True).start()
    server.run()
