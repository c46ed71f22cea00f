"""designer studio: the whole design in a local web app (Shiny for Python), for people who do not use a
command line.

``designer studio [FILE] [--port P] [--no-browser]`` serves it on 127.0.0.1 only; nothing leaves the machine
(Shiny serves its own scripts and styles). A guided path of five steps: the question, the budget, the survey,
the field and the answers (docs/studio.md). Every number comes from the library's front doors
(:func:`designer.design`, :func:`designer.plan`, :func:`designer.export`, :func:`designer.estimate`,
:func:`designer.randomize`), computed from one state per session (:mod:`designer.studio.session`).
"""

from __future__ import annotations

from typing import Any

__all__ = ["serve"]

HOST = "127.0.0.1"


class _WithIcon:
    """The app, answering the browser's request for ``/favicon.ico`` with the studio's icon (no 404)."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http" and scope.get("path") == "/favicon.ico":
            from .assets import FAVICON_SVG

            await send({"type": "http.response.start", "status": 200,
                        "headers": [(b"content-type", b"image/svg+xml"),
                                    (b"content-length", str(len(FAVICON_SVG)).encode()),
                                    (b"cache-control", b"max-age=86400")]})
            await send({"type": "http.response.body", "body": FAVICON_SVG})
            return
        await self.app(scope, receive, send)


def serve(file: str | None, *, port: int = 8000, open_browser: bool = True) -> None:
    """Serve the studio on ``127.0.0.1:port`` until interrupted, starting from ``file``.

    The server's log (standard error) holds the address and one line per internal error, with the id the page
    shows; never a traceback.

    Parameters
    ----------
    file : str, optional
        A problem (TOML) or mechanism file (JSON or CSV) to load at the start.
    port : int
        The local port; 0 picks a free one.
    open_browser : bool
        Open the system's browser at the address once the server listens.

    Raises
    ------
    CommandError
        A ``file`` that cannot be read, or a port that is taken (one line, exit status 2 from the command).

    Examples
    --------
    What it refuses before serving anything: a file that cannot be read, then a port another program listens on:

    >>> import socket
    >>> from designer.exceptions import CommandError
    >>> from designer.studio import serve
    >>> try:
    ...     serve("no-such-problem.toml", open_browser=False)
    ... except CommandError as err:
    ...     print(err)
    no-such-problem.toml: no such file
    >>> with socket.socket() as taken:
    ...     taken.bind(("127.0.0.1", 0))
    ...     taken.listen()
    ...     try:
    ...         serve(None, port=taken.getsockname()[1], open_browser=False)
    ...     except CommandError as err:
    ...         print(err)
    --port ...: cannot listen on 127.0.0.1:... (...); choose another port or --port 0 for a free one
    """
    import logging
    import socket
    import sys
    import threading
    import warnings
    import webbrowser

    import uvicorn

    from ..exceptions import CommandError, DesignerError
    from .app import make_app

    # render.download is the Core API's download handler; its deprecation note is for Shiny Express.
    warnings.filterwarnings("ignore", message=r"render\.download is deprecated")
    try:
        app = make_app(file)  # a bad FILE is refused before the port is looked at
    except DesignerError as exc:
        raise CommandError(" ".join(str(exc).split())) from None
    if port:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
            try:
                probe.bind((HOST, port))
            except OSError as exc:
                raise CommandError(f"--port {port}: cannot listen on {HOST}:{port} ({exc.strerror}); "
                                   "choose another port or --port 0 for a free one") from None
    _one_line_logs(logging)
    config = uvicorn.Config(_WithIcon(app), host=HOST, port=port, log_level="warning", ws="auto", log_config=None)
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


class _OneLine:
    """A log formatter that writes a record as one line with an id, and drops the traceback."""

    def format(self, record: Any) -> str:
        import secrets

        text = " ".join(record.getMessage().split())[:300]
        if record.exc_info and record.exc_info[1] is not None:
            exc = record.exc_info[1]
            text += f" ({type(exc).__name__}: {' '.join(str(exc).split())[:200]})"
        return f"designer studio: {record.levelname.lower()} {secrets.token_hex(3)} ({record.name}): {text}"


def _one_line_logs(logging: Any) -> None:
    """The server's loggers (uvicorn, Shiny, asyncio) write one line per record, never a traceback."""
    handler = logging.StreamHandler()
    handler.setFormatter(_OneLine())
    for name in ("uvicorn", "uvicorn.error", "uvicorn.access", "shiny", "asyncio", "starlette"):
        logger = logging.getLogger(name)
        logger.handlers[:] = [handler]
        logger.propagate = False
        logger.setLevel(logging.WARNING)
