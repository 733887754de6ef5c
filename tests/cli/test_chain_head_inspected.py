"""A chain head that `verify` prints, given to `inspect`, is said to be one.

`verify`, `ledger import` and `ledger compact` print the chain's head written like an address
(``head sha256:…``). `oloproof inspect` of it said only ``no event with address … is stored``
and pointed at `oloproof runs`: nothing said what the printed address was or how to check it.
Now `inspect` of the current head says it is the chain head, not an event, and names the
command that checks it, which works as printed; any other full address no event has says how a
chain head is checked.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

from tests.support import oloproof, toy_project

HEAD = re.compile(r"head (sha256:[0-9a-f]{64})")


def test_the_printed_head_is_said_to_be_the_head(tmp_path: Path) -> None:
    root = toy_project(tmp_path / "p")
    assert oloproof("run", cwd=root).code == 3  # one case: too few to clear the floor
    verified = oloproof("verify", cwd=root)
    assert verified.code == 0, verified.err
    (head,) = HEAD.findall(verified.lines[0])
    commits = int(verified.lines[0].split()[1])

    shown = oloproof("inspect", head, cwd=root)
    assert shown.code == 2
    command = f"oloproof verify --head {head}"
    assert shown.err == (
        f"error: {head} is this ledger's chain head (commit {commits}), not an event: it "
        f"covers every event committed up to it; check it with: {command}\n"
    )
    checked = oloproof(*shlex.split(command)[1:], cwd=root)
    assert checked.code == 0, checked.out + checked.err
    assert f"head {head} is commit {commits} of {commits} of this history" in checked.lines


def test_an_unknown_full_address_says_how_a_head_is_checked(tmp_path: Path) -> None:
    root = toy_project(tmp_path / "p")
    assert oloproof("run", cwd=root).code == 3  # one case: too few to clear the floor
    unknown = "sha256:" + "ab" * 32
    shown = oloproof("inspect", unknown, cwd=root)
    assert shown.code == 2
    assert shown.err == (
        f"error: no event with address {unknown} is stored; a chain head (what verify, "
        "ledger import and ledger compact print) is no event: oloproof verify --head "
        f"{unknown} says whether it is one of this ledger's history; `oloproof runs` lists "
        "this project's runs\n"
    )
