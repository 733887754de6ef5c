"""`oloproof view` as a command: read-only, live while a run goes on, older ledgers, export."""

from __future__ import annotations

import hashlib
import re
import subprocess
import sys
import time
from pathlib import Path

from tests.support import copy_example, oloproof
from tests.view.support import RUN_ID, SupportProject, fetch, serving

from ledger import open_ledger
from oloproof import events as ev

SLOW_APP = """
import time
from pathlib import Path
from oloproof import system

@system(name="slow", version="1")
def run(case):
    if case["q"] == "wait":  # holds the run open until the test lets it go
        gate = Path(__file__).with_name("go")
        deadline = time.monotonic() + 120
        while not gate.exists() and time.monotonic() < deadline:
            time.sleep(0.01)
    return {"answer": case["q"]}
"""


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_browsing_never_writes_the_ledger(support_project: SupportProject) -> None:
    data = support_project.root / ".oloproof" / "ledger" / "data.mdb"
    before = (_digest(data), data.stat().st_mtime_ns)
    with serving(support_project.root) as url:
        for path in ("/", f"/runs/{support_project.run_id}", f"/a/{support_project.diagnosis}"):
            assert fetch(url + path)[0] == 200
    assert (_digest(data), data.stat().st_mtime_ns) == before


def _until(condition: object, what: str, limit: float = 90.0) -> None:
    """Poll ``condition`` (a callable) until it holds; fail naming ``what`` past ``limit``."""
    deadline = time.monotonic() + limit
    while not condition():  # type: ignore[operator]
        assert time.monotonic() < deadline, f"gave up waiting for {what}"
        time.sleep(0.05)


def test_a_run_in_progress_shows_on_reload_and_its_end_after(tmp_path: Path) -> None:
    root = tmp_path / "slow"
    root.mkdir()
    (root / "app.py").write_text(SLOW_APP)
    (root / "cases.jsonl").write_text(
        '{"id": "a", "input": {"q": "x"}, "expected": {"answer": "x"}}\n'
        '{"id": "b", "input": {"q": "wait"}, "expected": {"answer": "wait"}}\n'
    )
    (root / "oloproof.yaml").write_text(
        "system: {name: slow, version: '1', callable: 'app:run'}\ndataset: cases.jsonl\n"
        "evaluators:\n  - {type: contains, criterion: ok, field: answer, expected_field: answer}\n"
    )
    (root / "go").touch()
    assert oloproof("run", cwd=root).code == 0  # a first run, let through, makes the ledger
    (root / "go").unlink()
    with serving(root) as url:
        before = set(RUN_ID.findall(fetch(url + "/")[1]))
        proc = subprocess.Popen(
            [sys.executable, "-m", "oloproof", "run", "--no-cache"], cwd=root,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        try:
            _until(lambda: set(RUN_ID.findall(fetch(url + "/")[1])) - before, "the new run")
            (new,) = set(RUN_ID.findall(fetch(url + "/")[1])) - before
            assert "Another process is writing this run now" in fetch(f"{url}/runs/{new}")[1]
        finally:
            (root / "go").touch()
            _, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
        page = fetch(f"{url}/runs/{new}")[1]
        assert "Another process is writing" not in page and "COMPLETE" in page
        assert "2 answered · 0 missing" in page


def test_a_ledger_indexed_by_an_older_version_is_refiled_before_it_is_read(
    tmp_path: Path,
) -> None:
    root = copy_example("support_rag", tmp_path)
    run = oloproof("run", cwd=root)
    run_id = RUN_ID.findall(run.out)[0]
    new_names = {ev.FAILURES, ev.FAILURES_KIND, ev.FAILURES_CRITERION, ev.RUN_CASE, ev.LINKED_FROM}

    def old_indexer(address: str, event: ev.Event) -> object:
        return [e for e in ev.index_entries(address, event) if e[0] not in new_names]

    with open_ledger(root / ".oloproof", indexer=old_indexer) as ledger:  # type: ignore[arg-type]
        ledger.rebuild_indexes()  # the indexes an older version wrote, under no rules' name
    # Read-only, the viewer cannot refile them: it says so rather than show short lists.
    refused = oloproof("view", "--export", str(tmp_path / "site"), run_id, cwd=root)
    assert refused.code == 2 and not (tmp_path / "site").exists()
    assert "were filed by an older version of oloproof" in refused.err
    assert "`oloproof ledger rebuild-indexes` rebuilds them now" in refused.err
    # Any command that opens the ledger for writing refiles them (here `runs`).
    assert oloproof("runs", cwd=root).code == 0
    with serving(root) as url:
        page = fetch(f"{url}/runs/{run_id}/failures?criterion=hit_rate_at_2")[1]
        assert re.findall(rf'href="/runs/{run_id}/cases/([^"]+)"', page) == ["money_back"]
        case = fetch(f"{url}/runs/{run_id}/cases/money_back")
        assert case[0] == 200 and "I could not find that in the knowledge base." in case[1]
    assert oloproof("verify", cwd=root).code == 0


def test_export_writes_a_static_site_with_relative_links(
    support_project: SupportProject, tmp_path: Path
) -> None:
    p = support_project
    site = tmp_path / "site"
    done = oloproof("view", "--export", str(site), p.run_id, cwd=p.root)
    assert done.code == 0, done.err
    assert f"open {site / 'index.html'}" in done.out
    index = (site / "index.html").read_text()
    assert 'href="/' not in index and f'href="runs/{p.run_id}/index.html"' in index
    run_page = (site / "runs" / p.run_id / "index.html").read_text()
    assert "69.2%" in run_page and "[38.5%, 91.0%]" in run_page
    assert (site / "runs" / p.run_id / "cases" / "refund_review.html").exists()
    assert (site / "runs" / p.gold_run / "index.html").exists()  # child runs come along
    assert list((site / "diagnoses").glob("*.html"))
    assert list((site / "comparisons").glob("*/index.html"))  # both of its runs are exported
    # Every relative link of every page leads to a file of the export.
    for page in site.rglob("*.html"):
        for href in re.findall(r'href="([^"#?]+)"', page.read_text()):
            assert (page.parent / href).resolve().exists(), f"{page}: {href}"


def test_export_needs_runs_and_a_missing_run_is_one_sentence(
    support_project: SupportProject, tmp_path: Path
) -> None:
    none = oloproof("view", "--export", str(tmp_path / "s"), cwd=support_project.root)
    assert none.code == 2 and "--export needs at least one run" in none.err
    unknown = oloproof(
        "view", "--export", str(tmp_path / "s"), "run_nope", cwd=support_project.root
    )
    assert unknown.code == 2 and "Traceback" not in unknown.err and unknown.err.count("\n") == 1


def _tree(root: Path) -> dict[str, bytes | str]:
    """Every path under ``root``: a file's bytes, a link's target, or "folder"."""
    found: dict[str, bytes | str] = {}
    for path in sorted(root.rglob("*")):
        if path.is_symlink():
            found[str(path)] = f"-> {path.readlink()}"
        else:
            found[str(path)] = path.read_bytes() if path.is_file() else "folder"
    return found


def test_export_refuses_a_target_it_cannot_fill_before_writing_anything(
    support_project: SupportProject, tmp_path: Path
) -> None:
    p = support_project
    a_file = tmp_path / "notes.txt"
    a_file.write_text("mine\n")
    full = tmp_path / "full"
    full.mkdir()
    (full / "index.html").write_text("mine\n")  # an export would overwrite it
    dangling = tmp_path / "dangling"
    dangling.symlink_to(tmp_path / "nowhere")
    refused = {
        a_file: f"cannot export into {a_file}: it is a file, not a folder",
        a_file / "site": f"cannot export into {a_file / 'site'}: {a_file} is a file, not a folder",
        full: f"cannot export into {full}: it is not empty (an export goes into a new or "
        "empty folder, which then holds that export alone)",
        dangling: f"cannot export into {dangling}: it is a symbolic link to "
        f"{tmp_path / 'nowhere'}, which does not exist",
        Path("/proc/site"): "cannot create the folder /proc/site: No such file or directory",
    }
    before = _tree(tmp_path)
    for target, message in refused.items():
        result = oloproof("view", "--export", str(target), p.run_id, cwd=p.root)
        assert (result.code, result.err) == (2, f"error: {message}\n"), target
        assert _tree(tmp_path) == before
    assert not Path("/proc/site").exists()
    # An empty folder is a new one that is already there.
    empty = tmp_path / "empty"
    empty.mkdir()
    done = oloproof("view", "--export", str(empty), p.run_id, cwd=p.root)
    assert done.code == 0, done.err
    assert (empty / "index.html").exists() and (empty / "runs" / p.run_id / "index.html").exists()


def test_without_the_view_extra_one_sentence_names_it(support_project: SupportProject) -> None:
    code = (
        "import sys; sys.modules['jinja2'] = None; sys.argv = ['oloproof', 'view'];"
        "from oloproof.cli.main import main; main()"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=support_project.root, capture_output=True, text=True
    )
    assert result.returncode == 2
    assert result.stderr == (
        "error: the viewer needs the `view` extra, which is not installed: "
        "pip install 'oloproof[view]'\n"
    )
