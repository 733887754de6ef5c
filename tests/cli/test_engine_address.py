"""A Ray address given with ``--engine`` that no cluster answers is refused naming the option
it came from, not a line of oloproof.yaml that never mentioned it. Real CLI, real Ray client;
no cluster is started."""

from __future__ import annotations

import socket
from pathlib import Path

from tests.support import copy_example, oloproof


def _dead_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


def test_a_dead_address_from_the_command_line_names_the_option(tmp_path: Path) -> None:
    root = copy_example("support_rag", tmp_path)
    address = f"127.0.0.1:{_dead_port()}"
    # Ray tries twenty times before it gives up on an address; once is enough here.
    done = oloproof(
        "run", "--engine", address, cwd=root, env={"RAY_NUM_REDIS_GET_RETRIES": "1"}, timeout=300
    )
    assert done.code == 2 and done.out == "", done.err
    # Ray's own client logs its retries on stderr first: the refusal is the last line.
    refusal = done.err.splitlines()[-1]
    assert refusal.startswith(f"error: --engine: cannot connect to Ray at {address}: "), done.err
    assert "oloproof.yaml" not in refusal
