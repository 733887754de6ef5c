"""An unknown key in oloproof.yaml holding a character that does not show (a byte-order mark
inside ``slices``) is named escaped, with the key it looks like, at what holds it; exit 2. Real
CLI.

(Before: ``line 2: sli<U+FEFF>ces: unknown key; did you mean 'slices'?``, the mark printed as it
is, so the message read as refusing the very key it suggested.)
"""

from __future__ import annotations

from pathlib import Path

from tests.support import oloproof, toy_project


def test_a_byte_order_mark_inside_a_key_is_shown_escaped(tmp_path: Path) -> None:
    root = toy_project(tmp_path / "p")
    config = root / "oloproof.yaml"
    config.write_text('system: {name: toy, version: "1", callable: app:run}\nsli\ufeffces: []\n')
    done = oloproof("run", cwd=root)
    assert (done.code, done.out) == (2, ""), done.out + done.err
    assert done.err == (
        f"error: {config}, line 2: (top level): unknown key 'sli\\ufeffces' holds U+FEFF ZERO "
        "WIDTH NO-BREAK SPACE (character 4), which does not show where the key is printed (it "
        "looks like 'slices'); write the key without it\n"
    )
    assert not (root / ".oloproof").exists()
