"""An archive holding a ref whose name no ledger can hold is refused in a sentence that names
the archive: the real CLI.

The probe: a run's archive whose header was rewritten (its checksum made again) so that its
ref is named `has space`, or `deadbeefdeadbeef` (a name that reads as an address prefix), and
imported. Each was refused, exit 2 and nothing written, but with the name check's sentence
alone (`error: 'has space' is not a valid ref name: use 1-200 letters, digits and _ . : @ + =
/ -`), which named no file: nothing said the archive was at fault. Now the sentence names it.
"""

from __future__ import annotations

import hashlib
import json
import struct
from pathlib import Path

import pytest
from tests.cli.test_import_of_forged_summaries import _project
from tests.support import oloproof

from ledger.codec import decode, encode

MAGIC = 21  # the length of the archive magic, before the header's u32 length


def _with_refs(archive: Path, refs: dict[str, str]) -> None:
    """``archive`` with its header's refs replaced and its checksum made again."""
    data = archive.read_bytes()
    (size,) = struct.unpack(">I", data[MAGIC : MAGIC + 4])
    header = decode(data[MAGIC + 4 : MAGIC + 4 + size])
    made = encode({**header, "refs": refs})
    body = data[:MAGIC] + struct.pack(">I", len(made)) + made + data[MAGIC + 4 + size : -32]
    archive.write_bytes(body + hashlib.sha256(body).digest())


@pytest.mark.parametrize(
    ("name", "why"),
    [
        ("has space", "is not a valid ref name: use 1-200 letters, digits and _ . : @ + = / -"),
        ("deadbeefdeadbeef", "cannot be a ref name: it reads as an address prefix"),
    ],
)
def test_a_malformed_ref_name_names_the_archive(tmp_path: Path, name: str, why: str) -> None:
    source = _project(tmp_path / "source")
    oloproof("run", cwd=source)
    (row,) = json.loads(oloproof("runs", "--json", cwd=source).out)
    archive = tmp_path / "run.oloarchive"
    assert oloproof("ledger", "export", row["run_id"], "--to", str(archive), cwd=source).code == 0
    with open(archive, "rb") as f:
        f.seek(MAGIC)
        (size,) = struct.unpack(">I", f.read(4))
        refs = decode(f.read(size))["refs"]
    _with_refs(archive, {name: refs[row["run_id"]]})

    here = _project(tmp_path / "here")
    imported = oloproof("ledger", "import", str(archive), cwd=here)
    assert (imported.code, imported.out) == (2, ""), imported
    assert imported.err == (
        f"error: the archive {archive} holds a ref no ledger can: {name!r} {why}\n"
    )
    assert not (here / ".oloproof" / "ledger").exists()
