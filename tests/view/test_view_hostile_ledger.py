"""The viewer over a ledger written by a hostile system and dataset, or damaged on disk.

Whoever controls the system under test or the cases file writes outputs, case ids, metadata and
error messages; whoever can write to the disk can damage the ledger. Neither may run script in
the developer's browser, read a configured secret back, hang the server or the browser, or drop
a request without an answer. Each check is made over HTTP against `oloproof view` (a subprocess).
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from urllib.parse import quote

import pytest
from tests.support import oloproof
from tests.view.support import RUN_ID, fetch, raw, serving

SECRET = "s3cr3t-T0KEN-value-42"
PAYLOAD = (
    "<script>document.title='owned'</script><img src=x onerror=\"document.title='img'\">"
    "'\"><svg onload=alert(1)>{{7*7}}\u2028</script>javascript:alert(1)"
)
HUGE = 10_000_000  # characters of one output
APP = f"""
import os
from oloproof import system

PAYLOAD = {PAYLOAD!r}

@system(name="hostile", version="1")
def run(case):
    q = case["q"]
    if q == "raise":
        raise RuntimeError("err " + PAYLOAD + " " + os.environ["HOSTILE_TOKEN"])
    if q == "huge":
        return {{"answer": "A" * {HUGE}}}
    if q == "damage":
        return {{"answer": "DAMAGE-ME-PLEASE"}}
    return {{"answer": q + " " + PAYLOAD + " token " + os.environ["HOSTILE_TOKEN"]}}
"""
CASE_IDS = {
    "script": "<script>document.title='id'</script>",
    "js": "javascript:alert(1)",
    "quote": "\"' onmouseover=alert(1) x=",
    "template": "{{7*7}}",
    "err": "err",
    "huge": "huge",
    "damage": "damage",
}
CONFIG = """system: {name: hostile, version: '1', callable: 'app:run'}
dataset: cases.jsonl
secrets: [HOSTILE_TOKEN]
evaluators:
  - {type: contains, criterion: answer_correct, field: answer, expected_field: answer}
slices: [metadata.topic]
min_slice_support: 1
policy: policy.yaml
"""
POLICY = """version: 1
confidence_level: 0.95
block_on: [FAIL, INSUFFICIENT_EVIDENCE, MANUAL_REVIEW]
rules:
  - {id: "<script>alert('rule')</script>", metric: answer_correct, min: 0.7}
"""


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    root = tmp_path_factory.mktemp("hostile-ledger") / "p"
    root.mkdir()
    (root / "app.py").write_text(APP)
    questions = {"err": "raise", "huge": "huge", "damage": "damage"}
    (root / "cases.jsonl").write_text(
        "".join(
            json.dumps(
                {
                    "id": case_id,
                    "input": {"q": questions.get(key, "x")},
                    "expected": {"answer": "nope"},
                    "metadata": {"topic": PAYLOAD if key == "script" else case_id},
                }
            )
            + "\n"
            for key, case_id in CASE_IDS.items()
        )
    )
    (root / "oloproof.yaml").write_text(CONFIG)
    (root / "policy.yaml").write_text(POLICY)
    run = oloproof("run", cwd=root, env={"HOSTILE_TOKEN": SECRET})
    assert run.code in (1, 3), run.err  # the gate blocks
    return root, RUN_ID.findall(run.out)[0]


def _pages(run_id: str, page: str) -> list[str]:
    """The pages of the run and of each case, and of every event the run page links to."""
    paths = ["/", f"/runs/{run_id}", f"/runs/{run_id}/failures"]
    paths += [f"/runs/{run_id}/cases/{quote(i, safe='')}" for i in CASE_IDS.values()]
    paths += [f"/a/{a}" for a in sorted(set(re.findall(r"sha256:[0-9a-f]{64}", page)))]
    return paths


def test_hostile_text_is_never_markup_and_a_secret_is_never_shown(
    hostile: tuple[Path, str],
) -> None:
    root, run_id = hostile
    with serving(root) as url:
        pages = _pages(run_id, fetch(f"{url}/runs/{run_id}")[1])
        for path in pages:
            status, page = fetch(url + path)
            assert status == 200, path
            assert SECRET not in page, path
            for markup in ("<script", "<img", 'onerror="', "<svg onload", 'href="javascript'):
                assert markup not in page, (path, markup)
            assert 'onmouseover=alert(1) x="' not in page  # no attribute broken out of
        template = fetch(f"{url}/runs/{run_id}/cases/{quote('{{7*7}}', safe='')}")[1]
        assert '<span class="id">{{7*7}}</span>' in template  # as written, not evaluated


def test_a_huge_output_is_cut_and_the_page_says_so(hostile: tuple[Path, str]) -> None:
    root, run_id = hostile
    with serving(root) as url:
        status, page = fetch(f"{url}/runs/{run_id}/cases/huge")
        assert status == 200
        assert len(page) < 1_000_000, len(page)
        assert "AAAA" in page and "more characters not shown" in page
        execution = re.findall(r'href="/a/(sha256:[0-9a-f]{64})"', page)
        for address in execution:
            status, event = fetch(f"{url}/a/{address}")
            assert status == 200 and len(event) < 1_000_000, (address, len(event))


def _damage(root: Path, text: bytes) -> None:
    """Change one byte of every stored copy of ``text`` in the ledger's file."""
    store = root / ".oloproof" / "ledger" / "data.mdb"
    stored = bytearray(store.read_bytes())
    at = stored.find(text)
    assert at != -1
    while at != -1:
        stored[at] ^= 0x20
        at = stored.find(text, at + 1)
    store.write_bytes(stored)


def test_a_damaged_event_is_an_error_page_naming_it_and_the_viewer_goes_on(
    hostile: tuple[Path, str], tmp_path: Path
) -> None:
    source, run_id = hostile
    root = tmp_path / "damaged"
    shutil.copytree(source, root)
    _damage(root, b"DAMAGE-ME-PLEASE")
    with serving(root) as url:
        port = int(url.rsplit(":", 1)[1])
        for path in (f"/runs/{run_id}/cases/damage", f"/runs/{run_id}/failures"):
            status, headers, page = raw(
                port, f"GET {path} HTTP/1.1", f"Host: 127.0.0.1:{port}", "Connection: close"
            )
            assert status == 500, (path, status)
            assert headers["content-security-policy"].startswith("default-src 'self'")
            assert "is corrupt" in page and "oloproof verify" in page, page
        assert fetch(f"{url}/runs/{run_id}/cases/err")[0] == 200  # the rest is still served


def test_no_page_runs_script_or_is_framed_by_another_site_served_or_exported(
    hostile: tuple[Path, str], tmp_path: Path
) -> None:
    root, run_id = hostile
    with serving(root) as url:
        port = int(url.rsplit(":", 1)[1])
        for path in ("/", f"/runs/{run_id}", "/nothing", "/static/view.css"):
            _, headers, _ = raw(port, f"GET {path} HTTP/1.1", f"Host: 127.0.0.1:{port}")
            policy = {
                d.strip().split(" ", 1)[0]: d.strip()
                for d in headers["content-security-policy"].split(";")
            }
            assert policy["script-src"] == "script-src 'none'", path
            assert policy["object-src"] == "object-src 'none'", path
            assert policy["base-uri"] == "base-uri 'none'", path
            assert policy["frame-ancestors"] == "frame-ancestors 'none'", path  # clickjacking
            assert "access-control-allow-origin" not in headers, path
    # Opened from disk, an exported page has no headers: it carries its policy itself.
    site = tmp_path / "site"
    assert oloproof("view", "--export", str(site), run_id, cwd=root).code == 0
    for page in (site / "index.html", next((site / "runs").glob("*/index.html"))):
        head = page.read_text().split("</head>")[0]
        assert re.search(
            r"<meta http-equiv=\"Content-Security-Policy\" content=\"[^\"]*script-src 'none'", head
        ), page
