"""Cache identities end to end: a cached result is reused only when the current code, settings
and inputs would produce it, and every count says where a result came from.

Each test copies a bundled example, runs the real CLI in a subprocess, edits a file the way a
user would, and runs again.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from tests.cli.test_run_blackbox import run_id_of
from tests.support import Result, oloproof

SUPPORT_FIRST = [
    "Cache: execution 0 hit/13 miss; judgment 0 hit/65 miss",
    "Stages: retrieve 0 hit/13 miss; generate 0 hit/13 miss",
]
GENERATE_RETURN = 'return {"answer": first_sentence(best.text or ""), "citations": [best.doc_id]}'


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text, f"{old!r} is not in {path}"
    path.write_text(text.replace(old, new), encoding="utf-8")


def cache_lines(result: Result) -> list[str]:
    return [line for line in result.lines if line.startswith(("Cache:", "Stages:"))]


def run(root: Path, *args: str) -> Result:
    result = oloproof("run", *args, cwd=root)
    assert result.code in (0, 1, 3), result.out + result.err
    assert "Traceback" not in result.err
    return result


def dry(root: Path, *args: str) -> list[str]:
    result = oloproof("run", "--dry-run", *args, cwd=root)
    assert result.code == 0, result.out + result.err
    return result.lines


def metric_rows(result: Result) -> list[str]:
    return [line for line in result.lines if line.startswith("│ ") and " observed " in line]


# --- staged systems: what each stage reads, and only that, re-runs it -------------------------


def test_editing_only_generate_reuses_every_retrieval(support: Path) -> None:
    assert cache_lines(run(support)) == SUPPORT_FIRST
    edit(
        support / "app.py",
        GENERATE_RETURN,
        GENERATE_RETURN.replace(
            'first_sentence(best.text or "")', 'first_sentence(best.text or "").strip()'
        ),
    )
    assert cache_lines(run(support)) == [
        "Cache: execution 0 hit/13 miss; judgment 0 hit/65 miss",
        "Stages: retrieve 13 hit/0 miss; generate 0 hit/13 miss",
    ]


def test_a_constant_retrieve_reads_runs_every_retrieval_again(support: Path) -> None:
    first = run(support)
    edit(support / "app.py", "MIN_SHARED_WORDS = 2", "MIN_SHARED_WORDS = 4")
    second = run(support)
    assert cache_lines(second)[0] == "Cache: execution 0 hit/13 miss; judgment 0 hit/65 miss"
    assert cache_lines(second)[1].startswith("Stages: retrieve 0 hit/13 miss; generate ")
    # Fewer passages share four words with a question: the metrics moved with the code.
    assert metric_rows(second) != metric_rows(first)


def test_editing_a_helper_retrieve_calls_runs_retrieval_again(support: Path) -> None:
    run(support)
    # The same words, found another way: every retrieval runs again, and as the passages it
    # returns are the same, every generation is found in the cache.
    edit(support / "app.py", "text.lower())", "text.casefold())")
    lines = dry(support)
    assert "  13 executions: code of words() in app.py changed" in lines, lines
    assert "  13 retrievals: code of words() in app.py changed" in lines, lines
    assert cache_lines(run(support)) == [
        "Cache: execution 0 hit/13 miss; judgment 0 hit/65 miss",
        "Stages: retrieve 0 hit/13 miss; generate 13 hit/0 miss",
    ]


def test_editing_a_helper_generate_calls_generates_again(support: Path) -> None:
    run(support)
    edit(support / "app.py", "maxsplit=1)[0]", "maxsplit=1)[0].strip()")
    lines = dry(support)
    assert "  13 executions: code of first_sentence() in app.py changed" in lines, lines
    assert not any("retrievals:" in line for line in lines), lines
    assert cache_lines(run(support)) == [
        "Cache: execution 0 hit/13 miss; judgment 0 hit/65 miss",
        "Stages: retrieve 13 hit/0 miss; generate 0 hit/13 miss",
    ]


def test_bumping_system_version_invalidates_both_stages(support: Path) -> None:
    run(support)
    edit(support / "oloproof.yaml", "  version: slice-b-example", "  version: slice-b-2")
    lines = dry(support)
    assert "  13 executions: system.version changed" in lines, lines
    assert "  13 retrievals: system.version changed" in lines, lines
    assert cache_lines(run(support)) == [
        "Cache: execution 0 hit/13 miss; judgment 0 hit/65 miss",
        "Stages: retrieve 0 hit/13 miss; generate 0 hit/13 miss",
    ]


def test_no_cache_runs_every_stage_of_a_staged_system(support: Path) -> None:
    run(support)
    again = run(support, "--no-cache")
    assert cache_lines(again)[1] == "Stages: retrieve 0 hit/13 miss; generate 0 hit/13 miss"
    assert cache_lines(again)[0].startswith("Cache: execution 0 hit/13 miss; ")
    plan = dry(support, "--no-cache")
    assert "Cases: 13 of 13 would execute; 0 reused from the execution cache" in plan
    assert "  13 executions: --no-cache was given" in plan, plan


def test_the_budget_experiment_still_reads_as_the_guide_says(support: Path) -> None:
    run(support)
    edit(support / "oloproof.yaml", "token_budget: 40", "token_budget: 120")
    lines = dry(support)
    assert "  13 executions: token_budget changed" in lines, lines
    assert not any("retrievals:" in line for line in lines), lines
    assert cache_lines(run(support)) == [
        "Cache: execution 0 hit/13 miss; judgment 0 hit/65 miss",
        "Stages: retrieve 13 hit/0 miss; generate 7 hit/6 miss",
    ]


# --- a callable and the modules it imports ---------------------------------------------------

HELPER = '''"""Text helpers of the support application."""

import re


def first_sentence(text: str) -> str:
    """The text up to and including its first full stop (or question or exclamation mark)."""
    return re.split(r"(?<=[.!?])\\s+", text.strip(), maxsplit=1)[0]
'''


@pytest.mark.parametrize("style", ["from helper import first_sentence", "import helper"])
def test_editing_a_second_module_executes_again(blackbox: Path, style: str) -> None:
    (blackbox / "helper.py").write_text(HELPER, encoding="utf-8")
    app = blackbox / "app.py"
    edit(app, "def first_sentence(", "def _unused_first_sentence(")
    edit(app, "import re\n", f"import re\n\n{style}\n")
    if style == "import helper":
        edit(app, "answer, cited = first_sentence(", "answer, cited = helper.first_sentence(")
    first = run(blackbox)
    assert "Cache: execution 0 hit/15 miss; judgment 0 hit/56 miss" in first.lines
    assert "Cache: execution 15 hit/0 miss; judgment 56 hit/0 miss" in run(blackbox).lines

    # The answer becomes the whole passage: a real change, in helper.py only.
    edit(blackbox / "helper.py", "maxsplit=1)[0]", "maxsplit=1)[-1]")
    second = run(blackbox)
    assert "Cache: execution 0 hit/15 miss; judgment 0 hit/56 miss" in second.lines
    assert metric_rows(second) != metric_rows(first)
    # What the edited code gives when nothing may be reused: the same report.
    assert metric_rows(run(blackbox, "--no-cache")) == metric_rows(second)


def test_a_constant_of_a_callable_is_part_of_its_identity(blackbox: Path) -> None:
    run(blackbox)
    edit(blackbox / "app.py", "PROMPT_WORD_BUDGET = 40", "PROMPT_WORD_BUDGET = 80")
    lines = dry(blackbox)
    assert "  15 executions: constant PROMPT_WORD_BUDGET in app.py changed" in lines, lines
    assert "Cache: execution 0 hit/15 miss; judgment 0 hit/56 miss" in run(blackbox).lines


def test_bumping_a_callables_version_is_explained(blackbox: Path) -> None:
    run(blackbox)
    edit(blackbox / "oloproof.yaml", "  version: tutorial", "  version: tutorial-2")
    lines = dry(blackbox)
    assert "Cases: 15 of 15 would execute; 0 reused from the execution cache" in lines
    assert "  15 executions: system.version changed" in lines, lines


# --- an HTTP endpoint is called on every run unless reuse is declared --------------------------


class Endpoint:
    """The example's server, in this process, counting the requests it answered."""

    def __init__(self, root: Path) -> None:
        import importlib.util

        spec = importlib.util.spec_from_file_location("blackbox_server", root / "server.py")
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        import sys

        # server.py imports its own `app`: an `app` another test of this process imported
        # (another example's) must not answer for it, and is put back afterwards.
        earlier = sys.modules.pop("app", None)
        sys.path.insert(0, str(root))
        try:
            spec.loader.exec_module(module)
        finally:
            sys.path.remove(str(root))
            sys.modules.pop("app", None)
            if earlier is not None:
                sys.modules["app"] = earlier
        self.requests = 0
        lock = threading.Lock()
        endpoint = self

        class Counting(module.AnswerHandler):  # type: ignore[name-defined,misc]
            def do_POST(self) -> None:
                with lock:
                    endpoint.requests += 1
                super().do_POST()

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Counting)
        self.port = self._httpd.server_address[1]
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)
        self._thread.start()

    def stop(self) -> None:
        if self._thread.is_alive():
            self._httpd.shutdown()
            self._thread.join()
            self._httpd.server_close()


@pytest.fixture
def endpoint(blackbox: Path) -> Iterator[Endpoint]:
    served = Endpoint(blackbox)
    config = blackbox / "oloproof.http.yaml"
    edit(config, "8766", str(served.port))
    # A refused connection is not worth three retries here.
    edit(config, "    output_path: result\n", "    output_path: result\n    retries: 0\n")
    yield served
    served.stop()


def http_run(root: Path) -> Result:
    return run(root, "--config", "oloproof.http.yaml")


def test_an_http_endpoint_is_called_on_every_run(blackbox: Path, endpoint: Endpoint) -> None:
    assert "Cache: execution 0 hit/15 miss; judgment 0 hit/56 miss" in http_run(blackbox).lines
    assert endpoint.requests == 15
    # Called again; the outputs are the same, so their judgments are reused.
    assert "Cache: execution 0 hit/15 miss; judgment 56 hit/0 miss" in http_run(blackbox).lines
    assert endpoint.requests == 30
    lines = dry(blackbox, "--config", "oloproof.http.yaml")
    assert "Cases: 15 of 15 would execute; 0 reused from the execution cache" in lines
    assert (
        "  15 executions: an HTTP system is called on every run (system.http.reuse is not set)"
        in lines
    ), lines


def test_a_stopped_server_is_reported_not_replayed(blackbox: Path, endpoint: Endpoint) -> None:
    http_run(blackbox)
    endpoint.stop()
    result = oloproof("run", "--config", "oloproof.http.yaml", cwd=blackbox)
    assert result.code != 0
    assert "Traceback" not in result.err
    assert "Cache: execution 0 hit/15 miss; judgment 0 hit/0 miss" in result.lines, result.out
    failures = oloproof("inspect", run_id_of(result.out), "--case", "seat_count", cwd=blackbox)
    assert "failed after 1 try" in failures.out, failures.out


def test_declared_reuse_keeps_http_executions_until_its_version_changes(
    blackbox: Path, endpoint: Endpoint
) -> None:
    config = blackbox / "oloproof.http.yaml"
    edit(config, "    retries: 0\n", '    retries: 0\n    reuse: {version: "api-2026-12"}\n')
    http_run(blackbox)
    assert "Cache: execution 15 hit/0 miss; judgment 56 hit/0 miss" in http_run(blackbox).lines
    assert endpoint.requests == 15
    edit(config, "api-2026-12", "api-2027-01")
    lines = dry(blackbox, "--config", "oloproof.http.yaml")
    assert "  15 executions: system.http.reuse.version changed" in lines, lines
    # New executions of another identity: judged afresh, as any new execution is.
    assert "Cache: execution 0 hit/15 miss; judgment 0 hit/56 miss" in http_run(blackbox).lines
    assert endpoint.requests == 30


# --- a judgment's identity is what its evaluator reads ----------------------------------------


def drop_labels(root: Path, case_ids: set[str]) -> None:
    path = root / "cases.jsonl"
    lines = []
    for line in path.read_text(encoding="utf-8").splitlines():
        case: dict[str, Any] = json.loads(line)
        if case["id"] in case_ids:
            del case["expected"]["relevant"]
        lines.append(json.dumps(case))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def test_removing_relevance_labels_reuses_every_other_judgment(blackbox: Path) -> None:
    run(blackbox)
    drop_labels(blackbox, {"refund_review", "seat_count", "two_factor"})
    second = run(blackbox)
    # contains and citation_validity read no labels: all 30 reused; hit_rate and recall of the
    # ten labelled cases too; the three unlabelled ones are exclusions, decided without a judge.
    assert "Cache: execution 15 hit/0 miss; judgment 50 hit/0 miss" in second.lines
    assert any(
        line.startswith("│ hit_rate_at_2 ") and "5 excluded" in line for line in second.lines
    )


# --- one execution per identity within a run ---------------------------------------------------

CALL_LOG = """
from pathlib import Path as _Path


def _log_call(question):
    with (_Path(__file__).parent / "calls.log").open("a", encoding="utf-8") as log:
        log.write(question + "\\n")
"""


def repeat_case(root: Path, case_id: str, new_id: str) -> None:
    path = root / "cases.jsonl"
    cases = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    original = next(c for c in cases if c["id"] == case_id)
    cases.append({**original, "id": new_id})
    path.write_text("".join(json.dumps(c) + "\n" for c in cases), encoding="utf-8")


def test_a_repeated_input_is_executed_and_judged_once(blackbox: Path) -> None:
    app = blackbox / "app.py"
    app.write_text(app.read_text(encoding="utf-8") + CALL_LOG, encoding="utf-8")
    edit(
        app,
        "    response = support_api(",
        "    _log_call(case['question'])\n    response = support_api(",
    )
    repeat_case(blackbox, "seat_count", "seat_count_again")
    assert dry(blackbox)[1] == (
        "Cases: 15 of 16 would execute; 0 reused from the execution cache; 1 share the "
        "execution of a repeated input (no ledger yet, so nothing is cached)"
    )
    first = run(blackbox)
    # A brand-new ledger: nothing is a hit; the repeat shares the first execution and its four
    # judgments instead.
    assert "Cache: execution 0 hit/15 miss/1 shared; judgment 0 hit/56 miss/4 shared" in first.lines
    calls = (blackbox / "calls.log").read_text(encoding="utf-8").splitlines()
    assert len(calls) == 15 and len(set(calls)) == 15
    # The next run reuses all sixteen from the ledger: hits, every one.
    assert "Cache: execution 16 hit/0 miss; judgment 60 hit/0 miss" in run(blackbox).lines
    assert len((blackbox / "calls.log").read_text(encoding="utf-8").splitlines()) == 15


def test_a_repeated_input_of_a_staged_system_runs_its_stages_once(support: Path) -> None:
    repeat_case(support, "seat_count", "seat_count_again")
    assert cache_lines(run(support)) == [
        "Cache: execution 0 hit/13 miss/1 shared; judgment 0 hit/65 miss/5 shared",
        "Stages: retrieve 0 hit/13 miss; generate 0 hit/13 miss",
    ]


def test_the_dry_run_names_what_the_fingerprint_cannot_see(support: Path) -> None:
    app = support / "app.py"
    edit(app, "import re\n", "import random\nimport re\n\nGUARD = random.Random(1)\n")
    edit(app, "        asked = words(", "        assert GUARD is not None\n        asked = words(")
    lines = dry(support)
    assert (
        "Not seen by the code fingerprint (change system.version when they change): "
        "app.GUARD: a random.Random object"
    ) in lines, lines
