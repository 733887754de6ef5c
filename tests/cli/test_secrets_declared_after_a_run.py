"""A secret declared after a run is kept out of what the read commands print and write.

A run keeps out the values it knows to be secrets as it stores them. One the project lists
under ``secrets:`` only later was stored as it was, and the read commands registered nothing:
``inspect`` printed it (in an output, an error and its traceback, a case id), and ``export``,
the viewer, ``compare``'s reports and ``ledger export`` wrote it out. They now keep out what a
run in their place would keep out; the ledger's events stay as they were (their addresses are
the hashes of their bytes), so ``ledger export`` refuses an event holding one rather than
archive it, and what the commands derive (a comparison, ``verify``) is unchanged.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.support import oloproof, stored_bytes, write_project
from tests.terminal import on_terminal
from tests.view.support import fetch, serving

SECRET = "svc-Q7x9-hidden"
ENV = {"SEARCH_SERVICE": SECRET}

APP = """
import os

from oloproof import system


@system(name="s", version="1")
def answer(case):
    if case["q"] == "boom":
        raise RuntimeError("could not reach " + os.environ["SEARCH_SERVICE"])
    said = " ".join(("via", os.environ["SEARCH_SERVICE"], case["q"], os.environ.get("MORE", "")))
    return {"answer": said.strip()}
"""

CONFIG = """
system: {name: s, version: "1", callable: app:answer}
dataset: cases.jsonl
policy: policy.yaml
evaluators:
  - {type: contains, criterion: answered, field: answer, expected_field: answer}
"""

CASES = [
    {"id": "plain", "input": {"q": "hello"}, "expected": {"answer": "hello"}},
    {"id": "boom", "input": {"q": "boom"}, "expected": {"answer": "x"}},
    {"id": f"named-{SECRET}", "input": {"q": "other"}, "expected": {"answer": "missing"}},
]


def _run_id(root: Path, more: str = "") -> str:
    # Not the baseline's executions again: the variable MORE is no part of the system's code
    done = oloproof("run", "--json", "--no-cache", cwd=root, env={**ENV, "MORE": more})
    assert done.code == 3, done.out + done.err  # one case errored: the gate cannot pass
    run_id: str = json.loads(done.out)["run_id"]
    return run_id


@pytest.fixture
def declared_late(tmp_path: Path) -> Iterator[tuple[Path, str, str]]:
    """A project with two runs made before ``secrets:`` named the variable (a baseline whose
    answers all say "missing", then a candidate whose do not: its case ``named-SECRET`` flips
    to failing), then the line that declares it."""
    root = write_project(
        tmp_path / "p",
        app=APP,
        config=CONFIG,
        policy="version: 1\nrules:\n  - {id: r, metric: answered, min: 0.5}\n",
        cases=CASES,
    )
    baseline, candidate = _run_id(root, more="missing"), _run_id(root)
    assert SECRET.encode() in stored_bytes(root)  # stored as it was: nothing declared it yet
    with (root / "oloproof.yaml").open("a") as config:
        config.write("secrets: [SEARCH_SERVICE]\n")
    yield root, baseline, candidate


def test_inspect_and_runs_print_it_redacted(declared_late: tuple[Path, str, str]) -> None:
    root, _, run_id = declared_late
    before = stored_bytes(root)
    shown = {
        "case": oloproof("inspect", run_id, "--case", "plain", cwd=root, env=ENV),
        "error": oloproof("inspect", run_id, "--case", "boom", cwd=root, env=ENV),
        "failures": oloproof("inspect", run_id, "--failures", cwd=root, env=ENV),
        "json": oloproof("inspect", run_id, "--case", "boom", "--json", cwd=root, env=ENV),
        "by id": oloproof("inspect", run_id, "--case", f"named-{SECRET}", cwd=root, env=ENV),
        "runs": oloproof("runs", cwd=root, env=ENV),
    }
    for name, done in shown.items():
        assert done.code == 0, (name, done.err)
        assert SECRET not in done.out + done.err, name
    assert "    answer: via [redacted] hello" in shown["case"].lines, shown["case"].out
    assert "  error: RuntimeError: could not reach [redacted]" in shown["error"].lines
    # The traceback under it too
    assert "    RuntimeError: could not reach [redacted]" in shown["error"].lines
    assert "  errored: RuntimeError: could not reach [redacted]" in shown["failures"].lines
    assert "named-[redacted]" in shown["failures"].lines
    assert shown["by id"].lines[0] == "case named-[redacted] (ok)", shown["by id"].out
    assert json.loads(shown["json"].out)["error"]["message"] == "could not reach [redacted]"
    assert stored_bytes(root) == before  # the events are as they were


def test_exports_write_it_redacted(declared_late: tuple[Path, str, str]) -> None:
    root, _, run_id = declared_late
    written: list[Path] = []
    for fmt in ("jsonl", "csv", "trec"):
        done = oloproof("export", run_id, "--format", fmt, "--output", fmt, cwd=root, env=ENV)
        assert done.code == 0, done.err
        written += sorted((root / fmt).iterdir())
    bundle = oloproof("export", run_id, cwd=root, env=ENV)
    assert bundle.code == 0, bundle.err
    written += sorted((root / ".oloproof" / "bundles" / run_id).iterdir())
    site = oloproof("view", "--export", "site", run_id, cwd=root, env=ENV)
    assert site.code == 0, site.err
    written += sorted(p for p in (root / "site").rglob("*") if p.is_file())
    for path in written:
        assert SECRET not in str(path.relative_to(root)), path  # no file is named by it
        assert SECRET.encode() not in path.read_bytes(), path
    cases = [json.loads(line) for line in (root / "jsonl" / "cases.jsonl").read_text().splitlines()]
    assert [c["case_id"] for c in cases] == ["plain", "boom", "named-[redacted]"]
    assert cases[1]["error_message"] == "could not reach [redacted]"
    bundled = (root / ".oloproof" / "bundles" / run_id / "cases.jsonl").read_text()
    assert '"answer": "via [redacted] hello"' in bundled, bundled


def test_the_viewer_serves_it_redacted(
    declared_late: tuple[Path, str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    root, _, run_id = declared_late
    monkeypatch.setenv("SEARCH_SERVICE", SECRET)
    with serving(root) as base:
        pages = [
            fetch(f"{base}/runs/{run_id}"),
            fetch(f"{base}/runs/{run_id}/failures"),
            fetch(f"{base}/runs/{run_id}/cases/boom"),
            fetch(f"{base}/runs/{run_id}/cases/plain"),
            fetch(f"{base}/runs/{run_id}/cases/nothing-{SECRET}"),  # a 404 naming it
        ]
    assert [status for status, _ in pages] == [200, 200, 200, 200, 404]
    for _, body in pages:
        assert SECRET not in body
    assert "could not reach [redacted]" in pages[2][1]
    assert "via [redacted] hello" in pages[3][1]


def test_compare_reports_it_redacted_and_derives_as_before(
    declared_late: tuple[Path, str, str],
) -> None:
    root, baseline, candidate = declared_late
    done = oloproof(
        "compare", candidate, baseline, "--cases", "--junit", "j.xml", "--summary", "s.md",
        cwd=root, env=ENV,
    )  # fmt: skip
    assert done.code == 0, done.out + done.err
    assert SECRET not in done.out + done.err
    assert "named-[redacted]" in done.out, done.out  # among the changed cases
    for name in ("j.xml", "s.md"):
        assert SECRET not in (root / name).read_text(), name
    # What the comparison recorded is what the runs' events give: verify derives it again,
    # with or without the variable set.
    for env in (ENV, {}):
        verified = oloproof("verify", cwd=root, env=env)
        assert verified.code == 0, verified.out
        assert SECRET not in verified.out + verified.err


def test_ledger_export_refuses_an_event_holding_it(
    declared_late: tuple[Path, str, str], tmp_path: Path
) -> None:
    root, _, run_id = declared_late
    archive = tmp_path / "run.oloarchive"
    refused = oloproof("ledger", "export", run_id, "--to", str(archive), cwd=root, env=ENV)
    assert refused.code == 2, refused.out + refused.err
    assert re.fullmatch(
        r"error: will not export sha256:[0-9a-f]{64}: it holds the value of a secret .*; "
        + re.escape(f"{archive} was not written. ")
        + r"Export without that variable set to archive the events as they were recorded\n",
        refused.err,
    ), refused.err
    assert not archive.exists()
    # Without the variable there is nothing to keep out: the events go as recorded.
    done = oloproof("ledger", "export", run_id, "--to", str(archive), cwd=root, env={})
    assert done.code == 0, done.err
    assert SECRET.encode() in archive.read_bytes()


def test_an_unreadable_secrets_list_is_refused(declared_late: tuple[Path, str, str]) -> None:
    root, _, run_id = declared_late
    config = root / "oloproof.yaml"
    config.write_text(config.read_text().replace("[SEARCH_SERVICE]", "[SEARCH_SERVICE, 'a b']"))
    done = oloproof("inspect", run_id, "--case", "plain", cwd=root, env=ENV)
    assert done.code == 2, done.out + done.err
    assert done.out == ""
    assert done.err.startswith(f"error: {config}, line 7: secrets.1: must be the name of"), done.err


@pytest.mark.parametrize("columns", [45, 50, 53])
def test_a_line_folded_on_a_terminal_never_splits_it(
    declared_late: tuple[Path, str, str], columns: int
) -> None:
    # On a terminal a long line folds at its width, after a "-" where it can: the stream that
    # redacts what is printed saw "svc-" and "Q7x9-hidden" on lines of their own.
    root, _, run_id = declared_late
    screen = on_terminal("inspect", run_id, "--failures", cwd=root, columns=columns, env=ENV)
    assert screen.code == 0, screen.plain
    assert "could not reach" in screen.plain
    assert not [line for line in screen.lines if "Q7x9" in line or "hidden" in line], screen.plain


@pytest.mark.parametrize("into", ["a new project", "a project with a ledger"])
def test_ledger_import_refuses_an_event_holding_it(
    declared_late: tuple[Path, str, str], tmp_path: Path, into: str
) -> None:
    # An archive made where the variable was not declared (or not set) holds its value; a
    # project that keeps it out took it into its ledger whole.
    root, _, run_id = declared_late
    archive = tmp_path / "run.oloarchive"
    made = oloproof("ledger", "export", run_id, "--to", str(archive), cwd=root, env={})
    assert made.code == 0, made.err
    other = write_project(
        tmp_path / "other",
        app=APP,
        config=CONFIG + "secrets: [SEARCH_SERVICE]\n",
        policy="version: 1\nrules:\n  - {id: r, metric: answered, min: 0.5}\n",
        cases=CASES[:1],
    )
    if into == "a project with a ledger":
        ran = oloproof("run", cwd=other, env=ENV)
        # One case, whose answer holds the secret: it errors (SecretInAnswer), BLOCK, exit 3.
        assert ran.code == 3 and "[DECIDED/PARTIAL]" in ran.out, ran.out + ran.err
    before = stored_bytes(other) if into == "a project with a ledger" else None
    refused = oloproof("ledger", "import", str(archive), cwd=other, env=ENV)
    assert refused.code == 2, refused.out + refused.err
    assert refused.out == ""
    assert re.fullmatch(
        r"error: will not import sha256:[0-9a-f]{64} from "
        + re.escape(str(archive))
        + r": it holds the value of a secret .*; nothing was imported\. Import without that "
        r"variable set to take the events as they were recorded\n",
        refused.err,
    ), refused.err
    assert SECRET not in refused.err
    if before is None:
        assert not (other / ".oloproof").exists()
    else:
        assert stored_bytes(other) == before
    # Without the variable there is nothing to keep out: the events come as recorded.
    done = oloproof("ledger", "import", str(archive), cwd=other, env={})
    assert done.code == 0, done.err
    assert SECRET.encode() in stored_bytes(other)
