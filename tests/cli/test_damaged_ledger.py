"""A damaged ``data.mdb`` gives one sentence, never a signal or a traceback.

A real project's ledger (the blackbox_rag example, run once) is copied and damaged the way a
disk or a careless copy damages files: cut short at several offsets, or with a 4 KiB page
overwritten with zeros. Then every read command and ``verify`` runs in a subprocess:

- a read command prints what it read (exit 0) or refuses with one ``error:`` sentence and
  exit 2, never dies by a signal, never prints a traceback;
- ``verify`` reports the damage as a problem (exit 1), or finds none when the zeroed page was
  one the ledger no longer uses, and then every read command reads normally.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from tests.ledger.raw import leaf_pages
from tests.support import Result, copy_example, oloproof

PAGE = 4096
READS = (("runs",), ("inspect", "latest"), ("inspect", "latest", "--case", "money_back"))


@pytest.fixture(scope="module")
def sound(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = copy_example("blackbox_rag", tmp_path_factory.mktemp("damage"))
    done = oloproof("run", cwd=root)
    assert done.code in (1, 3), done.err
    return root / ".oloproof"


def damaged_copy(sound: Path, tmp_path: Path) -> tuple[Path, Path]:
    root = tmp_path / "project"
    shutil.copytree(sound.parent, root, ignore=shutil.ignore_patterns("lock.mdb"))
    return root, root / ".oloproof" / "ledger" / "data.mdb"


def one_sentence(done: Result) -> str:
    assert done.code == 2, (done.code, done.out, done.err)
    assert "Traceback" not in done.err and "Assertion" not in done.err.replace("(Assertion", ""), (
        done.err
    )
    lines = done.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), done.err
    return lines[0]


def assert_never_a_signal(done: Result) -> None:
    assert done.code >= 0, f"killed by signal {-done.code}: {done.err}"
    assert "Traceback" not in done.err, done.err


def check_everything(root: Path) -> tuple[Result, list[Result]]:
    verify = oloproof("verify", cwd=root)
    assert_never_a_signal(verify)
    assert verify.code in (0, 1), (verify.code, verify.err)
    reads = [oloproof(*command, cwd=root) for command in READS]
    for done in reads:
        assert_never_a_signal(done)
        if done.code != 0:
            one_sentence(done)
    if verify.code == 0:
        assert all(done.code == 0 for done in reads), [d.err for d in reads]
    return verify, reads


@pytest.mark.parametrize("cut", [0, 100, 2 * PAGE, "half", "last page"])
def test_a_truncated_file_is_refused_with_its_size_and_the_size_it_needs(
    sound: Path, tmp_path: Path, cut: int | str
) -> None:
    root, data = damaged_copy(sound, tmp_path)
    full = data.stat().st_size
    size = {"half": full // 2 // PAGE * PAGE + 123, "last page": full - PAGE}.get(str(cut), cut)
    assert isinstance(size, int)
    os.truncate(data, size)

    for command in READS:
        line = one_sentence(oloproof(*command, cwd=root))
        assert f"the ledger file {data} is damaged" in line, line
        if size >= 2 * PAGE:
            assert f"it is {size:,} bytes long, but its last commit needs {full:,} bytes" in line
        else:
            assert "too short to hold LMDB's" in line or "not an LMDB meta page" in line, line
        assert "`oloproof verify` lists what is damaged" in line
    verify = oloproof("verify", cwd=root)
    assert verify.code == 1 and verify.err == "", (verify.code, verify.err)
    assert verify.lines[0].startswith(f"damaged store: the ledger file {data} is damaged")
    assert verify.lines[-1] == "checked 0 event(s) and 0 ref(s): 1 problem(s)"


def page_holding(data: Path, needle: bytes) -> int:
    where = data.read_bytes().find(needle)
    assert where >= 0
    return where // PAGE


def test_a_zeroed_page_the_tree_uses_is_damage_below_the_events(
    sound: Path, tmp_path: Path
) -> None:
    """The leaf page that holds a case's judgments: LMDB itself stops on it (SIGABRT,
    ``Assertion 'IS_LEAF(mp)' failed``); the commands say so in one sentence."""
    root, data = damaged_copy(sound, tmp_path)
    page = page_holding(data, b"oloproof.judgment")
    with open(data, "r+b") as f:
        f.seek(page * PAGE)
        f.write(bytes(PAGE))
    verify, reads = check_everything(root)
    assert verify.code == 1, verify.out
    assert verify.lines[0].startswith("damaged store: ") or verify.lines[0].startswith(
        "corrupt event "
    ), verify.out
    assert any(done.code == 2 for done in reads), [done.out for done in reads]


@pytest.mark.parametrize("where", [2, 3, "a third", "half", "last"])
def test_a_zeroed_page_anywhere_never_ends_in_a_signal(
    sound: Path, tmp_path: Path, where: int | str
) -> None:
    root, data = damaged_copy(sound, tmp_path)
    pages = data.stat().st_size // PAGE
    page = {"a third": pages // 3, "half": pages // 2, "last": pages - 1}.get(str(where), where)
    assert isinstance(page, int)
    with open(data, "r+b") as f:
        f.seek(page * PAGE)
        f.write(bytes(PAGE))
    verify, _ = check_everything(root)
    if verify.code == 1:
        assert verify.lines[-1].endswith("problem(s)"), verify.out


def test_the_two_meta_pages_zeroed(sound: Path, tmp_path: Path) -> None:
    root, data = damaged_copy(sound, tmp_path)
    with open(data, "r+b") as f:
        f.write(bytes(2 * PAGE))
    for command in READS:
        line = one_sentence(oloproof(*command, cwd=root))
        assert line.startswith(f"error: the ledger file {data} is damaged: its first header page")
    assert oloproof("verify", cwd=root).code == 1


def test_lmdb_stopping_on_a_page_is_one_sentence_too(sound: Path, tmp_path: Path) -> None:
    """Reading the whole events table across the zeroed leaf page makes LMDB abort the
    process (SIGABRT on ``Assertion 'IS_LEAF(mp)' failed``): the command runs in a child
    process, and the user sees one sentence and exit 2, not the signal. The second leaf of
    the events table is the page zeroed: a scan reaches it by moving on from the first, which
    is where LMDB asserts rather than reporting an error."""
    root, data = damaged_copy(sound, tmp_path)
    leaves = leaf_pages(data, b"events")
    assert len(leaves) >= 2, leaves
    page = leaves[1]
    with open(data, "r+b") as f:
        f.seek(page * PAGE)
        f.write(bytes(PAGE))
    done = oloproof("ledger", "export", "--all", "--to", str(tmp_path / "all.oloarchive"), cwd=root)
    line = one_sentence(done)
    assert line == (
        f"error: the ledger at {root / '.oloproof'} is damaged below its events: LMDB stopped "
        "with SIGABRT (Assertion 'IS_LEAF(mp)' failed in mdb_cursor_next()) "
        "(`oloproof verify` lists what is damaged)"
    )
    assert done.out == ""
    assert not (tmp_path / "all.oloarchive").exists()
    verify = oloproof("verify", cwd=root)
    assert verify.code == 1 and verify.err == "", (verify.code, verify.err)
    # verify finds the page before LMDB reads it: each page is accounted for with plain reads.
    assert verify.lines[0] == (
        f"damaged store: the store is damaged below its events: page {page} of the events "
        "table is damaged: its header names page 0"
    )
    assert verify.lines[-1] == "checked 0 event(s) and 0 ref(s): 1 problem(s)"
