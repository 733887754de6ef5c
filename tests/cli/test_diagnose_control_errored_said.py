"""A diagnosis whose control errored on its cases says so on its Control line.

Through the real CLI on the support example, with a generator that raises once a file
``armed`` exists (created after the parent run): every re-execution errors, the control's as
much as the intervention's. The Control line used to read ``0 of 4 passed``, as if the four had
failed under the control; it now adds that the four gave no verdict. A control that ran
normally keeps the guides' line (tests/cli/test_diagnose_cli.py), and so does a replay recorded
before its UNRESOLVED cases were counted, which cannot tell.
"""

from __future__ import annotations

import html
import re
from pathlib import Path

import pytest
from tests.support import GOLD_DIAGNOSIS, copy_example, normalise, oloproof
from tests.view.support import fetch, serving

from ledger import Event
from oloproof import events as ev
from oloproof.store import open_project_ledger

ARMED = """
        if Path(__file__).with_name("armed").exists():
            raise RuntimeError("the model server went away")
"""

SELECTED_4 = "Selected: 4 failed cases with gold context (observed; no population claim)"
CONTROL_ALONE = "Control: 0 of 4 passed when re-executed without the intervention"
CONTROL = f"{CONTROL_ALONE}; 4 of 4 gave no verdict (errored or missing)"
NOT_OBSERVED = "UNRESOLVED: 4 of 4, the control gave no verdict (errored or missing)"


@pytest.fixture(scope="module")
def armed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    root = copy_example("support_rag", tmp_path_factory.mktemp("control_errored"))
    app = root / "app.py"
    text = "from pathlib import Path\n" + app.read_text()
    anchor = "        if not context.items:\n"
    assert anchor in text
    app.write_text(text.replace(anchor, ARMED.lstrip("\n") + anchor, 1))
    done = oloproof("run", cwd=root)
    assert done.code == 3, done.err
    (root / "armed").touch()
    return root, done.lines[0].split()[1]


def test_a_gold_context_control_that_errored_says_so(armed: tuple[Path, str]) -> None:
    root, run_id = armed
    done = oloproof("diagnose", run_id, *GOLD_DIAGNOSIS, cwd=root)
    assert done.code == 0, done.err
    assert [normalise(x) for x in done.lines] == [
        SELECTED_4,
        CONTROL,
        "Recovered under gold context: 0 of 4",
        NOT_OBSERVED,
        "Diagnosis sha256:…",
        "Child runs: gold context run_…, control run_…",
        "Cases: oloproof inspect sha256:…",
    ]


def test_a_replay_control_that_errored_says_so(armed: tuple[Path, str]) -> None:
    root, run_id = armed
    args = ("--intervention", "top-k", "--top-k", "4", "--criterion", "answer_correct")
    done = oloproof("diagnose", run_id, *args, cwd=root)
    assert done.code == 0, done.err
    lines = [normalise(x) for x in done.lines]
    assert lines[:4] == [SELECTED_4, CONTROL, "Recovered under top-k 4: 0 of 4", NOT_OBSERVED]
    # A replay recorded before its UNRESOLVED cases were counted (schema 3) cannot tell how
    # many gave no verdict: the viewer's Control line claims nothing about them for it.
    (address,) = [x.removeprefix("Diagnosis ") for x in done.lines if x.startswith("Diagnosis ")]
    with open_project_ledger(root, create=False) as ledger:
        event = ledger.get(address)
        body = ev.plain(event.body)
        del body["summary"]["unresolved"]
        old = ledger.put(Event(ev.DIAGNOSIS, 3, body, event.refs))
    with serving(root) as url:
        pages = [fetch(f"{url}/diagnoses/{a}") for a in (address, old)]
    texts = [re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", " ", page))) for _, page in pages]
    assert [status for status, _ in pages] == [200, 200]
    assert f"{CONTROL} Recovered under" in texts[0]
    assert f"{CONTROL_ALONE} Recovered under" in texts[1]
