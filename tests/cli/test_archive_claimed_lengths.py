"""An archive whose length or count field was damaged into a huge number is refused in one
sentence, exit 2, like any other damaged archive: reading it never asks for the memory the
field claims (a commit count of 2³² − 1 claims 128 GiB), which ended `ledger import` in a
MemoryError traceback and exit 1.

The import runs with its address space limited to 2 GiB, so that what the field claims cannot
be allocated on any machine, whatever its memory."""

from __future__ import annotations

import resource
import struct
import subprocess
import sys
from pathlib import Path

import cbor2
import pytest
from tests.support import answered_project, oloproof

APP = "def answer(case):\n    return {'answer': case['q']}\n"
MAGIC = b"\x89oloproof-archive\r\n\x1a\n"
_COMMIT_HEAD = 8 + 32 + 32  # number, previous head, head: then the u32 count


def _fields(data: bytes) -> dict[str, int]:
    """The offsets of the first event's length and the first commit's count in an archive."""
    at = len(MAGIC)
    (size,) = struct.unpack_from(">I", data, at)
    header = cbor2.loads(data[at + 4 : at + 4 + size])
    at += 4 + size
    first_event = at + 32
    for _ in range(header["events"]):
        (length,) = struct.unpack_from(">I", data, at + 32)
        at += 36 + length
    return {"event length": first_event, "commit count": at + _COMMIT_HEAD}


def _limited() -> None:
    limit = 2 << 30
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


@pytest.fixture(scope="module")
def archive(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    root = answered_project(tmp_path_factory.mktemp("source") / "p", APP)
    assert oloproof("run", cwd=root).code == 0
    done = oloproof("ledger", "export", "latest", "--to", "run.oloarchive", cwd=root)
    assert done.code == 0, done.err
    return (root / "run.oloarchive").read_bytes()


@pytest.mark.parametrize("field", ["event length", "commit count"])
def test_a_huge_claimed_length_is_a_truncated_archive(
    archive: bytes, field: str, tmp_path: Path
) -> None:
    damaged = bytearray(archive)
    struct.pack_into(">I", damaged, _fields(archive)[field], 0xFFFFFFFF)
    (tmp_path / "damaged.oloarchive").write_bytes(damaged)
    done = subprocess.run(
        [sys.executable, "-m", "oloproof", "ledger", "import", "damaged.oloarchive"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        preexec_fn=_limited,
    )
    assert (done.returncode, done.stdout, done.stderr) == (
        2,
        "",
        "error: the archive damaged.oloarchive is truncated\n",
    )
    assert not (tmp_path / ".oloproof").exists()


def test_the_sound_archive_imports_within_the_same_limit(archive: bytes, tmp_path: Path) -> None:
    (tmp_path / "run.oloarchive").write_bytes(archive)
    done = subprocess.run(
        [sys.executable, "-m", "oloproof", "ledger", "import", "run.oloarchive"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        preexec_fn=_limited,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("imported 93 new events from run.oloarchive")
