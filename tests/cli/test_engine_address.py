"""A Ray address that nothing answers at is refused while the run is planned, naming where it
was given, before anything is written.

Ray's own client retried such an address for minutes (more than six, printing a warning every
few seconds) and the run had already made the project's ledger. Real CLI; no cluster is
started: the check is a connection to the address itself.
"""

from __future__ import annotations

import socket
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import pytest
from tests.support import copy_example, free_port, http_server, oloproof

from oloproof.errors import ConfigError


@pytest.mark.parametrize("scheme", ["", "ray://"])
def test_a_dead_address_from_the_command_line_is_refused_at_once(
    tmp_path: Path, scheme: str
) -> None:
    root = copy_example("support_rag", tmp_path)
    address = f"{scheme}127.0.0.1:{free_port()}"
    done = oloproof("run", "--engine", address, cwd=root, timeout=60)
    assert done.code == 2 and done.out == "", done.err
    assert done.err.splitlines() == [
        f"error: --engine: cannot connect to Ray at {address}: nothing listens there "
        "(connection refused)"
    ]
    assert not (root / ".oloproof").exists()


def test_a_dead_address_in_the_config_names_its_line(tmp_path: Path) -> None:
    root = copy_example("support_rag", tmp_path)
    address = f"127.0.0.1:{free_port()}"
    config = root / "oloproof.yaml"
    config.write_text(config.read_text() + f"engine: {{kind: ray, address: '{address}'}}\n")
    line = len(config.read_text().splitlines())
    for args in (("run",), ("run", "--dry-run")):
        done = oloproof(*args, cwd=root, timeout=60)
        assert done.code == 2 and done.out == "", done.err
        assert done.err.splitlines() == [
            f"error: {config}, line {line}: cannot connect to Ray at {address}: nothing listens "
            "there (connection refused)"
        ], done.err
    assert not (root / ".oloproof").exists()


def test_diagnose_on_a_dead_address_is_refused_before_it_records(tmp_path: Path) -> None:
    root = copy_example("support_rag", tmp_path)
    assert oloproof("run", cwd=root).code == 3  # the example's gate blocks, on purpose
    before = oloproof("runs", cwd=root).out
    address = f"127.0.0.1:{free_port()}"
    diagnose = "diagnose latest --intervention gold-context --criterion answer_correct"
    done = oloproof(*diagnose.split(), "--engine", address, cwd=root, timeout=60)
    assert done.code == 2 and done.out == "", done.err
    assert done.err.splitlines() == [
        f"error: --engine: cannot connect to Ray at {address}: nothing listens there "
        "(connection refused)"
    ]
    assert oloproof("runs", cwd=root).out == before


@contextmanager
def listener(kind: str) -> Iterator[int]:
    """A port on 127.0.0.1 where something that is not Ray listens: a web server (it answers
    Ray's first bytes with an HTTP error page) or a socket that accepts and never answers."""
    if kind == "web":
        with http_server(_Quiet) as base:
            yield int(base.rpartition(":")[2])
        return
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen(8)  # the kernel completes connections that nobody then reads
        yield sock.getsockname()[1]


class _Quiet(BaseHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.mark.parametrize(
    ("kind", "why"),
    [
        ("web", "what listens there does not answer as Ray does (it is not a gRPC server)"),
        ("silent", "what listens there gave no answer within 5 s"),
    ],
)
@pytest.mark.parametrize("scheme", ["", "ray://"])
def test_an_address_where_something_else_listens_is_refused(
    tmp_path: Path, kind: str, why: str, scheme: str
) -> None:
    # Ray retried such an address for minutes as well: a listener passed the connection check.
    root = copy_example("support_rag", tmp_path)
    with listener(kind) as port:
        address = f"{scheme}127.0.0.1:{port}"
        done = oloproof("run", "--engine", address, cwd=root, timeout=60)
    assert done.code == 2 and done.out == "", done.err
    assert done.err.splitlines() == [f"error: --engine: cannot connect to Ray at {address}: {why}"]
    assert not (root / ".oloproof").exists()


def test_a_cluster_behind_tls_is_only_checked_for_a_listener(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Ray speaks TLS when RAY_USE_TLS is set, and the check does not: it cannot tell such a
    # cluster from any other listener, so it lets every listener through rather than refuse it.
    from oloproof.engines.ray import check_reachable

    monkeypatch.setenv("RAY_USE_TLS", "1")
    with listener("web") as port:
        check_reachable(f"127.0.0.1:{port}", "--engine")
    monkeypatch.setenv("RAY_USE_TLS", "0")
    with listener("web") as port, pytest.raises(ConfigError, match="not a gRPC server"):
        check_reachable(f"127.0.0.1:{port}", "--engine")
