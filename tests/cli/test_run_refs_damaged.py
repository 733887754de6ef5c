"""A run id's ref names that run's event, or ``verify`` says so and nothing reads through it.

Two ways a ref goes wrong: one bit of its name flipped inside ``data.mdb`` (the ref now carries
another id, and the run's own id has no ref), and a ref pointed at another run's event (a
stray writer, a tampered archive). ``verify`` reports each as a ``MisnamedRef`` (exit 1), and
``inspect``/``export`` of the id the ref carries refuse in one sentence (exit 2) rather than
show the other run under that id.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from tests.support import Result, copy_example, oloproof

from ledger import open_ledger
from oloproof import events as ev


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = copy_example("support_rag", tmp_path_factory.mktemp("refs"))
    for _ in range(2):
        done = oloproof("run", cwd=root)
        assert done.code == 3, done.err  # the example's gate blocks
    return root


def _copy(two_runs: Path, tmp_path: Path) -> tuple[Path, list[tuple[str, str]]]:
    """A copy of the project; (run id, address) of its runs, oldest first."""
    root = tmp_path / "project"
    shutil.copytree(two_runs, root, ignore=shutil.ignore_patterns("lock.mdb"))
    with open_ledger(root / ".oloproof") as ledger:
        return root, [(e.body["run_id"], a) for a, e in ledger.events(ev.RUN)]


def _refused(done: Result, ref: str, said: str) -> None:
    assert done.code == 2, (done.code, done.out, done.err)
    assert done.err == (
        f"error: the ledger's ref {ref} {said} (`oloproof verify` lists what is damaged)\n"
    )


def _verify_names(root: Path, ref: str, address: str, said: str) -> None:
    done = oloproof("verify", cwd=root)
    assert done.code == 1, done.out + done.err
    assert done.lines[0] == f"MisnamedRef {ref} {address}: {said}"
    assert done.lines[-1].endswith(": 1 problem(s)")


def test_a_ref_pointed_at_another_runs_event(two_runs: Path, tmp_path: Path) -> None:
    root, ((first, _), (second, address)) = _copy(two_runs, tmp_path)
    with open_ledger(root / ".oloproof") as ledger:
        ledger.set_ref(first, address)
    said = f"names the run event of {second}, not of {first}"
    _verify_names(root, first, address, said)
    _refused(oloproof("inspect", first, cwd=root), first, said)
    out = tmp_path / "out"
    exported = oloproof("export", first, "--format", "jsonl", "--output", str(out), cwd=root)
    _refused(exported, first, said)
    assert not out.exists()


def test_a_bit_flipped_in_a_refs_name(two_runs: Path, tmp_path: Path) -> None:
    root, ((first, address), _) = _copy(two_runs, tmp_path)
    # The last character that one flipped bit leaves a letter or digit: a run id ending in "Z"
    # (one in 32) would end in "[", a name no ref may have, which verify reports as malformed.
    i = next(i for i in reversed(range(len(first))) if chr(ord(first[i]) ^ 1).isalnum())
    flipped = first[:i] + chr(ord(first[i]) ^ 1) + first[i + 1 :]
    data_file = root / ".oloproof" / "ledger" / "data.mdb"
    data = bytearray(data_file.read_bytes())
    node = first.encode() + bytes.fromhex(address.removeprefix("sha256:"))  # key, then value
    # Every copy: LMDB keeps the page an earlier commit replaced until it reuses it.
    at = data.find(node)
    assert at != -1
    while at != -1:
        data[at + i] ^= 1
        at = data.find(node, at + 1)
    data_file.write_bytes(bytes(data))
    said = f"names the run event of {first}, not of {flipped}"
    _verify_names(root, flipped, address, said)
    _refused(oloproof("inspect", flipped, cwd=root), flipped, said)
    shown = oloproof("inspect", first, cwd=root)  # the run itself is still found by its event
    assert shown.code == 0, shown.err
    assert shown.lines[0] == f"Run {first} [DECIDED/COMPLETE]"
