"""The viewer's HTTP server: the standard library's threading server, read-only.

Only GET and HEAD are answered, and only when a request is addressed to the viewer by a name
it serves on (``Authority``): otherwise a page elsewhere whose name its owner points at this
machine (DNS rebinding) could read the ledger through a browser. Each request renders its page
as it is read, and a page sends what it has as soon as it reaches a ``FLUSH`` mark, so the parts
of a large run's page that come from stored summaries arrive before the metrics its replay
yields.
"""

from __future__ import annotations

import ipaddress
import re
import threading
import traceback
from dataclasses import dataclass
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from typing import ClassVar, Literal
from urllib.parse import parse_qsl, urlsplit

from oloproof.redaction import redact_text
from oloproof.view import data, pages
from oloproof.view.links import Links

_CSS = "static/view.css"
# No script at all, no plugin, no <base> to re-point links, no form sent elsewhere, and no
# framing by another site's page (the viewer has a button or two to click: "derive it again").
_POLICY = (
    "default-src 'self'; script-src 'none'; object-src 'none'; base-uri 'none'; "
    "form-action 'self'; frame-ancestors 'none'"
)
# What a browser says of a request another site's page made (Fetch Metadata).
_ELSEWHERE = ("cross-site", "same-site")
_ELSEWHERE_SAID = (
    "another site's page asked the viewer to derive an event again; follow the link on the "
    "viewer's own page of the event instead"
)
_PORT = re.compile(r"[0-9]{1,5}")
_REG_NAME = re.compile(r"[A-Za-z0-9._~!$&'()*+,;=%-]+")  # RFC 3986 reg-name

Address = ipaddress.IPv4Address | ipaddress.IPv6Address


@dataclass(frozen=True)
class Authority:
    """Which ``host[:port]`` names the viewer, in a Host header or an absolute-form target.

    The host must be the address the server is bound to or the name it was given (``--host``),
    or ``localhost`` when that is a loopback address; the port must be the one it listens on. A
    client leaves the port out only for the scheme's default, so a bare host names the viewer
    only on port 80. Bound to every address (``0.0.0.0``), any IP address names it but no name
    other than ``localhost`` does: DNS rebinding needs a name its owner can point here, while a
    page loaded from an IP address has that address as its origin.
    """

    port: int
    names: frozenset[str]
    addresses: frozenset[Address]
    any_address: bool

    @classmethod
    def of(cls, host: str, bound: str, port: int) -> Authority:
        """Of a server given ``host`` that is bound to the address ``bound`` and ``port``."""
        names: set[str] = set()
        addresses: set[Address] = set()
        for text in (host, bound):
            try:
                addresses.add(ipaddress.ip_address(text.strip("[]")))
            except ValueError:
                names.add(text.lower())
        any_address = any(a.is_unspecified for a in addresses)
        if any_address or any(a.is_loopback for a in addresses):
            names.add("localhost")
        return cls(port, frozenset(names), frozenset(addresses), any_address)

    def judge(self, value: str) -> Literal["ours", "other", "invalid"]:
        """Whether ``value`` (a Host header's) names this server, another, or is no host."""
        split = _split_host(value.strip(" \t"))
        if split is None:
            return "invalid"
        host, port = split
        if port != self.port and not (port is None and self.port == 80):
            return "other"
        if isinstance(host, str):
            return "ours" if host.lower() in self.names else "other"
        return "ours" if self.any_address or host in self.addresses else "other"

    def describe(self) -> str:
        """The addresses it answers to, as a sentence's end."""
        if self.any_address:
            return f"any IP address of this machine or localhost, port {self.port}"
        shown = sorted(f"[{a}]" if a.version == 6 else str(a) for a in self.addresses)
        shown += sorted(self.names)
        return " or ".join(f"{h}:{self.port}" for h in shown)


def _split_host(value: str) -> tuple[str | Address, int | None] | None:
    """``host[:port]`` as (a name or an IP address, the port or None); None if it is neither."""
    host: str | Address
    if value.startswith("["):
        inside, bracket, rest = value[1:].partition("]")
        try:
            host = ipaddress.IPv6Address(inside)
        except ValueError:
            return None
        if not bracket:
            return None
    else:
        name, colon, port = value.partition(":")
        rest = colon + port
        if not _REG_NAME.fullmatch(name):
            return None
        try:
            host = ipaddress.IPv4Address(name)
        except ValueError:
            host = name
    if not rest:
        return host, None
    if rest[0] != ":" or not _PORT.fullmatch(rest[1:]):
        return None
    return host, int(rest[1:])


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

    def parse_request(self) -> bool:
        """The request line and headers are read: answer it only if it is addressed to us."""
        if not super().parse_request():
            return False
        refusal = self._misaddressed()
        if refusal is None:
            return True
        self.close_connection = True
        status, why = refusal
        text = f"{status.value} {status.phrase}: {why}\n".encode()
        self._head(status, "text/plain; charset=utf-8", len(text))
        if self.command != "HEAD":
            self.wfile.write(text)
        return False

    def _misaddressed(self) -> tuple[HTTPStatus, str] | None:
        """Why the request is not for this server (status, sentence), or None if it is.

        An absolute-form target names the host it is for, and its Host header is then ignored
        (RFC 9112, 3.2.2). Without either, an HTTP/1.0 request is answered: a browser always
        sends Host, so a page elsewhere cannot make one, and only a program that reaches the
        port itself can (on the loopback address: one of this machine's).
        """
        assert isinstance(self.server, ViewServer)
        authority = self.server.authority
        hosts = self.headers.get_all("Host") or []
        if len(hosts) > 1:
            return HTTPStatus.BAD_REQUEST, "more than one Host header"
        if self.path.startswith("/"):
            if not hosts:
                if self.request_version in ("HTTP/0.9", "HTTP/1.0"):
                    return None
                return HTTPStatus.BAD_REQUEST, "an HTTP/1.1 request needs a Host header"
            named = hosts[0]
        else:
            scheme, _, rest = self.path.partition("://")
            named = rest.split("/", 1)[0].split("?", 1)[0]
            if scheme.lower() != "http" and _split_host(named) is not None:
                return HTTPStatus.MISDIRECTED_REQUEST, (
                    f"the oloproof viewer serves plain http:// at {authority.describe()}"
                )
        verdict = authority.judge(named)
        if verdict == "invalid":
            return HTTPStatus.BAD_REQUEST, "the Host is not a host name or address and port"
        if verdict == "other":
            return HTTPStatus.MISDIRECTED_REQUEST, (
                f"the oloproof viewer answers only requests addressed to {authority.describe()}"
            )
        return None

    def _answer(self, *, body: bool) -> None:
        url = urlsplit(self.path)
        path = url.path or "/"  # an absolute-form target may have no path (RFC 9112, 3.2.2)
        if path == "/static/view.css":
            css = resources.files("oloproof.view").joinpath(_CSS).read_bytes()
            self._head(HTTPStatus.OK, "text/css; charset=utf-8", len(css))
            if body:
                self.wfile.write(css)
            return
        query = dict(parse_qsl(url.query))
        if "rederive" in query and self.headers.get("Sec-Fetch-Site") in _ELSEWHERE:
            # Deriving again only reads, but it can take a while: another site's page (an
            # <img> pointing here) must not be able to set this machine to work.
            self._error(HTTPStatus.FORBIDDEN, _ELSEWHERE_SAID, body=body)
            return
        try:
            stream = pages.render(self.reader, path, query, self.links)
            first = next(stream, "")  # build the page's data before the status line is sent
        except pages.NotFound as exc:
            self._error(HTTPStatus.NOT_FOUND, str(exc), body=body)
            return
        except Exception as exc:  # a damaged ledger, or a bug: an answer all the same
            traceback.print_exc()
            self._error(HTTPStatus.INTERNAL_SERVER_ERROR, pages.failure_text(exc), body=body)
            return
        self._head(HTTPStatus.OK, "text/html; charset=utf-8", None)
        if body:
            self._send(first, stream)

    def _error(self, status: HTTPStatus, message: str, *, body: bool) -> None:
        text = redact_text(pages.error_page(message, self.links, status.value)).encode()
        self._head(status, "text/html; charset=utf-8", len(text))
        if body:
            self.wfile.write(text)

    def _head(self, status: HTTPStatus, kind: str, length: int | None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Cache-Control", "no-store")  # a reload shows what the ledger holds now
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header("Content-Security-Policy", _POLICY)
        if length is not None:
            self.send_header("Content-Length", str(length))
        self.end_headers()

    def _send(self, first: str, stream: object) -> None:
        """The page, each part up to a ``FLUSH`` mark without the secrets the command keeps
        out (a run recorded before one was declared holds it)."""
        pending: list[str] = [first]
        for piece in stream:  # type: ignore[attr-defined]
            if pages.FLUSH in piece:
                before, _, after = piece.partition(pages.FLUSH)
                pending.append(before)
                self.wfile.write(redact_text("".join(pending)).encode())
                self.wfile.flush()
                pending = [after]
            else:
                pending.append(piece)
        self.wfile.write(redact_text("".join(pending)).encode())


class ViewServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, host: str, port: int, handler: type[BaseHTTPRequestHandler]) -> None:
        super().__init__((host, port), handler)
        bound, bound_port = self.server_address[:2]
        self.authority = Authority.of(host, str(bound), int(bound_port))


def make_server(reader: data.Reader, host: str, port: int) -> ViewServer:
    """A server of ``reader``'s ledger on ``host:port`` (port 0: any free one); not started.

    It begins compiling its templates and loading what reports need in the background, so
    that is done by the time a person has clicked.
    """
    handler = type("Handler", (_Handler,), {"reader": reader})
    server = ViewServer(host, port, handler)
    threading.Thread(target=pages.warm_up, name="oloproof-view-warm-up", daemon=True).start()
    return server


def serve_in_thread(server: ViewServer) -> threading.Thread:
    thread = threading.Thread(target=server.serve_forever, name="oloproof-view", daemon=True)
    thread.start()
    return thread
