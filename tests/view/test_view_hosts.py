"""The viewer answers only requests addressed to it, so DNS rebinding cannot read the ledger.

A web page whose name its owner points at 127.0.0.1 (DNS rebinding) makes the browser send the
viewer requests under that page's name, and lets the page read the answers. Each request here
is sent byte for byte to the real server (`oloproof view`, a subprocess), naming the host it
wants in its Host header or in an absolute-form target.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from tests.view.support import SupportProject, raw, serving


def _port(url: str) -> int:
    port = urlsplit(url).port
    assert port is not None
    return port


def _no_ledger_data(p: SupportProject, body: str) -> None:
    assert len(body) < 300 and "<" not in body, body
    for secret in (p.run_id, p.gold_run, "refund", "support-rag", "sha256:"):
        assert secret not in body, body


def test_only_a_request_under_the_viewers_own_name_is_answered(
    support_project: SupportProject, support_url: str
) -> None:
    p = support_project
    port = _port(support_url)
    other_port = port + 1 if port < 65535 else port - 1
    hosts = [
        "evil.example.com",
        f"evil.example.com:{port}",
        f"127.0.0.1.evil.example.com:{port}",
        f"localhost.evil.example.com:{port}",
        f"localhost.:{port}",
        f"127.0.0.1:{other_port}",
        f"localhost:{other_port}",
        "127.0.0.1",  # no port: a client leaves it out only for port 80
        "localhost",
        f"127.0.0.2:{port}",  # loopback, but not the address served on
        f"[::1]:{port}",  # the server listens on IPv4 only
    ]
    paths = ["/", f"/runs/{p.run_id}", f"/runs/{p.run_id}/cases/refund_review", "/static/view.css"]
    for host in hosts:
        for path in paths:
            status, headers, body = raw(port, f"GET {path} HTTP/1.1", f"Host: {host}")
            assert status == 421, (host, path, status)
            assert headers["content-type"] == "text/plain; charset=utf-8"
            assert body.startswith("421 Misdirected Request: ") and f"127.0.0.1:{port}" in body
            _no_ledger_data(p, body)
        status, _, body = raw(port, "HEAD / HTTP/1.1", f"Host: {host}")
        assert (status, body) == (421, "")
    for method in ("POST", "PUT"):  # refused by name before by method
        status, _, body = raw(port, f"{method} / HTTP/1.1", "Host: evil.example.com")
        assert status == 421
        _no_ledger_data(p, body)
    # An absolute-form target names the host the request is for; its Host header is ignored.
    status, _, body = raw(
        port, f"GET http://evil.example.com:{port}/ HTTP/1.1", f"Host: 127.0.0.1:{port}"
    )
    assert status == 421
    _no_ledger_data(p, body)
    status, _, body = raw(
        port, f"GET https://127.0.0.1:{port}/ HTTP/1.1", f"Host: 127.0.0.1:{port}"
    )
    assert status == 421  # not this server: it speaks plain HTTP
    _no_ledger_data(p, body)
    # Under HTTP/1.0 as well: a Host header, when there is one, is checked.
    status, _, body = raw(port, "GET / HTTP/1.0", "Host: evil.example.com")
    assert status == 421
    _no_ledger_data(p, body)
    # Its own names are answered, in any case, and so is an absolute-form target naming one.
    for host in (f"127.0.0.1:{port}", f"localhost:{port}", f"LocalHost:{port}"):
        status, _, body = raw(port, f"GET /runs/{p.run_id} HTTP/1.1", f"Host: {host}")
        assert status == 200 and p.run_id in body, host
    status, _, body = raw(
        port, f"GET http://localhost:{port}/runs/{p.run_id} HTTP/1.1", "Host: evil.example.com"
    )
    assert status == 200 and p.run_id in body
    status, _, body = raw(port, f"GET http://127.0.0.1:{port} HTTP/1.1", "Host: evil.example.com")
    assert status == 200 and p.run_id in body  # no path: the runs page
    # HTTP/1.0 lets a client leave Host out; no browser does, so no web page can.
    status, _, body = raw(port, f"GET /runs/{p.run_id} HTTP/1.0")
    assert status == 200 and p.run_id in body


def test_a_missing_repeated_or_malformed_host_is_a_bad_request(
    support_project: SupportProject, support_url: str
) -> None:
    p = support_project
    port = _port(support_url)
    requests = [
        ["GET / HTTP/1.1"],  # HTTP/1.1 requires a Host header
        ["GET / HTTP/1.1", f"Host: 127.0.0.1:{port}", f"Host: 127.0.0.1:{port}"],
        ["GET / HTTP/1.1", f"Host: 127.0.0.1:{port}", "Host: evil.example.com"],
        ["GET / HTTP/1.1", "Host: "],
        ["GET / HTTP/1.1", f"Host: 127.0.0.1:{port}:1"],
        ["GET / HTTP/1.1", "Host: 127.0.0.1:"],
        ["GET / HTTP/1.1", "Host: 127.0.0.1:http"],
        ["GET / HTTP/1.1", "Host: 127.0.0.1:" + "0" * 5000 + str(port)],
        ["GET / HTTP/1.1", f"Host: [::1:{port}"],
        ["GET / HTTP/1.1", f"Host: user@127.0.0.1:{port}"],
        ["GET / HTTP/1.1", f"Host: 127.0.0.1/x:{port}"],
        [f"GET http://user@127.0.0.1:{port}/ HTTP/1.1", f"Host: 127.0.0.1:{port}"],
    ]
    for lines in requests:
        status, headers, body = raw(port, *lines)
        assert status == 400, (lines, status)
        assert headers["content-type"] == "text/plain; charset=utf-8"
        assert body.startswith("400 Bad Request: "), body
        _no_ledger_data(p, body)


def test_served_on_every_address_it_answers_to_addresses_not_to_names(
    support_project: SupportProject,
) -> None:
    p = support_project
    with serving(p.root, "--host", "0.0.0.0", "--allow-remote") as url:
        port = _port(url)
        # A name could be anyone's, pointed here; an IP address is the page's own origin.
        for host in (f"127.0.0.1:{port}", f"localhost:{port}", f"192.0.2.7:{port}"):
            status, _, body = raw(port, f"GET /runs/{p.run_id} HTTP/1.1", f"Host: {host}")
            assert status == 200 and p.run_id in body, host
        for host in (f"evil.example.com:{port}", f"127.0.0.1:{port + 1}"):
            status, _, body = raw(port, f"GET /runs/{p.run_id} HTTP/1.1", f"Host: {host}")
            assert status == 421, host
            _no_ledger_data(p, body)


def test_a_host_without_a_port_names_the_viewer_only_on_port_80() -> None:
    # Port 80 needs privileges a test should not have, so the rule is checked where it is made.
    from oloproof.view.server import Authority

    on_80 = Authority.of("127.0.0.1", "127.0.0.1", 80)
    assert on_80.judge("127.0.0.1") == on_80.judge("localhost:80") == "ours"
    assert on_80.judge("evil.example.com") == "other"
    on_8765 = Authority.of("localhost", "127.0.0.1", 8765)
    assert on_8765.judge("127.0.0.1") == on_8765.judge("localhost") == "other"
    assert on_8765.judge("127.0.0.1:8765") == on_8765.judge("localhost:8765") == "ours"
