"""A Ray address that nothing answers at is refused while the run is planned, naming where it
was given, before anything is written.

Ray's own client retried such an address for minutes (more than six, printing a warning every
few seconds) and the run had already made the project's ledger. Real CLI; no cluster is
started: the check is a connection to the address itself.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.support import copy_example, free_port, oloproof


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
