"""The viewer's HTTP server: the standard library's threading server, read-only.

Only GET and HEAD are answered. Each request renders its page as it is read, and a page sends
what it has as soon as it reaches a ``FLUSH`` mark, so the parts of a large run's page that come
from stored summaries arrive before the metrics its replay yields.
"""

from __future__ import annotations

import threading
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from typing import ClassVar
from urllib.parse import parse_qsl, urlsplit

from oloproof.view import data, pages
from oloproof.view.links import Links

_CSS = "static/view.css"


class _Handler(BaseHTTPRequestHandler):
    reader: ClassVar[data.Reader]
    server_version = "oloproof-view"
    links = Links()

    def log_message(self, format: str, *args: object) -> None:
        pass  # quiet: the terminal shows only the address to open

    def do_HEAD(self) -> None:
        self._answer(body=False)

    def do_GET(self) -> None:
        self._answer(body=True)

    def _refuse(self) -> None:
        self.send_error(HTTPStatus.METHOD_NOT_ALLOWED, "the viewer is read-only")

    do_POST = do_PUT = do_DELETE = do_PATCH = _refuse

    def _answer(self, *, body: bool) -> None:
        url = urlsplit(self.path)
        if url.path == "/static/view.css":
            css = resources.files("oloproof.view").joinpath(_CSS).read_bytes()
            self._head(HTTPStatus.OK, "text/css; charset=utf-8", len(css))
            if body:
                self.wfile.write(css)
            return
        query = dict(parse_qsl(url.query))
        try:
            stream = pages.render(self.reader, url.path, query, self.links)
            first = next(stream, "")  # build the page's data before the status line is sent
        except pages.NotFound as exc:
            text = pages.error_page(str(exc), self.links, 404).encode()
            self._head(HTTPStatus.NOT_FOUND, "text/html; charset=utf-8", len(text))
            if body:
                self.wfile.write(text)
            return
        self._head(HTTPStatus.OK, "text/html; charset=utf-8", None)
        if body:
            self._send(first, stream)

    def _head(self, status: HTTPStatus, kind: str, length: int | None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Cache-Control", "no-store")  # a reload shows what the ledger holds now
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header("Content-Security-Policy", "default-src 'self'; script-src 'none'")
        if length is not None:
            self.send_header("Content-Length", str(length))
        self.end_headers()

    def _send(self, first: str, stream: object) -> None:
        pending: list[str] = [first]
        for piece in stream:  # type: ignore[attr-defined]
            if pages.FLUSH in piece:
                before, _, after = piece.partition(pages.FLUSH)
                pending.append(before)
                self.wfile.write("".join(pending).encode())
                self.wfile.flush()
                pending = [after]
            else:
                pending.append(piece)
        self.wfile.write("".join(pending).encode())


class ViewServer(ThreadingHTTPServer):
    daemon_threads = True


def make_server(reader: data.Reader, host: str, port: int) -> ViewServer:
    """A server of ``reader``'s ledger on ``host:port`` (port 0: any free one); not started.

    It begins compiling its templates and loading what reports need in the background, so
    that is done by the time a person has clicked.
    """
    handler = type("Handler", (_Handler,), {"reader": reader})
    server = ViewServer((host, port), handler)
    threading.Thread(target=pages.warm_up, name="oloproof-view-warm-up", daemon=True).start()
    return server


def serve_in_thread(server: ViewServer) -> threading.Thread:
    thread = threading.Thread(target=server.serve_forever, name="oloproof-view", daemon=True)
    thread.start()
    return thread
