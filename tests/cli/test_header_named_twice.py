"""An HTTP system's header given twice, in names that differ only in case (``Authorization``
and ``authorization``), is refused at its line, exit 2, before anything is sent or recorded,
through the real CLI.

YAML reads them as two keys, so each was taken: the request carried both values
(``Authorization: Bearer one`` and ``authorization: Bearer two``), and which of the two the
service used was its own choice, while the run recorded both as the system's settings.
"""

from __future__ import annotations

from pathlib import Path

from tests.support import echo_http_config, oloproof


def test_a_header_named_twice_in_two_cases_is_refused(tmp_path: Path) -> None:
    root = tmp_path / "p"
    root.mkdir()
    config = echo_http_config(
        "Authorization: Bearer one", "X-Tenant: a", "authorization: Bearer two"
    )
    (root / "oloproof.yaml").write_text(config.format(url="http://127.0.0.1:9/answer"))
    (root / "cases.jsonl").write_text(
        '{"id": "c1", "input": {"q": "x"}, "expected": {"answer": "x"}}\n'
    )
    result = oloproof("run", cwd=root)
    assert (result.code, result.out, result.err) == (
        2,
        "",
        f"error: {root}/oloproof.yaml, line 8: system.http.headers: 'authorization' is the "
        "header 'Authorization' again (HTTP header names ignore case), so both values would be "
        "sent and the server would choose one; give it once\n",
    )
    assert not (root / ".oloproof").exists()
